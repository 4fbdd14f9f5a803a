/* SPDX-License-Identifier: MIT */
/*
 * timerwheel-uring: drive a timer wheel from io_uring.
 *
 * Setup. Create the wheel from the backend's clock:
 * tw_wheel_create(&w, NULL, tw_uring_now()).
 * Compute expiries from tw_uring_now() too.
 * Then attach the wheel to a ring in one of two ways, each with its own
 * handle type:
 *
 * - struct tw_uring, on the program's own ring: tw_uring_attach(&u, w,
 *   &ring).
 *   The program hands every CQE it reaps to tw_uring_handle_cqe().
 * - struct tw_uring_loop, a loop that owns its ring:
 *   tw_uring_loop_init(&l, w, &opt), then tw_uring_run(l).
 *   Its options are a struct tw_uring_loop_options, or NULL for the
 *   defaults.
 *   The program queues its own SQEs from tw_uring_get_sqe().
 *   It gets their CQEs through &tw_uring_loop_options.cqe_fn.
 *
 * After that, the program calls only tw_add(), tw_mod() and tw_del().
 *
 * The timeout. The wheel keeps one IORING_OP_TIMEOUT in flight.
 * It is absolute, on CLOCK_MONOTONIC, with count 0.
 * It is armed for tw_next_expiry().
 * Arming a timer later than that costs nothing.
 * Arming an earlier one queues one IORING_TIMEOUT_UPDATE (kernel 5.11).
 * If a request of the backend still waits in the SQ, no SQE is queued.
 * That request reads the new time when it is submitted.
 *
 * The attached backend. It queues its SQEs on the program's ring, for the
 * program's next submit.
 * It submits by itself only when the SQ is full.
 * tw_uring_handle_cqe() runs the wheel when the timeout completes.
 * It says whether a CQE was the wheel's.
 *
 * Ownership. The program owns the wheel, as with every backend.
 * A backend attaches to a wheel the program created, and never frees it.
 * tw_uring_detach() and tw_uring_loop_close() give it back, its timers
 * still armed.
 * The program may attach it again, drive it by hand, or destroy it.
 * A backend frees what it created, never what it was given.
 * The owned loop frees the ring it created.
 * The attached backend touches the program's ring only for its own
 * requests.
 *
 * Letting go. Every backend takes the same steps in the same order:
 *
 * - The wake hook comes off.
 * - Requests still queued by other threads are applied.
 * - The notify hook comes off.
 *   After that the backend never touches the wheel.
 *   A wheel the program destroyed is released then.
 * - The timeout is removed.
 * - What the backend created is freed: the backend, and an owned loop's
 *   ring.
 *
 * Closing from a callback. tw_uring_detach() and tw_uring_loop_close() may
 * be called from one of the wheel's callbacks, as libuv's uv_close() may.
 * tw_uring_loop_close() may also come from &tw_uring_loop_options.cqe_fn.
 * The first four steps happen in the call.
 * Requests of other threads then stay queued for the wheel's next advance.
 * The wheel is the program's when the call returns.
 * The program may destroy it there, or attach it again.
 * Timers already due in the running advance still fire in it.
 * An attached backend no longer touches the program's ring either.
 * So the program may tear its ring down there too.
 * The last step waits until the backend's call returns:
 * tw_uring_handle_cqe() or tw_uring_run().
 * Until then the backend touches only its own memory.
 * tw_uring_loop_close() from another thread while tw_uring_run() runs is
 * refused.
 *
 * Threads. A backend, its wheel and its ring belong to one thread.
 * Other threads arm, re-arm and cancel the wheel's timers with
 * tw_post_mod() and tw_post_del().
 * A request that needs the loop sooner posts a tagged completion to the
 * ring's CQ.
 * That uses IORING_REGISTER_SEND_MSG_RING, from kernel 6.13 on.
 * The completion ends the loop's wait.
 * tw_uring_handle_cqe() then applies the requests.
 * On older kernels the backend opens an eventfd.
 * It keeps one IORING_OP_POLL_ADD of its own on it.
 * That SQE is held back while a chain is open, like the timeout.
 * It is queued again after each completion.
 * Other threads write to the eventfd, and its completion applies the
 * requests.
 * TIMERWHEEL_URING_WAKE=eventfd in the environment picks that path on any
 * kernel.
 * It is read at attach.
 * With it comes the rest of an older kernel's behaviour: no completion is
 * posted to the CQ without an SQE (see "Link chains").
 * The backend asks the kernel what it can do once, at attach.
 * Stop the posting threads before tw_uring_detach() or
 * tw_uring_loop_close(), which close the eventfd.
 *
 * user_data. The top 16 bits of the backend's user_data values are
 * TW_URING_UDATA_TAG ("tw").
 * The other bits name the backend and the kind of request.
 * User pointers and small integers never look like that.
 * tw_uring_is_tagged() tests any user_data.
 *
 * Rings created with IORING_SETUP_DEFER_TASKRUN. There the kernel posts
 * the timeout's completion only when the ring's thread asks for
 * completions.
 * io_uring_wait_cqe*(), io_uring_submit_and_wait*() and
 * io_uring_get_events() ask.
 * A loop that only submits and peeks must call io_uring_get_events() before
 * it peeks.
 * Otherwise no timer ever fires.
 * Such rings are also IORING_SETUP_SINGLE_ISSUER.
 * So use the wheel only on the ring's thread: tw_add() may submit when the
 * SQ is full.
 *
 * Rings created with IORING_SETUP_SQPOLL are refused.
 * The kernel thread could read a queued timespec while the backend
 * rewrites it.
 * Rings created with IORING_SETUP_IOPOLL are refused too.
 * The kernel rejects IORING_OP_TIMEOUT there (-EINVAL), so no timer would
 * fire.
 *
 * Link chains. An SQE queued right after one with IOSQE_IO_LINK or
 * IOSQE_IO_HARDLINK joins its chain.
 * So the backend never queues an SQE while a chain is open.
 * A chain is open when the last SQE not yet consumed by the kernel carries
 * one of those flags.
 * The backend holds its SQE back (&tw_uring_stats.chain_defers).
 * It forces one completion of its own without touching the SQ
 * (&tw_uring_stats.kicks).
 * With a timeout in flight, it cancels it through io_uring_register()
 * (kernel 6.0).
 * With none in flight, it posts a tagged completion with
 * IORING_REGISTER_SEND_MSG_RING (kernel 6.13).
 * The program reaps that completion after submitting its chain.
 * It hands it to tw_uring_handle_cqe(), and the backend queues its SQE.
 * The timer fires on time.
 * The rules for the program:
 *
 * - Hand every completion to tw_uring_handle_cqe(), as always.
 * - Do not reap completions while a chain of yours is still open in the
 *   SQ.
 *   Otherwise the SQE is held back until the next completion.
 *
 * Older kernels wait longer in two cases.
 * Before 6.13, a timer armed while a chain is open, with no timeout in
 * flight, waits.
 * It waits for the next completion the program hands over.
 * Or it waits for the next tw_add() or tw_mod() that moves the earliest
 * expiry.
 * Before 6.0, so does a timer that moves the earliest expiry earlier.
 * The backend never breaks a chain.
 * It never submits while one is open, also not when the SQ is full.
 * Nor does an owned loop's tw_uring_get_sqe(), which returns NULL instead.
 * But tw_uring_run() submits in each turn.
 * So a chain the program queues there must be complete when its callback
 * returns.
 *
 * Destroying the wheel. tw_wheel_destroy() may be called on a wheel a
 * backend drives.
 * It may come from one of its callbacks, inside tw_uring_handle_cqe() or
 * tw_uring_run().
 * The wheel's timers become idle at once.
 * Its memory goes when the backend lets go of it.
 * The program must still call tw_uring_detach() or tw_uring_loop_close().
 * Until then the backend reads the wheel safely.
 * A timeout still in flight completes, fires nothing and arms nothing.
 * An owned loop's tw_uring_run() returns once no request of the program is
 * in flight.
 * The libuv backend follows the same rule.
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
 * Useful after tw_uring_detach(), when no backend is left to ask.
 * The cancelled timeout's completion may still arrive then.
 */
