/* SPDX-License-Identifier: MIT */
/*
 * uring_echo: a TCP echo server on 127.0.0.1 driven by io_uring that closes
 * connections idle for N ms. One struct tw_timer per connection: each
 * received message pushes its deadline back with tw_mod(), which costs no
 * SQE and no system call; only the wheel's earliest deadline is known to
 * the kernel (here the owned loop bounds its wait by it).
 *
 *   uring_echo [-p PORT] [-i IDLE_MS] [-s SLACK_MS]
 *
 * With -s, a connection may be closed up to SLACK_MS after its idle time
 * (tw_add_range()/tw_mod_range()), so idle connections share wake-ups.
 *
 * Prints "listening on 127.0.0.1:PORT" once ready (PORT 0 picks a free
 * one). End of input on stdin (Ctrl-D, or the other end of a pipe closing)
 * stops it cleanly; it then prints how many connections it accepted,
 * echoed and closed for idleness, and how late the latest idle close was.
 */
#include <timerwheel/uring.h>

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

enum op { OP_ACCEPT = 1, OP_STDIN = 2, OP_RECV = 3, OP_SEND = 4 };

struct conn {
	struct tw_timer idle;
	struct conn *next, **pprev; /* every open connection, for shutdown */
	int fd;
	int ops;      /* requests in flight that name this connection */
	bool closing; /* shut down: free once no request is in flight */
	unsigned len, sent;
	char buf[1024];
};

struct server {
	struct tw_wheel *wheel;
	struct tw_uring_loop *loop;
	uint64_t idle_ns, slack_ns;
	int lfd;
	char in[256];
	struct conn *conns;
	unsigned long accepted, echoed, idle_closed;
	uint64_t max_late_ns;
};

static struct server srv;

/* user_data: the connection's address with the operation in the low bits. */
static uint64_t ud(struct conn *c, enum op op)
{
	return (uint64_t)(uintptr_t)c | (uint64_t)op;
}

/* tw_uring_get_sqe() submits when the SQ is full; NULL means the kernel stalls. */
static struct io_uring_sqe *get_sqe(void)
{
	struct io_uring_sqe *sqe = tw_uring_get_sqe(srv.loop);

	if (!sqe) {
		fprintf(stderr, "uring_echo: no SQE\n");
		exit(1);
	}
	return sqe;
}

static void queue_recv(struct conn *c)
{
	struct io_uring_sqe *sqe = get_sqe();

	io_uring_prep_recv(sqe, c->fd, c->buf, sizeof(c->buf), 0);
	io_uring_sqe_set_data64(sqe, ud(c, OP_RECV));
	c->ops++;
}

static void queue_send(struct conn *c)
{
	struct io_uring_sqe *sqe = get_sqe();

	io_uring_prep_send(sqe, c->fd, c->buf + c->sent, c->len - c->sent, MSG_NOSIGNAL);
	io_uring_sqe_set_data64(sqe, ud(c, OP_SEND));
	c->ops++;
}

static void queue_accept(void)
{
	struct io_uring_sqe *sqe = get_sqe();

	io_uring_prep_accept(sqe, srv.lfd, NULL, NULL, 0);
	io_uring_sqe_set_data64(sqe, OP_ACCEPT);
}

static void queue_stdin_read(void)
{
	struct io_uring_sqe *sqe = get_sqe();

	io_uring_prep_read(sqe, STDIN_FILENO, srv.in, sizeof(srv.in), 0);
	io_uring_sqe_set_data64(sqe, OP_STDIN);
}

/* Shutting the socket down completes its pending recv with 0, which frees it. */
static void conn_close(struct conn *c)
{
	if (!c->closing) {
		c->closing = true;
		tw_del(srv.wheel, &c->idle);
		shutdown(c->fd, SHUT_RDWR);
	}
	if (c->ops > 0)
		return;
	*c->pprev = c->next;
	if (c->next)
		c->next->pprev = c->pprev;
	close(c->fd);
	free(c);
}

static void on_idle(struct tw_timer *t)
{
	uint64_t late = tw_uring_now() - t->expires;

	if (late > srv.max_late_ns)
		srv.max_late_ns = late;
	srv.idle_closed++;
	conn_close(tw_container_of(t, struct conn, idle));
}

