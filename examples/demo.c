/* SPDX-License-Identifier: MIT */
/*
 * demo: what the README's first command (examples/run-demo) runs. The order
 * re-check scenario (order_recheck.c), a million orders, on timerwheel and
 * on native libuv timers, with time and memory side by side and the ratio.
 * Same as `order_recheck --compare`, and takes the same options.
 */
#include "orders.h"

int main(int argc, char **argv)
{
	return orders_main(argc, argv, true);
}
