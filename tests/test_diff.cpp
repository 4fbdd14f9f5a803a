// SPDX-License-Identifier: MIT
//
// Differential test: the wheel against a reference model that any reader can
// check by eye, an ordered multimap from firing tick to timer. Random
// operations (add, mod, del, periodic timers, advances by steps from zero to
// huge jumps, and callbacks that re-arm, cancel and arm) run on both; in
// every advance exactly the timers the model says must fire, in tick order,
// and tw_check holds after every step.
//
// Timers with slack have a window of ticks instead of one tick. The model
// does not know which tick the wheel picks for a loop to wake at. It checks
// that each fires inside its window, that all whose window has closed
// fired, that a wake-up (an advance that reaches tw_next_expiry()) fired
// every timer whose window has opened, that the firings of an advance can
// be given nondecreasing ticks in their windows, that tw_next_expiry()
// never lies past the end of the earliest window, and that an advance short
// of tw_next_expiry() fires nothing (it is never later than the earliest
// firing). For exact timers, window and tick are one: exactly the timers the
// model says fire. Re-arms go anywhere, and also near the timer's own
// expiry, earlier or later, into windows or out of them: the moves that
// tw_mod() may make without moving the timer.
//
// Usage: test_diff [operations [check_every]]  (default 1000000 1, or
// TW_DIFF_OPS operations, which valgrind runs use); the soak runs 10^8 or
// more with a sparser check. TW_SEED picks the seed.
#include <map>
#include <vector>

extern "C" {
#include <timerwheel/debug.h>

#include "common.h"
#include "model.h"
}

