// SPDX-License-Identifier: MIT
//
// The intrusive lists' sort (src/list.hpp) without a wheel: random chains
// made of runs in order, runs against it, equal expiries and noise, as a
// slot's lanes hand them over, each sorted by sort() in order of expiry and
// checked against a stable sort of the same timers.
#include <algorithm>
#include <stdlib.h>

#include "../src/list.hpp"
#include "expect.h"
#include "rand.h"

static uint64_t rng = 0x5017;

enum { max = 300 };
static tw_timer timers[max];

// A chain of n timers: runs of random length, each in order, against it
// or random, over a few distinct expiries now and then so that equal
// expiries meet.
static tw_timer *make_chain(size_t n, tw_timer **order)
{
	uint64_t spread = test_rand(&rng) % 2 ? 8 : UINT64_MAX;
	size_t i = 0;
	while (i < n) {
		size_t len = 1 + test_rand(&rng) % (n - i);
		unsigned kind = test_rand(&rng) % 3;
		uint64_t base = test_rand(&rng) % spread;
		for (size_t k = 0; k < len; k++, i++) {
			uint64_t step = spread == 8 ? k / 2 : k * 7;
			timers[i].expires = kind == 0 ? base + step : kind == 1 ? base - step : test_rand(&rng) % spread;
			order[i] = &timers[i];
		}
	}
	for (size_t k = 0; k < n; k++)
		timers[k].tw__next = k + 1 < n ? &timers[k + 1] : nullptr;
	return n ? &timers[0] : nullptr;
}

static void check_sort(unsigned rounds)
{
	tw_timer *order[max];
	for (unsigned r = 0; r < rounds; r++) {
		size_t n = test_rand(&rng) % max;
		tw_timer *list = tw::sort(make_chain(n, order), tw::by_expiry());
		std::stable_sort(order, order + n, [](const tw_timer *a, const tw_timer *b) { return a->expires < b->expires; });
		size_t k = 0;
		for (tw_timer *t = list; t && k <= n; t = t->tw__next, k++)
			EXPECT(k < n && t == order[k], "round %u: place %zu of %zu", r, k, n);
		EXPECT(k == n, "round %u: %zu timers of %zu", r, k, n);
	}
}

int main(int argc, char **argv)
{
	check_sort(argc > 1 ? static_cast<unsigned>(atoi(argv[1])) : 20000);
	printf("list: %llu checks, %llu wrong\n", checked, wrong);
	return wrong ? 1 : 0;
}
