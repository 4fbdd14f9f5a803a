/* SPDX-License-Identifier: MIT */
/*
 * A timer that fires only at the end of time (UINT64_MAX, or the last
 * partial tick below it) holds the loop like a native uv timer with timeout
 * (uint64_t)-1, until it is cancelled; a weak wheel still never does.
 */
#define _POSIX_C_SOURCE 200809L

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>

#include <timerwheel/uv.h>

#include "uv_test_util.h"

#define MS 1000000ull

static struct {
	uv_loop_t loop;
	struct tw_uv h;
	struct tw_wheel *w; /* NULL once the test destroyed it */
	struct tw_timer soon, end;
	uv_timer_t watchdog, native, keeper;
	int fired;
	int end_moved; /* s.end was re-armed to a finite time */
} s;

static void on_soon(struct tw_timer *t)
{
	assert_true(tw_test_mono_ns() >= t->expires);
	s.fired++;
}

/* libuv 1.44's UV_RUN_ONCE still polls after the timers it ran first, until
 * the next timer (the watchdog): a slow machine, on which the soon timer is
 * already due when the turn starts, must not wait for that. */
static void on_soon_then_stop(struct tw_timer *t)
{
	on_soon(t);
	uv_stop(&s.loop);
}

static void on_never(struct tw_timer *t)
{
	if (s.end_moved) {
		on_soon(t);
		return;
	}
	fail_msg("a timer due at the end of time fired");
}

/* Keeps nothing alive; only ends a loop that a broken backend never ends.
 * Far above any lateness a loaded machine shows. */
static void on_watchdog(uv_timer_t *t)
{
	(void)t;
	fail_msg("uv_run() did not return 10 s after the last timer was cancelled");
}

static void on_keeper(uv_timer_t *t)
{
	(void)t;
	fail_msg("the soon timer did not fire within 60 s");
}

static void setup_loop(unsigned flags)
{
	memset(&s, 0, sizeof(s));
	assert_int_equal(uv_loop_init(&s.loop), 0);
	assert_int_equal(tw_test_uv_open(&s.loop, &s.h, NULL, flags), 0);
	s.w = tw_uv_wheel(&s.h);
	assert_int_equal(uv_timer_init(&s.loop, &s.watchdog), 0);
	assert_int_equal(uv_timer_start(&s.watchdog, on_watchdog, 10000, 0), 0);
	uv_unref((uv_handle_t *)&s.watchdog);
}

static void teardown_loop(void)
{
	uv_close((uv_handle_t *)&s.watchdog, NULL);
	tw_uv_close(&s.h, NULL);
	if (s.w)
		tw_wheel_destroy(s.w);
	assert_int_equal(uv_run(&s.loop, UV_RUN_DEFAULT), 0);
	assert_int_equal(uv_loop_close(&s.loop), 0);
}

/* A soon timer, then one at @end: once the soon one fired, only @end is
 * left, and the hook hears UINT64_MAX with a timer still armed. */
static void arm_and_fire_soon(uint64_t end)
{
	struct tw_wheel *w = tw_uv_wheel(&s.h);

	tw_timer_init(&s.soon, on_soon_then_stop);
	tw_timer_init(&s.end, on_never);
	assert_int_equal(tw_add(w, &s.soon, tw_uv_now() + 5 * MS), 0);
	assert_int_equal(tw_add(w, &s.end, end), 0);
	/* A weak wheel needs something else to keep the loop running. */
	assert_int_equal(uv_timer_init(&s.loop, &s.keeper), 0);
	assert_int_equal(uv_timer_start(&s.keeper, on_keeper, 60000, 0), 0);
	while (!s.fired)
		(void)uv_run(&s.loop, UV_RUN_ONCE);
	uv_close((uv_handle_t *)&s.keeper, NULL);
	(void)uv_run(&s.loop, UV_RUN_NOWAIT); /* finishes the close */
	assert_int_equal(tw_next_expiry(w), UINT64_MAX);
	assert_int_equal(tw_count(w), 1);
}

