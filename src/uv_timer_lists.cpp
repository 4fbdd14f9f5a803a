// SPDX-License-Identifier: MIT
//
// The uv_timer_t layer's lists (uv_int.h), on the library's own intrusive
// lists and sort (list.hpp), through the links of each timer's core timer
// (uv_int.h says when they are the layer's).
//
// The ready list keeps libuv's order of the timers due in one wake-up: by
// due millisecond, then by start. The wheel hands a wake-up's timers over
// in tick order, and a tick's in the order they were armed or in the
// reverse, which the list takes at either end; anything else it sorts
// before the layer runs it.
#include <assert.h>

#include "list.hpp"
#include "uv_int.h"

namespace {

uint64_t start_id(const tw_timer *t)
{
	return tw_container_of(t, tw_uv_timer, tw__timer)->tw__start_id;
}

// libuv's order: the earlier due millisecond, then the earlier start. The
// due millisecond only follows the expiry, never reverses it: where the
// expiries and the starts agree, so does the order, without a division.
struct libuv_order {
	bool operator()(const tw_timer *a, const tw_timer *b) const
	{
		bool earlier_start = start_id(a) < start_id(b);
		if (earlier_start ? a->expires <= b->expires : a->expires >= b->expires)
			return earlier_start;
		uint64_t da = tw__uv_ceil_ms(a->expires), db = tw__uv_ceil_ms(b->expires);
		return da != db ? da < db : earlier_start;
	}
};

const libuv_order before{};

#ifndef NDEBUG // read by an assertion only
bool in_order(const tw_timer *t)
{
	for (; t && t->tw__next; t = t->tw__next)
		if (before(t->tw__next, t))
			return false;
	return true;
}
#endif

// The timer whose tw__next `link` is.
const tw_timer *owner_of(tw_timer **link)
{
	return tw_container_of(link, tw_timer, tw__next);
}

// Does t, which comes before the last timer, go first in the last run:
// before the run's first timer, and not before the timer ahead of it?
bool starts_run(const tw__uv_ready *r, const tw_timer *t)
{
	return r->run && before(t, *r->run) && (r->run == &r->first || !before(t, owner_of(r->run)));
}

} // namespace

void tw__uv_ready_init(struct tw__uv_ready *r)
{
	tw::tail_init(*r);
	r->run = nullptr;
	r->unordered = 0;
}

void tw__uv_ready_add(struct tw__uv_ready *r, struct tw_uv_timer *ut)
{
	tw_timer *t = &ut->tw__timer;
	tw_timer **at = r->tail;
	assert(!tw__uv_pending(ut));
	if (r->first && before(t, owner_of(r->tail))) {
		if (starts_run(r, t))
			at = r->run;
		else
			r->unordered = 1;
	}
	if (!*at)
		r->run = at;
	tw::tail_insert(*r, at, t);
}

void tw__uv_ready_remove(struct tw__uv_ready *r, struct tw_uv_timer *t)
{
	tw::tail_remove(*r, &t->tw__timer);
	r->run = nullptr; // its link may have gone with t
}

void tw__uv_ready_order(struct tw__uv_ready *r)
{
	if (!r->unordered)
		return;
	r->unordered = 0;
	r->run = nullptr;
	tw::tail_relink(*r, tw::sort(r->first, before));
	assert(in_order(r->first));
}

void tw__uv_list_push(struct tw_timer **head, struct tw_uv_timer *t)
{
	assert(!tw__uv_pending(t));
	tw::hlist_add_head(head, &t->tw__timer);
}

void tw__uv_list_del(struct tw_uv_timer *t)
{
	assert(!tw__uv_pending(t));
	(void)tw::hlist_del(&t->tw__timer);
}
