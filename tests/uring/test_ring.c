/* SPDX-License-Identifier: MIT */
/*
 * The backend living on a ring with other work: detaching or closing with
 * timers armed, and timers firing among NOPs and pipe reads.
 */
#include "helpers.h"

#include <time.h>
#include <unistd.h>

#define MS 1000000ull

struct rec {
	struct tw_timer t;
	uint64_t fired_at;
	int fired;
};

static int pipe_wr = -1;
static unsigned early;

static void on_fire(struct tw_timer *t)
{
	struct rec *r = tw_container_of(t, struct rec, t);

	r->fired++;
	r->fired_at = tw_uring_now();
	if (r->fired_at < t->expires)
		early++;
	if (pipe_wr >= 0)
		assert_int_equal(write(pipe_wr, "x", 1), 1);
}

/* Collects tagged CQEs until @want arrived or @ms passed; fails on any other. */
static int collect_tagged(struct io_uring *ring, int want, unsigned ms)
{
	uint64_t end = tw_uring_now() + ms * MS;
	int got = 0;

	while (got < want && tw_uring_now() < end) {
		struct io_uring_cqe *cqe;
		struct __kernel_timespec ts = { .tv_sec = 0, .tv_nsec = 10 * (long long)MS };

		if (io_uring_wait_cqe_timeout(ring, &cqe, &ts) != 0)
			continue;
		assert_true(tw_uring_is_tagged(cqe->user_data));
		got++;
		io_uring_cqe_seen(ring, cqe);
	}
	return got;
}

static void run_attached_until(struct io_uring *ring, struct tw_uring *u, const int *flag)
{
	while (!*flag) {
		struct io_uring_cqe *cqe;

		assert_true(io_uring_submit_and_wait(ring, 1) >= 0);
		while (io_uring_peek_cqe(ring, &cqe) == 0) {
			assert_int_equal(tw_uring_handle_cqe(u, cqe), 1);
			io_uring_cqe_seen(ring, cqe);
		}
	}
}

static void detach_in_flight_then_reattach(void **state)
{
	struct io_uring ring;
	struct tw_wheel *w;
	struct tw_uring *u;
	struct rec r = { .fired = 0 };

	(void)state;
	tw_test_ring_init(&ring, 16, 0);
	assert_int_equal(tw_wheel_create(&w, NULL, tw_uring_now()), 0);
	assert_int_equal(tw_uring_attach(&u, w, &ring), 0);
	tw_timer_init(&r.t, on_fire);
	assert_int_equal(tw_add(w, &r.t, tw_uring_now() + 150 * MS), 0);
	assert_int_equal(io_uring_submit(&ring), 1);
	assert_int_equal(tw_uring_detach(u), 0);
	/* The removal and the cancelled timeout both come back tagged. */
	assert_int_equal(io_uring_submit(&ring), 1);
	assert_int_equal(collect_tagged(&ring, 2, 100), 2);
	assert_true(tw_pending(&r.t));
	assert_int_equal(r.fired, 0);

	/* The wheel is intact: attach again and the timer fires on time. */
	assert_int_equal(tw_uring_attach(&u, w, &ring), 0);
	run_attached_until(&ring, u, &r.fired);
	assert_int_equal(r.fired, 1);
	assert_true(r.fired_at >= r.t.expires);
	assert_int_equal(tw_uring_detach(u), 0);
	io_uring_queue_exit(&ring);
	tw_wheel_destroy(w);
}

