/* SPDX-License-Identifier: MIT */
/*
 * tw_walk(): every pending timer visited exactly once with its expiry, the
 * wheel left as it was; at its ends: an empty wheel, 10^6 timers spread
 * over every level, the due list, windows, a visitor that stops the walk,
 * and a walk from a callback; the order promised: the due timers first, in
 * the order they fire, then the slots.
 */
#include <timerwheel/debug.h>

#include "common.h"

#define TICK 1000000ull /* the default 1 ms */

struct rec {
	struct tw_timer timer;
	uint64_t expires; /* what the test armed it for */
	uint32_t visits;
};

static void never(struct tw_timer *t)
{
	(void)t;
	fail_msg("a walk must not fire anything");
}

struct tally {
	uint64_t visits;
	uint64_t wrong_expiry;
	uint64_t stop_after; /* 0: never stop */
};

static int count_rec(struct tw_timer *t, uint64_t expires, void *arg)
{
	struct tally *k = arg;
	struct rec *r = tw_container_of(t, struct rec, timer);
	r->visits++;
	k->visits++;
	k->wrong_expiry += expires != r->expires;
	return k->stop_after && k->visits == k->stop_after ? 7 : 0;
}

static void test_empty_and_refusals(void **state)
{
	(void)state;
	struct tw_wheel *w;
	struct tally k = { 0, 0, 0 };
	assert_int_equal(tw_walk(NULL, count_rec, &k), -EINVAL);
	assert_int_equal(tw_wheel_create(&w, NULL, 0), 0);
	assert_int_equal(tw_walk(w, NULL, &k), -EINVAL);
	assert_int_equal(tw_walk(w, count_rec, &k), 0);
	assert_int_equal(k.visits, 0);
	/* Emptied again: a cancelled timer is not visited. */
	struct rec r = { .expires = 5 * TICK, .visits = 0 };
	tw_timer_init(&r.timer, never);
	tw_add(w, &r.timer, r.expires);
	tw_del(w, &r.timer);
	assert_int_equal(tw_walk(w, count_rec, &k), 0);
	assert_int_equal(k.visits, 0);
	tw_wheel_destroy(w);
}

/* 10^6 timers: already due, exact, with windows, from the next tick to the
 * end of time, some moved by cascades and re-arms before the walk. */
static void test_million(void **state)
{
	(void)state;
	enum { N = 1000000 };
	uint64_t rng = test_seed();
	struct tw_wheel *w;
	uint64_t now = 1000 * TICK;
	struct rec *recs = calloc(N, sizeof(*recs));
	assert_non_null(recs);
	assert_int_equal(tw_wheel_create(&w, NULL, now), 0);
	for (size_t i = 0; i < N; i++) {
		struct rec *r = &recs[i];
		uint64_t x = test_rand(&rng);
		tw_timer_init(&r->timer, never);
		switch (i % 5) {
		case 0: r->expires = now - x % now; break;                 /* due */
		case 1: r->expires = now + 1 + x % (1ull << (x % 64)); break; /* any distance */
		case 2: r->expires = UINT64_MAX - x % 3; break;             /* the end of time */
		default: r->expires = now + 100 * TICK + x % (100000 * TICK); break;
		}
		if (i % 3 == 0)
			assert_int_equal(tw_add_range(w, &r->timer, r->expires, x % (1000 * TICK)), 0);
		else
			assert_int_equal(tw_add(w, &r->timer, r->expires), 0);
	}
	/* Re-arms that stay in their slot and ones that move. */
	for (size_t i = 3; i < N; i += 50) {
		recs[i].expires += (i % 100 == 3) ? 5000 * TICK : 0;
		recs[i].expires -= (i % 100 == 53) ? 50 * TICK : 0;
		assert_int_equal(tw_mod(w, &recs[i].timer, recs[i].expires), 1);
	}
	assert_wheel_sound(w);

	struct snapshot before = snap(w);
	struct tally k = { 0, 0, 0 };
	assert_int_equal(tw_walk(w, count_rec, &k), 0);
	assert_unchanged(w, before);
	assert_int_equal(k.visits, N);
	assert_int_equal(k.wrong_expiry, 0);
	for (size_t i = 0; i < N; i++)
		if (recs[i].visits != 1)
			fail_msg("timer %zu visited %u times", i, recs[i].visits);
	tw_wheel_destroy(w);
	free(recs);
}

/* A visitor that returns non-zero stops the walk, which returns its value;
 * a second walk visits everything again. */
