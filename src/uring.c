/* SPDX-License-Identifier: MIT */
/*
 * io_uring backend: one IORING_OP_TIMEOUT per wheel, on the program's ring
 * (attached) or on a ring this file creates and runs (owned loop).
 *
 * The one fact everything rests on: the timeout's own completion (-ETIME,
 * or -ECANCELED if someone cancelled it) always arrives, and it is the only
 * thing that clears `inflight`. An update that loses the race with the
 * timer gets -ENOENT/-EALREADY; nothing needs doing then, because the
 * completion that follows runs the wheel and arms the next timeout.
 *
 * The kernel reads a timespec when it consumes the SQE, not when the SQE
 * is filled in. So `ts` lives here and always holds the latest wanted
 * expiry: a request of ours still waiting in the SQ picks up a later
 * change for free, and the hook queues a new SQE only when none waits.
 */
#include "timerwheel/uring.h"

#include <errno.h>
#include <poll.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

enum {
	KIND_TIMEOUT = 1,
	KIND_UPDATE = 2,
	KIND_REMOVE = 3,
	KIND_NOP = 4,
	KIND_KICK = 5,
	KIND_WAKE = 6, /* another thread posted a request (tw_post_mod()) */
	KIND_MASK = 0xff,
};

/* One of our SQEs, remembered until the kernel has consumed it. */
struct queued {
	struct io_uring_sqe *sqe;
	unsigned end; /* sq.sqe_tail just after it was taken */
	bool live;
};

struct tw_uring {
	struct tw_wheel *w;
	struct io_uring *ring;
	uint64_t ud_base; /* tag | id << 8; the kind goes in the low byte */
	uint64_t armed;   /* expiry asked of the kernel timeout; UINT64_MAX if none */
	struct __kernel_timespec ts;
	struct queued q_timeout;
	struct queued q_update;
	struct queued q_poll;
	/* Waking the loop from other threads: a message posted to the CQ, or,
	 * where the kernel cannot (before 6.13), a write to this eventfd, which
	 * a poll of ours on the ring watches. -1 in the first case. */
	int wake_fd;
	bool polling;      /* our poll on wake_fd was queued, its completion not yet seen */
	bool poll_wanted;  /* ... and one should be: queued at the next chance */
	bool inflight; /* a timeout was queued and its completion not yet seen */
	bool broken;   /* the kernel refused the timeout itself: stop re-arming */
	bool deferred; /* an SQE was wanted while the program's chain was open */
	bool owned;
	bool running;
	bool stop;
	unsigned wait;
	unsigned busy; /* > 0 while the backend runs the wheel's callbacks */
	uint64_t user_inflight;
	tw_uring_cqe_fn cqe_fn;
	void *arg;
	struct tw_uring_stats st;
	struct io_uring own_ring;
};

static atomic_uint_fast64_t next_id = 1;

#define TW__URING_LOOP_FLAGS                                                            \
	(IORING_SETUP_CLAMP | IORING_SETUP_R_DISABLED | IORING_SETUP_SUBMIT_ALL |        \
	 IORING_SETUP_COOP_TASKRUN | IORING_SETUP_TASKRUN_FLAG | IORING_SETUP_SQE128 |   \
	 IORING_SETUP_CQE32 | IORING_SETUP_SINGLE_ISSUER | IORING_SETUP_DEFER_TASKRUN)

uint64_t tw_uring_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void set_error(struct tw_uring *u, int err)
{
	u->st.errors++;
	u->st.last_error = err;
}

/* Consumed SQEs may be reused by the ring: forget them. */
static bool still_queued(struct tw_uring *u, struct queued *q)
{
	unsigned head;

	if (!q->live)
		return false;
	head = io_uring_smp_load_acquire(u->ring->sq.khead);
	if ((int)(q->end - head) > 0)
		return true;
	q->live = false;
	return false;
}

/*
 * The kernel links an SQE to the one before it when that one carries
 * IOSQE_IO_LINK or IOSQE_IO_HARDLINK. An SQE of ours queued behind such a
 * one would wait for the program's request, and the program's next SQE
 * would then hang off ours instead of its own chain. So we look at the last
 * SQE not yet consumed by the kernel (only this thread consumes them: no
 * SQPOLL) and, if it leaves a chain open, queue nothing.
 */
