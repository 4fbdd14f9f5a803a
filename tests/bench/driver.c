/* SPDX-License-Identifier: MIT */
/*
 * The benchmark driver: the same workloads, the same random numbers and the
 * same virtual clock for every peer. See README.md ("benchmarks") and
 * tests/bench/run for the whole comparison; this program runs one peer at
 * one N:
 *
 *   bench-PEER -n N [-w M,W1,W1b,W2,W3,W3c,W3s,W4,W4d,W4r,W5,adv] [-r reps]
 *              [-m min_ops] [-s seed] [-o file.csv]
 *
 * Workloads (deadlines on the 1 ms grid, so that every peer can represent
 * them exactly: libuv counts whole ms, libevent whole us, libev doubles):
 *   M    memory: RSS growth for N armed timers (W1), per timer, minus the
 *        harness's bytes; peak RSS of the process
 *   W1   arm N idle timers, deadlines uniform in (0, 30 min]     ns per arm
 *   W2   cancel those N in random order                          ns per cancel
 *   W1b  then, in the same instance (the clock run past every deadline),
 *        arm the same N idle timers again: warm memory             ns per arm
 *   W3   expire all N, advancing from deadline to deadline       ns per fire
 *   W3c  N timers armed 30 min ahead over a 1 s burst (1 ms of virtual
 *        time per N/1000 arms), then expired                     ns per fire
 *   W3s  W3c with a slack of 1% of each timer's distance (18 s), for the
 *        peers that take a window (peer_arm_range); the clock runs on in
 *        1 ms steps until every window has closed                ns per fire
 *   W4   re-arm churn, N connections with a 30 s idle timeout: N timers
 *        armed uniformly in (0, 30 s] (the steady state of such timers);
 *        max(N, min_ops) re-arms of a random timer 30 s ahead, the clock
 *        +1 ms every N/1000 re-arms                              ns per re-arm
 *   W4d  W4 with each re-arm written as cancel + arm (peer_cancel() then
 *        peer_arm(): tw_del + tw_add, uv_timer_stop + uv_timer_start, ...)
 *   W4r  the same churn starting from deadlines uniform in 30 min, so
 *        that the first re-arm of each timer moves it much earlier
 *   W5   request timeouts: k = N/1548 requests per ms each arm a 30 s
 *        timeout; 95% are cancelled 1..100 ms later, 5% time out. Starts
 *        in the steady state (0.969 N long-lived timers in flight, so about
 *        N are live); max(N, min_ops) requests                   ns per request
 *   adv  empty advance: N timers armed beyond the end of the run, then
 *        max(min_ops, 1000) advances of 1 ms each, none of which has a
 *        timer due                                               ns per advance
 * Every advance moves the clock to a deadline (W3) or by 1 ms (the others)
 * and runs the peer once, as its loop would after waking up.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "bench.h"

/*
 * The peer's adapter is compiled into this file, so that its small
 * functions inline into the workload loops: the harness then costs every
 * peer the same few ns per operation, and the library calls stay calls.
 */
#ifdef BENCH_PEER
#include BENCH_PEER
#endif
#ifndef PEER_HAS_RANGE
#define PEER_HAS_RANGE 0
static inline void peer_arm_range(uint32_t i, uint64_t deadline, uint64_t slack)
{
	(void)slack;
	peer_arm(i, deadline);
}
#endif
#ifndef PEER_REHEARSE
#define PEER_REHEARSE 0
#endif

#define MS 1000000ull
#define SEC 1000000000ull
#define SPAN_MS 1800000u /* 30 min */

struct bench_check bench_chk;
void (*bench_on_fire)(uint32_t i);
uint64_t bench_slack_ns;
const char *bench_workload;
bool bench_rehearsal;

static uint32_t n;
#define MAX_REPS 64 /* repetitions kept per workload */
static unsigned reps = 3;
static uint64_t min_ops = 100000;
static uint64_t seed = 0x74696d6572776865ull;
static FILE *csv;
static bool failed;

/* splitmix64: the same stream for every peer. */
static uint64_t rng_state;

