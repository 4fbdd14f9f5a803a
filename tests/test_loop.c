/* SPDX-License-Identifier: MIT */
/* The loop kit: tw_clock_monotonic, tw_deadline, tw_timeout_ms,
 * tw_ns_to_timespec and tw_timeout_timespec, at their ends (0, UINT64_MAX,
 * a past expiry, a deadline 30 days out) and against arithmetic of the
 * test's own: a timeout is checked by multiplying back, never by computing
 * it as the library does. Then on the real clock, with poll() and a
 * timerfd, where "never early" is what counts. */
#if !defined(_WIN32)
#define _GNU_SOURCE /* timerfd, and struct timespec under -std=c11 */
#endif
#include <limits.h>
#include <time.h>

#include "common.h"

#if !defined(_WIN32)
#include <poll.h>
#endif
#if defined(__linux__)
#include <sys/timerfd.h>
#include <unistd.h>
#endif

#define MS 1000000ull
#define SEC 1000000000ull
#define DAY (86400ull * SEC)

/* The largest whole second a struct timespec holds on this target. */
static uint64_t sec_max(void)
{
	return sizeof(time_t) >= 8 ? (uint64_t)INT64_MAX : (uint64_t)INT32_MAX;
}

static void test_deadline_ends(void **state)
{
	uint64_t now = 1000 * SEC;

	(void)state;
	assert_true(tw_deadline(0, 0) == 0);
	assert_true(tw_deadline(now, 0) == now);
	assert_true(tw_deadline(now, 30 * DAY) == now + 30 * DAY);
	assert_true(tw_deadline(0, UINT64_MAX) == UINT64_MAX);
	assert_true(tw_deadline(now, UINT64_MAX) == UINT64_MAX);
	assert_true(tw_deadline(UINT64_MAX, 0) == UINT64_MAX);
	assert_true(tw_deadline(UINT64_MAX, 1) == UINT64_MAX);
	assert_true(tw_deadline(UINT64_MAX - 5, 4) == UINT64_MAX - 1);
	assert_true(tw_deadline(UINT64_MAX - 5, 5) == UINT64_MAX);
	assert_true(tw_deadline(UINT64_MAX - 5, 6) == UINT64_MAX);
}

/* The deadline a wrapping sum would give fires at once; the saturated one
 * never fires before the end of time. */
static void on_fire_count(struct tw_timer *t)
{
	(void)t;
}

static void test_deadline_never_wraps_into_now(void **state)
{
	struct tw_wheel *w;
	struct tw_timer t;
	uint64_t now = 5 * SEC;

	(void)state;
	assert_int_equal(tw_wheel_create(&w, NULL, now), 0);
	tw_timer_init(&t, on_fire_count);
	assert_int_equal(tw_add(w, &t, tw_deadline(now, UINT64_MAX - 1)), 0);
	assert_int_equal(tw_advance(w, now + 30 * DAY), 0);
	assert_true(tw_pending(&t));
	assert_int_equal(tw_advance(w, UINT64_MAX), 1);
	assert_false(tw_pending(&t));
	assert_wheel_sound(w);
	tw_wheel_destroy(w);
}

static void test_timeout_ms_ends(void **state)
{
	uint64_t now = 1000 * SEC;

	(void)state;
	/* Nothing armed: no timeout at all. */
	assert_int_equal(tw_timeout_ms(now, UINT64_MAX), -1);
	assert_int_equal(tw_timeout_ms(0, UINT64_MAX), -1);
	assert_int_equal(tw_timeout_ms(UINT64_MAX, UINT64_MAX), -1);
	/* Due or past: do not sleep. */
	assert_int_equal(tw_timeout_ms(now, now), 0);
	assert_int_equal(tw_timeout_ms(now, now - 1), 0);
	assert_int_equal(tw_timeout_ms(now, 0), 0);
	assert_int_equal(tw_timeout_ms(0, 0), 0);
	assert_int_equal(tw_timeout_ms(UINT64_MAX, UINT64_MAX - 1), 0);
	/* Rounded up: a nanosecond is a whole millisecond of sleep. */
	assert_int_equal(tw_timeout_ms(0, 1), 1);
	assert_int_equal(tw_timeout_ms(now, now + 1), 1);
	assert_int_equal(tw_timeout_ms(now, now + MS), 1);
	assert_int_equal(tw_timeout_ms(now, now + MS + 1), 2);
	assert_int_equal(tw_timeout_ms(now, now + 999 * MS + 999999), 1000);
	/* 24 days fit an int of milliseconds; 30 days do not, and clamp. */
	assert_int_equal(tw_timeout_ms(now, now + 24 * DAY), 24 * 86400 * 1000);
	assert_int_equal(tw_timeout_ms(now, now + 30 * DAY), INT_MAX);
	assert_int_equal(tw_timeout_ms(now, now + (uint64_t)INT_MAX * MS), INT_MAX);
	assert_int_equal(tw_timeout_ms(now, now + (uint64_t)INT_MAX * MS + 1), INT_MAX);
	assert_int_equal(tw_timeout_ms(now, now + (uint64_t)(INT_MAX - 1) * MS + 1), INT_MAX);
	assert_int_equal(tw_timeout_ms(now, now + (uint64_t)(INT_MAX - 1) * MS), INT_MAX - 1);
	assert_int_equal(tw_timeout_ms(0, UINT64_MAX - 1), INT_MAX);
}

