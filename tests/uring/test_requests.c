/* SPDX-License-Identifier: MIT */
/*
 * Requests from another thread on the io_uring backend, real ring, real
 * clock: the owned loop sleeps with no timer armed (only a read on a pipe
 * in flight keeps it running); a worker thread arms a timer 20 ms ahead
 * with tw_post_mod(). The backend's wake (a completion posted to the ring)
 * must end the loop's wait so that the timer fires, never early. Then the
 * worker cancels a timer 10 s away and waits for the cancel to be done.
 * With TIMERWHEEL_URING_WAKE=eventfd (the path of kernels before 6.13,
 * forced) the wake is a write to an eventfd the backend polls on the ring,
 * and the test checks that the backend opened one.
 */
#define _GNU_SOURCE
#include "helpers.h"

#include <pthread.h>
#include <sys/eventfd.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define MS 1000000ull

static struct tw_wheel *wheel;
static struct tw_uring_loop *loop;
static int pipefd[2];
static char byte;
static struct tw_timer near_timer, far_timer;
static struct tw_request req_near, req_far;
static uint64_t posted_at, fired_at, near_expiry;
static int fired_near, fired_far, cancel_result = 99, worker_rc[4];

static void on_near(struct tw_timer *t)
{
	fired_at = tw_uring_now();
	near_expiry = t->expires;
	__atomic_store_n(&fired_near, fired_near + 1, __ATOMIC_RELEASE);
	/* Done: let the loop end once the worker has cancelled the far one. */
}

static void on_far(struct tw_timer *t)
{
	(void)t;
	fired_far++;
}

static void on_cqe(struct tw_uring_loop *u, struct io_uring_cqe *cqe, void *arg)
{
	(void)u;
	(void)cqe;
	(void)arg;
}

static void *worker(void *arg)
{
	struct timespec ms50 = { 0, 50 * 1000000L };

	(void)arg;
	nanosleep(&ms50, NULL); /* the loop is asleep by now */
	/* No cmocka asserts here: they may only fail in the test's thread. */
	posted_at = tw_uring_now();
	worker_rc[0] = tw_post_mod(wheel, &req_near, &near_timer, posted_at + 20 * MS);
	/* A far timer, armed and then cancelled from here; the cancel is
	 * done only once the loop has applied it. */
	worker_rc[1] = tw_post_mod(wheel, &req_far, &far_timer, posted_at + 10000 * MS);
	worker_rc[2] = tw_request_wait_timeout(wheel, &req_far, 15000 * MS);
	worker_rc[3] = tw_post_del(wheel, &req_far, &far_timer);
	cancel_result = tw_request_wait_timeout(wheel, &req_far, 15000 * MS); /* -ETIMEDOUT: never applied */
	/* Give the near timer time to fire (generously: the machine may be
	 * loaded), then end the loop's read. */
	for (int i = 0; i < 500 && !__atomic_load_n(&fired_near, __ATOMIC_ACQUIRE); i++)
		nanosleep(&ms50, NULL);
	if (write(pipefd[1], "x", 1) != 1)
		worker_rc[3] = -errno;
	return NULL;
}

static bool eventfd_path(void)
{
	const char *v = getenv("TIMERWHEEL_URING_WAKE");

	return v && strcmp(v, "eventfd") == 0;
}

/*
 * Can this kernel post to a CQ from another thread without an SQE
 * (IORING_REGISTER_SEND_MSG_RING, 6.13)? Found by doing it, not as the
 * library asks (by the error a message to no ring gets), so that a wrong
 * reading of that error is caught here: a message to a ring of our own,
 * which either arrives on it or fails (an older kernel, a filter).
 */
#ifndef IORING_REGISTER_SEND_MSG_RING
#define IORING_REGISTER_SEND_MSG_RING 31
#endif
static bool kernel_has_send_msg_ring(void)
{
	struct io_uring ring;
	struct io_uring_sqe msg;
	struct io_uring_cqe *cqe;
	bool has = false;

	assert_int_equal(io_uring_queue_init(2, &ring, 0), 0);
	memset(&msg, 0, sizeof(msg));
	msg.opcode = IORING_OP_MSG_RING;
	msg.fd = ring.ring_fd;
	msg.addr = IORING_MSG_DATA;
	msg.off = 0x5e2d; /* the CQE's user_data */
	msg.len = 7;      /* its res */
	if (syscall(__NR_io_uring_register, -1, IORING_REGISTER_SEND_MSG_RING, &msg, 1) == 0) {
		assert_int_equal(io_uring_peek_cqe(&ring, &cqe), 0);
		assert_int_equal(cqe->user_data, 0x5e2d);
		assert_int_equal(cqe->res, 7);
		has = true;
	}
	io_uring_queue_exit(&ring);
	return has;
}

/* Eventfds this process has open. */
static int count_eventfds(void)
{
	char path[64], target[64];
	int n = 0;

	for (int fd = 0; fd < 1024; fd++) {
		ssize_t len;

		snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
		len = readlink(path, target, sizeof(target) - 1);
		if (len <= 0)
			continue;
		target[len] = 0;
		n += strstr(target, "eventfd") != NULL;
	}
	return n;
}

