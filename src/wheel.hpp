// SPDX-License-Identifier: MIT
//
// struct tw_wheel: the state of one hierarchical timing wheel, and the
// invariants it keeps. The algorithm is in wheel.cpp, place.hpp, arm.cpp
// and advance.cpp; check.cpp verifies the invariants one by one, under the
// names given here and beside each part.
#ifndef TW_WHEEL_HPP
#define TW_WHEEL_HPP

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "buckets.hpp"
#include "debug.hpp"
#include "divide.hpp"
#include "geometry.hpp"
#include "level.hpp"
#include "list.hpp"
#include "parts.hpp"
#include "request_queue.hpp"
#include "timerwheel.h"

namespace tw {

// Free a wheel that nobody holds any longer (the debug registry forgets it
// first): every path that may end a wheel's life calls it.
void release_if_unused(tw_wheel *w);

// Bits of tw_timer::tw__flags: whether the timer is periodic, and the
// alignment of its firing tick (see fire_tick()), kept from its last arm so
// that cascades and periodic re-arms place it the same way.
enum : uint8_t {
	flag_periodic = 1, // the timer is the first member of a struct tw_periodic
	align_shift = 1,
	align_mask = 0x3f << align_shift, // log2 of the boundary it fires on, 0 to 63; 0 for an exact timer
};

inline unsigned align_of(const tw_timer *t) { return static_cast<unsigned>(t->tw__flags >> align_shift) & 0x3f; }

inline void set_align(tw_timer *t, unsigned align)
{
	t->tw__flags = static_cast<uint8_t>((t->tw__flags & ~align_mask) | align << align_shift);
}

inline void clear_align(tw_timer *t) { t->tw__flags &= static_cast<uint8_t>(~align_mask); }

inline bool is_periodic(const tw_timer *t) { return t->tw__flags & flag_periodic; }

// A timer's expiry as memory, for a probe: read there, not kept in a register.
inline const volatile uint64_t &expires_watched(const tw_timer *t) { return t->expires; }

constexpr uint8_t timer_magic = 0x7b;

// The wheel's lifetime (tw_wheel::holds): who still holds its memory, one
// bit per holder; the memory goes when the last one lets go. Transitions:
//
//   tw_wheel_create()            holds = program
//   tw_wheel_destroy()           - program: every timer idle, arms refused
//   callbacks of an advance      + advance before the first, - after the
//                                last: a callback may destroy the wheel
//   tw_set_notify(fn), (NULL)    + hook, - hook: a backend reads the wheel
//                                again when its OS timer fires
//   the hook's call              + in_hook, - in_hook: it may remove itself
//   holds == 0                   released (tw::release_if_unused(), the only
//                                place that frees a wheel)
enum : uint8_t {
	held_by_program = 1,
	held_by_advance = 2,
	held_by_hook = 4,
	held_in_hook = 8,
};

} // namespace tw

namespace tw {

// The parts of a wheel, each held by value in struct tw_wheel, each with
// the invariants it keeps (parts.hpp, buckets.hpp, geometry.hpp). tw_check
// names an invariant when one breaks, and debug builds assert each by name
// where the code relies on it (TW_ASSERT). The fields an arm, a cancel and
// a re-arm read come first, in the parts they belong to (the lifetime, the
// clock, the policy, the buckets, the hook, the counters), ahead of the
// geometry's tables and the lateness histogram, which only a cascade and a
// firing read.

// The lifetime: who holds the wheel (the transitions are listed with
// held_by_program above), and the fast ways its arms and cascades take:
// the default geometry's constants (geometry::is_default(), stored here in
// the first cache line), and add_default()'s exact arms, which end with
// the program's hold.
//
// A base with protected fields, unlike the other parts, so that an advance
// that runs callbacks sets and clears the holder's bit directly, cheaper
// than through a member function. Outside the wheel, the id is read.
class lifetime {
public:
	// Whether `t` is armed on this wheel (an idle timer's owner is 0, never an id).
	TW_PART bool owns(const tw_timer *t) const { return t->tw__owner == id; }
	TW_PART uint32_t owner_id() const { return id; }

protected:
	uint32_t id;           // stamped into armed timers, to refuse timers of other wheels
	uint8_t holds;         // who holds the wheel: tw::held_by_program and the others
	bool exact_arms;       // the default geometry, no default slack, not destroyed: add_default()
	bool default_geometry; // geometry::is_default(), read where a cascade picks its constants
};

} // namespace tw

