/* SPDX-License-Identifier: MIT */
/*
 * The README's libuv fragment, as printed, with the loop and the timer t
 * the README says it uses: the timer fires once, and the loop closes.
 */
#define _POSIX_C_SOURCE 200809L /* for <uv.h> under strict C11, as the README says */

#include <stdio.h>

#include <timerwheel/uv.h>

#define MS 1000000ull

static int fired;

static void on_timer(struct tw_timer *t)
{
	(void)t;
	fired++;
}

int main(void)
{
	uv_loop_t *loop = uv_default_loop();
	struct tw_wheel *w;
	struct tw_timer t;

	tw_timer_init(&t, on_timer);
#include "fragment_uv.h"
	if (fired != 1 || uv_loop_close(loop) != 0) {
		printf("FAIL: %d fired, or the loop did not close\n", fired);
		return 1;
	}
	printf("the README's libuv fragment works as printed\n");
	return 0;
}
