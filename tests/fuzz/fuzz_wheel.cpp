// SPDX-License-Identifier: MIT
//
// libFuzzer target: the input's bytes choose a wheel geometry and then a
// sequence of calls (add, mod, del, advances small and huge, periodic
// timers, callbacks that cancel, re-arm and free), each checked against the
// reference model and followed by tw_check. See harness.hpp.
#include <timerwheel/debug.h>

#include "harness.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	twh::harness h;
	twh::options o;
	o.ntimers = 16;
	h.src.data = data;
	h.src.size = size;
	h.start(o);
	h.new_wheel_from_input();
	while (!h.src.exhausted())
		h.step();
	h.drain();
	h.finish();
	return 0;
}
