/* SPDX-License-Identifier: MIT */
/*
 * 10^4 timers spread over 2 s, on a real ring and the real clock, in both
 * modes: every timer fires exactly once, none before its expiry as read
 * from CLOCK_MONOTONIC in its callback; lateness p50/p99 is printed.
 */
#include "helpers.h"

#define N 10000
#define SPREAD_NS 2000000000ull

struct ft {
	struct tw_timer t;
	uint64_t due;
	int fired;
};

static struct ft timers[N];
static uint64_t late[N];
static size_t nlate;
static unsigned early;

static void on_fire(struct tw_timer *t)
{
	struct ft *f = tw_container_of(t, struct ft, t);
	uint64_t now = tw_uring_now();

	f->fired++;
	if (now < f->due)
		early++;
	else
		late[nlate++] = now - f->due;
}

static struct tw_wheel *arm_all(uint64_t tick)
{
	struct tw_config cfg = { .tick_ns = tick, .slot_bits = 0 };
	struct tw_wheel *w;
	uint64_t seed = 0x5eed + tick, now = tw_uring_now();

	assert_int_equal(tw_wheel_create(&w, &cfg, now), 0);
	memset(timers, 0, sizeof(timers));
	nlate = 0;
	early = 0;
	for (int i = 0; i < N; i++) {
		tw_timer_init(&timers[i].t, on_fire);
		timers[i].due = now + 1000000 + tw_test_rand(&seed) % SPREAD_NS;
		assert_int_equal(tw_add(w, &timers[i].t, timers[i].due), 0);
	}
	return w;
}

static void check_and_print(const char *what, struct tw_wheel *w, const struct tw_uring_stats *us)
{
	uint64_t tick = tw_tick(w);

	struct tw_stats ws;

	for (int i = 0; i < N; i++)
		assert_int_equal(timers[i].fired, 1);
	assert_int_equal(early, 0);
	assert_int_equal(us->errors, 0);
	assert_int_equal(tw_get_stats(w, &ws), 0);
	tw_test_print_lateness(what, late, nlate);
	/* Loose, for loaded CI machines: a lost re-arm shows up as seconds. */
	assert_true(late[nlate / 2] < tick + 20000000u);
	print_message("%s: %llu SQEs (%llu timeouts, %llu updates), %llu expirations, "
		      "%llu waits (%llu timed), %llu wheel wake-ups (%llu idle), %llu os_rearms\n",
		      what, (unsigned long long)us->sqes, (unsigned long long)us->timeouts,
		      (unsigned long long)us->updates, (unsigned long long)us->expirations,
		      (unsigned long long)us->waits, (unsigned long long)us->timed_waits,
		      (unsigned long long)ws.advances, (unsigned long long)ws.idle_advances,
		      (unsigned long long)ws.os_rearms);
}

static void attached(const char *what, uint64_t tick, unsigned setup_flags)
{
	struct io_uring ring;
	struct tw_uring *u;
	struct tw_uring_stats st;
	struct tw_wheel *w;
	size_t fired = 0;

	tw_test_ring_init(&ring, 64, setup_flags);
	w = arm_all(tick);
	assert_int_equal(tw_uring_attach(&u, w, &ring), 0);
	while (tw_count(w) > 0) {
		struct io_uring_cqe *cqe;
		unsigned head, n = 0;
		int r = io_uring_submit_and_wait(&ring, 1);

		assert_true(r >= 0 || r == -EINTR);
		io_uring_for_each_cqe(&ring, head, cqe) {
			assert_int_equal(tw_uring_handle_cqe(u, cqe), 1);
			n++;
		}
		io_uring_cq_advance(&ring, n);
		fired = nlate + early;
	}
	assert_int_equal(fired, N);
	assert_int_equal(tw_uring_get_stats(u, &st), 0);
	check_and_print(what, w, &st);
	assert_int_equal(tw_uring_detach(u), 0);
	io_uring_queue_exit(&ring);
	tw_wheel_destroy(w);
}

static void owned(const char *what, uint64_t tick, unsigned wait)
{
	struct tw_uring_loop_options opt = { .entries = 64, .wait = wait };
	struct tw_uring_loop *u;
	struct tw_uring_stats st;
	struct tw_wheel *w = arm_all(tick);

	tw_test_loop_init(&u, w, &opt);
	assert_int_equal(tw_uring_run(u), 0);
	assert_int_equal(tw_count(w), 0);
	assert_int_equal(tw_uring_loop_get_stats(u, &st), 0);
	check_and_print(what, w, &st);
	assert_int_equal(tw_uring_loop_close(u), 0);
	tw_wheel_destroy(w);
}

static void attached_1ms(void **state)
{
	(void)state;
	attached("attached, 1 ms tick", 1000000, 0);
}

static void attached_100us_defer_taskrun(void **state)
{
	(void)state;
	attached("attached, 100 us tick, DEFER_TASKRUN ring", 100000,
		 IORING_SETUP_SINGLE_ISSUER | IORING_SETUP_DEFER_TASKRUN);
}

static void owned_1ms(void **state)
{
	(void)state;
	owned("owned loop (wait timeout), 1 ms tick", 1000000, TW_URING_WAIT_ARG);
}

static void owned_100us(void **state)
{
	(void)state;
	owned("owned loop (wait timeout), 100 us tick", 100000, TW_URING_WAIT_ARG);
}

static void owned_sqe_100us(void **state)
{
	(void)state;
	owned("owned loop (timeout SQE), 100 us tick", 100000, TW_URING_WAIT_SQE);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(attached_1ms),
		cmocka_unit_test(attached_100us_defer_taskrun),
		cmocka_unit_test(owned_1ms),
		cmocka_unit_test(owned_100us),
		cmocka_unit_test(owned_sqe_100us),
	};

	return tw_test_exit(cmocka_run_group_tests_name("uring fire", tests, NULL, NULL));
}
