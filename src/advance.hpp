// SPDX-License-Identifier: MIT
//
// The advance that finds nothing to do, inline where the C API calls it;
// everything else an advance does is advance.cpp's.
#ifndef TW_ADVANCE_HPP
#define TW_ADVANCE_HPP

#include "place.hpp"

// Most advances of a loop that polls find nothing to do: no request, no
// due timer, and no slot coming due by the target. The quiet rule
// (wheel.hpp) tells them so in one comparison, and they only move the
// clock and count themselves once (counters::stats()). Such an advance is no
// wake-up either, so there are no windows to look for: the next expiry is
// no earlier than the first event's tick, which lies after the target's.
// The quotient is the clock's tick for every time but UINT64_MAX, whose
// quotient is the last whole tick, which the bound never exceeds: that
// time takes the slow path, as do the refusals, for which the bound is 0.
//
// tw_advance() and tw_advance_budget(): one body, inlined into each (this
// header is capi.cpp's), so that the common advance carries no budget and
// no call.
template <bool Budgeted> TW_HOT_INLINE int tw_wheel::advance_with(uint64_t now, unsigned budget)
{
	// The default geometry's tick as a constant: no load of the divider.
	uint64_t target_tick = default_geometry ? tw::divider::ms_quotient(now) : geo.ticks_in(now);
	if (target_tick < clock.quiet_below() && now >= clock.ns() && !requests_pending()) {
		TW_ASSERT(clock.quiet_below() <= calc_quiet() && target_tick == geo.tick_of_now(now), "quiet");
		clock.set_tick(target_tick);
		clock.set_ns(now);
		counts.advanced_idle();
		TW_PROBE_ADVANCE(this, now, 0, counts.cascaded_watched(), 0);
		if (TW_UNLIKELY(hook.installed()))
			return tell_next_expiry();
		return 0;
	}
	return advance_slow<Budgeted>(now, target_tick, budget);
}

inline int tw_wheel::advance(uint64_t now)
{
	return advance_with<false>(now, no_budget);
}

inline int tw_wheel::advance_budget(uint64_t now, unsigned budget)
{
	return advance_with<true>(now, budget);
}

#endif
