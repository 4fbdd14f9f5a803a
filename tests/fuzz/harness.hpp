// SPDX-License-Identifier: MIT
//
// A wheel and a reference model driven side by side, shared by the libFuzzer
// target (decisions come from the fuzzer's bytes) and the soak (decisions
// come from a PRNG). The model is the one of tests/test_diff.cpp, with
// windows: each armed timer has the first tick it may fire at (key 0 for
// "already expired: the next advance") and the last, which is the same tick
// for a timer without slack; an ordered multimap holds them by the first.
// The model does not know which tick in its window the wheel picks for a
// loop to wake at: it checks that every firing lies in its window, that
// every timer whose window has closed fired, that a wake-up (an advance
// that reaches the next expiry) fired every timer whose window has opened,
// that the firings of one advance can be given nondecreasing ticks inside
// their windows, that the next expiry is never past the end of the
// earliest window, and that an advance short of it fires nothing. Re-arms
// go anywhere, and also near the timer's own expiry, earlier or later, on
// and off the boundaries where buckets start. Every call on the wheel is
// mirrored on the model, and any difference aborts with the reason, so
// libFuzzer records the input and the soak stops at the first divergence.
//
// Beyond test_diff this also frees timers from their own and other timers'
// callbacks, changes periods, recreates the wheel (destroying armed timers),
// uses a second wheel for foreign-timer calls, and mirrors the notify hook's
// contract and the stats counters.
#ifndef TW_FUZZ_HARNESS_HPP
#define TW_FUZZ_HARNESS_HPP

#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <map>
#include <vector>

#include <timerwheel.h>
#include <timerwheel/debug.h>

#include "../model.h"

namespace twh {

// Decisions: the fuzzer's bytes (zeros once they run out) or splitmix64.
struct source {
	const uint8_t *data = nullptr;
	size_t size = 0;
	size_t pos = 0;
	bool random = false;
	uint64_t state = 0;

	bool exhausted() const { return !random && pos >= size; }

	uint8_t byte()
	{
		if (random)
			return static_cast<uint8_t>(rand64());
		return pos < size ? data[pos++] : 0;
	}

	uint64_t u64(unsigned nbytes = 8)
	{
		if (random)
			return nbytes >= 8 ? rand64() : rand64() & ((uint64_t{1} << (8 * nbytes)) - 1);
		uint64_t v = 0;
		for (unsigned i = 0; i < nbytes; i++)
			v = v << 8 | byte();
		return v;
	}

	// A value below n (n > 0). Fuzz inputs spend as few bytes as n needs.
	uint64_t below(uint64_t n)
	{
		if (n <= 1)
			return 0;
		unsigned nbytes = 1;
		while (nbytes < 8 && (n - 1) >> (8 * nbytes))
			nbytes++;
		return u64(nbytes) % n;
	}

	uint64_t rand64()
	{
		uint64_t z = (state += 0x9e3779b97f4a7c15ull);
		z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
		z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
		return z ^ (z >> 31);
	}
};

inline uint64_t sat_add(uint64_t a, uint64_t b) { return a > UINT64_MAX - b ? UINT64_MAX : a + b; }

inline uint64_t sat_mul(uint64_t a, uint64_t b)
{
	uint64_t r;
	return __builtin_mul_overflow(a, b, &r) ? UINT64_MAX : r;
}

struct harness;

struct timer {
	tw_periodic p; // p.timer is the timer; p.period matters only if periodic
	harness *h;
	int id;
	bool periodic; // initialised by tw_periodic_init
	bool armed;    // the model's view
	uint64_t expires;
	uint64_t slack; // of the last arm: a periodic timer keeps it
	uint64_t last;  // the last tick it may fire at (0: the next advance)
	std::multimap<uint64_t, int>::iterator pos;  // by the first tick; valid while armed
	std::multimap<uint64_t, int>::iterator lpos; // by the last tick; valid while armed
};

struct options {
	int ntimers = 32;
	uint64_t check_every = 1; // full checks (tw_check, every timer) every n ops
	bool dump = true;         // exercise tw_dump now and then
	bool rewheel = true;      // let the input recreate the wheel with a new geometry
};

[[noreturn]] void diverged(const harness &h, const char *file, int line, const char *fmt, ...);

#define TWH_REQUIRE(h, cond, ...)                                           \
	do {                                                                \
		if (!(cond))                                                \
			::twh::diverged((h), __FILE__, __LINE__, __VA_ARGS__); \
	} while (0)

struct harness {
	options opt;
	source src;
	tw_wheel *w = nullptr;
	tw_wheel *other = nullptr; // stays empty: foreign timers are refused by it
	uint64_t tick = 0;
	unsigned slot_bits = 0;
	uint64_t default_slack = 0; // the wheel's tw_config.slack_ns
	uint64_t now = 0;
	std::vector<timer *> timers;
	std::multimap<uint64_t, int> armed;
	std::multimap<uint64_t, int> closing; // the same timers by the last tick of their windows
	std::vector<char> expected; // must fire in the advance under way
	uint64_t limit = 0;         // the clock's tick in the advance under way: keys up to it may fire
	bool wake_up = false;       // the advance under way reaches the next expiry
	bool in_advance = false;
	int in_callback = 0;
	uint64_t last_key = 0;
	uint64_t fired_now = 0; // callbacks in the advance under way
	tw_stats stats{};       // what the wheel's counters must say
	uint64_t notified = UINT64_MAX;
	uint64_t hook_calls = 0;
	bool told_empty = true; // what the hook last saw: a loop lives on it
	bool hooked = true;     // our hook is installed (inputs take it off and put it back)
	FILE *devnull = nullptr;
	bool quiet = false; // callbacks do nothing (while draining)
	bool dying = false; // destroyed from a callback: held by our hook until we remove it

