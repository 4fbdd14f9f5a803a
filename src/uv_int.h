/* SPDX-License-Identifier: MIT */
/*
 * What the libuv backend (uv.c) and its uv_timer_t layer (uv_timer.c)
 * share. Internal to libtimerwheel-uv.
 *
 * The layer's timers are ordinary timers of the backend's wheel. The
 * backend gives the layer, which registers for them (tw__uv_set_layer()),
 * three things the wheel alone cannot: a call after each wake-up's
 * advance, where the layer runs the callbacks sorted as libuv sorts them;
 * a loop turn for close callbacks (the closer, a handle closed once per
 * batch); and a second wheel, the layer's, for the timers the program
 * unreferenced, driven with the backend's own. The layer's state is its
 * own: the backend keeps one pointer to what the layer registered (struct
 * tw__uv_layer), and calls the layer only through it.
 */
#ifndef TIMERWHEEL_UV_INT_H
#define TIMERWHEEL_UV_INT_H

#include <errno.h>

#include "timerwheel/uv.h"
#include "timerwheel/uv_timer.h"

/*
 * The private fields of the public structs.
 * struct tw_uv: tw__async wakes the loop for requests from other threads;
 * tw__due_ms is the uv_now() at which tw__timer is due; tw__next is the
 * wheel's next expiry it was armed for; tw__starts, tw__stops, tw__wakeups
 * and tw__early (wake-ups before tw__next by the clock) are its stats;
 * tw__layer is what a layer registered, or NULL.
 * struct tw_uv_timer: tw__cb is the timer's callback, then once closing its
 * close callback; tw__repeat is in ms; tw__start_id orders the timers due in
 * the same ms.
 */

