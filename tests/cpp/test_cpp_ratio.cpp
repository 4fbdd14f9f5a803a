// SPDX-License-Identifier: MIT
//
// timerwheel::to_ns() over every kind of std::ratio: periods from 1/1e9 s
// to 3600 s, numerators 1 to 1000, counts at and around the saturation
// point. Run under UBSan, a product past 64 bits is a failure.
#include <timerwheel.hpp>

extern "C" {
#include "../common.h"
}

#include <cstdint>
#include <limits>
#include <ratio>
#include <utility>

namespace tws = timerwheel;
using std::chrono::duration;

namespace {

// A test's own arithmetic for the expected value: 128 bits where the
// compiler has them, else the properties that hold at the bound.
#ifdef __SIZEOF_INT128__
__extension__ typedef unsigned __int128 u128;
#endif

// Counts checked in all.
unsigned long checked;

// One period's conversion, instantiated per period: the checks below take
// it as a function pointer, which keeps a sweep's compile time down.
struct period_fns {
	std::intmax_t num, den; // the period as std::ratio reduced it
	std::uint64_t (*wide)(std::int64_t);
};

template <class P>
std::uint64_t wide(std::int64_t c)
{
	return tws::to_ns(duration<std::int64_t, P>(c));
}

template <class P>
constexpr period_fns fns()
{
	return {P::num, P::den, &wide<P>};
}

// Narrow and unsigned counts of the same period agree with the wide one.
template <class P>
void check_reps()
{
	auto w = [](std::int64_t c) { return tws::to_ns(duration<std::int64_t, P>(c)); };
	auto n = [](int c) { return tws::to_ns(duration<int, P>(c)); };
	auto u = [](unsigned long long c) { return tws::to_ns(duration<unsigned long long, P>(c)); };
	std::uint64_t b = tws::detail::ns_ratio<P>::max_count;
	assert_true(n(7) == w(7));
	assert_true(n(INT32_MAX) == w(INT32_MAX));
	assert_true(n(-7) == 0);
	assert_true(u(b) != UINT64_MAX);
	if (b <= INT64_MAX)
		assert_true(u(b) == w(static_cast<std::int64_t>(b)));
	if (b < UINT64_MAX)
		assert_true(u(b + 1) == UINT64_MAX);
	assert_true(u(UINT64_MAX) == UINT64_MAX);
}

void check_period(const period_fns &p)
{
	const std::uint64_t lim = INT64_MAX;
	// Nanoseconds per count: num * 1e9 / den.
#ifdef __SIZEOF_INT128__
	const u128 n = static_cast<u128>(static_cast<std::uint64_t>(p.num)) * 1000000000u;
	const u128 d = static_cast<std::uint64_t>(p.den);
	auto expect = [&](std::uint64_t c) -> std::uint64_t {
		u128 ns = (c * n + d - 1) / d;
		return ns > lim ? UINT64_MAX : static_cast<std::uint64_t>(ns);
	};
	u128 b128 = lim * d / n; // the largest count within nanoseconds::max()
	std::uint64_t b = b128 > lim ? lim : static_cast<std::uint64_t>(b128);
#else
	std::uint64_t lo = 0, hi = lim;
	while (lo < hi) { // the largest count that converts below UINT64_MAX
		std::uint64_t mid = lo + (hi - lo + 1) / 2;
		if (p.wide(static_cast<std::int64_t>(mid)) != UINT64_MAX)
			lo = mid;
		else
			hi = mid - 1;
	}
	std::uint64_t b = lo;
#endif
	const std::uint64_t counts[] = {1, 2, 3, 7, 59, 60, 61, 999, 1000, 1001, b / 3, b / 2, b - 2, b - 1, b, b + 1,
					b + 2, b + 1000, lim / 2, lim - 1, lim};
	std::uint64_t prev = 0, prev_c = 0;
	for (std::uint64_t c : counts) {
		if (c == 0 || c > lim)
			continue;
		std::uint64_t got = p.wide(static_cast<std::int64_t>(c));
#ifdef __SIZEOF_INT128__
		if (got != expect(c)) {
			print_error("period %lld/%lld count %llu: %llu, expected %llu\n", (long long)p.num,
				    (long long)p.den, (unsigned long long)c, (unsigned long long)got,
				    (unsigned long long)expect(c));
			fail();
		}
#endif
		// Saturates exactly past the bound, never below it, and stays monotone.
		assert_true((got == UINT64_MAX) == (c > b));
		assert_true(got == UINT64_MAX || got <= lim);
		if (c >= prev_c)
			assert_true(got >= prev);
		prev = got;
		prev_c = c;
		checked++;
	}
	assert_true(p.wide(-1) == 0);
	assert_true(p.wide(INT64_MIN) == 0);
}

template <std::intmax_t Den, std::intmax_t... Num>
void numerators(std::integer_sequence<std::intmax_t, Num...>)
{
	static constexpr period_fns all[] = {fns<std::ratio<Num + 1, Den>>()...};
	for (const period_fns &p : all)
		check_period(p);
}

// The language and exception variants sweep fewer numerators: the
// arithmetic does not depend on them, and a sweep takes minutes to compile.
#ifndef TW_TEST_NUMERATORS
#define TW_TEST_NUMERATORS 1000
#endif

template <std::intmax_t Den>
void sweep()
{
	numerators<Den>(std::make_integer_sequence<std::intmax_t, TW_TEST_NUMERATORS>());
}

void test_numerators_per_second(void **) { sweep<1>(); }
void test_numerators_per_frame(void **) { sweep<60>(); }
void test_numerators_per_ns(void **) { sweep<1000000000>(); }

// Periods that are not a sweep's: coarse, odd, and wider than a product fits.
void test_other_periods(void **)
{
	check_period(fns<std::ratio<1, 3>>());
	check_period(fns<std::ratio<1, 7>>());
	check_period(fns<std::ratio<1, 1000>>());
	check_period(fns<std::ratio<1, 1000000>>());
	check_period(fns<std::ratio<3600, 1>>());
	check_period(fns<std::ratio<3600, 7>>());
	check_period(fns<std::ratio<1001, 30000>>()); // NTSC frames
	check_period(fns<std::ratio<999999937, 1000000000>>()); // a prime numerator, finer than a second
	check_period(fns<std::ratio<1, 999999937>>()); // a prime denominator: N * D past 64 bits
	check_period(fns<std::ratio<999999929, 999999937>>());
	check_period(fns<std::ratio<999999929, 999999937LL * 1000000000>>()); // the wide path
	check_reps<std::ratio<1, 60>>();
	check_reps<std::ratio<1, 3>>();
	check_reps<std::ratio<1001, 30000>>();
	check_reps<std::ratio<3600>>();
	check_reps<std::milli>();
	check_reps<std::ratio<999999929, 999999937LL * 1000000000>>();
}

// Durations as constants: the conversion is constexpr for every period.
void test_constexpr(void **)
{
	using frames = duration<std::int64_t, std::ratio<1, 60>>;
	static_assert(tws::to_ns(frames(1)) == 16666667);
	static_assert(tws::to_ns(frames(3)) == 50000000);
	static_assert(tws::to_ns(frames(200000000000)) == 3333333333333333334ull);
	static_assert(tws::to_ns(frames(INT64_MAX)) == UINT64_MAX);
	static_assert(tws::to_ns(duration<int, std::ratio<1, 3>>(1)) == 333333334);
	static_assert(tws::to_ns(duration<std::int64_t, std::ratio<1, 999999937>>(INT64_MAX)) == UINT64_MAX);
	static_assert(tws::to_ns(duration<std::int64_t, std::ratio<1, 999999937>>(999999937)) == 1000000000);
	static_assert(tws::to_ns(std::chrono::hours(2562047)) == 2562047ull * 3600000000000);
	static_assert(tws::to_ns(std::chrono::hours(2562048)) == UINT64_MAX);
	static_assert(tws::to_ns(duration<double, std::ratio<1, 60>>(1.0)) == 16666667);
	// In the wide path: a remainder times the numerator does not fit.
	using odd = duration<std::int64_t, std::ratio<999999929, 999999937LL * 1000000000>>;
	static_assert(tws::to_ns(odd(1)) == 1);
	static_assert(tws::to_ns(odd(999999936)) == 999999929); // (D - 1) * N / D, rounded up
	static_assert(tws::to_ns(odd(999999937)) == 999999929);
	assert_true(tws::to_ns(frames(200000000000)) == 3333333333333333334ull); // in range, not "never"
}

} // namespace

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_numerators_per_second),
		cmocka_unit_test(test_numerators_per_frame),
		cmocka_unit_test(test_numerators_per_ns),
		cmocka_unit_test(test_other_periods),
		cmocka_unit_test(test_constexpr),
	};
	int r = cmocka_run_group_tests(tests, NULL, NULL);
	printf("to_ns: %lu counts checked\n", checked);
	return r;
}
