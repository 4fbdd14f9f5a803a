#!/bin/sh
# SPDX-License-Identifier: MIT
# The public headers compile alone, twice over (include guards) and all
# together, in C99 and C11 and in C++11 to C++20, with -Wall -Wextra
# -pedantic -Wcast-qual -Werror; the core's header also in C++98 and C++03
# (the backends' headers include libuv's and liburing's, which need C++11).
# Each translation unit uses tw_container_of on a const pointer.
# <timerwheel.hpp> compiles in C++17 and C++20, with and without
# exceptions and RTTI, its templates instantiated by a program calling each
# member template, and in C++20 its awaitable (g++ 12 and clang 14 have
# coroutines).
# Arguments: the C compiler, the C++ compiler, then the headers to check
# (relative to include/).
. "$(dirname "$0")/lib.sh"

[ $# -ge 3 ] || fail "usage: headers.sh CC CXX HEADER..."
cc=$1
cxx=$2
shift 2
command -v "$cc" >/dev/null || skip "no $cc"
command -v "$cxx" >/dev/null || skip "no $cxx"
flags="-Wall -Wextra -pedantic -Wcast-qual -Werror -fsyntax-only"
inc=$TW_SOURCE/include

# tu <file> <headers...>: a translation unit including each header twice.
tu() {
	f=$1
	shift
	: >"$f"
	for h in "$@" "$@"; do
		echo "#include <$h>" >>"$f"
	done
	cat >>"$f" <<'END'
struct probe { int x; struct tw_timer t; };
int main(void)
{
	static struct probe p;
	const struct tw_timer *t = &p.t;
	return tw_container_of(t, struct probe, t)->x;
}
END
}

# cxx_variants <file> <what>: C++17 and C++20, each with and without
# exceptions and RTTI.
cxx_variants() {
	for std in c++17 c++20; do
		for x in "" "-fno-exceptions -fno-rtti"; do
			# shellcheck disable=SC2086 # $x and $flags are lists of words
			"$cxx" -std=$std $x $flags -I "$inc" "$1" || fail "$cxx -std=$std $x: $2"
			n=$((n + 1))
		done
	done
}

n=0
# shellcheck disable=SC2086 # $set, $flags and $posix are lists of words
for set in "$@" "$*"; do
	tu "$tmp/t.c" $set
	cp "$tmp/t.c" "$tmp/t.cpp"
	# libuv's own uv.h uses POSIX types that strict ISO C modes hide: any
	# C program including it must ask for them.
	posix=""
	case " $set " in *uv.h* | *uv_timer.h*) posix=-D_POSIX_C_SOURCE=200809L ;; esac
	for std in c99 c11; do
		"$cc" -std=$std $posix $flags -I "$inc" "$tmp/t.c" ||
			fail "$cc -std=$std: $set"
		n=$((n + 1))
	done
	stds="c++11 c++14 c++17 c++20"
	[ "$set" = timerwheel.h ] && stds="c++98 c++03 $stds"
	for std in $stds; do
		"$cxx" -std=$std $flags -I "$inc" "$tmp/t.cpp" || fail "$cxx -std=$std: $set"
		n=$((n + 1))
	done
