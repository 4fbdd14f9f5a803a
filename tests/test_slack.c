/* SPDX-License-Identifier: MIT */
/*
 * Slack windows: a timer armed with tw_add_range()/tw_mod_range(), or on a
 * wheel with a default slack, fires inside [E, E + slack rounded up to a
 * tick]: in the first advance that reaches E's tick, and a loop that sleeps
 * until tw_next_expiry() wakes for it at the tick the header names, the
 * coarsest in its window (a periodic timer: a power-of-two boundary), from
 * a coarse slot when that tick starts one; a wake-up fires every window it
 * falls in; slack 0 is exactly the old rule.
 */
#include <stdarg.h>

#include <timerwheel/debug.h>

#include "common.h"
#include "model.h"

#define MS 1000000ull
#define SEC (1000 * MS)
#define MIN (60 * SEC)

static uint64_t fired_at;
static int fired_count;
static uint64_t clock_now;

static void on_fire(struct tw_timer *t)
{
	(void)t;
	fired_at = clock_now;
	fired_count++;
}

/* A wheel with every default: 1 ms tick, 64 slots per level, no slack. */
static struct tw_wheel *default_wheel(void)
{
	struct tw_wheel *w;
	assert_int_equal(tw_wheel_create(&w, NULL, 0), 0);
	return w;
}

/* tw_timer_init(t, on_fire) for each timer of a NULL-terminated list. */
static void init_timers(struct tw_timer *t, ...)
{
	va_list ap;
	va_start(ap, t);
	for (; t; t = va_arg(ap, struct tw_timer *))
		tw_timer_init(t, on_fire);
	va_end(ap);
}

/* The boundary the header promises a periodic timer: E's tick rounded up
 * to a multiple of 2^a ticks, 2^a the largest power of two no greater than
 * slack / tick + 1, and if that multiple lies past the last tick, the
 * coarsest tick from E's to the last. */
static uint64_t boundary_ns(uint64_t e, uint64_t slack, uint64_t tick)
{
	tw_model_u128 k = e / tick + (e % tick != 0);
	tw_model_u128 room = (tw_model_u128)(slack / tick) + 1, p = 1;
	while (p * 2 <= room)
		p *= 2;
	tw_model_u128 b = (k + p - 1) / p * p;
	tw_model_u128 last = UINT64_MAX / tick + (UINT64_MAX % tick != 0);
	if (b > last)
		return tw_model_coarsest_ns(e, UINT64_MAX, tick);
	return tw_model_saturate(b * tick);
}

/* Sleep until tw_next_expiry(), as a loop would, until the timer fired;
 * returns the number of wake-ups. */
static int run_until_fired(struct tw_wheel *w)
{
	int wakeups = 0;
	fired_count = 0;
	while (!fired_count) {
		uint64_t next = tw_next_expiry(w);
		assert_true(next != UINT64_MAX || tw_count(w));
		clock_now = next;
		assert_true(tw_advance(w, clock_now) >= 0);
		wakeups++;
		assert_true(wakeups < 1000);
	}
	return wakeups;
}

/* tw_mod_range(w, t, e, slack) on an armed timer, which must leave it in
 * the bucket it was in. */
static void mod_range_stays(struct tw_wheel *w, struct tw_timer *t, uint64_t e, uint64_t slack)
{
	unsigned level, slot, level2, slot2;
	assert_int_equal(tw_timer_bucket(w, t, &level, &slot), 0);
	assert_int_equal(tw_mod_range(w, t, e, slack), 1);
	assert_int_equal(tw_timer_bucket(w, t, &level2, &slot2), 0);
	assert_int_equal(level2, level);
	assert_int_equal(slot2, slot);
}

/* Every distance and slack from sub-tick to days: never before E, never
 * after E + slack rounded up, and exactly at the documented tick when the
 * loop sleeps until tw_next_expiry(). */
