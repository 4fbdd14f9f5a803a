/* SPDX-License-Identifier: MIT */
/*
 * The firing guarantees under random schedules: every timer fires exactly
 * once, never before its expiry, and in the first advance that reaches its
 * expiry rounded up to a tick (so at most one tick late). Precision must
 * not degrade with distance: hours, years and the end of 64-bit time.
 */
#include <timerwheel/debug.h>

#include "common.h"

struct probe {
	struct tw_timer timer;
	unsigned fired;
};

static uint64_t cur_now, prev_now, cur_tick;
static unsigned long long early, late;

/* Fired in the advance to cur_now, after one to prev_now: that advance must
 * be the first whose now reached the expiry rounded up to a tick. */
static void check_on_time(struct tw_timer *t)
{
	struct probe *p = tw_container_of(t, struct probe, timer);
	p->fired++;
	if (t->expires > cur_now)
		early++;
	if (test_round_up(t->expires, cur_tick) <= prev_now)
		late++;
}

static void advance(struct tw_wheel *w, uint64_t now)
{
	prev_now = cur_now;
	cur_now = now;
	assert_true(tw_advance(w, now) >= 0);
}

struct geometry {
	uint64_t tick;
	unsigned slot_bits;
};

static const struct geometry geometries[] = {
	{ 1000000, 6 }, { 1, 6 }, { 1, 1 }, { 7, 3 }, { 1000, 4 }, { 1000000000, 2 }, { 3, 5 },
};

static void test_never_early_never_late(void **state)
{
	(void)state;
	uint64_t rng = test_seed();
	enum { N = 3000 };
	static struct probe probes[N];

	for (size_t g = 0; g < sizeof(geometries) / sizeof(geometries[0]); g++) {
		struct tw_config cfg = { .tick_ns = geometries[g].tick, .slot_bits = geometries[g].slot_bits };
		uint64_t start = test_rand(&rng) >> 8;
		struct tw_wheel *w;
		assert_int_equal(tw_wheel_create(&w, &cfg, start), 0);
		cur_now = prev_now = start;
		cur_tick = cfg.tick_ns;
		early = late = 0;

		/* Distances from a few ticks to 2^40 ticks, log-uniform, kept
		 * below 2^62 ns so that start + distance cannot wrap. */
		unsigned tick_bits = 64 - (unsigned)__builtin_clzll(cfg.tick_ns);
		unsigned max_bits = 62 - tick_bits < 40 ? 62 - tick_bits : 40;
		for (int i = 0; i < N; i++) {
			tw_timer_init(&probes[i].timer, check_on_time);
			probes[i].fired = 0;
			uint64_t span = (uint64_t)1 << (test_rand(&rng) % (max_bits + 1));
			uint64_t ticks = 1 + test_rand(&rng) % span;
			assert_int_equal(tw_add(w, &probes[i].timer, start + ticks * cfg.tick_ns - test_rand(&rng) % cfg.tick_ns), 0);
		}
		assert_wheel_sound(w);

		/* Steps from a fraction of a tick to 2^36 ticks, and often to the
		 * next expiry exactly, as an event loop does. */
		while (tw_count(w) > 0) {
			uint64_t r = test_rand(&rng);
			uint64_t next = tw_next_expiry(w);
			assert_true(next >= cur_now);
			uint64_t step;
			if (r % 3 == 0)
				step = next - cur_now;
			else
				step = test_rand(&rng) % (cfg.tick_ns << (r % (max_bits - 3)));
			advance(w, cur_now + step);
			if (r % 16 == 0)
				assert_wheel_sound(w);
		}
		assert_wheel_sound(w);
		for (int i = 0; i < N; i++)
			assert_int_equal(probes[i].fired, 1);
		assert_int_equal(early, 0);
		assert_int_equal(late, 0);
		tw_wheel_destroy(w);
	}
}

/* One timer at a great distance, reached in big jumps: not at one tick
 * before its expiry, and at its expiry rounded up. */