#define tw_uring_is_tagged(ud) \
	((((uint64_t)(ud)) & TW_URING_UDATA_MASK) == TW_URING_UDATA_TAG)

struct tw_uring;
struct tw_uring_loop;

/**
 * tw_uring_cqe_fn - receives the program's own completions in an owned loop
 * @l:   the loop
 * @cqe: the completion; the loop marks it seen after the callback returns
 * @arg: &tw_uring_loop_options.arg
 *
 * The callback may queue SQEs with tw_uring_get_sqe().
 * It may use the wheel, and call tw_uring_stop().
 * It may close the loop (see "Closing from a callback").
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
 * @setup_flags: IORING_SETUP_* flags. Any of CLAMP, R_DISABLED, SUBMIT_ALL,
 *               COOP_TASKRUN, TASKRUN_FLAG, SQE128, CQE32, SINGLE_ISSUER
 *               and DEFER_TASKRUN (tw_uring_loop_init() refuses the rest).
 * @wait:        an enum tw_uring_wait
 * @cqe_fn:      called for each completion that is not the wheel's; may be NULL
 * @arg:         passed to @cqe_fn
 *
 * Zero-fill it, then set what differs from the defaults.
 * Passing NULL to tw_uring_loop_init() gives every default.
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
 * @stale_updates: updates that came too late (-ENOENT or -EALREADY). The
 *                 timeout had fired and its completion follows. They are
 *                 not errors.
 * @self_submits:  io_uring_submit() calls made because the SQ was full
 * @waits:         owned loop: times it waited for completions (0 from
 *                 tw_uring_get_stats(), see tw_uring_loop_get_stats())
 * @timed_waits:   owned loop: waits bounded by the wheel's next expiry
 * @errors:        unexpected failures (see @last_error)
 * @last_error:    the last unexpected negative errno, 0 if none
 * @chain_defers:  times an SQE was held back because the program's last
 *                 queued SQE left a link chain open (see "Link chains")
 * @kicks:         completions forced without an SQE, so that a held-back SQE
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
 * Create the wheel with it: tw_wheel_create(&w, NULL, tw_uring_now()).
 * Compute expiries from it.
 */
