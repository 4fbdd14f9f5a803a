/* SPDX-License-Identifier: MIT */
/*
 * The libuv backend: one uv_timer_t per wheel, armed for the wheel's next
 * expiry through the notify hook.
 *
 * Why the arithmetic is in absolute milliseconds: libuv fires a timer once
 * its cached clock loop->time (uv_now(), whole ms, taken from the same
 * monotonic source as uv_hrtime() but truncated, possibly from the coarse
 * clock that lags it) reaches uv_now() + timeout as of uv_timer_start().
 * Arming for the wheel's next expiry rounded UP to a whole ms, minus the
 * cached uv_now(), gives an absolute due time D with D * 1 ms >= next; when
 * the timer runs, loop->time >= D, so the real clock is past next too. A
 * stale uv_now() makes the timeout longer, never the due time earlier.
 * The wheel itself is then advanced with a fresh uv_hrtime(), so it never
 * runs a timer before its expiry whatever woke us.
 */
/* uv.h needs POSIX types (pthread_rwlock_t) that strict C11 hides. */
#define _POSIX_C_SOURCE 200809L

#include "timerwheel/uv.h"

#include "backend.h"
#include "usdt.h"
#include "uv_int.h"

#include <errno.h>
#include <limits.h>
#include <stddef.h>

static struct tw_uv *tw__uv_from_timer(uv_timer_t *t)
{
	return tw_container_of(t, struct tw_uv, tw__timer);
}

static void tw__uv_on_timer(uv_timer_t *timer);

static int tw__uv_arm(struct tw_uv *h, uint64_t next)
{
	uint64_t now_ms = uv_now(h->tw__timer.loop);
	uint64_t due_ms = tw__uv_ceil_ms(next);
	uint64_t timeout = due_ms > now_ms ? due_ms - now_ms : 0;

	/* Due already (a timer armed at or before the wheel's now, as a
	 * layer timer's timeout of 0 is): libuv runs a timeout of 0 in the
	 * loop's next iteration, without sleeping. The wheel's now is a past
	 * reading of uv_hrtime(), and the weak wheel's is never ahead of it,
	 * so this is never early and reads no clock. Not from our own
	 * callback: libuv would run it again in the same pass over its
	 * timers, and a timer restarting itself so would starve the loop; it
	 * waits for the next millisecond instead. */
	if (timeout != 0 && !(h->tw__state & TW__UV_RUNNING) && next <= tw_now(h->tw__wheel))
		timeout = 0;

	if (uv_timer_start(&h->tw__timer, tw__uv_on_timer, timeout, 0) != 0)
		return 0;
	h->tw__starts++;
	/* libuv's due time is uv_now() + timeout, which is due_ms or, when
	 * next is already behind the cached clock, uv_now() itself. */
	h->tw__due_ms = now_ms + timeout;
	h->tw__next = next;
	return 1;
}

/*
 * Timers that fire only at UINT64_MAX still hold the loop, as a native uv
 * timer with timeout (uint64_t)-1 does: libuv clamps such a due time to
 * UINT64_MAX ms, which never comes. The hook hears UINT64_MAX both for an
 * empty wheel and for this; tw_count() tells them apart, and the hook hears
 * every change between the two (a destroy included), so the timer is
 * stopped as soon as the wheel is empty.
 */
static int tw__uv_arm_forever(struct tw_uv *h)
{
	if (h->tw__state & TW__UV_FOREVER)
		return 0;
	if (uv_timer_start(&h->tw__timer, tw__uv_on_timer, UINT64_MAX, 0) != 0)
		return 0;
	h->tw__starts++;
	h->tw__due_ms = UINT64_MAX;
	h->tw__next = UINT64_MAX;
	h->tw__state |= TW__UV_FOREVER;
	return 1;
}

static int tw__uv_stop(struct tw_uv *h)
{
	uv_handle_t *hd = (uv_handle_t *)&h->tw__timer;

	h->tw__state &= ~TW__UV_FOREVER;
	if (!uv_is_active(hd))
		return 0;
	uv_timer_stop(&h->tw__timer);
	h->tw__stops++;
	return 1;
}

/*
 * The wheel calls this when its next expiry moved earlier, when it became
 * empty, and after every advance. Only an earlier due time, a fired timer
 * or an empty wheel touch libuv: a later next is caught by the wake-up we
 * already have, which advances the wheel and lands here again.
 */
