/* SPDX-License-Identifier: MIT */
/*
 * libuv's generic handle calls for a program ported by <timerwheel/uv_port.h>:
 * each tells the layer's timers (type TW_UV_TIMER, UV_HANDLE, which libuv
 * never gives a live handle) from libuv's handles, serves the first through the layer
 * and hands the others to libuv unchanged.
 */
#define _POSIX_C_SOURCE 200809L /* <uv.h> needs POSIX types under strict -std=c11 */

#define TW__UV_PORT_IMPL
#include "timerwheel/uv_port.h"

#include "uv_int.h"

static struct tw_uv_timer *layer_timer(const uv_handle_t *h)
{
	return h->type == TW_UV_TIMER ? (struct tw_uv_timer *)(uintptr_t)h : NULL;
}

void tw_uv_handle_close(uv_handle_t *h, uv_close_cb cb)
{
	struct tw_uv_timer *t = layer_timer(h);

	if (t)
		tw__uv_timer_close_uv(t, cb);
	else
		uv_close(h, cb);
}

int tw_uv_handle_is_active(const uv_handle_t *h)
{
	const struct tw_uv_timer *t = layer_timer(h);

	return t ? tw_uv_timer_is_active(t) : uv_is_active(h);
}

int tw_uv_handle_is_closing(const uv_handle_t *h)
{
	const struct tw_uv_timer *t = layer_timer(h);

	return t ? tw_uv_timer_is_closing(t) : uv_is_closing(h);
}

void tw_uv_handle_ref(uv_handle_t *h)
{
	struct tw_uv_timer *t = layer_timer(h);

	if (t)
		tw_uv_timer_ref(t);
	else
		uv_ref(h);
}

void tw_uv_handle_unref(uv_handle_t *h)
{
	struct tw_uv_timer *t = layer_timer(h);

	if (t)
		tw_uv_timer_unref(t);
	else
		uv_unref(h);
}

int tw_uv_handle_has_ref(const uv_handle_t *h)
{
	const struct tw_uv_timer *t = layer_timer(h);

	return t ? tw_uv_timer_has_ref(t) : uv_has_ref(h);
}

const char *tw_uv_handle_type_name(uv_handle_type type)
{
	return type == TW_UV_TIMER ? "timer" : uv_handle_type_name(type);
}

size_t tw_uv_handle_size(uv_handle_type type)
{
	return type == TW_UV_TIMER ? sizeof(struct tw_uv_timer) : uv_handle_size(type);
}

struct walk {
	uv_walk_cb cb;
	void *arg;
};

static void walk_native(uv_handle_t *h, void *arg)
{
	const struct walk *wk = arg;

	if (!tw__uv_is_own_handle(h))
		wk->cb(h, wk->arg);
}

static void walk_layer(struct tw_uv_timer *t, void *arg)
{
	const struct walk *wk = arg;

	wk->cb((uv_handle_t *)t, wk->arg);
}

void tw_uv_walk(uv_loop_t *loop, uv_walk_cb cb, void *arg)
{
	struct walk wk = { cb, arg };

	uv_walk(loop, walk_native, &wk);
	(void)tw__uv_timer_walk(loop, walk_layer, &wk);
}
