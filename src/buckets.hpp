// SPDX-License-Identifier: MIT
//
// A wheel's buckets: its slots, level by level, and the bitmaps that find
// the occupied ones. They know no clock, only the geometry's names of
// buckets, so tests/test_parts.cpp checks them without a wheel.
#ifndef TW_BUCKETS_HPP
#define TW_BUCKETS_HPP

#include <stddef.h>
#include <stdint.h>

#include "compiler.hpp"
#include "debug.hpp"
#include "geometry.hpp"
#include "level.hpp"
#include "list.hpp"
#include "parts.hpp"
#include "timerwheel.h"

namespace tw {

// Each slot is several independent hlists ("lanes"), picked by the low
// bits of a timer's tick (enqueue()). A walk takes them
// interleaved, so the cache misses of up to `lanes`
// chains are in flight at once instead of queueing one behind another: the
// walk over a slot's timers is what decides the cost of expiry at scale.
constexpr unsigned lane_bits = 2;
constexpr unsigned lanes = 1u << lane_bits;

// One bucket of the wheel: its lanes, a lower bound on the firing ticks of
// the timers in it, so that a loop can sleep until a timer can fire rather
// than until the bucket's cascade point, and one on the expiry ticks of
// those with a window, so that an advance looks for opened windows only
// where one may be. An exact timer's window is its tick, which the first
// bound covers: its placement passes no_open, and lowers that one alone.
constexpr uint64_t no_open = UINT64_MAX; // the `open` of an exact timer's placement

struct slot {
	tw_timer *lane[lanes];
	uint64_t min_tick; // no timer in the slot fires at an earlier tick; UINT64_MAX when empty
	uint64_t min_open; // no timer with a window here has an earlier expiry tick; UINT64_MAX when empty

	// The lanes OR-ed, without a branch per lane: a cancel that leaves a
	// slot empty asks, and most slots hold a timer or two.
	bool empty() const
	{
		uintptr_t any = 0;
		for (unsigned i = 0; i < lanes; i++)
			any |= reinterpret_cast<uintptr_t>(lane[i]);
		return !any;
	}

	void push(tw_timer *t, unsigned which, uint64_t tick, uint64_t open)
	{
		hlist_add_head(&lane[which & (lanes - 1)], t);
		lower(tick, open);
	}

	void lower(uint64_t tick, uint64_t open)
	{
		if (tick < min_tick)
			min_tick = tick;
		if (open < min_open)
			min_open = open;
	}

	// Call visit(t, pprev) on every timer, lane by lane, with the link
	// that points at it, until a call returns non-zero (so that a check
	// stops at a broken link, before a cycle): that value, else 0. visit
	// may change the timer, not its links.
	template <typename Visit> int each(Visit visit) const
	{
		for (unsigned i = 0; i < lanes; i++) {
			tw_timer *const *pprev = &lane[i];
			for (tw_timer *t = *pprev; t; pprev = &t->tw__next, t = *pprev)
				if (int stop = visit(t, pprev))
					return stop;
		}
		return 0;
	}

	// Detach every lane into `chains` and leave the slot empty.
	void take_all(tw_timer **chains)
	{
		for (unsigned i = 0; i < lanes; i++)
			chains[i] = lane[i];
		clear();
	}

