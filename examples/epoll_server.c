/* SPDX-License-Identifier: MIT */
/*
 * epoll_server: an epoll loop whose one OS timer is a timerfd, armed
 * through the wheel's notify hook.
 *
 * A TCP echo server on 127.0.0.1 closes connections idle for IDLE_MS: one
 * struct tw_timer per connection, pushed forward with tw_mod() on every
 * message. The loop waits in epoll_wait() without a timeout; the timerfd
 * in its set is armed for tw_next_expiry() by the notify hook, which the
 * wheel calls only when that moment moves earlier, when the wheel empties
 * and after each advance, and the hook skips the system call when the
 * timerfd already holds that moment. A re-arm to a later time, the common
 * case, costs no system call at all.
 *
 * To have something to serve, the same loop runs CONNS clients: half of
 * them send a message every IDLE_MS / 3 for a while and then fall silent,
 * the others never send. Every connection must be closed by the server's
 * idle timer, exactly once, never before it has been idle IDLE_MS: the
 * server checks that against its clock, the clients against theirs (from
 * the last message the server answered: an echo comes before the close).
 *
 *   epoll_server [CONNS [IDLE_MS]]     (default 200 connections, 200 ms)
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/timerfd.h>
#include <unistd.h>

#include <timerwheel.h>

#define MS 1000000ull
#define SENDS 6 /* messages per talking client, IDLE_MS / 3 apart */

enum kind { LISTENER, TIMERFD, SERVER_CONN, CLIENT };

struct source {
	enum kind kind;
	int fd;
};

struct conn { /* the server's side of a connection */
	struct source src;
	struct tw_timer idle;
	uint64_t expires; /* the idle deadline last armed */
};

struct client {
	struct source src;
	struct tw_timer send;
	uint64_t send_due;
	uint64_t connected;      /* just before connect() */
	uint64_t sent_at[SENDS]; /* when each message went out */
	int sent, echoed_bytes;
	int closed;
};

static struct tw_wheel *wheel;
static int epfd;
static uint64_t idle_ns;
static uint64_t timerfd_armed; /* what the timerfd holds; 0: nothing pending */
static unsigned long settimes, early, closed_by_server, closed_seen, messages, peer_first;
static uint64_t worst_late;

static void watch(struct source *s, int fd, enum kind kind)
{
	struct epoll_event ev = { .events = EPOLLIN, .data.ptr = s };

	s->kind = kind;
	s->fd = fd;
	if (epoll_ctl(epfd, EPOLL_CTL_ADD, fd, &ev) < 0) {
		perror("epoll_ctl");
		exit(1);
	}
}

/* The notify hook: the wheel's next expiry moved earlier, the wheel
 * emptied, or an advance ended. Arm the timerfd for it, absolute, unless it
 * already holds that moment. */
static int arm_timerfd(struct tw_wheel *w, uint64_t next, void *arg)
{
	struct itimerspec its;
	int tfd = *(int *)arg;

	(void)w;
	if (next == timerfd_armed)
		return 0;
	memset(&its, 0, sizeof(its)); /* all zero: disarm */
	if (next != UINT64_MAX)
		tw_ns_to_timespec(&its.it_value, next);
	if (timerfd_settime(tfd, TFD_TIMER_ABSTIME, &its, NULL) < 0) {
		perror("timerfd_settime");
		exit(1);
	}
	timerfd_armed = next == UINT64_MAX ? 0 : next;
	settimes++;
	return 1;
}

static void on_idle(struct tw_timer *t)
{
	struct conn *c = tw_container_of(t, struct conn, idle);
	uint64_t now = tw_clock_monotonic();

	if (now < c->expires || tw_now(wheel) < c->expires)
		early++;
	if (now - c->expires > worst_late)
		worst_late = now - c->expires;
	closed_by_server++;
	close(c->src.fd); /* also leaves the epoll set */
	free(c);
}

static void on_send(struct tw_timer *t)
{
	struct client *cl = tw_container_of(t, struct client, send);
	uint64_t now = tw_clock_monotonic();

	if (now < cl->send_due)
		early++;
	/* Before the write: the server reads it later. On a loaded machine
	 * the server may have closed the connection already (it had not read
	 * the last message in time): then the send fails, harmlessly. */
	cl->sent_at[cl->sent++] = now;
	if (send(cl->src.fd, "ping", 4, MSG_NOSIGNAL) != 4)
		return;
	if (cl->sent < SENDS) {
		cl->send_due = tw_deadline(cl->send_due, idle_ns / 3);
		tw_add(wheel, &cl->send, cl->send_due);
	}
}

