/* SPDX-License-Identifier: MIT */
/*
 * The owned io_uring loop: a ring this file creates, an attached backend
 * (uring.c) on it, and the loop that submits, waits and hands every
 * completion over. The backend knows nothing of this loop; the loop knows
 * of the backend only what a program with its own ring would, plus two
 * internal calls (uring_int.h): attach without a timeout SQE when the wait
 * itself carries the timeout, and run the wheel when that wait ends.
 *
 * Ownership as everywhere: the loop frees the ring and the backend it
 * created, never the program's wheel.
 */
#include "uring_int.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

struct tw_uring_loop {
	struct io_uring ring;   /* created by tw_uring_loop_init(), ours to free */
	struct tw_uring *u;     /* the attached backend on it */
	struct tw_wheel *w;     /* the program's */
	tw_uring_cqe_fn cqe_fn;
	void *arg;
	uint64_t user_inflight; /* SQEs from tw_uring_get_sqe() not yet completed */
	uint64_t waits;
	uint64_t timed_waits;
	unsigned wait;          /* an enum tw_uring_wait */
	pthread_t runner;       /* the thread in tw_uring_run(), while @running */
	atomic_bool running;    /* read by tw_uring_loop_close() on any thread */
	bool stop;
	bool closing;           /* closed from inside tw_uring_run(): freed as it returns */
};

#define TW__URING_LOOP_FLAGS                                                            \
	(IORING_SETUP_CLAMP | IORING_SETUP_R_DISABLED | IORING_SETUP_SUBMIT_ALL |        \
	 IORING_SETUP_COOP_TASKRUN | IORING_SETUP_TASKRUN_FLAG | IORING_SETUP_SQE128 |   \
	 IORING_SETUP_CQE32 | IORING_SETUP_SINGLE_ISSUER | IORING_SETUP_DEFER_TASKRUN)

static int check_options(const struct tw_uring_loop_options *opt)
{
	if (opt->wait != TW_URING_WAIT_ARG && opt->wait != TW_URING_WAIT_SQE)
		return -EINVAL;
	if (opt->setup_flags & (IORING_SETUP_SQPOLL | IORING_SETUP_IOPOLL))
		return -EOPNOTSUPP;
	/* Other flags either need io_uring_params fields the options do not
	 * carry, or a liburing newer than the one we were built with (which
	 * would misread the ring): only those known to work get through. */
	if (opt->setup_flags & ~(unsigned)TW__URING_LOOP_FLAGS)
		return -EINVAL;
	return 0;
}

static int create_ring(struct tw_uring_loop *l, const struct tw_uring_loop_options *opt)
{
	struct io_uring_params p;

	memset(&p, 0, sizeof(p));
	p.flags = opt->setup_flags;
	return io_uring_queue_init_params(opt->entries ? opt->entries : 256, &l->ring, &p);
}

int tw_uring_loop_init(struct tw_uring_loop **out, struct tw_wheel *w,
		       const struct tw_uring_loop_options *opt)
{
	static const struct tw_uring_loop_options defaults = { 0 };
	struct tw_uring_loop *l;
	int r;

	if (!out || !w)
		return -EINVAL;
	opt = opt ? opt : &defaults;
	r = check_options(opt);
	if (r < 0)
		return r;
	l = calloc(1, sizeof(*l));
	if (!l)
		return -ENOMEM;
	atomic_init(&l->running, false);
	r = create_ring(l, opt);
	if (r == 0) {
		r = tw__uring_attach(&l->u, w, &l->ring,
				     opt->wait == TW_URING_WAIT_ARG ? TW__URING_NO_TIMEOUT : 0);
		if (r < 0)
			io_uring_queue_exit(&l->ring);
	}
	if (r < 0) {
		free(l);
		return r;
	}
	l->w = w;
	l->cqe_fn = opt->cqe_fn;
	l->arg = opt->arg;
	l->wait = opt->wait;
	*out = l;
	return 0;
}

struct io_uring *tw_uring_loop_ring(struct tw_uring_loop *l)
{
	return l ? &l->ring : NULL;
}

struct io_uring_sqe *tw_uring_get_sqe(struct tw_uring_loop *l)
{
	struct io_uring_sqe *sqe;

	if (!l)
		return NULL;
	sqe = io_uring_get_sqe(&l->ring);
	/* A full SQ: make room by submitting, unless that would end the
	 * program's open chain early (the kernel links only within one
	 * submit). Then NULL, what io_uring_get_sqe() says of a full SQ, and
	 * the program decides how its chain ends. */
	if (!sqe && !tw__uring_chain_open(l->u)) {
		io_uring_submit(&l->ring);
		sqe = io_uring_get_sqe(&l->ring);
	}
	if (sqe)
		l->user_inflight++;
	return sqe;
}

