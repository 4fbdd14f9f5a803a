/* SPDX-License-Identifier: MIT */
/*
 * libuv's timer API on the wheel of a tw_uv backend (uv_timer.h). Each
 * timer is a struct tw_timer armed with tw_mod(), so starting, restarting
 * and stopping cost the wheel O(1) and the loop nothing unless the
 * earliest deadline moves earlier.
 *
 * What libuv does per timer and a wheel does not, the layer adds around it:
 *
 * - Order. libuv runs the timers due in one turn by (due ms, start id).
 *   A fired timer only queues on the ready list (uv_timer_lists.cpp), in
 *   that order; the backend then calls the layer back to run it, spending
 *   the wake budget.
 * - Close. A closed timer waits on the layer's closing list; the
 *   backend's closer (one uv_close() per loop turn) calls the layer back.
 * - Liveness. An unreferenced timer lives on the layer's weak wheel, which
 *   never holds the loop; ref and unref move it, deadline and start id kept.
 * - The loop's wheel. tw_uv_timer_init() finds or creates its loop's
 *   backend (uv_timer_loops.c); the last close lets it go. Its stopped
 *   timers wait on the idle list, for uv_walk().
 */
#define _POSIX_C_SOURCE 200809L /* <uv.h> needs POSIX types under strict -std=c11 */

#include <errno.h>
#include <stdlib.h>

#include "usdt.h"
#include "uv_int.h"

enum {
	TW__UVT_UNREF = 1u,    /* tw_uv_timer_unref(): does not hold the loop */
	TW__UVT_READY = 2u,    /* fired, on the layer's ready list */
	TW__UVT_CLOSING = 4u,  /* tw_uv_timer_close() was called */
	TW__UVT_IDLE = 16u,    /* of the loop's wheel, stopped, on the layer's idle list */
	TW__UVT_STARTED = 32u, /* has a timer callback (tw__cb.timer) */
	TW__UVT_UV_CB = 64u,   /* closing, tw__cb.uv_close is libuv's close callback */
};

/*
 * The layer's state on a backend, registered with it (tw__uv_set_layer())
 * by the first timer: embedded in the loop's wheel, allocated for a
 * backend of the program's, and let go of when the backend is closed.
 */
struct layer_state {
	struct tw__uv_layer base;        /* what the backend keeps for the layer */
	struct tw__uv_ready ready;       /* fired, callbacks to run, in libuv's order */
	struct tw_timer *idle;           /* the loop's wheel's stopped timers, for a walk */
	struct tw_timer *closing;        /* closed, callbacks to run */
	struct tw_uv_timer *running;     /* in its timer callback */
	uint64_t start_id;               /* the next start's, as libuv's */
	uint64_t timers;                 /* initialised, not closed */
	unsigned loop_wheel : 1;         /* the loop's own: gone with its last timer; else allocated */
};

static struct layer_state *state_of(const struct tw_uv *h)
{
	return tw_container_of(h->tw__layer, struct layer_state, base);
}

/*
 * The loop's wheel. libuv's uv_walk() shows stopped timers; the layer
 * keeps them on the idle list, through their core timer's links (uv_int.h):
 * no cost in size, a link or unlink per stop or start. A fired timer goes
 * there only once its callback left it idle; a walk meanwhile reads the
 * ready list.
 */
struct loop_wheel {
	struct tw__uv_loop_entry entry; /* the backend, in the list of loops (uv_timer_loops.c) */
	struct tw_wheel *wheel;         /* the layer's, attached to the backend */
	struct layer_state state;
};

/* Only a timer of the loop's wheel, whose memory is the layer's until
 * its close calls back: the program's may be freed once stopped. */
static void park(struct tw_uv_timer *t)
{
	struct layer_state *st = state_of(t->tw__uv);

	if ((t->tw__flags & (TW__UVT_IDLE | TW__UVT_CLOSING)) || !st->loop_wheel)
		return;
	tw__uv_list_push(&st->idle, t);
	t->tw__flags |= TW__UVT_IDLE;
}

static void unpark(struct tw_uv_timer *t)
{
	if (!(t->tw__flags & TW__UVT_IDLE))
		return;
	tw__uv_list_del(t);
	t->tw__flags &= ~(unsigned)TW__UVT_IDLE;
}

static void ready_remove(struct tw_uv *h, struct tw_uv_timer *t)
{
	tw__uv_ready_remove(&state_of(h)->ready, t);
	t->tw__flags &= ~(unsigned)TW__UVT_READY;
}