static void detach_before_submit(void **state)
{
	struct io_uring ring;
	struct tw_wheel *w;
	struct tw_uring *u;
	struct rec r = { .fired = 0 }, r2 = { .fired = 0 };

	(void)state;
	tw_test_ring_init(&ring, 16, 0);
	assert_int_equal(tw_wheel_create(&w, NULL, tw_uring_now()), 0);
	assert_int_equal(tw_uring_attach(&u, w, &ring), 0);
	tw_timer_init(&r.t, on_fire);
	assert_int_equal(tw_add(w, &r.t, tw_uring_now() + 20 * MS), 0);
	assert_int_equal(io_uring_sq_ready(&ring), 1);
	/* The queued timeout points into the backend: detach turns it into a NOP. */
	assert_int_equal(tw_uring_detach(u), 0);
	assert_int_equal(io_uring_submit(&ring), 1);
	assert_int_equal(collect_tagged(&ring, 1, 100), 1);
	/* No timeout was left behind. */
	assert_int_equal(collect_tagged(&ring, 1, 60), 0);

	/* Same with an update queued behind a submitted timeout. */
	assert_int_equal(tw_mod(w, &r.t, tw_uring_now() + 40 * MS), 1);
	assert_int_equal(tw_advance(w, tw_uring_now()), 0);
	assert_int_equal(tw_uring_attach(&u, w, &ring), 0);
	tw_timer_init(&r2.t, on_fire);
	assert_int_equal(io_uring_submit(&ring), 1);
	assert_int_equal(tw_add(w, &r2.t, tw_uring_now() + 5 * MS), 0);
	assert_int_equal(io_uring_sq_ready(&ring), 1);
	assert_int_equal(tw_uring_detach(u), 0);
	assert_int_equal(io_uring_submit(&ring), 2); /* the NOP and the removal */
	assert_int_equal(collect_tagged(&ring, 3, 100), 3);
	assert_int_equal(collect_tagged(&ring, 1, 60), 0);

	/* Destroying the wheel with timers armed leaves them idle, never called. */
	tw_wheel_destroy(w);
	assert_false(tw_pending(&r.t));
	assert_int_equal(r.fired + r2.fired, 0);
	io_uring_queue_exit(&ring);
}

static struct tw_uring_loop *stop_target;

static void stop_loop(struct tw_timer *t)
{
	on_fire(t);
	tw_uring_stop(stop_target);
}

static void close_with_timers(unsigned wait)
{
	struct tw_uring_loop_options opt = { .wait = wait };
	struct tw_wheel *w;
	struct tw_uring_loop *u;
	struct rec stopper = { .fired = 0 }, rest[8];

	assert_int_equal(tw_wheel_create(&w, NULL, tw_uring_now()), 0);
	tw_test_loop_init(&u, w, &opt);
	stop_target = u;
	tw_timer_init(&stopper.t, stop_loop);
	assert_int_equal(tw_add(w, &stopper.t, tw_uring_now() + 20 * MS), 0);
	for (int i = 0; i < 8; i++) {
		memset(&rest[i], 0, sizeof(rest[i]));
		tw_timer_init(&rest[i].t, on_fire);
		assert_int_equal(tw_add(w, &rest[i].t, tw_uring_now() + 10000 * MS), 0);
	}
	assert_int_equal(tw_uring_run(u), 0);
	assert_int_equal(stopper.fired, 1);
	assert_true(stopper.fired_at >= stopper.t.expires);
	assert_int_equal(tw_count(w), 8);
	assert_int_equal(tw_uring_loop_close(u), 0);
	/* The wheel is the program's again, its timers armed. */
	assert_int_equal(tw_count(w), 8);
	/* Closed without ever running, with a timeout SQE still queued. */
	tw_test_loop_init(&u, w, &opt);
	assert_int_equal(tw_uring_loop_close(u), 0);
	assert_int_equal(tw_count(w), 8);
	tw_wheel_destroy(w);
	for (int i = 0; i < 8; i++)
		assert_int_equal(rest[i].fired, 0);
}

static void close_owned_wait_arg(void **state)
{
	(void)state;
	close_with_timers(TW_URING_WAIT_ARG);
}

static void close_owned_wait_sqe(void **state)
{
	(void)state;
	close_with_timers(TW_URING_WAIT_SQE);
}

/* Timers write to a pipe that the ring reads, among a stream of NOPs. */
#define NT 2000
enum { UD_READ = 1, UD_NOP = 2 };

static struct rec traffic[NT];
static char rbuf[256];

static void arm_traffic(struct tw_wheel *w)
{
	uint64_t seed = 7, now = tw_uring_now();

	early = 0;
	for (int i = 0; i < NT; i++) {
		memset(&traffic[i], 0, sizeof(traffic[i]));
		tw_timer_init(&traffic[i].t, on_fire);
		assert_int_equal(tw_add(w, &traffic[i].t, now + MS + tw_test_rand(&seed) % (300 * MS)), 0);
	}
}