	// totals, for the report
	uint64_t ops = 0, fired_total = 0, advances = 0, wheels = 0, frees = 0;

	void start(const options &o)
	{
		opt = o;
		timers.assign(static_cast<size_t>(opt.ntimers), nullptr);
		expected.assign(timers.size(), 0);
		if (opt.dump)
			devnull = fopen("/dev/null", "w");
		TWH_REQUIRE(*this, tw_wheel_create(&other, nullptr, 0) == 0, "create the other wheel");
	}

	void finish()
	{
		destroy_wheel();
		for (timer *&t : timers) {
			free(t);
			t = nullptr;
		}
		TWH_REQUIRE(*this, tw_count(other) == 0 && tw_check(other) == 0, "the other wheel was touched");
		tw_wheel_destroy(other);
		other = nullptr;
		if (devnull)
			fclose(devnull);
		devnull = nullptr;
	}

	// ---- the model ----

	uint64_t key_of(uint64_t e) const { return e <= now ? 0 : e / tick + (e % tick != 0); }

	// The window's last tick: e + slack rounded up to a tick, saturated,
	// in the model's own 128-bit arithmetic.
	uint64_t last_key_of(uint64_t e, uint64_t slack) const
	{
		if (e <= now)
			return 0;
		uint64_t end = tw_model_saturate((tw_model_u128)e + slack);
		return end / tick + (end % tick != 0);
	}

	uint64_t clock_tick(uint64_t ns) const
	{
		return ns == UINT64_MAX ? UINT64_MAX / tick + (UINT64_MAX % tick != 0) : ns / tick;
	}

	uint64_t fire_ns(uint64_t key) const { return key == 0 ? now : sat_mul(key, tick); }

	void model_arm(timer &t, uint64_t e, uint64_t slack)
	{
		t.expires = e;
		t.slack = slack;
		t.last = last_key_of(e, slack);
		t.pos = armed.emplace(key_of(e), t.id);
		t.lpos = closing.emplace(t.last, t.id);
		t.armed = true;
		stats.armed++;
	}

	void model_disarm(timer &t)
	{
		if (!t.armed)
			return;
		armed.erase(t.pos);
		closing.erase(t.lpos);
		t.armed = false;
		expected[static_cast<size_t>(t.id)] = 0;
	}

	// ---- inputs ----

	uint64_t random_expiry()
	{
		uint64_t mode = src.byte() % 8;
		switch (mode) {
		case 0: { // already expired
			uint64_t back = now < sat_mul(5, tick) ? now : 5 * tick;
			return now - src.below(sat_add(back, 1));
		}
		case 1: // within two ticks
			return sat_add(now, src.below(sat_mul(2, tick)));
		case 2:
			return sat_add(now, src.below(sat_mul(100, tick)));
		case 3: { // on and next to a tick boundary, a few ticks or levels away
			uint64_t ticks = src.byte();
			if (ticks & 0x80)
				ticks = uint64_t{1} << (ticks % 64);
			uint64_t e = sat_mul(sat_add(now / tick, ticks), tick);
			int delta = static_cast<int>(src.byte() % 3) - 1;
			if (delta < 0 && e > 0)
				e--;
			else if (delta > 0)
				e = sat_add(e, 1);
			return e;
		}
		case 4: // a huge jump
			return sat_add(now, src.u64() >> (src.byte() % 64));
		case 5: // the last ticks of 64-bit time
			return UINT64_MAX - src.below(sat_mul(3, tick));
		case 6:
			return src.u64();
		default:
			return now;
		}
	}

