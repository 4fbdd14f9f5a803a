// SPDX-License-Identifier: MIT
//
// The builtins' wrappers (src/compiler.hpp) against their portable
// versions and against plain loops, on the edges and on random numbers:
// the portable versions are what 32-bit and non-GNU targets run, so they
// are checked on every target, builtins or not. mulhi64() and div128by64()
// also check each other: (a * b) / a is b with no remainder. The atomics
// are checked for what one thread sees of them, on every type the core
// gives them: tests/compiler/msvc runs this with MSVC's intrinsics and
// with std::atomic_ref, which no build here compiles otherwise.
#include <inttypes.h>
#include <stdio.h>

#include "../src/compiler.hpp"
#include "expect.h"
#include "rand.h"
#include "timerwheel.h"

static uint64_t rng = 0x2545f4914f6cdd1du;

static uint64_t next_rand() { return test_rand(&rng); }

static void check_bits(uint64_t x)
{
	unsigned top = 64, low = 64;
	for (unsigned i = 0; i < 64; i++)
		if (x >> i & 1) {
			top = i;
			if (low == 64)
				low = i;
		}
	if (!x)
		return;
	EXPECT(tw::clz64(x) == 63 - top, "%#" PRIx64, x);
	EXPECT(tw::portable::clz64(x) == 63 - top, "%#" PRIx64, x);
	EXPECT(tw::ctz64(x) == low, "%#" PRIx64, x);
	EXPECT(tw::portable::ctz64(x) == low, "%#" PRIx64, x);
}

// Every bit of `x` set in turn, by the wrapper (bts on x86-64) and the C.
static void check_set_bit(uint64_t x)
{
	for (unsigned i = 0; i < 64; i++) {
		uint64_t w = x, p = x;
		tw::set_bit64(&w, i);
		tw::portable::set_bit64(&p, i);
		EXPECT(w == (x | uint64_t{1} << i) && p == w, "%#" PRIx64 " bit %u", x, i);
	}
}

static void check_mul(uint64_t a, uint64_t b)
{
	uint64_t hi = tw::mulhi64(a, b), rem = 1;
	EXPECT(tw::portable::mulhi64(a, b) == hi, "%#" PRIx64 " * %#" PRIx64, a, b);
	if (a) {
		EXPECT(tw::div128by64(hi, a * b, a, &rem) == b && rem == 0, "%#" PRIx64 " * %#" PRIx64, a, b);
		rem = 1;
		EXPECT(tw::portable::div128by64(hi, a * b, a, &rem) == b && rem == 0, "%#" PRIx64 " * %#" PRIx64, a,
		       b);
	}
	// A remainder too: (a * b + r) / a for r < a, if that does not carry.
	if (a > 1 && a * b + (a - 1) > a * b) {
		uint64_t q1 = tw::div128by64(hi, a * b + (a - 1), a, &rem);
		EXPECT(q1 == b && rem == a - 1, "(%#" PRIx64 " * %#" PRIx64 " + r)", a, b);
		uint64_t q2 = tw::portable::div128by64(hi, a * b + (a - 1), a, &rem);
		EXPECT(q2 == b && rem == a - 1, "(%#" PRIx64 " * %#" PRIx64 " + r)", a, b);
	}
	uint64_t c = next_rand() >> (next_rand() % 64), sum = 0, psum = 0;
	bool fits = tw::mul_add_fits(a, b, c, &sum);
	EXPECT(fits == (hi == 0 && a * b + c >= c), "%#" PRIx64 " * %#" PRIx64 " + %#" PRIx64, a, b, c);
	EXPECT(tw::portable::mul_add_fits(a, b, c, &psum) == fits && (!fits || (sum == a * b + c && psum == sum)),
	       "%#" PRIx64 " * %#" PRIx64 " + %#" PRIx64, a, b, c);
}