static bool chain_open(const struct tw_uring *u)
{
	const struct io_uring_sq *sq = &u->ring->sq;
	unsigned shift = (u->ring->flags & IORING_SETUP_SQE128) ? 1 : 0;
	unsigned last = sq->sqe_tail - 1;
	const struct io_uring_sqe *sqe;

	if (sq->sqe_tail == io_uring_smp_load_acquire(sq->khead))
		return false;
	sqe = &sq->sqes[(last & sq->ring_mask) << shift];
	return (sqe->flags & (IOSQE_IO_LINK | IOSQE_IO_HARDLINK)) != 0;
}

#ifndef IORING_REGISTER_SEND_MSG_RING
#define IORING_REGISTER_SEND_MSG_RING 31 /* kernel 6.13; liburing 2.3 lacks it */
#endif

/* Cancels our submitted timeout without an SQE; its completion follows. */
static int cancel_sync(struct tw_uring *u)
{
	struct io_uring_sync_cancel_reg reg;

	memset(&reg, 0, sizeof(reg));
	reg.addr = u->ud_base | KIND_TIMEOUT;
	reg.timeout.tv_sec = -1;
	reg.timeout.tv_nsec = -1;
	return io_uring_register_sync_cancel(u->ring, &reg);
}

/*
 * We could not queue an SQE because the program's chain is open. Make sure
 * a completion of ours comes back soon without using the SQ, so that the
 * program's next wait ends and tw_uring_handle_cqe() can queue it then,
 * once the chain has gone to the kernel. Cancelling our timeout from the
 * register path (kernel 6.0) does that when one is in flight; otherwise a
 * message posted straight to the ring's CQ (kernel 6.13). On older kernels
 * the SQE waits for the next call into the backend.
 */
static void kick(struct tw_uring *u)
{
	struct io_uring_sqe msg;

	if (u->inflight && !still_queued(u, &u->q_timeout)) {
		int r = cancel_sync(u);

		/* -ENOENT/-EALREADY: it is completing anyway, which is as good. */
		if (r == 0 || r == -ENOENT || r == -EALREADY) {
			u->st.kicks++;
			return;
		}
	}
	memset(&msg, 0, sizeof(msg));
	msg.opcode = IORING_OP_MSG_RING;
	msg.fd = u->ring->ring_fd;
	msg.addr = IORING_MSG_DATA;
	msg.off = u->ud_base | KIND_KICK;
	if (syscall(__NR_io_uring_register, -1, IORING_REGISTER_SEND_MSG_RING, &msg, 1) >= 0)
		u->st.kicks++;
}

/*
 * The wake hook, from any thread: a completion posted straight to the
 * ring's CQ through the register path (IORING_REGISTER_SEND_MSG_RING, the
 * ringless form of IORING_OP_MSG_RING, kernel 6.13), so the loop's wait
 * ends and the requests are applied in tw_uring_handle_cqe(); on older
 * kernels a write to the eventfd that our poll watches (see arm_poll()).
 * It reads only what init() set once.
 */
static void wake(struct tw_wheel *w, void *arg)
{
	struct tw_uring *u = arg;
	struct io_uring_sqe msg;

	(void)w;
	if (u->wake_fd >= 0) {
		uint64_t one = 1;

		/* EAGAIN only when the counter is full: a wake-up is pending. */
		(void)!write(u->wake_fd, &one, sizeof(one));
		return;
	}
	memset(&msg, 0, sizeof(msg));
	msg.opcode = IORING_OP_MSG_RING;
	msg.fd = u->ring->ring_fd;
	msg.addr = IORING_MSG_DATA;
	msg.off = u->ud_base | KIND_WAKE;
	(void)syscall(__NR_io_uring_register, -1, IORING_REGISTER_SEND_MSG_RING, &msg, 1);
}

static struct io_uring_sqe *take_sqe(struct tw_uring *u)
{
	struct io_uring_sqe *sqe = io_uring_get_sqe(u->ring);

	if (!sqe) {
		/* The SQ is full: submitting the program's SQEs is the only way on. */
		int r = io_uring_submit(u->ring);

		u->st.self_submits++;
		if (r < 0)
			set_error(u, r);
		sqe = io_uring_get_sqe(u->ring);
	}
	return sqe;
}

static void remember(struct tw_uring *u, struct queued *q, struct io_uring_sqe *sqe)
{
	q->sqe = sqe;
	q->end = u->ring->sq.sqe_tail;
	q->live = true;
}

