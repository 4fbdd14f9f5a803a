/* SPDX-License-Identifier: MIT */
/*
 * The textbook baseline: an indexed binary min-heap of timer pointers, as
 * in most event loops (each timer remembers its slot so that cancel and
 * re-arm are O(log n) instead of a search). The array grows by doubling.
 */
#ifndef BENCH_HEAP_H
#define BENCH_HEAP_H

#include <stdint.h>

struct hp_timer {
	uint64_t expires;
	void (*fn)(struct hp_timer *t);
	uint32_t slot; /* index in the heap array, HP_IDLE when not armed */
};

#define HP_IDLE UINT32_MAX

struct hp_heap {
	struct hp_timer **a;
	uint32_t len;
	uint32_t cap;
};

void hp_init(struct hp_heap *h);
void hp_free(struct hp_heap *h);
/* 0, or -ENOMEM. @t must be idle. */
int hp_add(struct hp_heap *h, struct hp_timer *t, uint64_t expires);
/* Re-arm, armed or idle: one sift instead of a remove and an insert. */
int hp_mod(struct hp_heap *h, struct hp_timer *t, uint64_t expires);
void hp_del(struct hp_heap *h, struct hp_timer *t);
/* Fire every timer with expires <= now, earliest first. */
unsigned hp_run(struct hp_heap *h, uint64_t now);

#endif /* BENCH_HEAP_H */
