/* SPDX-License-Identifier: MIT */
/*
 * uv_idle_server_libuv and uv_idle_server_port: a TCP echo server on
 * 127.0.0.1 that closes each connection after IDLE_MS milliseconds without
 * input, one timer per connection, restarted on every read.
 *
 *   uv_idle_server_libuv [IDLE_MS [PORT]]   (defaults: 5000, 0 = any free port)
 *
 * This file is written against libuv's own timers, as a libuv program is.
 * uv_idle_server_port is the same file moved to timerwheel's timer layer
 * without an edit: built with -include timerwheel/uv_port.h.
 *
 * Prints "listening on 127.0.0.1:PORT" once ready. SIGINT or SIGTERM closes
 * everything and prints how many connections were closed for idleness, and
 * how late against each one's deadline, IDLE_MS after its last read by
 * uv_hrtime(); a close before it is counted as early.
 */
#define _POSIX_C_SOURCE 200809L

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#include <sys/resource.h>

#include <uv.h>

#define NS_PER_MS 1000000ull

struct conn {
	uv_tcp_t tcp;
	uv_timer_t idle;
	uint64_t deadline; /* uv_hrtime() of the last read + IDLE_MS */
	int open;          /* handles whose close callback has not run */
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
	uint64_t idle_ms;
	struct conn *conns;
	unsigned long accepted, idle_closed, peer_closed, rearms, early;
	uint64_t late_sum_ns, late_max_ns; /* idle closes after their deadline */
	uint64_t early_max_ns;             /* ... and before it */
	char rbuf[65536]; /* reads are echoed before the next one */
} srv;

static void conn_release(struct conn *c)
{
	if (--c->open == 0)
		free(c);
}

static void on_tcp_closed(uv_handle_t *hd)
{
	conn_release(hd->data);
}

static void on_idle_closed(uv_handle_t *hd)
{
	conn_release(hd->data);
}

static void conn_close(struct conn *c)
{
	*c->pprev = c->next;
	if (c->next)
		c->next->pprev = c->pprev;
	uv_close((uv_handle_t *)&c->idle, on_idle_closed);
	uv_close((uv_handle_t *)&c->tcp, on_tcp_closed);
}

static void on_idle(uv_timer_t *t)
{
	struct conn *c = t->data;
	uint64_t now = uv_hrtime();

	if (now < c->deadline) {
		srv.early++;
		if (c->deadline - now > srv.early_max_ns)
			srv.early_max_ns = c->deadline - now;
	} else {
		srv.late_sum_ns += now - c->deadline;
		if (now - c->deadline > srv.late_max_ns)
			srv.late_max_ns = now - c->deadline;
	}
	srv.idle_closed++;
	conn_close(c);
}

static void idle_arm(struct conn *c)
{
	c->deadline = uv_hrtime() + srv.idle_ms * NS_PER_MS;
	uv_timer_start(&c->idle, on_idle, srv.idle_ms, 0);
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
	struct conn *c = st->data;

	if (n < 0) {
		srv.peer_closed++;
		conn_close(c);
		return;
	}
	if (n == 0)
		return;
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
	if (c == NULL)
		return;
	if (uv_tcp_init(srv.loop, &c->tcp) != 0) {
		free(c);
		return;
	}
	uv_timer_init(srv.loop, &c->idle);
	c->tcp.data = c;
	c->idle.data = c;
	c->open = 2;
	c->next = srv.conns;
	if (c->next)
		c->next->pprev = &c->next;
	c->pprev = &srv.conns;
	srv.conns = c;
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
	while (srv.conns)
		conn_close(srv.conns);
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

int main(int argc, char **argv)
{
	struct sockaddr_in addr;
	struct sockaddr_storage bound;
	int len = sizeof(bound), r;
	unsigned long idle_ms = argc > 1 ? strtoul(argv[1], NULL, 10) : 5000;
	int port = argc > 2 ? atoi(argv[2]) : 0;

	if (idle_ms == 0 || port < 0 || port > 65535) {
		fprintf(stderr, "usage: %s [IDLE_MS [PORT]]\n", argv[0]);
		return 2;
	}
	raise_fd_limit();
	srv.loop = uv_default_loop();
	srv.idle_ms = idle_ms;
	uv_ip4_addr("127.0.0.1", port, &addr);
	uv_tcp_init(srv.loop, &srv.listener);
	r = uv_tcp_bind(&srv.listener, (const struct sockaddr *)&addr, 0);
	if (r == 0)
		r = uv_listen((uv_stream_t *)&srv.listener, 4096, on_connection);
	if (r < 0) {
		fprintf(stderr, "%s: listen: %s\n", argv[0], uv_strerror(r));
		return 1;
	}
	uv_tcp_getsockname(&srv.listener, (struct sockaddr *)&bound, &len);
	uv_signal_init(srv.loop, &srv.sigint);
	uv_signal_init(srv.loop, &srv.sigterm);
	uv_signal_start(&srv.sigint, on_signal, SIGINT);
	uv_signal_start(&srv.sigterm, on_signal, SIGTERM);
	printf("listening on 127.0.0.1:%d\n", ntohs(((struct sockaddr_in *)&bound)->sin_port));
	fflush(stdout);

	uv_run(srv.loop, UV_RUN_DEFAULT);

	printf("accepted %lu, closed idle %lu (late by %.3f ms on average, %.3f at most; %lu early, "
	       "by %.3f ms at most), closed by peer %lu; %lu re-arms\n",
	       srv.accepted, srv.idle_closed,
	       srv.idle_closed > srv.early ?
		       (double)srv.late_sum_ns / 1e6 / (double)(srv.idle_closed - srv.early) : 0.0,
	       (double)srv.late_max_ns / 1e6, srv.early, (double)srv.early_max_ns / 1e6,
	       srv.peer_closed, srv.rearms);
	return uv_loop_close(srv.loop) == 0 ? 0 : 1;
}
