/* SPDX-License-Identifier: MIT */
/* The version, three ways: the header's macros, the library's functions and
 * the build's project version (TW_PROJECT_VERSION, from meson.build) agree. */
#include "common.h"

static void test_version(void **state)
{
	char macros[32];

	(void)state;
	assert_int_equal(tw_version(), TW_VERSION_HEX);
	assert_int_equal(TW_VERSION_HEX >> 16, TW_VERSION_MAJOR);
	assert_int_equal(TW_VERSION_HEX >> 8 & 0xff, TW_VERSION_MINOR);
	assert_int_equal(TW_VERSION_HEX & 0xff, TW_VERSION_PATCH);
	snprintf(macros, sizeof(macros), "%d.%d.%d", TW_VERSION_MAJOR, TW_VERSION_MINOR, TW_VERSION_PATCH);
	assert_string_equal(tw_version_string(), macros);
	assert_string_equal(tw_version_string(), TW_PROJECT_VERSION);
}

int main(void)
{
	const struct CMUnitTest tests[] = { cmocka_unit_test(test_version) };
	return cmocka_run_group_tests(tests, NULL, NULL);
}
