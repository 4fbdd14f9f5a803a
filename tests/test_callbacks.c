/* SPDX-License-Identifier: MIT */
/*
 * What a callback may do: cancel a timer due in the same advance, re-arm
 * itself, free its own memory, arm a timer that is already due (it fires in
 * the next advance, not this one), and not re-enter tw_advance; what it
 * reads of its timer, t->expires.
 */
#include <timerwheel/debug.h>

#include "common.h"

#define TICK 1000000ull /* the default 1 ms */

static struct tw_wheel *wheel;
static uint64_t now;

struct pair {
	struct tw_timer a, b;
	int fired_a, fired_b;
};

static void pair_a(struct tw_timer *t)
{
	struct pair *p = tw_container_of(t, struct pair, a);
	p->fired_a++;
	int was_armed = tw_pending(&p->b);
	assert_int_equal(tw_del(wheel, &p->b), was_armed);
}

static void pair_b(struct tw_timer *t)
{
	struct pair *p = tw_container_of(t, struct pair, b);
	p->fired_b++;
	int was_armed = tw_pending(&p->a);
	assert_int_equal(tw_del(wheel, &p->a), was_armed);
}

/* Two timers in one bucket, each cancelling the other: exactly one fires,
 * whichever the wheel runs first. Also across a cascade, and with the
 * cancelled one due at a later tick of the same advance. */
static void test_cancel_other_in_same_bucket(void **state)
{
	(void)state;
	static const uint64_t offsets[][2] = {
		{ 5 * TICK, 5 * TICK },           /* same level-0 slot */
		{ 70 * TICK, 70 * TICK + 1 },     /* same slot, arrived by cascade */
		{ 3 * TICK, 9000 * TICK },        /* b due later in the same advance */
	};
	for (size_t i = 0; i < 3; i++) {
		assert_int_equal(tw_wheel_create(&wheel, NULL, 0), 0);
		struct pair p = { .fired_a = 0, .fired_b = 0 };
		tw_timer_init(&p.a, pair_a);
		tw_timer_init(&p.b, pair_b);
		tw_add(wheel, &p.a, offsets[i][0]);
		tw_add(wheel, &p.b, offsets[i][1]);
		assert_int_equal(tw_advance(wheel, 10000 * TICK), 1);
		assert_int_equal(p.fired_a + p.fired_b, 1);
		assert_int_equal(tw_count(wheel), 0);
		assert_wheel_sound(wheel);
		tw_wheel_destroy(wheel);
	}
}

struct rearming {
	struct tw_timer timer;
	int fired;
	uint64_t last_fire_now;
};

static void rearm_self(struct tw_timer *t)
{
	struct rearming *r = tw_container_of(t, struct rearming, timer);
	r->fired++;
	r->last_fire_now = now;
	assert_true(t->expires <= now);
	assert_false(tw_pending(t));
	if (r->fired < 4)
		assert_int_equal(tw_mod(wheel, t, now + 5 * TICK), 0);
}

static void test_rearm_self(void **state)
{
	(void)state;
	assert_int_equal(tw_wheel_create(&wheel, NULL, 0), 0);
	struct rearming r = { .fired = 0 };
	tw_timer_init(&r.timer, rearm_self);
	tw_add(wheel, &r.timer, 5 * TICK);
	for (now = 0; now <= 40 * TICK; now += TICK) {
		tw_advance(wheel, now);
		assert_wheel_sound(wheel);
	}
	assert_int_equal(r.fired, 4);
	assert_int_equal(r.last_fire_now, 20 * TICK);
	tw_wheel_destroy(wheel);
}

struct owned {
	struct tw_timer timer;
	char payload[100];
};

static int freed;

static void free_self(struct tw_timer *t)
{
	struct owned *o = tw_container_of(t, struct owned, timer);
	freed++;
	free(o);
}

/* Each callback frees its own struct; ASan must see no use after free. */
static void test_free_self(void **state)
{
	(void)state;
	assert_int_equal(tw_wheel_create(&wheel, NULL, 0), 0);
	freed = 0;
	for (int i = 0; i < 1000; i++) {
		struct owned *o = malloc(sizeof(*o));
		assert_non_null(o);
		tw_timer_init(&o->timer, free_self);
		tw_add(wheel, &o->timer, (uint64_t)(i % 7) * TICK * 100 + 1);
	}
	assert_int_equal(tw_advance(wheel, 1000 * TICK), 1000);
	assert_int_equal(freed, 1000);
	assert_wheel_sound(wheel);
	tw_wheel_destroy(wheel);
}

