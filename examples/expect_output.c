/* SPDX-License-Identifier: MIT */
/*
 * expect_output: the examples' test runner.
 *
 *   expect_output TEXT... -- PROGRAM [ARGS...]
 *
 * Runs PROGRAM, copies what it prints to our stdout (so the test log shows
 * it), and succeeds only if it exited with 0 and its output contains every
 * TEXT. An exit status of 77 is passed on, which Meson reports as skipped.
 * Written in C rather than as a script so that a test wrapper such as
 * valgrind --trace-children=yes sees the example, not an interpreter.
 */
#define _POSIX_C_SOURCE 200809L

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static char *read_all(int fd, size_t *len)
{
	size_t cap = 65536, n = 0;
	char *buf = malloc(cap + 1);

	while (buf) {
		ssize_t r;

		if (n == cap) {
			char *bigger = realloc(buf, 2 * cap + 1);

			if (!bigger) {
				free(buf);
				return NULL;
			}
			buf = bigger;
			cap *= 2;
		}
		r = read(fd, buf + n, cap - n);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		n += (size_t)r;
	}
	if (buf)
		buf[n] = '\0';
	*len = n;
	return buf;
}

int main(int argc, char **argv)
{
	int sep = 1, fds[2], status, missing = 0;
	size_t len = 0;
	char *out;
	pid_t pid;

	while (sep < argc && strcmp(argv[sep], "--"))
		sep++;
	if (sep + 1 >= argc) {
		fprintf(stderr, "usage: %s TEXT... -- PROGRAM [ARGS...]\n", argv[0]);
		return 2;
	}
	if (pipe(fds) < 0) {
		perror("pipe");
		return 1;
	}
	fflush(stdout);
	pid = fork();
	if (pid < 0) {
		perror("fork");
		return 1;
	}
	if (pid == 0) {
		close(fds[0]);
		if (dup2(fds[1], STDOUT_FILENO) < 0)
			_exit(127);
		close(fds[1]);
		execv(argv[sep + 1], &argv[sep + 1]);
		perror(argv[sep + 1]);
		_exit(127);
	}
	close(fds[1]);
	out = read_all(fds[0], &len);
	close(fds[0]);
	while (waitpid(pid, &status, 0) < 0) {
		if (errno != EINTR) {
			perror("waitpid");
			free(out);
			return 1;
		}
	}
	if (!out) {
		fprintf(stderr, "expect_output: out of memory\n");
		return 1;
	}
	fwrite(out, 1, len, stdout);
	fflush(stdout);

	if (WIFEXITED(status) && WEXITSTATUS(status) == 77) {
		free(out);
		return 77;
	}
	for (int i = 1; i < sep; i++) {
		if (!strstr(out, argv[i])) {
			fprintf(stderr, "expect_output: missing from the output: \"%s\"\n", argv[i]);
			missing++;
		}
	}
	free(out);
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
		fprintf(stderr, "expect_output: %s %s %d\n", argv[sep + 1],
			WIFEXITED(status) ? "exited with" : "was killed by signal",
			WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status));
		return 1;
	}
	return missing ? 1 : 0;
}
