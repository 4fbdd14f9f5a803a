/* SPDX-License-Identifier: MIT */
/* A virtual CLOCK_MONOTONIC that libuv reads instead of the real one. */
#ifndef VIRTUAL_CLOCK_H
#define VIRTUAL_CLOCK_H

#include <stdbool.h>
#include <stdint.h>

/* What clock_gettime(CLOCK_MONOTONIC) returns while virtual_clock_on. */
extern uint64_t virtual_clock_ns;
extern bool virtual_clock_on;

#endif /* VIRTUAL_CLOCK_H */
