// SPDX-License-Identifier: MIT
//
// tw_check(): every invariant the wheel relies on, verified the slow way.
// Tests and fuzzers call it after each operation, so a broken invariant is
// caught at the operation that broke it rather than at a lost timer later.
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>

#include "level.hpp"
#include "wheel.hpp"

namespace {

int broken(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	fputs("tw_check: ", stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
	return -TW_EUCLEAN;
}

// Links, owner and init magic: what every armed timer has, wherever it is.
int check_timer(const tw_wheel *w, const tw_timer *t, tw_timer *const *pprev)
{
	if (t->tw__pprev != pprev)
		return broken("links: timer %p: pprev does not point at its predecessor", (const void *)t);
	if (!w->owns(t))
		return broken("links: timer %p: owner %u, wheel %u", (const void *)t, t->tw__owner, w->owner_id());
	if (t->tw__magic != tw::timer_magic || !t->fn)
		return broken("links: timer %p: not initialised", (const void *)t);
	return 0;
}

// The timers of a due list, or of the detached `ready` list: linked, armed
// on this wheel, marked due, and counted.
int check_due_chain(const tw_wheel *w, tw_timer *const *head, const char *name, size_t *count,
		    tw_timer *const **last)
{
	tw_timer *const *pprev = head;
	for (const tw_timer *t = *head; t; t = t->tw__next) {
		if (int err = check_timer(w, t, pprev))
			return err;
		if (t->tw__where != tw::where_due)
			return broken("links: timer %p on the %s list has where=%u", (const void *)t, name, t->tw__where);
		pprev = &t->tw__next;
		++*count;
	}
	*last = pprev;
	return 0;
}

int check_due_list(const tw_wheel *w, size_t *count)
{
	tw_timer *const *last = nullptr;
	if (int err = check_due_chain(w, w->due.due_head(), "due", count, &last))
		return err;
	if (w->due.due_tail() != last)
		return broken("due: the due list's tail pointer is not the last timer's next field");
	if (int err = check_due_chain(w, w->due.ready_head(), "ready", count, &last))
		return err;
	if (w->due.next_ready() && !w->running())
		return broken("due: the ready list holds timer %p outside callbacks", (const void *)w->due.next_ready());
	return 0;
}

typedef unsigned long long ull;

// A timer's place in bucket `index`: stay, open and window.
int check_place(const tw_wheel *w, const tw_timer *t, size_t index, uint64_t exp_tick)
{
	unsigned level = w->geo.level_of(index), slot = w->geo.slot_of(index), align = tw::align_of(t);
	uint64_t tick = w->geo.fire_tick(exp_tick, align);
	if (tick <= w->clock.tick())
		return broken("stay: timer %p (tick %llu) is in the wheel at clock tick %llu: missed", (const void *)t,
			      (ull)tick, (ull)w->clock.tick());
	if (!w->stays(index, exp_tick, tick, align))
		return broken("stay: timer %p (expiry tick %llu, tick %llu, alignment %u) is in level %u slot %u, "
			      "which comes due at tick %llu: too late, or as its window opens and not the slot of its "
			      "tick",
			      (const void *)t, (ull)exp_tick, (ull)tick, align, level, slot, (ull)w->slot_start(index));
	if (exp_tick <= w->clock.woke_tick())
		return broken("open: timer %p (expiry tick %llu) is in the wheel after a wake-up at tick %llu: its "
			      "window opened and it did not fire",
			      (const void *)t, (ull)exp_tick, (ull)w->clock.woke_tick());
	if (align > w->policy.widest())
		return broken("window: timer %p has alignment %u, wider than widest %u: a wake-up's search would not "
			      "look for it",
			      (const void *)t, align, w->policy.widest());
	return 0;
}

// links, bound, stay, open and window, for a timer in bucket `index`.
int check_slot_timer(const tw_wheel *w, const tw_timer *t, tw_timer *const *pprev, size_t index)
{
	const tw::slot &s = w->buckets[index];
	unsigned level = w->geo.level_of(index), slot = w->geo.slot_of(index);
	if (int err = check_timer(w, t, pprev))
		return err;
	if (!tw_wheel::in_slot(t) || tw_wheel::index_of(t) != index)
		return broken("links: timer %p in level %u slot %u has where=%u", (const void *)t, level, slot,
			      t->tw__where);
	if (!t->expires)
		return broken("stay: timer %p in level %u slot %u expires at 0, not after the clock", (const void *)t,
			      level, slot);
	uint64_t exp_tick = w->geo.tick_of_expiry(t->expires);
	uint64_t tick = w->geo.fire_tick(exp_tick, tw::align_of(t));
	if (tw::align_of(t) && exp_tick < s.min_open)
		return broken("bound: timer %p (expiry tick %llu) is earlier than its slot's bound on expiries %llu: "
			      "its window would open unseen",
			      (const void *)t, (ull)exp_tick, (ull)s.min_open);
	if (tick < s.min_tick)
		return broken("bound: timer %p (tick %llu) is earlier than its slot's lower bound %llu: a backend "
			      "would sleep past it",
			      (const void *)t, (ull)tick, (ull)s.min_tick);
	return check_place(w, t, index, exp_tick);
}

// bitmaps and bound for one slot, then each of its timers.
int check_slot(const tw_wheel *w, unsigned level, unsigned slot, size_t *count)
{
	size_t index = w->geo.index_of(level, slot);
	const tw::slot &s = w->buckets[index];
	bool bit = w->buckets.occupied(level, slot);
	if (bit == s.empty())
		return broken("bitmaps: level %u slot %u: bitmap says %s, lists say %s", level, slot,
			      bit ? "occupied" : "empty", bit ? "empty" : "occupied");
	if (s.empty() && (s.min_tick != UINT64_MAX || s.min_open != UINT64_MAX))
		return broken("bound: level %u slot %u is empty, but its lower bounds are ticks %llu and %llu", level,
			      slot, (ull)s.min_tick, (ull)s.min_open);
	// The bound lies in the slot's span: next_firing_tick() reads only the
	// first slot's, and a later slot's timers may fire after its span.
	uint64_t last = w->slot_last(index);
	if (!s.empty() && s.min_tick > last)
		return broken("bound: level %u slot %u spans ticks %llu to %llu, but its lower bound is tick %llu: "
			      "the timers after it would be hidden from the next expiry",
			      level, slot, (ull)w->slot_start(index), (ull)last, (ull)s.min_tick);
	return s.each([&](const tw_timer *t, tw_timer *const *pprev) {
		++*count;
		return check_slot_timer(w, t, pprev, index);
	});
}

// ahead: occupied slots lie after the clock's digit at their level: the
// wheel finds the next one with a plain bit scan and would skip any other.
int check_bitmaps_ahead(const tw_wheel *w)
{
	for (unsigned level = 0; level < w->geo.levels(); level++) {
		unsigned digit = w->geo.digit_of(w->clock.tick(), level);
		uint64_t behind = digit >= 63 ? ~uint64_t{0} : (uint64_t{2} << digit) - 1;
		if (w->buckets.bitmap(level) & behind)
			return broken("ahead: level %u: slot at or before the clock's digit %u is occupied (bitmap %#llx)",
				      level, digit, (unsigned long long)w->buckets.bitmap(level));
	}
	return 0;
}

} // namespace

// The invariants listed in wheel.hpp, in that order.
int tw_wheel::check() const
{
	if (clock.tick() != geo.tick_of_now(clock.ns()))
		return broken("clock: tick %llu for now %llu ns", (unsigned long long)clock.tick(),
			      (unsigned long long)clock.ns());
	if (hook.told() > next_expiry() && !running())
		return broken("notified: %llu is later than the next expiry %llu: a backend would sleep too long",
			      (unsigned long long)hook.told(), (unsigned long long)next_expiry());
	for (unsigned level = 0; level < geo.levels(); level++) {
		bool bit = buckets.level_mask() >> level & 1;
		if (bit != (buckets.bitmap(level) != 0))
			return broken("bitmaps: level %u: level mask says %s, bitmap %#llx", level,
				      bit ? "occupied" : "empty", (unsigned long long)buckets.bitmap(level));
	}
	if (geo.levels() < 64 && buckets.level_mask() >> geo.levels())
		return broken("bitmaps: level mask %#llx has bits above %u levels",
			      (unsigned long long)buckets.level_mask(), geo.levels());
	if (int err = check_bitmaps_ahead(this))
		return err;
	size_t seen = 0;
	if (int err = check_due_list(this, &seen)) // links, due
		return err;
	for (unsigned level = 0; level < geo.levels(); level++)
		for (unsigned slot = 0; slot < geo.slots_per_level(); slot++)
			if (int err = check_slot(this, level, slot, &seen)) // bitmaps, bound, links, stay, open, window
				return err;
	if (seen != counts.count())
		return broken("count: count says %zu armed timers, the lists hold %zu", counts.count(), seen);
	if (destroyed() && (seen || exact_arms))
		return broken("destroyed: a destroyed wheel holds %zu timers%s", seen,
			      exact_arms ? " and takes exact arms" : "");
	if (clock.quiet_below() > calc_quiet())
		return broken("quiet: bound %llu is later than %llu: an advance would skip the next event",
			      (unsigned long long)clock.quiet_below(), (unsigned long long)calc_quiet());
	return 0;
}