TW_API uint64_t tw_uring_now(void);

/**
 * tw_uring_attach - drive @w from the program's own @ring
 * @out:  where the new backend is stored; untouched on failure
 * @w:    the wheel, created with tw_uring_now() as its clock
 * @ring: an initialised ring, used by the caller's thread only
 *
 * It installs the wheel's notify and wake hooks.
 * If timers are already armed, it queues the timeout at once.
 * From then on the program hands every CQE it reaps to
 * tw_uring_handle_cqe().
 * It submits as usual.
 * The wheel stays the program's: tw_uring_detach() gives it back and never
 * frees it.
 * A ring created with IORING_SETUP_DEFER_TASKRUN needs a loop that asks
 * for completions.
 * See "Rings created with IORING_SETUP_DEFER_TASKRUN".
 * The program's own link chains hold the backend's SQEs back (see "Link
 * chains").
 *
 * Return: 0 on success.
 * It returns -EINVAL if an argument is NULL or @w was destroyed.
 * It returns -EOPNOTSUPP if @ring uses IORING_SETUP_SQPOLL or
 * IORING_SETUP_IOPOLL.
 * It returns -EBUSY if @w already has a notify hook, and -ENOMEM.
 * On failure nothing is queued and @w keeps no hook.
 */
TW_API int tw_uring_attach(struct tw_uring **out, struct tw_wheel *w, struct io_uring *ring);

