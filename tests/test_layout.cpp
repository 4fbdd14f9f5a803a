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
	assert_int_equal(w->geo.levels(), 8);
	assert_int_equal(w->geo.slots_per_level(), 64);
	tw_wheel_destroy(w);
}

// The parts an arm, a cancel and a re-arm read lie ahead of the geometry's
// tables and the lateness histogram; the lifetime, the clock and the policy
// share the first cache line, which every arm and advance reads.
void test_hot_parts(void **)
{
	tw_wheel *w;
	assert_int_equal(tw_wheel_create(&w, nullptr, 0), 0);
	const char *base = reinterpret_cast<const char *>(w);
	auto end = [base](const void *part, size_t size) { return static_cast<const char *>(part) + size - base; };
	auto at = [base](const void *part) { return static_cast<const char *>(part) - base; };
	fprintf(stderr, "# lifetime %td, clock %td, policy %td, buckets %td, hook %td, due %td, counts %td, geometry %td\n",
		at(static_cast<tw::lifetime *>(w)), at(&w->clock), at(&w->policy), at(&w->buckets), at(&w->hook),
		at(&w->due), at(&w->counts), at(&w->geo));
	assert_true(end(static_cast<tw::lifetime *>(w), sizeof(tw::lifetime)) <= 64);
	assert_true(end(&w->clock, sizeof w->clock) <= 64);
	assert_true(end(&w->policy, sizeof w->policy) <= 64);
	ptrdiff_t geo = at(&w->geo);
	assert_true(end(&w->buckets, sizeof w->buckets) <= geo);
	assert_true(end(&w->hook, sizeof w->hook) <= geo);
	assert_true(end(&w->due, sizeof w->due) <= geo);
	assert_true(end(&w->counts, sizeof w->counts) <= geo);
	assert_true(at(&w->lateness) > geo);
	tw_wheel_destroy(w);
}

} // namespace

int main()
{
	const CMUnitTest tests[] = {
		cmocka_unit_test(test_sizes),
		cmocka_unit_test(test_hot_parts),
	};
	return cmocka_run_group_tests(tests, nullptr, nullptr);
}