static void test_stop(void **state)
{
	(void)state;
	struct tw_wheel *w;
	struct rec recs[100];
	assert_int_equal(tw_wheel_create(&w, NULL, 0), 0);
	for (size_t i = 0; i < 100; i++) {
		recs[i].expires = (i % 2 ? 0 : i * 1000) * TICK; /* half due */
		recs[i].visits = 0;
		tw_timer_init(&recs[i].timer, never);
		tw_add(w, &recs[i].timer, recs[i].expires);
	}
	for (uint64_t stop = 1; stop <= 100; stop += 33) {
		struct tally k = { 0, 0, stop };
		assert_int_equal(tw_walk(w, count_rec, &k), 7);
		assert_int_equal(k.visits, stop);
	}
	struct tally all = { 0, 0, 0 };
	assert_int_equal(tw_walk(w, count_rec, &all), 0);
	assert_int_equal(all.visits, 100);
	assert_wheel_sound(w);
	tw_wheel_destroy(w);
}

/* From a callback: the timers of the same advance still to run are
 * visited, the running one is not, a periodic one is (re-armed first). */
static struct tw_wheel *cb_wheel;
static struct rec cb_recs[4];
static struct tw_periodic cb_periodic;
static uint64_t cb_visits[4], cb_periodic_visits, cb_other;
static int cb_ran;

static int cb_visit(struct tw_timer *t, uint64_t expires, void *arg)
{
	(void)arg;
	(void)expires;
	if (t == &cb_periodic.timer) {
		cb_periodic_visits++;
		return 0;
	}
	for (int i = 0; i < 4; i++)
		if (t == &cb_recs[i].timer) {
			cb_visits[i]++;
			return 0;
		}
	cb_other++;
	return 0;
}

static void cb_first(struct tw_timer *t)
{
	(void)t;
	if (cb_ran++)
		return;
	assert_int_equal(tw_walk(cb_wheel, cb_visit, NULL), 0);
}

static void cb_tick(struct tw_timer *t)
{
	(void)t;
}

static void test_from_callback(void **state)
{
	(void)state;
	assert_int_equal(tw_wheel_create(&cb_wheel, NULL, 0), 0);
	/* recs 0..1 due at tick 1 (one of them walks first), 2 at tick 2 in
	 * the same advance, 3 later; the periodic one fires at tick 1 too. */
	uint64_t at[4] = { TICK, TICK, 2 * TICK, 50 * TICK };
	for (int i = 0; i < 4; i++) {
		tw_timer_init(&cb_recs[i].timer, i < 2 ? cb_first : cb_tick);
		tw_add(cb_wheel, &cb_recs[i].timer, at[i]);
	}
	assert_int_equal(tw_periodic_init(&cb_periodic, cb_tick, 10 * TICK), 0);
	cb_periodic.timer.expires = 0;
	tw_add(cb_wheel, &cb_periodic.timer, TICK);
	assert_int_equal(tw_advance(cb_wheel, 3 * TICK), 4);
	assert_int_equal(cb_ran, 2);
	/* Whichever of 0 and 1 ran first, the other was still to run. */
	assert_int_equal(cb_visits[0] + cb_visits[1], 1);
	assert_int_equal(cb_visits[2], 1);
	assert_int_equal(cb_visits[3], 1);
	assert_int_equal(cb_other, 0);
	assert_int_equal(cb_periodic_visits, 1);
	assert_wheel_sound(cb_wheel);
	tw_wheel_destroy(cb_wheel);
}

/* The order the header promises: the due timers first, in the order they
 * will fire, then those in slots. Due here are timers armed already
 * expired (in arming order, their expiries in reverse) and the ones a
 * budget left (in tick order), then one armed due after them; the walk's
 * first visits are those, and the next advance fires them in that order. */
#define ORDER_N 24
static struct tw_timer *order_walked[ORDER_N], *order_fired[ORDER_N];
static size_t order_nwalked, order_nfired;

static int order_visit(struct tw_timer *t, uint64_t expires, void *arg)
{
	(void)expires;
	(void)arg;
	assert_true(order_nwalked < ORDER_N);
	order_walked[order_nwalked++] = t;
	return 0;
}

static void order_fire(struct tw_timer *t)
{
	assert_true(order_nfired < ORDER_N);
	order_fired[order_nfired++] = t;
}