/**
 * tw_uring_handle_cqe - offer a completion to the backend
 * @u:   the backend
 * @cqe: a completion reaped from the ring; the caller still marks it seen
 *
 * When @cqe is the wheel's timeout, it reads the clock and runs
 * tw_advance().
 * The timers' callbacks run inside this call.
 * Then the timeout for the next expiry is queued.
 * A callback may call tw_uring_detach(@u): @u is freed as this returns.
 * An update's late -ENOENT or -EALREADY is not an error.
 * It is counted in &tw_uring_stats.stale_updates.
 *
 * Return: 1 if @cqe was this backend's: the program must ignore it.
 * It returns 0 if not, and -EINVAL if @u or @cqe is NULL.
 */
TW_API int tw_uring_handle_cqe(struct tw_uring *u, const struct io_uring_cqe *cqe);

/**
 * tw_uring_detach - stop driving the wheel and free the backend
 * @u: an attached backend
 *
 * It lets go of the wheel in the steps every backend takes (see "Letting
 * go").
 * Requests queued by other threads are applied, and the hooks come off.
 * The wheel and its armed timers are left to the program.
 * The program may attach it again, or destroy it.
 * If the program destroyed the wheel already, this releases it.
 * A backend request still in the SQ becomes a NOP.
 * A timeout in flight gets a removal queued for the next submit.
 * While a chain of the program is open in the SQ, it is cancelled through
 * io_uring_register() instead (kernel 6.0).
 * Their completions carry the tag: skip them with tw_uring_is_tagged().
 * It may be called from a timer callback (see "Closing from a callback").
 * @u is freed then when tw_uring_handle_cqe() returns.
 * A ring the program tore down first (io_uring_queue_exit()) is detected.
 * Nothing of that ring is touched then: the kernel dropped its requests.
 * The struct io_uring itself must still exist.
 *
 * Return: 0 on success.
 * It returns -EINVAL if @u is NULL.
 * If no SQE is free even after submitting, the timeout completes by itself.
 * It still returns 0 then.
 */
TW_API int tw_uring_detach(struct tw_uring *u);

/**
 * tw_uring_loop_init - create a ring, attach the wheel to it, and own both
 * @out: where the new loop is stored; untouched on failure
 * @w:   the wheel, created with tw_uring_now() as its clock
 * @opt: ring size, setup flags, wait method and completion callback; NULL
 *       for the defaults (256 entries, no flags, TW_URING_WAIT_ARG, no
 *       callback)
 *
 * The ring and the backend on it are the loop's.
 * tw_uring_loop_close() frees them.
 * The wheel stays the program's.
 *
 * With IORING_SETUP_R_DISABLED, enable the ring before tw_uring_run().
 * Use IORING_REGISTER_ENABLE_RINGS on tw_uring_loop_ring().
 * Until then tw_uring_run() returns -EBADFD.
 *
 * Return: 0 on success.
 * It returns -EINVAL if @out or @w is NULL, @w was destroyed or @opt->wait
 * is unknown.
 * It returns -EOPNOTSUPP for IORING_SETUP_SQPOLL or IORING_SETUP_IOPOLL.
 * The kernel runs no timeouts there.
 * It returns -EINVAL for any other flag not listed in
 * &tw_uring_loop_options.setup_flags.
 * SQ_AFF, CQSIZE and ATTACH_WQ need fields the options do not carry.
 * Newer flags need a newer liburing than the backend was built with.
 * It returns -EBUSY if @w already has a notify hook, and -ENOMEM.
 * It returns the error of io_uring_queue_init_params().
 * That is -ENOSYS or -EPERM when the kernel refuses io_uring.
 * It is -EINVAL for flag combinations the kernel refuses.
 * Examples are TASKRUN_FLAG without COOP_TASKRUN or DEFER_TASKRUN.
 * Another is DEFER_TASKRUN without SINGLE_ISSUER.
 * On failure @out is untouched and @w keeps no hook.
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
 * For registering files and buffers.
 * Also for enabling a ring created with IORING_SETUP_R_DISABLED.
 * Queue requests with tw_uring_get_sqe().
 * Do not reap completions from it: tw_uring_run() does.
 * Submitting on it (io_uring_submit()) is allowed.
 * A program does so after tw_uring_get_sqe() returned NULL.
 */
