// SPDX-License-Identifier: MIT
/*
 * timerwheel.hpp: the C++17 face of <timerwheel.h>. It is header-only and
 * inline over the C ABI. A C++ program links the same library. The library
 * still exports only its tw_ symbols. Every rule of <timerwheel.h> holds
 * unchanged (firing, slack, order, callbacks, threads). This header adds
 * ownership, std::chrono and callables around it.
 *
 * Namespace. Everything is in namespace timerwheel, not tw. The library's
 * own C++ sources use namespace tw for internals. Those symbols are hidden
 * in the shared library. A program linking the static library meets them,
 * though: an inline function here with the same qualified name would
 * break the one-definition rule.
 *
 * Time. Times are time points of timerwheel::clock. Delays and slack are
 * any std::chrono::duration. The wheel counts CLOCK_MONOTONIC nanoseconds
 * (tw_clock_monotonic()). On Linux timerwheel::clock is
 * std::chrono::steady_clock itself. There libstdc++ and libc++ read
 * clock_gettime(CLOCK_MONOTONIC) for it, as tw_clock_monotonic() does.
 * So a steady_clock time point's time_since_epoch() is the wheel's
 * nanosecond count, and steady_clock::now() + 5s is an expiry as it
 * stands. The C++ tests check the clock against tw_clock_monotonic().
 * Elsewhere steady_clock may be another clock. mingw-w64's libstdc++ (its
 * win32 thread model) counts it from 1970 by the system time. Apple's
 * libc++ reads a raw uptime clock, not CLOCK_MONOTONIC. There
 * timerwheel::clock is timerwheel::monotonic_clock, a std::chrono clock
 * that reads tw_clock_monotonic(). Portable programs write
 * timerwheel::clock::now().
 * Durations convert rounding up: a timer never fires early. Negative ones
 * convert as zero. Beyond the 64-bit range they saturate to "never", as
 * tw_deadline() does. The nanosecond calls stay reachable. Every type
 * gives its C object (native()). The *_ns members take raw nanoseconds.
 *
 * Errors are values. Calls that can fail return timerwheel::result, the C
 * call's int (a count, or a negative errno). It converts to true on
 * success. Its error() gives a std::error_code (generic category).
 * Nothing throws and nothing needs RTTI. The header builds with
 * -fno-exceptions -fno-rtti, as the library itself does.
 *
 * Types. wheel owns a tw_wheel (movable, not copyable). wheel_ref is a
 * non-owning view of one, which timers take. timer holds a callable
 * inline. periodic_timer repeats without drift. timer_hook<D> is the
 * intrusive form: D::on_timer() is called, no callable stored. request
 * carries one operation from another thread. The wheel holds timers and
 * requests by address. So they are neither copyable nor movable: a move
 * would leave the wheel holding the old address. Embed them where they
 * live. Each timer cancels itself when destroyed, so an armed timer never
 * outlives its owner.
 * With C++20 coroutines, co_await sleep_for() or sleep_until() (below).
 */
#ifndef TIMERWHEEL_HPP
#define TIMERWHEEL_HPP

#include <timerwheel.h>
#include <timerwheel/debug.h>

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <new>
#include <ratio>
#include <system_error>
#include <type_traits>
#include <utility>
#if defined(__cpp_impl_coroutine) && defined(__has_include)
#if __has_include(<coroutine>)
#include <coroutine>
#endif
#endif