done
# The C++ header: every type used, so that its templates are instantiated.
cat >"$tmp/hpp.cpp" <<'END'
#include <timerwheel.hpp>
#include <timerwheel.hpp>
namespace tws = timerwheel;
struct hooked : tws::timer_hook<hooked> {
	int n = 0;
	void on_timer(tws::default_tag) { n++; }
};
#if __cplusplus >= 202002L && !defined(TIMERWHEEL_HAVE_COROUTINES)
#error "C++20 here has coroutines: the header must offer the awaitable"
#endif
#ifdef TIMERWHEEL_HAVE_COROUTINES
struct task {
	struct promise_type {
		task get_return_object() { return {}; }
		std::suspend_never initial_suspend() noexcept { return {}; }
		std::suspend_never final_suspend() noexcept { return {}; }
		void return_void() noexcept {}
		void unhandled_exception() noexcept {}
	};
};
task nap(tws::wheel_ref w)
{
	using namespace std::chrono_literals;
	if (co_await tws::sleep_for(w, 1ms))
		(void)co_await tws::sleep_until(w, tws::clock::time_point(1s));
}
#endif
int main()
{
	using namespace std::chrono_literals;
	tws::wheel w(tws::wheel::config{1ms, 6, 0ns}, tws::clock::time_point(0s));
	int n = 0;
	tws::timer t([&n] { n++; });
	tws::basic_timer<32> big;
	tws::periodic_timer p([&n] { n++; });
	hooked h;
	tws::request r;
	big.on_fire([&n, &w] { n += static_cast<int>(w.count()); });
	p.on_fire([&n] { n--; });
	int bad = 0;
	bad += !t.arm(w, tws::clock::time_point(1ms), 1ms) + !t.rearm(w, tws::clock::time_point(2ms)) +
	       !t.rearm(w, tws::clock::time_point(2ms), 500us) + !t.rearm_after(w, 1ms) + !t.cancel() +
	       !t.arm_after(w, 2ms) + !t.rearm_ns(w, 3000000) + !big.arm_ns(w, 4000000) +
	       !h.arm(w, tws::clock::time_point(3ms));
	bad += !p.start(w, tws::clock::time_point(2ms), 1s) + !p.cancel() + !p.start(w, tws::clock::time_point(2ms), 1s, 1ms) +
	       !p.cancel() + !p.start(w, 500ms) + !p.set_period(std::chrono::duration<int, std::milli>(20)) +
	       !p.rearm(w, tws::clock::time_point(5ms)) + (p.period() != 20ms);
	bad += !r.post_rearm(w, t, tws::clock::time_point(4ms)) + !r.post_rearm(w, t, tws::clock::time_point(4ms), 1ms) +
	       !r.post_rearm_after(w, big, 2ms) + !r.post_cancel(w, p) + !r.settle() + !r.done() +
	       !r.outcome() + !r.wait_for(std::chrono::duration<double>(0.5)) + !r.wait();
	std::error_code ec = w.advance_by(10ms).error();
	bad += ec ? 1 : 0;
	bad += tws::to_ns(std::chrono::duration<unsigned, std::micro>(5)) != 5000;
	return bad + n + h.n + static_cast<int>(w.count()) + (w.next_expiry() < w.now()) +
	       (w.until_next(w.now()) > 1h);
}
END
cxx_variants "$tmp/hpp.cpp" timerwheel.hpp
# A callable larger than a timer's inline storage is refused at compile
# time, with the header's message, rather than allocated.
cat >"$tmp/big.cpp" <<'END'
#include <timerwheel.hpp>
int main()
{
	long a = 0, b = 0, c = 0;
	timerwheel::timer t([&a, &b, &c] { a = b + c; });
	return static_cast<int>(a);
}
END
if "$cxx" -std=c++17 $flags -I "$inc" "$tmp/big.cpp" 2>"$tmp/big.err"; then
	fail "$cxx: a timer took a callable of three pointers"
fi
grep -q "inline storage" "$tmp/big.err" || { cat "$tmp/big.err"; fail "$cxx: not the header's refusal"; }
n=$((n + 1))

# The backends' C++ headers, beside their C ones.
for h in "$@"; do
	hpp=${h%.h}.hpp
	[ "$h" != timerwheel.h ] && [ -f "$inc/$hpp" ] || continue
	case $hpp in
	*uv*) types="uv_wheel" ;;
	*) types="uring_loop uring_attachment" ;;
	esac
	printf '#include <%s>\n#include <%s>\nint main()\n{\n\tint n = 0;\n' "$hpp" "$hpp" >"$tmp/b.cpp"
	for ty in $types; do
		printf '\t{\n\t\ttimerwheel::%s a, b;\n\t\tb = std::move(a);\n\t\tn += b.native() != nullptr;\n\t}\n' \
			"$ty" >>"$tmp/b.cpp"
	done
	printf '\treturn n;\n}\n' >>"$tmp/b.cpp"
	cxx_variants "$tmp/b.cpp" "$hpp"
done
echo "headers: OK ($n compilations with $cc and $cxx)"
