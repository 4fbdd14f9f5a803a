/* SPDX-License-Identifier: MIT */
/*
 * Letting go from a callback, as libuv's uv_close() may: tw_uring_detach()
 * from a timer callback, tw_uring_loop_close() from a timer callback or
 * from the loop's completion callback. The wheel is the program's when the
 * call returns: its other timers never fire from the old backend, it stays
 * whole, and it can be attached again. The program may then destroy the
 * wheel or tear its ring down in the same callback. Run under ASan, which
 * sees a backend touching freed memory or leaking.
 */
#include "helpers.h"

#include <timerwheel/debug.h>

#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>

#define MS 1000000ull

enum after { KEEP, DESTROY_WHEEL, EXIT_RING };

static struct {
	struct tw_wheel *w;
	struct io_uring ring;
	struct tw_uring *u;
	struct tw_uring_loop *l;
	struct tw_timer closer, same_tick, near, later, far;
	enum after after;
	int detached;       /* tw_uring_detach()'s or tw_uring_loop_close()'s return, + 1 */
	int closer_fired, same_tick_fired, near_fired, later_fired, far_fired;
	int returns;        /* tw_uring_handle_cqe() calls returned since the detach */
} s;

static void on_same_tick(struct tw_timer *t)
{
	(void)t;
	s.same_tick_fired++;
}

static void on_near(struct tw_timer *t)
{
	(void)t;
	s.near_fired++;
}

static void on_later(struct tw_timer *t)
{
	(void)t;
	s.later_fired++;
	if (s.l)
		tw_uring_stop(s.l);
}

static void on_far(struct tw_timer *t)
{
	(void)t;
	s.far_fired++;
}

/* What the program does after letting go, in the same callback. */
static void after_letting_go(void)
{
	if (s.after == DESTROY_WHEEL) {
		tw_wheel_destroy(s.w);
		s.w = NULL;
	} else if (s.after == EXIT_RING) {
		io_uring_queue_exit(&s.ring);
	}
}

/* Arms a timer due soon, then lets go: the old backend never fires it. */
static void on_detach(struct tw_timer *t)
{
	(void)t;
	s.closer_fired++;
	assert_int_equal(tw_add(s.w, &s.near, tw_uring_now() + 2 * MS), 0);
	s.detached = tw_uring_detach(s.u) + 1;
	after_letting_go();
}

static void on_close(struct tw_timer *t)
{
	(void)t;
	s.closer_fired++;
	s.detached = tw_uring_loop_close(s.l) + 1;
	after_letting_go();
}

static void arm_all(void (*closer)(struct tw_timer *))
{
	uint64_t now = tw_uring_now();

	assert_int_equal(tw_wheel_create(&s.w, NULL, now), 0);
	tw_timer_init(&s.closer, closer);
	tw_timer_init(&s.same_tick, on_same_tick);
	tw_timer_init(&s.near, on_near);
	tw_timer_init(&s.later, on_later);
	tw_timer_init(&s.far, on_far);
	assert_int_equal(tw_add(s.w, &s.closer, now + 3 * MS), 0);
	/* Due in the closer's advance: it still fires there, once. */
	assert_int_equal(tw_add(s.w, &s.same_tick, now + 3 * MS), 0);
	assert_int_equal(tw_add(s.w, &s.later, now + 40 * MS), 0);
	assert_int_equal(tw_add(s.w, &s.far, now + 3600000 * MS), 0);
}

static void setup_attached(void (*closer)(struct tw_timer *), enum after what)
{
	memset(&s, 0, sizeof(s));
	s.after = what;
	tw_test_ring_init(&s.ring, 8, 0);
	arm_all(closer);
	assert_int_equal(tw_uring_attach(&s.u, s.w, &s.ring), 0);
}

/* Reaps until the closer ran, handing everything to the backend. */
static void reap_until_detached(void)
{
	while (!s.detached) {
		struct io_uring_cqe *cqe;

		assert_true(io_uring_submit_and_wait(&s.ring, 1) >= 0);
		while (!s.detached && io_uring_peek_cqe(&s.ring, &cqe) == 0) {
			assert_int_equal(tw_uring_handle_cqe(s.u, cqe), 1);
			if (s.after != EXIT_RING)
				io_uring_cqe_seen(&s.ring, cqe);
		}
	}
}

/* After the detach: only tagged completions of the old backend (the
 * removal of its eventfd poll, where it has one), and none that re-arms
 * anything. Waits @ms for stragglers. */
static unsigned reap_stragglers(unsigned ms)
{
	struct __kernel_timespec ts = { .tv_sec = 0, .tv_nsec = (long long)ms * (long long)MS };
	struct io_uring_cqe *cqe;
	unsigned n = 0;

	assert_true(io_uring_submit(&s.ring) >= 0);
	while (io_uring_wait_cqe_timeout(&s.ring, &cqe, &ts) == 0) {
		assert_true(tw_uring_is_tagged(cqe->user_data));
		io_uring_cqe_seen(&s.ring, cqe);
		n++;
	}
	assert_int_equal(io_uring_sq_ready(&s.ring), 0);
	return n;
}

