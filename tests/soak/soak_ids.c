/* SPDX-License-Identifier: MIT */
/*
 * The end of the wheel ids, the long way: hold a few wheels with armed
 * timers, then create and destroy wheels until the 32-bit id counter has
 * wrapped (2^32 creations plus a margin, argv[1] to change the count). No
 * new wheel may accept a held wheel's timer: a shared id would let it
 * unlink that timer. The unit test test_ids.cpp crosses the wrap by moving
 * the counter; this crosses it as a long-running program would.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include <timerwheel.h>
#include <timerwheel/debug.h>

static void nop(struct tw_timer *t)
{
	(void)t;
}

int main(int argc, char **argv)
{
	unsigned long long n = argc > 1 ? strtoull(argv[1], NULL, 0) : (1ull << 32) + 1000;
	/* The smallest wheel: one level of two slots. */
	struct tw_config tiny = { .tick_ns = UINT64_MAX, .slot_bits = 1 };
	enum { HELD = 3 };
	struct tw_wheel *held[HELD];
	struct tw_timer t[HELD];
	for (int i = 0; i < HELD; i++) {
		if (tw_wheel_create(&held[i], NULL, 0) != 0)
			return 1;
		tw_timer_init(&t[i], nop);
		tw_add(held[i], &t[i], 1000000000ull);
	}
	for (unsigned long long k = 0; k < n; k++) {
		struct tw_wheel *w;
		if (tw_wheel_create(&w, &tiny, 0) != 0) {
			fprintf(stderr, "soak_ids: tw_wheel_create failed at %llu\n", k);
			return 1;
		}
		for (int i = 0; i < HELD; i++) {
			if (tw_del(w, &t[i]) != -EINVAL) {
				fprintf(stderr, "soak_ids: creation %llu took the id of held wheel %d\n", k, i);
				return 1;
			}
		}
		tw_wheel_destroy(w);
		if ((k & ((1ull << 28) - 1)) == 0 && k)
			fprintf(stderr, "soak_ids: %llu wheels\n", k);
	}
	for (int i = 0; i < HELD; i++) {
		if (!tw_pending(&t[i]) || tw_count(held[i]) != 1 || tw_check(held[i]) != 0) {
			fprintf(stderr, "soak_ids: held wheel %d was touched\n", i);
			return 1;
		}
		tw_wheel_destroy(held[i]);
	}
	printf("soak_ids: %llu wheels created, no held wheel's id handed out again\n", n);
	return 0;
}
