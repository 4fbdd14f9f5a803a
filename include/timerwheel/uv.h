/* SPDX-License-Identifier: MIT */
/*
 * timerwheel-uv: a timer wheel on a libuv loop, driven by one uv_timer_t.
 *
 * tw_uv_attach() attaches a wheel the program created to a loop;
 * tw_uv_init() creates one and attaches it. The program then arms,
 * re-arms and cancels its timers with tw_add(), tw_mod() and tw_del() on
 * that wheel (tw_uv_wheel() returns it); the backend keeps its single
 * uv_timer_t armed for the wheel's next expiry and runs the wheel when it
 * fires. Arming a timer later than the earliest one makes no libuv call at
 * all.
 *
 * Ownership, the same for every backend: the program owns the wheel. A
 * backend attaches to a wheel the program created and never frees it;
 * tw_uv_init(), the convenience that creates the wheel, frees exactly what
 * it created, in tw_uv_close(). A backend frees what it created, never
 * what it was given. So after tw_uv_close() a wheel given to
 * tw_uv_attach() is the program's again, with its timers still armed:
 * attach it to another loop or backend, drive it by hand, or destroy it.
 *
 * Clock. Expiries are absolute nanoseconds of uv_hrtime(), which is
 * CLOCK_MONOTONIC on Linux; tw_uv_now() reads it. Do not use uv_now(): it
 * is cached and truncated to whole milliseconds, so an expiry computed from
 * it lies in the past by up to a millisecond plus however long the loop
 * has been busy.
 *
 * Never early. No timer fires before its expiry by that clock, whether it
 * was armed from a timer callback, an I/O callback or outside the loop.
 *
 * Liveness. Like a native timer, the handle keeps uv_run() going only while
 * timers are armed (the uv_timer_t layer's unreferenced timers excepted,
 * see <timerwheel/uv_timer.h>); with TW_UV_WEAK it never does; with
 * TW_UV_HOLD it does until tw_uv_close(), for other threads' requests. A timer that fires only
 * at UINT64_MAX (or in the last partial tick below it) holds the loop like
 * a native timer with timeout (uint64_t)-1, until it is cancelled or the
 * wheel destroyed.
 *
 * While attached, the wheel is driven by the backend: do not call
 * tw_advance() or tw_set_notify() on it. Destroying it (tw_wheel_destroy(),
 * also from one of its callbacks) idles its timers at once; its memory goes
 * when the backend lets go of it, in tw_uv_close(), which the program must
 * still call. Until then tw_uv_wheel() returns the destroyed wheel (tw_add()
 * and tw_mod() on it return -EINVAL) and the uv timer is stopped, so the
 * loop no longer waits for its timers. The rule is the same for the
 * io_uring backend.
 *
 * Closing, the same steps in the same order for every backend: the wake
 * hook comes off; requests still queued are applied (or, for the wheel
 * tw_uv_init() created, refused with -ESHUTDOWN as it is destroyed); the
 * notify hook comes off, after which the backend never touches the wheel
 * (a destroyed wheel is released then); the uv timer stops; and what the
 * backend created is freed: the handles close, in one loop turn, and the
 * close callback says @h may be released.
 *
 * A handle belongs to its loop's thread. Other threads arm, re-arm and
 * cancel its timers with tw_post_mod() and tw_post_del() on tw_uv_wheel():
 * the backend wakes the loop through a uv_async_t when a request needs it,
 * and applies the requests in the loop. Hand them the wheel pointer itself:
 * tw_uv_wheel(), like every call on the handle, belongs to the loop's
 * thread. Stop those threads before the wheel goes: tw_uv_close() for the
 * wheel tw_uv_init() created, tw_wheel_destroy() for the program's own.
 *
 * Requests and the loop's life. A request is applied by the running loop,
 * by tw_drain(), or by tw_uv_close(), which settles every request queued
 * before it (applied on the program's wheel, refused with -ESHUTDOWN on
 * the one tw_uv_init() created). By default requests do not keep the loop
 * alive (armed timers do): once uv_run() has returned (nothing else
 * held the loop), a request posted stays queued, and its poster waits in
 * tw_request_wait(), until the program calls tw_drain() or tw_uv_close(),
 * or runs the loop again with something holding it. With TW_UV_HOLD the
 * handle holds the loop until tw_uv_close(), so uv_run() does not return
 * while other threads may post (unless uv_stop()), and no request waits
 * beyond tw_uv_close(): a program whose threads post, and which closes the
 * handle from the loop when they are done (a posted timer whose callback
 * calls tw_uv_close() will do), needs no handle of its own to keep the loop.
 */
#ifndef TIMERWHEEL_UV_H
#define TIMERWHEEL_UV_H

#include <stdint.h>
#include <uv.h>

