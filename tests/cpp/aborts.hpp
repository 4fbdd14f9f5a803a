// SPDX-License-Identifier: MIT
//
// A death test for the C++ tests: runs a body in a child process and
// tells whether it ended by SIGABRT (POSIX only).
#ifndef TW_TEST_CPP_ABORTS_HPP
#define TW_TEST_CPP_ABORTS_HPP

#if defined(__unix__)
#include <csignal>
#include <cstdio>
#include <sys/wait.h>
#include <unistd.h>

#define TW_TEST_HAVE_ABORTS 1

// Runs @body in a child; true if the child ended by SIGABRT.
template <class F>
bool aborts(F body)
{
	std::fflush(nullptr);
	pid_t pid = fork();
	if (pid == 0) {
		body();
		_exit(0);
	}
	int st = 0;
	if (pid < 0 || waitpid(pid, &st, 0) != pid)
		return false;
	return WIFSIGNALED(st) && WTERMSIG(st) == SIGABRT;
}
#endif

#endif
