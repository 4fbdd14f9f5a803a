/* SPDX-License-Identifier: MIT */
/*
 * Periodic timers (no drift, no bursts), tw_forward, the notify hook that
 * backends rely on, and the statistics.
 */
#include <errno.h>

#include "common.h"

#define TICK 1000000ull

static struct tw_wheel *wheel;
static uint64_t now;

struct ticker {
	struct tw_periodic periodic;
	int fired;
	uint64_t first;
	int stop_after;
};

static void tick_cb(struct tw_timer *t)
{
	struct ticker *k = tw_container_of(t, struct ticker, periodic.timer);
	k->fired++;
	/* Pending in its own callback, already re-armed one period on. */
	assert_true(tw_pending(t));
	assert_true(t->expires > now);
	assert_int_equal((t->expires - k->first) % k->periodic.period, 0);
	if (k->fired == k->stop_after)
		assert_int_equal(tw_del(wheel, t), 1);
}

/* A period of 3.3 ms on a 1 ms tick, advanced in irregular steps: the
 * expiry stays on first + n * period exactly (no drift), and the count of
 * firings is the count of periods passed. */
static void test_periodic_no_drift(void **state)
{
	(void)state;
	uint64_t rng = test_seed();
	assert_int_equal(tw_wheel_create(&wheel, NULL, 0), 0);
	struct ticker k = { .fired = 0, .first = 2500000, .stop_after = -1 };
	assert_int_equal(tw_periodic_init(&k.periodic, tick_cb, 3300000), 0);
	assert_int_equal(tw_add(wheel, &k.periodic.timer, k.first), 0);
	for (now = 0; now < 10000 * TICK;) {
		now += test_rand(&rng) % (2 * TICK);
		tw_advance(wheel, now);
	}
	/* Firings happen at rounded-up ticks: count periods whose tick passed. */
	int expect = 0;
	for (uint64_t e = k.first; test_round_up(e, TICK) <= now; e += k.periodic.period)
		expect++;
	/* Steps shorter than the period never skip one. */
	assert_int_equal(k.fired, expect);
	assert_wheel_sound(wheel);
	tw_wheel_destroy(wheel);
}

/* Falling ten periods behind fires once, then resumes on the grid. */
static void test_periodic_no_burst(void **state)
{
	(void)state;
	assert_int_equal(tw_wheel_create(&wheel, NULL, 0), 0);
	struct ticker k = { .fired = 0, .first = 10 * TICK, .stop_after = 3 };
	tw_periodic_init(&k.periodic, tick_cb, 10 * TICK);
	tw_add(wheel, &k.periodic.timer, k.first);
	now = 105 * TICK;
	assert_int_equal(tw_advance(wheel, now), 1);
	assert_int_equal(k.fired, 1);
	assert_int_equal(k.periodic.timer.expires, 110 * TICK);
	now = 110 * TICK;
	assert_int_equal(tw_advance(wheel, now), 1);
	/* The third firing stops it from inside its callback. */
	now = 120 * TICK;
	assert_int_equal(tw_advance(wheel, now), 1);
	assert_false(tw_pending(&k.periodic.timer));
	now = 200 * TICK;
	assert_int_equal(tw_advance(wheel, now), 0);
	assert_int_equal(k.fired, 3);
	assert_wheel_sound(wheel);
	tw_wheel_destroy(wheel);
}

static void test_forward(void **state)
{
	(void)state;
	struct tw_timer t;
	tw_timer_init(&t, tick_cb);
	t.expires = 100;
	assert_int_equal(tw_forward(&t, 50, 10), 0); /* already ahead */
	assert_int_equal(tw_forward(&t, 100, 10), 1);
	assert_int_equal(t.expires, 110);
	assert_int_equal(tw_forward(&t, 1000, 10), 90);
	assert_int_equal(t.expires, 1010);
	t.expires = UINT64_MAX - 5;
	assert_int_equal(tw_forward(&t, UINT64_MAX - 1, 10), 1);
	assert_int_equal(t.expires, UINT64_MAX); /* saturates */
}

