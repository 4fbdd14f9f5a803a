/* SPDX-License-Identifier: MIT */
/*
 * xthread: requests from other threads against a mutex around the wheel.
 *
 *   xthread [-s SECONDS] [-t TIMERS] [-b BUSY]
 *           (default 2 s, 10^5 timers, one busy loop per CPU)
 *
 * An owner thread runs its loop flat out: read the clock, tw_advance().
 * Producer threads re-arm random timers of their own to now + 0..30 s, as
 * workers do when they finish a request and push its timeout. Two designs,
 * side by side, with 1 and 2 producers:
 *
 *   requests  each producer posts tw_post_mod() with one struct tw_request
 *             per timer; the owner applies them in its advances; no lock
 *             anywhere. A post to a request still queued (the owner is
 *             behind) replaces it: latest wins, the timer ends armed for
 *             the last expiry posted, which is what the producer asked.
 *   mutex     one pthread mutex around the wheel; producers lock, tw_mod(),
 *             unlock; the owner locks around each tw_advance().
 *
 * Each design runs twice: on a quiet machine (as quiet as it is), then
 * beside BUSY processes spinning, as on a machine shared with other jobs.
 *
 * Reported: re-arms per second (the sum over producers: every call that
 * succeeded, a post that replaced a queued one included, as a program
 * counts them), the owner's advances per second, and for the requests the
 * latency from tw_post_mod() to the owner having applied it (one producer
 * posting, then polling tw_request_done(), or sleeping in
 * tw_request_wait()), p50 and p99, quiet.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <timerwheel.h>

#define SEC 1000000000ull

/* The timers live with the owner's connections, the requests with the
 * producers' work: separate arrays, as in a program, so that a producer
 * filling a request does not write the cache line of a timer the owner is
 * working on. */
struct item {
	struct tw_timer t;
};

static struct {
	struct tw_wheel *w;
	pthread_mutex_t lock;
	bool use_mutex;
	int stop;           /* atomic */
	uint64_t advances;  /* owner */
	uint32_t ntimers;
	struct item *items;
	struct tw_request *reqs;
} g;

struct producer {
	pthread_t th;
	uint32_t first, count;
	uint64_t rng;
	uint64_t applied;
};

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * SEC + (uint64_t)ts.tv_nsec;
}

static uint64_t rnd(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static void on_fire(struct tw_timer *t)
{
	(void)t;
}

static void *owner(void *arg)
{
	(void)arg;
	while (!__atomic_load_n(&g.stop, __ATOMIC_RELAXED)) {
		uint64_t now = mono_ns();

		if (g.use_mutex)
			pthread_mutex_lock(&g.lock);
		tw_advance(g.w, now);
		if (g.use_mutex)
			pthread_mutex_unlock(&g.lock);
		g.advances++;
	}
	return NULL;
}

static void *produce(void *arg)
{
	struct producer *p = arg;

	while (!__atomic_load_n(&g.stop, __ATOMIC_RELAXED)) {
		uint32_t i = p->first + (uint32_t)(rnd(&p->rng) % p->count);
		struct item *it = &g.items[i];
		uint64_t e = mono_ns() + rnd(&p->rng) % (30 * SEC);

		if (g.use_mutex) {
			pthread_mutex_lock(&g.lock);
			tw_mod(g.w, &it->t, e);
			pthread_mutex_unlock(&g.lock);
			p->applied++;
		} else {
			/* 0 or 1 (replaced a queued post): either way the
			 * timer is, or will be, armed for e. */
			if (tw_post_mod(g.w, &g.reqs[i], &it->t, e) >= 0)
				p->applied++;
		}
	}
	return NULL;
}

static void setup(void)
{
	tw_wheel_create(&g.w, NULL, mono_ns());
	for (uint32_t i = 0; i < g.ntimers; i++) {
		memset(&g.reqs[i], 0, sizeof(g.reqs[i]));
		tw_timer_init(&g.items[i].t, on_fire);
		tw_add(g.w, &g.items[i].t, mono_ns() + (uint64_t)i * 300000 % (30 * SEC));
	}
}

static void teardown(void)
{
	while (tw_drain(g.w) > 0)
		;
	tw_wheel_destroy(g.w);
}

/* Re-arms per second with @np producers. */
static double run(bool use_mutex, int np, double seconds, double *adv_rate)
{
	struct producer p[2];
	pthread_t own;
	uint64_t t0, t1, applied = 0;

	g.use_mutex = use_mutex;
	g.stop = 0;
	g.advances = 0;
	setup();
	pthread_create(&own, NULL, owner, NULL);
	for (int i = 0; i < np; i++) {
		p[i].first = (uint32_t)i * (g.ntimers / (uint32_t)np);
		p[i].count = g.ntimers / (uint32_t)np;
		p[i].rng = 42 + (uint64_t)i;
		p[i].applied = 0;
		pthread_create(&p[i].th, NULL, produce, &p[i]);
	}
	t0 = mono_ns();
	usleep((useconds_t)(seconds * 1e6));
	__atomic_store_n(&g.stop, 1, __ATOMIC_RELAXED);
	for (int i = 0; i < np; i++) {
		pthread_join(p[i].th, NULL);
		applied += p[i].applied;
	}
	pthread_join(own, NULL);
	t1 = mono_ns();
	teardown();
	*adv_rate = (double)g.advances / ((double)(t1 - t0) / 1e9);
	return (double)applied / ((double)(t1 - t0) / 1e9);
}

static int cmp64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return (x > y) - (x < y);
}

