/* SPDX-License-Identifier: MIT */
/*
 * The ownership model on libuv: tw_uv_attach() drives a wheel the program
 * created and tw_uv_close() gives it back untouched, timers armed; the
 * backend never frees it. Closing applies the requests queued on it; a
 * wheel the program destroys while attached refuses them.
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

struct stamp {
	struct tw_timer t;
	uint64_t expires;
	uint64_t fired_at; /* 0 until it fires */
};

static uv_loop_t *stop_on_fire;

static void on_stamp(struct tw_timer *t)
{
	struct stamp *s = tw_container_of(t, struct stamp, t);

	s->fired_at = tw_test_mono_ns();
	if (stop_on_fire)
		uv_stop(stop_on_fire);
}

static void arm(struct tw_wheel *w, struct stamp *s, uint64_t expires)
{
	memset(s, 0, sizeof(*s));
	tw_timer_init(&s->t, on_stamp);
	s->expires = expires;
	assert_int_equal(tw_add(w, &s->t, expires), 0);
}

static int closed;

static void on_closed(struct tw_uv *h)
{
	(void)h;
	closed++;
}

static void close_and_run(uv_loop_t *loop, struct tw_uv *h)
{
	closed = 0;
	tw_uv_close(h, on_closed);
	assert_int_equal(uv_run(loop, UV_RUN_ONCE), 0);
	assert_int_equal(closed, 1);
}

/* Timers armed before the attach are waited for; after the close the wheel
 * is the program's, and a second loop picks up where the first stopped. */
static void test_attach_close_attach_again(void **state)
{
	uv_loop_t a, b;
	struct tw_uv ha, hb;
	struct tw_wheel *w;
	struct stamp soon, late;
	uint64_t now = tw_uv_now();

	(void)state;
	assert_int_equal(tw_wheel_create(&w, NULL, now), 0);
	arm(w, &soon, now + 5 * MS);
	arm(w, &late, now + 500 * MS);
	assert_int_equal(uv_loop_init(&a), 0);
	assert_int_equal(tw_uv_attach(&a, &ha, w, 0), 0);
	assert_ptr_equal(tw_uv_wheel(&ha), w);
	assert_ptr_equal(tw_uv_loop(&ha), &a);
	stop_on_fire = &a;
	assert_int_equal(uv_run(&a, UV_RUN_DEFAULT), 1); /* stopped by the first */
	stop_on_fire = NULL;
	assert_true(soon.fired_at >= soon.expires);
	assert_int_equal(late.fired_at, 0);
	close_and_run(&a, &ha);
	assert_int_equal(uv_loop_close(&a), 0);
	assert_null(tw_uv_wheel(&ha));
	assert_true(tw_pending(&late.t));
	assert_int_equal(tw_count(w), 1);

	assert_int_equal(uv_loop_init(&b), 0);
	assert_int_equal(tw_uv_attach(&b, &hb, w, 0), 0);
	assert_int_equal(uv_run(&b, UV_RUN_DEFAULT), 0); /* the armed timer held it */
	assert_true(late.fired_at >= late.expires);
	close_and_run(&b, &hb);
	assert_int_equal(uv_loop_close(&b), 0);
	tw_wheel_destroy(w);
}

static void test_attach_rejects_bad_arguments(void **state)
{
	uv_loop_t loop;
	struct tw_uv h, h2;
	struct tw_wheel *w, *dead;

	(void)state;
	assert_int_equal(uv_loop_init(&loop), 0);
	assert_int_equal(tw_wheel_create(&w, NULL, tw_uv_now()), 0);
	assert_int_equal(tw_uv_attach(NULL, &h, w, 0), -EINVAL);
	assert_int_equal(tw_uv_attach(&loop, NULL, w, 0), -EINVAL);
	assert_int_equal(tw_uv_attach(&loop, &h, NULL, 0), -EINVAL);
	assert_int_equal(tw_uv_attach(&loop, &h, w, 0x80), -EINVAL);
	/* One backend per wheel; the failed attach leaves nothing behind. */
	assert_int_equal(tw_uv_attach(&loop, &h, w, TW_UV_WEAK), 0);
	assert_int_equal(tw_uv_attach(&loop, &h2, w, 0), -EBUSY);
	close_and_run(&loop, &h);
	assert_int_equal(tw_uv_attach(&loop, &h2, w, 0), 0);
	close_and_run(&loop, &h2);
	/* A destroyed wheel takes no backend. */
	assert_int_equal(tw_wheel_create(&dead, NULL, tw_uv_now()), 0);
	assert_int_equal(tw_uv_attach(&loop, &h, dead, 0), 0);
	tw_wheel_destroy(dead); /* held: the backend still reads it */
	assert_int_equal(tw_uv_attach(&loop, &h2, tw_uv_wheel(&h), 0), -EINVAL);
	close_and_run(&loop, &h); /* ... and released here (ASan, valgrind) */
	assert_int_equal(uv_run(&loop, UV_RUN_DEFAULT), 0);
	assert_int_equal(uv_loop_close(&loop), 0);
	tw_wheel_destroy(w);
}

