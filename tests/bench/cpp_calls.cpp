// SPDX-License-Identifier: MIT
//
// cpp_calls: the same operations through the C calls and through
// <timerwheel.hpp>, for tests/bench/cpp-profile to count the instructions
// of each under callgrind (exact, whatever the load), or timed. One
// function per operation and API, each over all N timers, on its own wheel
// with the same deadlines: arm, re-arm later, cancel, then arm again and
// expire all by advancing from next expiry to next expiry, as a loop does.
//
//   cpp_calls [N ...]              (default: 1000 1000000) one round each
//   cpp_calls -t ROUNDS [N ...]    ROUNDS rounds each, timed: the median
//                                  ns per operation of each API, the C and
//                                  the C++ side taking turns to go first
#include <timerwheel.hpp>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <vector>

namespace tws = timerwheel;

namespace {

constexpr std::uint64_t tick = 1000000;
constexpr std::uint64_t span = 30ull * 60 * 1000 * tick;

std::uint64_t rng = 0x12345;
std::uint64_t next_rand()
{
	std::uint64_t z = (rng += 0x9e3779b97f4a7c15ull);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

struct ctimer {
	tw_timer t;
	std::uint64_t fired;
};

struct cxxtimer {
	std::uint64_t fired = 0;
	tws::timer t{[this] { fired++; }};
};

std::vector<std::uint64_t> due;
// The same deadlines as time points, made before the timed loops: the
// C++ side then counts its calls, not the benchmark's conversions.
std::vector<tws::clock::time_point> due_tp, later_tp;
ctimer *cts;
cxxtimer *xts;
std::uint64_t now0 = 1000 * tick;

void c_fire(tw_timer *t) { tw_container_of(t, ctimer, t)->fired++; }

} // namespace

// C linkage: plain names in callgrind's report.
extern "C" {
__attribute__((noinline)) void c_arm(tw_wheel *w, std::uint32_t n)
{
	for (std::uint32_t i = 0; i < n; i++)
		if (tw_add(w, &cts[i].t, due[i]) < 0)
			std::abort();
}
__attribute__((noinline)) void cpp_arm(tws::wheel &w, std::uint32_t n)
{
	for (std::uint32_t i = 0; i < n; i++)
		if (!xts[i].t.arm(w, due_tp[i]))
			std::abort();
}
__attribute__((noinline)) void c_rearm(tw_wheel *w, std::uint32_t n)
{
	for (std::uint32_t i = 0; i < n; i++)
		if (tw_mod(w, &cts[i].t, due[i] + span) < 0)
			std::abort();
}
__attribute__((noinline)) void cpp_rearm(tws::wheel &w, std::uint32_t n)
{
	for (std::uint32_t i = 0; i < n; i++)
		if (!xts[i].t.rearm(w, later_tp[i]))
			std::abort();
}
__attribute__((noinline)) void c_cancel(tw_wheel *w, std::uint32_t n)
{
	for (std::uint32_t i = 0; i < n; i++)
		if (tw_del(w, &cts[i].t) != 1)
			std::abort();
}
__attribute__((noinline)) void cpp_cancel(std::uint32_t n)
{
	for (std::uint32_t i = 0; i < n; i++)
		if (xts[i].t.cancel().value() != 1)
			std::abort();
}
__attribute__((noinline)) void c_expire(tw_wheel *w)
{
	while (tw_count(w) > 0)
		if (tw_advance(w, tw_next_expiry(w)) < 0)
			std::abort();
}
__attribute__((noinline)) void cpp_expire(tws::wheel &w)
{
	while (w.count() > 0)
		if (!w.advance(w.next_expiry()))
			std::abort();
}
}

namespace {

// ns per operation of one call over N timers.
struct timing {
	std::vector<double> v[2][4]; // [C, C++][arm, rearm, cancel, expire]
};

double ns_since(const struct timespec &t0)
{
	struct timespec t1;
	clock_gettime(CLOCK_MONOTONIC, &t1);
	return (t1.tv_sec - t0.tv_sec) * 1e9 + (t1.tv_nsec - t0.tv_nsec);
}

// One round of both APIs over n timers; timed into *tm when given, the C++
// side first when cpp_first. False if a timer did not fire exactly once.
bool round_of(std::uint32_t n, timing *tm, bool cpp_first)
{
	auto c = std::make_unique<ctimer[]>(n);
	auto x = std::make_unique<cxxtimer[]>(n);
	cts = c.get();
	xts = x.get();
	for (std::uint32_t i = 0; i < n; i++)
		tw_timer_init(&cts[i].t, c_fire);
	tw_wheel *cw;
	if (tw_wheel_create(&cw, nullptr, now0) != 0)
		return false;
	tws::wheel xw(tws::to_time_point(now0));
	if (!xw)
		return false;
	double per[4] = {2.0 * n, 1.0 * n, 1.0 * n, 1.0 * n}; // the first arm and the second count together
	double sum[2][4] = {};
	for (int step = 0; step < 5; step++)
		for (int k = 0; k < 2; k++) {
			bool cpp = (k == 1) != cpp_first;
			struct timespec t0;
			clock_gettime(CLOCK_MONOTONIC, &t0);
			switch (step) {
			case 0:
			case 3:
				cpp ? cpp_arm(xw, n) : c_arm(cw, n);
				break;
			case 1:
				cpp ? cpp_rearm(xw, n) : c_rearm(cw, n);
				break;
			case 2:
				cpp ? cpp_cancel(n) : c_cancel(cw, n);
				break;
			case 4:
				cpp ? cpp_expire(xw) : c_expire(cw);
				break;
			}
			sum[cpp][step == 3 ? 0 : step == 4 ? 3 : step] += ns_since(t0);
		}
	if (tm)
		for (int a = 0; a < 2; a++)
			for (int o = 0; o < 4; o++)
				tm->v[a][o].push_back(sum[a][o] / per[o]);
	std::uint64_t cf = 0, xf = 0;
	for (std::uint32_t i = 0; i < n; i++) {
		cf += cts[i].fired;
		xf += xts[i].fired;
	}
	tw_wheel_destroy(cw);
	if (cf != n || xf != n) {
		std::fprintf(stderr, "cpp_calls: %llu and %llu fired, not %u\n", (unsigned long long)cf,
			     (unsigned long long)xf, n);
		return false;
	}
	return true;
}

double median(std::vector<double> v)
{
	std::sort(v.begin(), v.end());
	return v[v.size() / 2];
}

} // namespace

int main(int argc, char **argv)
{
	int first = 1;
	unsigned rounds = 0;
	if (argc > 2 && std::strcmp(argv[1], "-t") == 0) {
		rounds = static_cast<unsigned>(std::strtoul(argv[2], nullptr, 10));
		first = 3;
		if (!rounds) {
			std::fprintf(stderr, "cpp_calls: -t needs a number of rounds\n");
			return 2;
		}
	}
	std::vector<std::uint32_t> ns;
	for (int i = first; i < argc; i++)
		ns.push_back(static_cast<std::uint32_t>(std::strtoul(argv[i], nullptr, 10)));
	if (ns.empty())
		ns = {1000, 1000000};
	if (rounds)
		std::printf("%-8s %-8s %9s %9s %8s\n", "N", "op", "C ns", "C++ ns", "C++/C");
	for (std::uint32_t n : ns) {
		due.resize(n);
		due_tp.resize(n);
		later_tp.resize(n);
		for (std::uint32_t i = 0; i < n; i++) {
			due[i] = now0 + tick + next_rand() % span;
			due_tp[i] = tws::to_time_point(due[i]);
			later_tp[i] = tws::to_time_point(due[i] + span);
		}
		if (!rounds) {
			if (!round_of(n, nullptr, false))
				return 1;
			std::printf("cpp_calls: %u timers, each armed twice, re-armed, cancelled and fired once per API\n", n);
			continue;
		}
		timing tm;
		for (unsigned r = 0; r < rounds; r++)
			if (!round_of(n, &tm, r % 2))
				return 1;
		const char *op[4] = {"arm", "rearm", "cancel", "expire"};
		for (int o = 0; o < 4; o++) {
			double c = median(tm.v[0][o]), x = median(tm.v[1][o]);
			std::printf("%-8u %-8s %9.1f %9.1f %8.3f\n", n, op[o], c, x, x / c);
		}
	}
	return 0;
}
