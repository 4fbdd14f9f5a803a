// SPDX-License-Identifier: MIT
//
// tw::geometry (src/geometry.hpp) without a wheel: the levels a tick and a
// slot width need, the names of the buckets, the per-bit and per-level
// tables (through the interface that reads them, its fields being private)
// against the divisions they stand for, and the arithmetic of ticks
// and times (rounded up for an expiry, down for the clock, saturated at
// the end of time, a firing tick never before its expiry's).
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include "../src/geometry.hpp"
#include "expect.h"
#include "rand.h"

static uint64_t rng = 0x6e0;

// ceil(n / d) and floor, the slow way.
static uint64_t ceil_div(uint64_t n, uint64_t d) { return n / d + (n % d != 0); }

static void check_levels(const tw::geometry &g, unsigned slot_bits)
{
	unsigned bits = tw::bit_width(g.last_tick());
	EXPECT(g.levels() * slot_bits >= bits && (g.levels() - 1) * slot_bits < bits,
	       "tick %" PRIu64 " bits %u: %u levels", g.tick_ns(), slot_bits, g.levels());
	EXPECT(g.slots_per_level() == 1u << slot_bits, "bits %u", slot_bits);
	EXPECT(g.last_tick() == ceil_div(UINT64_MAX, g.tick_ns()), "tick %" PRIu64, g.tick_ns());
	EXPECT(g.clamp_whole(UINT64_MAX) == UINT64_MAX / g.tick_ns(), "tick %" PRIu64, g.tick_ns());
	for (unsigned level = 0; level < g.levels(); level++)
		for (unsigned slot = 0; slot < g.slots_per_level(); slot++) {
			size_t index = g.index_of(level, slot);
			EXPECT(index < g.nslots() && g.level_of(index) == level && g.slot_of(index) == slot,
			       "level %u slot %u", level, slot);
		}
}

// The per-bit and per-level tables, through what they compute: for a tick
// that first differs from the clock at bit b, place_after() and
// slot_start() against the divisions they stand for.
template <bool Ms> static void check_place(const tw::geometry &g, unsigned slot_bits, uint64_t clock, unsigned b)
{
	uint64_t low = (uint64_t{1} << b) - 1;
	clock &= ~(uint64_t{1} << b);
	uint64_t tick = clock | uint64_t{1} << b | (test_rand(&rng) & low);
	if (tick > g.last_tick())
		return;
	unsigned level = b / slot_bits;
	unsigned slot = tw::calc_wheel_slot(tick, level, slot_bits, (uint64_t{1} << slot_bits) - 1);
	uint64_t start = tw::calc_slot_start(clock, level, slot, slot_bits);
	size_t index = g.index_of(level, slot);
	tw::geometry::place<Ms> p = g.place_after<Ms>(clock, tick);
	EXPECT(p.level() == level && p.slot() == slot && p.start() == start && p.where() == tw::geometry::where_of(index),
	       "bit %u", b);
	EXPECT(g.index_after(clock, tick) == index && g.digit_of(tick, level) == slot, "bit %u", b);
	EXPECT(g.slot_start(clock, level, slot) == start, "bit %u", b);
}

static void check_tables(const tw::geometry &g, unsigned slot_bits)
{
	unsigned bits = tw::bit_width(g.last_tick());
	for (unsigned b = 0; b < bits; b++)
		for (unsigned i = 0; i < 4; i++) {
			uint64_t clock = test_rand(&rng) >> (64 - bits);
			check_place<false>(g, slot_bits, clock, b);
			if (g.is_default())
				check_place<true>(g, slot_bits, clock, b);
		}
}

// The tick in [from, to] with the most trailing zero bits: `to` with its
// low bits cleared, as many as keep it at or after `from`.
static uint64_t coarsest(uint64_t from, uint64_t to)
{
	for (unsigned k = 63; k > 0; k--) {
		uint64_t c = to >> k << k;
		if (c >= from)
			return c;
	}
	return to;
}

