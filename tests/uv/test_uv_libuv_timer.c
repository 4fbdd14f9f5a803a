/* SPDX-License-Identifier: MIT */
/*
 * libuv 1.44's timer tests (test/test-timer.c, test/test-timer-again.c and
 * the timer cases of test/test-ref.c), run on the uv_timer_t layer as a
 * ported program would run them: the same calls on the same default loop,
 * with only the names changed (uv_timer_* to tw_uv_timer_*, uv_close() of a
 * timer to tw_uv_timer_close(), uv_ref()/uv_unref()/uv_has_ref() to the
 * timer's own). Written anew from what each libuv case does and asserts;
 * each test names its case. Where the layer is deliberately different, the
 * test says so in one line and checks the layer's rule instead.
 *
 * libuv ends every case with MAKE_VALGRIND_HAPPY(), which closes whatever
 * uv_walk() finds, runs the loop and requires uv_loop_close() to succeed.
 * The layer's timers are not libuv handles, so a case closes the timers
 * libuv leaves open to that walk (one line each, saying so) before
 * MAKE_VALGRIND_HAPPY(), which here runs the loop and requires
 * uv_loop_close() to succeed: the loop's wheel is gone with its last timer.
 */
#define _POSIX_C_SOURCE 200809L

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <timerwheel/uv_timer.h>

#include "uv_test_util.h"

#define ASSERT(x) assert_true(x)

static void MAKE_VALGRIND_HAPPY(void)
{
	uv_run(uv_default_loop(), UV_RUN_DEFAULT);
	assert_int_equal(uv_loop_close(uv_default_loop()), 0);
}

static void never_cb(tw_uv_timer_t *handle)
{
	(void)handle;
	fail_msg("never_cb should never be called");
}

/* --- test-timer.c: "timer" --- */

static int once_cb_called, once_close_cb_called, repeat_cb_called, repeat_close_cb_called;
static uint64_t start_time;
static tw_uv_timer_t tiny_timer, huge_timer1, huge_timer2;

static void once_close_cb(tw_uv_timer_t *handle)
{
	ASSERT(handle != NULL);
	ASSERT(0 == tw_uv_timer_is_active(handle));
	once_close_cb_called++;
}

static void once_cb(tw_uv_timer_t *handle)
{
	ASSERT(handle != NULL);
	ASSERT(0 == tw_uv_timer_is_active(handle));
	once_cb_called++;
	tw_uv_timer_close(handle, once_close_cb);
	/* As libuv's case: only for the coverage. */
	uv_update_time(uv_default_loop());
}

static void repeat_close_cb(tw_uv_timer_t *handle)
{
	ASSERT(handle != NULL);
	repeat_close_cb_called++;
}

static void repeat_cb(tw_uv_timer_t *handle)
{
	ASSERT(handle != NULL);
	ASSERT(1 == tw_uv_timer_is_active(handle));
	repeat_cb_called++;
	if (repeat_cb_called == 5)
		tw_uv_timer_close(handle, repeat_close_cb);
}

static void test_timer(void **state)
{
	tw_uv_timer_t once_timers[10];
	tw_uv_timer_t *once;
	tw_uv_timer_t repeat, never;
	unsigned i;

	(void)state;
	start_time = uv_now(uv_default_loop());
	ASSERT(0 < start_time);
	/* Ten timers time out in 500 ms in all. */
	for (i = 0; i < 10; i++) {
		once = once_timers + i;
		ASSERT(0 == tw_uv_timer_init(uv_default_loop(), once));
		ASSERT(0 == tw_uv_timer_start(once, once_cb, i * 50, 0));
	}
	/* The 11th repeats until its fifth call closes it. */
	ASSERT(0 == tw_uv_timer_init(uv_default_loop(), &repeat));
	ASSERT(0 == tw_uv_timer_start(&repeat, repeat_cb, 100, 100));
	/* The 12th does nothing. */
	ASSERT(0 == tw_uv_timer_init(uv_default_loop(), &never));
	ASSERT(0 == tw_uv_timer_start(&never, never_cb, 100, 100));
	ASSERT(0 == tw_uv_timer_stop(&never));
	tw_uv_timer_unref(&never);

	uv_run(uv_default_loop(), UV_RUN_DEFAULT);

	ASSERT(once_cb_called == 10);
	ASSERT(once_close_cb_called == 10);
	ASSERT(repeat_cb_called == 5);
	ASSERT(repeat_close_cb_called == 1);
	ASSERT(500 <= uv_now(uv_default_loop()) - start_time);
	tw_uv_timer_close(&never, NULL); /* libuv's walk closes it */
	MAKE_VALGRIND_HAPPY();
}

