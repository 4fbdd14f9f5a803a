/* SPDX-License-Identifier: MIT */
/*
 * Real-clock soak on libuv: many timers on one tw_uv wheel, re-armed and
 * cancelled at random from a native libuv timer and from their own
 * callbacks, for a given time. Every firing is checked against the timer's
 * expiry by the clock (0 early), against the program's own record of what
 * is armed (0 duplicate: nothing fires that is not armed, or twice), and at
 * the end every timer still armed must fire within its lateness bound while
 * the loop drains (0 lost). Lateness percentiles are printed.
 *
 * Usage: soak_uv [seconds [timers]]   (defaults 10 and 100000); TW_SEED
 * picks the seed. Exit status 0 only if nothing was early, lost or double.
 */
#define _GNU_SOURCE 1

#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <timerwheel/debug.h>
#include <timerwheel/uv.h>

#define MS 1000000ull

struct item {
	struct tw_timer t;
	uint64_t expiry; /* what we armed it for */
	bool armed;      /* our record, independent of the wheel */
};

static struct item *items;
static size_t nitems;
static struct tw_uv handle;
static struct tw_wheel *wheel;
static uv_timer_t chaos;
static uint64_t rng = 0x50a6;
static uint64_t t_end, t_drain_end;
static bool draining;

static uint64_t n_armed, n_arms, n_fires, n_cancels, n_rearms;
static uint64_t n_early, n_duplicate, n_lost, n_errors;
static uint64_t worst_early;

/* Lateness histogram: 1 us buckets up to 1 s, then one overflow bucket. */
enum { HIST = 1000000 };
static uint32_t *hist;
static uint64_t late_over, late_max;

