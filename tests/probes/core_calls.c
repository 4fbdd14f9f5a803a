/* SPDX-License-Identifier: MIT
 *
 * A fixed run of core calls, on a virtual clock, that passes every core
 * probe, with the lines it expects of them (expected.h). probe_args.py
 * runs it under gdb and compares what the probes passed with these lines.
 */
#include <timerwheel.h>

#include "expected.h"

#define MS 1000000ull

static unsigned fired;

static void on_fire(struct tw_timer *t)
{
	(void)t;
	fired++;
}

static int check(int got, int want, const char *what)
{
	if (got == want)
		return 0;
	fprintf(stderr, "core_calls: %s returned %d, not %d\n", what, got, want);
	exit(1);
}

int main(int argc, char **argv)
{
	struct tw_wheel *w;
	struct tw_timer a, b, c, d, e[3], f, g;
	struct tw_request post_f = {0}, post_g = {0};
	uintmax_t fn = (uintptr_t)on_fire;
	unsigned i;

	expected_open(argc, argv, "core_calls");
	check(tw_wheel_create(&w, NULL, 0), 0, "tw_wheel_create");
	tw_timer_init(&a, on_fire);
	tw_timer_init(&b, on_fire);
	tw_timer_init(&c, on_fire);
	tw_timer_init(&d, on_fire);
	tw_timer_init(&f, on_fire);
	tw_timer_init(&g, on_fire);
	for (i = 0; i < 3; i++)
		tw_timer_init(&e[i], on_fire);

	/* Arms: level 0 holds the next 64 ticks of 1 ms, level 1 the next
	 * 64 * 64, level 2 the next 64^3: 10 s is 10000 ticks away. */
	check(tw_add(w, &a, 5 * MS), 0, "tw_add");
	expect("arm %ju %ju %ju 0 0", p(w), p(&a), 5 * MS);
	check(tw_add(w, &b, 10000 * MS), 0, "tw_add");
	expect("arm %ju %ju %ju 0 2", p(w), p(&b), 10000 * MS);
	/* A later re-arm leaves the timer in its slot: level -2. */
	check(tw_mod(w, &a, 6 * MS), 1, "tw_mod");
	expect("arm %ju %ju %ju 0 -2", p(w), p(&a), 6 * MS);
	check(tw_del(w, &b), 1, "tw_del");
	expect("cancel %ju %ju 1", p(w), p(&b));
	check(tw_del(w, &b), 0, "tw_del");
	expect("cancel %ju %ju 0", p(w), p(&b));
	/* Due at once: the due list, level -1. */
	check(tw_add(w, &c, 0), 0, "tw_add");
	expect("arm %ju %ju 0 0 -1", p(w), p(&c));
	check(tw_add(w, &d, 100 * MS), 0, "tw_add");
	expect("arm %ju %ju %ju 0 1", p(w), p(&d), 100 * MS);

	/* Fires in the order they came due, lateness against now. */
	check(tw_advance(w, 7 * MS), 2, "tw_advance");
	expect("fire %ju %ju 0 %ju %ju", p(w), p(&c), 7 * MS, fn);
	expect("fire %ju %ju %ju %ju %ju", p(w), p(&a), 6 * MS, 1 * MS, fn);
	expect("advance %ju %ju 2 0 0", p(w), 7 * MS);

	/* d's level-1 slot comes due: one timer cascades, and fires. The
	 * cascade and advance probes pass the wheel's count of cascaded timers
	 * so far, 1 from here on. */
	check(tw_advance(w, 101 * MS), 1, "tw_advance");
	expect("cascade %ju 1 1", p(w));
	expect("fire %ju %ju %ju %ju %ju", p(w), p(&d), 100 * MS, 1 * MS, fn);
	expect("advance %ju %ju 1 1 0", p(w), 101 * MS);

	check(tw_advance(w, 102 * MS), 0, "tw_advance");
	expect("advance %ju %ju 0 1 0", p(w), 102 * MS);

	/* A budget of one leaves two of three due timers for the next advance. */
	for (i = 0; i < 3; i++) {
		check(tw_add(w, &e[i], (103 + i) * MS), 0, "tw_add");
		expect("arm %ju %ju %ju %ju 0", p(w), p(&e[i]), (103 + i) * MS, 102 * MS);
	}
	check(tw_advance_budget(w, 106 * MS, 1), 1, "tw_advance_budget");
	expect("fire %ju %ju %ju %ju %ju", p(w), p(&e[0]), 103 * MS, 3 * MS, fn);
	expect("advance %ju %ju 1 1 2", p(w), 106 * MS);
	check(tw_advance(w, 107 * MS), 2, "tw_advance");
	expect("fire %ju %ju %ju %ju %ju", p(w), p(&e[1]), 104 * MS, 3 * MS, fn);
	expect("fire %ju %ju %ju %ju %ju", p(w), p(&e[2]), 105 * MS, 2 * MS, fn);
	expect("advance %ju %ju 2 1 0", p(w), 107 * MS);

	/* Requests (kind 1 a re-arm, 3 a cancel), applied in posting order at
	 * the next advance, each through the call it stands for; the depth
	 * counts the drain's requests left, this one included. */
	check(tw_post_mod(w, &post_f, &f, 200 * MS), 0, "tw_post_mod");
	expect("post %ju %ju 1 %ju", p(w), p(&f), 200 * MS);
	check(tw_post_del(w, &post_g, &g), 0, "tw_post_del");
	expect("post %ju %ju 3 0", p(w), p(&g));
	check(tw_advance(w, 108 * MS), 0, "tw_advance");
	expect("apply %ju %ju 1 2", p(w), p(&f));
	expect("arm %ju %ju %ju %ju 1", p(w), p(&f), 200 * MS, 107 * MS);
	expect("apply %ju %ju 3 1", p(w), p(&g));
	expect("cancel %ju %ju 0", p(w), p(&g));
	expect("advance %ju %ju 0 1 0", p(w), 108 * MS);

	tw_wheel_destroy(w);
	printf("core_calls: %u timers fired\n", fired);
	return fired == 6 ? 0 : 1;
}
