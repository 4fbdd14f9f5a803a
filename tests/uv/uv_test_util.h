/* SPDX-License-Identifier: MIT */
/* Helpers shared by the libuv backend tests: the reference clock and
 * lateness percentiles. */
#ifndef TW_UV_TEST_UTIL_H
#define TW_UV_TEST_UTIL_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

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

#endif /* TW_UV_TEST_UTIL_H */
