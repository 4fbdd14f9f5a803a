/* SPDX-License-Identifier: MIT */
/*
 * A wake-up budget keeps the loop responsive: 10^6 timers come due at
 * once on a real libuv loop while two UDP sockets on 127.0.0.1 play
 * ping-pong through it. With tw_set_wake_budget(), the loop serves the
 * sockets between batches; without, not once until every callback has run.
 * Both runs must fire every timer exactly once and none early (by
 * CLOCK_MONOTONIC), and with the budget the socket must be served while
 * timers are still due. The longest gap between two turns of service
 * (a round trip, or the first and last firing) is printed for both, not
 * asserted: it is a time, and the machine may be loaded.
 */
#define _POSIX_C_SOURCE 200809L

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <limits.h>
#include <string.h>

#include <timerwheel/uv.h>
#include <timerwheel/uv_timer.h>
/* tw_uv_walk() without the port's libuv names: this file uses libuv's. */
#define TW__UV_PORT_IMPL
#include <timerwheel/uv_port.h>

#include "uv_test_util.h"

#define N_TIMERS 1000000
#define BUDGET 10000

struct probe {
	struct tw_timer t;
	uint8_t fired;
};

static struct {
	uv_loop_t loop;
	struct tw_uv h;
	struct probe *p;
	size_t fired, early;
	uint64_t first_fire, last_fire;
	uv_udp_t a, b;
	struct sockaddr_in addr_a, addr_b;
	char buf[16];
	uint64_t last_event;  /* the last firing or round trip, while timers fire */
	uint64_t longest_gap;
	size_t hops_while_due; /* round trips between the first and last firing */
	bool done;
} s;

/* The gap since the last event, while the timers fire. */
static void event(uint64_t now)
{
	if (s.last_event && now - s.last_event > s.longest_gap)
		s.longest_gap = now - s.last_event;
	s.last_event = now;
}

static void on_probe(struct tw_timer *t)
{
	struct probe *p = tw_container_of(t, struct probe, t);
	uint64_t now = tw_test_mono_ns();

	p->fired++;
	s.early += now < t->expires;
	if (!s.fired++) {
		s.first_fire = now;
		event(now);
	}
	s.last_fire = now;
	if (s.fired == N_TIMERS) {
		event(now);
		s.done = true;
	}
}

static void on_alloc(uv_handle_t *h, size_t size, uv_buf_t *buf)
{
	(void)h;
	(void)size;
	*buf = uv_buf_init(s.buf, sizeof(s.buf));
}

static void send_to(uv_udp_t *from, const struct sockaddr_in *to)
{
	uv_buf_t b = uv_buf_init("p", 1);

	assert_int_equal(uv_udp_try_send(from, &b, 1, (const struct sockaddr *)to), 1);
}

/* Each datagram is answered from the other socket: one round trip per
 * turn of the loop that polls. */
static void on_recv(uv_udp_t *u, ssize_t n, const uv_buf_t *buf, const struct sockaddr *from, unsigned flags)
{
	(void)buf;
	(void)from;
	(void)flags;
	if (n <= 0)
		return;
	if (s.first_fire && !s.done) {
		s.hops_while_due++;
		event(tw_test_mono_ns());
	}
	if (s.done) {
		uv_udp_recv_stop(&s.a);
		uv_udp_recv_stop(&s.b);
		return;
	}
	if (u == &s.a)
		send_to(&s.a, &s.addr_b);
	else
		send_to(&s.b, &s.addr_a);
}

static void bind_udp(uv_udp_t *u, struct sockaddr_in *addr)
{
	int len = sizeof(*addr);

	assert_int_equal(uv_udp_init(&s.loop, u), 0);
	assert_int_equal(uv_ip4_addr("127.0.0.1", 0, addr), 0);
	assert_int_equal(uv_udp_bind(u, (const struct sockaddr *)addr, 0), 0);
	assert_int_equal(uv_udp_getsockname(u, (struct sockaddr *)addr, &len), 0);
	assert_int_equal(uv_udp_recv_start(u, on_alloc, on_recv), 0);
}

static void on_closed(struct tw_uv *h)
{
	(void)h;
}

