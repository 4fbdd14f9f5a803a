/* SPDX-License-Identifier: MIT */
/*
 * timerwheel-uv's uv_timer_t layer: libuv's timer API, in milliseconds as
 * libuv's, on a wheel. A libuv program moves its timers over by renaming
 * types and functions, nothing else:
 *
 *   uv_timer_t, uv_timer_cb           tw_uv_timer_t, tw_uv_timer_cb
 *   uv_timer_init(loop, t)            tw_uv_timer_init(loop, t)
 *   uv_timer_start, _stop, _again, _set_repeat, _get_repeat, _get_due_in
 *                                     tw_uv_timer_start, _stop, ...
 *   uv_is_active((uv_handle_t *)t)    tw_uv_timer_is_active(t)
 *   uv_ref, uv_unref, uv_has_ref      tw_uv_timer_ref, _unref, _has_ref
 *   uv_close((uv_handle_t *)t, cb)    tw_uv_timer_close(t, cb)
 *   uv_is_closing((uv_handle_t *)t)   tw_uv_timer_is_closing(t)
 *   a uv_close_cb for a timer         tw_uv_timer_close_cb (takes the timer)
 *
 * The loop's wheel. tw_uv_timer_init() takes the loop, as uv_timer_init()
 * does: the first timer of a loop creates a wheel for it (a struct tw_uv
 * with the default 1 ms tick, see <timerwheel/uv.h>), later ones share it,
 * and closing the last of them closes it, in the same loop turn. As with
 * native timers, uv_loop_close() succeeds only once every timer is closed.
 * A program that wants a tick, a slack or flags of its own creates its
 * struct tw_uv and uses tw_uv_timer_init_on() instead. One uv_timer_t and
 * one uv_async_t per wheel serve every timer of the layer. uv_walk()
 * through <timerwheel/uv_port.h> (tw_uv_walk()) hides those and shows the
 * loop's timers instead, with the type TW_UV_TIMER, so the usual shutdown
 * (walk, close every handle, run the loop, uv_loop_close()) ends cleanly.
 *
 * No edit to the program: <timerwheel/uv_port.h> gives the layer libuv's
 * spelling (uv_timer_t, uv_timer_start(), uv_close(), uv_walk(), ...).
 *
 * Order, as libuv's. The timers of one wheel that fire in the same wake-up
 * run in the order of their due millisecond (the deadline in uv_hrtime()
 * nanoseconds, rounded up to a whole ms), and those due in the same
 * millisecond in the order they were started: by tw_uv_timer_start(),
 * tw_uv_timer_again(), or a repeating timer's restart, which is libuv's
 * start id. With the default 1 ms tick every timer due in one millisecond
 * fires in the same wake-up, so for the loop's wheel the order holds for
 * all of them; with a coarser tick or a slack, timers of different wake-ups
 * run in the order of their wake-ups. The core API's timers on the same
 * wheel are not part of this order, and cost nothing for it. A wake budget
 * (tw_set_wake_budget() on the backend's wheel) keeps the order: a
 * wake-up runs at most that many of the layer's callbacks, the first in
 * the order, and the rest run first in the next wake-up, a millisecond
 * later, holding the loop meanwhile, referenced or not: libuv would have
 * run them all before it looked at the loop's liveness again. On a
 * backend with timers of the layer, the budget counts only the layer's
 * callbacks: the program's own tw_timer timers on its wheel fire all in
 * their wake-up.
 *
 * Liveness, as libuv's. The loop stays alive while a timer is active and
 * referenced (tw_uv_timer_unref() takes one out, as uv_unref()), or while a
 * close callback is to come. The backend keeps unreferenced timers on a
 * second wheel of its own, created with its first timer of the layer (same
 * tick, no default slack), which shares the backend's uv_timer_t but never
 * holds the loop; ref and unref move a started timer across, keeping its
 * deadline and its place in the order. On a struct tw_uv of the program's,
 * its own tw_timer timers hold the loop as before. TW_UV_WEAK: no timer of
 * the backend holds the loop.
 *
 * Close, as libuv's. tw_uv_timer_close() stops the timer at once; its
 * callback runs from the loop when libuv runs uv_close() callbacks, so
 * after a close outside the loop one uv_run(loop, UV_RUN_ONCE) runs it;
 * the timer's memory may be released from then on. Closes in one loop turn
 * call back last first, as libuv's do, the layer's together (see
 * tw_uv_timer_close()).
 *
 * Where the contract differs from libuv's:
 *
 * - Never early. A timer started with timeout T fires no sooner than T ms
 *   after tw_uv_timer_start() by the clock (uv_hrtime()), where libuv
 *   counts from the loop's cached time, which may be older (libuv issue
 *   4773). Deadlines are kept in ns and fire within the wheel's tick (1 ms
 *   by default; a default slack in tw_uv_init()'s config widens that to its
 *   window, see "Slack" in timerwheel.h).
 * - A timer due in this wake-up whose callback has not run yet is not
 *   active (tw_uv_timer_is_active() is 0), as in libuv from 1.45 on (1.44,
 *   Debian 12's, says 1);
 *   stopping or restarting it from an earlier callback still keeps its
 *   callback from running.
 * - A timeout of 0 is due at once and runs in the loop's next iteration
 *   without the loop sleeping, as libuv's; started from a callback of the
 *   layer's timers it waits for the next millisecond instead, where libuv
 *   1.44 runs it in the same pass over its timers (a timer that restarts
 *   itself so starves the loop there).
 * - Deadlines saturate at the end of 64-bit nanoseconds (see
 *   tw_uv_timer_start()).
 *
 * A struct tw_uv_timer is smaller than a uv_timer_t. Starting, stopping
 * and restarting one costs the wheel O(1) and libuv nothing, unless it
 * moves the earliest deadline earlier.
 *
 * A repeating timer is restarted before its callback with the repeat as
 * its timeout, from the moment the loop woke, as libuv does: it drifts by
 * the loop's lateness. struct tw_periodic repeats without drift.
 *
 * A timer belongs to its loop's thread.
 */
