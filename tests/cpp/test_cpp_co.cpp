// SPDX-License-Identifier: MIT
//
// The C++20 awaitable of <timerwheel.hpp>: co_await a deadline or a delay
// on a wheel. Resumed never early, once; an error resumes at once; a
// coroutine destroyed while suspended cancels its timer. Built as C++20
// with -fno-exceptions -fno-rtti (tests/cpp/meson.build), by g++ and, in
// the headers test, by clang++.
#include <timerwheel.hpp>

extern "C" {
#include "../common.h"
}

#include <cstdlib>

#ifndef TIMERWHEEL_HAVE_COROUTINES
#error "this compiler has C++20 coroutines: the header must offer the awaitable"
#endif

using namespace std::chrono_literals;
namespace tws = timerwheel;

namespace {

// The smallest coroutine type: starts at once, its frame freed by its owner.
struct task {
	struct promise_type {
		task get_return_object() { return task{std::coroutine_handle<promise_type>::from_promise(*this)}; }
		std::suspend_never initial_suspend() noexcept { return {}; }
		std::suspend_always final_suspend() noexcept { return {}; }
		void return_void() noexcept {}
		void unhandled_exception() noexcept { std::abort(); }
	};
	explicit task(std::coroutine_handle<promise_type> h) : h(h) {}
	task(task &&o) noexcept : h(std::exchange(o.h, {})) {}
	task(const task &) = delete;
	~task()
	{
		if (h)
			h.destroy();
	}
	bool done() const { return h.done(); }
	std::coroutine_handle<promise_type> h;
};

tws::clock::time_point at_ms(long ms) { return tws::clock::time_point(std::chrono::milliseconds(ms)); }

struct log {
	tws::wheel *w;
	long woke[4] = {};
	int n = 0;
	int errors = 0;
};

task sleeper(tws::wheel &w, log &l)
{
	for (long ms : {10L, 25L, 25L}) {
		tws::result r = co_await tws::sleep_until(w, at_ms(ms));
		if (!r)
			l.errors++;
		l.woke[l.n++] = static_cast<long>(
			std::chrono::duration_cast<std::chrono::milliseconds>(w.now().time_since_epoch()).count());
	}
}

void test_sleep_until(void **)
{
	tws::wheel w(at_ms(0));
	log l{&w};
	task t = sleeper(w, l);
	assert_int_equal(w.count(), 1);
	assert_int_equal(w.advance(at_ms(9)).value(), 0); // never early
	assert_int_equal(w.advance(at_ms(10)).value(), 1);
	assert_int_equal(l.n, 1);
	assert_int_equal(w.advance(at_ms(30)).value(), 1);
	assert_int_equal(l.n, 2);
	// The third deadline is past already: it resumes in the next advance.
	assert_int_equal(w.advance(at_ms(30)).value(), 1);
	assert_true(t.done());
	assert_int_equal(l.woke[0], 10);
	assert_int_equal(l.woke[1], 30);
	assert_int_equal(l.woke[2], 30);
	assert_int_equal(l.errors, 0);
	assert_true(w.check().ok());
}

task sleep_on(tws::wheel_ref w, tws::nanoseconds d, tws::clock::time_point *woke, tws::result *r)
{
	*r = co_await tws::sleep_for(w, d);
	*woke = tws::clock::now();
}

void test_sleep_for_real_clock(void **)
{
	tws::wheel w(nullptr);
	tws::clock::time_point start = tws::clock::now(), woke{};
	tws::result r(1);
	w = tws::wheel(start);
	task t = sleep_on(w, 3ms, &woke, &r);
	while (!t.done())
		(void)w.advance();
	assert_true(r.ok());
	assert_true(woke >= start + 3ms);
}

void test_destroyed_while_suspended(void **)
{
	tws::wheel w(at_ms(0));
	tws::clock::time_point woke{};
	tws::result r(1);
	{
		task t = sleep_on(w, 1h, &woke, &r);
		assert_int_equal(w.count(), 1);
	} // the frame goes, and its timer with it
	assert_int_equal(w.count(), 0);
	assert_true(w.check().ok());
	assert_true(woke == tws::clock::time_point{});
}

void test_error(void **)
{
	tws::wheel w(nullptr); // no wheel: EINVAL, resumed at once
	tws::clock::time_point woke{};
	tws::result r(1);
	task t = sleep_on(w, 1ms, &woke, &r);
	assert_true(t.done());
	assert_true(r.error() == std::errc::invalid_argument);
}

} // namespace

int main()
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_sleep_until),
		cmocka_unit_test(test_sleep_for_real_clock),
		cmocka_unit_test(test_destroyed_while_suspended),
		cmocka_unit_test(test_error),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
