/* SPDX-License-Identifier: MIT */
/*
 * What the header promises at its edges, taken at its word: the next
 * expiry after a re-arm, the notify hook's three rules (a timer at the end
 * of time included), what counts as a cascade, and which levels tw_dump
 * draws. Each test failed against a core whose header said one thing and
 * whose code did another.
 */
#define _POSIX_C_SOURCE 200809L /* open_memstream */
#include <timerwheel/debug.h>

#include "common.h"

#define MS 1000000ull

static int fired;
static void count(struct tw_timer *t)
{
	(void)t;
	fired++;
}

/* tw_next_expiry is never later than the first firing, and a bound left
 * early by a re-arm costs one wake-up without work, then is exact again. */
static void next_expiry_after_earlier_rearm(void **state)
{
	(void)state;
	struct tw_wheel *w;
	struct tw_timer a, b;
	assert_int_equal(tw_wheel_create(&w, NULL, 0), 0);
	tw_timer_init(&a, count);
	tw_timer_init(&b, count);
	/* One level-1 slot (64 to 127 ms) holds both; its bound is 100 ms. */
	assert_int_equal(tw_add(w, &a, 100 * MS), 0);
	assert_int_equal(tw_add(w, &b, 110 * MS), 0);
	assert_true(tw_next_expiry(w) == 100 * MS); /* exact: nothing re-armed */
	assert_int_equal(tw_mod(w, &a, 50 * MS), 1);
	assert_true(tw_next_expiry(w) == 50 * MS);
	fired = 0;
	assert_int_equal(tw_advance(w, tw_next_expiry(w)), 1);
	/* A has left B's slot; the slot's bound may still say 100 ms. */
	uint64_t next = tw_next_expiry(w);
	assert_true(next <= 110 * MS);
	struct tw_stats before, after;
	tw_get_stats(w, &before);
	if (next < 110 * MS) {
		assert_int_equal(tw_advance(w, next), 0);
		tw_get_stats(w, &after);
		assert_true(after.idle_advances == before.idle_advances + 1);
	}
	assert_true(tw_next_expiry(w) == 110 * MS); /* exact again */
	assert_int_equal(tw_advance(w, 110 * MS), 1);
	assert_wheel_sound(w);
	tw_wheel_destroy(w);
}

static int hook_calls;
static uint64_t hook_next;
static size_t hook_count;
static int hook(struct tw_wheel *w, uint64_t next, void *arg)
{
	(void)arg;
	hook_calls++;
	hook_next = next;
	hook_count = tw_count(w); /* the hook may read the wheel */
	return 1;
}

/* A timer that fires only at UINT64_MAX still makes the wheel non-empty:
 * the hook hears of it when it is armed (rule 1) and when the wheel is
 * empty again (rule 2), or a loop could not stay alive for it. */
static void notify_end_of_time_timer(void **state)
{
	(void)state;
	struct tw_wheel *w;
	struct tw_timer t;
	assert_int_equal(tw_wheel_create(&w, NULL, 0), 0);
	assert_int_equal(tw_set_notify(w, hook, NULL), 0);
	tw_timer_init(&t, count);
	hook_calls = 0;
	assert_int_equal(tw_add(w, &t, UINT64_MAX), 0);
	assert_int_equal(hook_calls, 1);
	assert_true(hook_next == UINT64_MAX);
	assert_int_equal(hook_count, 1);
	assert_int_equal(tw_del(w, &t), 1);
	assert_int_equal(hook_calls, 2);
	assert_true(hook_next == UINT64_MAX);
	assert_int_equal(hook_count, 0);
	/* tw_mod of an idle timer into an empty wheel is an arm too. */
	assert_int_equal(tw_mod(w, &t, UINT64_MAX - 1), 0);
	assert_int_equal(hook_calls, 3);
	assert_int_equal(hook_count, 1);
	/* A second, later timer changes nothing the loop needs to know. */
	struct tw_timer u;
	tw_timer_init(&u, count);
	assert_int_equal(tw_add(w, &u, UINT64_MAX), 0);
	assert_int_equal(hook_calls, 3);
	fired = 0;
	assert_int_equal(tw_advance(w, UINT64_MAX), 2);
	assert_int_equal(hook_calls, 4);
	assert_int_equal(hook_count, 0);
	tw_set_notify(w, NULL, NULL);
	tw_wheel_destroy(w);
}

/* A hook installed on a wheel that already holds timers: its installer
 * arms for tw_next_expiry(), and any earlier timer armed after that must be
 * told, even if the wheel once had an earlier one (cancelled since) that
 * no hook ever heard of. */
