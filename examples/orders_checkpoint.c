/* SPDX-License-Identifier: MIT */
/*
 * The order re-check as a service that survives a restart (--checkpoint).
 *
 *   order_recheck --checkpoint FILE [-n ORDERS] [--recheck-ms MS] [--burst-ms MS]
 *                 [--interval-ms MS]
 *
 * On a real clock this time. A fresh start places ORDERS orders, order i
 * due --recheck-ms after the start plus i / ORDERS of --burst-ms (as if
 * they had arrived in a burst). Every --interval-ms, and on SIGTERM or
 * SIGINT, the program writes its pending orders (id, amount, deadline) to
 * FILE: tw_walk() visits their timers without changing the wheel, the
 * records go to FILE.tmp, which is fsync()ed and renamed over FILE, so
 * FILE is always a whole checkpoint. A start that finds FILE restores its
 * orders by arming them again: an order whose deadline passed while the
 * program was down fires in the next advance, at once.
 *
 * Exactly once. A checkpoint holds the orders pending when it was written;
 * an order re-checked after it would come back from it after a crash. So
 * each re-check is first recorded in a journal, FILE.done (one line per
 * order: id, amount, deadline, re-check time; one write() each, and one
 * fdatasync() after each advance's batch), and a restore arms only the
 * orders of the checkpoint that the journal does not name. The journal is
 * also what a test reads to prove that every order was re-checked exactly
 * once and none early.
 *
 * Deadlines outlive the process, so they are kept on CLOCK_REALTIME, and
 * the wheel runs on that clock too (it never reads one itself: the
 * program passes `now`). If the clock steps back, the wheel waits.
 */
#define _POSIX_C_SOURCE 200809L

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <timerwheel.h>

#include "orders.h"

struct cp_order {
	struct tw_timer timer;
	uint64_t id;
	uint64_t amount; /* cents */
};

static struct {
	struct tw_wheel *w;
	int journal;     /* FILE.done, append-only */
	uint64_t fired;  /* re-checks in this run */
	int failed;      /* a journal write failed */
} cp;

static volatile sig_atomic_t cp_stop;

static void cp_on_signal(int sig)
{
	(void)sig;
	cp_stop = 1;
}

static uint64_t cp_wall_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* An order's amount follows from its id, so that a test can check it. */
static uint64_t cp_amount(uint64_t id)
{
	return id * 7919 % 100000 + 1;
}

/* The re-check: its record reaches the journal before anything else. */
static void cp_recheck(struct tw_timer *t)
{
	struct cp_order *o = tw_container_of(t, struct cp_order, timer);
	char line[96];
	int n = snprintf(line, sizeof(line), "%" PRIu64 " %" PRIu64 " %019" PRIu64 " %019" PRIu64 "\n", o->id,
			 o->amount, t->expires, cp_wall_ns());

	if (write(cp.journal, line, (size_t)n) != n)
		cp.failed = 1;
	cp.fired++;
}

static int cp_write_order(struct tw_timer *t, uint64_t expires, void *arg)
{
	struct cp_order *o = tw_container_of(t, struct cp_order, timer);

	return fprintf(arg, "%" PRIu64 " %" PRIu64 " %" PRIu64 "\n", o->id, o->amount, expires) < 0 ? -EIO : 0;
}

/* FILE.tmp, fsync()ed, renamed over FILE: a crash leaves the old
 * checkpoint or the new one, never half of one. */
static int cp_checkpoint(const char *path, uint64_t total)
{
	char tmp[4096];
	FILE *f;
	int err;

	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	f = fopen(tmp, "w");
	if (!f)
		return -errno;
	fprintf(f, "orders-checkpoint 1 %" PRIu64 " %zu\n", total, tw_count(cp.w));
	err = tw_walk(cp.w, cp_write_order, f);
	if (!err && (fflush(f) || fsync(fileno(f))))
		err = -errno;
	if (fclose(f) && !err)
		err = -EIO;
	if (!err && rename(tmp, path))
		err = -errno;
	if (err)
		return err;
	printf("checkpoint: %zu orders pending\n", tw_count(cp.w));
	return 0;
}

/* The ids the journal names (re-checked in an earlier run). */
static int cp_read_journal(const char *path, uint8_t *done, uint64_t total)
{
	FILE *f = fopen(path, "r");
	uint64_t id, amount, deadline, at;

	if (!f)
		return errno == ENOENT ? 0 : -errno;
	while (fscanf(f, "%" SCNu64 " %" SCNu64 " %" SCNu64 " %" SCNu64, &id, &amount, &deadline, &at) == 4)
		if (id < total)
			done[id] = 1;
	fclose(f);
	return 0;
}

/* Arm the orders of FILE that the journal does not name. Returns the
 * number of orders in all (the first run's -n), or -errno. */
