/* SPDX-License-Identifier: MIT */
/* The tests' one PRNG, splitmix64: small, fast and good enough to drive
 * random schedules. Apart from common.h so that the plain tests, which do
 * not link CMocka, use it too. */
#ifndef TW_TESTS_RAND_H
#define TW_TESTS_RAND_H

#include <stdint.h>

static inline uint64_t test_rand(uint64_t *state)
{
	uint64_t z = (*state += 0x9e3779b97f4a7c15ull);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

#endif /* TW_TESTS_RAND_H */
