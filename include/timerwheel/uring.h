/* SPDX-License-Identifier: MIT */
/*
 * timerwheel-uring: drive a timer wheel from io_uring.
 *
 * The wheel keeps one IORING_OP_TIMEOUT (count 0, IORING_TIMEOUT_ABS,
 * CLOCK_MONOTONIC) in flight, armed for tw_next_expiry(). Arming a timer
 * later than that costs nothing; arming an earlier one queues one
 * IORING_TIMEOUT_UPDATE (kernel >= 5.11), and only if no request of the
 * backend is still waiting in the SQ (that one simply reads the new time
 * when it is submitted). The program calls only tw_add(), tw_mod() and
 * tw_del(); the wheel's clock is CLOCK_MONOTONIC, read with tw_uring_now().
 *
 * Two ways to use it, two handle types:
 *
 * 1. struct tw_uring, attached to the program's own ring: tw_uring_attach().
 *    The backend queues its SQEs on that ring for the program's next submit
 *    and submits by itself only when the SQ is full. Every CQE the program
 *    reaps goes through tw_uring_handle_cqe(), which runs the wheel when
 *    the timeout completes and says whether the CQE was the wheel's.
 *
 * 2. struct tw_uring_loop, an owned loop built on the first:
 *    tw_uring_loop_init() creates a ring and attaches a backend to it,
 *    tw_uring_run() runs it until tw_uring_stop() or until nothing is left
 *    to wait for. The program queues its own SQEs from tw_uring_get_sqe()
 *    and gets their CQEs through a callback.
 *
 * Ownership, the same for every backend: the program owns the wheel. A
 * backend attaches to a wheel the program created and never frees it:
 * tw_uring_detach() and tw_uring_loop_close() give it back with its timers
 * armed (attach it again, drive it by hand, or destroy it). A backend
 * frees what it created, never what it was given: the owned loop frees the
 * ring it created, the attached backend never touches the program's ring
 * beyond its own requests.
 *
 * Letting go. The same steps in the same order for every backend: the
 * wake hook comes off; requests still queued by other threads are applied;
 * the notify hook comes off, after which the backend never touches the
 * wheel (a wheel the program destroyed is released then); the timeout is
 * removed; and what the backend created is freed (the backend, and for an
 * owned loop its ring).
 *
 * Threads. Other threads arm, re-arm and cancel the wheel's timers with
 * tw_post_mod() and tw_post_del(); a request that needs the loop sooner
 * posts a tagged completion straight to the ring's CQ
 * (IORING_REGISTER_SEND_MSG_RING, kernel 6.13 and later), which ends the
 * loop's wait, and tw_uring_handle_cqe() applies the requests. On older
 * kernels the backend opens an eventfd and keeps one IORING_OP_POLL_ADD of
 * its own on it (an SQE like its timeout, held back while a chain is open,
 * queued again after each completion); other threads write to it, and its
 * completion applies the requests. TIMERWHEEL_URING_WAKE=eventfd in the
 * environment, read at attach, picks that path on any kernel, and with it
 * the rest of an older kernel's behaviour: no completion is posted to the
 * CQ without an SQE (see "Link chains"). The backend asks the kernel what
 * it can do once, at attach. Stop those threads before
 * tw_uring_detach() or tw_uring_loop_close(), which close the eventfd.
 *
 * user_data. The backend's requests carry user_data values whose top 16
 * bits are TW_URING_UDATA_TAG ("tw"); the rest names the backend and the
 * kind of request. User pointers and small integers never look like that.
 * Test any user_data with tw_uring_is_tagged().
 *
 * Rings created with IORING_SETUP_DEFER_TASKRUN. There the kernel posts the
 * timeout's completion only when the ring's thread enters the kernel asking
 * for completions: io_uring_wait_cqe*(), io_uring_submit_and_wait*(),
 * io_uring_get_events(). A loop that only submits and peeks must call
 * io_uring_get_events() before peeking, or no timer ever fires. Such rings
 * are also IORING_SETUP_SINGLE_ISSUER: use the wheel (whose tw_add() may
 * submit when the SQ is full) only on the ring's thread.
 *
 * Rings created with IORING_SETUP_SQPOLL are refused: the kernel thread
 * could read a queued timespec while the backend rewrites it. Rings created
 * with IORING_SETUP_IOPOLL are refused too: the kernel rejects
 * IORING_OP_TIMEOUT there (-EINVAL), so no timer would ever fire.
 *
 * Link chains. An SQE queued right after one that carries IOSQE_IO_LINK or
 * IOSQE_IO_HARDLINK joins its chain. So the backend never queues an SQE
 * while the last SQE not yet consumed by the kernel leaves a chain open:
 * its timeout would wait for the program's request, and the program's next
 * SQE would hang off the timeout instead of its own chain. It holds the SQE
 * back (&tw_uring_stats.chain_defers) and forces one completion of its own
 * without touching the SQ (&tw_uring_stats.kicks): it cancels its timeout
 * in flight through io_uring_register() (kernel 6.0), or, with none in
 * flight, posts a tagged completion to the ring with
 * IORING_REGISTER_SEND_MSG_RING (kernel 6.13). When the program reaps that
 * completion and hands it to tw_uring_handle_cqe(), after submitting its
 * chain, the backend queues its SQE; the timer fires on time. Rules: hand
 * every completion to tw_uring_handle_cqe() (as always), and do not reap
 * completions while a chain of yours is still open in the SQ, or the SQE is
 * held back until the next one. On kernels older than 6.13 a timer armed
 * while a chain is open, on a wheel with no timeout in flight, waits for
 * the next completion the program hands over or the next tw_add()/tw_mod()
 * that moves the earliest expiry; on kernels older than 6.0, also a timer
 * that moves the earliest expiry earlier. The backend never breaks a chain:
 * it never submits while one is open (also not when the SQ is full). Nor
 * does an owned loop's tw_uring_get_sqe(), which returns NULL instead; but
 * tw_uring_run() submits in each turn, so a chain the program queues there
 * must be complete when the callback that queued it returns.
 *
 * Destroying the wheel. tw_wheel_destroy() on a wheel a backend drives
 * (also from one of its callbacks, inside tw_uring_handle_cqe() or
 * tw_uring_run()) idles its timers at once; its memory goes when the
 * backend lets go of it: tw_uring_detach() or tw_uring_loop_close(), which
 * the program must still call. Until then the backend reads it safely: a
 * timeout still in flight completes, fires nothing and arms nothing, and
 * an owned loop's tw_uring_run() returns once no request of the program is
 * in flight. The rule is the same for the libuv backend.
 *
 * Threads. A backend, its wheel and its ring belong to one thread.
 */