static void run(unsigned budget, const char *what)
{
	memset(&s, 0, sizeof(s));
	s.p = calloc(N_TIMERS, sizeof(*s.p));
	assert_non_null(s.p);
	assert_int_equal(uv_loop_init(&s.loop), 0);
	assert_int_equal(tw_test_uv_open(&s.loop, &s.h, NULL, 0), 0);
	struct tw_wheel *w = tw_uv_wheel(&s.h);
	if (budget != UINT_MAX)
		assert_int_equal(tw_set_wake_budget(w, budget), 0);
	assert_int_equal(tw_wake_budget(w), budget);
	bind_udp(&s.a, &s.addr_a);
	bind_udp(&s.b, &s.addr_b);

	/* All due in one tick, 50 ms from now: arming takes a while. */
	uint64_t due = tw_uv_now() + 50000000ull;
	for (size_t i = 0; i < N_TIMERS; i++) {
		tw_timer_init(&s.p[i].t, on_probe);
		assert_int_equal(tw_add(w, &s.p[i].t, due), 0);
	}
	send_to(&s.a, &s.addr_b);
	assert_int_equal(uv_run(&s.loop, UV_RUN_DEFAULT), 0);

	size_t not_once = 0;
	for (size_t i = 0; i < N_TIMERS; i++)
		not_once += s.p[i].fired != 1;
	printf("%s: %zu timers in %.1f ms, %zu round trips on the socket meanwhile, longest gap %.3f ms\n",
	       what, s.fired, (double)(s.last_fire - s.first_fire) / 1e6, s.hops_while_due,
	       (double)s.longest_gap / 1e6);
	fflush(stdout);
	assert_int_equal(s.fired, N_TIMERS);
	assert_int_equal(not_once, 0);
	assert_int_equal(s.early, 0);

	uv_close((uv_handle_t *)&s.a, NULL);
	uv_close((uv_handle_t *)&s.b, NULL);
	tw_test_uv_close(&s.h, on_closed);
	assert_int_equal(uv_run(&s.loop, UV_RUN_DEFAULT), 0);
	assert_int_equal(uv_loop_close(&s.loop), 0);
	free(s.p);
}

static void test_budget(void **state)
{
	(void)state;
	run(BUDGET, "wake budget 10000");
	/* A batch at a time: the socket is served between them. */
	assert_true(s.hops_while_due >= N_TIMERS / BUDGET / 2);
}

static void test_no_budget(void **state)
{
	(void)state;
	run(UINT_MAX, "no budget");
	/* One advance fires them all: nothing else runs meanwhile. */
	assert_int_equal(s.hops_while_due, 0);
}

/* The uv_timer_t layer keeps unreferenced timers on a wheel of their own,
 * advanced by the same wake-up: the budget covers both wheels. Half of 64
 * timers due at once are unreferenced; the budget, 7, divides neither
 * half, so a wake-up that gave each wheel the whole budget, or the second
 * wheel the first's leftover wrongly, would fire more than 7. A
 * referenced keeper holds the loop until all 64 have fired. */
enum { SHARED_TIMERS = 64, SHARED_BUDGET = 7 };
static struct tw_uv_timer shared[SHARED_TIMERS], keeper;
static uint64_t shared_wakeup;
static unsigned shared_in_wakeup, shared_most, shared_fired, keeper_runs;

static void shared_cb(struct tw_uv_timer *t)
{
	struct tw_uv_stats st;

	assert_int_equal(tw_uv_get_stats(t->tw__uv, &st), 0);
	if (st.wakeups != shared_wakeup) {
		shared_wakeup = st.wakeups;
		shared_in_wakeup = 0;
	}
	if (++shared_in_wakeup > shared_most)
		shared_most = shared_in_wakeup;
	shared_fired++;
	tw_uv_timer_close(t, NULL);
}

/* Until every shared timer has fired, for at most 10 s: a loaded machine
 * may take its time, a lost timer never comes. */
static void keeper_cb(struct tw_uv_timer *t)
{
	if (shared_fired < SHARED_TIMERS && ++keeper_runs < 1000)
		assert_int_equal(tw_uv_timer_start(t, keeper_cb, 10, 0), 0);
	else
		tw_uv_timer_close(t, NULL);
}

