/* SPDX-License-Identifier: MIT */
/* main() for libuv's benchmark-million-timers.c, built unchanged by
 * tests/uv/million-timers, on libuv and with <timerwheel/uv_port.h>. */
int run_benchmark_million_timers(void);

int main(void)
{
	return run_benchmark_million_timers();
}
