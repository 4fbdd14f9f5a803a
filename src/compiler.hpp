// SPDX-License-Identifier: MIT
//
// The compiler builtins the core relies on, each behind a small function:
// GCC and Clang (MinGW and clang-cl included) get their builtins, MSVC its
// intrinsics, anything else the portable version in tw::portable, which
// every build compiles so that tests/test_compiler.cpp checks it against
// the builtins. The atomics on the C structs' plain fields too: GCC's
// __atomic builtins, MSVC's _Interlocked intrinsics and ISO volatile
// accesses with barriers, else C++20's std::atomic_ref. Callers spell no
// builtin, attribute or inline assembly themselves, so that MSVC compiles
// them: tests/compiler/builtins.py keeps it so.
//
// MSVC itself cannot run where the project is tested. Its branches are
// taken by clang when a test defines TW_FORCE_MSVC_INTRINSICS (clang has
// the same intrinsics), as the standard fallbacks are when one defines
// TW_FORCE_STANDARD: tests/compiler/msvc compiles them for MSVC's targets
// and runs them under Wine.
#ifndef TW_COMPILER_HPP
#define TW_COMPILER_HPP

#include <stdint.h>

#if defined(TW_FORCE_MSVC_INTRINSICS) || (defined(_MSC_VER) && !defined(__clang__))
#include <intrin.h>
#define TW_MSVC 1
#elif (defined(__GNUC__) || defined(__clang__)) && !defined(TW_FORCE_STANDARD)
#define TW_GNU 1
#else
#include <atomic>
#endif

// printf's checks: to GCC, MinGW's "printf" means Microsoft's old dialect,
// without %zu; the build selects MinGW's C99 printf (__USE_MINGW_ANSI_STDIO),
// whose format GCC calls gnu_printf. Clang has no gnu_printf, and checks
// "printf" as C99's there too (as MinGW's own headers assume).
#if defined(TW_GNU) && defined(__MINGW32__) && !defined(__clang__)
#define TW_PRINTF(fmt, args) __attribute__((format(gnu_printf, fmt, args)))
#elif defined(TW_GNU)
#define TW_PRINTF(fmt, args) __attribute__((format(printf, fmt, args)))
#elif !defined(TW_PRINTF)
#define TW_PRINTF(fmt, args)
#endif

// TW_UNLIKELY(c): a refusal or a rare case, laid out off the hot path;
// TW_COLD: a function only such cases call.
#if defined(TW_GNU)
#define TW_ALWAYS_INLINE __attribute__((always_inline))
#define TW_NOINLINE __attribute__((noinline))
#define TW_COLD __attribute__((noinline, cold))
#define TW_UNLIKELY(c) __builtin_expect(!!(c), 0)
#elif defined(TW_MSVC)
#define TW_ALWAYS_INLINE __forceinline
#define TW_NOINLINE __declspec(noinline)
#define TW_COLD __declspec(noinline)
#define TW_UNLIKELY(c) (c)
#else
#define TW_ALWAYS_INLINE
#define TW_NOINLINE
#define TW_COLD
#define TW_UNLIKELY(c) (c)
#endif

// A variable placed in the named ELF section, and a declaration of one
// that the library does not export (the probes' semaphores).
#if defined(TW_GNU)
#define TW_IN_SECTION(name) __attribute__((section(name)))
#define TW_HIDDEN __attribute__((visibility("hidden")))
#else
#define TW_IN_SECTION(name)
#define TW_HIDDEN
#endif

// A part's one-line steps, inlined at once into the hot paths that take
// them: an inline function's call left for the later inliner counts,
// meanwhile, as a call, and makes its branch look unlikely to the
// compiler's layout of blocks.
#define TW_PART inline TW_ALWAYS_INLINE

