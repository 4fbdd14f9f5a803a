/* SPDX-License-Identifier: MIT */
/* Shared by the core tests: CMocka's includes, a seeded PRNG, and a timer
 * that records when it fired. */
#ifndef TW_TESTS_COMMON_H
#define TW_TESTS_COMMON_H

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#ifdef __cplusplus /* CMocka's header has no extern "C" of its own */
extern "C" {
#include <cmocka.h>
}
#else
#include <cmocka.h>
#endif

#include <timerwheel.h>
#include <timerwheel/debug.h>

/* Every wheel test ends with this: the invariants must hold. */
#define assert_wheel_sound(w) assert_int_equal(tw_check(w), 0)

/* A notify hook that does nothing: installed, it holds a destroyed wheel's
 * memory until it is removed (tw_set_notify(w, NULL, NULL)). */
static inline int test_hold_hook(struct tw_wheel *w, uint64_t next, void *arg)
{
	(void)w;
	(void)next;
	(void)arg;
	return 0;
}

#include "rand.h"

/* The seed comes from TW_SEED when set, so a failure can be replayed. */
static inline uint64_t test_seed(void)
{
	const char *s = getenv("TW_SEED");
	uint64_t seed = s ? strtoull(s, NULL, 0) : 0x5eed;
	fprintf(stderr, "# seed %llu (set TW_SEED to replay)\n", (unsigned long long)seed);
	return seed;
}

/* What a failing call must leave as it was: the wheel's observable state. */
struct snapshot {
	uint64_t now, next;
	size_t count;
	struct tw_stats stats;
};

static inline struct snapshot snap(struct tw_wheel *w)
{
	struct snapshot s;
	memset(&s, 0, sizeof(s));
	s.now = tw_now(w);
	s.next = tw_next_expiry(w);
	s.count = tw_count(w);
	tw_get_stats(w, &s.stats);
	return s;
}

#define assert_unchanged(w, before)                                      \
	do {                                                             \
		struct snapshot after_ = snap(w);                        \
		assert_memory_equal(&(before), &after_, sizeof(after_)); \
		assert_wheel_sound(w);                                   \
	} while (0)

/* ceil(e / tick), saturating like the wheel's firing rule. */
static inline uint64_t test_round_up(uint64_t e, uint64_t tick)
{
	uint64_t q = e / tick + (e % tick != 0);
	return q > UINT64_MAX / tick ? UINT64_MAX : q * tick;
}

#endif
