/* SPDX-License-Identifier: MIT */
/*
 * Requests from another thread on the io_uring backend, real ring, real
 * clock: the owned loop sleeps with no timer armed (only a read on a pipe
 * in flight keeps it running); a worker thread arms a timer 20 ms ahead
 * with tw_post_mod(). The backend's wake (a completion posted to the ring)
 * must end the loop's wait so that the timer fires, never early. Then the
 * worker cancels a timer 10 s away and waits for the cancel to be done.
 * On kernels without IORING_REGISTER_SEND_MSG_RING (before 6.13) the wake
 * cannot be sent: the test says so and skips.
 */
#define _GNU_SOURCE
#include "helpers.h"

#include <pthread.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#define MS 1000000ull

static struct tw_wheel *wheel;
static struct tw_uring *loop;
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

static void on_cqe(struct tw_uring *u, struct io_uring_cqe *cqe, void *arg)
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
	worker_rc[2] = tw_request_wait(wheel, &req_far);
	worker_rc[3] = tw_post_del(wheel, &req_far, &far_timer);
	cancel_result = tw_request_wait(wheel, &req_far);
	/* Give the near timer time to fire (generously: the machine may be
	 * loaded), then end the loop's read. */
	for (int i = 0; i < 500 && !__atomic_load_n(&fired_near, __ATOMIC_ACQUIRE); i++)
		nanosleep(&ms50, NULL);
	if (write(pipefd[1], "x", 1) != 1)
		worker_rc[3] = -errno;
	return NULL;
}

static bool kernel_has_send_msg_ring(void)
{
	struct utsname u;
	int major = 0, minor = 0;

	if (uname(&u) != 0 || sscanf(u.release, "%d.%d", &major, &minor) != 2)
		return false;
	return major > 6 || (major == 6 && minor >= 13);
}

static void test_wake_from_another_thread(void **state)
{
	struct tw_uring_loop_options opt = { .cqe_fn = on_cqe };
	struct io_uring_sqe *sqe;
	pthread_t th;
	int r;

	(void)state;
	if (!kernel_has_send_msg_ring()) {
		print_message("SKIP: the kernel lacks IORING_REGISTER_SEND_MSG_RING (6.13)\n");
		tw_test_skips++;
		skip();
	}
	assert_int_equal(tw_wheel_create(&wheel, NULL, tw_uring_now()), 0);
	r = tw_uring_loop_init(&loop, wheel, &opt);
	tw_test_skip_if_refused(r);
	assert_int_equal(r, 0);
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
	tw_wheel_destroy(wheel);
	close(pipefd[0]);
	close(pipefd[1]);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_wake_from_another_thread),
	};
	return tw_test_exit(cmocka_run_group_tests(tests, NULL, NULL));
}
