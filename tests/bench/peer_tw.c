/* SPDX-License-Identifier: MIT */
/* Peer: timerwheel, 1 ms tick, 64 slots per level; tw_mod() re-arms. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include <timerwheel.h>

#include "bench.h"

struct ctimer {
	struct tw_timer t;
	uint64_t deadline;
};

const char peer_name[] = "tw";
const uint64_t peer_slack_ns = 0;

static struct tw_wheel *wheel;
static struct ctimer *ct;

size_t peer_handle_size(void)
{
	return sizeof(struct tw_timer);
}

size_t peer_harness_bytes(void)
{
	return sizeof(struct ctimer) - sizeof(struct tw_timer);
}

static void fire(struct tw_timer *t)
{
	struct ctimer *c = tw_container_of(t, struct ctimer, t);

	bench_fired(&c->deadline, (uint32_t)(c - ct));
}

int peer_open(uint32_t n)
{
	int err = tw_wheel_create(&wheel, NULL, bench_vnow);

	if (err)
		return err;
	ct = malloc((size_t)n * sizeof(*ct));
	if (!ct) {
		tw_wheel_destroy(wheel);
		return -ENOMEM;
	}
	for (uint32_t i = 0; i < n; i++) {
		tw_timer_init(&ct[i].t, fire);
		ct[i].deadline = 0;
	}
	return 0;
}

void peer_close(void)
{
	struct tw_stats s;

	/* Placements per timer in W3c and W3s: what a window saves in
	 * cascades. Once per workload. */
	static const char *reported;
	if (bench_workload && bench_workload != reported && tw_get_stats(wheel, &s) == 0 && s.armed) {
		printf("# tw %s: %.2f placements per armed timer\n", bench_workload, (double)s.placed / (double)s.armed);
		reported = bench_workload;
	}
	tw_wheel_destroy(wheel);
	wheel = NULL;
	free(ct);
	ct = NULL;
}

void peer_arm(uint32_t i, uint64_t deadline)
{
	ct[i].deadline = deadline;
	if (tw_add(wheel, &ct[i].t, deadline) < 0)
		abort();
}

/* W3s: a window; the driver checks each fire lies inside it. */
#define PEER_HAS_RANGE 1
static void peer_arm_range(uint32_t i, uint64_t deadline, uint64_t slack)
{
	ct[i].deadline = deadline;
	if (tw_add_range(wheel, &ct[i].t, deadline, slack) < 0)
		abort();
}

void peer_rearm(uint32_t i, uint64_t deadline)
{
	ct[i].deadline = deadline;
	if (tw_mod(wheel, &ct[i].t, deadline) < 0)
		abort();
}

void peer_cancel(uint32_t i)
{
	ct[i].deadline = 0;
	tw_del(wheel, &ct[i].t);
}

void peer_advance(uint64_t now)
{
	if (tw_advance(wheel, now) < 0)
		abort();
}

uint64_t peer_deadline(uint32_t i)
{
	return ct[i].deadline;
}
