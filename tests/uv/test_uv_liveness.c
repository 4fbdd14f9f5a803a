/* SPDX-License-Identifier: MIT */
/*
 * Loop liveness like native timers: uv_run() returns once the last timer
 * fired or was cancelled, and a weak wheel does not keep the loop alive.
 */
#define _POSIX_C_SOURCE 200809L

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include <timerwheel/uv.h>

#include "uv_test_util.h"

#define MS 1000000ull

static struct {
	uv_loop_t loop;
	struct tw_uv h;
	struct tw_timer t[3];
	struct tw_timer distant;
	uv_timer_t native;
	int fired;
} s;

static void setup_loop(unsigned flags)
{
	memset(&s, 0, sizeof(s));
	assert_int_equal(uv_loop_init(&s.loop), 0);
	assert_int_equal(tw_test_uv_open(&s.loop, &s.h, NULL, flags), 0);
}

static void teardown_loop(void)
{
	tw_test_uv_close(&s.h, NULL);
	assert_int_equal(uv_run(&s.loop, UV_RUN_DEFAULT), 0);
	assert_int_equal(uv_loop_close(&s.loop), 0);
}

static void on_fire(struct tw_timer *t)
{
	assert_true(tw_test_mono_ns() >= t->expires);
	s.fired++;
}

static void on_never(struct tw_timer *t)
{
	(void)t;
	fail_msg("a cancelled timer fired");
}

static void test_exits_when_last_fires(void **state)
{
	uint64_t t0, took;
	int i;

	(void)state;
	setup_loop(0);
	t0 = tw_test_mono_ns();
	for (i = 0; i < 3; i++) {
		tw_timer_init(&s.t[i], on_fire);
		assert_int_equal(tw_add(tw_uv_wheel(&s.h), &s.t[i], t0 + (uint64_t)(5 << i) * MS), 0);
	}
	assert_int_equal(uv_run(&s.loop, UV_RUN_DEFAULT), 0);
	took = tw_test_mono_ns() - t0;
	assert_int_equal(s.fired, 3);
	assert_true(took >= 20 * MS);
	assert_true(took < 1000 * MS);
	teardown_loop();
}

/* Cancelled from a wheel callback: the end-of-advance hook sees no timer. */
static void on_cancel_far(struct tw_timer *t)
{
	(void)t;
	assert_int_equal(tw_del(tw_uv_wheel(&s.h), &s.distant), 1);
}

static void test_exits_when_last_cancelled_in_callback(void **state)
{
	uint64_t t0;

	(void)state;
	setup_loop(0);
	t0 = tw_test_mono_ns();
	tw_timer_init(&s.distant, on_never);
	tw_timer_init(&s.t[0], on_cancel_far);
	assert_int_equal(tw_add(tw_uv_wheel(&s.h), &s.distant, t0 + 10000 * MS), 0);
	assert_int_equal(tw_add(tw_uv_wheel(&s.h), &s.t[0], t0 + 5 * MS), 0);
	assert_int_equal(uv_run(&s.loop, UV_RUN_DEFAULT), 0);
	assert_true(tw_test_mono_ns() - t0 < 1000 * MS);
	assert_false(tw_pending(&s.distant));
	teardown_loop();
}

/* Cancelled from outside the wheel (a native libuv timer): tw_del()'s own
 * hook call stops the uv timer. */
static void on_native(uv_timer_t *nt)
{
	assert_int_equal(tw_del(tw_uv_wheel(&s.h), &s.distant), 1);
	uv_close((uv_handle_t *)nt, NULL);
}

static void test_exits_when_last_cancelled_outside(void **state)
{
	uint64_t t0;

	(void)state;
	setup_loop(0);
	t0 = tw_test_mono_ns();
	tw_timer_init(&s.distant, on_never);
	assert_int_equal(tw_add(tw_uv_wheel(&s.h), &s.distant, t0 + 10000 * MS), 0);
	assert_int_equal(uv_timer_init(&s.loop, &s.native), 0);
	assert_int_equal(uv_timer_start(&s.native, on_native, 5, 0), 0);
	assert_int_equal(uv_run(&s.loop, UV_RUN_DEFAULT), 0);
	assert_true(tw_test_mono_ns() - t0 < 1000 * MS);
	teardown_loop();
}

static void test_weak_wheel_does_not_keep_loop_alive(void **state)
{
	uint64_t t0;

	(void)state;
	setup_loop(TW_UV_WEAK);
	t0 = tw_test_mono_ns();
	tw_timer_init(&s.distant, on_never);
	assert_int_equal(tw_add(tw_uv_wheel(&s.h), &s.distant, t0 + 10000 * MS), 0);
	assert_int_equal(uv_run(&s.loop, UV_RUN_DEFAULT), 0);
	assert_true(tw_test_mono_ns() - t0 < 1000 * MS);
	assert_true(tw_pending(&s.distant));
	teardown_loop();
	assert_false(tw_pending(&s.distant));
}

static void on_native_close(uv_timer_t *nt)
{
	uv_close((uv_handle_t *)nt, NULL);
}

/* Weak only means "not keeping the loop alive": it still fires while
 * something else does. */
static void test_weak_wheel_fires_while_loop_runs(void **state)
{
	uint64_t t0;

	(void)state;
	setup_loop(TW_UV_WEAK);
	t0 = tw_test_mono_ns();
	tw_timer_init(&s.t[0], on_fire);
	tw_timer_init(&s.distant, on_never);
	assert_int_equal(tw_add(tw_uv_wheel(&s.h), &s.t[0], t0 + 10 * MS), 0);
	assert_int_equal(tw_add(tw_uv_wheel(&s.h), &s.distant, t0 + 10000 * MS), 0);
	assert_int_equal(uv_timer_init(&s.loop, &s.native), 0);
	assert_int_equal(uv_timer_start(&s.native, on_native_close, 40, 0), 0);
	assert_int_equal(uv_run(&s.loop, UV_RUN_DEFAULT), 0);
	assert_int_equal(s.fired, 1);
	assert_true(tw_pending(&s.distant));
	teardown_loop();
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_exits_when_last_fires),
		cmocka_unit_test(test_exits_when_last_cancelled_in_callback),
		cmocka_unit_test(test_exits_when_last_cancelled_outside),
		cmocka_unit_test(test_weak_wheel_does_not_keep_loop_alive),
		cmocka_unit_test(test_weak_wheel_fires_while_loop_runs),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
