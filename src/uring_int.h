/* SPDX-License-Identifier: MIT */
/*
 * What the owned loop (uring_loop.c) uses of the attached backend
 * (uring.c) beyond the public API. Internal to libtimerwheel-uring: these
 * names are hidden, never exported.
 */
#ifndef TIMERWHEEL_URING_INT_H
#define TIMERWHEEL_URING_INT_H

#include <stdbool.h>

#include "timerwheel/uring.h"

/* The program bounds its own wait by tw_next_expiry() (the loop's
 * TW_URING_WAIT_ARG): the backend keeps no timeout on the ring. */
#define TW__URING_NO_TIMEOUT 1u

/* tw_uring_attach() with TW__URING_NO_TIMEOUT or 0 in @flags. */
int tw__uring_attach(struct tw_uring **out, struct tw_wheel *w, struct io_uring *ring,
		     unsigned flags);

/* Runs the wheel at the clock's now, as the timeout's completion does.
 * False if a callback detached @u: it is freed then, or by the outer run. */
bool tw__uring_run_wheel(struct tw_uring *u);

/* Does the last SQE not yet consumed by the kernel leave a link chain open? */
bool tw__uring_chain_open(const struct tw_uring *u);

/* Counts an unexpected failure in the backend's stats. */
void tw__uring_error(struct tw_uring *u, int err);

/* Is @r torn down already (io_uring_queue_exit())? Its requests are gone. */
bool tw__uring_ring_gone(const struct io_uring *r);

#endif /* TIMERWHEEL_URING_INT_H */