static void check_traffic(size_t bytes, unsigned nops)
{
	for (int i = 0; i < NT; i++)
		assert_int_equal(traffic[i].fired, 1);
	assert_int_equal(early, 0);
	assert_int_equal(bytes, NT);
	assert_true(nops > 0);
}

static void traffic_attached(unsigned setup_flags)
{
	struct io_uring ring;
	struct tw_wheel *w;
	struct tw_uring *u;
	struct tw_uring_stats st;
	struct io_uring_sqe *sqe;
	int fds[2];
	size_t bytes = 0;
	unsigned nops = 0, nops_out = 0, nops_due = 2;
	bool read_out;

	tw_test_ring_init(&ring, 64, setup_flags);
	assert_int_equal(pipe(fds), 0);
	pipe_wr = fds[1];
	assert_int_equal(tw_wheel_create(&w, NULL, tw_uring_now()), 0);
	arm_traffic(w);
	assert_int_equal(tw_uring_attach(&u, w, &ring), 0);
	sqe = io_uring_get_sqe(&ring);
	io_uring_prep_read(sqe, fds[0], rbuf, sizeof(rbuf), 0);
	io_uring_sqe_set_data64(sqe, UD_READ);
	read_out = true;
	while (bytes < NT || nops_out) {
		struct io_uring_cqe *cqe;

		/* A few NOPs after each read: interleaved, but no busy loop. */
		while (nops_due) {
			sqe = io_uring_get_sqe(&ring);
			io_uring_prep_nop(sqe);
			io_uring_sqe_set_data64(sqe, UD_NOP);
			nops_out++;
			nops_due--;
		}
		assert_true(io_uring_submit_and_wait(&ring, 1) >= 0);
		while (io_uring_peek_cqe(&ring, &cqe) == 0) {
			if (!tw_uring_handle_cqe(u, cqe)) {
				assert_false(tw_uring_is_tagged(cqe->user_data));
				if (cqe->user_data == UD_READ) {
					assert_true(cqe->res > 0);
					bytes += (size_t)cqe->res;
					read_out = false;
					nops_due += 2;
				} else {
					assert_int_equal(cqe->user_data, UD_NOP);
					nops++;
					nops_out--;
				}
			}
			io_uring_cqe_seen(&ring, cqe);
		}
		if (!read_out && bytes < NT) {
			sqe = io_uring_get_sqe(&ring);
			io_uring_prep_read(sqe, fds[0], rbuf, sizeof(rbuf), 0);
			io_uring_sqe_set_data64(sqe, UD_READ);
			read_out = true;
		}
	}
	check_traffic(bytes, nops);
	assert_int_equal(tw_uring_get_stats(u, &st), 0);
	assert_int_equal(st.errors, 0);
	print_message("%d timers among %u NOPs and pipe reads: %llu SQEs, %llu expirations\n", NT,
		      nops, (unsigned long long)st.sqes, (unsigned long long)st.expirations);
	assert_int_equal(tw_uring_detach(u), 0);
	pipe_wr = -1;
	close(fds[0]);
	close(fds[1]);
	io_uring_queue_exit(&ring);
	tw_wheel_destroy(w);
}

static void traffic_attached_plain(void **state)
{
	(void)state;
	traffic_attached(0);
}

static void traffic_attached_defer_taskrun(void **state)
{
	(void)state;
	traffic_attached(IORING_SETUP_SINGLE_ISSUER | IORING_SETUP_DEFER_TASKRUN);
}

struct owned_traffic {
	struct tw_wheel *w;
	int rd;
	size_t bytes;
	unsigned nops;
};

static void queue_read(struct tw_uring_loop *u, struct owned_traffic *o)
{
	struct io_uring_sqe *sqe = tw_uring_get_sqe(u);

	assert_non_null(sqe);
	io_uring_prep_read(sqe, o->rd, rbuf, sizeof(rbuf), 0);
	io_uring_sqe_set_data64(sqe, UD_READ);
}

