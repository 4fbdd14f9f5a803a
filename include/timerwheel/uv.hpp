// SPDX-License-Identifier: MIT
/*
 * timerwheel/uv.hpp: the libuv backend of <timerwheel/uv.h> as an owning
 * C++ type, header-only over the C ABI (see <timerwheel.hpp>).
 *
 * timerwheel::uv_wheel owns a struct tw_uv. It is allocated once when the
 * uv_wheel is made, never per timer. It is released in the handle's close
 * callback, as libuv's rule wants. Destroying a uv_wheel (or close())
 * calls tw_uv_close(). That lets go in the order every backend follows
 * (see "Closing" in <timerwheel/uv.h>). The handle's memory goes in the
 * loop's next turn, so run the loop once more before uv_loop_close().
 * Made from a config, it creates a wheel of its own. It destroys that
 * wheel right after tw_uv_close(): its timers go idle, never called.
 * Made from the program's wheel (tw_uv_attach()), the wheel stays the
 * program's, its timers armed. Either may go first: a destroyed wheel is
 * released when the backend lets go. Declaring the timerwheel::wheel
 * before the uv_wheel lets the backend go first. Its timers are then
 * cancelled by their own destructors.
 * Movable, not copyable.
 *
 * Closing from a callback. A uv_wheel may be closed from one of the
 * wheel's callbacks, as libuv allows (the io_uring wrappers have the same
 * rule). The destructor and a move-assignment may come from there too.
 * The program's wheel is its own again when the call returns; its timers
 * already due in the running advance still fire in it. A wheel of its own
 * is destroyed: none of its timers runs after. The handle's memory goes in
 * the loop's next turn. It may not be closed from another thread: libuv's
 * calls belong to the loop's thread.
 */
#ifndef TIMERWHEEL_UV_HPP
#define TIMERWHEEL_UV_HPP

#include <timerwheel.hpp>
#include <timerwheel/uv.h>

#include <new>
#include <utility>

namespace timerwheel {

class uv_wheel {
public:
	uv_wheel() noexcept = default;
	/* A wheel of its own on @loop, attached with tw_uv_attach(); a negative
	 * tick or slack is EINVAL. */
	uv_wheel(uv_loop_t *loop, const wheel::config &cfg, unsigned flags = 0) noexcept
	{
		tw_config c = cfg.native();
		err_ = cfg.check();
		if (err_ == 0)
			err_ = tw_wheel_create(&own_, &c, tw_uv_now());
		if (err_ == 0)
			make([&](tw_uv *h) { return tw_uv_attach(loop, h, own_, flags); });
		if (err_ < 0 && own_) {
			tw_wheel_destroy(own_);
			own_ = nullptr;
		}
	}
	/* tw_uv_attach(): drives the program's wheel @w on @loop. */
	uv_wheel(uv_loop_t *loop, wheel_ref w, unsigned flags = 0) noexcept
	{
		make([&](tw_uv *h) { return tw_uv_attach(loop, h, w.native(), flags); });
	}
	uv_wheel(const uv_wheel &) = delete;
	uv_wheel &operator=(const uv_wheel &) = delete;
	uv_wheel(uv_wheel &&o) noexcept
		: h_(std::exchange(o.h_, nullptr)), own_(std::exchange(o.own_, nullptr)),
		  err_(std::exchange(o.err_, 0))
	{
	}
	uv_wheel &operator=(uv_wheel &&o) noexcept
	{
		if (this != &o) {
			close();
			h_ = std::exchange(o.h_, nullptr);
			own_ = std::exchange(o.own_, nullptr);
			err_ = std::exchange(o.err_, 0);
		}
		return *this;
	}
	~uv_wheel() { close(); }

	/* tw_uv_close(): the handle's memory goes in the loop's next turn.
	 * A wheel of its own goes at once: the backend no longer reads it. */
	void close() noexcept
	{
		if (h_)
			tw_uv_close(std::exchange(h_, nullptr), &closed);
		if (own_)
			tw_wheel_destroy(std::exchange(own_, nullptr));
	}
	explicit operator bool() const noexcept { return h_ != nullptr; }
	/* Why it could not be made (EINVAL, EBUSY, ENOMEM), or no error. */
	std::error_code error() const noexcept { return result(err_).error(); }
	/* The wheel it drives: arm timers on it. */
	wheel_ref get() const noexcept { return wheel_ref(tw_uv_wheel(h_)); }
	uv_loop_t *loop() const noexcept { return tw_uv_loop(h_); }
	tw_uv *native() const noexcept { return h_; }
	tw_uv_stats stats() const noexcept
	{
		tw_uv_stats s{};
		(void)tw_uv_get_stats(h_, &s);
		return s;
	}
	/* The backend's clock, uv_hrtime(): CLOCK_MONOTONIC, as timerwheel::clock on Linux. */
	static clock::time_point now() noexcept { return to_time_point(tw_uv_now()); }

private:
	template <class F>
	void make(F &&f) noexcept
	{
		tw_uv *h = new (std::nothrow) tw_uv();
		if (!h) {
			err_ = -ENOMEM;
			return;
		}
		err_ = f(h);
		if (err_ < 0)
			delete h;
		else
			h_ = h;
	}
	static void closed(tw_uv *h) { delete h; }

	tw_uv *h_ = nullptr;
	tw_wheel *own_ = nullptr; /* made from a config: destroyed by close() */
	int err_ = 0;
};

} // namespace timerwheel

#endif // TIMERWHEEL_UV_HPP
