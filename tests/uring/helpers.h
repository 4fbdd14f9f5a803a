/* SPDX-License-Identifier: MIT */
/* Shared by the io_uring backend tests: ring set-up that skips when the
 * kernel refuses io_uring, and lateness statistics. */
#ifndef TW_TESTS_URING_HELPERS_H
#define TW_TESTS_URING_HELPERS_H

#include <timerwheel/uring.h>

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

/*
 * A seccomp policy or kernel.io_uring_disabled makes io_uring_setup fail
 * with -ENOSYS or -EPERM. Such a machine cannot test this backend: say so
 * and skip, so the run shows SKIPPED and not a silent pass.
 */
static inline int tw_test_refused(int r)
{
	return r == -ENOSYS || r == -EPERM || r == -EACCES;
}

static int tw_test_skips;

/* A test on a kernel that refuses io_uring is skipped, loudly: it must
 * never pass without having tested anything. */
static inline void tw_test_skip_if_refused(int r)
{
	if (tw_test_refused(r)) {
		print_message("SKIP: the kernel refuses io_uring here (%s); "
			      "the io_uring backend is NOT tested\n", strerror(-r));
		tw_test_skips++;
		skip();
	}
}

/*
 * Before main(): a kernel that refuses io_uring skips the whole program at
 * once, saying why. A test that skipped from inside, past the wheel it had
 * created, would leave that behind, and LeakSanitizer would fail the run
 * that a refusing kernel must skip. The skips inside stay for what this
 * probe cannot see (a refusal of one kind of ring).
 */
__attribute__((constructor)) static void tw_test_skip_all_if_refused(void)
{
	struct io_uring ring;
	int r = io_uring_queue_init(2, &ring, 0);

	if (r == 0) {
		io_uring_queue_exit(&ring);
		return;
	}
	if (tw_test_refused(r)) {
		printf("SKIP: the kernel refuses io_uring here (%s); the io_uring backend is NOT tested\n",
		       strerror(-r));
		exit(77);
	}
}

/* Exit status for main(): 77 tells meson the whole run was skipped. */
static inline int tw_test_exit(int failed)
{
	return failed ? failed : tw_test_skips ? 77 : 0;
}

static inline void tw_test_ring_init(struct io_uring *ring, unsigned entries, unsigned flags)
{
	struct io_uring_params p;
	int r;

	memset(&p, 0, sizeof(p));
	p.flags = flags;
	r = io_uring_queue_init_params(entries, ring, &p);
	tw_test_skip_if_refused(r);
	assert_int_equal(r, 0);
}

/* For tests that build an owned loop: the same skip rule. */
static inline void tw_test_loop_init(struct tw_uring_loop **u, struct tw_wheel *w,
				     const struct tw_uring_loop_options *opt)
{
	int r = tw_uring_loop_init(u, w, opt);

	tw_test_skip_if_refused(r);
	assert_int_equal(r, 0);
}

static int tw_test_cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* Sorts @v in place and prints p50/p99/max in microseconds. */
static inline void tw_test_print_lateness(const char *what, uint64_t *v, size_t n)
{
	if (n == 0)
		return;
	qsort(v, n, sizeof(*v), tw_test_cmp_u64);
	print_message("%s: %zu fires, lateness p50 %.1f us, p99 %.1f us, max %.1f us\n", what, n,
		      (double)v[n / 2] / 1e3, (double)v[n * 99 / 100] / 1e3, (double)v[n - 1] / 1e3);
}

/* Deterministic pseudo-random numbers (xorshift64*), so runs are comparable. */
static inline uint64_t tw_test_rand(uint64_t *s)
{
	*s ^= *s >> 12;
	*s ^= *s << 25;
	*s ^= *s >> 27;
	return *s * 2685821657736338717ull;
}

#endif
