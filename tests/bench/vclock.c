/* SPDX-License-Identifier: MIT */
/*
 * The virtual clock. This file defines clock_gettime(), gettimeofday(),
 * time(), epoll_wait() and epoll_pwait() in the benchmark program itself.
 * The program is linked with --export-dynamic, so the dynamic linker binds
 * the peers' calls (libuv.so, libev.so, libevent_core.so call these through
 * their PLT) to these definitions instead of glibc's. Checked on Debian 12
 * with objdump: libuv 1.44 reads clock_gettime(CLOCK_MONOTONIC_COARSE or
 * CLOCK_MONOTONIC) in uv__hrtime(); libev 4.33 calls clock_gettime(
 * CLOCK_MONOTONIC) and gettimeofday() through the PLT (its only syscall()
 * calls are io_uring_setup/enter, numbers 425/426, for a backend we do not
 * use); libevent 2.1 calls clock_gettime(CLOCK_MONOTONIC_COARSE) and
 * gettimeofday(). The counters below prove at run time which ones they used.
 *
 * No peer may sleep: the driver runs each loop in its non-blocking mode,
 * where libev and libevent still call epoll_wait() with a 0 timeout once per
 * iteration. With no descriptors in the benchmark, that call can only
 * return 0, so it returns 0 here without entering the kernel (the same
 * syscall would be paid by every peer in a real loop, timerwheel included).
 * A non-zero timeout is counted as a sleep: the driver fails if there is one.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdint.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include "bench.h"

uint64_t bench_vnow;
struct vclock_counts vclock_counts;

typedef int (*clock_fn)(clockid_t, struct timespec *);

static clock_fn real_clock(void)
{
	static clock_fn fn;

	if (!fn) {
		/* dlsym() returns an object pointer; copy it, as POSIX allows. */
		void *sym = dlsym(RTLD_NEXT, "clock_gettime");

		memcpy(&fn, &sym, sizeof(fn));
	}
	return fn;
}

uint64_t vclock_real_ns(void)
{
	struct timespec ts;
	clock_fn fn = real_clock();

	if (fn)
		fn(CLOCK_MONOTONIC, &ts);
	else
		syscall(SYS_clock_gettime, CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

int clock_gettime(clockid_t id, struct timespec *ts)
{
	switch (id) {
	case CLOCK_MONOTONIC:
		vclock_counts.mono++;
		break;
	case CLOCK_MONOTONIC_COARSE:
		vclock_counts.mono_coarse++;
		break;
	case CLOCK_REALTIME:
	case CLOCK_REALTIME_COARSE:
		vclock_counts.realtime++;
		break;
	default: {
		clock_fn fn = real_clock();

		vclock_counts.other_clock++;
		if (fn)
			return fn(id, ts);
		return (int)syscall(SYS_clock_gettime, id, ts);
	}
	}
	ts->tv_sec = (time_t)(bench_vnow / 1000000000u);
	ts->tv_nsec = (long)(bench_vnow % 1000000000u);
	return 0;
}

int gettimeofday(struct timeval *restrict tv, void *restrict tz)
{
	(void)tz;
	vclock_counts.gettimeofday++;
	tv->tv_sec = (time_t)(bench_vnow / 1000000000u);
	tv->tv_usec = (suseconds_t)(bench_vnow % 1000000000u / 1000u);
	return 0;
}

time_t time(time_t *out)
{
	time_t s = (time_t)(bench_vnow / 1000000000u);

	vclock_counts.time++;
	if (out)
		*out = s;
	return s;
}

int epoll_wait(int epfd, struct epoll_event *events, int maxevents, int timeout)
{
	(void)epfd;
	(void)events;
	(void)maxevents;
	vclock_counts.polls++;
	if (timeout != 0)
		vclock_counts.sleeps++;
	return 0;
}

int epoll_pwait(int epfd, struct epoll_event *events, int maxevents, int timeout,
		const sigset_t *sigmask)
{
	(void)sigmask;
	return epoll_wait(epfd, events, maxevents, timeout);
}
