/* SPDX-License-Identifier: MIT */
/*
 * Destroying the wheel of a libuv handle: its timers go idle at once, the
 * loop stops waiting for them, and tw_uv_close() still works and releases
 * the wheel. Run under ASan and valgrind, which see a use after free or a
 * leak if either half is wrong.
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
	assert_int_equal(tw_uv_init(&s.loop, s.h, NULL, 0), 0);
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

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(destroy_in_callback_then_close),
		cmocka_unit_test(destroy_and_close_in_callback),
		cmocka_unit_test(destroy_outside_then_close),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
