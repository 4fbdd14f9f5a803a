// SPDX-License-Identifier: MIT
//
// Arming, re-arming and cancelling: tw_add(), tw_mod() and tw_del() behind
// their checks (entry.hpp), and what the hook hears of them.
#include <errno.h>

#include "place.hpp"

// After a timer was armed for `expires` (from idle if `was_idle`): tell the
// backend only what changes its plans, a next expiry earlier than it was
// told, or a wheel that holds a timer again (one that fires only at UINT64_MAX too: it keeps a loop
// alive). A timer at or after the time the hook was told cannot move the
// next expiry below it (every bound is the tick of a timer placed in its
// slot, or the slot's start, and the hook was never told a later time), so
// the usual arm, later than the earliest, costs no more than this test.
TW_HOT_INLINE void tw_wheel::notify_armed(uint64_t expires, bool was_idle)
{
	if (!hook.installed())
		return;
	bool was_empty = was_idle && counts.count() == 1;
	if (running() || (expires >= hook.told() && !was_empty)) {
		TW_ASSERT(running() || hook.told() <= next_expiry(), "notified");
		return;
	}
	uint64_t next = next_expiry();
	if (next < hook.told() || was_empty)
		notify_now(next);
}

// The everyday arm, whichever call makes it: an idle timer, exact, for a
// later time, on a wheel of the default geometry without default slack
// (exact_arms). Inlined into add_default() and into remod(), where tw_mod()
// of an idle timer goes, but not into mod(), so that its re-arm in place
// stays small. A false return leaves everything else, refusals included,
// to the general path.
TW_HOT_INLINE bool tw_wheel::arm_default(tw_timer *t, uint64_t expires, uint64_t slack)
{
	if (!exact_arms || slack || t->tw__where != tw::where_idle || expires <= clock.ns())
		return false;
	TW_ASSERT(!destroyed(), "destroyed");
	arm_exact<true>(t, expires);
	return true;
}

int tw_wheel::add_default(tw_timer *t, uint64_t expires)
{
	if (arm_default(t, expires, 0))
		return TW_UNLIKELY(hook.installed()) ? notify_added(expires) : 0;
	return add(t, expires, policy.default_slack());
}

TW_NOINLINE int tw_wheel::notify_added(uint64_t expires)
{
	notify_armed(expires, true);
	return 0;
}

int tw_wheel::add(tw_timer *t, uint64_t expires, uint64_t slack)
{
	if (TW_UNLIKELY(t->tw__where != tw::where_idle))
		return -EBUSY;
	if (TW_UNLIKELY(destroyed()))
		return -EINVAL;
	arm(t, expires, slack);
	notify_armed(expires, true);
	return 0;
}

// The stay rule (stays()): an exact timer may stay in any slot that comes
// due no later than its new tick, and then the slot places it again. So the
// common re-arm, a connection timeout pushed later on every read, only
// stores the new expiry (stays_later()) and touches no neighbour in the
// lists, which at scale are cache misses. It is tested here, ahead of
// everything else, so that it costs its tests and two stores; the rest of
// the work is in remod(), whose cost this path does not share. A timer
// this wheel owns proves the wheel alive (the invariant destroyed), so a
// destroyed wheel costs this path no test.
int tw_wheel::mod(tw_timer *t, uint64_t expires, uint64_t slack)
{
	if (in_slot(t) && t->tw__owner == id && expires > clock.ns() && stays_later(t, expires, slack)) {
		TW_ASSERT(!destroyed(), "destroyed");
		t->expires = expires;
		counts.rearmed_in_place();
		TW_PROBE_ARM(this, t, expires, clock.ns_watched(), TW_PROBE_LEVEL_KEPT);
		return 1;
	}
	return remod(t, expires, slack);
}

// Every other tw_mod(): an idle timer, an earlier or windowed re-arm, one
// that is due, and the refusals.
TW_NOINLINE int tw_wheel::remod(tw_timer *t, uint64_t expires, uint64_t slack)
{
	if (arm_default(t, expires, slack))
		return TW_UNLIKELY(hook.installed()) ? notify_added(expires) : 0;
	if (destroyed())
		return -EINVAL;
	if (t->tw__where == tw::where_idle) {
		arm(t, expires, slack);
		notify_armed(expires, true);
		return 0;
	}
	if (t->tw__owner != id)
		return -EINVAL;
	// An expiry at or before now is due in the next advance, which a slot
	// a tick away would not serve.
	if (in_slot(t) && expires > clock.ns()) {
		rearm_in_slot(t, expires, slack);
	} else {
		unlink(t);
		counts.moved();
		arm(t, expires, slack);
	}
	notify_armed(expires, false);
	return 1;
}

// A timer in a slot, re-armed for an expiry after now: it stays where the
// stay rule lets it, else it moves, with the tick and alignment computed
// for the rule.
void tw_wheel::rearm_in_slot(tw_timer *t, uint64_t expires, uint64_t slack)
{
	size_t index = index_of(t);
	uint64_t exp_tick = geo.tick_of_expiry(expires);
	unsigned align = window_align(t, exp_tick, slack);
	uint64_t tick = geo.fire_tick(exp_tick, align);
	if (stays(index, exp_tick, tick, align)) {
		t->expires = expires;
		set_window(t, align);
		counts.rearmed_in_place();
		buckets[index].lower(tick, align ? exp_tick : tw::no_open);
		TW_PROBE_ARM(this, t, expires, clock.ns_watched(), TW_PROBE_LEVEL_KEPT);
		return;
	}
	unlink(t);
	counts.moved();
	claim(t, expires);
	place(t, exp_tick, align);
}

// The owner's id is 0 for an idle timer and never a wheel's, so one test
// takes every timer this wheel may cancel, and the rest are sorted out of
// line; the hook, which hears of a wheel become empty, costs one test.
int tw_wheel::del(tw_timer *t)
{
	if (TW_UNLIKELY(t->tw__owner != id))
		return refuse_del(t);
	TW_ASSERT(t->tw__where != tw::where_idle, "links");
	unlink(t);
	counts.cancelled();
	TW_PROBE_CANCEL(this, t, 1);
	if (TW_UNLIKELY(hook.installed()))
		return notify_cancelled();
	return 1;
}

// A hook hears that the wheel is empty now (tw_del() returns 1).
TW_NOINLINE int tw_wheel::notify_cancelled()
{
	if (counts.count() == 0 && !running())
		notify_now(UINT64_MAX);
	return 1;
}

TW_NOINLINE int tw_wheel::refuse_del(const tw_timer *t)
{
	if (t->tw__where != tw::where_idle)
		return -EINVAL;
	TW_PROBE_CANCEL(this, t, 0);
	return 0;
}
