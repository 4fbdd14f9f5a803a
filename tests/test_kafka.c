/* SPDX-License-Identifier: MIT */
/*
 * The worked example of Kafka's TimingWheel Javadoc, on a wheel
 * with u = 1 (tick 1 ns) and n = 4 slots per level instead of 3, starting
 * at c = 0:
 *
 *   level 0  slots of 1 tick:   [0] [1] [2] [3]
 *   level 1  slots of 4 ticks:  [0-3] [4-7] [8-11] [12-15]
 *   level 2  slots of 16 ticks: [0-15] [16-31] [32-47] [48-63]
 *
 * As in the Javadoc, a bucket expires at its beginning, and the buckets that
 * hold the clock's own range never receive a timer (that range is covered
 * by a finer level). A timer sits at the coarsest level where its tick
 * differs from the clock, and cascades down when the clock reaches its
 * bucket.
 */
#include <timerwheel/debug.h>

#include "common.h"

static unsigned fired_at[128];
static uint64_t clock_now;

static void record(struct tw_timer *t)
{
	fired_at[t->expires] = 1;
	assert_true(t->expires <= clock_now);
}

static void assert_bucket(struct tw_wheel *w, struct tw_timer *t, unsigned level, unsigned slot)
{
	unsigned l = 99, s = 99;
	assert_int_equal(tw_timer_bucket(w, t, &l, &s), 0);
	assert_int_equal(l, level);
	assert_int_equal(s, slot);
}

static void advance_to(struct tw_wheel *w, uint64_t now, int expect_fired)
{
	clock_now = now;
	assert_int_equal(tw_advance(w, now), expect_fired);
	assert_wheel_sound(w);
}

static void test_kafka_example(void **state)
{
	(void)state;
	struct tw_config cfg = { .tick_ns = 1, .slot_bits = 2 };
	struct tw_wheel *w;
	assert_int_equal(tw_wheel_create(&w, &cfg, 0), 0);

	enum { N = 8 };
	static const uint64_t expiry[N] = { 1, 3, 4, 7, 9, 17, 40, 64 };
	struct tw_timer t[N];
	for (int i = 0; i < N; i++) {
		tw_timer_init(&t[i], record);
		assert_int_equal(tw_add(w, &t[i], expiry[i]), 0);
	}
	assert_wheel_sound(w);

	/* At c: [1] and [3] are level 0 buckets; 4 and 7 share level 1's
	 * [4-7]; 9 is in [8-11]; 17 in level 2's [16-31], 40 in [32-47]; 64 is
	 * past level 2's span and needs level 3. */
	assert_bucket(w, &t[0], 0, 1);
	assert_bucket(w, &t[1], 0, 3);
	assert_bucket(w, &t[2], 1, 1);
	assert_bucket(w, &t[3], 1, 1);
	assert_bucket(w, &t[4], 1, 2);
	assert_bucket(w, &t[5], 2, 1);
	assert_bucket(w, &t[6], 2, 2);
	assert_bucket(w, &t[7], 3, 1);
	assert_int_equal(tw_next_expiry(w), 1);

	/* c+1: [1] expires. */
	advance_to(w, 1, 1);
	assert_true(fired_at[1]);

	/* c+3: [3] expires, nothing else moves. */
	advance_to(w, 3, 1);
	assert_int_equal(tw_next_expiry(w), 4);

	/* c+4: level 1's [4-7] expires at its beginning: 4 fires, 7 cascades
	 * into level 0's [3]. */
	struct tw_stats st;
	advance_to(w, 4, 1);
	assert_true(fired_at[4]);
	assert_bucket(w, &t[3], 0, 3);
	tw_get_stats(w, &st);
	assert_int_equal(st.cascaded, 2);

	/* c+8: [8-11] cascades 9 down to level 0's [1]; nothing fires. */
	advance_to(w, 8, 1); /* 7 fired on the way */
	assert_true(fired_at[7]);
	assert_bucket(w, &t[4], 0, 1);

	/* c+16: level 2's [16-31] cascades 17 down to level 0's [1]. */
	advance_to(w, 16, 1); /* 9 */
	assert_bucket(w, &t[5], 0, 1);

	/* c+32: level 2's [32-47] cascades 40 to level 1's [40-43] (slot 2). */
	advance_to(w, 32, 1); /* 17 */
	assert_bucket(w, &t[6], 1, 2);

	/* c+64: level 3's [64-127] takes 64 straight to due. */
	advance_to(w, 64, 2); /* 40 and 64 */
	assert_true(fired_at[40] && fired_at[64]);
	assert_int_equal(tw_count(w), 0);
	assert_int_equal(tw_next_expiry(w), UINT64_MAX);

	tw_get_stats(w, &st);
	assert_int_equal(st.fired, N);
	/* 4,7 at c+4; 9 at c+8; 17 at c+16; 40 at c+32 and again at c+40; 64. */
	assert_int_equal(st.cascaded, 7);
	tw_wheel_destroy(w);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_kafka_example),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
