// SPDX-License-Identifier: MIT
//
// timerwheel::uring_loop and uring_attachment on a real ring and the real
// clock: timers fire none early; letting go leaves the program's wheel
// with its timers armed, also from a callback; a close refused while the
// loop runs on another thread is an error value and leaves it open. Skips, saying so, where the kernel refuses
// io_uring (as every io_uring test does).
#include <liburing.h>
#include <timerwheel/uring.hpp>

#include "aborts.hpp"

#include <atomic>
#include <optional>
#include <thread>

#include "stamp.hpp"

extern "C" {
#include "../uring/helpers.h"
}

using namespace std::chrono_literals;
namespace tws = timerwheel;

namespace {

void test_loop(void **)
{
	tws::wheel w(tws::uring_loop::now());
	stamp later;
	{
		tws::uring_loop loop(w);
		tw_test_skip_if_refused(loop.error() ? -loop.error().value() : 0);
		assert_true(static_cast<bool>(loop));
		stamp s[20];
		for (int i = 0; i < 20; i++)
			assert_true(s[i].arm(w, std::chrono::milliseconds(1 + i % 5)).ok());
		// Runs until nothing is armed.
		assert_true(loop.run().ok());
		for (stamp &x : s) {
			assert_int_equal(x.fired, 1);
			assert_int_equal(x.early, 0);
		}

		// Closing from a callback of its run works: run() returns, the
		// loop is empty, and the wheel keeps its other timers.
		int closed = 1;
		stamp far;
		assert_true(far.arm(w, 1h).ok());
		tws::timer closer([&loop, &closed] {
			closed = loop.close().raw();
			if (closed != 0)
				loop.stop(); // a refused close fails below, not in an hour
		});
		assert_true(closer.arm(w, tws::clock::now() + 1ms).ok());
		assert_true(loop.run().ok());
		assert_int_equal(closed, 0);
		assert_false(static_cast<bool>(loop));
		assert_true(far.t.pending());
		assert_int_equal(far.fired, 0);
		assert_true(far.t.cancel().ok());
		loop = tws::uring_loop(w);
		assert_true(static_cast<bool>(loop));
		assert_true(later.arm(w, 1h).ok());
	} // lets go: the wheel is the program's, its timer armed
	assert_true(later.t.pending());
	assert_int_equal(w.advance(later.due + w.tick()).value(), 1);
	assert_int_equal(later.fired, 1);
	assert_true(w.check().ok());
}

void test_attachment(void **)
{
	struct io_uring ring;
	tw_test_ring_init(&ring, 8, 0);
	tws::wheel w(tws::uring_attachment::now());
	{
		tws::uring_attachment u(w, &ring);
		assert_true(static_cast<bool>(u));
		assert_true(u.ring() == &ring);
		stamp s;
		assert_true(s.arm(w, 2ms).ok());
		while (s.fired == 0) {
			struct io_uring_cqe *cqe;
			assert_true(io_uring_submit_and_wait(&ring, 1) >= 0);
			while (io_uring_peek_cqe(&ring, &cqe) == 0) {
				assert_int_equal(u.handle_cqe(cqe).value(), 1); // nothing else is on the ring
				io_uring_cqe_seen(&ring, cqe);
			}
		}
		assert_int_equal(s.early, 0);
		// A second backend on the same wheel is refused, as a value.
		tws::uring_attachment again(w, &ring);
		assert_false(static_cast<bool>(again));
		assert_true(again.error() == std::errc::device_or_resource_busy);
		assert_true(u.detach().ok());
		assert_false(static_cast<bool>(u));
	}
	io_uring_queue_exit(&ring);
	assert_true(w.check().ok());
}

// Moves leave the source empty. A move onto a loop from a callback of its
// run closes it; one from another thread while it runs stops the program,
// loudly: no silent swap.
void test_move_loop(void **)
{
	tws::wheel w(tws::uring_loop::now()), w2(tws::uring_loop::now());
	tws::uring_loop a(w);
	tw_test_skip_if_refused(a.error() ? -a.error().value() : 0);
	tw_uring_loop *first = a.native();
	tws::uring_loop b(std::move(a));
	assert_false(static_cast<bool>(a));
	assert_true(b.native() == first);
	tws::uring_loop c(w2);
	assert_true(static_cast<bool>(c));
	c = std::move(b); // closes the loop it held
	assert_false(static_cast<bool>(b));
	assert_true(c.native() == first);
	b = tws::uring_loop(w2);
	assert_true(static_cast<bool>(b));
	assert_true(b.native() != first);
	assert_true(b.close().ok());
	assert_true(c.close().ok());
	assert_true(w.check().ok());

	// A move-assignment onto the running loop, from its callback, closes
	// it and takes the other: run() returns.
	{
		tws::wheel cw(tws::uring_loop::now()), cw2(tws::uring_loop::now());
		tws::uring_loop running(cw), other(cw2);
		tw_uring_loop *second = other.native();
		stamp far;
		assert_true(far.arm(cw, 1h).ok());
		tws::timer t([&running, &other] { running = std::move(other); });
		assert_true(t.arm(cw, tws::clock::now() + 1ms).ok());
		assert_true(running.run().ok());
		assert_true(running.native() == second);
		assert_false(static_cast<bool>(other));
		assert_true(far.t.pending());
		assert_true(cw.check().ok());
	}
	// And so does a destructor run from a callback of its run.
	{
		tws::wheel cw(tws::uring_loop::now());
		stamp far;
		assert_true(far.arm(cw, 1h).ok());
		auto *l = new tws::uring_loop(cw);
		tws::timer t([&l] { delete std::exchange(l, nullptr); });
		assert_true(t.arm(cw, tws::clock::now() + 1ms).ok());
		assert_true(l->run().ok());
		assert_null(l);
		assert_true(far.t.pending());
		assert_true(cw.check().ok());
	}
#if defined(TW_TEST_HAVE_ABORTS)
	// In a child: a destructor on another thread while run() runs aborts.
	assert_true(aborts([] {
		tws::wheel cw(tws::uring_loop::now());
		auto *l = new tws::uring_loop(cw);
		std::atomic<bool> running{false};
		std::thread other([&] {
			while (!running.load())
				std::this_thread::yield();
			delete l;
		});
		tws::timer t([&running] {
			running.store(true);
			for (;;)
				std::this_thread::yield(); // until the other thread aborts
		});
		(void)t.arm(cw, tws::clock::now() + 1ms);
		(void)l->run();
	}));
#endif
}

// The attachment's destructor from a timer callback inside handle_cqe():
// the wheel is the program's again, and nothing of the old backend fires.
void test_attachment_destroyed_from_callback(void **)
{
	struct io_uring ring;
	tw_test_ring_init(&ring, 8, 0);
	tws::wheel w(tws::uring_attachment::now());
	std::optional<tws::uring_attachment> u;
	u.emplace(w, &ring);
	assert_true(static_cast<bool>(*u));
	stamp far, soon;
	assert_true(far.arm(w, 1h).ok());
	struct {
		std::optional<tws::uring_attachment> &u;
		stamp &soon;
		tws::wheel &w;
	} c{u, soon, w};
	tws::timer closer([&c] {
		c.u.reset();
		assert_true(c.soon.arm(c.w, 5ms).ok()); // the old backend never fires it
	});
	assert_true(closer.arm(w, tws::clock::now() + 1ms).ok());
	tw_uring *native = u->native();
	while (u) {
		struct io_uring_cqe *cqe;
		assert_true(io_uring_submit_and_wait(&ring, 1) >= 0);
		while (u && io_uring_peek_cqe(&ring, &cqe) == 0) {
			assert_int_equal(tw_uring_handle_cqe(native, cqe), 1);
			io_uring_cqe_seen(&ring, cqe);
		}
	}
	// Nothing of the old backend's is left queued; stragglers are tagged.
	struct io_uring_cqe *cqe;
	struct __kernel_timespec ts = {0, 20'000'000};
	assert_true(io_uring_submit(&ring) >= 0);
	while (io_uring_wait_cqe_timeout(&ring, &cqe, &ts) == 0) {
		assert_true(tw_uring_is_tagged(cqe->user_data));
		io_uring_cqe_seen(&ring, cqe);
	}
	assert_int_equal(soon.fired, 0);
	assert_true(soon.t.pending() && far.t.pending());
	assert_true(w.check().ok());
	// Attached again, it fires what the old one left.
	u.emplace(w, &ring);
	assert_true(static_cast<bool>(*u));
	while (soon.fired == 0) {
		assert_true(io_uring_submit_and_wait(&ring, 1) >= 0);
		while (io_uring_peek_cqe(&ring, &cqe) == 0) {
			(void)u->handle_cqe(cqe);
			io_uring_cqe_seen(&ring, cqe);
		}
	}
	assert_int_equal(soon.early, 0);
	assert_int_equal(far.fired, 0);
	u.reset();
	io_uring_queue_exit(&ring);
}

// The program tears its ring down first, timers armed and a request of the
// backend's still in the SQ: letting go then touches nothing of the ring.
void test_ring_exit_first(void **)
{
	struct io_uring ring;
	tw_test_ring_init(&ring, 8, 0);
	tws::wheel w(tws::uring_attachment::now());
	stamp later, sooner;
	{
		tws::uring_attachment u(w, &ring);
		assert_true(static_cast<bool>(u));
		assert_true(later.arm(w, 1h).ok());
		assert_true(io_uring_submit(&ring) >= 0); // the timeout in flight
		assert_true(sooner.arm(w, 30min).ok());  // its update queued, not submitted
		io_uring_queue_exit(&ring);
		assert_true(u.detach().ok());
		assert_false(static_cast<bool>(u));
	}
	// The wheel is the program's, its timers armed.
	assert_true(later.t.pending() && sooner.t.pending());
	assert_int_equal(w.count(), 2);
	assert_true(w.check().ok());
	// And the destructor does the same.
	tw_test_ring_init(&ring, 8, 0);
	{
		tws::uring_attachment u(w, &ring);
		assert_true(static_cast<bool>(u));
		assert_true(io_uring_submit(&ring) >= 0);
		io_uring_queue_exit(&ring);
	}
	assert_int_equal(w.count(), 2);
	assert_true(w.check().ok());
}

void test_move_attachment(void **)
{
	struct io_uring ring, ring2;
	tw_test_ring_init(&ring, 8, 0);
	tw_test_ring_init(&ring2, 8, 0);
	tws::wheel w(tws::uring_attachment::now()), w2(tws::uring_attachment::now());
	{
		tws::uring_attachment u(w, &ring);
		assert_true(static_cast<bool>(u));
		tw_uring *first = u.native();
		tws::uring_attachment v(std::move(u));
		assert_false(static_cast<bool>(u));
		assert_true(v.native() == first);
		tws::uring_attachment x(w2, &ring2);
		assert_true(static_cast<bool>(x));
		x = std::move(v); // detaches from w2
		assert_false(static_cast<bool>(v));
		assert_true(x.native() == first);
		tws::uring_attachment again(w2, &ring2); // w2 is free again
		assert_true(static_cast<bool>(again));
	}
	io_uring_queue_exit(&ring);
	io_uring_queue_exit(&ring2);
	assert_true(w.check().ok());
	assert_true(w2.check().ok());
}

} // namespace

int main()
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_loop),
		cmocka_unit_test(test_attachment),
		cmocka_unit_test(test_move_loop),
		cmocka_unit_test(test_move_attachment),
		cmocka_unit_test(test_ring_exit_first),
		cmocka_unit_test(test_attachment_destroyed_from_callback),
	};
	return tw_test_exit(cmocka_run_group_tests(tests, NULL, NULL));
}
