/* SPDX-License-Identifier: MIT */
/*
 * Allocation failure: every allocation the library makes is made to fail in
 * turn (the first, then the second, ...) until the call succeeds. Each
 * failing call must return -ENOMEM (or the backend's documented error),
 * leave its output untouched and leak nothing; the succeeding call must
 * give back every byte when torn down.
 *
 * The test binary defines malloc, calloc, realloc and free itself, so the
 * shared library's calls land here; they forward to glibc (or to ASan's
 * allocator in sanitized builds) and count what is still live.
 */
/* libuv and liburing need POSIX and GNU declarations under -std=c11. */
#define _GNU_SOURCE 1

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../common.h"

#if defined(TW_HAVE_UV)
#include <timerwheel/uv.h>
#include <timerwheel/uv_timer.h>
#endif
#if defined(TW_HAVE_URING)
#include <timerwheel/uring.h>
#endif

#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define TW_TEST_ASAN 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__)
#define TW_TEST_ASAN 1
#endif

#if defined(TW_TEST_ASAN)
/* The loader calls malloc before ASan has mapped its shadow memory: the
 * hooks must not be instrumented. */
#define NO_ASAN __attribute__((no_sanitize_address))
void *__interceptor_malloc(size_t n);
void *__interceptor_calloc(size_t n, size_t size);
void *__interceptor_realloc(void *p, size_t n);
void __interceptor_free(void *p);
#define real_malloc __interceptor_malloc
#define real_calloc __interceptor_calloc
#define real_realloc __interceptor_realloc
#define real_free __interceptor_free
#else
#define NO_ASAN
void *__libc_malloc(size_t n);
void *__libc_calloc(size_t n, size_t size);
void *__libc_realloc(void *p, size_t n);
void __libc_free(void *p);
#define real_malloc __libc_malloc
#define real_calloc __libc_calloc
#define real_realloc __libc_realloc
#define real_free __libc_free
#endif

/* While armed: allocation number `fail_at` (from 0) fails, and every block
 * handed out is remembered until it is freed. */
static bool armed;
static int fail_at = -1;
static int attempts;
enum { MAX_LIVE = 256 };
static void *live[MAX_LIVE];
static int nlive;

NO_ASAN static void remember(void *p)
{
	if (!armed || !p)
		return;
	if (nlive < MAX_LIVE)
		live[nlive++] = p;
}

NO_ASAN static void forget(void *p)
{
	for (int i = 0; i < nlive; i++)
		if (live[i] == p) {
			live[i] = live[--nlive];
			return;
		}
}

NO_ASAN static bool should_fail(void)
{
	if (!armed)
		return false;
	return attempts++ == fail_at;
}

NO_ASAN void *malloc(size_t n)
{
	if (should_fail()) {
		errno = ENOMEM;
		return NULL;
	}
	void *p = real_malloc(n);
	remember(p);
	return p;
}

NO_ASAN void *calloc(size_t n, size_t size)
{
	if (should_fail()) {
		errno = ENOMEM;
		return NULL;
	}
	void *p = real_calloc(n, size);
	remember(p);
	return p;
}

NO_ASAN void *realloc(void *old, size_t n)
{
	if (should_fail()) {
		errno = ENOMEM;
		return NULL;
	}
	void *p = real_realloc(old, n);
	if (p) {
		forget(old);
		remember(p);
	}
	return p;
}

NO_ASAN void free(void *p)
{
	if (p)
		forget(p);
	real_free(p);
}

static void arm_failure(int n)
{
	attempts = 0;
	fail_at = n;
	nlive = 0;
	armed = true;
}

static void disarm(void) { armed = false; }

static void nop(struct tw_timer *t) { (void)t; }

/* Valgrind replaces malloc in the executable too, so the hooks above are
 * bypassed there; ASan and plain builds run these tests. */
static void *(*volatile probe_calloc)(size_t, size_t) = calloc;

static bool injectable(void)
{
	arm_failure(0);
	void *p = probe_calloc(1, 1);
	disarm();
	free(p);
	return p == NULL;
}

