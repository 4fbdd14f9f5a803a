/* SPDX-License-Identifier: MIT
 *
 * 10^4 timers, fired by advances of a virtual clock with a budget of 100,
 * once the file named by argv[1] exists (a tracer has attached by then).
 * The first 1000 are due at once, so the budget leaves some due for the
 * next advances; the others have scattered deadlines. Prints how many
 * callbacks ran, which bpftrace_fire.sh compares with the fire probes
 * bpftrace counted.
 */
#define _POSIX_C_SOURCE 200809L /* nanosleep() */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include <timerwheel.h>

#define TIMERS 10000
#define AT_ONCE 1000
#define BUDGET 100
#define MS 1000000ull

static unsigned long fired;

static void on_fire(struct tw_timer *t)
{
	(void)t;
	fired++;
}

int main(int argc, char **argv)
{
	static struct tw_timer timers[TIMERS];
	struct timespec pause = {0, 10 * 1000 * 1000};
	struct tw_wheel *w;
	uint64_t now, x = 88172645463325252ull;
	int i;

	if (argc != 2) {
		fprintf(stderr, "usage: fire_count GO-FILE\n");
		return 2;
	}
	/* Waits at most 60 s for the tracer. */
	for (i = 0; access(argv[1], F_OK) != 0; i++) {
		if (i == 6000) {
			fprintf(stderr, "fire_count: %s never appeared\n", argv[1]);
			return 1;
		}
		nanosleep(&pause, NULL);
	}
	if (tw_wheel_create(&w, NULL, 0) != 0)
		return 1;
	for (i = 0; i < TIMERS; i++) {
		x ^= x << 13; /* xorshift64: deadlines over 10 s, any level */
		x ^= x >> 7;
		x ^= x << 17;
		tw_timer_init(&timers[i], on_fire);
		if (tw_add(w, &timers[i], i < AT_ONCE ? 1 : 1 + x % (10000 * MS)) != 0)
			return 1;
	}
	for (now = 0; tw_count(w) > 0; now += MS)
		if (tw_advance_budget(w, now, BUDGET) < 0)
			return 1;
	tw_wheel_destroy(w);
	printf("fire_count: %lu fired\n", fired);
	return fired == TIMERS ? 0 : 1;
}