static void notify_after_late_install(void **state)
{
	(void)state;
	struct tw_wheel *w;
	struct tw_timer a, b, c;
	assert_int_equal(tw_wheel_create(&w, NULL, 0), 0);
	tw_timer_init(&a, count);
	tw_timer_init(&b, count);
	tw_timer_init(&c, count);
	assert_int_equal(tw_add(w, &a, 100 * MS), 0);
	assert_int_equal(tw_add(w, &b, 50 * MS), 0);
	assert_int_equal(tw_del(w, &b), 1);
	hook_calls = 0;
	assert_int_equal(tw_set_notify(w, hook, NULL), 0);
	assert_int_equal(hook_calls, 0); /* not called at install */
	assert_true(tw_next_expiry(w) == 100 * MS); /* what the installer arms for */
	assert_int_equal(tw_add(w, &c, 70 * MS), 0);
	assert_int_equal(hook_calls, 1);
	assert_true(hook_next == 70 * MS);
	assert_int_equal(tw_set_notify(w, NULL, NULL), 0);
	tw_wheel_destroy(w);
}

/* A hook may take itself off when it hears that a destroyed wheel is
 * empty; the wheel then goes once the hook has returned (ASan and valgrind
 * would see a write to it after it was freed, or a double free). */
static struct tw_wheel *self_wheel;
static int hook_leaves(struct tw_wheel *w, uint64_t next, void *arg)
{
	(void)arg;
	hook_calls++;
	if (next == UINT64_MAX && tw_count(w) == 0)
		assert_int_equal(tw_set_notify(w, NULL, NULL), 0);
	return 1;
}

static void destroy_inside_leaving(struct tw_timer *t)
{
	(void)t;
	tw_wheel_destroy(self_wheel);
}

static void hook_removes_itself_on_destroy(void **state)
{
	(void)state;
	struct tw_timer t;
	/* Outside any callback. */
	assert_int_equal(tw_wheel_create(&self_wheel, NULL, 0), 0);
	assert_int_equal(tw_set_notify(self_wheel, hook_leaves, NULL), 0);
	tw_timer_init(&t, count);
	assert_int_equal(tw_add(self_wheel, &t, 5 * MS), 0);
	hook_calls = 0;
	tw_wheel_destroy(self_wheel);
	assert_int_equal(hook_calls, 1);
	/* From a callback: the hook hears it when the advance ends. */
	assert_int_equal(tw_wheel_create(&self_wheel, NULL, 0), 0);
	assert_int_equal(tw_set_notify(self_wheel, hook_leaves, NULL), 0);
	tw_timer_init(&t, destroy_inside_leaving);
	assert_int_equal(tw_add(self_wheel, &t, 5 * MS), 0);
	hook_calls = 0;
	assert_int_equal(tw_advance(self_wheel, 5 * MS), 1);
	assert_int_equal(hook_calls, 1);
}

/* Rule 3 is for advances that move or keep the clock: a backward one is a
 * no-op, and calls nothing. */
static void notify_backward_advance(void **state)
{
	(void)state;
	struct tw_wheel *w;
	struct tw_timer t;
	assert_int_equal(tw_wheel_create(&w, NULL, 10 * MS), 0);
	assert_int_equal(tw_set_notify(w, hook, NULL), 0);
	tw_timer_init(&t, count);
	assert_int_equal(tw_add(w, &t, 20 * MS), 0);
	hook_calls = 0;
	struct tw_stats before, after;
	tw_get_stats(w, &before);
	assert_int_equal(tw_advance(w, 5 * MS), 0);
	assert_int_equal(hook_calls, 0);
	tw_get_stats(w, &after);
	assert_true(after.advances == before.advances);
	assert_int_equal(tw_advance(w, 10 * MS), 0); /* the same now: kept */
	assert_int_equal(hook_calls, 1);
	assert_true(hook_next == 20 * MS);
	tw_set_notify(w, NULL, NULL);
	tw_wheel_destroy(w);
}

/* stats.cascaded counts moves to a finer level only. A timer re-armed
 * later stays in its level-0 slot (tw_mod only stores the expiry); when
 * that slot comes due it goes up to a coarser level, which is no cascade. */
static void cascaded_counts_only_moves_down(void **state)
{
	(void)state;
	struct tw_wheel *w;
	struct tw_timer t;
	struct tw_stats st;
	unsigned level, slot;
	assert_int_equal(tw_wheel_create(&w, NULL, 0), 0);
	tw_timer_init(&t, count);
	assert_int_equal(tw_add(w, &t, 5 * MS), 0);
	assert_int_equal(tw_mod(w, &t, 600000 * MS), 1); /* 10 minutes */
	assert_int_equal(tw_advance(w, 5 * MS), 0);
	assert_int_equal(tw_timer_bucket(w, &t, &level, &slot), 0);
	assert_int_equal(level, 3);
	tw_get_stats(w, &st);
	assert_int_equal(st.cascaded, 0);
	/* From level 3 it comes down inside the advance that reaches it, each
	 * step to a finer level counted (at most one per level), and fires on
	 * time. */
	fired = 0;
	assert_int_equal(tw_advance(w, tw_next_expiry(w)), 1);
	assert_true(tw_now(w) == 600000 * MS);
	tw_get_stats(w, &st);
	assert_true(st.cascaded >= 1 && st.cascaded <= 3);
	assert_wheel_sound(w);
	tw_wheel_destroy(w);
}