	// A re-arm near t's own expiry (if armed), earlier or later by up to a
	// few ticks or levels, and often on a boundary of 2^k ticks where a
	// bucket starts: a window that opens there opens at its cascade.
	uint64_t nearby_expiry(const timer &t)
	{
		if (!t.armed)
			return random_expiry();
		uint8_t r = src.byte();
		unsigned shift = r % 40;
		uint64_t scale = tick > UINT64_MAX >> shift ? UINT64_MAX : tick << shift;
		uint64_t d = src.below(scale);
		uint64_t e = r & 0x40 ? (t.expires > d ? t.expires - d : 0) : sat_add(t.expires, d);
		if (r & 0x80) {
			unsigned k = slot_bits * (1 + src.byte() % 4);
			uint64_t grid = k >= 64 || tick > UINT64_MAX >> k ? tick : tick << k;
			e = e / grid * grid;
		}
		return e;
	}

	// Slack: none, under a tick, a few ticks (so that windows share the
	// finest slots with exact timers, and a search walks both), a few
	// hundred ticks, any size, the largest.
	uint64_t random_slack()
	{
		switch (src.byte() % 7) {
		case 0:
		case 1:
			return 0;
		case 2:
			return src.below(tick);
		case 3:
			return src.below(sat_mul(300, tick));
		case 6:
			return src.below(sat_mul(8, tick));
		case 4:
			return src.u64() >> (src.byte() % 64);
		default:
			return src.byte() % 2 ? UINT64_MAX : sat_mul(tick, uint64_t{1} << (src.byte() % 64));
		}
	}

	uint64_t random_period()
	{
		switch (src.byte() % 4) {
		case 0:
			return 1 + src.below(sat_mul(3, tick));
		case 1:
			return 1 + src.below(sat_mul(1000, tick));
		case 2:
			return sat_add(1, src.u64() >> (src.byte() % 64));
		default:
			return tick;
		}
	}

	timer *pick() { return timers[src.below(timers.size())]; }

	timer *new_timer(size_t slot)
	{
		timer *t = static_cast<timer *>(malloc(sizeof(timer)));
		TWH_REQUIRE(*this, t, "out of memory");
		memset(static_cast<void *>(t), 0xa5, sizeof(*t)); // garbage, as user memory would be
		t->h = this;
		t->id = static_cast<int>(slot);
		t->armed = false;
		t->periodic = src.byte() % 4 == 0;
		if (t->periodic) {
			TWH_REQUIRE(*this, tw_periodic_init(&t->p, on_fire, random_period()) == 0, "periodic_init");
		} else {
			tw_timer_init(&t->p.timer, on_fire);
			t->p.period = 0;
		}
		TWH_REQUIRE(*this, !tw_pending(&t->p.timer), "a new timer is pending");
		timers[slot] = t;
		return t;
	}

	timer *get_or_new(size_t slot) { return timers[slot] ? timers[slot] : new_timer(slot); }

	// Cancel if armed, then release the memory, as a program would.
	void free_timer(timer *t)
	{
		int want = t->armed ? 1 : 0;
		int r = tw_del(w, &t->p.timer);
		TWH_REQUIRE(*this, r == want, "free: tw_del gave %d, model %d", r, want);
		if (t->armed)
			stats.cancelled++;
		model_disarm(*t);
		timers[static_cast<size_t>(t->id)] = nullptr;
		free(t);
		frees++;
	}

	// ---- the wheel ----

	static int on_notify(tw_wheel *wh, uint64_t next, void *arg)
	{
		harness &h = *static_cast<harness *>(arg);
		TWH_REQUIRE(h, wh == h.w, "hook called for another wheel");
		TWH_REQUIRE(h, !h.in_callback, "hook called while callbacks run");
		h.notified = next;
		h.told_empty = tw_count(wh) == 0; // the hook may read the wheel
		h.hook_calls++;
		return 1;
	}

	void new_wheel(uint64_t tick_ns, unsigned bits, uint64_t slack, uint64_t start)
	{
		destroy_wheel();
		tw_config cfg = { tick_ns, bits, slack };
		int r = tw_wheel_create(&w, &cfg, start);
		TWH_REQUIRE(*this, r == 0, "tw_wheel_create(%llu, %u) = %d", (unsigned long long)tick_ns, bits, r);
		tick = tw_tick(w);
		TWH_REQUIRE(*this, tick == (tick_ns ? tick_ns : TW_DEFAULT_TICK_NS), "tick");
		slot_bits = bits ? bits : TW_DEFAULT_SLOT_BITS;
		default_slack = slack;
		now = start;
		stats = tw_stats{};
		notified = UINT64_MAX;
		told_empty = true;
		hooked = true;
		hook_calls = 0;
		TWH_REQUIRE(*this, tw_set_notify(w, on_notify, this) == 0, "set_notify");
		TWH_REQUIRE(*this, tw_set_notify(w, on_notify, this) == -EBUSY, "second hook accepted");
		wheels++;
	}

