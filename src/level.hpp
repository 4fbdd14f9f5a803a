// SPDX-License-Identifier: MIT
//
// Level arithmetic of the hierarchical wheel.
//
// Time inside the wheel is counted in ticks. A level has 2^k slots (k =
// slot_bits); level l looks at digit l of a tick written in base 2^k, so a
// slot of level l spans 2^(l*k) ticks and the whole level 2^((l+1)*k). With
// the defaults (1 ms tick, k = 6):
//
//   level   slot width    level span     digit of the tick
//     0       1 ms          64 ms          bits  0..5
//     1      64 ms          4.1 s          bits  6..11
//     2       4.1 s         4.4 min        bits 12..17
//     3       4.4 min       4.7 h          bits 18..23
//     4       4.7 h        12.4 days       bits 24..29
//     5      12.4 days      2.2 years      bits 30..35
//     6       2.2 years   139 years        bits 36..41
//     7     139 years    8926 years        bits 42..47
//
// and 2^64 ns (584 years) needs 45 bits of 1 ms ticks, so eight levels cover
// every 64-bit time. A timer is placed at the level of the most significant
// digit where its expiry tick differs from the clock (calc_wheel_index), in
// the slot named by that digit of its expiry (calc_wheel_slot). Two facts
// follow and the wheel leans on both:
//
//  - a level's occupied slots all lie after the clock's own digit, so the
//    first occupied slot is simply the lowest set bit of the level's bitmap;
//  - everything at level l comes due before anything at level l + 1, so the
//    next event is in the lowest non-empty level.
//
// When the clock reaches the start of an occupied slot above level 0, that
// slot's timers are placed again, relative to the new clock: they cascade to
// finer levels, which is what keeps precision at one tick for any distance.
#ifndef TW_LEVEL_HPP
#define TW_LEVEL_HPP

#include <stdint.h>

#include "compiler.hpp"

namespace tw {

// Index of the most significant set bit; x must not be 0.
inline unsigned msb64(uint64_t x) { return 63u - clz64(x); }

inline unsigned lsb64(uint64_t x) { return ctz64(x); }

// Bits needed to write x (at least 1).
inline unsigned bit_width(uint64_t x) { return x ? msb64(x) + 1u : 1u; }

// Digit `level` of `tick`, i.e. its slot at that level.
inline unsigned calc_wheel_slot(uint64_t tick, unsigned level, unsigned slot_bits, uint64_t slot_mask)
{
	return static_cast<unsigned>((tick >> (level * slot_bits)) & slot_mask);
}

// The tick at which slot `slot` of `level` comes due, seen from clock
// `now_tick`: the clock's digits above the level, the slot as the level's
// digit, zeros below.
inline uint64_t calc_slot_start(uint64_t now_tick, unsigned level, unsigned slot, unsigned slot_bits)
{
	unsigned shift = level * slot_bits;
	unsigned above = shift + slot_bits;
	uint64_t high = above >= 64 ? 0 : (now_tick >> above) << above;
	return high | (static_cast<uint64_t>(slot) << shift);
}

} // namespace tw

#endif
