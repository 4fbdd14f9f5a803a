/* SPDX-License-Identifier: MIT */
/*
 * Closing, references and the loop's wheel of the uv_timer_t layer, each
 * judged against a native uv_timer_t doing the same on the same loop: the
 * close callbacks come in the same uv_run() call, and the loop lives as
 * long. Also the loop's wheel itself: created by the first timer of a loop,
 * gone with its last close (uv_loop_close() succeeds), made anew after a
 * loop was handed to another thread and back, one per loop with loops in
 * several threads at once.
 */
#define _POSIX_C_SOURCE 200809L

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include <timerwheel/uv_timer.h>

#include "uv_test_util.h"

static uv_loop_t loop;
static int run_no;                   /* uv_run() calls so far */
static int native_closed, layer_closed; /* run_no when each close callback ran */

static int setup(void **state)
{
	(void)state;
	run_no = 0;
	native_closed = layer_closed = -1;
	return uv_loop_init(&loop);
}

static int teardown(void **state)
{
	(void)state;
	uv_run(&loop, UV_RUN_DEFAULT);
	return uv_loop_close(&loop) == 0 ? 0 : -1;
}

static int run_once(void)
{
	run_no++;
	return uv_run(&loop, UV_RUN_ONCE);
}

static void native_close_cb(uv_handle_t *h)
{
	(void)h;
	native_closed = run_no;
}

static void layer_close_cb(tw_uv_timer_t *t)
{
	assert_true(tw_uv_timer_is_closing(t));
	assert_false(tw_uv_timer_is_active(t));
	layer_closed = run_no;
}

static uv_timer_t native;
static tw_uv_timer_t layer;

static void both_init(void)
{
	assert_int_equal(uv_timer_init(&loop, &native), 0);
	assert_int_equal(tw_uv_timer_init(&loop, &layer), 0);
}

/* Closed outside the loop: one UV_RUN_ONCE runs both callbacks and
 * returns 0, and the loop closes (the loop's wheel went with the timer). */
static void test_close_outside(void **state)
{
	(void)state;
	both_init();
	uv_close((uv_handle_t *)&native, native_close_cb);
	tw_uv_timer_close(&layer, layer_close_cb);
	assert_true(tw_uv_timer_is_closing(&layer));
	assert_int_equal(layer_closed, -1);
	assert_int_equal(run_once(), 0);
	assert_int_equal(native_closed, 1);
	assert_int_equal(layer_closed, 1);
	assert_true(tw_uv_timer_is_closing(&layer)); /* closed stays closing, as libuv */
	assert_int_equal(uv_loop_close(&loop), 0);
	assert_int_equal(uv_loop_init(&loop), 0); /* for the teardown */
}

/* Closed while started, from a callback of the same turn: the callbacks run
 * in that turn, as the native timer's does. */
static void close_both_cb(uv_timer_t *t)
{
	(void)t;
	uv_close((uv_handle_t *)&native, native_close_cb);
	tw_uv_timer_close(&layer, layer_close_cb);
}

static void test_close_in_callback(void **state)
{
	uv_timer_t trigger;

	(void)state;
	both_init();
	assert_int_equal(uv_timer_start(&native, (uv_timer_cb)abort, 100000, 0), 0);
	assert_int_equal(tw_uv_timer_start(&layer, (tw_uv_timer_cb)abort, 100000, 0), 0);
	assert_int_equal(uv_timer_init(&loop, &trigger), 0);
	assert_int_equal(uv_timer_start(&trigger, close_both_cb, 1, 0), 0);
	while (native_closed < 0 && run_no < 10000)
		run_once();
	assert_true(native_closed >= 0); /* closed, not given up on */
	assert_int_equal(layer_closed, native_closed);
	uv_close((uv_handle_t *)&trigger, NULL);
	assert_int_equal(run_once(), 0);
}

/* Restarting a closing repeating timer: the start underneath fails, as
 * uv_timer_start() does on a closing handle, and the layer says so where
 * uv_timer_again() drops that failure and returns 0. Either way the timer
 * stays stopped. With no repeat there is nothing to restart: 0, as libuv.
 * Another timer keeps the loop's wheel open, so that the refusal is the
 * closing timer's own, not its closed backend's. */
