/* SPDX-License-Identifier: MIT
 *
 * The io_uring backend's wake probe, on a loop that owns its ring: the
 * lines this program expects (expected.h), for probe_args.py --only.
 * Exit 77 (a skip) where the kernel refuses io_uring.
 */
#define _GNU_SOURCE /* liburing's header needs sigset_t and AT_FDCWD */
#include <string.h>

#include <timerwheel/uring.h>

#include "expected.h"

static unsigned fired;

static void on_fire(struct tw_timer *t)
{
	(void)t;
	fired++;
}

int main(int argc, char **argv)
{
	struct tw_wheel *w;
	struct tw_uring_loop *l;
	struct tw_timer t;
	int r;

	expected_open(argc, argv, "uring_calls");
	if (tw_wheel_create(&w, NULL, tw_uring_now()) != 0)
		return 1;
	r = tw_uring_loop_init(&l, w, NULL);
	if (r == -ENOSYS || r == -EPERM) {
		printf("uring_calls: the kernel refuses io_uring (%s)\n", strerror(-r));
		return 77;
	}
	if (r != 0) {
		fprintf(stderr, "uring_calls: tw_uring_loop_init: %s\n", strerror(-r));
		return 1;
	}
	tw_timer_init(&t, on_fire);
	if (tw_add(w, &t, tw_deadline(tw_uring_now(), 5000000)) != 0)
		return 1;
	/* One wake-up, its clock the kernel's: "*". */
	expect("wake uring %ju * * *", p(w));
	r = tw_uring_run(l);
	tw_uring_loop_close(l);
	tw_wheel_destroy(w);
	printf("uring_calls: run %d, %u fired\n", r, fired);
	return r == 0 && fired == 1 ? 0 : 1;
}