	void clear()
	{
		for (unsigned i = 0; i < lanes; i++)
			lane[i] = nullptr;
		min_tick = min_open = UINT64_MAX;
	}
};

// The levels of the default geometry (level.hpp), whose bitmaps and slots
// enqueue() finds at offsets it knows.
constexpr unsigned default_levels = 8;

// The buckets: slots level by level, and the bitmaps that find the
// occupied ones (first_occupied()). They lie in the wheel's one allocation,
// after the wheel (init()).
//
//  bitmaps   a slot's bit in its level's bitmap is set iff the slot holds a
//            timer, and a level's bit in the level mask iff its bitmap is
//            not zero.
//  ahead     a level's occupied slots all lie after the clock's digit at
//            that level, so the next event is a plain bit scan away.
//  bound     a slot's min_tick is no later than any of its timers' firing
//            ticks, its min_open no later than the expiry ticks of those
//            with a window, and both are UINT64_MAX when it is empty. (An
//            exact timer's expiry tick is its firing tick, after the clock
//            while it is in a slot: no search for opened windows takes it.)
class buckets {
public:
	// The bytes the bitmaps and the slots take, and their start: `memory`,
	// aligned for both.
	static size_t bytes(unsigned levels, size_t nslots) { return levels * sizeof(uint64_t) + nslots * sizeof(slot); }
	void init(void *memory, unsigned levels, size_t nslots)
	{
		static_assert(sizeof(slot) % alignof(uint64_t) == 0, "slots follow the bitmaps");
		occupied_ = static_cast<uint64_t *>(memory);
		slots_ = reinterpret_cast<slot *>(occupied_ + levels);
		for (size_t i = 0; i < nslots; i++)
			slots_[i].clear();
	}

	TW_PART slot &operator[](size_t index) { return slots_[index]; }
	TW_PART const slot &operator[](size_t index) const { return slots_[index]; }
	// Bit l: level l has an occupied slot.
	TW_PART uint64_t level_mask() const { return level_mask_; }
	// Bit j: slot j of the level holds a timer.
	TW_PART uint64_t bitmap(unsigned level) const { return occupied_[level]; }
	TW_PART bool occupied(unsigned level, unsigned digit) const { return occupied_[level] >> digit & 1; }

	// The first occupied bucket: the first occupied slot of the lowest
	// non-empty level (level.hpp says why no other slot comes first). The
	// one scan for it, whoever asks; false when the slots are empty.
	TW_PART bool first_occupied(unsigned *level, unsigned *digit) const
	{
		if (!level_mask_)
			return false;
		*level = lsb64(level_mask_);
		*digit = lsb64(occupied_[*level]);
		return true;
	}

	// A timer goes into slot `digit` of `level`: its bits set, before it
	// is pushed on the slot, at(). With the default geometry (`Ms`) the
	// bitmaps and slots lie at offsets known here from `after`, the end of
	// the wheel that they follow, without a load of the pointers.
	template <bool Ms> TW_PART void occupy(unsigned level, uint64_t digit, void *after)
	{
		uint64_t *bits_at = Ms ? static_cast<uint64_t *>(after) : occupied_;
		TW_ASSERT(bits_at == occupied_, "bitmaps");
		set_bit64(&bits_at[level], digit);
		set_bit64(&level_mask_, level);
	}
	template <bool Ms> TW_PART slot &at(size_t index, void *after)
	{
		slot *slots_at = Ms ? reinterpret_cast<slot *>(static_cast<uint64_t *>(after) + default_levels) : slots_;
		TW_ASSERT(slots_at == slots_, "bitmaps");
		return slots_at[index];
	}

	// The last timer left bucket `index` (the geometry names its level
	// and slot). Not forced inline, so that the search for opened windows
	// keeps its own exit.
	void emptied(size_t index, const geometry &geo)
	{
		slots_[index].min_tick = slots_[index].min_open = UINT64_MAX;
		unsigned level = geo.level_of(index);
		occupied_[level] &= ~(uint64_t{1} << geo.slot_of(index));
		if (!occupied_[level])
			level_mask_ &= ~(uint64_t{1} << level);
	}

	// Every slot empty, its timers' links dropped whole.
	void clear(unsigned levels, size_t nslots)
	{
		for (size_t i = 0; i < nslots; i++)
			slots_[i].clear();
		for (unsigned level = 0; level < levels; level++)
			occupied_[level] = 0;
		level_mask_ = 0;
	}

private:
	uint64_t level_mask_; // bit l: level l has an occupied slot
	uint64_t *occupied_;  // per level: bit j set iff slot j is non-empty
	slot *slots_;         // levels << slot_bits buckets, level by level
};

} // namespace tw

#endif
