// SPDX-License-Identifier: MIT
//
// The small parts of a wheel, each held by value in struct tw_wheel
// (wheel.hpp), each with its fields private and the invariant it keeps
// stated beside it. None knows the wheel, so tests/test_parts.cpp checks
// each one alone.
#ifndef TW_PARTS_HPP
#define TW_PARTS_HPP

#include <stddef.h>
#include <stdint.h>

#include "compiler.hpp"
#include "level.hpp"
#include "list.hpp"
#include "timerwheel.h"

namespace tw {

// The clock: the time of the last advance, in ns and in ticks, and the
// two bounds that spare an advance work.
//
//  clock     tick() is ns()'s tick (rounded down; UINT64_MAX reaches the
//            last tick).
//  quiet     quiet_below() is no later than the next event's tick (the
//            first occupied slot's start, next_event_tick()) nor the last
//            whole tick, and is 0 while the due list holds a timer, while
//            an advance is under way, and once the wheel is destroyed: so
//            an advance to an earlier tick, with no request queued, has
//            only to move the clock, and knows it from one comparison. An
//            arm lowers it to its slot's start; a removal leaves it low, an
//            advance with events leaves it 0, and the next advance that
//            finds nothing to do computes it again.
//  open      a timer in a slot has an expiry tick after woke_tick(), the
//            clock's tick at the last wake-up (an advance that reached the
//            next expiry): a wake-up fires the timers whose window has
//            opened, not only those whose firing tick has come
//            (fire_open_windows()). Between wake-ups, a timer may wait in
//            its slot with its window open, and fires by its firing tick.
class wheel_clock {
public:
	void start(uint64_t ns, uint64_t tick, uint64_t quiet_below)
	{
		now_ns_ = ns;
		now_tick_ = tick;
		woke_tick_ = tick;
		quiet_below_ = quiet_below;
	}
	TW_PART uint64_t ns() const { return now_ns_; }
	// The clock as memory, for a probe: read there, not kept in a register.
	TW_PART const volatile uint64_t &ns_watched() const { return now_ns_; }
	TW_PART uint64_t tick() const { return now_tick_; }
	// An advance moves the tick (event by event) and the time apart.
	TW_PART void set_ns(uint64_t ns) { now_ns_ = ns; }
	TW_PART void set_tick(uint64_t tick) { now_tick_ = tick; }

	// The quiet rule.
	TW_PART uint64_t quiet_below() const { return quiet_below_; }
	TW_PART void quiet_until(uint64_t bound) { quiet_below_ = bound; }
	TW_PART void not_quiet() { quiet_below_ = 0; }
	TW_PART void lower_quiet(uint64_t start)
	{
		if (start < quiet_below_)
			quiet_below_ = start;
	}

	// The open rule: a wake-up at the clock's tick.
	TW_PART void woke() { woke_tick_ = now_tick_; }
	TW_PART uint64_t woke_tick() const { return woke_tick_; }

private:
	uint64_t now_ns_;
	uint64_t now_tick_;
	uint64_t quiet_below_; // an advance to an earlier tick only moves the clock (the quiet rule)
	uint64_t woke_tick_;   // the clock's tick at the last wake-up (the open rule)
};

// The policy a program set: the default window of tw_add() and tw_mod()
// (read by every re-arm) and the backends' wake budget; and the widest
// window placed, which bounds the search for opened windows (the window
// rule, wheel.hpp).
class policy {
public:
	void init(uint64_t default_slack, unsigned wake_budget)
	{
		default_slack_ = default_slack;
		wake_budget_ = wake_budget;
	}
	// In ticks: the window of tw_add()/tw_mod() (tw_config.slack_ns).
	TW_PART uint64_t default_slack() const { return default_slack_; }
	TW_PART unsigned wake_budget() const { return wake_budget_; }
	void set_wake_budget(unsigned budget) { wake_budget_ = budget; }

	// The largest alignment of a timer placed since the slots were last
	// empty: no window is wider.
	TW_PART unsigned widest() const { return widest_; }
	TW_PART void placed(unsigned align)
	{
		if (align > widest_)
			widest_ = align;
	}
	// The slots are empty: no window is placed.
	TW_PART void slots_empty() { widest_ = 0; }

private:
	uint64_t default_slack_;
	unsigned widest_;
	unsigned wake_budget_; // tw_set_wake_budget(): the most a backend's wake-up fires
};

// The notify hook (tw_set_notify()): a backend's function, told the next
// expiry whenever it moves earlier than the hook heard last, and when the
// wheel becomes empty or holds a timer again.
//
//  notified  the hook was never told a time later than the next expiry, so
//            a backend never sleeps past a timer.
class hook {
public:
	// Install fn (nullptr removes the hook), its plans starting from the
	// wheel's next expiry `next`; without a hook, told() is 0.
	void set(tw_notify_fn fn, void *arg, uint64_t next)
	{
		fn_ = fn;
		arg_ = fn ? arg : nullptr;
		told_ = fn ? next : 0;
	}
	TW_PART bool installed() const { return fn_ != nullptr; }
	// The last time the hook was told.
	TW_PART uint64_t told() const { return told_; }
	// Tell the hook `when`: whether it touched its OS timer.
	int tell(tw_wheel *w, uint64_t when)
	{
		told_ = when;
		return fn_(w, when, arg_);
	}

private:
	tw_notify_fn fn_;
	void *arg_;
	uint64_t told_; // the last time given to the hook (0 without one); never later than the real next expiry
};

// The due queue: the timers whose time has come, in the order they came
// due (the due list), and while callbacks run, those that the advance took
// off it to run (`ready`: a plain chain, whose first timer's pprev points
// at it, so that unlinking one works as on any list).
//
//  due       the due list's tail is its last timer's next field; `ready`
//            holds timers only while callbacks run.
class due_queue {
public:
	void init()
	{
		tail_init(due_);
		ready_ = nullptr;
	}
	TW_PART void append(tw_timer *t) { tail_append(due_, t); }
	// A timer that had no successor left the due list or `ready`: only the
	// due list's last moves its tail.
	TW_PART void unlinked_last(const tw_timer *t) { tail_unlinked_last(due_, t); }
	// Timers wait for the next advance.
	TW_PART bool waiting() const { return due_.first; }
	// Timers wait, or this advance's callbacks have yet to run.
	TW_PART bool any() const { return due_.first || ready_; }