static void test_due_first_in_firing_order(void **state)
{
	(void)state;
	struct tw_wheel *w;
	struct tw_timer left[6], past[4], late, slot[8];
	uint64_t now = 100 * TICK;
	assert_int_equal(tw_wheel_create(&w, NULL, 0), 0);
	/* Ticks 1 to 6, due at once; an advance of budget 3 leaves three due. */
	for (int i = 0; i < 6; i++) {
		tw_timer_init(&left[i], order_fire);
		tw_add(w, &left[i], (uint64_t)(6 - i) * TICK); /* armed latest first */
	}
	assert_int_equal(tw_advance_budget(w, now, 3), 3);
	order_nfired = 0;
	/* Already expired, armed in this order, with expiries going back. */
	for (int i = 0; i < 4; i++) {
		tw_timer_init(&past[i], order_fire);
		tw_add(w, &past[i], now - (uint64_t)i * TICK);
	}
	/* In slots of several levels, armed in no order of expiry. */
	for (int i = 0; i < 8; i++) {
		tw_timer_init(&slot[i], order_fire);
		tw_add(w, &slot[i], now + ((uint64_t)(i * 37 % 8) + 1) * (TICK << (3 * i)));
	}
	tw_timer_init(&late, order_fire);
	tw_add(w, &late, 0);

	order_nwalked = 0;
	assert_int_equal(tw_walk(w, order_visit, NULL), 0);
	assert_int_equal(order_nwalked, 3 + 4 + 1 + 8);
	/* Due first: the three left (ticks 4, 5, 6), the four past ones in
	 * arming order, then the late one. */
	struct tw_timer *want[8] = { &left[2], &left[1], &left[0], &past[0], &past[1], &past[2], &past[3], &late };
	unsigned level, slot_index;
	for (size_t i = 0; i < 8; i++) {
		assert_ptr_equal(order_walked[i], want[i]);
		assert_int_equal(tw_timer_bucket(w, order_walked[i], &level, &slot_index), 1);
	}
	for (size_t i = 8; i < order_nwalked; i++)
		assert_int_equal(tw_timer_bucket(w, order_walked[i], &level, &slot_index), 0);
	/* And that is the order they fire in. */
	assert_int_equal(tw_advance(w, now), 8);
	assert_int_equal(order_nfired, 8);
	for (size_t i = 0; i < 8; i++)
		assert_ptr_equal(order_fired[i], order_walked[i]);
	assert_wheel_sound(w);
	tw_wheel_destroy(w);
}

/* From a callback: first the timers still to run in its advance, in the
 * order they then run, then one the callback armed due (it fires in the
 * next advance), then the slots. */
static struct tw_wheel *order_wheel;
static struct tw_timer order_cb[4], order_armed, order_slot;
static size_t order_walk_at; /* order_nfired when the walk ran */

static void order_walker(struct tw_timer *t)
{
	order_fire(t);
	tw_add(order_wheel, &order_armed, 0);
	order_walk_at = order_nfired;
	order_nwalked = 0;
	assert_int_equal(tw_walk(order_wheel, order_visit, NULL), 0);
}

static void test_due_first_from_callback(void **state)
{
	(void)state;
	assert_int_equal(tw_wheel_create(&order_wheel, NULL, 0), 0);
	order_nfired = 0;
	tw_timer_init(&order_cb[0], order_walker);
	tw_add(order_wheel, &order_cb[0], TICK);
	for (int i = 1; i < 4; i++) {
		tw_timer_init(&order_cb[i], order_fire);
		tw_add(order_wheel, &order_cb[i], (uint64_t)(5 - i) * TICK); /* ticks 4, 3, 2 */
	}
	tw_timer_init(&order_armed, order_fire);
	tw_timer_init(&order_slot, order_fire);
	tw_add(order_wheel, &order_slot, 1000 * TICK);
	assert_int_equal(tw_advance(order_wheel, 4 * TICK), 4);
	assert_int_equal(order_walk_at, 1);
	assert_int_equal(order_nwalked, 5);
	/* The three still to run, as they ran: ticks 2, 3, 4. */
	for (size_t i = 0; i < 3; i++)
		assert_ptr_equal(order_walked[i], order_fired[order_walk_at + i]);
	assert_ptr_equal(order_walked[0], &order_cb[3]);
	assert_ptr_equal(order_walked[3], &order_armed);
	assert_ptr_equal(order_walked[4], &order_slot);
	assert_int_equal(tw_advance(order_wheel, 4 * TICK), 1);
	assert_ptr_equal(order_fired[4], &order_armed);
	tw_wheel_destroy(order_wheel);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_empty_and_refusals),
		cmocka_unit_test(test_million),
		cmocka_unit_test(test_stop),
		cmocka_unit_test(test_from_callback),
		cmocka_unit_test(test_due_first_in_firing_order),
		cmocka_unit_test(test_due_first_from_callback),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