	// With timers still armed: they become idle and never fire.
	void destroy_wheel()
	{
		if (!w)
			return;
		tw_wheel_destroy(w);
		if (hooked) // else the destroy freed it
			TWH_REQUIRE(*this, tw_set_notify(w, NULL, NULL) == 0, "removing the hook of a destroyed wheel");
		w = nullptr;
		for (timer *t : timers)
			if (t) {
				TWH_REQUIRE(*this, !tw_pending(&t->p.timer), "timer %d pending after destroy", t->id);
				t->armed = false;
			}
		armed.clear();
		closing.clear();
	}

	void new_wheel_from_input()
	{
		static const uint64_t ticks[] = {
			0, 1, 2, 3, 7, 10, 1000, 999983, 1000000, 1000000000, uint64_t{1} << 32,
			UINT64_MAX / 3, UINT64_MAX,
		};
		const size_t nticks = sizeof(ticks) / sizeof(ticks[0]);
		unsigned bits = src.byte() % (TW_MAX_SLOT_BITS + 1);
		uint64_t pick_tick = src.byte() % (nticks + 2);
		uint64_t tick_ns = pick_tick < nticks ? ticks[pick_tick]
				 : pick_tick == nticks ? 1 + src.u64(2)
						       : src.u64();
		uint64_t start;
		switch (src.byte() % 4) {
		case 0:
			start = 0;
			break;
		case 1:
			start = src.u64(3);
			break;
		case 2:
			start = src.u64();
			break;
		default:
			start = UINT64_MAX - src.u64(2);
			break;
		}
		uint64_t slack = src.byte() % 4 ? 0 : random_slack();
		new_wheel(tick_ns, bits, slack, start);
	}

	// ---- operations, each mirrored on the model ----

	// tw_add() with the wheel's default slack, or tw_add_range() with one
	// of its own.
	void op_add(timer &t, uint64_t e)
	{
		int want = t.armed ? -EBUSY : 0;
		bool range = src.byte() % 2;
		uint64_t slack = range ? random_slack() : default_slack;
		int r = range ? tw_add_range(w, &t.p.timer, e, slack) : tw_add(w, &t.p.timer, e);
		TWH_REQUIRE(*this, r == want, "tw_add%s(%d, %llu, slack %llu) = %d, model %d", range ? "_range" : "",
			    t.id, (unsigned long long)e, (unsigned long long)slack, r, want);
		if (!t.armed)
			model_arm(t, e, slack);
		else
			TWH_REQUIRE(*this, t.p.timer.expires == t.expires, "a refused add changed the expiry");
	}

	void op_mod(timer &t, uint64_t e)
	{
		int want = t.armed ? 1 : 0;
		bool range = src.byte() % 2;
		uint64_t slack = range ? random_slack() : default_slack;
		int r = range ? tw_mod_range(w, &t.p.timer, e, slack) : tw_mod(w, &t.p.timer, e);
		TWH_REQUIRE(*this, r == want, "tw_mod%s(%d, %llu, slack %llu) = %d, model %d", range ? "_range" : "",
			    t.id, (unsigned long long)e, (unsigned long long)slack, r, want);
		model_disarm(t);
		model_arm(t, e, slack);
	}

	void op_del(timer &t)
	{
		int want = t.armed ? 1 : 0;
		int r = tw_del(w, &t.p.timer);
		TWH_REQUIRE(*this, r == want, "tw_del(%d) = %d, model %d", t.id, r, want);
		if (t.armed)
			stats.cancelled++;
		model_disarm(t);
	}

	// The advance to `to` begins: the timers whose window has opened may
	// fire (their count is returned), and must if it is a wake-up (it
	// reaches the next expiry) or their window has closed.
	size_t expect_firings(uint64_t to)
	{
		wake_up = to >= tw_next_expiry(w); // checked against the windows by verify()
		now = to;
		limit = clock_tick(to);
		size_t expect = 0;
		for (auto it = armed.begin(); it != armed.end() && it->first <= limit; ++it) {
			if (wake_up || timers[static_cast<size_t>(it->second)]->last <= limit)
				expected[static_cast<size_t>(it->second)] = 1;
			expect++;
		}
		return expect;
	}