	// The advance takes the first n timers of the due list to run (n > 0),
	// or with `all` the whole list (the common case, without a count).
	static constexpr unsigned all = ~0u;
	TW_PART void take_ready(unsigned n)
	{
		if (n == all) {
			ready_ = due_.first;
			tail_init(due_);
		} else {
			ready_ = tail_take_front(due_, n);
		}
		if (ready_)
			ready_->tw__pprev = &ready_;
	}
	// How many timers take_ready(n) would leave waiting: a walk, for a
	// tracer.
	uint64_t deferred_by(unsigned n) const
	{
		uint64_t waiting = 0;
		for (const tw_timer *t = due_.first; t; t = t->tw__next)
			waiting++;
		return waiting > n ? waiting - n : 0;
	}
	// The next callback to run; nullptr once they have all run.
	TW_PART tw_timer *next_ready() const { return ready_; }

	// The lists as they are linked, for the walks and checks.
	tw_timer *const *due_head() const { return &due_.first; }
	tw_timer *const *due_tail() const { return due_.tail; }
	tw_timer *const *ready_head() const { return &ready_; }

private:
	tail_list<tw_timer> due_; // timers whose time has come, in the order they came due
	tw_timer *ready_; // while running: the due list detached, its callbacks not yet run
};

// The counters, the figures of tw_get_stats() and count(), the armed
// timers. Each is derived from the increments that the paths which arm and
// remove make anyway, one each: an arm counts itself once, as the claim of
// an idle timer (which count() reads too) or as a re-arm in place; a
// claimed timer goes into a slot unless it is due at once, so the cascades
// count only their own placements; each removal is cancelled, fired, moved
// (unlinked by tw_mod() to be claimed again) or idled by a destroy; an
// advance counts itself once, as one that fired or an idle one, so that
// the quiet advance of a polling loop pays one increment.
//
//  count     count() is the number of timers on all the lists.
class counters {
public:
	// Arms.
	TW_PART void claimed() { stats_.armed++; }
	TW_PART void claimed_due() { due_arms_++; }
	TW_PART void rearmed_in_place() { in_place_++; }
	// Removals.
	TW_PART void cancelled() { stats_.cancelled++; }
	TW_PART void fired() { stats_.fired++; }
	TW_PART void moved() { moved_++; }
	TW_PART void idled(size_t timers) { idled_ += timers; }
	// A cascade's placement.
	TW_PART void placed() { stats_.placed++; }
	TW_PART void cascaded(uint64_t timers) { stats_.cascaded += timers; }
	// The count of cascaded timers as memory, for a probe to read there.
	TW_PART const volatile uint64_t &cascaded_watched() const { return stats_.cascaded; }
	// Advances and the hook.
	TW_PART void advanced_firing() { stats_.advances++; }
	TW_PART void advanced_idle() { stats_.idle_advances++; }
	TW_PART void told_hook() { stats_.notifies++; }
	TW_PART void rearmed_os_timer() { stats_.os_rearms++; }

	TW_PART size_t count() const
	{
		return static_cast<size_t>(stats_.armed - stats_.cancelled - stats_.fired - moved_ - idled_);
	}

	// As tw_get_stats() gives them.
	tw_stats stats() const
	{
		tw_stats s = stats_;
		s.placed += s.armed - due_arms_;
		s.armed += in_place_;
		s.advances += s.idle_advances;
		return s;
	}

private:
	tw_stats stats_;    // armed: claims only; placed: the cascades' only; advances: those that fired
	uint64_t in_place_; // tw_mod() re-arms that left the timer where it was
	uint64_t moved_;
	uint64_t idled_;
	uint64_t due_arms_; // claims that went to the due list, not into a slot
};

// The lateness histogram (tw_get_lateness()): each firing counted in the
// bucket of its lateness's bit width, 0 for none and b for [2^(b-1), 2^b).
// A bit scan picks the bucket, where buckets of ticks would cost a
// division too.
class lateness_histogram {
public:
	TW_PART void record(uint64_t late_ns)
	{
		late_[late_ns ? bit_width(late_ns) : 0]++;
		if (late_ns > max_)
			max_ = late_ns;
	}

	// The counts, their sum and the largest lateness; the tick is the
	// wheel's to give.
	void read(tw_lateness *out) const
	{
		uint64_t fired = 0;
		for (unsigned b = 0; b < TW_LATENESS_BUCKETS; b++) {
			out->count[b] = late_[b];
			fired += late_[b];
		}
		out->fired = fired;
		out->max_ns = max_;
	}

private:
	uint64_t late_[TW_LATENESS_BUCKETS]; // firings by lateness's bit width
	uint64_t max_;
};

} // namespace tw

#endif
