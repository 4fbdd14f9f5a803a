/* SPDX-License-Identifier: MIT */
/*
 * The README's misuse table, row by row: every bad input the library is
 * documented to survive, and what it does with it. A failing call must
 * change nothing; the wheel must stay sound (tw_check) and keep working.
 * Misuse that is undefined in release builds (a destroyed wheel, an armed
 * timer re-initialised, copied or moved) is tested in test_debug.c against
 * a debug build.
 */
#include <string.h>

#include <timerwheel/debug.h>

#include "../common.h"

#define MS 1000000ull

static int fired;
static void count(struct tw_timer *t)
{
	(void)t;
	fired++;
}

static void never(struct tw_timer *t)
{
	(void)t;
	fail_msg("this timer must not fire");
}


/* A wheel with a few timers on several levels, for the "changes nothing"
 * checks. */
static struct tw_wheel *busy_wheel(struct tw_timer *t, int n)
{
	struct tw_wheel *w;
	assert_int_equal(tw_wheel_create(&w, NULL, 1000), 0);
	for (int i = 0; i < n; i++) {
		tw_timer_init(&t[i], count);
		assert_int_equal(tw_add(w, &t[i], 1000 + (uint64_t)(i + 1) * (i + 1) * 997 * MS), 0);
	}
	return w;
}

static void null_wheel(void **state)
{
	(void)state;
	struct tw_timer t;
	tw_timer_init(&t, count);
	struct tw_stats st;
	unsigned level, slot;
	assert_int_equal(tw_add(NULL, &t, 1), -EINVAL);
	assert_int_equal(tw_mod(NULL, &t, 1), -EINVAL);
	assert_int_equal(tw_del(NULL, &t), -EINVAL);
	assert_int_equal(tw_advance(NULL, 1), -EINVAL);
	assert_int_equal(tw_set_notify(NULL, NULL, NULL), -EINVAL);
	assert_int_equal(tw_get_stats(NULL, &st), -EINVAL);
	assert_int_equal(tw_check(NULL), -EINVAL);
	assert_int_equal(tw_timer_bucket(NULL, &t, &level, &slot), -EINVAL);
	assert_int_equal(tw_dump(NULL, stdout, true), -EINVAL);
	assert_int_equal(tw_next_expiry(NULL), UINT64_MAX);
	assert_int_equal(tw_now(NULL), 0);
	assert_int_equal(tw_count(NULL), 0);
	assert_int_equal(tw_tick(NULL), 0);
	tw_wheel_destroy(NULL);
	assert_false(tw_pending(&t));
}

static void null_timer(void **state)
{
	(void)state;
	struct tw_timer t[3];
	struct tw_wheel *w = busy_wheel(t, 3);
	struct snapshot s = snap(w);
	unsigned level, slot;
	assert_int_equal(tw_add(w, NULL, 1), -EINVAL);
	assert_int_equal(tw_mod(w, NULL, 1), -EINVAL);
	assert_int_equal(tw_del(w, NULL), -EINVAL);
	assert_int_equal(tw_timer_bucket(w, NULL, &level, &slot), -EINVAL);
	assert_int_equal(tw_timer_bucket(w, &t[0], NULL, &slot), -EINVAL);
	assert_int_equal(tw_timer_bucket(w, &t[0], &level, NULL), -EINVAL);
	assert_false(tw_pending(NULL));
	assert_int_equal(tw_forward(NULL, 10, 10), 0);
	tw_timer_init(NULL, count);
	assert_int_equal(tw_periodic_init(NULL, count, 5), -EINVAL);
	assert_unchanged(w, s);
	tw_wheel_destroy(w);
}

static void null_config_or_out(void **state)
{
	(void)state;
	struct tw_wheel *w = NULL;
	assert_int_equal(tw_wheel_create(NULL, NULL, 0), -EINVAL);
	assert_int_equal(tw_wheel_create(&w, NULL, 7), 0); /* NULL config: defaults */
	assert_int_equal(tw_tick(w), TW_DEFAULT_TICK_NS);
	assert_int_equal(tw_now(w), 7);
	tw_wheel_destroy(w);
	struct tw_stats st;
	assert_int_equal(tw_wheel_create(&w, NULL, 0), 0);
	assert_int_equal(tw_get_stats(w, NULL), -EINVAL);
	assert_int_equal(tw_dump(w, NULL, false), -EINVAL);
	(void)st;
	tw_wheel_destroy(w);
}

