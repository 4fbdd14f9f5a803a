// SPDX-License-Identifier: MIT
//
// The hierarchical timing wheel (Varghese & Lauck's scheme 7, as Kafka uses
// it), with the kernel's intrusive slots and tokio's placement rule. The
// level arithmetic and its table of levels are in level.hpp.
//
// Life of a timer. tw_add() rounds the expiry up to a tick and places the
// timer at the level of the first digit where that tick differs from the
// clock (place.hpp, arm.cpp). tw_advance() walks the clock forward event by
// event (advance.cpp): the next event is always the first occupied slot of
// the lowest non-empty level, found with two bit scans, so empty stretches
// of any length cost nothing. At a level-0 slot the timers are due; at a
// higher slot they are placed again relative to the new clock (the cascade)
// and so reach level 0 exactly at their tick.
//
// This file: the wheel's life (create, destroy, release) and its hook; the
// tick arithmetic is geometry.hpp's, placement place.hpp's.
#include "wheel.hpp"

#include <errno.h>
#include <stdlib.h>

#include "compiler.hpp"
#include "ids.hpp"
#include "level.hpp"

namespace {

// a + b * n, or UINT64_MAX if that does not fit.
uint64_t add_periods(uint64_t a, uint64_t b, uint64_t n)
{
	uint64_t sum;
	if (!tw::mul_add_fits(b, n, a, &sum))
		return UINT64_MAX;
	return sum;
}

} // namespace

uint64_t tw__forward(tw_timer *t, uint64_t now, uint64_t period)
{
	if (t->expires > now)
		return 0;
	// q + 1 overflows only for a period of 1 ns across all of time: n
	// saturates, as the expiry does.
	uint64_t q = (now - t->expires) / period;
	uint64_t n = q == UINT64_MAX ? UINT64_MAX : q + 1;
	t->expires = add_periods(t->expires, period, n);
	return n;
}

int tw_wheel::create(tw_wheel **out, uint64_t tick_ns, unsigned slot_bits, uint64_t slack_ns, uint64_t now)
{
	unsigned levels = tw::geometry::levels_for(tick_ns, slot_bits);
	uint32_t id = tw::ids::take();
	if (!id)
		return -ENOMEM;
	tw_wheel *w = static_cast<tw_wheel *>(calloc(1, bytes(levels, slot_bits)));
	if (!w) {
		tw::ids::give_back(id);
		return -ENOMEM;
	}
	w->id = id;
	w->geo.init(tick_ns, slot_bits);
	w->default_geometry = w->geo.is_default();
	TW_ASSERT(!w->default_geometry || w->geo.levels() == tw::default_levels, "bitmaps");
	w->clock.start(now, w->geo.tick_of_now(now), w->quiet_of(UINT64_MAX)); // empty: no event quiets it
	w->policy.init(w->geo.slack_ticks(slack_ns), no_budget);
	w->exact_arms = w->default_geometry && !w->policy.default_slack();
	w->buckets.init(w + 1, w->geo.levels(), w->geo.nslots());
	w->due.init();
	w->requests.init();
	w->holds = tw::held_by_program;
	*out = w;
	return 0;
}

// Every armed timer becomes idle and the wheel empty. The lists are
// dropped whole rather than unlinked timer by timer: a timer's own fields
// are all that tw_pending() reads.
void tw_wheel::idle_all_timers()
{
	tw_timer *const *heads[] = { due.due_head(), due.ready_head() };
	for (tw_timer *const *head : heads)
		for (tw_timer *t = *head; t; t = t->tw__next)
			t->tw__where = tw::where_idle, t->tw__owner = 0;
	due.init();
	for (size_t i = 0; i < geo.nslots(); i++)
		buckets[i].each([](tw_timer *t, tw_timer *const *) {
			t->tw__where = tw::where_idle, t->tw__owner = 0;
			return 0;
		});
	buckets.clear(geo.levels(), geo.nslots());
	policy.slots_empty();
	counts.idled(counts.count());
}

// A destroyed wheel's timers are idle at once, so the program may release
// their memory right away. The wheel's own memory waits for the last party
// that still holds it: a running tw_advance (destroyed from a callback), or
// a backend whose notify hook is installed and which will read the wheel
// again when its OS timer fires. Both backends thus get one rule: the wheel
// goes when the backend lets go of it.
void tw_wheel::destroy()
{
	idle_all_timers();
	holds &= ~tw::held_by_program;
	exact_arms = false;  // arms are refused, by add()
	clock.not_quiet();   // and advances, by advance_slow()
	requests.refuse();
	// From a callback, the rest waits until the advance ends
	// (advance_events()): a cancel of the running timer must not be done
	// before its callback returns.
	if (!running())
		settle_destroyed();
}

// A destroyed wheel, outside callbacks: what other threads queued
// completes with -ESHUTDOWN, and the backend hears that the wheel is empty
// now and stops its OS timer.
void tw_wheel::settle_destroyed()
{
	drain();
	notify_now(UINT64_MAX);
}