/* Every completion goes to the backend first; the program gets the rest.
 * Only those there when the dispatch begins: one that a submit from inside
 * it brings (tw_uring_get_sqe() on a full SQ, or the backend's) waits for
 * the next turn. Otherwise a program whose requests complete as they are
 * submitted could keep one turn going for ever, and the wheel, which runs
 * once a turn, would not run; nor would a turn's budget hold, with the
 * wheel's timeout submitted and completed inside it. */
static void dispatch(struct tw_uring_loop *l)
{
	struct io_uring_cqe *cqe;
	unsigned n = io_uring_cq_ready(&l->ring);

	while (n-- && !l->closing && io_uring_peek_cqe(&l->ring, &cqe) == 0) {
		if (tw_uring_handle_cqe(l->u, cqe) == 0) {
			if (!(cqe->flags & IORING_CQE_F_MORE) && l->user_inflight)
				l->user_inflight--;
			if (l->cqe_fn)
				l->cqe_fn(l, cqe, l->arg);
		}
		io_uring_cqe_seen(&l->ring, cqe);
	}
}

/* TW_URING_WAIT_ARG: submit, then sleep until a completion or the next
 * expiry. Timers still due (a budget left them) wait for the next turn,
 * which runs the wheel after the completions that came in meanwhile. */
static int wait_arg(struct tw_uring_loop *l)
{
	struct io_uring_cqe *cqe;
	struct __kernel_timespec ts;
	uint64_t next = tw_next_expiry(l->w);
	uint64_t now;

	if (next == UINT64_MAX)
		return io_uring_submit_and_wait(&l->ring, 1);
	now = tw_uring_now();
	if (next <= now)
		return io_uring_submit(&l->ring);
	/* Relative: the kernel adds it to its own later reading of the clock,
	 * so the wake-up can only come after @next, never before. */
	ts.tv_sec = (long long)((next - now) / 1000000000u);
	ts.tv_nsec = (long long)((next - now) % 1000000000u);
	l->timed_waits++;
	return io_uring_submit_and_wait_timeout(&l->ring, &cqe, 1, &ts, NULL);
}

/* One wait; the ends of a wait that are no failure give 0. */
static int wait_once(struct tw_uring_loop *l)
{
	int r;

	l->waits++;
	if (l->wait == TW_URING_WAIT_ARG)
		r = wait_arg(l);
	else
		r = io_uring_submit_and_wait(&l->ring, 1);
	if (r == -ETIME || r == -EINTR || r == -EAGAIN || r == -EBUSY)
		return 0;
	return r < 0 ? r : 0;
}

/* What the loop created: the ring, whose requests the kernel cancels
 * without callbacks, and the loop itself. */
static void free_loop(struct tw_uring_loop *l)
{
	io_uring_queue_exit(&l->ring);
	free(l);
}

int tw_uring_run(struct tw_uring_loop *l)
{
	int r = 0;

	if (!l)
		return -EINVAL;
	if (atomic_load(&l->running))
		return -EBUSY;
	l->runner = pthread_self();
	atomic_store(&l->running, true);
	l->stop = false;
	/* After a close from a callback, the backend and the wheel are not
	 * the loop's any more: nothing below reads them. */
	for (;;) {
		dispatch(l);
		if (!l->closing && l->wait == TW_URING_WAIT_ARG && tw_count(l->w) &&
		    tw_uring_now() >= tw_next_expiry(l->w))
			(void)tw__uring_run_wheel(l->u);
		if (l->closing || l->stop || (tw_count(l->w) == 0 && l->user_inflight == 0))
			break;
		r = wait_once(l);
		if (r < 0) {
			tw__uring_error(l->u, r);
			break;
		}
	}
	if (l->closing) {
		free_loop(l);
		return r;
	}
	/* Whatever the program queued last still goes to the kernel. */
	if (io_uring_sq_ready(&l->ring))
		io_uring_submit(&l->ring);
	atomic_store(&l->running, false);
	return r;
}

void tw_uring_stop(struct tw_uring_loop *l)
{
	if (l)
		l->stop = true;
}

/* The backend lets go of the wheel (the shared sequence), then the loop
 * frees what it created. From a callback inside tw_uring_run() the loop
 * still reads its ring: tw_uring_run() frees it as it returns. Another
 * thread's tw_uring_run() owns the wheel and the ring: refused. */
int tw_uring_loop_close(struct tw_uring_loop *l)
{
	if (!l)
		return -EINVAL;
	if (atomic_load(&l->running) && !pthread_equal(l->runner, pthread_self()))
		return -EBUSY;
	(void)tw_uring_detach(l->u);
	if (atomic_load(&l->running))
		l->closing = true;
	else
		free_loop(l);
	return 0;
}

int tw_uring_loop_get_stats(const struct tw_uring_loop *l, struct tw_uring_stats *out)
{
	if (!l || !out)
		return -EINVAL;
	(void)tw_uring_get_stats(l->u, out);
	out->waits = l->waits;
	out->timed_waits = l->timed_waits;
	return 0;
}