namespace timerwheel {

using nanoseconds = std::chrono::nanoseconds;

/* The wheel's own clock, tw_clock_monotonic(), as a std::chrono clock. */
struct monotonic_clock {
	using duration = nanoseconds;
	using rep = duration::rep;
	using period = duration::period;
	using time_point = std::chrono::time_point<monotonic_clock>;
	static constexpr bool is_steady = true;
	static time_point now() noexcept { return time_point(duration(static_cast<rep>(tw_clock_monotonic()))); }
};

#if defined(__linux__)
using clock = std::chrono::steady_clock;
#else
using clock = monotonic_clock;
#endif

/*
 * result - what a C call returned: >= 0 a count or flag, < 0 -errno.
 * One int, as cheap as the C return value; [[nodiscard]] like a C error
 * would deserve to be.
 */
class [[nodiscard]] result {
public:
	constexpr explicit result(int r) noexcept : r_(r) {}
	constexpr explicit operator bool() const noexcept { return r_ >= 0; }
	constexpr bool ok() const noexcept { return r_ >= 0; }
	/* The count or flag on success (tw_mod()'s 1 if it was armed, ...). */
	constexpr int value() const noexcept { return r_ >= 0 ? r_ : 0; }
	/* The C return value itself. */
	constexpr int raw() const noexcept { return r_; }
	std::error_code error() const noexcept
	{
		return r_ < 0 ? std::error_code(-r_, std::generic_category()) : std::error_code();
	}

private:
	int r_;
};

namespace detail {

/*
 * a * b / c for 64-bit operands, rounded down or (@up) up. It saturates
 * at UINT64_MAX. It forms the product in two words, then long division.
 * Portable and constexpr. At run time a conversion uses it only for
 * periods whose exact product would not fit in 64 bits.
 */
constexpr std::uint64_t mul_div(std::uint64_t a, std::uint64_t b, std::uint64_t c, bool up = false) noexcept
{
	const std::uint64_t m = 0xffffffffu;
	std::uint64_t ll = (a & m) * (b & m), lh = (a & m) * (b >> 32), hl = (a >> 32) * (b & m);
	std::uint64_t mid = (ll >> 32) + (lh & m) + (hl & m);
	std::uint64_t lo = (ll & m) | (mid << 32);
	std::uint64_t hi = (a >> 32) * (b >> 32) + (lh >> 32) + (hl >> 32) + (mid >> 32);
	if (hi >= c)
		return UINT64_MAX;
	std::uint64_t q = 0, r = hi;
	for (int i = 63; i >= 0; i--) {
		bool carry = (r >> 63) != 0;
		r = (r << 1) | ((lo >> i) & 1);
		q <<= 1;
		if (carry || r >= c) {
			r -= c;
			q |= 1;
		}
	}
	return up && r != 0 && q != UINT64_MAX ? q + 1 : q;
}

/*
 * How a count of Period converts. Period = N/D nanoseconds (reduced).
 * The largest count that stays within nanoseconds::max() is computed
 * without multiplying past 64 bits. wide: r * N for a remainder r < D
 * may overflow, so the fraction goes through mul_div().
 */
template <class Period>
struct ns_ratio {
	using R = std::ratio_divide<Period, std::nano>;
	static constexpr std::uint64_t num = static_cast<std::uint64_t>(R::num);
	static constexpr std::uint64_t den = static_cast<std::uint64_t>(R::den);
	static constexpr std::uint64_t limit = static_cast<std::uint64_t>(INT64_MAX);
	static constexpr std::uint64_t max_count = mul_div(limit, den, num);
	static constexpr bool wide = den > 1 && den - 1 > UINT64_MAX / num;
};

} // namespace detail

/*
 * A duration as nanoseconds: rounded up, negative as 0. Beyond
 * nanoseconds::max() it saturates at UINT64_MAX, "never", for every
 * period; constexpr.
 */
template <class Rep, class Period>
constexpr std::uint64_t to_ns(std::chrono::duration<Rep, Period> d) noexcept
{
	static_assert(std::is_arithmetic_v<Rep>, "a duration counted in a built-in arithmetic type");
	using D = std::chrono::duration<Rep, Period>;
	using P = detail::ns_ratio<Period>;
	if (!(d > D::zero()))
		return 0;
	if constexpr (std::is_floating_point_v<Rep>) {
		// The product in floating point: a value past the range must not reach the integer cast.
		using F = std::common_type_t<Rep, double>;
		F ns = static_cast<F>(d.count()) * static_cast<F>(P::num) / static_cast<F>(P::den);
		if (!(ns < static_cast<F>(9223372036854775807.0)))
			return UINT64_MAX;
		auto n = static_cast<std::uint64_t>(ns);
		if (!(static_cast<F>(n) < ns))
			return n;
		return n == P::limit ? UINT64_MAX : n + 1;
	} else {
		// The count compared in its own units, against the bound: no product overflows.
		auto c = static_cast<std::uint64_t>(d.count());
		if (c > P::max_count)
			return UINT64_MAX;
		if constexpr (P::den == 1) {
			return c * P::num;
		} else {
			// Whole units of den exactly, then the remainder's fraction rounded up.
			std::uint64_t q = c / P::den, r = c % P::den, f = 0;
			if constexpr (P::wide) {
				f = detail::mul_div(r, P::num, P::den, true);
			} else {
				std::uint64_t x = r * P::num;
				f = x / P::den + (x % P::den != 0);
			}
			return q * P::num + f;
		}
	}
}

/* A time point of timerwheel::clock as the wheel's nanoseconds. */
template <class Dur>
constexpr std::uint64_t to_ns(std::chrono::time_point<clock, Dur> t) noexcept
{
	return to_ns(t.time_since_epoch());
}

/* The wheel's nanoseconds as a time point; UINT64_MAX ("never") is time_point::max(). */
constexpr clock::time_point to_time_point(std::uint64_t ns) noexcept
{
	using time_point = clock::time_point;
	using D = time_point::duration;
	constexpr auto max_ns = static_cast<std::uint64_t>(nanoseconds::max().count());
	if (ns >= max_ns)
		return time_point::max();
	nanoseconds n(static_cast<nanoseconds::rep>(ns));
	if constexpr (std::is_same_v<D, nanoseconds>)
		return time_point(n);
	else
		return time_point(std::chrono::ceil<D>(n));
}

/*
 * wheel_ref - the operations on a wheel, without owning it. Timers and
 * requests take one. A backend that created its wheel hands one out
 * (uv_wheel::get()). Copyable; a wheel converts to one.
 */
class wheel_ref {
public:
	using time_point = clock::time_point;

