// SPDX-License-Identifier: MIT
//
// The hierarchical timing wheel (Varghese & Lauck's scheme 7, as Kafka uses
// it), with the kernel's intrusive slots and tokio's placement rule. The
// level arithmetic and its table of levels are in level.hpp.
//
// Life of a timer. tw_add() rounds the expiry up to a tick and places the
// timer at the level of the first digit where that tick differs from the
// clock. tw_advance() walks the clock forward event by event: the next event
// is always the first occupied slot of the lowest non-empty level, found
// with two bit scans, so empty stretches of any length cost nothing. At a
// level-0 slot the timers are due; at a higher slot they are placed again
// relative to the new clock (the cascade) and so reach level 0 exactly at
// their tick. The last event by `now`, on a wheel without windows, takes
// the clock to `now` at once instead (collect_expired_timers()). Due timers
// go on the due list in tick order; when the clock has reached `now`, the
// list is drained and the callbacks run.
//
// Callbacks run from a detached list, `ready`, as libuv, the kernel and
// tokio run theirs: the due list is emptied before the first callback, so
// a timer a callback arms already due lands on the due list again and
// fires in the next advance. A callback that re-arms itself for "now"
// cannot livelock.
#include "wheel.hpp"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "compiler.hpp"
#include "ids.hpp"
#include "level.hpp"

// The few steps of tw_add/tw_mod/tw_del that other paths share, inlined
// into them: a call each would cost as much as the step.
#define TW_HOT_INLINE inline TW_ALWAYS_INLINE
#define TW_HOT_LAMBDA TW_ALWAYS_INLINE

using tw::tail_list;

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
	uint64_t last_tick = UINT64_MAX / tick_ns + (UINT64_MAX % tick_ns != 0);
	unsigned bits = tw::bit_width(last_tick);
	unsigned levels = (bits + slot_bits - 1) / slot_bits;
	size_t nslots = static_cast<size_t>(levels) << slot_bits;
	static_assert(sizeof(tw::slot) % alignof(uint64_t) == 0, "slots follow the bitmaps");
	uint32_t id = tw::ids::take();
	if (!id)
		return -ENOMEM;
	tw_wheel *w = static_cast<tw_wheel *>(calloc(1, bytes(levels, slot_bits)));
	if (!w) {
		tw::ids::give_back(id);
		return -ENOMEM;
	}
	w->id = id;
	w->tick_ns = tick_ns;
	w->per_tick = tw::divider::by(tick_ns);
	w->slot_bits = slot_bits;
	w->slot_mask = (uint64_t{1} << slot_bits) - 1;
	w->levels = levels;
	w->last_tick = last_tick;
	w->last_whole_tick = UINT64_MAX / tick_ns;
	w->now_ns = now;
	w->now_tick = w->tick_of_now(now);
	w->woke_tick = w->now_tick;
	w->quiet_below = w->last_whole_tick; // empty: no event
	w->default_slack = w->slack_ticks(slack_ns);
	w->default_geometry = w->per_tick.how == tw::divider::ms && slot_bits == TW_DEFAULT_SLOT_BITS;
	TW_ASSERT(!w->default_geometry || levels == default_levels, "bitmaps");
	w->exact_arms = w->default_geometry && !w->default_slack;
	w->occupied = reinterpret_cast<uint64_t *>(w + 1);
	w->slots = reinterpret_cast<tw::slot *>(w->occupied + levels);
	for (size_t i = 0; i < nslots; i++)
		w->slots[i].clear();
	w->due.init();
	w->notified = 0; // no hook yet: see set_notify()
	w->requests.init();
	w->holds = tw::held_by_program;
	w->wake_budget = no_budget;
	w->fill_level_tables();
	*out = w;
	return 0;
}

// The per-bit and per-level tables that spare the hot paths a division
// by slot_bits: the level, shift and first slot's `where` of each tick bit,
// and each level's shift and the mask of the clock's bits above it.
void tw_wheel::fill_level_tables()
{
	for (unsigned b = 0; b < 64; b++) {
		level_of_bit[b] = static_cast<uint8_t>(b / slot_bits);
		shift_of_bit[b] = static_cast<uint8_t>(b / slot_bits * slot_bits);
		where0_of_bit[b] = where_of(index_of(level_of_bit[b], 0));
	}
	for (unsigned level = 0; level < levels; level++) {
		unsigned above = (level + 1) * slot_bits;
		level_shift[level] = static_cast<uint8_t>(level * slot_bits);
		level_high[level] = above >= 64 ? 0 : ~((uint64_t{1} << above) - 1);
	}
}

