// SPDX-License-Identifier: MIT
//
// Advancing the clock: cascades, the search for opened windows, and the
// callbacks.
//
// The last event by `now`, on a wheel without windows, takes the clock to
// `now` at once (collect_expired_timers()). Due timers go on the due list in
// tick order; when the clock has reached `now`, the list is drained and the
// callbacks run.
//
// Callbacks run from a detached list, `ready`, as libuv, the kernel and
// tokio run theirs: the due list is emptied before the first callback, so
// a timer a callback arms already due lands on the due list again and
// fires in the next advance. A callback that re-arms itself for "now"
// cannot livelock.
#include <errno.h>

#include "place.hpp"

// Walk a detached slot's lanes interleaved, calling `visit` on each timer.
// The next timer of a lane is fetched as soon as the current one is read,
// so the misses of all lanes overlap (see tw::lanes).
// A lane that ends leaves the round at once, its place taken by the last
// active lane, so a sparse slot, one or two timers in one lane, costs no
// turns over empty lanes.
template <typename Visit>
static inline void walk_lanes(tw_timer **chains, Visit visit)
{
	unsigned active = 0;
	for (unsigned i = 0; i < tw::lanes; i++)
		if (chains[i])
			chains[active++] = chains[i];
	while (active) {
		for (unsigned i = 0; i < active;) {
			tw_timer *t = chains[i];
			tw_timer *next = t->tw__next;
			if (next) {
				tw::prefetch_for_write(next);
				chains[i++] = next;
			} else {
				chains[i] = chains[--active];
			}
			visit(t);
		}
	}
}

// A cascade's timer with a window, out of line, so that it does not slow
// the exact timers' loop.
template <bool Ms> TW_NOINLINE unsigned tw_wheel::place_window(tw_timer *t, uint64_t exp_tick, unsigned align)
{
	counts.placed();
	return enqueue<Ms>(t, geo.fire_tick(exp_tick, align), exp_tick, exp_tick, false);
}

// The clock has just reached the start of a slot of `from_level`, now
// detached: place its timers again relative to the clock. Each is due (its
// expiry's tick has come: for a timer with slack, its window is open), or
// lands in a later slot: a finer level when a higher slot cascades, or
// wherever its expiry now belongs if it was re-armed later while it waited
// (see mod()), which may be a coarser level. Only the moves to a finer
// level (or from a higher level to the due list) count as cascaded. An
// exact timer takes the arm's placement (enqueue()), with the default
// geometry's constants when the wheel has them (`Ms`).
//
// For the last event by an advance's target (`early` given, see
// collect_expired_timers()), the clock is already at the target, and the
// timers that come due are chained on *early, the lanes walked in turn,
// for the caller to put in order (sort_early()).
template <bool Ms>
void tw_wheel::place_from(tw_timer **chains, unsigned from_level, tw_timer **early)
{
	walk_lanes(chains, [this, from_level, early](tw_timer *t) TW_HOT_LAMBDA {
		uint64_t exp_tick = geo.tick_of_expiry(t->expires, Ms);
		TW_ASSERT(exp_tick > clock.woke_tick(), "open");
		unsigned align = tw::align_of(t);
		unsigned to_level;
		if (exp_tick <= clock.tick()) {
			// Never before its tick: no bound announced an earlier one
			// (and the last event by a target is taken on a wheel
			// without windows only).
			TW_ASSERT(early ? !align : geo.fire_tick(exp_tick, align) == clock.tick(), "stay");
			if (early) {
				t->tw__next = *early;
				*early = t;
			} else {
				make_due(t);
			}
			to_level = 0;
		} else if (!align) {
			// the arms' placements are derived (counters::stats())
			counts.placed();
			to_level = enqueue<Ms>(t, exp_tick, tw::no_open, exp_tick, false);
		} else {
			to_level = place_window<Ms>(t, exp_tick, align);
		}
		if (to_level < from_level)
			counts.cascaded(1);
	});
}

TW_HOT_INLINE void tw_wheel::place_again(tw_timer **chains, unsigned from_level, tw_timer **early)
{
	if (default_geometry)
		place_from<true>(chains, from_level, early);
	else
		place_from<false>(chains, from_level, early);
}


