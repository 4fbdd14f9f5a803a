/* SPDX-License-Identifier: MIT */
/*
 * Peer "heap": the strong textbook heap of heapk.c, an indexed binary
 * min-heap whose array caches each timer's key beside its pointer (as
 * libev's 4-ary heap does), so that sifts compare without loading timers.
 * Advanced by hk_run(); re-armed by hk_mod() (one sift).
 */
#include <errno.h>
#include <stdlib.h>

#include "bench.h"
#include "heapk.h"

struct ctimer {
	struct hk_timer h;
	uint64_t deadline;
};

const char peer_name[] = "heap";
const uint64_t peer_slack_ns = 0;

static struct hk_heap heap;
static struct ctimer *ct;

size_t peer_handle_size(void)
{
	return sizeof(struct hk_timer);
}

size_t peer_harness_bytes(void)
{
	return sizeof(struct ctimer) - sizeof(struct hk_timer);
}

static void fire(struct hk_timer *t)
{
	struct ctimer *c = (struct ctimer *)(void *)t;

	bench_fired(&c->deadline, (uint32_t)(c - ct));
}

int peer_open(uint32_t n)
{
	ct = malloc((size_t)n * sizeof(*ct));
	if (!ct)
		return -ENOMEM;
	hk_init(&heap);
	for (uint32_t i = 0; i < n; i++) {
		ct[i].h.fn = fire;
		ct[i].h.slot = HK_IDLE;
		ct[i].deadline = 0;
	}
	return 0;
}

void peer_close(void)
{
	hk_free(&heap);
	free(ct);
	ct = NULL;
}

void peer_arm(uint32_t i, uint64_t deadline)
{
	ct[i].deadline = deadline;
	if (hk_add(&heap, &ct[i].h, deadline))
		abort();
}

void peer_rearm(uint32_t i, uint64_t deadline)
{
	ct[i].deadline = deadline;
	if (hk_mod(&heap, &ct[i].h, deadline))
		abort();
}

void peer_cancel(uint32_t i)
{
	ct[i].deadline = 0;
	hk_del(&heap, &ct[i].h);
}

void peer_advance(uint64_t now)
{
	hk_run(&heap, now);
}

uint64_t peer_deadline(uint32_t i)
{
	return ct[i].deadline;
}