// Every armed timer becomes idle and the wheel empty. The lists are
// dropped whole rather than unlinked timer by timer: a timer's own fields
// are all that tw_pending() reads.
void tw_wheel::idle_all_timers()
{
	for (tw_timer *t = due.first; t; t = t->tw__next)
		t->tw__where = tw::where_idle, t->tw__owner = 0;
	due.init();
	for (tw_timer *t = ready; t; t = t->tw__next)
		t->tw__where = tw::where_idle, t->tw__owner = 0;
	ready = nullptr;
	for (size_t i = 0; i < nslots(); i++) {
		slots[i].each([](tw_timer *t, tw_timer *const *) {
			t->tw__where = tw::where_idle, t->tw__owner = 0;
			return 0;
		});
		slots[i].clear();
	}
	for (unsigned level = 0; level < levels; level++)
		occupied[level] = 0;
	level_mask = 0;
	widest = 0;
	idled += count();
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
	quiet_below = 0;     // and advances, by advance_slow()
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
// So `notified` starts from there, not from what the wheel would have told
// a hook while it had none (which may lie earlier: removals never raise
// it), or an earlier timer armed next would be taken for a later one.
// Without a hook it is 0: no arm is earlier than that, so no arm and no
// advance computes a next expiry that nobody would hear.
void tw_wheel::set_notify(tw_notify_fn fn, void *arg)
{
	notify = fn;
	notify_arg = fn ? arg : nullptr;
	holds = fn ? holds | tw::held_by_hook : holds & ~tw::held_by_hook;
	notified = fn ? next_expiry() : 0;
	(void)publish_horizon(notified);
}

// The clock's tick for a time: rounded down, except that UINT64_MAX reaches
// the last tick, so an expiry in the final partial tick is not lost.
uint64_t tw_wheel::tick_of_now(uint64_t ns) const
{
	return clock_tick(ns, per_tick.quotient(ns));
}

// An expiry's tick, for an expiry after tick 0 (every expiry placed in a
// slot, which lies after the clock): rounded up, so that firing at the tick
// is never early. ceil(ns / tick) is floor((ns - 1) / tick) + 1 for ns > 0,
// one quotient and no remainder.
uint64_t tw_wheel::tick_of_expiry(uint64_t ns) const
{
	return per_tick.quotient(ns - 1) + 1;
}

uint64_t tw_wheel::ns_of_tick(uint64_t tick) const
{
	return tick > last_whole_tick ? UINT64_MAX : tick * tick_ns;
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
	uint64_t last = slack >= last_tick - exp_tick ? last_tick : exp_tick + slack;
	return tw::msb64((exp_tick - 1) ^ last);
}

// The bucket for a tick after the clock: the level of the first digit
// where the tick differs from the clock, and that level's digit of the
// tick. Computed once per placement and handed to enqueue(), which needs
// nothing else.
size_t tw_wheel::calc_wheel_index(uint64_t exp_tick) const
{
	unsigned level = level_of_bit[tw::msb64(exp_tick ^ now_tick)];
	return index_of(level, tw::calc_wheel_slot(exp_tick, level, slot_bits, slot_mask));
}

// The tick at which a bucket comes due (its cascade point).
uint64_t tw_wheel::slot_start(size_t index) const
{
	return slot_start_at(level_of(index), slot_of(index));
}

// The last tick a bucket spans (UINT64_MAX for one that reaches past it).
uint64_t tw_wheel::slot_last(size_t index) const
{
	uint64_t start = slot_start(index), width = uint64_t{1} << (level_of(index) * slot_bits);
	return start > UINT64_MAX - (width - 1) ? UINT64_MAX : start + (width - 1);
}

// The earliest tick at which a bucket can fire a timer: its start, or the
// lower bound on its timers' ticks if that is later (see next_firing_tick).
uint64_t tw_wheel::slot_bound(size_t index) const
{
	uint64_t start = slot_start(index);
	uint64_t min_tick = slots[index].min_tick;
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
	if (!first_occupied(&level, &slot))
		return UINT64_MAX;
	return slot_bound(index_of(level, slot));
}

uint64_t tw_wheel::next_expiry() const
{
	// From a callback, the timers of this advance still to run are due too.
	if (due.first || ready)
		return now_ns;
	uint64_t tick = next_firing_tick();
	return tick == UINT64_MAX ? UINT64_MAX : ns_of_tick(tick);
}

// Put a timer whose firing tick lies after the clock into slot `index`,
// which calc_wheel_index() gave for that tick, in lane `lane` (its low
// bits). The lanes need no counter of their own: an arm takes its expiry's
// tick, a cascade the count of its placements. Timers armed for one tick
// share a lane, so a slot full of them is walked as one chain.
TW_HOT_INLINE void tw_wheel::enqueue(tw_timer *t, size_t index, uint64_t tick, uint64_t exp_tick, uint64_t lane)
{
	unsigned level = level_of(index);
	slots[index].push(t, static_cast<unsigned>(lane), tick, exp_tick);
	t->tw__where = where_of(index);
	occupied[level] |= uint64_t{1} << slot_of(index);
	level_mask |= uint64_t{1} << level;
}

// An idle timer becomes this wheel's, armed for `expires`.
TW_HOT_INLINE void tw_wheel::claim(tw_timer *t, uint64_t expires)
{
	t->expires = expires;
	t->tw__owner = id;
	stats.armed++; // and count()
}

// Place a claimed timer whose expiry's tick lies after the clock, firing at
// fire_tick(exp_tick, align), in the slot calc_wheel_index() gives for it.
TW_HOT_INLINE void tw_wheel::place(tw_timer *t, uint64_t exp_tick, unsigned align)
{
	set_window(t, align);
	uint64_t tick = fire_tick(exp_tick, align);
	size_t index = calc_wheel_index(tick);
	lower_quiet(slot_start(index));
	enqueue(t, index, tick, exp_tick, exp_tick);
}

// A timer's alignment, and the bound every search of opened windows
// relies on (the window rule).
TW_HOT_INLINE void tw_wheel::set_window(tw_timer *t, unsigned align)
{
	tw::set_align(t, align);
	if (align > widest)
		widest = align;
}

// Arm an idle timer for a window of `slack` ticks after its expiry's tick.
TW_HOT_INLINE void tw_wheel::arm(tw_timer *t, uint64_t expires, uint64_t slack)
{
	claim(t, expires);
	if (expires <= now_ns) {
		// Due now. A periodic timer keeps its alignment for its re-arms.
		tw::set_align(t, tw::is_periodic(t) ? window_align(t, 0, slack) : 0);
		make_due(t);
		due_arms++;
		quiet_below = 0;
		return;
	}
	uint64_t exp_tick = tick_of_expiry(expires);
	place(t, exp_tick, window_align(t, exp_tick, slack));
}

// The last timer left slot `index`.
inline void tw_wheel::emptied(size_t index)
{
	slots[index].min_tick = slots[index].min_open = UINT64_MAX;
	unsigned level = level_of(index);
	occupied[level] &= ~(uint64_t{1} << slot_of(index));
	if (!occupied[level])
		level_mask &= ~(uint64_t{1} << level);
}

TW_HOT_INLINE void tw_wheel::unlink(tw_timer *t)
{
	TW_ASSERT(*t->tw__pprev == t, "links");
	TW_ASSERT(count() > 0, "count");
	// Every list is an hlist, the due list too: a timer with a successor
	// leaves any of them the same way, and only the last one of a list
	// asks which list it was on.
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
	if (slots[index].empty())
		emptied(index);
}

void tw_wheel::notify_now(uint64_t when)
{
	if (!notify)
		return;
	// Requests that came in without waking us (request_queue.hpp): let
	// the backend run the wheel again at once.
	if (requests.has_wake() && publish_horizon(when))
		when = now_ns;
	notified = when;
	stats.notifies++;
	holds |= tw::held_in_hook;
	int touched = notify(this, when, notify_arg);
	holds &= ~tw::held_in_hook;
	if (touched)
		stats.os_rearms++;
}

// After a timer was armed for `expires` (from idle if `was_idle`): tell the
// backend only what changes its plans, a next expiry earlier than it was
// told, or a wheel that holds a timer again (one that fires only at UINT64_MAX too: it keeps a loop
// alive). A timer at or after the time the hook was told cannot move the
// next expiry below it (every bound is the tick of a timer placed in its
// slot, or the slot's start, and the hook was never told a later time), so
// the usual arm, later than the earliest, costs no more than this test.
TW_HOT_INLINE void tw_wheel::notify_armed(uint64_t expires, bool was_idle)
{
	if (!notify)
		return;
	bool was_empty = was_idle && count() == 1;
	if (running() || (expires >= notified && !was_empty)) {
		TW_ASSERT(running() || notified <= next_expiry(), "notified");
		return;
	}
	uint64_t next = next_expiry();
	if (next < notified || was_empty)
		notify_now(next);
}

// An exact timer, firing at `tick`, after the clock, goes straight to its
// slot: no window to align to, the firing tick the expiry's own. The level
// and slot are computed here and used as they are, rather than encoded in
// an index and taken apart again. The default geometry (default_geometry)
// has this path with its tick and slot width as constants: `ms` is a
// constant at every call, and `bits` wherever `ms` is true. An arm (`arming`) lowers the quiet
// rule's bound; a cascade, inside an advance, need not. Returns the level.
TW_HOT_INLINE unsigned tw_wheel::enqueue_exact(tw_timer *t, uint64_t tick, uint64_t lane, bool ms, unsigned bits,
					       bool arming)
{
	unsigned b = tw::msb64(tick ^ now_tick);
	unsigned shift = shift_of_bit[b];
	uint64_t digits = tick >> shift; // the tick's digits from the level's up: the clock's above it
	TW_ASSERT(digits << shift == slot_start(calc_wheel_index(tick)), "quiet");
	if (arming)
		lower_quiet(digits << shift);
	uint64_t slot = digits & ((uint64_t{1} << bits) - 1);
	unsigned level = level_of_bit[b];
	size_t where = where0_of_bit[b] + slot;
	TW_ASSERT(where == where_of(calc_wheel_index(tick)), "bitmaps");
	// The bitmaps and slots follow the wheel in its allocation (create()):
	// with the default geometry, at offsets known here.
	uint64_t *bits_at = ms ? reinterpret_cast<uint64_t *>(this + 1) : occupied;
	tw::slot *slots_at = ms ? reinterpret_cast<tw::slot *>(bits_at + default_levels) : slots;
	TW_ASSERT(bits_at == occupied && slots_at == slots, "bitmaps");
	tw::set_bit64(&bits_at[level], slot);
	tw::set_bit64(&level_mask, level);
	t->tw__where = static_cast<uint16_t>(where);
	slots_at[where - tw::where_slot0].push_exact(t, static_cast<unsigned>(lane), tick);
	return level;
}

// The everyday arm: an idle timer, exact, for a later tick. Its lane is
// its tick's (see enqueue()).
TW_HOT_INLINE void tw_wheel::arm_exact(tw_timer *t, uint64_t expires, bool ms, unsigned bits)
{
	claim(t, expires);
	tw::clear_align(t);
	uint64_t tick = tick_of_expiry(expires, ms);
	enqueue_exact(t, tick, tick, ms, bits, true);
}

// tw_add() on a wheel of the default geometry without default slack
// (exact_arms): an idle timer for a later time is armed here, in a
// function that makes no call on this path, so saves only the registers
// this path needs; everything else, refusals included, goes through add().
int tw_wheel::add_default(tw_timer *t, uint64_t expires)
{
	if (exact_arms && t->tw__where == tw::where_idle && expires > now_ns) {
		arm_exact(t, expires, true, TW_DEFAULT_SLOT_BITS);
		if (TW_UNLIKELY(notify != nullptr))
			return notify_added(expires);
		return 0;
	}
	return add(t, expires, default_slack);
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
	if (!slack && expires > now_ns) {
		if (default_geometry)
			arm_exact(t, expires, true, TW_DEFAULT_SLOT_BITS);
		else
			arm_exact(t, expires, false, slot_bits);
	} else {
		arm(t, expires, slack);
	}
	notify_armed(expires, true);
	return 0;
}

// The stay rule (stays()): an exact timer may stay in any slot that comes
// due no later than its new tick, and then the slot places it again. So the
// common re-arm, a connection timeout pushed later on every read, only
// stores the new expiry (stays_later()) and touches no neighbour in the
// lists, which at scale are cache misses. It is tested here, ahead of
// everything else, so that it costs its tests and two stores: the rest of
// the work, in remod(), needs registers that a function saves on entry and
// restores on exit, which this path would pay for too.
int tw_wheel::mod(tw_timer *t, uint64_t expires, uint64_t slack)
{
	if (in_slot(t) && t->tw__owner == id && !destroyed() && expires > now_ns && stays_later(t, expires, slack)) {
		t->expires = expires;
		in_place++;
		return 1;
	}
	return remod(t, expires, slack);
}

// Every other tw_mod(): an idle timer, an earlier or windowed re-arm, one
// that is due, and the refusals.
TW_NOINLINE int tw_wheel::remod(tw_timer *t, uint64_t expires, uint64_t slack)
{
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
	if (in_slot(t) && expires > now_ns) {
		rearm_in_slot(t, expires, slack);
	} else {
		unlink(t);
		moved++;
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
	uint64_t exp_tick = tick_of_expiry(expires);
	unsigned align = window_align(t, exp_tick, slack);
	uint64_t tick = fire_tick(exp_tick, align);
	if (stays(index, exp_tick, tick, align)) {
		t->expires = expires;
		set_window(t, align);
		in_place++;
		slots[index].lower(tick, exp_tick);
		return;
	}
	unlink(t);
	moved++;
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
	stats.cancelled++;
	if (TW_UNLIKELY(notify != nullptr))
		return notify_cancelled();
	return 1;
}

// A hook hears that the wheel is empty now (tw_del() returns 1).
TW_NOINLINE int tw_wheel::notify_cancelled()
{
	if (count() == 0 && !running())
		notify_now(UINT64_MAX);
	return 1;
}

TW_NOINLINE int tw_wheel::refuse_del(const tw_timer *t)
{
	return t->tw__where == tw::where_idle ? 0 : -EINVAL;
}

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

// The clock has just reached the start of a slot of `from_level`, now
// detached: place its timers again relative to the clock. Each is due (its
// expiry's tick has come: for a timer with slack, its window is open), or
// lands in a later slot: a finer level when a higher slot cascades, or
// wherever its expiry now belongs if it was re-armed later while it waited
// (see mod()), which may be a coarser level. Only the moves to a finer
// level (or from a higher level to the due list) count as cascaded. An
// exact timer takes the arm's path (enqueue_exact()), with the default
// geometry's constants when the wheel has them (`Ms`).
//
// For the last event by an advance's target (`early` given, see
// collect_expired_timers()), the clock is already at the target, and the
// timers that come due are chained on *early, in no order, for the caller
// to put in order.
template <bool Ms>
void tw_wheel::place_from(tw_timer **chains, unsigned from_level, tw_timer **early)
{
	walk_lanes(chains, [this, from_level, early](tw_timer *t) TW_HOT_LAMBDA {
		uint64_t exp_tick = tick_of_expiry(t->expires, Ms);
		TW_ASSERT(exp_tick > woke_tick, "open");
		unsigned align = tw::align_of(t);
		unsigned to_level;
		if (exp_tick <= now_tick) {
			// Never before its tick: no bound announced an earlier one
			// (and the last event by a target is taken on a wheel
			// without windows only).
			TW_ASSERT(early ? !align : fire_tick(exp_tick, align) == now_tick, "stay");
			if (early) {
				t->tw__next = *early;
				*early = t;
			} else {
				make_due(t);
			}
			to_level = 0;
		} else if (!align) {
			to_level = enqueue_exact(t, exp_tick, stats.placed++, Ms, Ms ? TW_DEFAULT_SLOT_BITS : slot_bits, false);
		} else {
			uint64_t tick = fire_tick(exp_tick, align);
			size_t index = calc_wheel_index(tick);
			enqueue(t, index, tick, exp_tick, stats.placed++); // the arms' placements are derived (stats_now())
			to_level = level_of(index);
		}
		if (to_level < from_level)
			stats.cascaded++;
	});
}

void tw_wheel::place_again(tw_timer **chains, unsigned from_level, tw_timer **early)
{
	if (default_geometry)
		place_from<true>(chains, from_level, early);
	else
		place_from<false>(chains, from_level, early);
}

// The tick of the wheel's next event, the start of the first occupied slot
// of the lowest non-empty level (level.hpp says why no other slot comes
// first); UINT64_MAX when the wheel's slots are empty.
inline uint64_t tw_wheel::next_event_tick() const
{
	unsigned level = 0, slot = 0; // set by first_occupied() when it returns true
	if (!first_occupied(&level, &slot))
		return UINT64_MAX;
	return slot_start_at(level, slot);
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
	while (first_occupied(&level, &slot)) {
		uint64_t event = slot_start_at(level, slot);
		if (event > target_tick)
			break;
		TW_ASSERT(event > now_tick, "ahead");

		now_tick = event;
		tw_timer *chains[tw::lanes];
		size_t index = index_of(level, slot);
		TW_ASSERT(!slots[index].empty(), "bitmaps");
		slots[index].take_all(chains);
		emptied(index);
		if (level && !widest && next_event_tick() > target_tick) {
			now_tick = target_tick;
			tw_timer *early = nullptr;
			place_again(chains, level, &early);
			if (early && early->tw__next)
				early = tw::sort_by_expiry(early);
			for (tw_timer *t = early, *next; t; t = next) {
				next = t->tw__next;
				// After what came due before: no earlier than the slot's start.
				TW_ASSERT(tick_of_expiry(t->expires, default_geometry) >= event, "stay");
				make_due(t);
			}
			return;
		}
		place_again(chains, level, nullptr);
	}
	now_tick = target_tick;
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
	if (now_tick >= last_tick)
		return;
	for (unsigned align = 1; align <= widest; align++) {
		uint64_t mask = (uint64_t{1} << align) - 1;
		if ((now_tick | mask) >= last_tick)
			return; // no multiple of 2^align, nor of any larger power, is left
		take_opened(calc_wheel_index((now_tick | mask) + 1));
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
	if (!(occupied[level_of(index)] >> slot_of(index) & 1))
		return;
	tw::slot &s = slots[index];
	if (s.min_open > now_tick)
		return;
	uint64_t last = slot_last(index);
	bool coarse = level_of(index) > 0;
	uint64_t open_bound = s.min_open;
	tw_timer *chains[tw::lanes];
	s.take_all(chains);
	unsigned lane = 0; // the kept timers, dealt out again in turn
	walk_lanes(chains, [&](tw_timer *t) TW_HOT_LAMBDA {
		uint64_t exp_tick = tick_of_expiry(t->expires);
		TW_ASSERT(!tw::align_of(t) || exp_tick >= open_bound, "bound");
		TW_ASSERT(tw::align_of(t) <= widest, "window");
		if (exp_tick <= now_tick) {
			make_due(t);
			stats.cascaded += coarse;
		} else {
			s.push(t, lane++, fire_tick(exp_tick, tw::align_of(t)), exp_tick);
		}
	});
	if (s.empty())
		emptied(index);
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
	tw__forward(t, now_ns, p->period);
	if (t->expires > now_ns)
		arm(t, t->expires, (uint64_t{1} << tw::align_of(t)) - 1);
	else
		t->expires = fired_for;
}

// Callbacks run from `ready`, the first `budget` timers of the due list;
// the others stay due, in their order, ahead of what comes due later.
int tw_wheel::run_expired_timers(unsigned budget)
{
	TW_ASSERT(!ready && !running(), "due");
	int fired = 0;
	holds |= tw::held_by_advance;
	if (budget == no_budget) {
		ready = due.first;
		due.init();
	} else {
		ready = due.take_front(budget);
	}
	if (ready)
		ready->tw__pprev = &ready;
	for (tw_timer *t; (t = ready);) {
		unlink(t);
		record_lateness(t->expires);
		stats.fired++; // and count()
		if (tw::is_periodic(t))
			rearm_periodic(t);
		if (fired < INT32_MAX)
			fired++;
		t->fn(t);
	}
	holds &= ~tw::held_by_advance;
	return fired;
}

// The counters as tw_get_stats() gives them. An arm counts itself once, in
// stats.armed if it claims an idle timer (which count() reads too), else
// in in_place; a claimed timer is placed in a slot unless it is due at
// once (due_arms), so stats.placed counts only the cascades' placements.
// An advance counts itself
// once, as idle or as one that fired (stats.advances), so that the quiet
// advance of a polling loop pays one increment.
tw_stats tw_wheel::stats_now() const
{
	tw_stats s = stats;
	s.placed += s.armed - due_arms;
	s.armed += in_place;
	s.advances += s.idle_advances;
	return s;
}

// The quiet rule's bound, computed: the next event's tick, or 0 while the
// next advance has timers to run or must refuse.
uint64_t tw_wheel::calc_quiet() const
{
	if (due.first || ready || refuses_advance())
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
		stats.advances++;
	else
		stats.idle_advances++;
	if (notify)
		notify_now(next_expiry());
	return fired;
}

TW_COLD int tw_wheel::refuse_advance() const
{
	return running() ? -EBUSY : -EINVAL;
}

// Most advances of a loop that polls find nothing to do: no request, no
// due timer, and no slot coming due by the target. The quiet rule
// (wheel.hpp) tells them so in one comparison, and they only move the
// clock and count themselves once (stats_now()). Such an advance is no
// wake-up either, so there are no windows to look for: the next expiry is
// no earlier than the first event's tick, which lies after the target's.
// The quotient is the clock's tick for every time but UINT64_MAX, whose
// quotient is the last whole tick, which the bound never exceeds: that
// time takes the slow path, as do the refusals, for which the bound is 0.
//
// tw_advance() and tw_advance_budget(): one body, inlined into each, so
// that the common advance, without a budget, carries none.
TW_HOT_INLINE int tw_wheel::advance_with(uint64_t now, unsigned budget)
{
	uint64_t target_tick = per_tick.quotient(now);
	if (target_tick < quiet_below && now >= now_ns && !requests_pending()) {
		TW_ASSERT(quiet_below <= calc_quiet() && target_tick == tick_of_now(now), "quiet");
		now_tick = target_tick;
		now_ns = now;
		stats.idle_advances++;
		if (TW_UNLIKELY(notify != nullptr))
			return tell_next_expiry();
		return 0;
	}
	return advance_slow(now, target_tick, budget);
}

int tw_wheel::advance(uint64_t now)
{
	return advance_with(now, no_budget);
}

int tw_wheel::advance_budget(uint64_t now, unsigned budget)
{
	return advance_with(now, budget);
}

// An advance the bound could not take: a refusal, a clock that would go
// back, one with work, or a quiet one after a removal left the bound low,
// which computes it again. `quotient` is `now`'s by the tick.
TW_NOINLINE int tw_wheel::advance_slow(uint64_t now, uint64_t quotient, unsigned budget)
{
	if (TW_UNLIKELY(refuses_advance()))
		return refuse_advance();
	if (now < now_ns)
		return 0;
	TW_ASSERT(now_tick == tick_of_now(now_ns), "clock");
	uint64_t target_tick = clock_tick(now, quotient);
	if (due.first || requests_pending())
		return advance_events(now, target_tick, budget);
	uint64_t event = next_event_tick();
	if (event <= target_tick)
		return advance_events(now, target_tick, budget);
	now_tick = target_tick;
	now_ns = now;
	quiet_below = quiet_of(event);
	TW_ASSERT(quiet_below == calc_quiet(), "quiet");
	return end_advance(0);
}

// A wheel destroyed by a callback is released before this returns if
// nobody else holds it (tw::release_if_unused()).
TW_NOINLINE int tw_wheel::advance_events(uint64_t now, uint64_t target_tick, unsigned budget)
{
	quiet_below = 0; // callbacks may call tw_advance(), and refuse_advance() answers
	if (requests_pending())
		drain();

	// A wake-up, an advance that reaches the next expiry, serves every
	// window it falls in (the open rule).
	bool wake_up = widest && now >= next_expiry();
	collect_expired_timers(target_tick);
	if (wake_up) {
		fire_open_windows();
		woke_tick = now_tick;
	}
	if (!level_mask)
		widest = 0;
	now_ns = now;
	int fired = due.first ? run_expired_timers(budget) : 0;
	if (destroyed()) {
		settle_destroyed();
		tw::release_if_unused(this);
		return fired;
	}

	return end_advance(fired);
}
