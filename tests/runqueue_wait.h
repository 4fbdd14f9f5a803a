/* SPDX-License-Identifier: MIT */
/*
 * How long another process waited for a CPU while it was ready to run, and
 * when: what a loaded machine added to the lateness of what it did then. A
 * server test's client measures its own stalls; these are its server's.
 */
#ifndef TW_TESTS_RUNQUEUE_WAIT_H
#define TW_TESTS_RUNQUEUE_WAIT_H

#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/types.h>

/*
 * The time, in ns, that @pid's threads have spent runnable but not running
 * since they started: the second figure of each /proc/PID/task/TID/schedstat.
 * 0 where the kernel does not say (no /proc, no schedstat): a bound that
 * adds it is then the bound without it.
 */
static inline uint64_t tw_test_runqueue_wait_ns(pid_t pid)
{
	char path[64];
	struct dirent *e;
	uint64_t sum = 0;
	DIR *d;

	snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
	d = opendir(path);
	if (!d)
		return 0;
	while ((e = readdir(d)) != NULL) {
		unsigned long long run, wait;
		char file[sizeof(path) + sizeof(e->d_name) + 16];
		FILE *f;

		if (e->d_name[0] == '.')
			continue;
		snprintf(file, sizeof(file), "%s/%s/schedstat", path, e->d_name);
		f = fopen(file, "r");
		if (!f)
			continue;
		if (fscanf(f, "%llu %llu", &run, &wait) == 2)
			sum += wait;
		fclose(f);
	}
	closedir(d);
	return sum;
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
 * (the run's ends where there is none).
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
	return s->wait[hi - 1] - s->wait[lo];
}

static inline void tw_test_waits_free(struct tw_test_waits *s)
{
	free(s->at);
	free(s->wait);
	s->at = s->wait = NULL;
	s->n = s->cap = 0;
}

#endif
