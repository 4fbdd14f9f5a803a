/* SPDX-License-Identifier: MIT
 *
 * The lines a program expects the probes to pass, for probe_args.py: one
 * per probe, in order, its name and its arguments as decimal numbers, "*"
 * for one the program cannot know. expected_open() takes the file named
 * by the program's one argument.
 */
#ifndef TW_TESTS_PROBES_EXPECTED_H
#define TW_TESTS_PROBES_EXPECTED_H

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

static FILE *expected_file;

static void expected_open(int argc, char **argv, const char *prog)
{
	if (argc != 2 || !(expected_file = fopen(argv[1], "w"))) {
		fprintf(stderr, "usage: %s EXPECTED-FILE\n", prog);
		exit(2);
	}
}

static void expect(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vfprintf(expected_file, fmt, ap);
	va_end(ap);
	fputc('\n', expected_file);
	fflush(expected_file);
}

/* A pointer as the number a probe passes. */
static uintmax_t p(const void *x)
{
	return (uintptr_t)x;
}

#endif
