// SPDX-License-Identifier: MIT
//
// A wheel's geometry: its tick, its slot width and its levels, fixed when
// it is created, the names of its buckets, and the arithmetic of ticks and
// times. It knows no clock and no timer list, so tests/test_geometry.cpp
// checks it without a wheel.
#ifndef TW_GEOMETRY_HPP
#define TW_GEOMETRY_HPP

#include <stddef.h>
#include <stdint.h>

#include "debug.hpp"
#include "divide.hpp"
#include "level.hpp"
#include "timerwheel.h"

namespace tw {

// Where a timer is, in tw_timer::tw__where.
enum : uint16_t {
	where_idle = 0, // 0, as timerwheel.h says: <timerwheel.hpp> tests it inline
	where_due = 1,   // on the due list (fires in the next advance) or on `ready` (in this one)
	where_slot0 = 2, // where_slot0 + a bucket index (see geometry::index_of): in a wheel slot
};

// The geometry: the tick, the slot width and the levels, fixed at create(),
// and the per-bit and per-level tables that spare the hot paths a division
// by slot_bits. Its fields are private: the wheel asks it where a tick
// goes, where a slot starts, a tick's digit at a level, rather than read
// its fields and redo the arithmetic.
//
//  levels    levels() levels of slots_per_level() slots cover every tick up
//            to last_tick(), the tick of UINT64_MAX ns rounded up: no
//            clamping, no silent wrap (levels_for()).
//  tables    the per-bit tables give, for each tick bit, its level, the
//            first tick bit of that level's digit and the `where` of the
//            level's first slot; the per-level ones, each level's first
//            tick bit and the mask of the clock's bits above its digit.
//            place_after() and slot_start() read them, and debug builds
//            assert each against the divisions they stand for (index_after(),
//            calc_slot_start()).
class geometry {
public:
	// A 1 ms tick (tw::divider::ms) and TW_DEFAULT_SLOT_BITS: the
	// geometry whose constants enqueue() compiles in.
	bool is_default() const { return per_tick_.how == divider::ms && slot_bits_ == TW_DEFAULT_SLOT_BITS; }
	static uint64_t last_tick_for(uint64_t tick_ns);
	static unsigned levels_for(uint64_t tick_ns, unsigned slot_bits);
	void init(uint64_t tick_ns, unsigned slot_bits);

	// The shape: what tw_tick(), the dump and the checks report and walk.
	TW_PART uint64_t tick_ns() const { return tick_ns_; }
	TW_PART unsigned levels() const { return levels_; }
	TW_PART unsigned slots_per_level() const { return 1u << slot_bits_; }
	TW_PART uint64_t last_tick() const { return last_tick_; }
	// The ticks a slot of `level` spans.
	uint64_t slot_width(unsigned level) const { return uint64_t{1} << (level * slot_bits_); }

	// Ticks and times.
	uint64_t tick_of_now(uint64_t ns) const;
	// ns / tick_ns: the clock's tick for any time but UINT64_MAX, which
	// clock_tick() moves to the last tick.
	TW_PART uint64_t ticks_in(uint64_t ns) const { return per_tick_.quotient(ns); }
	// The clock's tick for `ns`, given its quotient by the tick: that
	// quotient, except that UINT64_MAX reaches the last tick.
	uint64_t clock_tick(uint64_t ns, uint64_t quotient) const { return ns == UINT64_MAX ? last_tick_ : quotient; }
	// `tick`, or the last whole tick if it is later: the last tick whose
	// start fits in 64-bit ns, whose quotient UINT64_MAX shares.
	TW_PART uint64_t clamp_whole(uint64_t tick) const { return tick < last_whole_tick_ ? tick : last_whole_tick_; }
	uint64_t tick_of_expiry(uint64_t ns) const;
	// The same, with the default geometry's 1 ms tick as a constant when
	// `ms` (a constant at every call) says the wheel has it.
	uint64_t tick_of_expiry(uint64_t ns, bool ms) const
	{
		TW_ASSERT(!ms || per_tick_.how == divider::ms, "clock");
		return ms ? divider::ms_quotient(ns - 1) + 1 : tick_of_expiry(ns);
	}
	uint64_t ns_of_tick(uint64_t tick) const;
	uint64_t slack_ticks(uint64_t slack_ns) const { return per_tick_.quotient(slack_ns); }
	uint64_t fire_tick(uint64_t exp_tick, unsigned align) const;

