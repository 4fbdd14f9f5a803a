/* SPDX-License-Identifier: MIT */
#include "heap.h"

#include <errno.h>
#include <stdlib.h>

void hp_init(struct hp_heap *h)
{
	h->a = NULL;
	h->len = 0;
	h->cap = 0;
}

void hp_free(struct hp_heap *h)
{
	for (uint32_t i = 0; i < h->len; i++)
		h->a[i]->slot = HP_IDLE;
	free(h->a);
	hp_init(h);
}

static inline void place(struct hp_heap *h, uint32_t i, struct hp_timer *t)
{
	h->a[i] = t;
	t->slot = i;
}

static void sift_up(struct hp_heap *h, uint32_t i, struct hp_timer *t)
{
	while (i > 0) {
		uint32_t parent = (i - 1) / 2;
		struct hp_timer *p = h->a[parent];

		if (p->expires <= t->expires)
			break;
		place(h, i, p);
		i = parent;
	}
	place(h, i, t);
}

static void sift_down(struct hp_heap *h, uint32_t i, struct hp_timer *t)
{
	for (;;) {
		uint32_t c = 2 * i + 1;
		struct hp_timer *m;

		if (c >= h->len)
			break;
		m = h->a[c];
		if (c + 1 < h->len && h->a[c + 1]->expires < m->expires)
			m = h->a[++c];
		if (t->expires <= m->expires)
			break;
		place(h, i, m);
		i = c;
	}
	place(h, i, t);
}

int hp_add(struct hp_heap *h, struct hp_timer *t, uint64_t expires)
{
	if (h->len == h->cap) {
		uint32_t cap = h->cap ? 2 * h->cap : 64;
		struct hp_timer **a = realloc(h->a, (size_t)cap * sizeof(*a));

		if (!a)
			return -ENOMEM;
		h->a = a;
		h->cap = cap;
	}
	t->expires = expires;
	sift_up(h, h->len++, t);
	return 0;
}

/* Put @t at slot @i where it may violate the order either way. */
static void fix(struct hp_heap *h, uint32_t i, struct hp_timer *t)
{
	if (i > 0 && h->a[(i - 1) / 2]->expires > t->expires)
		sift_up(h, i, t);
	else
		sift_down(h, i, t);
}

int hp_mod(struct hp_heap *h, struct hp_timer *t, uint64_t expires)
{
	if (t->slot == HP_IDLE)
		return hp_add(h, t, expires);
	t->expires = expires;
	fix(h, t->slot, t);
	return 0;
}

void hp_del(struct hp_heap *h, struct hp_timer *t)
{
	uint32_t i = t->slot;
	struct hp_timer *last;

	if (i == HP_IDLE)
		return;
	t->slot = HP_IDLE;
	last = h->a[--h->len];
	if (last != t)
		fix(h, i, last);
}

unsigned hp_run(struct hp_heap *h, uint64_t now)
{
	unsigned fired = 0;

	while (h->len && h->a[0]->expires <= now) {
		struct hp_timer *t = h->a[0];
		struct hp_timer *last = h->a[--h->len];

		if (h->len)
			sift_down(h, 0, last);
		t->slot = HP_IDLE;
		t->fn(t);
		fired++;
	}
	return fired;
}
