// SPDX-License-Identifier: MIT
//
// tw::geometry (src/geometry.hpp) without a wheel: the levels a tick and a
// slot width need, the names of the buckets, the per-bit and per-level
// tables against the divisions they stand for, and the arithmetic of ticks
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

static void check_levels(const tw::geometry &g)
{
	unsigned bits = tw::bit_width(g.last_tick);
	EXPECT(g.levels * g.slot_bits >= bits && (g.levels - 1) * g.slot_bits < bits, "tick %" PRIu64 " bits %u: %u levels",
	       g.tick_ns, g.slot_bits, g.levels);
	EXPECT(g.last_tick == ceil_div(UINT64_MAX, g.tick_ns), "tick %" PRIu64, g.tick_ns);
	EXPECT(g.last_whole_tick == UINT64_MAX / g.tick_ns, "tick %" PRIu64, g.tick_ns);
	for (unsigned level = 0; level < g.levels; level++)
		for (unsigned slot = 0; slot <= g.slot_mask; slot++) {
			size_t index = g.index_of(level, slot);
			EXPECT(index < g.nslots() && g.level_of(index) == level && g.slot_of(index) == slot,
			       "level %u slot %u", level, slot);
		}
}

static void check_tables(const tw::geometry &g)
{
	for (unsigned b = 0; b < 64; b++) {
		unsigned level = b / g.slot_bits;
		EXPECT(g.level_of_bit[b] == level && g.shift_of_bit[b] == level * g.slot_bits, "bit %u", b);
		EXPECT(g.where0_of_bit[b] == tw::where_slot0 + g.index_of(level, 0), "bit %u", b);
	}
	for (unsigned level = 0; level < g.levels; level++) {
		unsigned above = (level + 1) * g.slot_bits;
		uint64_t x = test_rand(&rng);
		uint64_t want = above >= 64 ? 0 : x >> above << above;
		EXPECT(g.level_shift[level] == level * g.slot_bits && (x & g.level_high[level]) == want, "level %u",
		       level);
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
		EXPECT(tick == ceil_div(ns, g.tick_ns), "tick %" PRIu64 " ns %" PRIu64, g.tick_ns, ns);
		if (g.per_tick.how == tw::divider::ms)
			EXPECT(g.tick_of_expiry(ns, true) == tick, "ns %" PRIu64, ns);
		// never early: the tick's start is at or after the expiry, or saturated
		EXPECT(g.ns_of_tick(tick) >= ns, "tick %" PRIu64 " ns %" PRIu64, g.tick_ns, ns);
		for (unsigned align = 0; align < 64; align += 1 + align / 4) {
			uint64_t fire = g.fire_tick(tick, align);
			uint64_t mask = (uint64_t{1} << align) - 1;
			EXPECT(fire >= tick && fire <= g.last_tick, "tick %" PRIu64 " align %u", tick, align);
			// a multiple of 2^align, or the coarsest tick up to the last
			if ((tick | mask) < g.last_tick)
				EXPECT(!(fire & mask) && fire - tick <= mask, "tick %" PRIu64 " align %u", tick, align);
			else
				EXPECT(fire == coarsest(tick, g.last_tick), "tick %" PRIu64 " align %u", tick, align);
		}
	}
	uint64_t now = g.tick_of_now(ns);
	EXPECT(now == (ns == UINT64_MAX ? g.last_tick : ns / g.tick_ns), "tick %" PRIu64 " ns %" PRIu64, g.tick_ns,
	       ns);
	EXPECT(g.slack_ticks(ns) == ns / g.tick_ns, "ns %" PRIu64, ns);
}

static void check_geometry(uint64_t tick_ns, unsigned slot_bits, unsigned randoms)
{
	tw::geometry g{};
	g.init(tick_ns, slot_bits);
	EXPECT(g.levels == tw::geometry::levels_for(tick_ns, slot_bits), "tick %" PRIu64, tick_ns);
	EXPECT(g.is_default() == (tick_ns == TW_DEFAULT_TICK_NS && slot_bits == TW_DEFAULT_SLOT_BITS),
	       "tick %" PRIu64 " bits %u", tick_ns, slot_bits);
	check_levels(g);
	check_tables(g);
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