static void set_ts(struct tw_uring *u, uint64_t t)
{
	u->ts.tv_sec = (long long)(t / 1000000000u);
	u->ts.tv_nsec = (long long)(t % 1000000000u);
}

/* Make the kernel timeout fire no later than @next. Returns 1 if an SQE was queued. */
static int arm(struct tw_uring *u, uint64_t next)
{
	struct io_uring_sqe *sqe;

	if (next == UINT64_MAX || u->broken)
		return 0; /* a stale timeout costs one idle wake-up, a removal an SQE */
	if (u->inflight && next >= u->armed)
		return 0;
	set_ts(u, next);
	if (u->inflight && (still_queued(u, &u->q_timeout) || still_queued(u, &u->q_update))) {
		u->armed = next;
		u->deferred = false;
		u->st.retargets++;
		return 0;
	}
	if (chain_open(u)) {
		/* u->armed stays what the kernel has, so the next hook call or
		 * completion tries again. */
		if (!u->deferred) {
			u->deferred = true;
			u->st.chain_defers++;
			kick(u);
		}
		return 0;
	}
	sqe = take_sqe(u);
	if (!sqe) {
		set_error(u, -EBUSY);
		return 0;
	}
	if (u->inflight) {
		io_uring_prep_timeout_update(sqe, &u->ts, u->ud_base | KIND_TIMEOUT, IORING_TIMEOUT_ABS);
		io_uring_sqe_set_data64(sqe, u->ud_base | KIND_UPDATE);
		remember(u, &u->q_update, sqe);
		u->st.updates++;
	} else {
		io_uring_prep_timeout(sqe, &u->ts, 0, IORING_TIMEOUT_ABS);
		io_uring_sqe_set_data64(sqe, u->ud_base | KIND_TIMEOUT);
		remember(u, &u->q_timeout, sqe);
		u->inflight = true;
		u->st.timeouts++;
	}
	u->armed = next;
	u->deferred = false;
	u->st.sqes++;
	return 1;
}

/*
 * The eventfd fallback: keep one IORING_OP_POLL_ADD (single-shot, so any
 * kernel with io_uring has it) on wake_fd, queued again after each of its
 * completions. While the program's chain is open it waits, as the timeout
 * does, and every completion handed to tw_uring_handle_cqe() tries again.
 */
static void arm_poll(struct tw_uring *u)
{
	struct io_uring_sqe *sqe;

	if (!u->poll_wanted || u->polling || chain_open(u))
		return;
	sqe = take_sqe(u);
	if (!sqe) {
		set_error(u, -EBUSY);
		return;
	}
	io_uring_prep_poll_add(sqe, u->wake_fd, POLLIN);
	io_uring_sqe_set_data64(sqe, u->ud_base | KIND_WAKE);
	remember(u, &u->q_poll, sqe);
	u->polling = true;
	u->st.sqes++;
}

static int notify_sqe(struct tw_wheel *w, uint64_t next, void *arg)
{
	(void)w;
	return arm(arg, next);
}

/* The owned loop in TW_URING_WAIT_ARG mode computes each wait from the wheel. */
static int notify_none(struct tw_wheel *w, uint64_t next, void *arg)
{
	(void)w;
	(void)next;
	(void)arg;
	return 0;
}

static void run_wheel(struct tw_uring *u)
{
	u->busy++;
	tw_advance_budget(u->w, tw_uring_now(), tw_wake_budget(u->w));
	u->busy--;
	/* The hook normally re-armed from tw_advance(); this covers an advance
	 * that could not run (called from inside a callback). */
	if (!u->inflight && u->wait == TW_URING_WAIT_SQE)
		arm(u, tw_next_expiry(u->w));
}