/* One producer: post, poll until done (or sleep until done), repeat; the
 * owner loops. */
static void latency(uint64_t *p50, uint64_t *p99, int n, bool sleep)
{
	uint64_t *lat = calloc((size_t)n, sizeof(*lat)), rng = 7;
	pthread_t own;

	g.use_mutex = false;
	g.stop = 0;
	setup();
	pthread_create(&own, NULL, owner, NULL);
	for (int k = 0; k < n; k++) {
		uint32_t i = (uint32_t)(rnd(&rng) % g.ntimers);
		uint64_t t0 = mono_ns();

		if (tw_post_mod(g.w, &g.reqs[i], &g.items[i].t, t0 + rnd(&rng) % (30 * SEC)) != 0) {
			k--;
			continue;
		}
		if (sleep)
			tw_request_wait(g.w, &g.reqs[i]);
		while (!tw_request_done(&g.reqs[i]))
			;
		lat[k] = mono_ns() - t0;
	}
	__atomic_store_n(&g.stop, 1, __ATOMIC_RELAXED);
	pthread_join(own, NULL);
	teardown();
	qsort(lat, (size_t)n, sizeof(*lat), cmp64);
	*p50 = lat[n / 2];
	*p99 = lat[(size_t)n * 99 / 100];
	free(lat);
}

/* Processes that spin until killed: the other jobs of a shared machine. */
static int start_busy(pid_t *pids, int n)
{
	for (int i = 0; i < n; i++) {
		pids[i] = fork();
		if (pids[i] < 0)
			return -errno;
		if (pids[i] == 0)
			for (volatile unsigned x = 0;; x++)
				;
	}
	return 0;
}

static void stop_busy(pid_t *pids, int n)
{
	for (int i = 0; i < n; i++) {
		if (pids[i] <= 0)
			continue;
		kill(pids[i], SIGKILL);
		waitpid(pids[i], NULL, 0);
		pids[i] = 0;
	}
}

static void print_rates(const char *what, double r[2][2], double adv[2][2])
{
	printf("  %-20s %14s %14s %7s\n", what, "requests", "mutex", "ratio");
	for (int np = 1; np <= 2; np++)
		printf("  %-20d %10.2f M/s %10.2f M/s %6.1fx\n", np, r[np - 1][0] / 1e6, r[np - 1][1] / 1e6,
		       r[np - 1][1] > 0 ? r[np - 1][0] / r[np - 1][1] : 0);
	printf("  %-20s %10.2f M/s %10.2f M/s\n", "owner loop, 2", adv[1][0] / 1e6, adv[1][1] / 1e6);
}

int main(int argc, char **argv)
{
	double seconds = 2, r[2][2][2], adv[2][2][2];
	uint64_t p50, p99, w50, w99;
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	int opt, nbusy = ncpu <= 0 ? 1 : ncpu > 1024 ? 1024 : (int)ncpu;
	pid_t *busy;

	g.ntimers = 100000;
	while ((opt = getopt(argc, argv, "s:t:b:")) != -1) {
		if (opt == 's')
			seconds = strtod(optarg, NULL);
		else if (opt == 't')
			g.ntimers = (uint32_t)strtoul(optarg, NULL, 0);
		else if (opt == 'b')
			nbusy = atoi(optarg);
		else {
			fprintf(stderr, "usage: xthread [-s SECONDS] [-t TIMERS] [-b BUSY]\n");
			return 2;
		}
	}
	if (seconds <= 0 || g.ntimers < 2 || nbusy < 0 || nbusy > 1024) {
		fprintf(stderr, "xthread: SECONDS > 0, TIMERS >= 2 and 0 <= BUSY <= 1024\n");
		return 2;
	}
	g.items = calloc(g.ntimers, sizeof(*g.items));
	g.reqs = calloc(g.ntimers, sizeof(*g.reqs));
	busy = calloc((size_t)nbusy + 1, sizeof(*busy));
	if (!g.items || !g.reqs || !busy)
		return 2;
	pthread_mutex_init(&g.lock, NULL);
	for (int loaded = 0; loaded < 2; loaded++) {
		if (loaded && start_busy(busy, nbusy) != 0) {
			stop_busy(busy, nbusy);
			fprintf(stderr, "xthread: fork: %s\n", strerror(errno));
			return 1;
		}
		for (int np = 1; np <= 2; np++)
			for (int m = 0; m < 2; m++)
				r[loaded][np - 1][m] = run(m == 1, np, seconds, &adv[loaded][np - 1][m]);
		stop_busy(busy, nbusy);
	}
	latency(&p50, &p99, 100000, false);
	latency(&w50, &w99, 20000, true);

	printf("xthread: re-arms from other threads, %" PRIu32 " timers, %.1f s each, %ld CPUs\n\n", g.ntimers,
	       seconds, ncpu);
	print_rates("producers, quiet", r[0], adv[0]);
	printf("\n");
	char what[64];
	snprintf(what, sizeof(what), "beside %d busy loops", nbusy);
	print_rates(what, r[1], adv[1]);
	printf("\n  request to effect (post to done, one producer): p50 %.2f us, p99 %.2f us\n", (double)p50 / 1e3,
	       (double)p99 / 1e3);
	printf("  the same, sleeping in tw_request_wait():         p50 %.2f us, p99 %.2f us\n", (double)w50 / 1e3,
	       (double)w99 / 1e3);
	free(g.items);
	free(g.reqs);
	free(busy);
	return 0;
}
