// SPDX-License-Identifier: MIT
//
// Every wrapper in src/compiler.hpp, instantiated on the types the core
// gives it, with nothing else included: what clang compiles for MSVC's
// targets, freestanding, where there is no C library (tests/compiler/msvc).
#include "../../src/compiler.hpp"

struct wheel;
struct request;
using wake_fn = void (*)(wheel *, void *);

template <class T> static T atomics(T *p, T v)
{
	using tw::mo;
	T old = tw::atomic_load<mo::relaxed>(p);
	old = tw::atomic_load<mo::acquire>(p) ? old : v;
	old = tw::atomic_load<mo::seq_cst>(p) ? old : v;
	tw::atomic_store<mo::relaxed>(p, v);
	tw::atomic_store<mo::release>(p, v);
	tw::atomic_store<mo::seq_cst>(p, v);
	old = tw::atomic_exchange<mo::acq_rel>(p, old);
	if (tw::atomic_cas_weak<mo::acquire, mo::relaxed>(p, &old, v) ||
	    tw::atomic_cas_weak<mo::seq_cst, mo::acquire>(p, &old, v) ||
	    tw::atomic_cas_strong<mo::release, mo::acquire>(p, &old, v))
		return v;
	return old;
}

TW_NOINLINE int cold_path(const char *fmt, ...) TW_PRINTF(1, 2);

TW_COLD int refuse(int e) { return -e; }

TW_ALWAYS_INLINE inline uint64_t hot(uint64_t a, uint64_t b)
{
	uint64_t rem, sum = 0;
	if (TW_UNLIKELY(!tw::mul_add_fits(a, b, 1, &sum)))
		return 0;
	tw::set_bit64(&sum, a & 63);
	tw::prefetch_for_write(&rem);
	return tw::clz64(a | 1) + tw::ctz64(b | 1) + tw::mulhi64(a, b) +
	       tw::div128by64(0, sum, b | 1, &rem) + rem;
}

uint64_t instantiate(uint32_t *u, int32_t *i, uint64_t *q, bool *flag, request **head, void **arg, wake_fn *fn)
{
	uint64_t n = atomics(u, 1u) + static_cast<uint64_t>(atomics(i, -1)) + atomics(q, uint64_t{1});
	n += atomics(flag, true) + (atomics(head, *head) != nullptr) + (atomics(arg, *arg) != nullptr);
	n += atomics(fn, *fn) != nullptr;
	if (!tw::atomic_test_and_set<tw::mo::acquire>(flag))
		tw::atomic_clear<tw::mo::release>(flag);
	return n + hot(n, *q);
}
