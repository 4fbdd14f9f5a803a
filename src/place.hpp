// SPDX-License-Identifier: MIT
//
// Placement: the steps that put a timer into a bucket or on the due list
// and take it off again, shared by the arms (arm.cpp) and the cascades
// (advance.cpp) and inlined into both. Placement itself exists once:
// every timer goes through enqueue<Ms>() (an exact one with no_open for its
// window), which puts it in the bucket calc_wheel_index() names.
#ifndef TW_PLACE_HPP
#define TW_PLACE_HPP

#include "compiler.hpp"
#include "level.hpp"
#include "usdt.h"
#include "wheel.hpp"

// The few steps of tw_add/tw_mod/tw_del that other paths share, inlined
// into them: a call each would cost as much as the step.
#define TW_HOT_INLINE inline TW_ALWAYS_INLINE
#define TW_HOT_LAMBDA TW_ALWAYS_INLINE

// An idle timer becomes this wheel's, armed for `expires`.
TW_HOT_INLINE void tw_wheel::claim(tw_timer *t, uint64_t expires)
{
	t->expires = expires;
	t->tw__owner = id;
	counts.claimed();
}

// The one placement: a timer firing at `tick`, after the clock, goes into
// the bucket calc_wheel_index() names for that tick, computed here from
// the per-bit tables and used as it is rather than encoded in an index and
// taken apart again, in lane `lane` (its low bits). The lanes need no
// counter of their own: an arm and a cascade both take the timer's expiry
// tick, so a slot's ticks spread over its lanes, and one tick's timers
// share a lane, where each placement reverses them: they come due in the
// order they were armed or in the reverse, which a caller keeping arm
// order (libuv's, in the uv_timer_t layer) takes without a sort. A slot
// full of one tick's timers is walked as one chain. `open` is the expiry's tick of
// a timer with a window, for the slot's bound on opened windows, and
// tw::no_open for an exact timer, whose compare then folds away. The
// default geometry (default_geometry) has this path with its tick and
// slot width as constants (`Ms`). An arm (`arming`) lowers the quiet rule's
// bound; a cascade, inside an advance, need not. Returns the level.
template <bool Ms>
TW_HOT_INLINE unsigned tw_wheel::enqueue(tw_timer *t, uint64_t tick, uint64_t open, uint64_t lane, bool arming)
{
	tw::geometry::place<Ms> p = geo.place_after<Ms>(clock.tick(), tick);
	TW_ASSERT(p.start() == slot_start(calc_wheel_index(tick)), "quiet");
	if (arming)
		clock.lower_quiet(p.start());
	uint64_t slot = p.slot();
	unsigned level = p.level();
	size_t where = p.where();
	TW_ASSERT(where == geo.where_of(calc_wheel_index(tick)), "bitmaps");
	// The bitmaps and slots follow the wheel in its allocation (create()).
	// The clock and the level as memory the probe reads itself: as values,
	// they would cost the arm a register and the moves to fill it.
	if (arming)
		TW_PROBE_ARM(this, t, t->expires, clock.ns_watched(), p.level_watched());
	buckets.occupy<Ms>(level, slot, this + 1);
	t->tw__where = static_cast<uint16_t>(where);
	buckets.at<Ms>(where - tw::where_slot0, this + 1).push(t, static_cast<unsigned>(lane), tick, open);
	return level;
}

// The everyday arm: an idle timer, exact, for a later tick. Its lane is
// its tick's (see enqueue()).
template <bool Ms> TW_HOT_INLINE void tw_wheel::arm_exact(tw_timer *t, uint64_t expires)
{
	claim(t, expires);
	tw::clear_align(t);
	uint64_t tick = geo.tick_of_expiry(expires, Ms);
	enqueue<Ms>(t, tick, tw::no_open, tick, true);
}

// Place a claimed timer whose expiry's tick lies after the clock, firing at
// fire_tick(exp_tick, align), in the slot calc_wheel_index() gives for it.
TW_HOT_INLINE void tw_wheel::place(tw_timer *t, uint64_t exp_tick, unsigned align)
{
	set_window(t, align);
	enqueue<false>(t, geo.fire_tick(exp_tick, align), align ? exp_tick : tw::no_open, exp_tick, true);
}

// A timer's alignment, and the bound every search of opened windows
// relies on (the window rule).
TW_HOT_INLINE void tw_wheel::set_window(tw_timer *t, unsigned align)
{
	tw::set_align(t, align);
	policy.placed(align);
}

// Arm an idle timer for a window of `slack` ticks after its expiry's tick:
// the one way, whichever call arms it (tw_add(), tw_mod() of an idle
// timer, a periodic timer's re-arm). An exact timer for a later tick takes
// arm_exact(), which add_default() also takes, where the wheel's geometry
// and window already say that it would.
TW_HOT_INLINE void tw_wheel::arm(tw_timer *t, uint64_t expires, uint64_t slack)
{
	if (!slack && expires > clock.ns()) {
		if (default_geometry)
			arm_exact<true>(t, expires);
		else
			arm_exact<false>(t, expires);
		return;
	}
	claim(t, expires);
	if (expires <= clock.ns()) {
		// Due now. A periodic timer keeps its alignment for its re-arms.
		tw::set_align(t, tw::is_periodic(t) ? window_align(t, 0, slack) : 0);
		make_due(t);
		counts.claimed_due();
		clock.not_quiet();
		TW_PROBE_ARM(this, t, expires, clock.ns_watched(), TW_PROBE_LEVEL_DUE);
		return;
	}
	uint64_t exp_tick = geo.tick_of_expiry(expires);
	place(t, exp_tick, window_align(t, exp_tick, slack));
}

TW_HOT_INLINE void tw_wheel::unlink(tw_timer *t)
{
	TW_ASSERT(*t->tw__pprev == t, "links");
	TW_ASSERT(counts.count() > 0, "count");
	// Every list is an hlist, the due list too: a timer with a successor
	// leaves any of them the same way, and only the last one of a list
	// asks which list it was on. An idle timer's links are left stale, and
	// the wheel reads them again only once it has linked the timer anew:
	// meanwhile they are the owner's to use (the uv_timer_t layer keeps its
	// own lists through them).
	if (tw::hlist_del(t))
		unlinked_last(t);
	t->tw__where = tw::where_idle;
	t->tw__owner = 0;
}

// The timer just unlinked was the last of its list: of the due list (or
// of `ready`, detached from it), whose tail may move, or of a slot's lane,
// which may leave the slot empty.
inline void tw_wheel::unlinked_last(tw_timer *t)
{
	if (t->tw__where == tw::where_due) {
		due.unlinked_last(t);
		return;
	}
	size_t index = index_of(t);
	if (buckets[index].empty())
		buckets.emptied(index, geo);
}

#endif