static void check_distance(const struct geometry *g, uint64_t start, uint64_t expires)
{
	struct tw_config cfg = { .tick_ns = g->tick, .slot_bits = g->slot_bits };
	struct tw_wheel *w;
	struct probe p = { .fired = 0 };
	assert_int_equal(tw_wheel_create(&w, &cfg, start), 0);
	tw_timer_init(&p.timer, check_on_time);
	cur_now = prev_now = start;
	cur_tick = g->tick;
	early = late = 0;
	assert_int_equal(tw_add(w, &p.timer, expires), 0);

	uint64_t due = test_round_up(expires, g->tick);
	uint64_t jumps[] = { start + (expires - start) / 2, expires - g->tick, expires - 1 };
	for (size_t i = 0; i < 3; i++) {
		if (jumps[i] < cur_now || jumps[i] >= expires)
			continue;
		advance(w, jumps[i]);
		assert_wheel_sound(w);
	}
	/* Still armed until the rounded-up expiry, when the tick ends before it. */
	if (due > expires && expires - 1 >= cur_now) {
		advance(w, expires - 1 < due - 1 ? due - 1 : expires - 1);
		assert_int_equal(p.fired, 0);
	}
	advance(w, due);
	assert_int_equal(p.fired, 1);
	assert_int_equal(early, 0);
	assert_true(due - expires < g->tick);
	assert_wheel_sound(w);
	tw_wheel_destroy(w);
}

static void test_precision_at_distance(void **state)
{
	(void)state;
	const uint64_t hour = 3600ull * 1000000000ull;
	const uint64_t year = 365ull * 24 * hour;
	const uint64_t start = 12345678901ull;
	for (size_t g = 0; g < sizeof(geometries) / sizeof(geometries[0]); g++) {
		check_distance(&geometries[g], start, start + hour);
		check_distance(&geometries[g], start, start + 10 * hour + 1);
		check_distance(&geometries[g], start, start + year + 7);
		check_distance(&geometries[g], start, UINT64_MAX - 123456789);
		check_distance(&geometries[g], start, UINT64_MAX - 1);
		check_distance(&geometries[g], start, UINT64_MAX);
		check_distance(&geometries[g], UINT64_MAX - 5000, UINT64_MAX - 10);
	}
}

/* An advance across ten hours with only a far timer armed touches no
 * timer: it jumps through the bitmaps rather than ticking. */
static void test_empty_stretches_are_free(void **state)
{
	(void)state;
	struct tw_wheel *w;
	struct tw_config cfg = { .tick_ns = 1000, .slot_bits = 6 }; /* 1 us ticks: 3.6e10 ticks in 10 h */
	assert_int_equal(tw_wheel_create(&w, &cfg, 0), 0);
	struct probe p = { .fired = 0 };
	tw_timer_init(&p.timer, check_on_time);
	const uint64_t hour = 3600ull * 1000000000ull;
	assert_int_equal(tw_add(w, &p.timer, 1000 * hour), 0);
	for (uint64_t h = 1; h <= 10; h++)
		assert_int_equal(tw_advance(w, h * hour), 0);
	struct tw_stats st;
	tw_get_stats(w, &st);
	assert_int_equal(st.cascaded, 0);
	assert_int_equal(st.advances, 10);
	assert_wheel_sound(w);
	tw_wheel_destroy(w);
}

/* tw_next_expiry is never later than the earliest firing time. */
static void test_next_expiry_bound(void **state)
{
	(void)state;
	uint64_t rng = test_seed() + 1;
	struct tw_wheel *w;
	assert_int_equal(tw_wheel_create(&w, NULL, 0), 0);
	assert_int_equal(tw_next_expiry(w), UINT64_MAX);
	enum { N = 500 };
	static struct probe probes[N];
	uint64_t earliest = UINT64_MAX;
	for (int i = 0; i < N; i++) {
		tw_timer_init(&probes[i].timer, check_on_time);
		uint64_t e = 1 + test_rand(&rng) % (1ull << (1 + test_rand(&rng) % 50));
		tw_add(w, &probes[i].timer, e);
		uint64_t due = test_round_up(e, TW_DEFAULT_TICK_NS);
		if (due < earliest)
			earliest = due;
		assert_true(tw_next_expiry(w) <= earliest);
	}
	/* A past expiry is due now. */
	struct probe past;
	tw_timer_init(&past.timer, check_on_time);
	tw_advance(w, 0);
	cur_now = 0;
	tw_add(w, &past.timer, 0);
	assert_int_equal(tw_next_expiry(w), 0);
	tw_wheel_destroy(w);
}

/* A loop that sleeps until tw_next_expiry wakes only to fire: the wheel
 * reports the earliest firing a slot can hold, not its cascade point, and
 * cascades inside the advance that reaches it. Without cancellations no
 * wake-up is wasted. */
