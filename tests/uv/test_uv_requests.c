/* SPDX-License-Identifier: MIT */
/*
 * Requests from another thread on the libuv backend, real loop, real
 * clock: a worker re-arms a timer with a window (tw_post_mod_range()), and
 * a timer first far away, then, before the loop has looked, 30 ms ahead
 * (latest wins), waiting for each with tw_request_wait_timeout(); the
 * loop, asleep with no timer armed, is woken by the backend's uv_async_t,
 * and every timer fires with the expiry of its last post, never early.
 * Then a loop that has stopped: a worker's wait ends with -ETIMEDOUT at
 * its timeout, and the request is applied once the loop runs again.
 */
#define _POSIX_C_SOURCE 200809L

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <pthread.h>
#include <string.h>

#include <timerwheel/uv.h>

#include "uv_test_util.h"

#define MS 1000000ull

struct probe {
	struct tw_timer t;
	struct tw_request req;
	uint64_t fired_at, expiry; /* by the loop */
	int fired;                 /* atomic */
};

static struct {
	uv_loop_t loop;
	struct tw_uv h;
	uv_async_t quit; /* keeps the loop running until the worker is done */
	struct tw_wheel *w;
	struct probe ranged, latest;
	int rc[5];
	uint64_t posted_at, distant, soon;
} s;

static void on_probe(struct tw_timer *t)
{
	struct probe *p = tw_container_of(t, struct probe, t);

	p->fired_at = tw_test_mono_ns();
	p->expiry = t->expires;
	__atomic_fetch_add(&p->fired, 1, __ATOMIC_RELEASE);
}

static void on_quit(uv_async_t *a)
{
	uv_close((uv_handle_t *)a, NULL);
	tw_uv_close(&s.h, NULL);
}

static void wait_fired(struct probe *p)
{
	struct timespec ms10 = { 0, 10 * 1000000L };

	for (int i = 0; i < 1000 && !__atomic_load_n(&p->fired, __ATOMIC_ACQUIRE); i++)
		nanosleep(&ms10, NULL);
}

/* No cmocka asserts here: they may only fail in the test's thread. */
static void *worker(void *arg)
{
	struct timespec ms50 = { 0, 50 * 1000000L };

	(void)arg;
	nanosleep(&ms50, NULL); /* the loop is asleep by now */
	s.posted_at = tw_test_mono_ns();
	s.rc[0] = tw_post_mod_range(s.w, &s.ranged.req, &s.ranged.t, s.posted_at + 20 * MS, 100 * MS);
	s.rc[1] = tw_request_wait_timeout(s.w, &s.ranged.req, 10000 * MS);
	wait_fired(&s.ranged);

	s.distant = tw_test_mono_ns() + 10000 * MS;
	s.soon = s.distant - 9970 * MS;
	s.rc[2] = tw_post_mod(s.w, &s.latest.req, &s.latest.t, s.distant);
	/* 1 if the first is still queued (replaced), 0 if the loop took it
	 * (applied, or applying: the second is then queued anew): which
	 * depends on the loop thread's pace, and decides what the second's
	 * application finds. */
	s.rc[4] = tw_post_mod(s.w, &s.latest.req, &s.latest.t, s.soon);
	s.rc[3] = tw_request_wait_timeout(s.w, &s.latest.req, 10000 * MS);
	wait_fired(&s.latest);
	uv_async_send(&s.quit);
	return NULL;
}

