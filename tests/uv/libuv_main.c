/* SPDX-License-Identifier: MIT */
/*
 * main() for libuv's own test runner (test/runner.c, runner-unix.c) over
 * the cases of libuv's timer-related test files, built unchanged with
 * <timerwheel/uv_port.h> by tests/uv/libuv-tests. As libuv's run-tests.c,
 * without its helpers for processes and pipes, which those files do not
 * use, and without its refusal to run as root (CI containers are root).
 *
 *   libuv_tests            every case, each in a child process, TAP output
 *   libuv_tests CASE       one case, in this process
 */
#include <stdio.h>

#include "uv.h"
#include "runner.h"
#include "task.h"

#include "test-list.h" /* generated: the cases of the files built */

int main(int argc, char **argv)
{
	platform_init(argc, argv);
	argv = uv_setup_args(argc, argv);
	switch (argc) {
	case 1:
		return run_tests(0);
	case 2:
		return run_test_part(argv[1], argv[1]);
	case 3:
		return run_test_part(argv[1], argv[2]);
	default:
		fprintf(stderr, "usage: %s [CASE]\n", argv[0]);
		return 2;
	}
}