/* The wheel runs this, in its advance; the timer is idle in it, inactive
 * from here as libuv's is once due. A walk finds it on the ready list;
 * it goes on the idle list only if its callback leaves it idle (run_ready()). */
static void fire(struct tw_timer *tt)
{
	struct tw_uv_timer *t = tw_container_of(tt, struct tw_uv_timer, tw__timer);

	tw__uv_ready_add(&state_of(t->tw__uv)->ready, t);
	t->tw__flags |= TW__UVT_READY;
}

/* The wheel a started timer lives on: the backend's, or the weak one.
 * NULL once the backend was closed. */
static struct tw_wheel *wheel_of(const struct tw_uv_timer *t)
{
	struct tw_wheel *w = tw__uv_wheel(t->tw__uv);

	return w && (t->tw__flags & TW__UVT_UNREF) ? t->tw__uv->tw__layer->weak : w;
}

/* @now + @ms, in ns, saturating at the end of 64-bit time. */
static uint64_t deadline(uint64_t now, uint64_t ms)
{
	return tw_deadline(now, ms > UINT64_MAX / TW__NS_PER_MS ? UINT64_MAX : ms * TW__NS_PER_MS);
}

/* Off the idle or the ready list for an arm, the flag that says which
 * kept until the wheel has taken the timer (arm()). */
static void unlist(struct tw_uv_timer *t)
{
	if (t->tw__flags & TW__UVT_IDLE)
		tw__uv_list_del(t);
	else if (t->tw__flags & TW__UVT_READY)
		tw__uv_ready_remove(&state_of(t->tw__uv)->ready, t);
}

/* The wheel refused the arm: back on the list the flag says. */
static void relist(struct tw_uv_timer *t)
{
	unsigned was = t->tw__flags;

	t->tw__flags &= ~(unsigned)(TW__UVT_IDLE | TW__UVT_READY);
	if (was & TW__UVT_READY)
		fire(&t->tw__timer);
	else if (was & TW__UVT_IDLE)
		park(t);
}

/* Arm (or re-arm) for @when with a new start id; @ms is the timeout. A
 * timeout of 0 is due at once: armed at the wheel's own now, which the
 * wheel counts as expired, it fires in the next advance and the backend
 * wakes for that without waiting for a tick (never early: nothing is
 * earlier than a timeout of 0). Off the layer's lists first: the wheel
 * links the timer through the same links. tw_mod() fails only on a wheel
 * the program destroyed (uv.h), which left the timer idle: it goes back
 * on the list it was on, and the start changed nothing. */
static int arm(struct tw_uv_timer *t, uint64_t now, uint64_t ms)
{
	struct tw_uv *h = t->tw__uv;
	struct tw_wheel *w = wheel_of(t);
	uint64_t when = deadline(now, ms);
	int r;

	if (ms == 0 && tw_now(w) < when)
		when = tw_now(w);
	unlist(t);
	r = tw_mod(w, &t->tw__timer, when);
	if (r < 0) {
		relist(t);
		return r;
	}
	t->tw__flags &= ~(unsigned)(TW__UVT_IDLE | TW__UVT_READY);
	t->tw__start_id = state_of(h)->start_id++;
	return 0;
}

static void disarm(struct tw_uv_timer *t)
{
	if (t->tw__flags & TW__UVT_READY)
		ready_remove(t->tw__uv, t);
	if (tw__uv_pending(t))
		(void)tw_del(wheel_of(t), &t->tw__timer);
}

static void run_ready(struct tw_uv *h, uint64_t now, unsigned budget)
{
	struct layer_state *st = state_of(h);
	struct tw_uv_timer *t;
	unsigned ran = 0;

	if (st->ready.first == NULL)
		return;
	tw__uv_ready_order(&st->ready);
	/* A callback may stop, restart, close or free any timer: each step
	 * takes the head afresh, and a stopped one has left the list. */
	while ((t = tw__uv_of(st->ready.first)) != NULL && tw__uv_wheel(h) != NULL && ran++ < budget) {
		ready_remove(h, t);
		/* As uv_timer_again() before the callback: from the wake-up, not
		 * from a wheel's clock, which a spent budget may have left behind. */
		if (t->tw__repeat)
			(void)arm(t, now, t->tw__repeat);
		st->running = t;
		TW_PROBE_UV_FIRE(t, t->tw__cb.timer);
		t->tw__cb.timer(t);
		st->running = NULL;
		/* Left idle: on the idle list, for a walk. Only the loop's
		 * wheel's timers are still the layer's memory here (park()). */
		if (st->loop_wheel && !tw__uv_pending(t))
			park(t);
	}
	if (st->ready.first == NULL)
		return;
	/* The budget is spent: the rest run first in the next wake-up, which
	 * is in the next millisecond, and hold the loop until then, as
	 * libuv runs every due timer before it looks at liveness again. */
	if (tw__uv_wheel(h) != NULL) {
		tw__uv_wake_soon(h);
		return;
	}
	/* The backend was closed from a callback: the rest never run. */
	while ((t = tw__uv_of(st->ready.first)) != NULL)
		ready_remove(h, t);
}

