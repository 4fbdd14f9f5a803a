/* SPDX-License-Identifier: MIT */
/*
 * tw_get_lateness() and tw_lateness_quantile(): each firing lands in the
 * bucket of its lateness in ns (none, then [2^(b-1), 2^b)),
 * measured against the advance's now and, for a periodic timer, the expiry
 * it fired for; at the ends: an empty wheel, lateness of the whole clock
 * (the last bucket), a budget that delays a timer, and the
 * refusals.
 */
#include "common.h"

#define TICK 1000000ull /* the default 1 ms */

static void nop(struct tw_timer *t)
{
	(void)t;
}

static void test_empty_and_refusals(void **state)
{
	(void)state;
	struct tw_wheel *w;
	struct tw_lateness l;
	assert_int_equal(tw_get_lateness(NULL, &l), -EINVAL);
	assert_int_equal(tw_wheel_create(&w, NULL, 0), 0);
	assert_int_equal(tw_get_lateness(w, NULL), -EINVAL);
	memset(&l, 0xff, sizeof(l));
	assert_int_equal(tw_get_lateness(w, &l), 0);
	assert_int_equal(l.tick_ns, TICK);
	assert_int_equal(l.fired, 0);
	assert_int_equal(l.max_ns, 0);
	for (int b = 0; b < TW_LATENESS_BUCKETS; b++)
		assert_int_equal(l.count[b], 0);
	assert_int_equal(tw_lateness_quantile(&l, 500), 0);
	assert_int_equal(tw_lateness_quantile(NULL, 500), 0);
	l.fired = 1;
	l.count[0] = 1;
	assert_int_equal(tw_lateness_quantile(&l, 1001), 0);
	tw_wheel_destroy(w);
}

/* Lateness 0, half a tick, 1, 3 and 1000 ticks of 1 ms: buckets 0, 19
 * (2^18 to 2^19 ns), 20, 22 and 30. */
static void test_buckets(void **state)
{
	(void)state;
	static const uint64_t late[] = { 0, TICK / 2, TICK, 3 * TICK, 1000 * TICK };
	static const int bucket[] = { 0, 19, 20, 22, 30 };
	struct tw_wheel *w;
	struct tw_timer t[5];
	struct tw_lateness l;
	uint64_t now = 0;
	assert_int_equal(tw_wheel_create(&w, NULL, now), 0);
	for (int i = 0; i < 5; i++) {
		uint64_t e = now + 10 * TICK;
		tw_timer_init(&t[i], nop);
		tw_add(w, &t[i], e);
		now = e + late[i];
		assert_int_equal(tw_advance(w, now), 1);
		assert_int_equal(tw_get_lateness(w, &l), 0);
		assert_int_equal(l.fired, (uint64_t)i + 1);
		/* The whole histogram: each firing so far in its bucket, and
		 * nothing anywhere else. */
		for (int b = 0; b < TW_LATENESS_BUCKETS; b++) {
			uint64_t want = 0;
			for (int k = 0; k <= i; k++)
				want += bucket[k] == b;
			assert_int_equal(l.count[b], want);
		}
	}
	assert_int_equal(l.max_ns, 1000 * TICK);
	struct tw_stats st;
	tw_get_stats(w, &st);
	assert_int_equal(st.fired, l.fired);
	/* Ranks 1 to 5: p0 the first firing (on time), p40 the second
	 * (bucket 19), p50 and p60 the third (bucket 20), p80 the fourth
	 * (bucket 22), p100 the max. */
	assert_int_equal(tw_lateness_quantile(&l, 0), 0);
	assert_int_equal(tw_lateness_quantile(&l, 400), (1u << 19) - 1);
	assert_int_equal(tw_lateness_quantile(&l, 500), (1u << 20) - 1);
	assert_int_equal(tw_lateness_quantile(&l, 600), (1u << 20) - 1);
	assert_int_equal(tw_lateness_quantile(&l, 800), (1u << 22) - 1);
	assert_int_equal(tw_lateness_quantile(&l, 1000), 1000 * TICK);
	assert_wheel_sound(w);
	tw_wheel_destroy(w);
}

/* A periodic timer's lateness is against the expiry it fired for, not the
 * next one it was re-armed for before its callback. */
static void test_periodic(void **state)
{
	(void)state;
	struct tw_wheel *w;
	struct tw_periodic p;
	struct tw_lateness l;
	assert_int_equal(tw_wheel_create(&w, NULL, 0), 0);
	assert_int_equal(tw_periodic_init(&p, nop, 10 * TICK), 0);
	tw_add(w, &p.timer, 10 * TICK);
	assert_int_equal(tw_advance(w, 17 * TICK), 1); /* 7 ms late: bucket 23 */
	tw_get_lateness(w, &l);
	assert_int_equal(l.count[23], 1);
	assert_int_equal(l.max_ns, 7 * TICK);
	tw_wheel_destroy(w);
}

/* A timer due at 0 fired at UINT64_MAX is UINT64_MAX ns late, the last
 * bucket, whose edge saturates to the max; one due at UINT64_MAX is on
 * time. On a 1 ns tick, so that the expiry is not rounded. */
static void test_end_of_time(void **state)
{
	(void)state;
	struct tw_wheel *w;
	struct tw_timer t, u;
	struct tw_lateness l;
	struct tw_config cfg = { .tick_ns = 1 };
	assert_int_equal(tw_wheel_create(&w, &cfg, 0), 0);
	tw_timer_init(&t, nop);
	tw_timer_init(&u, nop);
	tw_add(w, &t, 0);
	tw_add(w, &u, UINT64_MAX);
	assert_int_equal(tw_advance(w, UINT64_MAX), 2);
	tw_get_lateness(w, &l);
	assert_int_equal(l.count[64], 1);
	assert_int_equal(l.count[0], 1);
	assert_int_equal(l.max_ns, UINT64_MAX);
	assert_int_equal(tw_lateness_quantile(&l, 1000), UINT64_MAX);
	assert_int_equal(tw_lateness_quantile(&l, 500), 0);
	tw_wheel_destroy(w);
}

/* A timer a budget left for the next advance is as late as that advance. */
static void test_budget(void **state)
{
	(void)state;
	struct tw_wheel *w;
	struct tw_timer t[2];
	struct tw_lateness l;
	assert_int_equal(tw_wheel_create(&w, NULL, 0), 0);
	for (int i = 0; i < 2; i++) {
		tw_timer_init(&t[i], nop);
		tw_add(w, &t[i], 5 * TICK);
	}
	assert_int_equal(tw_advance_budget(w, 5 * TICK, 1), 1);
	assert_int_equal(tw_advance(w, 25 * TICK), 1); /* 20 ms late: bucket 25 */
	tw_get_lateness(w, &l);
	assert_int_equal(l.count[0], 1);
	assert_int_equal(l.count[25], 1);
	tw_wheel_destroy(w);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_empty_and_refusals),
		cmocka_unit_test(test_buckets),
		cmocka_unit_test(test_periodic),
		cmocka_unit_test(test_end_of_time),
		cmocka_unit_test(test_budget),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
