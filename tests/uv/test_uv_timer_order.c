/* SPDX-License-Identifier: MIT */
/*
 * The uv_timer_t layer's order, as libuv's: timers that fire in one wake-up
 * run by due millisecond, then by start (tw_uv_timer_start(),
 * tw_uv_timer_again(), a repeat's restart). On a real loop, where the wheel
 * alone fires a tick's timers in no particular order.
 */
#define _POSIX_C_SOURCE 200809L

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include <timerwheel/uv_timer.h>

#include "uv_test_util.h"

#define N 2000

struct item {
	tw_uv_timer_t t;
	int index;
	uint64_t start_seq; /* this test's own count of starts */
	uint64_t due_ms;    /* the deadline in ms, rounded up, at its firing */
};

static struct item items[N];
static int fired[N], nfired;
static uint64_t seq;

static uint64_t due_ms_of(const tw_uv_timer_t *t)
{
	/* The test reads the wheel timer's deadline (the layer keeps its
	 * timers' deadlines in ns there). */
	uint64_t e = t->tw__timer.expires;

	return e / 1000000u + (e % 1000000u != 0);
}

static void record(tw_uv_timer_t *t)
{
	struct item *it = tw_container_of(t, struct item, t);

	it->due_ms = due_ms_of(t);
	fired[nfired++] = it->index;
}

static void start(struct item *it, tw_uv_timer_cb cb, uint64_t timeout, uint64_t repeat)
{
	it->start_seq = seq++;
	assert_int_equal(tw_uv_timer_start(&it->t, cb, timeout, repeat), 0);
}

static void init_items(int n)
{
	memset(items, 0, sizeof(items));
	nfired = 0;
	for (int i = 0; i < n; i++) {
		items[i].index = i;
		assert_int_equal(tw_uv_timer_init(uv_default_loop(), &items[i].t), 0);
	}
}

static void close_items(int n)
{
	for (int i = 0; i < n; i++)
		tw_uv_timer_close(&items[i].t, NULL);
	assert_int_equal(uv_run(uv_default_loop(), UV_RUN_DEFAULT), 0);
	assert_int_equal(uv_loop_close(uv_default_loop()), 0);
}

/* libuv's key over the whole run: due ms, then start. Checked pairwise on
 * the firing order, so every inversion is counted. */
static int inversions(void)
{
	int bad = 0;

	for (int k = 1; k < nfired; k++) {
		const struct item *a = &items[fired[k - 1]], *b = &items[fired[k]];

		if (a->due_ms > b->due_ms || (a->due_ms == b->due_ms && a->start_seq > b->start_seq))
			bad++;
	}
	return bad;
}

/* 2000 timers started in one turn with one timeout fire in start order;
 * restarted in the reverse order, in that order; restarted by again in a
 * shuffled order, in that one. */
static void test_same_timeout(void **state)
{
	uint64_t rng = 42;
	int perm[N];

	(void)state;
	init_items(N);
	for (int i = 0; i < N; i++)
		start(&items[i], record, 5, 0);
	uv_run(uv_default_loop(), UV_RUN_DEFAULT);
	assert_int_equal(nfired, N);
	for (int i = 0; i < N; i++)
		assert_int_equal(fired[i], i);

	nfired = 0;
	for (int i = N - 1; i >= 0; i--)
		start(&items[i], record, 5, 0);
	uv_run(uv_default_loop(), UV_RUN_DEFAULT);
	assert_int_equal(nfired, N);
	for (int i = 0; i < N; i++)
		assert_int_equal(fired[i], N - 1 - i);

	nfired = 0;
	for (int i = 0; i < N; i++)
		perm[i] = i;
	for (int i = N - 1; i > 0; i--) {
		int j = (int)(tw_test_rand(&rng) % (uint64_t)(i + 1)), x = perm[i];

		perm[i] = perm[j];
		perm[j] = x;
	}
	for (int i = 0; i < N; i++)
		tw_uv_timer_set_repeat(&items[i].t, 5);
	for (int i = 0; i < N; i++) {
		items[perm[i]].start_seq = seq++;
		assert_int_equal(tw_uv_timer_again(&items[perm[i]].t), 0);
		tw_uv_timer_set_repeat(&items[perm[i]].t, 0); /* fires once more */
	}
	uv_run(uv_default_loop(), UV_RUN_DEFAULT);
	assert_int_equal(nfired, N);
	for (int i = 0; i < N; i++)
		assert_int_equal(fired[i], perm[i]);
	close_items(N);
}

/* Random timeouts of 0 to 7 ms, started in random order: every firing
 * respects (due ms, start). */
static void test_random(void **state)
{
	uint64_t rng = 7;

	(void)state;
	init_items(N);
	for (int i = 0; i < N; i++)
		start(&items[i], record, tw_test_rand(&rng) % 8, 0);
	uv_run(uv_default_loop(), UV_RUN_DEFAULT);
	assert_int_equal(nfired, N);
	assert_int_equal(inversions(), 0);
	close_items(N);
}

/* Timers of many milliseconds, 100 to 300 ms out (placed above the wheel's
 * first level, and cascaded), started in random order, some twice, all
 * due in one wake-up: the loop is kept from running past their deadlines.
 * The wheel hands them over in the order of its lists, interleaved; they
 * run by (due ms, start). */