int tw_uring_handle_cqe(struct tw_uring *u, const struct io_uring_cqe *cqe)
{
	if (!u || !cqe)
		return -EINVAL;
	if ((cqe->user_data & ~(uint64_t)KIND_MASK) != u->ud_base) {
		/* Any completion the program reaps is a chance to queue what an
		 * open chain held back (by now it has usually been submitted). */
		if (u->deferred && !u->busy)
			arm(u, tw_next_expiry(u->w));
		arm_poll(u);
		return 0;
	}

	switch (cqe->user_data & KIND_MASK) {
	case KIND_TIMEOUT:
		u->inflight = false;
		u->armed = UINT64_MAX;
		u->q_timeout.live = false;
		u->st.expirations++;
		if (cqe->res != -ETIME && cqe->res != -ECANCELED) {
			/* The kernel refused the request itself: re-arming would spin. */
			set_error(u, cqe->res);
			u->broken = true;
		}
		run_wheel(u);
		break;
	case KIND_KICK:
		if (u->deferred && !u->busy)
			arm(u, tw_next_expiry(u->w));
		break;
	case KIND_WAKE:
		if (u->wake_fd >= 0) {
			uint64_t count;

			/* Our poll: empty the eventfd before polling it again, so
			 * that only a later write completes the next poll. */
			u->polling = false;
			u->q_poll.live = false;
			if (cqe->res < 0 && cqe->res != -ECANCELED) {
				set_error(u, cqe->res);
				u->poll_wanted = false; /* refused: polling again would spin */
			}
			(void)!read(u->wake_fd, &count, sizeof(count));
		}
		/* Applying a request that moves the next expiry earlier re-arms
		 * the timeout through the hook. Inside the wheel's callbacks it
		 * waits: the advance's end sees it and arms for now. */
		if (!u->busy)
			(void)tw_drain(u->w);
		break;
	case KIND_UPDATE:
		if (cqe->res == -ENOENT || cqe->res == -EALREADY)
			u->st.stale_updates++;
		else if (cqe->res < 0)
			set_error(u, cqe->res);
		break;
	default:
		break;
	}
	arm_poll(u); /* after our poll's own completion, or one held back */
	return 1;
}

/*
 * Can another thread post a completion to this ring without an SQE
 * (IORING_REGISTER_SEND_MSG_RING, kernel 6.13)? Asked without posting
 * anything: a message to @not_a_ring, a descriptor that is no ring, gets
 * -EBADFD from a kernel that has the call, and -EBADF from an older one,
 * which rejects the ringless register call (fd -1) before reading it.
 * TIMERWHEEL_URING_WAKE=eventfd in the environment says no, to run the
 * fallback on any kernel.
 */
static bool can_send_msg_ring(int not_a_ring)
{
	const char *force = getenv("TIMERWHEEL_URING_WAKE");
	struct io_uring_sqe msg;

	if (force && strcmp(force, "eventfd") == 0)
		return false;
	memset(&msg, 0, sizeof(msg));
	msg.opcode = IORING_OP_MSG_RING;
	msg.fd = not_a_ring;
	msg.addr = IORING_MSG_DATA;
	return syscall(__NR_io_uring_register, -1, IORING_REGISTER_SEND_MSG_RING, &msg, 1) < 0 && errno == EBADFD;
}

static int init(struct tw_uring *u, struct tw_wheel *w, struct io_uring *ring, tw_notify_fn fn)
{
	int r;

	/* SQPOLL: the kernel thread could read a queued timespec while we
	 * rewrite it. IOPOLL: the kernel refuses IORING_OP_TIMEOUT there. */
	if (ring->flags & (IORING_SETUP_SQPOLL | IORING_SETUP_IOPOLL))
		return -EOPNOTSUPP;
	u->w = w;
	u->ring = ring;
	u->armed = UINT64_MAX;
	u->wake_fd = -1;
	u->ud_base = TW_URING_UDATA_TAG | ((atomic_fetch_add(&next_id, 1) & 0xffffffffffu) << 8);
	r = tw_set_notify(w, fn, u);
	if (r < 0)
		return r;
	u->wake_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (u->wake_fd < 0) {
		set_error(u, -errno); /* no wake-ups: requests wait for the next expiry */
	} else if (can_send_msg_ring(u->wake_fd)) {
		close(u->wake_fd);
		u->wake_fd = -1;
	} else {
		u->poll_wanted = true;
	}
	(void)tw_set_wake(w, wake, u);
	if (fn == notify_sqe)
		arm(u, tw_next_expiry(w));
	arm_poll(u);
	return 0;
}

int tw_uring_attach(struct tw_uring **out, struct tw_wheel *w, struct io_uring *ring)
{
	struct tw_uring *u;
	int r;

	if (!out || !w || !ring)
		return -EINVAL;
	u = calloc(1, sizeof(*u));
	if (!u)
		return -ENOMEM;
	u->wait = TW_URING_WAIT_SQE;
	r = init(u, w, ring, notify_sqe);
	if (r < 0) {
		free(u);
		return r;
	}
	*out = u;
	return 0;
}

