/* SPDX-License-Identifier: MIT */
/*
 * The order re-check scenario's rules, shared by both drivers so that they
 * do the same work per order and are checked the same way.
 */
#define _POSIX_C_SOURCE 200809L

#include <stdio.h>
#include <time.h>
#include <unistd.h>

#include "orders.h"

/* Plenty, so that no order is ever refused: the point is the timers. */
#define ORDERS_STOCK 1000000000

void orders_shop_init(struct orders_shop *shop)
{
	for (int i = 0; i < ORDERS_SKUS; i++) {
		shop->available[i] = ORDERS_STOCK;
		shop->reserved[i] = 0;
		shop->sold[i] = 0;
		shop->expect_sold[i] = 0;
	}
}

/* xorshift32: the same seed gives both drivers the same orders. */
static uint32_t next_random(uint32_t *rng)
{
	uint32_t x = *rng;

	x ^= x << 13;
	x ^= x >> 17;
	x ^= x << 5;
	*rng = x;
	return x;
}

/*
 * Draws the next order and reserves its stock, as the shop does when an
 * order is created. About two customers in three pay in time.
 */
struct orders_draw orders_next(uint32_t *rng, struct orders_shop *shop)
{
	uint32_t r = next_random(rng);
	struct orders_draw d = {
		.sku = (uint16_t)(r % ORDERS_SKUS),
		.qty = (uint8_t)(1 + (r >> 8) % 5),
		.pays = (r >> 16) % 3 != 0,
	};

	shop->available[d.sku] -= d.qty;
	shop->reserved[d.sku] += d.qty;
	if (d.pays)
		shop->expect_sold[d.sku] += d.qty;
	return d;
}

/*
 * The re-check itself: settle the reservation, and record whether the timer
 * kept its promise (exactly once, never before the due time).
 */
void orders_recheck(struct orders_shop *shop, struct orders_result *res, const struct orders_draw *d,
		    uint64_t now_ms, uint64_t due_ms, uint8_t *rechecks)
{
	res->rechecked++;
	if (*rechecks < UINT8_MAX)
		(*rechecks)++;
	if (now_ms < due_ms)
		res->early++;
	else if (now_ms - due_ms > res->late_max_ms)
		res->late_max_ms = now_ms - due_ms;

	shop->reserved[d->sku] -= d->qty;
	if (d->pays) {
		shop->sold[d->sku] += d->qty;
		res->completed++;
	} else {
		shop->available[d->sku] += d->qty;
		res->released++;
	}
}

/* Checks the books once every order has been re-checked. */
void orders_finish(const struct orders_shop *shop, struct orders_result *res)
{
	res->balanced = true;
	for (int i = 0; i < ORDERS_SKUS; i++) {
		if (shop->reserved[i] != 0 || shop->sold[i] != shop->expect_sold[i] ||
		    shop->available[i] != ORDERS_STOCK - shop->expect_sold[i])
			res->balanced = false;
	}
	res->ok = res->balanced && res->rechecked == res->orders && res->not_once == 0 &&
		  res->early == 0;
}

/*
 * CLOCK_MONOTONIC_RAW, because the libuv driver fakes CLOCK_MONOTONIC (see
 * virtual_clock.c) and the wall time must stay real.
 */
uint64_t orders_wall_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC_RAW, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Resident set size from /proc/self/statm, or -1 where there is none. */
long orders_rss_bytes(void)
{
	FILE *f = fopen("/proc/self/statm", "r");
	long size, resident;
	int n;

	if (!f)
		return -1;
	n = fscanf(f, "%ld %ld", &size, &resident);
	fclose(f);
	if (n != 2)
		return -1;
	return resident * sysconf(_SC_PAGESIZE);
}
