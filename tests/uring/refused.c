/* SPDX-License-Identifier: MIT */
/*
 *   uring_refused TEST...
 *
 * Each io_uring test on a kernel that refuses io_uring, as a container's
 * seccomp profile or io_uring_disabled does: run with io_uring_setup,
 * io_uring_enter and io_uring_register failing with ENOSYS, then with
 * EPERM, then EACCES, each test must skip (exit 77, its reason printed),
 * never fail and never pass. The tests skip before they reach the library,
 * so the library's own answer is checked here too: tw_uring_loop_init()
 * returns the kernel's refusal and leaves nothing behind. This machine's
 * kernel may well allow io_uring: the refusal is a seccomp filter, so the
 * check holds anywhere.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <timerwheel.h>
#include <timerwheel/uring.h>

/* setup, enter and register: three numbers in a row. */
#define FIRST __NR_io_uring_setup
#define LAST __NR_io_uring_register

static int refuse_io_uring(int err)
{
	struct sock_filter f[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JGE | BPF_K, FIRST, 0, 2),
		BPF_JUMP(BPF_JMP | BPF_JGT | BPF_K, LAST, 1, 0),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | ((unsigned)err & SECCOMP_RET_DATA)),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog prog = { sizeof(f) / sizeof(f[0]), f };

	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0)
		return -errno;
	if (prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog) != 0)
		return -errno;
	return 0;
}

static int no_hook(struct tw_wheel *w, uint64_t next, void *arg)
{
	(void)w;
	(void)next;
	(void)arg;
	return 0;
}

/* Under the filter: the library says what the kernel said, and keeps no
 * hook on the wheel (a second hook is then accepted). 77 if it does. */
static int library_refused(int err)
{
	struct tw_wheel *w;
	struct tw_uring_loop *l = (struct tw_uring_loop *)&l;
	int r;

	if (tw_wheel_create(&w, NULL, tw_uring_now()) != 0)
		return 1;
	r = tw_uring_loop_init(&l, w, NULL);
	if (r != -err || l != (struct tw_uring_loop *)&l || tw_set_notify(w, no_hook, NULL) != 0) {
		fprintf(stderr, "tw_uring_loop_init: %d (%s), loop %s\n", r, strerror(-r),
			l == (struct tw_uring_loop *)&l ? "untouched" : "written");
		return 1;
	}
	tw_set_notify(w, NULL, NULL);
	tw_wheel_destroy(w);
	return 77;
}

/* The exit status of @path run with io_uring refused by @err (NULL: the
 * library itself, library_refused()), or -1. */
static int run_refused(const char *path, int err)
{
	pid_t pid = fork();
	int status;

	if (pid < 0)
		return -1;
	if (pid == 0) {
		int r = refuse_io_uring(err);

		if (r < 0) {
			fprintf(stderr, "uring_refused: seccomp: %s\n", strerror(-r));
			_exit(125);
		}
		if (!path)
			_exit(library_refused(err));
		execl(path, path, (char *)NULL);
		_exit(127);
	}
	if (waitpid(pid, &status, 0) != pid)
		return -1;
	return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

int main(int argc, char **argv)
{
	static const int errs[] = { ENOSYS, EPERM, EACCES };
	int failures = 0;

	if (argc < 2) {
		fprintf(stderr, "uring_refused: no test to run\n");
		return 1;
	}
	for (int i = 0; i < argc; i++)
		for (size_t k = 0; k < sizeof(errs) / sizeof(errs[0]); k++) {
			const char *path = i ? argv[i] : NULL;
			int status = run_refused(path, errs[k]);

			if (status == 125)
				return 77; /* no seccomp here: nothing to show */
			printf("%s, io_uring refused with %s: exit %d (%s)\n", path ? path : "the library",
			       strerrorname_np(errs[k]), status,
			       status == 77 ? "refused, as it must" : "WRONG: must refuse and skip");
			failures += status != 77;
		}
	return failures ? 1 : 0;
}
