// SPDX-License-Identifier: MIT
//
// struct tw_wheel: the state of one hierarchical timing wheel. The algorithm
// is in wheel.cpp, the invariants it keeps are checked in check.cpp.
#ifndef TW_WHEEL_HPP
#define TW_WHEEL_HPP

#include <stddef.h>
#include <stdint.h>

#include "list.hpp"
#include "timerwheel.h"

namespace tw {

// Where a timer is, in tw_timer::tw__where.
enum : uint16_t {
	where_idle = 0,
	where_due = 1,   // on the due list (fires in the next advance) or on `ready` (in this one)
	where_slot0 = 2, // where_slot0 + (level << slot_bits | slot): in a wheel slot
};

// Bits of tw_timer::tw__flags.
enum : uint8_t {
	flag_periodic = 1, // the timer is the first member of a struct tw_periodic
};

constexpr uint8_t timer_magic = 0x7b;

// Each slot is several independent hlists ("lanes"), filled in turn. A
// cascade walks them interleaved, so the cache misses of up to `lanes`
// chains are in flight at once instead of queueing one behind another: the
// walk over a slot's timers is what decides the cost of expiry at scale.
constexpr unsigned lane_bits = 2;
constexpr unsigned lanes = 1u << lane_bits;

} // namespace tw

struct tw_wheel {
	uint64_t tick_ns;
	uint64_t now_ns;
	uint64_t now_tick;
	uint64_t last_tick; // the tick of now == UINT64_MAX: expiries round up to at most this
	uint64_t last_whole_tick; // the last tick whose start fits in 64-bit ns
	unsigned slot_bits;
	unsigned levels;
	uint64_t slot_mask;
	uint32_t id;      // stamped into armed timers, to refuse timers of other wheels
	bool running;     // callbacks are being called
	bool destroyed;   // tw_wheel_destroy() was called: see release_if_unused()
	size_t count;     // armed timers

	uint64_t level_mask;   // bit l: level l has an occupied slot
	uint64_t *occupied;    // per level: bit j set iff slot j is non-empty
	tw_timer **slots;      // (levels << slot_bits) slots of `lanes` hlist heads each
	uint64_t *slot_min;    // per slot: no timer in it has an earlier tick (UINT64_MAX if empty)
	unsigned next_lane;    // round-robin: the lane the next enqueued timer goes to
	tw::tail_list due;     // timers whose time has come, in the order they came due
	tw_timer *ready;       // while running: the due list detached, its callbacks not yet run

	tw_notify_fn notify;
	void *notify_arg;
	uint64_t notified; // the last time given to the hook; never later than the real next expiry

	tw_stats stats;
	uint8_t level_of_bit[64]; // level whose digit holds tick bit b

	static int create(tw_wheel **out, uint64_t tick_ns, unsigned slot_bits, uint64_t now);
	void destroy();
	bool release_if_unused();
	void set_notify(tw_notify_fn fn, void *arg);
	void idle_all_timers();

	int add(tw_timer *t, uint64_t expires);
	int mod(tw_timer *t, uint64_t expires);
	int del(tw_timer *t);
	int advance(uint64_t now);
	uint64_t next_expiry() const;
	int check() const;
	void dump(FILE *out, bool verbose) const;

	// helpers shared by wheel.cpp, check.cpp and dump.cpp
	uint64_t tick_of_now(uint64_t ns) const;
	uint64_t tick_of_expiry(uint64_t ns) const;
	uint64_t ns_of_tick(uint64_t tick) const;
	unsigned calc_wheel_level(uint64_t exp_tick) const;
	size_t calc_wheel_index(uint64_t exp_tick) const;
	uint64_t slot_bound(size_t index) const;
	uint64_t next_firing_tick() const;
	tw_timer *const *slot_heads(size_t index) const { return slots + (index << tw::lane_bits); }
	tw_timer **slot_heads(size_t index) { return slots + (index << tw::lane_bits); }
	bool slot_empty(size_t index) const;

private:
	uint64_t arm(tw_timer *t, uint64_t expires);
	void enqueue(tw_timer *t, size_t index, uint64_t exp_tick);
	void unlink(tw_timer *t);
	void collect_expired_timers(uint64_t target_tick);
	void place_again(tw_timer **chains, unsigned from_level);
	int run_expired_timers();
	void notify_armed(uint64_t when, bool was_empty);
	void notify_now(uint64_t when);
};

// tw_forward() without the argument checks: t idle, period > 0.
uint64_t tw__forward(tw_timer *t, uint64_t now, uint64_t period);

#endif
