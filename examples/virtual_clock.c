/* SPDX-License-Identifier: MIT */
/*
 * A virtual CLOCK_MONOTONIC for libuv, so that native uv_timer_t timers can
 * run a 30-minute scenario in a fraction of a second.
 *
 * Method: libuv has no way to be handed the time; its loop reads
 * clock_gettime(CLOCK_MONOTONIC or CLOCK_MONOTONIC_COARSE) in
 * uv_update_time() and at the top of every uv_run(). libuv.so calls
 * clock_gettime through its PLT, and the dynamic linker resolves that call
 * to the first definition in the process, which is this one: an executable
 * that defines a function a shared library imports interposes it (the
 * linker exports it because libuv.so references it). So libuv's own,
 * unmodified timer code sees whatever time the driver sets here. Every other
 * clock, and the monotonic one while the virtual clock is off, is passed to
 * the kernel unchanged.
 *
 * This file is linked only into the order re-check programs, never into the
 * library.
 */
#define _GNU_SOURCE

#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "virtual_clock.h"

uint64_t virtual_clock_ns;
bool virtual_clock_on;

int clock_gettime(clockid_t id, struct timespec *ts)
{
	if (virtual_clock_on && (id == CLOCK_MONOTONIC || id == CLOCK_MONOTONIC_COARSE)) {
		ts->tv_sec = (time_t)(virtual_clock_ns / 1000000000u);
		ts->tv_nsec = (long)(virtual_clock_ns % 1000000000u);
		return 0;
	}
	/* The libc function cannot be reached by name from here (this is the
	 * name), so go to the kernel; only the wall-time measurements and
	 * libuv's start-up take this path, a handful of times. */
	return (int)syscall(SYS_clock_gettime, id, ts);
}