	constexpr explicit wheel_ref(tw_wheel *w) noexcept : w_(w) {}
	wheel_ref(const wheel_ref &) noexcept = default;
	/* Not reassignable: through a wheel's base it would drop the owned wheel. */
	wheel_ref &operator=(const wheel_ref &) = delete;
	explicit operator bool() const noexcept { return w_ != nullptr; }
	tw_wheel *native() const noexcept { return w_; }

	result advance(time_point now) noexcept { return result(tw_advance(w_, to_ns(now))); }
	result advance() noexcept { return advance(clock::now()); }
	/* Moves the wheel's clock @d past its own now(). */
	template <class Rep, class Period>
	result advance_by(std::chrono::duration<Rep, Period> d) noexcept
	{
		return result(tw_advance(w_, tw_deadline(tw_now(w_), to_ns(d))));
	}
	result advance_budget(time_point now, unsigned budget) noexcept
	{
		return result(tw_advance_budget(w_, to_ns(now), budget));
	}
	result advance_ns(std::uint64_t now) noexcept { return result(tw_advance(w_, now)); }
	/* Applies the requests other threads queued (owner only). */
	result drain() noexcept { return result(tw_drain(w_)); }

	time_point now() const noexcept { return to_time_point(tw_now(w_)); }
	/* time_point::max() when nothing is armed. */
	time_point next_expiry() const noexcept { return to_time_point(tw_next_expiry(w_)); }
	std::uint64_t next_expiry_ns() const noexcept { return tw_next_expiry(w_); }
	/* How long from @now until the next expiry: zero if due, nanoseconds::max() if none. */
	nanoseconds until_next(time_point now = clock::now()) const noexcept
	{
		std::uint64_t n = tw_next_expiry(w_), t = to_ns(now);
		if (n == UINT64_MAX)
			return nanoseconds::max();
		std::uint64_t d = n > t ? n - t : 0;
		return d >= static_cast<std::uint64_t>(nanoseconds::max().count())
			       ? nanoseconds::max()
			       : nanoseconds(static_cast<nanoseconds::rep>(d));
	}
	std::size_t count() const noexcept { return tw_count(w_); }
	nanoseconds tick() const noexcept { return nanoseconds(static_cast<nanoseconds::rep>(tw_tick(w_))); }
	result check() const noexcept { return result(tw_check(w_)); }
	tw_stats stats() const noexcept
	{
		tw_stats s{};
		(void)tw_get_stats(w_, &s);
		return s;
	}
	result set_wake(tw_wake_fn fn, void *arg) noexcept { return result(tw_set_wake(w_, fn, arg)); }

protected:
	tw_wheel *w_;
};

/*
 * wheel - owns a tw_wheel. The constructor creates it. The destructor
 * destroys it: its armed timers go idle and are never called, as with
 * tw_wheel_destroy(). Movable, not copyable. Construction cannot throw:
 * test the wheel (explicit operator bool) or error() after it.
 *
 * Not default-constructible: making a wheel reads the clock, allocates
 * and may fail, so it is written out (wheel w(wheel::config{})). An empty
 * wheel is written out too: wheel(nullptr), as with std::unique_ptr. A
 * moved-from wheel is empty as well. An empty wheel is false; its calls
 * return EINVAL, count() is 0 and next_expiry() is time_point::max().
 */
class wheel : public wheel_ref {
public:
	/* A negative tick or slack is refused: EINVAL through error(). */
	struct config {
		nanoseconds tick{0};  // 0: TW_DEFAULT_TICK_NS
		unsigned slot_bits{0}; // 0: TW_DEFAULT_SLOT_BITS
		nanoseconds slack{0};  // default slack of arm() and rearm()
		/* 0, or -EINVAL for a negative tick or slack. */
		int check() const noexcept
		{
			return tick < nanoseconds::zero() || slack < nanoseconds::zero() ? -EINVAL : 0;
		}
		tw_config native() const noexcept
		{
			tw_config c{};
			c.tick_ns = to_ns(tick);
			c.slot_bits = slot_bits;
			c.slack_ns = to_ns(slack);
			return c;
		}
	};
	using wheel_ref::operator bool;

