/* SPDX-License-Identifier: MIT */
/*
 * wheel_tour: a guided walk through a tiny hierarchical wheel, as seeds 000
 * and 001 draw it: a tick of 1 s and 4 slots per level, so level 0 holds the
 * next 4 seconds one second per slot, level 1 the next 16 seconds four per
 * slot, level 2 the next 64 seconds sixteen per slot, and so on.
 *
 * A few timers are armed at t = 0; then the clock jumps from one
 * tw_next_expiry() to the next, and after every step tw_dump() draws the
 * levels: one cell per slot, '>' marking the slot the clock is in, and the
 * number of timers in each occupied slot. Far timers start on a coarse
 * level and cascade down, slot by slot, until they sit on level 0 and fire
 * on their exact second.
 */
#define _POSIX_C_SOURCE 200809L

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <timerwheel.h>
#include <timerwheel/debug.h>

#define SEC 1000000000ull

struct named {
	struct tw_timer timer;
	const char *name;
	uint64_t due_s;
	int fired;
};

static struct tw_wheel *wheel;
static struct named timers[] = {
	{ .name = "A", .due_s = 3 },
	{ .name = "B", .due_s = 6 },
	{ .name = "C", .due_s = 21 },
	{ .name = "D", .due_s = 70 },
};
#define NTIMERS (sizeof(timers) / sizeof(timers[0]))
static int wrong;

static void ring(struct tw_timer *t)
{
	struct named *n = tw_container_of(t, struct named, timer);
	uint64_t now = tw_now(wheel);

	n->fired++;
	if (now < n->due_s * SEC || now - n->due_s * SEC >= SEC)
		wrong++;
	printf("   fired %s (due at %llu s)\n", n->name, (unsigned long long)n->due_s);
}

/*
 * tw_dump() names timers by address; this swaps each address for the
 * timer's name, so the drawing says which timer sits where.
 */
static void dump(void)
{
	char *text = NULL, *line, *save = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);

	if (!f) {
		tw_dump(wheel, stdout, true);
		return;
	}
	tw_dump(wheel, f, true);
	fclose(f);
	for (line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		const struct named *named = NULL;

		for (size_t i = 0; i < NTIMERS && !named; i++) {
			char addr[32];

			snprintf(addr, sizeof(addr), "%p", (void *)&timers[i].timer);
			if (strstr(line, addr))
				named = &timers[i];
		}
		if (named)
			printf("      timer %s, due at %llu s\n", named->name,
			       (unsigned long long)named->due_s);
		else
			printf("%s\n", line);
	}
	free(text);
}

int main(void)
{
	const struct tw_config cfg = { .tick_ns = SEC, .slot_bits = 2 };
	struct tw_stats before, after;
	uint64_t width = 1;
	int err;

	err = tw_wheel_create(&wheel, &cfg, 0);
	if (err < 0) {
		fprintf(stderr, "tw_wheel_create: %s\n", strerror(-err));
		return 1;
	}
	printf("A wheel with a tick of 1 s and 4 slots per level:\n");
	for (int level = 0; level < 4; level++, width *= 4)
		printf("  level %d: 4 slots of %3llu s, reaching %3llu s ahead\n", level,
		       (unsigned long long)width, (unsigned long long)width * 4);
	printf("  ... and more levels up to the end of 64-bit time.\n\n");

	printf("t = 0 s: arm");
	for (size_t i = 0; i < NTIMERS; i++) {
		tw_timer_init(&timers[i].timer, ring);
		tw_add(wheel, &timers[i].timer, timers[i].due_s * SEC);
		printf(" %s at %llu s%s", timers[i].name, (unsigned long long)timers[i].due_s,
		       i + 1 < NTIMERS ? "," : "\n");
	}
	printf("Each goes to the lowest level whose reach covers its distance.\n");
	dump();

	while (tw_count(wheel) > 0) {
		uint64_t next = tw_next_expiry(wheel);
		int fired;

		if (next == UINT64_MAX)
			break;
		tw_get_stats(wheel, &before);
		printf("\nt = %llu s: the next expiry; advance the clock to it\n",
		       (unsigned long long)(next / SEC));
		fired = tw_advance(wheel, next);
		tw_get_stats(wheel, &after);
		if (after.cascaded > before.cascaded)
			printf("   cascaded %llu timer%s down to a finer level\n",
			       (unsigned long long)(after.cascaded - before.cascaded),
			       after.cascaded - before.cascaded == 1 ? "" : "s");
		if (fired == 0 && after.cascaded == before.cascaded)
			printf("   nothing to do (an early wake-up)\n");
		dump();
	}

	for (size_t i = 0; i < NTIMERS; i++)
		if (timers[i].fired != 1)
			wrong++;
	tw_get_stats(wheel, &after);
	printf("\n%llu wake-ups, %llu cascades, %llu timers fired\n",
	       (unsigned long long)after.advances, (unsigned long long)after.cascaded,
	       (unsigned long long)after.fired);
	if (wrong) {
		printf("wheel_tour: FAILED, a timer fired early, late or not exactly once\n");
	} else {
		printf("wheel_tour: every timer fired once, exactly on its own second\n");
	}
	tw_wheel_destroy(wheel);
	return wrong ? 1 : 0;
}