static void bad_tick(void **state)
{
	(void)state;
	/* 0 is the default; any other tick works, up to one tick for all time. */
	const uint64_t ticks[] = { 0, 1, 3, 999983, UINT64_MAX / 2, UINT64_MAX };
	for (size_t i = 0; i < sizeof(ticks) / sizeof(ticks[0]); i++) {
		struct tw_config c = { .tick_ns = ticks[i], .slot_bits = 0 };
		struct tw_wheel *w;
		assert_int_equal(tw_wheel_create(&w, &c, 5), 0);
		assert_int_equal(tw_tick(w), ticks[i] ? ticks[i] : TW_DEFAULT_TICK_NS);
		struct tw_timer t;
		tw_timer_init(&t, count);
		fired = 0;
		assert_int_equal(tw_add(w, &t, 6), 0);
		assert_int_equal(tw_advance(w, 5), 0);
		/* Never early, whatever the tick. */
		assert_int_equal(fired, 0);
		assert_int_equal(tw_advance(w, UINT64_MAX), 1);
		assert_wheel_sound(w);
		tw_wheel_destroy(w);
	}
}

static void bad_slot_bits(void **state)
{
	(void)state;
	const unsigned bad[] = { 7, 8, 64, 1000, UINT32_MAX };
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct tw_config c = { .tick_ns = 1, .slot_bits = bad[i] };
		struct tw_wheel *w = (struct tw_wheel *)0x1;
		assert_int_equal(tw_wheel_create(&w, &c, 0), -EINVAL);
		assert_ptr_equal(w, (struct tw_wheel *)0x1); /* untouched */
	}
	for (unsigned k = 0; k <= TW_MAX_SLOT_BITS; k++) { /* 0 is the default */
		struct tw_config c = { .tick_ns = 1, .slot_bits = k };
		struct tw_wheel *w;
		assert_int_equal(tw_wheel_create(&w, &c, 0), 0);
		assert_wheel_sound(w);
		tw_wheel_destroy(w);
	}
}

static void add_armed_timer(void **state)
{
	(void)state;
	struct tw_timer t[3];
	struct tw_wheel *w = busy_wheel(t, 3);
	struct snapshot s = snap(w);
	uint64_t e = t[1].expires;
	assert_int_equal(tw_add(w, &t[1], 5), -EBUSY);
	assert_int_equal(t[1].expires, e); /* still armed for its old expiry */
	assert_unchanged(w, s);
	/* tw_mod is the way to re-arm. */
	assert_int_equal(tw_mod(w, &t[1], e + 1), 1);
	tw_wheel_destroy(w);
}

static void timer_of_another_wheel(void **state)
{
	(void)state;
	struct tw_timer t[3];
	struct tw_wheel *w = busy_wheel(t, 3);
	struct tw_wheel *other;
	assert_int_equal(tw_wheel_create(&other, NULL, 1000), 0);
	struct snapshot s = snap(w), so = snap(other);
	unsigned level, slot;
	assert_int_equal(tw_add(other, &t[0], 5), -EBUSY);
	assert_int_equal(tw_mod(other, &t[0], 5), -EINVAL);
	assert_int_equal(tw_del(other, &t[0]), -EINVAL);
	assert_int_equal(tw_timer_bucket(other, &t[0], &level, &slot), -EINVAL);
	assert_true(tw_pending(&t[0]));
	assert_unchanged(w, s);
	assert_unchanged(other, so);
	tw_wheel_destroy(other);
	tw_wheel_destroy(w);
}

static void del_idle_timer(void **state)
{
	(void)state;
	struct tw_timer t[2], idle;
	struct tw_wheel *w = busy_wheel(t, 2);
	tw_timer_init(&idle, never);
	struct snapshot s = snap(w);
	assert_int_equal(tw_del(w, &idle), 0);
	assert_int_equal(tw_del(w, &idle), 0);
	assert_unchanged(w, s);
	/* A timer that fired is idle too. */
	assert_int_equal(tw_advance(w, UINT64_MAX), 2);
	assert_int_equal(tw_del(w, &t[0]), 0);
	tw_wheel_destroy(w);
}

static void mod_idle_timer(void **state)
{
	(void)state;
	struct tw_wheel *w;
	assert_int_equal(tw_wheel_create(&w, NULL, 0), 0);
	struct tw_timer t;
	tw_timer_init(&t, count);
	assert_int_equal(tw_mod(w, &t, 5 * MS), 0); /* arms it */
	assert_true(tw_pending(&t));
	fired = 0;
	assert_int_equal(tw_advance(w, 5 * MS), 1);
	tw_wheel_destroy(w);
}

