/* SPDX-License-Identifier: MIT */
/*
 *   test_uv_idle_server [libuv:]SERVER...
 *
 * Runs each server (examples/uv_idle_server and its kin) in turn and opens
 * 10^4 loopback connections to it; with several, each must close the same
 * set of connections. A server marked libuv: keeps its timeouts in libuv's
 * own timers, which fire early (libuv issue 4773): its early closes are
 * counted and shown, not failed; every other check holds for it too.
 *
 * For each server: half the connections keep talking, half fall silent
 * after one echoed "hello". Exactly the silent half must be closed, none
 * before its deadline and none later than one tick plus 50 ms after it.
 *
 * The server's deadline for a silent connection is the moment it read the
 * hello plus IDLE_MS; the client knows that moment only between sending the
 * hello (t_send) and receiving its echo (t_echo). So an EOF before
 * t_send + IDLE_MS proves an early close, and one after
 * t_echo + IDLE_MS + tick + 50 ms proves a late one (this process may see
 * the close late on a loaded machine, never early). The server also reports
 * how late it closed against each timer's exact expiry; that must be within
 * one tick plus 50 ms too.
 *
 * A talker sends when TALK_EVERY_MS have passed since its last byte, by the
 * clock: a loaded loop runs its ticker less often, and counting ticks would
 * stretch the period past IDLE_MS. Opening all connections may take longer
 * than IDLE_MS under load (1.5 s under ASan with both cores busy); the first
 * silent ones are then closed while the last ones open, which is fine.
 * This process sees a close as late as its own loop runs: the longest gap
 * between its ticks (5 ms apart when it keeps up) is added to its bound.
 * The server, on the same machine, can be kept from running as long, so the
 * gap is added to the bound on the server's own figure too; and, another
 * process, it can wait for a CPU while this one runs: the time it waited
 * between a close's deadline and the EOF (sampled at each tick) is added to
 * that close's bound, the longest such wait to the server's figure's. Unloaded,
 * gap and wait are a few ms and both bounds stay about one tick plus 50 ms.
 */
#define _POSIX_C_SOURCE 200809L

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <timerwheel.h>
#include <uv.h>

#include "../runqueue_wait.h"
#include "uv_test_util.h"

#define N_WANTED 10000
#define IDLE_MS 1000u
#define TICK_NS 1000000ull /* the server's wheel uses the default tick */
#define SLACK_NS (50 * 1000000ull)
#define TALK_EVERY_MS (IDLE_MS * 2 / 5)
#define TALK_STEP_MS 5 /* how often the talkers are looked at */
#define IN_FLIGHT 256
#define GRACE_MS 300
#define GIVE_UP_MS 60000

extern char **environ;

struct client {
	uv_tcp_t tcp;
	uv_connect_t creq;
	uint64_t t_send, t_echo, t_eof;
	int talker, ready, eof;
};

#define MAX_SERVERS 4

static const char *servers[MAX_SERVERS];
static int n_servers, under_valgrind;
static char *closed_sets[MAX_SERVERS]; /* per server: which connections it closed */

static struct {
	const char *server_path;
	int native; /* libuv's own timers: early closes are libuv's */
	pid_t pid;
	FILE *server_out;
	int port;
	size_t n;

	uv_loop_t loop;
	struct sockaddr_in addr;
	struct client *c;
	size_t next, in_flight, ready, silent_eof, talker_eof, failures;
	int finished;
	char summary[512];
	uint64_t t_start, t_all_ready;
	uint64_t t_tick, max_lag; /* the last tick, and the longest tick gap beyond TALK_STEP_MS */
	struct tw_test_waits srv_waits; /* the server's wait for a CPU, sampled at each tick */
	uv_timer_t ticker, done, give_up;
	char rbuf[256];
} s;

static void on_alloc(uv_handle_t *hd, size_t size, uv_buf_t *buf)
{
	(void)hd;
	(void)size;
	*buf = uv_buf_init(s.rbuf, sizeof(s.rbuf));
}

static void send_byte(struct client *c)
{
	uv_buf_t b = uv_buf_init("x", 1);

	/* Before the write: the server may read the byte before it returns. */
	c->t_send = tw_test_mono_ns();
	/* One byte into an empty loopback socket: never queued. */
	if (uv_try_write((uv_stream_t *)&c->tcp, &b, 1) != 1)
		s.failures++;
}

