/* SPDX-License-Identifier: MIT */
/*
 * timerwheel-uv: a timer wheel on a libuv loop, driven by one uv_timer_t.
 *
 * Setup. The program creates a wheel with tw_wheel_create(), starting at
 * tw_uv_now(). tw_uv_attach() attaches it to a loop through a struct tw_uv.
 * The program then arms its timers with tw_add(), tw_mod() and tw_del().
 * The backend keeps its uv_timer_t armed for the wheel's next expiry. It
 * runs the wheel when that timer fires. A timer armed later than the
 * earliest one costs no libuv call.
 *
 * Ownership. The program owns the wheel; the backend never frees it. Each
 * backend follows this rule. After tw_uv_close() the wheel is the
 * program's again, its timers still armed. The program may then attach it
 * elsewhere, drive it by hand, or destroy it. Destroyed right after
 * tw_uv_close(), its timers go idle and are never called.
 *
 * Clock. Expiries are absolute nanoseconds of uv_hrtime(), which
 * tw_uv_now() reads. On Linux it is CLOCK_MONOTONIC. Do not compute
 * expiries from uv_now(). It is cached and in whole milliseconds. An expiry
 * computed from it may lie in the past.
 *
 * Never early. No timer fires before its expiry by that clock. This holds
 * for timers armed from a timer callback, an I/O callback or another
 * thread.
 *
 * Liveness. The handle keeps uv_run() going while timers are armed, like a
 * native timer. Timers of the uv_timer_t layer that the program
 * unreferenced do not count (see <timerwheel/uv_timer.h>). With TW_UV_WEAK
 * the handle never keeps the loop going. With TW_UV_HOLD it does until
 * tw_uv_close(). A timer due only at UINT64_MAX holds the loop until it is
 * cancelled or the wheel destroyed, like a native timer with timeout
 * (uint64_t)-1.
 *
 * Driving. While attached, the backend drives the wheel. Do not call
 * tw_advance() or tw_set_notify() on it.
 *
 * Destroying. tw_wheel_destroy() of an attached wheel idles its timers at
 * once. It may be called from one of the wheel's callbacks. The uv timer
 * stops, so the loop no longer waits for those timers. The wheel's memory
 * goes when the backend lets go, in tw_uv_close(). The program must still
 * call tw_uv_close(). Until then tw_uv_wheel() returns the destroyed
 * wheel, and tw_add() and tw_mod() on it return -EINVAL.
 *
 * Closing. tw_uv_close() takes the same steps in the same order as every
 * backend:
 *
 * - The wake hook comes off.
 * - Requests still queued are applied.
 * - The notify hook comes off. From here the backend never touches the
 *   wheel. A destroyed wheel is released here.
 * - The uv timer stops.
 * - The handles close, in one loop turn. Then the close callback says
 *   that the struct tw_uv may be released.
 *
 * Threads. A handle belongs to its loop's thread. Other threads arm,
 * re-arm and cancel its timers with tw_post_mod() and tw_post_del() on the
 * wheel. Hand them the wheel pointer itself: tw_uv_wheel() belongs to the
 * loop's thread, like every call on the handle. The backend wakes the loop
 * through a uv_async_t when a request needs it. It applies the requests in
 * the loop. Stop those threads before the program destroys the wheel.
 *
 * Requests and the loop's life. The running loop applies requests. So do
 * tw_drain() and tw_uv_close(). By default requests do not keep the loop
 * alive; armed timers do. Once uv_run() has returned, a posted request
 * stays queued. Its poster waits in tw_request_wait() until the program
 * calls tw_drain() or tw_uv_close(), or runs the loop again. With
 * TW_UV_HOLD, uv_run() does not return before tw_uv_close(), unless
 * uv_stop() is called. So no request waits beyond tw_uv_close(). A program
 * whose threads post can close the handle from a timer callback when they
 * are done. It then needs no handle of its own to keep the loop.
 */
#ifndef TIMERWHEEL_UV_H
#define TIMERWHEEL_UV_H

#include <stdint.h>
#include <uv.h>

#include <timerwheel.h>