static void test_window_and_boundary(void **state)
{
	(void)state;
	static const uint64_t ticks[] = { MS, 1, 7, 999983 };
	static const uint64_t dists[] = { 1, 999, MS, 63 * MS + 5, 5 * SEC + 3, 30 * MIN, 3 * 24 * 60 * MIN + 17 };
	static const uint64_t slacks[] = { 0, 1, MS - 1, MS, 3 * MS, 64 * MS, SEC, 18 * SEC, 4 * MIN, 365ull * 24 * 60 * MIN };
	uint64_t rng = test_seed();
	for (size_t k = 0; k < sizeof(ticks) / sizeof(ticks[0]); k++) {
		for (size_t i = 0; i < sizeof(dists) / sizeof(dists[0]); i++) {
			for (size_t j = 0; j < 2 * sizeof(slacks) / sizeof(slacks[0]); j++) {
				/* Armed by tw_add_range(), then, idle, by tw_mod_range(): one window. */
				bool by_mod = j & 1;
				struct tw_config cfg = { .tick_ns = ticks[k] };
				uint64_t start = test_rand(&rng) % (1ull << 50);
				struct tw_wheel *w;
				assert_int_equal(tw_wheel_create(&w, &cfg, start), 0);
				struct tw_timer t;
				tw_timer_init(&t, on_fire);
				uint64_t e = start + dists[i];
				assert_int_equal(by_mod ? tw_mod_range(w, &t, e, slacks[j / 2]) : tw_add_range(w, &t, e, slacks[j / 2]), 0);
				assert_wheel_sound(w);
				run_until_fired(w);
				uint64_t end = tw_model_saturate((tw_model_u128)e + slacks[j / 2]);
				assert_true(fired_at >= e);
				assert_true(fired_at <= test_round_up(end, ticks[k]));
				assert_int_equal(fired_at, tw_model_coarsest_ns(e, slacks[j / 2], ticks[k]));
				assert_wheel_sound(w);
				tw_wheel_destroy(w);
			}
		}
	}
}

/* A timer whose window holds a coarse slot's start fires from that slot:
 * 30 minutes out with 1% slack (18 s), it is placed twice (level 3, then
 * level 2, whose 4.1 s slot starts at its boundary) where an exact timer is
 * placed four times (levels 3, 2, 1, 0) unless a digit of its tick is 0.
 * The clock moves a tick at a time, as a loop that polls does, so that
 * every slot comes due at its start (an advance that jumps ahead places
 * exact timers once: test_timing's test_deadline_jump_places_once). */
static void test_fewer_placements(void **state)
{
	(void)state;
	enum { N = 10000 };
	static struct tw_timer timers[N];
	uint64_t rng = test_seed();
	for (int slack = 0; slack <= 1; slack++) {
		struct tw_wheel *w = default_wheel();
		for (int i = 0; i < N; i++) {
			uint64_t e = 30 * MIN + test_rand(&rng) % (30 * SEC);
			tw_timer_init(&timers[i], on_fire);
			assert_int_equal(tw_add_range(w, &timers[i], e, slack ? e / 100 : 0), 0);
		}
		int fired = 0;
		for (uint64_t now = MS; now <= 31 * MIN; now += MS)
			fired += tw_advance(w, now);
		assert_int_equal(fired, N);
		struct tw_stats s;
		tw_get_stats(w, &s);
		fprintf(stderr, "# slack %s: %.2f placements per timer, %llu wake-ups\n", slack ? "1%" : "0",
			(double)s.placed / N, (unsigned long long)s.advances);
		/* Exact timers skip a level only where their tick's digit is 0. */
		if (slack)
			assert_true(s.placed <= 2 * (uint64_t)N);
		else
			assert_true(s.placed >= 39 * (uint64_t)N / 10);
		assert_wheel_sound(w);
		tw_wheel_destroy(w);
	}
}

/* Timers whose windows share a boundary share a wake-up: 1000 timers
 * spread over 10 s with 1 s slack wake a loop at most once per 512 ms
 * boundary (21 times), where exact timers wake it about once each. */