static uint64_t rnd(void)
{
	uint64_t z = (rng_state += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static uint32_t rnd_below(uint32_t bound)
{
	return (uint32_t)(((rnd() >> 32) * bound) >> 32);
}

static void *xmalloc(size_t size)
{
	void *p = malloc(size ? size : 1);

	if (!p) {
		fprintf(stderr, "bench: out of memory (%zu bytes)\n", size);
		exit(2);
	}
	return p;
}

static bool rehearsing(int r);

/* A new instance starts on a fresh whole second, later than anything before:
 * the virtual clock never goes back, even across instances. @r is the
 * repetition (negative: the untimed rehearsal). */
static uint64_t open_instance(uint32_t count, int r)
{
	int err;

	rehearsing(r);
	bench_vnow = (bench_vnow / SEC + 2) * SEC;
	memset(&bench_chk, 0, sizeof(bench_chk));
	bench_on_fire = NULL;
	bench_slack_ns = 0;
	bench_workload = NULL;
	err = peer_open(count);
	if (err) {
		fprintf(stderr, "bench: %s: open(%" PRIu32 "): %s\n", peer_name, count, strerror(-err));
		exit(2);
	}
	return bench_vnow;
}

static inline void advance_to(uint64_t t)
{
	bench_vnow = t + peer_slack_ns;
	peer_advance(t);
}

/* Timers still armed with a deadline the clock has passed were missed. */
static void scan_missed(uint32_t count, uint64_t now)
{
	for (uint32_t i = 0; i < count; i++) {
		uint64_t d = peer_deadline(i);

		if (d && d <= now)
			bench_chk.missed++;
	}
}

struct result {
	const char *name;
	uint64_t ops;
	double ns[MAX_REPS];
	unsigned done;
	struct bench_check chk;
};

/* Missed timers are those scan_missed() found still armed. */
static void add_check(struct result *r)
{
	r->chk.fired += bench_chk.fired;
	r->chk.early += bench_chk.early;
	r->chk.late += bench_chk.late;
	r->chk.missed += bench_chk.missed;
	r->chk.dup += bench_chk.dup;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static void report(struct result *r)
{
	double s[MAX_REPS];
	double med;
	const struct bench_check *c = &r->chk;

	if (!r->done)
		return;
	memcpy(s, r->ns, r->done * sizeof(double));
	qsort(s, r->done, sizeof(double), cmp_double);
	med = r->done % 2 ? s[r->done / 2] : (s[r->done / 2 - 1] + s[r->done / 2]) / 2;
	printf("%-8s %9" PRIu32 " %-4s %10.1f ns/op  (min %.1f, max %.1f, %u reps, %" PRIu64
	       " ops)  fired %" PRIu64 " early %" PRIu64 " late %" PRIu64 " missed %" PRIu64
	       " dup %" PRIu64 "\n",
	       peer_name, n, r->name, med, s[0], s[r->done - 1], r->done, r->ops, c->fired,
	       c->early, c->late, c->missed, c->dup);
	if (csv)
		fprintf(csv, "%s,%" PRIu32 ",%s,%u,%" PRIu64 ",%.2f,%.2f,%.2f,ns/op,%" PRIu64 ",%" PRIu64
			",%" PRIu64 ",%" PRIu64 "\n",
			peer_name, n, r->name, r->done, r->ops, med, s[0], s[r->done - 1], c->early,
			c->late, c->missed, c->dup);
	if (c->early || c->late || c->missed || c->dup) {
		fprintf(stderr, "bench: %s N=%" PRIu32 " %s: fire check FAILED\n", peer_name, n, r->name);
		failed = true;
	}
}

static inline double per_op(uint64_t t0, uint64_t t1, uint64_t ops)
{
	return (double)(t1 - t0) / (double)ops;
}

/*
 * The repetitions of a workload: for r = FIRST_REP; r < reps. A peer that
 * rehearses (the floor) gets an untimed run first, r = -1, whose results
 * are dropped; rehearsing() says so and sets bench_rehearsal until the
 * repetition ends.
 */
#define FIRST_REP (-(int)PEER_REHEARSE)

static bool rehearsing(int r)
{
	bench_rehearsal = r < 0;
	return bench_rehearsal;
}

/* The end of one repetition: its time per operation, its fire checks, and
 * the peer torn down for the next. */
static void end_repetition(struct result *res, uint64_t t0, uint64_t t1, uint64_t ops)
{
	if (!bench_rehearsal) {
		res->ns[res->done++] = per_op(t0, t1, ops);
		add_check(res);
	}
	peer_close();
	bench_rehearsal = false;
}

/* Deadline offsets in ms, uniform in [1, 30 min], and the sorted distinct
 * ones: the stops of a loop that advances from deadline to deadline. */
static uint32_t *dl_ms;
static uint32_t *stops;
static uint32_t nstops;

static void make_deadlines(void)
{
	uint8_t *seen = calloc(SPAN_MS + 1, 1);

	if (!seen)
		exit(2);
	dl_ms = xmalloc((size_t)n * sizeof(*dl_ms));
	for (uint32_t i = 0; i < n; i++) {
		dl_ms[i] = 1 + rnd_below(SPAN_MS);
		seen[dl_ms[i]] = 1;
	}
	stops = xmalloc((size_t)(n < SPAN_MS ? n : SPAN_MS) * sizeof(*stops));
	nstops = 0;
	for (uint32_t m = 1; m <= SPAN_MS; m++)
		if (seen[m])
			stops[nstops++] = m;
	free(seen);
}

static long rss_bytes(void)
{
	long pages = 0, resident = 0;
	FILE *f = fopen("/proc/self/statm", "r");

	if (!f)
		return -1;
	if (fscanf(f, "%ld %ld", &pages, &resident) != 2)
		resident = -1;
	fclose(f);
	return resident * sysconf(_SC_PAGESIZE);
}

static void run_memory(void)
{
	long rss0, rss1;
	uint64_t base;
	double per_timer;
	struct rusage ru;

	rss0 = rss_bytes();
	base = open_instance(n, 0);
	for (uint32_t i = 0; i < n; i++)
		peer_arm(i, base + dl_ms[i] * MS);
	rss1 = rss_bytes();
	per_timer = (double)(rss1 - rss0) / n - (double)peer_harness_bytes();
	peer_close();
	getrusage(RUSAGE_SELF, &ru);
	printf("%-8s %9" PRIu32 " mem  %10.1f bytes/timer (handle %zu), peak RSS %.1f MiB\n", peer_name,
	       n, per_timer, peer_handle_size(), ru.ru_maxrss / 1024.0);
	if (csv) {
		fprintf(csv, "%s,%" PRIu32 ",bytes,1,%" PRIu32 ",%.2f,%.2f,%.2f,B/timer,0,0,0,0\n", peer_name,
			n, n, per_timer, per_timer, per_timer);
		fprintf(csv, "%s,%" PRIu32 ",handle,1,%" PRIu32 ",%zu,%zu,%zu,B,0,0,0,0\n", peer_name, n, n,
			peer_handle_size(), peer_handle_size(), peer_handle_size());
		fprintf(csv, "%s,%" PRIu32 ",peak_rss,1,%" PRIu32 ",%.1f,%.1f,%.1f,MiB,0,0,0,0\n", peer_name,
			n, n, ru.ru_maxrss / 1024.0, ru.ru_maxrss / 1024.0, ru.ru_maxrss / 1024.0);
	}
}

/*
 * W1 and W2 on one instance; then, when W1b is wanted, the same instance
 * again: once the clock has run past every deadline, every timer is idle
 * and the peer's memory is warm (handles touched, heap arrays grown, wheel
 * slots used), and W1b arms all N again, in the same order, with the same
 * offsets from the new time. W1b is checked by running its first stops
 * (up to 1000 distinct deadlines) as W3 does: those fires are checked, and
 * no timer due by then may be left armed.
 */
static void run_w1w2(struct result *w1, struct result *w2, struct result *w1b, bool want_w1b)
{
	uint32_t *perm = xmalloc((size_t)n * sizeof(*perm));
	uint32_t check_stops = nstops < 1000 ? nstops : 1000;

	for (uint32_t i = 0; i < n; i++)
		perm[i] = i;
	for (uint32_t i = n - 1; i > 0; i--) {
		uint32_t j = rnd_below(i + 1), t = perm[i];

		perm[i] = perm[j];
		perm[j] = t;
	}
	for (int r = FIRST_REP; r < (int)reps; r++) {
		uint64_t base = open_instance(n, r), t0, t1, t2, t3, t4;

		t0 = vclock_real_ns();
		for (uint32_t i = 0; i < n; i++)
			peer_arm(i, base + dl_ms[i] * MS);
		t1 = vclock_real_ns();
		for (uint32_t k = 0; k < n; k++)
			peer_cancel(perm[k]);
		t2 = vclock_real_ns();
		/* Nothing may fire after a cancel: run past every deadline. */
		base += (SPAN_MS + 1) * MS;
		advance_to(base);
		scan_missed(n, UINT64_MAX);
		if (!bench_rehearsal) {
			w1->ns[w1->done++] = per_op(t0, t1, n);
			w2->ns[w2->done++] = per_op(t1, t2, n);
			add_check(w2);
		}
		if (want_w1b) {
			memset(&bench_chk, 0, sizeof(bench_chk));
			t3 = vclock_real_ns();
			for (uint32_t i = 0; i < n; i++)
				peer_arm(i, base + dl_ms[i] * MS);
			t4 = vclock_real_ns();
			for (uint32_t s = 0; s < check_stops; s++)
				advance_to(base + stops[s] * MS);
			scan_missed(n, base + stops[check_stops - 1] * MS);
			if (!bench_rehearsal) {
				w1b->ns[w1b->done++] = per_op(t3, t4, n);
				add_check(w1b);
			}
		}
		peer_close();
		bench_rehearsal = false;
	}
	w1->ops = w2->ops = w1b->ops = n;
	free(perm);
}

static void run_w3(struct result *res)
{
	for (int r = FIRST_REP; r < (int)reps; r++) {
		uint64_t base = open_instance(n, r), t0, t1;

		for (uint32_t i = 0; i < n; i++)
			peer_arm(i, base + dl_ms[i] * MS);
		t0 = vclock_real_ns();
		for (uint32_t s = 0; s < nstops; s++)
			advance_to(base + stops[s] * MS);
		t1 = vclock_real_ns();
		scan_missed(n, UINT64_MAX);
		end_repetition(res, t0, t1, n);
	}
	res->ops = n;
}

/* W3c, and W3s with @slack_pct percent of each distance as its window. */
static void run_w3c(struct result *res, unsigned slack_pct)
{
	uint32_t per = n / 1000 ? n / 1000 : 1;

	for (int r = FIRST_REP; r < (int)reps; r++) {
		uint64_t base = open_instance(n, r), t = base, t0, t1, first, last;
		uint32_t left = per;

		bench_slack_ns = SPAN_MS * MS / 100 * slack_pct;
		bench_workload = res->name;
		for (uint32_t i = 0; i < n; i++) {
			if (!left--) {
				left = per - 1;
				t += MS;
				advance_to(t);
			}
			if (slack_pct)
				peer_arm_range(i, t + SPAN_MS * MS, bench_slack_ns);
			else
				peer_arm(i, t + SPAN_MS * MS);
		}
		first = base + SPAN_MS * MS;
		last = t + SPAN_MS * MS + bench_slack_ns;
		t0 = vclock_real_ns();
		for (t = first; t <= last; t += MS)
			advance_to(t);
		t1 = vclock_real_ns();
		scan_missed(n, UINT64_MAX);
		end_repetition(res, t0, t1, n);
	}
	res->ops = n;
}

/* W4 and W4r re-arm with the peer's own call; W4d (@del_add) cancels and
 * arms instead, as code ported from an API without a re-arm call does. */
static void run_w4(struct result *res, uint32_t span_ms, bool del_add)
{
	uint64_t ops = n > min_ops ? n : min_ops;
	uint32_t per = n / 1000 ? n / 1000 : 1;
	uint32_t *idx = xmalloc(ops * sizeof(*idx));

	for (uint64_t k = 0; k < ops; k++)
		idx[k] = rnd_below(n);
	for (int r = FIRST_REP; r < (int)reps; r++) {
		uint64_t base = open_instance(n, r), t = base, t0, t1;
		uint32_t left = 0;

		/* 1.8 M is a multiple of span_ms: still uniform. */
		for (uint32_t i = 0; i < n; i++)
			peer_arm(i, base + (1 + (dl_ms[i] - 1) % span_ms) * MS);
		t0 = vclock_real_ns();
		for (uint64_t k = 0; k < ops; k++) {
			if (!left--) {
				left = per - 1;
				t += MS;
				advance_to(t);
			}
			if (del_add) {
				peer_cancel(idx[k]);
				peer_arm(idx[k], t + 30 * SEC);
			} else {
				peer_rearm(idx[k], t + 30 * SEC);
			}
		}
		t1 = vclock_real_ns();
		scan_missed(n, t);
		end_repetition(res, t0, t1, ops);
	}
	res->ops = ops;
	free(idx);
}

/* W5's pool of request timers: a stack of free slots. */
static uint32_t *pool_free;
static uint32_t pool_top;

static void w5_fired(uint32_t i)
{
	pool_free[pool_top++] = i;
}

static void run_w5(struct result *res)
{
	uint64_t reqs = n > min_ops ? n : min_ops;
	uint32_t k = n / 1548 ? n / 1548 : 1;
	uint32_t pool = n + n / 4 + 64 * k + 1024;
	uint32_t long_lived = 1500u * k;
	uint32_t cap = 2 * k + 64;
	uint8_t *kind = xmalloc(reqs);
	uint32_t *ring = xmalloc((size_t)128 * cap * sizeof(*ring));
	uint32_t fill[128];
	uint32_t *ll_ms;

	if (long_lived > n)
		long_lived = n;
	pool_free = xmalloc((size_t)pool * sizeof(*pool_free));
	for (uint64_t q = 0; q < reqs; q++)
		kind[q] = rnd_below(100) < 95 ? (uint8_t)(1 + rnd_below(100)) : 0;
	/* Drawn once, so that every repetition (and the floor's rehearsal)
	 * makes the same calls. */
	ll_ms = xmalloc((size_t)long_lived * sizeof(*ll_ms) + 1);
	for (uint32_t j = 0; j < long_lived; j++)
		ll_ms[j] = 1 + rnd_below(30000);
	for (int r = FIRST_REP; r < (int)reps; r++) {
		uint64_t base = open_instance(pool, r), t = base, t0, t1, q = 0;

		pool_top = 0;
		for (uint32_t i = pool; i-- > 0;)
			pool_free[pool_top++] = i;
		memset(fill, 0, sizeof(fill));
		/* Steady state: the long-lived requests already in flight. */
		for (uint32_t j = 0; j < long_lived; j++)
			peer_arm(pool_free[--pool_top], base + ll_ms[j] * MS);
		bench_on_fire = w5_fired;
		t0 = vclock_real_ns();
		while (q < reqs) {
			uint64_t tick;
			uint32_t *b;

			t += MS;
			advance_to(t);
			tick = t / MS;
			b = ring + (tick & 127) * cap;
			for (uint32_t j = 0; j < fill[tick & 127]; j++) {
				peer_cancel(b[j]);
				pool_free[pool_top++] = b[j];
			}
			fill[tick & 127] = 0;
			for (uint32_t j = 0; j < k && q < reqs; j++) {
				uint32_t i, slot, c = kind[q++];

				if (!pool_top) {
					fprintf(stderr, "bench: W5 pool exhausted\n");
					exit(2);
				}
				i = pool_free[--pool_top];
				peer_arm(i, t + 30 * SEC);
				if (c) {
					slot = (uint32_t)((tick + c) & 127);
					if (fill[slot] == cap) {
						fprintf(stderr, "bench: W5 ring overflow\n");
						exit(2);
					}
					ring[slot * cap + fill[slot]++] = i;
				}
			}
		}
		t1 = vclock_real_ns();
		bench_on_fire = NULL;
		scan_missed(pool, t);
		end_repetition(res, t0, t1, reqs);
	}
	res->ops = reqs;
	free(pool_free);
	free(ring);
	free(kind);
	free(ll_ms);
}

/*
 * adv, the empty advance: N timers armed (untimed) at deadlines uniform in
 * the 30 min after the end of the run, then max(min_ops, 1000) advances
 * of 1 ms each, timed: the clock moves, no timer is due. What a loop pays
 * when it wakes for something else (I/O) with timers pending far ahead.
 */
static void run_adv(struct result *res)
{
	uint64_t ops = min_ops > 1000 ? min_ops : 1000;

	for (int r = FIRST_REP; r < (int)reps; r++) {
		uint64_t base = open_instance(n, r), t = base, t0, t1;
		uint64_t after = base + (ops + 1) * MS;

		for (uint32_t i = 0; i < n; i++)
			peer_arm(i, after + dl_ms[i] * MS);
		t0 = vclock_real_ns();
		for (uint64_t k = 0; k < ops; k++) {
			t += MS;
			advance_to(t);
		}
		t1 = vclock_real_ns();
		scan_missed(n, t);
		end_repetition(res, t0, t1, ops);
	}
	res->ops = ops;
}

static bool wants(const char *list, const char *w)
{
	size_t len = strlen(w);

	for (const char *p = list; (p = strstr(p, w)); p += len)
		if ((p == list || p[-1] == ',') && (p[len] == ',' || p[len] == '\0'))
			return true;
	return false;
}

static void usage(void)
{
	fprintf(stderr, "usage: bench-%s -n N [-w M,W1,W1b,W2,W3,W3c,W3s,W4,W4d,W4r,W5,adv] [-r reps] "
			"[-m min_ops] [-s seed] [-o file.csv]\n", peer_name);
	exit(2);
}

int main(int argc, char **argv)
{
	const char *work = "M,W1,W1b,W2,W3,W3c,W3s,W4,W4d,W4r,W5,adv";
	const char *out = NULL;
	struct result w1 = {.name = "W1"}, w2 = {.name = "W2"}, w3 = {.name = "W3"},
		      w3c = {.name = "W3c"}, w3s = {.name = "W3s"}, w4 = {.name = "W4"}, w4r = {.name = "W4r"},
		      w5 = {.name = "W5"}, w1b = {.name = "W1b"}, w4d = {.name = "W4d"},
		      adv = {.name = "adv"};
	int opt;

	while ((opt = getopt(argc, argv, "n:w:r:m:s:o:")) != -1) {
		switch (opt) {
		case 'n': n = (uint32_t)strtoul(optarg, NULL, 0); break;
		case 'w': work = optarg; break;
		case 'r':
			reps = (unsigned)strtoul(optarg, NULL, 0);
			if (reps < 1 || reps > MAX_REPS)
				usage();
			break;
		case 'm': min_ops = strtoull(optarg, NULL, 0); break;
		case 's': seed = strtoull(optarg, NULL, 0); break;
		case 'o': out = optarg; break;
		default: usage();
		}
	}
	if (n < 1 || n > 100000000 || reps < 1 || reps > 64)
		usage();
	if (out) {
		csv = fopen(out, "a");
		if (!csv) {
			perror(out);
			return 2;
		}
	}
	/* The clock starts at 1000 s so that no peer sees a time near 0. */
	bench_vnow = 1000 * SEC;
	rng_state = seed;
	make_deadlines();

	if (wants(work, "M"))
		run_memory();
	if (wants(work, "W1") || wants(work, "W2") || wants(work, "W1b"))
		run_w1w2(&w1, &w2, &w1b, wants(work, "W1b"));
	if (wants(work, "W3"))
		run_w3(&w3);
	if (wants(work, "W3c"))
		run_w3c(&w3c, 0);
	if (wants(work, "W3s") && PEER_HAS_RANGE)
		run_w3c(&w3s, 1);
	if (wants(work, "W4"))
		run_w4(&w4, 30000, false);
	if (wants(work, "W4d"))
		run_w4(&w4d, 30000, true);
	if (wants(work, "W4r"))
		run_w4(&w4r, SPAN_MS, false);
	if (wants(work, "W5"))
		run_w5(&w5);
	if (wants(work, "adv"))
		run_adv(&adv);
	if (wants(work, "W1"))
		report(&w1);
	if (wants(work, "W1b"))
		report(&w1b);
	if (wants(work, "W2"))
		report(&w2);
	report(&w3);
	report(&w3c);
	report(&w3s);
	report(&w4);
	report(&w4d);
	report(&w4r);
	report(&w5);
	report(&adv);

	printf("# %s clock calls: MONOTONIC %" PRIu64 ", MONOTONIC_COARSE %" PRIu64 ", REALTIME %" PRIu64
	       ", other %" PRIu64 ", gettimeofday %" PRIu64 ", time %" PRIu64 "; epoll_wait %" PRIu64
	       " (sleeping %" PRIu64 ")\n",
	       peer_name, vclock_counts.mono, vclock_counts.mono_coarse, vclock_counts.realtime,
	       vclock_counts.other_clock, vclock_counts.gettimeofday, vclock_counts.time,
	       vclock_counts.polls, vclock_counts.sleeps);
	if (vclock_counts.sleeps) {
		fprintf(stderr, "bench: %s tried to sleep\n", peer_name);
		failed = true;
	}
	if (csv)
		fclose(csv);
	free(dl_ms);
	free(stops);
	return failed ? 1 : 0;
}