// One thread's view of every atomic wrapper on an object of type T, with
// the values a and b (different): what each returns and leaves behind.
template <class T> static void check_atomics(const char *type, T a, T b)
{
	using tw::mo;
	T x = a;
	EXPECT(tw::atomic_load<mo::relaxed>(&x) == a, "%s load", type);
	EXPECT(tw::atomic_load<mo::acquire>(&x) == a, "%s load", type);
	EXPECT(tw::atomic_load<mo::seq_cst>(&x) == a, "%s load", type);
	tw::atomic_store<mo::relaxed>(&x, b);
	EXPECT(x == b, "%s store", type);
	tw::atomic_store<mo::release>(&x, a);
	EXPECT(x == a, "%s store", type);
	tw::atomic_store<mo::seq_cst>(&x, b);
	EXPECT(x == b, "%s store", type);
	EXPECT(tw::atomic_exchange<mo::acq_rel>(&x, a) == b && x == a, "%s exchange", type);

	T expected = b; // x is a: fails, and says what it found
	bool swapped = tw::atomic_cas_strong<mo::acq_rel, mo::acquire>(&x, &expected, b);
	EXPECT(!swapped && expected == a && x == a, "%s failed strong CAS", type);
	expected = b;
	swapped = tw::atomic_cas_weak<mo::seq_cst, mo::acquire>(&x, &expected, b);
	EXPECT(!swapped && expected == a && x == a, "%s failed weak CAS", type);
	expected = a;
	swapped = tw::atomic_cas_strong<mo::release, mo::acquire>(&x, &expected, b);
	EXPECT(swapped && expected == a && x == b, "%s strong CAS", type);
	// A weak CAS may fail spuriously, never twice in a row in practice.
	swapped = false;
	for (int i = 0; i < 100 && !swapped; i++) {
		expected = b;
		swapped = tw::atomic_cas_weak<mo::acquire, mo::relaxed>(&x, &expected, a);
		EXPECT(swapped || (expected == b && x == b), "%s weak CAS", type);
	}
	EXPECT(swapped && x == a, "%s weak CAS", type);
}

static void wake_a(tw_wheel *, void *) {}
static void wake_b(tw_wheel *, void *) {}

static void check_atomics()
{
	check_atomics<uint32_t>("uint32_t", 0, 0xffffffffu); // the top bit through MSVC's signed long
	check_atomics<uint32_t>("uint32_t", 0x80000000u, 0x7fffffffu);
	check_atomics<int32_t>("int32_t", -4042, INT32_MIN);
	check_atomics<uint64_t>("uint64_t", UINT64_MAX, 0x100000000u);
	check_atomics<uint64_t>("uint64_t", 0, uint64_t{1} << 63);
	check_atomics<bool>("bool", false, true);
	tw_request r[2];
	check_atomics<tw_request *>("tw_request *", nullptr, &r[1]);
	check_atomics<void *>("void *", &r[0], nullptr);
	check_atomics<tw_wake_fn>("tw_wake_fn", wake_a, wake_b);

	bool flag = false;
	EXPECT(!tw::atomic_test_and_set<tw::mo::acquire>(&flag) && flag, "test and set");
	EXPECT(tw::atomic_test_and_set<tw::mo::acquire>(&flag) && flag, "test and set");
	tw::atomic_clear<tw::mo::release>(&flag);
	EXPECT(!flag, "clear");
}

int main()
{
	check_atomics();

	const uint64_t edges[] = { 0, 1, 2, 3, 0xffffffffu, 0x100000000u, 0x100000001u, UINT64_MAX / 2,
				   UINT64_MAX / 2 + 1, UINT64_MAX - 1, UINT64_MAX };
	for (uint64_t a : edges) {
		check_bits(a);
		check_set_bit(a);
		for (uint64_t b : edges)
			check_mul(a, b);
	}
	for (unsigned i = 0; i < 64; i++)
		check_bits(uint64_t{1} << i);
	for (int i = 0; i < 200000; i++) {
		uint64_t a = next_rand() >> (next_rand() % 64), b = next_rand() >> (next_rand() % 64);
		check_bits(a);
		check_set_bit(a);
		check_mul(a, b);
	}
#if defined(TW_MSVC)
	const char *branch = "MSVC's intrinsics";
#elif defined(TW_GNU)
	const char *branch = "GCC's builtins";
#else
	const char *branch = "the standard fallbacks";
#endif
	printf("%s: %llu checks, %llu wrong\n", branch, checked, wrong);
	return wrong ? 1 : 0;
}