	// A callback destroyed the wheel. Our hook holds it: it was told the
	// wheel is empty, the wheel refuses work, and removing the hook frees
	// it. Then carry on with a new wheel of the same shape.
	void after_dying(uint64_t to)
	{
		dying = false;
		if (hooked) { // else tw_advance freed it
			TWH_REQUIRE(*this, notified == UINT64_MAX, "the hook was not told a destroyed wheel is empty");
			TWH_REQUIRE(*this, tw_count(w) == 0 && tw_next_expiry(w) == UINT64_MAX,
				    "a destroyed wheel holds timers");
			TWH_REQUIRE(*this, tw_advance(w, to) == -EINVAL, "tw_advance on a destroyed wheel");
			TWH_REQUIRE(*this, tw_set_notify(w, NULL, NULL) == 0, "removing the hook of a destroyed wheel");
		}
		w = nullptr;
		new_wheel(tick, slot_bits, default_slack, now);
		advances++;
	}

	void op_advance(uint64_t to)
	{
		if (to < now) {
			int r = tw_advance(w, to);
			TWH_REQUIRE(*this, r == 0, "backwards advance gave %d", r);
			return;
		}
		size_t expect = expect_firings(to);
		last_key = 0;
		fired_now = 0;
		in_advance = true;
		int r = tw_advance(w, to);
		in_advance = false;
		TWH_REQUIRE(*this, r >= 0 && static_cast<uint64_t>(r) == fired_now,
			    "tw_advance returned %d, %llu callbacks ran", r, (unsigned long long)fired_now);
		for (size_t i = 0; i < expected.size(); i++)
			TWH_REQUIRE(*this, !expected[i] || dying, "timer %zu (expires %llu) did not fire at %llu", i,
				    (unsigned long long)(timers[i] ? timers[i]->expires : 0),
				    (unsigned long long)to);
		TWH_REQUIRE(*this, fired_now <= expect, "more fired than due");
		if (dying) {
			after_dying(to);
			return;
		}
		stats.advances++;
		if (fired_now == 0)
			stats.idle_advances++;
		TWH_REQUIRE(*this, !hooked || notified == tw_next_expiry(w),
			    "the hook was not told the next expiry after an advance");
		advances++;
	}

	// A firing the model allows: armed, its window open, in a wake-up (an
	// advance short of the next expiry fires nothing), in tick order.
	void check_firing(timer &t)
	{
		harness &h = *this;
		TWH_REQUIRE(h, h.in_advance && !h.in_callback, "callback outside an advance, or nested");
		TWH_REQUIRE(h, t.armed, "timer %d fired while idle in the model", t.id);
		TWH_REQUIRE(h, t.pos->first <= h.limit, "timer %d (expires %llu, key %llu) fired early at %llu", t.id,
			    (unsigned long long)t.expires, (unsigned long long)t.pos->first, (unsigned long long)h.now);
		TWH_REQUIRE(h, h.wake_up, "timer %d (expires %llu, slack %llu) fired at %llu, short of the next expiry", t.id,
			    (unsigned long long)t.expires, (unsigned long long)t.slack, (unsigned long long)h.now);
		h.expected[static_cast<size_t>(t.id)] = 0;
		// Tick order: each firing gets the earliest tick in its window not
		// before the previous firing's; it must still be in the window.
		uint64_t key = t.pos->first > h.last_key ? t.pos->first : h.last_key;
		TWH_REQUIRE(h, key <= t.last, "timer %d (window %llu..%llu) fired after tick %llu: out of tick order",
			    t.id, (unsigned long long)t.pos->first, (unsigned long long)t.last,
			    (unsigned long long)h.last_key);
		h.last_key = key;
		uint64_t key0 = t.pos->first;
		// Timers armed already expired fire first, in the order they were
		// armed: the multimap keeps equal keys in insertion order.
		TWH_REQUIRE(h, key0 != 0 || t.pos == h.armed.begin(), "timer %d fired before an expired timer armed earlier",
			    t.id);
		h.armed.erase(t.pos);
		h.closing.erase(t.lpos);
		t.armed = false;
		h.fired_now++;
		h.fired_total++;
		h.stats.fired++;
	}