/*
 * The poll on wake_fd points at no memory of ours, only at the eventfd,
 * which it keeps open: a queued one becomes a NOP, one in flight is
 * removed (its tagged completion may follow), and the descriptor closed.
 */
static void disarm_poll(struct tw_uring *u)
{
	struct io_uring_sqe *sqe;

	if (u->wake_fd < 0)
		return;
	if (still_queued(u, &u->q_poll)) {
		io_uring_prep_nop(u->q_poll.sqe);
		io_uring_sqe_set_data64(u->q_poll.sqe, u->ud_base | KIND_NOP);
	} else if (u->polling && !chain_open(u) && (sqe = take_sqe(u))) {
		io_uring_prep_poll_remove(sqe, u->ud_base | KIND_WAKE);
		io_uring_sqe_set_data64(sqe, u->ud_base | KIND_REMOVE);
		u->st.sqes++;
	}
	close(u->wake_fd);
	u->wake_fd = -1;
}

/* Leave nothing on the ring that points into @u, which is about to be freed. */
static void disarm(struct tw_uring *u)
{
	struct io_uring_sqe *sqe;
	bool timeout_queued = still_queued(u, &u->q_timeout);
	bool update_queued = still_queued(u, &u->q_update);

	/* Unsubmitted SQEs are still ours to rewrite; they would read u->ts. */
	if (timeout_queued) {
		io_uring_prep_nop(u->q_timeout.sqe);
		io_uring_sqe_set_data64(u->q_timeout.sqe, u->ud_base | KIND_NOP);
		u->inflight = false;
	}
	if (update_queued) {
		io_uring_prep_nop(u->q_update.sqe);
		io_uring_sqe_set_data64(u->q_update.sqe, u->ud_base | KIND_NOP);
	}
	disarm_poll(u);
	if (!u->inflight)
		return;
	if (chain_open(u)) {
		/* A removal SQE would join the program's chain: cancel from the
		 * register path instead. If the kernel lacks it, the timeout
		 * completes by itself, tagged. */
		if (cancel_sync(u) == 0)
			u->st.removes++;
		return;
	}
	sqe = take_sqe(u);
	if (!sqe)
		return; /* it will complete by itself, tagged */
	io_uring_prep_timeout_remove(sqe, u->ud_base | KIND_TIMEOUT, 0);
	io_uring_sqe_set_data64(sqe, u->ud_base | KIND_REMOVE);
	u->st.removes++;
	u->st.sqes++;
}

int tw_uring_detach(struct tw_uring *u)
{
	if (!u || u->owned)
		return -EINVAL;
	if (u->busy)
		return -EBUSY;
	/* The wake hook first: removing the notify hook may release a
	 * destroyed wheel. */
	tw_set_wake(u->w, NULL, NULL);
	tw_set_notify(u->w, NULL, NULL);
	disarm(u);
	free(u);
	return 0;
}

int tw_uring_loop_init(struct tw_uring **out, struct tw_wheel *w,
		       const struct tw_uring_loop_options *opt)
{
	static const struct tw_uring_loop_options defaults = { 0 };
	struct io_uring_params p;
	struct tw_uring *u;
	int r;

	if (!out || !w)
		return -EINVAL;
	if (!opt)
		opt = &defaults;
	if (opt->wait != TW_URING_WAIT_ARG && opt->wait != TW_URING_WAIT_SQE)
		return -EINVAL;
	if (opt->setup_flags & (IORING_SETUP_SQPOLL | IORING_SETUP_IOPOLL))
		return -EOPNOTSUPP;
	/* Other flags either need io_uring_params fields the options do not
	 * carry, or a liburing newer than the one we were built with (which
	 * would misread the ring): only those known to work get through. */
	if (opt->setup_flags & ~(unsigned)TW__URING_LOOP_FLAGS)
		return -EINVAL;
	u = calloc(1, sizeof(*u));
	if (!u)
		return -ENOMEM;
	memset(&p, 0, sizeof(p));
	p.flags = opt->setup_flags;
	r = io_uring_queue_init_params(opt->entries ? opt->entries : 256, &u->own_ring, &p);
	if (r < 0) {
		free(u);
		return r;
	}
	u->owned = true;
	u->wait = opt->wait;
	u->cqe_fn = opt->cqe_fn;
	u->arg = opt->arg;
	r = init(u, w, &u->own_ring, u->wait == TW_URING_WAIT_SQE ? notify_sqe : notify_none);
	if (r < 0) {
		io_uring_queue_exit(&u->own_ring);
		free(u);
		return r;
	}
	*out = u;
	return 0;
}

