// SPDX-License-Identifier: MIT
//
// timerwheel::uv_wheel on a real libuv loop and the real clock: timers fire
// none early; the handle is released in its close callback, so one more
// loop turn after closing leaves the loop empty (uv_loop_close() succeeds);
// a wheel of its own goes with it, a wheel attached stays the program's
// with its timers armed; closing from a timer callback is safe.
#include <timerwheel/uv.hpp>

#include "stamp.hpp"

extern "C" {
#include "../common.h"
}

using namespace std::chrono_literals;
namespace tws = timerwheel;

namespace {

void close_loop(uv_loop_t *loop)
{
	assert_int_equal(uv_run(loop, UV_RUN_NOWAIT), 0);
	assert_int_equal(uv_loop_close(loop), 0);
}

void test_own_wheel(void **)
{
	uv_loop_t loop;
	assert_int_equal(uv_loop_init(&loop), 0);
	{
		tws::uv_wheel b(&loop, tws::wheel::config{});
		assert_true(static_cast<bool>(b));
		assert_true(b.loop() == &loop);
		stamp s[20];
		for (int i = 0; i < 20; i++)
			assert_true(s[i].arm(b.get(), std::chrono::milliseconds(1 + i % 7)).ok());
		stamp left;
		assert_true(left.arm(b.get(), 1h).ok());
		assert_true(left.t.cancel().value() == 1);
		// The handle holds the loop while timers are armed, not after.
		assert_int_equal(uv_run(&loop, UV_RUN_DEFAULT), 0);
		for (stamp &x : s) {
			assert_int_equal(x.fired, 1);
			assert_int_equal(x.early, 0);
		}
		assert_true(b.stats().wakeups > 0);
		// Closed by its destructor with a timer armed: idle, never called.
		assert_true(left.arm(b.get(), 10ms).ok());
		b.close();
		assert_false(left.t.pending());
		assert_false(static_cast<bool>(b));
	}
	close_loop(&loop);
}

// A negative tick or slack is refused as the core wheel refuses it.
void test_config_negative(void **)
{
	uv_loop_t loop;
	assert_int_equal(uv_loop_init(&loop), 0);
	{
		tws::uv_wheel tick(&loop, tws::wheel::config{-1ms, 0, 0ns});
		assert_false(static_cast<bool>(tick));
		assert_true(tick.error() == std::errc::invalid_argument);
		tws::uv_wheel slack(&loop, tws::wheel::config{1ms, 0, -1us});
		assert_false(static_cast<bool>(slack));
		assert_true(slack.error() == std::errc::invalid_argument);
	}
	close_loop(&loop);
}

void test_attached(void **)
{
	uv_loop_t loop;
	assert_int_equal(uv_loop_init(&loop), 0);
	tws::wheel w(tws::uv_wheel::now());
	stamp a, later;
	{
		tws::uv_wheel b(&loop, w);
		assert_true(static_cast<bool>(b));
		assert_true(b.get().native() == w.native());
		assert_true(a.arm(w, 2ms).ok());
		assert_true(later.arm(w, 1h).ok());
		while (a.fired == 0)
			(void)uv_run(&loop, UV_RUN_ONCE);
		assert_int_equal(a.early, 0);
	} // lets go: the wheel is the program's again, its timer armed
	close_loop(&loop);
	assert_true(later.t.pending());
	assert_int_equal(w.count(), 1);
	assert_int_equal(w.advance(later.due + w.tick()).value(), 1); // E rounded up to a tick
	assert_int_equal(later.fired, 1);
	assert_true(w.check().ok());

	// A failed attach is a value, and frees what it allocated.
	uv_loop_t loop2;
	assert_int_equal(uv_loop_init(&loop2), 0);
	tws::uv_wheel bad(&loop2, w, 0x80u);
	assert_false(static_cast<bool>(bad));
	assert_true(bad.error() == std::errc::invalid_argument);
	close_loop(&loop2);
}

// A timer whose callable closes the backend: no other timer of the wheel
// fires, not even one due in the same wake-up.
void test_close_from_callback(void **)
{
	uv_loop_t loop;
	assert_int_equal(uv_loop_init(&loop), 0);
	tws::uv_wheel b(&loop, tws::wheel::config{});
	int others = 0;
	tws::timer closer([&b] { b = tws::uv_wheel(); });
	tws::timer other([&others] { others++; });
	tws::clock::time_point due = tws::clock::now() + 3ms;
	assert_true(closer.arm(b.get(), due).ok());
	assert_true(other.arm(b.get(), due + 1ms).ok());
	assert_int_equal(uv_run(&loop, UV_RUN_DEFAULT), 0);
	assert_false(static_cast<bool>(b));
	assert_int_equal(others, 0);
	assert_false(other.pending());
	close_loop(&loop);
}

// Moving the owner keeps the one handle.
void test_move(void **)
{
	uv_loop_t loop;
	assert_int_equal(uv_loop_init(&loop), 0);
	tws::uv_wheel a(&loop, tws::wheel::config{});
	tw_uv *h = a.native();
	tws::uv_wheel b(std::move(a));
	assert_false(static_cast<bool>(a));
	assert_true(b.native() == h);
	stamp s;
	assert_true(s.arm(b.get(), 1ms).ok());
	assert_int_equal(uv_run(&loop, UV_RUN_DEFAULT), 0);
	assert_int_equal(s.fired, 1);

	// Moved onto a live one: that one is closed (its handle freed in the
	// next loop turn, which close_loop() checks), the source left empty.
	tws::wheel w(tws::uv_wheel::now());
	tws::uv_wheel c(&loop, w);
	assert_true(static_cast<bool>(c));
	assert_true(s.arm(w, 1h).ok());
	c = std::move(b);
	assert_false(static_cast<bool>(b));
	assert_true(c.native() == h);
	assert_true(s.t.pending()); // an attached wheel stays the program's
	assert_int_equal(s.t.cancel().value(), 1);
	c.close();
	close_loop(&loop);
	assert_true(w.check().ok());
}

} // namespace

int main()
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_own_wheel),
		cmocka_unit_test(test_config_negative),
		cmocka_unit_test(test_attached),
		cmocka_unit_test(test_close_from_callback),
		cmocka_unit_test(test_move),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