static void test_wake_from_another_thread(void **state)
{
	struct tw_uring_loop_options opt = { .cqe_fn = on_cqe };
	struct io_uring_sqe *sqe;
	pthread_t th;
	int r;

	(void)state;
	int eventfds_before = count_eventfds();

	assert_int_equal(tw_wheel_create(&wheel, NULL, tw_uring_now()), 0);
	r = tw_uring_loop_init(&loop, wheel, &opt);
	tw_test_skip_if_refused(r);
	assert_int_equal(r, 0);
	if (eventfd_path() || !kernel_has_send_msg_ring())
		assert_int_equal(count_eventfds(), eventfds_before + 1);
	else
		assert_int_equal(count_eventfds(), eventfds_before);
	assert_int_equal(pipe(pipefd), 0);
	tw_timer_init(&near_timer, on_near);
	tw_timer_init(&far_timer, on_far);
	sqe = tw_uring_get_sqe(loop);
	io_uring_prep_read(sqe, pipefd[0], &byte, 1, 0);
	io_uring_sqe_set_data64(sqe, 1);

	assert_int_equal(pthread_create(&th, NULL, worker, NULL), 0);
	assert_int_equal(tw_uring_run(loop), 0);
	pthread_join(th, NULL);

	assert_int_equal(worker_rc[0], 0);
	assert_int_equal(worker_rc[1], 0);
	assert_int_equal(worker_rc[2], 0); /* it was idle */
	assert_int_equal(worker_rc[3], 0);
	assert_int_equal(fired_near, 1);
	assert_true(fired_at >= near_expiry);
	assert_true(near_expiry >= posted_at + 20 * MS);
	assert_int_equal(cancel_result, 1); /* it was armed, and is no longer */
	assert_int_equal(fired_far, 0);
	assert_false(tw_pending(&far_timer));
	printf("woken from another thread: fired %.3f ms after the post, %.3f ms after its expiry\n",
	       (double)(fired_at - posted_at) / 1e6, (double)(fired_at - near_expiry) / 1e6);
	assert_int_equal(tw_uring_loop_close(loop), 0);
	assert_int_equal(count_eventfds(), eventfds_before); /* closed with the loop */
	tw_wheel_destroy(wheel);
	close(pipefd[0]);
	close(pipefd[1]);
}

/*
 * The eventfd path on the program's own ring (attached), forced: the poll
 * is an SQE of the backend's, so it obeys the chain rule (held back while
 * the program's chain is open, queued at the next completion handed over),
 * each wake-up queues it again, and detach leaves no descriptor behind.
 */
static struct tw_timer att_timer[2];
static int att_fired[2];
static uint64_t att_expiry[2], att_fired_at[2];

static void on_att(struct tw_timer *t)
{
	int i = t == &att_timer[1];

	att_fired_at[i] = tw_uring_now();
	att_expiry[i] = t->expires;
	__atomic_store_n(&att_fired[i], att_fired[i] + 1, __ATOMIC_RELEASE);
}

static struct tw_request att_req;

static void *att_worker(void *arg)
{
	struct timespec ms20 = { 0, 20 * 1000000L };

	(void)arg;
	for (int i = 0; i < 2; i++) {
		nanosleep(&ms20, NULL); /* the ring's thread is waiting by now */
		if (tw_post_mod(wheel, &att_req, &att_timer[i], tw_uring_now() + 10 * MS) != 0)
			worker_rc[i] = -1;
		/* Not tw_request_wait_timeout(): it wakes the loop itself, and
		 * would hide a post whose own wake-up was lost. Give up after
		 * 15 s, as the loop below does. */
		for (int k = 0; k < 750 && !tw_request_done(&att_req); k++)
			nanosleep(&ms20, NULL);
		if (!tw_request_done(&att_req))
			worker_rc[i] = -2;
		for (int k = 0; k < 500 && !__atomic_load_n(&att_fired[i], __ATOMIC_ACQUIRE); k++)
			nanosleep(&ms20, NULL);
	}
	return NULL;
}