static void test_no_wasted_wakeups(void **state)
{
	(void)state;
	uint64_t rng = test_seed() + 2;
	struct tw_wheel *w;
	assert_int_equal(tw_wheel_create(&w, NULL, 0), 0);
	enum { N = 5000 };
	static struct probe probes[N];
	cur_now = prev_now = 0;
	cur_tick = TW_DEFAULT_TICK_NS;
	early = late = 0;
	const uint64_t hour = 3600ull * 1000000000ull;
	struct probe far = { .fired = 0 };
	tw_timer_init(&far.timer, check_on_time);
	tw_add(w, &far.timer, 10 * hour + 5);
	assert_int_equal(tw_next_expiry(w), 10 * hour + TW_DEFAULT_TICK_NS);
	for (int i = 0; i < N; i++) {
		tw_timer_init(&probes[i].timer, check_on_time);
		probes[i].fired = 0;
		tw_add(w, &probes[i].timer, 1 + test_rand(&rng) % hour);
	}
	while (tw_count(w) > 0)
		advance(w, tw_next_expiry(w));
	struct tw_stats st;
	tw_get_stats(w, &st);
	assert_int_equal(st.idle_advances, 0);
	assert_true(st.cascaded > 0);
	assert_int_equal(early + late, 0);
	assert_int_equal(far.fired, 1);
	tw_wheel_destroy(w);
}

/* A timer can sit in a slot with an expiry already at or before now: its
 * tick, rounded up, is still ahead. Re-armed (later) to an expiry at or
 * before now, it must fire in the next advance, as any such expiry does,
 * not when the old slot comes due. Found by the fuzzer. */
static void test_rearm_to_now_fires_next_advance(void **state)
{
	(void)state;
	struct tw_config cfg = { .tick_ns = 7, .slot_bits = 4 };
	struct tw_wheel *w;
	assert_int_equal(tw_wheel_create(&w, &cfg, 70), 0); /* tick 10 */
	struct probe p = { .fired = 0 };
	tw_timer_init(&p.timer, check_on_time);
	cur_now = prev_now = 70;
	cur_tick = 7;
	early = late = 0;
	assert_int_equal(tw_add(w, &p.timer, 73), 0); /* tick 11 */
	advance(w, 75);                               /* still tick 10 */
	assert_int_equal(p.fired, 0);
	assert_int_equal(tw_mod(w, &p.timer, 75), 1); /* later, but not after now */
	assert_int_equal(tw_next_expiry(w), 75);
	advance(w, 75);
	assert_int_equal(p.fired, 1);
	assert_int_equal(early, 0);
	assert_wheel_sound(w);
	tw_wheel_destroy(w);
}

/* tw_mod to a later expiry leaves the timer in its bucket (no list
 * neighbour touched); the bucket comes due first and places it again, so
 * it still fires exactly on time. An earlier expiry moves it at once. */
static void test_later_rearm_stays_in_bucket(void **state)
{
	(void)state;
	struct tw_wheel *w;
	assert_int_equal(tw_wheel_create(&w, NULL, 0), 0);
	struct probe p = { .fired = 0 };
	tw_timer_init(&p.timer, check_on_time);
	cur_now = prev_now = 0;
	cur_tick = TW_DEFAULT_TICK_NS;
	early = late = 0;
	const uint64_t ms = TW_DEFAULT_TICK_NS;
	unsigned level, slot, level2, slot2;

	assert_int_equal(tw_add(w, &p.timer, 100 * ms), 0);
	assert_int_equal(tw_timer_bucket(w, &p.timer, &level, &slot), 0);
	assert_int_equal(tw_mod(w, &p.timer, 5000 * ms), 1);
	assert_int_equal(tw_timer_bucket(w, &p.timer, &level2, &slot2), 0);
	assert_int_equal(level2, level);
	assert_int_equal(slot2, slot);
	assert_wheel_sound(w);

	advance(w, 4999 * ms);
	assert_int_equal(p.fired, 0);
	assert_wheel_sound(w);
	advance(w, 5000 * ms);
	assert_int_equal(p.fired, 1);
	assert_int_equal(early + late, 0);

	/* Earlier: placed anew at once, in a finer bucket. */
	assert_int_equal(tw_add(w, &p.timer, 9000 * ms), 0);
	assert_int_equal(tw_timer_bucket(w, &p.timer, &level, &slot), 0);
	assert_int_equal(tw_mod(w, &p.timer, 5010 * ms), 1);
	assert_int_equal(tw_timer_bucket(w, &p.timer, &level2, &slot2), 0);
	assert_true(level2 < level);
	assert_int_equal(tw_next_expiry(w), 5010 * ms);
	advance(w, 5010 * ms);
	assert_int_equal(p.fired, 2);
	assert_int_equal(early + late, 0);

	/* Earlier, but its bucket (level 2, from 8192 ms) still comes due
	 * first: it stays, the bucket's bound follows, and it fires on time. */
	assert_int_equal(tw_add(w, &p.timer, 9000 * ms), 0);
	assert_int_equal(tw_timer_bucket(w, &p.timer, &level, &slot), 0);
	assert_int_equal(tw_mod(w, &p.timer, 8500 * ms), 1);
	assert_int_equal(tw_timer_bucket(w, &p.timer, &level2, &slot2), 0);
	assert_int_equal(level2, level);
	assert_int_equal(slot2, slot);
	assert_true(tw_next_expiry(w) == 8500 * ms);
	assert_wheel_sound(w);
	advance(w, 8499 * ms);
	assert_int_equal(p.fired, 2);
	advance(w, 8500 * ms);
	assert_int_equal(p.fired, 3);
	assert_int_equal(early + late, 0);
	tw_wheel_destroy(w);
}

