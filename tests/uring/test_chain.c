/* SPDX-License-Identifier: MIT */
/*
 * The program's link chains and the backend's SQEs, on a real ring: an SQE
 * of the backend never joins a chain the program left open in the SQ, the
 * chain stays whole, and the timer armed meanwhile still fires on time.
 * Nor does tw_uring_get_sqe() cut a chain on an owned loop's full SQ.
 */
#include "helpers.h"

#include <unistd.h>

#define MS 1000000ull

enum { UD_READ = 1, UD_NOP = 2 };

static struct {
	struct io_uring ring;
	struct tw_wheel *w;
	struct tw_uring *u;
	struct tw_timer early, far;
	int fds[2];
	int fired;
	uint64_t fired_at;
	/* completions of the program's chain, in order of arrival */
	uint64_t seen[2];
	int seen_res[2];
	int nseen;
} s;

static void on_early(struct tw_timer *t)
{
	s.fired++;
	s.fired_at = tw_uring_now();
	assert_true(s.fired_at >= t->expires);
	/* Only now does the chain's first request complete: the timer must
	 * not have waited for it. */
	assert_int_equal(s.nseen, 0);
	assert_int_equal(write(s.fds[1], "x", 1), 1);
}

static void on_never(struct tw_timer *t)
{
	(void)t;
	fail_msg("the far timer fired");
}

static void setup(unsigned ring_flags)
{
	memset(&s, 0, sizeof(s));
	tw_test_ring_init(&s.ring, 16, ring_flags);
	assert_int_equal(pipe(s.fds), 0);
	assert_int_equal(tw_wheel_create(&s.w, NULL, tw_uring_now()), 0);
	tw_timer_init(&s.early, on_early);
	tw_timer_init(&s.far, on_never);
}

static void teardown(void)
{
	assert_int_equal(tw_uring_detach(s.u), 0);
	io_uring_queue_exit(&s.ring);
	tw_wheel_destroy(s.w);
	close(s.fds[0]);
	close(s.fds[1]);
}

/* A read on the pipe that stays pending until the timer writes to it,
 * linked to a NOP. */
static void open_chain(unsigned link)
{
	static char buf[1]; /* exactly what the timer writes: a short read would break the chain */
	struct io_uring_sqe *sqe = io_uring_get_sqe(&s.ring);

	assert_non_null(sqe);
	io_uring_prep_read(sqe, s.fds[0], buf, sizeof(buf), 0);
	io_uring_sqe_set_data64(sqe, UD_READ);
	io_uring_sqe_set_flags(sqe, link);
}

static void close_chain(void)
{
	struct io_uring_sqe *sqe = io_uring_get_sqe(&s.ring);

	assert_non_null(sqe);
	io_uring_prep_nop(sqe);
	io_uring_sqe_set_data64(sqe, UD_NOP);
}

/*
 * Runs the program's loop until both requests of the chain completed. The
 * 10 s limit only stops a broken backend from hanging the test: the timer
 * is due in 20 ms and the far timer in 60 s.
 */
static void run_until_chain_done(void)
{
	uint64_t limit = tw_uring_now() + 10000 * MS;

	while (s.nseen < 2) {
		struct io_uring_cqe *cqe;
		struct __kernel_timespec ts = { .tv_sec = 0, .tv_nsec = 50 * (long long)MS };

		assert_true(tw_uring_now() < limit);
		io_uring_submit(&s.ring);
		if (io_uring_wait_cqe_timeout(&s.ring, &cqe, &ts) != 0)
			continue;
		while (io_uring_peek_cqe(&s.ring, &cqe) == 0) {
			if (tw_uring_handle_cqe(s.u, cqe) == 0) {
				assert_false(tw_uring_is_tagged(cqe->user_data));
				assert_true(s.nseen < 2);
				s.seen[s.nseen] = cqe->user_data;
				s.seen_res[s.nseen] = cqe->res;
				s.nseen++;
			}
			io_uring_cqe_seen(&s.ring, cqe);
		}
	}
	assert_int_equal(s.fired, 1);
	/* The chain is whole: the NOP ran after the read, not on its own. */
	assert_int_equal(s.seen[0], UD_READ);
	assert_int_equal(s.seen_res[0], 1);
	assert_int_equal(s.seen[1], UD_NOP);
	assert_int_equal(s.seen_res[1], 0);
}

