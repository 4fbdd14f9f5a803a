/* SPDX-License-Identifier: MIT */
/*
 * The order re-check scenario, shared by its two drivers.
 *
 * A shop creates many orders in a burst. Each order reserves stock when it
 * is created and is re-checked 30 minutes later: if the customer has not
 * paid by then, the reservation is released, otherwise the stock is sold.
 * Both drivers (timerwheel and native libuv timers) run the same orders,
 * drawn from the same seed, on a simulated clock, and record the same
 * figures, so their results can be printed side by side.
 */
#ifndef ORDERS_H
#define ORDERS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define ORDERS_MS 1000000ull
#define ORDERS_RECHECK_MS (30ull * 60 * 1000)
/* Simulated time starts at one hour, not at 0, like a real monotonic clock. */
#define ORDERS_T0_MS 3600000ull
#define ORDERS_SKUS 64

struct orders_opts {
	uint64_t count;    /* orders created */
	uint64_t burst_ms; /* the burst lasts this long; orders arrive each ms */
	uint32_t seed;
	unsigned runs;     /* --compare: runs per side, the fastest is shown */
	uint64_t slack_ms; /* timerwheel: each re-check may come this much after its due time */
	const char *checkpoint; /* --checkpoint FILE: a real-clock service that survives restarts */
	uint64_t recheck_ms;    /* --checkpoint: the re-check comes this long after the order */
	uint64_t interval_ms;   /* --checkpoint: between two checkpoints */
};

/* A million orders in a ten-second burst: the demo's and the default run. */
#define ORDERS_DEFAULTS { .count = 1000000, .burst_ms = 10000, .seed = 2463534242u, .runs = 3, .slack_ms = 0, \
			  .checkpoint = NULL, .recheck_ms = ORDERS_RECHECK_MS, .interval_ms = 1000 }

/*
 * The shop's books. Every unit of stock is in exactly one of available,
 * reserved or sold; expect_sold is what the customers will have paid for,
 * known to the simulation (not to the shop) when the orders are drawn.
 */
struct orders_shop {
	int64_t available[ORDERS_SKUS];
	int64_t reserved[ORDERS_SKUS];
	int64_t sold[ORDERS_SKUS];
	int64_t expect_sold[ORDERS_SKUS];
};

/* One order as the simulation draws it. */
struct orders_draw {
	uint16_t sku;
	uint8_t qty;
	uint8_t pays; /* the customer pays within the 30 minutes */
};

struct orders_result {
	const char *engine;
	uint64_t orders;
	uint64_t rechecked;    /* callbacks */
	uint64_t not_once;     /* orders re-checked zero times or more than once */
	uint64_t early;        /* re-checks before the order's due time */
	uint64_t late_max_ms;  /* the latest re-check, after its due time */
	uint64_t released;     /* orders whose reservation was released */
	uint64_t completed;    /* orders that were paid */
	uint64_t wakeups;      /* turns of the driving loop after the burst */
	bool balanced;         /* every SKU's stock adds up */
	double create_s;       /* creating the orders and arming their timers */
	double recheck_s;      /* running the clock until every order is re-checked */
	size_t order_size;     /* sizeof the driver's struct order */
	size_t timer_size;     /* sizeof the timer embedded in it */
	double rss_per_order;  /* RSS growth while creating / orders; < 0 if unknown */
	double placements;     /* timerwheel: times a timer was put in a wheel slot, per order */
	bool has_lateness;     /* timerwheel: the three below, from tw_get_lateness() */
	uint64_t late_p50_ns, late_p99_ns, late_hist_max_ns;
	bool ok;               /* every check passed */
};

/* The scenario, common to both drivers (orders_scenario.c). */
void orders_shop_init(struct orders_shop *shop);
struct orders_draw orders_next(uint32_t *rng, struct orders_shop *shop);
void orders_recheck(struct orders_shop *shop, struct orders_result *res, const struct orders_draw *d,
		    uint64_t now_ms, uint64_t due_ms, uint8_t *rechecks);
void orders_finish(const struct orders_shop *shop, struct orders_result *res);
uint64_t orders_wall_ns(void);
long orders_rss_bytes(void);

/* The command line of order_recheck and demo (orders_cli.c). */
int orders_main(int argc, char **argv, bool compare);

/* Reporting (orders_report.c). */
struct tw_wheel;
void orders_get_lateness(const struct tw_wheel *w, struct orders_result *r);
void orders_print_lateness(const struct orders_result *r);
void orders_print(const struct orders_opts *o, const struct orders_result *r);
int orders_compare(const struct orders_opts *o);
int orders_compare_slack(const struct orders_opts *o);

/* The drivers: 0 if every check passed, 1 if one failed, -errno on error. */
int orders_run_wheel(const struct orders_opts *o, struct orders_result *r);
int orders_run_uv(const struct orders_opts *o, struct orders_result *r);
/* --checkpoint (orders_checkpoint.c): 0, or -errno. */
int orders_run_checkpoint(const struct orders_opts *o);

#endif /* ORDERS_H */
