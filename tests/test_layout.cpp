// SPDX-License-Identifier: MIT
//
// The sizes the header states: struct tw_timer is 40 bytes, and a wheel
// with the defaults (1 ms tick, 64 slots per level: 8 levels) is one
// allocation of the size the header gives for x86-64. Prints them, so that
// the header's figure has a command behind it (build/tests/test_layout).
extern "C" {
#include "common.h"
}
#include "../src/wheel.hpp"

namespace {

void test_sizes(void **)
{
	size_t wheel = tw_wheel::bytes(8, 6);
	fprintf(stderr, "# struct tw_timer %zu bytes, slot %zu bytes, default wheel %zu bytes\n", sizeof(tw_timer),
		sizeof(tw::slot), wheel);
	// The header's size for each data model: LP64 and LLP64 40 bytes;
	// ILP32 28, or 32 where a struct aligns uint64_t to 8 bytes.
	struct probe {
		char c;
		uint64_t x;
	};
	size_t want = sizeof(void *) == 8 ? 40 : offsetof(probe, x) == 8 ? 32 : 28;
	assert_int_equal(sizeof(tw_timer), want);
#if defined(__x86_64__)
	assert_int_equal(wheel, 26456);
#endif
	// The defaults need 8 levels: 2^64 ns is 45 bits of 1 ms ticks.
	tw_wheel *w;
	assert_int_equal(tw_wheel_create(&w, nullptr, 0), 0);
	assert_int_equal(w->geo.levels, 8);
	assert_int_equal(w->geo.slot_bits, 6);
	tw_wheel_destroy(w);
}

} // namespace

int main()
{
	const CMUnitTest tests[] = {
		cmocka_unit_test(test_sizes),
	};
	return cmocka_run_group_tests(tests, nullptr, nullptr);
}
