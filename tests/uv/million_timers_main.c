/* SPDX-License-Identifier: MIT */
/* main() for libuv's benchmark-million-timers.c, built unchanged by
 * tests/uv/million-timers, on libuv and with <timerwheel/uv_port.h>. The
 * benchmark's own figures are wall-clock times, and its uv_run() waits
 * for the timers' deadlines: the CPU time the loop spends is measured
 * around it (the build links uv_run() through --wrap). */
#define _GNU_SOURCE
#include <stdio.h>
#include <sys/resource.h>
#include <uv.h>

int run_benchmark_million_timers(void);
int __real_uv_run(uv_loop_t *loop, uv_run_mode mode);

static double cpu_seconds(void)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	return ru.ru_utime.tv_sec + ru.ru_stime.tv_sec + (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
}

int __wrap_uv_run(uv_loop_t *loop, uv_run_mode mode)
{
	double before = cpu_seconds();
	int r = __real_uv_run(loop, mode);

	printf("%.2f seconds of CPU in uv_run\n", cpu_seconds() - before);
	return r;
}

int main(void)
{
	return run_benchmark_million_timers();
}
