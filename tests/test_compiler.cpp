// SPDX-License-Identifier: MIT
//
// The builtins' wrappers (src/compiler.hpp) against their portable
// versions and against plain loops, on the edges and on random numbers:
// the portable versions are what 32-bit and non-GNU targets run, so they
// are checked on every target, builtins or not. mulhi64() and div128by64()
// also check each other: (a * b) / a is b with no remainder.
#include <inttypes.h>
#include <stdio.h>

#include "../src/compiler.hpp"
#include "rand.h"

static uint64_t rng = 0x2545f4914f6cdd1du;

static uint64_t next_rand() { return test_rand(&rng); }

static unsigned long long checked, wrong;

#define CHECK(cond, ...)                                        \
	do {                                                    \
		checked++;                                      \
		if (!(cond) && wrong++ < 10) {                  \
			fprintf(stderr, "failed: %s: ", #cond); \
			fprintf(stderr, __VA_ARGS__);           \
			fputc('\n', stderr);                    \
		}                                               \
	} while (0)

static void check_bits(uint64_t x)
{
	unsigned top = 64, low = 64;
	for (unsigned i = 0; i < 64; i++)
		if (x >> i & 1) {
			top = i;
			if (low == 64)
				low = i;
		}
	if (!x)
		return;
	CHECK(tw::clz64(x) == 63 - top, "%#" PRIx64, x);
	CHECK(tw::portable::clz64(x) == 63 - top, "%#" PRIx64, x);
	CHECK(tw::ctz64(x) == low, "%#" PRIx64, x);
	CHECK(tw::portable::ctz64(x) == low, "%#" PRIx64, x);
}

// Every bit of `x` set in turn, by the wrapper (bts on x86-64) and the C.
static void check_set_bit(uint64_t x)
{
	for (unsigned i = 0; i < 64; i++) {
		uint64_t w = x, p = x;
		tw::set_bit64(&w, i);
		tw::portable::set_bit64(&p, i);
		CHECK(w == (x | uint64_t{1} << i) && p == w, "%#" PRIx64 " bit %u", x, i);
	}
}

static void check_mul(uint64_t a, uint64_t b)
{
	uint64_t hi = tw::mulhi64(a, b), rem = 1;
	CHECK(tw::portable::mulhi64(a, b) == hi, "%#" PRIx64 " * %#" PRIx64, a, b);
	if (a) {
		CHECK(tw::div128by64(hi, a * b, a, &rem) == b && rem == 0, "%#" PRIx64 " * %#" PRIx64, a, b);
		rem = 1;
		CHECK(tw::portable::div128by64(hi, a * b, a, &rem) == b && rem == 0, "%#" PRIx64 " * %#" PRIx64, a,
		      b);
	}
	// A remainder too: (a * b + r) / a for r < a, if that does not carry.
	if (a > 1 && a * b + (a - 1) > a * b) {
		uint64_t q1 = tw::div128by64(hi, a * b + (a - 1), a, &rem);
		CHECK(q1 == b && rem == a - 1, "(%#" PRIx64 " * %#" PRIx64 " + r)", a, b);
		uint64_t q2 = tw::portable::div128by64(hi, a * b + (a - 1), a, &rem);
		CHECK(q2 == b && rem == a - 1, "(%#" PRIx64 " * %#" PRIx64 " + r)", a, b);
	}
	uint64_t c = next_rand() >> (next_rand() % 64), sum = 0, psum = 0;
	bool fits = tw::mul_add_fits(a, b, c, &sum);
	CHECK(fits == (hi == 0 && a * b + c >= c), "%#" PRIx64 " * %#" PRIx64 " + %#" PRIx64, a, b, c);
	CHECK(tw::portable::mul_add_fits(a, b, c, &psum) == fits && (!fits || (sum == a * b + c && psum == sum)),
	      "%#" PRIx64 " * %#" PRIx64 " + %#" PRIx64, a, b, c);
}

int main()
{
	const uint64_t edges[] = { 0, 1, 2, 3, 0xffffffffu, 0x100000000u, 0x100000001u, UINT64_MAX / 2,
				   UINT64_MAX / 2 + 1, UINT64_MAX - 1, UINT64_MAX };
	for (uint64_t a : edges) {
		check_bits(a);
		check_set_bit(a);
		for (uint64_t b : edges)
			check_mul(a, b);
	}
	for (unsigned i = 0; i < 64; i++)
		check_bits(uint64_t{1} << i);
	for (int i = 0; i < 200000; i++) {
		uint64_t a = next_rand() >> (next_rand() % 64), b = next_rand() >> (next_rand() % 64);
		check_bits(a);
		check_set_bit(a);
		check_mul(a, b);
	}
	printf("%llu checks, %llu wrong\n", checked, wrong);
	return wrong ? 1 : 0;
}