/* The hook a backend uses: told when the earliest moment moves earlier, when
 * the wheel empties, and after each advance; never while callbacks run. */
static struct {
	int calls;
	uint64_t last;
	int in_callback;
	int called_in_callback;
} hook;

static int notify(struct tw_wheel *w, uint64_t next, void *arg)
{
	assert_ptr_equal(arg, &hook);
	assert_int_equal(tw_next_expiry(w), next);
	if (hook.in_callback)
		hook.called_in_callback++;
	hook.calls++;
	hook.last = next;
	return 1;
}

static struct tw_timer inner;
static void arms_earlier(struct tw_timer *t)
{
	(void)t;
	hook.in_callback = 1;
	tw_add(wheel, &inner, now + TICK);
	hook.in_callback = 0;
}

static void nop(struct tw_timer *t) { (void)t; }

static void test_notify_hook(void **state)
{
	(void)state;
	assert_int_equal(tw_wheel_create(&wheel, NULL, 0), 0);
	assert_int_equal(tw_set_notify(wheel, notify, &hook), 0);
	assert_int_equal(tw_set_notify(wheel, notify, &hook), -EBUSY);

	struct tw_timer a, b, c;
	tw_timer_init(&a, arms_earlier);
	tw_timer_init(&b, nop);
	tw_timer_init(&c, nop);
	tw_timer_init(&inner, nop);

	tw_add(wheel, &a, 50 * TICK); /* earlier than nothing: told */
	assert_int_equal(hook.calls, 1);
	assert_int_equal(hook.last, tw_next_expiry(wheel));
	tw_add(wheel, &b, 60 * TICK); /* later: not told */
	tw_add(wheel, &c, 3000 * TICK);
	assert_int_equal(hook.calls, 1);
	tw_mod(wheel, &c, 10 * TICK); /* earlier: told */
	assert_int_equal(hook.calls, 2);
	assert_int_equal(hook.last, 10 * TICK);
	tw_del(wheel, &c); /* later again: not told; the backend wakes early */
	assert_int_equal(hook.calls, 2);

	now = 55 * TICK;
	assert_int_equal(tw_advance(wheel, now), 1); /* a fires, arms inner */
	assert_int_equal(hook.called_in_callback, 0);
	assert_int_equal(hook.calls, 3);
	assert_int_equal(hook.last, 56 * TICK);

	tw_del(wheel, &inner);
	assert_int_equal(hook.calls, 3);
	tw_del(wheel, &b); /* empty: told UINT64_MAX so the loop may exit */
	assert_int_equal(hook.calls, 4);
	assert_int_equal(hook.last, UINT64_MAX);

	struct tw_stats st;
	tw_get_stats(wheel, &st);
	assert_int_equal(st.notifies, 4);
	assert_int_equal(st.os_rearms, 4);

	assert_int_equal(tw_set_notify(wheel, NULL, NULL), 0);
	tw_add(wheel, &b, now + TICK);
	assert_int_equal(hook.calls, 4);
	assert_wheel_sound(wheel);
	tw_wheel_destroy(wheel);
}

static void test_stats(void **state)
{
	(void)state;
	assert_int_equal(tw_wheel_create(&wheel, NULL, 0), 0);
	struct tw_timer t[4];
	for (int i = 0; i < 4; i++)
		tw_timer_init(&t[i], nop);
	tw_add(wheel, &t[0], 5 * TICK);
	tw_add(wheel, &t[1], 100 * TICK); /* level 1: cascades once */
	tw_add(wheel, &t[2], 200 * TICK);
	tw_mod(wheel, &t[2], 300 * TICK);
	tw_del(wheel, &t[2]);
	tw_del(wheel, &t[3]); /* idle: not counted */
	tw_advance(wheel, 1 * TICK);  /* nothing due */
	tw_advance(wheel, 200 * TICK);
	struct tw_stats st;
	tw_get_stats(wheel, &st);
	assert_int_equal(st.armed, 4);
	assert_int_equal(st.cancelled, 1);
	assert_int_equal(st.fired, 2);
	assert_int_equal(st.cascaded, 1);
	assert_int_equal(st.advances, 2);
	assert_int_equal(st.idle_advances, 1);
	tw_wheel_destroy(wheel);
}

