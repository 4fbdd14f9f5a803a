/* SPDX-License-Identifier: MIT */
/*
 * uv_idle_server: a TCP echo server on 127.0.0.1 that closes each
 * connection after IDLE_MS milliseconds without input.
 *
 *   uv_idle_server [IDLE_MS [PORT [SLACK_MS]]]
 *                     (defaults: 5000, 0 = any free port, 0 = exact)
 *
 * Each connection embeds one struct tw_timer, re-armed with tw_mod() on
 * every read. A re-arm moves the timer later, so it costs the wheel O(1)
 * and libuv nothing: the one uv_timer_t of the wheel stays armed for the
 * earliest deadline. Native uv_timer_t would cost 152 bytes per connection
 * and a heap operation per read.
 *
 * With SLACK_MS, a connection may be closed up to that much after IDLE_MS
 * (tw_add_range()/tw_mod_range()): idle connections then share wake-ups.
 *
 * uv_idle_server_libuv is the same server on libuv's own timers, and
 * uv_idle_server_port that one moved to the uv_timer_t layer by renaming;
 * the tests check that all three close the same connections.
 *
 * Prints "listening on 127.0.0.1:PORT" once ready. SIGINT or SIGTERM closes
 * everything and prints how many connections were closed for idleness.
 */
#define _POSIX_C_SOURCE 200809L

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#include <sys/resource.h>

#include <timerwheel/uv.h>

#define NS_PER_MS 1000000ull

struct conn {
	uv_tcp_t tcp;
	struct tw_timer idle;
	struct conn *next, **pprev; /* all open connections, for shutdown */
};

struct echo_req {
	uv_write_t req;
	char data[];
};

static struct {
	uv_loop_t *loop;
	uv_tcp_t listener;
	uv_signal_t sigint, sigterm;
	struct tw_wheel *wheel; /* the program's; the backend drives it */
	struct tw_uv timers;
	uint64_t idle_ns, slack_ns;
	struct conn *conns;
	unsigned long accepted, idle_closed, peer_closed, rearms;
	uint64_t late_sum_ns, late_max_ns; /* idle closes after their deadline */
	struct tw_uv_stats stats;
	struct tw_lateness lateness; /* the wheel's own, at the end */
	char rbuf[65536]; /* reads are echoed before the next one */
} srv;

static void on_conn_closed(uv_handle_t *hd)
{
	free(tw_container_of(hd, struct conn, tcp));
}

static void conn_close(struct conn *c)
{
	/* Idle already when it fired; cancelling an idle timer is allowed. */
	tw_del(srv.wheel, &c->idle);
	*c->pprev = c->next;
	if (c->next)
		c->next->pprev = c->pprev;
	uv_close((uv_handle_t *)&c->tcp, on_conn_closed);
}

static void idle_fired(struct conn *c, uint64_t deadline)
{
	uint64_t late = tw_uv_now() - deadline; /* never negative: never early */

	srv.late_sum_ns += late;
	if (late > srv.late_max_ns)
		srv.late_max_ns = late;
	srv.idle_closed++;
	conn_close(c);
}

static void on_idle(struct tw_timer *t)
{
	idle_fired(tw_container_of(t, struct conn, idle), t->expires);
}

/* Later than before: tw_mod() only stores the new expiry. */
static void idle_arm(struct conn *c)
{
	tw_mod_range(srv.wheel, &c->idle, tw_uv_now() + srv.idle_ns, srv.slack_ns);
}

static void on_alloc(uv_handle_t *hd, size_t size, uv_buf_t *buf)
{
	(void)hd;
	(void)size;
	*buf = uv_buf_init(srv.rbuf, sizeof(srv.rbuf));
}

static void on_echoed(uv_write_t *req, int status)
{
	(void)status; /* a failed echo shows up as a read error */
	free(req);
}

static void echo(struct conn *c, const char *data, size_t len)
{
	uv_buf_t b = uv_buf_init((char *)data, (unsigned)len);
	int n = uv_try_write((uv_stream_t *)&c->tcp, &b, 1);
	struct echo_req *r;

	if (n == UV_EAGAIN)
		n = 0;
	if (n < 0 || (size_t)n == len)
		return;
	/* The socket is full: queue a copy of the rest. */
	r = malloc(sizeof(*r) + len - (size_t)n);
	if (r == NULL)
		return;
	memcpy(r->data, data + n, len - (size_t)n);
	b = uv_buf_init(r->data, (unsigned)(len - (size_t)n));
	if (uv_write(&r->req, (uv_stream_t *)&c->tcp, &b, 1, on_echoed) != 0)
		free(r);
}

static void on_read(uv_stream_t *st, ssize_t n, const uv_buf_t *buf)
{
	struct conn *c = tw_container_of(st, struct conn, tcp);

	if (n < 0) {
		srv.peer_closed++;
		conn_close(c);
		return;
	}
	if (n == 0)
		return;
	/* Later than before: no libuv call. */
	srv.rearms++;
	idle_arm(c);
	echo(c, buf->base, (size_t)n);
}