static void test_shared_wakeups(void **state)
{
	(void)state;
	enum { N = 1000 };
	static struct tw_timer timers[N];
	uint64_t rng = test_seed();
	int wakeups[2];
	for (int slack = 0; slack <= 1; slack++) {
		struct tw_wheel *w;
		struct tw_config cfg = { .slack_ns = slack ? SEC : 0 }; /* the default, for tw_add() */
		assert_int_equal(tw_wheel_create(&w, &cfg, 0), 0);
		for (int i = 0; i < N; i++) {
			tw_timer_init(&timers[i], on_fire);
			assert_int_equal(tw_add(w, &timers[i], 1 + test_rand(&rng) % (10 * SEC)), 0);
		}
		fired_count = 0;
		wakeups[slack] = 0;
		while (tw_count(w)) {
			clock_now = tw_next_expiry(w);
			assert_true(tw_advance(w, clock_now) > 0); /* no empty wake-ups */
			wakeups[slack]++;
		}
		assert_int_equal(fired_count, N);
		assert_wheel_sound(w);
		tw_wheel_destroy(w);
	}
	fprintf(stderr, "# 1000 timers in 10 s: %d wake-ups exact, %d with 1 s slack\n", wakeups[0], wakeups[1]);
	assert_true(wakeups[1] <= 21);
	assert_true(wakeups[0] >= 10 * wakeups[1]);
}

/* The default slack applies to tw_add() and tw_mod(); a range of 0 is
 * exact on any wheel. */
static void test_default_and_exact(void **state)
{
	(void)state;
	struct tw_config cfg = { .slack_ns = SEC };
	struct tw_wheel *w;
	assert_int_equal(tw_wheel_create(&w, &cfg, 0), 0);
	struct tw_timer a, b, c;
	init_timers(&a, &b, &c, NULL);
	assert_int_equal(tw_add(w, &a, 100 * MS + 1), 0);
	assert_int_equal(tw_mod(w, &b, 100 * MS + 1), 0);
	assert_int_equal(tw_add_range(w, &c, 200 * MS + 1, 0), 0);
	assert_int_equal(tw_next_expiry(w), 201 * MS); /* c: exact */
	assert_int_equal(tw_del(w, &c), 1);
	/* a and b: [101 ms, 1101 ms], whose coarsest tick is 1024 ms */
	assert_int_equal(tw_next_expiry(w), 1024 * MS);
	clock_now = 1024 * MS;
	assert_int_equal(tw_advance(w, clock_now), 2);
	assert_wheel_sound(w);
	tw_wheel_destroy(w);
}

/* One wake-up serves every window it falls in: the advance that reaches
 * the next expiry, here an exact timer's, also fires the timers with slack
 * whose windows have opened, periodic or not, whatever tick the wheel had
 * chosen for them, and leaves those whose windows have not. An advance
 * short of the next expiry fires only what is due: a loop that advances on
 * every event does not pay for a search each time. */
static void test_open_windows_fire_together(void **state)
{
	(void)state;
	struct tw_wheel *w = default_wheel();
	struct tw_timer x, a, b, c;
	struct tw_periodic p;
	init_timers(&x, &a, &b, &c, NULL);
	assert_int_equal(tw_periodic_init(&p, on_fire, 10 * SEC), 0);
	assert_int_equal(tw_add(w, &x, 100 * MS), 0);			   /* exact */
	assert_int_equal(tw_add_range(w, &a, 50 * MS, SEC), 0);		   /* opens before x */
	assert_int_equal(tw_add_range(w, &c, 100 * MS, 500 * MS), 0);	   /* opens with x */
	assert_int_equal(tw_add_range(w, &b, 100 * MS + 1, SEC), 0);	   /* opens after x */
	assert_int_equal(tw_add_range(w, &p.timer, 70 * MS, 300 * MS), 0); /* periodic, opens before x */
	assert_wheel_sound(w);
	/* a opened first, but alone it would wake the loop only at 1024 ms,
	 * the coarsest tick of its window; x is exact. */
	assert_int_equal(tw_next_expiry(w), 100 * MS);
	clock_now = 99 * MS;
	assert_int_equal(tw_advance(w, clock_now), 0); /* not a wake-up: a and p wait */
	assert_wheel_sound(w);
	clock_now = 100 * MS;
	assert_int_equal(tw_advance(w, clock_now), 4); /* x, and the windows open: a, c, p */
	assert_false(tw_pending(&x));
	assert_false(tw_pending(&a));
	assert_false(tw_pending(&c));
	assert_true(tw_pending(&p.timer)); /* re-armed for 10.07 s */
	assert_true(tw_pending(&b));
	assert_wheel_sound(w);
	/* b: [101 ms, 1101 ms] */
	assert_int_equal(tw_next_expiry(w), 1024 * MS);
	clock_now = 101 * MS;
	assert_int_equal(tw_advance(w, clock_now), 0);
	clock_now = 1024 * MS;
	assert_int_equal(tw_advance(w, clock_now), 1);
	assert_false(tw_pending(&b));
	tw_del(w, &p.timer);
	assert_wheel_sound(w);
	tw_wheel_destroy(w);
}