static void check_ticks(const tw::geometry &g, uint64_t ns)
{
	if (ns) {
		uint64_t tick = g.tick_of_expiry(ns);
		EXPECT(tick == ceil_div(ns, g.tick_ns()), "tick %" PRIu64 " ns %" PRIu64, g.tick_ns(), ns);
		if (g.tick_ns() == tw::divider::ms_ns)
			EXPECT(g.tick_of_expiry(ns, true) == tick, "ns %" PRIu64, ns);
		// never early: the tick's start is at or after the expiry, or saturated
		EXPECT(g.ns_of_tick(tick) >= ns, "tick %" PRIu64 " ns %" PRIu64, g.tick_ns(), ns);
		for (unsigned align = 0; align < 64; align += 1 + align / 4) {
			uint64_t fire = g.fire_tick(tick, align);
			uint64_t mask = (uint64_t{1} << align) - 1;
			EXPECT(fire >= tick && fire <= g.last_tick(), "tick %" PRIu64 " align %u", tick, align);
			// a multiple of 2^align, or the coarsest tick up to the last
			if ((tick | mask) < g.last_tick())
				EXPECT(!(fire & mask) && fire - tick <= mask, "tick %" PRIu64 " align %u", tick, align);
			else
				EXPECT(fire == coarsest(tick, g.last_tick()), "tick %" PRIu64 " align %u", tick, align);
		}
	}
	uint64_t now = g.tick_of_now(ns);
	EXPECT(now == (ns == UINT64_MAX ? g.last_tick() : ns / g.tick_ns()), "tick %" PRIu64 " ns %" PRIu64,
	       g.tick_ns(), ns);
	EXPECT(now == g.clock_tick(ns, g.ticks_in(ns)), "ns %" PRIu64, ns);
	EXPECT(g.slack_ticks(ns) == ns / g.tick_ns(), "ns %" PRIu64, ns);
}

static void check_geometry(uint64_t tick_ns, unsigned slot_bits, unsigned randoms)
{
	tw::geometry g{};
	g.init(tick_ns, slot_bits);
	EXPECT(g.levels() == tw::geometry::levels_for(tick_ns, slot_bits), "tick %" PRIu64, tick_ns);
	EXPECT(g.is_default() == (tick_ns == TW_DEFAULT_TICK_NS && slot_bits == TW_DEFAULT_SLOT_BITS),
	       "tick %" PRIu64 " bits %u", tick_ns, slot_bits);
	check_levels(g, slot_bits);
	check_tables(g, slot_bits);
	const uint64_t edges[] = { 0, 1, tick_ns - 1, tick_ns, tick_ns + 1, UINT64_MAX - 1, UINT64_MAX,
				   UINT64_MAX - UINT64_MAX % tick_ns, UINT64_MAX - UINT64_MAX % tick_ns + 1 };
	for (uint64_t ns : edges)
		check_ticks(g, ns);
	for (unsigned i = 0; i < randoms; i++)
		check_ticks(g, test_rand(&rng) >> (test_rand(&rng) % 64));
}

int main(int argc, char **argv)
{
	unsigned randoms = argc > 1 ? static_cast<unsigned>(atoi(argv[1])) : 200;
	// The defaults: 8 levels of 64 slots cover 2^64 ns in 1 ms ticks.
	EXPECT(tw::geometry::levels_for(TW_DEFAULT_TICK_NS, TW_DEFAULT_SLOT_BITS) == 8, "defaults");
	EXPECT(tw::geometry::levels_for(1, 1) == 64, "1 ns, 2 slots");
	EXPECT(tw::geometry::levels_for(UINT64_MAX, 6) == 1, "one tick");
	const uint64_t ticks[] = { 1, 2, 3, 1000, 999999937, TW_DEFAULT_TICK_NS, 1000000000, 3600000000000,
				   uint64_t{1} << 63, UINT64_MAX - 1, UINT64_MAX };
	for (uint64_t tick : ticks)
		for (unsigned bits = 1; bits <= TW_MAX_SLOT_BITS; bits++)
			check_geometry(tick, bits, randoms);
	printf("geometry: %llu checks, %llu wrong\n", checked, wrong);
	return wrong ? 1 : 0;
}
