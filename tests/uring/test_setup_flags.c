/* SPDX-License-Identifier: MIT */
/*
 * Every IORING_SETUP_* flag a program can hand the backend: on its own
 * ring (tw_uring_attach()) or through tw_uring_loop_options.setup_flags.
 * Each one either works, timers firing on time on a real ring, or is
 * refused with the documented error, changing nothing; none may hang.
 */
#include "helpers.h"

#include <sys/syscall.h>
#include <unistd.h>

#define MS 1000000ull

static int fired;

static void on_fire(struct tw_timer *t)
{
	assert_true(tw_uring_now() >= t->expires);
	fired++;
}

static int hook(struct tw_wheel *w, uint64_t next, void *arg)
{
	(void)w;
	(void)next;
	(void)arg;
	return 0;
}

/* A refused call must leave the wheel without a hook, so another backend
 * can still take it. */
static void assert_no_hook(struct tw_wheel *w)
{
	assert_int_equal(tw_set_notify(w, hook, NULL), 0);
	assert_int_equal(tw_set_notify(w, NULL, NULL), 0);
}

/*
 * The kernel refuses IORING_OP_TIMEOUT on an IOPOLL ring (-EINVAL): the
 * backend used to accept such a ring, and then no timer ever fired.
 */
static void iopoll_ring_refused(void **state)
{
	struct io_uring ring;
	struct tw_wheel *w;
	struct tw_uring *u = (struct tw_uring *)&ring; /* must stay untouched */
	struct tw_timer t;

	(void)state;
	tw_test_ring_init(&ring, 8, IORING_SETUP_IOPOLL);
	assert_int_equal(tw_wheel_create(&w, NULL, tw_uring_now()), 0);
	tw_timer_init(&t, on_fire);
	assert_int_equal(tw_add(w, &t, tw_uring_now() + 5 * MS), 0);
	assert_int_equal(tw_uring_attach(&u, w, &ring), -EOPNOTSUPP);
	assert_ptr_equal(u, (struct tw_uring *)&ring);
	assert_int_equal(io_uring_sq_ready(&ring), 0); /* nothing queued */
	assert_no_hook(w);
	assert_true(tw_pending(&t));
	io_uring_queue_exit(&ring);
	tw_wheel_destroy(w);
}

static int loop_init(struct tw_wheel *w, unsigned flags, unsigned wait, struct tw_uring_loop **u)
{
	struct tw_uring_loop_options opt = { .setup_flags = flags, .wait = wait };

	return tw_uring_loop_init(u, w, &opt);
}

/* Refused before any ring exists, in both wait modes. */
static void refused(unsigned flags, int err)
{
	for (unsigned wait = TW_URING_WAIT_ARG; wait <= TW_URING_WAIT_SQE; wait++) {
		struct tw_wheel *w;
		struct tw_uring_loop *u = NULL;

		int r;

		assert_int_equal(tw_wheel_create(&w, NULL, tw_uring_now()), 0);
		r = loop_init(w, flags, wait, &u);
		if (r != err)
			tw_test_skip_if_refused(r);
		assert_int_equal(r, err);
		assert_null(u);
		assert_no_hook(w);
		tw_wheel_destroy(w);
	}
}

static void iopoll_loop_refused(void **state)
{
	(void)state;
	refused(IORING_SETUP_IOPOLL, -EOPNOTSUPP);
	refused(IORING_SETUP_IOPOLL | IORING_SETUP_SINGLE_ISSUER, -EOPNOTSUPP);
	refused(IORING_SETUP_SQPOLL, -EOPNOTSUPP);
	refused(IORING_SETUP_SQPOLL | IORING_SETUP_SQ_AFF, -EOPNOTSUPP);
}

/* Flags that need io_uring_params fields the options do not carry, and
 * every bit this liburing does not know (it could misread such a ring). */
static void unsupported_flags_refused(void **state)
{
	(void)state;
	refused(IORING_SETUP_SQ_AFF, -EINVAL);
	refused(IORING_SETUP_CQSIZE, -EINVAL);
	refused(IORING_SETUP_ATTACH_WQ, -EINVAL);
	for (unsigned bit = 14; bit < 32; bit++)
		refused(1u << bit, -EINVAL);
}

