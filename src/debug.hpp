// SPDX-License-Identifier: MIT
//
// Misuse checks of debug builds (meson -Ddebug_checks=true). Release builds
// already refuse uninitialised timers (the init magic) and timers of other
// wheels (the owner id); debug builds also keep a registry of live wheels,
// so that a destroyed or made-up wheel pointer is caught before it is read,
// and they abort with a message where release builds leave behaviour
// undefined.
#ifndef TW_DEBUG_HPP
#define TW_DEBUG_HPP

#include "compiler.hpp"
#include "timerwheel.h"

#ifndef TW_DEBUG_CHECKS
#define TW_DEBUG_CHECKS 0
#endif

#if TW_DEBUG_CHECKS
namespace tw::debug {

// Register a new wheel; false if the registry could not grow.
bool wheel_created(const tw_wheel *w, uint32_t id);

// The wheel's memory is about to be released (which may come after
// tw_wheel_destroy(): see tw_wheel::unused()).
void wheel_freed(const tw_wheel *w);

// Abort unless w is a live wheel.
void require_live(const tw_wheel *w, const char *fn);

// Is id the id of a live wheel?
bool id_live(uint32_t id);

// Print "timerwheel: fn: ..." and carry on (the call returns its error).
void warn(const char *fn, const char *fmt, ...) TW_PRINTF(2, 3);

// Print "timerwheel: fn: ..." and abort: misuse whose behaviour a release
// build leaves undefined.
[[noreturn]] void misuse(const char *fn, const char *fmt, ...) TW_PRINTF(2, 3);

// Print "timerwheel: invariant <name> broken: <cond> (file:line)" and
// abort: see TW_ASSERT.
[[noreturn]] void broken(const char *invariant, const char *cond, const char *file, int line);

} // namespace tw::debug
#endif

// TW_ASSERT(cond, "name"): the code relies here on the invariant `name` of
// the list in wheel.hpp, and debug builds check that it holds (tokio's
// debug_assert!). Release builds compile the condition away unevaluated.
#if TW_DEBUG_CHECKS
#define TW_ASSERT(cond, invariant) ((cond) ? (void)0 : tw::debug::broken((invariant), #cond, __FILE__, __LINE__))
#else
#define TW_ASSERT(cond, invariant) ((void)sizeof(!(cond)))
#endif

#endif
