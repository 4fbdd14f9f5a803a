/* SPDX-License-Identifier: MIT */
/*
 * The README's io_uring fragment, as printed, with the timer t the README
 * says it uses: the timer fires once. Skipped (77), saying so, where the
 * kernel refuses io_uring.
 */
/* liburing first: it sets the feature macros its own includes need. */
#include <timerwheel/uring.h>

#include <errno.h>
#include <stdio.h>

#define MS 1000000ull

static int fired;

static void on_timer(struct tw_timer *t)
{
	(void)t;
	fired++;
}

/* The fragment returns 1 where io_uring is refused. */
static int run(void)
{
	struct tw_wheel *w;
	struct tw_timer t;

	tw_timer_init(&t, on_timer);
#include "fragment_uring.h"
	return 0;
}

int main(void)
{
	struct io_uring ring;
	int r = io_uring_queue_init(2, &ring, 0);

	if (r == -ENOSYS || r == -EPERM || r == -EACCES) {
		printf("SKIP: the kernel refuses io_uring here; the README's io_uring fragment is NOT run\n");
		return 77;
	}
	if (r == 0)
		io_uring_queue_exit(&ring);
	if (run() != 0 || fired != 1) {
		printf("FAIL: %d fired\n", fired);
		return 1;
	}
	printf("the README's io_uring fragment works as printed\n");
	return 0;
}
