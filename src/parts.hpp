// SPDX-License-Identifier: MIT
//
// The small parts of a wheel, each held by value in struct tw_wheel
// (wheel.hpp), each with its fields private and the invariant it keeps
// stated beside it. None knows the wheel, so tests/test_parts.cpp checks
// each one alone.
#ifndef TW_PARTS_HPP
#define TW_PARTS_HPP

#include <stdint.h>

#include "level.hpp"
#include "timerwheel.h"

namespace tw {

// The lateness histogram (tw_get_lateness()): each firing counted in the
// bucket of its lateness's bit width, 0 for none and b for [2^(b-1), 2^b).
// A bit scan picks the bucket, where buckets of ticks would cost a
// division too.
class lateness_histogram {
public:
	void record(uint64_t late_ns)
	{
		late_[late_ns ? bit_width(late_ns) : 0]++;
		if (late_ns > max_)
			max_ = late_ns;
	}

	// The counts, their sum and the largest lateness; the tick is the
	// wheel's to give.
	void read(tw_lateness *out) const
	{
		uint64_t fired = 0;
		for (unsigned b = 0; b < TW_LATENESS_BUCKETS; b++) {
			out->count[b] = late_[b];
			fired += late_[b];
		}
		out->fired = fired;
		out->max_ns = max_;
	}

private:
	uint64_t late_[TW_LATENESS_BUCKETS]; // firings by lateness's bit width
	uint64_t max_;
};

} // namespace tw

#endif