static void test_eventfd_attached(void **state)
{
	struct io_uring ring;
	struct io_uring_sqe *sqe;
	struct io_uring_cqe *cqe;
	struct tw_uring *u;
	pthread_t th;
	int eventfds_before = count_eventfds();

	(void)state;
	setenv("TIMERWHEEL_URING_WAKE", "eventfd", 1);
	tw_test_ring_init(&ring, 8, 0);
	assert_int_equal(tw_wheel_create(&wheel, NULL, tw_uring_now()), 0);
	for (int i = 0; i < 2; i++)
		tw_timer_init(&att_timer[i], on_att);
	memset(&att_req, 0, sizeof(att_req));
	memset(worker_rc, 0, sizeof(worker_rc));

	/* The program's chain is open: the poll waits. */
	sqe = io_uring_get_sqe(&ring);
	io_uring_prep_nop(sqe);
	io_uring_sqe_set_flags(sqe, IOSQE_IO_LINK);
	io_uring_sqe_set_data64(sqe, 1);
	assert_int_equal(tw_uring_attach(&u, wheel, &ring), 0);
	assert_int_equal(count_eventfds(), eventfds_before + 1);
	assert_int_equal(io_uring_sq_ready(&ring), 1); /* nothing joined the chain */
	sqe = io_uring_get_sqe(&ring);
	io_uring_prep_nop(sqe);
	io_uring_sqe_set_data64(sqe, 2);
	assert_int_equal(io_uring_submit(&ring), 2);
	assert_int_equal(io_uring_wait_cqe(&ring, &cqe), 0);
	assert_int_equal(tw_uring_handle_cqe(u, cqe), 0); /* the program's: now the poll */
	io_uring_cqe_seen(&ring, cqe);
	assert_int_equal(io_uring_sq_ready(&ring), 1);
	assert_int_equal(io_uring_submit(&ring), 1);

	/* Two wake-ups from another thread, each a poll completion; the
	 * second needs the poll queued again after the first. */
	assert_int_equal(pthread_create(&th, NULL, att_worker, NULL), 0);
	for (uint64_t give_up = tw_uring_now() + 15000 * MS;
	     !__atomic_load_n(&att_fired[1], __ATOMIC_ACQUIRE) && tw_uring_now() < give_up;) {
		struct __kernel_timespec ms100 = { 0, 100 * 1000000L };

		io_uring_submit_and_wait_timeout(&ring, &cqe, 1, &ms100, NULL);
		while (io_uring_peek_cqe(&ring, &cqe) == 0) {
			tw_uring_handle_cqe(u, cqe);
			io_uring_cqe_seen(&ring, cqe);
		}
	}
	pthread_join(th, NULL);
	assert_int_equal(worker_rc[0], 0);
	assert_int_equal(worker_rc[1], 0);
	for (int i = 0; i < 2; i++) {
		assert_int_equal(att_fired[i], 1);
		assert_true(att_fired_at[i] >= att_expiry[i]);
	}

	assert_int_equal(tw_uring_detach(u), 0);
	assert_int_equal(count_eventfds(), eventfds_before);
	io_uring_submit(&ring);
	io_uring_queue_exit(&ring);
	tw_wheel_destroy(wheel);
	unsetenv("TIMERWHEEL_URING_WAKE");
}

/*
 * Letting go settles what other threads queued: a request still queued
 * when the program detaches (or closes its owned loop) is applied first,
 * and the program's wheel keeps the timer it armed.
 */
static struct tw_request settle_req;
static int settle_rc;

static void *settle_poster(void *arg)
{
	settle_rc = tw_post_mod(wheel, &settle_req, arg, tw_uring_now() + 60000 * MS);
	return NULL;
}

static void post_and_join(struct tw_timer *t)
{
	pthread_t th;

	memset(&settle_req, 0, sizeof(settle_req));
	settle_rc = 99;
	assert_int_equal(pthread_create(&th, NULL, settle_poster, t), 0);
	assert_int_equal(pthread_join(th, NULL), 0);
	assert_int_equal(settle_rc, 0);
	assert_false(tw_request_done(&settle_req));
}

static void test_detach_applies_queued_requests(void **state)
{
	struct io_uring ring;
	struct tw_uring *u;
	struct tw_uring_loop *l;
	struct tw_timer t;

	(void)state;
	tw_test_ring_init(&ring, 8, 0);
	assert_int_equal(tw_wheel_create(&wheel, NULL, tw_uring_now()), 0);
	tw_timer_init(&t, on_far);
	assert_int_equal(tw_uring_attach(&u, wheel, &ring), 0);
	post_and_join(&t);
	/* The wake-up's poll, on kernels that wake by eventfd, is queued
	 * already; the timer the request arms is left to the program: the
	 * detach queues no timeout for it, not even one turned into a NOP. */
	unsigned queued = io_uring_sq_ready(&ring);
	assert_int_equal(tw_uring_detach(u), 0);
	assert_int_equal(io_uring_sq_ready(&ring), queued);
	assert_true(tw_request_done(&settle_req));
	assert_int_equal(tw_request_result(&settle_req), 0);
	assert_true(tw_pending(&t));
	assert_int_equal(tw_del(wheel, &t), 1);
	io_uring_queue_exit(&ring);

	tw_test_loop_init(&l, wheel, NULL);
	post_and_join(&t);
	assert_int_equal(tw_uring_loop_close(l), 0);
	assert_true(tw_request_done(&settle_req));
	assert_int_equal(tw_request_result(&settle_req), 0);
	assert_true(tw_pending(&t));
	tw_wheel_destroy(wheel);
	assert_false(tw_pending(&t));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_wake_from_another_thread),
		cmocka_unit_test(test_eventfd_attached),
		cmocka_unit_test(test_detach_applies_queued_requests),
	};
	return tw_test_exit(cmocka_run_group_tests(tests, NULL, NULL));
}