static void accept_all(int lfd)
{
	for (;;) {
		int fd = accept4(lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
		struct conn *c;

		if (fd < 0) {
			if (errno == EAGAIN || errno == EWOULDBLOCK)
				return;
			perror("accept4");
			exit(1);
		}
		c = calloc(1, sizeof(*c));
		if (!c)
			exit(1);
		watch(&c->src, fd, SERVER_CONN);
		tw_timer_init(&c->idle, on_idle);
		c->expires = tw_deadline(tw_clock_monotonic(), idle_ns);
		tw_add(wheel, &c->idle, c->expires);
	}
}

static void serve(struct conn *c)
{
	char buf[512];
	ssize_t n = read(c->src.fd, buf, sizeof(buf));

	if (n > 0) {
		messages++;
		/* Idle again from now: push the deadline. O(1), and no system
		 * call, because it moves later. */
		c->expires = tw_deadline(tw_clock_monotonic(), idle_ns);
		tw_mod(wheel, &c->idle, c->expires);
		if (write(c->src.fd, buf, (size_t)n) != n) {
			perror("server write");
			exit(1);
		}
	} else if (n == 0 || (errno != EAGAIN && errno != EINTR)) {
		/* The peer went first: clients never do, so this is a fault. */
		peer_first++;
		tw_del(wheel, &c->idle);
		close(c->src.fd);
		free(c);
	}
}

static void client_read(struct client *cl)
{
	char buf[512];
	ssize_t n = read(cl->src.fd, buf, sizeof(buf));
	int answered;
	uint64_t idle_since;

	if (n > 0)
		cl->echoed_bytes += (int)n;
	if (n > 0 || (n < 0 && errno == EAGAIN))
		return;
	/* End of file (or reset): the server closed us. Not before it had been
	 * idle for idle_ns since the last message it answered, by this side's
	 * clock too: that message was sent before the server read it. */
	answered = cl->echoed_bytes / 4;
	idle_since = answered ? cl->sent_at[answered - 1] : cl->connected;
	if (tw_clock_monotonic() < tw_deadline(idle_since, idle_ns))
		early++;
	cl->closed = 1;
	closed_seen++;
	tw_del(wheel, &cl->send);
	close(cl->src.fd);
}

static void give_up(int sig)
{
	static const char msg[] = "epoll_server: FAILED, connections still open after the deadline (lost timers)\n";

	(void)sig;
	if (write(2, msg, sizeof(msg) - 1) < 0)
		_exit(2);
	_exit(1);
}

int main(int argc, char **argv)
{
	int conns = argc > 1 ? atoi(argv[1]) : 200;
	int idle_ms = argc > 2 ? atoi(argv[2]) : 200;
	struct sockaddr_in addr = { .sin_family = AF_INET };
	socklen_t len = sizeof(addr);
	struct source listener, timer;
	struct client *clients;
	int lfd, tfd, err;

	if (conns < 2 || idle_ms < 3) {
		fprintf(stderr, "usage: epoll_server [CONNS >= 2 [IDLE_MS >= 3]]\n");
		return 2;
	}
	idle_ns = (uint64_t)idle_ms * MS;
	clients = calloc((size_t)conns, sizeof(*clients));
	epfd = epoll_create1(EPOLL_CLOEXEC);
	tfd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
	lfd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (!clients || epfd < 0 || tfd < 0 || lfd < 0 || bind(lfd, (struct sockaddr *)&addr, len) < 0 ||
	    listen(lfd, SOMAXCONN) < 0 || getsockname(lfd, (struct sockaddr *)&addr, &len) < 0) {
		perror("setup");
		return 1;
	}
	err = tw_wheel_create(&wheel, NULL, tw_clock_monotonic());
	if (err < 0) {
		fprintf(stderr, "tw_wheel_create: %s\n", strerror(-err));
		return 1;
	}
	/* The hook is not called when installed: arm for the wheel as it is. */
	tw_set_notify(wheel, arm_timerfd, &tfd);
	arm_timerfd(wheel, tw_next_expiry(wheel), &tfd);
	watch(&listener, lfd, LISTENER);
	watch(&timer, tfd, TIMERFD);

	for (int i = 0; i < conns; i++) {
		struct client *cl = &clients[i];
		int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

		cl->connected = tw_clock_monotonic();
		if (fd < 0 || connect(fd, (struct sockaddr *)&addr, len) < 0) {
			perror("client connect");
			return 1;
		}
		watch(&cl->src, fd, CLIENT);
		tw_timer_init(&cl->send, on_send);
		if (i % 2 == 0) { /* a talker */
			cl->send_due = tw_deadline(cl->connected, idle_ns / 3);
			tw_add(wheel, &cl->send, cl->send_due);
		}
	}
	/* Every connection is closed long before this, however busy the
	 * machine; if not, timers were lost. */
	signal(SIGALRM, give_up);
	alarm((unsigned)(60 + (uint64_t)idle_ms * (SENDS + 2) / 1000));

	while (closed_seen < (unsigned long)conns) {
		struct epoll_event events[64];
		int n = epoll_wait(epfd, events, 64, -1); /* the timerfd is the timeout */

		if (n < 0 && errno != EINTR) {
			perror("epoll_wait");
			return 1;
		}
		for (int i = 0; i < n; i++) {
			struct source *s = events[i].data.ptr;
			uint64_t expirations;

			switch (s->kind) {
			case LISTENER:
				accept_all(s->fd);
				break;
			case TIMERFD:
				if (read(s->fd, &expirations, sizeof(expirations)) > 0)
					timerfd_armed = 0; /* fired: nothing pending any more */
				break;
			case SERVER_CONN:
				serve((struct conn *)s);
				break;
			case CLIENT:
				client_read((struct client *)s);
				break;
			}
		}
		/* Timers fire here, against the clock, whatever woke the loop. */
		tw_advance(wheel, tw_clock_monotonic());
	}
	alarm(0);

	printf("epoll_server: %d connections on 127.0.0.1, idle timeout %d ms, one timerfd\n", conns, idle_ms);
	printf("  messages echoed          %lu (each re-arms an idle timer)\n", messages);
	printf("  closed by idle timers    %lu\n", closed_by_server);
	printf("  timerfd_settime calls    %lu\n", settimes);
	printf("  latest close after due   %.1f ms\n", (double)worst_late / MS);
	tw_wheel_destroy(wheel);
	free(clients);
	close(tfd);
	close(lfd);
	close(epfd);
	if (early || closed_by_server != (unsigned long)conns || peer_first) {
		printf("epoll_server: FAILED: %lu early, %lu of %d closed by the server, %lu by the client first, "
		       "%lu messages\n", early, closed_by_server, conns, peer_first, messages);
		return 1;
	}
	printf("epoll_server: OK, every connection closed once by its idle timer, none early\n");
	return 0;
}