/* For every distance, the sleep reaches the expiry and is less than a
 * millisecond longer than needed. */
static void test_timeout_ms_never_early(void **state)
{
	uint64_t rng = test_seed();

	(void)state;
	for (int i = 0; i < 1000000; i++) {
		uint64_t now = test_rand(&rng);
		uint64_t d = test_rand(&rng) >> (test_rand(&rng) % 64);
		uint64_t expires = tw_deadline(now, d);
		int ms;

		if (expires == UINT64_MAX)
			continue;
		d = expires - now;
		ms = tw_timeout_ms(now, expires);
		if (d == 0) {
			assert_int_equal(ms, 0);
		} else if (d > (uint64_t)(INT_MAX - 1) * MS) {
			/* Rounded up or clamped: the loop wakes, fires nothing, and
			 * sleeps again. */
			assert_int_equal(ms, INT_MAX);
		} else {
			assert_true(ms >= 1);
			assert_true((uint64_t)ms * MS >= d);
			assert_true((uint64_t)(ms - 1) * MS < d);
		}
	}
}

/* What lateness a poll() loop adds, as the README says: a loop that sleeps
 * tw_timeout_ms() to tw_next_expiry() and advances when it wakes fires a
 * timer less than one tick plus one millisecond after its expiry, once the
 * OS wakes it on time, and in one wake-up. Simulated: the OS here wakes
 * exactly when the timeout ends. On ticks of 1 ms, 100 us, 10 ms and 3 ns. */
static uint64_t bound_fired_at;

static void bound_fire(struct tw_timer *t)
{
	(void)t;
	bound_fired_at = 1;
}

static void test_poll_wake_bound(void **state)
{
	static const uint64_t ticks[] = { MS, MS / 10, 10 * MS, 3 };
	uint64_t rng = test_seed();

	(void)state;
	for (size_t k = 0; k < sizeof(ticks) / sizeof(ticks[0]); k++) {
		struct tw_config cfg = { .tick_ns = ticks[k] };
		uint64_t worst = 0;

		for (int i = 0; i < 5000; i++) {
			uint64_t now = test_rand(&rng) >> 8, expires;
			struct tw_wheel *w;
			struct tw_timer t;
			int wakeups = 0;

			assert_int_equal(tw_wheel_create(&w, &cfg, now), 0);
			expires = now + test_rand(&rng) % (1 + (test_rand(&rng) >> (20 + test_rand(&rng) % 40)));
			tw_timer_init(&t, bound_fire);
			assert_int_equal(tw_add(w, &t, expires), 0);
			for (bound_fired_at = 0; !bound_fired_at; wakeups++) {
				int ms = tw_timeout_ms(now, tw_next_expiry(w));

				assert_true(ms >= 0);
				now += (uint64_t)ms * MS;
				assert_true(tw_advance(w, now) >= 0);
			}
			assert_int_equal(wakeups, 1);
			assert_true(now >= expires);
			assert_true(now - expires < ticks[k] + MS);
			if (now - expires > worst)
				worst = now - expires;
			tw_wheel_destroy(w);
		}
		print_message("# tick %llu ns: latest firing %llu ns after the expiry\n",
			      (unsigned long long)ticks[k], (unsigned long long)worst);
	}
}

static void assert_ts(const struct timespec *ts, uint64_t sec, uint64_t nsec)
{
	assert_true((uint64_t)ts->tv_sec == sec);
	assert_true((uint64_t)ts->tv_nsec == nsec);
}