	// A periodic timer was re-armed before its callback at
	// expires + n * period > now; without such a time (or a period), it is
	// idle and keeps the expiry it fired for.
	void check_periodic(timer &t, const tw_timer *tt)
	{
		harness &h = *this;
		uint64_t n, e = 0;
		if (t.periodic && t.p.period)
			e = tw_model_forward(t.expires, h.now, t.p.period, &n);
		if (e > h.now) {
			// Re-armed before the callback at expires + n * period > now.
			TWH_REQUIRE(h, tw_pending(tt), "periodic timer %d not pending in its callback", t.id);
			TWH_REQUIRE(h, tt->expires == e, "periodic timer %d re-armed at %llu, model %llu", t.id,
				    (unsigned long long)tt->expires, (unsigned long long)e);
			h.model_arm(t, e, t.slack);
		} else {
			TWH_REQUIRE(h, !tw_pending(tt), "one-shot timer %d pending in its callback", t.id);
			TWH_REQUIRE(h, tt->expires == t.expires, "timer %d: expires %llu in its callback, fired for %llu",
				    t.id, (unsigned long long)tt->expires, (unsigned long long)t.expires);
		}
	}

	static void on_fire(tw_timer *tt)
	{
		timer &t = *tw_container_of(tw_container_of(tt, tw_periodic, timer), timer, p);
		harness &h = *t.h;
		h.check_firing(t);
		h.check_periodic(t, tt);
		h.in_callback++;
		h.callback_action(t); // may free t
		h.in_callback--;
		if (h.opt.check_every == 1 && !h.dying) {
			int r = tw_check(h.w);
			TWH_REQUIRE(h, r == 0, "tw_check after a callback = %d", r);
		}
	}

	// What a callback does; it may free its own timer, so `t` is dead after.
	void callback_action(timer &t)
	{
		if (quiet)
			return;
		unsigned a = src.byte() % 16;
		if (a >= 6 && a <= 10)
			callback_on_timers(t, a);
		else
			callback_other(t, a);
	}

	// Cancel, re-arm or arm its own timer or another.
	void callback_on_timers(timer &t, unsigned a)
	{
		switch (a) {
		case 6:
			op_mod(t, random_expiry());
			break;
		case 7:
			op_del(t);
			break;
		case 8:
			if (timer *o = pick())
				op_del(*o);
			break;
		case 9:
			if (timer *o = pick())
				op_mod(*o, src.byte() % 2 ? nearby_expiry(*o) : random_expiry());
			break;
		default:
			if (timer *o = pick())
				op_add(*o, random_expiry());
			break;
		}
	}

	// Free timers, try a nested advance (and look at the wheel from
	// inside: timers still to fire in this advance are due now), destroy
	// the wheel, arm a new timer, change a period.
	void callback_other(timer &t, unsigned a)
	{
		switch (a) {
		case 11:
			free_timer(&t);
			break;
		case 12:
			if (timer *o = pick())
				free_timer(o);
			break;
		case 13: {
			int r = tw_advance(w, sat_add(now, 1));
			TWH_REQUIRE(*this, r == -EBUSY, "tw_advance from a callback gave %d", r);
			r = tw_check(w);
			TWH_REQUIRE(*this, r == 0, "tw_check in a callback gave %d", r);
			for (char e : expected)
				TWH_REQUIRE(*this, !e || tw_next_expiry(w) == now,
					    "a timer is still to fire in this advance, but the next expiry is %llu",
					    (unsigned long long)tw_next_expiry(w));
			if (src.byte() % 4 == 0)
				destroy_in_callback(t);
			break;
		}
		case 14: {
			size_t slot = src.below(timers.size());
			if (!timers[slot])
				op_add(*new_timer(slot), random_expiry());
			break;
		}
		case 15:
			if (t.periodic)
				t.p.period = src.byte() % 4 ? random_period() : 0;
			break;
		default:
			break;
		}
	}

	// Every timer goes idle at once, none fires again, arming is refused,
	// and the wheel is freed when tw_advance returns.
	void destroy_in_callback(timer &t)
	{
		tw_wheel_destroy(w);
		for (timer *o : timers)
			if (o) {
				TWH_REQUIRE(*this, !tw_pending(&o->p.timer), "timer %d pending after destroy", o->id);
				model_disarm(*o);
			}
		TWH_REQUIRE(*this, tw_add(w, &t.p.timer, now) == -EINVAL, "tw_add on a dying wheel");
		TWH_REQUIRE(*this, tw_mod(w, &t.p.timer, now) == -EINVAL, "tw_mod on a dying wheel");
		TWH_REQUIRE(*this, tw_del(w, &t.p.timer) == 0, "tw_del on a dying wheel");
		TWH_REQUIRE(*this, !tw_pending(&t.p.timer), "armed on a dying wheel");
		dying = true;
	}

