/* SPDX-License-Identifier: MIT */
/*
 * micro: the cost of tw_add, tw_mod, tw_del and tw_advance on the core alone,
 * with N live timers, deadlines uniform within 30 minutes, 1 ms tick.
 *
 *   micro [N ...]      (default: 1000 100000 1000000 10000000)
 *
 * add: N timers armed. mod: N re-arms of random live timers to new random
 * deadlines. del: all N cancelled in random order. advance: all N re-armed,
 * then the clock driven from next expiry to next expiry, as an event loop
 * would, until every timer fired; cost per fired timer. The comparison with
 * other timer libraries is the peers benchmark next to this file.
 */
#define _POSIX_C_SOURCE 200809L
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include <timerwheel.h>
#include <timerwheel/debug.h>

#define TICK 1000000ull
#define SPAN (30ull * 60 * 1000 * TICK)

static uint64_t rng = 0x12345;
static uint64_t next_rand(void)
{
	uint64_t z = (rng += 0x9e3779b97f4a7c15ull);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static uint64_t fired;
static void on_fire(struct tw_timer *t)
{
	(void)t;
	fired++;
}

static int run(size_t n)
{
	struct tw_timer *timers = malloc(n * sizeof(*timers));
	uint64_t *deadline = malloc(n * sizeof(*deadline));
	uint32_t *order = malloc(n * sizeof(*order));
	struct tw_wheel *w;
	if (!timers || !deadline || !order || tw_wheel_create(&w, NULL, 0) != 0) {
		fprintf(stderr, "micro: out of memory at N=%zu\n", n);
		return 1;
	}
	for (size_t i = 0; i < n; i++) {
		tw_timer_init(&timers[i], on_fire);
		deadline[i] = 1 + next_rand() % SPAN;
		order[i] = (uint32_t)i;
	}
	for (size_t i = n - 1; i > 0; i--) {
		size_t j = next_rand() % (i + 1);
		uint32_t x = order[i];
		order[i] = order[j];
		order[j] = x;
	}

	double t0 = now_s();
	for (size_t i = 0; i < n; i++)
		tw_add(w, &timers[i], deadline[i]);
	double t_add = now_s() - t0;

	for (size_t i = 0; i < n; i++)
		deadline[i] = 1 + next_rand() % SPAN;
	t0 = now_s();
	for (size_t i = 0; i < n; i++)
		tw_mod(w, &timers[order[i]], deadline[i]);
	double t_mod = now_s() - t0;

	t0 = now_s();
	for (size_t i = 0; i < n; i++)
		tw_del(w, &timers[order[i]]);
	double t_del = now_s() - t0;

	for (size_t i = 0; i < n; i++)
		tw_add(w, &timers[i], deadline[i]);
	fired = 0;
	uint64_t wakeups = 0;
	t0 = now_s();
	while (tw_count(w) > 0) {
		tw_advance(w, tw_next_expiry(w));
		wakeups++;
	}
	double t_adv = now_s() - t0;

	int bad = fired != n || tw_check(w) != 0;
	printf("%10zu %10.1f %10.1f %10.1f %10.1f %12llu%s\n", n, t_add * 1e9 / (double)n,
	       t_mod * 1e9 / (double)n, t_del * 1e9 / (double)n, t_adv * 1e9 / (double)n,
	       (unsigned long long)wakeups, bad ? "  WRONG: timers lost" : "");
	tw_wheel_destroy(w);
	free(timers);
	free(deadline);
	free(order);
	return bad;
}

int main(int argc, char **argv)
{
	static const size_t defaults[] = { 1000, 100000, 1000000, 10000000 };
	printf("timerwheel micro-benchmark: ns per operation, 1 ms tick, deadlines within 30 min\n");
	printf("%10s %10s %10s %10s %10s %12s\n", "N", "add", "mod", "del", "advance", "wake-ups");
	int bad = 0;
	if (argc > 1)
		for (int i = 1; i < argc; i++)
			bad |= run(strtoull(argv[i], NULL, 0));
	else
		for (size_t i = 0; i < sizeof(defaults) / sizeof(defaults[0]); i++)
			bad |= run(defaults[i]);
	return bad;
}
