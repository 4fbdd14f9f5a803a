/* SPDX-License-Identifier: MIT */
/*
 * The command line shared by order_recheck and demo:
 *
 *   [-n ORDERS] [--burst-ms MS] [--seed N] [--runs N] [--libuv | --compare | --slack-ms MS]
 *   --checkpoint FILE [-n ORDERS] [--recheck-ms MS] [--burst-ms MS] [--interval-ms MS]
 *
 * --checkpoint runs the orders on the real clock as a service that
 * survives restarts (orders_checkpoint.c).
 * The last of --libuv, --compare and --slack-ms wins; --slack-ms runs the
 * wheel exactly and with that slack, side by side. Exits 0 only if every order was re-checked exactly once, none early, and
 * the stock books balance; 77 (skipped) for --libuv without libuv.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "orders.h"

static int usage(const char *prog)
{
	fprintf(stderr,
		"usage: %s [-n ORDERS] [--burst-ms MS] [--seed N] [--runs N] [--libuv | --compare | --slack-ms MS]\n"
		"       %s --checkpoint FILE [-n ORDERS] [--recheck-ms MS] [--burst-ms MS] [--interval-ms MS]\n",
		prog, prog);
	return 2;
}

static int parse_u64(const char *s, uint64_t *out)
{
	char *end;
	unsigned long long v;

	if (!s || !*s || *s == '-')
		return -1;
	v = strtoull(s, &end, 10);
	if (*end)
		return -1;
	*out = v;
	return 0;
}

int orders_main(int argc, char **argv, bool compare)
{
	struct orders_opts o = ORDERS_DEFAULTS;
	struct orders_result r;
	bool libuv = false, slack = false;
	uint64_t seed, runs;
	int err;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "-n") && i + 1 < argc) {
			if (parse_u64(argv[++i], &o.count))
				return usage(argv[0]);
		} else if (!strcmp(argv[i], "--burst-ms") && i + 1 < argc) {
			if (parse_u64(argv[++i], &o.burst_ms) || o.burst_ms == 0)
				return usage(argv[0]);
		} else if (!strcmp(argv[i], "--seed") && i + 1 < argc) {
			/* xorshift must not start from 0. */
			if (parse_u64(argv[++i], &seed) || (uint32_t)seed == 0)
				return usage(argv[0]);
			o.seed = (uint32_t)seed;
		} else if (!strcmp(argv[i], "--runs") && i + 1 < argc) {
			if (parse_u64(argv[++i], &runs) || runs == 0 || runs > 100)
				return usage(argv[0]);
			o.runs = (unsigned)runs;
		} else if (!strcmp(argv[i], "--slack-ms") && i + 1 < argc) {
			if (parse_u64(argv[++i], &o.slack_ms) || o.slack_ms == 0)
				return usage(argv[0]);
			slack = true;
			compare = libuv = false;
		} else if (!strcmp(argv[i], "--checkpoint") && i + 1 < argc) {
			o.checkpoint = argv[++i];
		} else if (!strcmp(argv[i], "--recheck-ms") && i + 1 < argc) {
			if (parse_u64(argv[++i], &o.recheck_ms))
				return usage(argv[0]);
		} else if (!strcmp(argv[i], "--interval-ms") && i + 1 < argc) {
			if (parse_u64(argv[++i], &o.interval_ms) || o.interval_ms == 0)
				return usage(argv[0]);
		} else if (!strcmp(argv[i], "--libuv")) {
			libuv = true;
			compare = slack = false;
		} else if (!strcmp(argv[i], "--compare")) {
			compare = true;
			libuv = slack = false;
		} else {
			return usage(argv[0]);
		}
	}
	if (o.checkpoint) {
		err = orders_run_checkpoint(&o);
		if (err < 0)
			fprintf(stderr, "order_recheck: %s: %s\n", o.checkpoint, strerror(-err));
		return err < 0;
	}
	if (compare)
		return orders_compare(&o);
	if (slack)
		return orders_compare_slack(&o);
	if (libuv) {
#ifdef ORDERS_HAVE_LIBUV
		err = orders_run_uv(&o, &r);
#else
		fprintf(stderr, "built without libuv: --libuv is not available\n");
		return 77; /* "skipped", for the test harness */
#endif
	} else {
		err = orders_run_wheel(&o, &r);
	}
	if (err < 0) {
		fprintf(stderr, "order_recheck: %s\n", strerror(-err));
		return 1;
	}
	orders_print(&o, &r);
	return err;
}