static void test_again_while_closing(void **state)
{
	tw_uv_timer_t other;

	(void)state;
	both_init();
	assert_int_equal(tw_uv_timer_init(&loop, &other), 0);
	assert_int_equal(uv_timer_start(&native, (uv_timer_cb)abort, 100000, 100000), 0);
	assert_int_equal(tw_uv_timer_start(&layer, (tw_uv_timer_cb)abort, 100000, 100000), 0);
	uv_close((uv_handle_t *)&native, native_close_cb);
	tw_uv_timer_close(&layer, layer_close_cb);
	assert_int_equal(uv_timer_again(&native), 0);
	assert_int_equal(tw_uv_timer_again(&layer), UV_EINVAL);
	assert_false(uv_is_active((uv_handle_t *)&native));
	assert_false(tw_uv_timer_is_active(&layer));
	uv_timer_set_repeat(&native, 0);
	tw_uv_timer_set_repeat(&layer, 0);
	assert_int_equal(uv_timer_again(&native), 0);
	assert_int_equal(tw_uv_timer_again(&layer), 0);
	assert_true(tw_uv_wheel(layer.tw__uv) != NULL); /* the backend is open */
	tw_uv_timer_close(&other, NULL);
	assert_int_equal(run_once(), 0);
	assert_int_equal(layer_closed, native_closed);
}

/* Closed from a close callback: the next turn, as libuv's on Unix. On
 * Windows libuv runs close callbacks until none is left, those closed by
 * one too: the same turn, and the layer's with them. */
#ifdef _WIN32
#define CLOSED_FROM_CLOSE_CB 1
#else
#define CLOSED_FROM_CLOSE_CB 2
#endif
static uv_idle_t first;

static void first_closed(uv_handle_t *h)
{
	(void)h;
	uv_close((uv_handle_t *)&native, native_close_cb);
	tw_uv_timer_close(&layer, layer_close_cb);
}

static void test_close_from_close_cb(void **state)
{
	(void)state;
	both_init();
	assert_int_equal(uv_idle_init(&loop, &first), 0);
	uv_close((uv_handle_t *)&first, first_closed);
	if (CLOSED_FROM_CLOSE_CB == 2) {
		assert_int_equal(run_once(), 1);
		assert_int_equal(native_closed, -1);
		assert_int_equal(layer_closed, -1);
	}
	assert_int_equal(run_once(), 0);
	assert_int_equal(native_closed, CLOSED_FROM_CLOSE_CB);
	assert_int_equal(layer_closed, CLOSED_FROM_CLOSE_CB);
}

/* A timer freed in its close callback (ASan and valgrind watch). */
static void free_cb(tw_uv_timer_t *t)
{
	free(t);
	layer_closed = run_no;
}

static void self_close_cb(tw_uv_timer_t *t)
{
	tw_uv_timer_close(t, free_cb);
}

static void test_free_in_close_cb(void **state)
{
	tw_uv_timer_t *t = malloc(sizeof(*t));

	(void)state;
	assert_non_null(t);
	assert_int_equal(tw_uv_timer_init(&loop, t), 0);
	assert_int_equal(tw_uv_timer_start(t, self_close_cb, 1, 1), 0);
	assert_int_equal(uv_run(&loop, UV_RUN_DEFAULT), 0);
	assert_int_equal(layer_closed, 0);
}

/* libuv's liveness: an unreferenced repeating timer (a stats timer) runs
 * while a referenced one keeps the loop alive and does not hold it after,
 * for the native timer as for the layer's. */
static int native_ticks, layer_ticks;
static uint64_t oneshot_at;

static void native_tick(uv_timer_t *t) { (void)t; native_ticks++; }
static void layer_tick(tw_uv_timer_t *t) { (void)t; layer_ticks++; }
static void oneshot_cb(tw_uv_timer_t *t) { (void)t; oneshot_at = tw_test_mono_ns(); }

static void test_unref_stats_timer(void **state)
{
	tw_uv_timer_t oneshot;
	uint64_t t0 = tw_test_mono_ns();

	(void)state;
	native_ticks = layer_ticks = 0;
	oneshot_at = 0;
	both_init();
	assert_int_equal(tw_uv_timer_init(&loop, &oneshot), 0);
	assert_int_equal(uv_timer_start(&native, native_tick, 2, 2), 0);
	assert_int_equal(tw_uv_timer_start(&layer, layer_tick, 2, 2), 0);
	uv_unref((uv_handle_t *)&native);
	tw_uv_timer_unref(&layer);
	assert_int_equal(uv_has_ref((uv_handle_t *)&native), tw_uv_timer_has_ref(&layer));
	/* Nothing else: both loops would end at once. */
	assert_int_equal(uv_run(&loop, UV_RUN_DEFAULT), 0);
	assert_int_equal(layer_ticks, 0);
	assert_int_equal(tw_uv_timer_start(&oneshot, oneshot_cb, 30, 0), 0);
	assert_int_equal(uv_run(&loop, UV_RUN_DEFAULT), 0);
	assert_true(oneshot_at >= t0 + 30 * 1000000ull);
	assert_true(layer_ticks > 0);
	assert_true(native_ticks > 0);
	assert_true(tw_uv_timer_is_active(&layer)); /* still started */
	/* Referenced again: it holds the loop; stopped from its callback
	 * after three calls, it lets the loop go. */
	tw_uv_timer_ref(&layer);
	uv_close((uv_handle_t *)&native, NULL);
	layer_ticks = 0;
	{
		uv_timer_t guard; /* fails the test rather than hang it */

		assert_int_equal(uv_timer_init(&loop, &guard), 0);
		uv_unref((uv_handle_t *)&guard);
		while (layer_ticks < 3)
			assert_int_not_equal(uv_run(&loop, UV_RUN_ONCE), 0);
		tw_uv_timer_stop(&layer);
		assert_int_equal(uv_run(&loop, UV_RUN_NOWAIT), 0);
		uv_close((uv_handle_t *)&guard, NULL);
	}
	tw_uv_timer_close(&layer, NULL);
	tw_uv_timer_close(&oneshot, NULL);
	assert_int_equal(uv_run(&loop, UV_RUN_DEFAULT), 0);
}

