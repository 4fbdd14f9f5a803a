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

#endif
