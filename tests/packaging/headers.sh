#!/bin/sh
# SPDX-License-Identifier: MIT
# The public headers compile alone, twice over (include guards) and all
# together, in C99 and C11 and in C++11 to C++20, with -Wall -Wextra
# -pedantic -Wcast-qual -Werror; the core's header also in C++98 and C++03
# (the backends' headers include libuv's and liburing's, which need C++11).
# Each translation unit uses tw_container_of on a const pointer.
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
echo "headers: OK ($n compilations with $cc and $cxx)"