static void on_connection(uv_stream_t *server, int status)
{
	struct conn *c;

	if (status < 0)
		return;
	c = malloc(sizeof(*c));
	if (c == NULL || uv_tcp_init(srv.loop, &c->tcp) != 0) {
		free(c);
		return;
	}
	c->next = srv.conns;
	if (c->next)
		c->next->pprev = &c->next;
	c->pprev = &srv.conns;
	srv.conns = c;
	tw_timer_init(&c->idle, on_idle);
	if (uv_accept(server, (uv_stream_t *)&c->tcp) != 0 ||
	    uv_read_start((uv_stream_t *)&c->tcp, on_alloc, on_read) != 0) {
		conn_close(c);
		return;
	}
	srv.accepted++;
	idle_arm(c);
}

static void on_signal(uv_signal_t *sig, int signum)
{
	(void)sig;
	(void)signum;
	tw_uv_get_stats(&srv.timers, &srv.stats);
	tw_get_lateness(srv.wheel, &srv.lateness);
	while (srv.conns)
		conn_close(srv.conns);
	tw_uv_close(&srv.timers, NULL);
	uv_close((uv_handle_t *)&srv.listener, NULL);
	uv_close((uv_handle_t *)&srv.sigint, NULL);
	uv_close((uv_handle_t *)&srv.sigterm, NULL);
}

/* One descriptor per connection: take all the kernel allows. */
static void raise_fd_limit(void)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
}

static int fail(const char *what, int err)
{
	/* Our errors are negative errno values, which libuv shares on POSIX. */
	fprintf(stderr, "uv_idle_server: %s: %s\n", what, uv_strerror(err));
	return 1;
}

int main(int argc, char **argv)
{
	struct sockaddr_in addr;
	struct sockaddr_storage bound;
	int len = sizeof(bound), r;
	unsigned long idle_ms = argc > 1 ? strtoul(argv[1], NULL, 10) : 5000;
	int port = argc > 2 ? atoi(argv[2]) : 0;
	unsigned long slack_ms = argc > 3 ? strtoul(argv[3], NULL, 10) : 0;

	if (idle_ms == 0 || port < 0 || port > 65535) {
		fprintf(stderr, "usage: uv_idle_server [IDLE_MS [PORT [SLACK_MS]]]\n");
		return 2;
	}
	raise_fd_limit();
	srv.loop = uv_default_loop();
	srv.idle_ns = idle_ms * NS_PER_MS;
	srv.slack_ns = slack_ms * NS_PER_MS;
	r = tw_wheel_create(&srv.wheel, NULL, tw_uv_now());
	if (r < 0)
		return fail("tw_wheel_create", r);
	r = tw_uv_attach(srv.loop, &srv.timers, srv.wheel, 0);
	if (r < 0)
		return fail("tw_uv_attach", r);
	uv_ip4_addr("127.0.0.1", port, &addr);
	uv_tcp_init(srv.loop, &srv.listener);
	r = uv_tcp_bind(&srv.listener, (const struct sockaddr *)&addr, 0);
	if (r == 0)
		r = uv_listen((uv_stream_t *)&srv.listener, 4096, on_connection);
	if (r < 0)
		return fail("listen", r);
	uv_tcp_getsockname(&srv.listener, (struct sockaddr *)&bound, &len);
	uv_signal_init(srv.loop, &srv.sigint);
	uv_signal_init(srv.loop, &srv.sigterm);
	uv_signal_start(&srv.sigint, on_signal, SIGINT);
	uv_signal_start(&srv.sigterm, on_signal, SIGTERM);
	printf("listening on 127.0.0.1:%d\n", ntohs(((struct sockaddr_in *)&bound)->sin_port));
	fflush(stdout);

	uv_run(srv.loop, UV_RUN_DEFAULT);

	printf("accepted %lu, closed idle %lu (late by %.3f ms on average, %.3f at most), "
	       "closed by peer %lu; %lu re-arms, %llu uv_timer_start calls, %llu wake-ups\n",
	       srv.accepted, srv.idle_closed,
	       srv.idle_closed ? (double)srv.late_sum_ns / 1e6 / (double)srv.idle_closed : 0.0,
	       (double)srv.late_max_ns / 1e6, srv.peer_closed, srv.rearms,
	       (unsigned long long)srv.stats.timer_starts, (unsigned long long)srv.stats.wakeups);
	printf("wheel lateness (tw_get_lateness): %llu fired, p50 <= %.3f ms, p99 <= %.3f ms, max %.3f ms\n",
	       (unsigned long long)srv.lateness.fired, (double)tw_lateness_quantile(&srv.lateness, 500) / 1e6,
	       (double)tw_lateness_quantile(&srv.lateness, 990) / 1e6, (double)srv.lateness.max_ns / 1e6);
	uv_loop_close(srv.loop);
	tw_wheel_destroy(srv.wheel);
	return 0;
}