/* A wheel the program destroys from its own callback, while attached: the
 * loop stops waiting for its timers, and the close releases it. */
static struct tw_wheel *doomed;

static void on_destroy(struct tw_timer *t)
{
	(void)t;
	tw_wheel_destroy(doomed);
}

static void test_program_destroys_attached_wheel(void **state)
{
	uv_loop_t loop;
	struct tw_uv h;
	struct tw_timer killer;
	struct stamp never;
	uint64_t now = tw_uv_now();

	(void)state;
	assert_int_equal(uv_loop_init(&loop), 0);
	assert_int_equal(tw_wheel_create(&doomed, NULL, now), 0);
	tw_timer_init(&killer, on_destroy);
	assert_int_equal(tw_add(doomed, &killer, now + 2 * MS), 0);
	arm(doomed, &never, now + 60000 * MS);
	assert_int_equal(tw_uv_attach(&loop, &h, doomed, 0), 0);
	assert_int_equal(uv_run(&loop, UV_RUN_DEFAULT), 0);
	assert_false(tw_pending(&never.t));
	assert_int_equal(never.fired_at, 0);
	close_and_run(&loop, &h);
	assert_int_equal(uv_loop_close(&loop), 0);
}

/* Requests queued when the handle closes are settled by the close. */
struct post {
	struct tw_wheel *w;
	struct tw_request req;
	struct tw_timer *t;
	uint64_t expires;
};

static void *poster(void *arg)
{
	struct post *p = arg;

	assert_int_equal(tw_post_mod(p->w, &p->req, p->t, p->expires), 0);
	return NULL;
}

static void post_from_thread(struct post *p)
{
	pthread_t th;

	memset(&p->req, 0, sizeof(p->req));
	assert_int_equal(pthread_create(&th, NULL, poster, p), 0);
	assert_int_equal(pthread_join(th, NULL), 0);
	assert_false(tw_request_done(&p->req));
}

static void test_close_settles_requests(void **state)
{
	uv_loop_t loop;
	struct tw_uv h;
	struct tw_wheel *w;
	struct stamp s;
	struct post p;

	(void)state;
	assert_int_equal(uv_loop_init(&loop), 0);
	/* The program's wheel: the request is applied before the backend lets go. */
	assert_int_equal(tw_wheel_create(&w, NULL, tw_uv_now()), 0);
	assert_int_equal(tw_uv_attach(&loop, &h, w, 0), 0);
	memset(&s, 0, sizeof(s));
	tw_timer_init(&s.t, on_stamp);
	p = (struct post){ .w = w, .t = &s.t, .expires = tw_uv_now() + 60000 * MS };
	post_from_thread(&p);
	close_and_run(&loop, &h);
	assert_true(tw_request_done(&p.req));
	assert_int_equal(tw_request_result(&p.req), 0);
	assert_true(tw_pending(&s.t));
	tw_wheel_destroy(w);
	/* A wheel the program destroys while attached: refused as it goes. */
	assert_int_equal(tw_wheel_create(&w, NULL, tw_uv_now()), 0);
	assert_int_equal(tw_uv_attach(&loop, &h, w, 0), 0);
	p.w = w;
	post_from_thread(&p);
	tw_wheel_destroy(w);
	assert_true(tw_request_done(&p.req));
	assert_int_equal(tw_request_result(&p.req), -TW_ESHUTDOWN);
	assert_false(tw_pending(&s.t));
	close_and_run(&loop, &h);
	assert_int_equal(uv_loop_close(&loop), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_attach_close_attach_again),
		cmocka_unit_test(test_attach_rejects_bad_arguments),
		cmocka_unit_test(test_program_destroys_attached_wheel),
		cmocka_unit_test(test_close_settles_requests),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
