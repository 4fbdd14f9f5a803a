/* SPDX-License-Identifier: MIT */
/*
 * Every error return in timerwheel.h, with its exact errno, and proof that
 * a failing call changed nothing: the wheel's observable state is the same
 * before and after, and tw_check passes.
 */
#include <errno.h>
#include <string.h>

#include <timerwheel/debug.h>

#include "common.h"

static void never(struct tw_timer *t)
{
	(void)t;
	fail_msg("this timer must not fire");
}

static void nop(struct tw_timer *t) { (void)t; }


static void test_create_errors(void **state)
{
	(void)state;
	struct tw_wheel *w = (struct tw_wheel *)0x1;
	struct tw_config bad = { .tick_ns = 1, .slot_bits = 7 };
	assert_int_equal(tw_wheel_create(NULL, NULL, 0), -EINVAL);
	assert_int_equal(tw_wheel_create(&w, &bad, 0), -EINVAL);
	assert_ptr_equal(w, (struct tw_wheel *)0x1); /* untouched on failure */
	bad.slot_bits = 1000;
	assert_int_equal(tw_wheel_create(&w, &bad, 0), -EINVAL);

	/* Zeros mean defaults; every slot_bits from 1 to 6 and odd ticks work. */
	struct tw_config zero = { 0, 0, 0 };
	assert_int_equal(tw_wheel_create(&w, &zero, 42), 0);
	assert_int_equal(tw_tick(w), TW_DEFAULT_TICK_NS);
	assert_int_equal(tw_now(w), 42);
	tw_wheel_destroy(w);
	for (unsigned k = 1; k <= 6; k++) {
		struct tw_config c = { .tick_ns = UINT64_MAX / 3, .slot_bits = k };
		assert_int_equal(tw_wheel_create(&w, &c, UINT64_MAX - 1), 0);
		assert_wheel_sound(w);
		tw_wheel_destroy(w);
	}
	tw_wheel_destroy(NULL); /* allowed */
}

static void test_timer_errors(void **state)
{
	(void)state;
	struct tw_wheel *w, *other;
	assert_int_equal(tw_wheel_create(&w, NULL, 1000), 0);
	assert_int_equal(tw_wheel_create(&other, NULL, 1000), 0);
	struct tw_timer t, uninit, no_fn;
	tw_timer_init(&t, nop);
	memset(&uninit, 0, sizeof(uninit));
	tw_timer_init(&no_fn, NULL);
	tw_timer_init(NULL, nop); /* ignored */

	struct snapshot s = snap(w);
	assert_int_equal(tw_add(NULL, &t, 5), -EINVAL);
	assert_int_equal(tw_add(w, NULL, 5), -EINVAL);
	assert_int_equal(tw_add(w, &uninit, 5), -EINVAL);
	assert_int_equal(tw_add(w, &no_fn, 5), -EINVAL);
	assert_int_equal(tw_mod(NULL, &t, 5), -EINVAL);
	assert_int_equal(tw_mod(w, NULL, 5), -EINVAL);
	assert_int_equal(tw_mod(w, &uninit, 5), -EINVAL);
	assert_int_equal(tw_del(NULL, &t), -EINVAL);
	assert_int_equal(tw_del(w, NULL), -EINVAL);
	assert_unchanged(w, s);

	/* Cancel of an idle timer is not an error. */
	assert_int_equal(tw_del(w, &t), 0);
	assert_unchanged(w, s);

	assert_int_equal(tw_add(w, &t, 5000000), 0);
	s = snap(w);
	assert_int_equal(tw_add(w, &t, 6000000), -EBUSY);
	assert_int_equal(tw_add(other, &t, 6000000), -EBUSY);
	assert_unchanged(w, s);
	assert_int_equal(t.expires, 5000000);

	/* A timer armed on one wheel is refused by another. */
	struct snapshot so = snap(other);
	assert_int_equal(tw_mod(other, &t, 7000000), -EINVAL);
	assert_int_equal(tw_del(other, &t), -EINVAL);
	unsigned level, slot;
	assert_int_equal(tw_timer_bucket(other, &t, &level, &slot), -EINVAL);
	assert_unchanged(other, so);
	assert_unchanged(w, s);

	/* Re-arming through modify is always allowed. */
	assert_int_equal(tw_mod(w, &t, 7000000), 1);
	assert_int_equal(tw_del(w, &t), 1);
	assert_int_equal(tw_mod(w, &t, 7000000), 0);
	assert_int_equal(tw_del(w, &t), 1);
	assert_false(tw_pending(&t));
	assert_false(tw_pending(NULL));

	/* Expiry at UINT64_MAX is accepted and does not fire before then. */
	assert_int_equal(tw_add(w, &t, UINT64_MAX), 0);
	assert_int_equal(tw_advance(w, UINT64_MAX - 1), 0);
	assert_true(tw_pending(&t));
	assert_wheel_sound(w);
	assert_int_equal(tw_advance(w, UINT64_MAX), 1);

	tw_wheel_destroy(w);
	tw_wheel_destroy(other);
}

