/* SPDX-License-Identifier: MIT */
/*
 * The strong textbook baseline: an indexed binary min-heap whose array holds
 * { key, timer pointer } pairs. The key (the expiry) is cached beside the
 * pointer, as libev's 4-ary heap caches it (ANHE), so a sift compares array
 * entries without dereferencing any timer; a timer is touched only to store
 * its new slot when it moves. Each timer knows its slot, so cancel and re-arm
 * are O(log n) instead of a search. The array grows by doubling.
 * heap.c is the same heap with pointers only (the key read through them).
 */
#ifndef BENCH_HEAPK_H
#define BENCH_HEAPK_H

#include <stdint.h>

struct hk_timer {
	void (*fn)(struct hk_timer *t);
	uint32_t slot; /* index in the heap array, HK_IDLE when not armed */
};

#define HK_IDLE UINT32_MAX

struct hk_ent {
	uint64_t key;
	struct hk_timer *t;
};

struct hk_heap {
	struct hk_ent *a;
	uint32_t len;
	uint32_t cap;
};

void hk_init(struct hk_heap *h);
void hk_free(struct hk_heap *h);
/* 0, or -ENOMEM. @t must be idle. */
int hk_add(struct hk_heap *h, struct hk_timer *t, uint64_t expires);
/* Re-arm, armed or idle: one sift instead of a remove and an insert. */
int hk_mod(struct hk_heap *h, struct hk_timer *t, uint64_t expires);
void hk_del(struct hk_heap *h, struct hk_timer *t);
/* Fire every timer with expires <= now, earliest first. */
unsigned hk_run(struct hk_heap *h, uint64_t now);

#endif /* BENCH_HEAPK_H */