/* --- "timer_start_twice" --- */

static int twice_cb_called;

static void twice_cb(tw_uv_timer_t *handle)
{
	(void)handle;
	twice_cb_called++;
}

static void test_timer_start_twice(void **state)
{
	tw_uv_timer_t once;

	(void)state;
	ASSERT(0 == tw_uv_timer_init(uv_default_loop(), &once));
	ASSERT(0 == tw_uv_timer_start(&once, never_cb, 86400 * 1000, 0));
	ASSERT(0 == tw_uv_timer_start(&once, twice_cb, 10, 0));
	ASSERT(0 == uv_run(uv_default_loop(), UV_RUN_DEFAULT));
	ASSERT(1 == twice_cb_called);
	tw_uv_timer_close(&once, NULL); /* libuv's walk closes it */
	MAKE_VALGRIND_HAPPY();
}

/* --- "timer_init" --- */

static void test_timer_init(void **state)
{
	tw_uv_timer_t handle;

	(void)state;
	ASSERT(0 == tw_uv_timer_init(uv_default_loop(), &handle));
	ASSERT(0 == tw_uv_timer_get_repeat(&handle));
	ASSERT(0 == tw_uv_timer_get_due_in(&handle));
	ASSERT(0 == tw_uv_timer_is_active(&handle));
	tw_uv_timer_close(&handle, NULL); /* libuv's walk closes it */
	MAKE_VALGRIND_HAPPY();
}

/* --- "timer_order" --- */

static int order_cb_called;

static void order_cb_a(tw_uv_timer_t *handle)
{
	ASSERT(order_cb_called++ == *(int *)handle->data);
}

static void order_cb_b(tw_uv_timer_t *handle)
{
	ASSERT(order_cb_called++ == *(int *)handle->data);
}

static void test_timer_order(void **state)
{
	int first = 0, second = 1;
	tw_uv_timer_t handle_a, handle_b;

	(void)state;
	order_cb_called = 0;
	ASSERT(0 == tw_uv_timer_init(uv_default_loop(), &handle_a));
	ASSERT(0 == tw_uv_timer_init(uv_default_loop(), &handle_b));

	/* a, then b */
	handle_a.data = &first;
	ASSERT(0 == tw_uv_timer_start(&handle_a, order_cb_a, 0, 0));
	handle_b.data = &second;
	ASSERT(0 == tw_uv_timer_start(&handle_b, order_cb_b, 0, 0));
	ASSERT(0 == uv_run(uv_default_loop(), UV_RUN_DEFAULT));
	ASSERT(order_cb_called == 2);
	ASSERT(0 == tw_uv_timer_stop(&handle_a));
	ASSERT(0 == tw_uv_timer_stop(&handle_b));

	/* b, then a */
	order_cb_called = 0;
	handle_b.data = &first;
	ASSERT(0 == tw_uv_timer_start(&handle_b, order_cb_b, 0, 0));
	handle_a.data = &second;
	ASSERT(0 == tw_uv_timer_start(&handle_a, order_cb_a, 0, 0));
	ASSERT(0 == uv_run(uv_default_loop(), UV_RUN_DEFAULT));
	ASSERT(order_cb_called == 2);
	tw_uv_timer_close(&handle_a, NULL); /* libuv's walk closes them */
	tw_uv_timer_close(&handle_b, NULL);
	MAKE_VALGRIND_HAPPY();
}

/* --- "timer_huge_timeout" --- */

static void tiny_timer_cb(tw_uv_timer_t *handle)
{
	ASSERT(handle == &tiny_timer);
	tw_uv_timer_close(&tiny_timer, NULL);
	tw_uv_timer_close(&huge_timer1, NULL);
	tw_uv_timer_close(&huge_timer2, NULL);
}

