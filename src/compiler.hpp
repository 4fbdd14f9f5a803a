// SPDX-License-Identifier: MIT
//
// The compiler builtins the core relies on, each behind a small function:
// GCC and Clang (MinGW included) get their builtins, MSVC its intrinsics,
// anything else the portable version in tw::portable, which every build
// compiles so that tests/test_compiler.cpp checks it against the builtins.
// Callers never spell a builtin themselves.
//
// The core's atomics are GCC's __atomic builtins, which GCC and Clang
// (clang-cl too) provide on every target; MSVC proper would need them
// mapped onto its _Interlocked intrinsics.
#ifndef TW_COMPILER_HPP
#define TW_COMPILER_HPP

#include <stdint.h>

#if defined(_MSC_VER) && !defined(__clang__)
#include <intrin.h>
#define TW_MSVC 1
#endif

// printf's checks: MinGW's "printf" means Microsoft's old dialect, without
// %zu; the build selects MinGW's C99 printf (__USE_MINGW_ANSI_STDIO).
#if defined(__MINGW32__)
#define TW_PRINTF(fmt, args) __attribute__((format(gnu_printf, fmt, args)))
#elif defined(__GNUC__) || defined(__clang__)
#define TW_PRINTF(fmt, args) __attribute__((format(printf, fmt, args)))
#elif !defined(TW_PRINTF)
#define TW_PRINTF(fmt, args)
#endif

// TW_UNLIKELY(c): a refusal or a rare case, laid out off the hot path;
// TW_COLD: a function only such cases call.
#if defined(__GNUC__) || defined(__clang__)
#define TW_ALWAYS_INLINE __attribute__((always_inline))
#define TW_NOINLINE __attribute__((noinline))
#define TW_COLD __attribute__((noinline, cold))
#define TW_UNLIKELY(c) __builtin_expect(!!(c), 0)
#elif defined(_MSC_VER)
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
#if defined(__GNUC__) || defined(__clang__)
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
#if defined(__GNUC__) || defined(__clang__)
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
#if defined(__SIZEOF_INT128__)
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
#if defined(__SIZEOF_INT128__)
	__extension__ typedef unsigned __int128 u128;
	u128 n = (static_cast<u128>(hi) << 64) | lo;
	*rem = static_cast<uint64_t>(n % d);
	return static_cast<uint64_t>(n / d);
#elif defined(TW_MSVC) && defined(_M_X64) && _MSC_VER >= 1920
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
#if defined(__GNUC__) || defined(__clang__)
	uint64_t product, sum;
	if (__builtin_mul_overflow(a, b, &product) || __builtin_add_overflow(c, product, &sum))
		return false;
	*out = sum;
	return true;
#else
	return portable::mul_add_fits(a, b, c, out);
#endif
}

// *word with bit `bit` (0 to 63) set. x86-64 sets it with one `bts` on a
// register; written in C, the shift needs its count in %cl, and on the
// arm path, where the slot's digit has %cl already, compilers spend moves
// to juggle it.
inline void set_bit64(uint64_t *word, uint64_t bit)
{
#if (defined(__GNUC__) || defined(__clang__)) && defined(__x86_64__)
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
#if defined(__GNUC__) || defined(__clang__)
	__builtin_prefetch(p, 1);
#elif defined(TW_MSVC) && (defined(_M_X64) || defined(_M_IX86))
	_mm_prefetch(static_cast<const char *>(p), _MM_HINT_T0);
#else
	(void)p;
#endif
}

} // namespace tw

#endif