static void test_wheel_create(void **state)
{
	(void)state;
	/* The smallest and the largest wheels: 1 s x 64 slots, 1 ns x 2 slots. */
	const struct tw_config cfgs[] = { { 1000000000, 6, 0 }, { 1, 1, 0 }, { 0, 0, 0 }, { 7, 3, 0 } };
	for (size_t c = 0; c < sizeof(cfgs) / sizeof(cfgs[0]); c++) {
		int failures = 0;
		for (int n = 0;; n++) {
			struct tw_wheel *w = (struct tw_wheel *)0x1;
			arm_failure(n);
			int r = tw_wheel_create(&w, &cfgs[c], 5);
			disarm();
			if (attempts <= n) { /* nothing left to fail: success */
				assert_int_equal(r, 0);
				tw_wheel_destroy(w);
				break;
			}
			assert_int_equal(r, -ENOMEM);
			assert_ptr_equal(w, (struct tw_wheel *)0x1);
			assert_int_equal(nlive, 0);
			failures++;
		}
		assert_true(failures >= 1); /* the wheel does allocate */

		/* A wheel made after a failure works, and frees all it took. */
		struct tw_wheel *w;
		arm_failure(-1);
		assert_int_equal(tw_wheel_create(&w, &cfgs[c], 5), 0);
		struct tw_timer t;
		tw_timer_init(&t, nop);
		assert_int_equal(tw_add(w, &t, 1000000), 0);
		assert_int_equal(tw_advance(w, UINT64_MAX), 1);
		assert_wheel_sound(w);
		tw_wheel_destroy(w);
		disarm();
		assert_int_equal(nlive, 0);
	}
}

#if defined(TW_HAVE_UV)
static void on_close(struct tw_uv *h) { (void)h; }

/* The backend allocates nothing of its own; what libuv allocates for its
 * handles may fail, and then nothing is left: not the wheel's hook, not a
 * handle on the loop. */
static void test_uv_attach(void **state)
{
	(void)state;
	uv_loop_t loop;
	assert_int_equal(uv_loop_init(&loop), 0);
	for (int n = 0;; n++) {
		struct tw_wheel *w;
		struct tw_uv h;
		assert_int_equal(tw_wheel_create(&w, NULL, tw_uv_now()), 0);
		memset(&h, 0, sizeof(h));
		arm_failure(n);
		int r = tw_uv_attach(&loop, &h, w, 0);
		disarm();
		if (attempts <= n) {
			assert_int_equal(r, 0);
			struct tw_timer t;
			tw_timer_init(&t, nop);
			assert_int_equal(tw_add(w, &t, tw_uv_now() + 1000000), 0);
			arm_failure(-1);
			tw_uv_close(&h, on_close);
			assert_int_equal(uv_run(&loop, UV_RUN_DEFAULT), 0);
			disarm();
			assert_true(tw_pending(&t)); /* the program's wheel, given back */
			tw_wheel_destroy(w);
			break;
		}
		assert_int_equal(r, -ENOMEM);
		assert_int_equal(nlive, 0);
		assert_int_equal(tw_set_notify(w, NULL, NULL), 0);
		tw_wheel_destroy(w);
		/* Nothing was left registered on the loop. */
		assert_int_equal(uv_run(&loop, UV_RUN_NOWAIT), 0);
	}
	assert_int_equal(nlive, 0);
	assert_int_equal(uv_loop_close(&loop), 0);
}

/* The layer's first timer on the program's backend allocates the layer's
 * state and the wheel of its unreferenced timers: a failure leaves
 * neither, the backend as it was, and the timer untouched. */
