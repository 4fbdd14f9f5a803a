/* SPDX-License-Identifier: MIT */
/*
 * How long another process waited for a CPU while it was ready to run, and
 * when: what a loaded machine added to the lateness of what it did then. A
 * server test's client measures its own stalls; these are its server's.
 */
#ifndef TW_TESTS_RUNQUEUE_WAIT_H
#define TW_TESTS_RUNQUEUE_WAIT_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/types.h>

/*
 * The time, in ns, that @pid's main thread, where the servers' loops run
 * and fire their timers, has spent runnable but not running since it
 * started: the second figure of /proc/PID/task/PID/schedstat. One thread's
 * figure only grows (a sum over threads would shrink as a worker exits,
 * and count one delay once per thread waiting with it). 0 where the
 * kernel does not say (no /proc, no schedstat): a bound that adds it is
 * then the bound without it.
 */
static inline uint64_t tw_test_runqueue_wait_ns(pid_t pid)
{
	char path[64];
	unsigned long long run, wait;
	uint64_t ns = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/task/%d/schedstat", (int)pid, (int)pid);
	f = fopen(path, "r");
	if (!f)
		return 0;
	if (fscanf(f, "%llu %llu", &run, &wait) == 2)
		ns = wait;
	fclose(f);
	return ns;
}

/* That wait, sampled over a run: at and after at[i], the total was wait[i]. */
struct tw_test_waits {
	pid_t pid;
	size_t n, cap;
	uint64_t *at, *wait;
};

/* A sample at @now, at most one a millisecond. */
static inline void tw_test_waits_sample(struct tw_test_waits *s, uint64_t now)
{
	if (s->n && now - s->at[s->n - 1] < 1000000u)
		return;
	if (s->n == s->cap) {
		size_t cap = s->cap ? 2 * s->cap : 4096;
		uint64_t *at = realloc(s->at, cap * sizeof(*at)), *wait;

		if (!at)
			return;
		s->at = at;
		wait = realloc(s->wait, cap * sizeof(*wait));
		if (!wait)
			return;
		s->wait = wait;
		s->cap = cap;
	}
	s->at[s->n] = now;
	s->wait[s->n] = tw_test_runqueue_wait_ns(s->pid);
	s->n++;
}

/*
 * How long the process waited for a CPU between @from and @to, at most:
 * from the last sample at or before @from to the first at or after @to
 * (the run's ends where there is none), and never more than the time
 * between those samples. A sample that failed (0) gives 0, not a wrap.
 */
static inline uint64_t tw_test_waits_between(const struct tw_test_waits *s, uint64_t from, uint64_t to)
{
	size_t lo = 0, hi = s->n;

	if (!s->n)
		return 0;
	while (lo + 1 < s->n && s->at[lo + 1] <= from)
		lo++;
	while (hi > lo + 1 && s->at[hi - 2] >= to)
		hi--;
	if (s->wait[hi - 1] <= s->wait[lo])
		return 0;
	uint64_t waited = s->wait[hi - 1] - s->wait[lo], span = s->at[hi - 1] - s->at[lo];
	return waited < span ? waited : span;
}

static inline void tw_test_waits_free(struct tw_test_waits *s)
{
	free(s->at);
	free(s->wait);
	s->at = s->wait = NULL;
	s->n = s->cap = 0;
}

#endif