static void advance_backwards(void **state)
{
	(void)state;
	struct tw_timer t[3];
	struct tw_wheel *w = busy_wheel(t, 3);
	assert_int_equal(tw_advance(w, 50000), 0);
	struct snapshot s = snap(w);
	assert_int_equal(tw_advance(w, 49999), 0);
	assert_int_equal(tw_advance(w, 0), 0);
	assert_unchanged(w, s); /* not even counted as an advance */
	assert_int_equal(tw_now(w), 50000);
	tw_wheel_destroy(w);
}

static struct tw_wheel *cb_wheel;
static int cb_result;

static void advance_inside(struct tw_timer *t)
{
	(void)t;
	cb_result = tw_advance(cb_wheel, UINT64_MAX);
}

static void advance_from_callback(void **state)
{
	(void)state;
	assert_int_equal(tw_wheel_create(&cb_wheel, NULL, 0), 0);
	struct tw_timer t, later;
	tw_timer_init(&t, advance_inside);
	tw_timer_init(&later, count);
	tw_add(cb_wheel, &t, MS);
	tw_add(cb_wheel, &later, 100 * MS);
	fired = 0;
	assert_int_equal(tw_advance(cb_wheel, MS), 1);
	assert_int_equal(cb_result, -EBUSY);
	assert_int_equal(fired, 0); /* the nested call ran nothing */
	assert_int_equal(tw_now(cb_wheel), MS);
	assert_true(tw_pending(&later));
	assert_wheel_sound(cb_wheel);
	tw_wheel_destroy(cb_wheel);
}

static struct tw_timer *victims;
static void destroy_inside(struct tw_timer *t)
{
	(void)t;
	tw_wheel_destroy(cb_wheel);
	cb_result = tw_add(cb_wheel, &victims[0], 0);
	for (int i = 0; i < 3; i++)
		assert_false(tw_pending(&victims[i]));
}

static void destroy_from_callback(void **state)
{
	(void)state;
	assert_int_equal(tw_wheel_create(&cb_wheel, NULL, 0), 0);
	struct tw_timer t, v[3];
	victims = v;
	tw_timer_init(&t, destroy_inside);
	tw_add(cb_wheel, &t, MS);
	for (int i = 0; i < 3; i++) {
		tw_timer_init(&v[i], never);
		/* v[0] is due in the same advance, a tick after t: timers of one
		 * advance fire in tick order (within a tick, in no set order). */
		tw_add(cb_wheel, &v[i], i == 0 ? 2 * MS : (uint64_t)i * 1000 * MS);
	}
	/* The wheel is freed when tw_advance returns: no further callback. */
	assert_int_equal(tw_advance(cb_wheel, 10000 * MS), 1);
	assert_int_equal(cb_result, -EINVAL);
	for (int i = 0; i < 3; i++)
		assert_false(tw_pending(&v[i]));
}

/* A backend's notify hook holds the wheel: destroying it idles the timers
 * at once, and the memory goes when the hook is removed (ASan and valgrind
 * see a use after free or a leak if either half is wrong). */
static uint64_t hook_last;
static int hook_calls;
static int hook(struct tw_wheel *w, uint64_t next, void *arg)
{
	(void)w;
	(void)arg;
	hook_last = next;
	hook_calls++;
	return 0;
}

static void destroy_held_by_hook(void **state)
{
	(void)state;
	struct tw_wheel *w;
	struct tw_timer t, spare;
	assert_int_equal(tw_wheel_create(&w, NULL, 0), 0);
	assert_int_equal(tw_set_notify(w, hook, NULL), 0);
	tw_timer_init(&t, never);
	tw_timer_init(&spare, count);
	assert_int_equal(tw_add(w, &t, 5 * MS), 0);
	hook_calls = 0;
	tw_wheel_destroy(w);
	assert_false(tw_pending(&t));
	assert_int_equal(hook_calls, 1); /* the backend hears the wheel is empty */
	assert_int_equal(hook_last, UINT64_MAX);
	tw_wheel_destroy(w); /* a second destroy while held does nothing */
	/* Still readable by the backend, but holds nothing. */
	assert_int_equal(tw_count(w), 0);
	assert_int_equal(tw_next_expiry(w), UINT64_MAX);
	assert_int_equal(tw_add(w, &spare, MS), -EINVAL);
	assert_int_equal(tw_mod(w, &spare, MS), -EINVAL);
	assert_int_equal(tw_del(w, &spare), 0);
	assert_int_equal(tw_advance(w, 10 * MS), -EINVAL);
	assert_int_equal(tw_now(w), 0);
	assert_int_equal(tw_set_notify(w, hook, NULL), -EINVAL);
	assert_int_equal(tw_check(w), 0);
	assert_int_equal(tw_set_notify(w, NULL, NULL), 0); /* released here */
}