static void earlier_timer(unsigned ring_flags, unsigned link)
{
	struct tw_uring_stats st;
	uint64_t now;

	setup(ring_flags);
	now = tw_uring_now();
	assert_int_equal(tw_add(s.w, &s.far, now + 60000 * MS), 0);
	assert_int_equal(tw_uring_attach(&s.u, s.w, &s.ring), 0);
	assert_int_equal(io_uring_submit(&s.ring), 1); /* the far timeout, in flight */

	open_chain(link);
	assert_int_equal(tw_add(s.w, &s.early, tw_uring_now() + 20 * MS), 0);
	assert_int_equal(io_uring_sq_ready(&s.ring), 1); /* nothing joined the chain */
	close_chain();
	run_until_chain_done();
	assert_true(tw_pending(&s.far));

	assert_int_equal(tw_uring_get_stats(s.u, &st), 0);
	assert_int_equal(st.chain_defers, 1);
	assert_int_equal(st.kicks, 1);
	assert_int_equal(st.errors, 0);
	tw_del(s.w, &s.far);
	teardown();
}

static void earlier_timer_link(void **state)
{
	(void)state;
	earlier_timer(0, IOSQE_IO_LINK);
}

static void earlier_timer_hardlink(void **state)
{
	(void)state;
	earlier_timer(0, IOSQE_IO_HARDLINK);
}

/* SQEs of 128 bytes: the backend finds the program's last SQE all the same. */
static void earlier_timer_sqe128(void **state)
{
	(void)state;
	earlier_timer(IORING_SETUP_SQE128, IOSQE_IO_LINK);
}

/* The wheel was empty: no timeout of ours to cancel, so the backend posts
 * a completion of its own to the ring (kernel 6.13 and later). */
static void first_timer(void **state)
{
	struct tw_uring_stats st;

	(void)state;
	setup(0);
	assert_int_equal(tw_uring_attach(&s.u, s.w, &s.ring), 0);
	open_chain(IOSQE_IO_LINK);
	assert_int_equal(tw_add(s.w, &s.early, tw_uring_now() + 20 * MS), 0);
	assert_int_equal(io_uring_sq_ready(&s.ring), 1);
	assert_int_equal(tw_uring_get_stats(s.u, &st), 0);
	assert_int_equal(st.chain_defers, 1);
	if (st.kicks == 0) {
		/* Documented: the SQE then waits for the next call into the
		 * backend, which this program never makes. */
		print_message("SKIP: this kernel has no IORING_REGISTER_SEND_MSG_RING (6.13); "
			      "a first timer armed inside an open chain is NOT tested\n");
		tw_test_skips++;
		teardown();
		skip();
	}
	close_chain();
	run_until_chain_done();
	teardown();
}

/* Detaching with a chain open cancels the timeout without an SQE. */
static void detach_inside_chain(void **state)
{
	struct io_uring_cqe *cqe;
	int tagged = 0;

	(void)state;
	setup(0);
	assert_int_equal(tw_add(s.w, &s.far, tw_uring_now() + 60000 * MS), 0);
	assert_int_equal(tw_uring_attach(&s.u, s.w, &s.ring), 0);
	assert_int_equal(io_uring_submit(&s.ring), 1);
	open_chain(IOSQE_IO_LINK);
	assert_int_equal(tw_uring_detach(s.u), 0);
	assert_int_equal(io_uring_sq_ready(&s.ring), 1);
	close_chain();
	assert_int_equal(io_uring_submit(&s.ring), 2);
	assert_int_equal(write(s.fds[1], "x", 1), 1);
	while (s.nseen < 2) {
		assert_int_equal(io_uring_wait_cqe(&s.ring, &cqe), 0);
		if (tw_uring_is_tagged(cqe->user_data)) {
			assert_int_equal(cqe->res, -ECANCELED);
			tagged++;
		} else {
			s.seen[s.nseen] = cqe->user_data;
			s.seen_res[s.nseen++] = cqe->res;
		}
		io_uring_cqe_seen(&s.ring, cqe);
	}
	if (!tagged) {
		assert_int_equal(io_uring_wait_cqe(&s.ring, &cqe), 0);
		assert_true(tw_uring_is_tagged(cqe->user_data));
		io_uring_cqe_seen(&s.ring, cqe);
	}
	assert_int_equal(s.seen[0], UD_READ);
	assert_int_equal(s.seen[1], UD_NOP);
	assert_int_equal(s.seen_res[1], 0);
	assert_true(tw_pending(&s.far)); /* detach leaves the wheel alone */
	io_uring_queue_exit(&s.ring);
	tw_wheel_destroy(s.w);
	close(s.fds[0]);
	close(s.fds[1]);
}