/* A wake-up's search puts back the timers of a slot whose windows have not
 * opened; one of them may be an exact timer that tw_mod() left there with
 * its tick far past the slot. The slot's bound must not rise to that tick,
 * or tw_next_expiry() would skip a later slot's timer: here Y at 5 s would
 * be reported (and fired, by a loop that sleeps until then) at 1000 s. */
static void test_search_keeps_next_expiry(void **state)
{
	(void)state;
	struct tw_wheel *w = default_wheel();
	struct tw_timer wnd, x, y, z;
	init_timers(&wnd, &x, &y, &z, NULL);
	assert_int_equal(tw_add_range(w, &wnd, 60 * MS, 10 * MS), 0); /* [60, 70]: tick 64, level 1 slot 1 */
	assert_int_equal(tw_add(w, &x, 100 * MS), 0);		       /* level 1 slot 1 too */
	assert_int_equal(tw_mod(w, &x, 1000 * SEC), 1);	       /* later: stays there */
	assert_int_equal(tw_add(w, &y, 5 * SEC), 0);		       /* level 2 */
	assert_int_equal(tw_add(w, &z, 61 * MS), 0);		       /* level 0 */
	assert_int_equal(tw_next_expiry(w), 61 * MS);
	clock_now = 61 * MS;
	assert_int_equal(tw_advance(w, clock_now), 2); /* z, and wnd's opened window */
	assert_wheel_sound(w);
	assert_true(tw_next_expiry(w) <= 5 * SEC);
	run_until_fired(w);
	assert_int_equal(fired_at, 5 * SEC); /* y, on time */
	tw_del(w, &x);
	tw_wheel_destroy(w);
}

/* The timers a wake-up's search puts back set the slot's bound afresh: the
 * loop is not woken for the tick of a timer the search already fired. */
static void test_search_leaves_no_idle_wakeup(void **state)
{
	(void)state;
	struct tw_wheel *w = default_wheel();
	struct tw_timer a, b, c;
	init_timers(&a, &b, &c, NULL);
	assert_int_equal(tw_add_range(w, &a, 100 * MS, 40 * MS), 0); /* [100, 140]: tick 128 */
	assert_int_equal(tw_add(w, &b, 150 * MS), 0);		      /* the same level-1 slot */
	assert_int_equal(tw_add(w, &c, 110 * MS), 0);
	clock_now = tw_next_expiry(w);
	assert_int_equal(clock_now, 110 * MS);
	assert_int_equal(tw_advance(w, clock_now), 2); /* c, and a's opened window */
	assert_wheel_sound(w);
	assert_int_equal(tw_next_expiry(w), 150 * MS); /* b's, not a's 128 */
	clock_now = 150 * MS;
	assert_int_equal(tw_advance(w, clock_now), 1);
	struct tw_stats st;
	tw_get_stats(w, &st);
	assert_int_equal(st.idle_advances, 0);
	tw_wheel_destroy(w);
}

/* The wheel picks the coarsest tick of the whole window, not of the
 * largest power-of-two window inside it: [30000, 31000] ms holds 30720, a
 * multiple of 2048, and a window of 1000 ticks holds no multiple of 4096
 * here. */
static void test_coarsest_tick(void **state)
{
	(void)state;
	struct tw_wheel *w = default_wheel();
	struct tw_timer t;
	tw_timer_init(&t, on_fire);
	assert_int_equal(tw_add_range(w, &t, 30000 * MS, 1000 * MS), 0);
	assert_int_equal(run_until_fired(w), 1); /* the cascade at 28672 ms is inside that wake-up */
	assert_int_equal(fired_at, 30720 * MS);
	struct tw_stats st;
	tw_get_stats(w, &st);
	assert_int_equal(st.placed, 2); /* level 2, then level 1, whose slot starts at 30720 */
	tw_wheel_destroy(w);
}

