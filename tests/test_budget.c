/* SPDX-License-Identifier: MIT */
/*
 * tw_advance_budget(): at most N callbacks per advance, the rest left due.
 * At its ends: budget 0 (refused) and 1, a budget smaller than one tick's
 * timers, batches that keep tick order, also across a later advance,
 * callbacks that cancel or re-arm timers still waiting, a batch that is
 * not refilled when its own timers leave it, a timer armed due between
 * batches, a destroy from a callback, and a random schedule checked
 * against a model of its own.
 */
#include "common.h"

#define TICK 1000000ull /* the default 1 ms */

static struct tw_wheel *wheel;

struct rec {
	struct tw_timer timer;
	uint64_t expires;
	uint32_t fired;
	uint64_t armed_at;         /* the wheel's clock when armed (the model's) */
	struct rec *cancel, *cancel2, *rearm; /* what its callback does */
	bool destroy;
};

/* Every firing: the timer, and the wheel's clock then. */
static struct rec **log_rec;
static uint64_t *log_now;
static size_t log_len, log_cap;

static void logged(struct tw_timer *t)
{
	struct rec *r = tw_container_of(t, struct rec, timer);
	r->fired++;
	if (log_len == log_cap) {
		log_cap = log_cap ? 2 * log_cap : 1024;
		log_rec = realloc(log_rec, log_cap * sizeof(*log_rec));
		log_now = realloc(log_now, log_cap * sizeof(*log_now));
		assert_non_null(log_rec);
		assert_non_null(log_now);
	}
	log_rec[log_len] = r;
	log_now[log_len++] = tw_now(wheel);
	if (r->cancel)
		tw_del(wheel, &r->cancel->timer);
	if (r->cancel2)
		tw_del(wheel, &r->cancel2->timer);
	if (r->rearm)
		tw_mod(wheel, &r->rearm->timer, r->rearm->expires);
	if (r->destroy)
		tw_wheel_destroy(wheel);
}

static void log_reset(void)
{
	log_len = 0;
}


/* The log's firings so far: none early, in tick order (ticks never go
 * back from one firing to the next, batches included). */
static void assert_log_sound(void)
{
	for (size_t i = 0; i < log_len; i++) {
		assert_true(log_rec[i]->expires <= log_now[i]);
		if (i)
			assert_true(test_round_up(log_rec[i - 1]->expires, TICK) <= test_round_up(log_rec[i]->expires, TICK));
	}
}

static void arm_all(struct rec *recs, size_t n, uint64_t (*at)(size_t))
{
	for (size_t i = 0; i < n; i++) {
		recs[i] = (struct rec){ .expires = at(i) };
		tw_timer_init(&recs[i].timer, logged);
		assert_int_equal(tw_add(wheel, &recs[i].timer, recs[i].expires), 0);
	}
}

static uint64_t at_spread(size_t i) { return (1 + i / 3) * TICK; } /* three per tick */
static uint64_t at_one_tick(size_t i) { (void)i; return 7 * TICK; }

static void test_zero_refused(void **state)
{
	(void)state;
	struct rec recs[10];
	assert_int_equal(tw_advance_budget(NULL, 0, 1), -EINVAL);
	assert_int_equal(tw_wheel_create(&wheel, NULL, 0), 0);
	arm_all(recs, 10, at_spread);
	struct snapshot before = snap(wheel);
	assert_int_equal(tw_advance_budget(wheel, 100 * TICK, 0), -EINVAL);
	assert_unchanged(wheel, before);
	assert_int_equal(tw_advance_budget(wheel, 100 * TICK, UINT32_MAX), 10); /* no budget */
	assert_wheel_sound(wheel);
	tw_wheel_destroy(wheel);
}