	wheel() = delete;
	explicit wheel(const config &cfg, time_point now = clock::now()) noexcept : wheel_ref(nullptr)
	{
		tw_config c = cfg.native();
		err_ = cfg.check();
		if (err_ == 0)
			err_ = tw_wheel_create(&w_, &c, to_ns(now));
	}
	explicit wheel(time_point now) noexcept : wheel(config{}, now) {}
	/* Adopts a wheel made by tw_wheel_create(): destroys it in the end. nullptr: an empty wheel. */
	explicit wheel(tw_wheel *w) noexcept : wheel_ref(w) {}
	wheel(const wheel &) = delete;
	wheel &operator=(const wheel &) = delete;
	wheel(wheel &&o) noexcept : wheel_ref(std::exchange(o.w_, nullptr)), err_(std::exchange(o.err_, 0)) {}
	wheel &operator=(wheel &&o) noexcept
	{
		if (this != &o) {
			tw_wheel_destroy(w_);
			w_ = std::exchange(o.w_, nullptr);
			err_ = std::exchange(o.err_, 0);
		}
		return *this;
	}
	~wheel() { tw_wheel_destroy(w_); }

	/* Why construction failed (EINVAL, ENOMEM), or no error. */
	std::error_code error() const noexcept { return result(err_).error(); }
	/* Gives up ownership: the caller destroys the wheel. */
	tw_wheel *release() noexcept { return std::exchange(w_, nullptr); }

private:
	int err_ = 0;
};

class request;

namespace detail {

/*
 * tw_pending(), inline. This header ships with the library, so it may
 * read the field the library keeps 0 while a timer is idle. A cancel
 * costs one call into the library, as tw_del() does.
 */
inline bool is_pending(const tw_timer *t) noexcept { return t->tw__where != 0; }

/*
 * The operations every timer shares, on the C timer it holds (a tw_timer,
 * or a tw_periodic whose first member is one). It remembers the wheel it
 * was last armed on. When destroyed it cancels itself there. It tests
 * pending() first, so a timer whose wheel is gone never touches that
 * wheel: destroyed wheels idle their timers.
 */
template <class Native>
class timer_base {
public:
	using time_point = clock::time_point;

	timer_base(const timer_base &) = delete;
	timer_base &operator=(const timer_base &) = delete;

	/* tw_add(): arms an idle timer; EBUSY if armed. */
	result arm(wheel_ref w, time_point at) noexcept { return on(w, tw_add(w.native(), t(), to_ns(at))); }
	/* tw_add_range(): fires within [at, at + slack]. */
	template <class Rep, class Period>
	result arm(wheel_ref w, time_point at, std::chrono::duration<Rep, Period> slack) noexcept
	{
		return on(w, tw_add_range(w.native(), t(), to_ns(at), to_ns(slack)));
	}
	/* Arms for @d from clock::now(). */
	template <class Rep, class Period>
	result arm_after(wheel_ref w, std::chrono::duration<Rep, Period> d) noexcept
	{
		return on(w, tw_add(w.native(), t(), after(d)));
	}
	/* tw_mod(): arms or re-arms; value() is 1 if it was armed. */
	result rearm(wheel_ref w, time_point at) noexcept { return on(w, tw_mod(w.native(), t(), to_ns(at))); }
	template <class Rep, class Period>
	result rearm(wheel_ref w, time_point at, std::chrono::duration<Rep, Period> slack) noexcept
	{
		return on(w, tw_mod_range(w.native(), t(), to_ns(at), to_ns(slack)));
	}
	template <class Rep, class Period>
	result rearm_after(wheel_ref w, std::chrono::duration<Rep, Period> d) noexcept
	{
		return on(w, tw_mod(w.native(), t(), after(d)));
	}
	result arm_ns(wheel_ref w, std::uint64_t at) noexcept { return on(w, tw_add(w.native(), t(), at)); }
	result rearm_ns(wheel_ref w, std::uint64_t at) noexcept { return on(w, tw_mod(w.native(), t(), at)); }
	/* tw_del(): value() is 1 if it was armed. Safe on an idle timer. */
	result cancel() noexcept { return pending() ? result(tw_del(wheel_of(), t())) : result(0); }

