/* SPDX-License-Identifier: MIT */
/*
 * Re-arm economy: once the uv timer is armed for the earliest timer, arming
 * or re-arming 10^5 timers later than it makes no libuv call at all.
 */
#define _POSIX_C_SOURCE 200809L

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include <timerwheel/uv.h>

#include "uv_test_util.h"

#define N_LATER 100000
#define MS 1000000ull

static int fired;

static void on_fire(struct tw_timer *t)
{
	(void)t;
	fired++;
}

static void test_later_arms_make_no_libuv_call(void **state)
{
	uv_loop_t loop;
	struct tw_uv h;
	struct tw_timer first, *later = calloc(N_LATER, sizeof(*later));
	struct tw_uv_stats a, b, c;
	struct tw_stats ws0, ws1;
	struct tw_wheel *w;
	uint64_t now = tw_uv_now();
	size_t i;

	(void)state;
	assert_non_null(later);
	assert_int_equal(uv_loop_init(&loop), 0);
	assert_int_equal(tw_test_uv_open(&loop, &h, NULL, 0), 0);
	w = tw_uv_wheel(&h);
	tw_timer_init(&first, on_fire);
	assert_int_equal(tw_add(w, &first, now + 10000 * MS), 0);
	assert_int_equal(tw_uv_get_stats(&h, &a), 0);
	assert_int_equal(a.timer_starts, 1);
	assert_int_equal(tw_get_stats(w, &ws0), 0);

	/* Spread from just after the first timer to hours later: every level. */
	for (i = 0; i < N_LATER; i++) {
		tw_timer_init(&later[i], on_fire);
		assert_int_equal(tw_add(w, &later[i], now + 10001 * MS + i * i * 1000), 0);
	}
	assert_int_equal(tw_uv_get_stats(&h, &b), 0);
	for (i = 0; i < N_LATER; i++)
		assert_int_equal(tw_mod(w, &later[i], later[i].expires + 7 * MS), 1);
	assert_int_equal(tw_uv_get_stats(&h, &c), 0);
	assert_int_equal(tw_get_stats(w, &ws1), 0);
	printf("10^5 later arms: %llu uv_timer_start calls; 10^5 later re-arms: %llu; "
	       "os_rearms %llu -> %llu\n",
	       (unsigned long long)(b.timer_starts - a.timer_starts),
	       (unsigned long long)(c.timer_starts - b.timer_starts),
	       (unsigned long long)ws0.os_rearms, (unsigned long long)ws1.os_rearms);
	assert_int_equal(b.timer_starts, a.timer_starts);
	assert_int_equal(c.timer_starts, b.timer_starts);
	assert_int_equal(c.timer_stops, 0);
	assert_int_equal(ws1.os_rearms, ws0.os_rearms);

	/* An earlier timer is the one thing that moves the uv timer. */
	assert_int_equal(tw_mod(w, &later[0], now + 5000 * MS), 1);
	assert_int_equal(tw_uv_get_stats(&h, &c), 0);
	assert_int_equal(c.timer_starts, b.timer_starts + 1);

	/* Cancelling everything stops it, and the loop has nothing to run. */
	assert_int_equal(tw_del(w, &first), 1);
	for (i = 0; i < N_LATER; i++)
		assert_int_equal(tw_del(w, &later[i]), 1);
	assert_int_equal(tw_uv_get_stats(&h, &c), 0);
	assert_int_equal(c.timer_stops, 1);
	assert_int_equal(uv_run(&loop, UV_RUN_DEFAULT), 0);
	assert_int_equal(fired, 0);
	tw_test_uv_close(&h, NULL);
	assert_int_equal(uv_run(&loop, UV_RUN_DEFAULT), 0);
	assert_int_equal(uv_loop_close(&loop), 0);
	free(later);
}

static uint64_t fired_at;

static void on_fire_at(struct tw_timer *t)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	fired_at = (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
	assert_true(fired_at >= t->expires);
	fired++;
}

/* Moving the earliest timer later makes no libuv call either: the wake-up
 * already armed comes too soon, fires nothing, and re-arms for the rest. */
static void test_moved_later_costs_a_wakeup_not_a_call(void **state)
{
	uv_loop_t loop;
	struct tw_uv h;
	struct tw_timer t;
	struct tw_uv_stats a, b;
	struct tw_stats ws;
	uint64_t now = tw_uv_now();

	(void)state;
	fired = 0;
	assert_int_equal(uv_loop_init(&loop), 0);
	assert_int_equal(tw_test_uv_open(&loop, &h, NULL, 0), 0);
	tw_timer_init(&t, on_fire_at);
	assert_int_equal(tw_add(tw_uv_wheel(&h), &t, now + 20 * MS), 0);
	assert_int_equal(tw_uv_get_stats(&h, &a), 0);
	assert_int_equal(tw_mod(tw_uv_wheel(&h), &t, now + 60 * MS), 1);
	assert_int_equal(tw_uv_get_stats(&h, &b), 0);
	assert_int_equal(b.timer_starts, a.timer_starts);
	assert_int_equal(uv_run(&loop, UV_RUN_DEFAULT), 0);
	assert_int_equal(fired, 1);
	assert_true(fired_at >= now + 60 * MS);
	assert_int_equal(tw_uv_get_stats(&h, &b), 0);
	assert_int_equal(tw_get_stats(tw_uv_wheel(&h), &ws), 0);
	assert_true(b.wakeups >= 2);
	assert_true(ws.idle_advances >= 1);
	assert_int_equal(b.early_wakeups, 0);
	tw_test_uv_close(&h, NULL);
	assert_int_equal(uv_run(&loop, UV_RUN_DEFAULT), 0);
	assert_int_equal(uv_loop_close(&loop), 0);
}

/* Already expired when armed: due at once, libuv clock or not. */
static void test_expired_timer_fires_at_once(void **state)
{
	uv_loop_t loop;
	struct tw_uv h;
	struct tw_timer t;
	uint64_t now = tw_uv_now();

	(void)state;
	fired = 0;
	assert_int_equal(uv_loop_init(&loop), 0);
	assert_int_equal(tw_test_uv_open(&loop, &h, NULL, 0), 0);
	tw_timer_init(&t, on_fire_at);
	assert_int_equal(tw_add(tw_uv_wheel(&h), &t, now - 1000 * MS), 0);
	assert_int_equal(uv_run(&loop, UV_RUN_DEFAULT), 0);
	assert_int_equal(fired, 1);
	assert_true(fired_at - now < 100 * MS);
	tw_test_uv_close(&h, NULL);
	assert_int_equal(uv_run(&loop, UV_RUN_DEFAULT), 0);
	assert_int_equal(uv_loop_close(&loop), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_later_arms_make_no_libuv_call),
		cmocka_unit_test(test_moved_later_costs_a_wakeup_not_a_call),
		cmocka_unit_test(test_expired_timer_fires_at_once),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
