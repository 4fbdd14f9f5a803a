/* SPDX-License-Identifier: MIT */
/*
 * A post racing tw_wheel_destroy() on a wheel that a notify hook holds, as
 * a backend holds it: the destroy does not release the wheel, so nothing
 * after it would ever look at the queue again. Once both the post and the
 * destroy have returned, the post has failed with -ESHUTDOWN, or its
 * request is done with result -ESHUTDOWN: a thread waiting for it would
 * not wait for the hook to come off.
 *
 * One poster thread and the owner meet at a round number; then the owner
 * destroys the wheel at once, and the poster posts after a delay that
 * closes in on the moment the destroy refuses posts, where the race is.
 * A round is judged only by results, never by time. The test runs a count
 * of rounds or for a few seconds, whichever ends first (tests/README.md
 * says how soon the old queue failed it); a machine so loaded that the two
 * threads rarely run at once makes it run fewer rounds, not longer.
 *
 * Usage: test_requests_destroy [rounds [seconds]]  (default 5000 2)
 */
#include <limits.h>
#include <pthread.h>
#include <sched.h>
#include <time.h>

#include "common.h"

static struct tw_wheel *wheel;  /* atomic: the round's wheel */
static struct tw_timer timer;
static struct tw_request req;
static unsigned round_go;       /* atomic: the round the poster may run */
static unsigned round_ready;    /* atomic: the round the poster is about to post in */
static unsigned round_done;     /* atomic: the round the poster has posted in */
static unsigned post_delay;     /* atomic: how long the poster waits in a round */
static int post_rc;             /* atomic */
static unsigned rounds = 5000;
static unsigned seconds = 2;

/* The poster's delay: a short wait, sometimes none. */
static void dawdle(unsigned n)
{
	for (volatile unsigned i = 0; i < n; i++)
		;
}

static uint64_t mono_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Iterations of dawdle() per ns, on this machine and build: the best of
 * a few tries, since a try that was preempted counts too few. */
static double dawdle_rate(void)
{
	const unsigned n = 1u << 17;
	double best = 0;

	for (int i = 0; i < 8; i++) {
		uint64_t t0 = mono_ns();
		dawdle(n);
		double rate = (double)n / (double)(mono_ns() - t0 + 1);
		best = rate > best ? rate : best;
	}
	return best;
}

/* Spins a while, so that both threads start their round close together
 * when each has a core; then yields, for a machine where they share one. */
static void wait_for(const unsigned *word, unsigned value)
{
	for (unsigned spins = 0; __atomic_load_n(word, __ATOMIC_ACQUIRE) != value; spins++)
		if (spins > 20000)
			sched_yield();
}

/* Never runs: a destroyed wheel applies no request. */
static void on_fire(struct tw_timer *t)
{
	(void)t;
	fail_msg("a timer of a destroyed wheel fired");
}

static void *poster(void *arg)
{
	(void)arg;
	for (unsigned n = 1; n <= rounds; n++) {
		wait_for(&round_go, n);
		struct tw_wheel *w = __atomic_load_n(&wheel, __ATOMIC_RELAXED);
		if (!w)
			break; /* the owner's time is up */
		__atomic_store_n(&round_ready, n, __ATOMIC_RELEASE);
		dawdle(__atomic_load_n(&post_delay, __ATOMIC_RELAXED));
		int rc = n % 2 ? tw_post_mod(w, &req, &timer, 5000) : tw_post_del(w, &req, &timer);
		/* Every third round posts again at once: a re-post that replaces
		 * the queued one (1), or meets the close taking it, or finds the
		 * queue closed and completes the request itself. */
		if (n % 3 == 0) {
			int again = tw_post_mod(w, &req, &timer, 6000);
			if (again != -TW_ESHUTDOWN)
				rc = again;
		}
		__atomic_store_n(&post_rc, rc, __ATOMIC_RELAXED);
		__atomic_store_n(&round_done, n, __ATOMIC_RELEASE);
	}
	return NULL;
}

static void test_post_racing_destroy_is_done(void **state)
{
	unsigned refused = 0, queued = 0, replaced = 0, most = UINT_MAX;
	uint64_t shortest = UINT64_MAX;
	double rate = dawdle_rate();
	uint64_t end = mono_ns() + (uint64_t)seconds * 1000000000u;
	unsigned n;
	pthread_t thread;

	(void)state;
	tw_timer_init(&timer, on_fire);
	assert_int_equal(pthread_create(&thread, NULL, poster, NULL), 0);
	for (n = 1; n <= rounds && mono_ns() < end; n++) {
		struct tw_wheel *w;

		assert_int_equal(tw_wheel_create(&w, NULL, 0), 0);
		assert_int_equal(tw_set_notify(w, test_hold_hook, NULL), 0);
		__atomic_store_n(&wheel, w, __ATOMIC_RELAXED);
		__atomic_store_n(&round_go, n, __ATOMIC_RELEASE);
		wait_for(&round_ready, n);
		uint64_t t0 = mono_ns();
		tw_wheel_destroy(w); /* the hook still holds it */
		uint64_t took = mono_ns() - t0;
		wait_for(&round_done, n);

		int rc = __atomic_load_n(&post_rc, __ATOMIC_RELAXED);
		/* The post's delay closes in on the destroy's refusal, where the
		 * race is: shorter after a refused post, longer after one that
		 * came first, by steps in proportion, so that it gets there in a
		 * few dozen rounds on any machine and build, and of varying size,
		 * so that every offset around it comes up. */
		unsigned delay = __atomic_load_n(&post_delay, __ATOMIC_RELAXED);
		unsigned step = 1 + n % 5 + delay / 16;
		delay = rc == -TW_ESHUTDOWN ? delay - (delay < step ? delay : step) : delay + 2 * step;
		/* At most four times the quickest destroy: when the two threads
		 * share a core, the poster's delay holds the owner back, every
		 * post comes first, and the delay would grow without end. */
		if (took < shortest) {
			shortest = took;
			most = (unsigned)(4 * rate * (double)shortest) + 64;
		}
		if (delay > most)
			delay = most;
		__atomic_store_n(&post_delay, delay, __ATOMIC_RELAXED);
		if (rc == -TW_ESHUTDOWN) {
			refused++;
		} else {
			if ((rc != 0 && rc != 1) || !tw_request_done(&req))
				fail_msg("round %u: the post returned %d, and its request is %s after the destroy", n,
					 rc, tw_request_done(&req) ? "done" : "not done");
			assert_int_equal(tw_request_result(&req), -TW_ESHUTDOWN);
			assert_int_equal(tw_request_wait(w, &req), -TW_ESHUTDOWN);
			queued++;
			replaced += rc == 1;
		}
		assert_int_equal(tw_set_notify(w, NULL, NULL), 0); /* releases the wheel */
	}
	__atomic_store_n(&wheel, NULL, __ATOMIC_RELAXED);
	__atomic_store_n(&round_go, n, __ATOMIC_RELEASE);
	assert_int_equal(pthread_join(thread, NULL), 0);
	print_message("%u rounds: %u posts refused, %u queued and done by the destroy or the post, "
		      "%u of them by a re-post that replaced the first (the post's delay %u, at most %u)\n",
		      n - 1, refused, queued, replaced, post_delay, most);
	assert_false(tw_pending(&timer));
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_post_racing_destroy_is_done),
	};
	if (argc > 1)
		rounds = (unsigned)strtoul(argv[1], NULL, 0);
	if (argc > 2)
		seconds = (unsigned)strtoul(argv[2], NULL, 0);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