// The one place where a wheel's memory goes: when nobody holds it any
// longer (the lifetime, tw_wheel::holds). The debug registry forgets the
// wheel first, so that another thread's new wheel at the same address is
// never mistaken for it.
void tw::release_if_unused(tw_wheel *w)
{
	if (!w->unused())
		return;
#if TW_DEBUG_CHECKS
	tw::debug::wheel_freed(w);
#endif
	w->release();
}

// The queue was closed when the wheel was destroyed: a post that raced
// the destroy completed its request itself (request_queue.hpp).
void tw_wheel::release()
{
	tw::ids::give_back(id);
	free(this);
}

// The hook is not called here: whoever installs it arms its OS timer for
// next_expiry(), and from then on the hook is told only what moves that.
// So what the hook was told starts from there, not from what the wheel
// would have told a hook while it had none (which may lie earlier:
// removals never raise it), or an earlier timer armed next would be taken
// for a later one.
// Without a hook it is 0: no arm is earlier than that, so no arm and no
// advance computes a next expiry that nobody would hear.
void tw_wheel::set_notify(tw_notify_fn fn, void *arg)
{
	holds = fn ? holds | tw::held_by_hook : holds & ~tw::held_by_hook;
	hook.set(fn, arg, fn ? next_expiry() : 0);
	(void)publish_horizon(hook.told());
}

// The alignment of a timer's firing tick (see fire_tick()), for an expiry
// tick after the clock and a window of `slack` ticks after it.
//
// A one-shot timer fires at the coarsest tick of its window, the one with
// the most trailing zero bits: take the most significant bit in which
// exp_tick - 1 and the window's last tick differ, and clear the last tick's
// bits below it. That tick starts the coarsest slot inside the window, so
// the timer skips every finer level on its way down, and timers whose
// windows overlap mostly pick the same tick and share a wake-up. Its
// alignment alone gives it back from the expiry: no smaller multiple of
// 2^align lies in the window, or two would, and one of them would be a
// coarser tick. So a cascade needs no slack to place the timer again.
//
// A periodic timer keeps that alignment for every re-arm, so it takes one
// that fits any window of its length: the largest a with 2^a - 1 <= slack.
unsigned tw_wheel::window_align(const tw_timer *t, uint64_t exp_tick, uint64_t slack) const
{
	if (!slack)
		return 0;
	if (tw::is_periodic(t))
		return slack == UINT64_MAX ? 63 : tw::msb64(slack + 1);
	uint64_t last = slack >= geo.last_tick() - exp_tick ? geo.last_tick() : exp_tick + slack;
	return tw::msb64((exp_tick - 1) ^ last);
}

// The bucket for a tick after the clock: the level of the first digit
// where the tick differs from the clock, and that level's digit of the
// tick. enqueue() computes the same from the per-bit tables, and asserts
// that it does; the stay rule, the window search and tw_check() ask here.
size_t tw_wheel::calc_wheel_index(uint64_t exp_tick) const
{
	return geo.index_after(clock.tick(), exp_tick);
}

// The tick at which a bucket comes due (its cascade point).
uint64_t tw_wheel::slot_start(size_t index) const
{
	return slot_start_at(geo.level_of(index), geo.slot_of(index));
}

// The last tick a bucket spans (UINT64_MAX for one that reaches past it).
uint64_t tw_wheel::slot_last(size_t index) const
{
	uint64_t start = slot_start(index), width = geo.slot_width(geo.level_of(index));
	return start > UINT64_MAX - (width - 1) ? UINT64_MAX : start + (width - 1);
}

// The earliest tick at which a bucket can fire a timer: its start, or the
// lower bound on its timers' ticks if that is later (see next_firing_tick).
uint64_t tw_wheel::slot_bound(size_t index) const
{
	uint64_t start = slot_start(index);
	uint64_t min_tick = buckets[index].min_tick;
	return min_tick > start ? min_tick : start;
}

// The earliest timer is in the first occupied slot of the lowest non-empty
// level (level.hpp says why no other slot can come first), and it can fire
// no earlier than the lower bound that slot keeps:
// a backend sleeps until then, not until the slot's cascade point, and the
// cascade happens inside the advance that reaches it. Most cascades then
// cost no wake-up of their own.
uint64_t tw_wheel::next_firing_tick() const
{
	unsigned level = 0, slot = 0; // set by first_occupied() when it returns true
	if (!buckets.first_occupied(&level, &slot))
		return UINT64_MAX;
	return slot_bound(geo.index_of(level, slot));
}

uint64_t tw_wheel::next_expiry() const
{
	// From a callback, the timers of this advance still to run are due too.
	if (due.any())
		return clock.ns();
	uint64_t tick = next_firing_tick();
	return tick == UINT64_MAX ? UINT64_MAX : geo.ns_of_tick(tick);
}

void tw_wheel::notify_now(uint64_t when)
{
	if (!hook.installed())
		return;
	// Requests that came in without waking us (request_queue.hpp): let
	// the backend run the wheel again at once.
	if (requests.has_wake() && publish_horizon(when))
		when = clock.ns();
	counts.told_hook();
	holds |= tw::held_in_hook;
	int touched = hook.tell(this, when);
	holds &= ~tw::held_in_hook;
	if (touched)
		counts.rearmed_os_timer();
}