namespace tw {

namespace portable {

inline unsigned clz64(uint64_t x)
{
	unsigned n = 0;
	for (unsigned step = 32; step; step >>= 1)
		if (!(x >> (64 - step))) {
			n += step;
			x <<= step;
		}
	return n;
}

inline unsigned ctz64(uint64_t x) { return 63u - clz64(x & (~x + 1)); } // the lowest set bit alone

// Four 32-bit products: far cheaper on a 32-bit target than the library
// call that a 64-bit division is there.
inline uint64_t mulhi64(uint64_t a, uint64_t b)
{
	uint64_t a_lo = a & 0xffffffffu, a_hi = a >> 32, b_lo = b & 0xffffffffu, b_hi = b >> 32;
	uint64_t lo_lo = a_lo * b_lo, hi_lo = a_hi * b_lo, lo_hi = a_lo * b_hi, hi_hi = a_hi * b_hi;
	uint64_t cross = (lo_lo >> 32) + (hi_lo & 0xffffffffu) + lo_hi; // cannot overflow
	return hi_hi + (hi_lo >> 32) + (cross >> 32);
}

// Long division a bit at a time: only wheel creation divides this way.
inline uint64_t div128by64(uint64_t hi, uint64_t lo, uint64_t d, uint64_t *rem)
{
	uint64_t q = 0;
	for (int i = 0; i < 64; i++) {
		bool carry = hi >> 63; // the running remainder is 65 bits for a moment
		hi = (hi << 1) | (lo >> 63);
		lo <<= 1;
		q <<= 1;
		if (carry || hi >= d) {
			hi -= d;
			q |= 1;
		}
	}
	*rem = hi;
	return q;
}

inline bool mul_add_fits(uint64_t a, uint64_t b, uint64_t c, uint64_t *out)
{
	if (a != 0 && b > UINT64_MAX / a)
		return false;
	uint64_t product = a * b;
	if (c > UINT64_MAX - product)
		return false;
	*out = c + product;
	return true;
}

inline void set_bit64(uint64_t *word, uint64_t bit)
{
	*word |= uint64_t{1} << bit;
}

} // namespace portable

// Leading zero bits of x; x must not be 0.
inline unsigned clz64(uint64_t x)
{
#if defined(TW_GNU)
	return static_cast<unsigned>(__builtin_clzll(x));
#elif defined(TW_MSVC) && (defined(_M_X64) || defined(_M_ARM64))
	unsigned long i;
	_BitScanReverse64(&i, x);
	return 63u - static_cast<unsigned>(i);
#else
	return portable::clz64(x);
#endif
}

// Trailing zero bits of x; x must not be 0.
inline unsigned ctz64(uint64_t x)
{
#if defined(TW_GNU)
	return static_cast<unsigned>(__builtin_ctzll(x));
#elif defined(TW_MSVC) && (defined(_M_X64) || defined(_M_ARM64))
	unsigned long i;
	_BitScanForward64(&i, x);
	return static_cast<unsigned>(i);
#else
	return portable::ctz64(x);
#endif
}

// The high 64 bits of the 128-bit product a * b.
inline uint64_t mulhi64(uint64_t a, uint64_t b)
{
#if defined(TW_GNU) && defined(__SIZEOF_INT128__)
	__extension__ typedef unsigned __int128 u128;
	return static_cast<uint64_t>((static_cast<u128>(a) * b) >> 64);
#elif defined(TW_MSVC) && (defined(_M_X64) || defined(_M_ARM64))
	return __umulh(a, b);
#else
	return portable::mulhi64(a, b); // 32-bit targets: i386, 32-bit ARM
#endif
}

// (hi * 2^64 + lo) / d, and the remainder in *rem; hi must be below d (the
// quotient fits in 64 bits).
inline uint64_t div128by64(uint64_t hi, uint64_t lo, uint64_t d, uint64_t *rem)
{
#if defined(TW_GNU) && defined(__SIZEOF_INT128__)
	__extension__ typedef unsigned __int128 u128;
	u128 n = (static_cast<u128>(hi) << 64) | lo;
	*rem = static_cast<uint64_t>(n % d);
	return static_cast<uint64_t>(n / d);
#elif defined(TW_MSVC) && defined(_M_X64) && _MSC_VER >= 1920 && !defined(__clang__) // clang has no _udiv128
	unsigned __int64 r;
	uint64_t q = _udiv128(hi, lo, d, &r);
	*rem = r;
	return q;
#else
	return portable::div128by64(hi, lo, d, rem);
#endif
}

// a * b + c in *out, or false (and *out unchanged) if it does not fit in 64
// bits.
inline bool mul_add_fits(uint64_t a, uint64_t b, uint64_t c, uint64_t *out)
{
#if defined(TW_GNU)
	uint64_t product, sum;
	if (__builtin_mul_overflow(a, b, &product) || __builtin_add_overflow(c, product, &sum))
		return false;
	*out = sum;
	return true;
#else
	return portable::mul_add_fits(a, b, c, out);
#endif
}

// *word with bit `bit` (0 to 63) set: on x86-64 with `bts`, because the
// shift written in C costs the arm path extra moves.
inline void set_bit64(uint64_t *word, uint64_t bit)
{
#if defined(TW_GNU) && defined(__x86_64__)
	uint64_t w = *word;
	__asm__("bts{q %1, %0| %0, %1}" : "+r"(w) : "r"(bit) : "cc"); // AT&T | Intel (-masm=intel)
	*word = w;
#else
	portable::set_bit64(word, bit);
#endif
}

// Start loading the line at p, to be written; a hint only.
inline void prefetch_for_write(const void *p)
{
#if defined(TW_GNU)
	__builtin_prefetch(p, 1);
#elif defined(TW_MSVC) && (defined(_M_X64) || defined(_M_IX86))
	_mm_prefetch(static_cast<const char *>(p), _MM_HINT_T0);
#else
	(void)p;
#endif
}

// Atomic accesses to plain fields: the C structs' own, which C++17 has no
// way to view as std::atomic. The memory order is a template argument, a
// constant wherever the builtin sees it, even unoptimised.
#if defined(TW_GNU)
enum class mo : int {
	relaxed = __ATOMIC_RELAXED,
	acquire = __ATOMIC_ACQUIRE,
	release = __ATOMIC_RELEASE,
	acq_rel = __ATOMIC_ACQ_REL,
	seq_cst = __ATOMIC_SEQ_CST,
};
#else
enum class mo : int { relaxed, acquire, release, acq_rel, seq_cst };
#endif

// A value's type, kept out of template argument deduction: the pointer
// alone says what type an access is of.
template <class T> struct same_type {
	using type = T;
};
template <class T> using value_of = typename same_type<T>::type;

#if defined(TW_MSVC)
namespace msvc {

// The integer each intrinsic takes for an object of N bytes.
template <unsigned N> struct word;
template <> struct word<1> {
	using type = char;
};
template <> struct word<4> {
	using type = long; // 32 bits on Windows, where MSVC runs
};
template <> struct word<8> {
	using type = __int64;
};
template <class T> using word_t = typename word<sizeof(T)>::type;

// Values (integers, bool, pointers, function pointers) as such words and
// back, by casts: the freestanding compiles that check this branch have
// no <string.h> for memcpy.
template <class T> struct bits {
	static word_t<T> of(T v) { return static_cast<word_t<T>>(v); }
	static T to(word_t<T> w) { return static_cast<T>(w); }
};
template <class T> struct bits<T *> {
	static word_t<T *> of(T *v) { return reinterpret_cast<word_t<T *>>(v); }
	static T *to(word_t<T *> w) { return reinterpret_cast<T *>(w); }
};

// Plain (ISO volatile) accesses: atomic for aligned words, and no
// ordering of their own whatever /volatile: says.
inline char load(const volatile char *p) { return __iso_volatile_load8(p); }
inline long load(const volatile long *p)
{
	return __iso_volatile_load32(reinterpret_cast<const volatile int *>(p));
}
inline __int64 load(const volatile __int64 *p) { return __iso_volatile_load64(p); }
inline void store(volatile char *p, char v) { __iso_volatile_store8(p, v); }
inline void store(volatile long *p, long v) { __iso_volatile_store32(reinterpret_cast<volatile int *>(p), v); }
inline void store(volatile __int64 *p, __int64 v) { __iso_volatile_store64(p, v); }

// The interlocked operations, full barriers on every target: as strong as
// any memory order asked of them.
inline char exchange(volatile char *p, char v) { return _InterlockedExchange8(p, v); }
inline long exchange(volatile long *p, long v) { return _InterlockedExchange(p, v); }
inline __int64 exchange(volatile __int64 *p, __int64 v)
{
#if defined(_M_IX86)
	__int64 old = load(p); // no 8-byte xchg on 32-bit x86: cmpxchg8b in a loop
	for (__int64 seen; (seen = _InterlockedCompareExchange64(p, v, old)) != old;)
		old = seen;
	return old;
#else
	return _InterlockedExchange64(p, v);
#endif
}
inline char compare_exchange(volatile char *p, char desired, char expected)
{
	return _InterlockedCompareExchange8(p, desired, expected);
}
inline long compare_exchange(volatile long *p, long desired, long expected)
{
	return _InterlockedCompareExchange(p, desired, expected);
}
inline __int64 compare_exchange(volatile __int64 *p, __int64 desired, __int64 expected)
{
	return _InterlockedCompareExchange64(p, desired, expected);
}

// What orders a plain access after an acquire load, or before a release
// store: x86's loads and stores are ordered already, and only the
// compiler must not move others across them; ARM needs the barrier.
inline void barrier()
{
#if defined(_M_ARM64) || defined(_M_ARM64EC)
	__dmb(_ARM64_BARRIER_ISH);
#elif defined(_M_ARM)
	__dmb(_ARM_BARRIER_ISH);
#else
	_ReadWriteBarrier();
#endif
}

template <class T> volatile word_t<T> *at(T *p) { return reinterpret_cast<volatile word_t<T> *>(p); }
template <class T> const volatile word_t<T> *at(const T *p)
{
	return reinterpret_cast<const volatile word_t<T> *>(p);
}

} // namespace msvc
#elif !defined(TW_GNU)
namespace standard {

constexpr std::memory_order order(mo m)
{
	return m == mo::relaxed	  ? std::memory_order_relaxed
	       : m == mo::acquire ? std::memory_order_acquire
	       : m == mo::release ? std::memory_order_release
	       : m == mo::acq_rel ? std::memory_order_acq_rel
				  : std::memory_order_seq_cst;
}

#if !defined(__cpp_lib_atomic_ref)
#error "timerwheel needs GCC's or Clang's __atomic builtins, MSVC's intrinsics, or C++20's std::atomic_ref"
#endif
// std::atomic_ref<const T> is C++26's: a load views its object as mutable.
template <class T> std::atomic_ref<T> ref(const T *p) { return std::atomic_ref<T>(*const_cast<T *>(p)); }

} // namespace standard
#endif

template <mo M, class T> inline T atomic_load(const T *p)
{
	static_assert(M == mo::relaxed || M == mo::acquire || M == mo::seq_cst, "a load's order");
#if defined(TW_GNU)
	return __atomic_load_n(p, static_cast<int>(M));
#elif defined(TW_MSVC)
	// A sequentially consistent load is an acquire load where the stores
	// are interlocked.
	msvc::word_t<T> w = msvc::load(msvc::at(p));
	if constexpr (M != mo::relaxed)
		msvc::barrier();
	return msvc::bits<T>::to(w);
#else
	return standard::ref(p).load(standard::order(M));
#endif
}

template <mo M, class T> inline void atomic_store(T *p, value_of<T> v)
{
	static_assert(M == mo::relaxed || M == mo::release || M == mo::seq_cst, "a store's order");
#if defined(TW_GNU)
	__atomic_store_n(p, v, static_cast<int>(M));
#elif defined(TW_MSVC)
	if constexpr (M == mo::seq_cst) {
		msvc::exchange(msvc::at(p), msvc::bits<T>::of(v));
	} else {
		if constexpr (M == mo::release)
			msvc::barrier();
		msvc::store(msvc::at(p), msvc::bits<T>::of(v));
	}
#else
	standard::ref(p).store(v, standard::order(M));
#endif
}

// The old value.
template <mo M, class T> inline T atomic_exchange(T *p, value_of<T> v)
{
#if defined(TW_GNU)
	return __atomic_exchange_n(p, v, static_cast<int>(M));
#elif defined(TW_MSVC)
	return msvc::bits<T>::to(msvc::exchange(msvc::at(p), msvc::bits<T>::of(v)));
#else
	return standard::ref(p).exchange(v, standard::order(M));
#endif
}

// *p = desired if *p == *expected; else false, and *expected = *p. Weak:
// may fail spuriously, for callers that loop.
template <mo Success, mo Failure, bool Weak, class T>
inline bool atomic_compare_exchange(T *p, T *expected, value_of<T> desired)
{
#if defined(TW_GNU)
	return __atomic_compare_exchange_n(p, expected, desired, Weak, static_cast<int>(Success),
					   static_cast<int>(Failure));
#elif defined(TW_MSVC)
	msvc::word_t<T> want = msvc::bits<T>::of(*expected);
	msvc::word_t<T> seen = msvc::compare_exchange(msvc::at(p), msvc::bits<T>::of(desired), want);
	if (seen == want)
		return true;
	*expected = msvc::bits<T>::to(seen);
	return false;
#else
	if constexpr (Weak)
		return standard::ref(p).compare_exchange_weak(*expected, desired, standard::order(Success),
							      standard::order(Failure));
	else
		return standard::ref(p).compare_exchange_strong(*expected, desired, standard::order(Success),
								standard::order(Failure));
#endif
}

template <mo Success, mo Failure, class T> inline bool atomic_cas_weak(T *p, T *expected, value_of<T> desired)
{
	return atomic_compare_exchange<Success, Failure, true>(p, expected, desired);
}

template <mo Success, mo Failure, class T> inline bool atomic_cas_strong(T *p, T *expected, value_of<T> desired)
{
	return atomic_compare_exchange<Success, Failure, false>(p, expected, desired);
}

// A flag: set it and say whether it was set already; clear it.
template <mo M> inline bool atomic_test_and_set(bool *flag)
{
#if defined(TW_GNU)
	return __atomic_test_and_set(flag, static_cast<int>(M));
#elif defined(TW_MSVC)
	return msvc::exchange(msvc::at(flag), 1) != 0;
#else
	return standard::ref(flag).exchange(true, standard::order(M));
#endif
}

template <mo M> inline void atomic_clear(bool *flag)
{
#if defined(TW_GNU)
	__atomic_clear(flag, static_cast<int>(M));
#else
	atomic_store<M>(flag, false);
#endif
}

} // namespace tw

#endif
