/* SPDX-License-Identifier: MIT */
/*
 * The io_uring backend attached to a ring: one IORING_OP_TIMEOUT per
 * wheel, on a ring whose loop belongs to someone else (the program's, or
 * the owned loop of uring_loop.c). It queues SQEs and reads completions
 * handed to it; it never submits-and-waits.
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
 *
 * What a kernel can do without an SQE differs by version; each way is one
 * small function below, and attach() picks one of each, once: cancelling
 * our timeout from the register path (6.0), posting a completion straight
 * to the CQ (6.13), or, where that is missing, waking the loop through an
 * eventfd that a poll of ours watches.
 */
#include "uring_int.h"

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

#include "backend.h"
#include "usdt.h"

/* The low byte of our user_data: which request of ours completed. */
enum {
	KIND_TIMEOUT = 1, /* the wheel's timeout */
	KIND_UPDATE = 2,  /* an IORING_TIMEOUT_UPDATE of it */
	KIND_WAKE = 3,    /* "look again": a posted completion, or our eventfd poll */
	KIND_DETACHED = 4, /* removals and NOPs queued by tw_uring_detach() */
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
	/* The kernel's ways, chosen once at attach (see the top). */
	bool (*cancel)(struct tw_uring *u); /* our submitted timeout, without an SQE */
	bool (*post)(struct tw_uring *u);   /* a KIND_WAKE completion, without an SQE */
	int wake_fd;     /* the eventfd our poll watches; -1 when posting works */
	bool polling;    /* our poll on wake_fd was queued, its completion not yet seen */
	bool poll_wanted; /* ... and one should be: queued at the next chance */
	bool inflight;   /* a timeout was queued and its completion not yet seen */
	bool broken;     /* the kernel refused the timeout itself: stop re-arming */
	bool deferred;   /* an SQE was wanted while the program's chain was open */
	bool no_timeout; /* TW__URING_NO_TIMEOUT, or letting go (tw_uring_detach()) */
	unsigned busy;   /* > 0 while the backend runs the wheel's callbacks */
	bool gone;       /* detached from one of them: freed when they return */
	struct tw_uring_stats st;
};

static atomic_uint_fast64_t next_id = 1;

#ifndef IORING_REGISTER_SEND_MSG_RING
#define IORING_REGISTER_SEND_MSG_RING 31 /* kernel 6.13; liburing 2.3 lacks it */
#endif

uint64_t tw_uring_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

void tw__uring_error(struct tw_uring *u, int err)
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

bool tw__uring_chain_open(const struct tw_uring *u)
{
	return chain_open(u);
}

/* --- The kernel's ways, one function each ------------------------------- */

/* Kernel 6.0: cancel our submitted timeout from the register path; its
 * completion follows. -ENOENT/-EALREADY: it is completing anyway. */
static bool cancel_timeout_sync(struct tw_uring *u)
{
	struct io_uring_sync_cancel_reg reg;
	int r;

	memset(&reg, 0, sizeof(reg));
	reg.addr = u->ud_base | KIND_TIMEOUT;
	reg.timeout.tv_sec = -1;
	reg.timeout.tv_nsec = -1;
	r = io_uring_register_sync_cancel(u->ring, &reg);
	return r == 0 || r == -ENOENT || r == -EALREADY;
}

static bool cannot(struct tw_uring *u)
{
	(void)u;
	return false;
}

/* IORING_REGISTER_SEND_MSG_RING: the ringless form of IORING_OP_MSG_RING. */
static int send_msg_ring(int ring_fd, uint64_t user_data)
{
	struct io_uring_sqe msg;

	memset(&msg, 0, sizeof(msg));
	msg.opcode = IORING_OP_MSG_RING;
	msg.fd = ring_fd;
	msg.addr = IORING_MSG_DATA;
	msg.off = user_data;
	return (int)syscall(__NR_io_uring_register, -1, IORING_REGISTER_SEND_MSG_RING, &msg, 1);
}

/* Kernel 6.13: a KIND_WAKE completion straight to the ring's CQ. */
static bool post_to_cq(struct tw_uring *u)
{
	return send_msg_ring(u->ring->ring_fd, u->ud_base | KIND_WAKE) >= 0;
}

/* The wake hook, from any thread, when posting works. It reads only what
 * attach() set once. */
static void wake_by_cq(struct tw_wheel *w, void *arg)
{
	(void)w;
	(void)post_to_cq(arg);
}

/* The wake hook where it does not: our poll on the eventfd completes. */
static void wake_by_eventfd(struct tw_wheel *w, void *arg)
{
	struct tw_uring *u = arg;
	uint64_t one = 1;

	(void)w;
	/* EAGAIN only when the counter is full: a wake-up is pending. */
	(void)!write(u->wake_fd, &one, sizeof(one));
}