static int tw__uv_rearm(struct tw_uv *h, uint64_t next)
{
	uv_handle_t *hd = (uv_handle_t *)&h->tw__timer;

	if (next == UINT64_MAX)
		return tw_count(h->tw__wheel) > 0 ? tw__uv_arm_forever(h) : tw__uv_stop(h);
	h->tw__state &= ~TW__UV_FOREVER;
	if (uv_is_active(hd) && h->tw__due_ms <= tw__uv_ceil_ms(next)) {
		/* Due in time already. Keep the earliest target it must meet:
		 * an early wake-up is judged against that. */
		if (next < h->tw__next)
			h->tw__next = next;
		return 0;
	}
	return tw__uv_arm(h, next);
}

/*
 * libuv's rule: the loop lives while an active, referenced timer exists.
 * The layer keeps its unreferenced timers on a wheel of their own, the weak
 * wheel, which shares the uv timer but never holds the loop, so "the
 * program's wheel has a timer" is the whole rule, and the wheel's hook
 * hears each change of it (a wheel that was empty, or became empty).
 */
static void tw__uv_hold(struct tw_uv *h)
{
	uv_handle_t *hd = (uv_handle_t *)&h->tw__timer;
	int hold = !(h->tw__state & TW__UV_WEAK_STATE) && tw_count(h->tw__wheel) > 0;

	if (hold && !uv_has_ref(hd))
		uv_ref(hd);
	else if (!hold && uv_has_ref(hd))
		uv_unref(hd);
}

/* The uv timer serves both wheels: armed for the earlier of the two. */
static int tw__uv_sync(struct tw_uv *h, struct tw_wheel *w, uint64_t next)
{
	int r;

	if (h->tw__layer != NULL) {
		struct tw_wheel *other = w == h->tw__wheel ? h->tw__layer->weak : h->tw__wheel;
		uint64_t n = tw_next_expiry(other);

		if (n < next)
			next = n;
	}
	r = tw__uv_rearm(h, next);
	tw__uv_hold(h);
	return r;
}

static int tw__uv_notify(struct tw_wheel *w, uint64_t next, void *arg)
{
	struct tw_uv *h = arg;

	/* Closing: nothing to arm. Advancing: tw__uv_advance_both() arms
	 * once both wheels are done. */
	if (h->tw__state & (TW__UV_CLOSING | TW__UV_ADVANCING))
		return 0;
	return tw__uv_sync(h, w, next);
}

/* Another thread posted a request that the loop must see before its
 * timer fires: uv_async_send() is the one libuv call safe from any thread. */
static void tw__uv_wake(struct tw_wheel *w, void *arg)
{
	struct tw_uv *h = arg;

	(void)w;
	uv_async_send(&h->tw__async);
}

/* In the loop: apply the requests; any that moves the next expiry earlier
 * re-arms the uv timer through the notify hook. */
static void tw__uv_on_async(uv_async_t *async)
{
	struct tw_uv *h = tw_container_of(async, struct tw_uv, tw__async);

	if (!(h->tw__state & TW__UV_CLOSING))
		(void)tw_drain(h->tw__wheel);
}

/* Both wheels to the same now, then one re-arm for both. Without the
 * budget: the layer's timers only queue themselves here, and the layer
 * spends the budget on their callbacks, in its order. */
static void tw__uv_advance_both(struct tw_uv *h, uint64_t now)
{
	h->tw__state |= TW__UV_ADVANCING;
	if (tw_advance(h->tw__wheel, now) >= 0)
		(void)tw_advance(h->tw__layer->weak, now);
	h->tw__state &= ~(unsigned)TW__UV_ADVANCING;
	if (!(h->tw__state & TW__UV_CLOSING))
		(void)tw__uv_sync(h, h->tw__wheel, tw_next_expiry(h->tw__wheel));
}

static void tw__uv_more_fired(struct tw_timer *t)
{
	(void)t; /* the wake-up is all it is for */
}

/* On the backend's wheel, which holds the loop: libuv would have run the
 * timers a budget put off in this turn, referenced or not, before
 * uv_run() looked at the loop's liveness again. */
void tw__uv_wake_soon(struct tw_uv *h)
{
	/* At the wheel's now: expired, so the next advance fires it, and
	 * the backend wakes for that as for any due timer. */
	if (!tw_pending(&h->tw__layer->more))
		(void)tw_add(h->tw__wheel, &h->tw__layer->more, tw_now(h->tw__wheel));
}