static void held_then_cancelled_outside(uint64_t end)
{
	setup_loop(0);
	arm_and_fire_soon(end);
	assert_true(uv_loop_alive(&s.loop));
	assert_int_not_equal(uv_run(&s.loop, UV_RUN_NOWAIT), 0);
	assert_true(tw_pending(&s.end));
	/* Cancelled between runs: the core does not tell the hook (it was
	 * told UINT64_MAX already), the backend finds out before it polls. */
	assert_int_equal(tw_del(tw_uv_wheel(&s.h), &s.end), 1);
	assert_int_equal(uv_run(&s.loop, UV_RUN_DEFAULT), 0);
	assert_false(uv_loop_alive(&s.loop));
	teardown_loop();
}

static void held_at_uint64_max(void **state)
{
	(void)state;
	held_then_cancelled_outside(UINT64_MAX);
}

static void held_in_last_partial_tick(void **state)
{
	(void)state;
	held_then_cancelled_outside(UINT64_MAX - 1);
}

static void on_native_cancel(uv_timer_t *nt)
{
	assert_int_equal(tw_del(tw_uv_wheel(&s.h), &s.end), 1);
	uv_close((uv_handle_t *)nt, NULL);
}

/* Cancelled from a callback inside uv_run(): the run ends by itself. */
static void cancelled_inside_the_loop(void **state)
{
	(void)state;
	setup_loop(0);
	arm_and_fire_soon(UINT64_MAX);
	assert_int_equal(uv_timer_init(&s.loop, &s.native), 0);
	assert_int_equal(uv_timer_start(&s.native, on_native_cancel, 20, 0), 0);
	assert_int_equal(uv_run(&s.loop, UV_RUN_DEFAULT), 0);
	assert_false(tw_pending(&s.end));
	teardown_loop();
}

/* A destroy outside a callback tells the hook nothing; the loop still
 * stops waiting for the wheel's timers. */
static void destroyed_outside_the_loop(void **state)
{
	(void)state;
	setup_loop(0);
	arm_and_fire_soon(UINT64_MAX);
	tw_wheel_destroy(s.w);
	s.w = NULL;
	assert_false(tw_pending(&s.end));
	assert_int_equal(uv_run(&s.loop, UV_RUN_DEFAULT), 0);
	teardown_loop();
}

static void weak_never_holds(void **state)
{
	(void)state;
	setup_loop(TW_UV_WEAK);
	arm_and_fire_soon(UINT64_MAX);
	assert_false(uv_loop_alive(&s.loop));
	assert_int_equal(uv_run(&s.loop, UV_RUN_DEFAULT), 0);
	assert_true(tw_pending(&s.end));
	teardown_loop();
}

/* A re-arm to a finite time from the end of time fires on time. */
static void back_from_the_end(void **state)
{
	(void)state;
	setup_loop(0);
	arm_and_fire_soon(UINT64_MAX);
	s.end_moved = 1;
	assert_int_equal(tw_mod(tw_uv_wheel(&s.h), &s.end, tw_uv_now() + 5 * MS), 1);
	assert_int_equal(uv_run(&s.loop, UV_RUN_DEFAULT), 0);
	assert_int_equal(s.fired, 2);
	teardown_loop();
}

/* The only timer, armed at the end of time before the loop runs (the core
 * calls the hook when an empty wheel gets a timer, whatever its expiry). */
static void only_timer_at_end(void **state)
{
	(void)state;
	setup_loop(0);
	tw_timer_init(&s.end, on_never);
	assert_int_equal(tw_add(tw_uv_wheel(&s.h), &s.end, UINT64_MAX), 0);
	assert_true(uv_loop_alive(&s.loop));
	assert_int_not_equal(uv_run(&s.loop, UV_RUN_NOWAIT), 0);
	assert_int_equal(tw_del(tw_uv_wheel(&s.h), &s.end), 1);
	assert_int_equal(uv_run(&s.loop, UV_RUN_DEFAULT), 0);
	teardown_loop();
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(held_at_uint64_max),
		cmocka_unit_test(held_in_last_partial_tick),
		cmocka_unit_test(cancelled_inside_the_loop),
		cmocka_unit_test(destroyed_outside_the_loop),
		cmocka_unit_test(weak_never_holds),
		cmocka_unit_test(back_from_the_end),
		cmocka_unit_test(only_timer_at_end),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
