// SPDX-License-Identifier: MIT
//
// The lateness histogram (parts.hpp) read out, and a percentile taken.
#include <errno.h>

#include "wheel.hpp"

void tw_wheel::get_lateness(tw_lateness *out) const
{
	out->tick_ns = geo.tick_ns();
	lateness.read(out);
}

extern "C" TW_API uint64_t tw_lateness_quantile(const tw_lateness *l, unsigned permille)
{
	if (!l || permille > 1000 || !l->fired)
		return 0;
	// The smallest rank that covers permille of the firings, at least 1.
	uint64_t rank = l->fired / 1000 * permille + (l->fired % 1000 * permille + 999) / 1000;
	if (!rank)
		rank = 1;
	uint64_t seen = 0;
	for (unsigned b = 0; b < TW_LATENESS_BUCKETS; b++) {
		seen += l->count[b];
		if (seen < rank)
			continue;
		// The bucket's largest lateness, 2^b - 1 ns.
		uint64_t edge = b >= 64 ? UINT64_MAX : (uint64_t{1} << b) - 1;
		return edge < l->max_ns ? edge : l->max_ns;
	}
	return l->max_ns;
}
