// SPDX-License-Identifier: MIT
//
// The parts of a wheel (src/parts.hpp) without a wheel: each part's
// arithmetic against the slow way, and the invariant it keeps after every
// step of a random run.
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../src/buckets.hpp"
#include "../src/parts.hpp"
#include "expect.h"
#include "rand.h"

static uint64_t rng = 0x9a27;

// The bucket of a lateness, the slow way: the number of bits it takes.
static unsigned lateness_bucket(uint64_t late_ns)
{
	unsigned b = 0;
	while (b < 64 && late_ns >> b)
		b++;
	return b;
}

// Each lateness in its bucket, the buckets summed, the largest kept.
static void check_lateness(unsigned randoms)
{
	tw::lateness_histogram h{};
	uint64_t want[TW_LATENESS_BUCKETS] = {}, max = 0;
	const uint64_t edges[] = { 0, 1, 2, 3, 4, 7, 8, 1000000, uint64_t{1} << 63, UINT64_MAX - 1, UINT64_MAX };
	size_t n = sizeof edges / sizeof edges[0] + randoms;
	for (size_t i = 0; i < n; i++) {
		uint64_t late = i < sizeof edges / sizeof edges[0] ? edges[i]
							       : test_rand(&rng) >> (test_rand(&rng) % 64);
		h.record(late);
		want[lateness_bucket(late)]++;
		if (late > max)
			max = late;
	}
	tw_lateness got;
	memset(&got, 0xa5, sizeof got);
	h.read(&got);
	EXPECT(got.fired == n, "%" PRIu64 " fired of %zu", got.fired, n);
	EXPECT(got.max_ns == max, "max %" PRIu64 ", want %" PRIu64, got.max_ns, max);
	for (unsigned b = 0; b < TW_LATENESS_BUCKETS; b++)
		EXPECT(got.count[b] == want[b], "bucket %u: %" PRIu64 ", want %" PRIu64, b, got.count[b], want[b]);
}

// A random run of arms, removals, cascades and advances: count() against
// the timers a model holds, and the figures of stats() against the model's
// own count of each event.
static void check_counters(unsigned steps)
{
	tw::counters c{};
	uint64_t armed = 0, arms = 0, placed = 0, cascaded = 0;
	uint64_t advances = 0, idle = 0, cancelled = 0, fired = 0;
	for (unsigned i = 0; i < steps; i++) {
		switch (test_rand(&rng) % 10) {
		case 0: // a claim into a slot
			c.claimed(), armed++, arms++, placed++;
			break;
		case 1: // a claim onto the due list
			c.claimed(), c.claimed_due(), armed++, arms++;
			break;
		case 2:
			c.rearmed_in_place(), arms++;
			break;
		case 3: // a move: out, and claimed again
			if (armed)
				c.moved(), c.claimed(), arms++, placed++;
			break;
		case 4:
			if (armed)
				c.cancelled(), armed--, cancelled++;
			break;
		case 5:
			if (armed)
				c.fired(), armed--, fired++;
			break;
		case 6: // a cascade's placement
			c.placed();
			placed++;
			c.cascaded(1), cascaded++;
			break;
		case 7:
			c.advanced_firing(), advances++;
			break;
		case 8:
			c.advanced_idle(), advances++, idle++;
			break;
		default: // a destroy idles them all
			if (test_rand(&rng) % 8 == 0)
				c.idled(c.count()), armed = 0;
			break;
		}
		EXPECT(c.count() == armed, "step %u: count %zu, want %" PRIu64, i, c.count(), armed);
	}
	tw_stats s = c.stats();
	EXPECT(s.armed == arms && s.placed == placed && s.cascaded == cascaded, "armed %" PRIu64 " placed %" PRIu64,
	       s.armed, s.placed);
	EXPECT(s.advances == advances && s.idle_advances == idle, "advances %" PRIu64, s.advances);
	EXPECT(s.cancelled == cancelled && s.fired == fired, "cancelled %" PRIu64 " fired %" PRIu64, s.cancelled,
	       s.fired);
}

// The clock's bounds: the quiet bound only lowered by an arm, set by an
// advance, 0 while it works; the wake-up's tick kept until the next.
static void check_clock(unsigned steps)
{
	tw::wheel_clock c{};
	c.start(5000, 5, 1000);
	EXPECT(c.ns() == 5000 && c.tick() == 5 && c.woke_tick() == 5 && c.quiet_below() == 1000, "a new clock");
	uint64_t quiet = 1000, woke = 5, tick = 5;
	for (unsigned i = 0; i < steps; i++) {
		uint64_t r = test_rand(&rng), x = test_rand(&rng) >> (r % 64);
		switch (r % 5) {
		case 0: // an arm into a slot starting at x
			c.lower_quiet(x);
			quiet = x < quiet ? x : quiet;
			break;
		case 1:
			c.quiet_until(x), quiet = x;
			break;
		case 2:
			c.not_quiet(), quiet = 0;
			break;
		case 3:
			c.set_tick(x), tick = x;
			break;
		default:
			c.woke(), woke = tick;
			break;
		}
		EXPECT(c.quiet_below() == quiet && c.woke_tick() == woke && c.tick() == tick && c.ns() == 5000,
		       "step %u", i);
	}
}

