/* SPDX-License-Identifier: MIT */
/*
 * The README's core fragments, as printed, in the context the README gives
 * them: the quick start's w, now and c, and MS and SEC in ns. Arming,
 * re-arming and cancelling run on the owner's thread; the requests run on
 * another thread while the owner advances, and the timer they cancel must
 * be idle, and freed, once the wait says done.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>

#include <timerwheel.h>

#define MS 1000000ull
#define SEC 1000000000ull

struct conn {
	int id;
	struct tw_timer idle;
};

static struct tw_wheel *w;
static int fired;
static atomic_int posted_done;

static void on_idle(struct tw_timer *t)
{
	(void)t;
	fired++;
}

static void *poster(void *arg)
{
	struct conn *c = arg;

#include "fragment_threads.h"
	atomic_store(&posted_done, 1);
	return NULL;
}

int main(void)
{
	uint64_t now = tw_clock_monotonic();
	struct conn *c = calloc(1, sizeof(*c));
	pthread_t th;

	if (!c || tw_wheel_create(&w, NULL, now) < 0)
		return 1;
	{
#include "fragment_arming.h"
	}
	if (tw_pending(&c->idle) || tw_count(w) != 0) {
		printf("FAIL: the arming fragment left the timer armed\n");
		return 1;
	}
	/* Armed, so that the request has something to re-arm and cancel. */
	tw_add(w, &c->idle, tw_deadline(now, 30 * SEC));
	if (pthread_create(&th, NULL, poster, c) != 0)
		return 1;
	while (!atomic_load(&posted_done))
		tw_advance(w, tw_clock_monotonic());
	pthread_join(th, NULL);
	if (tw_count(w) != 0 || fired != 0) {
		printf("FAIL: %zu armed, %d fired after the requests\n", tw_count(w), fired);
		return 1;
	}
	tw_wheel_destroy(w);
	printf("the README's arming and request fragments work as printed\n");
	return 0;
}