// The invariants that tie the parts together, outside a call:
//
//  links     every armed timer is linked where its tw__where says, its
//            pprev points at the pointer that points at it, it carries this
//            wheel's id and was initialised.
//  stay      a timer in a slot has a firing tick after the clock, and
//            stays() holds for its slot: the slot comes due no later than
//            that tick, and places it again then (a cascade fires a timer
//            only at its firing tick). tw_mod() leaves a timer where it is
//            while that holds (a later exact re-arm, or an earlier or
//            windowed one that its slot still serves).
//  destroyed a destroyed wheel holds no timer and takes no exact arm:
//            destroy() idles every timer and clears exact_arms, so a timer
//            this wheel owns, or an arm add_default() takes, proves the
//            wheel alive without a test of holds.
//  window    a timer with a window is in the slot that calc_wheel_index()
//            gives for its firing tick, where the search for opened windows
//            looks, or in a slot that comes due before its expiry's tick,
//            which then places it again before its window opens (both are
//            in stays()); its alignment is at most the policy's widest().
//
// A timer's firing tick is fire_tick() of its expiry's tick and its
// alignment: the expiry's tick itself for an exact timer.
struct tw_wheel : tw::lifetime {
	tw::wheel_clock clock;
	tw::policy policy;
	tw::buckets buckets;
	tw::hook hook;
	tw::due_queue due;
	tw::counters counts;
	tw::geometry geo;
	tw::lateness_histogram lateness;
	// Requests from other threads (request_queue.hpp): the only fields
	// that posting threads touch, and only through compiler.hpp's atomics. A
	// cache line of padding on each side keeps them off the lines the
	// owner's tw_add() and tw_mod() work on, so that a poster's push does
	// not take those lines away from the owner (calloc() gives no 64-byte
	// alignment to align them instead).
	char posters_apart[64];
	tw::request_queue requests;
	char owner_apart[64];

	static int create(tw_wheel **out, uint64_t tick_ns, unsigned slot_bits, uint64_t slack_ns, uint64_t now);
	// The one allocation create() makes: the wheel, its bitmaps, its slots.
	static size_t bytes(unsigned levels, unsigned slot_bits)
	{
		return sizeof(tw_wheel) + tw::buckets::bytes(levels, static_cast<size_t>(levels) << slot_bits);
	}
	void destroy();
	// tw_wheel_destroy() was called: arms are refused.
	bool destroyed() const { return !(holds & tw::held_by_program); }
	// Callbacks are being called.
	bool running() const { return holds & tw::held_by_advance; }
	// tw_advance() is refused: destroyed, or called from a callback.
	bool refuses_advance() const
	{
		return (holds & (tw::held_by_program | tw::held_by_advance)) != tw::held_by_program;
	}
	// Nobody holds the wheel any longer: tw::release_if_unused() frees it.
	bool unused() const { return !holds; }
	void set_notify(tw_notify_fn fn, void *arg);

	int add(tw_timer *t, uint64_t expires, uint64_t slack);
	int add_default(tw_timer *t, uint64_t expires);
	int mod(tw_timer *t, uint64_t expires, uint64_t slack);
	int del(tw_timer *t);
	// budget: at most that many callbacks, the other due timers left due
	// for the next advance; no_budget for all of them.
	static constexpr unsigned no_budget = tw::due_queue::all;
	int refuse_del(const tw_timer *t);
	int advance(uint64_t now);
	int advance_budget(uint64_t now, unsigned budget);
	uint64_t next_expiry() const;
	int drain();
	// Posted and not applied yet; sequentially consistent for
	// publish_horizon(), and as cheap as a plain load on x86.
	bool requests_pending() const { return requests.pending(); }
	bool publish_horizon(uint64_t when);
	// A timer with this expiry fires now: count how late.
	void record_lateness(uint64_t expires)
	{
		TW_ASSERT(expires <= clock.ns(), "clock");
		lateness.record(clock.ns() - expires);
	}
	void get_lateness(tw_lateness *out) const;
	int check() const;
	void dump(FILE *out, bool verbose) const;
	int walk(tw_walk_fn fn, void *arg) const;

	// The bucket a timer in a slot is in (geometry::index_of() names them).
	static bool in_slot(const tw_timer *t) { return t->tw__where >= tw::where_slot0; }
	static size_t index_of(const tw_timer *t) { return t->tw__where - tw::where_slot0; }