/* The end of time: n and the expiry saturate instead of wrapping to 0,
 * and a periodic timer that fires at UINT64_MAX is not re-armed (a re-arm
 * at 0 would fire it again in every advance). */
static int end_fired;
static void end_cb(struct tw_timer *t)
{
	end_fired++;
	assert_false(tw_pending(t)); /* no later time to re-arm at */
}

static void test_forward_end_of_time(void **state)
{
	(void)state;
	struct tw_timer t;
	tw_timer_init(&t, end_cb);
	t.expires = 0;
	assert_true(tw_forward(&t, UINT64_MAX, 1) == UINT64_MAX);
	assert_true(t.expires == UINT64_MAX);
	t.expires = 0;
	assert_true(tw_forward(&t, UINT64_MAX, 2) == (UINT64_MAX >> 1) + 1);
	assert_true(t.expires == UINT64_MAX); /* 2^64 saturates */
	t.expires = 5;
	assert_true(tw_forward(&t, UINT64_MAX - 1, UINT64_MAX) == 1);
	assert_true(t.expires == UINT64_MAX);

	struct tw_periodic p;
	assert_int_equal(tw_periodic_init(&p, end_cb, 1), 0);
	assert_int_equal(tw_wheel_create(&wheel, NULL, 0), 0);
	assert_int_equal(tw_add(wheel, &p.timer, 0), 0);
	end_fired = 0;
	assert_int_equal(tw_advance(wheel, UINT64_MAX), 1);
	assert_int_equal(end_fired, 1);
	assert_false(tw_pending(&p.timer));
	assert_int_equal(tw_advance(wheel, UINT64_MAX), 0);
	assert_int_equal(end_fired, 1);
	assert_int_equal(tw_count(wheel), 0);
	assert_wheel_sound(wheel);
	tw_wheel_destroy(wheel);
}

/* A periodic timer that fires at UINT64_MAX keeps the expiry it was armed
 * with: it is idle in its callback, and its expires is not a saturated
 * forward it was never armed at. */
static uint64_t end_expires;
static void end_expires_cb(struct tw_timer *t)
{
	end_fired++;
	assert_false(tw_pending(t));
	end_expires = t->expires;
}

static void test_periodic_end_keeps_expiry(void **state)
{
	(void)state;
	struct tw_periodic p;
	assert_int_equal(tw_periodic_init(&p, end_expires_cb, 5 * TICK), 0);
	assert_int_equal(tw_wheel_create(&wheel, NULL, 0), 0);
	assert_int_equal(tw_add(wheel, &p.timer, 7 * TICK), 0);
	end_fired = 0;
	assert_int_equal(tw_advance(wheel, UINT64_MAX), 1);
	assert_int_equal(end_fired, 1);
	assert_int_equal(end_expires, 7 * TICK);
	assert_int_equal(p.timer.expires, 7 * TICK);
	assert_false(tw_pending(&p.timer));
	assert_wheel_sound(wheel);
	tw_wheel_destroy(wheel);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_periodic_no_drift),
		cmocka_unit_test(test_periodic_no_burst),
		cmocka_unit_test(test_forward),
		cmocka_unit_test(test_forward_end_of_time),
		cmocka_unit_test(test_notify_hook),
		cmocka_unit_test(test_stats),
		cmocka_unit_test(test_periodic_end_keeps_expiry),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
