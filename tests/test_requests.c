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
 * Usage: test_requests [seconds [producers]]  (default 2 s, 3 producers);
 * the soak runs minutes.
 */
#define _GNU_SOURCE /* pthread_tryjoin_np */
#include <pthread.h>
#include <sched.h>
#ifdef _WIN32
#define pthread_tryjoin_np _pthread_tryjoin /* winpthreads' name */
#endif

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
	uint64_t posts, refused, waits, mods, dels; /* posts: atomic, the owner watches it */
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
		if (x % 3 == 0) {
			rc = tw_post_del(wheel, &r->req, &r->t);
			r->last_op = 2;
			p->dels++;
		} else {
			/* Expiries only grow: a firing says which arm it was. */
			uint64_t e = __atomic_load_n(&owner_now, __ATOMIC_RELAXED) + (x >> 8) % (40 * TICK);
			if (e <= r->last_expires)
				e = r->last_expires + 1;
			r->last_expires = e;
			rc = tw_post_mod(wheel, &r->req, &r->t, e);
			r->last_op = 1;
			p->mods++;
		}
		if (rc == -TW_ESHUTDOWN) {
			p->refused++;
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

static int hold_hook(struct tw_wheel *w, uint64_t next, void *arg)
{
	(void)w;
	(void)next;
	(void)arg;
	return 0;
}

static double run_seconds = 2;
static int nproducers = 3;

/* Has the race done enough to judge it: requests posted, and done cancels
 * watched past their expiries? A loaded machine, or valgrind running one
 * thread at a time, can leave the producers idle for a whole second. */
static bool race_has_run(struct producer *prod)
{
	uint64_t posts = 0, quiet = 0;

	for (int i = 0; i < nproducers; i++) {
		posts += __atomic_load_n(&prod[i].posts, __ATOMIC_RELAXED);
		quiet += __atomic_load_n(&prod[i].quiet_cancels, __ATOMIC_RELAXED);
	}
	return posts >= 100 && quiet > 0;
}

static void test_requests_race(void **state)
{
	static struct producer prod[MAX_PRODUCERS];
	struct tw_config cfg = { .tick_ns = TICK };
	uint64_t seed = test_seed(), now = 1000000, applied = 0, total_posts = 0;
	double t0;

	(void)state;
	assert_int_equal(tw_wheel_create(&wheel, &cfg, now), 0);
	assert_int_equal(tw_set_wake(wheel, on_wake, NULL), 0);
	/* A hook holds the wheel's memory after tw_wheel_destroy(), so the
	 * producers may race the destroy itself (the header's rule). */
	assert_int_equal(tw_set_notify(wheel, hold_hook, NULL), 0);
	__atomic_store_n(&owner_now, now, __ATOMIC_RELAXED);
	__atomic_store_n(&stop_posting, 0, __ATOMIC_RELAXED);
	__atomic_store_n(&destroyed_phase, 0, __ATOMIC_RELAXED);
	early = dup = 0;

	for (int i = 0; i < nproducers; i++) {
		struct producer *p = &prod[i];
		memset(p, 0, sizeof(*p));
		p->id = i;
		p->rng = seed + (uint64_t)i * 7919;
		for (int k = 0; k < TIMERS_PER_PRODUCER; k++)
			tw_timer_init(&p->timers[k].t, on_fire);
	}
	for (int i = 0; i < nproducers; i++)
		assert_int_equal(pthread_create(&prod[i].thread, NULL, produce, &prod[i]), 0);

	/* Race: requests against firings against cancels, for the time asked
	 * and until it has done something (at most a minute). */
	t0 = seconds();
	while (seconds() - t0 < run_seconds * 0.8 || (!race_has_run(prod) && seconds() - t0 < 60)) {
		uint64_t x = test_rand(&seed);
		now += (x % 3) * TICK + x % TICK;
		__atomic_store_n(&owner_now, now, __ATOMIC_RELAXED);
		int r = x % 8 == 0 ? tw_drain(wheel) : tw_advance(wheel, now);
		assert_true(r >= 0);
		if (x % 8 == 0)
			applied += (uint64_t)r;
	}
	/* Race the destroy: producers are still posting. They stop waiting
	 * for requests first: one that slips past the destroy's refusal is
	 * done only when the wheel is released, after the join. */
	__atomic_store_n(&destroyed_phase, 1, __ATOMIC_RELEASE);
	tw_wheel_destroy(wheel);
	for (double t1 = seconds(); seconds() - t1 < run_seconds * 0.2;)
		sched_yield();
	__atomic_store_n(&stop_posting, 1, __ATOMIC_RELEASE);
	for (int i = 0; i < nproducers; i++)
		pthread_join(prod[i].thread, NULL);
	/* Releasing the wheel completes what raced the destroy. */
	assert_int_equal(tw_set_notify(wheel, NULL, NULL), 0);
	wheel = NULL;

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
		"# %d producers, %.1f s: %llu requests posted, %llu wake-ups, %llu done cancels watched past "
		"their expiries\n",
		nproducers, run_seconds, (unsigned long long)total_posts,
		(unsigned long long)__atomic_load_n(&wakes, __ATOMIC_RELAXED), (unsigned long long)quiet);
	assert_true(total_posts > 0);
	assert_true(quiet > 0); /* the cancel check had something to check */
}

