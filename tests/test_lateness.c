/* SPDX-License-Identifier: MIT */
/*
 * tw_get_lateness() and tw_lateness_quantile(): each firing lands in the
 * bucket of its lateness in ns (none, then [2^(b-1), 2^b)),
 * measured against the advance's now and, for a periodic timer, the expiry
 * it fired for; at the ends: an empty wheel, lateness of the whole clock
 * (the last bucket), a budget that delays a timer, and the
 * refusals; the rank a percentile picks, on histograms made by hand.
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

/* A histogram made by hand: n[b] firings in bucket b, the largest
 * lateness max. */
static struct tw_lateness hist(const uint64_t *n, int buckets, uint64_t max)
{
	struct tw_lateness l = { .tick_ns = TICK, .max_ns = max };
	for (int b = 0; b < buckets; b++) {
		l.count[b] = n[b];
		l.fired += n[b];
	}
	return l;
}

/* Each bucket's edge as the header says: 2^b - 1 ns, 0 for bucket 0. */
static uint64_t edge(int b)
{
	return b >= 64 ? UINT64_MAX : ((uint64_t)1 << b) - 1;
}

/* The rank is the nearest rank: r = ceil(permille * fired / 1000), at
 * least 1, and the result the edge of the r-th firing's bucket, at most
 * max_ns. At permille 0 and 1000, on one, two and three firings, across
 * the boundaries of a rank, and with a count too large for
 * permille * fired to fit in 64 bits. */
static void test_quantile_rank(void **state)
{
	(void)state;
	/* One firing, 5 ns late (bucket 3): every permille picks it, and its
	 * edge, 7, is capped at the max. */
	struct tw_lateness l = hist((const uint64_t[]){ 0, 0, 0, 1 }, 4, 5);
	for (unsigned p = 0; p <= 1000; p++)
		assert_int_equal(tw_lateness_quantile(&l, p), 5);
	/* Two: on time and 1000 ns late (bucket 10). 0 to 500 is rank 1,
	 * 501 to 1000 rank 2, capped at the max. */
	uint64_t two[11] = { 1 };
	two[10] = 1;
	l = hist(two, 11, 1000);
	assert_int_equal(tw_lateness_quantile(&l, 0), 0);
	assert_int_equal(tw_lateness_quantile(&l, 500), 0);
	assert_int_equal(tw_lateness_quantile(&l, 501), 1000);
	assert_int_equal(tw_lateness_quantile(&l, 1000), 1000);
	/* Three, in buckets 1, 2 and 3 (1, 2 to 3, 4 to 7 ns), the largest 6:
	 * 0 to 333 the first, 334 to 666 the second, 667 to 1000 the third. */
	l = hist((const uint64_t[]){ 0, 1, 1, 1 }, 4, 6);
	for (unsigned p = 0; p <= 1000; p++)
		assert_int_equal(tw_lateness_quantile(&l, p), p <= 333 ? edge(1) : p <= 666 ? edge(2) : 6);
	/* 1000 firings, 990 on time, 9 in bucket 20 and the largest, 2 ms, in
	 * bucket 21: p99 is rank 990, on time; p99.1 rank 991, bucket 20's
	 * edge, below the max. */
	uint64_t thousand[22] = { 990 };
	thousand[20] = 9;
	thousand[21] = 1;
	l = hist(thousand, 22, 2 * TICK);
	assert_int_equal(tw_lateness_quantile(&l, 990), 0);
	assert_int_equal(tw_lateness_quantile(&l, 991), edge(20));
	assert_int_equal(tw_lateness_quantile(&l, 1000), 2 * TICK);
	/* 1001 firings, 999 on time: 998/1000 of 1001 is 998.998, rank 999,
	 * on time; 999/1000 is 999.999, rank 1000, late. */
	thousand[0] = 999;
	thousand[20] = 1;
	l = hist(thousand, 22, 2 * TICK);
	assert_int_equal(tw_lateness_quantile(&l, 998), 0);
	assert_int_equal(tw_lateness_quantile(&l, 999), edge(20));
	/* 2^64 - 1 firings: 2^63 - 1 on time, 2^63 - 1 in bucket 5, one in
	 * bucket 6 (40 ns). The median is rank ceil((2^64 - 1) / 2) = 2^63,
	 * the first of bucket 5; 499 is rank 9204925292781066256, on time. */
	uint64_t huge[7] = { UINT64_MAX / 2 };
	huge[5] = UINT64_MAX / 2;
	huge[6] = 1;
	l = hist(huge, 7, 40);
	assert_int_equal(l.fired, UINT64_MAX);
	assert_int_equal(tw_lateness_quantile(&l, 500), edge(5));
	assert_int_equal(tw_lateness_quantile(&l, 499), 0);
	assert_int_equal(tw_lateness_quantile(&l, 0), 0);
	assert_int_equal(tw_lateness_quantile(&l, 999), edge(5));
	assert_int_equal(tw_lateness_quantile(&l, 1000), 40);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_empty_and_refusals),
		cmocka_unit_test(test_buckets),
		cmocka_unit_test(test_periodic),
		cmocka_unit_test(test_end_of_time),
		cmocka_unit_test(test_budget),
		cmocka_unit_test(test_quantile_rank),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