static void test_budget_shared_by_unreferenced(void **state)
{
	uv_loop_t loop;

	(void)state;
	assert_int_equal(uv_loop_init(&loop), 0);
	for (int i = 0; i < SHARED_TIMERS; i++) {
		assert_int_equal(tw_uv_timer_init(&loop, &shared[i]), 0);
		assert_int_equal(tw_uv_timer_start(&shared[i], shared_cb, 1, 0), 0);
		if (i % 2)
			tw_uv_timer_unref(&shared[i]);
	}
	assert_int_equal(tw_uv_timer_init(&loop, &keeper), 0);
	assert_int_equal(tw_uv_timer_start(&keeper, keeper_cb, 10, 0), 0);
	assert_int_equal(tw_set_wake_budget(tw_uv_wheel(shared[0].tw__uv), SHARED_BUDGET), 0);
	assert_int_equal(uv_run(&loop, UV_RUN_DEFAULT), 0);
	printf("# %u fired, at most %u in one wake-up (budget %d)\n", shared_fired, shared_most, SHARED_BUDGET);
	assert_int_equal(shared_fired, SHARED_TIMERS);
	assert_int_equal(shared_most, SHARED_BUDGET);
	assert_int_equal(uv_loop_close(&loop), 0);
}

/* Unreferenced repeating timers as many as the budget, due together with
 * a referenced one: the wake-ups share the budget between the wheels, and
 * the repeats are re-armed from the wake-up's time, so the referenced
 * timer fires in time and the repeats fire once per period, not on every
 * loop turn. A native timer ends the run after 5 s if it does not. */
enum { SPIN_REPEATS = 4, SPIN_PERIOD = 20, SPIN_REF_AT = 100 };
static struct tw_uv_timer spin_weak[SPIN_REPEATS], spin_ref;
static uv_timer_t spin_guard;
static unsigned spin_weak_fires, spin_ref_fired;
static uint64_t spin_t0, spin_ref_ms;

static void spin_close_all(void)
{
	for (int i = 0; i < SPIN_REPEATS; i++)
		tw_uv_timer_close(&spin_weak[i], NULL);
	tw_uv_timer_close(&spin_ref, NULL);
	uv_close((uv_handle_t *)&spin_guard, NULL);
}

static void spin_weak_cb(struct tw_uv_timer *t)
{
	(void)t;
	/* A spin never returns to the loop, and the guard never runs: stop
	 * it here, far above what 5 s of periods allow. */
	if (++spin_weak_fires > 100000)
		fail_msg("the repeats fire on every turn: %u firings", spin_weak_fires);
}

static void spin_ref_cb(struct tw_uv_timer *t)
{
	(void)t;
	spin_ref_fired++;
	spin_ref_ms = (tw_test_mono_ns() - spin_t0) / 1000000;
	spin_close_all();
}

static void spin_guard_cb(uv_timer_t *t)
{
	(void)t;
	spin_close_all();
}