	void op_foreign(timer &t)
	{
		tw_stats before;
		tw_get_stats(other, &before);
		int want_add = t.armed ? -EBUSY : 0;
		int r = tw_add(other, &t.p.timer, now);
		TWH_REQUIRE(*this, r == want_add, "foreign add gave %d", r);
		if (!t.armed) {
			// It was idle, so the other wheel took it: give it back.
			TWH_REQUIRE(*this, tw_del(other, &t.p.timer) == 1, "del from the other wheel");
			return;
		}
		unsigned level, slot;
		TWH_REQUIRE(*this, tw_mod(other, &t.p.timer, now) == -EINVAL, "foreign mod accepted");
		TWH_REQUIRE(*this, tw_del(other, &t.p.timer) == -EINVAL, "foreign del accepted");
		TWH_REQUIRE(*this, tw_timer_bucket(other, &t.p.timer, &level, &slot) == -EINVAL, "foreign bucket");
		TWH_REQUIRE(*this, tw_pending(&t.p.timer) && t.p.timer.expires == t.expires, "foreign call changed it");
		tw_stats after;
		tw_get_stats(other, &after);
		TWH_REQUIRE(*this, memcmp(&before, &after, sizeof(after)) == 0, "foreign calls changed the other wheel");
	}

	void op_forward(timer &t)
	{
		if (t.armed) {
			TWH_REQUIRE(*this, tw_forward(&t.p.timer, now, tick) == 0, "tw_forward moved a pending timer");
			return;
		}
		uint64_t period = random_period();
		uint64_t at = random_expiry();
		uint64_t e = t.p.timer.expires;
		uint64_t n, want = tw_model_forward(e, at, period, &n);
		uint64_t r = tw_forward(&t.p.timer, at, period);
		TWH_REQUIRE(*this, r == n && t.p.timer.expires == want, "tw_forward(%llu, %llu, %llu) = %llu -> %llu",
			    (unsigned long long)e, (unsigned long long)at, (unsigned long long)period,
			    (unsigned long long)r, (unsigned long long)t.p.timer.expires);
		t.expires = want;
	}

	// A backend detaches, the program goes on without one, another attaches:
	// the new hook, which reads tw_next_expiry() when it is installed, must
	// hear of every timer earlier than that from then on.
	void toggle_hook()
	{
		if (hooked) {
			TWH_REQUIRE(*this, tw_set_notify(w, NULL, NULL) == 0, "removing the hook");
			hooked = false;
			return;
		}
		TWH_REQUIRE(*this, tw_set_notify(w, on_notify, this) == 0, "installing the hook again");
		hooked = true;
		notified = tw_next_expiry(w);
		told_empty = armed.empty();
	}

	void step()
	{
		unsigned op = src.byte() % 20;
		size_t slot = src.below(timers.size());
		if (op <= 8 || op == 14 || (op >= 16 && op <= 18))
			step_timer(op, slot);
		else
			step_wheel(op);
		ops++;
		verify(ops % opt.check_every == 0);
	}

	// An operation on the timer in `slot`.
	void step_timer(unsigned op, size_t slot)
	{
		switch (op) {
		case 0: case 1: case 2: case 3:
			op_add(*get_or_new(slot), random_expiry());
			break;
		case 4: case 5:
			op_mod(*get_or_new(slot), random_expiry());
			break;
		case 6: {
			timer &t = *get_or_new(slot);
			op_mod(t, nearby_expiry(t));
			break;
		}
		case 7: case 8:
			if (timers[slot])
				op_del(*timers[slot]);
			break;
		case 14:
			if (timers[slot])
				free_timer(timers[slot]);
			else
				new_timer(slot);
			break;
		case 16:
			if (timers[slot])
				op_foreign(*timers[slot]);
			break;
		case 17:
			if (timers[slot])
				op_forward(*timers[slot]);
			break;
		default:
			if (timers[slot] && timers[slot]->periodic)
				timers[slot]->p.period = src.byte() % 8 ? random_period() : 0;
			break;
		}
	}

	// Advances small, to the next expiry, huge and backwards; a new wheel;
	// the dump; the hook off and on.
	void step_wheel(unsigned op)
	{
		switch (op) {
		case 9: case 10:
			op_advance(sat_add(now, src.below(sat_mul(3, tick))));
			break;
		case 11: {
			uint64_t next = tw_next_expiry(w);
			op_advance(next == UINT64_MAX ? sat_add(now, tick) : next);
			break;
		}
		case 12:
			op_advance(src.byte() % 8 ? sat_add(now, src.u64() >> (src.byte() % 64)) : UINT64_MAX);
			break;
		case 13:
			op_advance(now ? now - 1 - src.below(now) : 0);
			break;
		case 15:
			if (opt.rewheel && src.byte() % 4 == 0)
				new_wheel_from_input();
			else
				op_advance(sat_add(now, sat_mul(tick, src.byte())));
			break;
		default:
			if (devnull) {
				uint8_t b = src.byte();
				if (b % 8 == 0)
					TWH_REQUIRE(*this, tw_dump(w, devnull, src.byte() & 1) == 0, "tw_dump");
				else if (b % 8 == 1)
					toggle_hook();
			}
			break;
		}
	}