	// helpers shared by the algorithm, check.cpp and dump.cpp
	unsigned window_align(const tw_timer *t, uint64_t exp_tick, uint64_t slack) const;
	size_t calc_wheel_index(uint64_t exp_tick) const;
	uint64_t slot_start(size_t index) const;
	uint64_t slot_start_at(unsigned level, unsigned slot) const
	{
		return geo.slot_start(clock.tick(), level, slot);
	}
	uint64_t slot_last(size_t index) const;
	uint64_t slot_bound(size_t index) const;
	// The tick of the wheel's next event, the start of the first occupied
	// bucket; UINT64_MAX when the wheel's slots are empty.
	uint64_t next_event_tick() const
	{
		unsigned level = 0, slot = 0; // set by first_occupied() when it returns true
		if (!buckets.first_occupied(&level, &slot))
			return UINT64_MAX;
		return slot_start_at(level, slot);
	}
	uint64_t next_firing_tick() const;
	uint64_t calc_quiet() const;
	// The bound for a next event at tick `event`: no later than the last
	// whole tick, whose quotient UINT64_MAX shares (tick_of_now()).
	uint64_t quiet_of(uint64_t event) const { return geo.clamp_whole(event); }
	bool stays(size_t index, uint64_t exp_tick, uint64_t tick, unsigned align) const;
	bool stays_later(const tw_timer *t, uint64_t expires, uint64_t slack) const;

private:
	friend void tw::release_if_unused(tw_wheel *w);
	void release();
	void settle_destroyed();
	void idle_all_timers();
	void claim(tw_timer *t, uint64_t expires);
	void place(tw_timer *t, uint64_t exp_tick, unsigned align);
	void set_window(tw_timer *t, unsigned align);
	void arm(tw_timer *t, uint64_t expires, uint64_t slack);
	template <bool Ms> void arm_exact(tw_timer *t, uint64_t expires);
	bool arm_default(tw_timer *t, uint64_t expires, uint64_t slack);
	template <bool Ms> unsigned enqueue(tw_timer *t, uint64_t tick, uint64_t open, uint64_t lane, bool arming);
	void make_due(tw_timer *t)
	{
		due.append(t);
		t->tw__where = tw::where_due;
	}
	void unlink(tw_timer *t);
	void unlinked_last(tw_timer *t);
	int remod(tw_timer *t, uint64_t expires, uint64_t slack);
	void rearm_in_slot(tw_timer *t, uint64_t expires, uint64_t slack);
	void rearm_periodic(tw_timer *t);
	void collect_expired_timers(uint64_t target_tick);
	tw_timer *sort_early(tw_timer *chain);
	void place_again(tw_timer **chains, unsigned from_level, tw_timer **early);
	template <bool Ms> unsigned place_window(tw_timer *t, uint64_t exp_tick, unsigned align);
	template <bool Ms> void place_from(tw_timer **chains, unsigned from_level, tw_timer **early);
	void fire_open_windows();
	void take_opened(size_t index);
	int refuse_advance() const;
	template <bool Budgeted> int advance_with(uint64_t now, unsigned budget);
	template <bool Budgeted> int advance_slow(uint64_t now, uint64_t quotient, unsigned budget);
	int tell_next_expiry();
	template <bool Budgeted> int advance_events(uint64_t now, uint64_t target_tick, unsigned budget);
	int end_advance(int fired);
	void dump_level(FILE *out, unsigned level) const;
	void dump_level_timers(FILE *out, unsigned level) const;
	template <bool Budgeted> int run_expired_timers(unsigned budget);
	void notify_armed(uint64_t expires, bool was_idle);
	int notify_added(uint64_t expires);
	int notify_cancelled();
	void notify_now(uint64_t when);
};

// The stay rule (see the list of invariants), written once: may a timer
// whose expiry's tick is exp_tick, firing at `tick` with alignment `align`,
// be in bucket `index`? tw_mod() leaves it there if so, and tw_check()
// requires it. The bucket must come due no later than the tick, and then
// places it again; a timer with a window must also be found by a wake-up's
// search once its window has opened (the window rule): in the bucket of
// its tick, or in one that comes due before its window opens. A bucket that
// comes due as the window opens would fire it from the cascade, before its
// tick and before the next expiry that the bucket's bound announced.
inline bool tw_wheel::stays(size_t index, uint64_t exp_tick, uint64_t tick, unsigned align) const
{
	uint64_t start = slot_start(index);
	if (!align)
		return start <= tick;
	return start < exp_tick || calc_wheel_index(tick) == index;
}

// The stay rule for tw_mod()'s common re-arm, which computes nothing: an
// exact timer re-armed later, still exact, stays, because its bucket came
// due by its old tick (the rule held) and so comes due by the later one.
inline bool tw_wheel::stays_later(const tw_timer *t, uint64_t expires, uint64_t slack) const
{
	bool later = !slack && !tw::align_of(t) && expires >= t->expires;
	TW_ASSERT(!later || stays(index_of(t), geo.tick_of_expiry(expires), geo.tick_of_expiry(expires), 0), "stay");
	return later;
}

// tw_forward() without the argument checks: t idle, period > 0.
uint64_t tw__forward(tw_timer *t, uint64_t now, uint64_t period);

#endif
