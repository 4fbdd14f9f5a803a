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
	return -EUCLEAN;
}

// Links, owner and init magic: what every armed timer has, wherever it is.
int check_timer(const tw_wheel *w, const tw_timer *t, tw_timer *const *pprev)
{
	if (t->tw__pprev != pprev)
		return broken("timer %p: pprev does not point at its predecessor", (const void *)t);
	if (t->tw__owner != w->id)
		return broken("timer %p: owner %u, wheel %u", (const void *)t, t->tw__owner, w->id);
	if (t->tw__magic != tw::timer_magic || !t->fn)
		return broken("timer %p: not initialised", (const void *)t);
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
			return broken("timer %p on the %s list has where=%u", (const void *)t, name, t->tw__where);
		pprev = &t->tw__next;
		++*count;
	}
	*last = pprev;
	return 0;
}

int check_due_list(const tw_wheel *w, size_t *count)
{
	tw_timer *const *last;
	if (int err = check_due_chain(w, &w->due.first, "due", count, &last))
		return err;
	if (w->due.tail != last)
		return broken("due list: tail pointer is not the last timer's next field");
	if (int err = check_due_chain(w, &w->ready, "ready", count, &last))
		return err;
	if (w->ready && !w->running)
		return broken("ready list holds timer %p outside callbacks", (const void *)w->ready);
	return 0;
}

int check_slot(const tw_wheel *w, unsigned level, unsigned slot, size_t *count)
{
	size_t index = (static_cast<size_t>(level) << w->slot_bits) | slot;
	bool bit = w->occupied[level] >> slot & 1;
	if (bit == w->slot_empty(index))
		return broken("level %u slot %u: bitmap says %s, lists say %s", level, slot,
			      bit ? "occupied" : "empty", bit ? "empty" : "occupied");
	if (w->slot_empty(index) && w->slot_min[index] != UINT64_MAX)
		return broken("level %u slot %u: empty, but its lower bound is tick %llu", level, slot,
			      (unsigned long long)w->slot_min[index]);
	for (unsigned lane = 0; lane < tw::lanes; lane++) {
		tw_timer *const *pprev = &w->slot_heads(index)[lane];
		for (const tw_timer *t = *pprev; t; t = t->tw__next) {
			if (int err = check_timer(w, t, pprev))
				return err;
			if (t->tw__where != tw::where_slot0 + index)
				return broken("timer %p in level %u slot %u has where=%u", (const void *)t,
					      level, slot, t->tw__where);
			uint64_t exp_tick = w->tick_of_expiry(t->expires);
			if (exp_tick <= w->now_tick)
				return broken("timer %p (tick %llu) is in the wheel at clock tick %llu: missed",
					      (const void *)t, (unsigned long long)exp_tick,
					      (unsigned long long)w->now_tick);
			if (exp_tick < w->slot_min[index])
				return broken("timer %p (tick %llu) is earlier than its slot's lower bound %llu: "
					      "a backend would sleep past it",
					      (const void *)t, (unsigned long long)exp_tick,
					      (unsigned long long)w->slot_min[index]);
			// A timer sits where tw_add put it, or in an earlier slot if
			// it was re-armed later since (tw_mod leaves it there): either
			// way its slot must come due no later than it does.
			uint64_t start = tw::calc_slot_start(w->now_tick, level, slot, w->slot_bits);
			if (start > exp_tick)
				return broken("timer %p (tick %llu) is in level %u slot %u, which comes due at "
					      "tick %llu: too late",
					      (const void *)t, (unsigned long long)exp_tick, level, slot,
					      (unsigned long long)start);
			pprev = &t->tw__next;
			++*count;
		}
	}
	return 0;
}

// Occupied slots lie after the clock's digit at their level: the wheel
// finds the next one with a plain bit scan and would skip any other.
int check_bitmaps_ahead(const tw_wheel *w)
{
	for (unsigned level = 0; level < w->levels; level++) {
		unsigned digit = tw::calc_wheel_slot(w->now_tick, level, w->slot_bits, w->slot_mask);
		uint64_t behind = digit >= 63 ? ~uint64_t{0} : (uint64_t{2} << digit) - 1;
		if (w->occupied[level] & behind)
			return broken("level %u: slot at or before the clock's digit %u is occupied (bitmap %#llx)",
				      level, digit, (unsigned long long)w->occupied[level]);
	}
	return 0;
}

} // namespace

int tw_wheel::check() const
{
	if (now_tick != tick_of_now(now_ns))
		return broken("clock: tick %llu for now %llu ns", (unsigned long long)now_tick,
			      (unsigned long long)now_ns);
	if (notified > next_expiry() && !running)
		return broken("notified %llu is later than the next expiry %llu: a backend would sleep too long",
			      (unsigned long long)notified, (unsigned long long)next_expiry());
	if (int err = check_bitmaps_ahead(this))
		return err;
	size_t seen = 0;
	if (int err = check_due_list(this, &seen))
		return err;
	for (unsigned level = 0; level < levels; level++) {
		bool bit = level_mask >> level & 1;
		if (bit != (occupied[level] != 0))
			return broken("level %u: level mask says %s, bitmap %#llx", level,
				      bit ? "occupied" : "empty", (unsigned long long)occupied[level]);
		for (unsigned slot = 0; slot <= slot_mask; slot++)
			if (int err = check_slot(this, level, slot, &seen))
				return err;
	}
	if (levels < 64 && level_mask >> levels)
		return broken("level mask %#llx has bits above %u levels", (unsigned long long)level_mask, levels);
	if (seen != count)
		return broken("count says %zu armed timers, the lists hold %zu", count, seen);
	return 0;
}