static void test_timer_huge_timeout(void **state)
{
	uint64_t before, due1, due2, after;

	(void)state;
	ASSERT(0 == tw_uv_timer_init(uv_default_loop(), &tiny_timer));
	ASSERT(0 == tw_uv_timer_init(uv_default_loop(), &huge_timer1));
	ASSERT(0 == tw_uv_timer_init(uv_default_loop(), &huge_timer2));
	before = tw_uv_now();
	ASSERT(0 == tw_uv_timer_start(&tiny_timer, tiny_timer_cb, 1, 0));
	ASSERT(0 == tw_uv_timer_start(&huge_timer1, tiny_timer_cb, 0xffffffffffffull, 0));
	ASSERT(0 == tw_uv_timer_start(&huge_timer2, tiny_timer_cb, (uint64_t)-1, 0));
	/* Differs: due_in counts from the clock, not the loop's cached time, so
	 * it is 1 only if less than 1 ms passed since the start. */
	ASSERT(1 >= tw_uv_timer_get_due_in(&tiny_timer));
	/* Differs: deadlines saturate at the end of 64-bit ns, not at 2^64 ms
	 * (libuv: 281474976710655 for huge_timer1), so both are due then. */
	due1 = tw_uv_timer_get_due_in(&huge_timer1);
	due2 = tw_uv_timer_get_due_in(&huge_timer2);
	after = tw_uv_now();
	ASSERT(due1 >= (UINT64_MAX - after) / 1000000u && due1 <= (UINT64_MAX - before) / 1000000u + 1);
	ASSERT(due2 >= (UINT64_MAX - after) / 1000000u && due2 <= (UINT64_MAX - before) / 1000000u + 1);
	ASSERT(0 == uv_run(uv_default_loop(), UV_RUN_DEFAULT));
	MAKE_VALGRIND_HAPPY();
}

/* --- "timer_huge_repeat" --- */

static int huge_repeat_ncalls, huge_repeat_huge_calls;

/* Differs: each start counts from the clock, not from the loop's cached
 * time, so under a slow machine (valgrind, load) tiny_timer, started first
 * and due 2 ms after its start, may come due before huge_timer1, due 1 ms
 * after its own later start. The layer's rule checked instead: huge_timer1
 * fires once, its huge repeat never wrapping into a second firing, and
 * tiny_timer makes up the other nine. */
static void huge_repeat_cb(tw_uv_timer_t *handle)
{
	ASSERT(handle == &huge_timer1 || handle == &tiny_timer);
	if (handle == &huge_timer1)
		ASSERT(++huge_repeat_huge_calls == 1);
	if (++huge_repeat_ncalls == 10) {
		tw_uv_timer_close(&tiny_timer, NULL);
		tw_uv_timer_close(&huge_timer1, NULL);
	}
}

static void test_timer_huge_repeat(void **state)
{
	(void)state;
	ASSERT(0 == tw_uv_timer_init(uv_default_loop(), &tiny_timer));
	ASSERT(0 == tw_uv_timer_init(uv_default_loop(), &huge_timer1));
	ASSERT(0 == tw_uv_timer_start(&tiny_timer, huge_repeat_cb, 2, 2));
	ASSERT(0 == tw_uv_timer_start(&huge_timer1, huge_repeat_cb, 1, (uint64_t)-1));
	ASSERT(0 == uv_run(uv_default_loop(), UV_RUN_DEFAULT));
	ASSERT(10 == huge_repeat_ncalls);
	ASSERT(1 == huge_repeat_huge_calls);
	MAKE_VALGRIND_HAPPY();
}

/* --- "timer_run_once" --- */

static int timer_run_once_timer_cb_called;

static void timer_run_once_timer_cb(tw_uv_timer_t *handle)
{
	(void)handle;
	timer_run_once_timer_cb_called++;
}

