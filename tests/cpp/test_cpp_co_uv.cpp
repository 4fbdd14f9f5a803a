// SPDX-License-Identifier: MIT
//
// co_await on a wheel a backend drives: a coroutine sleeps three times on
// a real libuv loop, resumed never early; the loop ends when it is done.
#include <timerwheel/uv.hpp>

extern "C" {
#include "../common.h"
}

#include <cstdlib>

using namespace std::chrono_literals;
namespace tws = timerwheel;

namespace {

struct task {
	struct promise_type {
		task get_return_object() { return {}; }
		std::suspend_never initial_suspend() noexcept { return {}; }
		std::suspend_never final_suspend() noexcept { return {}; } // the frame frees itself
		void return_void() noexcept {}
		void unhandled_exception() noexcept { std::abort(); }
	};
};

task naps(tws::wheel_ref w, int *done, int *early)
{
	for (auto d : {2ms, 5ms, 1ms}) {
		tws::clock::time_point due = tws::clock::now() + d;
		tws::result r = co_await tws::sleep_until(w, due);
		if (!r || tws::clock::now() < due)
			++*early;
	}
	(void)co_await tws::sleep_for(w, 3ms);
	++*done;
}

void test_co_uv(void **)
{
	uv_loop_t loop;
	assert_int_equal(uv_loop_init(&loop), 0);
	int done = 0, early = 0;
	{
		tws::uv_wheel b(&loop, tws::wheel::config{});
		assert_true(static_cast<bool>(b));
		naps(b.get(), &done, &early);
		naps(b.get(), &done, &early);
		// Armed timers hold the loop: it returns once both are done.
		assert_int_equal(uv_run(&loop, UV_RUN_DEFAULT), 0);
	}
	assert_int_equal(done, 2);
	assert_int_equal(early, 0);
	assert_int_equal(uv_run(&loop, UV_RUN_NOWAIT), 0);
	assert_int_equal(uv_loop_close(&loop), 0);
}

} // namespace

int main()
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_co_uv),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
