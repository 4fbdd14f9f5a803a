// SPDX-License-Identifier: MIT
//
// Sleeping on a 32-bit word until another thread changes it and says so:
// what tw_request_wait() needs to sleep on a request rather than poll it.
// A futex on Linux; elsewhere a small table of mutexes and condition
// variables hashed by address (the kernel's futex hash, in user space),
// which Linux builds compile too, so that tests run both.
//
// The rule both keep: park_wait() returns at once if the word no longer
// holds `expected`, and a park_wake() after the word was changed wakes
// every thread parked on it. A waker that changes the word and then calls
// park_wake() can thus never be missed by a waiter that checked the old
// value: the futex compares and sleeps in one step in the kernel, the
// table compares and sleeps under the bucket's mutex, which the waker
// takes before it signals. Wake-ups may be spurious: callers loop.
#ifndef TW_PARK_HPP
#define TW_PARK_HPP

#include <stdint.h>

#include "timerwheel.h"

namespace tw {

// Sleep while *word == expected, until a park_wake(word) or
// tw_clock_monotonic() reaches `deadline` (UINT64_MAX: no deadline).
// Returns false once the deadline has passed, true otherwise (woken,
// spuriously or not, or the word differed).
bool park_wait(const uint32_t *word, uint32_t expected, uint64_t deadline);

// Wake every thread parked on `word`.
void park_wake(const uint32_t *word);

// The table's implementation, which park_wait() and park_wake() are
// where there is no futex; named apart so that tests reach it on Linux.
bool park_wait_portable(const uint32_t *word, uint32_t expected, uint64_t deadline);
void park_wake_portable(const uint32_t *word);

} // namespace tw

#endif