#ifndef TIMERWHEEL_URING_H
#define TIMERWHEEL_URING_H

/* liburing first: it sets the feature macros its own includes need. */
#include <liburing.h>

#include <stdint.h>
#include <timerwheel.h>

#ifdef __cplusplus
extern "C" {
#endif

/** The top 16 bits of every user_data the backend puts on a ring ("tw"). */
#define TW_URING_UDATA_TAG 0x7477000000000000ull
/** The bits of user_data that hold TW_URING_UDATA_TAG. */
#define TW_URING_UDATA_MASK 0xffff000000000000ull

/**
 * tw_uring_is_tagged - does a user_data belong to some timerwheel backend?
 * @ud: a CQE's user_data
 *
 * Useful after tw_uring_detach(), when the cancelled timeout's completion
 * may still arrive and no backend is left to ask.
 */
#define tw_uring_is_tagged(ud) \
	((((uint64_t)(ud)) & TW_URING_UDATA_MASK) == TW_URING_UDATA_TAG)

struct tw_uring;
struct tw_uring_loop;

/**
 * tw_uring_cqe_fn - receives the program's own completions in an owned loop
 * @l:   the loop
 * @cqe: the completion; the loop marks it seen after the callback returns
 * @arg: tw_uring_loop_options.arg
 *
 * The callback may queue SQEs (tw_uring_get_sqe()), use the wheel, and call
 * tw_uring_stop().
 */
typedef void (*tw_uring_cqe_fn)(struct tw_uring_loop *l, struct io_uring_cqe *cqe, void *arg);

/** How an owned loop bounds its wait by the wheel's next expiry. */
enum tw_uring_wait {
	/** Default: the timeout rides on the wait itself (io_uring_submit_and_wait_timeout), no SQE. */
	TW_URING_WAIT_ARG = 0,
	/** One IORING_OP_TIMEOUT on the ring, as in attached mode. */
	TW_URING_WAIT_SQE = 1,
};

/**
 * struct tw_uring_loop_options - how tw_uring_loop_init() builds its ring
 * @entries:     SQ entries; 0 means 256
 * @setup_flags: IORING_SETUP_* flags: any of CLAMP, R_DISABLED, SUBMIT_ALL,
 *               COOP_TASKRUN, TASKRUN_FLAG, SQE128, CQE32, SINGLE_ISSUER and
 *               DEFER_TASKRUN (see tw_uring_loop_init() for the rest)
 * @wait:        an enum tw_uring_wait
 * @cqe_fn:      called for each completion that is not the wheel's; may be NULL
 * @arg:         passed to @cqe_fn
 */
struct tw_uring_loop_options {
	unsigned entries;
	unsigned setup_flags;
	unsigned wait;
	tw_uring_cqe_fn cqe_fn;
	void *arg;
};

/**
 * struct tw_uring_stats - what the backend did
 * @sqes:          SQEs queued by the backend (the sum of the next three)
 * @timeouts:      IORING_OP_TIMEOUT requests queued
 * @updates:       IORING_TIMEOUT_UPDATE requests queued
 * @removes:       timeout removals and cancelled requests (tw_uring_detach())
 * @retargets:     earlier expiries taken by a request still in the SQ, no SQE
 * @expirations:   completions of the wheel's timeout
 * @stale_updates: updates that came too late (-ENOENT or -EALREADY): the
 *                 timeout had fired and its completion follows; not errors
 * @self_submits:  io_uring_submit() calls made because the SQ was full
 * @waits:         owned loop: times it waited for completions (0 from
 *                 tw_uring_get_stats(), see tw_uring_loop_get_stats())
 * @timed_waits:   owned loop: waits bounded by the wheel's next expiry
 * @errors:        unexpected failures (see @last_error)
 * @last_error:    the last unexpected negative errno, 0 if none
 * @chain_defers:  times an SQE was held back because the program's last
 *                 queued SQE left a link chain open (see "Link chains")
 * @kicks:         completions forced without an SQE so that a held-back SQE
 *                 gets queued after the chain is submitted
 */
struct tw_uring_stats {
	uint64_t sqes;
	uint64_t timeouts;
	uint64_t updates;
	uint64_t removes;
	uint64_t retargets;
	uint64_t expirations;
	uint64_t stale_updates;
	uint64_t self_submits;
	uint64_t waits;
	uint64_t timed_waits;
	uint64_t errors;
	int last_error;
	uint64_t chain_defers;
	uint64_t kicks;
};

/**
 * tw_uring_now - the backend's clock: CLOCK_MONOTONIC in ns
 *
 * Create the wheel with it and compute expiries from it.
 */
TW_API uint64_t tw_uring_now(void);

/**
 * tw_uring_attach - drive @w from the program's own @ring
 * @out:  where the new backend is stored; untouched on failure
 * @w:    the wheel, created with tw_uring_now() as its clock
 * @ring: an initialised ring, used by the caller's thread only
 *
 * Installs the wheel's notify and wake hooks. If timers are already armed,
 * the timeout is queued at once. From then on the program hands every CQE
 * it reaps to tw_uring_handle_cqe(), and submits as usual. The wheel stays
 * the program's: tw_uring_detach() gives it back and never frees it. A ring
 * created with IORING_SETUP_DEFER_TASKRUN needs a loop that asks the kernel
 * for completions (see "Rings created with IORING_SETUP_DEFER_TASKRUN"), and
 * the program's own link chains hold the backend's SQEs back (see "Link
 * chains").
 *
 * Return: 0, -EINVAL if an argument is NULL or @w was destroyed, -EOPNOTSUPP if @ring uses
 * IORING_SETUP_SQPOLL or IORING_SETUP_IOPOLL, -EBUSY if @w already has a
 * notify hook, -ENOMEM. On failure nothing is queued and @w keeps no hook.
 */
TW_API int tw_uring_attach(struct tw_uring **out, struct tw_wheel *w, struct io_uring *ring);

/**
 * tw_uring_handle_cqe - offer a completion to the backend
 * @u:   the backend
 * @cqe: a completion reaped from the ring; the caller still marks it seen
 *
 * When @cqe is the wheel's timeout, reads the clock and runs tw_advance():
 * the timers' callbacks run inside this call, and the timeout for the next
 * expiry is queued. Late -ENOENT/-EALREADY results of updates are counted
 * in &tw_uring_stats.stale_updates and otherwise ignored.
 *
 * Return: 1 if @cqe was this backend's (the program must ignore it), 0 if
 * not, -EINVAL if @u or @cqe is NULL.
 */
TW_API int tw_uring_handle_cqe(struct tw_uring *u, const struct io_uring_cqe *cqe);

/**
 * tw_uring_detach - stop driving the wheel and free the backend
 * @u: an attached backend
 *
 * Lets go of the wheel in the steps every backend takes
 * (see "Letting go"): requests queued by other threads are applied, the
 * hooks come off, and the wheel and its armed timers are left to the program (attach
 * again, or destroy the wheel). If the program destroyed the wheel
 * already, this releases it. A backend request still in the SQ
 * is turned into a NOP, and a timeout in flight gets a removal queued for
 * the next submit (while a chain of the program is open in the SQ, it is
 * cancelled through io_uring_register() instead, kernel 6.0). Their completions carry the tag: skip them with
 * tw_uring_is_tagged(). Must not be called from a timer callback.
 * A ring the program tore down first (io_uring_queue_exit()) is detected:
 * nothing of it is touched then, as the kernel dropped its requests. The
 * struct io_uring itself must still exist.
 *
 * Return: 0, -EINVAL if @u is NULL, -EBUSY from a callback run by the
 * backend. If no SQE is free even after submitting,
 * the timeout is left to complete by itself and 0 is still returned.
 */
TW_API int tw_uring_detach(struct tw_uring *u);

/**
 * tw_uring_loop_init - create a ring, attach the wheel to it, and own both
 * @out: where the new loop is stored; untouched on failure
 * @w:   the wheel, created with tw_uring_now() as its clock
 * @opt: ring size, setup flags, wait method and completion callback; NULL
 *       for the defaults (256 entries, no flags, TW_URING_WAIT_ARG, no callback)
 *
 * The ring and the backend on it are the loop's, freed by
 * tw_uring_loop_close(); the wheel stays the program's.
 *
 * IORING_SETUP_R_DISABLED: enable the ring (IORING_REGISTER_ENABLE_RINGS on
 * tw_uring_loop_ring()) before tw_uring_run(), which returns -EBADFD until
 * then.
 *
 * Return: 0, -EINVAL if @out or @w is NULL, @w was destroyed or
 * @opt->wait is unknown, -EOPNOTSUPP for IORING_SETUP_SQPOLL or IORING_SETUP_IOPOLL (the kernel
 * runs no timeouts there), -EINVAL for any other flag not listed in
 * &tw_uring_loop_options.setup_flags (SQ_AFF, CQSIZE and ATTACH_WQ need
 * fields the options do not carry; newer flags need a newer liburing than
 * the one the backend was built with), -EBUSY if @w already has a notify
 * hook, -ENOMEM, or the error of io_uring_queue_init_params(): -ENOSYS or
 * -EPERM when the kernel refuses io_uring, -EINVAL for combinations it
 * refuses (TASKRUN_FLAG without COOP_TASKRUN or DEFER_TASKRUN,
 * DEFER_TASKRUN without SINGLE_ISSUER). On failure @out is untouched and
 * @w keeps no hook.
 */
TW_API int tw_uring_loop_init(struct tw_uring_loop **out, struct tw_wheel *w,
			      const struct tw_uring_loop_options *opt);

/**
 * tw_uring_ring - the ring an attached backend queues on
 * @u: the backend (NULL gives NULL)
 */
TW_API struct io_uring *tw_uring_ring(struct tw_uring *u);

/**
 * tw_uring_loop_ring - the ring an owned loop created
 * @l: the loop (NULL gives NULL)
 *
 * For registering files and buffers, or enabling a ring created with
 * IORING_SETUP_R_DISABLED. Queue requests with tw_uring_get_sqe(), and do
 * not reap completions from it: tw_uring_run() does. Submitting on it
 * (io_uring_submit()) is allowed, as after tw_uring_get_sqe() returned NULL.
 */
TW_API struct io_uring *tw_uring_loop_ring(struct tw_uring_loop *l);

/**
 * tw_uring_get_sqe - an SQE for the program's own request, in an owned loop
 * @l: the loop
 *
 * When the SQ is full, submits first to make room, unless the program's
 * last SQE left a link chain open (IOSQE_IO_LINK or IOSQE_IO_HARDLINK):
 * the kernel links only within one submit, so submitting would end the
 * chain there. Then it returns NULL, as io_uring_get_sqe() does on a full
 * SQ, and submits nothing: the program ends its chain with the SQEs it has
 * (clearing the flag on the last), or submits it as it stands
 * (io_uring_submit() on tw_uring_loop_ring(), which ends it there), and
 * asks again. A chain stays whole if it fits in the SQ's free space
 * (io_uring_sq_space_left()) and is complete before the loop submits next,
 * that is when the callback that queued it returns (or when
 * tw_uring_run() starts).
 *
 * Each SQE taken here counts as a request
 * in flight until a completion for it arrives without IORING_CQE_F_MORE:
 * tw_uring_run() keeps running while any is. Requests whose success posts
 * no completion (IOSQE_CQE_SKIP_SUCCESS) must not come from here.
 *
 * Return: the SQE, or NULL if @l is NULL, if the SQ is full while the
 * program's chain is open, or if it stays full after submitting.
 */
TW_API struct io_uring_sqe *tw_uring_get_sqe(struct tw_uring_loop *l);

/**
 * tw_uring_run - run an owned loop
 * @l: the loop
 *
 * Turn by turn: submits, waits for completions or the wheel's next expiry
 * (&tw_uring_stats.waits counts the turns), hands the completions that
 * are there to the backend and the callback, and runs the wheel at most
 * once (with TW_URING_WAIT_ARG after the completions, with
 * TW_URING_WAIT_SQE as its timeout's completion comes up among them).
 * So a turn fires at most the wake budget (tw_set_wake_budget()), and
 * timers it left due wait for the next turn, which submits the program's
 * SQEs and hands over the completions that came in meanwhile. A turn
 * hands over the completions that are in the CQ as it begins to; one that
 * a submit inside it brings (tw_uring_get_sqe() on a full SQ) waits for the
 * next turn. Until tw_uring_stop(), or until no
 * timer is armed and no request from tw_uring_get_sqe() is in flight.
 *
 * Return: 0, -EINVAL if @l is NULL, -EBUSY if already running, or a negative errno from io_uring_enter() other than -EINTR,
 * -ETIME and -EAGAIN (the loop stops then; call it again to go on).
 */
TW_API int tw_uring_run(struct tw_uring_loop *l);

/**
 * tw_uring_stop - make tw_uring_run() return after the current iteration
 * @l: the loop (NULL is ignored)
 */
TW_API void tw_uring_stop(struct tw_uring_loop *l);

/**
 * tw_uring_loop_close - let go of the wheel, free the ring and the loop
 * @l: the loop
 *
 * Lets go of the wheel as tw_uring_detach() does: requests queued by other
 * threads are applied, the hooks come off, and the wheel and its armed
 * timers are left to the program (a wheel the program destroyed is
 * released here). Then frees what the loop created: the ring, whose
 * requests still in flight the kernel cancels without callbacks, and @l.
 *
 * Return: 0, -EINVAL if @l is NULL, -EBUSY while tw_uring_run() is running.
 */
TW_API int tw_uring_loop_close(struct tw_uring_loop *l);

/**
 * tw_uring_get_stats - read the backend's counters
 * @u:   the backend
 * @out: filled with the counters
 *
 * Return: 0, -EINVAL if @u or @out is NULL.
 */
TW_API int tw_uring_get_stats(const struct tw_uring *u, struct tw_uring_stats *out);

/**
 * tw_uring_loop_get_stats - read an owned loop's counters
 * @l:   the loop
 * @out: filled with the counters of the backend on its ring and its waits
 *
 * Return: 0, -EINVAL if @l or @out is NULL.
 */
TW_API int tw_uring_loop_get_stats(const struct tw_uring_loop *l, struct tw_uring_stats *out);

#ifdef __cplusplus
}
#endif

#endif /* TIMERWHEEL_URING_H */