static void test_budget_spent_by_unreferenced_repeats(void **state)
{
	uv_loop_t loop;

	(void)state;
	assert_int_equal(uv_loop_init(&loop), 0);
	spin_t0 = tw_test_mono_ns();
	for (int i = 0; i < SPIN_REPEATS; i++) {
		assert_int_equal(tw_uv_timer_init(&loop, &spin_weak[i]), 0);
		assert_int_equal(tw_uv_timer_start(&spin_weak[i], spin_weak_cb, SPIN_PERIOD, SPIN_PERIOD), 0);
		tw_uv_timer_unref(&spin_weak[i]);
	}
	assert_int_equal(tw_uv_timer_init(&loop, &spin_ref), 0);
	assert_int_equal(tw_uv_timer_start(&spin_ref, spin_ref_cb, SPIN_REF_AT, 0), 0);
	assert_int_equal(uv_timer_init(&loop, &spin_guard), 0);
	assert_int_equal(uv_timer_start(&spin_guard, spin_guard_cb, 5000, 0), 0);
	assert_int_equal(tw_set_wake_budget(tw_uv_wheel(spin_ref.tw__uv), SPIN_REPEATS), 0);
	assert_int_equal(uv_run(&loop, UV_RUN_DEFAULT), 0);
	printf("# referenced timer fired %u time(s), at %llu ms; repeats fired %u times\n", spin_ref_fired,
	       (unsigned long long)spin_ref_ms, spin_weak_fires);
	assert_int_equal(spin_ref_fired, 1);
	assert_true(spin_ref_ms >= SPIN_REF_AT);
	/* Each repeat came due (its first expiry, at one period, is before the
	 * referenced timer's): whichever wheel went first, all fired. */
	assert_true(spin_weak_fires >= SPIN_REPEATS);
	/* One firing per period at the most: SPIN_REF_AT / SPIN_PERIOD each,
	 * and however many periods a loaded machine made the run last. */
	assert_true(spin_weak_fires <= SPIN_REPEATS * (spin_ref_ms / SPIN_PERIOD));
	assert_int_equal(uv_loop_close(&loop), 0);
}

/* A budget keeps the layer's order: 60 timers due at once (a timeout of
 * 0, armed at the wheel's now: one instant for all, so the count of
 * wake-ups is exact), every third unreferenced (the other wheel), under
 * a budget of 5, fire 5 per wake-up over 12 wake-ups, all in start
 * order. */
enum { ORDER_TIMERS = 60, ORDER_BUDGET = 5 };
static struct tw_uv_timer order_t[ORDER_TIMERS];
static int order_fired[ORDER_TIMERS], order_n;
static unsigned order_most, order_in_wakeup, order_wakeups;
static uint64_t order_wakeup;

static void order_cb(struct tw_uv_timer *t)
{
	struct tw_uv_stats st;

	assert_int_equal(tw_uv_get_stats(t->data, &st), 0);
	if (st.wakeups != order_wakeup) {
		order_wakeup = st.wakeups;
		order_in_wakeup = 0;
		order_wakeups++;
	}
	if (++order_in_wakeup > order_most)
		order_most = order_in_wakeup;
	order_fired[order_n++] = (int)(t - order_t);
}

static void test_budget_keeps_start_order(void **state)
{
	uv_loop_t loop;
	struct tw_uv backend;
	int inversions = 0;

	(void)state;
	assert_int_equal(uv_loop_init(&loop), 0);
	assert_int_equal(tw_test_uv_open(&loop, &backend, NULL, 0), 0);
	assert_int_equal(tw_set_wake_budget(tw_uv_wheel(&backend), ORDER_BUDGET), 0);
	for (int i = 0; i < ORDER_TIMERS; i++) {
		assert_int_equal(tw_uv_timer_init_on(&backend, &order_t[i]), 0);
		order_t[i].data = &backend;
	}
	/* Started in a shuffled order of the array: the order is the start's. */
	for (int k = 0; k < ORDER_TIMERS; k++) {
		int i = (k * 7) % ORDER_TIMERS;

		assert_int_equal(tw_uv_timer_start(&order_t[i], order_cb, 0, 0), 0);
		if (k % 3 == 2)
			tw_uv_timer_unref(&order_t[i]);
	}
	assert_int_equal(uv_run(&loop, UV_RUN_DEFAULT), 0);
	for (int k = 0; k < order_n; k++)
		if (order_fired[k] != (k * 7) % ORDER_TIMERS)
			inversions++;
	printf("# %d fired over %u wake-ups, at most %u in one (budget %d), %d out of start order\n",
	       order_n, order_wakeups, order_most, ORDER_BUDGET, inversions);
	assert_int_equal(order_n, ORDER_TIMERS);
	assert_int_equal(order_most, ORDER_BUDGET);
	assert_int_equal(order_wakeups, ORDER_TIMERS / ORDER_BUDGET);
	assert_int_equal(inversions, 0);
	for (int i = 0; i < ORDER_TIMERS; i++)
		tw_uv_timer_close(&order_t[i], NULL);
	tw_test_uv_close(&backend, NULL);
	assert_int_equal(uv_run(&loop, UV_RUN_DEFAULT), 0);
	assert_int_equal(uv_loop_close(&loop), 0);
}

