/* SPDX-License-Identifier: MIT */
/*
 * A plain C program using the installed libuv backend: one timer 2 ms away
 * on a real loop; uv_run() returns once it fired and the handle closed.
 */
#include <stdio.h>

#include <timerwheel/uv.h>

static struct tw_uv handle;
static struct tw_wheel *wheel;
static int fired;
static int closed;

static void on_closed(struct tw_uv *h)
{
	(void)h;
	closed = 1;
}

static void on_fire(struct tw_timer *t)
{
	if (tw_uv_now() < t->expires) {
		fprintf(stderr, "uv consumer: timer fired early\n");
		return;
	}
	fired = 1;
	tw_uv_close(&handle, on_closed);
}

int main(void)
{
	uv_loop_t loop;
	struct tw_timer t;
	int err;

	if (uv_loop_init(&loop) != 0)
		return 1;
	err = tw_wheel_create(&wheel, NULL, tw_uv_now());
	if (err == 0)
		err = tw_uv_attach(&loop, &handle, wheel, 0);
	if (err != 0) {
		fprintf(stderr, "tw_uv_attach: %d\n", err);
		return 1;
	}
	tw_timer_init(&t, on_fire);
	if (tw_add(wheel, &t, tw_uv_now() + 2000000u) != 0)
		return 1;
	uv_run(&loop, UV_RUN_DEFAULT);
	if (!fired || !closed) {
		fprintf(stderr, "uv consumer: fired %d, closed %d\n", fired, closed);
		return 1;
	}
	tw_wheel_destroy(wheel);
	if (uv_loop_close(&loop) != 0)
		return 1;
	printf("uv consumer: OK\n");
	return 0;
}