static struct tw_timer due_now_timer;
static int due_now_fired;
static int arm_due_now_fired;

static void due_now_cb(struct tw_timer *t)
{
	(void)t;
	due_now_fired++;
}

static void arm_due_now(struct tw_timer *t)
{
	(void)t;
	arm_due_now_fired++;
	assert_int_equal(tw_add(wheel, &due_now_timer, now), 0);
	assert_int_equal(tw_next_expiry(wheel), now);
}

/* A callback that re-arms itself for "now" fires once per advance, so a
 * loop that advances cannot livelock. */
static int spin_fired;
static void spin_now(struct tw_timer *t)
{
	spin_fired++;
	assert_int_equal(tw_mod(wheel, t, now), 0);
}

static void test_arm_due_now_fires_next_advance(void **state)
{
	(void)state;
	assert_int_equal(tw_wheel_create(&wheel, NULL, 0), 0);
	struct tw_timer first;
	tw_timer_init(&first, arm_due_now);
	tw_timer_init(&due_now_timer, due_now_cb);
	tw_add(wheel, &first, 2 * TICK);
	now = 3 * TICK;
	assert_int_equal(tw_advance(wheel, now), 1);
	assert_int_equal(arm_due_now_fired, 1);
	assert_int_equal(due_now_fired, 0);
	assert_true(tw_pending(&due_now_timer));
	assert_int_equal(tw_next_expiry(wheel), now);
	assert_wheel_sound(wheel);
	assert_int_equal(tw_advance(wheel, now), 1);
	assert_int_equal(due_now_fired, 1);

	struct tw_timer spin;
	tw_timer_init(&spin, spin_now);
	tw_add(wheel, &spin, now);
	for (int i = 1; i <= 5; i++) {
		assert_int_equal(tw_advance(wheel, now), 1);
		assert_int_equal(spin_fired, i);
	}
	tw_del(wheel, &spin);
	assert_wheel_sound(wheel);
	tw_wheel_destroy(wheel);
}

static int reentry_result;
static void reenter(struct tw_timer *t)
{
	(void)t;
	reentry_result = tw_advance(wheel, now + 100 * TICK);
}

static void test_advance_from_callback_is_busy(void **state)
{
	(void)state;
	assert_int_equal(tw_wheel_create(&wheel, NULL, 0), 0);
	struct tw_timer t;
	tw_timer_init(&t, reenter);
	tw_add(wheel, &t, TICK);
	now = TICK;
	assert_int_equal(tw_advance(wheel, now), 1);
	assert_int_equal(reentry_result, -EBUSY);
	assert_int_equal(tw_now(wheel), TICK);
	assert_wheel_sound(wheel);
	tw_wheel_destroy(wheel);
}

/* Destroying the wheel from its own callback: the timers still armed,
 * also those due in the same advance, go idle at once and never fire; the
 * program may free them at once; the wheel is freed when the callback
 * returns. ASan checks that nothing touches the freed memory. */
static struct tw_timer *victim;
static struct tw_timer later, spare;
static int destroyer_fired, others_fired;

static void other(struct tw_timer *t)
{
	(void)t;
	others_fired++;
}

static void destroyer(struct tw_timer *t)
{
	(void)t;
	destroyer_fired++;
	tw_wheel_destroy(wheel);
	assert_false(tw_pending(victim));
	assert_false(tw_pending(&later));
	free(victim); /* was due in this same advance */
	assert_int_equal(tw_add(wheel, &spare, now + TICK), -EINVAL);
	assert_int_equal(tw_mod(wheel, &spare, now + TICK), -EINVAL);
	assert_int_equal(tw_del(wheel, &later), 0);
	tw_wheel_destroy(wheel); /* twice: ignored */
}