	bool pending() const noexcept { return is_pending(t()); }
	/* The expiry last armed. */
	time_point expiry() const noexcept { return to_time_point(t()->expires); }
	/*
	 * The C timer. Arm it through this object, not through native(). The
	 * destructor cancels only on the wheel this object armed it on. If the
	 * C timer is armed elsewhere, it ends the program (std::abort()).
	 */
	tw_timer *native() noexcept { return t(); }
	const tw_timer *native() const noexcept { return t(); }

protected:
	timer_base() noexcept = default;
	~timer_base()
	{
		if (pending())
			cancel_or_die();
	}
	/*
	 * tw_del() refuses a timer armed on a wheel this object never saw
	 * (through native()). Freeing it would leave that wheel a dangling
	 * timer, so the program stops here, loudly.
	 */
	void cancel_or_die() noexcept
	{
		if (tw_del(wheel_of(), t()) < 0) {
			std::fputs("timerwheel: a timer armed through native() was destroyed while armed\n", stderr);
			std::abort();
		}
	}
	/*
	 * A standard-layout class and its first member are pointer-
	 * interconvertible. A tw_timer is the first member of a tw_periodic.
	 * So the C timer and this base convert both ways without an offset.
	 * The derived timer comes back by static_cast.
	 */
	static timer_base *from(tw_timer *t) noexcept { return reinterpret_cast<timer_base *>(t); }
	tw_timer *t() noexcept { return reinterpret_cast<tw_timer *>(&n_); }
	const tw_timer *t() const noexcept { return reinterpret_cast<const tw_timer *>(&n_); }
	result on(wheel_ref w, int r) noexcept
	{
		if (r >= 0)
			bind(w.native());
		return result(r);
	}
	/*
	 * The wheel to cancel on. Each arm sets it. A request (another
	 * thread) sets it before it posts, for a timer armed through one.
	 * Atomic, so that the owner's read in cancel() never races it.
	 * Relaxed, because the post orders the store before the owner
	 * applies the request. A timer belongs to one wheel at a time.
	 */
	tw_wheel *wheel_of() const noexcept { return w_.load(std::memory_order_relaxed); }
	void bind(tw_wheel *w) noexcept { w_.store(w, std::memory_order_relaxed); }
	friend class timerwheel::request;
	template <class Rep, class Period>
	static std::uint64_t after(std::chrono::duration<Rep, Period> d) noexcept
	{
		return tw_deadline(to_ns(clock::now()), to_ns(d));
	}

	Native n_{};
	std::atomic<tw_wheel *> w_{nullptr};
};

static_assert(std::is_standard_layout_v<tw_periodic> && offsetof(tw_periodic, timer) == 0);
static_assert(std::is_standard_layout_v<timer_base<tw_timer>> && std::is_standard_layout_v<timer_base<tw_periodic>>);

/*
 * Inline storage for one callable of at most Size bytes, aligned as a
 * pointer: a lambda that captures a pointer or two. A larger one, or one
 * aligned beyond a pointer (capturing a long double), is refused at
 * compile time; nothing is ever allocated.
 */
/*
 * What a timer's constructor and on_fire() take: something callable with
 * no argument, other than the timer itself. A callable that is too big,
 * too aligned or throws on construction matches too, and is refused by a
 * static_assert that says why.
 */
template <class F, class Self>
inline constexpr bool timer_callable =
	!std::is_same_v<std::decay_t<F>, Self> && std::is_invocable_r_v<void, std::decay_t<F> &>;

template <std::size_t Size>
class callable {
public:
	callable() noexcept = default;
	callable(const callable &) = delete;
	callable &operator=(const callable &) = delete;
	~callable() { reset(); }

