/* SPDX-License-Identifier: MIT */
/*
 * What the backend puts on the program's ring: arming later timers costs
 * no SQE, moving the earliest expiry earlier costs exactly one update, and
 * an update that races the timer's own expiry loses nothing.
 */
#include "helpers.h"

#define LATER 100000
#define MS 1000000ull

struct rec {
	struct tw_timer t;
	uint64_t fired_at;
	int fired;
};

static void on_fire(struct tw_timer *t)
{
	struct rec *r = tw_container_of(t, struct rec, t);

	r->fired++;
	r->fired_at = tw_uring_now();
}

/* Reaps what is there without waiting; returns how many were the wheel's. */
static int reap(struct io_uring *ring, struct tw_uring *u, int *updates_ok)
{
	struct io_uring_cqe *cqe;
	int mine = 0;

	while (io_uring_peek_cqe(ring, &cqe) == 0) {
		if ((cqe->user_data & 0xff) == 2 && cqe->res == 0 && updates_ok)
			(*updates_ok)++;
		assert_int_equal(tw_uring_handle_cqe(u, cqe), 1);
		mine++;
		io_uring_cqe_seen(ring, cqe);
	}
	return mine;
}

static void later_arms_cost_nothing(void **state)
{
	struct io_uring ring;
	struct tw_wheel *w;
	struct tw_uring *u;
	struct tw_uring_stats st;
	struct tw_stats ws;
	struct rec first, e1, e2, e3;
	struct rec *later = calloc(LATER, sizeof(*later));
	uint64_t now = tw_uring_now();
	int updates_ok = 0;

	(void)state;
	assert_non_null(later);
	tw_test_ring_init(&ring, 32, 0);
	assert_int_equal(tw_wheel_create(&w, NULL, now), 0);
	assert_int_equal(tw_uring_attach(&u, w, &ring), 0);

	memset(&first, 0, sizeof(first));
	tw_timer_init(&first.t, on_fire);
	assert_int_equal(tw_add(w, &first.t, now + 2000 * MS), 0);
	assert_int_equal(tw_uring_get_stats(u, &st), 0);
	assert_int_equal(st.sqes, 1);
	assert_int_equal(st.timeouts, 1);
	assert_int_equal(io_uring_submit(&ring), 1);

	for (int i = 0; i < LATER; i++) {
		tw_timer_init(&later[i].t, on_fire);
		assert_int_equal(tw_add(w, &later[i].t, now + 2000 * MS + 1 + (uint64_t)i * 1000), 0);
	}
	assert_int_equal(tw_uring_get_stats(u, &st), 0);
	assert_int_equal(st.sqes, 1);
	assert_int_equal(io_uring_sq_ready(&ring), 0);
	print_message("%d later arms: %llu SQEs after the first timeout\n", LATER,
		      (unsigned long long)(st.sqes - 1));

	/* Earlier: exactly one update, which the kernel accepts. The clock is read
	 * again: on a loaded machine the 10^5 arms above may take 100 ms, and e3
	 * must still be due before e2. */
	now = tw_uring_now();
	memset(&e1, 0, sizeof(e1));
	tw_timer_init(&e1.t, on_fire);
	assert_int_equal(tw_add(w, &e1.t, now + 300 * MS), 0);
	assert_int_equal(tw_uring_get_stats(u, &st), 0);
	assert_int_equal(st.sqes, 2);
	assert_int_equal(st.updates, 1);
	assert_int_equal(io_uring_submit_and_wait(&ring, 1), 1);
	assert_int_equal(reap(&ring, u, &updates_ok), 1);
	assert_int_equal(updates_ok, 1);

	/* Earlier twice before a submit: the second rides on the queued update. */
	memset(&e2, 0, sizeof(e2));
	memset(&e3, 0, sizeof(e3));
	tw_timer_init(&e2.t, on_fire);
	tw_timer_init(&e3.t, on_fire);
	assert_int_equal(tw_add(w, &e2.t, now + 200 * MS), 0);
	assert_int_equal(tw_add(w, &e3.t, now + 100 * MS), 0);
	assert_int_equal(tw_uring_get_stats(u, &st), 0);
	assert_int_equal(st.sqes, 3);
	assert_int_equal(st.updates, 2);
	assert_int_equal(st.retargets, 1);
	assert_int_equal(tw_get_stats(w, &ws), 0);
	assert_int_equal(ws.os_rearms, st.sqes); /* the hook said so for each SQE, not for the retarget */

	/* The kernel timeout now fires for e3 (100 ms), not e2 or later. */
	while (!e3.fired) {
		assert_true(io_uring_submit_and_wait(&ring, 1) >= 0);
		reap(&ring, u, &updates_ok);
	}
	assert_int_equal(updates_ok, 2);
	assert_true(e3.fired_at >= e3.t.expires);
	assert_true(e3.fired_at < e2.t.expires); /* so the timeout was not left at e2 */
	assert_int_equal(e2.fired, 0);
	assert_int_equal(tw_uring_get_stats(u, &st), 0);
	assert_int_equal(st.errors, 0);
	assert_int_equal(st.stale_updates, 0);

	assert_int_equal(tw_uring_detach(u), 0);
	io_uring_queue_exit(&ring);
	tw_wheel_destroy(w);
	free(later);
}

