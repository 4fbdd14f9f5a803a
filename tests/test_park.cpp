// SPDX-License-Identifier: MIT
//
// park.hpp, both ways: the futex (Linux) and the table of locks and
// condition variables that other systems use, each through the same
// checks: a changed word returns at once, a deadline ends the sleep and
// never early, and a wake after a change from another thread is never
// lost (many rounds of change-then-wake against check-then-sleep).
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#include "../src/park.hpp"

namespace {

struct impl {
	const char *name;
	bool (*wait)(const uint32_t *, uint32_t, uint64_t);
	void (*wake)(const uint32_t *);
};

const impl impls[] = {
	{ "park", tw::park_wait, tw::park_wake },
	{ "portable", tw::park_wait_portable, tw::park_wake_portable },
};

int failures;

void check(bool ok, const char *impl, const char *what)
{
	if (!ok) {
		fprintf(stderr, "FAIL %s: %s\n", impl, what);
		failures++;
	}
}

constexpr uint64_t ms = 1000000;

struct pingpong {
	const impl *im;
	uint32_t word; // the round the other side is to answer: odd from main, even from the thread
	unsigned rounds;
};

// The thread answers each odd round with the next even one.
void *answer(void *arg)
{
	auto *pp = static_cast<pingpong *>(arg);
	for (uint32_t want = 1; want < 2 * pp->rounds; want += 2) {
		uint32_t w;
		while ((w = __atomic_load_n(&pp->word, __ATOMIC_ACQUIRE)) != want)
			pp->im->wait(&pp->word, w, UINT64_MAX);
		__atomic_store_n(&pp->word, want + 1, __ATOMIC_RELEASE);
		pp->im->wake(&pp->word);
	}
	return nullptr;
}

void test(const impl &im)
{
	uint32_t word = 7;
	uint64_t t0 = tw_clock_monotonic();

	check(im.wait(&word, 8, UINT64_MAX), im.name, "a changed word returns at once");
	check(!im.wait(&word, 7, t0), im.name, "a passed deadline returns false");

	// A sleep on an unchanged word ends at its deadline, never before
	// (lateness only is bounded, loosely: the machine may be loaded).
	uint64_t deadline = tw_clock_monotonic() + 50 * ms;
	while (im.wait(&word, 7, deadline))
		;
	uint64_t t1 = tw_clock_monotonic();
	check(t1 >= deadline, im.name, "the deadline ends the sleep, not earlier");
	check(t1 < deadline + 20000 * ms, im.name, "the deadline ends the sleep");

	// Ping-pong: each side changes the word, then wakes; the other checks,
	// then sleeps. A lost wake-up hangs here (the suite's timeout says so).
	pingpong pp = { &im, 0, 20000 };
	pthread_t th;
	pthread_create(&th, nullptr, answer, &pp);
	for (uint32_t round = 1; round < 2 * pp.rounds; round += 2) {
		__atomic_store_n(&pp.word, round, __ATOMIC_RELEASE);
		im.wake(&pp.word);
		uint32_t w;
		while ((w = __atomic_load_n(&pp.word, __ATOMIC_ACQUIRE)) != round + 1)
			im.wait(&pp.word, w, UINT64_MAX);
	}
	pthread_join(th, nullptr);
	printf("%s: timed out after %.1f ms of 50; %u wake-ups each way\n", im.name, double(t1 - t0) / 1e6,
	       pp.rounds);
}

} // namespace

int main()
{
	for (const impl &im : impls)
		test(im);
	return failures ? 1 : 0;
}