static void tw__uv_on_timer(uv_timer_t *timer)
{
	struct tw_uv *h = tw__uv_from_timer(timer);
	uint64_t now = uv_hrtime();

	h->tw__wakeups++;
	if (now < h->tw__next)
		h->tw__early++;
	TW_PROBE_WAKE("uv", h->tw__wheel, now, h->tw__next, now < h->tw__next);
	h->tw__state |= TW__UV_RUNNING;
	if (h->tw__layer == NULL) {
		/* The hook at the end of the advance re-arms us, also after
		 * an early wake-up, where nothing fires. */
		(void)tw_advance_budget(h->tw__wheel, now, tw_wake_budget(h->tw__wheel));
	} else {
		tw__uv_advance_both(h, now);
		/* The layer's timers queued themselves in that advance: their
		 * callbacks run now, sorted as libuv sorts them, as many as the
		 * budget allows, and repeats are re-armed from this wake-up's time. */
		h->tw__layer->ops->run_ready(h, now, tw_wake_budget(h->tw__wheel));
	}
	h->tw__state &= ~(unsigned)TW__UV_RUNNING;
}

/*
 * The async handle first: it is the one whose init can fail (it may create
 * the loop's wakeup descriptor), and until the timer exists nothing needs
 * closing, which would take a loop turn before @h could be reused.
 */
static int tw__uv_init_handles(uv_loop_t *loop, struct tw_uv *h, unsigned flags)
{
	int r = uv_async_init(loop, &h->tw__async, tw__uv_on_async);

	if (r < 0)
		return r;
	r = uv_timer_init(loop, &h->tw__timer);
	if (r < 0) {
		uv_close((uv_handle_t *)&h->tw__async, NULL);
		return r;
	}
	/* Started once, with the callback it keeps, so that
	 * tw__uv_is_own_handle() knows it from the first. */
	(void)uv_timer_start(&h->tw__timer, tw__uv_on_timer, UINT64_MAX, 0);
	uv_timer_stop(&h->tw__timer);
	h->tw__async.data = h;
	h->tw__timer.data = h;
	/* Requests keep the loop alive only with TW_UV_HOLD, until
	 * tw_uv_close(); armed timers do (tw__uv_hold() decides for the
	 * timer). */
	if (!(flags & TW_UV_HOLD))
		uv_unref((uv_handle_t *)&h->tw__async);
	return 0;
}

int tw_uv_attach(uv_loop_t *loop, struct tw_uv *h, struct tw_wheel *w, unsigned flags)
{
	int r;

	if (loop == NULL || h == NULL || w == NULL || (flags & ~(TW_UV_WEAK | TW_UV_HOLD)) != 0)
		return -EINVAL;
	/* Installed first: it refuses a destroyed wheel or one with a backend,
	 * and it is not called before the uv timer exists. */
	r = tw_set_notify(w, tw__uv_notify, h);
	if (r < 0)
		return r;
	r = tw__uv_init_handles(loop, h, flags);
	if (r < 0) {
		(void)tw_set_notify(w, NULL, NULL);
		return r;
	}
	h->tw__wheel = w;
	h->tw__close_cb = NULL;
	h->tw__due_ms = 0;
	h->tw__next = UINT64_MAX;
	h->tw__starts = 0;
	h->tw__stops = 0;
	h->tw__wakeups = 0;
	h->tw__early = 0;
	h->tw__state = TW__UV_TIMER_OPEN | TW__UV_ASYNC_OPEN |
		       ((flags & TW_UV_WEAK) ? TW__UV_WEAK_STATE : 0u);
	h->tw__layer = NULL;
	(void)tw_set_wake(w, tw__uv_wake, h);
	/* The hook hears changes from now on; timers armed already are
	 * waited for from here. */
	(void)tw__uv_notify(w, tw_next_expiry(w), h);

	return 0;
}

struct tw_wheel *tw_uv_wheel(const struct tw_uv *h)
{
	return h == NULL ? NULL : tw__uv_wheel(h);
}

uv_loop_t *tw_uv_loop(const struct tw_uv *h)
{
	return h == NULL ? NULL : tw__uv_loop(h);
}

uint64_t tw_uv_now(void)
{
	return uv_hrtime();
}

#define TW__UV_OPEN (TW__UV_TIMER_OPEN | TW__UV_ASYNC_OPEN | TW__UV_CLOSER_OPEN)

/* The handles close in the same loop turn (the closer too, if the layer
 * closed timers in it); the last one to go calls the program back, so
 * tw_uv_close() completes in one turn, as uv_close() does. */