static void test_destroy_from_callback(void **state)
{
	(void)state;
	assert_int_equal(tw_wheel_create(&wheel, NULL, 0), 0);
	struct tw_timer first;
	victim = malloc(sizeof(*victim));
	assert_non_null(victim);
	tw_timer_init(&first, destroyer);
	tw_timer_init(victim, other);
	tw_timer_init(&later, other);
	tw_timer_init(&spare, other);
	tw_add(wheel, &first, TICK);
	tw_add(wheel, victim, 2 * TICK);
	tw_add(wheel, &later, 3600 * 1000 * TICK);
	now = 5 * TICK;
	assert_int_equal(tw_advance(wheel, now), 1);
	assert_int_equal(destroyer_fired, 1);
	assert_int_equal(others_fired, 0);
	assert_false(tw_pending(&later));
	assert_false(tw_pending(&spare));
}

/* Order: timers due in one advance fire in the order of their ticks. */
static uint64_t last_fired_tick;
static int out_of_order;
static void ordered(struct tw_timer *t)
{
	uint64_t tick = test_round_up(t->expires, TICK);
	if (tick < last_fired_tick)
		out_of_order++;
	last_fired_tick = tick;
}

static void test_fire_in_tick_order(void **state)
{
	(void)state;
	uint64_t rng = test_seed();
	assert_int_equal(tw_wheel_create(&wheel, NULL, 0), 0);
	enum { N = 20000 };
	static struct tw_timer timers[N];
	for (int i = 0; i < N; i++) {
		tw_timer_init(&timers[i], ordered);
		tw_add(wheel, &timers[i], 1 + test_rand(&rng) % (3600 * 1000 * TICK));
	}
	last_fired_tick = 0;
	assert_int_equal(tw_advance(wheel, 3600 * 1000 * TICK), N);
	assert_int_equal(out_of_order, 0);
	tw_wheel_destroy(wheel);
}

/* A tick's timers, armed together for one expiry, fire in the order they
 * were armed or in its reverse, whatever level they start on and however
 * the clock gets there (a cascade moves a slot's timers into their tick's
 * list, reversing it): the uv_timer_t layer keeps libuv's start order from
 * this without a sort. */
enum { SAME_TICK = 64 };
static struct tw_timer same_tick[SAME_TICK];
static int fired_order[SAME_TICK], fired_count;
static void record_order(struct tw_timer *t)
{
	fired_order[fired_count++] = (int)(t - same_tick);
}

static void test_tick_in_arm_order(void **state)
{
	(void)state;
	static const uint64_t ticks[] = {3, 100, 5000, 300000, 20000000, 1500000000};
	for (size_t d = 0; d < sizeof(ticks) / sizeof(ticks[0]); d++) {
		for (int jump = 0; jump < 2; jump++) {
			assert_int_equal(tw_wheel_create(&wheel, NULL, 0), 0);
			now = 123 * TICK + 456;
			assert_int_equal(tw_advance(wheel, now), 0);
			uint64_t expires = now + ticks[d] * TICK;
			for (int i = 0; i < SAME_TICK; i++) {
				tw_timer_init(&same_tick[i], record_order);
				assert_int_equal(tw_add(wheel, &same_tick[i], expires), 0);
			}
			fired_count = 0;
			/* by seven steps or so, each a whole number of ticks and 13 ns, so
			 * that the clock passes the cascades on the way; or in one jump */
			uint64_t due = test_round_up(expires, TICK);
			uint64_t step = jump ? due : (ticks[d] / 7 + 1) * TICK + 13;
			while (now < due) {
				now = now + step < due ? now + step : due;
				tw_advance(wheel, now);
			}
			assert_int_equal(fired_count, SAME_TICK);
			int forward = fired_order[0] == 0;
			for (int i = 0; i < SAME_TICK; i++)
				assert_int_equal(fired_order[i], forward ? i : SAME_TICK - 1 - i);
			tw_wheel_destroy(wheel);
		}
	}
}

/* tw_next_expiry() from a callback while other timers of the same advance
 * are still to run: they are due, so it says tw_now(), as it does between
 * advances when a timer is due. */
static uint64_t seen_next;
static size_t seen_count;
static int seen_calls;
static void see_next(struct tw_timer *t)
{
	(void)t;
	if (seen_calls++ == 0) {
		seen_next = tw_next_expiry(wheel);
		seen_count = tw_count(wheel);
	}
}