static void test_uv_timer_init_on(void **state)
{
	(void)state;
	uv_loop_t loop;
	assert_int_equal(uv_loop_init(&loop), 0);
	int failures = 0;
	for (int n = 0;; n++) {
		struct tw_wheel *w;
		struct tw_uv h;
		tw_uv_timer_t t, before;
		assert_int_equal(tw_wheel_create(&w, NULL, tw_uv_now()), 0);
		assert_int_equal(tw_uv_attach(&loop, &h, w, 0), 0);
		memset(&t, 0x5a, sizeof(t));
		before = t;
		arm_failure(n);
		int r = tw_uv_timer_init_on(&h, &t);
		disarm();
		if (attempts <= n) {
			assert_int_equal(r, 0);
			/* What it allocated is still counted: closing frees it. */
			armed = true;
			fail_at = -1;
			tw_uv_timer_close(&t, NULL);
			tw_uv_close(&h, on_close);
			assert_int_equal(uv_run(&loop, UV_RUN_DEFAULT), 0);
			disarm();
			assert_int_equal(nlive, 0);
			tw_wheel_destroy(w);
			break;
		}
		assert_int_equal(r, UV_ENOMEM);
		assert_int_equal(nlive, 0);
		assert_memory_equal(&t, &before, sizeof(t));
		/* The backend is as it was: closing it frees nothing of the layer's. */
		arm_failure(-1);
		tw_uv_close(&h, on_close);
		assert_int_equal(uv_run(&loop, UV_RUN_DEFAULT), 0);
		disarm();
		assert_int_equal(nlive, 0);
		tw_wheel_destroy(w);
		failures++;
	}
	assert_true(failures >= 2); /* the layer's state and its second wheel */
	assert_int_equal(uv_loop_close(&loop), 0);
}

/* The uv_timer_t layer's first timer of a loop makes the loop's wheels:
 * a failed allocation leaves nothing behind, not even a handle to close,
 * so the loop closes at once, without a turn. */
static void test_uv_timer_init(void **state)
{
	(void)state;
	int failures = 0;
	for (int n = 0;; n++) {
		uv_loop_t loop;
		tw_uv_timer_t t;
		assert_int_equal(uv_loop_init(&loop), 0);
		arm_failure(n);
		int r = tw_uv_timer_init(&loop, &t);
		disarm();
		if (attempts <= n) {
			assert_int_equal(r, 0);
			tw_uv_timer_close(&t, NULL);
			assert_int_equal(uv_run(&loop, UV_RUN_DEFAULT), 0);
			assert_int_equal(uv_loop_close(&loop), 0);
			break;
		}
		assert_int_equal(r, -ENOMEM);
		assert_int_equal(nlive, 0);
		assert_int_equal(uv_loop_close(&loop), 0);
		failures++;
	}
	assert_true(failures >= 3); /* the loop's record and its two wheels */
}
#endif

#if defined(TW_HAVE_URING)
static void test_uring(void **state)
{
	(void)state;
	struct io_uring ring;
	int r = io_uring_queue_init(8, &ring, 0);
	if (r < 0) {
		print_message("io_uring unavailable (%s): skipped\n", strerror(-r));
		skip();
	}
	for (int owned = 0; owned <= 1; owned++) {
		int failures = 0;
		for (int n = 0;; n++) {
			struct tw_wheel *w;
			assert_int_equal(tw_wheel_create(&w, NULL, tw_uring_now()), 0);
			struct tw_uring *u = (struct tw_uring *)0x1;
			struct tw_uring_loop *l = (struct tw_uring_loop *)0x1;
			arm_failure(n);
			r = owned ? tw_uring_loop_init(&l, w, NULL) : tw_uring_attach(&u, w, &ring);
			disarm();
			if (attempts <= n) {
				assert_int_equal(r, 0);
				arm_failure(-1);
				assert_int_equal(owned ? tw_uring_loop_close(l) : tw_uring_detach(u), 0);
				disarm();
				assert_int_equal(nlive, 0);
				tw_wheel_destroy(w);
				break;
			}
			assert_int_equal(r, -ENOMEM);
			assert_ptr_equal(u, (struct tw_uring *)0x1);
			assert_ptr_equal(l, (struct tw_uring_loop *)0x1);
			assert_int_equal(nlive, 0);
			/* The hook was not left behind: another backend may attach. */
			assert_int_equal(tw_set_notify(w, NULL, NULL), 0);
			tw_wheel_destroy(w);
			failures++;
		}
		assert_true(failures >= 1);
	}
	io_uring_queue_exit(&ring);
}
#endif

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_wheel_create),
#if defined(TW_HAVE_UV)
		cmocka_unit_test(test_uv_attach),
		cmocka_unit_test(test_uv_timer_init),
		cmocka_unit_test(test_uv_timer_init_on),
#endif
#if defined(TW_HAVE_URING)
		cmocka_unit_test(test_uring),
#endif
	};
	if (!injectable()) {
		printf("allocation failures cannot be injected here (valgrind?): skipped\n");
		return 77; /* meson: SKIP */
	}
	return cmocka_run_group_tests(tests, NULL, NULL);
}
