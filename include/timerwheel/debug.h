/* SPDX-License-Identifier: MIT */
/*
 * timerwheel/debug.h: look inside a wheel, for tests, fuzzers and tours.
 *
 * Every call here reads a wheel and changes nothing.
 * A program's everyday work needs none of them.
 * They live in libtimerwheel, as the rest of the core.
 */
#ifndef TIMERWHEEL_DEBUG_H
#define TIMERWHEEL_DEBUG_H

#include <stdbool.h>
#include <stdio.h>
#include <timerwheel.h>

#ifdef __cplusplus
extern "C" {
#endif

/**
 * tw_check - verify every invariant of the wheel, O(timers)
 * @w: the wheel
 *
 * For tests and fuzzers.
 * It names the first broken invariant on stderr.
 *
 * Return: 0 if the wheel is sound, -EUCLEAN if not, -EINVAL if @w is NULL.
 * Where <errno.h> has no EUCLEAN (Windows, macOS, the BSDs), it returns
 * -TW_EUCLEAN.
 */
TW_API int tw_check(const struct tw_wheel *w);

/**
 * tw_timer_bucket - where an armed timer sits now
 * @w:     the wheel
 * @t:     the timer
 * @level: set to its level (0 is the finest) when it is in a wheel slot
 * @slot:  set to its slot within that level
 *
 * For tests, tours and debugging: it shows the cascade at work.
 *
 * Return: 0 if @t is in a wheel slot.
 * It returns 1 if @t is due, and leaves @level and @slot untouched.
 * A due timer fires in the next advance, or later if a budget leaves it.
 * It returns -ENOENT if @t is idle.
 * It returns -EINVAL if @w, @t, @level or @slot is NULL.
 * It returns -EINVAL if @t is armed on another wheel.
 */
TW_API int tw_timer_bucket(const struct tw_wheel *w, const struct tw_timer *t, unsigned *level,
			   unsigned *slot);

/**
 * tw_dump - draw the wheel's levels and occupied slots as ASCII
 * @w:       the wheel
 * @out:     the stream, e.g. stdout
 * @verbose: also list each timer's expiry under its slot
 *
 * It prints one line per level, from 0 up to the highest occupied one.
 * An empty wheel prints level 0 alone.
 * A line shows the slot width, the clock's digit and each occupied slot.
 * Each occupied slot shows its timer count.
 * It costs O(timers) with @verbose.
 *
 * Return: 0, -EINVAL if @w or @out is NULL.
 */
TW_API int tw_dump(const struct tw_wheel *w, FILE *out, bool verbose);

#ifdef __cplusplus
}
#endif

#endif /* TIMERWHEEL_DEBUG_H */