static void test_timer_run_once(void **state)
{
	tw_uv_timer_t timer_handle;

	(void)state;
	ASSERT(0 == tw_uv_timer_init(uv_default_loop(), &timer_handle));
	ASSERT(0 == tw_uv_timer_start(&timer_handle, timer_run_once_timer_cb, 0, 0));
	ASSERT(0 == uv_run(uv_default_loop(), UV_RUN_ONCE));
	ASSERT(1 == timer_run_once_timer_cb_called);

	ASSERT(0 == tw_uv_timer_start(&timer_handle, timer_run_once_timer_cb, 1, 0));
	ASSERT(0 == uv_run(uv_default_loop(), UV_RUN_ONCE));
	ASSERT(2 == timer_run_once_timer_cb_called);

	tw_uv_timer_close(&timer_handle, NULL);
	ASSERT(0 == uv_run(uv_default_loop(), UV_RUN_ONCE));
	ASSERT(0 == uv_loop_close(uv_default_loop()));
	MAKE_VALGRIND_HAPPY();
}

/* --- "timer_from_check" --- */

static uv_prepare_t prepare_handle;
static uv_check_t check_handle;
static tw_uv_timer_t timer_handle;
static int prepare_cb_called, check_cb_called, timer_cb_called;

static void prepare_cb(uv_prepare_t *handle)
{
	(void)handle;
	ASSERT(0 == uv_prepare_stop(&prepare_handle));
	ASSERT(0 == prepare_cb_called);
	ASSERT(1 == check_cb_called);
	ASSERT(0 == timer_cb_called);
	prepare_cb_called++;
}

static void timer_cb(tw_uv_timer_t *handle)
{
	(void)handle;
	ASSERT(0 == tw_uv_timer_stop(&timer_handle));
	ASSERT(1 == prepare_cb_called);
	ASSERT(1 == check_cb_called);
	ASSERT(0 == timer_cb_called);
	timer_cb_called++;
}

static void check_cb(uv_check_t *handle)
{
	(void)handle;
	ASSERT(0 == uv_check_stop(&check_handle));
	ASSERT(0 == tw_uv_timer_stop(&timer_handle)); /* Runs before timer_cb. */
	ASSERT(0 == tw_uv_timer_start(&timer_handle, timer_cb, 50, 0));
	ASSERT(0 == uv_prepare_start(&prepare_handle, prepare_cb));
	ASSERT(0 == prepare_cb_called);
	ASSERT(0 == check_cb_called);
	ASSERT(0 == timer_cb_called);
	check_cb_called++;
}

static void test_timer_from_check(void **state)
{
	(void)state;
	ASSERT(0 == uv_prepare_init(uv_default_loop(), &prepare_handle));
	ASSERT(0 == uv_check_init(uv_default_loop(), &check_handle));
	ASSERT(0 == uv_check_start(&check_handle, check_cb));
	ASSERT(0 == tw_uv_timer_init(uv_default_loop(), &timer_handle));
	ASSERT(0 == tw_uv_timer_start(&timer_handle, timer_cb, 50, 0));
	ASSERT(0 == uv_run(uv_default_loop(), UV_RUN_DEFAULT));
	ASSERT(1 == prepare_cb_called);
	ASSERT(1 == check_cb_called);
	ASSERT(1 == timer_cb_called);
	uv_close((uv_handle_t *)&prepare_handle, NULL);
	uv_close((uv_handle_t *)&check_handle, NULL);
	tw_uv_timer_close(&timer_handle, NULL);
	ASSERT(0 == uv_run(uv_default_loop(), UV_RUN_ONCE));
	MAKE_VALGRIND_HAPPY();
}

/* --- "timer_is_closing" --- */

static void test_timer_is_closing(void **state)
{
	tw_uv_timer_t handle;

	(void)state;
	ASSERT(0 == tw_uv_timer_init(uv_default_loop(), &handle));
	tw_uv_timer_close(&handle, NULL);
	ASSERT(-EINVAL == tw_uv_timer_start(&handle, never_cb, 100, 100)); /* UV_EINVAL */
	ASSERT(tw_uv_timer_is_closing(&handle));
	uv_run(uv_default_loop(), UV_RUN_DEFAULT); /* before `handle` goes out of scope */
	MAKE_VALGRIND_HAPPY();
}

/* --- "timer_null_callback" --- */