static void destroy_inside_held(struct tw_timer *t)
{
	(void)t;
	tw_wheel_destroy(cb_wheel);
	hook_calls = 0;
}

static void destroy_from_callback_held_by_hook(void **state)
{
	(void)state;
	struct tw_timer t, v;
	assert_int_equal(tw_wheel_create(&cb_wheel, NULL, 0), 0);
	assert_int_equal(tw_set_notify(cb_wheel, hook, NULL), 0);
	tw_timer_init(&t, destroy_inside_held);
	tw_timer_init(&v, never);
	assert_int_equal(tw_add(cb_wheel, &t, MS), 0);
	assert_int_equal(tw_add(cb_wheel, &v, 2 * MS), 0); /* a tick after t: it would fire after it */
	assert_int_equal(tw_advance(cb_wheel, 2 * MS), 1);
	/* The hook hears once more, so the backend stops its OS timer. */
	assert_int_equal(hook_calls, 1);
	assert_int_equal(hook_last, UINT64_MAX);
	assert_false(tw_pending(&v));
	assert_int_equal(tw_advance(cb_wheel, 3 * MS), -EINVAL);
	assert_int_equal(tw_set_notify(cb_wheel, NULL, NULL), 0);
}

static void expiry_in_the_past(void **state)
{
	(void)state;
	struct tw_wheel *w;
	assert_int_equal(tw_wheel_create(&w, NULL, 500 * MS), 0);
	struct tw_timer a, b;
	tw_timer_init(&a, count);
	tw_timer_init(&b, count);
	assert_int_equal(tw_add(w, &a, 0), 0);
	assert_int_equal(tw_add(w, &b, 500 * MS), 0); /* "now" is already expired */
	assert_int_equal(tw_next_expiry(w), 500 * MS);
	fired = 0;
	assert_int_equal(tw_advance(w, 500 * MS), 2); /* the same now: fires */
	assert_int_equal(fired, 2);
	tw_wheel_destroy(w);
}

static void expiry_at_uint64_max(void **state)
{
	(void)state;
	/* With ticks that do and do not divide 2^64. */
	const uint64_t ticks[] = { 1, MS, 3, UINT64_MAX / 2 };
	for (size_t i = 0; i < sizeof(ticks) / sizeof(ticks[0]); i++) {
		struct tw_config c = { .tick_ns = ticks[i], .slot_bits = 3 };
		struct tw_wheel *w;
		assert_int_equal(tw_wheel_create(&w, &c, 0), 0);
		struct tw_timer t, u;
		tw_timer_init(&t, count);
		tw_timer_init(&u, count);
		assert_int_equal(tw_add(w, &t, UINT64_MAX), 0);
		assert_int_equal(tw_add(w, &u, UINT64_MAX - 1), 0);
		fired = 0;
		assert_int_equal(tw_advance(w, UINT64_MAX - 2), 0);
		assert_true(tw_pending(&t));
		assert_int_equal(tw_advance(w, UINT64_MAX), 2); /* never lost */
		assert_int_equal(tw_advance(w, UINT64_MAX), 0);
		/* At the end of time, anything armed is already expired. */
		assert_int_equal(tw_add(w, &t, UINT64_MAX), 0);
		assert_int_equal(tw_advance(w, UINT64_MAX), 1);
		assert_wheel_sound(w);
		tw_wheel_destroy(w);
	}
}

static void destroy_with_armed_timers(void **state)
{
	(void)state;
	struct tw_timer t[40];
	struct tw_wheel *w = busy_wheel(t, 40);
	tw_wheel_destroy(w);
	for (int i = 0; i < 40; i++)
		assert_false(tw_pending(&t[i]));
	/* Idle timers are reusable on a new wheel without tw_timer_init. */
	assert_int_equal(tw_wheel_create(&w, NULL, 0), 0);
	fired = 0;
	assert_int_equal(tw_add(w, &t[7], 1), 0);
	assert_int_equal(tw_advance(w, MS), 1);
	tw_wheel_destroy(w);
}