/* tw_add() of an exact timer takes a path of its own (with the default
 * geometry's tick and slot width as constants when the wheel has them);
 * tw_mod() of an idle timer arms through the general path, window
 * arithmetic and all. Both must choose the same bucket, at every distance,
 * on the default wheel, on one with default slack (tw_add_range() with no
 * window) and on other geometries, and the wheel must stay sound. */
static void test_exact_arm_paths_agree(void **state)
{
	(void)state;
	static const struct tw_config cfgs[] = {
		{ 0, 0, 0 }, { 0, 0, 1000000000 }, { 1000, 4, 0 }, { 7, 3, 0 }, { 1 << 20, 6, 0 },
	};
	uint64_t rng = test_seed();
	for (size_t c = 0; c < sizeof(cfgs) / sizeof(cfgs[0]); c++) {
		struct tw_wheel *w;
		uint64_t now = test_rand(&rng) >> (test_rand(&rng) % 64);
		if (now == UINT64_MAX)
			now--;
		assert_int_equal(tw_wheel_create(&w, &cfgs[c], now), 0);
		enum { PAIRS = 200 };
		static struct probe a[PAIRS], b[PAIRS];
		for (unsigned i = 0; i < PAIRS; i++) {
			uint64_t expires = now + 1 + (test_rand(&rng) >> (test_rand(&rng) % 64)) % (UINT64_MAX - now);
			tw_timer_init(&a[i].timer, check_on_time);
			tw_timer_init(&b[i].timer, check_on_time);
			if (cfgs[c].slack_ns)
				assert_int_equal(tw_add_range(w, &a[i].timer, expires, 0), 0);
			else
				assert_int_equal(tw_add(w, &a[i].timer, expires), 0);
			assert_int_equal(tw_mod_range(w, &b[i].timer, expires, 0), 0);
			unsigned la, sa, lb, sb;
			assert_int_equal(tw_timer_bucket(w, &a[i].timer, &la, &sa), 0);
			assert_int_equal(tw_timer_bucket(w, &b[i].timer, &lb, &sb), 0);
			assert_int_equal(la, lb);
			assert_int_equal(sa, sb);
		}
		assert_wheel_sound(w);
		assert_int_equal(tw_count(w), 2 * PAIRS);
		tw_wheel_destroy(w);
	}
}

/* Fired in an advance to cur_now: never early, and in tick order across
 * the advance (ticks of cur_tick; within a tick in no set order). */
static uint64_t last_tick_fired;
static unsigned long long out_of_order;
static void check_order(struct tw_timer *t)
{
	struct probe *p = tw_container_of(t, struct probe, timer);
	p->fired++;
	if (t->expires > cur_now)
		early++;
	uint64_t tick = test_round_up(t->expires, cur_tick) / cur_tick;
	if (tick < last_tick_fired)
		out_of_order++;
	last_tick_fired = tick;
}

/* An advance that jumps far ahead, as a loop does from deadline to
 * deadline, fires what it reaches in tick order. On a wheel without
 * windows the last slot that comes due by the target places its timers
 * relative to the target at once: timers between 30 and 30.5 minutes out
 * (one slot of level 3, from 26.2 minutes), armed in random order, many to
 * a tick, come due from that slot in the advance to 30.25 minutes, in tick
 * order, and the others are placed once more, relative to 30.25 minutes,
 * for the advance to 31 minutes. A window anywhere in the wheel keeps the
 * descent level by level, with the same guarantees and more placements. */