struct io_uring *tw_uring_ring(struct tw_uring *u)
{
	return u ? u->ring : NULL;
}

struct io_uring_sqe *tw_uring_get_sqe(struct tw_uring *u)
{
	struct io_uring_sqe *sqe;

	if (!u || !u->owned)
		return NULL;
	sqe = io_uring_get_sqe(u->ring);
	if (!sqe) {
		io_uring_submit(u->ring);
		sqe = io_uring_get_sqe(u->ring);
	}
	if (sqe)
		u->user_inflight++;
	return sqe;
}

static void dispatch(struct tw_uring *u)
{
	struct io_uring_cqe *cqe;

	while (io_uring_peek_cqe(u->ring, &cqe) == 0) {
		if (tw_uring_handle_cqe(u, cqe) == 0) {
			if (!(cqe->flags & IORING_CQE_F_MORE) && u->user_inflight)
				u->user_inflight--;
			if (u->cqe_fn) {
				u->busy++;
				u->cqe_fn(u, cqe, u->arg);
				u->busy--;
			}
		}
		io_uring_cqe_seen(u->ring, cqe);
	}
}

/* TW_URING_WAIT_ARG: submit, then sleep until a completion or the next expiry. */
static int wait_arg(struct tw_uring *u)
{
	struct io_uring_cqe *cqe;
	struct __kernel_timespec ts;
	uint64_t next = tw_next_expiry(u->w);
	uint64_t now;

	if (next == UINT64_MAX)
		return io_uring_submit_and_wait(u->ring, 1);
	now = tw_uring_now();
	if (next <= now) {
		run_wheel(u);
		return io_uring_submit(u->ring);
	}
	/* Relative: the kernel adds it to its own later reading of the clock,
	 * so the wake-up can only come after @next, never before. */
	ts.tv_sec = (long long)((next - now) / 1000000000u);
	ts.tv_nsec = (long long)((next - now) % 1000000000u);
	u->st.timed_waits++;
	return io_uring_submit_and_wait_timeout(u->ring, &cqe, 1, &ts, NULL);
}

int tw_uring_run(struct tw_uring *u)
{
	int r = 0;

	if (!u || !u->owned)
		return -EINVAL;
	if (u->running)
		return -EBUSY;
	u->running = true;
	u->stop = false;
	for (;;) {
		dispatch(u);
		if (u->wait == TW_URING_WAIT_ARG && tw_count(u->w) && tw_uring_now() >= tw_next_expiry(u->w))
			run_wheel(u);
		if (u->stop || (tw_count(u->w) == 0 && u->user_inflight == 0))
			break;
		u->st.waits++;
		if (u->wait == TW_URING_WAIT_ARG)
			r = wait_arg(u);
		else
			r = io_uring_submit_and_wait(u->ring, 1);
		if (r < 0 && r != -ETIME && r != -EINTR && r != -EAGAIN && r != -EBUSY) {
			set_error(u, r);
			break;
		}
		r = 0;
	}
	/* Whatever the program queued last still goes to the kernel. */
	if (io_uring_sq_ready(u->ring))
		io_uring_submit(u->ring);
	u->running = false;
	return r;
}

void tw_uring_stop(struct tw_uring *u)
{
	if (u)
		u->stop = true;
}

int tw_uring_loop_close(struct tw_uring *u)
{
	if (!u || !u->owned)
		return -EINVAL;
	if (u->running || u->busy)
		return -EBUSY;
	tw_set_wake(u->w, NULL, NULL);
	tw_set_notify(u->w, NULL, NULL);
	io_uring_queue_exit(&u->own_ring);
	if (u->wake_fd >= 0)
		close(u->wake_fd);
	free(u);
	return 0;
}

int tw_uring_get_stats(const struct tw_uring *u, struct tw_uring_stats *out)
{
	if (!u || !out)
		return -EINVAL;
	*out = u->st;
	return 0;
}