/*
 * Can this kernel cancel from the register path? Asked of a user_data no
 * request carries: -ENOENT says yes; a kernel without it rejects the
 * opcode (-EINVAL). A ring not yet enabled answers -EBADFD: yes, later.
 */
static bool can_cancel_sync(struct tw_uring *u)
{
	struct io_uring_sync_cancel_reg reg;
	int r;

	memset(&reg, 0, sizeof(reg));
	reg.addr = u->ud_base | KIND_DETACHED;
	r = io_uring_register_sync_cancel(u->ring, &reg);
	return r == -ENOENT || r == -EBADFD || r == 0;
}

/*
 * Can another thread post to a CQ without an SQE? Asked without posting
 * anything: a message to @not_a_ring gets -EBADFD from a kernel that has
 * the call and -EBADF from an older one, which rejects the ringless
 * register call (fd -1) before reading it. TIMERWHEEL_URING_WAKE=eventfd
 * in the environment says no, to run the fallback on any kernel.
 */
static bool can_post(int not_a_ring)
{
	const char *force = getenv("TIMERWHEEL_URING_WAKE");

	if (force && strcmp(force, "eventfd") == 0)
		return false;
	return send_msg_ring(not_a_ring, 0) < 0 && errno == EBADFD;
}

/* Picks the kernel's ways and the wake hook they allow. */
static tw_wake_fn choose_ways(struct tw_uring *u)
{
	int fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);

	u->cancel = can_cancel_sync(u) ? cancel_timeout_sync : cannot;
	u->post = cannot;
	if (fd < 0) {
		tw__uring_error(u, -errno); /* requests wait for the next expiry */
		return NULL;
	}
	if (can_post(fd)) {
		close(fd);
		u->post = post_to_cq;
		return wake_by_cq;
	}
	u->wake_fd = fd;
	u->poll_wanted = true;
	return wake_by_eventfd;
}

/* --- Queueing our SQEs --------------------------------------------------- */

/*
 * We could not queue an SQE because the program's chain is open. Make sure
 * a completion of ours comes back soon without using the SQ, so that the
 * program's next wait ends and tw_uring_handle_cqe() can queue it then,
 * once the chain has gone to the kernel.
 */
static void hold_back(struct tw_uring *u)
{
	if (u->deferred)
		return;
	u->deferred = true;
	u->st.chain_defers++;
	if ((u->inflight && !still_queued(u, &u->q_timeout) && u->cancel(u)) || u->post(u))
		u->st.kicks++;
}

/* An SQE for us, or NULL: held back while the program's chain is open, or
 * the SQ stays full even after submitting the program's SQEs. */
static struct io_uring_sqe *take_sqe(struct tw_uring *u)
{
	struct io_uring_sqe *sqe;
	int r;

	if (chain_open(u)) {
		hold_back(u);
		return NULL;
	}
	sqe = io_uring_get_sqe(u->ring);
	if (sqe)
		return sqe;
	u->st.self_submits++;
	r = io_uring_submit(u->ring);
	if (r < 0)
		tw__uring_error(u, r);
	sqe = io_uring_get_sqe(u->ring);
	if (!sqe)
		tw__uring_error(u, -EBUSY);
	return sqe;
}

static void remember(struct tw_uring *u, struct queued *q, struct io_uring_sqe *sqe,
		     uint64_t kind)
{
	io_uring_sqe_set_data64(sqe, u->ud_base | kind);
	q->sqe = sqe;
	q->end = u->ring->sq.sqe_tail;
	q->live = true;
	u->st.sqes++;
}

/* Does @next need the kernel timeout to fire sooner than it will? */
static bool sooner(const struct tw_uring *u, uint64_t next)
{
	/* UINT64_MAX: a stale timeout costs one idle wake-up, a removal an SQE. */
	if (next == UINT64_MAX || u->broken || u->no_timeout)
		return false;
	return !u->inflight || next < u->armed;
}

/* Queues the timeout, or an update of the one in flight, for u->ts. */
static bool queue_timeout(struct tw_uring *u)
{
	struct io_uring_sqe *sqe = take_sqe(u);

	if (!sqe)
		return false; /* u->armed stays what the kernel has: tried again later */
	if (u->inflight) {
		io_uring_prep_timeout_update(sqe, &u->ts, u->ud_base | KIND_TIMEOUT, IORING_TIMEOUT_ABS);
		remember(u, &u->q_update, sqe, KIND_UPDATE);
		u->st.updates++;
	} else {
		io_uring_prep_timeout(sqe, &u->ts, 0, IORING_TIMEOUT_ABS);
		remember(u, &u->q_timeout, sqe, KIND_TIMEOUT);
		u->inflight = true;
		u->st.timeouts++;
	}
	return true;
}