// The timers that came due in the last event by an advance's target, in
// order of expiry. Each lane holds its ticks in the order they were armed
// or in the reverse (enqueue()), but the walk took the lanes in turn, which
// leaves short runs: after a long sleep, every timer that came due
// meanwhile. Dealt back into their lanes first, they are a few runs each,
// which the sort takes whole.
tw_timer *tw_wheel::sort_early(tw_timer *chain)
{
	tw_timer *lane[tw::lanes] = {};
	for (tw_timer *t = chain, *next; t; t = next) {
		next = t->tw__next;
		tw_timer **to = &lane[geo.tick_of_expiry(t->expires, default_geometry) & (tw::lanes - 1)];
		t->tw__next = *to;
		*to = t;
	}
	tw_timer *all = nullptr;
	for (unsigned i = 0; i < tw::lanes; i++)
		if (lane[i])
			all = tw::merge(all, tw::sort(lane[i], tw::by_expiry()), tw::by_expiry());
	return all;
}

// Move the clock to `target_tick` one event at a time, cascading higher
// slots and moving level-0 slots to the due list.
//
// The last event by the target, on a wheel without windows, moves the
// clock to the target at once: its slot's timers whose tick has come by
// then are due, and the others are placed relative to the target. A timer
// that would have cascaded level by level, event by event, down to level
// 0 and the due list within this advance takes one step instead, which is
// most of what an advance from deadline to deadline does. No other event
// lies between, so nothing else would have come due in between; the due
// timers are put in tick order, which the level-by-level descent gave.
// Windows keep the descent: a window may open on the way, and the open
// rule's search looks for it where the descent would have put it.
void tw_wheel::collect_expired_timers(uint64_t target_tick)
{
	unsigned level = 0, slot = 0; // set by first_occupied() when it returns true
	while (buckets.first_occupied(&level, &slot)) {
		uint64_t event = slot_start_at(level, slot);
		if (event > target_tick)
			break;
		TW_ASSERT(event > clock.tick(), "ahead");

		clock.set_tick(event);
		tw_timer *chains[tw::lanes];
		size_t index = geo.index_of(level, slot);
		TW_ASSERT(!buckets[index].empty(), "bitmaps");
		buckets[index].take_all(chains);
		buckets.emptied(index, geo);
		// A level-0 slot takes no test for the cascade probe.
		if (!level) {
			place_again(chains, 0, nullptr);
			continue;
		}
		if (!policy.widest() && next_event_tick() > target_tick) {
			clock.set_tick(target_tick);
			tw_timer *early = nullptr;
			place_again(chains, level, &early);
			TW_PROBE_CASCADE(this, level, counts.cascaded_watched());
			if (early && early->tw__next)
				early = sort_early(early);
			for (tw_timer *t = early, *next; t; t = next) {
				next = t->tw__next;
				// After what came due before: no earlier than the slot's start.
				TW_ASSERT(geo.tick_of_expiry(t->expires, default_geometry) >= event, "stay");
				make_due(t);
			}
			return;
		}
		place_again(chains, level, nullptr);
		TW_PROBE_CASCADE(this, level, counts.cascaded_watched());
	}
	clock.set_tick(target_tick);
}

// The open rule (wheel.hpp): a wake-up fires every timer whose window has
// opened, also one whose firing tick lies ahead, so that one wake-up serves
// every window it falls in. Such a timer fires at the coarsest tick of its
// window (window_align()), and the clock now lies in that window before
// that tick, so the tick is the first multiple of 2^align after the clock:
// no other multiple lies between them, or two would, and one would be
// coarser. (A periodic timer's tick is the first multiple of 2^align at or
// after its expiry's tick, so the first after the clock too; one whose
// multiple lies past the last tick took the coarsest tick up to the last,
// a multiple of a smaller power of two, which the search reaches first.)
// So the search looks in one slot
// per alignment in use, the slot of that tick (the window rule), and walks
// it only if the slot's bound on expiry ticks says that a window in it has
// opened. A walk leaves that bound exact, so the next wake-up walks the
// slot again only once another window in it has opened.
//
// Only wake-ups search: an advance short of the next expiry, which a loop
// that advances on every event makes many times between two wake-ups,
// would otherwise walk the same slot each time another window in it
// opened, all its timers for a few of them.
TW_NOINLINE void tw_wheel::fire_open_windows()
{
	if (clock.tick() >= geo.last_tick())
		return;
	for (unsigned align = 1; align <= policy.widest(); align++) {
		uint64_t mask = (uint64_t{1} << align) - 1;
		if ((clock.tick() | mask) >= geo.last_tick())
			return; // no multiple of 2^align, nor of any larger power, is left
		take_opened(calc_wheel_index((clock.tick() | mask) + 1));
	}
}

