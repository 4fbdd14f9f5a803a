/* SPDX-License-Identifier: MIT */
/*
 * A libuv program as a user of the installed library writes it, built for
 * the target with the installed timerwheel-uv pkg-config file, run on a
 * real libuv loop: the backend's wheel and the uv_timer_t layer each arm
 * two timers and cancel one. The others must fire once, never early by
 * the clock each is armed on (uv_hrtime() for the wheel, the loop's
 * uv_now() for the layer, as libuv's own timers); the cancelled ones
 * never; and the loop must close with nothing left on it.
 */
/* libuv's Unix header needs POSIX's types, which strict C11 hides. */
#define _POSIX_C_SOURCE 200809L

#include <stdio.h>
#include <timerwheel/uv.h>
#include <timerwheel/uv_timer.h>

#define MS 1000000u

static struct {
	struct tw_timer kept, cancelled;
	int kept_fired, cancelled_fired, early;
	tw_uv_timer_t layer_kept, layer_cancelled;
	uint64_t layer_started_ms;
	int layer_fired, layer_cancelled_fired, layer_closed;
} s;

static void on_fire(struct tw_timer *t)
{
	if (uv_hrtime() < t->expires || tw_uv_now() < t->expires)
		s.early++;
	if (t == &s.kept)
		s.kept_fired++;
	else
		s.cancelled_fired++;
}

static void on_layer_closed(tw_uv_timer_t *t)
{
	(void)t;
	s.layer_closed++;
}

static void on_layer_fire(tw_uv_timer_t *t)
{
	if (t != &s.layer_kept) {
		s.layer_cancelled_fired++;
		return;
	}
	if (uv_now(t->loop) < s.layer_started_ms + 15)
		s.early++;
	s.layer_fired++;
}

int main(void)
{
	uv_loop_t loop;
	struct tw_uv h;
	struct tw_wheel *w;
	uint64_t now;

	if (uv_loop_init(&loop) != 0 || tw_wheel_create(&w, NULL, tw_uv_now()) != 0 ||
	    tw_uv_attach(&loop, &h, w, 0) != 0)
		return 1;
	tw_timer_init(&s.kept, on_fire);
	tw_timer_init(&s.cancelled, on_fire);
	now = tw_uv_now();
	if (tw_add(w, &s.kept, now + 20 * MS) != 0 || tw_add(w, &s.cancelled, now + 10 * MS) != 0 ||
	    tw_del(w, &s.cancelled) != 1)
		return 1;

	if (tw_uv_timer_init(&loop, &s.layer_kept) != 0 || tw_uv_timer_init(&loop, &s.layer_cancelled) != 0)
		return 1;
	s.layer_started_ms = uv_now(&loop);
	if (tw_uv_timer_start(&s.layer_kept, on_layer_fire, 15, 0) != 0 ||
	    tw_uv_timer_start(&s.layer_cancelled, on_layer_fire, 5, 0) != 0 ||
	    tw_uv_timer_stop(&s.layer_cancelled) != 0)
		return 1;

	/* Nothing else holds the loop: it ends once the kept timers fired. */
	int run = uv_run(&loop, UV_RUN_DEFAULT);
	tw_uv_timer_close(&s.layer_kept, on_layer_closed);
	tw_uv_timer_close(&s.layer_cancelled, on_layer_closed);
	tw_uv_close(&h, NULL);
	tw_wheel_destroy(w);
	int left = uv_run(&loop, UV_RUN_DEFAULT), closed = uv_loop_close(&loop);

	printf("timerwheel %s on libuv %s: wheel fired %d, cancelled %d; layer fired %d, cancelled %d, closed %d; "
	       "early %d; loop run %d, left %d, close %d\n",
	       tw_version_string(), uv_version_string(), s.kept_fired, s.cancelled_fired, s.layer_fired,
	       s.layer_cancelled_fired, s.layer_closed, s.early, run, left, closed);
	if (s.kept_fired != 1 || s.cancelled_fired != 0 || s.layer_fired != 1 || s.layer_cancelled_fired != 0 ||
	    s.layer_closed != 2 || s.early != 0 || run != 0 || left != 0 || closed != 0) {
		printf("consumer_uv: FAILED\n");
		return 1;
	}
	printf("consumer_uv: OK\n");
	return 0;
}
