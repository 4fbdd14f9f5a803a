/* SPDX-License-Identifier: MIT */
/*
 * Arithmetic of the reference models (test_diff, the fuzzer's harness, the
 * soak), done their own way: in 128 bits, saturated at the end, so that a
 * model never shares an overflow with the library it checks.
 */
#ifndef TW_TESTS_MODEL_H
#define TW_TESTS_MODEL_H

#include <stdint.h>

#if defined(__SIZEOF_INT128__)
__extension__ typedef unsigned __int128 tw_model_u128;
#elif defined(__cplusplus)
/*
 * 32-bit targets have no 128-bit integer: the same arithmetic on two 64-bit
 * halves (schoolbook products, long division), written here and nowhere in
 * the library. Where the C compiler lacks __int128 the C tests that use
 * this header are built as C++ (tests/meson.build).
 */
struct tw_model_u128 {
	uint64_t hi, lo;
	tw_model_u128(uint64_t v = 0) : hi(0), lo(v) {}
	tw_model_u128(uint64_t h, uint64_t l) : hi(h), lo(l) {}
	explicit operator uint64_t() const { return lo; }
	friend bool operator<(tw_model_u128 a, tw_model_u128 b) { return a.hi != b.hi ? a.hi < b.hi : a.lo < b.lo; }
	friend bool operator>(tw_model_u128 a, tw_model_u128 b) { return b < a; }
	friend bool operator<=(tw_model_u128 a, tw_model_u128 b) { return !(b < a); }
	friend bool operator>=(tw_model_u128 a, tw_model_u128 b) { return !(a < b); }
	friend bool operator==(tw_model_u128 a, tw_model_u128 b) { return a.hi == b.hi && a.lo == b.lo; }
	friend bool operator!=(tw_model_u128 a, tw_model_u128 b) { return !(a == b); }
	friend tw_model_u128 operator+(tw_model_u128 a, tw_model_u128 b)
	{
		uint64_t lo = a.lo + b.lo;
		return tw_model_u128(a.hi + b.hi + (lo < a.lo), lo);
	}
	friend tw_model_u128 operator-(tw_model_u128 a, tw_model_u128 b)
	{
		return tw_model_u128(a.hi - b.hi - (a.lo < b.lo), a.lo - b.lo);
	}
	friend tw_model_u128 operator*(tw_model_u128 a, tw_model_u128 b)
	{
		/* a.lo * b.lo in 32-bit digits, the cross terms into the high half. */
		uint64_t x[2] = { a.lo & 0xffffffffu, a.lo >> 32 }, y[2] = { b.lo & 0xffffffffu, b.lo >> 32 };
		uint64_t d0 = x[0] * y[0], d1 = x[1] * y[0], d2 = x[0] * y[1], d3 = x[1] * y[1];
		uint64_t mid = (d0 >> 32) + (d1 & 0xffffffffu) + (d2 & 0xffffffffu);
		uint64_t lo = (mid << 32) | (d0 & 0xffffffffu);
		uint64_t hi = d3 + (d1 >> 32) + (d2 >> 32) + (mid >> 32);
		return tw_model_u128(hi + a.hi * b.lo + a.lo * b.hi, lo);
	}
	friend tw_model_u128 operator<<(tw_model_u128 a, int k)
	{
		if (k == 0)
			return a;
		if (k >= 64)
			return tw_model_u128(a.lo << (k - 64), 0);
		return tw_model_u128((a.hi << k) | (a.lo >> (64 - k)), a.lo << k);
	}
	friend tw_model_u128 operator/(tw_model_u128 a, tw_model_u128 b)
	{
		if (a.hi == 0 && b.hi == 0)
			return tw_model_u128(a.lo / b.lo);
		tw_model_u128 q, r;
		for (int i = 127; i >= 0; i--) {
			r = r << 1;
			r.lo |= (i >= 64 ? a.hi >> (i - 64) : a.lo >> i) & 1;
			if (r >= b) {
				r = r - b;
				if (i >= 64)
					q.hi |= uint64_t{1} << (i - 64);
				else
					q.lo |= uint64_t{1} << i;
			}
		}
		return q;
	}
	tw_model_u128 &operator*=(tw_model_u128 b) { return *this = *this * b; }
};
#endif

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
