// SPDX-License-Identifier: MIT
//
// What a C++ programmer meets first in <timerwheel.hpp>: each case either
// refused (a compile error, or an error value) or stated, never silent.
#include <timerwheel.hpp>

extern "C" {
#include "../common.h"
}

#include <type_traits>

#include "aborts.hpp"

namespace tws = timerwheel;
using namespace std::chrono_literals;

namespace {

tws::clock::time_point at_ms(long ms) { return tws::clock::time_point(std::chrono::milliseconds(ms)); }

// A wheel is never made by accident: `wheel w;` does not compile. The
// empty wheel is written out, and says what it is.
static_assert(!std::is_default_constructible_v<tws::wheel>);
static_assert(std::is_constructible_v<tws::wheel, std::nullptr_t>);

void test_empty_wheel(void **)
{
	tws::wheel w(nullptr);
	assert_false(static_cast<bool>(w));
	assert_false(static_cast<bool>(w.error()));
	assert_int_equal(w.count(), 0);
	assert_true(w.next_expiry() == tws::clock::time_point::max());
	assert_true(w.advance(at_ms(1)).error() == std::errc::invalid_argument);
	tws::timer t([] {});
	assert_true(t.arm(w, at_ms(1)).error() == std::errc::invalid_argument);
	assert_false(t.pending());
}

// A negative tick or slack is refused, not taken for the default.
void test_config_negative(void **)
{
	tws::wheel tick(tws::wheel::config{-1us, 0, 0ns}, at_ms(0));
	assert_false(static_cast<bool>(tick));
	assert_true(tick.error() == std::errc::invalid_argument);
	tws::wheel slack(tws::wheel::config{1ms, 0, -1ns}, at_ms(0));
	assert_false(static_cast<bool>(slack));
	assert_true(slack.error() == std::errc::invalid_argument);
	tws::wheel::config min{};
	min.tick = tws::nanoseconds::min();
	assert_true(tws::wheel(min, at_ms(0)).error() == std::errc::invalid_argument);
	// Zero is still the default, and a good config still makes a wheel.
	tws::wheel ok(tws::wheel::config{0ns, 0, 0ns}, at_ms(0));
	assert_true(static_cast<bool>(ok));
	assert_true(ok.tick() == std::chrono::nanoseconds(TW_DEFAULT_TICK_NS));
}

// A periodic timer has no period until start() or set_period(): rearm()
// refuses it instead of repeating every nanosecond.
void test_periodic_rearm_unstarted(void **)
{
	tws::wheel w(tws::wheel::config{1ms, 0, 0ns}, at_ms(0));
	int fired = 0;
	tws::periodic_timer p([&fired] { fired++; });
	assert_true(p.period() == 0ns);
	assert_true(p.rearm(w, at_ms(5)).error() == std::errc::invalid_argument);
	assert_true(p.rearm(w, at_ms(5), 1ms).error() == std::errc::invalid_argument);
	assert_true(p.rearm_after(w, 5ms).error() == std::errc::invalid_argument);
	assert_true(p.rearm_ns(w, 5000000).error() == std::errc::invalid_argument);
	assert_false(p.pending());
	assert_int_equal(w.count(), 0);
	// set_period() gives it one, as a result like every other call.
	static_assert(std::is_same_v<decltype(p.set_period(1ms)), tws::result>);
	assert_true(p.set_period(0ms).error() == std::errc::invalid_argument);
	assert_true(p.set_period(-3ms).error() == std::errc::invalid_argument);
	assert_true(p.period() == 0ns);
	assert_true(p.set_period(10ms).ok());
	assert_true(p.rearm(w, at_ms(5)).ok());
	for (long t = 1; t <= 30; t++)
		(void)w.advance(at_ms(t));
	assert_int_equal(fired, 3); // 5, 15, 25
	assert_true(p.expiry() == at_ms(35));
	assert_true(w.check().ok());
}

// The callable constructor takes only what it can call with no argument,
// so traits and overload sets see the truth.
struct takes_int {
	void operator()(int) {}
};
static_assert(!std::is_constructible_v<tws::timer, int>);
static_assert(!std::is_constructible_v<tws::timer, takes_int>);
static_assert(!std::is_constructible_v<tws::periodic_timer, int>);
static_assert(!std::is_constructible_v<tws::periodic_timer, const char *>);
static_assert(std::is_constructible_v<tws::timer, void (*)()>);
static_assert(std::is_constructible_v<tws::periodic_timer, void (*)()>);
static_assert(!std::is_convertible_v<void (*)(), tws::timer>); // explicit

int overload(const tws::timer &) { return 1; }
int overload(int) { return 2; }

void test_callable_constraint(void **)
{
	assert_int_equal(overload(3), 2);
	tws::timer t(+[] {});
	assert_int_equal(overload(t), 1);
}

// A timer armed through native() is destroyed while armed: its destructor
// cannot cancel it on a wheel it never saw, so the program stops there,
// instead of leaving the wheel a dangling timer to fire later.
void test_native_armed(void **)
{
#ifdef TW_TEST_HAVE_ABORTS
	assert_true(aborts([] {
		tws::wheel w(at_ms(0));
		{
			tws::timer t([] {});
			(void)tw_add(w.native(), t.native(), 5000000);
		}
		(void)w.advance(at_ms(10));
	}));
	// Armed through the object, then cancelled through C: nothing to do.
	assert_false(aborts([] {
		tws::wheel w(at_ms(0));
		tws::timer t([] {});
		(void)t.arm(w, at_ms(5));
		(void)tw_del(w.native(), t.native());
	}));
#else
	skip();
#endif
}

} // namespace

// Both using-directives a chrono program writes: no name is ambiguous.
namespace both {
using namespace std::chrono;
using namespace timerwheel;

void test_using_directives(void **)
{
	time_point<system_clock> wall = system_clock::now(); // std::chrono's template
	(void)wall;
	wheel w(wheel::config{}, clock::time_point(1s));
	clock::time_point at(2s);
	nanoseconds slack = 1ms;
	int fired = 0;
	timer t([&fired] { fired++; });
	assert_true(t.arm(w, at, slack).ok());
	assert_true(to_ns(at) == 2000000000);
	assert_int_equal(w.advance(clock::time_point(3s)).value(), 1);
	assert_int_equal(fired, 1);
}
} // namespace both

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_empty_wheel),
		cmocka_unit_test(test_config_negative),
		cmocka_unit_test(test_periodic_rearm_unstarted),
		cmocka_unit_test(test_callable_constraint),
		cmocka_unit_test(test_native_armed),
		cmocka_unit_test(both::test_using_directives),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