/* Make the kernel timeout fire no later than @next. Returns 1 if an SQE was
 * queued: a request of ours still in the SQ takes the new time for free. */
static int arm(struct tw_uring *u, uint64_t next)
{
	bool queued = false;

	if (!sooner(u, next))
		return 0;
	u->ts.tv_sec = (long long)(next / 1000000000u);
	u->ts.tv_nsec = (long long)(next % 1000000000u);
	if (u->inflight && (still_queued(u, &u->q_timeout) || still_queued(u, &u->q_update)))
		u->st.retargets++;
	else if (!(queued = queue_timeout(u)))
		return 0;
	u->armed = next;
	u->deferred = false;
	return queued;
}

/*
 * The eventfd way: one IORING_OP_POLL_ADD (single-shot, so any kernel with
 * io_uring has it) on wake_fd, queued again after each of its completions.
 * While the program's chain is open it waits, as the timeout does, and
 * every completion handed to tw_uring_handle_cqe() tries again.
 */
static void arm_poll(struct tw_uring *u)
{
	struct io_uring_sqe *sqe;

	if (!u->poll_wanted || u->polling || chain_open(u))
		return;
	sqe = take_sqe(u);
	if (!sqe)
		return;
	io_uring_prep_poll_add(sqe, u->wake_fd, POLLIN);
	remember(u, &u->q_poll, sqe, KIND_WAKE);
	u->polling = true;
}

static int notify(struct tw_wheel *w, uint64_t next, void *arg)
{
	(void)w;
	return arm(arg, next);
}

/* --- Completions ---------------------------------------------------------- */

bool tw__uring_run_wheel(struct tw_uring *u)
{
	uint64_t now = tw_uring_now();

	TW_PROBE_WAKE("uring", u->w, now, tw_next_expiry(u->w), now < tw_next_expiry(u->w));
	u->busy++;
	tw_advance_budget(u->w, now, tw_wake_budget(u->w));
	u->busy--;
	/* Detached by a callback: the wheel and the ring may be gone, and
	 * nothing else holds @u. */
	if (u->gone) {
		if (!u->busy)
			free(u);
		return false;
	}
	/* The hook normally re-armed from tw_advance(); this covers an advance
	 * that could not run (called from inside a callback). */
	if (!u->inflight)
		arm(u, tw_next_expiry(u->w));
	return true;
}

static bool timeout_done(struct tw_uring *u, int res)
{
	u->inflight = false;
	u->armed = UINT64_MAX;
	u->q_timeout.live = false;
	u->st.expirations++;
	if (res != -ETIME && res != -ECANCELED) {
		/* The kernel refused the request itself: re-arming would spin. */
		tw__uring_error(u, res);
		u->broken = true;
	}
	return tw__uring_run_wheel(u);
}

static void update_done(struct tw_uring *u, int res)
{
	if (res == -ENOENT || res == -EALREADY)
		u->st.stale_updates++;
	else if (res < 0)
		tw__uring_error(u, res);
}

/* Someone asked us to look again: requests from other threads, or a
 * completion forced so that a held-back SQE gets queued. */
static void woken(struct tw_uring *u, int res)
{
	uint64_t count;

	if (u->wake_fd >= 0) {
		/* Our poll: empty the eventfd before polling it again, so
		 * that only a later write completes the next poll. */
		u->polling = false;
		u->q_poll.live = false;
		if (res < 0 && res != -ECANCELED) {
			tw__uring_error(u, res);
			u->poll_wanted = false; /* refused: polling again would spin */
		}
		(void)!read(u->wake_fd, &count, sizeof(count));
	}
	/* Applying a request that moves the next expiry earlier re-arms the
	 * timeout through the hook. Inside the wheel's callbacks it waits:
	 * the advance's end sees it and arms for now. */
	if (!u->busy)
		(void)tw_drain(u->w);
}

int tw_uring_handle_cqe(struct tw_uring *u, const struct io_uring_cqe *cqe)
{
	bool ours;

	if (!u || !cqe)
		return -EINVAL;
	ours = (cqe->user_data & ~(uint64_t)KIND_MASK) == u->ud_base;
	if (ours && (cqe->user_data & KIND_MASK) == KIND_TIMEOUT) {
		if (!timeout_done(u, cqe->res))
			return 1;
	} else if (ours && (cqe->user_data & KIND_MASK) == KIND_UPDATE)
		update_done(u, cqe->res);
	else if (ours && (cqe->user_data & KIND_MASK) == KIND_WAKE)
		woken(u, cqe->res);
	/* Any completion is a chance to queue what an open chain held back
	 * (by now it has usually been submitted). */
	if (u->deferred && !u->busy)
		arm(u, tw_next_expiry(u->w));
	arm_poll(u);
	return ours;
}

