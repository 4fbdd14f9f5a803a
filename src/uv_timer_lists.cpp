/* SPDX-License-Identifier: MIT */
/*
 * The uv_timer_t layer's ready list (uv_int.h), in libuv's order of the
 * timers due in one wake-up: by due millisecond, then by start. The wheel
 * hands a wake-up's timers over in tick order, and a tick's in the order
 * they were armed or in the reverse, which the list takes at either end;
 * anything else it sorts before the layer runs it.
 */
#define _POSIX_C_SOURCE 200809L /* <uv.h> needs POSIX types under strict -std=c11 */

#include <assert.h>

#include "uv_int.h"

static uint64_t due_ms(const struct tw_uv_timer *t)
{
	return tw__uv_ceil_ms(t->tw__timer.expires);
}

/*
 * libuv's order: the earlier due millisecond, then the earlier start. The
 * due millisecond only follows the expiry, never reverses it: where the
 * expiries and the starts agree, so does the order, without a division.
 */
static int before(const struct tw_uv_timer *a, const struct tw_uv_timer *b)
{
	uint64_t da, db;
	int earlier_start = a->tw__start_id < b->tw__start_id;

	if (earlier_start ? a->tw__timer.expires <= b->tw__timer.expires : a->tw__timer.expires >= b->tw__timer.expires)
		return earlier_start;
	da = due_ms(a);
	db = due_ms(b);
	return da != db ? da < db : earlier_start;
}

static struct tw_uv_timer *merge(struct tw_uv_timer *a, struct tw_uv_timer *b)
{
	struct tw_uv_timer *out = NULL, **tail = &out;

	while (a && b) {
		struct tw_uv_timer **min = before(b, a) ? &b : &a;

		*tail = *min;
		tail = &(*min)->tw__next;
		*min = (*min)->tw__next;
	}
	*tail = a ? a : b;
	return out;
}

/* Cuts the run at the head of *@list off it, in order, and gives its last
 * timer in *@last: an ascending run, or a strictly descending one
 * reversed as it is taken. */
static struct tw_uv_timer *take_run(struct tw_uv_timer **list, struct tw_uv_timer **last)
{
	struct tw_uv_timer *t = *list, *next = t->tw__next, *rev = NULL;

	if (next && before(next, t)) {
		*last = t;
		do {
			next = t->tw__next;
			t->tw__next = rev;
			rev = t;
			t = next;
		} while (t && before(t, rev));
		*list = t;
		return rev;
	}
	for (rev = t; next && !before(next, t); next = t->tw__next)
		t = next;
	t->tw__next = NULL;
	*list = next;
	*last = t;
	return rev;
}

#ifndef NDEBUG /* read by an assertion only */
static int in_order(const struct tw_uv_timer *t)
{
	for (; t && t->tw__next; t = t->tw__next)
		if (before(t->tw__next, t))
			return 0;
	return 1;
}
#endif

/*
 * A natural merge sort of a singly linked list by before(), stable and
 * without allocation. Runs that follow one another in order are joined
 * as they come; the others are merged as a binary counter counts (bins[i]
 * holds 2^i runs, merged). A list of a few runs, ascending or descending,
 * costs O(k) for k timers, any list O(k log k).
 */
static struct tw_uv_timer *sort(struct tw_uv_timer *list)
{
	struct tw_uv_timer *bins[64] = { NULL }, *run = NULL, *last = NULL, *next, *next_last;
	unsigned i, used = 0;

	while (list) {
		next = take_run(&list, &next_last);
		if (run && !before(next, last)) {
			last->tw__next = next;
			last = next_last;
			continue;
		}
		for (i = 0; run && bins[i]; i++) {
			run = merge(bins[i], run);
			bins[i] = NULL;
		}
		if (run) {
			bins[i] = run;
			used = i >= used ? i + 1 : used;
		}
		run = next;
		last = next_last;
	}
	for (i = 0; i < used; i++)
		if (bins[i])
			run = merge(bins[i], run);
	return run;
}

void tw__uv_ready_init(struct tw__uv_ready *r)
{
	r->first = NULL;
	r->tail = &r->first;
	r->run = NULL;
	r->unordered = 0;
}

/* Does @t, which comes before the last timer, go first in the last run:
 * before the run's first timer, and not before the timer ahead of it? */
static int starts_run(const struct tw__uv_ready *r, const struct tw_uv_timer *t)
{
	return r->run && before(t, *r->run) &&
	       (r->run == &r->first || !before(t, tw_container_of(r->run, struct tw_uv_timer, tw__next)));
}

void tw__uv_ready_add(struct tw__uv_ready *r, struct tw_uv_timer *t)
{
	struct tw_uv_timer **at = r->tail;

	if (r->first && before(t, tw_container_of(r->tail, struct tw_uv_timer, tw__next))) {
		if (starts_run(r, t))
			at = r->run;
		else
			r->unordered = 1;
	}
	t->tw__next = *at;
	t->tw__pprev = at;
	if (*at) {
		(*at)->tw__pprev = &t->tw__next;
	} else {
		r->tail = &t->tw__next;
		r->run = at;
	}
	*at = t;
}

void tw__uv_ready_remove(struct tw__uv_ready *r, struct tw_uv_timer *t)
{
	if (!t->tw__next)
		r->tail = t->tw__pprev;
	tw__uv_unlink(t);
	r->run = NULL; /* its link may have gone with @t */
}

/* In libuv's order, its back links made again. */
void tw__uv_ready_order(struct tw__uv_ready *r)
{
	struct tw_uv_timer *t;

	if (!r->unordered)
		return;
	r->unordered = 0;
	r->run = NULL;
	r->first = sort(r->first);
	r->tail = &r->first;
	for (t = r->first; t; t = t->tw__next) {
		t->tw__pprev = r->tail;
		r->tail = &t->tw__next;
	}
	assert(in_order(r->first));
}
