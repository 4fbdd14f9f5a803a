// SPDX-License-Identifier: MIT
//
// Wheel ids. Every armed timer carries its wheel's 32-bit id, so that a
// call naming the wrong wheel is refused with -EINVAL instead of
// corrupting two wheels. That works only if no two live wheels ever share
// an id, however many wheels a process creates: a counter alone wraps
// after 2^32 creations (about 50 days at 1000 a second) and would then hand
// out the id of a wheel still alive. So the live ids are kept in a set,
// and a new id skips those.
#ifndef TW_IDS_HPP
#define TW_IDS_HPP

#include <stdint.h>

namespace tw::ids {

// A non-zero id that no live wheel has, now reserved; 0 if the set of
// live ids could not grow (out of memory).
uint32_t take();

// The wheel with this id is gone: the id may be handed out again.
void give_back(uint32_t id);

// Move the counter, for tests that cross the wrap without creating 2^32
// wheels: the next take() tries last + 1 first.
void set_last(uint32_t last);

} // namespace tw::ids

#endif