/* The wheel back in the program's hands: whole, its timers armed. */
static void assert_wheel_returned(size_t count)
{
	assert_int_equal(s.detached, 1);
	assert_int_equal(s.closer_fired, 1);
	assert_int_equal(s.same_tick_fired, 1);
	assert_int_equal(tw_count(s.w), count);
	assert_int_equal(tw_check(s.w), 0);
	assert_true(tw_pending(&s.later) && tw_pending(&s.far));
}

/* A new backend on the same wheel fires what the old one left. */
static void reattach_and_fire_later(void)
{
	struct tw_uring *u2;

	assert_int_equal(tw_uring_attach(&u2, s.w, &s.ring), 0);
	while (!s.later_fired) {
		struct io_uring_cqe *cqe;

		assert_true(io_uring_submit_and_wait(&s.ring, 1) >= 0);
		while (io_uring_peek_cqe(&s.ring, &cqe) == 0) {
			/* Stragglers of the old backend are tagged but not the new one's. */
			if (tw_uring_handle_cqe(u2, cqe) == 0)
				assert_true(tw_uring_is_tagged(cqe->user_data));
			io_uring_cqe_seen(&s.ring, cqe);
		}
	}
	assert_int_equal(s.near_fired, 1);
	assert_int_equal(s.later_fired, 1);
	assert_int_equal(s.far_fired, 0);
	assert_int_equal(tw_uring_detach(u2), 0);
	assert_true(tw_pending(&s.far));
}

static void detach_from_callback(void **state)
{
	(void)state;
	setup_attached(on_detach, KEEP);
	reap_until_detached();
	assert_wheel_returned(3);
	(void)reap_stragglers(20);
	assert_int_equal(s.near_fired, 0);
	assert_true(tw_pending(&s.near));
	reattach_and_fire_later();
	tw_wheel_destroy(s.w);
	io_uring_queue_exit(&s.ring);
}

/* Detach, then destroy the wheel in the same callback: its memory goes as
 * the advance returns, and the backend reads it no more. */
static void detach_then_destroy_from_callback(void **state)
{
	(void)state;
	setup_attached(on_detach, DESTROY_WHEEL);
	reap_until_detached();
	assert_int_equal(s.detached, 1);
	assert_null(s.w);
	(void)reap_stragglers(20);
	assert_int_equal(s.near_fired + s.later_fired + s.far_fired, 0);
	io_uring_queue_exit(&s.ring);
}

/* Detach, then tear the ring down in the same callback: nothing of the
 * ring is touched after the detach returns. */
static void detach_then_ring_exit_from_callback(void **state)
{
	(void)state;
	setup_attached(on_detach, EXIT_RING);
	reap_until_detached();
	assert_wheel_returned(3);
	assert_int_equal(s.near_fired, 0);
	tw_wheel_destroy(s.w);
}

/* The ring torn down before the detach, outside any callback, with the
 * timeout in flight and its update queued: the detach touches nothing of
 * the ring, and the wheel keeps its timers. */
static void ring_exit_then_detach(void **state)
{
	(void)state;
	setup_attached(on_detach, KEEP);
	assert_true(io_uring_submit(&s.ring) >= 1);
	assert_int_equal(tw_add(s.w, &s.near, tw_uring_now() + 1 * MS), 0);
	assert_int_equal(io_uring_sq_ready(&s.ring), 1);
	io_uring_queue_exit(&s.ring);
	assert_int_equal(tw_uring_detach(s.u), 0);
	assert_int_equal(tw_count(s.w), 5);
	assert_int_equal(tw_check(s.w), 0);
	tw_wheel_destroy(s.w);
}

static void loop_close_from_timer(unsigned wait, enum after what)
{
	struct tw_uring_loop_options opt = { .wait = wait };

	memset(&s, 0, sizeof(s));
	s.after = what;
	arm_all(on_close);
	tw_test_loop_init(&s.l, s.w, &opt);
	/* It returns when the callback does, and frees the loop. */
	assert_int_equal(tw_uring_run(s.l), 0);
	if (what == DESTROY_WHEEL) {
		assert_int_equal(s.detached, 1);
		assert_null(s.w);
		return;
	}
	assert_wheel_returned(2);
	assert_int_equal(s.later_fired + s.far_fired, 0);
	/* A new loop on the same wheel runs until later fires. */
	tw_test_loop_init(&s.l, s.w, &opt);
	assert_int_equal(tw_uring_run(s.l), 0);
	assert_int_equal(s.later_fired, 1);
	assert_int_equal(s.far_fired, 0);
	assert_int_equal(tw_uring_loop_close(s.l), 0);
	assert_true(tw_pending(&s.far));
	tw_wheel_destroy(s.w);
}

