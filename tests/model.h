/* SPDX-License-Identifier: MIT */
/*
 * Arithmetic of the reference models (test_diff, the fuzzer's harness, the
 * soak), done their own way: in 128 bits, saturated at the end, so that a
 * model never shares an overflow with the library it checks.
 */
#ifndef TW_TESTS_MODEL_H
#define TW_TESTS_MODEL_H

#include <stdint.h>

__extension__ typedef unsigned __int128 tw_model_u128;

static inline uint64_t tw_model_saturate(tw_model_u128 x)
{
	return x > UINT64_MAX ? UINT64_MAX : (uint64_t)x;
}

/*
 * hrtimer_forward() as the header states it: the smallest n with
 * expires + n * period > now, and that expiry; both saturate at UINT64_MAX.
 * n is 0 if expires is already later than now.
 */
static inline uint64_t tw_model_forward(uint64_t expires, uint64_t now, uint64_t period, uint64_t *n)
{
	if (expires > now) {
		*n = 0;
		return expires;
	}
	tw_model_u128 k = ((tw_model_u128)now - expires) / period + 1;
	*n = tw_model_saturate(k);
	return tw_model_saturate(expires + k * period);
}

/*
 * The tick the header promises a one-shot timer with expiry e and slack s
 * on a tick of `tick` ns: of the ticks from e's (rounded up) to that +
 * s / tick, no later than the last tick, the multiple of the largest power
 * of two. Searched from the largest power down, not with bit tricks.
 * Returns that tick's time in ns (saturated).
 */
static inline uint64_t tw_model_coarsest_ns(uint64_t e, uint64_t s, uint64_t tick)
{
	tw_model_u128 first = e / tick + (e % tick != 0);
	tw_model_u128 last = UINT64_MAX / tick + (UINT64_MAX % tick != 0);
	tw_model_u128 end = first + s / tick;
	if (end > last)
		end = last;
	for (int k = 64;; k--) {
		tw_model_u128 p = (tw_model_u128)1 << k, m = (first + p - 1) / p * p;
		if (m <= end)
			return tw_model_saturate(m * tick);
	}
}

#endif