// Move the timers of slot `index` whose expiry's tick has come to the due
// list, after those that came due at their firing tick, and put the others
// back. The lanes are walked interleaved, as a cascade walks them
// (walk_lanes()). Both bounds come out exact, except that the bound on
// firing ticks stops at the slot's last tick: an exact timer that tw_mod()
// left here can have its tick far past the slot's span (the stay rule),
// and a bound raised to it would hide the next slot's timers from
// next_expiry().
//
// The walk visits every timer of the slot, exact ones included, once per
// wake-up at which a window in it has opened.
void tw_wheel::take_opened(size_t index)
{
	// An empty slot's bound is UINT64_MAX too, but the bitmap answers
	// without touching the slot.
	if (!buckets.occupied(geo.level_of(index), geo.slot_of(index)))
		return;
	tw::slot &s = buckets[index];
	if (s.min_open > clock.tick())
		return;
	uint64_t last = slot_last(index);
	bool coarse = geo.level_of(index) > 0;
	uint64_t open_bound = s.min_open;
	tw_timer *chains[tw::lanes];
	s.take_all(chains);
	unsigned lane = 0; // the kept timers, dealt out again in turn
	walk_lanes(chains, [&](tw_timer *t) TW_HOT_LAMBDA {
		uint64_t exp_tick = geo.tick_of_expiry(t->expires);
		TW_ASSERT(!tw::align_of(t) || exp_tick >= open_bound, "bound");
		TW_ASSERT(tw::align_of(t) <= policy.widest(), "window");
		if (exp_tick <= clock.tick()) {
			make_due(t);
			counts.cascaded(coarse);
		} else {
			unsigned align = tw::align_of(t);
			s.push(t, lane++, geo.fire_tick(exp_tick, align), align ? exp_tick : tw::no_open);
		}
	});
	if (s.empty())
		buckets.emptied(index, geo);
	else if (s.min_tick > last)
		s.min_tick = last;
}

// A periodic timer, taken off `ready`, is re-armed before its callback, so
// that the callback may stop it. A period set to 0 after init ends the
// repetition, and so does the end of time: at now == UINT64_MAX no expiry
// is later, and the saturated one would fire in every advance; the timer
// then keeps the expiry it fired for. Its alignment stands for its window:
// 2^align - 1 ticks give the same one back (window_align()).
inline void tw_wheel::rearm_periodic(tw_timer *t)
{
	tw_periodic *p = tw_container_of(t, tw_periodic, timer);
	if (!p->period)
		return;
	uint64_t fired_for = t->expires;
	tw__forward(t, clock.ns(), p->period);
	if (t->expires > clock.ns())
		arm(t, t->expires, (uint64_t{1} << tw::align_of(t)) - 1);
	else
		t->expires = fired_for;
}