static void test_one_wakeup(void **state)
{
	uint64_t rng = 11;

	(void)state;
	init_items(N);
	for (int i = 0; i < N; i++)
		start(&items[tw_test_rand(&rng) % N], record, 100 + tw_test_rand(&rng) % 200, 0);
	for (int i = 0; i < N; i++)
		if (!tw_uv_timer_is_active(&items[i].t))
			start(&items[i], record, 100 + tw_test_rand(&rng) % 200, 0);
	uv_sleep(350);
	uv_run(uv_default_loop(), UV_RUN_ONCE);
	assert_int_equal(nfired, N);
	assert_int_equal(inversions(), 0);
	close_items(N);
}

/* Referenced and unreferenced timers, started in turn with one timeout,
 * live on two wheels that fire one after the other into the layer's ready
 * list in one wake-up: each wheel's timers in start order, the two
 * interleaved by start. They run by start all the same. */
static uint64_t wakeup_first, wakeup_last;

static void record_wakeup(tw_uv_timer_t *t)
{
	struct tw_uv_stats st;

	assert_int_equal(tw_uv_get_stats(t->tw__uv, &st), 0);
	if (nfired == 0)
		wakeup_first = st.wakeups;
	wakeup_last = st.wakeups;
	record(t);
}

static void test_two_wheels(void **state)
{
	(void)state;
	init_items(N);
	for (int i = 0; i < N; i++) {
		if (i % 2)
			tw_uv_timer_unref(&items[i].t);
		start(&items[i], record_wakeup, 20, 0);
	}
	uv_sleep(40);
	uv_run(uv_default_loop(), UV_RUN_ONCE);
	assert_int_equal(nfired, N);
	assert_int_equal(wakeup_last, wakeup_first); /* one wake-up, both wheels */
	assert_int_equal(inversions(), 0);
	close_items(N);
}

/* From a callback: a timer due in the same wake-up but not yet run that is
 * stopped, closed or restarted does not run in it (libuv's ready queue). */
static void meddle_cb(tw_uv_timer_t *t)
{
	record(t);
	if (t == &items[0].t) {
		assert_int_equal(tw_uv_timer_stop(&items[5].t), 0);
		tw_uv_timer_close(&items[7].t, NULL);
		start(&items[3], record, 50, 0);
	}
}

static void test_meddle(void **state)
{
	(void)state;
	init_items(10);
	for (int i = 0; i < 10; i++)
		start(&items[i], meddle_cb, 3, 0);
	uv_run(uv_default_loop(), UV_RUN_DEFAULT);
	{
		const int want[] = { 0, 1, 2, 4, 6, 8, 9, 3 };

		assert_int_equal(nfired, 8);
		for (int i = 0; i < 8; i++)
			assert_int_equal(fired[i], want[i]);
	}
	for (int i = 0; i < 10; i++)
		if (i != 7)
			tw_uv_timer_close(&items[i].t, NULL);
	assert_int_equal(uv_run(uv_default_loop(), UV_RUN_DEFAULT), 0);
	assert_int_equal(uv_loop_close(uv_default_loop()), 0);
}

/* A wheel of the program's with a 10 ms tick fires timers of several ms in
 * one wake-up: they still run by due ms, then by start. The program's own
 * tw_timer timers on that wheel are not part of the order. */
static int core_fired;

static void core_cb(struct tw_timer *t)
{
	(void)t;
	core_fired++;
}

static void test_coarse_tick(void **state)
{
	struct tw_config cfg = { .tick_ns = 10 * 1000000ull, .slot_bits = 0 };
	struct tw_uv uv;
	struct tw_timer core;
	uv_loop_t loop;

	(void)state;
	memset(items, 0, sizeof(items));
	nfired = 0;
	core_fired = 0;
	assert_int_equal(uv_loop_init(&loop), 0);
	assert_int_equal(tw_test_uv_open(&loop, &uv, &cfg, 0), 0);
	for (int i = 0; i < 10; i++) {
		items[i].index = i;
		assert_int_equal(tw_uv_timer_init_on(&uv, &items[i].t), 0);
	}
	tw_timer_init(&core, core_cb);
	/* Started late first; a 10 ms tick fires most of them together. */
	for (int i = 9; i >= 0; i--)
		start(&items[i], record, (uint64_t)i / 2 + 12, 0);
	assert_int_equal(tw_add(tw_uv_wheel(&uv), &core, tw_uv_now() + 12 * 1000000ull), 0);
	uv_run(&loop, UV_RUN_DEFAULT);
	assert_int_equal(nfired, 10);
	assert_int_equal(core_fired, 1);
	assert_int_equal(inversions(), 0);
	tw_test_uv_close(&uv, NULL);
	assert_int_equal(uv_run(&loop, UV_RUN_DEFAULT), 0);
	assert_int_equal(uv_loop_close(&loop), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_same_timeout),
		cmocka_unit_test(test_random),
		cmocka_unit_test(test_one_wakeup),
		cmocka_unit_test(test_two_wheels),
		cmocka_unit_test(test_meddle),
		cmocka_unit_test(test_coarse_tick),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
