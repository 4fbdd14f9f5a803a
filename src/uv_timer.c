/* SPDX-License-Identifier: MIT */
/*
 * libuv's timer API on the wheel of a tw_uv backend (uv_timer.h). Each
 * timer is a struct tw_timer armed with tw_mod(), so starting, restarting
 * and stopping cost the wheel O(1) and the loop nothing unless the
 * earliest deadline moves earlier.
 */
#define _POSIX_C_SOURCE 200809L /* <uv.h> needs POSIX types under strict -std=c11 */

#include <errno.h>

#include <timerwheel/uv_timer.h>

#define NS_PER_MS 1000000u

/* now + ms, in ns, saturating at the end of 64-bit time. */
static uint64_t deadline(uint64_t now, uint64_t ms)
{
	uint64_t ns;

	if (ms > UINT64_MAX / NS_PER_MS)
		return UINT64_MAX;
	ns = ms * NS_PER_MS;
	return ns > UINT64_MAX - now ? UINT64_MAX : now + ns;
}

/* The wheel runs this; the timer is idle in it. A repeating timer starts
 * again first, from the advance's now, as libuv restarts from loop->time
 * before calling back: the callback may stop it or change its repeat. */
static void fire(struct tw_timer *tt)
{
	struct tw_uv_timer *t = tw_container_of(tt, struct tw_uv_timer, tw__timer);
	struct tw_wheel *w = tw_uv_wheel(t->tw__uv);

	if (t->tw__repeat && w)
		tw_add(w, &t->tw__timer, deadline(tw_now(w), t->tw__repeat));
	t->tw__cb(t);
}

TW_API int tw_uv_timer_init(struct tw_uv *uv, struct tw_uv_timer *t)
{
	if (!uv || !t)
		return -EINVAL;
	tw_timer_init(&t->tw__timer, fire);
	t->tw__uv = uv;
	t->tw__cb = NULL;
	t->tw__repeat = 0;
	return 0;
}

TW_API int tw_uv_timer_start(struct tw_uv_timer *t, tw_uv_timer_cb cb, uint64_t timeout, uint64_t repeat)
{
	struct tw_wheel *w;
	int r;

	if (!t || !cb || !t->tw__uv)
		return -EINVAL;
	w = tw_uv_wheel(t->tw__uv);
	if (!w)
		return -EINVAL;
	r = tw_mod(w, &t->tw__timer, deadline(tw_uv_now(), timeout));
	if (r < 0)
		return r;
	t->tw__cb = cb;
	t->tw__repeat = repeat;
	return 0;
}

TW_API int tw_uv_timer_stop(struct tw_uv_timer *t)
{
	if (!t)
		return -EINVAL;
	if (tw_pending(&t->tw__timer))
		tw_del(tw_uv_wheel(t->tw__uv), &t->tw__timer);
	return 0;
}

TW_API int tw_uv_timer_again(struct tw_uv_timer *t)
{
	if (!t || !t->tw__cb)
		return -EINVAL;
	if (!t->tw__repeat)
		return 0;
	return tw_uv_timer_start(t, t->tw__cb, t->tw__repeat, t->tw__repeat);
}

TW_API void tw_uv_timer_set_repeat(struct tw_uv_timer *t, uint64_t repeat)
{
	if (t)
		t->tw__repeat = repeat;
}

TW_API uint64_t tw_uv_timer_get_repeat(const struct tw_uv_timer *t)
{
	return t ? t->tw__repeat : 0;
}

TW_API uint64_t tw_uv_timer_get_due_in(const struct tw_uv_timer *t)
{
	uint64_t now, left;

	if (!t || !tw_pending(&t->tw__timer))
		return 0;
	now = tw_uv_now();
	if (t->tw__timer.expires <= now)
		return 0;
	left = t->tw__timer.expires - now;
	return left / NS_PER_MS + (left % NS_PER_MS != 0);
}

TW_API int tw_uv_timer_is_active(const struct tw_uv_timer *t)
{
	return t && tw_pending(&t->tw__timer);
}