/* No loss: the same race, then the producers stop, wait for their last
 * requests, and the owner runs to the end of time; every timer whose last
 * request armed it has fired with that expiry. */
static void test_requests_nothing_lost(void **state)
{
	static struct producer prod[MAX_PRODUCERS];
	struct tw_config cfg = { .tick_ns = TICK };
	uint64_t seed = test_seed() ^ 0xabc, now = 1000000, armed_at_end = 0;
	double t0;

	(void)state;
	assert_int_equal(tw_wheel_create(&wheel, &cfg, now), 0);
	assert_int_equal(tw_set_wake(wheel, on_wake, NULL), 0);
	__atomic_store_n(&owner_now, now, __ATOMIC_RELAXED);
	__atomic_store_n(&stop_posting, 0, __ATOMIC_RELAXED);
	__atomic_store_n(&destroyed_phase, 0, __ATOMIC_RELAXED);
	early = dup = 0;
	for (int i = 0; i < nproducers; i++) {
		struct producer *p = &prod[i];
		memset(p, 0, sizeof(*p));
		p->rng = seed + (uint64_t)i * 104729;
		for (int k = 0; k < TIMERS_PER_PRODUCER; k++)
			tw_timer_init(&p->timers[k].t, on_fire);
	}
	for (int i = 0; i < nproducers; i++)
		assert_int_equal(pthread_create(&prod[i].thread, NULL, produce, &prod[i]), 0);
	t0 = seconds();
	while (seconds() - t0 < run_seconds) {
		uint64_t x = test_rand(&seed);
		now += (x % 3) * TICK + x % TICK;
		__atomic_store_n(&owner_now, now, __ATOMIC_RELAXED);
		assert_true(tw_advance(wheel, now) >= 0);
	}
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
	for (int i = 0; i < nproducers; i++) {
		if (prod[i].failures)
			fail_msg("producer %d: %s", i, prod[i].why);
		for (int k = 0; k < TIMERS_PER_PRODUCER; k++) {
			struct rtimer *r = &prod[i].timers[k];
			if (r->cancelled && r->fires != r->fires_at_cancel)
				fail_msg("producer %d timer %d fired after its cancel was done", i, k);
			if (!r->armed)
				continue;
			armed_at_end++;
			if (r->last_fired != r->armed_for)
				fail_msg("producer %d timer %d: armed for %llu, last fired %llu: lost", i, k,
					 (unsigned long long)r->armed_for, (unsigned long long)r->last_fired);
		}
	}
	assert_int_equal(early, 0);
	assert_int_equal(dup, 0);
	assert_int_equal(tw_check(wheel), 0);
	tw_wheel_destroy(wheel);
	fprintf(stderr, "# nothing lost: %llu timers armed at the end fired with their last expiry\n",
		(unsigned long long)armed_at_end);
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
	assert_int_equal(tw_post_del(w, &req, NULL), -EINVAL);
	assert_int_equal(tw_request_result(&req), -EBUSY);
	assert_int_equal(tw_request_wait(w, &req), -EINVAL); /* never posted */
	assert_false(tw_request_done(&req));
	assert_int_equal(tw_post_mod(w, &req, &t, 5000000), 0);
	assert_int_equal(tw_post_mod(w, &req, &t, 6000000), -EBUSY); /* one at a time */
	assert_false(tw_pending(&t));                               /* not applied yet */
	assert_int_equal(tw_drain(w), 1);
	assert_true(tw_request_done(&req));
	assert_int_equal(tw_request_result(&req), 0); /* it was idle */
	assert_true(tw_pending(&t));
	assert_int_equal(t.expires, 5000000);
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

int main(int argc, char **argv)
{
	if (argc > 1)
		run_seconds = strtod(argv[1], NULL);
	if (argc > 2)
		nproducers = atoi(argv[2]);
	if (nproducers < 1 || nproducers > MAX_PRODUCERS || run_seconds <= 0)
		return 2;
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_request_errors),
		cmocka_unit_test(test_wake_only_for_earlier),
		cmocka_unit_test(test_destroy_in_callback_completes_after),
		cmocka_unit_test(test_requests_race),
		cmocka_unit_test(test_requests_nothing_lost),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