static uint64_t rnd(void)
{
	uint64_t z = (rng += 0x9e3779b97f4a7c15ull);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

/* Near, middle and far deadlines, never on a tick boundary on purpose. */
static uint64_t random_delay(void)
{
	uint64_t r = rnd() % 10;
	if (r < 3)
		return rnd() % (10 * MS);
	if (r < 9)
		return 10 * MS + rnd() % (990 * MS);
	return 1000 * MS + rnd() % (1000 * MS);
}

static void arm(struct item *it, uint64_t now)
{
	uint64_t e = now + random_delay();
	int r = tw_mod(wheel, &it->t, e);
	if (r < 0) {
		n_errors++;
		return;
	}
	if (r != (it->armed ? 1 : 0))
		n_errors++; /* the wheel and our record disagree on pending */
	if (it->armed)
		n_rearms++;
	else
		n_armed++;
	it->armed = true;
	it->expiry = e;
	n_arms++;
}

static void cancel(struct item *it)
{
	int r = tw_del(wheel, &it->t);
	if (r != (it->armed ? 1 : 0))
		n_errors++;
	if (it->armed) {
		n_armed--;
		n_cancels++;
	}
	it->armed = false;
}

static void on_fire(struct tw_timer *t)
{
	struct item *it = tw_container_of(t, struct item, t);
	uint64_t now = tw_uv_now();
	if (!it->armed) {
		n_duplicate++;
		return;
	}
	it->armed = false;
	n_armed--;
	n_fires++;
	if (now < it->expiry) {
		n_early++;
		if (it->expiry - now > worst_early)
			worst_early = it->expiry - now;
	} else {
		uint64_t late = now - it->expiry;
		uint64_t us = late / 1000;
		if (us < HIST)
			hist[us]++;
		else
			late_over++;
		if (late > late_max)
			late_max = late;
	}
	if (draining)
		return;
	/* Callbacks that act on the wheel, as programs do. */
	uint64_t r = rnd() % 8;
	if (r < 4)
		arm(it, now);
	else if (r == 4)
		cancel(&items[rnd() % nitems]);
	else if (r == 5)
		arm(&items[rnd() % nitems], now);
}

static void on_chaos(uv_timer_t *timer)
{
	uint64_t now = tw_uv_now();
	if (!draining) {
		for (int i = 0; i < 200; i++) {
			struct item *it = &items[rnd() % nitems];
			uint64_t r = rnd() % 10;
			if (r < 6)
				arm(it, now); /* re-arm: the common case of a pushed-back timeout */
			else if (r < 9)
				cancel(it);
			else if (!it->armed)
				arm(it, now);
		}
		if (now >= t_end) {
			draining = true;
			/* The furthest deadline is 2 s away; allow a generous bound. */
			t_drain_end = now + 2000 * MS + 3000 * MS;
		}
		return;
	}
	if (n_armed == 0 || now >= t_drain_end) {
		uv_timer_stop(timer);
		uv_close((uv_handle_t *)timer, NULL);
		if (n_armed) {
			n_lost = n_armed; /* still armed 3 s after their deadlines */
			uv_stop(timer->loop);
		}
	}
}

static uint64_t percentile(double p)
{
	uint64_t total = late_over, seen = 0;
	for (size_t i = 0; i < HIST; i++)
		total += hist[i];
	uint64_t want = (uint64_t)((double)total * p);
	for (size_t i = 0; i < HIST; i++) {
		seen += hist[i];
		if (seen > want)
			return i;
	}
	return HIST;
}

int main(int argc, char **argv)
{
	double seconds = argc > 1 ? strtod(argv[1], NULL) : 10;
	nitems = argc > 2 ? strtoull(argv[2], NULL, 0) : 100000;
	const char *seed = getenv("TW_SEED");
	if (seed)
		rng = (uint64_t)strtoull(seed, NULL, 0);
	uint64_t seed_used = rng;
	items = calloc(nitems, sizeof(*items));
	hist = calloc(HIST, sizeof(*hist));
	if (!items || !hist || nitems == 0)
		return 2;

	uv_loop_t loop;
	if (uv_loop_init(&loop) != 0 || tw_wheel_create(&wheel, NULL, tw_uv_now()) != 0 ||
	    tw_uv_attach(&loop, &handle, wheel, 0) != 0)
		return 2;
	uint64_t start = tw_uv_now();
	t_end = start + (uint64_t)(seconds * 1e9);
	for (size_t i = 0; i < nitems; i++) {
		tw_timer_init(&items[i].t, on_fire);
		arm(&items[i], start);
	}
	uv_timer_init(&loop, &chaos);
	uv_timer_start(&chaos, on_chaos, 1, 1);
	uv_run(&loop, UV_RUN_DEFAULT);
	double took = (double)(tw_uv_now() - start) / 1e9;

	struct tw_stats st;
	struct tw_uv_stats us;
	struct tw_lateness wl;
	tw_get_stats(wheel, &st);
	tw_get_lateness(wheel, &wl);
	tw_uv_get_stats(&handle, &us);
	int check = tw_check(wheel);
	size_t left = tw_count(wheel);
	tw_uv_close(&handle, NULL);
	tw_wheel_destroy(wheel);
	uv_run(&loop, UV_RUN_DEFAULT);
	int closed = uv_loop_close(&loop);

	printf("uv soak: %zu timers for %.0f s (%.1f s with the drain), seed %" PRIu64 "\n", nitems, seconds, took,
	       seed_used);
	printf("  %" PRIu64 " arms (%" PRIu64 " re-arms of pending timers), %" PRIu64 " fired, %" PRIu64
	       " cancelled\n",
	       n_arms, n_rearms, n_fires, n_cancels);
	printf("  lateness us: p50 %" PRIu64 " p90 %" PRIu64 " p99 %" PRIu64 " p99.9 %" PRIu64 " max %" PRIu64
	       "\n",
	       percentile(0.5), percentile(0.9), percentile(0.99), percentile(0.999), late_max / 1000);
	/* The wheel's own histogram, against each advance's now: the same
	 * firings, less the loop's delay from that now to the callback. */
	printf("  wheel lateness us (tw_get_lateness, bounds): p50 %" PRIu64 " p99 %" PRIu64 " p99.9 %" PRIu64
	       " max %" PRIu64 "\n",
	       tw_lateness_quantile(&wl, 500) / 1000, tw_lateness_quantile(&wl, 990) / 1000,
	       tw_lateness_quantile(&wl, 999) / 1000, wl.max_ns / 1000);
	printf("  uv_timer starts %" PRIu64 ", stops %" PRIu64 ", wake-ups %" PRIu64 " (%" PRIu64
	       " before the target), idle advances %" PRIu64 "\n",
	       us.timer_starts, us.timer_stops, us.wakeups, us.early_wakeups, st.idle_advances);
	bool ok = n_early == 0 && n_lost == 0 && n_duplicate == 0 && n_errors == 0 && check == 0 && left == 0 &&
		  closed == 0 && n_fires > 0;
	printf("uv soak: %" PRIu64 " early (worst %" PRIu64 " ns), %" PRIu64 " lost, %" PRIu64
	       " duplicate, %" PRIu64 " API disagreements, tw_check %d, %zu left: %s\n",
	       n_early, worst_early, n_lost, n_duplicate, n_errors, check, left, ok ? "OK" : "FAILED");
	free(items);
	free(hist);
	return ok ? 0 : 1;
}
