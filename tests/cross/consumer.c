/* SPDX-License-Identifier: MIT */
/*
 * A program as a user of the installed library writes it, built for the
 * target with the installed pkg-config file: arms two timers, cancels one,
 * and checks that the other fires once, on time, and the cancelled one
 * never.
 */
#include <stdio.h>
#include <timerwheel.h>

#define MS 1000000u

struct job {
	struct tw_timer timer;
	int fired;
};

static void on_fire(struct tw_timer *t)
{
	tw_container_of(t, struct job, timer)->fired++;
}

int main(void)
{
	struct tw_wheel *w;
	struct job kept = { .fired = 0 }, cancelled = { .fired = 0 };

	if (tw_wheel_create(&w, NULL, 0) != 0)
		return 1;
	tw_timer_init(&kept.timer, on_fire);
	tw_timer_init(&cancelled.timer, on_fire);
	if (tw_add(w, &kept.timer, 5 * MS) != 0 || tw_add(w, &cancelled.timer, 3 * MS) != 0)
		return 1;
	if (tw_del(w, &cancelled.timer) != 1)
		return 1;
	int early = tw_advance(w, 4 * MS), due = tw_advance(w, 5 * MS), after = tw_advance(w, 100 * MS);
	tw_wheel_destroy(w);
	printf("timerwheel %s, %zu-byte struct tw_timer: fired %d (early %d, late %d), cancelled fired %d\n",
	       tw_version_string(), sizeof(struct tw_timer), due, early, after, cancelled.fired);
	if (early != 0 || due != 1 || after != 0 || kept.fired != 1 || cancelled.fired != 0) {
		printf("consumer: FAILED\n");
		return 1;
	}
	printf("consumer: OK\n");
	return 0;
}
