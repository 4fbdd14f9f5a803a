/* SPDX-License-Identifier: MIT */
/*
 * Requests from other threads (tw_post_mod(), tw_post_del()) racing the
 * owner: producer threads re-arm and cancel their own timers while the
 * owner advances a virtual clock, fires them and drains the queue; at the
 * end the wheel is destroyed while the producers are still posting.
 *
 * Each producer keeps the exact state of its timers from the results of
 * its done requests, and the callbacks record every firing, so:
 *   - lost:      a timer whose last done request armed it for E has fired
 *                with expiry E by the end of time;
 *   - duplicate: a timer never fires twice for one arm (its expiries only
 *                grow, so a firing with an expiry it already fired with is
 *                a second one);
 *   - cancelled: a timer never fires after a done cancel, until it is
 *                re-armed;
 *   - early:     never before its expiry by the owner's clock;
 * and ThreadSanitizer (the tsan build in CI) and ASan check the rest.
 *
 * Usage: test_requests [seconds [producers [posts]]]  (default 2 s, 3
 * producers, 10^6 posts; posts 0: no count, the time alone, as the soak
 * runs for minutes). Each race ends when its producers have posted `posts`
 * requests, or once `seconds` have passed, whichever comes first (see
 * race_over()).
 */
#define _GNU_SOURCE /* pthread_tryjoin_np */
#include <pthread.h>
#include <sched.h>
#ifndef _WIN32
#include <sys/resource.h>
#endif
#include <time.h>
#ifdef _WIN32
#define pthread_tryjoin_np _pthread_tryjoin /* winpthreads' name */
#endif

#include <timerwheel/debug.h>

#include "common.h"

#define TIMERS_PER_PRODUCER 64
#define MAX_PRODUCERS 8
#define TICK 1000u /* 1 us ticks: the virtual clock moves fast */

struct rtimer {
	struct tw_timer t;
	struct tw_request req;
	/* Written by the owner's callback, read by the producer. */
	uint64_t fires;         /* atomic */
	uint64_t last_fired;    /* atomic: the expiry of the last firing */
	/* The producer's own model. */
	int last_op;            /* 0 none, 1 mod, 2 del: the request in req */
	uint64_t last_expires;  /* of the last mod posted */
	int armed;              /* per the done requests */
	uint64_t armed_for;
	int cancelled;          /* a done cancel, no mod since */
	uint64_t fires_at_cancel;
	int quiet;              /* cancelled, and left alone until the clock passed last_expires */
};

struct producer {
	pthread_t thread;
	int id;
	uint64_t rng;
	struct rtimer timers[TIMERS_PER_PRODUCER];
	uint64_t posts, refused, replaced, waits, mods, dels; /* posts, refused, replaced: atomic, the owner watches them */
	uint64_t quiet_cancels; /* atomic: done cancels checked after the clock passed every expiry they had */
	int failures;
	const char *why;
};

static struct tw_wheel *wheel;
static uint64_t owner_now;     /* atomic: the owner's clock, for the producers */
static int stop_posting;       /* atomic */
static int destroyed_phase;    /* atomic: the wheel was destroyed */
static uint64_t wakes;         /* atomic */
static uint64_t early, dup;    /* owner only */

static void on_fire(struct tw_timer *t)
{
	struct rtimer *r = tw_container_of(t, struct rtimer, t);
	uint64_t now = __atomic_load_n(&owner_now, __ATOMIC_RELAXED);

	if (t->expires > now)
		early++;
	if (t->expires <= __atomic_load_n(&r->last_fired, __ATOMIC_RELAXED) &&
	    __atomic_load_n(&r->fires, __ATOMIC_RELAXED))
		dup++;
	__atomic_store_n(&r->last_fired, t->expires, __ATOMIC_RELAXED);
	__atomic_fetch_add(&r->fires, 1, __ATOMIC_RELEASE);
}

static void on_wake(struct tw_wheel *w, void *arg)
{
	(void)w;
	(void)arg;
	__atomic_fetch_add(&wakes, 1, __ATOMIC_RELAXED);
}

static void fail_in(struct producer *p, const char *why)
{
	if (!p->failures++)
		p->why = why;
}

/* A done request: fold its result into the model. */
static void settle(struct producer *p, struct rtimer *r)
{
	int res = tw_request_result(&r->req);

	if (res == -TW_ESHUTDOWN)
		return;
	if (res != 0 && res != 1)
		fail_in(p, "a request failed");
	if (r->last_op == 1) {
		r->armed = 1;
		r->armed_for = r->last_expires;
		r->cancelled = 0;
	} else if (r->last_op == 2) {
		r->armed = 0;
		r->cancelled = 1;
		r->fires_at_cancel = __atomic_load_n(&r->fires, __ATOMIC_ACQUIRE);
		/* Sometimes leave the timer alone until the owner's clock has
		 * passed every expiry it was ever armed for: a firing after the
		 * done cancel would then have happened, and is looked for below. */
		r->quiet = r->last_expires % 4 == 0;
	}
	r->last_op = 0;
}

/* The window of a ranged post, a function of its expiry so that the
 * callback knows it: 0 to 63 ticks. */
static uint64_t slack_of(uint64_t e)
{
	return (e * 0x9e3779b97f4a7c15ull >> 58) * TICK;
}

/* Post a cancel (one in `del_every`), or a re-arm, ranged or not, to an
 * expiry later than the timer's last: expiries only grow, so a firing says
 * which arm it was. */
static int post_random(struct producer *p, struct rtimer *r, uint64_t x, unsigned del_every, int ranged)
{
	uint64_t e;

	if (x % del_every == 0) {
		r->last_op = 2;
		p->dels++;
		return tw_post_del(wheel, &r->req, &r->t);
	}
	e = __atomic_load_n(&owner_now, __ATOMIC_RELAXED) + (x >> 8) % (40 * TICK);
	if (e <= r->last_expires)
		e = r->last_expires + 1;
	r->last_expires = e;
	r->last_op = 1;
	r->cancelled = 0; /* a cancel's promise ends with the next re-arm, done or not */
	p->mods++;
	if (ranged)
		return tw_post_mod_range(wheel, &r->req, &r->t, e, slack_of(e));
	return tw_post_mod(wheel, &r->req, &r->t, e);
}