#ifndef TIMERWHEEL_UV_TIMER_H
#define TIMERWHEEL_UV_TIMER_H

#include <stddef.h>
#include <stdint.h>

#include <timerwheel/uv.h>

#ifdef __cplusplus
extern "C" {
#endif

/** tw_uv_timer_t - the type of a timer, as uv_timer_t */
typedef struct tw_uv_timer tw_uv_timer_t;

/**
 * tw_uv_timer_cb - a timer's callback, as uv_timer_cb
 * @t: the timer that fired
 */
typedef void (*tw_uv_timer_cb)(struct tw_uv_timer *t);

/**
 * tw_uv_timer_close_cb - a closed timer's callback, as uv_close_cb
 * @t: the timer; its memory may be released from here on
 */
typedef void (*tw_uv_timer_close_cb)(struct tw_uv_timer *t);

/**
 * TW_UV_TIMER - the type of a timer of the layer, in tw_uv_timer_t.type
 *
 * It is UV_HANDLE, libuv's abstract base type. No libuv handle has it at
 * run time, and uv_guess_handle() never returns it. It lies within libuv's
 * handle types, so a table sized UV_HANDLE_TYPE_MAX can be indexed by it.
 * <timerwheel/uv_port.h> tells the layer's timers apart by it and names it
 * UV_TIMER.
 */
#define TW_UV_TIMER UV_HANDLE

/**
 * struct tw_uv_timer - a timer in libuv's terms, on a wheel
 * @data: free for the program, like uv_handle_t.data
 * @loop: the loop, read-only, like uv_handle_t.loop
 * @type: TW_UV_TIMER, read-only, like uv_handle_t.type
 *
 * Allocated by the program, as a uv_timer_t is. The three public fields
 * sit where uv_handle_t has them, so a pointer to the timer cast to
 * uv_handle_t * reads them as libuv's own handles' (uv_handle_get_data(),
 * uv_handle_get_loop(), uv_handle_get_type() work on it); every other
 * uv_ function must not be given one, except through
 * <timerwheel/uv_port.h>. Fields whose names start with tw__ are private.
 */
struct tw_uv_timer {
	void *data;
	uv_loop_t *loop;
	uv_handle_type type;
	unsigned tw__flags;
	struct tw_timer tw__timer;
	struct tw_uv *tw__uv;
	union {                         /* the timer's, then once closing its close callback */
		tw_uv_timer_cb timer;
		tw_uv_timer_close_cb close;
		uv_close_cb uv_close;
	} tw__cb;
	uint64_t tw__repeat;            /* ms */
	uint64_t tw__start_id;          /* orders timers due in the same ms */
};

#define TW__UV_AS_HANDLE(f) (offsetof(struct tw_uv_timer, f) == offsetof(uv_handle_t, f))
typedef char tw__uv_timer_prefix_check[(TW__UV_AS_HANDLE(data) && TW__UV_AS_HANDLE(loop) &&
					TW__UV_AS_HANDLE(type)) ? 1 : -1];
typedef char tw__uv_timer_size_check[(sizeof(void *) != 8 || sizeof(struct tw_uv_timer) <= 96) ? 1 : -1];
typedef char tw__uv_timer_type_check[(TW_UV_TIMER > UV_UNKNOWN_HANDLE && TW_UV_TIMER < UV_HANDLE_TYPE_MAX) ? 1 : -1];
#undef TW__UV_AS_HANDLE

/**
 * tw_uv_timer_init - prepare a timer on the loop's wheel, as uv_timer_init()
 * @loop: the libuv loop
 * @t:    the timer
 *
 * The first timer of @loop creates the loop's wheel (tw_uv_init() with
 * the defaults); it is closed with the last of the loop's timers
 * (tw_uv_timer_close()). The timer is stopped and referenced, with no
 * callback and no repeat; @t->data is left as it was. Call from the loop's
 * thread; loops of other threads may do the same at once.
 *
 * Return: 0, UV_EINVAL if @loop or @t is NULL, UV_ENOMEM, or the error of
 * tw_uv_init() for the loop's first timer: libuv's codes, as every error of
 * the layer's (on Unix they equal negative errno values, -EINVAL). On
 * failure nothing is left on @loop: uv_loop_close() succeeds at once.
 */
TW_API int tw_uv_timer_init(uv_loop_t *loop, struct tw_uv_timer *t);

/**
 * tw_uv_timer_init_on - prepare a timer on the program's wheel
 * @uv: the backend whose wheel the timer will run on (tw_uv_init() or
 *      tw_uv_attach())
 * @t:  the timer
 *
 * As tw_uv_timer_init(), on a wheel with the tick, slack or flags the
 * program chose. Closing the timers is optional here: stopped, a timer may
 * be freed at once. Close or stop every timer of @uv before tw_uv_close();
 * a timer closed after it stays closing and its callback never runs.
 *
 * Return: 0, UV_EINVAL if @uv or @t is NULL or @uv was closed, UV_ENOMEM if
 * what @uv's first timer allocates (the wheel of its unreferenced timers,
 * the layer's state) could not be allocated (@t is left as it was).
 */
TW_API int tw_uv_timer_init_on(struct tw_uv *uv, struct tw_uv_timer *t);

/**
 * tw_uv_timer_start - start a timer, as uv_timer_start()
 * @t:       an initialised timer, stopped or started (it is restarted)
 * @cb:      called when it fires
 * @timeout: ms from now (tw_uv_now()) to the first firing; 0 is due at
 *           once: the loop's next iteration runs it without sleeping (from
 *           a callback of the layer's timers, the first after the next ms)
 * @repeat:  ms between later firings, each counted from the loop's wake-up
 *           that fired the previous one; 0 fires once
 *
 * Deadlines past the end of 64-bit nanoseconds (about 584 years of
 * CLOCK_MONOTONIC) saturate there. libuv saturates at 2^64 ms instead, so
 * a timeout above about 1.8e13 ms (570 years) is due sooner here than in
 * libuv, and tw_uv_timer_get_due_in() reports the smaller figure.
 *
 * Return: 0, UV_EINVAL if @t or @cb is NULL, @t was not initialised or is
 * closing, or its backend was closed (tw_uv_close()).
 */
TW_API int tw_uv_timer_start(struct tw_uv_timer *t, tw_uv_timer_cb cb, uint64_t timeout, uint64_t repeat);

/**
 * tw_uv_timer_stop - stop a timer, as uv_timer_stop()
 * @t: the timer; stopping a stopped timer does nothing
 *
 * Its memory may be released right after, also from its own callback,
 * unless it was initialised with tw_uv_timer_init(): such a timer, as a
 * uv_timer_t, is released after tw_uv_timer_close() calls back.
 *
 * Return: 0, UV_EINVAL if @t is NULL.
 */
TW_API int tw_uv_timer_stop(struct tw_uv_timer *t);

/**
 * tw_uv_timer_again - restart a repeating timer, as uv_timer_again()
 * @t: the timer
 *
 * With a repeat, the timer is restarted with the repeat as its timeout;
 * with none, nothing happens.
 *
 * Return: 0, UV_EINVAL if @t is NULL or was never started (it has no
 * callback), or, with a repeat, if @t is closing or its backend was closed
 * (the restart's own error, which uv_timer_again() drops, returning 0);
 * the timer is not restarted then.
 */
TW_API int tw_uv_timer_again(struct tw_uv_timer *t);

/**
 * tw_uv_timer_set_repeat - change the repeat, as uv_timer_set_repeat()
 * @t:      the timer (NULL is ignored)
 * @repeat: ms; 0 stops the repetition
 *
 * Takes effect at the next restart: the firing already scheduled keeps its
 * time.
 */
TW_API void tw_uv_timer_set_repeat(struct tw_uv_timer *t, uint64_t repeat);

/**
 * tw_uv_timer_get_repeat - the repeat in ms, as uv_timer_get_repeat()
 * @t: the timer (NULL gives 0)
 */
TW_API uint64_t tw_uv_timer_get_repeat(const struct tw_uv_timer *t);

/**
 * tw_uv_timer_get_due_in - ms until the timer fires, as uv_timer_get_due_in()
 * @t: the timer (NULL gives 0)
 *
 * Rounded up, from tw_uv_now(). 0 if the timer is stopped or already due.
 */
TW_API uint64_t tw_uv_timer_get_due_in(const struct tw_uv_timer *t);

/**
 * tw_uv_timer_is_active - whether the timer is started, as uv_is_active()
 * @t: the timer (NULL gives 0)
 *
 * Return: 1 if it will fire, else 0. A repeating timer is active in its
 * own callback.
 */
TW_API int tw_uv_timer_is_active(const struct tw_uv_timer *t);

/**
 * tw_uv_timer_ref - let the timer hold the loop again, as uv_ref()
 * @t: the timer (NULL is ignored)
 *
 * A new timer is referenced: while it is active the loop stays alive.
 */
TW_API void tw_uv_timer_ref(struct tw_uv_timer *t);

/**
 * tw_uv_timer_unref - keep the timer from holding the loop, as uv_unref()
 * @t: the timer (NULL is ignored)
 *
 * It still fires while the loop runs for something else. Either call may
 * be made any number of times, in any state but closed.
 */
TW_API void tw_uv_timer_unref(struct tw_uv_timer *t);

/**
 * tw_uv_timer_has_ref - whether the timer is referenced, as uv_has_ref()
 * @t: the timer (NULL gives 0)
 *
 * Return: 1 if referenced, else 0.
 */
TW_API int tw_uv_timer_has_ref(const struct tw_uv_timer *t);

/**
 * tw_uv_timer_close - stop the timer for good, as uv_close() on a timer
 * @t:  the timer (NULL, or one closing already, is ignored)
 * @cb: called from the loop when libuv runs close callbacks, or NULL
 *
 * The timer stops at once and can no longer be started (UV_EINVAL). @cb runs
 * in the loop turn under way, or in the next one if called outside the
 * loop or from a close callback: in the turn in which a uv_close() made at
 * the same point would call back. Until then the loop stays alive. Within
 * the turn, the layer's closes call back last first, as libuv's do, but
 * together, where the first of them stands among the uv_close() calls of
 * the turn: uv_close() of n, this of t, uv_close() of m, this of u call
 * back m, u, t, n, where libuv (t and u uv_timer_t) calls back u, m, t, n. Closing the
 * last timer of the loop's wheel (tw_uv_timer_init()) closes that wheel in
 * the same turn, so uv_loop_close() succeeds after it.
 */
TW_API void tw_uv_timer_close(struct tw_uv_timer *t, tw_uv_timer_close_cb cb);

/**
 * tw_uv_timer_is_closing - whether the timer was closed, as uv_is_closing()
 * @t: the timer (NULL gives 0)
 *
 * Return: 1 from tw_uv_timer_close() on, also after its callback, else 0.
 */
TW_API int tw_uv_timer_is_closing(const struct tw_uv_timer *t);

#ifdef __cplusplus
}
#endif

#endif /* TIMERWHEEL_UV_TIMER_H */