#ifdef __cplusplus
extern "C" {
#endif

/** The handle never keeps the loop alive, like uv_unref() on a timer. */
#define TW_UV_WEAK 1u
/** The handle keeps the loop alive until tw_uv_close(), like a referenced
 * uv_async_t. Use it when other threads post requests. */
#define TW_UV_HOLD 2u

struct tw_uv;
struct tw_uv_timer;
struct tw__uv_layer;

/**
 * tw_uv_close_cb - called once a closed handle's memory may be released
 * @h: the handle given to tw_uv_close()
 */
typedef void (*tw_uv_close_cb)(struct tw_uv *h);

/**
 * struct tw_uv - a wheel attached to a libuv loop
 * @data: free for the program, like uv_handle_t.data
 *
 * The program allocates it, as it does libuv handles. Embed it or malloc
 * it. Release it only in the close callback. Fields whose names start with
 * tw__ are private.
 */
struct tw_uv {
	void *data;
	uv_timer_t tw__timer;
	uv_async_t tw__async;
	struct tw_wheel *tw__wheel;
	tw_uv_close_cb tw__close_cb;
	uint64_t tw__due_ms;
	uint64_t tw__next;
	uint64_t tw__starts;
	uint64_t tw__stops;
	uint64_t tw__wakeups;
	uint64_t tw__early;
	unsigned tw__state;
	struct tw__uv_layer *tw__layer;
};

/**
 * struct tw_uv_stats - what the backend did to libuv
 * @timer_starts:   uv_timer_start() calls, which arm or move the uv timer
 * @timer_stops:    uv_timer_stop() calls, made when the wheel became empty
 * @wakeups:        times the uv timer fired and the wheel was advanced
 * @early_wakeups:  wake-ups before the wheel's next expiry by the clock;
 *                  the backend re-arms, and nothing fires early
 *
 * tw_get_stats() on the wheel gives the wheel's own counters.
 */
struct tw_uv_stats {
	uint64_t timer_starts;
	uint64_t timer_stops;
	uint64_t wakeups;
	uint64_t early_wakeups;
};

/**
 * tw_uv_attach - drive the program's wheel from a loop
 * @loop:  the libuv loop
 * @h:     the handle to initialise, allocated by the caller
 * @w:     the wheel, created with tw_uv_now() as its clock
 * @flags: 0, TW_UV_WEAK, TW_UV_HOLD, or both
 *
 * Installs the wheel's notify and wake hooks. The backend waits for timers
 * already armed on @w from now on. It never frees @w. Call it from the
 * loop's thread.
 *
 * Return: 0 on success, or a negative error. The error is -EINVAL if
 * @loop, @h or @w is NULL, if @flags has unknown bits, or if @w was
 * destroyed. It is -EBUSY if @w already has a notify hook: a wheel takes
 * one backend. Else it is the error of uv_async_init() or uv_timer_init().
 * On failure @w keeps no hook, and @h may be reused at once.
 */
TW_API int tw_uv_attach(uv_loop_t *loop, struct tw_uv *h, struct tw_wheel *w, unsigned flags);

/**
 * tw_uv_wheel - the handle's wheel
 * @h: the handle
 *
 * Return: the wheel given to tw_uv_attach(). NULL if @h is NULL or
 * tw_uv_close() was called.
 */
TW_API struct tw_wheel *tw_uv_wheel(const struct tw_uv *h);

/**
 * tw_uv_loop - the loop the handle is attached to
 * @h: the handle
 *
 * Return: the loop, or NULL if @h is NULL.
 */
TW_API uv_loop_t *tw_uv_loop(const struct tw_uv *h);

/**
 * tw_uv_now - the current time in the wheel's clock
 *
 * A fresh reading of uv_hrtime(), in ns. Base expiries on it, for example
 * tw_mod(w, t, tw_uv_now() + 30 * 1000000000ull).
 *
 * Return: the time in ns.
 */
TW_API uint64_t tw_uv_now(void);

/**
 * tw_uv_close - let go of the wheel, then release the handle
 * @h:  the handle; ignored if NULL or already closing
 * @cb: called when the memory of @h may be released, or NULL
 *
 * The steps are in "Closing". Requests that other threads queued are
 * applied first. Called from one of the wheel's callbacks, they stay
 * queued for the wheel's next advance instead. The wheel is left to the
 * program with its timers armed. The backend never touches it after this
 * call, so the program may destroy it or attach it elsewhere at once. A
 * wheel the program destroyed already is released here.
 *
 * @cb runs from the loop, as a uv_close() callback does, in the next loop
 * turn. One uv_run(loop, UV_RUN_ONCE) after tw_uv_close() runs it. Then
 * nothing of the handle is left on the loop, and uv_loop_close() succeeds.
 */
TW_API void tw_uv_close(struct tw_uv *h, tw_uv_close_cb cb);

/**
 * tw_uv_get_stats - read the backend's counters
 * @h:   the handle
 * @out: filled with the counters
 *
 * Return: 0, or -EINVAL if @h or @out is NULL.
 */
TW_API int tw_uv_get_stats(const struct tw_uv *h, struct tw_uv_stats *out);

#ifdef __cplusplus
}
#endif

#endif /* TIMERWHEEL_UV_H */
