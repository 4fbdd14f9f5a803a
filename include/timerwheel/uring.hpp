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
 * program's with its timers armed; declaring the timerwheel::wheel before
 * the backend makes the backend let go first (a wheel destroyed first is
 * released when the backend lets go, which the C API allows too). Neither
 * may be destroyed from one of the wheel's callbacks nor, for the loop,
 * while run() runs: the C calls refuse with -EBUSY there, so the backend
 * would stay attached with nobody to let it go. Movable, not copyable.
 */
#ifndef TIMERWHEEL_URING_HPP
#define TIMERWHEEL_URING_HPP

#include <timerwheel/uring.h>
#include <timerwheel.hpp>

#include <utility>

namespace timerwheel {

class uring_attachment {
public:
	uring_attachment() noexcept = default;
	uring_attachment(wheel_ref w, io_uring *ring) noexcept : err_(tw_uring_attach(&u_, w.native(), ring)) {}
	uring_attachment(const uring_attachment &) = delete;
	uring_attachment &operator=(const uring_attachment &) = delete;
	uring_attachment(uring_attachment &&o) noexcept
		: u_(std::exchange(o.u_, nullptr)), err_(std::exchange(o.err_, 0))
	{
	}
	uring_attachment &operator=(uring_attachment &&o) noexcept
	{
		if (this != &o) {
			(void)detach();
			u_ = std::exchange(o.u_, nullptr);
			err_ = std::exchange(o.err_, 0);
		}
		return *this;
	}
	~uring_attachment() { (void)detach(); }

	/* tw_uring_detach(); EBUSY from a callback (then still attached). */
	result detach() noexcept
	{
		if (!u_)
			return result(0);
		int r = tw_uring_detach(u_);
		if (r == 0)
			u_ = nullptr;
		return result(r);
	}
	/* tw_uring_handle_cqe(): value() 1 if @cqe was the backend's. */
	result handle_cqe(const io_uring_cqe *cqe) noexcept { return result(tw_uring_handle_cqe(u_, cqe)); }
	explicit operator bool() const noexcept { return u_ != nullptr; }
	/* Why it could not attach, or no error. */
	std::error_code error() const noexcept { return result(err_).error(); }
	io_uring *ring() const noexcept { return tw_uring_ring(u_); }
	tw_uring *native() const noexcept { return u_; }
	tw_uring_stats stats() const noexcept
	{
		tw_uring_stats s{};
		(void)tw_uring_get_stats(u_, &s);
		return s;
	}
	static time_point now() noexcept { return to_time_point(tw_uring_now()); }

private:
	tw_uring *u_ = nullptr;
	int err_ = 0;
};

class uring_loop {
public:
	uring_loop() noexcept = default;
	/* tw_uring_loop_init(); @opt NULL for the defaults. ENOSYS, EPERM: the kernel refuses io_uring. */
	explicit uring_loop(wheel_ref w, const tw_uring_loop_options *opt = nullptr) noexcept
		: err_(tw_uring_loop_init(&l_, w.native(), opt))
	{
	}
	uring_loop(const uring_loop &) = delete;
	uring_loop &operator=(const uring_loop &) = delete;
	uring_loop(uring_loop &&o) noexcept : l_(std::exchange(o.l_, nullptr)), err_(std::exchange(o.err_, 0)) {}
	uring_loop &operator=(uring_loop &&o) noexcept
	{
		if (this != &o) {
			(void)close();
			l_ = std::exchange(o.l_, nullptr);
			err_ = std::exchange(o.err_, 0);
		}
		return *this;
	}
	~uring_loop() { (void)close(); }

	/* tw_uring_loop_close(); EBUSY while run() runs (then still open). */
	result close() noexcept
	{
		if (!l_)
			return result(0);
		int r = tw_uring_loop_close(l_);
		if (r == 0)
			l_ = nullptr;
		return result(r);
	}
	result run() noexcept { return result(tw_uring_run(l_)); }
	void stop() noexcept { tw_uring_stop(l_); }
	io_uring_sqe *get_sqe() noexcept { return tw_uring_get_sqe(l_); }
	explicit operator bool() const noexcept { return l_ != nullptr; }
	std::error_code error() const noexcept { return result(err_).error(); }
	io_uring *ring() const noexcept { return tw_uring_loop_ring(l_); }
	tw_uring_loop *native() const noexcept { return l_; }
	tw_uring_stats stats() const noexcept
	{
		tw_uring_stats s{};
		(void)tw_uring_loop_get_stats(l_, &s);
		return s;
	}
	static time_point now() noexcept { return to_time_point(tw_uring_now()); }

private:
	tw_uring_loop *l_ = nullptr;
	int err_ = 0;
};

} // namespace timerwheel

#endif // TIMERWHEEL_URING_HPP
