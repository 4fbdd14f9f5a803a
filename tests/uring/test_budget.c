/* SPDX-License-Identifier: MIT */
/*
 * A wake budget on the io_uring backend: 10^5 timers due at once on a
 * ring the backend owns, tw_set_wake_budget(w, 1000). Every timer fires
 * exactly once and none early (by the backend's clock, read in the
 * callback), no wake-up fires more than the budget, and so it takes at
 * least 100 wake-ups, each a turn of the loop.
 */
#include "helpers.h"

#define N 100000
#define BUDGET 1000

struct ft {
	struct tw_timer t;
	uint64_t due;
	int fired;
};

static struct ft timers[N];
static size_t fired, early, in_this_advance, most_in_one;
static uint64_t last_advance = UINT64_MAX;
static struct tw_wheel *wheel;

static void on_fire(struct tw_timer *t)
{
	struct ft *f = tw_container_of(t, struct ft, t);

	f->fired++;
	fired++;
	early += tw_uring_now() < f->due;
	/* The advances counted so far (each is counted as it ends) tell
	 * the callbacks of one advance from the next one's. */
	struct tw_stats ws;
	tw_get_stats(wheel, &ws);
	if (ws.advances != last_advance) {
		last_advance = ws.advances;
		in_this_advance = 0;
	}
	if (++in_this_advance > most_in_one)
		most_in_one = in_this_advance;
}

static void test_owned_budget(void **state)
{
	(void)state;
	struct tw_uring_loop_options opt = { .entries = 64 };
	struct tw_uring_loop *u;
	struct tw_stats ws;
	uint64_t now = tw_uring_now();

	assert_int_equal(tw_wheel_create(&wheel, NULL, now), 0);
	assert_int_equal(tw_set_wake_budget(wheel, BUDGET), 0);
	for (int i = 0; i < N; i++) {
		tw_timer_init(&timers[i].t, on_fire);
		timers[i].due = now + 20000000u;
		assert_int_equal(tw_add(wheel, &timers[i].t, timers[i].due), 0);
	}
	tw_test_loop_init(&u, wheel, &opt);
	assert_int_equal(tw_uring_run(u), 0);
	assert_int_equal(tw_count(wheel), 0);
	assert_int_equal(fired, N);
	assert_int_equal(early, 0);
	for (int i = 0; i < N; i++)
		assert_int_equal(timers[i].fired, 1);
	assert_int_equal(tw_get_stats(wheel, &ws), 0);
	print_message("%d timers due at once, budget %d: %llu wake-ups, at most %zu callbacks in one\n", N,
		      BUDGET, (unsigned long long)ws.advances, most_in_one);
	assert_true(most_in_one <= BUDGET);
	assert_true(ws.advances >= N / BUDGET);
	assert_int_equal(tw_uring_loop_close(u), 0);
	tw_wheel_destroy(wheel);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_owned_budget),
	};
	return tw_test_exit(cmocka_run_group_tests(tests, NULL, NULL));
}