static void connect_more(void);
static void stop_server(void);

static void finish(void)
{
	size_t i;

	if (s.finished++)
		return;
	uv_timer_stop(&s.ticker);
	uv_close((uv_handle_t *)&s.ticker, NULL);
	uv_close((uv_handle_t *)&s.give_up, NULL);
	uv_close((uv_handle_t *)&s.done, NULL);
	for (i = 0; i < s.next; i++)
		if (!uv_is_closing((uv_handle_t *)&s.c[i].tcp))
			uv_close((uv_handle_t *)&s.c[i].tcp, NULL);
}

static void on_done(uv_timer_t *t)
{
	(void)t;
	finish();
}

static void on_give_up(uv_timer_t *t)
{
	(void)t;
	fprintf(stderr, "gave up after %u ms: %zu ready, %zu silent closed\n", GIVE_UP_MS, s.ready,
		s.silent_eof);
	s.failures++;
	finish();
}

static void on_read(uv_stream_t *st, ssize_t n, const uv_buf_t *buf)
{
	struct client *c = tw_container_of(st, struct client, tcp);
	uint64_t now = tw_test_mono_ns();

	(void)buf;
	if (n == 0)
		return;
	if (n > 0) {
		c->t_echo = now;
		if (!c->ready) {
			c->ready = 1;
			if (++s.ready == s.n)
				s.t_all_ready = now;
			s.in_flight--;
			connect_more();
		}
		return;
	}
	/* EOF, or a reset if the server closed with our byte unread. */
	c->eof = 1;
	c->t_eof = now;
	uv_close((uv_handle_t *)&c->tcp, NULL);
	if (c->talker) {
		s.talker_eof++;
	} else if (++s.silent_eof == s.n / 2) {
		/* Keep the talkers going a little longer: none may close. */
		uv_timer_start(&s.done, on_done, GRACE_MS, 0);
	}
	if (!c->ready) {
		s.failures++; /* closed before its hello was echoed */
		s.in_flight--;
		connect_more();
	}
}

static void on_connect(uv_connect_t *req, int status)
{
	struct client *c = tw_container_of(req, struct client, creq);

	if (status != 0) {
		fprintf(stderr, "connect: %s\n", uv_strerror(status));
		s.failures++;
		finish();
		return;
	}
	if (uv_read_start((uv_stream_t *)&c->tcp, on_alloc, on_read) != 0)
		s.failures++;
	send_byte(c);
}

/* A bounded number of handshakes at a time keeps the listen backlog from
 * overflowing (a dropped SYN is retried only after a second). */
static void connect_more(void)
{
	while (s.in_flight < IN_FLIGHT && s.next < s.n) {
		struct client *c = &s.c[s.next];

		c->talker = s.next % 2 == 0;
		assert_int_equal(uv_tcp_init(&s.loop, &c->tcp), 0);
		assert_int_equal(uv_tcp_connect(&c->creq, &c->tcp, (const struct sockaddr *)&s.addr,
						on_connect), 0);
		s.next++;
		s.in_flight++;
	}
}

/* Each talker's sends stay TALK_EVERY_MS apart, spread as their connects
 * were: no burst of thousands of reads. */
static void on_tick(uv_timer_t *t)
{
	uint64_t now = tw_test_mono_ns();
	size_t i;

	(void)t;
	if (s.t_tick && now - s.t_tick > TALK_STEP_MS * 1000000ull + s.max_lag)
		s.max_lag = now - s.t_tick - TALK_STEP_MS * 1000000ull;
	tw_test_waits_sample(&s.srv_waits, now);
	s.t_tick = now;
	for (i = 0; i < s.next; i += 2) {
		struct client *c = &s.c[i];

		if (c->talker && c->ready && !c->eof && now - c->t_send >= TALK_EVERY_MS * 1000000ull)
			send_byte(c);
	}
}