/* Budget 1: one timer per call; tw_next_expiry() is now while any waits. */
static void test_one(void **state)
{
	(void)state;
	enum { N = 300 };
	static struct rec recs[N];
	log_reset();
	assert_int_equal(tw_wheel_create(&wheel, NULL, 0), 0);
	arm_all(recs, N, at_spread);
	uint64_t now = (N / 3 + 5) * TICK;
	for (size_t i = 0; i < N; i++) {
		assert_int_equal(tw_advance_budget(wheel, now, 1), 1);
		assert_int_equal(tw_count(wheel), N - 1 - i);
		assert_int_equal(tw_next_expiry(wheel), i + 1 < N ? now : UINT64_MAX);
		assert_wheel_sound(wheel);
	}
	assert_int_equal(tw_advance_budget(wheel, now, 1), 0);
	assert_int_equal(log_len, N);
	for (size_t i = 0; i < N; i++)
		assert_int_equal(recs[i].fired, 1);
	assert_log_sound();
	tw_wheel_destroy(wheel);
}

/* 1000 timers in one tick, budget 64: 15 full batches and one of 40. */
static void test_smaller_than_a_tick(void **state)
{
	(void)state;
	enum { N = 1000, B = 64 };
	static struct rec recs[N];
	log_reset();
	assert_int_equal(tw_wheel_create(&wheel, NULL, 0), 0);
	arm_all(recs, N, at_one_tick);
	/* Short of the tick: nothing, budget or not. */
	assert_int_equal(tw_advance_budget(wheel, 7 * TICK - 1, B), 0);
	size_t batches = 0, total = 0;
	for (int got; (got = tw_advance_budget(wheel, 7 * TICK, B)) > 0; batches++) {
		assert_true(got <= B);
		total += (size_t)got;
		assert_wheel_sound(wheel);
	}
	assert_int_equal(batches, (N + B - 1) / B);
	assert_int_equal(total, N);
	for (size_t i = 0; i < N; i++)
		assert_int_equal(recs[i].fired, 1);
	tw_wheel_destroy(wheel);
}

/* Left-over timers of ticks 1..5 fire before those of ticks 6..10 in a
 * later advance, and before a timer armed already due between the two. */
static void test_order_across_advances(void **state)
{
	(void)state;
	enum { N = 30 };
	static struct rec recs[N], late;
	log_reset();
	assert_int_equal(tw_wheel_create(&wheel, NULL, 0), 0);
	arm_all(recs, N, at_spread); /* ticks 1..10 */
	assert_int_equal(tw_advance_budget(wheel, 5 * TICK, 4), 4);
	late = (struct rec){ .expires = 2 * TICK };
	tw_timer_init(&late.timer, logged);
	assert_int_equal(tw_add(wheel, &late.timer, late.expires), 0);
	assert_int_equal(tw_advance(wheel, 10 * TICK), N - 4 + 1);
	/* The 15 timers of ticks 1..5, then the late one, then ticks 6..10. */
	assert_ptr_equal(log_rec[15], &late);
	for (size_t i = 0; i < 15; i++)
		assert_true(log_rec[i]->expires <= 5 * TICK && log_rec[i] != &late);
	for (size_t i = 16; i < log_len; i++)
		assert_true(log_rec[i]->expires > 5 * TICK);
	for (size_t i = 1; i < 15; i++)
		assert_true(log_rec[i - 1]->expires <= log_rec[i]->expires);
	for (size_t i = 17; i < log_len; i++)
		assert_true(log_rec[i - 1]->expires <= log_rec[i]->expires);
	for (size_t i = 0; i < N; i++)
		assert_int_equal(recs[i].fired, 1);
	assert_wheel_sound(wheel);
	tw_wheel_destroy(wheel);
}

/* The first callback cancels a timer of its own batch and one left for a
 * later batch, and re-arms another waiting one later: the cancelled never
 * fire, the re-armed fires by its new expiry, once. */
static uint64_t at_cancel(size_t i)
{
	static const uint64_t ticks[] = { 1, 2, 2, 3, 3, 4, 4, 4 };
	return ticks[i] * TICK;
}

