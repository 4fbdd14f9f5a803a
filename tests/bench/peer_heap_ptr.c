/* SPDX-License-Identifier: MIT */
/*
 * Peer "heap-ptr": the indexed binary heap of heap.c, whose array holds
 * timer pointers only, so every comparison of a sift loads a timer (a cache
 * miss once the timers outgrow the cache). Advanced by hp_run().
 */
#include <errno.h>
#include <stdlib.h>

#include "bench.h"
#include "heap.h"

struct ctimer {
	struct hp_timer h;
	uint64_t deadline;
};

const char peer_name[] = "heap-ptr";
const uint64_t peer_slack_ns = 0;

static struct hp_heap heap;
static struct ctimer *ct;

size_t peer_handle_size(void)
{
	return sizeof(struct hp_timer);
}

size_t peer_harness_bytes(void)
{
	return sizeof(struct ctimer) - sizeof(struct hp_timer);
}

static void fire(struct hp_timer *t)
{
	struct ctimer *c = (struct ctimer *)(void *)t;

	bench_fired(&c->deadline, (uint32_t)(c - ct));
}

int peer_open(uint32_t n)
{
	ct = malloc((size_t)n * sizeof(*ct));
	if (!ct)
		return -ENOMEM;
	hp_init(&heap);
	for (uint32_t i = 0; i < n; i++) {
		ct[i].h.fn = fire;
		ct[i].h.slot = HP_IDLE;
		ct[i].h.expires = 0;
		ct[i].deadline = 0;
	}
	return 0;
}

void peer_close(void)
{
	hp_free(&heap);
	free(ct);
	ct = NULL;
}

void peer_arm(uint32_t i, uint64_t deadline)
{
	ct[i].deadline = deadline;
	if (hp_add(&heap, &ct[i].h, deadline))
		abort();
}

void peer_rearm(uint32_t i, uint64_t deadline)
{
	ct[i].deadline = deadline;
	if (hp_mod(&heap, &ct[i].h, deadline))
		abort();
}

void peer_cancel(uint32_t i)
{
	ct[i].deadline = 0;
	hp_del(&heap, &ct[i].h);
}

void peer_advance(uint64_t now)
{
	hp_run(&heap, now);
}

uint64_t peer_deadline(uint32_t i)
{
	return ct[i].deadline;
}
