/* SPDX-License-Identifier: MIT */
/*
 * order_recheck: the order re-check. A shop creates a million orders in a burst; each
 * reserves stock and is re-checked 30 minutes later, releasing the stock if
 * it was not paid. One timer per order, on a simulated clock.
 *
 *   order_recheck [-n ORDERS] [--burst-ms MS] [--seed N] [--runs N] [--libuv | --compare]
 *
 * Default: the scenario on timerwheel (orders_wheel.c). --libuv: the same
 * orders on native libuv uv_timer_t timers (orders_uv.c). --compare: both,
 * side by side (orders_report.c), which is what `demo` runs. It prints the
 * time per phase, orders per second and the memory per order, and exits 0
 * only if every order was re-checked exactly once, none early, and the
 * stock books balance.
 */
#include "orders.h"

int main(int argc, char **argv)
{
	return orders_main(argc, argv, false);
}
