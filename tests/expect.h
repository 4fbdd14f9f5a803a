/* SPDX-License-Identifier: MIT */
/* The check of the plain tests that take many thousands of them
 * (test_geometry.cpp, test_parts.cpp, test_list.cpp, test_compiler.cpp):
 * each one counted, the first twenty that fail printed with their
 * condition, so that a run says how much it checked and how much of it was
 * wrong. */
#ifndef TW_TESTS_EXPECT_H
#define TW_TESTS_EXPECT_H

#include <stdio.h>

static unsigned long long checked, wrong;

#define EXPECT(cond, ...)                                        \
	do {                                                     \
		checked++;                                       \
		if (!(cond) && wrong++ < 20) {                   \
			fprintf(stderr, "%s: ", #cond);          \
			fprintf(stderr, __VA_ARGS__);            \
			fputc('\n', stderr);                     \
		}                                                \
	} while (0)

#endif /* TW_TESTS_EXPECT_H */