/* The loop's wheel: made again after its last timer closed, and a timer
 * of another loop gets that loop's wheel. */
static void test_loop_wheel_again(void **state)
{
	uv_loop_t other;
	tw_uv_timer_t a, b;

	(void)state;
	assert_int_equal(uv_loop_init(&other), 0);
	for (int round = 0; round < 3; round++) {
		assert_int_equal(tw_uv_timer_init(&loop, &a), 0);
		assert_int_equal(tw_uv_timer_init(&other, &b), 0);
		assert_ptr_equal(tw_uv_loop(a.tw__uv), &loop); /* the test peeks */
		assert_ptr_equal(tw_uv_loop(b.tw__uv), &other);
		tw_uv_timer_close(&a, NULL);
		tw_uv_timer_close(&b, NULL);
		assert_int_equal(uv_run(&loop, UV_RUN_ONCE), 0);
		assert_int_equal(uv_run(&other, UV_RUN_ONCE), 0);
	}
	assert_int_equal(uv_loop_close(&other), 0);
}

/* A loop handed to another thread, which closes its last timer there (the
 * loop's wheel goes), and back: the next init makes a new wheel, though
 * this thread's last init was on the same loop (under ASan or valgrind, a
 * use of the old wheel is an error). */
static tw_uv_timer_t handed;

static void *close_elsewhere(void *arg)
{
	(void)arg;
	tw_uv_timer_close(&handed, NULL);
	return (void *)(intptr_t)uv_run(&loop, UV_RUN_DEFAULT);
}

static void count_fired(tw_uv_timer_t *t)
{
	(*(int *)t->data)++;
}

static void test_loop_handed_over(void **state)
{
	pthread_t th;
	void *rc;
	int fired = 0;

	(void)state;
	for (int round = 0; round < 3; round++) {
		assert_int_equal(tw_uv_timer_init(&loop, &handed), 0);
		assert_int_equal(pthread_create(&th, NULL, close_elsewhere, NULL), 0);
		pthread_join(th, &rc);
		assert_int_equal((intptr_t)rc, 0);
		assert_int_equal(tw_uv_timer_init(&loop, &layer), 0);
		assert_ptr_equal(tw_uv_loop(layer.tw__uv), &loop); /* the test peeks */
		layer.data = &fired;
		assert_int_equal(tw_uv_timer_start(&layer, count_fired, 0, 0), 0);
		assert_int_equal(uv_run(&loop, UV_RUN_DEFAULT), 0);
		assert_int_equal(fired, round + 1);
		tw_uv_timer_close(&layer, NULL);
		assert_int_equal(uv_run(&loop, UV_RUN_DEFAULT), 0);
	}
}

/* Loops in four threads at once, each with timers of its own. */
struct thread_loop {
	pthread_t th;
	int fired, rounds;
};

static void thread_tick(tw_uv_timer_t *t)
{
	((struct thread_loop *)t->data)->fired++;
	tw_uv_timer_close(t, NULL);
}

static void *thread_loop(void *arg)
{
	struct thread_loop *tl = arg;
	tw_uv_timer_t t[50];
	uv_loop_t l;

	if (uv_loop_init(&l) != 0)
		return NULL;
	for (int round = 0; round < 20; round++) {
		for (int i = 0; i < 50; i++) {
			if (tw_uv_timer_init(&l, &t[i]) != 0)
				return NULL;
			t[i].data = tl;
			if (tw_uv_timer_start(&t[i], thread_tick, (uint64_t)i % 3, 0) != 0)
				return NULL;
		}
		if (uv_run(&l, UV_RUN_DEFAULT) != 0)
			return NULL;
		tl->rounds++;
	}
	if (uv_loop_close(&l) != 0)
		tl->rounds = -1;
	return NULL;
}

