/* SPDX-License-Identifier: MIT */
#include "heapk.h"

#include <errno.h>
#include <stdlib.h>

void hk_init(struct hk_heap *h)
{
	h->a = NULL;
	h->len = 0;
	h->cap = 0;
}

void hk_free(struct hk_heap *h)
{
	for (uint32_t i = 0; i < h->len; i++)
		h->a[i].t->slot = HK_IDLE;
	free(h->a);
	hk_init(h);
}

static inline void place(struct hk_heap *h, uint32_t i, uint64_t key, struct hk_timer *t)
{
	h->a[i].key = key;
	h->a[i].t = t;
	t->slot = i;
}

/* Both sifts compare keys in the array only; a moved timer's slot is
 * stored, never loaded, so no comparison waits for a timer's cache line. */
static void sift_up(struct hk_heap *h, uint32_t i, uint64_t key, struct hk_timer *t)
{
	while (i > 0) {
		uint32_t parent = (i - 1) / 2;

		if (h->a[parent].key <= key)
			break;
		place(h, i, h->a[parent].key, h->a[parent].t);
		i = parent;
	}
	place(h, i, key, t);
}

static void sift_down(struct hk_heap *h, uint32_t i, uint64_t key, struct hk_timer *t)
{
	for (;;) {
		uint32_t c = 2 * i + 1;

		if (c >= h->len)
			break;
		if (c + 1 < h->len && h->a[c + 1].key < h->a[c].key)
			c++;
		if (key <= h->a[c].key)
			break;
		place(h, i, h->a[c].key, h->a[c].t);
		i = c;
	}
	place(h, i, key, t);
}

int hk_add(struct hk_heap *h, struct hk_timer *t, uint64_t expires)
{
	if (h->len == h->cap) {
		uint32_t cap = h->cap ? 2 * h->cap : 64;
		struct hk_ent *a = realloc(h->a, (size_t)cap * sizeof(*a));

		if (!a)
			return -ENOMEM;
		h->a = a;
		h->cap = cap;
	}
	sift_up(h, h->len++, expires, t);
	return 0;
}

/* Put (@key, @t) at slot @i, where it may violate the order either way. */
static void fix(struct hk_heap *h, uint32_t i, uint64_t key, struct hk_timer *t)
{
	if (i > 0 && h->a[(i - 1) / 2].key > key)
		sift_up(h, i, key, t);
	else
		sift_down(h, i, key, t);
}

int hk_mod(struct hk_heap *h, struct hk_timer *t, uint64_t expires)
{
	if (t->slot == HK_IDLE)
		return hk_add(h, t, expires);
	fix(h, t->slot, expires, t);
	return 0;
}

void hk_del(struct hk_heap *h, struct hk_timer *t)
{
	uint32_t i = t->slot;
	struct hk_ent last;

	if (i == HK_IDLE)
		return;
	t->slot = HK_IDLE;
	last = h->a[--h->len];
	if (i != h->len)
		fix(h, i, last.key, last.t);
}

unsigned hk_run(struct hk_heap *h, uint64_t now)
{
	unsigned fired = 0;

	while (h->len && h->a[0].key <= now) {
		struct hk_timer *t = h->a[0].t;
		struct hk_ent last = h->a[--h->len];

		if (h->len)
			sift_down(h, 0, last.key, last.t);
		t->slot = HK_IDLE;
		t->fn(t);
		fired++;
	}
	return fired;
}