static void spin_until(uint64_t t)
{
	while (tw_uring_now() < t)
		;
}

/*
 * Re-arm right at the expiry of the armed timeout: sometimes before the
 * kernel timer fires (the update wins), sometimes after it fired but before
 * its CQE was reaped (-ENOENT), and once in a while during the firing
 * (-EALREADY). Every timer must still fire exactly once, never early, and
 * no error may be reported.
 */
static void update_races(unsigned setup_flags)
{
	enum { ROUNDS = 1000, SURE = 100 };
	struct tw_config cfg = { .tick_ns = 1000, .slot_bits = 0 };
	struct io_uring ring;
	struct tw_wheel *w;
	struct tw_uring *u;
	struct tw_uring_stats st;
	struct rec a, b;
	uint64_t seed = 42;

	tw_test_ring_init(&ring, 32, setup_flags);
	assert_int_equal(tw_wheel_create(&w, &cfg, tw_uring_now()), 0);
	assert_int_equal(tw_uring_attach(&u, w, &ring), 0);
	tw_timer_init(&a.t, on_fire);
	tw_timer_init(&b.t, on_fire);

	for (int i = 0; i < ROUNDS + SURE; i++) {
		uint64_t t = tw_uring_now() + 200000, at;

		a.fired = b.fired = 0;
		assert_int_equal(tw_add(w, &a.t, t), 0);
		assert_true(io_uring_submit(&ring) >= 0);
		/* The last SURE rounds wait well past the expiry: -ENOENT for certain. */
		at = i < ROUNDS ? t - 20000 + tw_test_rand(&seed) % 40000 : t + 3 * MS;
		spin_until(at);
		/* Earlier than the armed timeout, even if that is a cascade point a
		 * 64 us bucket before t: the hook must queue an update. */
		assert_int_equal(tw_mod(w, &a.t, t - 100000), 1);
		assert_int_equal(tw_add(w, &b.t, tw_uring_now() + 10000), 0);
		assert_true(io_uring_submit(&ring) >= 0);
		while (!a.fired || !b.fired) {
			assert_true(io_uring_submit_and_wait(&ring, 1) >= 0);
			reap(&ring, u, NULL);
		}
		assert_int_equal(a.fired, 1);
		assert_int_equal(b.fired, 1);
		assert_true(a.fired_at >= a.t.expires);
		assert_true(b.fired_at >= b.t.expires);
	}
	/* A last timeout may still be in flight (the cascade point); let it go. */
	assert_int_equal(tw_uring_get_stats(u, &st), 0);
	print_message("%d races: %llu updates, %llu came too late (-ENOENT/-EALREADY), %llu errors\n",
		      ROUNDS + SURE, (unsigned long long)st.updates,
		      (unsigned long long)st.stale_updates, (unsigned long long)st.errors);
	assert_int_equal(st.errors, 0);
	assert_int_equal(st.updates, ROUNDS + SURE); /* one per round, however it ended */
	assert_true(st.stale_updates >= SURE);
	assert_int_equal(tw_count(w), 0);
	assert_int_equal(tw_uring_detach(u), 0);
	io_uring_queue_exit(&ring);
	tw_wheel_destroy(w);
}

static void update_races_expiry(void **state)
{
	(void)state;
	update_races(0);
}

/* Here the -ETIME is posted only when the test waits: -ENOENT is the rule. */
static void update_races_expiry_defer_taskrun(void **state)
{
	(void)state;
	update_races(IORING_SETUP_SINGLE_ISSUER | IORING_SETUP_DEFER_TASKRUN);
}

