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
// by slot_bits.
struct geometry {
	uint64_t tick_ns;
	divider per_tick;         // n / tick_ns without a divide instruction (divide.hpp)
	uint64_t last_tick;       // the tick of now == UINT64_MAX: expiries round up to at most this
	uint64_t last_whole_tick; // the last tick whose start fits in 64-bit ns
	unsigned slot_bits;
	unsigned levels;
	uint64_t slot_mask;
	uint8_t level_of_bit[64]; // level whose digit holds tick bit b
	uint8_t shift_of_bit[64]; // the first tick bit of that level's digit
	uint16_t where0_of_bit[64]; // where_of() the level's first slot
	// Per level, for slot_start_at(): the first tick bit of its digit
	// (level * slot_bits), and the mask of the clock's bits above it.
	uint8_t level_shift[64];
	uint64_t level_high[64];

	// A 1 ms tick (tw::divider::ms) and TW_DEFAULT_SLOT_BITS: the
	// geometry whose constants enqueue() compiles in.
	bool is_default() const { return per_tick.how == divider::ms && slot_bits == TW_DEFAULT_SLOT_BITS; }
	static uint64_t last_tick_for(uint64_t tick_ns);
	static unsigned levels_for(uint64_t tick_ns, unsigned slot_bits);
	void init(uint64_t tick_ns, unsigned slot_bits);

	// Ticks and times.
	uint64_t tick_of_now(uint64_t ns) const;
	// The clock's tick for `ns`, given its quotient by the tick: that
	// quotient, except that UINT64_MAX reaches the last tick.
	uint64_t clock_tick(uint64_t ns, uint64_t quotient) const { return ns == UINT64_MAX ? last_tick : quotient; }
	uint64_t tick_of_expiry(uint64_t ns) const;
	// The same, with the default geometry's 1 ms tick as a constant when
	// `ms` (a constant at every call) says the wheel has it.
	uint64_t tick_of_expiry(uint64_t ns, bool ms) const
	{
		TW_ASSERT(!ms || per_tick.how == divider::ms, "clock");
		return ms ? divider::ms_quotient(ns - 1) + 1 : tick_of_expiry(ns);
	}
	uint64_t ns_of_tick(uint64_t tick) const;
	uint64_t slack_ticks(uint64_t slack_ns) const { return per_tick.quotient(slack_ns); }
	uint64_t fire_tick(uint64_t exp_tick, unsigned align) const;
	size_t nslots() const { return static_cast<size_t>(levels) << slot_bits; }
	// A bucket is named by one index, level by level; these are the only
	// places that know how.
	size_t index_of(unsigned level, unsigned slot) const { return (static_cast<size_t>(level) << slot_bits) | slot; }
	unsigned level_of(size_t index) const { return static_cast<unsigned>(index >> slot_bits); }
	unsigned slot_of(size_t index) const { return static_cast<unsigned>(index & slot_mask); }
	static uint16_t where_of(size_t index) { return static_cast<uint16_t>(where_slot0 + index); }
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
	tick_ns = tick;
	per_tick = divider::by(tick);
	slot_bits = bits;
	slot_mask = (uint64_t{1} << bits) - 1;
	levels = levels_for(tick, bits);
	last_tick = last_tick_for(tick);
	last_whole_tick = UINT64_MAX / tick;
	for (unsigned b = 0; b < 64; b++) {
		level_of_bit[b] = static_cast<uint8_t>(b / bits);
		shift_of_bit[b] = static_cast<uint8_t>(b / bits * bits);
		where0_of_bit[b] = where_of(index_of(level_of_bit[b], 0));
	}
	for (unsigned level = 0; level < levels; level++) {
		unsigned above = (level + 1) * bits;
		level_shift[level] = static_cast<uint8_t>(level * bits);
		level_high[level] = above >= 64 ? 0 : ~((uint64_t{1} << above) - 1);
	}
}

// The clock's tick for a time: rounded down, except that UINT64_MAX reaches
// the last tick, so an expiry in the final partial tick is not lost.
inline uint64_t geometry::tick_of_now(uint64_t ns) const
{
	return clock_tick(ns, per_tick.quotient(ns));
}

// An expiry's tick, for an expiry after tick 0 (every expiry placed in a
// slot, which lies after the clock): rounded up, so that firing at the tick
// is never early. ceil(ns / tick) is floor((ns - 1) / tick) + 1 for ns > 0,
// one quotient and no remainder.
inline uint64_t geometry::tick_of_expiry(uint64_t ns) const
{
	return per_tick.quotient(ns - 1) + 1;
}

inline uint64_t geometry::ns_of_tick(uint64_t tick) const
{
	return tick > last_whole_tick ? UINT64_MAX : tick * tick_ns;
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
	if ((exp_tick | mask) < last_tick)
		return (exp_tick | mask) + 1;
	// Only a periodic timer's boundary can lie past the last tick (a
	// one-shot's alignment comes from a window that ends by it). It takes
	// the coarsest tick from its expiry's to the last, as a one-shot
	// timer would: the bucket of any other tick there could come due
	// inside its window, and fire it from a cascade at a tick that no
	// bound announced.
	return last_tick & ~((uint64_t{1} << tw::msb64((exp_tick - 1) ^ last_tick)) - 1);
}

} // namespace tw

#endif
