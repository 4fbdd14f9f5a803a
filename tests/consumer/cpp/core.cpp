// SPDX-License-Identifier: MIT
//
// A C++17 program using only <timerwheel.hpp> from the installed core, as
// a new user would write it. The clock is simulated, so the outcome is
// exact: three timers fire in order of expiry, none early; one destroyed
// while armed never fires.
#include <cstdio>
#include <string>

#include <timerwheel.hpp>

using namespace std::chrono_literals;
namespace tws = timerwheel;

struct job {
	const char *name;
	tws::clock::time_point due;
	std::string *log;
	tws::wheel *w;
	tws::timer timer{[this] {
		if (w->now() < due)
			*log += "(early)";
		*log += name;
	}};
};

int main()
{
	tws::wheel w(tws::clock::time_point(0s));
	if (!w) {
		std::fprintf(stderr, "wheel: %s\n", w.error().message().c_str());
		return 1;
	}
	std::string log;
	job jobs[3] = {{"c", tws::clock::time_point(30ms), &log, &w},
		       {"a", tws::clock::time_point(10ms), &log, &w},
		       {"b", tws::clock::time_point(20ms), &log, &w}};
	for (job &j : jobs)
		if (!j.timer.arm(w, j.due))
			return 1;
	{
		job gone{"x", tws::clock::time_point(15ms), &log, &w};
		if (!gone.timer.arm(w, gone.due))
			return 1;
	} // destroyed armed: cancelled
	while (w.count() > 0)
		if (!w.advance_by(1ms))
			return 1;
	if (log != "abc" || !w.check()) {
		std::fprintf(stderr, "fired: %s\n", log.c_str());
		return 1;
	}
	std::printf("C++ consumer: fired %s in order of expiry, none early\n", log.c_str());
	return 0;
}
