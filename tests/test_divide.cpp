// SPDX-License-Identifier: MIT
//
// tw::divider (src/divide.hpp) against the divide instruction: every
// divisor kind (powers of two, the multiply-only reciprocal with and
// without a shift before it, the multiply-add one), the edges of both
// operands, and random numbers.
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include "../src/divide.hpp"
#include "rand.h"

static uint64_t rng = 0x9e3779b97f4a7c15u;

static uint64_t next_rand() { return test_rand(&rng); }

static unsigned long long checked, wrong;

static void check(const tw::divider &div, uint64_t d, uint64_t n)
{
	checked++;
	if (div.quotient(n) != n / d) {
		if (wrong++ < 10)
			fprintf(stderr, "%" PRIu64 " / %" PRIu64 ": %" PRIu64 ", should be %" PRIu64 "\n", n, d,
				div.quotient(n), n / d);
	}
}

static void check_divisor(uint64_t d, unsigned randoms)
{
	tw::divider div = tw::divider::by(d);
	// An even divisor is shifted first and never needs the 65-bit product.
	if (!(d & 1) && div.how == tw::divider::mul_add) {
		if (wrong++ < 10)
			fprintf(stderr, "%" PRIu64 ": even, yet the multiply-add reciprocal\n", d);
	}
	const uint64_t edges[] = { 0, 1, 2, d - 1, d, d + 1, 2 * d - 1, 2 * d, UINT64_MAX, UINT64_MAX - 1,
				   UINT64_MAX / 2, UINT64_MAX / 2 + 1, UINT64_MAX - UINT64_MAX % d,
				   UINT64_MAX - UINT64_MAX % d - 1 };
	for (uint64_t n : edges)
		check(div, d, n);
	for (unsigned i = 0; i < randoms; i++) {
		uint64_t n = next_rand();
		check(div, d, n);
		check(div, d, n >> (next_rand() % 64)); // small numerators too
		uint64_t k = n / d;                        // around the multiples of d
		check(div, d, k * d);
		if (k != 0)
			check(div, d, k * d - 1);
	}
}

int main(int argc, char **argv)
{
	unsigned randoms = argc > 1 ? static_cast<unsigned>(atoi(argv[1])) : 2000;
	for (uint64_t d = 1; d <= 4096; d++)
		check_divisor(d, randoms / 16);
	for (unsigned b = 1; b < 64; b++) {
		uint64_t p = uint64_t{1} << b;
		check_divisor(p - 1, randoms);
		check_divisor(p, randoms);
		check_divisor(p + 1, randoms);
	}
	// The default tick takes the path with constant operands.
	if (tw::divider::by(1000000).how != tw::divider::ms) {
		fprintf(stderr, "1000000: not the constant reciprocal\n");
		wrong++;
	}
	for (uint64_t d = 10; d && d <= UINT64_MAX / 10; d *= 10) // 1 us, 1 ms, 1 s ticks among them
		check_divisor(d, randoms);
	const uint64_t odd[] = { 1000003, 999999937, 60000000000, 3600000000000, UINT64_MAX, UINT64_MAX - 1,
				 (uint64_t{1} << 63) + 12345 };
	for (uint64_t d : odd)
		check_divisor(d, randoms);
	for (unsigned i = 0; i < 2000; i++) {
		uint64_t d = next_rand() >> (next_rand() % 64);
		if (d)
			check_divisor(d, randoms / 8);
	}
	printf("divider: %llu quotients checked, %llu wrong\n", checked, wrong);
	return wrong ? 1 : 0;
}
