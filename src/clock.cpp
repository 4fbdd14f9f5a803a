// SPDX-License-Identifier: MIT
//
// The loop kit: what a loop needs around the wheel and is easy to get
// wrong by hand. A clock, a deadline that saturates instead of wrapping
// into "fire now", and the conversions of a next expiry into the timeouts
// that poll(), epoll_wait(), ppoll(), epoll_pwait2() and timerfd_settime()
// take, each rounded so that a loop never wakes before the expiry.
//
// The wheel itself never calls any of this: it reads no clock.
#include <errno.h>
#include <limits.h>
#include <time.h>

#ifdef _WIN32
#include <windows.h>
#endif

#include <timerwheel.h>

namespace {

constexpr uint64_t ns_per_sec = 1000000000u;
constexpr uint64_t ns_per_ms = 1000000u;

// time_t is a signed integer of 32 or 64 bits on every target we build for;
// a time past its end saturates there.
constexpr uint64_t time_t_max = sizeof(time_t) >= 8 ? (uint64_t)INT64_MAX : (uint64_t)INT32_MAX;

void to_timespec(struct timespec *ts, uint64_t ns)
{
	uint64_t sec = ns / ns_per_sec;

	if (sec > time_t_max) {
		ts->tv_sec = (time_t)time_t_max;
		ts->tv_nsec = (long)(ns_per_sec - 1);
		return;
	}
	ts->tv_sec = (time_t)sec;
	ts->tv_nsec = (long)(ns % ns_per_sec);
}

} // namespace

TW_API uint64_t tw_clock_monotonic(void)
{
#ifdef _WIN32
	LARGE_INTEGER count, freq;

	QueryPerformanceCounter(&count);
	QueryPerformanceFrequency(&freq);
	uint64_t c = (uint64_t)count.QuadPart, f = (uint64_t)freq.QuadPart;
	// Split so that neither product overflows: (c % f) * 10^9 < f * 10^9.
	return c / f * ns_per_sec + c % f * ns_per_sec / f;
#else
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * ns_per_sec + (uint64_t)ts.tv_nsec;
#endif
}

TW_API uint64_t tw_deadline(uint64_t now, uint64_t delay)
{
	return delay > UINT64_MAX - now ? UINT64_MAX : now + delay;
}

TW_API int tw_timeout_ms(uint64_t now, uint64_t expires)
{
	if (expires == UINT64_MAX)
		return -1;
	if (expires <= now)
		return 0;
	uint64_t d = expires - now;
	uint64_t ms = d / ns_per_ms + (d % ns_per_ms != 0);
	return ms > (uint64_t)INT_MAX ? INT_MAX : (int)ms;
}

TW_API int tw_ns_to_timespec(struct timespec *ts, uint64_t ns)
{
	if (!ts)
		return -EINVAL;
	// An all-zero it_value disarms a timerfd: time 0 becomes 1 ns, which
	// is as far in the past on CLOCK_MONOTONIC.
	to_timespec(ts, ns ? ns : 1);
	return 0;
}

TW_API int tw_timeout_timespec(struct timespec *ts, uint64_t now, uint64_t expires)
{
	if (!ts)
		return -EINVAL;
	if (expires == UINT64_MAX) {
		to_timespec(ts, UINT64_MAX);
		return 1;
	}
	to_timespec(ts, expires > now ? expires - now : 0);
	return 0;
}