// The widest alignment placed since the slots were last empty, against the
// largest of a random run's; the settings kept as set.
static void check_policy(unsigned steps)
{
	tw::policy p{};
	p.init(17, ~0u);
	EXPECT(p.default_slack() == 17 && p.wake_budget() == ~0u && p.widest() == 0, "a new policy");
	p.set_wake_budget(3);
	EXPECT(p.wake_budget() == 3 && p.default_slack() == 17, "the budget set");
	unsigned want = 0;
	for (unsigned i = 0; i < steps; i++) {
		uint64_t r = test_rand(&rng);
		if (r % 16 == 0) {
			p.slots_empty();
			want = 0;
		} else {
			unsigned align = static_cast<unsigned>(r >> 8) % 64;
			p.placed(align);
			want = align > want ? align : want;
		}
		EXPECT(p.widest() == want, "step %u: widest %u, want %u", i, p.widest(), want);
	}
}

static uint64_t hook_heard;
static void *hook_arg;

static int hear(tw_wheel *, uint64_t next, void *arg)
{
	hook_heard = next;
	hook_arg = arg;
	return next != UINT64_MAX;
}

// The hook remembers what it was told last, from the wheel's next expiry
// when installed, and 0 once removed.
static void check_hook()
{
	tw::hook h{};
	int arg;
	EXPECT(!h.installed() && h.told() == 0, "a new hook");
	h.set(hear, &arg, 1234);
	EXPECT(h.installed() && h.told() == 1234, "installed: told %" PRIu64, h.told());
	EXPECT(h.tell(nullptr, 77) == 1 && hook_heard == 77 && hook_arg == &arg && h.told() == 77, "told 77");
	EXPECT(h.tell(nullptr, UINT64_MAX) == 0 && h.told() == UINT64_MAX, "told the end");
	h.set(nullptr, &arg, 5);
	EXPECT(!h.installed() && h.told() == 0, "removed: told %" PRIu64, h.told());
	h.set(hear, nullptr, 9);
	EXPECT(h.tell(nullptr, 10) == 1 && hook_arg == nullptr, "the argument of the new hook");
}

// The timers of a chain through tw__next, in order, each one's pprev
// pointing at the link that points at it; the chain's last link.
static size_t chain(tw_timer *const *head, tw_timer **out, size_t max, tw_timer *const **last)
{
	size_t n = 0;
	tw_timer *const *pprev = head;
	for (tw_timer *t = *head; t && n < max; pprev = &t->tw__next, t = *pprev) {
		EXPECT(t->tw__pprev == pprev, "timer %zu: pprev", n);
		out[n++] = t;
	}
	*last = pprev;
	return n;
}

// A timer leaves whichever list it is on, as the wheel's unlink() does.
static void unlink_due(tw::due_queue *q, tw_timer *t)
{
	if (tw::hlist_del(t))
		q->unlinked_last(t);
}

// A random run of appends, removals and advances that take some or all of
// the due list to run: both lists against a model of their order, and the
// due list's tail at its last timer's next field.
static void check_due_queue(unsigned steps)
{
	enum { max = 16 };
	static tw_timer timers[max];
	tw_timer *due[max], *ready[max], *got[max];
	size_t ndue = 0, nready = 0, next = 0;
	tw::due_queue q{};
	q.init();
	for (unsigned i = 0; i < steps; i++) {
		uint64_t r = test_rand(&rng);
		if (nready) { // a callback runs: the first ready timer goes
			EXPECT(q.next_ready() == ready[0], "step %u", i);
			unlink_due(&q, ready[0]);
			memmove(ready, ready + 1, --nready * sizeof ready[0]);
		} else if (r % 4 == 0 && ndue) { // an advance
			unsigned n = r / 4 % 3 ? static_cast<unsigned>(1 + r / 16 % (ndue + 1)) : tw::due_queue::all;
			size_t took = n < ndue ? n : ndue;
			q.take_ready(n);
			memcpy(ready, due, took * sizeof due[0]);
			memmove(due, due + took, (ndue - took) * sizeof due[0]);
			nready = took, ndue -= took;
		} else if (r % 4 == 1 && ndue) { // a cancel, anywhere in the list
			size_t at = r / 4 % ndue;
			unlink_due(&q, due[at]);
			memmove(due + at, due + at + 1, (--ndue - at) * sizeof due[0]);
		} else if (ndue + nready < max) { // a timer comes due
			tw_timer *t = &timers[next++ % max];
			bool free = true;
			for (size_t k = 0; k < ndue; k++)
				free = free && due[k] != t;
			for (size_t k = 0; k < nready; k++)
				free = free && ready[k] != t;
			if (free) {
				q.append(t);
				due[ndue++] = t;
			}
		}
		tw_timer *const *last;
		size_t n = chain(q.due_head(), got, max, &last);
		EXPECT(n == ndue && !memcmp(got, due, n * sizeof got[0]), "step %u: due list", i);
		EXPECT(q.due_tail() == last, "step %u: tail", i);
		n = chain(q.ready_head(), got, max, &last);
		EXPECT(n == nready && !memcmp(got, ready, n * sizeof got[0]), "step %u: ready", i);
		EXPECT(q.waiting() == (ndue > 0) && q.any() == (ndue + nready > 0), "step %u", i);
	}
}