static void test_deadline_jump_places_once(void **state)
{
	(void)state;
	const uint64_t ms = 1000000, sec = 1000 * ms, min = 60 * sec;
	enum { N = 20000 };
	static struct probe probes[N];
	static struct tw_timer windowed;
	uint64_t rng = test_seed();
	uint64_t placed[2];
	for (int with_window = 0; with_window <= 1; with_window++) {
		struct tw_wheel *w;
		assert_int_equal(tw_wheel_create(&w, NULL, 0), 0);
		cur_now = prev_now = 0;
		cur_tick = ms;
		early = out_of_order = 0;
		last_tick_fired = 0;
		uint64_t reached = 0;
		for (int i = 0; i < N; i++) {
			/* Half of them on 64 ms boundaries, so that ticks repeat. */
			uint64_t e = 30 * min + test_rand(&rng) % (30 * sec);
			if (i % 2)
				e -= e % (64 * ms);
			reached += e <= 30 * min + 15 * sec;
			tw_timer_init(&probes[i].timer, check_order);
			probes[i].fired = 0;
			assert_int_equal(tw_add(w, &probes[i].timer, e), 0);
		}
		if (with_window) {
			tw_timer_init(&windowed, check_on_time);
			assert_int_equal(tw_add_range(w, &windowed, 40 * min, 10 * sec), 0);
		}
		advance(w, 30 * min + 15 * sec);
		struct tw_stats st;
		assert_int_equal(tw_get_stats(w, &st), 0);
		assert_int_equal(st.fired, reached);
		if (!with_window)
			assert_int_equal(st.placed, N + (N - reached));
		assert_wheel_sound(w);
		advance(w, 31 * min);
		assert_int_equal(tw_count(w), (size_t)with_window);
		for (int i = 0; i < N; i++)
			assert_int_equal(probes[i].fired, 1);
		assert_int_equal(early + out_of_order, 0);
		assert_int_equal(tw_get_stats(w, &st), 0);
		placed[with_window] = st.placed - with_window;
		fprintf(stderr, "# %s: %.2f placements per timer\n", with_window ? "with a window" : "exact",
			(double)placed[with_window] / N);
		tw_wheel_destroy(w);
	}
	assert_true(placed[0] < placed[1]);
}

/* The same jump on two and on three timers, armed latest first into one
 * level-1 slot (ticks 64 to 127 from a clock at 0) and reached by one
 * advance: they fire earliest first. Their ticks are equal modulo 4, so
 * that they share a lane, whose walk gives them latest first. */
static uint64_t fired_at[3];
static unsigned nfired;
static void record(struct tw_timer *t)
{
	fired_at[nfired++] = t->expires;
}

static void test_deadline_jump_small(void **state)
{
	(void)state;
	const uint64_t ms = 1000000;
	static const uint64_t expiry[] = { 120 * ms, 100 * ms, 72 * ms }; /* arming order */
	for (unsigned n = 2; n <= 3; n++) {
		struct tw_wheel *w;
		struct tw_timer t[3];
		assert_int_equal(tw_wheel_create(&w, NULL, 0), 0);
		for (unsigned i = 0; i < n; i++) {
			tw_timer_init(&t[i], record);
			assert_int_equal(tw_add(w, &t[i], expiry[i]), 0);
		}
		nfired = 0;
		assert_int_equal(tw_advance(w, 127 * ms), (int)n);
		for (unsigned i = 1; i < n; i++)
			assert_true(fired_at[i - 1] < fired_at[i]);
		tw_wheel_destroy(w);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_never_early_never_late),
		cmocka_unit_test(test_precision_at_distance),
		cmocka_unit_test(test_empty_stretches_are_free),
		cmocka_unit_test(test_next_expiry_bound),
		cmocka_unit_test(test_no_wasted_wakeups),
		cmocka_unit_test(test_rearm_to_now_fires_next_advance),
		cmocka_unit_test(test_later_rearm_stays_in_bucket),
		cmocka_unit_test(test_exact_arm_paths_agree),
		cmocka_unit_test(test_deadline_jump_places_once),
		cmocka_unit_test(test_deadline_jump_small),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