	// What must hold between calls. The cheap part after every call.
	void verify(bool full)
	{
		TWH_REQUIRE(*this, tw_count(w) == armed.size(), "tw_count %zu, model %zu", tw_count(w), armed.size());
		TWH_REQUIRE(*this, tw_now(w) == now, "tw_now");
		uint64_t next = tw_next_expiry(w);
		TWH_REQUIRE(*this, !hooked || told_empty == armed.empty(),
			    "the hook was last told the wheel is %s, it holds %zu timers", told_empty ? "empty" : "not empty",
			    armed.size());
		if (!armed.empty()) {
			// The earliest window to close: the wheel must wake by then.
			uint64_t first = fire_ns(closing.begin()->first);
			TWH_REQUIRE(*this, next <= first, "next expiry %llu is after the first firing %llu",
				    (unsigned long long)next, (unsigned long long)first);
			TWH_REQUIRE(*this, !hooked || notified <= first, "the hook was told %llu, the first timer fires at %llu",
				    (unsigned long long)notified, (unsigned long long)first);
			if (armed.begin()->first == 0)
				TWH_REQUIRE(*this, next == now, "a due timer, but next expiry %llu", (unsigned long long)next);
		} else {
			TWH_REQUIRE(*this, next == UINT64_MAX, "empty, but next expiry %llu", (unsigned long long)next);
		}
		tw_stats s;
		TWH_REQUIRE(*this, tw_get_stats(w, &s) == 0, "stats");
		TWH_REQUIRE(*this,
			    s.armed == stats.armed && s.fired == stats.fired && s.cancelled == stats.cancelled &&
				    s.advances == stats.advances && s.idle_advances == stats.idle_advances &&
				    s.notifies == hook_calls,
			    "stats: armed %llu/%llu fired %llu/%llu cancelled %llu/%llu advances %llu/%llu",
			    (unsigned long long)s.armed, (unsigned long long)stats.armed,
			    (unsigned long long)s.fired, (unsigned long long)stats.fired,
			    (unsigned long long)s.cancelled, (unsigned long long)stats.cancelled,
			    (unsigned long long)s.advances, (unsigned long long)stats.advances);
		if (full)
			verify_full();
	}

	// tw_check, and every timer's state against the model's.
	void verify_full()
	{
		int r = tw_check(w);
		TWH_REQUIRE(*this, r == 0, "tw_check = %d", r);
		for (timer *t : timers) {
			if (!t)
				continue;
			TWH_REQUIRE(*this, tw_pending(&t->p.timer) == t->armed, "timer %d: pending %d, model %d", t->id,
				    tw_pending(&t->p.timer), t->armed);
			unsigned level = 0, slot = 0;
			int b = tw_timer_bucket(w, &t->p.timer, &level, &slot);
			int want = !t->armed ? -ENOENT : t->pos->first == 0 ? 1 : 0;
			TWH_REQUIRE(*this, b == want, "timer %d: bucket %d, model %d", t->id, b, want);
			if (t->armed)
				TWH_REQUIRE(*this, t->p.timer.expires == t->expires, "timer %d: expires %llu, model %llu",
					    t->id, (unsigned long long)t->p.timer.expires,
					    (unsigned long long)t->expires);
		}
	}

	// Everything armed fires by the end of time: nothing is ever lost.
	void drain()
	{
		quiet = true;
		op_advance(UINT64_MAX);
		for (timer *t : timers)
			if (t && t->periodic)
				op_del(*t);
		op_advance(UINT64_MAX);
		TWH_REQUIRE(*this, armed.empty() && tw_count(w) == 0, "%zu timers left after the end of time",
			    armed.size());
		verify(true);
		quiet = false;
	}
};

inline void diverged(const harness &h, const char *file, int line, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	fprintf(stderr, "\nDIVERGENCE at %s:%d: ", file, line);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, "\n  tick %llu slot_bits %u now %llu, %zu armed, op %llu\n", (unsigned long long)h.tick,
		h.slot_bits, (unsigned long long)h.now, h.armed.size(), (unsigned long long)h.ops);
	if (h.w)
		tw_dump(h.w, stderr, true);
	abort();
}

} // namespace twh

#endif
