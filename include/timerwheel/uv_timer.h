/* SPDX-License-Identifier: MIT */
/*
 * timerwheel-uv's uv_timer_t layer: libuv's timer API on a wheel, in
 * milliseconds as libuv's. A program moves its timers over by renaming
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
 * <timerwheel/uv_port.h> does the renaming, so the program needs no edit.
 *
 * The loop's wheel. tw_uv_timer_init() takes the loop, as uv_timer_init()
 * does. The loop's first timer creates a wheel for it, with a 1 ms tick.
 * Later timers share it. Closing the last of them closes the wheel, in the
 * same loop turn. As with native timers, uv_loop_close() succeeds only
 * once every timer is closed. One uv_timer_t and one uv_async_t serve all
 * the timers of a wheel. uv_walk() through <timerwheel/uv_port.h> hides
 * those and shows the timers, with the type TW_UV_TIMER. So the usual
 * shutdown ends cleanly: walk, close every handle, run the loop,
 * uv_loop_close().
 *
 * The program's wheel. tw_uv_timer_init_on() puts a timer on a struct
 * tw_uv of the program's (see <timerwheel/uv.h>). The program chooses its
 * tick, slack and flags there.
 *
 * Order, as libuv's. Timers that fire in the same wake-up run in the order
 * of their due millisecond. That is the deadline in uv_hrtime() ns,
 * rounded up to a whole ms. Timers due in the same millisecond run in the
 * order they were started. A start is a call of tw_uv_timer_start() or
 * tw_uv_timer_again(), or a repeating timer's restart. With the default
 * 1 ms tick, all timers due in one millisecond fire in the same wake-up. With
 * a coarser tick or a slack, timers of different wake-ups run in the order
 * of their wake-ups. The core API's timers on the same wheel are not part of
 * this order.
 *
 * Budget. A wake budget (tw_set_wake_budget() on the backend's wheel)
 * keeps the order. A wake-up runs at most that many of the layer's
 * callbacks, the first in the order. The rest run first in the next
 * wake-up, a millisecond later. They hold the loop meanwhile, referenced
 * or not, as libuv runs every due timer before it checks liveness. The
 * budget counts only the layer's callbacks. The program's own tw_timer
 * timers on the wheel all fire in their wake-up.
 *
 * Liveness, as libuv's. The loop stays alive while a timer is active and
 * referenced. tw_uv_timer_unref() takes a timer out, as uv_unref() does.
 * A close callback still to come also keeps the loop alive. Unreferenced
 * timers live on a second wheel of the layer's. It shares the backend's
 * uv_timer_t but never holds the loop. Ref and unref move a started timer
 * across. It keeps its deadline and its place in the order. On a struct
 * tw_uv of the program's, its own tw_timer timers hold the loop as before.
 * With TW_UV_WEAK no timer of the backend holds the loop.
 *
 * Close, as libuv's. tw_uv_timer_close() stops the timer at once. Its
 * callback runs when libuv runs uv_close() callbacks. After a close
 * outside the loop, one uv_run(loop, UV_RUN_ONCE) runs it. The timer's
 * memory may be released from then on. Closes in one loop turn call back
 * last first, as libuv's do. The layer's call back together (see
 * tw_uv_timer_close()).
 *
 * Differences from libuv. The contract differs from libuv's here:
 *
 * - A timeout counts from the clock (uv_hrtime()) at tw_uv_timer_start().
 *   libuv counts from the loop's cached time, which may be older, so its
 *   timers may fire early. Deadlines are kept in ns. They fire within the
 *   wheel's tick, 1 ms by default. A default slack in the wheel's config
 *   widens that to its window (see "Slack" in timerwheel.h).
 * - A timer due in this wake-up whose callback has not run yet is not
 *   active. libuv does the same from 1.45 on; 1.44 says it is.
 * - A timeout of 0 is due at once. It runs in the loop's next iteration
 *   without sleeping, as libuv's does. Started from a callback of the
 *   layer's timers, it waits for the next millisecond instead. libuv 1.44
 *   runs it in the same pass, so a timer that restarts itself so starves
 *   the loop there.
 * - Deadlines saturate at the end of 64-bit nanoseconds (see
 *   tw_uv_timer_start()).
 * - The type of a timer is TW_UV_TIMER, which is UV_HANDLE.
 *
 * Cost. A struct tw_uv_timer is smaller than a uv_timer_t. Starting,
 * stopping and restarting one costs the wheel O(1). It costs libuv nothing
 * unless it moves the earliest deadline earlier.
 *
 * Repeats. A repeating timer is restarted before its callback, with the
 * repeat as its timeout. It counts from the moment the loop woke, as
 * libuv's does, so it drifts by the loop's lateness. struct tw_periodic
 * repeats without drift.
 *
 * Threads. A timer belongs to its loop's thread.
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
 * The program allocates it, as it does a uv_timer_t. The three public
 * fields sit where uv_handle_t has them. So a pointer to the timer, cast
 * to uv_handle_t *, reads them as a libuv handle's. uv_handle_get_data(),
 * uv_handle_get_loop() and uv_handle_get_type() work on it. Give it to no
 * other uv_ function, except through <timerwheel/uv_port.h>. Fields whose
 * names start with tw__ are private.
 */
