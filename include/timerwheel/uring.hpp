// SPDX-License-Identifier: MIT
/*
 * timerwheel/uring.hpp: the io_uring backend of <timerwheel/uring.h> as
 * owning C++ types, header-only over the C ABI (see <timerwheel.hpp>).
 *
 * Both attach to the program's wheel and never own it (the wheel's clock
 * is CLOCK_MONOTONIC, tw_uring_now(), as timerwheel::clock on Linux):
 *
 * - uring_attachment drives it from the program's own ring
 *   (tw_uring_attach()); hand every completion to handle_cqe().
 * - uring_loop owns a ring and runs it (tw_uring_loop_init()).
 *
 * Destroying either lets go in the order every backend follows (see
 * "Letting go" in <timerwheel/uring.h>): tw_uring_detach(), or
 * tw_uring_loop_close() which then frees the ring. The wheel stays the
 * program's with its timers armed. Declaring the timerwheel::wheel before
 * the backend makes the backend let go first. A wheel destroyed first is
 * released when the backend lets go, which the C API allows too.
 *
 * Closing from a callback. Either may let go from one of the wheel's
 * callbacks, as libuv allows. The loop may also from any callback of its
 * run(). The libuv wrapper has the same rule. The destructor and a
 * move-assignment may come from there too. The wheel is the program's
 * when the call returns; timers already due in the running advance still
 * fire in it. The backend's own memory goes when the library's call
 * returns (handle_cqe() or run()). Neither may let go from another thread.
 * A uring_loop whose run() runs on another thread refuses: close() returns
 * EBUSY and changes nothing. Its destructor, or a move-assignment onto it,
 * cannot return an error: it ends the program (std::abort()) with a
 * message.
 *
 * Movable, not copyable; a moved-from one is empty.
 *
 * A ring the program tears down first (io_uring_queue_exit()) is
 * detected when the backend lets go: it then touches nothing of the
 * ring. The struct io_uring itself must still exist.
 */
#ifndef TIMERWHEEL_URING_HPP
#define TIMERWHEEL_URING_HPP

#include <timerwheel/uring.h>
#include <timerwheel.hpp>

#include <cstdio>
#include <cstdlib>
#include <utility>

namespace timerwheel {

namespace detail {

/*
 * The handle both backends hold, and how it lets go. Release
 * (tw_uring_detach(), tw_uring_loop_close()) refuses with -EBUSY only
 * while the loop runs on another thread. The handle then stays attached.
 * A destructor or move-assignment that cannot let go has no way to say
 * so: it stops the program, loudly.
 */
template <class T, int (*Release)(T *)>
class backend_handle {
public:
	backend_handle() noexcept = default;
	backend_handle(T *p, int err) noexcept : p_(p), err_(err) {}
	backend_handle(const backend_handle &) = delete;
	backend_handle &operator=(const backend_handle &) = delete;
	backend_handle(backend_handle &&o) noexcept : p_(std::exchange(o.p_, nullptr)), err_(std::exchange(o.err_, 0)) {}
	backend_handle &operator=(backend_handle &&o) noexcept
	{
		if (this != &o) {
			release_or_die();
			p_ = std::exchange(o.p_, nullptr);
			err_ = std::exchange(o.err_, 0);
		}
		return *this;
	}
	~backend_handle() { release_or_die(); }

	result release() noexcept
	{
		if (!p_)
			return result(0);
		int r = Release(p_);
		if (r == 0)
			p_ = nullptr;
		return result(r);
	}
	void release_or_die() noexcept
	{
		if (!release()) {
			std::fputs("timerwheel: an io_uring loop destroyed or assigned over while its run() runs "
				   "on another thread\n",
				   stderr);
			std::abort();
		}
	}
	T *get() const noexcept { return p_; }
	int err() const noexcept { return err_; }

private:
	T *p_ = nullptr;
	int err_ = 0;
};

} // namespace detail

class uring_attachment {
public:
	uring_attachment() noexcept = default;
	uring_attachment(wheel_ref w, io_uring *ring) noexcept
	{
		tw_uring *u = nullptr;
		int r = tw_uring_attach(&u, w.native(), ring);
		h_ = handle(r < 0 ? nullptr : u, r);
	}

	/* tw_uring_detach(); allowed from the wheel's callbacks. */
	result detach() noexcept { return h_.release(); }
	/* tw_uring_handle_cqe(): value() 1 if @cqe was the backend's. */
	result handle_cqe(const io_uring_cqe *cqe) noexcept { return result(tw_uring_handle_cqe(h_.get(), cqe)); }
	explicit operator bool() const noexcept { return h_.get() != nullptr; }
	/* Why it could not attach, or no error. */
	std::error_code error() const noexcept { return result(h_.err()).error(); }
	io_uring *ring() const noexcept { return tw_uring_ring(h_.get()); }
	tw_uring *native() const noexcept { return h_.get(); }
	tw_uring_stats stats() const noexcept
	{
		tw_uring_stats s{};
		(void)tw_uring_get_stats(h_.get(), &s);
		return s;
	}
	static clock::time_point now() noexcept { return to_time_point(tw_uring_now()); }

private:
	using handle = detail::backend_handle<tw_uring, &tw_uring_detach>;
	handle h_;
};

class uring_loop {
public:
	uring_loop() noexcept = default;
	/* tw_uring_loop_init(); @opt NULL for the defaults. ENOSYS, EPERM: the kernel refuses io_uring. */
	explicit uring_loop(wheel_ref w, const tw_uring_loop_options *opt = nullptr) noexcept
	{
		tw_uring_loop *l = nullptr;
		int r = tw_uring_loop_init(&l, w.native(), opt);
		h_ = handle(r < 0 ? nullptr : l, r);
	}

	/* tw_uring_loop_close(); allowed from a callback of run(). EBUSY while
	 * run() runs on another thread (then still open). */
	result close() noexcept { return h_.release(); }
	result run() noexcept { return result(tw_uring_run(h_.get())); }
	void stop() noexcept { tw_uring_stop(h_.get()); }
	io_uring_sqe *get_sqe() noexcept { return tw_uring_get_sqe(h_.get()); }
	explicit operator bool() const noexcept { return h_.get() != nullptr; }
	std::error_code error() const noexcept { return result(h_.err()).error(); }
	io_uring *ring() const noexcept { return tw_uring_loop_ring(h_.get()); }
	tw_uring_loop *native() const noexcept { return h_.get(); }
	tw_uring_stats stats() const noexcept
	{
		tw_uring_stats s{};
		(void)tw_uring_loop_get_stats(h_.get(), &s);
		return s;
	}
	static clock::time_point now() noexcept { return to_time_point(tw_uring_now()); }

private:
	using handle = detail::backend_handle<tw_uring_loop, &tw_uring_loop_close>;
	handle h_;
};

} // namespace timerwheel

#endif // TIMERWHEEL_URING_HPP
