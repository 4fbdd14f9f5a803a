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

#include <errno.h>
#include <stddef.h>

enum {
	TW__UV_CLOSING = 1u,   /* tw_uv_close() was called */
	TW__UV_FOREVER = 2u,   /* armed for the end of time (see tw__uv_arm_forever) */
};

#define TW__NS_PER_MS 1000000u

static uint64_t tw__uv_ceil_ms(uint64_t ns)
{
	return ns / TW__NS_PER_MS + (ns % TW__NS_PER_MS != 0);
}

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
static int tw__uv_notify(struct tw_wheel *w, uint64_t next, void *arg)
{
	struct tw_uv *h = arg;
	uv_handle_t *hd = (uv_handle_t *)&h->tw__timer;

	if (h->tw__state & TW__UV_CLOSING)
		return 0;
	if (next == UINT64_MAX)
		return tw_count(w) > 0 ? tw__uv_arm_forever(h) : tw__uv_stop(h);
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

static void tw__uv_on_timer(uv_timer_t *timer)
{
	struct tw_uv *h = tw__uv_from_timer(timer);
	uint64_t now = uv_hrtime();

	h->tw__wakeups++;
	if (now < h->tw__next)
		h->tw__early++;
	/* The hook at the end of the advance re-arms us, also after an
	 * early wake-up, where nothing fires. */
	(void)tw_advance_budget(h->tw__wheel, now, tw_wake_budget(h->tw__wheel));
}

int tw_uv_init(uv_loop_t *loop, struct tw_uv *h, const struct tw_config *cfg, unsigned flags)
{
	struct tw_wheel *w;
	int r;

	if (loop == NULL || h == NULL || (flags & ~TW_UV_WEAK) != 0)
		return -EINVAL;
	r = tw_wheel_create(&w, cfg, uv_hrtime());
	if (r < 0)
		return r;
	r = uv_timer_init(loop, &h->tw__timer);
	if (r < 0) {
		tw_wheel_destroy(w);
		return r;
	}
	r = uv_async_init(loop, &h->tw__async, tw__uv_on_async);
	if (r < 0) {
		uv_close((uv_handle_t *)&h->tw__timer, NULL);
		tw_wheel_destroy(w);
		return r;
	}
	/* Requests alone never keep the loop alive: armed timers do. */
	uv_unref((uv_handle_t *)&h->tw__async);
	h->tw__wheel = w;
	h->tw__close_cb = NULL;
	h->tw__due_ms = 0;
	h->tw__next = UINT64_MAX;
	h->tw__starts = 0;
	h->tw__stops = 0;
	h->tw__wakeups = 0;
	h->tw__early = 0;
	h->tw__state = 0;
	if (flags & TW_UV_WEAK)
		uv_unref((uv_handle_t *)&h->tw__timer);
	/* A fresh wheel has no hook, so this cannot fail. */
	(void)tw_set_notify(w, tw__uv_notify, h);
	(void)tw_set_wake(w, tw__uv_wake, h);
	return 0;
}

struct tw_wheel *tw_uv_wheel(const struct tw_uv *h)
{
	if (h == NULL || (h->tw__state & TW__UV_CLOSING))
		return NULL;
	return h->tw__wheel;
}

uv_loop_t *tw_uv_loop(const struct tw_uv *h)
{
	return h == NULL ? NULL : h->tw__timer.loop;
}

uint64_t tw_uv_now(void)
{
	return uv_hrtime();
}

static void tw__uv_on_close(uv_handle_t *hd)
{
	struct tw_uv *h = tw_container_of(hd, struct tw_uv, tw__async);

	if (h->tw__close_cb != NULL)
		h->tw__close_cb(h);
}

/* The timer first, then the async handle, then the program's callback. */
static void tw__uv_on_timer_closed(uv_handle_t *hd)
{
	struct tw_uv *h = tw_container_of(hd, struct tw_uv, tw__timer);

	uv_close((uv_handle_t *)&h->tw__async, tw__uv_on_close);
}

void tw_uv_close(struct tw_uv *h, tw_uv_close_cb cb)
{
	if (h == NULL || (h->tw__state & TW__UV_CLOSING))
		return;
	h->tw__state |= TW__UV_CLOSING;
	h->tw__close_cb = cb;
	/* The wheel idles its timers at once, so the program may release
	 * their memory right after this call. Removing our hook lets go of
	 * it: from inside one of its callbacks the core frees it when that
	 * callback returns, and our tw__uv_on_timer() then no longer touches
	 * it. */
	tw_wheel_destroy(h->tw__wheel);
	(void)tw_set_notify(h->tw__wheel, NULL, NULL);
	h->tw__wheel = NULL;
	uv_close((uv_handle_t *)&h->tw__timer, tw__uv_on_timer_closed);
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
