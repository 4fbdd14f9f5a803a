// SPDX-License-Identifier: MIT
//
// A timer that counts its firings and the early ones, for the C++ tests
// on a real clock.
#ifndef TW_TEST_CPP_STAMP_HPP
#define TW_TEST_CPP_STAMP_HPP

#include <timerwheel.hpp>

struct stamp {
	timerwheel::timer t;
	timerwheel::clock::time_point due{};
	int fired = 0;
	int early = 0;
	stamp() : t([this] {
		fired++;
		if (timerwheel::clock::now() < due)
			early++;
	}) {}
	timerwheel::result arm(timerwheel::wheel_ref w, timerwheel::nanoseconds d)
	{
		due = timerwheel::clock::now() + d;
		return t.arm(w, due);
	}
};

#endif