/* A budget spent leaves the backend's own wake-up timer on one of the
 * loop wheel's wheels until the next wake-up: a walk between the two must
 * still show the program's timers only. Budget 2 over six timers due at
 * once, half of them unreferenced: three wake-ups, the backend's timer
 * waiting between them. A check handle walks after every loop turn, and
 * the test once more after the run. The wake-ups are counted as the
 * start-order case counts them, and the walks made before each: a budget
 * ignored fires all six in one, and a walk that never came between two
 * wake-ups never saw the backend's timer waiting. */
enum { WALK_TIMERS = 6, WALK_BUDGET = 2 };
static struct tw_uv_timer walk_t[WALK_TIMERS];
static uv_check_t walk_check;
static unsigned walk_fired, walk_walks, walk_seen;
static unsigned walk_wakeups, walk_walked_between, walk_walks_at_wakeup;
static uint64_t walk_wakeup;

static void walk_handle(uv_handle_t *h, void *arg)
{
	(void)arg;
	if (h == (uv_handle_t *)&walk_check)
		return;
	assert_int_equal(h->type, TW_UV_TIMER);
	assert_true((struct tw_uv_timer *)h >= walk_t && (struct tw_uv_timer *)h < walk_t + WALK_TIMERS);
	walk_seen++;
}

static void walk_check_cb(uv_check_t *c)
{
	(void)c;
	walk_walks++;
	tw_uv_walk(c->loop, walk_handle, NULL);
}

static void walk_cb(struct tw_uv_timer *t)
{
	struct tw_uv_stats st;

	assert_int_equal(tw_uv_get_stats(t->tw__uv, &st), 0);
	if (st.wakeups != walk_wakeup) {
		walk_wakeup = st.wakeups;
		if (walk_wakeups++ && walk_walks > walk_walks_at_wakeup)
			walk_walked_between++;
		walk_walks_at_wakeup = walk_walks;
	}
	walk_fired++;
}

static void test_budget_walk_shows_timers_only(void **state)
{
	uv_loop_t loop;

	(void)state;
	assert_int_equal(uv_loop_init(&loop), 0);
	for (int i = 0; i < WALK_TIMERS; i++) {
		assert_int_equal(tw_uv_timer_init(&loop, &walk_t[i]), 0);
		assert_int_equal(tw_uv_timer_start(&walk_t[i], walk_cb, 0, 0), 0);
		if (i >= WALK_TIMERS / 2)
			tw_uv_timer_unref(&walk_t[i]);
	}
	assert_int_equal(tw_set_wake_budget(tw_uv_wheel(walk_t[0].tw__uv), WALK_BUDGET), 0);
	assert_int_equal(uv_check_init(&loop, &walk_check), 0);
	assert_int_equal(uv_check_start(&walk_check, walk_check_cb), 0);
	uv_unref((uv_handle_t *)&walk_check);
	assert_int_equal(uv_run(&loop, UV_RUN_DEFAULT), 0);
	walk_check_cb(&walk_check);
	printf("# %u fired over %u wake-ups (budget %d), %u walks, %u of the %u gaps between wake-ups walked, "
	       "%u timers seen\n",
	       walk_fired, walk_wakeups, WALK_BUDGET, walk_walks, walk_walked_between,
	       walk_wakeups ? walk_wakeups - 1 : 0, walk_seen);
	assert_int_equal(walk_fired, WALK_TIMERS);
	assert_int_equal(walk_wakeups, WALK_TIMERS / WALK_BUDGET);
	/* libuv's turn runs its timers, then its check handles: a walk ends
	 * each wake-up's turn, and the test's own ends the run. A turn in
	 * which nothing fires walks too, so that is the least, not the
	 * count. */
	assert_int_equal(walk_walked_between, WALK_TIMERS / WALK_BUDGET - 1);
	assert_true(walk_walks >= WALK_TIMERS / WALK_BUDGET + 1);
	assert_int_equal(walk_seen, walk_walks * WALK_TIMERS);
	for (int i = 0; i < WALK_TIMERS; i++)
		tw_uv_timer_close(&walk_t[i], NULL);
	uv_close((uv_handle_t *)&walk_check, NULL);
	assert_int_equal(uv_run(&loop, UV_RUN_DEFAULT), 0);
	assert_int_equal(uv_loop_close(&loop), 0);
}

