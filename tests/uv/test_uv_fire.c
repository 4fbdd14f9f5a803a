/* SPDX-License-Identifier: MIT */
/*
 * Never early, on a real loop and the real clock: 10^4 timers with random
 * deadlines over 2 s, armed once from timer callbacks and once from I/O
 * callbacks (a TCP ping-pong on 127.0.0.1, where libuv's cached clock is
 * what made native timers fire early in libuv issue 4773). Each fire is
 * judged by clock_gettime(CLOCK_MONOTONIC). For comparison, native
 * uv_timer_t armed the same way are measured too (printed, not asserted:
 * that is libuv's behaviour, not ours).
 */
#define _POSIX_C_SOURCE 200809L

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>

#include <timerwheel/uv.h>

#include "uv_test_util.h"

#define N_TIMERS 10000
#define SPAN_NS 2000000000ull
#define PER_BATCH 20

#define N_NATIVE 2000
#define NATIVE_SPAN_MS 200

struct probe {
	struct tw_timer t;
	int fired;
};

struct native_probe {
	uv_timer_t u;
	uint64_t due;
};

static struct {
	uv_loop_t loop;
	struct tw_uv h;
	struct probe p[N_TIMERS];
	struct native_probe np[N_NATIVE];
	uint64_t late[N_TIMERS];
	size_t armed, fired, early, n_wanted;
	uint64_t most_early;
	int native;
	uint64_t seed;
	/* timer-callback variant */
	struct tw_timer driver;
	/* I/O variant */
	uv_tcp_t server, client, accepted;
	uv_connect_t conn;
	char rbuf[64];
} s;

static void on_probe(struct tw_timer *t)
{
	struct probe *p = tw_container_of(t, struct probe, t);
	uint64_t now = tw_test_mono_ns();

	p->fired++;
	s.fired++;
	if (now < t->expires)
		s.early++;
	else
		s.late[s.fired - s.early - 1] = now - t->expires;
}

static void on_native(uv_timer_t *u)
{
	struct native_probe *p = tw_container_of(u, struct native_probe, u);
	uint64_t now = tw_test_mono_ns();

	s.fired++;
	if (now < p->due) {
		s.early++;
		if (p->due - now > s.most_early)
			s.most_early = p->due - now;
	} else {
		s.late[s.fired - s.early - 1] = now - p->due;
	}
	uv_close((uv_handle_t *)u, NULL);
}

/* What a program without the wheel would write: whole ms from now. */
static void arm_native(void)
{
	struct native_probe *p = &s.np[s.armed++];
	uint64_t ms = 1 + tw_test_rand(&s.seed) % NATIVE_SPAN_MS;

	assert_int_equal(uv_timer_init(&s.loop, &p->u), 0);
	p->due = tw_test_mono_ns() + ms * 1000000u;
	assert_int_equal(uv_timer_start(&p->u, on_native, ms, 0), 0);
}

static void arm_some(size_t k)
{
	for (; k > 0 && s.armed < s.n_wanted; k--) {
		if (s.native) {
			arm_native();
			continue;
		}
		struct probe *p = &s.p[s.armed++];
		uint64_t d = tw_test_rand(&s.seed) % SPAN_NS;

		tw_timer_init(&p->t, on_probe);
		assert_int_equal(tw_add(tw_uv_wheel(&s.h), &p->t, tw_test_mono_ns() + d), 0);
	}
}

static void reset(void)
{
	memset(&s, 0, sizeof(s));
	s.seed = 0x9e3779b97f4a7c15ull;
	s.n_wanted = N_TIMERS;
	assert_int_equal(uv_loop_init(&s.loop), 0);
	assert_int_equal(tw_test_uv_open(&s.loop, &s.h, NULL, 0), 0);
}

static void finish(const char *what)
{
	struct tw_uv_stats st;
	struct tw_stats ws;
	size_t i;

	assert_int_equal(tw_uv_get_stats(&s.h, &st), 0);
	assert_int_equal(tw_get_stats(tw_uv_wheel(&s.h), &ws), 0);
	printf("%s: %zu early, %llu uv_timer_start, %llu wake-ups (%llu early, %llu firing "
	       "nothing)\n", what, s.early, (unsigned long long)st.timer_starts,
	       (unsigned long long)st.wakeups, (unsigned long long)st.early_wakeups,
	       (unsigned long long)ws.idle_advances);
	tw_test_print_lateness(what, s.late, s.fired - s.early);
	assert_int_equal(s.early, 0);
	assert_int_equal(s.fired, N_TIMERS);
	for (i = 0; i < N_TIMERS; i++)
		assert_int_equal(s.p[i].fired, 1);
	tw_test_uv_close(&s.h, NULL);
	assert_int_equal(uv_run(&s.loop, UV_RUN_DEFAULT), 0);
	assert_int_equal(uv_loop_close(&s.loop), 0);
}