static void run_closed(struct tw_uv *h)
{
	struct tw_uv_timer *t, *next = tw__uv_of(state_of(h)->closing);

	/* Closes from these callbacks start the next batch. */
	state_of(h)->closing = NULL;
	while ((t = next) != NULL) {
		next = tw__uv_next(t);
		/* Closed: no longer referenced, as libuv's before its callback. */
		t->tw__flags |= TW__UVT_UNREF;
		if (!t->tw__cb.close)
			continue;
		if (t->tw__flags & TW__UVT_UV_CB)
			t->tw__cb.uv_close((uv_handle_t *)t);
		else
			t->tw__cb.close(t);
	}
}

static void release(struct tw_uv *h)
{
	if (!state_of(h)->loop_wheel)
		free(state_of(h));
}

static const struct tw__uv_layer_ops layer_ops = { run_ready, run_closed, release };

/* @st, zeroed, with the weak wheel it owns, registered with @h. */
static void state_register(struct tw_uv *h, struct layer_state *st, struct tw_wheel *weak)
{
	st->base.ops = &layer_ops;
	st->base.weak = weak;
	tw__uv_ready_init(&st->ready);
	tw__uv_set_layer(h, &st->base);
}

/* --- the loop's own wheel --- */

static void loop_wheel_closed(struct tw_uv *h)
{
	free(tw_container_of(h, struct loop_wheel, entry.uv));
}

/* The last timer of the loop's wheel was closed: unlisted at once, so a
 * timer initialised from here on gets a new one. The backend lets go of
 * the wheel, which goes at once; the rest when the backend is closed. */
static void loop_wheel_release(struct tw_uv *h)
{
	struct loop_wheel *lw = tw_container_of(h, struct loop_wheel, entry.uv);

	tw__uv_loops_remove(&lw->entry);
	tw_uv_close(h, loop_wheel_closed);
	tw_wheel_destroy(lw->wheel);
}

/* Both wheels are allocated before the backend registers its handles on
 * the loop, so a failure leaves nothing there to close. */
static struct loop_wheel *loop_wheel_new(uv_loop_t *loop, int *r)
{
	struct loop_wheel *lw = calloc(1, sizeof(*lw));
	struct tw_wheel *weak = NULL;
	uint64_t now = uv_hrtime();

	*r = lw ? tw_wheel_create(&lw->wheel, NULL, now) : -ENOMEM;
	if (*r == 0)
		*r = tw_wheel_create(&weak, NULL, now);
	if (*r == 0)
		*r = tw_uv_attach(loop, &lw->entry.uv, lw->wheel, 0);
	if (*r < 0) {
		if (weak)
			tw_wheel_destroy(weak);
		if (lw && lw->wheel)
			tw_wheel_destroy(lw->wheel);
		free(lw);
		return NULL;
	}
	lw->state.loop_wheel = 1;
	state_register(&lw->entry.uv, &lw->state, weak);
	return lw;
}

static void setup(struct tw_uv *uv, struct tw_uv_timer *t)
{
	t->loop = tw__uv_loop(uv);
	t->type = TW_UV_TIMER;
	t->tw__flags = 0;
	tw_timer_init(&t->tw__timer, fire);
	t->tw__uv = uv;
	t->tw__cb.timer = NULL;
	t->tw__repeat = 0;
	t->tw__start_id = 0;
	state_of(uv)->timers++;
}

/* The wheel of @loop, created with its first timer; NULL and *@r set if
 * that fails. */
static struct loop_wheel *loop_wheel_of(uv_loop_t *loop, int *r)
{
	struct tw__uv_loop_entry *e = tw__uv_loops_find(loop);
	struct loop_wheel *lw;

	if (e)
		return tw_container_of(e, struct loop_wheel, entry);
	lw = loop_wheel_new(loop, r);
	if (lw)
		tw__uv_loops_add(&lw->entry);
	return lw;
}