static void on_accept(int fd)
{
	struct conn *c = calloc(1, sizeof(*c));

	if (!c) {
		close(fd);
		return;
	}
	c->fd = fd;
	c->next = srv.conns;
	c->pprev = &srv.conns;
	if (srv.conns)
		srv.conns->pprev = &c->next;
	srv.conns = c;
	srv.accepted++;
	tw_timer_init(&c->idle, on_idle);
	tw_add_range(srv.wheel, &c->idle, tw_uring_now() + srv.idle_ns, srv.slack_ns);
	queue_recv(c);
}

static void on_cqe(struct tw_uring_loop *l, struct io_uring_cqe *cqe, void *arg)
{
	uint64_t data = io_uring_cqe_get_data64(cqe);
	struct conn *c = (struct conn *)(uintptr_t)(data & ~(uint64_t)7);

	(void)arg;
	switch (data & 7) {
	case OP_ACCEPT:
		if (cqe->res >= 0)
			on_accept(cqe->res);
		queue_accept();
		return;
	case OP_STDIN:
		if (cqe->res > 0)
			queue_stdin_read(); /* input is ignored; its end stops the server */
		else
			tw_uring_stop(l);
		return;
	case OP_RECV:
		c->ops--;
		if (c->closing || cqe->res <= 0) {
			conn_close(c); /* peer closed, error, or our idle shutdown */
			return;
		}
		/* Activity: push the deadline back. Later than before, so no SQE. */
		tw_mod_range(srv.wheel, &c->idle, tw_uring_now() + srv.idle_ns, srv.slack_ns);
		c->len = (unsigned)cqe->res;
		c->sent = 0;
		queue_send(c);
		return;
	case OP_SEND:
		c->ops--;
		if (c->closing || cqe->res <= 0) {
			conn_close(c);
			return;
		}
		c->sent += (unsigned)cqe->res;
		if (c->sent < c->len) {
			queue_send(c);
			return;
		}
		srv.echoed++;
		queue_recv(c);
		return;
	default:
		return;
	}
}

static int listen_on(unsigned short port)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons(port) };
	socklen_t len = sizeof(a);
	int one = 1, fd = socket(AF_INET, SOCK_STREAM, 0);

	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (fd < 0)
		return -1;
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(fd, (struct sockaddr *)&a, sizeof(a)) < 0 || listen(fd, 4096) < 0 ||
	    getsockname(fd, (struct sockaddr *)&a, &len) < 0) {
		close(fd);
		return -1;
	}
	printf("listening on 127.0.0.1:%u\n", ntohs(a.sin_port));
	fflush(stdout);
	return fd;
}

int main(int argc, char **argv)
{
	struct tw_uring_loop_options opt = { .entries = 1024, .cqe_fn = on_cqe };
	unsigned long port = 0, idle_ms = 1000, slack_ms = 0;
	int r, o;

	while ((o = getopt(argc, argv, "p:i:s:")) != -1) {
		if (o == 'p')
			port = strtoul(optarg, NULL, 10);
		else if (o == 'i')
			idle_ms = strtoul(optarg, NULL, 10);
		else if (o == 's')
			slack_ms = strtoul(optarg, NULL, 10);
		else {
			fprintf(stderr, "usage: %s [-p PORT] [-i IDLE_MS] [-s SLACK_MS]\n", argv[0]);
			return 2;
		}
	}
	srv.idle_ns = (uint64_t)idle_ms * 1000000u;
	srv.slack_ns = (uint64_t)slack_ms * 1000000u;

	srv.lfd = listen_on((unsigned short)port);
	if (srv.lfd < 0) {
		perror("uring_echo: socket set-up");
		return 1;
	}
	if (tw_wheel_create(&srv.wheel, NULL, tw_uring_now()) < 0)
		return 1;
	r = tw_uring_loop_init(&srv.loop, srv.wheel, &opt);
	if (r < 0) {
		fprintf(stderr, "uring_echo: io_uring: %s\n", strerror(-r));
		return 1;
	}
	queue_stdin_read();
	queue_accept();
	r = tw_uring_run(srv.loop);
	if (r < 0)
		fprintf(stderr, "uring_echo: loop: %s\n", strerror(-r));

	printf("accepted %lu, echoed %lu, closed idle %lu, latest idle close %.3f ms late\n",
	       srv.accepted, srv.echoed, srv.idle_closed, (double)srv.max_late_ns / 1e6);
	/* The kernel cancels what is in flight when the ring goes. */
	tw_uring_loop_close(srv.loop);
	while (srv.conns) {
		struct conn *c = srv.conns;

		srv.conns = c->next;
		close(c->fd);
		free(c);
	}
	tw_wheel_destroy(srv.wheel);
	close(srv.lfd);
	return r < 0;
}