/* Arms a batch, then itself again 1 ms later, until all are armed. */
static void on_driver(struct tw_timer *t)
{
	arm_some(PER_BATCH);
	if (s.armed < s.n_wanted)
		assert_int_equal(tw_add(tw_uv_wheel(&s.h), t, tw_test_mono_ns() + 1000000), 0);
}

static void test_armed_from_timer_callbacks(void **state)
{
	(void)state;
	reset();
	tw_timer_init(&s.driver, on_driver);
	assert_int_equal(tw_add(tw_uv_wheel(&s.h), &s.driver, tw_test_mono_ns()), 0);
	/* The loop must end by itself once the last timer fired. */
	assert_int_equal(uv_run(&s.loop, UV_RUN_DEFAULT), 0);
	finish("armed from timer callbacks");
}

static void on_alloc(uv_handle_t *hd, size_t size, uv_buf_t *buf)
{
	(void)hd;
	(void)size;
	*buf = uv_buf_init(s.rbuf, sizeof(s.rbuf));
}

static void on_written(uv_write_t *req, int status)
{
	assert_int_equal(status, 0);
	free(req);
}

static void send_byte(uv_tcp_t *tcp)
{
	static char byte = 'x';
	uv_write_t *req = malloc(sizeof(*req));
	uv_buf_t b = uv_buf_init(&byte, 1);

	assert_non_null(req);
	assert_int_equal(uv_write(req, (uv_stream_t *)tcp, &b, 1, on_written), 0);
}

static void on_closed(uv_handle_t *hd)
{
	(void)hd;
}

/* Both ends ping-pong one byte; the accepted end arms timers per byte read,
 * inside the I/O callback. When all are armed, the sockets close and only
 * the wheel keeps the loop running. */
static void on_read(uv_stream_t *st, ssize_t n, const uv_buf_t *buf)
{
	(void)buf;
	if (n <= 0) {
		assert_true(n == UV_EOF || n == 0);
		if (n == UV_EOF)
			uv_close((uv_handle_t *)st, on_closed);
		return;
	}
	if (st == (uv_stream_t *)&s.accepted) {
		arm_some((size_t)n);
		if (s.armed >= s.n_wanted) {
			uv_close((uv_handle_t *)&s.accepted, on_closed);
			return;
		}
	}
	send_byte((uv_tcp_t *)st);
}

static void on_connection(uv_stream_t *server, int status)
{
	assert_int_equal(status, 0);
	assert_int_equal(uv_tcp_init(&s.loop, &s.accepted), 0);
	assert_int_equal(uv_accept(server, (uv_stream_t *)&s.accepted), 0);
	assert_int_equal(uv_read_start((uv_stream_t *)&s.accepted, on_alloc, on_read), 0);
	uv_close((uv_handle_t *)&s.server, on_closed);
}

static void on_connect(uv_connect_t *req, int status)
{
	assert_int_equal(status, 0);
	assert_int_equal(uv_read_start(req->handle, on_alloc, on_read), 0);
	send_byte((uv_tcp_t *)req->handle);
}

static void run_ping_pong(void)
{
	struct sockaddr_in addr;
	struct sockaddr_storage bound;
	int len = sizeof(bound);

	assert_int_equal(uv_ip4_addr("127.0.0.1", 0, &addr), 0);
	assert_int_equal(uv_tcp_init(&s.loop, &s.server), 0);
	assert_int_equal(uv_tcp_bind(&s.server, (const struct sockaddr *)&addr, 0), 0);
	assert_int_equal(uv_listen((uv_stream_t *)&s.server, 1, on_connection), 0);
	assert_int_equal(uv_tcp_getsockname(&s.server, (struct sockaddr *)&bound, &len), 0);
	assert_int_equal(uv_tcp_init(&s.loop, &s.client), 0);
	assert_int_equal(uv_tcp_connect(&s.conn, &s.client, (const struct sockaddr *)&bound, on_connect), 0);
	assert_int_equal(uv_run(&s.loop, UV_RUN_DEFAULT), 0);
}

static void test_armed_from_io_callbacks(void **state)
{
	(void)state;
	reset();
	run_ping_pong();
	finish("armed from I/O callbacks");
}

static void test_native_timers_for_comparison(void **state)
{
	(void)state;
	reset();
	s.native = 1;
	s.n_wanted = N_NATIVE;
	run_ping_pong();
	assert_int_equal(s.fired, N_NATIVE);
	printf("native uv_timer_start(ms) from I/O callbacks: %zu of %d early (%.1f%%), "
	       "by up to %.3f ms\n", s.early, N_NATIVE, 100.0 * (double)s.early / N_NATIVE,
	       (double)s.most_early / 1e6);
	tw_test_print_lateness("native, the ones not early", s.late, s.fired - s.early);
	tw_test_uv_close(&s.h, NULL);
	assert_int_equal(uv_run(&s.loop, UV_RUN_DEFAULT), 0);
	assert_int_equal(uv_loop_close(&s.loop), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_armed_from_timer_callbacks),
		cmocka_unit_test(test_armed_from_io_callbacks),
		cmocka_unit_test(test_native_timers_for_comparison),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
