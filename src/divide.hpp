// SPDX-License-Identifier: MIT
//
// Division of 64-bit times by the wheel's tick, without a divide
// instruction on the everyday path.
//
// Every arm converts its expiry to ticks and every advance converts `now`:
// a 64-bit division by a number that is fixed when the wheel is created.
// A divide instruction takes tens of cycles; a division by a constant is a
// multiplication by its scaled reciprocal and a shift (Granlund and
// Montgomery, "Division by invariant integers using multiplication", 1994),
// as compilers do for constants they can see. The reciprocal is computed
// once, in create(); quotient() is exact for every 64-bit numerator.
//
// For a divisor d that is not a power of two, with L = floor(log2 d):
//
//   m = floor(2^(64+L) / d) + 1 fits in 64 bits, and when it is close
//   enough to 2^(64+L) / d (the error term e = d - 2^(64+L) mod d is below
//   2^L) then n / d = (n * m) >> (64 + L) for every 64-bit n.
//
//   The condition comes from the rounding: m = (2^(64+L) + e) / d, so
//   n * m / 2^(64+L) is n / d plus n * e / (d * 2^(64+L)), which must stay
//   below the distance to the next integer, at least 1 / d: n * e < 2^(64+L)
//   for every n below 2^64.
//
//   An even divisor d = 2^z * d' (every tick given in whole microseconds
//   or milliseconds is one) divides in two steps: n / d = (n >> z) / d'.
//   The shifted numerator is below 2^(64-z), so the condition for d' is
//   e < 2^(L'+z), which holds for any z >= 1 because e <= d' < 2^(L'+1):
//   a shift, a multiplication and a shift, always.
//
//   An odd divisor that misses the condition needs one more bit of
//   precision: the multiplier is 2^64 + m' with m' = floor(2^(65+L) / d)
//   + 1 - 2^64, and the shift 65 + L. The 65-bit product is formed without
//   overflow as q = (n * m') >> 64, then ((n - q) / 2 + q) >> L.
//
// The 128-bit steps are compiler.hpp's mulhi64() and div128by64(), which
// 32-bit targets build from 64-bit halves. A power of two is a shift.
//
// The default tick, 1 ms = 2^6 * 15625, is a `mul` whose shifts and
// multiplier by() finds to be the constants of `ms`: tested first, it
// divides with immediate operands, as a compiler divides by a constant.
// by() picks it only when the reciprocal it computed equals those.
// tests/test_divide.cpp checks quotient() against the divide instruction
// on the edges and on random numbers.
#ifndef TW_DIVIDE_HPP
#define TW_DIVIDE_HPP

#include <stdint.h>

#include "compiler.hpp"

namespace tw {

// Built by divider::by(d) (create() does it once); plain data, as the
// wheel that holds it is.
struct divider {
	enum kind : uint8_t { pow2, mul, mul_add, ms };
	// `ms`: the reciprocal by() computes for 1 ms, written as constants.
	static constexpr uint64_t ms_ns = 1000000, ms_magic = 0x8637bd05af6c69b6;
	static constexpr uint8_t ms_pre = 6, ms_shift = 13;
	uint64_t magic;
	uint8_t pre;    // mul: the numerator's shift before the product (z above)
	uint8_t shift;
	kind how;

	static divider by(uint64_t d)
	{
		divider v = by_any(d);
		if (d == ms_ns && v.how == mul && v.magic == ms_magic && v.pre == ms_pre && v.shift == ms_shift)
			v.how = ms;
		return v;
	}

	static divider by_any(uint64_t d)
	{
		unsigned log2 = 63u - clz64(d);
		divider v = { d, 0, static_cast<uint8_t>(log2), pow2 };
		if ((d & (d - 1)) == 0)
			return v;
		if (!(d & 1)) {
			unsigned z = ctz64(d);
			divider odd = by_any(d >> z); // not a power of two either
			if (odd.how == mul_add) {
				// 2^(64+L') / d' + 1, which fits (d' > 2^L').
				uint64_t rem;
				odd.magic = div128by64(uint64_t{1} << odd.shift, 0, d >> z, &rem) + 1;
				odd.how = mul;
			}
			odd.pre = static_cast<uint8_t>(odd.pre + z);
			return odd;
		}
		// 2^(64+L) / d: the high word 2^L, the low word 0.
		uint64_t rem;
		uint64_t m = div128by64(uint64_t{1} << log2, 0, d, &rem);
		if (d - rem < (uint64_t{1} << log2)) {
			v.how = mul;
			v.magic = m + 1;
			return v;
		}
		// Twice the quotient and remainder: 2^(65+L) / d, less 2^64.
		uint64_t twice_rem = rem + rem;
		m += m;
		if (twice_rem >= d || twice_rem < rem)
			m += 1;
		v.how = mul_add;
		v.magic = m + 1;
		return v;
	}

	static uint64_t ms_quotient(uint64_t n) { return mulhi64(n >> ms_pre, ms_magic) >> ms_shift; }

	uint64_t quotient(uint64_t n) const
	{
		if (how == ms)
			return ms_quotient(n);
		if (how == pow2)
			return n >> shift;
		if (how == mul)
			return mulhi64(n >> pre, magic) >> shift;
		uint64_t q = mulhi64(n, magic);
		return (((n - q) >> 1) + q) >> shift;
	}
};

} // namespace tw

#endif