/* A periodic timer's boundary near the end of time is the multiple of
 * 2^a, not the last tick, whenever that multiple exists: on a 3 ns tick
 * the last tick is 0x5555555555555555, and a window of 7 ticks from tick
 * ...554f rounds up to ...5550. */
static void test_periodic_boundary_at_end(void **state)
{
	(void)state;
	const uint64_t tick = 3, last = 0x5555555555555555ull;
	struct tw_config cfg = { .tick_ns = tick };
	struct tw_wheel *w;
	assert_int_equal(tw_wheel_create(&w, &cfg, (last - 100) * tick), 0);
	struct tw_periodic p;
	assert_int_equal(tw_periodic_init(&p, on_fire, UINT64_MAX / 2), 0);
	uint64_t e = (last - 6) * tick; /* tick ...554f */
	assert_int_equal(tw_add_range(w, &p.timer, e, 7 * tick), 0);
	assert_int_equal(tw_next_expiry(w), boundary_ns(e, 7 * tick, tick));
	assert_int_equal(tw_next_expiry(w), (last - 5) * tick);
	assert_wheel_sound(w);
	tw_wheel_destroy(w);
}

/* A one-shot window that runs past the last tick is cut there before the
 * coarsest tick is picked: on a 3 ns tick the last tick is
 * 0x5555555555555555, and a window from tick ...554f to the end of time
 * picks ...5550 (a multiple of 16), not the last tick, which a pick over
 * the uncut window capped at the end would give. */
static void test_one_shot_window_at_end(void **state)
{
	(void)state;
	const uint64_t tick = 3, last = 0x5555555555555555ull;
	struct tw_config cfg = { .tick_ns = tick };
	struct tw_wheel *w;
	assert_int_equal(tw_wheel_create(&w, &cfg, (last - 100) * tick), 0);
	struct tw_timer t;
	tw_timer_init(&t, on_fire);
	uint64_t e = (last - 6) * tick;
	assert_int_equal(tw_add_range(w, &t, e, UINT64_MAX), 0);
	assert_int_equal(tw_next_expiry(w), (last - 5) * tick);
	assert_int_equal(tw_next_expiry(w), tw_model_coarsest_ns(e, UINT64_MAX, tick));
	fired_count = 0;
	assert_int_equal(run_until_fired(w), 1);
	assert_int_equal(fired_at, (last - 5) * tick);
	assert_wheel_sound(w);
	tw_wheel_destroy(w);
}

/* tw_mod_range() to a narrower window, or earlier than the slot serves,
 * moves the timer; later with the same window only stores the expiry. */
static void test_mod_range(void **state)
{
	(void)state;
	struct tw_wheel *w = default_wheel();
	struct tw_timer t;
	tw_timer_init(&t, on_fire);
	assert_int_equal(tw_add_range(w, &t, 10 * SEC + 1, 5 * SEC), 0);
	/* Later, same window: stays. */
	mod_range_stays(w, &t, 11 * SEC, 5 * SEC);
	/* Later, but exact: must fire at 11.5 s exactly, whatever slot serves. */
	assert_int_equal(tw_mod_range(w, &t, 11 * SEC + 500 * MS, 0), 1);
	assert_int_equal(tw_next_expiry(w) <= 11 * SEC + 500 * MS, 1);
	run_until_fired(w);
	assert_int_equal(fired_at, 11 * SEC + 500 * MS);
	assert_wheel_sound(w);
	tw_wheel_destroy(w);
}

/* An exact timer re-armed later with a window takes the window's tick, as
 * one armed with it would: the re-arm that only stores the expiry is for a
 * timer that stays exact. */