static void test_ns_to_timespec_ends(void **state)
{
	struct timespec ts;
	uint64_t now = 1000 * SEC + 123456789;

	(void)state;
	assert_int_equal(tw_ns_to_timespec(NULL, now), -EINVAL);
	/* 0 would disarm a timerfd: it becomes 1 ns, as far in the past. */
	assert_int_equal(tw_ns_to_timespec(&ts, 0), 0);
	assert_ts(&ts, 0, 1);
	assert_int_equal(tw_ns_to_timespec(&ts, 1), 0);
	assert_ts(&ts, 0, 1);
	assert_int_equal(tw_ns_to_timespec(&ts, SEC - 1), 0);
	assert_ts(&ts, 0, SEC - 1);
	assert_int_equal(tw_ns_to_timespec(&ts, SEC), 0);
	assert_ts(&ts, 1, 0);
	assert_int_equal(tw_ns_to_timespec(&ts, now), 0);
	assert_ts(&ts, 1000, 123456789);
	assert_int_equal(tw_ns_to_timespec(&ts, now + 30 * DAY), 0);
	assert_ts(&ts, 1000 + 30 * 86400, 123456789);
	assert_int_equal(tw_ns_to_timespec(&ts, UINT64_MAX), 0);
	if (sec_max() >= UINT64_MAX / SEC)
		assert_ts(&ts, UINT64_MAX / SEC, UINT64_MAX % SEC);
	else
		assert_ts(&ts, sec_max(), SEC - 1);
}

static void test_timeout_timespec_ends(void **state)
{
	struct timespec ts;
	uint64_t now = 1000 * SEC;

	(void)state;
	assert_int_equal(tw_timeout_timespec(NULL, now, now + 1), -EINVAL);
	/* Nothing armed: 1, wait without a timeout (test_time_t_end checks
	 * what ts holds then). */
	assert_int_equal(tw_timeout_timespec(&ts, now, UINT64_MAX), 1);
	assert_int_equal(tw_timeout_timespec(&ts, 0, UINT64_MAX), 1);
	/* Due or past: zero. */
	assert_int_equal(tw_timeout_timespec(&ts, now, now), 0);
	assert_ts(&ts, 0, 0);
	assert_int_equal(tw_timeout_timespec(&ts, now, 0), 0);
	assert_ts(&ts, 0, 0);
	assert_int_equal(tw_timeout_timespec(&ts, UINT64_MAX, UINT64_MAX - 1), 0);
	assert_ts(&ts, 0, 0);
	/* Exact to the nanosecond. */
	assert_int_equal(tw_timeout_timespec(&ts, 0, 1), 0);
	assert_ts(&ts, 0, 1);
	assert_int_equal(tw_timeout_timespec(&ts, now, now + 2 * SEC + 5), 0);
	assert_ts(&ts, 2, 5);
	assert_int_equal(tw_timeout_timespec(&ts, now, now + 30 * DAY), 0);
	assert_ts(&ts, 30 * 86400, 0);
	assert_int_equal(tw_timeout_timespec(&ts, 0, UINT64_MAX - 1), 0);
	if (sec_max() >= UINT64_MAX / SEC)
		assert_ts(&ts, (UINT64_MAX - 1) / SEC, (UINT64_MAX - 1) % SEC);
	else
		assert_ts(&ts, sec_max(), SEC - 1);
}

/* The end of time_t, as the header says: with a 64-bit time_t every
 * uint64_t converts exactly, UINT64_MAX to 18446744073 s and 709551615 ns;
 * with a 32-bit one (i386 without _TIME_BITS=64) the last exact time is
 * 2^31 - 1 s and 999999999 ns, and everything later saturates to that,
 * nanoseconds included. A timeout to UINT64_MAX holds UINT64_MAX ns,
 * whatever now. */