static void test_posts_on_a_running_loop(void **state)
{
	pthread_t th;

	(void)state;
	memset(&s, 0, sizeof(s));
	assert_int_equal(uv_loop_init(&s.loop), 0);
	assert_int_equal(tw_test_uv_open(&s.loop, &s.h, NULL, 0), 0);
	assert_int_equal(uv_async_init(&s.loop, &s.quit, on_quit), 0);
	s.w = tw_uv_wheel(&s.h);
	tw_timer_init(&s.ranged.t, on_probe);
	tw_timer_init(&s.latest.t, on_probe);
	assert_int_equal(pthread_create(&th, NULL, worker, NULL), 0);
	assert_int_equal(uv_run(&s.loop, UV_RUN_DEFAULT), 0);
	pthread_join(th, NULL);
	assert_int_equal(uv_loop_close(&s.loop), 0);
	tw_wheel_destroy(s.w);

	assert_int_equal(s.rc[0], 0);
	assert_int_equal(s.rc[1], 0); /* applied in time; the timer was idle */
	assert_int_equal(s.ranged.fired, 1);
	assert_int_equal(s.ranged.expiry, s.posted_at + 20 * MS);
	assert_true(s.ranged.fired_at >= s.ranged.expiry);
	assert_int_equal(s.rc[2], 0);
	/* tw_mod()'s result: the timer was idle if the second post replaced
	 * the first, else armed at the first post's deadline. */
	assert_true(s.rc[4] == 0 || s.rc[4] == 1);
	assert_int_equal(s.rc[3], s.rc[4] == 1 ? 0 : 1);
	assert_int_equal(s.latest.fired, 1); /* once, at the latest deadline */
	assert_int_equal(s.latest.expiry, s.soon);
	assert_true(s.latest.fired_at >= s.soon);
	printf("ranged post fired %.3f ms after its expiry (window 100 ms); the re-posted one %.3f ms after "
	       "its latest deadline\n",
	       (double)(s.ranged.fired_at - s.ranged.expiry) / 1e6, (double)(s.latest.fired_at - s.soon) / 1e6);
}

/* A loop that has stopped applies nothing: the worker's wait times out. */
static void *stopped_worker(void *arg)
{
	(void)arg;
	s.rc[0] = tw_post_del(s.w, &s.latest.req, &s.latest.t);
	s.posted_at = tw_test_mono_ns();
	s.rc[1] = tw_request_wait_timeout(s.w, &s.latest.req, 100 * MS);
	s.distant = tw_test_mono_ns() - s.posted_at;
	return NULL;
}

static void test_wait_on_a_stopped_loop(void **state)
{
	pthread_t th;

	(void)state;
	memset(&s, 0, sizeof(s));
	assert_int_equal(uv_loop_init(&s.loop), 0);
	assert_int_equal(tw_test_uv_open(&s.loop, &s.h, NULL, 0), 0);
	s.w = tw_uv_wheel(&s.h);
	tw_timer_init(&s.latest.t, on_probe);
	assert_int_equal(tw_add(s.w, &s.latest.t, tw_uv_now() + 10000 * MS), 0);
	/* The loop does not run while the worker waits. */
	assert_int_equal(pthread_create(&th, NULL, stopped_worker, NULL), 0);
	pthread_join(th, NULL);
	assert_int_equal(s.rc[0], 0);
	assert_int_equal(s.rc[1], -ETIMEDOUT);
	assert_true(s.distant >= 100 * MS);
	assert_true(s.distant < 100 * MS + 20000 * MS); /* lateness only: a loaded machine */
	assert_false(tw_request_done(&s.latest.req));
	assert_true(tw_pending(&s.latest.t));
	/* Running again, the loop hears the wake-up the wait sent and applies it. */
	for (int i = 0; i < 100 && !tw_request_done(&s.latest.req); i++)
		uv_run(&s.loop, UV_RUN_NOWAIT);
	assert_true(tw_request_done(&s.latest.req));
	assert_int_equal(tw_request_result(&s.latest.req), 1);
	assert_false(tw_pending(&s.latest.t));
	tw_test_uv_close(&s.h, NULL);
	assert_int_equal(uv_run(&s.loop, UV_RUN_DEFAULT), 0);
	assert_int_equal(uv_loop_close(&s.loop), 0);
	printf("the wait on a stopped loop timed out after %.3f ms of 100\n", (double)s.distant / 1e6);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_posts_on_a_running_loop),
		cmocka_unit_test(test_wait_on_a_stopped_loop),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
