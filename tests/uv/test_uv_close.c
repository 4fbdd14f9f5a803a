/* SPDX-License-Identifier: MIT */
/*
 * Closing follows libuv's rule: the handle's memory is released only in the
 * close callback. A wheel destroyed right after the close idles its timers,
 * which are never called, and closing and destroying from inside one of the
 * wheel's callbacks is safe.
 */
#define _POSIX_C_SOURCE 200809L

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <timerwheel/uv.h>

#include "uv_test_util.h"

#define MS 1000000ull
#define N_ARMED 1000

static struct {
	uv_loop_t loop;
	struct tw_uv *h; /* malloc'd: ASan and valgrind see a late free */
	struct tw_timer t[N_ARMED];
	struct tw_timer closer;
	int closed;
	int fired;
} s;

static void setup_loop(void)
{
	memset(&s, 0, sizeof(s));
	assert_int_equal(uv_loop_init(&s.loop), 0);
	s.h = malloc(sizeof(*s.h));
	assert_non_null(s.h);
	assert_int_equal(tw_test_uv_open(&s.loop, s.h, NULL, 0), 0);
}

static void on_closed(struct tw_uv *h)
{
	assert_ptr_equal(h, s.h);
	assert_null(tw_uv_wheel(h));
	s.closed++;
	free(h);
}

static void on_never(struct tw_timer *t)
{
	(void)t;
	s.fired++;
}

static void test_close_with_armed_timers(void **state)
{
	uint64_t now = tw_uv_now();
	int i;

	(void)state;
	setup_loop();
	for (i = 0; i < N_ARMED; i++) {
		tw_timer_init(&s.t[i], on_never);
		assert_int_equal(tw_add(tw_uv_wheel(s.h), &s.t[i], now + (uint64_t)i * MS), 0);
	}
	tw_test_uv_close(s.h, on_closed);
	/* Idle at once, so their memory could be reused right here. */
	for (i = 0; i < N_ARMED; i++)
		assert_false(tw_pending(&s.t[i]));
	assert_null(tw_uv_wheel(s.h));
	tw_uv_close(s.h, on_closed); /* a second close is ignored */
	assert_int_equal(s.closed, 0); /* not before the loop runs */
	assert_int_equal(uv_run(&s.loop, UV_RUN_DEFAULT), 0);
	assert_int_equal(s.closed, 1);
	assert_int_equal(s.fired, 0);
	assert_int_equal(uv_loop_close(&s.loop), 0);
}

static void on_close_from_inside(struct tw_timer *t)
{
	int i;

	(void)t;
	tw_test_uv_close(s.h, on_closed);
	assert_null(tw_uv_wheel(s.h));
	assert_int_equal(s.closed, 0);
	/* Idle at once, also those due in this same wake-up. */
	for (i = 0; i < N_ARMED; i++)
		assert_false(tw_pending(&s.t[i]));
}

static void test_close_from_inside_a_callback(void **state)
{
	uint64_t now = tw_uv_now();
	int i;

	(void)state;
	setup_loop();
	tw_timer_init(&s.closer, on_close_from_inside);
	assert_int_equal(tw_add(tw_uv_wheel(s.h), &s.closer, now + 5 * MS), 0);
	/* The first four are due in the same wake-up as the closer, after
	 * it: the loop starts 20 ms late, so one advance covers 5 to 9 ms
	 * and fires in tick order. They must not fire. */
	for (i = 0; i < N_ARMED; i++) {
		uint64_t at = i < 4 ? 6 + (uint64_t)i : 50 + (uint64_t)i;
		tw_timer_init(&s.t[i], on_never);
		assert_int_equal(tw_add(tw_uv_wheel(s.h), &s.t[i], now + at * MS), 0);
	}
	while (tw_uv_now() < now + 20 * MS)
		;
	assert_int_equal(uv_run(&s.loop, UV_RUN_DEFAULT), 0);
	assert_int_equal(s.closed, 1);
	assert_int_equal(s.fired, 0);
	for (i = 0; i < N_ARMED; i++)
		assert_false(tw_pending(&s.t[i]));
	assert_int_equal(uv_loop_close(&s.loop), 0);
}

/* The close callback may free memory that holds timers: they are idle by
 * then even when the close was requested from inside a callback. */
struct owner {
	struct tw_uv h;
	struct tw_timer t[4];
};

static int owner_closed;

static void on_owner_closed(struct tw_uv *h)
{
	struct owner *o = tw_container_of(h, struct owner, h);
	int i;

	for (i = 0; i < 4; i++)
		assert_false(tw_pending(&o->t[i]));
	owner_closed++;
	free(o);
}

static void on_owner_close(struct tw_timer *t)
{
	struct owner *o = tw_container_of(t, struct owner, t[0]);

	tw_test_uv_close(&o->h, on_owner_closed);
}