// The buckets against a brute-force look at their slots: the bitmaps and
// the level mask, the first occupied bucket, and each slot's bound.
static void check_bitmaps(const tw::buckets &b, const tw::geometry &g, unsigned step)
{
	bool found = false;
	unsigned first_level = 0, first_slot = 0;
	for (unsigned level = 0; level < g.levels(); level++) {
		uint64_t want = 0;
		for (unsigned s = 0; s < g.slots_per_level(); s++) {
			const tw::slot &slot = b[g.index_of(level, s)];
			want |= uint64_t{!slot.empty()} << s;
			EXPECT(!slot.empty() || (slot.min_tick == UINT64_MAX && slot.min_open == UINT64_MAX),
			       "step %u: empty slot %u:%u has a bound", step, level, s);
			EXPECT(b.occupied(level, s) == !slot.empty(), "step %u: slot %u:%u", step, level, s);
		}
		EXPECT(b.bitmap(level) == want, "step %u: level %u bitmap %#llx, want %#llx", step, level,
		       (unsigned long long)b.bitmap(level), (unsigned long long)want);
		EXPECT((b.level_mask() >> level & 1) == (want != 0), "step %u: level %u in the mask", step, level);
		if (want && !found)
			found = true, first_level = level, first_slot = static_cast<unsigned>(__builtin_ctzll(want));
	}
	unsigned level = 0, slot = 0;
	EXPECT(b.first_occupied(&level, &slot) == found && (!found || (level == first_level && slot == first_slot)),
	       "step %u: first occupied %u:%u, want %u:%u", step, level, slot, first_level, first_slot);
}

// Timers go into random buckets and leave them, as enqueue() and unlink()
// move them; `Ms` takes the default geometry's way to the bitmaps.
template <bool Ms> static void check_buckets(uint64_t tick_ns, unsigned slot_bits, unsigned steps)
{
	enum { ntimers = 8 }; // few, so that levels empty and fill again
	tw::geometry g{};
	g.init(tick_ns, slot_bits);
	void *memory = calloc(1, tw::buckets::bytes(g.levels(), g.nslots()));
	tw::buckets b{};
	b.init(memory, g.levels(), g.nslots());
	static tw_timer timers[ntimers];
	size_t at[ntimers]; // the bucket of each timer, or SIZE_MAX
	uint64_t ticks[ntimers];
	for (size_t i = 0; i < ntimers; i++)
		at[i] = SIZE_MAX;
	for (unsigned i = 0; i < steps; i++) {
		size_t k = test_rand(&rng) % ntimers;
		tw_timer *t = &timers[k];
		if (at[k] == SIZE_MAX) {
			unsigned level = static_cast<unsigned>(test_rand(&rng) % (g.levels() < 3 ? g.levels() : 3));
			unsigned digit = static_cast<unsigned>(test_rand(&rng) & (g.slots_per_level() - 1) & 5); // slots shared
			size_t index = g.index_of(level, digit);
			uint64_t tick = test_rand(&rng) >> 8, open = i % 2 ? tick - 1 : tw::no_open;
			b.occupy<Ms>(level, digit, memory);
			b.at<Ms>(index, memory).push(t, i, tick, open);
			at[k] = index, ticks[k] = tick;
			EXPECT(b[index].min_tick <= tick && (open == tw::no_open || b[index].min_open <= open),
			       "step %u: the bound", i);
		} else {
			if (tw::hlist_del(t) && b[at[k]].empty())
				b.emptied(at[k], g);
			at[k] = SIZE_MAX;
		}
		check_bitmaps(b, g, i);
	}
	for (size_t k = 0; k < ntimers; k++)
		if (at[k] != SIZE_MAX)
			EXPECT(b[at[k]].min_tick <= ticks[k], "timer %zu: the bound", k);
	b.clear(g.levels(), g.nslots());
	check_bitmaps(b, g, steps);
	free(memory);
}

int main(int argc, char **argv)
{
	unsigned randoms = argc > 1 ? static_cast<unsigned>(atoi(argv[1])) : 1000;
	check_lateness(randoms);
	check_counters(randoms * 10);
	check_due_queue(randoms * 10);
	check_clock(randoms);
	check_policy(randoms);
	check_hook();
	check_buckets<true>(TW_DEFAULT_TICK_NS, TW_DEFAULT_SLOT_BITS, randoms * 2);
	check_buckets<false>(1, 3, randoms * 2);
	check_buckets<false>(1000, 1, randoms * 2);
	printf("parts: %llu checks, %llu wrong\n", checked, wrong);
	return wrong ? 1 : 0;
}
