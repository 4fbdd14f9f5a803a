/* SPDX-License-Identifier: MIT */
/*
 * Peer: libev's ev_timer on a loop from ev_loop_new(EVBACKEND_EPOLL).
 * Time: libev 4.33 reads clock_gettime(CLOCK_MONOTONIC) for mn_now and
 * gettimeofday() for ev_rt_now, both through the PLT: vclock.c answers both
 * with the virtual clock. ev_run(EVRUN_NOWAIT) updates mn_now, polls epoll
 * with a 0 timeout (answered by vclock.c) and fires the due timers.
 * libev keeps time in doubles and fires a timer only when at < mn_now,
 * strictly: the driver therefore advances it to deadline + 1 ns
 * (peer_slack_ns), far above a double's rounding at 1000-3000 s (1e-13 s).
 * A fire is late if it misses that advance.
 * Arm: ev_timer_set(after = deadline - now) + ev_timer_start().
 * Re-arm: the idiom libev's manual recommends, repeat = deadline - now and
 * ev_timer_again() (one heap adjustment); the callback stops a timer that
 * libev re-armed itself because of its repeat value.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <stdlib.h>

#include <ev.h>

#include "bench.h"

struct ctimer {
	ev_timer h;
	uint64_t deadline;
};

const char peer_name[] = "libev";
const uint64_t peer_slack_ns = 1;

static struct ev_loop *loop;
static struct ctimer *ct;
static uint32_t count;

size_t peer_handle_size(void)
{
	return sizeof(ev_timer);
}

size_t peer_harness_bytes(void)
{
	return sizeof(struct ctimer) - sizeof(ev_timer);
}

static void fire(struct ev_loop *l, ev_timer *h, int revents)
{
	struct ctimer *c = (struct ctimer *)(void *)h;

	(void)revents;
	if (ev_is_active(h))
		ev_timer_stop(l, h);
	bench_fired(&c->deadline, (uint32_t)(c - ct));
}

int peer_open(uint32_t n)
{
	loop = ev_loop_new(EVBACKEND_EPOLL);
	if (!loop)
		return -ENOMEM;
	ct = malloc((size_t)n * sizeof(*ct));
	if (!ct) {
		ev_loop_destroy(loop);
		return -ENOMEM;
	}
	count = n;
	for (uint32_t i = 0; i < n; i++) {
		ev_timer_init(&ct[i].h, fire, 0., 0.);
		ct[i].deadline = 0;
	}
	return 0;
}

void peer_close(void)
{
	for (uint32_t i = 0; i < count; i++)
		ev_timer_stop(loop, &ct[i].h);
	ev_loop_destroy(loop);
	loop = NULL;
	free(ct);
	ct = NULL;
}

/* Seconds from libev's cached clock (the virtual time of the last run). */
static inline ev_tstamp after(uint64_t deadline)
{
	return (double)(int64_t)(deadline - bench_vnow) * 1e-9;
}

void peer_arm(uint32_t i, uint64_t deadline)
{
	ct[i].deadline = deadline;
	ev_timer_set(&ct[i].h, after(deadline), 0.);
	ev_timer_start(loop, &ct[i].h);
}

void peer_rearm(uint32_t i, uint64_t deadline)
{
	ct[i].deadline = deadline;
	ct[i].h.repeat = after(deadline);
	ev_timer_again(loop, &ct[i].h);
}

void peer_cancel(uint32_t i)
{
	ct[i].deadline = 0;
	ev_timer_stop(loop, &ct[i].h);
}

void peer_advance(uint64_t now)
{
	(void)now;
	ev_run(loop, EVRUN_NOWAIT);
}

uint64_t peer_deadline(uint32_t i)
{
	return ct[i].deadline;
}