static void test_close_cb_frees_embedded_timers(void **state)
{
	struct owner *o = malloc(sizeof(*o));
	uv_loop_t loop;
	uint64_t now = tw_uv_now();
	int i;

	(void)state;
	assert_non_null(o);
	assert_int_equal(uv_loop_init(&loop), 0);
	assert_int_equal(tw_test_uv_open(&loop, &o->h, NULL, 0), 0);
	tw_timer_init(&o->t[0], on_owner_close);
	assert_int_equal(tw_add(tw_uv_wheel(&o->h), &o->t[0], now + 2 * MS), 0);
	for (i = 1; i < 4; i++) {
		tw_timer_init(&o->t[i], on_never);
		assert_int_equal(tw_add(tw_uv_wheel(&o->h), &o->t[i], now + (uint64_t)i * 1000 * MS), 0);
	}
	s.fired = 0;
	assert_int_equal(uv_run(&loop, UV_RUN_DEFAULT), 0);
	assert_int_equal(owner_closed, 1);
	assert_int_equal(s.fired, 0);
	assert_int_equal(uv_loop_close(&loop), 0);
}

/*
 * As uv_close(): the callback runs in the next loop turn. One
 * uv_run(UV_RUN_ONCE) after tw_uv_close() runs it and returns 0, and the
 * loop closes: nothing of the handle is left on it. With the wheel
 * destroyed right after the close and kept, with timers armed and without.
 */
static int one_turn_closed;

static void on_one_turn_closed(struct tw_uv *h)
{
	(void)h;
	one_turn_closed++;
}

static void close_in_one_turn(bool keep, bool armed)
{
	uv_loop_t loop;
	struct tw_uv h;
	struct tw_wheel *w = NULL;
	struct tw_timer t;

	assert_int_equal(uv_loop_init(&loop), 0);
	assert_int_equal(tw_wheel_create(&w, NULL, tw_uv_now()), 0);
	assert_int_equal(tw_uv_attach(&loop, &h, w, 0), 0);
	tw_timer_init(&t, on_never);
	if (armed)
		assert_int_equal(tw_add(tw_uv_wheel(&h), &t, tw_uv_now() + 60000 * MS), 0);
	one_turn_closed = 0;
	tw_uv_close(&h, on_one_turn_closed);
	if (!keep)
		tw_wheel_destroy(w);
	assert_int_equal(one_turn_closed, 0);
	assert_int_equal(uv_run(&loop, UV_RUN_ONCE), 0);
	assert_int_equal(one_turn_closed, 1);
	assert_int_equal(uv_loop_close(&loop), 0);
	/* The program's wheel is its own again, its timer still armed. */
	if (keep) {
		assert_int_equal(tw_pending(&t), armed);
		tw_wheel_destroy(w);
	}
	assert_false(tw_pending(&t));
}

static void test_close_in_one_loop_turn(void **state)
{
	(void)state;
	close_in_one_turn(false, false);
	close_in_one_turn(false, true);
	close_in_one_turn(true, false);
	close_in_one_turn(true, true);
}

/* Closed from a callback, the handle is gone by the end of that turn. */
static void on_close_own(struct tw_timer *t)
{
	(void)t;
	tw_test_uv_close(s.h, on_closed);
}

static void test_close_from_callback_in_one_turn(void **state)
{
	(void)state;
	setup_loop();
	tw_timer_init(&s.closer, on_close_own);
	assert_int_equal(tw_add(tw_uv_wheel(s.h), &s.closer, tw_uv_now() + 1 * MS), 0);
	for (;;) {
		int r = uv_run(&s.loop, UV_RUN_ONCE);

		if (s.closed) {
			assert_int_equal(r, 0);
			break;
		}
		assert_int_equal(r, 1);
	}
	assert_int_equal(uv_loop_close(&s.loop), 0);
}

static void test_init_rejects_bad_arguments(void **state)
{
	uv_loop_t loop;
	struct tw_uv h;
	struct tw_uv_stats st;
	struct tw_wheel *w;

	(void)state;
	assert_int_equal(uv_loop_init(&loop), 0);
	assert_int_equal(tw_wheel_create(&w, NULL, tw_uv_now()), 0);
	assert_int_equal(tw_uv_attach(NULL, &h, w, 0), -EINVAL);
	assert_int_equal(tw_uv_attach(&loop, NULL, w, 0), -EINVAL);
	assert_int_equal(tw_uv_attach(&loop, &h, NULL, 0), -EINVAL);
	assert_int_equal(tw_uv_attach(&loop, &h, w, 0x80), -EINVAL);
	tw_wheel_destroy(w);
	assert_int_equal(tw_uv_get_stats(NULL, &st), -EINVAL);
	assert_null(tw_uv_wheel(NULL));
	assert_null(tw_uv_loop(NULL));
	tw_uv_close(NULL, NULL);
	assert_int_equal(uv_run(&loop, UV_RUN_DEFAULT), 0);
	assert_int_equal(uv_loop_close(&loop), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_close_with_armed_timers),
		cmocka_unit_test(test_close_from_inside_a_callback),
		cmocka_unit_test(test_close_cb_frees_embedded_timers),
		cmocka_unit_test(test_close_in_one_loop_turn),
		cmocka_unit_test(test_close_from_callback_in_one_turn),
		cmocka_unit_test(test_init_rejects_bad_arguments),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