int tw_uv_timer_init(uv_loop_t *loop, struct tw_uv_timer *t)
{
	struct loop_wheel *lw;
	int r = 0;

	if (!loop || !t)
		return UV_EINVAL;
	lw = loop_wheel_of(loop, &r);
	if (!lw)
		return tw__uv_error(r);
	/* The loop's wheel has its weak wheel and the layer's state. */
	setup(&lw->entry.uv, t);
	park(t);
	return 0;
}

/* --- the timer --- */

/* The layer's first timer on a backend of the program's: both
 * allocations before anything is registered, so a failure changes
 * nothing. The weak wheel has the tick of the program's, no default slack. */
static int state_new(struct tw_uv *uv)
{
	struct tw_wheel *w = tw__uv_wheel(uv);
	struct tw_config cfg = { .tick_ns = tw_tick(w), .slot_bits = 0 };
	struct layer_state *st = calloc(1, sizeof(*st));
	struct tw_wheel *weak;
	int r;

	if (!st)
		return -ENOMEM;
	r = tw_wheel_create(&weak, &cfg, tw_now(w));
	if (r < 0) {
		free(st);
		return r;
	}
	state_register(uv, st, weak);
	return 0;
}

int tw_uv_timer_init_on(struct tw_uv *uv, struct tw_uv_timer *t)
{
	int r;

	if (!uv || !t || !tw__uv_wheel(uv))
		return UV_EINVAL;
	if (!uv->tw__layer) {
		r = state_new(uv);
		if (r < 0)
			return tw__uv_error(r);
	}
	setup(uv, t);
	return 0;
}

int tw_uv_timer_start(struct tw_uv_timer *t, tw_uv_timer_cb cb, uint64_t timeout, uint64_t repeat)
{
	int r;

	if (!t || !cb || !t->tw__uv || (t->tw__flags & TW__UVT_CLOSING))
		return UV_EINVAL;
	if (!tw__uv_wheel(t->tw__uv))
		return UV_EINVAL;
	r = arm(t, uv_hrtime(), timeout);
	if (r < 0)
		return tw__uv_error(r);
	t->tw__cb.timer = cb;
	t->tw__flags |= TW__UVT_STARTED;
	t->tw__repeat = repeat;
	TW_PROBE_UV_START(t, timeout, repeat);
	return 0;
}

int tw_uv_timer_stop(struct tw_uv_timer *t)
{
	if (!t)
		return UV_EINVAL;
	if (!t->tw__uv || !tw__uv_wheel(t->tw__uv) || (t->tw__flags & TW__UVT_CLOSING))
		return 0;
	TW_PROBE_UV_STOP(t, tw_uv_timer_is_active(t));
	disarm(t);
	park(t);
	return 0;
}

int tw_uv_timer_again(struct tw_uv_timer *t)
{
	if (!t || !(t->tw__flags & TW__UVT_STARTED))
		return UV_EINVAL;
	if (!t->tw__repeat)
		return 0;
	if (t->tw__flags & TW__UVT_CLOSING)
		return UV_EINVAL;
	return tw_uv_timer_start(t, t->tw__cb.timer, t->tw__repeat, t->tw__repeat);
}

void tw_uv_timer_set_repeat(struct tw_uv_timer *t, uint64_t repeat)
{
	if (t)
		t->tw__repeat = repeat;
}

uint64_t tw_uv_timer_get_repeat(const struct tw_uv_timer *t)
{
	return t ? t->tw__repeat : 0;
}

uint64_t tw_uv_timer_get_due_in(const struct tw_uv_timer *t)
{
	uint64_t now, left;

	if (!t || !tw__uv_pending(t))
		return 0;
	now = uv_hrtime();
	if (t->tw__timer.expires <= now)
		return 0;
	left = t->tw__timer.expires - now;
	return tw__uv_ceil_ms(left);
}

int tw_uv_timer_is_active(const struct tw_uv_timer *t)
{
	return t && tw__uv_pending(t);
}

/* An armed timer moves to the other wheel with its deadline and start id:
 * only the loop's liveness changes. */
static void set_ref(struct tw_uv_timer *t, int ref)
{
	uint64_t when = t->tw__timer.expires;
	int armed;

	if (!t->tw__uv || !tw__uv_wheel(t->tw__uv) || (!(t->tw__flags & TW__UVT_UNREF)) == ref)
		return;
	armed = tw_del(wheel_of(t), &t->tw__timer) == 1; /* 0: idle */
	t->tw__flags ^= TW__UVT_UNREF;
	if (armed)
		(void)tw_add(wheel_of(t), &t->tw__timer, when);
}

void tw_uv_timer_ref(struct tw_uv_timer *t)
{
	if (t)
		set_ref(t, 1);
}