/* tw_dump draws one line for each level from 0 up to the highest occupied
 * one: level 0 alone for an empty wheel. */
static int level_lines(struct tw_wheel *w, int *highest)
{
	char *text = NULL;
#ifdef _WIN32
	/* No open_memstream(): a temporary file, read back. */
	FILE *f = tmpfile();
	assert_non_null(f);
	assert_int_equal(tw_dump(w, f, false), 0);
	long size = ftell(f);
	assert_true(size >= 0);
	text = calloc((size_t)size + 1, 1);
	assert_non_null(text);
	rewind(f);
	assert_int_equal(fread(text, 1, (size_t)size, f), (size_t)size);
	fclose(f);
#else
	size_t size = 0;
	FILE *f = open_memstream(&text, &size);
	assert_non_null(f);
	assert_int_equal(tw_dump(w, f, false), 0);
	fclose(f);
#endif
	int n = 0;
	*highest = -1;
	for (char *p = text; (p = strstr(p, "  level ")) != NULL; p += 8) {
		*highest = atoi(p + 8);
		n++;
	}
	free(text);
	return n;
}

static void dump_levels(void **state)
{
	(void)state;
	struct tw_wheel *w;
	struct tw_timer t;
	int highest;
	assert_int_equal(tw_wheel_create(&w, NULL, 0), 0);
	assert_int_equal(level_lines(w, &highest), 1);
	assert_int_equal(highest, 0);
	tw_timer_init(&t, count);
	assert_int_equal(tw_add(w, &t, 10000 * MS), 0); /* 10 s: level 2 */
	assert_int_equal(level_lines(w, &highest), 3);
	assert_int_equal(highest, 2);
	tw_wheel_destroy(w);
}

/* tw_get_stats() as the header words each counter, and tw_count(), through
 * every way a timer is armed, re-armed, cancelled, fired and placed. */
static void stats_count_every_path(void **state)
{
	(void)state;
	struct tw_wheel *w;
	struct tw_timer a, b, c, d;
	struct tw_stats st;
	assert_int_equal(tw_wheel_create(&w, NULL, 0), 0);
	tw_timer_init(&a, count);
	tw_timer_init(&b, count);
	tw_timer_init(&c, count);
	tw_timer_init(&d, count);
	assert_int_equal(tw_add(w, &a, 100 * MS), 0);
	assert_int_equal(tw_add(w, &b, 5000 * MS), 0);
	assert_int_equal(tw_add(w, &c, 9000 * MS), 0);
	assert_int_equal(tw_mod(w, &b, 6000 * MS), 1); /* later: stays */
	assert_int_equal(tw_mod(w, &c, 10 * MS), 1);   /* earlier: placed anew */
	assert_int_equal(tw_add(w, &d, 0), 0);         /* due: on no slot */
	assert_int_equal(tw_count(w), 4);
	assert_int_equal(tw_get_stats(w, &st), 0);
	assert_int_equal(st.armed, 6);
	assert_int_equal(st.placed, 4);
	assert_int_equal(tw_del(w, &a), 1);
	assert_int_equal(tw_del(w, &a), 0);
	assert_int_equal(tw_count(w), 3);
	fired = 0;
	assert_int_equal(tw_advance(w, 1), 1);  /* d */
	assert_int_equal(tw_advance(w, 2), 0);  /* nothing */
	assert_int_equal(tw_advance(w, 1), 0);  /* backwards: not counted */
	assert_int_equal(tw_advance(w, 10 * MS), 1); /* c */
	assert_int_equal(tw_count(w), 1);
	/* b, from level 2: its slot comes due at 4096 ms, the last event by
	 * 5000 ms, which places it again relative to 5000 ms (level 1); its
	 * slot there, from 5952 ms, is the last event by 6000 ms, where it
	 * comes due: two cascades, one placement. */
	assert_int_equal(tw_advance(w, 5000 * MS), 0);
	assert_int_equal(tw_advance(w, 6000 * MS), 1);
	assert_int_equal(tw_count(w), 0);
	assert_int_equal(tw_get_stats(w, &st), 0);
	assert_int_equal(st.armed, 6);
	assert_int_equal(st.cancelled, 1);
	assert_int_equal(st.fired, 3);
	assert_int_equal(st.placed, 5);
	assert_int_equal(st.cascaded, 2);
	assert_int_equal(st.advances, 5);
	assert_int_equal(st.idle_advances, 2);
	assert_int_equal(fired, 3);
	tw_wheel_destroy(w);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(next_expiry_after_earlier_rearm),
		cmocka_unit_test(notify_end_of_time_timer),
		cmocka_unit_test(notify_backward_advance),
		cmocka_unit_test(notify_after_late_install),
		cmocka_unit_test(hook_removes_itself_on_destroy),
		cmocka_unit_test(cascaded_counts_only_moves_down),
		cmocka_unit_test(dump_levels),
		cmocka_unit_test(stats_count_every_path),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