// Callbacks run from `ready`, the first `budget` timers of the due list;
// the others stay due, in their order, ahead of what comes due later.
// The advance probe fires here, where the count of callbacks is at hand;
// what a budget leaves due is counted only while a tracer watches (a walk).
template <bool Budgeted> TW_NOINLINE int tw_wheel::run_expired_timers(unsigned budget)
{
	TW_ASSERT(!due.next_ready() && !running(), "due");
	int fired = 0;
	uint64_t deferred = Budgeted && TW_PROBE_ENABLED(advance) ? due.deferred_by(budget) : 0;
	holds |= tw::held_by_advance;
	due.take_ready(budget);
	for (tw_timer *t; (t = due.next_ready());) {
		unlink(t);
		record_lateness(t->expires);
		TW_PROBE_FIRE(this, t, tw::expires_watched(t), clock.ns() - t->expires, t->fn);
		counts.fired();
		if (tw::is_periodic(t))
			rearm_periodic(t);
		if (fired < INT32_MAX)
			fired++;
		t->fn(t);
	}
	holds &= ~tw::held_by_advance;
	TW_PROBE_ADVANCE(this, clock.ns_watched(), fired, counts.cascaded_watched(), deferred);
	return fired;
}

// The quiet rule's bound, computed: the next event's tick, or 0 while the
// next advance has timers to run or must refuse.
uint64_t tw_wheel::calc_quiet() const
{
	if (due.any() || refuses_advance())
		return 0;
	return quiet_of(next_event_tick());
}

TW_NOINLINE int tw_wheel::tell_next_expiry()
{
	notify_now(next_expiry());
	return 0;
}

// Every advance that leaves the wheel alive ends here, but the quiet
// rule's: counted, and the backend told the next expiry. After events the
// bound stays 0: the next advance computes it, as it finds what to do.
TW_HOT_INLINE int tw_wheel::end_advance(int fired)
{
	if (fired)
		counts.advanced_firing();
	else
		counts.advanced_idle();
	if (hook.installed())
		notify_now(next_expiry());
	return fired;
}

TW_COLD int tw_wheel::refuse_advance() const
{
	return running() ? -EBUSY : -EINVAL;
}

// An advance the bound could not take: a refusal, a clock that would go
// back, one with work, or a quiet one after a removal left the bound low,
// which computes it again. `quotient` is `now`'s by the tick.
template <bool Budgeted> TW_NOINLINE int tw_wheel::advance_slow(uint64_t now, uint64_t quotient, unsigned budget)
{
	if (TW_UNLIKELY(refuses_advance()))
		return refuse_advance();
	if (now < clock.ns())
		return 0;
	TW_ASSERT(clock.tick() == geo.tick_of_now(clock.ns()), "clock");
	uint64_t target_tick = geo.clock_tick(now, quotient);
	if (due.waiting() || requests_pending())
		return advance_events<Budgeted>(now, target_tick, budget);
	uint64_t event = next_event_tick();
	if (event <= target_tick)
		return advance_events<Budgeted>(now, target_tick, budget);
	clock.set_tick(target_tick);
	clock.set_ns(now);
	clock.quiet_until(quiet_of(event));
	TW_ASSERT(clock.quiet_below() == calc_quiet(), "quiet");
	TW_PROBE_ADVANCE(this, now, 0, counts.cascaded_watched(), 0);
	return end_advance(0);
}

template int tw_wheel::advance_slow<false>(uint64_t, uint64_t, unsigned);
template int tw_wheel::advance_slow<true>(uint64_t, uint64_t, unsigned);

// A wheel destroyed by a callback is released before this returns if
// nobody else holds it (tw::release_if_unused()).
template <bool Budgeted> TW_NOINLINE int tw_wheel::advance_events(uint64_t now, uint64_t target_tick, unsigned budget)
{
	clock.not_quiet(); // callbacks may call tw_advance(), and refuse_advance() answers
	if (requests_pending())
		drain();

	// A wake-up, an advance that reaches the next expiry, serves every
	// window it falls in (the open rule).
	bool wake_up = policy.widest() && now >= next_expiry();
	collect_expired_timers(target_tick);
	if (wake_up) {
		fire_open_windows();
		clock.woke();
	}
	if (!buckets.level_mask())
		policy.slots_empty();
	clock.set_ns(now);
	int fired = 0;
	if (due.waiting())
		fired = run_expired_timers<Budgeted>(budget);
	else
		TW_PROBE_ADVANCE(this, now, 0, counts.cascaded_watched(), 0);
	if (destroyed()) {
		settle_destroyed();
		tw::release_if_unused(this);
		return fired;
	}

	return end_advance(fired);
}
