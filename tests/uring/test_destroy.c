/* SPDX-License-Identifier: MIT */
/*
 * Destroying a wheel that an io_uring backend drives: its timers go idle at
 * once, the backend still reads it safely, and tw_uring_detach() or
 * tw_uring_loop_close() lets go of it. Run under ASan and valgrind, which
 * see the use after free or the leak if either half is wrong.
 */
#include "helpers.h"

#define MS 1000000ull

static struct {
	struct tw_wheel *w;
	struct tw_timer destroyer, same_tick, far;
	int destroyed;
	int fired_after;
} s;

static void on_destroy(struct tw_timer *t)
{
	assert_true(tw_uring_now() >= t->expires);
	tw_wheel_destroy(s.w);
	s.destroyed++;
	assert_false(tw_pending(&s.same_tick));
	assert_false(tw_pending(&s.far));
}

static void on_never(struct tw_timer *t)
{
	(void)t;
	s.fired_after++;
}

static void arm_three(void)
{
	uint64_t now = tw_uring_now();

	memset(&s, 0, sizeof(s));
	assert_int_equal(tw_wheel_create(&s.w, NULL, now), 0);
	tw_timer_init(&s.destroyer, on_destroy);
	tw_timer_init(&s.same_tick, on_never);
	tw_timer_init(&s.far, on_never);
	assert_int_equal(tw_add(s.w, &s.destroyer, now + 5 * MS), 0);
	/* The next tick (order within one tick is unspecified): due in the same
	 * wake-up when that comes late, after the destroyer; it must not run. */
	assert_int_equal(tw_add(s.w, &s.same_tick, now + 6 * MS), 0);
	assert_int_equal(tw_add(s.w, &s.far, now + 60000 * MS), 0);
}

static void reap_until_destroyed(struct io_uring *ring, struct tw_uring *u)
{
	while (!s.destroyed) {
		struct io_uring_cqe *cqe;

		assert_true(io_uring_submit_and_wait(ring, 1) >= 0);
		while (io_uring_peek_cqe(ring, &cqe) == 0) {
			assert_int_equal(tw_uring_handle_cqe(u, cqe), 1);
			io_uring_cqe_seen(ring, cqe);
		}
	}
}

static void attached_destroy_from_callback(void **state)
{
	struct io_uring ring;
	struct tw_uring *u;
	struct tw_uring_stats st;

	(void)state;
	tw_test_ring_init(&ring, 8, 0);
	arm_three();
	assert_int_equal(tw_uring_attach(&u, s.w, &ring), 0);
	reap_until_destroyed(&ring, u);
	/* The hook heard UINT64_MAX: no new timeout for a wheel that is gone. */
	assert_int_equal(io_uring_sq_ready(&ring), 0);
	assert_int_equal(tw_count(s.w), 0);
	assert_int_equal(tw_uring_get_stats(u, &st), 0);
	assert_int_equal(st.errors, 0);
	assert_int_equal(tw_uring_detach(u), 0); /* releases the wheel */
	assert_int_equal(s.fired_after, 0);
	io_uring_queue_exit(&ring);
}

/* Destroyed outside the loop with the timeout in flight: its completion
 * still comes, and must neither fire anything nor re-arm. */
static void attached_destroy_outside(void **state)
{
	struct io_uring ring;
	struct io_uring_cqe *cqe;
	struct tw_uring *u;

	(void)state;
	tw_test_ring_init(&ring, 8, 0);
	arm_three();
	assert_int_equal(tw_uring_attach(&u, s.w, &ring), 0);
	assert_int_equal(io_uring_submit(&ring), 1);
	tw_wheel_destroy(s.w);
	assert_false(tw_pending(&s.destroyer));
	assert_int_equal(io_uring_wait_cqe(&ring, &cqe), 0);
	assert_int_equal(tw_uring_handle_cqe(u, cqe), 1);
	io_uring_cqe_seen(&ring, cqe);
	assert_int_equal(io_uring_sq_ready(&ring), 0);
	assert_int_equal(tw_uring_detach(u), 0);
	assert_int_equal(s.destroyed + s.fired_after, 0);
	io_uring_queue_exit(&ring);
}

/* Destroyed before the first submit: detach turns the queued timeout into
 * a NOP, as for a live wheel. */
static void attached_destroy_then_detach(void **state)
{
	struct io_uring ring;
	struct io_uring_cqe *cqe;
	struct tw_uring *u;

	(void)state;
	tw_test_ring_init(&ring, 8, 0);
	arm_three();
	assert_int_equal(tw_uring_attach(&u, s.w, &ring), 0);
	tw_wheel_destroy(s.w);
	assert_int_equal(tw_uring_detach(u), 0);
	assert_int_equal(io_uring_submit(&ring), 1);
	assert_int_equal(io_uring_wait_cqe(&ring, &cqe), 0);
	assert_true(tw_uring_is_tagged(cqe->user_data));
	assert_int_equal(cqe->res, 0);
	io_uring_cqe_seen(&ring, cqe);
	io_uring_queue_exit(&ring);
}

static void owned_destroy_from_callback(unsigned wait)
{
	struct tw_uring_loop_options opt = { .wait = wait };
	struct tw_uring_loop *u;

	arm_three();
	tw_test_loop_init(&u, s.w, &opt);
	/* Nothing is left to wait for once the wheel is gone. */
	assert_int_equal(tw_uring_run(u), 0);
	assert_int_equal(s.destroyed, 1);
	assert_int_equal(tw_uring_loop_close(u), 0);
	assert_int_equal(s.fired_after, 0);
}

static void owned_wait_arg(void **state)
{
	(void)state;
	owned_destroy_from_callback(TW_URING_WAIT_ARG);
}

static void owned_wait_sqe(void **state)
{
	(void)state;
	owned_destroy_from_callback(TW_URING_WAIT_SQE);
}

/* A wheel destroyed by its own callback lives until the advance returns;
 * no backend may take it on meanwhile, and a refused one leaves nothing. */
static int refused_attach, refused_loop;

static void destroy_then_attach(struct tw_timer *t)
{
	struct io_uring ring;
	struct tw_uring *u = NULL;
	struct tw_uring_loop *l = NULL;

	(void)t;
	tw_wheel_destroy(s.w);
	tw_test_ring_init(&ring, 8, 0);
	refused_attach = tw_uring_attach(&u, s.w, &ring);
	assert_int_equal(io_uring_sq_ready(&ring), 0);
	io_uring_queue_exit(&ring);
	refused_loop = tw_uring_loop_init(&l, s.w, NULL);
	assert_null(u);
	assert_null(l);
}

static void backend_refuses_destroyed_wheel(void **state)
{
	struct tw_timer t;

	(void)state;
	memset(&s, 0, sizeof(s));
	assert_int_equal(tw_wheel_create(&s.w, NULL, 0), 0);
	tw_timer_init(&t, destroy_then_attach);
	assert_int_equal(tw_add(s.w, &t, 1 * MS), 0);
	assert_int_equal(tw_advance(s.w, 2 * MS), 1); /* and releases the wheel */
	assert_int_equal(refused_attach, -EINVAL);
	assert_int_equal(refused_loop, -EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(attached_destroy_from_callback),
		cmocka_unit_test(attached_destroy_outside),
		cmocka_unit_test(attached_destroy_then_detach),
		cmocka_unit_test(owned_wait_arg),
		cmocka_unit_test(owned_wait_sqe),
		cmocka_unit_test(backend_refuses_destroyed_wheel),
	};

	return tw_test_exit(cmocka_run_group_tests_name("uring destroy", tests, NULL, NULL));
}
