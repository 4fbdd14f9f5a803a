/* SPDX-License-Identifier: MIT */
/*
 * The order re-check scenario on timerwheel.
 *
 * The wheel never reads a clock, so simulating one is just a matter of
 * choosing `now`: the burst advances it one millisecond at a time, then the
 * loop jumps straight to tw_next_expiry() until every order is re-checked.
 * A real server would sleep until that moment instead (see hello.c).
 *
 * With a slack (--slack-ms), each re-check may come up to that long after
 * its due time: the wheel then serves many orders per wake-up and moves
 * each timer fewer times (placements).
 */
#include <errno.h>
#include <stdlib.h>

#include <timerwheel.h>

#include "orders.h"

struct order {
	struct tw_timer timer; /* 40 bytes: the whole cost of the timer */
	uint64_t due_ms;
	struct orders_draw d;
	uint8_t rechecks;
};

/* The callback gets only the timer; the run it belongs to is here. */
static struct {
	struct tw_wheel *w;
	struct orders_shop shop;
	struct orders_result *res;
} run;

static void recheck(struct tw_timer *t)
{
	struct order *o = tw_container_of(t, struct order, timer);

	orders_recheck(&run.shop, run.res, &o->d, tw_now(run.w) / ORDERS_MS, o->due_ms, &o->rechecks);
}

int orders_run_wheel(const struct orders_opts *opt, struct orders_result *res)
{
	uint32_t rng = opt->seed;
	uint64_t now_ms = ORDERS_T0_MS;
	struct order *orders;
	long rss0, rss1;
	uint64_t t0, t1, t2;
	int err;

	*res = (struct orders_result){
		.engine = "timerwheel",
		.orders = opt->count,
		.order_size = sizeof(struct order),
		.timer_size = sizeof(struct tw_timer),
	};
	run.res = res;
	orders_shop_init(&run.shop);
	err = tw_wheel_create(&run.w, NULL, now_ms * ORDERS_MS);
	if (err < 0)
		return err;

	rss0 = orders_rss_bytes();
	t0 = orders_wall_ns();
	/* One array rather than a malloc per order, in both drivers alike. */
	orders = calloc(opt->count ? opt->count : 1, sizeof(*orders));
	if (!orders) {
		tw_wheel_destroy(run.w);
		return -ENOMEM;
	}
	for (uint64_t i = 0; i < opt->count; i++) {
		struct order *o = &orders[i];
		uint64_t at_ms = ORDERS_T0_MS + i * opt->burst_ms / opt->count;

		if (at_ms != now_ms) {
			now_ms = at_ms;
			tw_advance(run.w, now_ms * ORDERS_MS);
		}
		o->d = orders_next(&rng, &run.shop);
		o->due_ms = now_ms + ORDERS_RECHECK_MS;
		tw_timer_init(&o->timer, recheck);
		tw_add_range(run.w, &o->timer, o->due_ms * ORDERS_MS, opt->slack_ms * ORDERS_MS);
	}
	t1 = orders_wall_ns();
	rss1 = orders_rss_bytes();

	while (tw_count(run.w) > 0) {
		uint64_t next = tw_next_expiry(run.w);

		if (next == UINT64_MAX)
			break;
		tw_advance(run.w, next);
		res->wakeups++;
	}
	t2 = orders_wall_ns();

	res->create_s = (double)(t1 - t0) / 1e9;
	res->recheck_s = (double)(t2 - t1) / 1e9;
	res->rss_per_order = rss0 >= 0 && rss1 >= 0 && opt->count ?
				     (double)(rss1 - rss0) / (double)opt->count :
				     -1;
	struct tw_stats st;
	tw_get_stats(run.w, &st);
	res->placements = opt->count ? (double)st.placed / (double)opt->count : 0;
	orders_get_lateness(run.w, res);
	for (uint64_t i = 0; i < opt->count; i++)
		res->not_once += orders[i].rechecks != 1;
	orders_finish(&run.shop, res);
	/* The window's end: the slack, plus the 1 ms tick's rounding. */
	if (res->late_max_ms > opt->slack_ms + 1)
		res->ok = false;

	tw_wheel_destroy(run.w);
	free(orders);
	return res->ok ? 0 : 1;
}