	// A bucket is named by one index, level by level; these are the only
	// places that know how.
	size_t nslots() const { return static_cast<size_t>(levels_) << slot_bits_; }
	size_t index_of(unsigned level, unsigned slot) const { return (static_cast<size_t>(level) << slot_bits_) | slot; }
	unsigned level_of(size_t index) const { return static_cast<unsigned>(index >> slot_bits_); }
	unsigned slot_of(size_t index) const { return static_cast<unsigned>(index & slot_mask_); }
	static uint16_t where_of(size_t index) { return static_cast<uint16_t>(where_slot0 + index); }

	// The level's digit of a tick: its slot at that level.
	unsigned digit_of(uint64_t tick, unsigned level) const
	{
		return tw::calc_wheel_slot(tick, level, slot_bits_, slot_mask_);
	}
	// The bucket of a tick after the clock: the level of the first digit
	// where the tick differs from the clock, and that level's digit of the
	// tick, by division.
	size_t index_after(uint64_t clock_tick, uint64_t tick) const
	{
		unsigned level = level_of_bit_[tw::msb64(tick ^ clock_tick)];
		return index_of(level, digit_of(tick, level));
	}
	// The same bucket from the per-bit tables, as enqueue() needs it: its
	// start (the tick's digits from its level's up, the clock's above it),
	// its level and slot, and the `where` of a timer in it. With `Ms` (the
	// default geometry) the slot width is a constant. Each is read from
	// the tables where it is asked for, as enqueue() would read the tables
	// themselves: read all at once, ahead of the arm's store to the clock's
	// quiet bound, they lengthen tw_add().
	template <bool Ms> class place {
	public:
		TW_PART place(const geometry &g, uint64_t clock_tick, uint64_t tick)
			: g_(g), bits_(Ms ? TW_DEFAULT_SLOT_BITS : g.slot_bits_), b_(tw::msb64(tick ^ clock_tick)),
			  shift_(g.shift_of_bit_[b_]), digits_(tick >> shift_)
		{
		}
		TW_PART uint64_t start() const { return digits_ << shift_; }
		TW_PART unsigned level() const { return g_.level_of_bit_[b_]; }
		// The level as memory, for a probe: read there, not kept in a register.
		TW_PART const volatile uint8_t &level_watched() const { return g_.level_of_bit_[b_]; }
		TW_PART uint64_t slot() const { return digits_ & ((uint64_t{1} << bits_) - 1); }
		TW_PART size_t where() const { return g_.where0_of_bit_[b_] + slot(); }

	private:
		const geometry &g_;
		const unsigned bits_, b_, shift_;
		const uint64_t digits_; // the tick's digits from the level's up: the clock's above it
	};
	template <bool Ms> TW_PART place<Ms> place_after(uint64_t clock_tick, uint64_t tick) const
	{
		return place<Ms>(*this, clock_tick, tick);
	}
	// The tick at which slot `slot` of `level` comes due, seen from the
	// clock's tick: from the per-level tables.
	TW_PART uint64_t slot_start(uint64_t clock_tick, unsigned level, unsigned slot) const
	{
		uint64_t start = (clock_tick & level_high_[level]) | uint64_t{slot} << level_shift_[level];
		TW_ASSERT(start == tw::calc_slot_start(clock_tick, level, slot, slot_bits_), "clock");
		return start;
	}

private:
	uint64_t tick_ns_;
	divider per_tick_;         // n / tick_ns without a divide instruction (divide.hpp)
	uint64_t last_tick_;       // the tick of now == UINT64_MAX: expiries round up to at most this
	uint64_t last_whole_tick_; // the last tick whose start fits in 64-bit ns
	unsigned slot_bits_;
	unsigned levels_;
	uint64_t slot_mask_;
	uint8_t level_of_bit_[64];   // level whose digit holds tick bit b
	uint8_t shift_of_bit_[64];   // the first tick bit of that level's digit
	uint16_t where0_of_bit_[64]; // where_of() the level's first slot
	// Per level, for slot_start(): the first tick bit of its digit
	// (level * slot_bits), and the mask of the clock's bits above it.
	uint8_t level_shift_[64];
	uint64_t level_high_[64];
};

// The tick of UINT64_MAX ns, rounded up: the last one a wheel counts.
inline uint64_t geometry::last_tick_for(uint64_t tick_ns)
{
	return UINT64_MAX / tick_ns + (UINT64_MAX % tick_ns != 0);
}

// The levels it takes to cover every tick up to the last: no clamping, no
// silent wrap.
inline unsigned geometry::levels_for(uint64_t tick_ns, unsigned slot_bits)
{
	return (tw::bit_width(last_tick_for(tick_ns)) + slot_bits - 1) / slot_bits;
}

// The per-bit and per-level tables spare the hot paths a division by
// slot_bits: the level, shift and first slot's `where` of each tick bit,
// and each level's shift and the mask of the clock's bits above it.
inline void geometry::init(uint64_t tick, unsigned bits)
{
	tick_ns_ = tick;
	per_tick_ = divider::by(tick);
	slot_bits_ = bits;
	slot_mask_ = (uint64_t{1} << bits) - 1;
	levels_ = levels_for(tick, bits);
	last_tick_ = last_tick_for(tick);
	last_whole_tick_ = UINT64_MAX / tick;
	for (unsigned b = 0; b < 64; b++) {
		level_of_bit_[b] = static_cast<uint8_t>(b / bits);
		shift_of_bit_[b] = static_cast<uint8_t>(b / bits * bits);
		where0_of_bit_[b] = where_of(index_of(level_of_bit_[b], 0));
	}
	for (unsigned level = 0; level < levels_; level++) {
		unsigned above = (level + 1) * bits;
		level_shift_[level] = static_cast<uint8_t>(level * bits);
		level_high_[level] = above >= 64 ? 0 : ~((uint64_t{1} << above) - 1);
	}
}

// The clock's tick for a time: rounded down, except that UINT64_MAX reaches
// the last tick, so an expiry in the final partial tick is not lost.
inline uint64_t geometry::tick_of_now(uint64_t ns) const
{
	return clock_tick(ns, per_tick_.quotient(ns));
}

// An expiry's tick, for an expiry after tick 0 (every expiry placed in a
// slot, which lies after the clock): rounded up, so that firing at the tick
// is never early. ceil(ns / tick) is floor((ns - 1) / tick) + 1 for ns > 0,
// one quotient and no remainder.
inline uint64_t geometry::tick_of_expiry(uint64_t ns) const
{
	return per_tick_.quotient(ns - 1) + 1;
}

inline uint64_t geometry::ns_of_tick(uint64_t tick) const
{
	return tick > last_whole_tick_ ? UINT64_MAX : tick * tick_ns_;
}

// The tick a timer fires at if no advance comes earlier: its expiry's tick
// rounded up to a multiple of 2^align (the expiry's tick itself for an
// exact timer), or if that multiple lies beyond the last tick, the coarsest
// tick from the expiry's to the last. window_align() picks align so that
// this lies inside the window.
inline uint64_t geometry::fire_tick(uint64_t exp_tick, unsigned align) const
{
	uint64_t mask = (uint64_t{1} << align) - 1;
	if (!(exp_tick & mask))
		return exp_tick;
	if ((exp_tick | mask) < last_tick_)
		return (exp_tick | mask) + 1;
	// Only a periodic timer's boundary can lie past the last tick (a
	// one-shot's alignment comes from a window that ends by it). It takes
	// the coarsest tick from its expiry's to the last, as a one-shot
	// timer would: the bucket of any other tick there could come due
	// inside its window, and fire it from a cascade at a tick that no
	// bound announced.
	return last_tick_ & ~((uint64_t{1} << tw::msb64((exp_tick - 1) ^ last_tick_)) - 1);
}

} // namespace tw

#endif