	template <class F>
	void set(F &&f) noexcept
	{
		using T = std::decay_t<F>;
		static_assert(sizeof(T) <= Size, "callable larger than the timer's inline storage: "
						  "capture less, or use basic_timer<N> with a larger N");
		static_assert(alignof(T) <= alignof(void *), "callable aligned beyond a pointer: store a pointer to it");
		static_assert(std::is_invocable_r_v<void, T &>, "the callable takes no argument");
		static_assert(std::is_nothrow_constructible_v<T, F &&>, "constructing the callable must not throw");
		reset();
		::new (static_cast<void *>(buf_)) T(std::forward<F>(f));
		ops_ = &ops<T>;
	}
	void reset() noexcept
	{
		if (ops_ != &none)
			std::exchange(ops_, &none)(buf_, false);
	}
	/*
	 * Calls it; the callable may destroy its own storage (and touch
	 * nothing after). Without one it calls none(): the firing path has no
	 * branch for a timer armed before it was given a callable.
	 */
	void operator()() { ops_(buf_, true); }
	explicit operator bool() const noexcept { return ops_ != &none; }

private:
	template <class T>
	static void ops(void *p, bool call)
	{
		T *f = std::launder(static_cast<T *>(p));
		if (call)
			(*f)();
		else
			f->~T();
	}
	static void none(void *, bool) noexcept {}
	alignas(void *) unsigned char buf_[Size];
	void (*ops_)(void *, bool) = &none;
};

} // namespace detail

/*
 * basic_timer<Size> - a one-shot timer holding a callable of at most Size
 * bytes inline (timer: two pointers' worth). Calling it costs one indirect
 * call. Arming it allocates nothing, nor does assigning a callable.
 * Not movable (static_assert'ed by the tests): embed it in its owner.
 * Destroying it cancels it. Its callable may destroy the timer itself
 * (delete its owner). It must then touch nothing of it, as with
 * `delete this`. on_fire() replaces the callable. Do not call it from
 * inside the callable: it would destroy the callable while it runs.
 */
template <std::size_t Size>
class basic_timer : public detail::timer_base<tw_timer> {
	using base = detail::timer_base<tw_timer>;

public:
	basic_timer() noexcept { tw_timer_init(t(), &fire); }
#if defined(__cpp_concepts) && __cpp_concepts >= 201907L
	template <class F>
		requires detail::timer_callable<F, basic_timer>
#else
	template <class F, std::enable_if_t<detail::timer_callable<F, basic_timer>, int> = 0>
#endif
	explicit basic_timer(F &&f) noexcept : basic_timer()
	{
		fn_.set(std::forward<F>(f));
	}
	// Members go before the base: cancel while the callable still lives.
	~basic_timer()
	{
		if (pending())
			cancel_or_die();
	}
	template <class F>
	void on_fire(F &&f) noexcept
	{
		fn_.set(std::forward<F>(f));
	}

private:
	// noexcept: a callable that throws ends the program (std::terminate)
	// rather than unwinding through the library's C frames.
	static void fire(tw_timer *t) noexcept { static_cast<basic_timer *>(base::from(t))->fn_(); }
	detail::callable<Size> fn_;
};

using timer = basic_timer<2 * sizeof(void *)>;

/*
 * basic_periodic_timer<Size> - repeats every period without drift (a
 * tw_periodic): re-armed at expiry + n * period before its callable runs,
 * skipping missed periods. cancel() stops it, also from its callable.
 * start() arms it and sets its period (arm() is hidden). rearm() moves
 * the next firing and keeps the period. It fails with EINVAL while the
 * timer has no period, before start() or set_period() gave one.
 */
template <std::size_t Size>
class basic_periodic_timer : public detail::timer_base<tw_periodic> {
	using base = detail::timer_base<tw_periodic>;

public:
	// Period 0 until start() or set_period(): rearm() refuses it.
	basic_periodic_timer() noexcept
	{
		(void)tw_periodic_init(&n_, &fire, 1);
		n_.period = 0;
	}
#if defined(__cpp_concepts) && __cpp_concepts >= 201907L
	template <class F>
		requires detail::timer_callable<F, basic_periodic_timer>
#else
	template <class F, std::enable_if_t<detail::timer_callable<F, basic_periodic_timer>, int> = 0>
#endif
	explicit basic_periodic_timer(F &&f) noexcept : basic_periodic_timer()
	{
		fn_.set(std::forward<F>(f));
	}
	// Members go before the base: cancel while the callable still lives.
	~basic_periodic_timer()
	{
		if (pending())
			cancel_or_die();
	}
	template <class F>
	void on_fire(F &&f) noexcept
	{
		fn_.set(std::forward<F>(f));
	}
	/*
	 * Arms it first at @first, then every @period (at least 1 ns).
	 * EINVAL for a zero period, EBUSY if armed. A failed start changes
	 * nothing.
	 */
	template <class Rep, class Period>
	result start(wheel_ref w, time_point first, std::chrono::duration<Rep, Period> period) noexcept
	{
		std::uint64_t p = to_ns(period);
		if (p == 0)
			return result(-EINVAL);
		return period_if(p, arm(w, first));
	}
	/* The same with a window of @slack on every firing. */
	template <class R1, class P1, class R2, class P2>
	result start(wheel_ref w, time_point first, std::chrono::duration<R1, P1> period,
		     std::chrono::duration<R2, P2> slack) noexcept
	{
		std::uint64_t p = to_ns(period);
		if (p == 0)
			return result(-EINVAL);
		return period_if(p, arm(w, first, slack));
	}
	/* First firing one period from now. */
	template <class Rep, class Period>
	result start(wheel_ref w, std::chrono::duration<Rep, Period> period) noexcept
	{
		return start(w, to_time_point(tw_deadline(to_ns(clock::now()), to_ns(period))), period);
	}
	/*
	 * Read at each firing: may change at any time, from the callable too.
	 * EINVAL for a zero or negative period, which changes nothing.
	 */
	template <class Rep, class Period>
	result set_period(std::chrono::duration<Rep, Period> period) noexcept
	{
		std::uint64_t p = to_ns(period);
		if (p == 0)
			return result(-EINVAL);
		n_.period = p;
		return result(0);
	}
	/* tw_mod(), as timer's; EINVAL before the timer has a period. */
	result rearm(wheel_ref w, time_point at) noexcept { return n_.period ? base::rearm(w, at) : result(-EINVAL); }
	template <class Rep, class Period>
	result rearm(wheel_ref w, time_point at, std::chrono::duration<Rep, Period> slack) noexcept
	{
		return n_.period ? base::rearm(w, at, slack) : result(-EINVAL);
	}
	template <class Rep, class Period>
	result rearm_after(wheel_ref w, std::chrono::duration<Rep, Period> d) noexcept
	{
		return n_.period ? base::rearm_after(w, d) : result(-EINVAL);
	}
	result rearm_ns(wheel_ref w, std::uint64_t at) noexcept
	{
		return n_.period ? base::rearm_ns(w, at) : result(-EINVAL);
	}
	/* Zero before start() or set_period(). */
	nanoseconds period() const noexcept
	{
		return n_.period >= static_cast<std::uint64_t>(nanoseconds::max().count())
			       ? nanoseconds::max()
			       : nanoseconds(static_cast<nanoseconds::rep>(n_.period));
	}

private:
	/* Arming goes through start(), which sets the period. */
	using base::arm;
	using base::arm_after;
	using base::arm_ns;
	/* The period is read only at firing, on this thread: set once armed. */
	result period_if(std::uint64_t p, result r) noexcept
	{
		if (r)
			n_.period = p;
		return r;
	}
	static void fire(tw_timer *t) noexcept { static_cast<basic_periodic_timer *>(base::from(t))->fn_(); }
	detail::callable<Size> fn_;
};

using periodic_timer = basic_periodic_timer<2 * sizeof(void *)>;

/*
 * timer_hook<Derived, Tag> - the intrusive form: no callable stored.
 * Derive from it (CRTP) and the wheel calls derived.on_timer(Tag{}). The
 * enclosing object comes back by static_cast from base to derived. The
 * compiler checks it; no tw_container_of. Tag (an empty type) tells apart
 * several hooks in one class. The hook is a tw_timer plus a wheel
 * pointer; destroying it cancels it.
 */
struct default_tag {};

template <class Derived, class Tag = default_tag>
class timer_hook : public detail::timer_base<tw_timer> {
	using base = detail::timer_base<tw_timer>;

protected:
	timer_hook() noexcept { tw_timer_init(t(), &fire); }
	~timer_hook() = default;

private:
	static void fire(tw_timer *t) noexcept
	{
		static_cast<Derived &>(static_cast<timer_hook &>(*base::from(t))).on_timer(Tag{});
	}
};

/*
 * request - one operation asked of the wheel's owner from another thread
 * (tw_post_mod(), tw_post_mod_range(), tw_post_del()). Neither copyable
 * nor movable: the queue holds its address. Its destructor waits, with
 * tw_request_wait(), until the owner has applied the latest post. So a
 * request is never destroyed while queued. Its lifetime rules:
 *
 * - Destroy it on another thread only while the owner's loop still
 *   advances or destroys the wheel (see "Threads" in <timerwheel.h>).
 *   Else the destructor waits forever.
 * - On the owner's own thread the destructor of a request still queued
 *   waits for itself, forever: the owner is the one that applies it. The
 *   owner calls settle() first (outside callbacks). settle() applies the
 *   queue with tw_drain(); the destructor then returns at once.
 * - Its timer must outlive it. The timer must not be destroyed while the
 *   request is queued: the owner would apply it to freed memory. Wait
 *   for the request, or settle() it, before destroying the timer.
 * - A timer is destroyed on its owner's thread only. Its destructor
 *   cancels it on the wheel, which no other thread may touch. On another
 *   thread, post_cancel() and wait instead. Then destroy it there once
 *   the request is done and the timer is not re-armed.
 *
 * Posting records the wheel in the timer. So a timer armed only through
 * requests still cancels itself on that wheel when its owner destroys
 * it. A post that fails leaves the timer as it was. Post only a timer
 * that is idle or armed on the same wheel. One armed on another wheel is
 * applied with -EINVAL (outcome()). It then names the wrong wheel to
 * cancel itself on. So its owner must cancel it on its own wheel before
 * destroying it.
 */
class request {
public:
	using time_point = clock::time_point;

