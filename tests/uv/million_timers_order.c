/* SPDX-License-Identifier: MIT */
/* Built into the port's copy of libuv's benchmark-million-timers.c by
 * tests/uv/million-timers --order: every start goes through here
 * (--wrap=tw_uv_timer_start), which numbers it and puts a callback of its
 * own in front of the benchmark's. That callback checks that each timer
 * runs once per start and that the runs keep libuv's order, by due
 * millisecond, then start, reckoned here from the timer's deadline and
 * this file's own count of starts; at exit it prints what it saw, and
 * ends the run with status 1 if either rule broke. The
 * benchmark's timers are one array, started in index order, so a timer's
 * index is its distance from the first one started. */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include <timerwheel/uv_timer.h>

int __real_tw_uv_timer_start(tw_uv_timer_t *t, tw_uv_timer_cb cb, uint64_t timeout, uint64_t repeat);

static tw_uv_timer_t *base;
static size_t cap;
static uint64_t *seq_of; /* per timer: its last start's number, + 1; 0 once run */
static uint64_t starts, runs, out_of_order, last_ms, last_seq;
static tw_uv_timer_cb program_cb;

static uint64_t due_ms(const tw_uv_timer_t *t)
{
	uint64_t e = t->tw__timer.expires;

	return e / 1000000u + (e % 1000000u != 0);
}

/* At exit: what was seen; a run that broke either rule exits 1. */
static void report(void)
{
	printf("%llu starts, %llu callbacks, %llu out of libuv's order, %s\n", (unsigned long long)starts,
	       (unsigned long long)runs, (unsigned long long)out_of_order,
	       runs == starts ? "each timer once" : "NOT each timer once");
	fflush(stdout);
	if (out_of_order || runs != starts)
		_exit(1);
}

static void checked_cb(tw_uv_timer_t *t)
{
	size_t i = (size_t)(t - base);
	uint64_t ms = due_ms(t), seq;

	if (i >= cap || !seq_of[i]) {
		fprintf(stderr, "million-timers: a callback for timer %zu, not started or run already\n", i);
		abort();
	}
	seq = seq_of[i] - 1;
	seq_of[i] = 0;
	if (runs++ && (ms < last_ms || (ms == last_ms && seq < last_seq)))
		out_of_order++;
	last_ms = ms;
	last_seq = seq;
	program_cb(t);
}

int __wrap_tw_uv_timer_start(tw_uv_timer_t *t, tw_uv_timer_cb cb, uint64_t timeout, uint64_t repeat)
{
	size_t i;

	if (!base) {
		base = t;
		cap = (size_t)64 << 20;
		seq_of = calloc(cap, sizeof(*seq_of));
		if (!seq_of)
			abort();
		atexit(report);
	}
	i = (size_t)(t - base);
	if (t < base || i >= cap || repeat || (program_cb && cb != program_cb)) {
		fprintf(stderr, "million-timers: a start this check does not follow\n");
		abort();
	}
	program_cb = cb;
	seq_of[i] = ++starts;
	return __real_tw_uv_timer_start(t, checked_cb, timeout, repeat);
}