TW_API struct io_uring *tw_uring_loop_ring(struct tw_uring_loop *l);

/**
 * tw_uring_get_sqe - an SQE for the program's own request, in an owned loop
 * @l: the loop
 *
 * When the SQ is full, it submits first to make room.
 * It does not when the program's last SQE left a link chain open
 * (IOSQE_IO_LINK or IOSQE_IO_HARDLINK).
 * The kernel links only within one submit, so a submit would end the chain
 * there.
 * It then returns NULL, as io_uring_get_sqe() does on a full SQ.
 * It submits nothing.
 * The program ends its chain with the SQEs it has, clearing the flag on
 * the last.
 * Or it submits the chain as it stands, which ends it there.
 * It calls io_uring_submit() on tw_uring_loop_ring() for that.
 * Then it asks again.
 * A chain stays whole if it fits in the SQ's free space
 * (io_uring_sq_space_left()).
 * It must also be complete before the loop submits next.
 * That is when the callback that queued it returns, or when tw_uring_run()
 * starts.
 *
 * Each SQE taken here counts as a request in flight.
 * It counts until a completion for it arrives without IORING_CQE_F_MORE.
 * tw_uring_run() keeps running while any request is in flight.
 * So a request whose success posts no completion (IOSQE_CQE_SKIP_SUCCESS)
 * must not come from here.
 *
 * Return: the SQE, or NULL if @l is NULL.
 * It returns NULL if the SQ is full while the program's chain is open.
 * It returns NULL if the SQ stays full after submitting.
 */
TW_API struct io_uring_sqe *tw_uring_get_sqe(struct tw_uring_loop *l);

/**
 * tw_uring_run - run an owned loop
 * @l: the loop
 *
 * It runs turn by turn, until tw_uring_stop().
 * It also returns when no timer is armed and no request from
 * tw_uring_get_sqe() is in flight.
 * A turn submits, then waits for completions or the wheel's next expiry.
 * &tw_uring_stats.waits counts the turns.
 * It hands the completions that are there to the backend and the callback.
 * It runs the wheel at most once.
 * With TW_URING_WAIT_ARG, it runs the wheel after the completions.
 * With TW_URING_WAIT_SQE, it runs the wheel when its timeout's completion
 * comes up.
 * So a turn fires at most the wake budget (tw_set_wake_budget()).
 * Timers it left due wait for the next turn.
 * That turn first submits the program's SQEs and hands over new
 * completions.
 * A turn hands over the completions in the CQ when it begins to.
 * A completion that a submit inside the turn brings waits for the next
 * turn.
 * Such a submit comes from tw_uring_get_sqe() on a full SQ.
 *
 * Return: 0 on success.
 * It also returns 0 when a callback closed the loop: @l is freed then.
 * It returns -EINVAL if @l is NULL, and -EBUSY if it is already running.
 * It returns a negative errno from io_uring_enter(), other than -EINTR,
 * -ETIME and -EAGAIN.
 * The loop then stops; call it again to go on.
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
 * It lets go of the wheel as tw_uring_detach() does.
 * Requests queued by other threads are applied, and the hooks come off.
 * The wheel and its armed timers are left to the program.
 * A wheel the program destroyed is released here.
 * Then it frees what the loop created: the ring, and @l.
 * The kernel cancels the ring's requests still in flight, without
 * callbacks.
 * It may be called from a callback inside tw_uring_run().
 * The ring and @l are freed then when tw_uring_run() returns.
 * tw_uring_run() returns when that callback does.
 * Completions not yet handed over are dropped with the ring.
 *
 * Return: 0 on success.
 * It returns -EINVAL if @l is NULL.
 * It returns -EBUSY while tw_uring_run() runs on another thread.
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
