/* SPDX-License-Identifier: MIT */
/*
 * hello: the smallest timerwheel program.
 *
 * A plain poll() loop sleeps until the wheel's next expiry, then advances
 * the wheel to the real clock. The wheel never reads a clock itself, so the
 * same three calls (tw_add, tw_next_expiry, tw_advance) drive it from any
 * loop: poll, epoll, a game loop or a simulation.
 */
#define _POSIX_C_SOURCE 200809L

#include <poll.h>
#include <stdio.h>
#include <string.h>

#include <timerwheel.h>

#define MS 1000000u

struct greeting {
	struct tw_timer timer;
	const char *text;
	uint64_t due;
};

static struct tw_wheel *wheel;
static uint64_t start;
static int fired;
static int early;
static int misordered;
static uint64_t last_due;

static void greet(struct tw_timer *t)
{
	struct greeting *g = tw_container_of(t, struct greeting, timer);

	/* The contract is about the `now` the wheel was advanced to. */
	if (tw_now(wheel) < g->due)
		early++;
	if (g->due < last_due)
		misordered++;
	last_due = g->due;
	fired++;
	printf("%6.1f ms  %-8s (due at %3.0f ms)\n", (double)(tw_clock_monotonic() - start) / MS, g->text,
	       (double)(g->due - start) / MS);
}

int main(void)
{
	/* Armed out of order on purpose: the wheel sorts them by expiry. */
	static struct greeting greetings[] = {
		{ .text = "world", .due = 40 },
		{ .text = "hello", .due = 10 },
		{ .text = "goodbye", .due = 90 },
	};
	const int n = (int)(sizeof(greetings) / sizeof(greetings[0]));
	int err;

	start = tw_clock_monotonic();
	err = tw_wheel_create(&wheel, NULL, start);
	if (err < 0) {
		fprintf(stderr, "tw_wheel_create: %s\n", strerror(-err));
		return 1;
	}
	for (int i = 0; i < n; i++) {
		struct greeting *g = &greetings[i];

		g->due = tw_deadline(start, g->due * MS);
		tw_timer_init(&g->timer, greet);
		tw_add(wheel, &g->timer, g->due);
	}

	while (tw_count(wheel) > 0) {
		/* Whole ms, rounded up so that poll() never wakes before the
		 * next expiry. Real programs pass their sockets here too. */
		int timeout = tw_timeout_ms(tw_clock_monotonic(), tw_next_expiry(wheel));

		if (poll(NULL, 0, timeout) < 0)
			break;
		tw_advance(wheel, tw_clock_monotonic());
	}
	tw_wheel_destroy(wheel);

	if (fired != n || early || misordered) {
		printf("FAILED: %d of %d timers fired, %d early, %d out of order\n", fired, n, early,
		       misordered);
		return 1;
	}
	printf("all %d timers fired in order of expiry, none early\n", n);
	return 0;
}
