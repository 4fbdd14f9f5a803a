/* SPDX-License-Identifier: MIT
 *
 * The libuv backend's wake probe and the uv_timer_t layer's probes, on a
 * real loop: the lines this program expects (expected.h), which
 * probe_args.py --only compares with what the probes passed. A wake-up's
 * clock is the loop's to know: "*" there, and after the run the program
 * checks that it woke once.
 */
#define _POSIX_C_SOURCE 200809L /* libuv's header needs POSIX's types */
#include <timerwheel/uv.h>
#include <timerwheel/uv_timer.h>

#include "expected.h"

static unsigned fired;

static void on_timer(struct tw_uv_timer *t)
{
	(void)t;
	fired++;
}

static void on_closed(struct tw_uv *h)
{
	(void)h;
}

static void check(int got, const char *what)
{
	if (got == 0)
		return;
	fprintf(stderr, "uv_calls: %s returned %d\n", what, got);
	exit(1);
}

int main(int argc, char **argv)
{
	uv_loop_t loop;
	struct tw_uv uv;
	struct tw_wheel *w;
	struct tw_uv_timer soon, later;
	struct tw_uv_stats st;

	expected_open(argc, argv, "uv_calls");
	check(uv_loop_init(&loop), "uv_loop_init");
	check(tw_wheel_create(&w, NULL, tw_uv_now()), "tw_wheel_create");
	check(tw_uv_attach(&loop, &uv, w, 0), "tw_uv_attach");
	check(tw_uv_timer_init_on(&uv, &soon), "tw_uv_timer_init_on");
	check(tw_uv_timer_init_on(&uv, &later), "tw_uv_timer_init_on");

	check(tw_uv_timer_start(&soon, on_timer, 5, 0), "tw_uv_timer_start");
	expect("uv_timer_start %ju 5 0", p(&soon));
	check(tw_uv_timer_start(&later, on_timer, 1000, 250), "tw_uv_timer_start");
	expect("uv_timer_start %ju 1000 250", p(&later));
	check(tw_uv_timer_stop(&later), "tw_uv_timer_stop");
	expect("uv_timer_stop %ju 1", p(&later));
	check(tw_uv_timer_stop(&later), "tw_uv_timer_stop");
	expect("uv_timer_stop %ju 0", p(&later));

	/* One wake-up, for the one timer left: it fires. */
	expect("wake uv %ju * * *", p(tw_uv_wheel(&uv)));
	expect("uv_timer_fire %ju %ju", p(&soon), (uintmax_t)(uintptr_t)on_timer);
	check(uv_run(&loop, UV_RUN_DEFAULT), "uv_run");

	check(tw_uv_get_stats(&uv, &st), "tw_uv_get_stats");
	tw_uv_close(&uv, on_closed);
	check(uv_run(&loop, UV_RUN_DEFAULT), "uv_run");
	check(uv_loop_close(&loop), "uv_loop_close");
	tw_wheel_destroy(w);
	printf("uv_calls: %u fired, %ju wake-ups\n", fired, (uintmax_t)st.wakeups);
	return fired == 1 && st.wakeups == 1 ? 0 : 1;
}
