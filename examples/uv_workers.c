/* SPDX-License-Identifier: MIT */
/*
 * uv_workers: timeouts armed and cancelled from worker threads, on the
 * loops that own them.
 *
 *   uv_workers [SECONDS [WORKERS]]      (defaults: 2, 4)
 *
 * Two libuv loops, each in a thread of its own with its own wheel
 * (created here, attached to the loop with tw_uv_attach(), destroyed here
 * once the loop is done), hold 200 sessions each, every session with a
 * timeout. Attached with TW_UV_HOLD, the backend keeps each loop running
 * while the workers may post, even when no timeout is armed; the main
 * thread ends each loop by posting it a timer whose callback closes the
 * backend.
 * A pool of worker threads does the sessions' work: when a worker finishes
 * a piece of a session's work, it pushes the session's timeout 50 ms ahead
 * with tw_post_mod(), whether or not its last push has reached the loop
 * yet (a push still queued is replaced: the latest deadline wins); when it
 * finishes the session, it cancels the timeout with tw_post_del() and
 * waits until the cancel is done (tw_request_wait_timeout(), at most 10 s),
 * after which the timeout can never fire; now and then it drops a session
 * without a word, and that session's timeout fires on its loop.
 *
 * No lock around the wheels: the loops apply the requests themselves, and
 * a request that needs a loop sooner wakes it through the backend's
 * uv_async_t. A push that races the timeout's firing is applied after it
 * and arms the timeout again (the header's rule), so a session may time
 * out twice; a program would check its own state in the callback. Exits 0
 * if every session timed out, never before its deadline, or was cancelled
 * and never fired after the cancel was done.
 */
#define _POSIX_C_SOURCE 200809L

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <timerwheel/uv.h>

#define NLOOPS 2
#define SESSIONS 200 /* per loop */
#define MS 1000000ull

struct session {
	struct tw_timer timeout;
	struct tw_request req;
	struct loop *loop;
	int fired;            /* by the loop: the timeout ran */
	int early;            /* ... before its expiry */
	int cancelled;        /* by the worker: its cancel is done (-1: dropped) */
	int fired_at_cancel;  /* fired, as the worker saw it then */
};

struct loop {
	pthread_t thread;
	uv_loop_t uv;
	struct tw_uv timers;
	struct tw_wheel *w; /* ours: the workers post to it, the loop drives it */
	struct tw_timer quit; /* posted at the end: its callback closes the backend */
	struct tw_request quit_req;
	struct session sessions[SESSIONS];
	unsigned long expired;
};

static struct loop loops[NLOOPS];
static int stop_workers; /* atomic */

static void on_timeout(struct tw_timer *t)
{
	struct session *s = tw_container_of(t, struct session, timeout);

	if (tw_uv_now() < t->expires)
		s->early++;
	__atomic_fetch_add(&s->fired, 1, __ATOMIC_RELEASE);
	s->loop->expired++;
}

static void on_quit(struct tw_timer *t)
{
	struct loop *l = tw_container_of(t, struct loop, quit);

	tw_uv_close(&l->timers, NULL);
}

static void *run_loop(void *arg)
{
	struct loop *l = arg;

	uv_run(&l->uv, UV_RUN_DEFAULT);
	return NULL;
}

struct worker {
	pthread_t thread;
	unsigned id, nworkers;
	uint64_t rng;
	unsigned long pushed, replaced, finished, dropped, stuck;
};