static void *produce(void *arg)
{
	struct producer *p = arg;

	while (!__atomic_load_n(&stop_posting, __ATOMIC_ACQUIRE)) {
		struct rtimer *r = &p->timers[test_rand(&p->rng) % TIMERS_PER_PRODUCER];
		uint64_t x = test_rand(&p->rng);
		int rc;

		if (r->last_op) {
			if (!tw_request_done(&r->req)) {
				/* Sometimes wait, as del_timer_sync() does; not for a
				 * request that raced the destroy: it completes only
				 * when the wheel is released, after the join. */
				if (x % 64 == 0 && !__atomic_load_n(&destroyed_phase, __ATOMIC_ACQUIRE)) {
					p->waits++;
					tw_request_wait(wheel, &r->req);
				} else {
					continue;
				}
			}
			settle(p, r);
		}
		/* No firing since a done cancel. */
		if (r->cancelled && __atomic_load_n(&r->fires, __ATOMIC_ACQUIRE) != r->fires_at_cancel)
			fail_in(p, "a timer fired after its cancel was done");
		if (r->quiet) {
			if (__atomic_load_n(&owner_now, __ATOMIC_ACQUIRE) <= r->last_expires + 2 * TICK)
				continue;
			r->quiet = 0;
			__atomic_store_n(&p->quiet_cancels, p->quiet_cancels + 1, __ATOMIC_RELAXED);
		}
		rc = post_random(p, r, x, 3, 0);
		if (rc == -TW_ESHUTDOWN) {
			__atomic_store_n(&p->refused, p->refused + 1, __ATOMIC_RELEASE);
			r->last_op = 0;
			break;
		}
		if (rc != 0)
			fail_in(p, "a post failed");
		__atomic_store_n(&p->posts, p->posts + 1, __ATOMIC_RELAXED);
		if (x % 16 == 0)
			sched_yield();
	}
	return NULL;
}