static void test_wheel_call_errors(void **state)
{
	(void)state;
	struct tw_wheel *w;
	assert_int_equal(tw_wheel_create(&w, NULL, 5000), 0);
	struct tw_timer t;
	tw_timer_init(&t, never);
	assert_int_equal(tw_add(w, &t, 900000000), 0);
	struct snapshot s = snap(w);

	assert_int_equal(tw_advance(NULL, 1), -EINVAL);
	/* Time never runs backwards: a no-op returning 0. */
	assert_int_equal(tw_advance(w, 4999), 0);
	assert_int_equal(tw_advance(w, 0), 0);
	assert_unchanged(w, s);

	assert_int_equal(tw_next_expiry(NULL), UINT64_MAX);
	assert_int_equal(tw_now(NULL), 0);
	assert_int_equal(tw_count(NULL), 0);
	assert_int_equal(tw_tick(NULL), 0);

	struct tw_stats st;
	assert_int_equal(tw_get_stats(NULL, &st), -EINVAL);
	assert_int_equal(tw_get_stats(w, NULL), -EINVAL);
	assert_int_equal(tw_check(NULL), -EINVAL);
	assert_int_equal(tw_dump(NULL, stdout, false), -EINVAL);
	assert_int_equal(tw_dump(w, NULL, false), -EINVAL);

	unsigned level, slot;
	struct tw_timer idle;
	tw_timer_init(&idle, nop);
	assert_int_equal(tw_timer_bucket(NULL, &t, &level, &slot), -EINVAL);
	assert_int_equal(tw_timer_bucket(w, NULL, &level, &slot), -EINVAL);
	assert_int_equal(tw_timer_bucket(w, &t, NULL, &slot), -EINVAL);
	assert_int_equal(tw_timer_bucket(w, &t, &level, NULL), -EINVAL);
	assert_int_equal(tw_timer_bucket(w, &idle, &level, &slot), -ENOENT);

	assert_int_equal(tw_set_notify(NULL, NULL, NULL), -EINVAL);
	assert_unchanged(w, s);

	struct tw_periodic p;
	assert_int_equal(tw_periodic_init(NULL, nop, 5), -EINVAL);
	assert_int_equal(tw_periodic_init(&p, NULL, 5), -EINVAL);
	assert_int_equal(tw_periodic_init(&p, nop, 0), -EINVAL);

	/* tw_forward refuses a pending timer, a NULL timer and period 0. */
	assert_int_equal(tw_forward(&t, UINT64_MAX, 10), 0);
	assert_int_equal(t.expires, 900000000);
	assert_int_equal(tw_forward(NULL, 10, 10), 0);
	assert_int_equal(tw_forward(&idle, 10, 0), 0);
	assert_unchanged(w, s);

	/* Destroying a wheel with armed timers leaves them idle, never called. */
	tw_wheel_destroy(w);
	assert_false(tw_pending(&t));
}

/* The checker must notice a broken invariant, or the tests that lean on it
 * would prove nothing. */
