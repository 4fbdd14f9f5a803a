// SPDX-License-Identifier: MIT
//
// The checked entries: the argument checks of tw_add(), tw_mod() and
// tw_del() and their variants, written once, for the C API (capi.cpp) and
// for the requests that other threads post, which the owner applies
// through the same entry as its own call (entry.cpp). They call the wheel
// and nothing above it.
//
// Debug builds (TW_DEBUG_CHECKS, see debug.hpp) also refuse wheels that are
// not alive and name every misuse on stderr.
#ifndef TW_ENTRY_HPP
#define TW_ENTRY_HPP

#include <errno.h>

#include "debug.hpp"
#include "wheel.hpp"

#if TW_DEBUG_CHECKS
#define TW_LIVE(w) tw::debug::require_live((w), __func__)
#define TW_LIVE_IN(w, fn) tw::debug::require_live((w), (fn))
#define TW_WARN(...) tw::debug::warn(__func__, __VA_ARGS__)
#define TW_WARN_IN(fn, ...) tw::debug::warn((fn), __VA_ARGS__)
#else
#define TW_LIVE(w) ((void)0)
#define TW_LIVE_IN(w, fn) ((void)0)
#define TW_WARN(...) ((void)0)
#define TW_WARN_IN(fn, ...) ((void)0)
#endif

namespace tw::entry {

inline bool timer_usable(const tw_timer *t, const char *fn)
{
	(void)fn;
	if (!t)
		return false;
	if (t->tw__magic != tw::timer_magic) {
		TW_WARN_IN(fn, "timer %p was not initialised with tw_timer_init()", (const void *)t);
		return false;
	}
	if (!t->fn) {
		TW_WARN_IN(fn, "timer %p has no callback", (const void *)t);
		return false;
	}
	return true;
}

#if TW_DEBUG_CHECKS
// For tw_mod() and tw_del(). An armed timer sits on a list whose link
// points back at it; one that was copied or moved while armed, or
// overwritten, does not, and unlinking it would rewrite its neighbours.
// Release builds leave this undefined: the extra load of the predecessor
// is a cache miss for del and mod at scale. Timers of other wheels are
// refused by the wheel itself, in both builds.
inline void check_links(const tw_wheel *w, const tw_timer *t, const char *fn)
{
	if (t->tw__where == tw::where_idle)
		return;
	if (!w->owns(t)) {
		tw::debug::warn(fn, "timer %p is armed on another wheel", (const void *)t);
		return;
	}
	if (tw_wheel::in_slot(t) && tw_wheel::index_of(t) >= w->geo.nslots())
		tw::debug::misuse(fn, "timer %p claims slot %zu of a wheel with %zu: overwritten?", (const void *)t,
				  tw_wheel::index_of(t), w->geo.nslots());
	if (!t->tw__pprev || *t->tw__pprev != t)
		tw::debug::misuse(fn,
				  "timer %p looks armed but is not on its wheel's lists: copied, moved or "
				  "re-initialised while armed?",
				  (const void *)t);
}
#define TW_CHECK_LINKS(w, t) tw::entry::check_links((w), (t), __func__)
#define TW_CHECK_LINKS_IN(w, t, fn) tw::entry::check_links((w), (t), (fn))
#else
#define TW_CHECK_LINKS(w, t) ((void)0)
#define TW_CHECK_LINKS_IN(w, t, fn) ((void)0)
#endif

// tw_add() and tw_add_range(): the window is the wheel's default or the
// caller's, in whole ticks (rounded down, so never late).
inline int add_checked(tw_wheel *w, tw_timer *t, uint64_t expires, const uint64_t *slack, const char *fn)
{
	if (!w)
		return -EINVAL;
	TW_LIVE_IN(w, fn);
	if (!timer_usable(t, fn))
		return -EINVAL;
#if TW_DEBUG_CHECKS
	if (t->tw__where != tw::where_idle && !w->owns(t))
		TW_WARN_IN(fn, "timer %p is armed on another wheel", (const void *)t);
#endif
	return slack ? w->add(t, expires, w->geo.slack_ticks(*slack)) : w->add_default(t, expires);
}

inline int mod_checked(tw_wheel *w, tw_timer *t, uint64_t expires, const uint64_t *slack, const char *fn)
{
	if (!w)
		return -EINVAL;
	TW_LIVE_IN(w, fn);
	if (!timer_usable(t, fn))
		return -EINVAL;
	TW_CHECK_LINKS_IN(w, t, fn);
	return w->mod(t, expires, slack ? w->geo.slack_ticks(*slack) : w->policy.default_slack());
}

inline int del_checked(tw_wheel *w, tw_timer *t, const char *fn)
{
	(void)fn;
	if (!w || !t)
		return -EINVAL;
	TW_LIVE_IN(w, fn);
	TW_CHECK_LINKS_IN(w, t, fn);
	return w->del(t);
}

} // namespace tw::entry

#endif