/* With the program's SQ full, the backend submits it to make room. */
static void full_sq_submits(void **state)
{
	struct io_uring ring;
	struct tw_wheel *w;
	struct tw_uring *u;
	struct tw_uring_stats st;
	struct rec r = { .fired = 0 };
	unsigned nops = 0;

	(void)state;
	tw_test_ring_init(&ring, 4, 0);
	assert_int_equal(tw_wheel_create(&w, NULL, tw_uring_now()), 0);
	assert_int_equal(tw_uring_attach(&u, w, &ring), 0);
	for (int i = 0; i < 4; i++) {
		struct io_uring_sqe *sqe = io_uring_get_sqe(&ring);

		assert_non_null(sqe);
		io_uring_prep_nop(sqe);
		io_uring_sqe_set_data64(sqe, 99);
	}
	assert_null(io_uring_get_sqe(&ring));
	tw_timer_init(&r.t, on_fire);
	assert_int_equal(tw_add(w, &r.t, tw_uring_now() + 5 * MS), 0);
	assert_int_equal(tw_uring_get_stats(u, &st), 0);
	assert_int_equal(st.self_submits, 1);
	assert_int_equal(st.timeouts, 1);
	assert_int_equal(io_uring_sq_ready(&ring), 1);
	while (!r.fired || nops < 4) {
		struct io_uring_cqe *cqe;

		assert_true(io_uring_submit_and_wait(&ring, 1) >= 0);
		while (io_uring_peek_cqe(&ring, &cqe) == 0) {
			if (!tw_uring_handle_cqe(u, cqe)) {
				assert_int_equal(cqe->user_data, 99);
				nops++;
			}
			io_uring_cqe_seen(&ring, cqe);
		}
	}
	assert_true(r.fired_at >= r.t.expires);
	assert_int_equal(tw_uring_detach(u), 0);
	io_uring_queue_exit(&ring);
	tw_wheel_destroy(w);
}

/* Two wheels on one ring: each backend claims only its own completions. */
static void two_wheels_one_ring(void **state)
{
	struct io_uring ring;
	struct tw_wheel *w1, *w2;
	struct tw_uring *u1, *u2;
	struct rec r1 = { .fired = 0 }, r2 = { .fired = 0 };

	(void)state;
	tw_test_ring_init(&ring, 16, 0);
	assert_int_equal(tw_wheel_create(&w1, NULL, tw_uring_now()), 0);
	assert_int_equal(tw_wheel_create(&w2, NULL, tw_uring_now()), 0);
	assert_int_equal(tw_uring_attach(&u1, w1, &ring), 0);
	assert_int_equal(tw_uring_attach(&u2, w2, &ring), 0);
	tw_timer_init(&r1.t, on_fire);
	tw_timer_init(&r2.t, on_fire);
	assert_int_equal(tw_add(w1, &r1.t, tw_uring_now() + 20 * MS), 0);
	assert_int_equal(tw_add(w2, &r2.t, tw_uring_now() + 10 * MS), 0);
	while (!r1.fired || !r2.fired) {
		struct io_uring_cqe *cqe;

		assert_true(io_uring_submit_and_wait(&ring, 1) >= 0);
		while (io_uring_peek_cqe(&ring, &cqe) == 0) {
			int a = tw_uring_handle_cqe(u1, cqe);
			int b = tw_uring_handle_cqe(u2, cqe);

			assert_true(tw_uring_is_tagged(cqe->user_data));
			assert_int_equal(a + b, 1);
			io_uring_cqe_seen(&ring, cqe);
		}
	}
	assert_true(r1.fired_at >= r1.t.expires);
	assert_true(r2.fired_at >= r2.t.expires);
	assert_true(r2.fired_at <= r1.fired_at);
	assert_int_equal(tw_uring_detach(u1), 0);
	assert_int_equal(tw_uring_detach(u2), 0);
	io_uring_queue_exit(&ring);
	tw_wheel_destroy(w1);
	tw_wheel_destroy(w2);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(later_arms_cost_nothing),
		cmocka_unit_test(update_races_expiry),
		cmocka_unit_test(update_races_expiry_defer_taskrun),
		cmocka_unit_test(full_sq_submits),
		cmocka_unit_test(two_wheels_one_ring),
	};

	return tw_test_exit(cmocka_run_group_tests_name("uring economy", tests, NULL, NULL));
}
