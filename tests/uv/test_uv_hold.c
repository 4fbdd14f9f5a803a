/* SPDX-License-Identifier: MIT */
/*
 * Requests from other threads and the loop's life: a request posted after
 * uv_run() returned is settled by tw_uv_close(), and with TW_UV_HOLD the
 * loop does not return while other threads may post, and ends when a
 * posted timer's callback closes the handle. Every wait of a poster here
 * has a timeout (5 s, far beyond what a loaded machine needs): a request
 * left waiting fails the test instead of hanging it.
 */
#define _POSIX_C_SOURCE 200809L

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <pthread.h>
#include <time.h>

#include <timerwheel/uv.h>

#include "uv_test_util.h"

#define WAIT_NS (5 * 1000000000ull)

static uv_loop_t loop;
static struct tw_uv h;
static struct tw_wheel *w;

/* The poster's wait, with a timeout: 1 once done, 0 if it timed out. */
static int wait_done(const struct tw_request *req)
{
	uint64_t end = tw_test_mono_ns() + WAIT_NS;
	struct timespec step = { 0, 1000000 };

	while (!tw_request_done(req)) {
		if (tw_test_mono_ns() > end)
			return 0;
		nanosleep(&step, NULL);
	}
	return 1;
}

struct poster {
	pthread_t th;
	struct tw_request req;
	struct tw_timer *t;
	uint64_t expires;
	int posted, done; /* atomics */
};

static void *post_and_wait(void *arg)
{
	struct poster *p = arg;

	if (tw_post_mod(w, &p->req, p->t, p->expires) == 0) {
		__atomic_store_n(&p->posted, 1, __ATOMIC_RELEASE);
		__atomic_store_n(&p->done, wait_done(&p->req), __ATOMIC_RELEASE);
	}
	return NULL;
}

static int fired;

static void count_cb(struct tw_timer *t)
{
	(void)t;
	fired++;
}

/* The loop has returned; a thread posts and waits. tw_uv_close() applies
 * the request, and the poster's wait ends well within its timeout. */
static void test_after_run_settled_by_close(void **state)
{
	struct tw_timer t;
	struct poster p = { .t = &t };

	(void)state;
	fired = 0;
	assert_int_equal(uv_loop_init(&loop), 0);
	assert_int_equal(tw_wheel_create(&w, NULL, tw_uv_now()), 0);
	assert_int_equal(tw_uv_attach(&loop, &h, w, 0), 0);
	tw_timer_init(&t, count_cb);
	assert_int_equal(uv_run(&loop, UV_RUN_DEFAULT), 0); /* nothing holds it */
	p.expires = tw_uv_now() + 1000000;
	assert_int_equal(pthread_create(&p.th, NULL, post_and_wait, &p), 0);
	while (!__atomic_load_n(&p.posted, __ATOMIC_ACQUIRE))
		sched_yield();
	/* Queued: the loop is not running, and running it again applies
	 * nothing, as nothing holds it. */
	assert_int_equal(uv_run(&loop, UV_RUN_DEFAULT), 0);
	tw_uv_close(&h, NULL);
	assert_int_equal(uv_run(&loop, UV_RUN_ONCE), 0);
	pthread_join(p.th, NULL);
	assert_int_equal(p.done, 1);
	assert_int_equal(tw_request_result(&p.req), 0); /* it was idle */
	assert_true(tw_pending(&t)); /* the program's wheel, armed */
	assert_int_equal(uv_loop_close(&loop), 0);
	tw_wheel_destroy(w);
	assert_int_equal(fired, 0);
}

/* With TW_UV_HOLD the loop runs with nothing armed, applies what threads
 * post, and ends when the posted quit timer closes the handle. */
static struct tw_timer quit;

static void quit_cb(struct tw_timer *t)
{
	(void)t;
	tw_uv_close(&h, NULL);
}

static int loop_ended; /* atomic */

static void *run_loop(void *arg)
{
	(void)arg;
	uv_run(&loop, UV_RUN_DEFAULT);
	__atomic_store_n(&loop_ended, 1, __ATOMIC_RELEASE);
	return NULL;
}

static void test_hold(void **state)
{
	struct tw_timer t;
	struct poster p = { .t = &t }, q = { .t = &quit };
	pthread_t th;
	struct timespec pause = { 0, 100 * 1000000L };

	(void)state;
	fired = 0;
	loop_ended = 0;
	assert_int_equal(uv_loop_init(&loop), 0);
	assert_int_equal(tw_wheel_create(&w, NULL, tw_uv_now()), 0);
	assert_int_equal(tw_uv_attach(&loop, &h, w, TW_UV_HOLD | 4u), -EINVAL);
	assert_int_equal(tw_uv_attach(&loop, &h, w, TW_UV_HOLD), 0);
	tw_timer_init(&t, count_cb);
	tw_timer_init(&quit, quit_cb);
	assert_int_equal(pthread_create(&th, NULL, run_loop, NULL), 0);
	nanosleep(&pause, NULL);
	assert_int_equal(__atomic_load_n(&loop_ended, __ATOMIC_ACQUIRE), 0);

	/* Posted while nothing is armed: the loop is there to apply it. */
	p.expires = tw_uv_now() + 1000000;
	post_and_wait(&p);
	assert_int_equal(p.done, 1);
	/* The quit timer: its callback closes the handle, and the loop ends. */
	q.expires = tw_uv_now() + 20 * 1000000;
	post_and_wait(&q);
	assert_int_equal(q.done, 1);
	pthread_join(th, NULL);
	assert_int_equal(fired, 1);
	assert_int_equal(uv_loop_close(&loop), 0);
	tw_wheel_destroy(w);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_after_run_settled_by_close),
		cmocka_unit_test(test_hold),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