/* Each side needs one descriptor per connection. */
static size_t connections_allowed(void)
{
	struct rlimit rl;
	size_t n = N_WANTED;

	if (getrlimit(RLIMIT_NOFILE, &rl) != 0)
		return 0;
	if (rl.rlim_cur < N_WANTED + 64) {
		rl.rlim_cur = rl.rlim_max < N_WANTED + 64 ? rl.rlim_max : N_WANTED + 64;
		setrlimit(RLIMIT_NOFILE, &rl);
		getrlimit(RLIMIT_NOFILE, &rl);
	}
	if (rl.rlim_cur < N_WANTED + 64) {
		n = rl.rlim_cur > 128 ? (size_t)(rl.rlim_cur - 64) & ~(size_t)1 : 0;
		printf("RLIMIT_NOFILE is %llu: only %zu connections\n", (unsigned long long)rl.rlim_cur, n);
	}
	return n;
}

static int start_server(void)
{
	char idle[16], line[128], wrapper[256] = "";
	char *argv[16];
	size_t argc = 0;
	posix_spawn_file_actions_t fa;
	int fds[2];

	/* A cross build runs the server as Meson runs this test: through its
	 * exe_wrapper (qemu-user), whose words Meson passes in the variable. */
	const char *w = getenv("MESON_EXE_WRAPPER");
	if (w && *w) {
		snprintf(wrapper, sizeof(wrapper), "%s", w);
		for (char *word = strtok(wrapper, " "); word && argc < 12; word = strtok(NULL, " "))
			argv[argc++] = word;
	}
	argv[argc++] = (char *)s.server_path;
	argv[argc++] = idle;
	argv[argc] = NULL;
	snprintf(idle, sizeof(idle), "%u", IDLE_MS);
	if (pipe(fds) != 0)
		return -1;
	fcntl(fds[0], F_SETFD, FD_CLOEXEC);
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_adddup2(&fa, fds[1], STDOUT_FILENO);
	posix_spawn_file_actions_addclose(&fa, fds[1]);
	if (posix_spawnp(&s.pid, argv[0], &fa, NULL, argv, environ) != 0) {
		s.pid = 0;
		return -1;
	}
	posix_spawn_file_actions_destroy(&fa);
	close(fds[1]);
	s.server_out = fdopen(fds[0], "r");
	if (s.server_out == NULL || fgets(line, sizeof(line), s.server_out) == NULL ||
	    sscanf(line, "listening on 127.0.0.1:%d", &s.port) != 1)
		return -1;
	return 0;
}

static void stop_server(void)
{
	char line[256];
	int status;

	if (s.pid <= 0)
		return;
	kill(s.pid, SIGTERM);
	while (s.server_out && fgets(line, sizeof(line), s.server_out))
		if (strncmp(line, "accepted ", 9) == 0)
			snprintf(s.summary, sizeof(s.summary), "%s", line);
	waitpid(s.pid, &status, 0);
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
		snprintf(s.summary, sizeof(s.summary), "exited abnormally (status %d)\n", status);
	if (s.server_out)
		fclose(s.server_out);
	s.server_out = NULL;
	s.pid = 0;
}

static int start_server(void);