struct tw_uv_timer {
	void *data;
	uv_loop_t *loop;
	uv_handle_type type;
	unsigned tw__flags;
	struct tw_timer tw__timer;
	struct tw_uv *tw__uv;
	union {
		tw_uv_timer_cb timer;
		tw_uv_timer_close_cb close;
		uv_close_cb uv_close;
	} tw__cb;
	uint64_t tw__repeat;
	uint64_t tw__start_id;
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
 * The first timer of @loop creates the loop's wheel. The last timer's
 * close closes it (tw_uv_timer_close()). The timer starts stopped and
 * referenced, with no callback and no repeat. @t->data is left as it was.
 * Call it from the loop's thread. Loops of other threads may do the same
 * at the same time.
 *
 * Return: 0 on success, or a libuv error code. Every error of the layer is
 * one; on Unix they equal negative errno values. The error is UV_EINVAL if
 * @loop or @t is NULL. It is UV_ENOMEM if the loop's wheel could not be
 * allocated. Else it is the error of tw_uv_attach() for the loop's first
 * timer. On failure nothing is left on @loop, and uv_loop_close()
 * succeeds at once.
 */
TW_API int tw_uv_timer_init(uv_loop_t *loop, struct tw_uv_timer *t);

/**
 * tw_uv_timer_init_on - prepare a timer on the program's wheel
 * @uv: the backend whose wheel the timer will run on (tw_uv_attach())
 * @t:  the timer
 *
 * As tw_uv_timer_init(), on a wheel with the tick, slack and flags the
 * program chose. The first timer on @uv allocates the layer's state there.
 * Closing such a timer is optional: a stopped timer may be freed at once.
 * Close or stop every timer of @uv before tw_uv_close(). A timer closed
 * after it stays closing, and its callback never runs.
 *
 * Return: 0 on success. UV_EINVAL if @uv or @t is NULL, or if @uv was
 * closed. UV_ENOMEM if the layer's state could not be allocated. On
 * failure nothing changed: @uv is as it was, and @t too.
 */
TW_API int tw_uv_timer_init_on(struct tw_uv *uv, struct tw_uv_timer *t);

/**
 * tw_uv_timer_start - start a timer, as uv_timer_start()
 * @t:       an initialised timer; a started one is restarted
 * @cb:      called when it fires
 * @timeout: ms from now (tw_uv_now()) to the first firing
 * @repeat:  ms between later firings; 0 fires once
 *
 * A timeout of 0 is due at once. The loop's next iteration runs it without
 * sleeping. From a callback of the layer's timers, it runs after the next
 * ms instead. Each repeat counts from the wake-up that fired the previous
 * firing.
 *
 * Deadlines saturate at the end of 64-bit nanoseconds, about 584 years of
 * CLOCK_MONOTONIC. libuv saturates at 2^64 ms instead. So a timeout above
 * about 1.8e13 ms (570 years) is due sooner here than in libuv.
 * tw_uv_timer_get_due_in() then reports the smaller figure.
 *
 * Return: 0 on success. UV_EINVAL if @t or @cb is NULL, if @t was not
 * initialised or is closing, or if its backend was closed (tw_uv_close()).
 */
TW_API int tw_uv_timer_start(struct tw_uv_timer *t, tw_uv_timer_cb cb, uint64_t timeout, uint64_t repeat);

/**
 * tw_uv_timer_stop - stop a timer, as uv_timer_stop()
 * @t: the timer; stopping a stopped timer does nothing
 *
 * A timer of tw_uv_timer_init_on() may be freed right after, also from its
 * own callback. A timer of tw_uv_timer_init() is freed after its close
 * callback, as a uv_timer_t is.
 *
 * Return: 0, or UV_EINVAL if @t is NULL.
 */
TW_API int tw_uv_timer_stop(struct tw_uv_timer *t);

/**
 * tw_uv_timer_again - restart a repeating timer, as uv_timer_again()
 * @t: the timer
 *
 * With a repeat, the timer is restarted with the repeat as its timeout.
 * Without one, nothing happens.
 *
 * Return: 0 on success. UV_EINVAL if @t is NULL or was never started. With
 * a repeat, also UV_EINVAL if @t is closing or its backend was closed; the
 * timer is not restarted then. uv_timer_again() returns 0 in that case.
 */
TW_API int tw_uv_timer_again(struct tw_uv_timer *t);

/**
 * tw_uv_timer_set_repeat - change the repeat, as uv_timer_set_repeat()
 * @t:      the timer (NULL is ignored)
 * @repeat: ms; 0 stops the repetition
 *
 * It takes effect at the next restart. The firing already scheduled keeps
 * its time.
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
 * It counts from tw_uv_now(), rounded up. It is 0 if the timer is stopped
 * or already due.
 */
TW_API uint64_t tw_uv_timer_get_due_in(const struct tw_uv_timer *t);

/**
 * tw_uv_timer_is_active - whether the timer is started, as uv_is_active()
 * @t: the timer (NULL gives 0)
 *
 * A repeating timer is active in its own callback.
 *
 * Return: 1 if it will fire, else 0.
 */
TW_API int tw_uv_timer_is_active(const struct tw_uv_timer *t);

/**
 * tw_uv_timer_ref - let the timer hold the loop again, as uv_ref()
 * @t: the timer (NULL is ignored)
 *
 * A new timer is referenced: while it is active, the loop stays alive.
 */
TW_API void tw_uv_timer_ref(struct tw_uv_timer *t);

/**
 * tw_uv_timer_unref - keep the timer from holding the loop, as uv_unref()
 * @t: the timer (NULL is ignored)
 *
 * The timer still fires while the loop runs for something else. Ref and
 * unref may be called any number of times, in any state but closed.
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
 * The timer stops at once. It can no longer be started (UV_EINVAL). @cb
 * runs in the turn in which a uv_close() made at the same point would
 * call back. That is the loop turn under way. Called outside the loop or
 * from a close callback, it is the next one. Until then the loop stays
 * alive.
 *
 * Within a turn, the layer's closes call back last first, as libuv's do.
 * But they call back together, where the first of them stands among the
 * turn's uv_close() calls. Say a turn closes native n, timer t, native m,
 * then timer u. They call back m, u, t, n. libuv, with t and u uv_timer_t,
 * calls back u, m, t, n.
 *
 * Closing the last timer of the loop's wheel (tw_uv_timer_init()) closes
 * that wheel in the same turn. uv_loop_close() succeeds after it.
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
