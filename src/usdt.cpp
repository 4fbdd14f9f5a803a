// SPDX-License-Identifier: MIT
//
// The semaphores of the core's probes (usdt.h): a tracer that attaches to
// a probe raises its count, in the section where tracers look for them.
#include "compiler.hpp"
#include "usdt.h"

#if defined(TW_PROBE_SEMAPHORES) && TW_PROBE_SEMAPHORES
unsigned short timerwheel_arm_semaphore TW_IN_SECTION(".probes");
unsigned short timerwheel_cancel_semaphore TW_IN_SECTION(".probes");
unsigned short timerwheel_fire_semaphore TW_IN_SECTION(".probes");
unsigned short timerwheel_advance_semaphore TW_IN_SECTION(".probes");
unsigned short timerwheel_cascade_semaphore TW_IN_SECTION(".probes");
unsigned short timerwheel_post_semaphore TW_IN_SECTION(".probes");
unsigned short timerwheel_apply_semaphore TW_IN_SECTION(".probes");
#endif