static double seconds(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static double run_seconds = 2;
static int nproducers = 3;
static uint64_t race_posts = 1000000;

/* What the producers have done so far, as the owner sees it. */
struct race_counts {
	uint64_t posts, quiet, refused, replaced;
};

static struct race_counts race_count(struct producer *prod)
{
	struct race_counts c = { 0, 0, 0, 0 };

	for (int i = 0; i < nproducers; i++) {
		c.posts += __atomic_load_n(&prod[i].posts, __ATOMIC_RELAXED);
		c.quiet += __atomic_load_n(&prod[i].quiet_cancels, __ATOMIC_RELAXED);
		c.refused += __atomic_load_n(&prod[i].refused, __ATOMIC_RELAXED);
		c.replaced += __atomic_load_n(&prod[i].replaced, __ATOMIC_RELAXED);
	}
	return c;
}

/*
 * How long a race runs: not for a time whose work follows the machine's
 * load, nor for a count whose time does. It ends when the producers have
 * posted race_posts requests, or once run_seconds have passed; either way
 * only after it has done the least that judges it (`least`): requests
 * posted, and what the race's checks look at. A busy machine, or valgrind
 * running one thread at a time, can keep the producers idle for a while,
 * so the least is waited for; but a machine that cannot post a hundred
 * requests in RACE_STUCK seconds is not slow: a post or the owner is
 * stuck, and *stuck says so.
 */
#define RACE_STUCK 30.0

static bool race_over(struct producer *prod, double t0, bool (*least)(const struct race_counts *), bool *stuck)
{
	struct race_counts c = race_count(prod);
	double t = seconds() - t0;

	if (!least(&c)) {
		*stuck = t >= RACE_STUCK;
		return *stuck;
	}
	return (race_posts && c.posts >= race_posts) || t >= run_seconds;
}

static bool posted_some(const struct race_counts *c)
{
	return c->posts >= 100;
}

/* Done cancels watched past their expiries, too: the cancel check's. */
static bool posted_and_watched(const struct race_counts *c)
{
	return c->posts >= 100 && c->quiet > 0;
}

/* Producers, each on timers of its own, started on `body`. */
static void start_producers(struct producer *prod, uint64_t seed, void (*fn)(struct tw_timer *),
			    void *(*body)(void *))
{
	for (int i = 0; i < nproducers; i++) {
		struct producer *p = &prod[i];
		memset(p, 0, sizeof(*p));
		p->id = i;
		p->rng = seed + (uint64_t)i * 7919;
		for (int k = 0; k < TIMERS_PER_PRODUCER; k++)
			tw_timer_init(&p->timers[k].t, fn);
	}
	for (int i = 0; i < nproducers; i++)
		assert_int_equal(pthread_create(&prod[i].thread, NULL, body, &prod[i]), 0);
}

/* The owner's side of a race: advances its virtual clock from `now` until
 * race_over(); returns the clock. Looks at the producers' counts every 64
 * advances, not to slow their posts. */
static uint64_t owner_races(uint64_t now, uint64_t *seed, struct producer *prod,
			    bool (*least)(const struct race_counts *), bool *stuck)
{
	double t0 = seconds();

	for (unsigned n = 1;; n++) {
		uint64_t x = test_rand(seed);
		now += (x % 3) * TICK + x % TICK;
		__atomic_store_n(&owner_now, now, __ATOMIC_RELAXED);
		assert_true(tw_advance(wheel, now) >= 0);
		if (n % 64 == 0 && race_over(prod, t0, least, stuck))
			return now;
	}
}

static void fail_if_stuck(bool stuck, struct producer *prod)
{
	struct race_counts c = race_count(prod);

	if (stuck)
		fail_msg("stuck: %llu requests posted, %llu done cancels watched, in %.0f s",
			 (unsigned long long)c.posts, (unsigned long long)c.quiet, RACE_STUCK);
}

static void test_requests_race(void **state)
{
	static struct producer prod[MAX_PRODUCERS];
	struct tw_config cfg = { .tick_ns = TICK };
	uint64_t seed = test_seed(), now = 1000000, applied = 0, total_posts = 0;
	double t0;
	bool stuck = false;

	(void)state;
	assert_int_equal(tw_wheel_create(&wheel, &cfg, now), 0);
	assert_int_equal(tw_set_wake(wheel, on_wake, NULL), 0);
	/* A hook holds the wheel's memory after tw_wheel_destroy(), so the
	 * producers may race the destroy itself (the header's rule). */
	assert_int_equal(tw_set_notify(wheel, test_hold_hook, NULL), 0);
	__atomic_store_n(&owner_now, now, __ATOMIC_RELAXED);
	__atomic_store_n(&stop_posting, 0, __ATOMIC_RELAXED);
	__atomic_store_n(&destroyed_phase, 0, __ATOMIC_RELAXED);
	early = dup = 0;
	start_producers(prod, seed, on_fire, produce);

	/* Race: requests against firings against cancels, until race_over(). */
	t0 = seconds();
	for (unsigned n = 1; n % 64 || !race_over(prod, t0, posted_and_watched, &stuck); n++) {
		uint64_t x = test_rand(&seed);
		now += (x % 3) * TICK + x % TICK;
		__atomic_store_n(&owner_now, now, __ATOMIC_RELAXED);
		int r = x % 8 == 0 ? tw_drain(wheel) : tw_advance(wheel, now);
		assert_true(r >= 0);
		if (x % 8 == 0)
			applied += (uint64_t)r;
	}
	/* Race the destroy: producers are still posting, until each is
	 * refused (or a quarter of the race's time has passed: a producer
	 * can be waiting for requests that raced the destroy). They stop
	 * waiting for requests first: one that slips past the destroy's
	 * refusal is done only when the wheel is released, after the join. */
	__atomic_store_n(&destroyed_phase, 1, __ATOMIC_RELEASE);
	tw_wheel_destroy(wheel);
	for (double t1 = seconds(), race = t1 - t0;
	     !stuck && race_count(prod).refused < (uint64_t)nproducers && seconds() - t1 < race / 4;)
		sched_yield();
	__atomic_store_n(&stop_posting, 1, __ATOMIC_RELEASE);
	for (int i = 0; i < nproducers; i++)
		pthread_join(prod[i].thread, NULL);
	/* Releasing the wheel completes what raced the destroy. */
	assert_int_equal(tw_set_notify(wheel, NULL, NULL), 0);
	wheel = NULL;
	fail_if_stuck(stuck, prod);

	for (int i = 0; i < nproducers; i++) {
		struct producer *p = &prod[i];
		total_posts += p->posts;
		if (p->failures)
			fail_msg("producer %d: %s (%d failures)", i, p->why, p->failures);
		for (int k = 0; k < TIMERS_PER_PRODUCER; k++) {
			struct rtimer *r = &p->timers[k];
			if (r->last_op) {
				assert_true(tw_request_done(&r->req)); /* nobody waits forever */
				settle(p, r);
			}
			if (r->cancelled && r->fires != r->fires_at_cancel)
				fail_msg("producer %d timer %d fired after its cancel was done", i, k);
			assert_false(tw_pending(&r->t)); /* destroyed: all idle */
		}
	}
	assert_int_equal(early, 0);
	assert_int_equal(dup, 0);
	uint64_t quiet = 0;
	for (int i = 0; i < nproducers; i++)
		quiet += prod[i].quiet_cancels;
	fprintf(stderr,
		"# %d producers, %.2f s: %llu requests posted, %llu applied by tw_drain, %llu wake-ups, %llu done "
		"cancels watched past their expiries\n",
		nproducers, seconds() - t0, (unsigned long long)total_posts, (unsigned long long)applied,
		(unsigned long long)__atomic_load_n(&wakes, __ATOMIC_RELAXED), (unsigned long long)quiet);
	assert_true(total_posts >= 100); /* race_over()'s least */
	assert_true(quiet > 0); /* the cancel check had something to check */
}

/* Once the clock has passed every expiry: no producer failed, no timer
 * fired after a done cancel, and every timer that its done requests left
 * armed fired with its last expiry. Returns the number of those. */
static uint64_t check_the_end(struct producer *prod)
{
	uint64_t armed = 0;

	for (int i = 0; i < nproducers; i++) {
		if (prod[i].failures)
			fail_msg("producer %d: %s", i, prod[i].why);
		for (int k = 0; k < TIMERS_PER_PRODUCER; k++) {
			struct rtimer *r = &prod[i].timers[k];
			if (r->cancelled && r->fires != r->fires_at_cancel)
				fail_msg("producer %d timer %d fired after its cancel was done", i, k);
			if (!r->armed)
				continue;
			armed++;
			if (r->last_fired != r->armed_for)
				fail_msg("producer %d timer %d: armed for %llu, last fired %llu: lost", i, k,
					 (unsigned long long)r->armed_for, (unsigned long long)r->last_fired);
		}
	}
	return armed;
}

/* No loss: the same race, then the producers stop, wait for their last
 * requests, and the owner runs to the end of time; every timer whose last
 * request armed it has fired with that expiry. */
static void test_requests_nothing_lost(void **state)
{
	static struct producer prod[MAX_PRODUCERS];
	struct tw_config cfg = { .tick_ns = TICK };
	uint64_t seed = test_seed() ^ 0xabc, now = 1000000, armed_at_end = 0;
	bool stuck = false;
	double t0 = seconds();

	(void)state;
	assert_int_equal(tw_wheel_create(&wheel, &cfg, now), 0);
	assert_int_equal(tw_set_wake(wheel, on_wake, NULL), 0);
	__atomic_store_n(&owner_now, now, __ATOMIC_RELAXED);
	__atomic_store_n(&stop_posting, 0, __ATOMIC_RELAXED);
	__atomic_store_n(&destroyed_phase, 0, __ATOMIC_RELAXED);
	early = dup = 0;
	start_producers(prod, seed, on_fire, produce);
	now = owner_races(now, &seed, prod, posted_some, &stuck);
	__atomic_store_n(&stop_posting, 1, __ATOMIC_RELEASE);
	/* The producers may be waiting for requests: keep applying them. */
	for (int joined = 0; joined < nproducers;) {
		assert_true(tw_drain(wheel) >= 0);
		if (pthread_tryjoin_np(prod[joined].thread, NULL) == 0)
			joined++;
		else
			sched_yield();
	}
	assert_true(tw_drain(wheel) >= 0);
	fail_if_stuck(stuck, prod);
	for (int i = 0; i < nproducers; i++)
		for (int k = 0; k < TIMERS_PER_PRODUCER; k++) {
			struct rtimer *r = &prod[i].timers[k];
			if (r->last_op) {
				assert_true(tw_request_done(&r->req));
				settle(&prod[i], r);
			}
		}
	__atomic_store_n(&owner_now, UINT64_MAX, __ATOMIC_RELAXED);
	assert_true(tw_advance(wheel, UINT64_MAX) >= 0);
	assert_int_equal(tw_count(wheel), 0);
	armed_at_end = check_the_end(prod);
	fprintf(stderr, "# nothing lost, %.2f s, %llu requests posted: %llu timers armed at the end fired with "
		"their last expiry\n", seconds() - t0, (unsigned long long)race_count(prod).posts,
		(unsigned long long)armed_at_end);
	assert_int_equal(early, 0);
	assert_int_equal(dup, 0);
	assert_true(armed_at_end > 0); /* the end's check looked at some */
	assert_int_equal(tw_check(wheel), 0);
	tw_wheel_destroy(wheel);
}

/* The rules a poster can check alone. */
static void test_request_errors(void **state)
{
	struct tw_wheel *w;
	struct tw_timer t;
	struct tw_request req;

	(void)state;
	memset(&req, 0, sizeof(req));
	assert_int_equal(tw_wheel_create(&w, NULL, 0), 0);
	tw_timer_init(&t, on_fire);
	assert_int_equal(tw_post_mod(NULL, &req, &t, 1), -EINVAL);
	assert_int_equal(tw_post_mod(w, NULL, &t, 1), -EINVAL);
	assert_int_equal(tw_post_mod(w, &req, NULL, 1), -EINVAL);
	assert_int_equal(tw_post_mod_range(NULL, &req, &t, 1, 1), -EINVAL);
	assert_int_equal(tw_post_mod_range(w, NULL, &t, 1, 1), -EINVAL);
	assert_int_equal(tw_post_mod_range(w, &req, NULL, 1, 1), -EINVAL);
	assert_int_equal(tw_post_del(NULL, &req, &t), -EINVAL);
	assert_int_equal(tw_post_del(w, NULL, &t), -EINVAL);
	assert_int_equal(tw_post_del(w, &req, NULL), -EINVAL);
	assert_int_equal(tw_request_result(NULL), -EINVAL);
	assert_false(tw_request_done(NULL));
	assert_int_equal(tw_request_result(&req), -EBUSY);
	assert_int_equal(tw_request_wait(w, &req), -EINVAL); /* never posted */
	assert_int_equal(tw_request_wait(NULL, &req), -EINVAL);
	assert_int_equal(tw_request_wait(w, NULL), -EINVAL);
	assert_int_equal(tw_request_wait_timeout(w, &req, 0), -EINVAL); /* never posted */
	assert_int_equal(tw_request_wait_timeout(NULL, &req, 0), -EINVAL);
	assert_int_equal(tw_request_wait_timeout(w, NULL, 0), -EINVAL);
	assert_false(tw_request_done(&req));
	assert_int_equal(tw_post_mod(w, &req, &t, 5000000), 0);
	assert_int_equal(tw_post_mod(w, &req, &t, 6000000), 1); /* replaces the queued post */
	assert_false(tw_pending(&t));                              /* not applied yet */
	assert_false(tw_request_done(&req));
	assert_int_equal(tw_request_result(&req), -EBUSY);
	assert_int_equal(tw_drain(w), 1); /* one request, its latest post */
	assert_true(tw_request_done(&req));
	assert_int_equal(tw_request_result(&req), 0); /* it was idle */
	assert_true(tw_pending(&t));
	assert_int_equal(t.expires, 6000000); /* latest wins */
	assert_int_equal(tw_post_del(w, &req, &t), 0);
	assert_int_equal(tw_advance(w, 1000), 0); /* applied first: nothing fires */
	assert_int_equal(tw_request_result(&req), 1);
	assert_false(tw_pending(&t));
	assert_int_equal(tw_advance(w, 10000000), 0);
	tw_wheel_destroy(w);
}

/* Which posts wake the owner: with a notify hook, a re-arm earlier than
 * the time the hook was given; not a later one, not a cancel. Without a
 * notify hook nobody knows when the owner looks next: every re-arm wakes. */
static int count_notify(struct tw_wheel *w, uint64_t next, void *arg)
{
	(void)w;
	*(uint64_t *)arg = next;
	return 0;
}

static void test_wake_only_for_earlier(void **state)
{
	struct tw_wheel *w;
	struct tw_timer a, b;
	struct tw_request ra, rb;
	uint64_t told = 0, before;

	(void)state;
	memset(&ra, 0, sizeof(ra));
	memset(&rb, 0, sizeof(rb));
	assert_int_equal(tw_wheel_create(&w, NULL, 0), 0);
	tw_timer_init(&a, on_fire);
	tw_timer_init(&b, on_fire);
	__atomic_store_n(&wakes, 0, __ATOMIC_RELAXED);
	assert_int_equal(tw_set_wake(w, on_wake, NULL), 0);

	assert_int_equal(tw_post_mod(w, &ra, &a, 10000000), 0); /* no notify hook: wakes */
	assert_int_equal(wakes, 1);
	assert_int_equal(tw_drain(w), 1);

	assert_int_equal(tw_set_notify(w, count_notify, &told), 0);
	assert_int_equal(tw_post_mod(w, &rb, &b, 20000000), 0); /* later than a: no wake */
	assert_int_equal(wakes, 1);
	assert_int_equal(tw_drain(w), 1);
	assert_int_equal(tw_post_del(w, &rb, &b), 0); /* a cancel: no wake */
	assert_int_equal(wakes, 1);
	assert_int_equal(tw_drain(w), 1);
	before = told;
	assert_int_equal(tw_post_mod(w, &rb, &b, 5000000), 0); /* earlier than a: wakes */
	assert_int_equal(wakes, 2);
	assert_int_equal(told, before); /* the hook hears of it only when the owner applies it */
	assert_int_equal(tw_drain(w), 1);
	assert_int_equal(told, 5000000);
	assert_int_equal(tw_set_notify(w, NULL, NULL), 0);
	tw_wheel_destroy(w);
}

/* A wheel destroyed from a callback completes the queued requests when
 * the callback has returned, not before: a poster waiting for the cancel
 * of the running timer must not be told it is done while it still runs. */
static struct tw_request destroy_req;
static struct tw_wheel *destroy_wheel;
static int done_inside;

static void destroy_from_callback(struct tw_timer *t)
{
	assert_int_equal(tw_post_del(destroy_wheel, &destroy_req, t), 0);
	tw_wheel_destroy(destroy_wheel);
	done_inside = tw_request_done(&destroy_req);
}

static void test_destroy_in_callback_completes_after(void **state)
{
	struct tw_timer t;

	(void)state;
	memset(&destroy_req, 0, sizeof(destroy_req));
	assert_int_equal(tw_wheel_create(&destroy_wheel, NULL, 0), 0);
	tw_timer_init(&t, destroy_from_callback);
	assert_int_equal(tw_add(destroy_wheel, &t, 1000), 0);
	assert_int_equal(tw_advance(destroy_wheel, 1000000), 1); /* frees the wheel on return */
	assert_false(done_inside);
	assert_true(tw_request_done(&destroy_req));
	assert_int_equal(tw_request_result(&destroy_req), -TW_ESHUTDOWN);
}

/* The callback of the unit tests' timers, which are no struct rtimer. */
static int plain_fired;

static void on_plain(struct tw_timer *t)
{
	(void)t;
	plain_fired++;
}

/* The cross-thread calls are the owner's calls: twin wheels, one re-armed
 * by the owner with tw_mod_range() and tw_mod(), the other by
 * tw_post_mod_range() and tw_post_mod(), tell the same next expiry and
 * fire at the same advance. A ranged post sets or keeps a window. */
static uint64_t twin_fired[2];

static void on_twin(struct tw_timer *t)
{
	(void)t;
	twin_fired[0]++;
}

static void on_twin_posted(struct tw_timer *t)
{
	(void)t;
	twin_fired[1]++;
}

#define MS 1000000ull

static void twins(struct tw_wheel **w, struct tw_timer *t, uint64_t slack_ns)
{
	struct tw_config cfg = { .slack_ns = slack_ns };

	for (int i = 0; i < 2; i++) {
		assert_int_equal(tw_wheel_create(&w[i], &cfg, 90 * MS), 0);
		tw_timer_init(&t[i], i ? on_twin_posted : on_twin);
	}
	twin_fired[0] = twin_fired[1] = 0;
}

/* Both wheels advance to `to` without firing, then both expect their
 * timer at `next`, and not before: an advance just short fires nothing. */
static void same_course(struct tw_wheel **w, uint64_t to, uint64_t next)
{
	for (int i = 0; i < 2; i++) {
		assert_int_equal(tw_advance(w[i], to), 0);
		assert_int_equal(tw_next_expiry(w[i]), next);
		assert_int_equal(tw_advance(w[i], next - 1), 0);
	}
}

static void test_posts_match_owner_calls(void **state)
{
	struct tw_wheel *w[2];
	struct tw_timer t[2];
	struct tw_request req;

	(void)state;
	memset(&req, 0, sizeof(req));
	twins(w, t, 0);
	for (int i = 0; i < 2; i++)
		assert_int_equal(tw_add_range(w[i], &t[i], 1000 * MS, 407 * MS), 0);
	assert_int_equal(tw_next_expiry(w[1]), 1024 * MS); /* the coarsest tick of [1000, 1407] ms */

	/* A ranged post keeps the window that a post without one drops. The
	 * wheels are compared after an advance short of the new window: a
	 * re-arm does not raise the bound its old bucket keeps. */
	assert_int_equal(tw_mod_range(w[0], &t[0], 2000 * MS, 407 * MS), 1);
	assert_int_equal(tw_post_mod_range(w[1], &req, &t[1], 2000 * MS, 407 * MS), 0);
	assert_int_equal(tw_drain(w[1]), 1);
	assert_int_equal(tw_request_result(&req), 1);
	same_course(w, 1900 * MS, 2048 * MS);
	/* ... or sets another. */
	assert_int_equal(tw_mod_range(w[0], &t[0], 3000 * MS, 3 * MS), 1);
	assert_int_equal(tw_post_mod_range(w[1], &req, &t[1], 3000 * MS, 3 * MS), 0);
	assert_int_equal(tw_drain(w[1]), 1);
	same_course(w, 2999 * MS, 3000 * MS); /* [3000, 3003]: 3000 is a multiple of 8 ms */
	/* tw_post_mod() is tw_mod(): the wheel's default slack, here none. */
	assert_int_equal(tw_mod(w[0], &t[0], 4001 * MS), 1);
	assert_int_equal(tw_post_mod(w[1], &req, &t[1], 4001 * MS), 0);
	assert_int_equal(tw_drain(w[1]), 1);
	same_course(w, 4000 * MS, 4001 * MS);
	for (int i = 0; i < 2; i++) {
		assert_int_equal(tw_advance(w[i], 4001 * MS), 1);
		assert_wheel_sound(w[i]);
		tw_wheel_destroy(w[i]);
	}

	assert_int_equal(twin_fired[0], 1);
	assert_int_equal(twin_fired[1], 1);

	/* With a default slack, tw_post_mod() gives it, as tw_mod() does. */
	twins(w, t, 100 * MS);
	for (int i = 0; i < 2; i++)
		assert_int_equal(tw_add(w[i], &t[i], 500 * MS), 0);
	assert_int_equal(tw_mod(w[0], &t[0], 1000 * MS), 1);
	assert_int_equal(tw_post_mod(w[1], &req, &t[1], 1000 * MS), 0);
	assert_int_equal(tw_drain(w[1]), 1);
	same_course(w, 900 * MS, 1024 * MS); /* [1000, 1100]: 1024 */
	for (int i = 0; i < 2; i++) {
		assert_int_equal(tw_advance(w[i], 1024 * MS), 1);
		tw_wheel_destroy(w[i]);
	}
	assert_int_equal(twin_fired[0], 1);
	assert_int_equal(twin_fired[1], 1);
}

/* Latest wins: a re-post of a queued request replaces what it asks, and
 * only the latest post is applied and reported. */
static void test_repost_latest_wins(void **state)
{
	struct tw_wheel *w;
	struct tw_timer t, u;
	struct tw_request req;

	(void)state;
	memset(&req, 0, sizeof(req));
	assert_int_equal(tw_wheel_create(&w, NULL, 0), 0);
	tw_timer_init(&t, on_plain);
	tw_timer_init(&u, on_plain);

	/* mod, ranged mod, cancel: only the cancel is applied, to an idle timer. */
	assert_int_equal(tw_post_mod(w, &req, &t, 5 * MS), 0);
	assert_int_equal(tw_post_mod_range(w, &req, &t, 7 * MS, 3 * MS), 1);
	assert_int_equal(tw_post_del(w, &req, &t), 1);
	assert_int_equal(tw_drain(w), 1);
	assert_int_equal(tw_request_result(&req), 0);
	assert_false(tw_pending(&t));
	assert_int_equal(tw_count(w), 0);

	/* Armed; a cancel replaced by a later re-arm: the timer stays armed. */
	assert_int_equal(tw_post_mod(w, &req, &t, 5 * MS), 0);
	assert_int_equal(tw_drain(w), 1);
	assert_int_equal(tw_post_del(w, &req, &t), 0);
	assert_int_equal(tw_post_mod(w, &req, &t, 9 * MS), 1);
	assert_int_equal(tw_drain(w), 1);
	assert_int_equal(tw_request_result(&req), 1); /* it was armed */
	assert_true(tw_pending(&t));
	assert_int_equal(t.expires, 9 * MS);

	/* An earlier deadline replaces a later one too. */
	assert_int_equal(tw_post_mod(w, &req, &t, 20 * MS), 0);
	assert_int_equal(tw_post_mod(w, &req, &t, 6 * MS), 1);
	assert_int_equal(tw_drain(w), 1);
	assert_int_equal(t.expires, 6 * MS);

	/* A re-post may name another timer: the first is left alone. */
	assert_int_equal(tw_post_mod(w, &req, &u, 8 * MS), 0);
	assert_int_equal(tw_post_del(w, &req, &t), 1);
	assert_int_equal(tw_drain(w), 1);
	assert_false(tw_pending(&u));
	assert_false(tw_pending(&t));

	/* A done request posted again is a new post. */
	plain_fired = 0;
	assert_int_equal(tw_post_mod(w, &req, &t, 8 * MS), 0);
	assert_int_equal(tw_advance(w, 8 * MS), 1); /* applied first, then fired */
	assert_int_equal(plain_fired, 1);
	assert_int_equal(tw_request_result(&req), 0);
	assert_wheel_sound(w);
	tw_wheel_destroy(w);
}

/* A re-post that moves a queued request earlier than the owner will look
 * wakes it, as a first post would; one that moves it later does not. */
static void test_repost_wakes_for_earlier(void **state)
{
	struct tw_wheel *w;
	struct tw_timer a, b;
	struct tw_request ra, rb;
	uint64_t told = 0;

	(void)state;
	memset(&ra, 0, sizeof(ra));
	memset(&rb, 0, sizeof(rb));
	assert_int_equal(tw_wheel_create(&w, NULL, 0), 0);
	tw_timer_init(&a, on_plain);
	tw_timer_init(&b, on_plain);
	assert_int_equal(tw_add(w, &a, 10 * MS), 0);
	assert_int_equal(tw_set_notify(w, count_notify, &told), 0);
	__atomic_store_n(&wakes, 0, __ATOMIC_RELAXED);
	assert_int_equal(tw_set_wake(w, on_wake, NULL), 0);

	assert_int_equal(tw_post_mod(w, &rb, &b, 20 * MS), 0); /* later than a: no wake */
	assert_int_equal(wakes, 0);
	assert_int_equal(tw_post_mod(w, &rb, &b, 30 * MS), 1); /* later still */
	assert_int_equal(wakes, 0);
	assert_int_equal(tw_post_mod_range(w, &rb, &b, 5 * MS, 1 * MS), 1); /* earlier than a */
	assert_int_equal(wakes, 1);
	assert_int_equal(tw_post_del(w, &rb, &b), 1); /* a cancel never wakes */
	assert_int_equal(wakes, 1);
	assert_int_equal(tw_drain(w), 1);
	assert_false(tw_pending(&b));
	assert_int_equal(told, 0); /* the hook heard nothing: b never moved the next expiry */
	assert_int_equal(tw_set_notify(w, NULL, NULL), 0);
	tw_wheel_destroy(w);
}

/* A post that comes while the owner applies the same request is a new
 * post: the application under way is never reported, the new one is
 * applied in the next drain. The notify hook, called while the owner
 * applies, posts it. */
static struct tw_request applying_req;
static struct tw_timer applying_timer;
static int applying_post_rc = 99, applying_done_in_hook = 99;

static int post_from_hook(struct tw_wheel *w, uint64_t next, void *arg)
{
	(void)next;
	(void)arg;
	if (applying_post_rc == 99) {
		applying_done_in_hook = tw_request_done(&applying_req);
		applying_post_rc = tw_post_mod(w, &applying_req, &applying_timer, 50 * MS);
	}
	return 0;
}

static void test_post_while_applying(void **state)
{
	struct tw_wheel *w;

	(void)state;
	memset(&applying_req, 0, sizeof(applying_req));
	assert_int_equal(tw_wheel_create(&w, NULL, 0), 0);
	tw_timer_init(&applying_timer, on_plain);
	assert_int_equal(tw_set_notify(w, post_from_hook, NULL), 0);
	assert_int_equal(tw_post_mod(w, &applying_req, &applying_timer, 10 * MS), 0);
	assert_int_equal(tw_drain(w), 1); /* arms it for 10 ms: the hook hears */
	assert_int_equal(applying_done_in_hook, 0);
	assert_int_equal(applying_post_rc, 0); /* queued anew, not a replacement */
	assert_int_equal(applying_timer.expires, 10 * MS);
	assert_false(tw_request_done(&applying_req)); /* superseded: not reported */
	assert_int_equal(tw_drain(w), 1);
	assert_true(tw_request_done(&applying_req));
	assert_int_equal(tw_request_result(&applying_req), 1); /* it was armed by the first */
	assert_int_equal(applying_timer.expires, 50 * MS);
	assert_int_equal(tw_set_notify(w, NULL, NULL), 0);
	assert_wheel_sound(w);
	tw_wheel_destroy(w);
}

static uint64_t mono_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* CPU time of this thread: a waiter that sleeps spends next to none of the
 * time it waits, one that polls or yields spends all of it. */
static uint64_t thread_cpu_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Voluntary context switches of this thread, or 0 where they are not
 * counted: a waiter that sleeps until it is woken makes a handful, one that
 * sleeps in slices and looks (polls by sleeping) one per slice, which its
 * CPU time does not show. */
static long switches(void)
{
#ifdef RUSAGE_THREAD
	struct rusage ru;
	getrusage(RUSAGE_THREAD, &ru);
	return ru.ru_nvcsw;
#else
	return 0;
#endif
}

/* A loop that has stopped never applies the request: the wait returns
 * -ETIMEDOUT once its timeout has passed, never before, and the request
 * is still queued, applied when the owner comes back. */
static void test_wait_timeout_stopped_loop(void **state)
{
	struct tw_wheel *w;
	struct tw_timer t;
	struct tw_request req;
	uint64_t t0, waited, cpu;
	long sw;

	(void)state;
	memset(&req, 0, sizeof(req));
	assert_int_equal(tw_wheel_create(&w, NULL, 0), 0);
	tw_timer_init(&t, on_plain);
	__atomic_store_n(&wakes, 0, __ATOMIC_RELAXED);
	assert_int_equal(tw_set_wake(w, on_wake, NULL), 0);
	assert_int_equal(tw_post_del(w, &req, &t), 0);
	assert_int_equal(wakes, 0);
	assert_int_equal(tw_request_wait_timeout(w, &req, 0), -ETIMEDOUT); /* only looks */
	assert_int_equal(wakes, 1); /* and wakes the owner */

	t0 = mono_ns();
	cpu = thread_cpu_ns();
	sw = switches();
	assert_int_equal(tw_request_wait_timeout(w, &req, 200 * MS), -ETIMEDOUT);
	waited = mono_ns() - t0;
	cpu = thread_cpu_ns() - cpu;
	sw = switches() - sw;
	assert_true(waited >= 200 * MS);
	assert_true(waited < 200 * MS + 20000 * MS); /* lateness only: a loaded machine */
	fprintf(stderr, "# timed out after %.1f ms, %.1f ms of it on the CPU\n", (double)waited / 1e6, (double)cpu / 1e6);
	assert_true(cpu < waited / 2); /* slept, did not spin */
	assert_true(sw < 100);         /* nor poll in slices */
	assert_false(tw_request_done(&req));

	assert_int_equal(tw_drain(w), 1);
	assert_int_equal(tw_request_wait_timeout(w, &req, 0), 0); /* done: its result */
	assert_int_equal(tw_request_wait(w, &req), 0);
	tw_wheel_destroy(w);
}

/* The other way: an owner on another thread, woken by the wait through the
 * wake hook, applies the request; the waiter returns its result. */
static struct tw_wheel *wait_wheel;
static int owner_woken; /* atomic */

static void wake_owner(struct tw_wheel *w, void *arg)
{
	(void)w;
	(void)arg;
	__atomic_store_n(&owner_woken, 1, __ATOMIC_RELEASE);
}

static void *owner_drains_when_woken(void *arg)
{
	struct timespec ms1 = { 0, 1000000L }, ms50 = { 0, 50000000L };
	int *applied = arg;

	while (!__atomic_load_n(&owner_woken, __ATOMIC_ACQUIRE))
		nanosleep(&ms1, NULL);
	nanosleep(&ms50, NULL); /* the waiter is asleep by now */
	*applied = tw_drain(wait_wheel);
	return NULL;
}

static void test_wait_applied_in_time(void **state)
{
	struct tw_timer t;
	struct tw_request req;
	pthread_t owner;
	int applied = -1, r;
	uint64_t t0, waited, cpu;
	long sw;

	(void)state;
	memset(&req, 0, sizeof(req));
	__atomic_store_n(&owner_woken, 0, __ATOMIC_RELAXED);
	assert_int_equal(tw_wheel_create(&wait_wheel, NULL, 0), 0);
	tw_timer_init(&t, on_plain);
	assert_int_equal(tw_add(wait_wheel, &t, 10 * MS), 0);
	assert_int_equal(tw_set_wake(wait_wheel, wake_owner, NULL), 0);
	/* From here the other thread owns the wheel. */
	assert_int_equal(pthread_create(&owner, NULL, owner_drains_when_woken, &applied), 0);
	assert_int_equal(tw_post_del(wait_wheel, &req, &t), 0);
	t0 = mono_ns();
	cpu = thread_cpu_ns();
	sw = switches();
	r = tw_request_wait_timeout(wait_wheel, &req, 60000 * MS);
	waited = mono_ns() - t0;
	cpu = thread_cpu_ns() - cpu;
	sw = switches() - sw;
	pthread_join(owner, NULL);
	assert_int_equal(r, 1); /* the cancel found it armed */
	assert_int_equal(applied, 1);
	assert_false(tw_pending(&t));
	fprintf(stderr, "# applied after %.1f ms of waiting, %.1f ms of it on the CPU\n", (double)waited / 1e6,
		(double)cpu / 1e6);
	assert_true(waited < 60000 * MS);
	assert_true(cpu < waited / 2); /* slept until the owner applied it (after 50 ms) */
	assert_true(sw < 100);         /* without polling in slices */
	tw_wheel_destroy(wait_wheel);
}

/* An owner that only advances over a wheel with nothing due, each advance
 * the one-comparison kind, still applies what another thread queued: the
 * poster's wait ends with the request's result. */
static struct tw_wheel *quiet_wheel;
static struct tw_timer quiet_timer;
static struct tw_request quiet_req;
static int quiet_rc;

static void *quiet_poster(void *arg)
{
	(void)arg;
	quiet_rc = tw_post_mod(quiet_wheel, &quiet_req, &quiet_timer, 3600000 * MS);
	if (quiet_rc == 0)
		quiet_rc = tw_request_wait_timeout(quiet_wheel, &quiet_req, 10000 * MS);
	return NULL;
}

static void test_quiet_advances_apply_requests(void **state)
{
	struct tw_timer far;
	struct tw_stats st;
	pthread_t poster;
	uint64_t now = 0;

	(void)state;
	memset(&quiet_req, 0, sizeof(quiet_req));
	quiet_rc = 99;
	assert_int_equal(tw_wheel_create(&quiet_wheel, NULL, now), 0);
	assert_int_equal(tw_set_wake(quiet_wheel, on_wake, NULL), 0);
	tw_timer_init(&quiet_timer, on_plain);
	tw_timer_init(&far, on_plain);
	assert_int_equal(tw_add(quiet_wheel, &far, 7200000 * MS), 0); /* the next event, far off */
	assert_int_equal(pthread_create(&poster, NULL, quiet_poster, NULL), 0);
	for (double t0 = seconds(); !tw_request_done(&quiet_req) && seconds() - t0 < 10;) {
		now += MS;
		assert_int_equal(tw_advance(quiet_wheel, now), 0);
	}
	pthread_join(poster, NULL);
	assert_int_equal(quiet_rc, 0); /* applied: the timer was idle */
	assert_true(tw_pending(&quiet_timer));
	assert_int_equal(tw_get_stats(quiet_wheel, &st), 0);
	assert_true(st.idle_advances > 0);
	tw_wheel_destroy(quiet_wheel);
}

/*
 * Races with ranged posts (tw_post_mod_range()), and with re-posts of
 * queued requests (latest wins): producers re-arm their timers with
 * windows, waiting for each request to be done (ranged), or posting again
 * whether or not the last one is done (latest wins), while the owner
 * advances. Besides the checks of the first race (early, duplicate, fired
 * after a done cancel), at the end every timer is as its last post left
 * it: idle after a cancel, armed for its last expiry after a re-arm; and,
 * stepping the clock a tick at a time, each fires inside its window.
 */
static int stepping;        /* owner only: the final phase, a tick per advance */
static uint64_t step_from;  /* owner only: the clock when the final phase began */
static uint64_t late;       /* owner only */
static uint64_t stepped;    /* owner only: firings the window check looked at */

static void on_fire_ranged(struct tw_timer *t)
{
	uint64_t now = __atomic_load_n(&owner_now, __ATOMIC_RELAXED);
	uint64_t end = t->expires + slack_of(t->expires);
	uint64_t end_tick = test_round_up(end, TICK);

	/* The first advance whose now reaches the window's end, rounded up
	 * to a tick, fires it: with one tick per advance, before now passes
	 * that end by a tick. */
	if (stepping && t->expires > step_from) {
		stepped++;
		if (now >= end_tick + TICK)
			late++;
	}
	on_fire(t);
}

static int latest_wins; /* the producers' mode: re-post without waiting */

static void *produce_ranged(void *arg)
{
	struct producer *p = arg;

	while (!__atomic_load_n(&stop_posting, __ATOMIC_ACQUIRE)) {
		struct rtimer *r = &p->timers[test_rand(&p->rng) % TIMERS_PER_PRODUCER];
		uint64_t x = test_rand(&p->rng);
		int rc;

		if (r->last_op && tw_request_done(&r->req))
			settle(p, r);
		else if (r->last_op && !latest_wins)
			continue;
		if (r->cancelled && __atomic_load_n(&r->fires, __ATOMIC_ACQUIRE) != r->fires_at_cancel)
			fail_in(p, "a timer fired after its cancel was done");
		rc = post_random(p, r, x, 4, 1);
		if (rc == 1) /* here: replaced a queued post */
			__atomic_store_n(&p->replaced, p->replaced + 1, __ATOMIC_RELAXED);
		else if (rc != 0)
			fail_in(p, latest_wins ? "a re-post failed" : "a post failed");
		__atomic_store_n(&p->posts, p->posts + 1, __ATOMIC_RELAXED);
		if (x % 16 == 0)
			sched_yield();
	}
	/* One last re-arm, 10 ticks past the owner's clock, which stands
	 * still from here until the window check: that check then has a
	 * timer to look at however the threads were scheduled (under
	 * valgrind the owner's clock runs ahead of every expiry posted). */
	for (int k = 0; k < TIMERS_PER_PRODUCER; k++) {
		struct rtimer *r = &p->timers[k];

		if (r->last_op && !tw_request_done(&r->req))
			continue;
		if (r->last_op)
			settle(p, r);
		if (post_random(p, r, (10 * TICK) << 8 | 1, 4, 1) != 0) /* a re-arm, e = now + 10 ticks */
			fail_in(p, "the last post failed");
		break;
	}
	return NULL;
}

/* Latest wins: some re-posts replaced a queued one, too. */
static bool posted_and_replaced(const struct race_counts *c)
{
	return c->posts >= 100 && c->replaced > 0;
}

static void race_ranged(int repost)
{
	static struct producer prod[MAX_PRODUCERS];
	struct tw_config cfg = { .tick_ns = TICK };
	uint64_t seed = test_seed() ^ (repost ? 0x1a7e : 0x5a11), now = 1000000, replaced = 0, armed = 0;
	bool stuck = false;
	double t0 = seconds();

	assert_int_equal(tw_wheel_create(&wheel, &cfg, now), 0);
	assert_int_equal(tw_set_wake(wheel, on_wake, NULL), 0);
	__atomic_store_n(&owner_now, now, __ATOMIC_RELAXED);
	__atomic_store_n(&stop_posting, 0, __ATOMIC_RELAXED);
	latest_wins = repost;
	stepping = 0;
	early = dup = late = stepped = 0;
	start_producers(prod, seed, on_fire_ranged, produce_ranged);
	now = owner_races(now, &seed, prod, repost ? posted_and_replaced : posted_some, &stuck);
	__atomic_store_n(&stop_posting, 1, __ATOMIC_RELEASE);
	for (int i = 0; i < nproducers; i++)
		pthread_join(prod[i].thread, NULL);
	assert_true(tw_drain(wheel) >= 0);
	fail_if_stuck(stuck, prod);

	/* Every timer as its last post left it. */
	for (int i = 0; i < nproducers; i++)
		for (int k = 0; k < TIMERS_PER_PRODUCER; k++) {
			struct rtimer *r = &prod[i].timers[k];
			int last = r->last_op;
			if (!last)
				continue;
			assert_true(tw_request_done(&r->req));
			settle(&prod[i], r);
			if (last == 2)
				assert_false(tw_pending(&r->t));
			else if (tw_pending(&r->t))
				assert_int_equal(r->t.expires, r->last_expires);
			else /* fired already, with that expiry */
				assert_int_equal(r->last_fired, r->last_expires);
		}

	/* A tick per advance until every window has closed. */
	now = test_round_up(now, TICK);
	step_from = now;
	stepping = 1;
	for (int n = 0; tw_count(wheel) > 0; n++) {
		assert_true(n < 1000);
		now += TICK;
		__atomic_store_n(&owner_now, now, __ATOMIC_RELAXED);
		assert_true(tw_advance(wheel, now) >= 0);
	}
	armed = check_the_end(prod);
	for (int i = 0; i < nproducers; i++)
		replaced += prod[i].replaced;
	fprintf(stderr,
		"# %s, %.2f s, %llu requests posted: %llu replaced a queued one; %llu timers armed at the end "
		"fired in their windows, %llu checked tick by tick\n",
		repost ? "latest wins" : "ranged", seconds() - t0, (unsigned long long)race_count(prod).posts,
		(unsigned long long)replaced, (unsigned long long)armed, (unsigned long long)stepped);
	assert_int_equal(early, 0);
	assert_int_equal(dup, 0);
	assert_int_equal(late, 0);
	assert_true(armed > 0);   /* the end's check looked at some */
	assert_true(stepped > 0); /* and so did the window check */
	if (!repost)
		assert_int_equal(replaced, 0); /* each waited for the last to be done */
	else
		assert_true(replaced > 0); /* the latest-wins path ran */
	assert_int_equal(tw_check(wheel), 0);
	tw_wheel_destroy(wheel);
	wheel = NULL;
}

static void test_requests_ranged_race(void **state)
{
	(void)state;
	race_ranged(0);
}

static void test_requests_latest_wins_race(void **state)
{
	(void)state;
	race_ranged(1);
}

int main(int argc, char **argv)
{
	if (argc > 1)
		run_seconds = strtod(argv[1], NULL);
	if (argc > 2)
		nproducers = atoi(argv[2]);
	if (argc > 3)
		race_posts = strtoull(argv[3], NULL, 10);
	if (nproducers < 1 || nproducers > MAX_PRODUCERS || run_seconds <= 0)
		return 2;
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_request_errors),
		cmocka_unit_test(test_wake_only_for_earlier),
		cmocka_unit_test(test_destroy_in_callback_completes_after),
		cmocka_unit_test(test_requests_race),
		cmocka_unit_test(test_requests_nothing_lost),
		cmocka_unit_test(test_posts_match_owner_calls),
		cmocka_unit_test(test_repost_latest_wins),
		cmocka_unit_test(test_repost_wakes_for_earlier),
		cmocka_unit_test(test_post_while_applying),
		cmocka_unit_test(test_wait_timeout_stopped_loop),
		cmocka_unit_test(test_wait_applied_in_time),
		cmocka_unit_test(test_quiet_advances_apply_requests),
		cmocka_unit_test(test_requests_ranged_race),
		cmocka_unit_test(test_requests_latest_wins_race),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
