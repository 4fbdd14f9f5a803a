#!/bin/sh
# SPDX-License-Identifier: MIT
# Install to a staging prefix, then build and run the plain C consumers of
# tests/consumer/c with gcc and pkg-config alone, as a new user would: first
# `pkg-config --cflags --libs` (shared), then `pkg-config --static` against
# a tree holding only the static libraries (no g++, no -lstdc++). The C++
# consumer (tests/consumer/cpp, <timerwheel.hpp> only) with g++ and
# clang++, both ways.
# Arguments: the modules this build has (timerwheel timerwheel-uv ...).
. "$(dirname "$0")/lib.sh"

command -v gcc >/dev/null || skip "no gcc"
command -v pkg-config >/dev/null || skip "no pkg-config"
tw_install
tw_pkgconfig
src=$TW_SOURCE/tests/consumer/c
cppsrc=$TW_SOURCE/tests/consumer/cpp

# cpp_consumer <suffix> <pkg-config flags...>: the C++ consumer with each C++ compiler.
cpp_consumer() {
	suffix=$1
	shift
	for cxx in g++ clang++; do
		command -v $cxx >/dev/null || { echo "  (no $cxx: C++ consumer not built with it)"; continue; }
		echo "$suffix timerwheel: $cxx -std=c++17 core.cpp $*"
		"$cxx" -std=c++17 -Wall -Wextra -pedantic -Werror -o "$tmp/cpp-$cxx-$suffix" "$cppsrc/core.cpp" "$@" ||
			fail "$cxx: the C++ consumer ($suffix)"
		run "$tmp/cpp-$cxx-$suffix" "$suffix C++ consumer ($cxx)"
	done
}

# run <exe> <what>: run a consumer; 77 is the uring consumer's "the kernel
# refuses io_uring", which leaves the link checked but not the run.
run() {
	rc=0
	LD_LIBRARY_PATH=$libdir "$1" || rc=$?
	case $rc in
	0) ;;
	77) echo "  ($2: built and linked; not run, see above)" ;;
	*) fail "$2 exited with $rc" ;;
	esac
}

consumer_of() {
	case $1 in
	timerwheel) echo core ;;
	timerwheel-uv) echo uv ;;
	timerwheel-uring) echo uring ;;
	*) fail "unknown module $1" ;;
	esac
}

for m in "$@"; do
	[ -f "$pcdir/$m.pc" ] || fail "$m.pc not installed"
	if grep -Ei 'std(c|\+)\+\+|supc\+\+' "$pcdir/$m.pc"; then
		fail "$m.pc names the C++ runtime"
	fi
done

shared=no
static=no
ls "$libdir"/libtimerwheel.so.* >/dev/null 2>&1 && shared=yes
[ -f "$libdir/libtimerwheel.a" ] && static=yes

if [ $shared = yes ]; then
	for m in "$@"; do
		c=$(consumer_of "$m")
		flags=$(pkg-config --cflags --libs "$m")
		echo "shared $m: gcc $c.c $flags"
		# shellcheck disable=SC2086 # pkg-config output is a list of words
		gcc -Wall -Wextra -pedantic -Werror -o "$tmp/$c" "$src/$c.c" $flags
		no_cxx_runtime "$tmp/$c"
		# The staged library, not some installed copy, must be the one used.
		lib=$(LD_LIBRARY_PATH=$libdir ldd "$tmp/$c" | sed -n 's/.*libtimerwheel\.so\.[0-9]* => \([^ ]*\).*/\1/p')
		same_file "$lib" "$libdir/libtimerwheel.so.$TW_SOVERSION" || fail "$c loads libtimerwheel from '$lib'"
		run "$tmp/$c" "shared $m"
	done
	# shellcheck disable=SC2046 # pkg-config output is a list of words
	cpp_consumer shared $(pkg-config --cflags --libs timerwheel)
	# The static links below must not be able to pick a shared library.
	rm -f "$libdir"/libtimerwheel*.so*
fi

if [ $static = yes ]; then
	for m in "$@"; do
		c=$(consumer_of "$m")
		flags=$(pkg-config --static --cflags --libs "$m")
		echo "static $m: gcc $c.c $flags"
		case " $flags " in *stdc++*) fail "pkg-config --static adds the C++ runtime" ;; esac
		# shellcheck disable=SC2086
		gcc -Wall -Wextra -pedantic -Werror -o "$tmp/$c-static" "$src/$c.c" $flags
		no_cxx_runtime "$tmp/$c-static"
		if needed "$tmp/$c-static" | grep timerwheel; then
			fail "$c-static needs a shared timerwheel"
		fi
		run "$tmp/$c-static" "static $m"
	done
	# shellcheck disable=SC2046
	cpp_consumer static $(pkg-config --static --cflags --libs timerwheel)
fi
[ $shared = yes ] || [ $static = yes ] || fail "no library installed in $libdir"
echo "pkg-config consumers: OK (shared: $shared, static: $static)"
