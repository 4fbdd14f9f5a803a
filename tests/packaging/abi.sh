#!/bin/sh
# SPDX-License-Identifier: MIT
# The ABI against the committed baseline of the release (src/abi/*.abi,
# written by src/abi/update): abidiff compares each shared library of the
# build with it. Added functions are fine; a removed or changed function or
# variable, or a changed type that a public function uses, fails the test.
# A release that breaks the ABI bumps the soname (meson.build) and writes
# the new baseline in the same commit; a soname that differs from the
# baseline's fails too, so that a bump never leaves the check comparing
# against a generation nobody builds any more.
#
# Then the check checks itself: the core's baseline with struct tw_request
# made 8 bytes smaller (as if this build had grown it) must fail.
#
# abidiff reads the types from DWARF. A build without debug info (a release
# build) would leave it blind, so the check then builds the shared libraries
# again, from the same sources with the same optimization and backends plus
# -g, in a directory of its own, and compares those; it says so. If that
# build fails, the check skips, saying why.
set -u
root=${TW_SOURCE:?}
build=${TW_BUILD:?}
command -v abidiff >/dev/null || { echo "abi: SKIPPED: no abidiff (Debian: abigail-tools)"; exit 77; }
[ "${TW_SANITIZE:-none}" = none ] || { echo "abi: SKIPPED: a sanitized build's libraries need the sanitizer runtime"; exit 77; }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/tw-abi.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

core=$(ls -d "$build"/src/libtimerwheel.so.*.*.* 2>/dev/null | grep -v '\.p$' | head -n 1)
if [ -n "$core" ] && ! readelf -S "$core" | grep -q '\.debug_info'; then
	echo "abi: $(basename "$core") has no debug info (debug=false), so abidiff would see no types;"
	echo "abi: building the shared libraries again with -g (optimization ${TW_OPTIMIZATION:-?}) in $tmp/g"
	if ! "${TW_MESON:-meson}" setup "$tmp/g" "$root" -Ddebug=true -Doptimization="${TW_OPTIMIZATION:-2}" \
			-Ddefault_library=shared -Dtests=false -Dexamples=false -Dbenchmarks=disabled \
			-Duv="${TW_UV:-auto}" -During="${TW_URING:-auto}" >"$tmp/setup.log" 2>&1 ||
		! ninja -C "$tmp/g" >"$tmp/build.log" 2>&1; then
		cat "$tmp/setup.log" "$tmp/build.log" 2>/dev/null | tail -n 20
		echo "abi: SKIPPED: the build has no debug info and a copy with -g did not build (above)"
		exit 77
	fi
	build=$tmp/g
fi

# compare BASELINE LIB SO: 0 if SO keeps BASELINE's ABI (or only adds to
# it), 1 if not; says which.
compare() {
	base=$1 lib=$2 so=$3
	old=$(sed -n "1s/.*soname='\([^']*\)'.*/\1/p" "$base")
	new=$(readelf -d "$so" | sed -n 's/.*(SONAME).*\[\(.*\)\]/\1/p')
	if [ "$old" != "$new" ]; then
		echo "FAIL: $lib is soname $new, its baseline $old: an ABI break declared; run src/abi/update and commit the baseline with the bump"
		return 1
	fi
	# No --headers-dir2: the baseline carries no source locations, so with
	# it abidiff takes every type of the baseline for a private one and
	# filters out their changes, a grown struct tw_request among them. The
	# baseline holds only the public types already (src/abi/update), and an
	# opaque type that the library defines is reported as harmless.
	report=$(abidiff --no-show-locs "$base" "$so")
	rc=$?
	if [ $rc -eq 0 ]; then
		echo "$lib: the ABI of $old, unchanged"
		return 0
	fi
	if [ $((rc & 3)) -ne 0 ]; then
		echo "$report"
		echo "FAIL: abidiff could not compare $lib (exit $rc)"
		return 1
	fi
	# Only additions, nothing removed or changed: still compatible.
	if [ $((rc & 8)) -eq 0 ] && ! echo "$report" | grep -Eq '(^|[^0-9])[1-9][0-9]* (Removed|Changed)'; then
		echo "$lib: compatible additions to the ABI of $new:"
		echo "$report" | grep -E 'summary|Added' | sed 's/^/  /'
		return 0
	fi
	echo "$report"
	echo "FAIL: $lib changes the ABI of $new incompatibly without a soname bump (abidiff exit $rc)"
	return 1
}

status=0
checked=0
for base in "$root"/src/abi/lib*.abi; do
	lib=$(basename "$base" .abi)
	so=$(ls -d "$build"/src/"$lib".so.*.*.* 2>/dev/null | grep -v '\.p$' | head -n 1)
	[ -n "$so" ] || continue
	checked=$((checked + 1))
	compare "$base" "$lib" "$so" || status=1
done
[ $checked -gt 0 ] || { echo "abi: no shared library in $build/src"; exit 77; }

so=$(ls -d "$build"/src/libtimerwheel.so.*.*.* 2>/dev/null | grep -v '\.p$' | head -n 1)
if [ -n "$so" ]; then
	awk -v q="'" '
		index($0, "<class-decl name=" q "tw_request" q " size-in-bits=" q) {
			match($0, /size-in-bits=.[0-9]+/)
			bits = substr($0, RSTART + 14, RLENGTH - 14)
			sub(/size-in-bits=.[0-9]+/, "size-in-bits=" q (bits - 64))
		}
		{ print }' "$root/src/abi/libtimerwheel.abi" \
		>"$tmp/canary.abi"
	if cmp -s "$tmp/canary.abi" "$root/src/abi/libtimerwheel.abi"; then
		echo "FAIL: abi canary: no struct tw_request in the core's baseline to alter"
		status=1
	elif compare "$tmp/canary.abi" libtimerwheel "$so" >"$tmp/canary.txt"; then
		cat "$tmp/canary.txt"
		echo "FAIL: abi canary: a baseline with a smaller struct tw_request passed: the check is blind"
		status=1
	else
		echo "abi canary: a struct tw_request 8 bytes smaller in the baseline is caught"
	fi
fi
[ $status -eq 0 ] && echo "abi: OK ($checked libraries against src/abi)"
exit $status
