/* SPDX-License-Identifier: MIT */
/*
 * A wake budget on the io_uring backend: 10^5 timers due at once on a
 * ring the backend owns, tw_set_wake_budget(w, 1000). Every timer fires
 * exactly once and none early (by the backend's clock, read in the
 * callback), no wake-up fires more than the budget, and so it takes at
 * least 100 wake-ups, each a turn of the loop. And per turn: with the
 * program's own requests on the ring, in both wait modes, no turn fires
 * more than one budget.
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

/*
 * One budget per turn of the owned loop, in both wait modes: the program
 * keeps one NOP in flight, queued again from each of its completions, and
 * 200 timers are due at once with a budget of 10. Each turn of the loop
 * (one wait, &tw_uring_stats.waits) fires at most 10; with
 * TW_URING_WAIT_ARG, where the loop runs the wheel after dispatching, at
 * most 10 fire between two of the program's completions too. And again
 * with the program filling the SQ from its callback, so that
 * tw_uring_get_sqe() submits inside the turn: what that brings waits for
 * the next turn.
 */
#define TURN_TIMERS 200
#define TURN_BUDGET 10

static struct tw_uring_loop *turn_loop;
static struct tw_wheel *turn_wheel;
static struct tw_timer turn_timers[TURN_TIMERS];
static size_t turn_fired, since_cqe, most_since_cqe, in_turn, most_in_turn, nops;
static uint64_t turn_waits;

static void on_turn_fire(struct tw_timer *t)
{
	struct tw_uring_stats st;

	(void)t;
	turn_fired++;
	if (++since_cqe > most_since_cqe)
		most_since_cqe = since_cqe;
	assert_int_equal(tw_uring_loop_get_stats(turn_loop, &st), 0);
	if (st.waits != turn_waits) {
		turn_waits = st.waits;
		in_turn = 0;
	}
	if (++in_turn > most_in_turn)
		most_in_turn = in_turn;
}

static void queue_nop(struct tw_uring_loop *l)
{
	struct io_uring_sqe *sqe = tw_uring_get_sqe(l);

	assert_non_null(sqe);
	io_uring_prep_nop(sqe);
	io_uring_sqe_set_data64(sqe, 1);
}

static bool fill_sq;
static uint64_t nop_waits; /* the turn (waits) of the last NOP of ours */

/* With fill_sq, the program also queues NOPs until the SQ is full, and
 * one more, for which tw_uring_get_sqe() submits inside the turn. */
static void fill(struct tw_uring_loop *l)
{
	unsigned n = io_uring_sq_space_left(tw_uring_loop_ring(l)) + 1;

	while (n--) {
		struct io_uring_sqe *sqe = tw_uring_get_sqe(l);

		assert_non_null(sqe);
		io_uring_prep_nop(sqe);
		io_uring_sqe_set_data64(sqe, 2);
	}
}

static void on_nop(struct tw_uring_loop *l, struct io_uring_cqe *cqe, void *arg)
{
	struct tw_uring_stats st;

	(void)arg;
	if (cqe->user_data == 2)
		return;
	assert_int_equal(cqe->user_data, 1);
	/* One NOP of ours per turn: the one queued in the turn before. The
	 * next one, submitted by fill() inside this turn, must wait for the
	 * next turn, or this turn could go on for ever and no timer fire. */
	assert_int_equal(tw_uring_loop_get_stats(l, &st), 0);
	assert_true(st.waits != nop_waits);
	nop_waits = st.waits;
	nops++;
	since_cqe = 0;
	if (tw_count(turn_wheel)) {
		queue_nop(l);
		if (fill_sq)
			fill(l);
	}
}

static void one_budget_per_turn(unsigned wait, bool fill)
{
	struct tw_uring_loop_options opt = { .entries = 64, .wait = wait, .cqe_fn = on_nop };
	uint64_t now = tw_uring_now();

	turn_fired = since_cqe = most_since_cqe = in_turn = most_in_turn = nops = 0;
	turn_waits = UINT64_MAX;
	fill_sq = fill;
	nop_waits = UINT64_MAX;
	assert_int_equal(tw_wheel_create(&turn_wheel, NULL, now), 0);
	assert_int_equal(tw_set_wake_budget(turn_wheel, TURN_BUDGET), 0);
	for (int i = 0; i < TURN_TIMERS; i++) {
		tw_timer_init(&turn_timers[i], on_turn_fire);
		assert_int_equal(tw_add(turn_wheel, &turn_timers[i], now + 1000000u), 0);
	}
	tw_test_loop_init(&turn_loop, turn_wheel, &opt);
	queue_nop(turn_loop);
	assert_int_equal(tw_uring_run(turn_loop), 0);
	print_message("%s%s: %zu timers, budget %d: at most %zu in one turn, %zu between two of the "
		      "program's %zu completions\n",
		      wait == TW_URING_WAIT_ARG ? "TW_URING_WAIT_ARG" : "TW_URING_WAIT_SQE",
		      fill ? ", SQ filled" : "", turn_fired,
		      TURN_BUDGET, most_in_turn, most_since_cqe, nops);
	assert_int_equal(turn_fired, TURN_TIMERS);
	assert_true(most_in_turn <= TURN_BUDGET);
	if (wait == TW_URING_WAIT_ARG)
		assert_true(most_since_cqe <= TURN_BUDGET);
	assert_int_equal(tw_uring_loop_close(turn_loop), 0);
	tw_wheel_destroy(turn_wheel);
}

static void test_one_budget_per_turn_wait_arg(void **state)
{
	(void)state;
	one_budget_per_turn(TW_URING_WAIT_ARG, false);
	one_budget_per_turn(TW_URING_WAIT_ARG, true);
}

static void test_one_budget_per_turn_wait_sqe(void **state)
{
	(void)state;
	one_budget_per_turn(TW_URING_WAIT_SQE, false);
	one_budget_per_turn(TW_URING_WAIT_SQE, true);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_owned_budget),
		cmocka_unit_test(test_one_budget_per_turn_wait_arg),
		cmocka_unit_test(test_one_budget_per_turn_wait_sqe),
	};
	return tw_test_exit(cmocka_run_group_tests(tests, NULL, NULL));
}