/* --- Attach and detach ---------------------------------------------------- */

int tw__uring_attach(struct tw_uring **out, struct tw_wheel *w, struct io_uring *ring,
		     unsigned flags)
{
	struct tw_uring *u;
	tw_wake_fn wake;
	int r;

	if (!out || !w || !ring)
		return -EINVAL;
	/* SQPOLL: the kernel thread could read a queued timespec while we
	 * rewrite it. IOPOLL: the kernel refuses IORING_OP_TIMEOUT there. */
	if (ring->flags & (IORING_SETUP_SQPOLL | IORING_SETUP_IOPOLL))
		return -EOPNOTSUPP;
	u = calloc(1, sizeof(*u));
	if (!u)
		return -ENOMEM;
	*u = (struct tw_uring){ .w = w, .ring = ring, .armed = UINT64_MAX, .wake_fd = -1,
				.no_timeout = (flags & TW__URING_NO_TIMEOUT) != 0 };
	u->ud_base = TW_URING_UDATA_TAG | ((atomic_fetch_add(&next_id, 1) & 0xffffffffffu) << 8);
	r = tw_set_notify(w, notify, u);
	if (r < 0) {
		free(u);
		return r;
	}
	wake = choose_ways(u);
	if (wake)
		(void)tw_set_wake(w, wake, u);
	arm(u, tw_next_expiry(w));
	arm_poll(u);
	*out = u;
	return 0;
}

int tw_uring_attach(struct tw_uring **out, struct tw_wheel *w, struct io_uring *ring)
{
	return tw__uring_attach(out, w, ring, 0);
}

/* An SQE of ours the kernel has not consumed is still ours to rewrite: a
 * NOP then, which reads nothing of ours. */
static bool unqueue(struct tw_uring *u, struct queued *q)
{
	if (!still_queued(u, q))
		return false;
	io_uring_prep_nop(q->sqe);
	io_uring_sqe_set_data64(q->sqe, u->ud_base | KIND_DETACHED);
	return true;
}

/* A removal of our request in flight, @target, for the next submit. */
static void remove_later(struct tw_uring *u, uint64_t target, bool poll)
{
	struct io_uring_sqe *sqe = take_sqe(u);

	if (!sqe)
		return; /* it completes by itself, tagged */
	if (poll)
		io_uring_prep_poll_remove(sqe, target);
	else
		io_uring_prep_timeout_remove(sqe, target, 0);
	io_uring_sqe_set_data64(sqe, u->ud_base | KIND_DETACHED);
	u->st.sqes++;
	u->st.removes++;
}

/*
 * Step 4 of tw__backend_detach(): leave nothing on the ring that points
 * into @u, which is about to be freed. The poll points only at the
 * eventfd, which it keeps open; the timeout at u->ts. While the program's
 * chain is open a removal SQE would join it: the timeout is cancelled from
 * the register path then (kernel 6.0), or completes by itself, tagged.
 */
static void disarm(void *arg)
{
	struct tw_uring *u = arg;

	if (tw__uring_ring_gone(u->ring)) {
		u->inflight = false;
		if (u->wake_fd >= 0)
			close(u->wake_fd);
		return;
	}
	unqueue(u, &u->q_update);
	if (unqueue(u, &u->q_timeout))
		u->inflight = false;
	if (u->polling && !unqueue(u, &u->q_poll) && !chain_open(u))
		remove_later(u, u->ud_base | KIND_WAKE, true);
	if (u->inflight && !chain_open(u))
		remove_later(u, u->ud_base | KIND_TIMEOUT, false);
	else if (u->inflight && u->cancel(u))
		u->st.removes++;
	if (u->wake_fd >= 0)
		close(u->wake_fd);
}

/* From a callback the backend runs, everything but the free happens now:
 * the wheel and the ring are the program's again when this returns, and
 * the advance's end frees @u, which only the backend still holds. */
int tw_uring_detach(struct tw_uring *u)
{
	if (!u)
		return -EINVAL;
	/* The requests step 2 applies would queue a timeout that step 4 then
	 * turns into a NOP. */
	u->no_timeout = true;
	tw__backend_detach(u->w, false, disarm, u);
	if (u->busy)
		u->gone = true;
	else
		free(u);
	return 0;
}

struct io_uring *tw_uring_ring(struct tw_uring *u)
{
	return u ? u->ring : NULL;
}

int tw_uring_get_stats(const struct tw_uring *u, struct tw_uring_stats *out)
{
	if (!u || !out)
		return -EINVAL;
	*out = u->st;
	return 0;
}