static void test_check_catches_corruption(void **state)
{
	(void)state;
	struct tw_wheel *w;
	assert_int_equal(tw_wheel_create(&w, NULL, 0), 0);
	struct tw_timer a, b;
	tw_timer_init(&a, nop);
	tw_timer_init(&b, nop);
	tw_add(w, &a, 5000000);
	tw_add(w, &b, 50000000000ull);
	assert_wheel_sound(w);

	uint16_t where = a.tw__where;
	a.tw__where = b.tw__where;
	assert_int_equal(tw_check(w), -TW_EUCLEAN);
	a.tw__where = where;

	uint64_t expires = b.expires;
	b.expires = 1;
	assert_int_equal(tw_check(w), -TW_EUCLEAN);
	b.expires = expires;

	struct tw_timer *next = a.tw__next;
	a.tw__next = &a;
	assert_int_equal(tw_check(w), -TW_EUCLEAN);
	a.tw__next = next;

	assert_wheel_sound(w);
	tw_wheel_destroy(w);
}

/* Many armed timers on every level, destroyed: none fires, all idle, and
 * ASan/valgrind see no leak. */
static void test_destroy_with_armed_timers(void **state)
{
	(void)state;
	struct tw_wheel *w;
	assert_int_equal(tw_wheel_create(&w, NULL, 0), 0);
	enum { N = 4096 };
	static struct tw_timer timers[N];
	for (int i = 0; i < N; i++) {
		tw_timer_init(&timers[i], never);
		tw_add(w, &timers[i], (uint64_t)i * i * i * 997);
	}
	assert_int_equal(tw_count(w), N);
	tw_wheel_destroy(w);
	for (int i = 0; i < N; i++)
		assert_false(tw_pending(&timers[i]));
	/* The idle timers are usable again on a new wheel. */
	assert_int_equal(tw_wheel_create(&w, NULL, 0), 0);
	tw_timer_init(&timers[0], nop);
	assert_int_equal(tw_add(w, &timers[0], 1), 0);
	assert_int_equal(tw_advance(w, TW_DEFAULT_TICK_NS), 1);
	tw_wheel_destroy(w);
}

/* A destroyed wheel that a notify hook still holds: it holds no timer, is
 * sound, and refuses every arm and re-arm, of a new timer and of one it
 * held before. The timers it held are idle, so tw_mod's re-arm in place,
 * which does not test for a destroyed wheel, never sees them. */
static void test_destroyed_wheel_held_by_hook(void **state)
{
	(void)state;
	struct tw_wheel *w;
	assert_int_equal(tw_wheel_create(&w, NULL, 0), 0);
	assert_int_equal(tw_set_notify(w, test_hold_hook, NULL), 0);
	static struct tw_timer held[64], fresh;
	for (int i = 0; i < 64; i++) {
		tw_timer_init(&held[i], never);
		assert_int_equal(tw_add(w, &held[i], (uint64_t)(i + 1) << (i % 40)), 0);
	}
	tw_wheel_destroy(w);
	assert_int_equal(tw_count(w), 0);
	assert_wheel_sound(w);
	for (int i = 0; i < 64; i++) {
		assert_false(tw_pending(&held[i]));
		/* later than the old expiry: what an alive wheel re-arms in place */
		assert_int_equal(tw_mod(w, &held[i], UINT64_MAX), -EINVAL);
	}
	tw_timer_init(&fresh, never);
	assert_int_equal(tw_add(w, &fresh, 1000000000), -EINVAL);
	assert_int_equal(tw_mod(w, &fresh, 1000000000), -EINVAL);
	assert_int_equal(tw_count(w), 0);
	assert_wheel_sound(w);
	assert_int_equal(tw_set_notify(w, NULL, NULL), 0); /* the last hold: freed */
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_create_errors),
		cmocka_unit_test(test_timer_errors),
		cmocka_unit_test(test_wheel_call_errors),
		cmocka_unit_test(test_check_catches_corruption),
		cmocka_unit_test(test_destroy_with_armed_timers),
		cmocka_unit_test(test_destroyed_wheel_held_by_hook),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