static void test_next_expiry_in_callback(void **state)
{
	(void)state;
	assert_int_equal(tw_wheel_create(&wheel, NULL, 0), 0);
	struct tw_timer a, b, c;
	tw_timer_init(&a, see_next);
	tw_timer_init(&b, see_next);
	tw_timer_init(&c, see_next);
	assert_int_equal(tw_add(wheel, &a, 1 * TICK), 0);
	assert_int_equal(tw_add(wheel, &b, 2 * TICK), 0);
	assert_int_equal(tw_add(wheel, &c, 500 * TICK), 0);
	seen_calls = 0;
	assert_int_equal(tw_advance(wheel, 3 * TICK), 2);
	assert_int_equal(seen_count, 2);
	assert_int_equal(seen_next, 3 * TICK);
	assert_int_equal(tw_next_expiry(wheel), 500 * TICK);
	assert_wheel_sound(wheel);
	tw_wheel_destroy(wheel);
}

/* What a callback reads, as the README says: t->expires, the expiry the
 * timer was last armed for (re-armed later before it fired: the later one;
 * with slack: the window's start, not the tick picked), tw_now() the
 * advance's now; a periodic timer's t->expires is already its next expiry,
 * one period on. */
struct seen {
	struct tw_timer timer;
	uint64_t expires, wheel_now;
	int fired;
};

static void record_seen(struct tw_timer *t)
{
	struct seen *s = tw_container_of(t, struct seen, timer);
	s->expires = t->expires;
	s->wheel_now = tw_now(wheel);
	s->fired++;
}

static uint64_t periodic_seen;

static void record_periodic(struct tw_timer *t)
{
	periodic_seen = t->expires;
}

static void test_expires_in_callback(void **state)
{
	(void)state;
	struct seen exact, moved, windowed;
	struct tw_periodic p;
	uint64_t advance_to = 40 * TICK + 123;
	assert_int_equal(tw_wheel_create(&wheel, NULL, 0), 0);
	memset(&exact, 0, sizeof(exact));
	memset(&moved, 0, sizeof(moved));
	memset(&windowed, 0, sizeof(windowed));
	tw_timer_init(&exact.timer, record_seen);
	tw_timer_init(&moved.timer, record_seen);
	tw_timer_init(&windowed.timer, record_seen);
	assert_int_equal(tw_add(wheel, &exact.timer, 5 * TICK + 7), 0);
	assert_int_equal(tw_add(wheel, &moved.timer, 3 * TICK), 0);
	unsigned level, slot, level_after, slot_after;
	assert_int_equal(tw_timer_bucket(wheel, &moved.timer, &level, &slot), 0);
	assert_int_equal(tw_mod(wheel, &moved.timer, 20 * TICK + 1), 1); /* later: stored in place */
	assert_int_equal(tw_timer_bucket(wheel, &moved.timer, &level_after, &slot_after), 0);
	assert_int_equal(level_after, level);
	assert_int_equal(slot_after, slot);
	assert_int_equal(tw_add_range(wheel, &windowed.timer, 9 * TICK + 5, 10 * TICK), 0);
	assert_int_equal(tw_advance(wheel, advance_to), 3);
	assert_int_equal(exact.expires, 5 * TICK + 7);
	assert_int_equal(moved.expires, 20 * TICK + 1);
	assert_int_equal(windowed.expires, 9 * TICK + 5);
	assert_int_equal(exact.wheel_now, advance_to);
	assert_int_equal(moved.wheel_now, advance_to);
	assert_int_equal(windowed.wheel_now, advance_to);
	/* Periodic, every 10 ms from 50 ms: at 50.5 ms it reads 60 ms. */
	assert_int_equal(tw_periodic_init(&p, record_periodic, 10 * TICK), 0);
	assert_int_equal(tw_add(wheel, &p.timer, 50 * TICK), 0);
	assert_int_equal(tw_advance(wheel, 50 * TICK + TICK / 2), 1);
	assert_int_equal(periodic_seen, 60 * TICK);
	tw_wheel_destroy(wheel);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_cancel_other_in_same_bucket),
		cmocka_unit_test(test_rearm_self),
		cmocka_unit_test(test_free_self),
		cmocka_unit_test(test_arm_due_now_fires_next_advance),
		cmocka_unit_test(test_advance_from_callback_is_busy),
		cmocka_unit_test(test_destroy_from_callback),
		cmocka_unit_test(test_fire_in_tick_order),
		cmocka_unit_test(test_tick_in_arm_order),
		cmocka_unit_test(test_next_expiry_in_callback),
		cmocka_unit_test(test_expires_in_callback),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