/*
 * An owned loop's tw_uring_get_sqe() on a full SQ. With the program's chain
 * open it returns NULL and submits nothing, so the chain stays whole: its
 * first request fails, and every other one, even the last that filled the
 * SQ, is cancelled with it (with IOSQE_IO_LINK; a hard link runs them).
 * Without an open chain it submits to make room.
 */
#define FULL_ENTRIES 8
#define UD_FIRST 100

static int full_res[FULL_ENTRIES + 1];
static unsigned full_seen;

static void on_full_cqe(struct tw_uring_loop *l, struct io_uring_cqe *cqe, void *arg)
{
	(void)l;
	(void)arg;
	assert_true(cqe->user_data >= UD_FIRST && cqe->user_data <= UD_FIRST + FULL_ENTRIES);
	full_res[cqe->user_data - UD_FIRST] = cqe->res;
	full_seen++;
}

static void owned_full_sq(unsigned link)
{
	struct tw_uring_loop_options opt = { .entries = FULL_ENTRIES, .cqe_fn = on_full_cqe };
	struct tw_uring_loop *l;
	struct io_uring *ring;
	struct io_uring_sqe *sqe = NULL;
	static char buf[1];
	unsigned n;

	memset(&s, 0, sizeof(s));
	full_seen = 0;
	assert_int_equal(tw_wheel_create(&s.w, NULL, tw_uring_now()), 0);
	tw_test_loop_init(&l, s.w, &opt);
	ring = tw_uring_loop_ring(l);
	io_uring_submit(ring); /* what the backend queued at attach: the SQ is the chain's alone */
	n = io_uring_sq_space_left(ring);
	assert_true(n >= 2 && n <= FULL_ENTRIES);
	for (unsigned i = 0; i < n; i++) {
		sqe = tw_uring_get_sqe(l);
		assert_non_null(sqe);
		if (i == 0)
			io_uring_prep_read(sqe, -1, buf, sizeof(buf), 0); /* fails: -EBADF */
		else
			io_uring_prep_nop(sqe);
		io_uring_sqe_set_data64(sqe, UD_FIRST + i);
		io_uring_sqe_set_flags(sqe, link);
	}
	if (link) {
		assert_null(tw_uring_get_sqe(l));
		assert_int_equal(io_uring_sq_ready(ring), n); /* nothing submitted */
		sqe->flags &= (__u8)~link; /* the program ends its chain with the SQE it has */
	} else {
		sqe = tw_uring_get_sqe(l);
		assert_non_null(sqe);
		assert_int_equal(io_uring_sq_ready(ring), 1); /* the n went to the kernel */
		io_uring_prep_nop(sqe);
		io_uring_sqe_set_data64(sqe, UD_FIRST + n);
		n++;
	}
	assert_int_equal(tw_uring_run(l), 0);
	assert_int_equal(full_seen, n);
	assert_int_equal(full_res[0], -EBADF);
	for (unsigned i = 1; i < n; i++) /* a hard link runs on after a failure */
		assert_int_equal(full_res[i], link == IOSQE_IO_LINK ? -ECANCELED : 0);
	assert_int_equal(tw_uring_loop_close(l), 0);
	tw_wheel_destroy(s.w);
}

static void owned_full_sq_chain_link(void **state)
{
	(void)state;
	owned_full_sq(IOSQE_IO_LINK);
}

static void owned_full_sq_chain_hardlink(void **state)
{
	(void)state;
	owned_full_sq(IOSQE_IO_HARDLINK);
}

static void owned_full_sq_no_chain(void **state)
{
	(void)state;
	owned_full_sq(0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(owned_full_sq_chain_link),
		cmocka_unit_test(owned_full_sq_chain_hardlink),
		cmocka_unit_test(owned_full_sq_no_chain),
		cmocka_unit_test(earlier_timer_link),
		cmocka_unit_test(earlier_timer_hardlink),
		cmocka_unit_test(earlier_timer_sqe128),
		cmocka_unit_test(first_timer),
		cmocka_unit_test(detach_inside_chain),
	};

	return tw_test_exit(cmocka_run_group_tests_name("uring chain", tests, NULL, NULL));
}
