/* SPDX-License-Identifier: MIT */
/*
 * What every backend shares: who owns the wheel, and how a backend lets go
 * of it. Internal to the backends' libraries.
 *
 * Ownership. The program owns the wheel. A backend attaches to a wheel the
 * program created and never frees it. One rule for every backend: a
 * backend frees what it created, never what it was given (the owned
 * io_uring loop frees the ring it created, never a ring of the program's).
 *
 * Letting go: tw__backend_detach() runs the same steps in the same order
 * for every backend.
 *
 * 1. The wake hook comes off: posting threads no longer reach the backend.
 * 2. The requests already queued are settled: on the program's wheel
 *    applied now (outside the wheel's callbacks; inside one they stay
 *    queued for the wheel's next advance); on a wheel handed over to the
 *    backend (the uv_timer_t layer's second wheel), refused with
 *    -ESHUTDOWN by destroying it. This comes before step 3, because the
 *    notify hook is what holds a destroyed wheel's memory.
 * 3. The notify hook comes off: the wheel no longer calls the backend, and
 *    the backend never touches the wheel again. A destroyed wheel (by the
 *    program, or in step 2) is released here.
 * 4. The backend stops its OS timer (@stop): the uv timer is closed, the
 *    io_uring timeout removed.
 * 5. The backend frees what it created, after this function returns: the
 *    handles' memory in libuv's close callback, the backend's struct, the
 *    ring an owned loop created.
 */
#ifndef TIMERWHEEL_BACKEND_H
#define TIMERWHEEL_BACKEND_H

#include <stdbool.h>

#include <timerwheel.h>

/**
 * tw__backend_detach - steps 1 to 4 of letting go of a wheel (see above)
 * @w:       the wheel
 * @destroy: @w was handed over to the backend (step 2 destroys it)
 * @stop:    stops the backend's OS timer (step 4); it must not touch @w
 * @arg:     passed to @stop
 */
static inline void tw__backend_detach(struct tw_wheel *w, bool destroy, void (*stop)(void *arg),
				      void *arg)
{
	(void)tw_set_wake(w, NULL, NULL);
	if (destroy)
		tw_wheel_destroy(w);
	else
		(void)tw_drain(w);
	(void)tw_set_notify(w, NULL, NULL);
	stop(arg);
}

#endif /* TIMERWHEEL_BACKEND_H */