static int64_t cp_restore(const char *path, const char *journal, struct cp_order **out)
{
	FILE *f = fopen(path, "r");
	uint64_t total, pending, id, amount, deadline, now = tw_now(cp.w);
	uint64_t armed = 0, overdue = 0, skipped = 0;
	int err = 0;

	if (!f)
		return -errno;
	if (fscanf(f, "orders-checkpoint 1 %" SCNu64 " %" SCNu64, &total, &pending) != 2 || !total) {
		fclose(f);
		return -EINVAL;
	}
	struct cp_order *orders = calloc(total, sizeof(*orders));
	uint8_t *done = calloc(total, 1);
	if (!orders || !done)
		err = -ENOMEM;
	if (!err)
		err = cp_read_journal(journal, done, total);
	while (!err && fscanf(f, "%" SCNu64 " %" SCNu64 " %" SCNu64, &id, &amount, &deadline) == 3) {
		if (id >= total) {
			err = -EINVAL;
			break;
		}
		if (done[id]) {
			skipped++;
			continue;
		}
		orders[id] = (struct cp_order){ .id = id, .amount = amount };
		tw_timer_init(&orders[id].timer, cp_recheck);
		err = tw_add(cp.w, &orders[id].timer, deadline);
		armed++;
		overdue += deadline <= now;
	}
	fclose(f);
	free(done);
	if (err) {
		free(orders);
		return err;
	}
	printf("restored %" PRIu64 " orders, %" PRIu64 " overdue (re-checked at once), %" PRIu64
	       " already in the journal\n",
	       armed, overdue, skipped);
	*out = orders;
	return (int64_t)total;
}

static int64_t cp_fresh(const struct orders_opts *opt, struct cp_order **out)
{
	uint64_t start = tw_now(cp.w);
	struct cp_order *orders = calloc(opt->count ? opt->count : 1, sizeof(*orders));

	if (!orders)
		return -ENOMEM;
	for (uint64_t i = 0; i < opt->count; i++) {
		struct cp_order *o = &orders[i];
		uint64_t due = start + (opt->recheck_ms + i * opt->burst_ms / opt->count) * ORDERS_MS;

		*o = (struct cp_order){ .id = i, .amount = cp_amount(i) };
		tw_timer_init(&o->timer, cp_recheck);
		tw_add(cp.w, &o->timer, due);
	}
	printf("placed %" PRIu64 " orders\n", opt->count);
	*out = orders;
	return (int64_t)opt->count;
}

/* Sleep until `until` (wall ns) or a signal, at most 100 ms. */
static void cp_sleep_until(uint64_t until)
{
	uint64_t now = cp_wall_ns(), ns;
	struct timespec ts;

	if (until <= now)
		return;
	ns = until - now < 100 * ORDERS_MS ? until - now : 100 * ORDERS_MS;
	ts.tv_sec = (time_t)(ns / 1000000000u);
	ts.tv_nsec = (long)(ns % 1000000000u);
	nanosleep(&ts, NULL);
}

static int cp_serve(const char *path, uint64_t total, uint64_t interval_ms)
{
	uint64_t next_cp = tw_now(cp.w) + interval_ms * ORDERS_MS;
	int err = cp_checkpoint(path, total);

	while (!err && !cp_stop && tw_count(cp.w) > 0) {
		uint64_t now = cp_wall_ns(), next;

		if (tw_advance(cp.w, now) > 0 && fdatasync(cp.journal))
			err = -errno;
		if (cp.failed)
			err = -EIO;
		if (!err && now >= next_cp) {
			err = cp_checkpoint(path, total);
			next_cp = now + interval_ms * ORDERS_MS;
		}
		next = tw_next_expiry(cp.w);
		cp_sleep_until(next < next_cp ? next : next_cp);
	}
	if (!err)
		err = cp_checkpoint(path, total);
	return err;
}

int orders_run_checkpoint(const struct orders_opts *opt)
{
	char journal[4096];
	struct cp_order *orders = NULL;
	struct sigaction sa;
	int64_t total;
	int err;

	setvbuf(stdout, NULL, _IOLBF, 0);
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = cp_on_signal; /* no SA_RESTART: a signal ends the sleep */
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);

	snprintf(journal, sizeof(journal), "%s.done", opt->checkpoint);
	err = tw_wheel_create(&cp.w, NULL, cp_wall_ns());
	if (err < 0)
		return err;
	bool restoring = access(opt->checkpoint, F_OK) == 0;
	/* A fresh start begins a fresh journal: none of its orders is in it. */
	cp.journal = open(journal, O_WRONLY | O_APPEND | O_CREAT | (restoring ? 0 : O_TRUNC), 0644);
	if (cp.journal < 0) {
		err = -errno;
		tw_wheel_destroy(cp.w);
		return err;
	}
	total = restoring ? cp_restore(opt->checkpoint, journal, &orders) : cp_fresh(opt, &orders);
	err = total < 0 ? (int)total : cp_serve(opt->checkpoint, (uint64_t)total, opt->interval_ms);
	if (!err) {
		if (cp_stop)
			printf("stopped by a signal: %zu orders pending, saved; %" PRIu64 " re-checked in this run\n",
			       tw_count(cp.w), cp.fired);
		else
			printf("every order re-checked: %" PRIu64 " in this run\n", cp.fired);
	}
	if (!err && cp.fired) {
		struct orders_result r = { .has_lateness = false };

		orders_get_lateness(cp.w, &r);
		orders_print_lateness(&r);
	}
	tw_wheel_destroy(cp.w);
	close(cp.journal);
	free(orders);
	return err;
}
