/* SPDX-License-Identifier: MIT */
/*
 * A plain C program using the installed core, as a new user would write it.
 * The clock is simulated, so the outcome is exact: three timers fire in
 * order of expiry, none early, and the wheel ends empty and consistent.
 */
#include <stdio.h>
#include <stdlib.h>

#include <timerwheel.h>
#include <timerwheel/debug.h>

#define MS 1000000ull

struct job {
	const char *name;
	struct tw_timer timer;
};

static const char *fired[3];
static unsigned nfired;
static uint64_t clock_now;

static void on_fire(struct tw_timer *t)
{
	struct job *j = tw_container_of(t, struct job, timer);

	if (t->expires > clock_now) {
		fprintf(stderr, "%s fired early\n", j->name);
		exit(1);
	}
	if (nfired < 3)
		fired[nfired] = j->name;
	nfired++;
}

int main(void)
{
	struct job jobs[3] = { { "c", { 0 } }, { "a", { 0 } }, { "b", { 0 } } };
	const uint64_t due[3] = { 30 * MS, 10 * MS, 20 * MS };
	struct tw_wheel *w;
	unsigned i;

	if (tw_wheel_create(&w, NULL, 0) != 0)
		return 1;
	for (i = 0; i < 3; i++) {
		tw_timer_init(&jobs[i].timer, on_fire);
		if (tw_add(w, &jobs[i].timer, due[i]) != 0)
			return 1;
	}
	while (tw_count(w) > 0) {
		clock_now = tw_next_expiry(w);
		if (tw_advance(w, clock_now) < 0)
			return 1;
	}
	if (nfired != 3 || fired[0][0] != 'a' || fired[1][0] != 'b' || fired[2][0] != 'c' ||
	    tw_check(w) != 0) {
		fprintf(stderr, "core consumer: wrong firing order or count (%u)\n", nfired);
		return 1;
	}
	tw_wheel_destroy(w);
	printf("core consumer: OK (TW_VERSION %d.%d.%d)\n", TW_VERSION_MAJOR, TW_VERSION_MINOR,
	       TW_VERSION_PATCH);
	return 0;
}