static void test_exact_rearmed_with_window(void **state)
{
	(void)state;
	struct tw_wheel *w = default_wheel();
	struct tw_timer t;
	tw_timer_init(&t, on_fire);
	assert_int_equal(tw_add(w, &t, 10 * SEC), 0);
	assert_int_equal(tw_mod_range(w, &t, 11 * SEC, 5 * SEC), 1);
	uint64_t want = tw_model_coarsest_ns(11 * SEC, 5 * SEC, TW_DEFAULT_TICK_NS);
	assert_true(want > 11 * SEC); /* 16384 ms: not the expiry itself */
	run_until_fired(w); /* the bucket it stayed in may cost a wake-up first */
	assert_int_equal(fired_count, 1);
	assert_int_equal(fired_at, want);
	assert_wheel_sound(w);
	tw_wheel_destroy(w);
}

/* A later re-arm may leave a timer with slack in a bucket that comes due
 * before its new window opens: the bucket places it again then, before any
 * wake-up could look for it. [1000, 1100] ms picks 1024 (level 1); the
 * re-arm to [2000, 2100] picks 2048, a slot of its own, but stays, placed
 * once; it still fires at 2048. */
static void test_rearm_stays_until_window(void **state)
{
	(void)state;
	struct tw_wheel *w = default_wheel();
	struct tw_timer t;
	tw_timer_init(&t, on_fire);
	assert_int_equal(tw_add_range(w, &t, 1000 * MS, 100 * MS), 0);
	mod_range_stays(w, &t, 2000 * MS, 100 * MS);
	struct tw_stats st;
	tw_get_stats(w, &st);
	assert_int_equal(st.placed, 1);
	assert_wheel_sound(w);
	run_until_fired(w);
	assert_int_equal(fired_at, 2048 * MS);
	assert_wheel_sound(w);
	tw_wheel_destroy(w);
}

/* A periodic timer keeps the window of its first arm on every re-arm. */
static void test_periodic_keeps_window(void **state)
{
	(void)state;
	struct tw_wheel *w = default_wheel();
	struct tw_periodic p;
	assert_int_equal(tw_periodic_init(&p, on_fire, 1 * SEC + 7 * MS), 0);
	uint64_t e = 1 * SEC + 7 * MS;
	assert_int_equal(tw_add_range(w, &p.timer, e, 100 * MS), 0);
	for (int i = 0; i < 20; i++) {
		run_until_fired(w);
		assert_true(fired_at >= e && fired_at <= e + 100 * MS);
		assert_int_equal(fired_at, boundary_ns(e, 100 * MS, MS));
		e += 1 * SEC + 7 * MS;
		assert_int_equal(p.timer.expires, e);
	}
	tw_del(w, &p.timer);
	assert_wheel_sound(w);
	tw_wheel_destroy(w);
}

/* The end of time: windows that run past UINT64_MAX saturate, on a 1 ns
 * tick (no partial tick) and on a tick that does not divide 2^64. */
static void test_end_of_time(void **state)
{
	(void)state;
	static const uint64_t ticks[] = { 1, MS, 3 };
	for (size_t k = 0; k < 3; k++) {
		struct tw_config cfg = { .tick_ns = ticks[k] };
		struct tw_wheel *w;
		assert_int_equal(tw_wheel_create(&w, &cfg, UINT64_MAX - 10 * ticks[k]), 0);
		struct tw_timer a, b;
		init_timers(&a, &b, NULL);
		assert_int_equal(tw_add_range(w, &a, UINT64_MAX - 5 * ticks[k], UINT64_MAX), 0);
		assert_int_equal(tw_add_range(w, &b, UINT64_MAX, 1000), 0);
		assert_wheel_sound(w);
		clock_now = UINT64_MAX - 5 * ticks[k] - 1;
		assert_int_equal(tw_advance(w, clock_now), 0);
		clock_now = UINT64_MAX;
		assert_int_equal(tw_advance(w, clock_now), 2);
		assert_int_equal(tw_count(w), 0);
		assert_wheel_sound(w);
		tw_wheel_destroy(w);
	}
}

/* An advance short of tw_next_expiry() fires nothing, the one that reaches
 * it fires the timer, at the tick the header names for its window. */
static void fires_at_next_expiry(struct tw_wheel *w, uint64_t e, uint64_t slack)
{
	uint64_t next = tw_next_expiry(w);
	fired_count = 0;
	clock_now = next - 1;
	assert_int_equal(tw_advance(w, clock_now), 0);
	assert_wheel_sound(w);
	run_until_fired(w);
	assert_int_equal(fired_at, tw_model_coarsest_ns(e, slack, TW_DEFAULT_TICK_NS));
	assert_wheel_sound(w);
}