namespace {

struct geometry {
	uint64_t tick;
	unsigned slot_bits;
	uint64_t slack; // the wheel's default
};

const geometry geometries[] = {
	{ 1000000, 6, 0 }, { 1, 1, 0 },   { 1, 6, 0 },    { 7, 3, 0 },		     { 1000000000, 2, 0 },
	{ 3, 5, 0 },	   { 1000, 4, 0 }, { 999983, 1, 0 }, { 1000000, 6, 1000000000 }, { 7, 3, 100 },
};

enum { N = 256 }; // timers per run: small enough for tw_check after every op

struct slot {
	tw_periodic p; // p.timer is the timer; p.period is 0 for one-shots
	int id;
	bool armed;                                 // the model's view
	uint64_t expires;                           // the model's view, while armed
	uint64_t slack;                             // of the last arm: periodic re-arms keep it
	uint64_t last;                              // the window's last tick (key 0: the next advance)
	std::multimap<uint64_t, int>::iterator pos; // by the window's first tick; valid while armed
};

struct model {
	tw_wheel *w;
	uint64_t tick;
	uint64_t slack; // the wheel's default
	unsigned slot_bits;
	uint64_t now;
	uint64_t limit; // the clock's tick in the advance under way
	bool wake_up;   // the advance under way reaches tw_next_expiry()
	slot timers[N];
	// key: the tick at which the model says the timer fires; timers armed
	// already expired use key 0, "the next advance".
	std::multimap<uint64_t, int> armed;
	// timers the model expects in the advance under way, not yet fired
	std::vector<char> expected;
	uint64_t last_fired_key;
	uint64_t fired_total;
	uint64_t *rng;
	bool in_advance;
	bool draining; // callbacks stop acting on the wheel, so the drain ends
};

model M;

uint64_t round_up_tick(uint64_t e, uint64_t tick)
{
	return e / tick + (e % tick != 0);
}

uint64_t now_tick(uint64_t now, uint64_t tick)
{
	return now == UINT64_MAX ? round_up_tick(UINT64_MAX, tick) : now / tick;
}

void model_arm(slot &s, uint64_t e, uint64_t slack)
{
	uint64_t key = e <= M.now ? 0 : round_up_tick(e, M.tick);
	s.pos = M.armed.emplace(key, s.id);
	s.armed = true;
	s.expires = e;
	s.slack = slack;
	s.last = key ? round_up_tick(tw_model_saturate((tw_model_u128)e + slack), M.tick) : 0;
}

void model_disarm(slot &s)
{
	if (!s.armed)
		return;
	M.armed.erase(s.pos);
	s.armed = false;
	M.expected[s.id] = 0; // a cancelled or re-armed timer must not fire now
}

// Expiries spread over every scale: past, same tick, near, far, and the
// last nanoseconds of 64-bit time.
uint64_t saturating_add(uint64_t a, uint64_t b)
{
	return a > UINT64_MAX - b ? UINT64_MAX : a + b;
}

// Slack: often none, under a tick, a few ticks (so that windows share the
// finest slots with exact timers), a few hundred ticks, any size, the
// largest.
uint64_t random_slack()
{
	uint64_t r = test_rand(M.rng), x = test_rand(M.rng);
	switch (r % 10) {
	case 0:
		return x % M.tick;
	case 1:
		return x % (300 * M.tick);
	case 2:
		return x >> (r >> 8) % 64;
	case 3:
		return UINT64_MAX;
	case 4:
	case 5:
		return x % (70 * M.tick);
	default:
		return 0;
	}
}

uint64_t random_expiry()
{
	uint64_t r = test_rand(M.rng);
	uint64_t base = M.now;
	uint64_t x = test_rand(M.rng);
	switch (r % 8) {
	case 0: { // already expired
		uint64_t back = base < 5 * M.tick ? base : 5 * M.tick;
		return base - (back ? x % back : 0);
	}
	case 1: // within a tick or two
		return saturating_add(base, x % (2 * M.tick));
	case 2:
	case 3:
		return saturating_add(base, x % (100 * M.tick));
	case 4:
		return saturating_add(base, x % (uint64_t{1} << 20) * M.tick);
	case 5: // anywhere up to the end of time
		return base + (UINT64_MAX - base ? x % (UINT64_MAX - base) : 0);
	case 6: // the last ticks of 64-bit time
		return UINT64_MAX - x % (3 * M.tick);
	default:
		return saturating_add(base, x % (uint64_t{1} << (r % 60)));
	}
}

// A re-arm near the timer's own expiry (if armed), earlier or later by up
// to a few ticks or a few levels' spans.
uint64_t nearby_expiry(const slot &s)
{
	if (!s.armed)
		return random_expiry();
	uint64_t r = test_rand(M.rng);
	uint64_t scale = M.tick > UINT64_MAX >> (r % 24) ? UINT64_MAX : M.tick << (r % 24);
	uint64_t d = test_rand(M.rng) % scale;
	uint64_t e = r >> 8 & 1 ? (s.expires > d ? s.expires - d : 0) : saturating_add(s.expires, d);
	// Often on a boundary of 2^k ticks, where a bucket of some level
	// starts: a window that opens there opens at that bucket's cascade.
	if (r >> 9 & 1) {
		unsigned k = M.slot_bits * (1 + (r >> 10) % 4);
		uint64_t grid = M.tick > UINT64_MAX >> k ? M.tick : M.tick << k;
		e = e / grid * grid;
	}
	return e;
}

// A firing the model allows: armed, its window open, in a wake-up (an
// advance short of tw_next_expiry() fires nothing), and in tick order
// within the advance (key 0, already expired, comes first): the earliest
// tick in its window not before the last firing's must still be in its
// window.
void check_firing(slot &s, const tw_timer *t)
{
	assert_true(M.in_advance);
	assert_true(s.armed);
	assert_true(s.pos->first <= M.limit); // its window has opened
	if (!M.wake_up)
		fail_msg("timer %d (expires %llu, slack %llu) fired in an advance to %llu, short of tw_next_expiry()", s.id,
			 (unsigned long long)s.expires, (unsigned long long)s.slack, (unsigned long long)M.now);
	M.expected[s.id] = 0;
	M.fired_total++;
	assert_true(t->expires <= M.now || s.p.period);
	uint64_t key = s.pos->first > M.last_fired_key ? s.pos->first : M.last_fired_key;
	assert_true(key <= s.last);
	M.last_fired_key = key;
	M.armed.erase(s.pos);
	s.armed = false;
}

// A periodic timer was re-armed before its callback, at the first multiple
// of its period after now (the model's own arithmetic), unless no such time
// fits in 64 bits: then it is idle and keeps the expiry it fired for.
void check_periodic(slot &s, const tw_timer *t)
{
	uint64_t n, e = s.p.period ? tw_model_forward(s.expires, M.now, s.p.period, &n) : 0;
	if (e > M.now) {
		assert_true(tw_pending(t));
		assert_int_equal(t->expires, e);
		model_arm(s, e, s.slack);
	} else {
		assert_false(tw_pending(t));
		assert_int_equal(t->expires, s.expires);
	}
}

// Callbacks that act on the wheel, as real programs do.
void callback_action(slot &s, tw_timer *t)
{
	uint64_t r = test_rand(M.rng) % 16;
	if (r == 0 && !s.p.period) {
		uint64_t e = random_expiry();
		assert_int_equal(tw_mod(M.w, t, e), 0);
		model_arm(s, e, M.slack);
	} else if (r == 1) {
		slot &o = M.timers[test_rand(M.rng) % N];
		assert_int_equal(tw_del(M.w, &o.p.timer), o.armed ? 1 : 0);
		model_disarm(o);
	} else if (r == 2) {
		slot &o = M.timers[test_rand(M.rng) % N];
		uint64_t e = test_rand(M.rng) % 2 ? nearby_expiry(o) : random_expiry();
		uint64_t slack = random_slack();
		assert_int_equal(tw_mod_range(M.w, &o.p.timer, e, slack), o.armed ? 1 : 0);
		model_disarm(o);
		model_arm(o, e, slack);
	} else if (r == 3) {
		assert_int_equal(tw_advance(M.w, M.now + 1), -EBUSY);
	}
}

void on_fire(tw_timer *t)
{
	slot &s = *tw_container_of(tw_container_of(t, tw_periodic, timer), slot, p);
	check_firing(s, t);
	check_periodic(s, t);
	if (!M.draining)
		callback_action(s, t);
}

// A loop that sleeps until tw_next_expiry() is served: it is no later than
// the end of any armed timer's window (its last tick's start, saturated;
// now for a timer armed already expired).
void check_next_expiry()
{
	uint64_t latest = UINT64_MAX;
	for (const auto &a : M.armed) {
		const slot &s = M.timers[a.second];
		uint64_t end = a.first == 0 ? M.now : tw_model_saturate((tw_model_u128)s.last * M.tick);
		if (end < latest)
			latest = end;
	}
	assert_true(tw_next_expiry(M.w) <= latest);
}

void do_advance(uint64_t to)
{
	if (to < M.now) {
		assert_int_equal(tw_advance(M.w, to), 0);
		return;
	}
	bool wake_up = to >= tw_next_expiry(M.w); // checked against the windows after each advance
	M.wake_up = wake_up;
	M.now = to;
	M.limit = now_tick(to, M.tick);
	size_t expect = 0; // windows opened: at most these fire
	for (auto it = M.armed.begin(); it != M.armed.end() && it->first <= M.limit; ++it) {
		if (wake_up || M.timers[it->second].last <= M.limit)
			M.expected[it->second] = 1; // and these must: a wake-up, or closed
		expect++;
	}
	M.last_fired_key = 0;
	M.in_advance = true;
	uint64_t before = M.fired_total;
	int fired = tw_advance(M.w, to);
	M.in_advance = false;
	assert_true(fired >= 0);
	assert_int_equal((uint64_t)fired, M.fired_total - before);
	for (int i = 0; i < N; i++)
		if (M.expected[i]) {
			unsigned level = 0, slot = 0;
			int where = tw_timer_bucket(M.w, &M.timers[i].p.timer, &level, &slot);
			tw_dump(M.w, stderr, false);
			fail_msg("timer %d (expires %llu, key %llu, bucket %d: level %u slot %u, tick %llu) did not "
				 "fire at now %llu",
				 i, (unsigned long long)M.timers[i].p.timer.expires,
				 (unsigned long long)M.timers[i].pos->first, where, level, slot,
				 (unsigned long long)M.tick, (unsigned long long)to);
		}
	assert_true((size_t)fired <= expect); // callbacks may cancel some first
	check_next_expiry();
}

uint64_t random_step()
{
	uint64_t r = test_rand(M.rng);
	uint64_t step;
	switch (r % 10) {
	case 0:
		step = 0;
		break;
	case 1:
	case 2:
	case 3:
		step = test_rand(M.rng) % (3 * M.tick);
		break;
	case 4:
	case 5: {
		uint64_t next = tw_next_expiry(M.w);
		step = next == UINT64_MAX ? M.tick : next - M.now;
		break;
	}
	case 6:
		step = test_rand(M.rng) % (M.tick << 12);
		break;
	case 7: // a huge jump, now and then to the end of time
		step = test_rand(M.rng) >> (r % 8 ? 8 + r % 56 : r % 64);
		break;
	case 8: // backwards: a no-op
		return M.now ? M.now - 1 - test_rand(M.rng) % M.now : 0;
	default:
		step = test_rand(M.rng) % (64 * M.tick);
		break;
	}
	return saturating_add(M.now, step);
}

// A new wheel of geometry g at a random time, and the model's timers, one
// in eight periodic.
void start_run(const geometry &g, uint64_t *rng)
{
	tw_config cfg = { g.tick, g.slot_bits, g.slack };
	M.tick = g.tick;
	M.slack = g.slack;
	M.slot_bits = g.slot_bits;
	M.now = test_rand(rng) >> (test_rand(rng) % 64);
	M.rng = rng;
	M.armed.clear();
	M.expected.assign(N, 0);
	M.draining = false;
	assert_int_equal(tw_wheel_create(&M.w, &cfg, M.now), 0);
	for (int i = 0; i < N; i++) {
		slot &s = M.timers[i];
		s.id = i;
		s.armed = false;
		if (i % 8 == 0)
			tw_periodic_init(&s.p, on_fire, 1 + test_rand(rng) % (1000 * g.tick));
		else {
			tw_timer_init(&s.p.timer, on_fire);
			s.p.period = 0;
		}
	}
}

// tw_add() or tw_add_range() (-EBUSY if armed), or tw_mod() or
// tw_mod_range(), anywhere or near the timer's own expiry.
void arm_op(slot &s, uint64_t r)
{
	bool range = r % 10 >= 6;
	uint64_t slack = range ? random_slack() : M.slack;
	if (r < 30) {
		uint64_t e = random_expiry();
		int got = range ? tw_add_range(M.w, &s.p.timer, e, slack) : tw_add(M.w, &s.p.timer, e);
		assert_int_equal(got, s.armed ? -EBUSY : 0);
		if (!s.armed)
			model_arm(s, e, slack);
		return;
	}
	uint64_t e = r % 2 ? nearby_expiry(s) : random_expiry();
	int got = range ? tw_mod_range(M.w, &s.p.timer, e, slack) : tw_mod(M.w, &s.p.timer, e);
	assert_int_equal(got, s.armed ? 1 : 0);
	model_disarm(s);
	model_arm(s, e, slack);
}

// Drain: everything armed fires by the end of time, nothing is lost.
// Callbacks stop re-arming anything; periodic timers stop by themselves at
// UINT64_MAX, where no later time exists: two advances there fire
// everything.
void finish_run()
{
	M.draining = true;
	do_advance(UINT64_MAX);
	do_advance(UINT64_MAX);
	assert_true(M.armed.empty());
	assert_int_equal(tw_count(M.w), 0);
	assert_int_equal(tw_check(M.w), 0);
	tw_wheel_destroy(M.w);
}

void run(const geometry &g, uint64_t ops, uint64_t check_every, uint64_t *rng)
{
	start_run(g, rng);
	for (uint64_t op = 0; op < ops; op++) {
		slot &s = M.timers[test_rand(rng) % N];
		uint64_t r = test_rand(rng) % 100;
		if (r < 50) {
			arm_op(s, r);
		} else if (r < 65) {
			assert_int_equal(tw_del(M.w, &s.p.timer), s.armed ? 1 : 0);
			model_disarm(s);
		} else {
			do_advance(random_step());
		}
		assert_int_equal(tw_count(M.w), M.armed.size());
		if (op % check_every == 0)
			assert_int_equal(tw_check(M.w), 0);
	}
	finish_run();
}

uint64_t total_ops = 1000000;
uint64_t check_every = 1;

void test_differential(void **)
{
	uint64_t rng = test_seed();
	const size_t ngeo = sizeof(geometries) / sizeof(geometries[0]);
	// Short runs, each on a new wheel at a random time: a run's huge jumps
	// soon take its clock to the end of time, where every expiry is past.
	const uint64_t epoch = 4096;
	for (uint64_t done = 0, g = 0; done < total_ops; done += epoch, g = (g + 1) % ngeo)
		run(geometries[g], total_ops - done < epoch ? total_ops - done : epoch, check_every, &rng);
	fprintf(stderr, "# %llu operations, %llu timers fired, against the model: no divergence\n",
		(unsigned long long)total_ops, (unsigned long long)M.fired_total);
}

} // namespace

int main(int argc, char **argv)
{
	if (const char *ops = getenv("TW_DIFF_OPS"))
		total_ops = strtoull(ops, nullptr, 0);
	if (argc > 1)
		total_ops = strtoull(argv[1], nullptr, 0);
	if (argc > 2)
		check_every = strtoull(argv[2], nullptr, 0);
	if (check_every == 0)
		check_every = 1;
	const CMUnitTest tests[] = {
		cmocka_unit_test(test_differential),
	};
	return cmocka_run_group_tests(tests, nullptr, nullptr);
}
