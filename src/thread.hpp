// SPDX-License-Identifier: MIT
//
// The two things the core asks of the operating system's scheduler, for a
// thread that waits on another (tw_request_wait()): give up the processor,
// and sleep a little. POSIX and Windows spell them differently.
#ifndef TW_THREAD_HPP
#define TW_THREAD_HPP

#ifdef _WIN32
#ifndef WIN32_LEAN_AND_MEAN
#define WIN32_LEAN_AND_MEAN
#endif
#include <windows.h>
#else
#include <sched.h>
#include <time.h>
#endif

namespace tw {

inline void yield_thread()
{
#ifdef _WIN32
	SwitchToThread();
#else
	sched_yield();
#endif
}

// About 50 us where the system sleeps that briefly; Windows sleeps in
// milliseconds.
inline void nap()
{
#ifdef _WIN32
	Sleep(1);
#else
	struct timespec ts = { 0, 50000 };
	nanosleep(&ts, nullptr);
#endif
}

} // namespace tw

#endif