static void uninitialised_timer(void **state)
{
	(void)state;
	struct tw_timer t[3];
	struct tw_wheel *w = busy_wheel(t, 3);
	struct snapshot s = snap(w);
	struct tw_timer zero, junk, no_fn;
	memset(&zero, 0, sizeof(zero));
	memset(&junk, 0xa5, sizeof(junk));
	tw_timer_init(&no_fn, NULL);
	assert_int_equal(tw_add(w, &zero, 5), -EINVAL);
	assert_int_equal(tw_mod(w, &zero, 5), -EINVAL);
	assert_int_equal(tw_del(w, &zero), 0); /* all zero looks idle */
	assert_int_equal(tw_add(w, &junk, 5), -EINVAL);
	assert_int_equal(tw_mod(w, &junk, 5), -EINVAL);
	assert_int_equal(tw_del(w, &junk), -EINVAL); /* "armed" on no wheel of ours */
	assert_int_equal(tw_add(w, &no_fn, 5), -EINVAL);
	assert_int_equal(tw_mod(w, &no_fn, 5), -EINVAL);
	assert_unchanged(w, s);
	tw_wheel_destroy(w);
}

static void bad_periodic(void **state)
{
	(void)state;
	struct tw_periodic p;
	assert_int_equal(tw_periodic_init(&p, NULL, 5), -EINVAL);
	assert_int_equal(tw_periodic_init(&p, count, 0), -EINVAL);
	/* A period set to 0 later ends the repetition after one more firing. */
	struct tw_wheel *w;
	assert_int_equal(tw_wheel_create(&w, NULL, 0), 0);
	assert_int_equal(tw_periodic_init(&p, count, MS), 0);
	assert_int_equal(tw_add(w, &p.timer, MS), 0);
	fired = 0;
	assert_int_equal(tw_advance(w, MS), 1);
	assert_true(tw_pending(&p.timer));
	p.period = 0;
	assert_int_equal(tw_advance(w, 2 * MS), 1);
	assert_false(tw_pending(&p.timer));
	assert_wheel_sound(w);
	tw_wheel_destroy(w);
}

static void bad_forward(void **state)
{
	(void)state;
	struct tw_timer t[1];
	struct tw_wheel *w = busy_wheel(t, 1);
	uint64_t e = t[0].expires;
	assert_int_equal(tw_forward(&t[0], UINT64_MAX, MS), 0); /* pending */
	assert_int_equal(t[0].expires, e);
	struct tw_timer idle;
	tw_timer_init(&idle, count);
	assert_int_equal(tw_forward(&idle, 10, 0), 0); /* period 0 */
	idle.expires = UINT64_MAX - 5;
	assert_int_equal(tw_forward(&idle, UINT64_MAX - 1, 1000), 1);
	assert_int_equal(idle.expires, UINT64_MAX); /* saturates */
	tw_wheel_destroy(w);
}

static void second_notify_hook(void **state)
{
	(void)state;
	struct tw_wheel *w;
	assert_int_equal(tw_wheel_create(&w, NULL, 0), 0);
	assert_int_equal(tw_set_notify(w, hook, NULL), 0);
	assert_int_equal(tw_set_notify(w, hook, NULL), -EBUSY);
	assert_int_equal(tw_set_notify(w, NULL, NULL), 0);
	assert_int_equal(tw_set_notify(w, hook, NULL), 0);
	tw_wheel_destroy(w);
	assert_int_equal(tw_set_notify(w, NULL, NULL), 0); /* the hook held it */
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(null_wheel),
		cmocka_unit_test(null_timer),
		cmocka_unit_test(null_config_or_out),
		cmocka_unit_test(bad_tick),
		cmocka_unit_test(bad_slot_bits),
		cmocka_unit_test(add_armed_timer),
		cmocka_unit_test(timer_of_another_wheel),
		cmocka_unit_test(del_idle_timer),
		cmocka_unit_test(mod_idle_timer),
		cmocka_unit_test(advance_backwards),
		cmocka_unit_test(advance_from_callback),
		cmocka_unit_test(destroy_from_callback),
		cmocka_unit_test(destroy_held_by_hook),
		cmocka_unit_test(destroy_from_callback_held_by_hook),
		cmocka_unit_test(expiry_in_the_past),
		cmocka_unit_test(expiry_at_uint64_max),
		cmocka_unit_test(destroy_with_armed_timers),
		cmocka_unit_test(uninitialised_timer),
		cmocka_unit_test(bad_periodic),
		cmocka_unit_test(bad_forward),
		cmocka_unit_test(second_notify_hook),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
