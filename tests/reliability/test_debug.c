/* SPDX-License-Identifier: MIT */
/*
 * The debug build's misuse checks (-Ddebug_checks=true; this test links a
 * copy of the core built with TW_DEBUG_CHECKS=1 whatever the option says).
 * Misuse that release builds leave undefined aborts with a message naming
 * it; misuse that has an error return keeps it and is named on stderr.
 * Each case runs in a child process whose stderr is captured.
 */
#define _GNU_SOURCE 1

#include <signal.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <timerwheel/debug.h>

#include "../common.h"

#define MS 1000000ull

static void nop(struct tw_timer *t) { (void)t; }

/* In a child: exit 3 when a condition fails, so the parent can tell. */
#define require(cond)             \
	do {                      \
		if (!(cond))      \
			_exit(3); \
	} while (0)

static void run_child(void (*fn)(void), bool must_abort, const char *message)
{
	int fds[2];
	assert_int_equal(pipe(fds), 0);
	fflush(stdout);
	fflush(stderr);
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		dup2(fds[1], 2);
		close(fds[0]);
		fn();
		_exit(0);
	}
	close(fds[1]);
	char buf[4096];
	size_t len = 0;
	ssize_t n;
	while (len < sizeof(buf) - 1 && (n = read(fds[0], buf + len, sizeof(buf) - 1 - len)) > 0)
		len += (size_t)n;
	buf[len] = '\0';
	close(fds[0]);
	int status;
	assert_int_equal(waitpid(pid, &status, 0), pid);
	if (must_abort) {
		if (!WIFSIGNALED(status) || WTERMSIG(status) != SIGABRT)
			fail_msg("expected an abort, got status %#x; stderr: %s", status, buf);
	} else if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
		fail_msg("expected a clean exit, got status %#x; stderr: %s", status, buf);
	}
	if (!strstr(buf, message))
		fail_msg("stderr lacks \"%s\": %s", message, buf);
}

static void use_destroyed(void)
{
	struct tw_wheel *w;
	require(tw_wheel_create(&w, NULL, 0) == 0);
	struct tw_timer t;
	tw_timer_init(&t, nop);
	tw_wheel_destroy(w);
	tw_add(w, &t, MS);
}

static void destroy_twice(void)
{
	struct tw_wheel *w;
	require(tw_wheel_create(&w, NULL, 0) == 0);
	tw_wheel_destroy(w);
	tw_wheel_destroy(w);
}

static void made_up_wheel(void)
{
	uint64_t fake[64] = { 0 };
	tw_advance((struct tw_wheel *)fake, 5);
}

static void reinit_armed(void)
{
	struct tw_wheel *w;
	require(tw_wheel_create(&w, NULL, 0) == 0);
	struct tw_timer t;
	tw_timer_init(&t, nop);
	require(tw_add(w, &t, 5 * MS) == 0);
	tw_timer_init(&t, nop);
}

static void del_copied_armed(void)
{
	struct tw_wheel *w;
	require(tw_wheel_create(&w, NULL, 0) == 0);
	struct tw_timer t[2];
	tw_timer_init(&t[0], nop);
	tw_timer_init(&t[1], nop);
	require(tw_add(w, &t[0], 5 * MS) == 0);
	require(tw_add(w, &t[1], 5 * MS) == 0);
	struct tw_timer copy = t[1];
	tw_del(w, &copy);
}

static void uninitialised(void)
{
	struct tw_wheel *w;
	require(tw_wheel_create(&w, NULL, 0) == 0);
	struct tw_timer t;
	memset(&t, 0x5a, sizeof(t));
	require(tw_add(w, &t, MS) == -EINVAL); /* not fatal: it has an error return */
	require(tw_mod(w, &t, MS) == -EINVAL);
	require(tw_count(w) == 0 && tw_check(w) == 0);
	tw_wheel_destroy(w);
}

static void foreign(void)
{
	struct tw_wheel *a, *b;
	require(tw_wheel_create(&a, NULL, 0) == 0);
	require(tw_wheel_create(&b, NULL, 0) == 0);
	struct tw_timer t;
	tw_timer_init(&t, nop);
	require(tw_add(a, &t, MS) == 0);
	require(tw_add(b, &t, MS) == -EBUSY);
	require(tw_mod(b, &t, MS) == -EINVAL);
	require(tw_del(b, &t) == -EINVAL);
	require(tw_count(a) == 1 && tw_count(b) == 0);
	tw_wheel_destroy(a);
	tw_wheel_destroy(b);
}

static struct tw_wheel *dying;
static struct tw_timer spare;
static int inside_add = 1;
static int inside_advance = 1;

static void destroy_self(struct tw_timer *t)
{
	(void)t;
	tw_wheel_destroy(dying);
	/* Still usable until tw_advance returns: refused, not fatal, also
	 * after a refused tw_advance (which must not let go of the wheel). */
	inside_advance = tw_advance(dying, 2 * MS);
	inside_add = tw_add(dying, &spare, 0);
}

static void destroyed_in_callback(void)
{
	require(tw_wheel_create(&dying, NULL, 0) == 0);
	struct tw_timer t;
	tw_timer_init(&t, destroy_self);
	tw_timer_init(&spare, nop);
	require(tw_add(dying, &t, MS) == 0);
	require(tw_advance(dying, MS) == 1);
	require(inside_advance == -EBUSY);
	require(inside_add == -EINVAL);
	fputs("advance returned\n", stderr);
	tw_count(dying); /* freed by now */
}

static void test_destroyed_wheel(void **state)
{
	(void)state;
	run_child(use_destroyed, true, "tw_add: wheel");
	run_child(use_destroyed, true, "is not a live wheel");
	run_child(destroy_twice, true, "tw_wheel_destroy: wheel");
	run_child(made_up_wheel, true, "tw_advance: wheel");
	run_child(destroyed_in_callback, true, "advance returned\ntimerwheel: tw_count: wheel");
}

static void test_armed_timer_misuse(void **state)
{
	(void)state;
	run_child(reinit_armed, true, "tw_timer_init: timer");
	run_child(reinit_armed, true, "is armed");
	run_child(del_copied_armed, true, "tw_del: timer");
	run_child(del_copied_armed, true, "copied, moved or re-initialised while armed");
}

static void test_reported_errors(void **state)
{
	(void)state;
	run_child(uninitialised, false, "tw_add: timer");
	run_child(uninitialised, false, "was not initialised with tw_timer_init()");
	run_child(foreign, false, "tw_mod: timer");
	run_child(foreign, false, "is armed on another wheel");
}

/* The registry of live wheels: many wheels made and destroyed in a mixed
 * order, each usable exactly while it lives. */
static void test_registry(void **state)
{
	(void)state;
	enum { N = 300 };
	static struct tw_wheel *w[N];
	uint64_t rng = 42;
	for (int round = 0; round < 4; round++) {
		for (int i = 0; i < N; i++)
			assert_int_equal(tw_wheel_create(&w[i], NULL, (uint64_t)i), 0);
		for (int i = 0; i < N; i++) {
			int j = (int)(test_rand(&rng) % N);
			struct tw_wheel *x = w[i];
			w[i] = w[j];
			w[j] = x;
		}
		for (int i = 0; i < N; i++) {
			for (int k = i; k < N; k += 37)
				assert_int_equal(tw_check(w[k]), 0);
			tw_wheel_destroy(w[i]);
		}
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_destroyed_wheel),
		cmocka_unit_test(test_armed_timer_misuse),
		cmocka_unit_test(test_reported_errors),
		cmocka_unit_test(test_registry),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
