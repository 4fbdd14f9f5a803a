// SPDX-License-Identifier: MIT
//
// timerwheel::request on a real wheel and the real clock: a worker thread
// arms, re-arms and cancels the owner's timers; the owner advances until
// every armed timer has fired. Exactly once, never before the deadline
// the worker asked for, none after a done cancel; a request's destructor
// waits for the owner (it returns only after the owner, held off, drains).
// Runs under ThreadSanitizer in CI.
#include <timerwheel.hpp>

extern "C" {
#include "../common.h"
}

#include <atomic>
#include <memory>
#include <thread> // std::this_thread only: mingw-w64's win32 thread model has no std::thread

#include <pthread.h>

using namespace std::chrono_literals;
namespace tws = timerwheel;

namespace {

constexpr int N = 64;

struct slot {
	tws::timer t;
	std::atomic<int> fired{0};
	std::atomic<std::uint64_t> fired_at{0};
	std::atomic<std::uint64_t> deadline{0}; // written by the worker before it posts
	slot() : t([this] {
		fired.fetch_add(1, std::memory_order_relaxed);
		fired_at.store(tws::to_ns(tws::clock::now()), std::memory_order_relaxed);
	}) {}
};

void test_requests(void **)
{
	tws::wheel w(tws::wheel::config{100us, 0, 0ns});
	assert_true(static_cast<bool>(w));
	static slot slots[N];
	std::atomic<bool> worker_done{false};
	std::atomic<int> wakes{0};
	assert_true(w.set_wake([](tw_wheel *, void *arg) { static_cast<std::atomic<int> *>(arg)->fetch_add(1); }, &wakes)
			    .ok());

	// The owner's pause: 1 asked by the worker, 2 paused, 3 draining again.
	std::atomic<int> hold{0};
	std::atomic<bool> early{false};
	struct ctx {
		tws::wheel *w;
		std::atomic<bool> *worker_done;
		std::atomic<int> *hold;
		std::atomic<bool> *early;
	} c{&w, &worker_done, &hold, &early};
	auto work = [](void *arg) -> void * {
		tws::wheel &w = *static_cast<ctx *>(arg)->w;
		for (int i = 0; i < N; i++) {
			tws::request r;
			// The ones to cancel are due in an hour, so the cancel comes first.
			tws::clock::time_point at = tws::clock::now() +
					     (i % 4 == 1 ? std::chrono::microseconds(3600s)
							 : std::chrono::microseconds(500 + 100 * i));
			slots[i].deadline.store(tws::to_ns(at), std::memory_order_relaxed);
			tws::result p = (i % 3 == 0) ? r.post_rearm(w, slots[i].t, at, 200us) : r.post_rearm(w, slots[i].t, at);
			assert_true(p.ok());
			tws::result done = r.wait();
			assert_int_equal(done.raw(), 0); // it was idle
			assert_true(r.done());
			if (i % 4 == 1) {
				// Cancelled before it is due: after the done cancel
				// the timer must never fire.
				tws::request c;
				assert_true(c.post_cancel(w, slots[i].t).ok());
				assert_true(c.wait_for(10s).ok());
				slots[i].deadline.store(UINT64_MAX, std::memory_order_relaxed);
			}
			// r and c go out of scope here: their destructors wait (done already).
		}
		while (slots[0].fired.load() == 0)
			std::this_thread::sleep_for(100us);
		// Posted and left while the owner holds off: the destructor
		// returns only once the owner has drained, after its pause.
		std::atomic<int> &hold = *static_cast<ctx *>(arg)->hold;
		hold.store(1);
		while (hold.load() == 1)
			std::this_thread::sleep_for(50us);
		{
			tws::request r;
			assert_true(r.post_rearm_after(w, slots[0].t, 1ms).ok());
		}
		if (hold.load() != 3)
			static_cast<ctx *>(arg)->early->store(true); // told after the join
		static_cast<ctx *>(arg)->worker_done->store(true, std::memory_order_release);
		return nullptr;
	};
	pthread_t worker;
	assert_int_equal(pthread_create(&worker, nullptr, work, &c), 0);

	// The owner's loop: advance until the worker is done and nothing is armed.
	for (;;) {
		if (hold.load() == 1) {
			hold.store(2);
			std::this_thread::sleep_for(20ms);
			hold.store(3);
		}
		assert_true(w.advance().ok());
		if (worker_done.load(std::memory_order_acquire) && w.count() == 0) {
			(void)w.drain();
			if (w.count() == 0)
				break;
		}
		std::this_thread::sleep_for(50us);
	}
	assert_int_equal(pthread_join(worker, nullptr), 0);
	assert_false(early.load()); // ~request returned before the owner drained

	for (int i = 0; i < N; i++) {
		int want = (i % 4 == 1) ? 0 : 1;
		if (i == 0)
			want = 2; // re-armed at the end
		if (slots[i].fired.load() != want)
			fail_msg("timer %d fired %d times, not %d", i, slots[i].fired.load(), want);
		std::uint64_t d = slots[i].deadline.load();
		if (want && i != 0)
			assert_true(slots[i].fired_at.load() >= d);
	}
	assert_true(w.check().ok());
}

// A timer armed only through a request, then destroyed by its owner while
// armed: its destructor cancels it on the wheel the request named.
void test_armed_by_request_then_destroyed(void **)
{
	tws::wheel w(tws::clock::time_point(0s));
	auto t = std::make_unique<tws::timer>([] {});
	struct ctx {
		tws::wheel *w;
		tws::timer *t;
	} c{&w, t.get()};
	auto work = [](void *arg) -> void * {
		auto *x = static_cast<ctx *>(arg);
		tws::request r;
		if (!r.post_rearm(*x->w, *x->t, tws::clock::time_point(1h)))
			return arg;
		return r.wait().raw() == 0 ? nullptr : arg; // destroyed once done
	};
	pthread_t worker;
	assert_int_equal(pthread_create(&worker, nullptr, work, &c), 0);
	while (w.count() == 0)
		(void)w.drain();
	void *failed;
	assert_int_equal(pthread_join(worker, &failed), 0);
	assert_null(failed);
	assert_true(t->pending());
	t.reset();
	assert_int_equal(w.count(), 0);
	assert_true(w.check().ok());
}

// A post that fails leaves the timer's wheel as it was: destroyed, the
// timer still cancels itself on the wheel it is armed on.
void test_failed_post_keeps_wheel(void **)
{
	tws::wheel a(tws::clock::time_point(0s));
	auto t = std::make_unique<tws::timer>([] {});
	auto p = std::make_unique<tws::periodic_timer>([] {});
	assert_true(t->arm(a, tws::clock::time_point(1h)).ok());
	assert_true(p->start(a, tws::clock::time_point(1h), 1s).ok());
	tws::wheel_ref none(nullptr);
	{
		tws::request r;
		assert_true(r.post_rearm(none, *t, tws::clock::time_point(2h)).error() == std::errc::invalid_argument);
		assert_true(r.post_rearm(none, *t, tws::clock::time_point(2h), 1ms).error() == std::errc::invalid_argument);
		assert_true(r.post_rearm_after(none, *t, 1s).error() == std::errc::invalid_argument);
		assert_true(r.post_cancel(none, *p).error() == std::errc::invalid_argument);
	} // never posted: nothing to wait for
	assert_int_equal(t->cancel().value(), 1); // on a, where it is armed
	assert_true(t->arm(a, tws::clock::time_point(1h)).ok());
	t.reset();
	p.reset();
	assert_int_equal(a.count(), 0);
	assert_true(a.check().ok());
}

// On the owner's thread a request is finished with settle(): its
// destructor then returns at once instead of waiting for itself.
void test_settle_on_owner(void **)
{
	tws::wheel w(tws::clock::time_point(0s));
	tws::timer t([] {});
	{
		tws::request r;
		assert_true(r.settle().error() == std::errc::invalid_argument); // never posted
		assert_true(r.post_rearm(w, t, tws::clock::time_point(1s)).ok());
		assert_false(r.done());
		assert_int_equal(r.settle().raw(), 0); // applied: it was idle
		assert_true(r.done());
		assert_true(t.pending());
		// From a callback nothing is applied: EBUSY, the request still queued.
		tws::request c;
		struct {
			tws::wheel *w;
			tws::request *c;
			tws::timer *t;
			int posted, settled;
		} x{&w, &c, &t, -1, 0};
		tws::timer s([&x] {
			x.posted = x.c->post_cancel(*x.w, *x.t).raw();
			x.settled = x.c->settle().raw();
		});
		assert_true(s.arm(w, tws::clock::time_point(0s)).ok());
		assert_int_equal(w.advance(tws::clock::time_point(0s)).value(), 1);
		assert_int_equal(x.posted, 0);
		assert_int_equal(x.settled, -EBUSY);
		assert_false(c.done());
		assert_true(t.pending());
		assert_int_equal(c.settle().raw(), 1); // outside: applied, t was armed
		assert_false(t.pending());
	}
	assert_int_equal(w.count(), 0);
	assert_true(w.check().ok());
}

} // namespace

int main()
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_requests),
		cmocka_unit_test(test_armed_by_request_then_destroyed),
		cmocka_unit_test(test_failed_post_keeps_wheel),
		cmocka_unit_test(test_settle_on_owner),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
