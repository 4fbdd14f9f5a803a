/* SPDX-License-Identifier: MIT */
/*
 * A plain C program using the installed io_uring backend: one timer 2 ms
 * away on a ring the backend owns; tw_uring_run() returns once it fired.
 * Exits 77 (skip) where the kernel refuses io_uring.
 */
#include <errno.h>
#include <stdio.h>

#include <timerwheel/uring.h>

static int fired;

static void on_fire(struct tw_timer *t)
{
	if (tw_uring_now() < t->expires) {
		fprintf(stderr, "uring consumer: timer fired early\n");
		return;
	}
	fired = 1;
}

int main(void)
{
	struct tw_wheel *w;
	struct tw_uring_loop *u;
	struct tw_timer t;
	int err;

	if (tw_wheel_create(&w, NULL, tw_uring_now()) != 0)
		return 1;
	err = tw_uring_loop_init(&u, w, NULL);
	if (err == -ENOSYS || err == -EPERM) {
		printf("uring consumer: io_uring refused by the kernel (%d), skipped\n", err);
		tw_wheel_destroy(w);
		return 77;
	}
	if (err != 0) {
		fprintf(stderr, "tw_uring_loop_init: %d\n", err);
		return 1;
	}
	tw_timer_init(&t, on_fire);
	if (tw_add(w, &t, tw_uring_now() + 2000000u) != 0)
		return 1;
	err = tw_uring_run(u);
	if (err != 0 || !fired) {
		fprintf(stderr, "uring consumer: run %d, fired %d\n", err, fired);
		return 1;
	}
	if (tw_uring_loop_close(u) != 0)
		return 1;
	tw_wheel_destroy(w);
	printf("uring consumer: OK\n");
	return 0;
}
