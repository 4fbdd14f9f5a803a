/* SPDX-License-Identifier: MIT */
/* Helpers shared by the libuv backend tests: the reference clock,
 * lateness percentiles, and a backend on a wheel of the test's own. */
#ifndef TW_UV_TEST_UTIL_H
#define TW_UV_TEST_UTIL_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include <timerwheel/uv.h>

/* The reference every fire is judged by: the issue names
 * clock_gettime(CLOCK_MONOTONIC), not the backend's own clock. On Windows
 * mingw-w64's reads QueryPerformanceCounter(), as libuv's uv_hrtime(). */
static inline uint64_t tw_test_mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* xorshift64*: reproducible deadlines without touching rand()'s state. */
static inline uint64_t tw_test_rand(uint64_t *s)
{
	*s ^= *s >> 12;
	*s ^= *s << 25;
	*s ^= *s >> 27;
	return *s * 2685821657736338717ull;
}

static int tw_test_cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return (x > y) - (x < y);
}

/* Sorts @v in place. */
static inline void tw_test_print_lateness(const char *what, uint64_t *v, size_t n)
{
	if (n == 0)
		return;
	qsort(v, n, sizeof(*v), tw_test_cmp_u64);
	printf("%s: %zu fires, lateness p50 %.3f ms, p99 %.3f ms, max %.3f ms\n", what, n,
	       (double)v[n / 2] / 1e6, (double)v[n * 99 / 100] / 1e6, (double)v[n - 1] / 1e6);
	fflush(stdout);
}

/* A wheel at tw_uv_now() with @cfg, attached to @loop through @h: 0, or
 * the error of tw_wheel_create() or tw_uv_attach() (nothing is left). */
static inline int tw_test_uv_open(uv_loop_t *loop, struct tw_uv *h, const struct tw_config *cfg,
				  unsigned flags)
{
	struct tw_wheel *w;
	int r = tw_wheel_create(&w, cfg, tw_uv_now());

	if (r < 0)
		return r;
	r = tw_uv_attach(loop, h, w, flags);
	if (r < 0)
		tw_wheel_destroy(w);
	return r;
}

/* tw_uv_close() of a backend tw_test_uv_open() made, and the wheel's
 * destroy right after: its timers go idle, never called. */
static inline void tw_test_uv_close(struct tw_uv *h, tw_uv_close_cb cb)
{
	struct tw_wheel *w = tw_uv_wheel(h);

	tw_uv_close(h, cb);
	if (w)
		tw_wheel_destroy(w);
}

#endif /* TW_UV_TEST_UTIL_H */