	request() noexcept = default;
	request(const request &) = delete;
	request &operator=(const request &) = delete;
	~request()
	{
		if (w_)
			(void)tw_request_wait(w_, &r_);
	}

	template <class N>
	result post_rearm(wheel_ref w, detail::timer_base<N> &t, time_point at) noexcept
	{
		std::uint64_t ns = to_ns(at);
		return post(w, t, [&](tw_timer *c) { return tw_post_mod(w.native(), &r_, c, ns); });
	}
	template <class N, class Rep, class Period>
	result post_rearm(wheel_ref w, detail::timer_base<N> &t, time_point at,
			  std::chrono::duration<Rep, Period> slack) noexcept
	{
		std::uint64_t ns = to_ns(at), s = to_ns(slack);
		return post(w, t, [&](tw_timer *c) { return tw_post_mod_range(w.native(), &r_, c, ns, s); });
	}
	template <class N, class Rep, class Period>
	result post_rearm_after(wheel_ref w, detail::timer_base<N> &t, std::chrono::duration<Rep, Period> d) noexcept
	{
		std::uint64_t ns = tw_deadline(to_ns(clock::now()), to_ns(d));
		return post(w, t, [&](tw_timer *c) { return tw_post_mod(w.native(), &r_, c, ns); });
	}
	template <class N>
	result post_cancel(wheel_ref w, detail::timer_base<N> &t) noexcept
	{
		return post(w, t, [&](tw_timer *c) { return tw_post_del(w.native(), &r_, c); });
	}
	bool done() const noexcept { return tw_request_done(&r_) != 0; }
	/* The applied operation's result; EBUSY while not done. */
	result outcome() const noexcept { return result(tw_request_result(&r_)); }
	result wait() noexcept { return result(tw_request_wait(w_, &r_)); }
	/*
	 * The owner's way to finish a request on its own thread, where wait()
	 * would wait for itself. Applies the queue (tw_drain()), then gives
	 * outcome(). EINVAL if never posted. EBUSY from a callback (nothing
	 * applied). EBUSY also if the request is still not done (posted
	 * again by another thread meanwhile).
	 */
	result settle() noexcept
	{
		int r = tw_drain(w_);
		return r < 0 ? result(r) : outcome();
	}
	template <class Rep, class Period>
	result wait_for(std::chrono::duration<Rep, Period> d) noexcept
	{
		return result(tw_request_wait_timeout(w_, &r_, to_ns(d)));
	}
	tw_request *native() noexcept { return &r_; }

private:
	/*
	 * The wheel goes into the timer before the post. The post orders it
	 * before the owner applies the request. A post that fails queued
	 * nothing, and gives the timer back the wheel it had.
	 */
	template <class N, class Post>
	result post(wheel_ref w, detail::timer_base<N> &t, Post &&call) noexcept
	{
		tw_wheel *to = w.native();
		tw_wheel *old = t.w_.exchange(to, std::memory_order_relaxed);
		int r = call(t.native());
		if (r >= 0)
			w_ = to;
		else
			(void)t.w_.compare_exchange_strong(to, old, std::memory_order_relaxed);
		return result(r);
	}
	tw_request r_{};
	tw_wheel *w_ = nullptr;
};

#if defined(__cpp_impl_coroutine) && defined(__has_include)
#if __has_include(<coroutine>)
#define TIMERWHEEL_HAVE_COROUTINES 1
#endif
#endif

#ifdef TIMERWHEEL_HAVE_COROUTINES
/*
 * With C++20 coroutines: co_await sleep_until(w, deadline) or
 * co_await sleep_for(w, delay). Either suspends the coroutine on a timer
 * of the wheel, as Asio's and Seastar's timers do. The timer lives in the
 * awaiter, in the coroutine's frame: nothing allocates. The coroutine is
 * resumed from the wheel's callback, inside the advance that fires it.
 * So it must not advance that wheel itself until it suspends again or
 * returns: that advance returns EBUSY. It resumes never before the
 * deadline, by the firing rule. A deadline already past resumes it in the
 * next advance. co_await gives a result. An error (EINVAL for a destroyed
 * wheel) resumes at once, without suspending. A coroutine destroyed while
 * suspended cancels its timer (the awaiter's destructor). One whose wheel
 * is destroyed first is never resumed.
 */
class sleep_awaiter {
public:
	sleep_awaiter(wheel_ref w, std::uint64_t at) noexcept : w_(w.native()), at_(at) { tw_timer_init(&s_.t, &fire); }
	sleep_awaiter(const sleep_awaiter &) = delete;
	sleep_awaiter &operator=(const sleep_awaiter &) = delete;
	~sleep_awaiter()
	{
		if (detail::is_pending(&s_.t))
			(void)tw_del(w_, &s_.t);
	}
	bool await_ready() const noexcept { return false; }
	bool await_suspend(std::coroutine_handle<> h) noexcept
	{
		s_.h = h;
		r_ = tw_add(w_, &s_.t, at_);
		return r_ >= 0;
	}
	result await_resume() const noexcept { return result(r_); }

private:
	struct slot {
		tw_timer t; // first: the C timer and the slot convert both ways
		std::coroutine_handle<> h;
	};
	static void fire(tw_timer *t) noexcept { reinterpret_cast<slot *>(t)->h.resume(); }

	slot s_{};
	tw_wheel *w_;
	std::uint64_t at_;
	int r_ = 0;
};

inline sleep_awaiter sleep_until(wheel_ref w, clock::time_point at) noexcept { return sleep_awaiter(w, to_ns(at)); }

template <class Rep, class Period>
sleep_awaiter sleep_for(wheel_ref w, std::chrono::duration<Rep, Period> d) noexcept
{
	return sleep_awaiter(w, tw_deadline(to_ns(clock::now()), to_ns(d)));
}
#endif // TIMERWHEEL_HAVE_COROUTINES

} // namespace timerwheel

#endif // TIMERWHEEL_HPP