#include <timerwheel.h>

#ifdef __cplusplus
extern "C" {
#endif

/** The handle does not keep the loop alive (like uv_unref() on a timer). */
#define TW_UV_WEAK 1u
/** The handle keeps the loop alive until tw_uv_close(), for other threads'
 * requests (like a referenced uv_async_t). */
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
 * Allocated by the program (embed it or malloc it), as libuv handles are,
 * and released by it only in the close callback. Fields whose names start
 * with tw__ are private.
 */
struct tw_uv {
	void *data;
	uv_timer_t tw__timer;
	uv_async_t tw__async;    /* requests from other threads wake the loop */
	struct tw_wheel *tw__wheel;
	tw_uv_close_cb tw__close_cb;
	uint64_t tw__due_ms;     /* uv_now() at which tw__timer is due */
	uint64_t tw__next;       /* the wheel's next expiry it was armed for */
	uint64_t tw__starts;     /* uv_timer_start() calls */
	uint64_t tw__stops;      /* uv_timer_stop() calls */
	uint64_t tw__wakeups;    /* times tw__timer fired */
	uint64_t tw__early;      /* ... before tw__next by the clock */
	unsigned tw__state;
	struct tw__uv_layer *tw__layer; /* what a layer registered, or NULL */
};

/**
 * struct tw_uv_stats - what the backend did to libuv
 * @timer_starts:   uv_timer_start() calls (arming or moving the uv timer)
 * @timer_stops:    uv_timer_stop() calls (the wheel became empty)
 * @wakeups:        times the uv timer fired and the wheel was advanced
 * @early_wakeups:  wake-ups that came before the wheel's next expiry by the
 *                  clock; the backend re-arms and nothing fires early
 *
 * The wheel's own counters (fired, armed, idle wake-ups, os_rearms) are in
 * tw_get_stats(tw_uv_wheel(h), ...).
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
 * Installs the wheel's notify and wake hooks. Timers already armed on @w
 * are waited for from now on. tw_uv_close() lets go of @w and never frees
 * it (a wheel the program destroyed while attached is released then).
 * Call from the loop's thread.
 *
 * Return: 0, -EINVAL if @loop, @h or @w is NULL, @flags has unknown bits
 * or @w was destroyed, -EBUSY if @w already has a notify hook (one backend
 * per wheel), or the error of uv_async_init() or uv_timer_init(). On
 * failure @w keeps no hook and @h may be reused at once.
 */
TW_API int tw_uv_attach(uv_loop_t *loop, struct tw_uv *h, struct tw_wheel *w, unsigned flags);

/**
 * tw_uv_wheel - the handle's wheel, for tw_add(), tw_mod() and tw_del()
 * @h: the handle
 *
 * Return: the wheel (created by tw_uv_init() or given to tw_uv_attach()),
 * or NULL if @h is NULL or tw_uv_close() was called.
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
 * A fresh reading of uv_hrtime() (CLOCK_MONOTONIC on Linux), in ns: base
 * expiries on it, e.g. tw_mod(w, t, tw_uv_now() + 30 * 1000000000ull).
 *
 * Return: the time in ns.
 */
TW_API uint64_t tw_uv_now(void);

/**
 * tw_uv_close - let go of the wheel, then release the handle
 * @h:  the handle; ignored if NULL or already closing
 * @cb: called when the memory of @h may be released, or NULL
 *
 * A wheel given to tw_uv_attach() is left to the program, its timers
 * armed as they are; the backend never touches it after this call, so it
 * may be destroyed or attached elsewhere at once. Requests that other
 * threads queued are applied first (from inside one of the wheel's
 * callbacks they stay queued for its next advance).
 *
 * The wheel tw_uv_init() created is destroyed: timers still armed become
 * idle at once and are never called, so their memory may be released right
 * after this call, also from inside one of the wheel's callbacks (no
 * further timer of the wheel fires, not even one due in the same wake-up;
 * the core frees the wheel when that callback returns).
 *
 * A wheel the program destroyed already is released here.
 *
 * @cb runs from the loop, as a uv_close() callback does, in the next loop
 * turn: after tw_uv_close(), one uv_run(loop, UV_RUN_ONCE) runs it, and
 * the loop has nothing of the handle's left (uv_loop_close() succeeds).
 */
TW_API void tw_uv_close(struct tw_uv *h, tw_uv_close_cb cb);

/**
 * tw_uv_get_stats - read the backend's counters
 * @h:   the handle
 * @out: filled with the counters
 *
 * Return: 0, -EINVAL if @h or @out is NULL.
 */
TW_API int tw_uv_get_stats(const struct tw_uv *h, struct tw_uv_stats *out);

#ifdef __cplusplus
}
#endif

#endif /* TIMERWHEEL_UV_H */