static void queue_nop(struct tw_uring_loop *u)
{
	struct io_uring_sqe *sqe = tw_uring_get_sqe(u);

	assert_non_null(sqe);
	io_uring_prep_nop(sqe);
	io_uring_sqe_set_data64(sqe, UD_NOP);
}

static void owned_cqe(struct tw_uring_loop *u, struct io_uring_cqe *cqe, void *arg)
{
	struct owned_traffic *o = arg;

	assert_false(tw_uring_is_tagged(cqe->user_data));
	if (cqe->user_data == UD_READ) {
		assert_true(cqe->res > 0);
		o->bytes += (size_t)cqe->res;
		if (o->bytes < NT)
			queue_read(u, o);
		/* A few NOPs after each read: interleaved, but no busy loop. */
		queue_nop(u);
		queue_nop(u);
	} else {
		o->nops++;
	}
}

static void traffic_owned(unsigned wait, unsigned setup_flags)
{
	struct owned_traffic o = { .bytes = 0 };
	struct tw_uring_loop_options opt = {
		.setup_flags = setup_flags, .wait = wait, .cqe_fn = owned_cqe, .arg = &o,
	};
	struct tw_uring_loop *u;
	struct tw_uring_stats st;
	int fds[2];

	assert_int_equal(pipe(fds), 0);
	pipe_wr = fds[1];
	o.rd = fds[0];
	assert_int_equal(tw_wheel_create(&o.w, NULL, tw_uring_now()), 0);
	arm_traffic(o.w);
	tw_test_loop_init(&u, o.w, &opt);
	queue_read(u, &o);
	queue_nop(u);
	assert_int_equal(tw_uring_run(u), 0);
	check_traffic(o.bytes, o.nops);
	assert_int_equal(tw_uring_loop_get_stats(u, &st), 0);
	assert_int_equal(st.errors, 0);
	assert_int_equal(tw_uring_loop_close(u), 0);
	pipe_wr = -1;
	close(fds[0]);
	close(fds[1]);
	tw_wheel_destroy(o.w);
}

static void traffic_owned_wait_arg(void **state)
{
	(void)state;
	traffic_owned(TW_URING_WAIT_ARG, 0);
}

static void traffic_owned_defer_taskrun(void **state)
{
	(void)state;
	traffic_owned(TW_URING_WAIT_ARG, IORING_SETUP_SINGLE_ISSUER | IORING_SETUP_DEFER_TASKRUN);
}

static void traffic_owned_wait_sqe(void **state)
{
	(void)state;
	traffic_owned(TW_URING_WAIT_SQE, 0);
}

/*
 * What the README tells users of IORING_SETUP_DEFER_TASKRUN rings: the
 * timeout's completion appears only once the thread asks the kernel for
 * completions, so a submit-and-peek loop must call io_uring_get_events().
 */
static void defer_taskrun_needs_get_events(void **state)
{
	struct io_uring ring;
	struct tw_wheel *w;
	struct tw_uring *u;
	struct io_uring_cqe *cqe;
	struct rec rs[50];
	struct timespec pause = { .tv_sec = 0, .tv_nsec = 20 * (long)MS };
	uint64_t now = tw_uring_now(), deadline = now + 5000 * MS;
	int fired = 0;

	(void)state;
	tw_test_ring_init(&ring, 16, IORING_SETUP_SINGLE_ISSUER | IORING_SETUP_DEFER_TASKRUN);
	assert_int_equal(tw_wheel_create(&w, NULL, now), 0);
	assert_int_equal(tw_uring_attach(&u, w, &ring), 0);
	early = 0;
	for (int i = 0; i < 50; i++) {
		memset(&rs[i], 0, sizeof(rs[i]));
		tw_timer_init(&rs[i].t, on_fire);
		assert_int_equal(tw_add(w, &rs[i].t, now + 5 * MS + (uint64_t)i * MS), 0);
	}
	assert_int_equal(io_uring_submit(&ring), 1);
	nanosleep(&pause, NULL); /* well past the first expiry */
	assert_int_equal(io_uring_peek_cqe(&ring, &cqe), -EAGAIN);
	while (fired < 50) {
		assert_true(tw_uring_now() < deadline);
		assert_true(io_uring_get_events(&ring) >= 0);
		while (io_uring_peek_cqe(&ring, &cqe) == 0) {
			assert_int_equal(tw_uring_handle_cqe(u, cqe), 1);
			io_uring_cqe_seen(&ring, cqe);
		}
		io_uring_submit(&ring);
		fired = 0;
		for (int i = 0; i < 50; i++)
			fired += rs[i].fired;
	}
	assert_int_equal(early, 0);
	assert_int_equal(tw_uring_detach(u), 0);
	io_uring_queue_exit(&ring);
	tw_wheel_destroy(w);
}

