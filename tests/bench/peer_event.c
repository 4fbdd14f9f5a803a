/* SPDX-License-Identifier: MIT */
/*
 * Peer: libevent 2.1's evtimer (struct event placed with event_assign() in
 * one array, as libuv and libev handles are; event_new() would add a malloc
 * per timer). Time: event_base_new() picks CLOCK_MONOTONIC_COARSE and
 * evtimer_add() reads it (clock_gettime through the PLT) outside the loop;
 * event_base_loop(EVLOOP_NONBLOCK) refreshes its cached time the same way
 * and polls epoll with a 0 timeout (answered by vclock.c). Its clock is in
 * whole us; a timer fires once the clock reaches its deadline.
 * Re-arm: evtimer_add() on a pending timer (libevent moves it in its heap).
 * The plain min-heap path is measured; "common timeouts" are not used.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <stdlib.h>

#include <event2/event.h>
#include <event2/event_struct.h>

#include "bench.h"

struct ctimer {
	struct event h;
	uint64_t deadline;
};

const char peer_name[] = "libevent";
const uint64_t peer_slack_ns = 0;

static struct event_base *ebase;
static struct ctimer *ct;
static uint32_t count;

size_t peer_handle_size(void)
{
	return sizeof(struct event);
}

size_t peer_harness_bytes(void)
{
	return sizeof(struct ctimer) - sizeof(struct event);
}

static void fire(evutil_socket_t fd, short what, void *arg)
{
	struct ctimer *c = arg;

	(void)fd;
	(void)what;
	bench_fired(&c->deadline, (uint32_t)(c - ct));
}

int peer_open(uint32_t n)
{
	struct event_config *cfg = event_config_new();

	if (!cfg)
		return -ENOMEM;
	event_config_avoid_method(cfg, "select");
	event_config_avoid_method(cfg, "poll");
	ebase = event_base_new_with_config(cfg);
	event_config_free(cfg);
	if (!ebase)
		return -ENOMEM;
	ct = malloc((size_t)n * sizeof(*ct));
	if (!ct) {
		event_base_free(ebase);
		return -ENOMEM;
	}
	count = n;
	for (uint32_t i = 0; i < n; i++) {
		if (event_assign(&ct[i].h, ebase, -1, 0, fire, &ct[i]))
			abort();
		ct[i].deadline = 0;
	}
	return 0;
}

void peer_close(void)
{
	for (uint32_t i = 0; i < count; i++)
		event_del(&ct[i].h);
	event_base_free(ebase);
	ebase = NULL;
	free(ct);
	ct = NULL;
}

void peer_arm(uint32_t i, uint64_t deadline)
{
	uint64_t us = (deadline - bench_vnow) / 1000u;
	struct timeval tv = {.tv_sec = (time_t)(us / 1000000u), .tv_usec = (suseconds_t)(us % 1000000u)};

	ct[i].deadline = deadline;
	if (evtimer_add(&ct[i].h, &tv))
		abort();
}

void peer_rearm(uint32_t i, uint64_t deadline)
{
	peer_arm(i, deadline);
}

void peer_cancel(uint32_t i)
{
	ct[i].deadline = 0;
	evtimer_del(&ct[i].h);
}

void peer_advance(uint64_t now)
{
	(void)now;
	event_base_loop(ebase, EVLOOP_NONBLOCK);
}

uint64_t peer_deadline(uint32_t i)
{
	return ct[i].deadline;
}
