/* SPDX-License-Identifier: MIT */
/* Whether the program tore its ring down before detaching (uring_int.h). */
#define _GNU_SOURCE /* mincore() */
#include "uring_int.h"

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/mman.h>
#include <unistd.h>

/*
 * A ring the program tore down first (io_uring_queue_exit()) has its
 * rings unmapped and its fd closed; the kernel dropped our requests with
 * it. Touching its SQ then would fault, so detach checks: the SQ ring no
 * longer mapped (mincore() fails with ENOMEM), or its fd closed.
 */
bool tw__uring_ring_gone(const struct io_uring *r)
{
	unsigned char in_core;
	uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
	void *sq = (void *)((uintptr_t)r->sq.ring_ptr & ~(page - 1));

	if (mincore(sq, 1, &in_core) < 0 && errno == ENOMEM)
		return true;
	return r->ring_fd >= 0 && fcntl(r->ring_fd, F_GETFD) < 0 && errno == EBADF;
}