static void test_timer_null_callback(void **state)
{
	tw_uv_timer_t handle;

	(void)state;
	ASSERT(0 == tw_uv_timer_init(uv_default_loop(), &handle));
	ASSERT(-EINVAL == tw_uv_timer_start(&handle, NULL, 100, 100)); /* UV_EINVAL */
	tw_uv_timer_close(&handle, NULL); /* libuv's walk closes it */
	uv_run(uv_default_loop(), UV_RUN_DEFAULT);
	MAKE_VALGRIND_HAPPY();
}

/* --- "timer_early_check" --- */

static uint64_t timer_early_check_expected_time;
static int timer_early_check_cb_called;

static void timer_early_check_cb(tw_uv_timer_t *handle)
{
	uint64_t hrtime = uv_hrtime() / 1000000;

	(void)handle;
	timer_early_check_cb_called++;
	ASSERT(hrtime >= timer_early_check_expected_time);
}

static void test_timer_early_check(void **state)
{
	tw_uv_timer_t timer_handle;
	const uint64_t timeout_ms = 10;

	(void)state;
	timer_early_check_expected_time = uv_now(uv_default_loop()) + timeout_ms;
	ASSERT(0 == tw_uv_timer_init(uv_default_loop(), &timer_handle));
	ASSERT(0 == tw_uv_timer_start(&timer_handle, timer_early_check_cb, timeout_ms, 0));
	ASSERT(0 == uv_run(uv_default_loop(), UV_RUN_DEFAULT));
	ASSERT(1 == timer_early_check_cb_called); /* fired, once (the check is in the callback) */
	tw_uv_timer_close(&timer_handle, NULL);
	ASSERT(0 == uv_run(uv_default_loop(), UV_RUN_DEFAULT));
	MAKE_VALGRIND_HAPPY();
}

/* --- test-timer-again.c: "timer_again" --- */

static int close_cb_called, repeat_1_cb_called, repeat_2_cb_called, repeat_2_cb_allowed;
static tw_uv_timer_t dummy, repeat_1, repeat_2;

static void close_cb(tw_uv_timer_t *handle)
{
	ASSERT(handle != NULL);
	close_cb_called++;
}

static void repeat_1_cb(tw_uv_timer_t *handle)
{
	ASSERT(handle == &repeat_1);
	ASSERT(tw_uv_timer_get_repeat(handle) == 50);
	repeat_1_cb_called++;
	ASSERT(0 == tw_uv_timer_again(&repeat_2));
	if (repeat_1_cb_called == 10) {
		tw_uv_timer_close(handle, close_cb);
		/* Nobody restarts repeat_2 any more: it may time out now. */
		repeat_2_cb_allowed = 1;
	}
}

static void repeat_2_cb(tw_uv_timer_t *handle)
{
	ASSERT(handle == &repeat_2);
	ASSERT(repeat_2_cb_allowed);
	repeat_2_cb_called++;
	if (tw_uv_timer_get_repeat(&repeat_2) == 0) {
		ASSERT(0 == tw_uv_timer_is_active(handle));
		tw_uv_timer_close(handle, close_cb);
		return;
	}
	ASSERT(tw_uv_timer_get_repeat(&repeat_2) == 100);
	/* Not at once: it was restarted before this call. */
	tw_uv_timer_set_repeat(&repeat_2, 0);
}

static void test_timer_again(void **state)
{
	(void)state;
	start_time = uv_now(uv_default_loop());
	ASSERT(0 < start_time);
	/* A timer never started cannot be restarted. */
	ASSERT(0 == tw_uv_timer_init(uv_default_loop(), &dummy));
	ASSERT(-EINVAL == tw_uv_timer_again(&dummy)); /* UV_EINVAL */
	tw_uv_timer_unref(&dummy);

	ASSERT(0 == tw_uv_timer_init(uv_default_loop(), &repeat_1));
	ASSERT(0 == tw_uv_timer_start(&repeat_1, repeat_1_cb, 50, 0));
	ASSERT(tw_uv_timer_get_repeat(&repeat_1) == 0);
	/* Now make it repeat. */
	tw_uv_timer_set_repeat(&repeat_1, 50);
	ASSERT(tw_uv_timer_get_repeat(&repeat_1) == 50);

	/* repeat_1 restarts it each time, so it cannot time out while
	 * repeat_1 runs. */
	ASSERT(0 == tw_uv_timer_init(uv_default_loop(), &repeat_2));
	ASSERT(0 == tw_uv_timer_start(&repeat_2, repeat_2_cb, 100, 100));
	ASSERT(tw_uv_timer_get_repeat(&repeat_2) == 100);

	uv_run(uv_default_loop(), UV_RUN_DEFAULT);

	ASSERT(repeat_1_cb_called == 10);
	ASSERT(repeat_2_cb_called == 2);
	ASSERT(close_cb_called == 2);
	ASSERT(700 <= uv_now(uv_default_loop()) - start_time);
	tw_uv_timer_close(&dummy, NULL); /* libuv's walk closes it */
	MAKE_VALGRIND_HAPPY();
}