/* A short timer and a far one through tw_uring_run(): the short one fires
 * on time, and the loop ends when the far one is cancelled from it. */
static struct tw_timer far;
static struct tw_wheel *cur;

static void on_fire_then_cancel(struct tw_timer *t)
{
	on_fire(t);
	assert_int_equal(tw_del(cur, &far), 1);
}

static void runs(unsigned flags, unsigned wait)
{
	struct tw_uring_loop *u;
	struct tw_timer t;
	int r;

	fired = 0;
	assert_int_equal(tw_wheel_create(&cur, NULL, tw_uring_now()), 0);
	tw_test_loop_init(&u, cur, &(struct tw_uring_loop_options){ .setup_flags = flags, .wait = wait });
	if (flags & IORING_SETUP_R_DISABLED) {
		/* Not enabled yet: the loop says so instead of waiting. */
		tw_timer_init(&t, on_fire);
		assert_int_equal(tw_add(cur, &t, tw_uring_now() + 5 * MS), 0);
		r = tw_uring_run(u);
		assert_int_equal(r, -EBADFD);
		assert_int_equal(fired, 0);
		/* liburing 2.3 has no io_uring_enable_rings(). */
		assert_int_equal(syscall(__NR_io_uring_register, tw_uring_loop_ring(u)->ring_fd,
					 IORING_REGISTER_ENABLE_RINGS, NULL, 0), 0);
		assert_int_equal(tw_del(cur, &t), 1);
	}
	tw_timer_init(&t, on_fire_then_cancel);
	tw_timer_init(&far, on_fire);
	assert_int_equal(tw_add(cur, &far, tw_uring_now() + 60000 * MS), 0);
	assert_int_equal(tw_add(cur, &t, tw_uring_now() + 5 * MS), 0);
	assert_int_equal(tw_uring_run(u), 0);
	assert_int_equal(fired, 1);
	assert_false(tw_pending(&far));
	assert_int_equal(tw_uring_loop_close(u), 0);
	tw_wheel_destroy(cur);
}

static void accepted_flags_work(void **state)
{
	static const unsigned ok[] = {
		0,
		IORING_SETUP_CLAMP,
		IORING_SETUP_R_DISABLED,
		IORING_SETUP_SUBMIT_ALL,
		IORING_SETUP_COOP_TASKRUN,
		IORING_SETUP_COOP_TASKRUN | IORING_SETUP_TASKRUN_FLAG,
		IORING_SETUP_SQE128,
		IORING_SETUP_CQE32,
		IORING_SETUP_SINGLE_ISSUER,
		IORING_SETUP_SINGLE_ISSUER | IORING_SETUP_DEFER_TASKRUN,
		IORING_SETUP_SINGLE_ISSUER | IORING_SETUP_DEFER_TASKRUN | IORING_SETUP_TASKRUN_FLAG |
			IORING_SETUP_SQE128 | IORING_SETUP_CQE32 | IORING_SETUP_SUBMIT_ALL |
			IORING_SETUP_CLAMP,
	};

	(void)state;
	for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
		runs(ok[i], TW_URING_WAIT_ARG);
		runs(ok[i], TW_URING_WAIT_SQE);
	}
}

/* Combinations the kernel itself refuses come back as its error. */
static void kernel_refusals_returned(void **state)
{
	(void)state;
	refused(IORING_SETUP_TASKRUN_FLAG, -EINVAL);  /* needs COOP or DEFER_TASKRUN */
	refused(IORING_SETUP_DEFER_TASKRUN, -EINVAL); /* needs SINGLE_ISSUER */
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(iopoll_ring_refused),
		cmocka_unit_test(iopoll_loop_refused),
		cmocka_unit_test(unsupported_flags_refused),
		cmocka_unit_test(accepted_flags_work),
		cmocka_unit_test(kernel_refusals_returned),
	};

	return tw_test_exit(cmocka_run_group_tests_name("uring setup flags", tests, NULL, NULL));
}