static void bad_arguments(void **state)
{
	struct io_uring ring;
	struct tw_wheel *w;
	struct tw_uring *u, *u2;
	struct tw_uring_loop *l = (struct tw_uring_loop *)&ring; /* must stay untouched */
	struct tw_uring_loop_options opt = { .wait = 9 };
	struct tw_uring_stats st;
	struct io_uring_cqe cqe = { .user_data = 1 };

	(void)state;
	tw_test_ring_init(&ring, 8, 0);
	assert_int_equal(tw_wheel_create(&w, NULL, tw_uring_now()), 0);
	assert_int_equal(tw_uring_attach(NULL, w, &ring), -EINVAL);
	assert_int_equal(tw_uring_attach(&u, NULL, &ring), -EINVAL);
	assert_int_equal(tw_uring_attach(&u, w, NULL), -EINVAL);
	assert_int_equal(tw_uring_loop_init(&l, w, &opt), -EINVAL);
	opt.wait = TW_URING_WAIT_ARG;
	opt.setup_flags = IORING_SETUP_SQPOLL;
	assert_int_equal(tw_uring_loop_init(&l, w, &opt), -EOPNOTSUPP);
	assert_int_equal(tw_uring_loop_init(NULL, w, NULL), -EINVAL);
	assert_int_equal(tw_uring_loop_init(&l, NULL, NULL), -EINVAL);
	assert_ptr_equal(l, (struct tw_uring_loop *)&ring);
	assert_int_equal(tw_uring_attach(&u, w, &ring), 0);
	assert_int_equal(tw_uring_attach(&u2, w, &ring), -EBUSY);
	assert_int_equal(tw_uring_handle_cqe(u, NULL), -EINVAL);
	assert_int_equal(tw_uring_handle_cqe(u, &cqe), 0);
	assert_null(tw_uring_get_sqe(NULL));
	assert_int_equal(tw_uring_run(NULL), -EINVAL);
	assert_int_equal(tw_uring_loop_close(NULL), -EINVAL);
	assert_null(tw_uring_loop_ring(NULL));
	assert_int_equal(tw_uring_loop_get_stats(NULL, &st), -EINVAL);
	assert_int_equal(tw_uring_get_stats(u, NULL), -EINVAL);
	assert_int_equal(tw_uring_get_stats(u, &st), 0);
	assert_ptr_equal(tw_uring_ring(u), &ring);
	assert_int_equal(tw_uring_detach(u), 0);
	assert_int_equal(tw_uring_detach(NULL), -EINVAL);
	tw_uring_stop(NULL);
	io_uring_queue_exit(&ring);
	tw_wheel_destroy(w);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(detach_in_flight_then_reattach),
		cmocka_unit_test(detach_before_submit),
		cmocka_unit_test(close_owned_wait_arg),
		cmocka_unit_test(close_owned_wait_sqe),
		cmocka_unit_test(traffic_attached_plain),
		cmocka_unit_test(traffic_attached_defer_taskrun),
		cmocka_unit_test(traffic_owned_wait_arg),
		cmocka_unit_test(traffic_owned_wait_sqe),
		cmocka_unit_test(traffic_owned_defer_taskrun),
		cmocka_unit_test(defer_taskrun_needs_get_events),
		cmocka_unit_test(bad_arguments),
	};

	return tw_test_exit(cmocka_run_group_tests_name("uring ring", tests, NULL, NULL));
}
