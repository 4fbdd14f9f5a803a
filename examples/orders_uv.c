/* SPDX-License-Identifier: MIT */
/*
 * The order re-check scenario on native libuv timers: one uv_timer_t per
 * order, as a libuv program without timerwheel would do it.
 *
 * libuv reads the clock itself, so the simulated clock goes through
 * virtual_clock.c, which libuv's calls to clock_gettime() reach instead of
 * the real one. The driver mirrors the timerwheel driver step for step:
 *  - during the burst, the clock moves one millisecond at a time and
 *    uv_update_time() makes the loop see it, exactly as the wheel's driver
 *    calls tw_advance();
 *  - after it, uv_backend_timeout() says how far the earliest timer is (the
 *    analogue of tw_next_expiry()), the virtual clock jumps there and
 *    uv_run(UV_RUN_NOWAIT) runs the due timers. The loop watches no file
 *    descriptor, so libuv skips epoll_wait() and no turn makes a system
 *    call: both drivers pay for their timers and nothing else.
 * Times are whole milliseconds, libuv's unit, so libuv's rounding plays no
 * part and both drivers fire every order exactly at its due millisecond.
 */
#define _POSIX_C_SOURCE 200809L

#include <errno.h>
#include <stdlib.h>

#include <uv.h>

#include "orders.h"
#include "virtual_clock.h"

struct order {
	uv_timer_t timer; /* 152 bytes on x86-64 with libuv 1.44 */
	uint64_t due_ms;
	struct orders_draw d;
	uint8_t rechecks;
};

static struct {
	uv_loop_t loop;
	struct orders_shop shop;
	struct orders_result *res;
} run;

static void recheck(uv_timer_t *t)
{
	/* The first member, so the handle's address is the order's. */
	struct order *o = (struct order *)(void *)t;

	orders_recheck(&run.shop, run.res, &o->d, uv_now(&run.loop), o->due_ms, &o->rechecks);
}

static void set_clock_ms(uint64_t ms)
{
	virtual_clock_ns = ms * ORDERS_MS;
}

/* libuv frees nothing itself, but a handle may be freed only once closed. */
static void close_all(struct order *orders, uint64_t n)
{
	for (uint64_t i = 0; i < n; i++)
		uv_close((uv_handle_t *)&orders[i].timer, NULL);
	uv_run(&run.loop, UV_RUN_DEFAULT);
}

int orders_run_uv(const struct orders_opts *opt, struct orders_result *res)
{
	uint32_t rng = opt->seed;
	uint64_t now_ms = ORDERS_T0_MS;
	struct order *orders;
	long rss0, rss1;
	uint64_t t0, t1, t2;
	int err;

	*res = (struct orders_result){
		.engine = "libuv uv_timer_t",
		.orders = opt->count,
		.order_size = sizeof(struct order),
		.timer_size = sizeof(uv_timer_t),
	};
	run.res = res;
	orders_shop_init(&run.shop);
	set_clock_ms(now_ms);
	virtual_clock_on = true;
	err = uv_loop_init(&run.loop);
	if (err < 0) {
		virtual_clock_on = false;
		return err;
	}

	rss0 = orders_rss_bytes();
	t0 = orders_wall_ns();
	orders = calloc(opt->count ? opt->count : 1, sizeof(*orders));
	if (!orders) {
		uv_loop_close(&run.loop);
		virtual_clock_on = false;
		return -ENOMEM;
	}
	for (uint64_t i = 0; i < opt->count; i++) {
		struct order *o = &orders[i];
		uint64_t at_ms = ORDERS_T0_MS + i * opt->burst_ms / opt->count;

		if (at_ms != now_ms) {
			now_ms = at_ms;
			set_clock_ms(now_ms);
			uv_update_time(&run.loop);
		}
		o->d = orders_next(&rng, &run.shop);
		o->due_ms = now_ms + ORDERS_RECHECK_MS;
		uv_timer_init(&run.loop, &o->timer);
		uv_timer_start(&o->timer, recheck, ORDERS_RECHECK_MS, 0);
	}
	t1 = orders_wall_ns();
	rss1 = orders_rss_bytes();

	while (res->rechecked < opt->count) {
		int ms = uv_backend_timeout(&run.loop);

		if (ms < 0)
			break;
		set_clock_ms(uv_now(&run.loop) + (uint64_t)ms);
		uv_run(&run.loop, UV_RUN_NOWAIT);
		res->wakeups++;
	}
	t2 = orders_wall_ns();

	res->create_s = (double)(t1 - t0) / 1e9;
	res->recheck_s = (double)(t2 - t1) / 1e9;
	res->rss_per_order = rss0 >= 0 && rss1 >= 0 && opt->count ?
				     (double)(rss1 - rss0) / (double)opt->count :
				     -1;
	for (uint64_t i = 0; i < opt->count; i++)
		res->not_once += orders[i].rechecks != 1;
	orders_finish(&run.shop, res);

	close_all(orders, opt->count);
	uv_loop_close(&run.loop);
	virtual_clock_on = false;
	free(orders);
	return res->ok ? 0 : 1;
}
