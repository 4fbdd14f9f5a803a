// SPDX-License-Identifier: MIT
//
// <timerwheel.hpp> on a real wheel: every type and rule the header states.
// Built like the library, with -fno-exceptions -fno-rtti.
#include <timerwheel.hpp>

extern "C" {
#include "../common.h"
}

#include <memory>
#include <vector>
#include <type_traits>

using namespace std::chrono_literals;
namespace tws = timerwheel;

namespace {

// Timers and requests are registered by address: no copy, no move.
static_assert(!std::is_copy_constructible_v<tws::timer>);
static_assert(!std::is_move_constructible_v<tws::timer>);
static_assert(!std::is_move_assignable_v<tws::timer>);
static_assert(!std::is_move_constructible_v<tws::periodic_timer>);
static_assert(!std::is_move_constructible_v<tws::request>);
// The wheel moves, and does not copy.
static_assert(std::is_nothrow_move_constructible_v<tws::wheel>);
static_assert(std::is_nothrow_move_assignable_v<tws::wheel>);
static_assert(!std::is_copy_constructible_v<tws::wheel>);
// The stated sizes: a timer is a tw_timer, its wheel, two pointers of
// callable and one of dispatch.
static_assert(sizeof(tws::timer) == sizeof(tw_timer) + 4 * sizeof(void *) || sizeof(void *) != 8);
// A periodic timer arms through start() only: arm() would keep the
// 1 ns period a timer has before start() or set_period().
template <class T, class = void>
struct can_arm : std::false_type {};
template <class T>
struct can_arm<T, std::void_t<decltype(std::declval<T &>().arm(std::declval<tws::wheel_ref>(),
								   std::declval<tws::clock::time_point>()))>>
	: std::true_type {};
static_assert(can_arm<tws::timer>::value);
static_assert(!can_arm<tws::periodic_timer>::value);
// A result is the C int, nothing more.
static_assert(sizeof(tws::result) == sizeof(int));

tws::clock::time_point at_ms(long ms) { return tws::clock::time_point(std::chrono::milliseconds(ms)); }

#if defined(__linux__)
static_assert(std::is_same_v<tws::clock, std::chrono::steady_clock>);
#endif
static_assert(tws::clock::is_steady);

// timerwheel::clock (steady_clock on Linux) is CLOCK_MONOTONIC: read
// between two tw_clock_monotonic() readings, it lies between them.
void test_clock(void **)
{
	for (int i = 0; i < 1000; i++) {
		uint64_t a = tw_clock_monotonic();
		uint64_t b = tws::to_ns(tws::clock::now());
		uint64_t c = tw_clock_monotonic();
		uint64_t d = static_cast<uint64_t>(tws::monotonic_clock::now().time_since_epoch().count());
		uint64_t e = tw_clock_monotonic();
		assert_true(a <= b);
		assert_true(b <= c);
		assert_true(c <= d);
		assert_true(d <= e);
	}
}

void test_conversions(void **)
{
	assert_int_equal(tws::to_ns(1ms), 1000000);
	assert_int_equal(tws::to_ns(-5s), 0);
	assert_int_equal(tws::to_ns(std::chrono::duration<long long, std::pico>(1001)), 2); // rounds up
	assert_int_equal(tws::to_ns(std::chrono::duration<double>(1.5e-9)), 2);
	assert_true(tws::to_ns(std::chrono::hours::max()) == UINT64_MAX); // saturates: never
	assert_true(tws::to_time_point(UINT64_MAX) == tws::clock::time_point::max());
	assert_true(tws::to_ns(tws::to_time_point(123456789)) == 123456789);
}

// Narrow counts: the overflow check must not wrap nanoseconds::max() into them.
void test_conversions_narrow(void **)
{
	using std::chrono::duration;
	assert_true(tws::to_ns(duration<int, std::nano>(5)) == 5);
	assert_true(tws::to_ns(duration<int, std::micro>(5)) == 5000);
	assert_true(tws::to_ns(duration<int, std::milli>(5)) == 5000000);
	assert_true(tws::to_ns(duration<int, std::milli>(2100000000)) == 2100000000ull * 1000000); // ~24 days
	assert_true(tws::to_ns(duration<int, std::milli>(INT32_MAX)) == uint64_t(INT32_MAX) * 1000000);
	assert_true(tws::to_ns(duration<int, std::ratio<1>>(INT32_MAX)) == uint64_t(INT32_MAX) * 1000000000);
	assert_true(tws::to_ns(duration<int, std::nano>(INT32_MAX)) == uint64_t(INT32_MAX));
	assert_true(tws::to_ns(duration<int, std::nano>(INT32_MIN)) == 0);
	assert_true(tws::to_ns(duration<short, std::micro>(7)) == 7000);
	assert_true(tws::to_ns(duration<unsigned, std::micro>(5)) == 5000);
	assert_true(tws::to_ns(duration<unsigned, std::nano>(UINT32_MAX)) == UINT32_MAX);
	assert_true(tws::to_ns(duration<unsigned long long, std::nano>(5)) == 5);
	assert_true(tws::to_ns(duration<unsigned long long, std::nano>(UINT64_MAX)) == UINT64_MAX);
	assert_true(tws::to_ns(duration<int64_t, std::nano>(5)) == 5);
	assert_true(tws::to_ns(duration<int64_t, std::nano>(INT64_MAX - 1)) == uint64_t(INT64_MAX - 1));
	assert_true(tws::to_ns(duration<int64_t, std::nano>(INT64_MAX)) == uint64_t(INT64_MAX)); // exact: no rounding
	assert_true(tws::to_ns(duration<int64_t, std::micro>(INT64_MAX / 1000)) == uint64_t(INT64_MAX / 1000) * 1000);
	assert_true(tws::to_ns(duration<int64_t, std::micro>(INT64_MAX / 1000 + 1)) == UINT64_MAX);
	assert_true(tws::to_ns(duration<int64_t, std::micro>(INT64_MAX)) == UINT64_MAX);
	assert_true(tws::to_ns(duration<int64_t, std::milli>(INT64_MIN)) == 0);
	assert_true(tws::to_ns(duration<float, std::milli>(2.5f)) == 2500000);
	assert_true(tws::to_ns(duration<double, std::pico>(1e40)) == UINT64_MAX);
	assert_true(tws::to_ns(duration<double>(1e30)) == UINT64_MAX);
	assert_true(tws::to_ns(duration<double>(-1e30)) == 0);
	static_assert(tws::to_ns(duration<int, std::micro>(5)) == 5000); // constexpr
}

void test_wheel(void **)
{
	tws::wheel w(tws::wheel::config{1ms, 4, 0ns}, at_ms(1000));
	assert_true(static_cast<bool>(w));
	assert_false(static_cast<bool>(w.error()));
	assert_true(w.now() == at_ms(1000));
	assert_true(w.tick() == 1ms);
	assert_true(w.next_expiry() == tws::clock::time_point::max());
	assert_true(w.until_next(at_ms(1000)) == tws::nanoseconds::max());

	// Bad config: an error as a value, no wheel.
	tws::wheel bad(tws::wheel::config{1ms, 7, 0ns}, at_ms(0));
	assert_false(static_cast<bool>(bad));
	assert_true(bad.error() == std::errc::invalid_argument);
	assert_true(bad.advance(at_ms(5)).error() == std::errc::invalid_argument);

	// Move: the timers stay on the same tw_wheel.
	int fired = 0;
	tws::timer t([&fired] { fired++; });
	assert_true(t.arm(w, at_ms(1010)).ok());
	tws::wheel w2(std::move(w));
	assert_false(static_cast<bool>(w));
	assert_int_equal(w2.count(), 1);
	assert_true(w2.next_expiry() == at_ms(1010));
	assert_true(w2.until_next(at_ms(1004)) == 6ms);
	assert_int_equal(w2.advance(at_ms(1009)).value(), 0);
	assert_int_equal(w2.advance_by(1ms).value(), 1);
	assert_int_equal(fired, 1);
	w = std::move(w2);
	assert_true(w.check().ok());
	tw_wheel *raw = w.release();
	tws::wheel adopted(raw);
	assert_true(adopted.native() == raw);
}

void test_timer(void **)
{
	tws::wheel w(at_ms(0));
	int fired = 0;
	tws::timer t([&fired] { fired++; });
	assert_false(t.pending());
	assert_int_equal(t.cancel().value(), 0); // idle: not an error
	assert_true(t.arm(w, at_ms(10)).ok());
	assert_true(t.pending());
	assert_true(t.expiry() == at_ms(10));
	tws::result busy = t.arm(w, at_ms(20));
	assert_false(busy.ok());
	assert_true(busy.error() == std::errc::device_or_resource_busy);
	assert_true(t.expiry() == at_ms(10)); // a failed call changes nothing
	assert_int_equal(t.rearm(w, at_ms(20)).value(), 1);
	assert_int_equal(w.advance(at_ms(19)).value(), 0); // never early
	assert_int_equal(w.advance(at_ms(20)).value(), 1);
	assert_int_equal(fired, 1);
	assert_false(t.pending());
	assert_int_equal(t.rearm(w, at_ms(30)).value(), 0);
	assert_int_equal(t.cancel().value(), 1);
	assert_int_equal(w.advance(at_ms(40)).value(), 0);
	assert_int_equal(fired, 1);

	// Nanosecond calls, and a slack window with durations.
	assert_true(t.arm_ns(w, 50000000).ok());
	assert_int_equal(w.advance_ns(50000000).value(), 1);
	assert_true(t.arm(w, at_ms(100), 63ms).ok());
	assert_true(w.next_expiry() >= at_ms(100) && w.next_expiry() <= at_ms(163));
	assert_int_equal(w.advance(w.next_expiry()).value(), 1);
	assert_int_equal(fired, 3);
	assert_true(t.rearm(w, at_ms(200), 10ms).ok());
	assert_int_equal(w.advance(at_ms(199)).value(), 0);
	assert_int_equal(w.advance(at_ms(210)).value(), 1);

	// A callable replaced while idle.
	int other = 0;
	t.on_fire([&other] { other++; });
	assert_true(t.arm(w, at_ms(300)).ok());
	assert_int_equal(w.advance(at_ms(300)).value(), 1);
	assert_int_equal(other, 1);
	assert_int_equal(fired, 4);
	assert_true(w.check().ok());
}

// A timer without a callable fires as a no-op, one-shot and periodic alike.
void test_no_callable(void **)
{
	tws::wheel w(at_ms(0));
	tws::timer t;
	tws::periodic_timer p;
	assert_true(t.arm(w, at_ms(10)).ok());
	assert_true(p.start(w, at_ms(10), 5ms).ok());
	assert_int_equal(w.advance(at_ms(10)).value(), 2);
	assert_false(t.pending());
	assert_true(p.pending());
	assert_int_equal(w.advance(at_ms(20)).value(), 1); // periods missed are skipped
	int fired = 0;
	p.on_fire([&fired] { fired++; });
	assert_int_equal(w.advance(at_ms(25)).value(), 1);
	assert_int_equal(fired, 1);
	assert_true(w.check().ok());
}

// Relative arms count from clock::now(): never before it.
void test_after(void **)
{
	tws::wheel w(nullptr);
	w = tws::wheel(tws::clock::now());
	int fired = 0;
	tws::timer t([&fired] { fired++; });
	tws::clock::time_point before = tws::clock::now();
	assert_true(t.arm_after(w, 5ms).ok());
	assert_true(t.expiry() >= before + 5ms);
	assert_int_equal(t.rearm_after(w, 2ms).value(), 1);
	while (fired == 0) {
		tws::clock::time_point now = tws::clock::now();
		int n = w.advance(now).value();
		if (n)
			assert_true(now >= before + 2ms);
	}
	assert_int_equal(fired, 1);
}

// Destroyed while armed: cancelled, never called, the wheel sound.
void test_destroy_armed(void **)
{
	tws::wheel w(at_ms(0));
	int fired = 0;
	{
		tws::timer t([&fired] { fired++; });
		assert_true(t.arm(w, at_ms(5)).ok());
		assert_int_equal(w.count(), 1);
	}
	assert_int_equal(w.count(), 0);
	assert_true(w.check().ok());
	assert_int_equal(w.advance(at_ms(10)).value(), 0);
	assert_int_equal(fired, 0);

	// The wheel destroyed first: its timers go idle, and their destructors
	// do not touch the wheel that is gone (ASan and valgrind say so).
	auto t = std::make_unique<tws::timer>([&fired] { fired++; });
	{
		tws::wheel w2(at_ms(0));
		assert_true(t->arm(w2, at_ms(5)).ok());
	}
	assert_false(t->pending());
	assert_int_equal(t->cancel().value(), 0);
	t.reset();
	assert_int_equal(fired, 0);
}

// A timer destroyed armed is cancelled before its callable is destroyed:
// the callable's destructor finds it idle, one-shot and periodic alike.
template <class T>
struct probe {
	T *t;
	int *armed; // armed at the callable's destruction: 1, idle: 0
	probe(T *timer, int *a) noexcept : t(timer), armed(a) {}
	probe(probe &&o) noexcept : t(std::exchange(o.t, nullptr)), armed(o.armed) {}
	~probe()
	{
		if (t)
			*armed = t->pending();
	}
	void operator()() {}
};

void test_destroy_order(void **)
{
	tws::wheel w(at_ms(0));
	int armed = -1;
	{
		tws::timer t;
		t.on_fire(probe<tws::timer>(&t, &armed));
		assert_true(t.arm(w, at_ms(5)).ok());
	}
	assert_int_equal(armed, 0);
	armed = -1;
	{
		tws::periodic_timer p;
		p.on_fire(probe<tws::periodic_timer>(&p, &armed));
		assert_true(p.start(w, at_ms(5), 1ms).ok());
	}
	assert_int_equal(armed, 0);
	assert_int_equal(w.count(), 0);
}

// A callback that destroys the object that owns its timer.
struct session {
	tws::timer idle;
	int *closed;
	explicit session(int *c) : idle([this] { delete this; }), closed(c) {}
	~session() { ++*closed; }
};

void test_callback_destroys_owner(void **)
{
	tws::wheel w(at_ms(0));
	int closed = 0;
	for (int i = 0; i < 100; i++) {
		session *s = new session(&closed);
		assert_true(s->idle.arm(w, at_ms(1 + i % 7)).ok());
	}
	assert_int_equal(w.advance(at_ms(10)).value(), 100);
	assert_int_equal(closed, 100);
	assert_int_equal(w.count(), 0);
	assert_true(w.check().ok());
}

// A callback that destroys another armed timer's owner, due in the same
// advance one tick later (ticks fire in order): the victim's destructor
// cancels it, and it never fires.
void test_callback_destroys_other(void **)
{
	tws::wheel w(at_ms(0));
	int fired = 0;
	auto victim = std::make_unique<tws::timer>([&fired] { fired += 100; });
	tws::timer killer([&] {
		fired++;
		victim.reset();
	});
	assert_true(killer.arm(w, at_ms(3)).ok());
	assert_true(victim->arm(w, at_ms(3) + w.tick()).ok());
	int n = w.advance(at_ms(3) + w.tick()).value();
	assert_int_equal(n, 1);
	assert_int_equal(fired, 1);
	assert_int_equal(w.count(), 0);
	assert_true(w.check().ok());
}

void test_periodic(void **)
{
	tws::wheel w(at_ms(0));
	std::vector<long> at;
	tws::periodic_timer p;
	struct ctx {
		tws::wheel *w;
		std::vector<long> *at;
		tws::periodic_timer *p;
	} c{&w, &at, &p};
	// Two pointers' worth: the context by pointer, and nothing else.
	p.on_fire([&c] {
		c.at->push_back(static_cast<long>(std::chrono::duration_cast<std::chrono::milliseconds>(
							  c.w->now().time_since_epoch())
							  .count()));
		if (c.at->size() == 4)
			(void)c.p->cancel();
	});
	assert_true(p.start(w, at_ms(10), 0ms).error() == std::errc::invalid_argument);
	assert_false(p.pending());
	assert_true(p.start(w, at_ms(10), 10ms).ok());
	assert_true(p.period() == 10ms);
	// A failed start (armed already) changes nothing, not the period either.
	assert_true(p.start(w, at_ms(12), 3ms).error() == std::errc::device_or_resource_busy);
	assert_true(p.start(w, at_ms(12), 3ms, 1ms).error() == std::errc::device_or_resource_busy);
	assert_true(p.period() == 10ms);
	assert_true(p.expiry() == at_ms(10));
	for (long t = 1; t <= 25; t++)
		(void)w.advance(at_ms(t));
	// Fell behind: skips to the next multiple, no burst.
	assert_int_equal(w.advance(at_ms(57)).value(), 1);
	assert_true(p.pending());
	assert_true(p.expiry() == at_ms(60));
	assert_true(p.set_period(5ms).ok());
	(void)w.advance(at_ms(60));
	(void)w.advance(at_ms(65));
	assert_int_equal(at.size(), 4);
	assert_int_equal(at[0], 10);
	assert_int_equal(at[1], 20);
	assert_int_equal(at[2], 57);
	assert_int_equal(at[3], 60);
	assert_false(p.pending());

	// With a window on every firing.
	int n = 0;
	tws::periodic_timer q([&n] { n++; });
	assert_true(q.start(w, at_ms(100), 100ms, 15ms).ok());
	for (long t = 66; t <= 520; t++)
		(void)w.advance(at_ms(t));
	assert_int_equal(n, 5); // windows opening at 100, 200, 300, 400 and 500 ms
	assert_true(w.check().ok());
}

// The intrusive form: two hooks in one class, told apart by their tags.
struct read_tag {};
struct write_tag {};
struct conn : tws::timer_hook<conn, read_tag>, tws::timer_hook<conn, write_tag> {
	int reads = 0, writes = 0;
	void on_timer(read_tag) { reads++; }
	void on_timer(write_tag) { writes++; }
	tws::timer_hook<conn, read_tag> &read_timer() { return *this; }
	tws::timer_hook<conn, write_tag> &write_timer() { return *this; }
};

struct plain : tws::timer_hook<plain> {
	int n = 0;
	void on_timer(tws::default_tag) { n++; }
};

void test_hook(void **)
{
	static_assert(!std::is_move_constructible_v<conn>);
	tws::wheel w(at_ms(0));
	conn c;
	assert_true(c.read_timer().arm(w, at_ms(5)).ok());
	assert_true(c.write_timer().arm(w, at_ms(7)).ok());
	assert_int_equal(w.advance(at_ms(6)).value(), 1);
	assert_int_equal(c.reads, 1);
	assert_int_equal(c.writes, 0);
	assert_int_equal(w.advance(at_ms(7)).value(), 1);
	assert_int_equal(c.writes, 1);
	{
		plain p;
		assert_true(p.arm(w, at_ms(9)).ok());
		assert_int_equal(w.advance(at_ms(9)).value(), 1);
		assert_int_equal(p.n, 1);
		assert_true(p.arm(w, at_ms(20)).ok());
	} // destroyed armed
	assert_int_equal(w.count(), 0);
	assert_true(w.check().ok());
}

// A larger callable in a larger timer; the default one holds two pointers.
void test_storage(void **)
{
	tws::wheel w(at_ms(0));
	long a = 1, b = 2, c = 3, sum = 0;
	tws::basic_timer<4 * sizeof(void *)> t([&a, &b, &c, &sum] { sum = a + b + c; });
	assert_true(t.arm(w, at_ms(1)).ok());
	assert_int_equal(w.advance(at_ms(1)).value(), 1);
	assert_int_equal(sum, 6);
	// Destroying the callable: a capture with a destructor runs it once.
	auto counter = std::make_shared<int>(0);
	{
		tws::timer d([counter] { ++*counter; });
		assert_int_equal(counter.use_count(), 2);
		d.on_fire([counter] { *counter += 10; });
		assert_int_equal(counter.use_count(), 2);
	}
	assert_int_equal(counter.use_count(), 1);
}

} // namespace

int main()
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_clock),
		cmocka_unit_test(test_conversions),
		cmocka_unit_test(test_conversions_narrow),
		cmocka_unit_test(test_wheel),
		cmocka_unit_test(test_timer),
		cmocka_unit_test(test_no_callable),
		cmocka_unit_test(test_after),
		cmocka_unit_test(test_destroy_armed),
		cmocka_unit_test(test_destroy_order),
		cmocka_unit_test(test_callback_destroys_owner),
		cmocka_unit_test(test_callback_destroys_other),
		cmocka_unit_test(test_periodic),
		cmocka_unit_test(test_hook),
		cmocka_unit_test(test_storage),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