static void test_cancel_waiting(void **state)
{
	(void)state;
	enum { N = 8 };
	static struct rec recs[N];
	log_reset();
	assert_int_equal(tw_wheel_create(&wheel, NULL, 0), 0);
	arm_all(recs, N, at_cancel);
	recs[0].cancel = &recs[1];  /* in the first batch with it */
	recs[0].cancel2 = &recs[5]; /* left for the second */
	recs[0].rearm = &recs[6];
	recs[6].expires = 40 * TICK;
	/* Batch 1: recs 0, 1 and 2; 0 runs first (tick order) and cancels 1. */
	assert_int_equal(tw_advance_budget(wheel, 10 * TICK, 3), 2);
	assert_int_equal(recs[1].fired, 0);
	/* Batch 2: 3, 4 and 7. */
	assert_int_equal(tw_advance_budget(wheel, 10 * TICK, 3), 3);
	assert_int_equal(tw_advance_budget(wheel, 10 * TICK, 3), 0);
	assert_int_equal(recs[5].fired, 0);
	assert_int_equal(recs[6].fired, 0);
	assert_true(tw_pending(&recs[6].timer));
	assert_int_equal(tw_advance_budget(wheel, 40 * TICK, 3), 1);
	for (size_t i = 0; i < N; i++)
		assert_int_equal(recs[i].fired, i == 1 || i == 5 ? 0 : 1);
	assert_log_sound();
	assert_wheel_sound(wheel);
	tw_wheel_destroy(wheel);
}

/* The batch is taken before its first callback and not refilled: the first
 * callback cancels one timer of its batch and re-arms another already due,
 * so one of three runs while four are still due (tw_next_expiry() says
 * so): the three left by the budget fire next, in tick order, and the
 * re-armed one after them. */
static uint64_t at_ticks(size_t i) { return (1 + i) * TICK; }

static void test_batch_not_refilled(void **state)
{
	(void)state;
	enum { N = 6 };
	static struct rec recs[N];
	log_reset();
	assert_int_equal(tw_wheel_create(&wheel, NULL, 0), 0);
	arm_all(recs, N, at_ticks);
	recs[0].cancel = &recs[1];
	recs[0].rearm = &recs[2];
	recs[2].expires = 2 * TICK; /* due at once: to the due list, after 3, 4, 5 */
	assert_int_equal(tw_advance_budget(wheel, 10 * TICK, 3), 1);
	assert_int_equal(tw_count(wheel), 4);
	assert_int_equal(tw_next_expiry(wheel), 10 * TICK);
	assert_int_equal(tw_advance_budget(wheel, 10 * TICK, 3), 3);
	assert_ptr_equal(log_rec[1], &recs[3]);
	assert_ptr_equal(log_rec[2], &recs[4]);
	assert_ptr_equal(log_rec[3], &recs[5]);
	assert_int_equal(tw_advance_budget(wheel, 10 * TICK, 3), 1);
	assert_ptr_equal(log_rec[4], &recs[2]);
	assert_int_equal(tw_next_expiry(wheel), UINT64_MAX);
	for (size_t i = 0; i < N; i++)
		assert_int_equal(recs[i].fired, i == 1 ? 0 : 1);
	assert_wheel_sound(wheel);
	tw_wheel_destroy(wheel);
}

/* A callback of the first batch destroys the wheel: nothing else fires. */
static void test_destroy_in_batch(void **state)
{
	(void)state;
	enum { N = 10 };
	static struct rec recs[N];
	log_reset();
	assert_int_equal(tw_wheel_create(&wheel, NULL, 0), 0);
	arm_all(recs, N, at_one_tick);
	for (size_t i = 0; i < N; i++)
		recs[i].destroy = true;
	assert_int_equal(tw_advance_budget(wheel, 7 * TICK, 4), 1);
	for (size_t i = 0; i < N; i++)
		assert_false(tw_pending(&recs[i].timer));
}

