// SPDX-License-Identifier: MIT
//
// park.hpp's two implementations: the futex (Linux), and a table of
// locks and condition variables (everywhere, used where there is no
// futex). The deadline is on the monotonic clock in both.
#include "park.hpp"

#include <limits.h>
#include <time.h>

#if defined(_WIN32)
#include <windows.h>
#else
#include <pthread.h>
#endif
#if defined(__linux__)
#include <linux/futex.h>
#include <sys/syscall.h>
#include <unistd.h>
#endif

#include "compiler.hpp"

namespace tw {

namespace {

// Buckets of the table: a word hashes to one; threads parked on different
// words of one bucket only wake each other spuriously.
constexpr unsigned bucket_bits = 6;

#if defined(_WIN32)
struct bucket {
	SRWLOCK lock = SRWLOCK_INIT;
	CONDITION_VARIABLE cond = CONDITION_VARIABLE_INIT;
};
#else
struct bucket {
	pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
	pthread_cond_t cond = PTHREAD_COND_INITIALIZER;
};
#endif

bucket buckets[1u << bucket_bits];

bucket &bucket_of(const uint32_t *word)
{
	uint64_t h = reinterpret_cast<uintptr_t>(word) * 0x9e3779b97f4a7c15u;
	return buckets[h >> (64 - bucket_bits)];
}

} // namespace

// The word is compared under the bucket's lock, which park_wake_portable()
// takes before it signals: a change made before the wake is either seen
// here, or made while this thread sleeps on the condition variable.
bool park_wait_portable(const uint32_t *word, uint32_t expected, uint64_t deadline)
{
	bucket &b = bucket_of(word);
	uint64_t now = tw_clock_monotonic();
	if (now >= deadline)
		return false;
#if defined(_WIN32)
	int ms = tw_timeout_ms(now, deadline); // -1 for UINT64_MAX, at most INT_MAX
	DWORD wait = ms < 0 ? INFINITE : static_cast<DWORD>(ms);
	AcquireSRWLockExclusive(&b.lock);
	if (atomic_load<mo::acquire>(word) == expected)
		SleepConditionVariableSRW(&b.cond, &b.lock, wait, 0);
	ReleaseSRWLockExclusive(&b.lock);
#else
	// The condition variable waits on the realtime clock (the one every
	// POSIX system offers): the monotonic deadline is moved onto it for
	// this one sleep, and the caller's loop judges the deadline again.
	timespec real;
	clock_gettime(CLOCK_REALTIME, &real);
	uint64_t real_now = static_cast<uint64_t>(real.tv_sec) * 1000000000u + static_cast<uint64_t>(real.tv_nsec);
	timespec until;
	tw_ns_to_timespec(&until, tw_deadline(real_now, deadline - now));
	pthread_mutex_lock(&b.lock);
	if (atomic_load<mo::acquire>(word) == expected) {
		if (deadline == UINT64_MAX)
			pthread_cond_wait(&b.cond, &b.lock);
		else
			pthread_cond_timedwait(&b.cond, &b.lock, &until);
	}
	pthread_mutex_unlock(&b.lock);
#endif
	return true;
}

void park_wake_portable(const uint32_t *word)
{
	bucket &b = bucket_of(word);
#if defined(_WIN32)
	AcquireSRWLockExclusive(&b.lock);
	ReleaseSRWLockExclusive(&b.lock);
	WakeAllConditionVariable(&b.cond);
#else
	pthread_mutex_lock(&b.lock);
	pthread_cond_broadcast(&b.cond);
	pthread_mutex_unlock(&b.lock);
#endif
}

#if defined(__linux__)

// FUTEX_WAIT_BITSET takes an absolute deadline on CLOCK_MONOTONIC, so a
// wake-up that comes early costs no arithmetic on the next sleep.
bool park_wait(const uint32_t *word, uint32_t expected, uint64_t deadline)
{
	if (tw_clock_monotonic() >= deadline)
		return false;
	timespec until;
	tw_ns_to_timespec(&until, deadline); // saturates where time_t is 32 bits
	syscall(SYS_futex, word, FUTEX_WAIT_BITSET | FUTEX_PRIVATE_FLAG, expected,
		deadline == UINT64_MAX ? nullptr : &until, nullptr, FUTEX_BITSET_MATCH_ANY);
	return true;
}

void park_wake(const uint32_t *word)
{
	syscall(SYS_futex, word, FUTEX_WAKE | FUTEX_PRIVATE_FLAG, INT_MAX, nullptr, nullptr, 0);
}

#else

bool park_wait(const uint32_t *word, uint32_t expected, uint64_t deadline)
{
	return park_wait_portable(word, expected, deadline);
}

void park_wake(const uint32_t *word)
{
	park_wake_portable(word);
}

#endif

} // namespace tw