static uint64_t next_rand(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

/* A worker owns the sessions whose number it divides evenly, so one
 * session's requests come from one thread, one at a time. */
static void *work(void *arg)
{
	struct worker *wk = arg;

	while (!__atomic_load_n(&stop_workers, __ATOMIC_ACQUIRE)) {
		uint64_t x = next_rand(&wk->rng);
		struct loop *l = &loops[x % NLOOPS];
		unsigned i = (unsigned)(x >> 8) % (SESSIONS / wk->nworkers) * wk->nworkers + wk->id;
		struct session *s = &l->sessions[i];
		struct tw_wheel *w = l->w;
		struct timespec pause = { 0, (long)(x >> 40) % 100000 }; /* the work itself */
		int r;

		if (s->cancelled || __atomic_load_n(&s->fired, __ATOMIC_ACQUIRE))
			continue; /* over */
		nanosleep(&pause, NULL);
		switch ((x >> 20) % 100) {
		case 0: /* drop it: its timeout will fire */
			wk->dropped++;
			s->cancelled = -1;
			break;
		case 1: case 2: case 3: /* finished: cancel (replacing a push still queued), and wait */
			if (tw_post_del(w, &s->req, &s->timeout) < 0)
				break;
			if (tw_request_wait_timeout(w, &s->req, 10000 * MS) < 0) {
				wk->stuck++; /* the loop did not apply it in 10 s */
				s->cancelled = -1;
				break;
			}
			s->fired_at_cancel = __atomic_load_n(&s->fired, __ATOMIC_ACQUIRE);
			s->cancelled = 1;
			wk->finished++;
			break;
		default: /* more work done: push its timeout 50 ms ahead */
			r = tw_post_mod(w, &s->req, &s->timeout, tw_uv_now() + 50 * MS);
			if (r >= 0) {
				wk->pushed++;
				wk->replaced += r; /* 1: it replaced a push still queued */
			}
			break;
		}
	}
	return NULL;
}

int main(int argc, char **argv)
{
	double seconds = argc > 1 ? atof(argv[1]) : 2;
	unsigned nworkers = argc > 2 ? (unsigned)atoi(argv[2]) : 4;
	struct worker *workers;
	struct timespec run;
	unsigned long pushed = 0, replaced = 0, finished = 0, dropped = 0, stuck = 0, expired = 0, bad = 0, open = 0;

	if (seconds <= 0 || nworkers < 1 || nworkers > 64 || SESSIONS % nworkers) {
		fprintf(stderr, "usage: uv_workers [SECONDS [WORKERS]] (WORKERS divides %d)\n", SESSIONS);
		return 2;
	}
	for (int k = 0; k < NLOOPS; k++) {
		struct loop *l = &loops[k];
		if (uv_loop_init(&l->uv) || tw_wheel_create(&l->w, NULL, tw_uv_now()) ||
		    tw_uv_attach(&l->uv, &l->timers, l->w, TW_UV_HOLD))
			return 1;
		tw_timer_init(&l->quit, on_quit);
		for (int i = 0; i < SESSIONS; i++) {
			l->sessions[i].loop = l;
			tw_timer_init(&l->sessions[i].timeout, on_timeout);
			/* Before the loop runs: the owner may arm directly. */
			tw_add(l->w, &l->sessions[i].timeout, tw_uv_now() + 50 * MS);
		}
		pthread_create(&l->thread, NULL, run_loop, l);
	}
	workers = calloc(nworkers, sizeof(*workers));
	for (unsigned i = 0; i < nworkers; i++) {
		workers[i] = (struct worker){ .id = i, .nworkers = nworkers, .rng = 88172645463325252ull + i };
		pthread_create(&workers[i].thread, NULL, work, &workers[i]);
	}
	run.tv_sec = (time_t)seconds;
	run.tv_nsec = (long)((seconds - (double)run.tv_sec) * 1e9);
	nanosleep(&run, NULL);
	__atomic_store_n(&stop_workers, 1, __ATOMIC_RELEASE);
	for (unsigned i = 0; i < nworkers; i++) {
		pthread_join(workers[i].thread, NULL);
		pushed += workers[i].pushed;
		replaced += workers[i].replaced;
		stuck += workers[i].stuck;
		finished += workers[i].finished;
		dropped += workers[i].dropped;
	}
	/* The workers are gone: let the timeouts still armed run out (50 ms
	 * at most, longer on a loaded machine), then close each loop from its
	 * own thread. */
	for (int waited = 0; waited < 2000; waited++) {
		unsigned long left = 0;
		for (int k = 0; k < NLOOPS; k++)
			for (int i = 0; i < SESSIONS; i++) {
				struct session *s = &loops[k].sessions[i];
				left += s->cancelled != 1 && !__atomic_load_n(&s->fired, __ATOMIC_ACQUIRE);
			}
		if (!left)
			break;
		run.tv_sec = 0;
		run.tv_nsec = 10 * 1000000L;
		nanosleep(&run, NULL);
	}
	for (int k = 0; k < NLOOPS; k++) {
		if (tw_post_mod(loops[k].w, &loops[k].quit_req, &loops[k].quit, tw_uv_now()) != 0)
			return 1;
		pthread_join(loops[k].thread, NULL);
		uv_loop_close(&loops[k].uv);
		tw_wheel_destroy(loops[k].w); /* the backend let go of it; the workers are gone */
		expired += loops[k].expired;
		for (int i = 0; i < SESSIONS; i++) {
			struct session *s = &loops[k].sessions[i];
			if (s->early || (s->cancelled == 1 && s->fired != s->fired_at_cancel))
				bad++;
			if (!s->fired && s->cancelled != 1)
				open++;
		}
	}
	printf("uv_workers: %d loops x %d sessions, %u workers, %.1f s: %lu timeouts pushed (%lu replacing a push "
	       "still queued) and %lu cancelled from the workers, %lu sessions dropped; %lu timeouts fired on their "
	       "loops\n",
	       NLOOPS, SESSIONS, nworkers, seconds, pushed, replaced, finished, dropped, expired);
	if (stuck)
		printf("uv_workers: %lu cancels not applied within 10 s\n", stuck);
	printf("uv_workers: %s\n", bad || open || stuck ? "FAILED" :
	       "OK, every session timed out, never early, or was cancelled and never fired after");
	free(workers);
	return bad || open || stuck ? 1 : 0;
}