static void run_server(int which)
{
	uint64_t *late_hi, *late_lo;
	size_t i, k = 0, early = 0, late = 0;
	unsigned long srv_idle = 0, srv_early = 0;
	double srv_mean = -1, srv_max = -1;
	uint64_t wait, max_wait = 0;

	memset(&s, 0, sizeof(s));
	s.native = strncmp(servers[which], "libuv:", 6) == 0;
	s.server_path = servers[which] + (s.native ? 6 : 0);
	s.n = under_valgrind ? 1000 : connections_allowed();
	if (under_valgrind)
		connections_allowed();
	printf("%s%s:\n", s.server_path, s.native ? " (libuv's own timers)" : "");
	if (start_server() != 0) {
		stop_server();
		fail_msg("could not start %s", s.server_path);
	}
	assert_true(s.port > 0);
	s.srv_waits.pid = s.pid;
	closed_sets[which] = calloc(s.n, 1);
	assert_non_null(closed_sets[which]);
	s.c = calloc(s.n, sizeof(*s.c));
	late_hi = calloc(s.n, sizeof(*late_hi));
	late_lo = calloc(s.n, sizeof(*late_lo));
	assert_true(s.c && late_hi && late_lo);
	assert_int_equal(uv_loop_init(&s.loop), 0);
	assert_int_equal(uv_ip4_addr("127.0.0.1", s.port, &s.addr), 0);
	uv_timer_init(&s.loop, &s.ticker);
	uv_timer_init(&s.loop, &s.done);
	uv_timer_init(&s.loop, &s.give_up);
	uv_timer_start(&s.ticker, on_tick, TALK_STEP_MS, TALK_STEP_MS);
	uv_timer_start(&s.give_up, on_give_up, GIVE_UP_MS, 0);
	s.t_start = tw_test_mono_ns();
	connect_more();
	assert_int_equal(uv_run(&s.loop, UV_RUN_DEFAULT), 0);
	assert_int_equal(uv_loop_close(&s.loop), 0);

	for (i = 0; i < s.n; i++) {
		struct client *c = &s.c[i];

		if (c->eof)
			closed_sets[which][i] = 1;
		if (c->talker || !c->eof)
			continue;
		if (c->t_eof < c->t_send + IDLE_MS * 1000000ull) {
			early++;
			continue;
		}
		late_hi[k] = c->t_eof - c->t_send - IDLE_MS * 1000000ull;
		late_lo[k] = c->t_eof > c->t_echo + IDLE_MS * 1000000ull ?
				     c->t_eof - c->t_echo - IDLE_MS * 1000000ull : 0;
		wait = tw_test_waits_between(&s.srv_waits, c->t_send + IDLE_MS * 1000000ull, c->t_eof);
		if (wait > max_wait)
			max_wait = wait;
		if (late_lo[k] > TICK_NS + SLACK_NS + s.max_lag + wait)
			late++;
		k++;
	}
	tw_test_waits_free(&s.srv_waits);
	printf("%zu connections (%zu talking), all open after %.0f ms: %zu silent closed, "
	       "%zu talking closed, %zu early, %zu later than tick + 50 ms + %.1f ms (this "
	       "process's longest lag) + the server's wait for a CPU meanwhile (at most %.1f ms), "
	       "%zu other failures\n",
	       s.n, s.n - s.n / 2, s.t_all_ready ? (double)(s.t_all_ready - s.t_start) / 1e6 : -1.0,
	       s.silent_eof, s.talker_eof, early, late, (double)s.max_lag / 1e6, (double)max_wait / 1e6,
	       s.failures);
	tw_test_print_lateness("close after deadline, upper bound (from send)", late_hi, k);
	tw_test_print_lateness("close after deadline, lower bound (from echo)", late_lo, k);
	free(late_hi);
	free(late_lo);
	free(s.c);
	stop_server();
	printf("server: %s", s.summary);
	sscanf(s.summary, "accepted %*u, closed idle %lu (late by %lf ms on average, %lf at most; %lu early)",
	       &srv_idle, &srv_mean, &srv_max, &srv_early);
	assert_int_equal(srv_idle, s.n / 2);
	assert_true(srv_mean >= 0);
	assert_true(srv_max * 1e6 <= (double)(TICK_NS + SLACK_NS + s.max_lag + max_wait));
	assert_int_equal(s.failures, 0);
	assert_int_equal(s.silent_eof, s.n / 2);
	assert_int_equal(s.talker_eof, 0);
	if (!s.native) {
		assert_int_equal(early, 0);
		assert_int_equal(srv_early, 0);
	}
	/* Valgrind slows this process, which sees the closes late. */
	if (!under_valgrind)
		assert_int_equal(late, 0);
}

static void test_silent_half_closed_on_time(void **state)
{
	size_t n;

	(void)state;
	for (int i = 0; i < n_servers; i++)
		run_server(i);
	/* The same connections, whoever keeps the timeouts. */
	n = under_valgrind ? 1000 : connections_allowed();
	for (int i = 1; i < n_servers; i++)
		assert_memory_equal(closed_sets[i], closed_sets[0], n);
	if (n_servers > 1)
		printf("all %d servers closed the same %zu connections\n", n_servers, n / 2);
	for (int i = 0; i < n_servers; i++)
		free(closed_sets[i]);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_silent_half_closed_on_time),
	};
	const char *pre = getenv("LD_PRELOAD");

	if (argc < 2 || argc - 1 > MAX_SERVERS) {
		fprintf(stderr, "usage: %s [libuv:]PATH-TO-SERVER...\n", argv[0]);
		return 2;
	}
	for (int i = 1; i < argc; i++)
		servers[n_servers++] = argv[i];
	under_valgrind = pre != NULL && strstr(pre, "vgpreload") != NULL;
	return cmocka_run_group_tests(tests, NULL, NULL);
}