/* --- test-ref.c: "timer_ref", "timer_ref2", "has_ref" (on a timer) --- */

static void do_close(tw_uv_timer_t *handle)
{
	tw_uv_timer_close(handle, NULL);
	uv_run(uv_default_loop(), UV_RUN_DEFAULT);
}

static void test_timer_ref(void **state)
{
	tw_uv_timer_t h;

	(void)state;
	ASSERT(0 == tw_uv_timer_init(uv_default_loop(), &h));
	tw_uv_timer_unref(&h);
	ASSERT(0 == uv_run(uv_default_loop(), UV_RUN_DEFAULT));
	do_close(&h);
	MAKE_VALGRIND_HAPPY();
}

static void test_timer_ref2(void **state)
{
	tw_uv_timer_t h;

	(void)state;
	ASSERT(0 == tw_uv_timer_init(uv_default_loop(), &h));
	ASSERT(0 == tw_uv_timer_start(&h, never_cb, 42, 42));
	tw_uv_timer_unref(&h);
	ASSERT(0 == uv_run(uv_default_loop(), UV_RUN_DEFAULT));
	do_close(&h);
	MAKE_VALGRIND_HAPPY();
}

static void test_has_ref(void **state)
{
	tw_uv_timer_t h;

	(void)state;
	ASSERT(0 == tw_uv_timer_init(uv_default_loop(), &h));
	ASSERT(tw_uv_timer_has_ref(&h) == 1); /* a new handle is referenced */
	tw_uv_timer_ref(&h);
	ASSERT(tw_uv_timer_has_ref(&h) == 1);
	tw_uv_timer_unref(&h);
	ASSERT(tw_uv_timer_has_ref(&h) == 0);
	tw_uv_timer_unref(&h);
	ASSERT(tw_uv_timer_has_ref(&h) == 0);
	do_close(&h);
	MAKE_VALGRIND_HAPPY();
}

/* --- test-timer.c of later libuv: "timer_no_run_on_unref" --- */

static void abort_cb(tw_uv_timer_t *handle)
{
	(void)handle;
	abort();
}

static void test_timer_no_run_on_unref(void **state)
{
	tw_uv_timer_t timer_handle;

	(void)state;
	ASSERT(0 == tw_uv_timer_init(uv_default_loop(), &timer_handle));
	ASSERT(0 == tw_uv_timer_start(&timer_handle, abort_cb, 0, 0));
	tw_uv_timer_unref(&timer_handle);
	ASSERT(0 == uv_run(uv_default_loop(), UV_RUN_DEFAULT));
	tw_uv_timer_close(&timer_handle, NULL); /* libuv's walk closes it */
	MAKE_VALGRIND_HAPPY();
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_timer),
		cmocka_unit_test(test_timer_start_twice),
		cmocka_unit_test(test_timer_init),
		cmocka_unit_test(test_timer_order),
		cmocka_unit_test(test_timer_huge_timeout),
		cmocka_unit_test(test_timer_huge_repeat),
		cmocka_unit_test(test_timer_run_once),
		cmocka_unit_test(test_timer_from_check),
		cmocka_unit_test(test_timer_is_closing),
		cmocka_unit_test(test_timer_null_callback),
		cmocka_unit_test(test_timer_early_check),
		cmocka_unit_test(test_timer_again),
		cmocka_unit_test(test_timer_ref),
		cmocka_unit_test(test_timer_ref2),
		cmocka_unit_test(test_has_ref),
		cmocka_unit_test(test_timer_no_run_on_unref),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
