/* SPDX-License-Identifier: MIT */
/*
 * order_recheck: the order re-check. A shop creates a million orders in a burst; each
 * reserves stock and is re-checked 30 minutes later, releasing the stock if
 * it was not paid. One timer per order, on a simulated clock.
 *
 *   order_recheck [-n ORDERS] [--burst-ms MS] [--seed N] [--runs N] [--libuv | --compare]
 *   order_recheck --checkpoint FILE [-n ORDERS] [--recheck-ms MS] [--burst-ms MS] [--interval-ms MS]
 *
 * Default: the scenario on timerwheel (orders_wheel.c). --libuv: the same
 * orders on native libuv uv_timer_t timers (orders_uv.c). --compare: both,
 * side by side (orders_report.c), which is what `demo` runs. It prints the
 * time per phase, orders per second and the memory per order, and exits 0
 * only if every order was re-checked exactly once, none early, and the
 * stock books balance.
 *
 * --checkpoint FILE runs the orders on the real clock instead, as a service
 * that survives a restart: it writes its pending orders to FILE at
 * intervals and on SIGTERM, and restores them on start
 * (orders_checkpoint.c).
 */
#include "orders.h"

int main(int argc, char **argv)
{
	return orders_main(argc, argv, false);
}
