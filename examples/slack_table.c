/* SPDX-License-Identifier: MIT */
/*
 * slack_table: where a timer with a slack window fires from.
 *
 * For each slack and distance, arms one timer on a default wheel (1 ms
 * tick, 64 slots per level), advances the clock one tick at a time until it
 * fires, and prints the level of the slot it fired from and how many times
 * it was placed in a slot (tw_stats.placed): a window that holds the start
 * of a coarse slot spares the timer every finer level. The timer is alone,
 * so it fires at the tick the wheel picked in its window, the coarsest one;
 * the second column is the power of two that every window of that slack
 * holds a multiple of, so that tick is a multiple of it at least.
 */
#include <stdio.h>

#include <timerwheel.h>
#include <timerwheel/debug.h>

#define MS 1000000ull
#define SEC (1000 * MS)

static int fired;

static void on_fire(struct tw_timer *t)
{
	(void)t;
	fired = 1;
}

/* Fires one timer; returns the placements, and the level of the slot it was
 * in when it came due. */
static int run(uint64_t distance, uint64_t slack, int *level, uint64_t *late)
{
	struct tw_wheel *w;
	struct tw_timer t;
	struct tw_stats st;
	uint64_t start = 1000 * SEC + 123 * MS + 456; /* not on any boundary */

	if (tw_wheel_create(&w, NULL, start) != 0)
		return -1;
	tw_timer_init(&t, on_fire);
	tw_add_range(w, &t, start + distance, slack);
	fired = 0;
	*level = -1;
	for (uint64_t now = start; !fired;) {
		unsigned l, s;

		if (tw_timer_bucket(w, &t, &l, &s) == 0)
			*level = (int)l;
		now = (now / MS + 1) * MS;
		tw_advance(w, now);
		*late = now - (start + distance);
	}
	tw_get_stats(w, &st);
	tw_wheel_destroy(w);
	return (int)st.placed;
}

int main(void)
{
	static const struct {
		const char *name;
		uint64_t ns;
	} slacks[] = { { "0", 0 }, { "10 ms", 10 * MS }, { "100 ms", 100 * MS }, { "1 s", SEC },
		       { "10 s", 10 * SEC }, { "1 min", 60 * SEC }, { "10 min", 600 * SEC } },
	  dists[] = { { "50 ms", 50 * MS }, { "3 s", 3 * SEC }, { "1 min", 60 * SEC },
		      { "30 min", 1800 * SEC }, { "2 h", 7200 * SEC } };
	const int ns = sizeof(slacks) / sizeof(slacks[0]), nd = sizeof(dists) / sizeof(dists[0]);

	printf("Where a timer fires from: level L / placements, 1 ms tick, 64 slots per level\n\n");
	printf("%-8s %-12s", "slack", "multiple of");
	for (int d = 0; d < nd; d++)
		printf(" %12s", dists[d].name);
	printf("\n");
	for (int s = 0; s < ns; s++) {
		uint64_t ticks = slacks[s].ns / MS + 1, p = 1;
		char buf[32];

		while (p * 2 <= ticks)
			p *= 2;
		snprintf(buf, sizeof(buf), "%llu ms", (unsigned long long)p);
		printf("%-8s %-12s", slacks[s].name, buf);
		for (int d = 0; d < nd; d++) {
			int level;
			uint64_t late = 0;
			int placed = run(dists[d].ns, slacks[s].ns, &level, &late);

			if (placed < 0 || late > slacks[s].ns + MS) {
				printf("\nslack_table: FAILED (late by %llu ns)\n", (unsigned long long)late);
				return 1;
			}
			snprintf(buf, sizeof(buf), "L%d / %d", level, placed);
			printf(" %12s", buf);
		}
		printf("\n");
	}
	printf("\nslack_table: every timer fired inside its window\n");
	return 0;
}