static void loop_close_from_timer_wait_arg(void **state)
{
	(void)state;
	loop_close_from_timer(TW_URING_WAIT_ARG, KEEP);
}

static void loop_close_from_timer_wait_sqe(void **state)
{
	(void)state;
	loop_close_from_timer(TW_URING_WAIT_SQE, KEEP);
}

static void loop_close_then_destroy_wait_arg(void **state)
{
	(void)state;
	loop_close_from_timer(TW_URING_WAIT_ARG, DESTROY_WHEEL);
}

static void loop_close_then_destroy_wait_sqe(void **state)
{
	(void)state;
	loop_close_from_timer(TW_URING_WAIT_SQE, DESTROY_WHEEL);
}

/* The loop's completion callback closes it, with completions of the
 * program's still to come in the same turn. */
static int cqes_seen;

static void close_on_cqe(struct tw_uring_loop *l, struct io_uring_cqe *cqe, void *arg)
{
	(void)cqe;
	(void)arg;
	cqes_seen++;
	s.detached = tw_uring_loop_close(l) + 1;
	tw_wheel_destroy(s.w);
	s.w = NULL;
}

static void loop_close_from_cqe_fn(unsigned wait)
{
	struct tw_uring_loop_options opt = { .wait = wait, .cqe_fn = close_on_cqe };
	int i;

	memset(&s, 0, sizeof(s));
	cqes_seen = 0;
	arm_all(on_close);
	assert_int_equal(tw_del(s.w, &s.closer), 1);
	tw_test_loop_init(&s.l, s.w, &opt);
	for (i = 0; i < 3; i++)
		io_uring_prep_nop(tw_uring_get_sqe(s.l));
	assert_int_equal(tw_uring_run(s.l), 0);
	assert_int_equal(s.detached, 1);
	assert_int_equal(cqes_seen, 1);
}

static void loop_close_from_cqe_fn_wait_arg(void **state)
{
	(void)state;
	loop_close_from_cqe_fn(TW_URING_WAIT_ARG);
}

static void loop_close_from_cqe_fn_wait_sqe(void **state)
{
	(void)state;
	loop_close_from_cqe_fn(TW_URING_WAIT_SQE);
}

/* Another thread's close while tw_uring_run() runs would race the loop's
 * thread for the wheel and the ring: refused, and nothing changes. The
 * loop's callback waits until the other thread has tried. */
static atomic_int running_seen, tried;

static void on_running(struct tw_timer *t)
{
	(void)t;
	atomic_store(&running_seen, 1);
	while (!atomic_load(&tried))
		sched_yield();
}

static void *close_elsewhere(void *arg)
{
	int r;

	while (!atomic_load(&running_seen))
		sched_yield();
	r = tw_uring_loop_close(arg);
	atomic_store(&tried, 1);
	return (void *)(intptr_t)r;
}

static void loop_close_from_other_thread(void **state)
{
	struct tw_timer started;
	pthread_t th;
	void *r;

	(void)state;
	memset(&s, 0, sizeof(s));
	atomic_store(&running_seen, 0);
	atomic_store(&tried, 0);
	arm_all(on_close);
	assert_int_equal(tw_del(s.w, &s.closer), 1);
	assert_int_equal(tw_del(s.w, &s.far), 1);
	tw_timer_init(&started, on_running);
	assert_int_equal(tw_add(s.w, &started, tw_uring_now() + 1 * MS), 0);
	tw_test_loop_init(&s.l, s.w, NULL);
	assert_int_equal(pthread_create(&th, NULL, close_elsewhere, s.l), 0);
	assert_int_equal(tw_uring_run(s.l), 0);
	assert_int_equal(pthread_join(th, &r), 0);
	assert_int_equal((int)(intptr_t)r, -EBUSY);
	assert_int_equal(s.later_fired, 1);
	assert_int_equal(tw_uring_loop_close(s.l), 0);
	tw_wheel_destroy(s.w);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(detach_from_callback),
		cmocka_unit_test(detach_then_destroy_from_callback),
		cmocka_unit_test(detach_then_ring_exit_from_callback),
		cmocka_unit_test(ring_exit_then_detach),
		cmocka_unit_test(loop_close_from_timer_wait_arg),
		cmocka_unit_test(loop_close_from_timer_wait_sqe),
		cmocka_unit_test(loop_close_then_destroy_wait_arg),
		cmocka_unit_test(loop_close_then_destroy_wait_sqe),
		cmocka_unit_test(loop_close_from_cqe_fn_wait_arg),
		cmocka_unit_test(loop_close_from_cqe_fn_wait_sqe),
		cmocka_unit_test(loop_close_from_other_thread),
	};

	return tw_test_exit(cmocka_run_group_tests_name("uring teardown", tests, NULL, NULL));
}