static void test_loops_in_threads(void **state)
{
	struct thread_loop tl[4];

	(void)state;
	memset(tl, 0, sizeof(tl));
	for (int i = 0; i < 4; i++)
		assert_int_equal(pthread_create(&tl[i].th, NULL, thread_loop, &tl[i]), 0);
	for (int i = 0; i < 4; i++) {
		pthread_join(tl[i].th, NULL);
		assert_int_equal(tl[i].rounds, 20);
		assert_int_equal(tl[i].fired, 20 * 50);
	}
}

/* The program's wheel (tw_uv_timer_init_on()): its own tw_timer holds the
 * loop beside an unreferenced layer timer, and TW_UV_WEAK holds nothing. */
static int core_fired;

static void core_cb(struct tw_timer *t)
{
	(void)t;
	core_fired++;
}

static void test_program_wheel(void **state)
{
	struct tw_uv uv;
	struct tw_timer core;
	tw_uv_timer_t t;

	(void)state;
	core_fired = layer_ticks = 0;
	assert_int_equal(tw_test_uv_open(&loop, &uv, NULL, 0), 0);
	assert_int_equal(tw_uv_timer_init_on(&uv, &t), 0);
	tw_timer_init(&core, core_cb);
	assert_int_equal(tw_uv_timer_start(&t, layer_tick, 1, 1), 0);
	tw_uv_timer_unref(&t);
	assert_int_equal(tw_add(tw_uv_wheel(&uv), &core, tw_uv_now() + 20 * 1000000ull), 0);
	assert_int_equal(uv_run(&loop, UV_RUN_DEFAULT), 0);
	assert_int_equal(core_fired, 1);
	assert_true(layer_ticks > 0);
	tw_uv_timer_close(&t, layer_close_cb);
	tw_test_uv_close(&uv, NULL);
	assert_int_equal(uv_run(&loop, UV_RUN_ONCE), 0);
	assert_int_equal(layer_closed, 0);

	assert_int_equal(tw_test_uv_open(&loop, &uv, NULL, TW_UV_WEAK), 0);
	assert_int_equal(tw_uv_timer_init_on(&uv, &t), 0);
	assert_int_equal(tw_uv_timer_start(&t, (tw_uv_timer_cb)abort, 0, 0), 0);
	assert_true(tw_uv_timer_has_ref(&t));
	assert_int_equal(uv_run(&loop, UV_RUN_DEFAULT), 0);
	tw_uv_timer_stop(&t); /* stopped, a timer of the program's wheel may go unclosed */
	tw_test_uv_close(&uv, NULL);
	assert_int_equal(uv_run(&loop, UV_RUN_ONCE), 0);
}

/* The order of close callbacks in one turn, native and layer mixed: native
 * n, layer t, native m, layer u closed in that order call back m u t n.
 * libuv, had t and u been uv_timer_t, would call back u m t n (last first):
 * the layer's closes of a turn call back together, where its first close
 * of the turn stands. The header says so. */
static char order[8];
static int norder;

static void order_native_cb(uv_handle_t *h)
{
	order[norder++] = *(const char *)h->data;
}

static void order_layer_cb(tw_uv_timer_t *t)
{
	order[norder++] = *(const char *)t->data;
}

static void test_mixed_close_order(void **state)
{
	static uv_timer_t n, m;
	static tw_uv_timer_t t, u;

	(void)state;
	norder = 0;
	assert_int_equal(uv_timer_init(&loop, &n), 0);
	assert_int_equal(uv_timer_init(&loop, &m), 0);
	assert_int_equal(tw_uv_timer_init(&loop, &t), 0);
	assert_int_equal(tw_uv_timer_init(&loop, &u), 0);
	n.data = "n";
	m.data = "m";
	t.data = "t";
	u.data = "u";
	uv_close((uv_handle_t *)&n, order_native_cb);
	tw_uv_timer_close(&t, order_layer_cb);
	uv_close((uv_handle_t *)&m, order_native_cb);
	tw_uv_timer_close(&u, order_layer_cb);
	assert_int_equal(run_once(), 0);
	assert_int_equal(norder, 4);
	assert_memory_equal(order, "mutn", 4);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_close_outside, setup, teardown),
		cmocka_unit_test_setup_teardown(test_close_in_callback, setup, teardown),
		cmocka_unit_test_setup_teardown(test_again_while_closing, setup, teardown),
		cmocka_unit_test_setup_teardown(test_close_from_close_cb, setup, teardown),
		cmocka_unit_test_setup_teardown(test_free_in_close_cb, setup, teardown),
		cmocka_unit_test_setup_teardown(test_unref_stats_timer, setup, teardown),
		cmocka_unit_test_setup_teardown(test_loop_wheel_again, setup, teardown),
		cmocka_unit_test_setup_teardown(test_loop_handed_over, setup, teardown),
		cmocka_unit_test_setup_teardown(test_loops_in_threads, setup, teardown),
		cmocka_unit_test_setup_teardown(test_program_wheel, setup, teardown),
		cmocka_unit_test_setup_teardown(test_mixed_close_order, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
