/* SPDX-License-Identifier: MIT */
/*
 * timerwheel-uv's uv_timer_t layer: libuv's timer API, in milliseconds as
 * libuv's, on a wheel. A program with many uv_timer_t switches by renaming:
 *
 *   uv_timer_t                  struct tw_uv_timer
 *   uv_timer_cb                 tw_uv_timer_cb
 *   uv_timer_init(loop, t)      tw_uv_timer_init(&backend, t)
 *   uv_timer_start(t, cb, timeout, repeat)   tw_uv_timer_start(...)
 *   uv_timer_stop, uv_timer_again, uv_timer_set_repeat,
 *   uv_timer_get_repeat, uv_timer_get_due_in  tw_uv_timer_...
 *   uv_is_active((uv_handle_t *)t)           tw_uv_timer_is_active(t)
 *   uv_close((uv_handle_t *)t, cb)           tw_uv_timer_stop(t), then free
 *
 * where `backend` is one struct tw_uv per loop (see <timerwheel/uv.h>): its
 * one uv_timer_t serves every timer of the layer. A struct tw_uv_timer is
 * 72 bytes, a uv_timer_t 152; starting, stopping and re-arming one costs
 * the wheel O(1) and libuv nothing, unless it moves the earliest deadline
 * earlier.
 *
 * Where the contract differs from libuv's:
 *
 * - Never early. A timer started with timeout T fires no sooner than T ms
 *   after tw_uv_timer_start() by the clock (uv_hrtime()), where libuv
 *   counts from the loop's cached time, which may be older (libuv issue
 *   4773). Deadlines are kept in ns and fire within the wheel's tick (1 ms
 *   by default; a default slack in tw_uv_init()'s config widens that to its
 *   window, see "Slack" in timerwheel.h).
 * - Order. Timers due in the same millisecond fire in an unspecified order;
 *   libuv fires them in the order they were started.
 * - No handle. A timer is not a uv_handle_t: it needs no uv_close() and
 *   may be freed as soon as it is stopped (also from its own callback).
 *   It cannot be unreferenced on its own; the backend as a whole can
 *   (TW_UV_WEAK).
 * - Errors are negative errno values (-EINVAL), which on Unix equal libuv's
 *   (UV_EINVAL).
 *
 * A repeating timer is restarted before its callback with the repeat as
 * its timeout, from the moment the loop woke, as libuv does: it drifts by
 * the loop's lateness. struct tw_periodic repeats without drift.
 *
 * A timer belongs to its loop's thread.
 */
#ifndef TIMERWHEEL_UV_TIMER_H
#define TIMERWHEEL_UV_TIMER_H

#include <stdint.h>

#include <timerwheel/uv.h>

#ifdef __cplusplus
extern "C" {
#endif

struct tw_uv_timer;

/**
 * tw_uv_timer_cb - a timer's callback, as uv_timer_cb
 * @t: the timer that fired
 */
typedef void (*tw_uv_timer_cb)(struct tw_uv_timer *t);

/**
 * struct tw_uv_timer - a timer in libuv's terms, on a wheel
 * @data: free for the program, like uv_handle_t.data
 *
 * Allocated by the program, as a uv_timer_t is. Fields whose names start
 * with tw__ are private.
 */
struct tw_uv_timer {
	void *data;
	struct tw_timer tw__timer;
	struct tw_uv *tw__uv;
	tw_uv_timer_cb tw__cb;
	uint64_t tw__repeat; /* ms */
};

/**
 * tw_uv_timer_init - prepare a timer, as uv_timer_init()
 * @uv: the backend whose wheel the timer will run on (tw_uv_init())
 * @t:  the timer
 *
 * The timer is stopped, with no callback and no repeat. @t->data is left
 * as it was.
 *
 * Return: 0, -EINVAL if @uv or @t is NULL.
 */
TW_API int tw_uv_timer_init(struct tw_uv *uv, struct tw_uv_timer *t);

/**
 * tw_uv_timer_start - start a timer, as uv_timer_start()
 * @t:       an initialised timer, stopped or started (it is restarted)
 * @cb:      called when it fires
 * @timeout: ms from now (tw_uv_now()) to the first firing; 0 fires in the
 *           first turn of the loop that reaches the next tick
 * @repeat:  ms between later firings, each counted from the loop's wake-up
 *           that fired the previous one; 0 fires once
 *
 * Deadlines past the end of 64-bit nanoseconds (about 584 years of
 * CLOCK_MONOTONIC) saturate there. libuv saturates at 2^64 ms instead, so
 * a timeout above about 1.8e13 ms (570 years) is due sooner here than in
 * libuv, and tw_uv_timer_get_due_in() reports the smaller figure.
 *
 * Return: 0, -EINVAL if @t or @cb is NULL, @t was not initialised, or its
 * backend was closed (tw_uv_close()).
 */
TW_API int tw_uv_timer_start(struct tw_uv_timer *t, tw_uv_timer_cb cb, uint64_t timeout, uint64_t repeat);

/**
 * tw_uv_timer_stop - stop a timer, as uv_timer_stop()
 * @t: the timer; stopping a stopped timer does nothing
 *
 * Its memory may be released right after, also from its own callback.
 *
 * Return: 0, -EINVAL if @t is NULL.
 */
TW_API int tw_uv_timer_stop(struct tw_uv_timer *t);

/**
 * tw_uv_timer_again - restart a repeating timer, as uv_timer_again()
 * @t: the timer
 *
 * With a repeat, the timer is restarted with the repeat as its timeout;
 * with none, nothing happens.
 *
 * Return: 0, -EINVAL if @t is NULL or was never started (it has no
 * callback), or its backend was closed.
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

#ifdef __cplusplus
}
#endif

#endif /* TIMERWHEEL_UV_TIMER_H */
