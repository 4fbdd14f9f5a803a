/* SPDX-License-Identifier: MIT */
/*
 * Peer: libuv's uv_timer_t. Time: uv_run(UV_RUN_NOWAIT) calls
 * uv__update_time(), which reads clock_gettime(CLOCK_MONOTONIC_COARSE, or
 * CLOCK_MONOTONIC when the coarse clock is coarser than 1 ms) through the
 * PLT: vclock.c answers with the virtual clock. loop->time is whole ms,
 * and the deadlines are whole ms, so uv_timer_start(h, cb, d - uv_now(), 0)
 * arms exactly d. A timer fires once loop->time >= its timeout. With no
 * descriptor in the loop, uv__io_poll() returns before epoll_wait().
 * Re-arm: uv_timer_start() on an active timer (it stops it first).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <stdlib.h>

#include <uv.h>

#include "bench.h"

struct ctimer {
	uv_timer_t h;
	uint64_t deadline;
};

const char peer_name[] = "libuv";
const uint64_t peer_slack_ns = 0;

static uv_loop_t loop;
static struct ctimer *ct;
static uint32_t count;

size_t peer_handle_size(void)
{
	return sizeof(uv_timer_t);
}

size_t peer_harness_bytes(void)
{
	return sizeof(struct ctimer) - sizeof(uv_timer_t);
}

static void fire(uv_timer_t *h)
{
	struct ctimer *c = (struct ctimer *)(void *)h;

	bench_fired(&c->deadline, (uint32_t)(c - ct));
}

int peer_open(uint32_t n)
{
	int err = uv_loop_init(&loop);

	if (err)
		return err;
	ct = malloc((size_t)n * sizeof(*ct));
	if (!ct) {
		uv_loop_close(&loop);
		return -ENOMEM;
	}
	count = n;
	for (uint32_t i = 0; i < n; i++) {
		uv_timer_init(&loop, &ct[i].h);
		ct[i].deadline = 0;
	}
	return 0;
}

void peer_close(void)
{
	for (uint32_t i = 0; i < count; i++)
		uv_close((uv_handle_t *)&ct[i].h, NULL);
	uv_run(&loop, UV_RUN_NOWAIT);
	if (uv_loop_close(&loop))
		abort();
	free(ct);
	ct = NULL;
}

static inline uint64_t timeout_ms(uint64_t deadline)
{
	uint64_t d = deadline / 1000000u, now = uv_now(&loop);

	return d > now ? d - now : 0;
}

void peer_arm(uint32_t i, uint64_t deadline)
{
	ct[i].deadline = deadline;
	if (uv_timer_start(&ct[i].h, fire, timeout_ms(deadline), 0))
		abort();
}

void peer_rearm(uint32_t i, uint64_t deadline)
{
	peer_arm(i, deadline);
}

void peer_cancel(uint32_t i)
{
	ct[i].deadline = 0;
	uv_timer_stop(&ct[i].h);
}

void peer_advance(uint64_t now)
{
	(void)now;
	uv_run(&loop, UV_RUN_NOWAIT);
}

uint64_t peer_deadline(uint32_t i)
{
	return ct[i].deadline;
}