/* An exact timer re-armed earlier into a window that opens at its bucket's
 * cascade point: [127.9 ms, 376.8 ms] opens at tick 128, where the bucket
 * of its old tick 136 (level 1, from 128) comes due. Staying there, the
 * cascade at 128 would fire it while tw_next_expiry() still said 136. Also
 * through tw_mod() on a wheel whose default slack is that window. */
static void test_rearm_earlier_into_window(void **state)
{
	(void)state;
	const uint64_t e = 127893727, slack = 248892979;
	struct tw_timer t;
	tw_timer_init(&t, on_fire);
	struct tw_wheel *w;
	assert_int_equal(tw_wheel_create(&w, NULL, 90 * MS), 0);
	assert_int_equal(tw_add(w, &t, 135957200), 0);
	assert_int_equal(tw_mod_range(w, &t, e, slack), 1);
	fires_at_next_expiry(w, e, slack);
	tw_wheel_destroy(w);

	struct tw_config cfg = { .slack_ns = slack };
	assert_int_equal(tw_wheel_create(&w, &cfg, 90 * MS), 0);
	assert_int_equal(tw_add_range(w, &t, 135957200, 0), 0);
	assert_int_equal(tw_mod(w, &t, e), 1);
	fires_at_next_expiry(w, e, slack);
	tw_wheel_destroy(w);
}

/* A periodic timer whose boundary lies past the last tick (3 ns tick, a
 * window of 2^62 ticks) fires at the coarsest tick between its expiry's
 * and the last, and tw_next_expiry() says so: an advance short of it fires
 * nothing. The bucket that holds the last tick comes due before it, and
 * would fire a timer left there at its cascade, unannounced. */
static void test_periodic_past_last_tick(void **state)
{
	(void)state;
	const uint64_t slack = 16955313924020572852ull, e = 13837201669635295291ull;
	struct tw_config cfg = { .tick_ns = 3, .slack_ns = slack };
	struct tw_wheel *w;
	assert_int_equal(tw_wheel_create(&w, &cfg, e), 0);
	struct tw_periodic p;
	assert_int_equal(tw_periodic_init(&p, on_fire, 8), 0);
	assert_int_equal(tw_add(w, &p.timer, e), 0); /* due */
	fired_count = 0;
	clock_now = e;
	assert_int_equal(tw_advance(w, clock_now), 1);
	assert_int_equal(p.timer.expires, e + 8); /* re-armed */
	uint64_t next = tw_next_expiry(w);
	assert_int_equal(next, tw_model_coarsest_ns(e + 8, UINT64_MAX, 3));
	/* Short of it, through the bucket that holds the last tick: nothing. */
	clock_now = next - 1;
	assert_int_equal(tw_advance(w, clock_now), 0);
	clock_now = 17293822569102704640ull;
	int fired = tw_advance(w, clock_now);
	assert_true(fired == 0 || clock_now >= next);
	assert_int_equal(fired, 1);
	assert_wheel_sound(w);
	tw_wheel_destroy(w);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_window_and_boundary), cmocka_unit_test(test_fewer_placements),
		cmocka_unit_test(test_shared_wakeups),	    cmocka_unit_test(test_default_and_exact),
		cmocka_unit_test(test_mod_range),	    cmocka_unit_test(test_periodic_keeps_window),
		cmocka_unit_test(test_end_of_time),	    cmocka_unit_test(test_open_windows_fire_together),
		cmocka_unit_test(test_coarsest_tick),	    cmocka_unit_test(test_periodic_boundary_at_end),
		cmocka_unit_test(test_search_keeps_next_expiry), cmocka_unit_test(test_search_leaves_no_idle_wakeup),
		cmocka_unit_test(test_rearm_stays_until_window), cmocka_unit_test(test_exact_rearmed_with_window),
		cmocka_unit_test(test_rearm_earlier_into_window), cmocka_unit_test(test_periodic_past_last_tick),
		cmocka_unit_test(test_one_shot_window_at_end),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