static void test_time_t_end(void **state)
{
	struct timespec ts;
	uint64_t last_ns = (uint64_t)INT32_MAX * SEC + (SEC - 1); /* a 32-bit time_t's latest */
	static const uint64_t nows[] = { 0, 1000 * SEC, UINT64_MAX - 1 };

	(void)state;
	print_message("# time_t of %u bits\n", (unsigned)(8 * sizeof(time_t)));
	assert_true(sizeof(time_t) == 4 || sizeof(time_t) == 8);
	assert_int_equal(tw_ns_to_timespec(&ts, last_ns), 0);
	assert_ts(&ts, INT32_MAX, SEC - 1);
	assert_int_equal(tw_timeout_timespec(&ts, 0, last_ns), 0);
	assert_ts(&ts, INT32_MAX, SEC - 1);
	if (sizeof(time_t) == 8) {
		assert_int_equal(tw_ns_to_timespec(&ts, last_ns + 1), 0);
		assert_ts(&ts, (uint64_t)INT32_MAX + 1, 0);
		assert_int_equal(tw_ns_to_timespec(&ts, UINT64_MAX), 0);
		assert_ts(&ts, 18446744073ull, 709551615ull);
		for (size_t i = 0; i < sizeof(nows) / sizeof(nows[0]); i++) {
			assert_int_equal(tw_timeout_timespec(&ts, nows[i], UINT64_MAX), 1);
			assert_ts(&ts, 18446744073ull, 709551615ull);
		}
		return;
	}
	/* 32 bits: from 2^31 s on, the latest timespec, whatever the ns. */
	static const uint64_t past[] = { 0, 1, 5, SEC - 1, SEC + 7, 1000 * SEC };
	for (size_t i = 0; i < sizeof(past) / sizeof(past[0]); i++) {
		assert_int_equal(tw_ns_to_timespec(&ts, last_ns + 1 + past[i]), 0);
		assert_ts(&ts, INT32_MAX, SEC - 1);
		assert_int_equal(tw_timeout_timespec(&ts, 0, last_ns + 1 + past[i]), 0);
		assert_ts(&ts, INT32_MAX, SEC - 1);
	}
	assert_int_equal(tw_ns_to_timespec(&ts, UINT64_MAX), 0);
	assert_ts(&ts, INT32_MAX, SEC - 1);
	for (size_t i = 0; i < sizeof(nows) / sizeof(nows[0]); i++) {
		assert_int_equal(tw_timeout_timespec(&ts, nows[i], UINT64_MAX), 1);
		assert_ts(&ts, INT32_MAX, SEC - 1);
	}
}

static void test_clock(void **state)
{
	uint64_t last = tw_clock_monotonic();

	(void)state;
	assert_true(last > 0);
	for (int i = 0; i < 100000; i++) {
		uint64_t now = tw_clock_monotonic();

		assert_true(now >= last);
		last = now;
	}
#if !defined(_WIN32)
	{
		/* The same clock as clock_gettime(CLOCK_MONOTONIC): bracketed. */
		struct timespec a, b;
		uint64_t t, lo, hi;

		clock_gettime(CLOCK_MONOTONIC, &a);
		t = tw_clock_monotonic();
		clock_gettime(CLOCK_MONOTONIC, &b);
		lo = (uint64_t)a.tv_sec * SEC + (uint64_t)a.tv_nsec;
		hi = (uint64_t)b.tv_sec * SEC + (uint64_t)b.tv_nsec;
		assert_true(lo <= t && t <= hi);
	}
#endif
}

/* A uv_timer_start() of a repeating timer that is running maps to tw_mod()
 * of its struct tw_periodic with the new period: tw_add() would return
 * -EBUSY. The restarted timer stays periodic. */
static int periodic_fired;

static void on_periodic(struct tw_timer *t)
{
	(void)t;
	periodic_fired++;
}

static void test_restart_periodic_with_mod(void **state)
{
	struct tw_wheel *w;
	struct tw_periodic p;

	(void)state;
	periodic_fired = 0;
	assert_int_equal(tw_wheel_create(&w, NULL, 0), 0);
	assert_int_equal(tw_periodic_init(&p, on_periodic, 10 * MS), 0);
	assert_int_equal(tw_add(w, &p.timer, 10 * MS), 0);
	assert_int_equal(tw_add(w, &p.timer, 5 * MS), -EBUSY);
	/* Restart: first expiry 50 ms, then every 20 ms. */
	p.period = 20 * MS;
	assert_int_equal(tw_mod(w, &p.timer, tw_deadline(tw_now(w), 50 * MS)), 1);
	assert_int_equal(tw_advance(w, 49 * MS), 0);
	assert_int_equal(tw_advance(w, 50 * MS), 1);
	assert_true(tw_pending(&p.timer));
	assert_true(p.timer.expires == 70 * MS);
	assert_int_equal(tw_advance(w, 69 * MS), 0);
	assert_int_equal(tw_advance(w, 70 * MS), 1);
	assert_int_equal(periodic_fired, 2);
	assert_wheel_sound(w);
	tw_wheel_destroy(w);
}

#if !defined(_WIN32)
/* The plain loop on the real clock: poll() for tw_timeout_ms(), advance to
 * the clock. Every timer fires once, never before its expiry, by the clock
 * read in its callback as well as by the advance's now. */
struct real_timer {
	struct tw_timer t;
	uint64_t expires;
	int fired;
};
static struct tw_wheel *real_wheel;
static int real_early;

