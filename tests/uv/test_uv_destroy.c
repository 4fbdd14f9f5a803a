/* SPDX-License-Identifier: MIT */
/*
 * Destroying the wheel of a libuv handle: its timers go idle at once, the
 * loop stops waiting for them, and tw_uv_close() still works and releases
 * the wheel. Run under ASan and valgrind, which see a use after free or a
 * leak if either half is wrong. The layer's timers on such a wheel: a
 * start fails and changes nothing.
 */
#define _POSIX_C_SOURCE 200809L

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include <timerwheel/uv.h>
#include <timerwheel/uv_timer.h>

#include "uv_test_util.h"

#define MS 1000000ull

static struct {
	uv_loop_t loop;
	struct tw_uv *h; /* malloc'd: ASan and valgrind see a late free */
	struct tw_timer destroyer, same_tick, distant;
	int destroyed, closed, fired_after;
	int close_inside;
} s;

static void on_closed(struct tw_uv *h)
{
	s.closed++;
	free(h);
}

static void on_destroy(struct tw_timer *t)
{
	assert_true(tw_test_mono_ns() >= t->expires);
	tw_wheel_destroy(tw_uv_wheel(s.h));
	s.destroyed++;
	assert_false(tw_pending(&s.same_tick));
	assert_false(tw_pending(&s.distant));
	if (s.close_inside)
		tw_uv_close(s.h, on_closed);
}

static void on_never(struct tw_timer *t)
{
	(void)t;
	s.fired_after++;
}

static void setup(void)
{
	uint64_t now;

	memset(&s, 0, sizeof(s));
	assert_int_equal(uv_loop_init(&s.loop), 0);
	s.h = malloc(sizeof(*s.h));
	assert_non_null(s.h);
	assert_int_equal(tw_test_uv_open(&s.loop, s.h, NULL, 0), 0);
	now = tw_uv_now();
	tw_timer_init(&s.destroyer, on_destroy);
	tw_timer_init(&s.same_tick, on_never);
	tw_timer_init(&s.distant, on_never);
	assert_int_equal(tw_add(tw_uv_wheel(s.h), &s.destroyer, now + 5 * MS), 0);
	assert_int_equal(tw_add(tw_uv_wheel(s.h), &s.same_tick, now + 6 * MS), 0);
	assert_int_equal(tw_add(tw_uv_wheel(s.h), &s.distant, now + 60000 * MS), 0);
}

static void finish(void)
{
	assert_int_equal(uv_run(&s.loop, UV_RUN_DEFAULT), 0);
	assert_int_equal(s.closed, 1);
	assert_int_equal(s.fired_after, 0);
	assert_int_equal(uv_loop_close(&s.loop), 0);
}

/* From a callback: the loop ends by itself (the far timer is idle), and
 * the handle closes afterwards. */
static void destroy_in_callback_then_close(void **state)
{
	(void)state;
	setup();
	assert_int_equal(uv_run(&s.loop, UV_RUN_DEFAULT), 0);
	assert_int_equal(s.destroyed, 1);
	assert_int_equal(tw_count(tw_uv_wheel(s.h)), 0);
	tw_uv_close(s.h, on_closed);
	finish();
}

static void destroy_and_close_in_callback(void **state)
{
	(void)state;
	setup();
	s.close_inside = 1;
	finish();
	assert_int_equal(s.destroyed, 1);
}

/* Outside the loop, with the uv timer armed: closing works as usual. */
static void destroy_outside_then_close(void **state)
{
	(void)state;
	setup();
	tw_wheel_destroy(tw_uv_wheel(s.h));
	assert_false(tw_pending(&s.destroyer));
	assert_int_equal(tw_add(tw_uv_wheel(s.h), &s.destroyer, tw_uv_now()), -EINVAL);
	tw_uv_close(s.h, on_closed);
	finish();
	assert_int_equal(s.destroyed, 0);
}

/* --- the uv_timer_t layer's timers on the destroyed wheel --- */

static struct {
	tw_uv_timer_t a, b;
	int ran_a, ran_b;
} l;

static void on_b(tw_uv_timer_t *t)
{
	(void)t;
	l.ran_b++;
}

static void on_a_destroys(tw_uv_timer_t *t)
{
	(void)t;
	l.ran_a++;
	tw_wheel_destroy(tw_uv_wheel(s.h));
}

static void setup_layer(void)
{
	memset(&s, 0, sizeof(s));
	memset(&l, 0, sizeof(l));
	assert_int_equal(uv_loop_init(&s.loop), 0);
	s.h = malloc(sizeof(*s.h));
	assert_non_null(s.h);
	assert_int_equal(tw_test_uv_open(&s.loop, s.h, NULL, 0), 0);
	assert_int_equal(tw_uv_timer_init_on(s.h, &l.a), 0);
	assert_int_equal(tw_uv_timer_init_on(s.h, &l.b), 0);
}

static void close_layer(void)
{
	tw_uv_timer_close(&l.a, NULL);
	tw_uv_timer_close(&l.b, NULL);
	tw_uv_close(s.h, on_closed);
	finish();
}

/* Outside the loop: the wheel refuses the arm (uv.h), and the start says
 * so and changes nothing. */
static void layer_start_on_destroyed_wheel(void **state)
{
	(void)state;
	setup_layer();
	assert_int_equal(tw_uv_timer_start(&l.a, on_b, 10, 0), 0);
	tw_wheel_destroy(tw_uv_wheel(s.h));
	assert_false(tw_uv_timer_is_active(&l.a));
	assert_int_equal(tw_uv_timer_start(&l.a, on_b, 10, 0), UV_EINVAL);
	assert_int_equal(tw_uv_timer_start(&l.b, on_b, 10, 5), UV_EINVAL);
	assert_false(tw_uv_timer_is_active(&l.a));
	assert_false(tw_uv_timer_is_active(&l.b));
	assert_int_equal(tw_uv_timer_get_repeat(&l.b), 0);
	assert_int_equal(tw_uv_timer_stop(&l.a), 0);
	close_layer();
	assert_int_equal(l.ran_b, 0);
}

/* From a callback, with another timer of the same wake-up still to run:
 * its callback runs (it was due), its repeat cannot arm, and a start from
 * the first callback of a timer that has yet to run leaves it to run. */
static void on_a_destroys_restarts_b(tw_uv_timer_t *t)
{
	on_a_destroys(t);
	assert_int_equal(tw_uv_timer_start(&l.b, on_b, 10, 0), UV_EINVAL);
}

static void layer_destroy_in_callback(void **state)
{
	(void)state;
	for (int restart = 0; restart < 2; restart++) {
		setup_layer();
		assert_int_equal(tw_uv_timer_start(&l.a, restart ? on_a_destroys_restarts_b : on_a_destroys, 5, 0),
				 0);
		assert_int_equal(tw_uv_timer_start(&l.b, on_b, 5, 7), 0);
		/* Both overdue at the first wake-up: one wake-up, a's first. */
		uv_sleep(20);
		assert_int_equal(uv_run(&s.loop, UV_RUN_DEFAULT), 0);
		assert_int_equal(l.ran_a, 1);
		assert_int_equal(l.ran_b, 1);
		assert_false(tw_uv_timer_is_active(&l.b));
		close_layer();
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(destroy_in_callback_then_close),
		cmocka_unit_test(destroy_and_close_in_callback),
		cmocka_unit_test(destroy_outside_then_close),
		cmocka_unit_test(layer_start_on_destroyed_wheel),
		cmocka_unit_test(layer_destroy_in_callback),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