static void reenter(struct tw_timer *t)
{
	(void)t;
	assert_int_equal(tw_advance_budget(wheel, UINT64_MAX, 5), -EBUSY);
}

static void test_busy_from_callback(void **state)
{
	(void)state;
	struct tw_timer t;
	assert_int_equal(tw_wheel_create(&wheel, NULL, 0), 0);
	tw_timer_init(&t, reenter);
	tw_add(wheel, &t, TICK);
	assert_int_equal(tw_advance_budget(wheel, TICK, 1), 1);
	tw_wheel_destroy(wheel);
}

/* Random arms, re-arms and cancels between budgeted advances, against a
 * model that keeps each timer's expiry and the clock it was armed at, and
 * computes with ticks of its own which timers are due: each advance fires
 * exactly min(budget, due timers), none before its expiry, and each one it
 * fires is idle after (fired once). */
static void test_random(void **state)
{
	(void)state;
	enum { N = 2000, STEPS = 20000 };
	static struct rec recs[N];
	uint64_t rng = test_seed(), now = 0;
	log_reset();
	assert_int_equal(tw_wheel_create(&wheel, NULL, 0), 0);
	for (size_t i = 0; i < N; i++) {
		recs[i] = (struct rec){ .expires = 0 };
		tw_timer_init(&recs[i].timer, logged);
	}
	uint64_t armed_fired = 0, limited = 0;
	for (size_t step = 0; step < STEPS; step++) {
		uint64_t x = test_rand(&rng);
		struct rec *r = &recs[x % N];
		switch ((x >> 16) % 10) {
		case 0: case 1: case 2: case 3: case 4: case 5:
			r->expires = now + (x >> 24) % (200 * TICK);
			r->armed_at = now;
			tw_mod(wheel, &r->timer, r->expires);
			break;
		case 6:
			tw_del(wheel, &r->timer);
			break;
		default: {
			size_t pending_due = 0;
			now += (x >> 24) % (40 * TICK);
			/* Due: armed already expired, or its expiry's tick,
			 * rounded up, reached by now's, rounded down. */
			for (size_t i = 0; i < N; i++)
				pending_due += tw_pending(&recs[i].timer) &&
					       (recs[i].expires <= recs[i].armed_at ||
						test_round_up(recs[i].expires, TICK) / TICK <= now / TICK);
			unsigned budget = 1 + (unsigned)((x >> 40) % 12);
			limited += pending_due > budget;
			size_t first = log_len;
			int got = tw_advance_budget(wheel, now, budget);
			assert_true(got >= 0 && (unsigned)got <= budget);
			/* Fires min(budget, due) timers: none is left waiting while
			 * budget remains. */
			assert_int_equal((size_t)got, pending_due < budget ? pending_due : budget);
			for (size_t i = first; i < log_len; i++) {
				assert_true(log_rec[i]->expires <= now);
				assert_false(tw_pending(&log_rec[i]->timer));
			}
			armed_fired += (uint64_t)got;
			break;
		}
		}
		if (step % 512 == 0)
			assert_wheel_sound(wheel);
	}
	assert_int_equal(log_len, armed_fired);
	fprintf(stderr, "# %llu advances left timers due\n", (unsigned long long)limited);
	assert_true(limited > STEPS / 100); /* the budget did bind */
	assert_wheel_sound(wheel);
	tw_wheel_destroy(wheel);
	free(log_rec);
	free(log_now);
	log_rec = NULL;
	log_now = NULL;
	log_cap = log_len = 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_zero_refused),
		cmocka_unit_test(test_one),
		cmocka_unit_test(test_smaller_than_a_tick),
		cmocka_unit_test(test_order_across_advances),
		cmocka_unit_test(test_cancel_waiting),
		cmocka_unit_test(test_batch_not_refilled),
		cmocka_unit_test(test_destroy_in_batch),
		cmocka_unit_test(test_busy_from_callback),
		cmocka_unit_test(test_random),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