static void on_real(struct tw_timer *t)
{
	struct real_timer *r = tw_container_of(t, struct real_timer, t);

	r->fired++;
	if (tw_clock_monotonic() < r->expires || tw_now(real_wheel) < r->expires)
		real_early++;
}

static void test_poll_loop_never_early(void **state)
{
	struct real_timer timers[64];
	uint64_t start = tw_clock_monotonic(), rng = test_seed();
	int wakeups = 0;

	(void)state;
	real_early = 0;
	assert_int_equal(tw_wheel_create(&real_wheel, NULL, start), 0);
	for (int i = 0; i < 64; i++) {
		/* Sub-millisecond offsets: the rounding is what is tested. */
		timers[i].expires = tw_deadline(start, test_rand(&rng) % (150 * MS));
		timers[i].fired = 0;
		tw_timer_init(&timers[i].t, on_real);
		assert_int_equal(tw_add(real_wheel, &timers[i].t, timers[i].expires), 0);
	}
	while (tw_count(real_wheel) > 0) {
		int ms = tw_timeout_ms(tw_clock_monotonic(), tw_next_expiry(real_wheel));

		assert_true(ms >= 0);
		assert_true(poll(NULL, 0, ms) >= 0);
		assert_true(tw_advance(real_wheel, tw_clock_monotonic()) >= 0);
		assert_true(++wakeups < 100000);
	}
	for (int i = 0; i < 64; i++)
		assert_int_equal(timers[i].fired, 1);
	assert_int_equal(real_early, 0);
	assert_wheel_sound(real_wheel);
	tw_wheel_destroy(real_wheel);
}
#endif

#if defined(__linux__)
/* A timerfd armed with tw_ns_to_timespec() and TFD_TIMER_ABSTIME expires
 * no sooner than the time given, and one armed for time 0 fires at once
 * instead of being disarmed. */
static void test_timerfd_abstime(void **state)
{
	int fd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC);
	struct itimerspec its;
	uint64_t expires, n;

	(void)state;
	assert_true(fd >= 0);
	memset(&its, 0, sizeof(its));
	for (int i = 0; i < 20; i++) {
		expires = tw_deadline(tw_clock_monotonic(), 100000 + (uint64_t)i * 77777);
		assert_int_equal(tw_ns_to_timespec(&its.it_value, expires), 0);
		assert_int_equal(timerfd_settime(fd, TFD_TIMER_ABSTIME, &its, NULL), 0);
		assert_int_equal(read(fd, &n, sizeof(n)), (int)sizeof(n));
		assert_true(tw_clock_monotonic() >= expires);
	}
	assert_int_equal(tw_ns_to_timespec(&its.it_value, 0), 0);
	assert_int_equal(timerfd_settime(fd, TFD_TIMER_ABSTIME, &its, NULL), 0);
	memset(&its, 0, sizeof(its));
	assert_int_equal(timerfd_gettime(fd, &its), 0);
	/* Expired already (read would not block), or still armed: not disarmed. */
	{
		struct pollfd pfd = { .fd = fd, .events = POLLIN };

		assert_int_equal(poll(&pfd, 1, 5000), 1);
		assert_int_equal(read(fd, &n, sizeof(n)), (int)sizeof(n));
	}
	/* The far end: armed for UINT64_MAX, it stays armed and does not fire. */
	assert_int_equal(tw_ns_to_timespec(&its.it_value, UINT64_MAX), 0);
	assert_int_equal(timerfd_settime(fd, TFD_TIMER_ABSTIME, &its, NULL), 0);
	{
		struct pollfd pfd = { .fd = fd, .events = POLLIN };

		assert_int_equal(poll(&pfd, 1, 10), 0);
	}
	close(fd);
}
#endif

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_deadline_ends),
		cmocka_unit_test(test_deadline_never_wraps_into_now),
		cmocka_unit_test(test_timeout_ms_ends),
		cmocka_unit_test(test_timeout_ms_never_early),
		cmocka_unit_test(test_poll_wake_bound),
		cmocka_unit_test(test_ns_to_timespec_ends),
		cmocka_unit_test(test_timeout_timespec_ends),
		cmocka_unit_test(test_time_t_end),
		cmocka_unit_test(test_clock),
		cmocka_unit_test(test_restart_periodic_with_mod),
#if !defined(_WIN32)
		cmocka_unit_test(test_poll_loop_never_early),
#endif
#if defined(__linux__)
		cmocka_unit_test(test_timerfd_abstime),
#endif
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