static void tw__uv_closed(struct tw_uv *h, unsigned bit)
{
	h->tw__state &= ~bit;
	if ((h->tw__state & (TW__UV_CLOSING | TW__UV_OPEN)) != TW__UV_CLOSING)
		return;
	if (h->tw__layer != NULL)
		h->tw__layer->ops->release(h);
	if (h->tw__close_cb)
		h->tw__close_cb(h);
}

static void tw__uv_on_close(uv_handle_t *hd)
{
	struct tw_uv *h = hd->data;

	tw__uv_closed(h, hd == (uv_handle_t *)&h->tw__timer ? TW__UV_TIMER_OPEN : TW__UV_ASYNC_OPEN);
}

/*
 * Layer timers closed in one loop turn get their callbacks from one
 * uv_close() of the closer, a handle that is never started: libuv runs it
 * when it runs the other close callbacks, and until then it keeps the loop
 * alive and the poll from blocking, just as a closing uv_timer_t would. Its
 * memory is libuv's no more once its callback runs, so the next batch may
 * init it again from there.
 */
static void tw__uv_on_closer(uv_handle_t *hd)
{
	struct tw_uv *h = hd->data;

	h->tw__state &= ~(unsigned)TW__UV_CLOSER_OPEN;
	h->tw__layer->ops->run_closed(h);
	tw__uv_closed(h, 0);
}

void tw__uv_set_layer(struct tw_uv *h, struct tw__uv_layer *layer)
{
	tw_timer_init(&layer->more, tw__uv_more_fired);
	(void)tw_set_notify(layer->weak, tw__uv_notify, h);
	h->tw__layer = layer;
}

void tw__uv_closer_start(struct tw_uv *h)
{
	if (h->tw__state & TW__UV_CLOSER_OPEN)
		return;
	/* uv_idle_init() only fills the struct in: it cannot fail. */
	(void)uv_idle_init(h->tw__timer.loop, &h->tw__layer->closer);
	h->tw__layer->closer.data = h;
	uv_close((uv_handle_t *)&h->tw__layer->closer, tw__uv_on_closer);
	h->tw__state |= TW__UV_CLOSER_OPEN;
}

/* By the callbacks they were given, which are the backend's alone. The
 * fields are in libuv's public structs, private by name only; libuv keeps
 * their layout within its major version. */
int tw__uv_is_own_handle(const uv_handle_t *hd)
{
	switch (hd->type) {
	case UV_TIMER:
		return ((const uv_timer_t *)hd)->timer_cb == tw__uv_on_timer;
	case UV_ASYNC:
		return ((const uv_async_t *)hd)->async_cb == tw__uv_on_async;
	case UV_IDLE:
		return uv_is_closing(hd) && hd->close_cb == tw__uv_on_closer;
	default:
		return 0;
	}
}

static void tw__uv_close_handles(void *arg)
{
	struct tw_uv *h = arg;

	uv_close((uv_handle_t *)&h->tw__timer, tw__uv_on_close);
	uv_close((uv_handle_t *)&h->tw__async, tw__uv_on_close);
}

static void tw__uv_nothing_to_stop(void *arg)
{
	(void)arg;
}

void tw_uv_close(struct tw_uv *h, tw_uv_close_cb cb)
{
	if (h == NULL || (h->tw__state & TW__UV_CLOSING))
		return;
	/* Never left on a wheel the program gets back. */
	if (h->tw__layer != NULL && tw_pending(&h->tw__layer->more))
		(void)tw_del(h->tw__wheel, &h->tw__layer->more);
	/* From here the hooks, called by the detach's own steps, do nothing. */
	h->tw__state |= TW__UV_CLOSING;
	h->tw__close_cb = cb;
	tw__backend_detach(h->tw__wheel, false, tw__uv_close_handles, h);
	h->tw__wheel = NULL;
	/* The layer handed its weak wheel over: its timers idle. It shares
	 * the one uv_timer_t, which is already closing. */
	if (h->tw__layer != NULL && h->tw__layer->weak != NULL) {
		tw__backend_detach(h->tw__layer->weak, true, tw__uv_nothing_to_stop, NULL);
		h->tw__layer->weak = NULL;
	}
}

int tw_uv_get_stats(const struct tw_uv *h, struct tw_uv_stats *out)
{
	if (h == NULL || out == NULL)
		return -EINVAL;
	out->timer_starts = h->tw__starts;
	out->timer_stops = h->tw__stops;
	out->wakeups = h->tw__wakeups;
	out->early_wakeups = h->tw__early;
	return 0;
}
