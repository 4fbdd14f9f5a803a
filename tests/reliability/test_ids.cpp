// SPDX-License-Identifier: MIT
//
// No two live wheels share an id, however many wheels the process has
// created. Every armed timer carries its wheel's id, so a shared id would
// let tw_mod()/tw_del() on one wheel unlink a timer of the other and
// corrupt both. Crossing the 32-bit wrap by creating 2^32 wheels takes
// minutes (the soak suite's wheel_ids_wrap does it); here the id counter is
// moved to the interesting places instead. Built against the release core
// and against the debug-checks core.
#include <timerwheel/debug.h>

#include "../../src/ids.hpp"
#include "../../src/wheel.hpp"
#include "../common.h"

#define MS 1000000ull

static void nop(tw_timer *t) { (void)t; }

// A wheel holding one armed timer, so that a collision would show.
struct held {
	tw_wheel *w;
	tw_timer t;
};

static void make_held(held *h)
{
	assert_int_equal(tw_wheel_create(&h->w, nullptr, 0), 0);
	tw_timer_init(&h->t, nop);
	assert_int_equal(tw_add(h->w, &h->t, 5 * MS), 0);
}

// The new wheel must refuse the other wheel's timer and leave both sound.
static void assert_strangers(tw_wheel *fresh, held *h)
{
	assert_int_not_equal(fresh->owner_id(), h->w->owner_id());
	assert_int_equal(tw_mod(fresh, &h->t, 7 * MS), -EINVAL);
	assert_int_equal(tw_del(fresh, &h->t), -EINVAL);
	unsigned level, slot;
	assert_int_equal(tw_timer_bucket(fresh, &h->t, &level, &slot), -EINVAL);
	assert_int_equal(tw_count(fresh), 0);
	assert_int_equal(tw_count(h->w), 1);
	assert_true(tw_pending(&h->t));
	assert_int_equal(tw_check(fresh), 0);
	assert_int_equal(tw_check(h->w), 0);
}

// The counter comes round to a live wheel's id: the new wheel skips it.
static void counter_reaches_a_live_id(void **state)
{
	(void)state;
	held a;
	make_held(&a);
	tw::ids::set_last(a.w->owner_id() - 1);
	tw_wheel *b;
	assert_int_equal(tw_wheel_create(&b, nullptr, 0), 0);
	assert_strangers(b, &a);
	assert_int_equal(b->owner_id(), a.w->owner_id() + 1);
	tw_wheel_destroy(b);
	tw_wheel_destroy(a.w);
}

// The wrap itself: UINT32_MAX is used, 0 never is (0 marks idle timers),
// and the live wheels at 1 and 2 are skipped.
static void counter_wraps(void **state)
{
	(void)state;
	tw::ids::set_last(0);
	held one, two;
	make_held(&one);
	make_held(&two);
	assert_int_equal(one.w->owner_id(), 1);
	assert_int_equal(two.w->owner_id(), 2);
	tw::ids::set_last(UINT32_MAX - 1);
	tw_wheel *top, *after;
	assert_int_equal(tw_wheel_create(&top, nullptr, 0), 0);
	assert_int_equal(top->owner_id(), UINT32_MAX);
	assert_int_equal(tw_wheel_create(&after, nullptr, 0), 0);
	assert_int_equal(after->owner_id(), 3);
	assert_strangers(after, &one);
	assert_strangers(after, &two);
	assert_strangers(top, &one);
	tw_wheel_destroy(after);
	tw_wheel_destroy(top);
	tw_wheel_destroy(two.w);
	tw_wheel_destroy(one.w);
}

// A run of live ids is skipped whole; a released id is handed out again.
static void run_of_live_ids(void **state)
{
	(void)state;
	enum { N = 100 };
	held h[N];
	uint32_t base = 0x80000000u;
	tw::ids::set_last(base);
	for (int i = 0; i < N; i++)
		make_held(&h[i]);
	tw::ids::set_last(base);
	tw_wheel *w;
	assert_int_equal(tw_wheel_create(&w, nullptr, 0), 0);
	assert_int_equal(w->owner_id(), base + N + 1);
	for (int i = 0; i < N; i++)
		assert_strangers(w, &h[i]);
	tw_wheel_destroy(w);

	tw_wheel_destroy(h[N / 2].w); // its id is free again
	tw::ids::set_last(base);
	assert_int_equal(tw_wheel_create(&w, nullptr, 0), 0);
	assert_int_equal(w->owner_id(), base + N / 2 + 1);
	tw_wheel_destroy(w);
	for (int i = 0; i < N; i++)
		if (i != N / 2)
			tw_wheel_destroy(h[i].w);
}

// A destroyed wheel that a notify hook still holds keeps its id until the
// hook lets go: its memory, and so its id, are still in use.
static void held_by_hook_keeps_its_id(void **state)
{
	(void)state;
	tw_wheel *gone, *w;
	assert_int_equal(tw_wheel_create(&gone, nullptr, 0), 0);
	assert_int_equal(tw_set_notify(gone, test_hold_hook, nullptr), 0);
	tw_wheel_destroy(gone);
	uint32_t id = gone->owner_id();
	tw::ids::set_last(id - 1);
	assert_int_equal(tw_wheel_create(&w, nullptr, 0), 0);
	assert_int_not_equal(w->owner_id(), id);
	assert_int_equal(tw_set_notify(gone, nullptr, nullptr), 0);
	tw_wheel_destroy(w);
}

int main()
{
	const CMUnitTest tests[] = {
		cmocka_unit_test(counter_reaches_a_live_id),
		cmocka_unit_test(counter_wraps),
		cmocka_unit_test(run_of_live_ids),
		cmocka_unit_test(held_by_hook_keeps_its_id),
	};
	return cmocka_run_group_tests(tests, nullptr, nullptr);
}