/* libuv runs every timer due in a turn before uv_run() looks at the
 * loop's liveness again, referenced or not. Five referenced timers
 * started before five unreferenced ones (unref after start: moved to the
 * weak wheel as they were armed), all due at once, must all run before
 * uv_run() returns, as the same program's native uv_timer_t run runs all
 * ten: without a budget, and under a budget of 5, where the first
 * wake-up runs the referenced five and the unreferenced rest are left. */
enum { LEFT_TIMERS = 10, LEFT_BUDGET = 5 };
static unsigned left_fired;

static void left_native_cb(uv_timer_t *t)
{
	(void)t;
	left_fired++;
}

static void left_cb(struct tw_uv_timer *t)
{
	(void)t;
	left_fired++;
}

static unsigned left_native(void)
{
	uv_loop_t loop;
	uv_timer_t t[LEFT_TIMERS];

	left_fired = 0;
	assert_int_equal(uv_loop_init(&loop), 0);
	for (int i = 0; i < LEFT_TIMERS; i++) {
		assert_int_equal(uv_timer_init(&loop, &t[i]), 0);
		assert_int_equal(uv_timer_start(&t[i], left_native_cb, 0, 0), 0);
		if (i >= LEFT_TIMERS / 2)
			uv_unref((uv_handle_t *)&t[i]);
	}
	assert_int_equal(uv_run(&loop, UV_RUN_DEFAULT), 0);
	for (int i = 0; i < LEFT_TIMERS; i++)
		uv_close((uv_handle_t *)&t[i], NULL);
	assert_int_equal(uv_run(&loop, UV_RUN_DEFAULT), 0);
	assert_int_equal(uv_loop_close(&loop), 0);
	return left_fired;
}

static unsigned left_layer(unsigned budget)
{
	uv_loop_t loop;
	struct tw_uv_timer t[LEFT_TIMERS];

	left_fired = 0;
	assert_int_equal(uv_loop_init(&loop), 0);
	for (int i = 0; i < LEFT_TIMERS; i++) {
		assert_int_equal(tw_uv_timer_init(&loop, &t[i]), 0);
		assert_int_equal(tw_uv_timer_start(&t[i], left_cb, 0, 0), 0);
		if (i >= LEFT_TIMERS / 2)
			tw_uv_timer_unref(&t[i]);
	}
	assert_int_equal(tw_set_wake_budget(tw_uv_wheel(t[0].tw__uv), budget), 0);
	assert_int_equal(uv_run(&loop, UV_RUN_DEFAULT), 0);
	for (int i = 0; i < LEFT_TIMERS; i++)
		tw_uv_timer_close(&t[i], NULL);
	assert_int_equal(uv_run(&loop, UV_RUN_DEFAULT), 0);
	assert_int_equal(uv_loop_close(&loop), 0);
	return left_fired;
}

static void test_budget_leftover_unreferenced_run(void **state)
{
	unsigned native, unbudgeted, budgeted;

	(void)state;
	native = left_native();
	unbudgeted = left_layer(UINT_MAX);
	budgeted = left_layer(LEFT_BUDGET);
	printf("# before uv_run() returned: native %u fired, layer %u, layer under a budget of %d %u\n",
	       native, unbudgeted, LEFT_BUDGET, budgeted);
	assert_int_equal(native, LEFT_TIMERS);
	assert_int_equal(unbudgeted, native);
	assert_int_equal(budgeted, native);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_budget),
		cmocka_unit_test(test_no_budget),
		cmocka_unit_test(test_budget_shared_by_unreferenced),
		cmocka_unit_test(test_budget_keeps_start_order),
		cmocka_unit_test(test_budget_spent_by_unreferenced_repeats),
		cmocka_unit_test(test_budget_walk_shows_timers_only),
		cmocka_unit_test(test_budget_leftover_unreferenced_run),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