#ifdef __cplusplus
extern "C" {
#endif

enum {
	TW__UV_CLOSING = 1u,     /* tw_uv_close() was called */
	TW__UV_FOREVER = 2u,     /* armed for the end of time (see tw__uv_arm_forever) */
	TW__UV_TIMER_OPEN = 8u,  /* tw__timer's close callback has not run */
	TW__UV_ASYNC_OPEN = 16u, /* tw__async's close callback has not run */
	TW__UV_CLOSER_OPEN = 32u, /* the layer's closer is closing: a batch of timer closes is due */
	TW__UV_WEAK_STATE = 128u, /* TW_UV_WEAK: never hold the loop */
	TW__UV_ADVANCING = 256u, /* in tw__uv_advance_both(): one re-arm, after both advances */
	TW__UV_RUNNING = 512u,   /* in tw__uv_on_timer() */
};

#define TW__NS_PER_MS 1000000u

/* Whole milliseconds, rounded up: libuv's clock and timeouts count in ms,
 * and a wake-up rounded down would come before the expiry. */
static inline uint64_t tw__uv_ceil_ms(uint64_t ns)
{
	return ns / TW__NS_PER_MS + (ns % TW__NS_PER_MS != 0);
}

/* tw_uv_wheel() and tw_uv_loop() of a backend that is there, inline for
 * the layer's every call (the exported ones go through the library's
 * symbol table): the wheel, NULL once the backend is closing; the loop. */
static inline struct tw_wheel *tw__uv_wheel(const struct tw_uv *h)
{
	return (h->tw__state & TW__UV_CLOSING) ? NULL : h->tw__wheel;
}

static inline uv_loop_t *tw__uv_loop(const struct tw_uv *h)
{
	return h->tw__timer.loop;
}

/* The layer's calls answer as libuv's do, in libuv's error codes: those
 * are negative errno values on Unix only. The core's and the backend's
 * errors come as negative errno values. */
static inline int tw__uv_error(int r)
{
	switch (r) {
	case -EINVAL:
		return UV_EINVAL;
	case -ENOMEM:
		return UV_ENOMEM;
	case -EBUSY:
		return UV_EBUSY;
	default:
		return r;
	}
}

/* What a layer registers with a backend: its callbacks. */
struct tw__uv_layer_ops {
	/* After the wake-up at @now advanced the wheels: the callbacks of
	 * the timers that fired, in libuv's order, at most @budget of them
	 * (the rest stay first in that order, for the next wake-up);
	 * repeats are re-armed from @now. */
	void (*run_ready)(struct tw_uv *h, uint64_t now, unsigned budget);
	/* When libuv runs close callbacks, after tw__uv_closer_start(): the
	 * close callbacks of the layer's timers closed so far. */
	void (*run_closed)(struct tw_uv *h);
	/* The backend is closed and its handles are gone, just before its
	 * close callback: the layer lets go of its state. */
	void (*release)(struct tw_uv *h);
};

/* What a layer registers with a backend (tw__uv_set_layer()): its
 * callbacks, and the state the backend keeps for it. The layer embeds it
 * in its own state and fills in ops and weak; the rest is the backend's.
 * It must live until the layer's release() is called. */
struct tw__uv_layer {
	const struct tw__uv_layer_ops *ops;
	/* The layer's second wheel, for the timers the program unreferenced:
	 * the backend drives it with its own wheel, on the same uv timer, but
	 * it never holds the loop. The backend destroys it in tw_uv_close(). */
	struct tw_wheel *weak;
	struct tw_timer more;            /* due at once, for a wake-up in the next ms */
	uv_idle_t closer;                /* closed to call the layer back with libuv's close callbacks */
};

/* uv.c: once per backend, which must be open: @layer, with its ops and
 * its weak wheel (at the backend's wheel's now) filled in. Cannot fail. */
void tw__uv_set_layer(struct tw_uv *h, struct tw__uv_layer *layer);

/* uv.c: make sure a closer is on its way; its close callback calls the
 * layer's run_closed(). */
void tw__uv_closer_start(struct tw_uv *h);

/* uv.c: wake again at once (in the next millisecond), holding the loop
 * until then: the layer has callbacks left that a budget put off. */
void tw__uv_wake_soon(struct tw_uv *h);

/*
 * uv_timer_lists.cpp: the layer's lists, on the library's own (list.hpp).
 *
 * A timer of the layer is on one list at a time, through the links of its
 * core timer (tw__timer.tw__next, tw__pprev): the wheel's while it is
 * pending, else at most one of the layer's ready, idle and closing lists.
 * Its flags say which: READY and IDLE while on those; CLOSING from the
 * close on, on the closing list until the batch of its close callback
 * runs. The wheel leaves the links of a timer that is not pending alone
 * and writes them when it arms one, so the layer takes a timer off its
 * list before it arms it (uv_timer.c, arm()), and puts only one that is
 * not pending on one: lists at no cost in the timer's size.
 *
 * The ready list: the timers that fired and wait for their callbacks, run
 * in libuv's order: by due ms, then start id. The wheel hands a wake-up's
 * timers over tick by tick, and a tick's in the order they were armed or
 * in the reverse (each placement of a tick's timers reverses them): a
 * timer that does not come before the last goes last, one that comes
 * before the last run's first timer (and not before the timer ahead of it)
 * goes first in that run, and only another lets order() sort, stable and
 * without allocation, in O(k log k) at worst.
 */
struct tw__uv_ready {
	struct tw_timer *first;
	struct tw_timer **tail; /* &first when empty, else &last->tw__next */
	struct tw_timer **run;  /* where the last run starts: the link to its first timer; NULL after a removal */
	int unordered;          /* a timer went in out of order since order() */
};

void tw__uv_ready_init(struct tw__uv_ready *r);
void tw__uv_ready_add(struct tw__uv_ready *r, struct tw_uv_timer *t);
void tw__uv_ready_remove(struct tw__uv_ready *r, struct tw_uv_timer *t);
void tw__uv_ready_order(struct tw__uv_ready *r);

/* The idle and closing lists, where the newest comes first: libuv walks
 * and calls back its closing handles newest first. */
void tw__uv_list_push(struct tw_timer **head, struct tw_uv_timer *t);
void tw__uv_list_del(struct tw_uv_timer *t);

/* The timer of the layer whose core timer @tt is, NULL for NULL: a list's
 * first, or the one after a timer (tw__uv_next()). */
static inline struct tw_uv_timer *tw__uv_of(struct tw_timer *tt)
{
	return tt ? tw_container_of(tt, struct tw_uv_timer, tw__timer) : NULL;
}

static inline struct tw_uv_timer *tw__uv_next(const struct tw_uv_timer *t)
{
	return tw__uv_of(t->tw__timer.tw__next);
}

/* tw_pending() of the timer, inline (timerwheel.h: tw__where is 0 when idle). */
static inline int tw__uv_pending(const struct tw_uv_timer *t)
{
	return t->tw__timer.tw__where != 0;
}

/* uv_timer_loops.c: the loops' own wheels (uv_timer.c), a process-wide
 * list: found by the loop (NULL if it has none), added once made, removed
 * when the loop's last timer is closed. Any thread, for its own loops. */
struct tw__uv_loop_entry {
	struct tw_uv uv;
	struct tw__uv_loop_entry *next;
};

struct tw__uv_loop_entry *tw__uv_loops_find(uv_loop_t *loop);
void tw__uv_loops_add(struct tw__uv_loop_entry *e);
void tw__uv_loops_remove(struct tw__uv_loop_entry *e);

/* uv_timer.c: tw_uv_timer_close() with libuv's close callback, which is
 * given the timer as a uv_handle_t, for <timerwheel/uv_port.h>. */
void tw__uv_timer_close_uv(struct tw_uv_timer *t, uv_close_cb cb);

/* uv_timer.c: call @fn on every timer of @loop's wheel (tw_uv_timer_init())
 * not yet called back from its close, as uv_walk() would; @fn may close
 * any. 0, or -ENOMEM (nothing called). */
int tw__uv_timer_walk(uv_loop_t *loop, void (*fn)(struct tw_uv_timer *t, void *arg), void *arg);

/* uv.c: whether @hd is one of a backend's own handles, which uv_walk()
 * through <timerwheel/uv_port.h> does not show. */
int tw__uv_is_own_handle(const uv_handle_t *hd);

#ifdef __cplusplus
}
#endif

#endif /* TIMERWHEEL_UV_INT_H */
