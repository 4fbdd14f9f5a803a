#!/bin/sh
# SPDX-License-Identifier: MIT
# tests/consumer/cmake as a new user's project: find_package(timerwheel)
# on a staging prefix, built and run against the shared libraries, then
# again with timerwheel_USE_STATIC_LIBS; and the version file's answers.
# Arguments: the modules this build has; their targets must exist.
. "$(dirname "$0")/lib.sh"

command -v cmake >/dev/null || skip "no cmake (Debian package cmake)"
tw_install
cfg=$(ls -d "$libdir"/cmake/timerwheel 2>/dev/null) || fail "no cmake/timerwheel in $libdir"
for f in timerwheelConfig.cmake timerwheelConfigVersion.cmake; do
	[ -f "$cfg/$f" ] || fail "$f not installed in $cfg"
done

components=""
for m in "$@"; do
	[ "$m" = timerwheel ] || components="$components;${m#timerwheel-}"
done
components=${components#;}
gen=""
command -v ninja >/dev/null && gen="-GNinja"

# build <dir> [cmake args...]: configure, build and run every consumer.
build() {
	b=$1
	shift
	# shellcheck disable=SC2086
	cmake $gen -S "$TW_SOURCE/tests/consumer/cmake" -B "$b" \
		-DCMAKE_PREFIX_PATH="$dest$TW_PREFIX" -DTW_COMPONENTS="$components" "$@" \
		>"$b.log" 2>&1 || { cat "$b.log"; fail "cmake configure $*"; }
	cmake --build "$b" >>"$b.log" 2>&1 || { cat "$b.log"; fail "cmake build $*"; }
	for c in consumer $(echo "$components" | tr ';' '\n' | sed -n 's/^./consumer_&/p'); do
		[ -x "$b/$c" ] || fail "$c not built ($*)"
		no_cxx_runtime "$b/$c"
		rc=0
		"$b/$c" || rc=$?
		[ $rc -eq 0 ] || [ $rc -eq 77 ] || fail "$c exited with $rc ($*)"
	done
	# The C++ consumer, <timerwheel.hpp> on the core's target.
	[ -x "$b/consumer_cpp" ] || fail "consumer_cpp not built ($*)"
	"$b/consumer_cpp" || fail "consumer_cpp failed ($*)"
}

if ls "$libdir"/libtimerwheel.so.* >/dev/null 2>&1; then
	build "$tmp/shared"
	needed "$tmp/shared/consumer" | grep -q "^libtimerwheel\.so\.$TW_SOVERSION$" ||
		fail "the default target is not the shared library"
	echo "cmake, shared: OK"
fi
if [ -f "$libdir/libtimerwheel.a" ]; then
	build "$tmp/static" -Dtimerwheel_USE_STATIC_LIBS=ON
	if needed "$tmp/static/consumer" | grep timerwheel; then
		fail "timerwheel_USE_STATIC_LIBS=ON still links a shared timerwheel"
	fi
	echo "cmake, static: OK"
fi

# The version file: which requests does this release meet?
version=$(sed -n 's/^set(PACKAGE_VERSION "\(.*\)")$/\1/p' "$cfg/timerwheelConfigVersion.cmake")
major=${version%%.*}
minor=${version#*.}
minor=${minor%%.*}
ask() {
	cat >"$tmp/ask.cmake" <<EOS
set(PACKAGE_FIND_VERSION "$1")
string(REPLACE "." ";" _v "$1")
list(GET _v 0 PACKAGE_FIND_VERSION_MAJOR)
list(GET _v 1 PACKAGE_FIND_VERSION_MINOR)
set(CMAKE_SIZEOF_VOID_P 8)
include("$cfg/timerwheelConfigVersion.cmake")
message("\${PACKAGE_VERSION_COMPATIBLE}")
EOS
	got=$(cmake -P "$tmp/ask.cmake" 2>&1)
	[ "$got" = "$2" ] || fail "find_package(timerwheel $1) against $version: compatible '$got', expected $2"
}
ask "$version" TRUE
ask "$major.$minor" TRUE
ask "$((major + 1)).0" FALSE
ask "$major.$((minor + 1))" FALSE
if [ "$major" = 0 ] && [ "$minor" -gt 0 ]; then
	ask "0.$((minor - 1))" FALSE
fi
echo "cmake consumer: OK (version $version, components: ${components:-none})"