void tw_uv_timer_unref(struct tw_uv_timer *t)
{
	if (t)
		set_ref(t, 0);
}

int tw_uv_timer_has_ref(const struct tw_uv_timer *t)
{
	return t && !(t->tw__flags & TW__UVT_UNREF);
}

/* Not yet closing, or the call does nothing. */
static int closable(const struct tw_uv_timer *t)
{
	return t && t->tw__uv && !(t->tw__flags & TW__UVT_CLOSING);
}

/* @uv_cb: the callback in tw__cb is libuv's close callback. */
static void close_timer(struct tw_uv_timer *t, unsigned uv_cb)
{
	struct tw_uv *h = t->tw__uv;

	t->tw__flags |= TW__UVT_CLOSING | (uv_cb ? TW__UVT_UV_CB : 0u);
	if (!tw__uv_wheel(h))
		return; /* the backend is gone: see the header */
	disarm(t);
	unpark(t);
	/* Last in, first called, as libuv runs its closing handles. */
	tw__uv_list_push(&state_of(h)->closing, t);
	tw__uv_closer_start(h);
	if (--state_of(h)->timers == 0 && state_of(h)->loop_wheel)
		loop_wheel_release(h);
}

void tw_uv_timer_close(struct tw_uv_timer *t, tw_uv_timer_close_cb cb)
{
	if (closable(t)) {
		t->tw__cb.close = cb;
		close_timer(t, 0);
	}
}

void tw__uv_timer_close_uv(struct tw_uv_timer *t, uv_close_cb cb)
{
	if (closable(t)) {
		t->tw__cb.uv_close = cb;
		close_timer(t, 1);
	}
}

int tw_uv_timer_is_closing(const struct tw_uv_timer *t)
{
	return t && (t->tw__flags & TW__UVT_CLOSING) != 0;
}

/* --- what uv_walk() shows of the layer --- */

struct walk {
	struct tw_uv_timer **all;
	size_t n, cap;
};

static int walk_collect(struct walk *wk, struct tw_uv_timer *t)
{
	if (wk->n == wk->cap) {
		size_t cap = wk->cap ? 2 * wk->cap : 64;
		struct tw_uv_timer **all = realloc(wk->all, cap * sizeof(*all));

		if (!all)
			return -ENOMEM;
		wk->all = all;
		wk->cap = cap;
	}
	wk->all[wk->n++] = t;
	return 0;
}

/* The wheels also carry the backend's own wake-up timer after a spent
 * budget: only the layer's timers fire through fire(). */
static int walk_one(struct tw_timer *tt, uint64_t expires, void *arg)
{
	(void)expires;
	if (tt->fn != fire)
		return 0;
	return walk_collect(arg, tw_container_of(tt, struct tw_uv_timer, tw__timer));
}

int tw__uv_timer_walk(uv_loop_t *loop, void (*fn)(struct tw_uv_timer *t, void *arg), void *arg)
{
	struct walk wk = { NULL, 0, 0 };
	struct tw__uv_loop_entry *e;
	struct loop_wheel *lw;
	struct tw_uv_timer *t;
	int r = 0;
	size_t i;

	e = tw__uv_loops_find(loop);
	if (!e)
		return 0;
	lw = tw_container_of(e, struct loop_wheel, entry);
	/* Every timer of the loop's wheel is armed on one of its two wheels,
	 * stopped on the idle list, on the ready list (fired, its callback to
	 * come) or, closing, on the closing list until its callback: all
	 * collected first, as libuv's walk takes its queue, so @fn may close
	 * any. */
	r = tw_walk(tw__uv_wheel(&lw->entry.uv), walk_one, &wk);
	if (r == 0)
		r = tw_walk(lw->state.base.weak, walk_one, &wk);
	for (t = tw__uv_of(lw->state.idle); t && r == 0; t = tw__uv_next(t))
		r = walk_collect(&wk, t);
	for (t = tw__uv_of(lw->state.ready.first); t && r == 0; t = tw__uv_next(t))
		r = walk_collect(&wk, t);
	/* ... or in its callback, idle until it returns. */
	t = lw->state.running;
	if (t && r == 0 && !tw__uv_pending(t) && !(t->tw__flags & (TW__UVT_IDLE | TW__UVT_CLOSING)))
		r = walk_collect(&wk, t);
	for (t = tw__uv_of(lw->state.closing); t && r == 0; t = tw__uv_next(t))
		r = walk_collect(&wk, t);
	for (i = 0; i < wk.n && r == 0; i++)
		fn(wk.all[i], arg);
	free(wk.all);
	return r;
}
