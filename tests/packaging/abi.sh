#!/bin/sh
# SPDX-License-Identifier: MIT
# The ABI against the committed baseline of the release (src/abi/*.abi,
# written by src/abi/update): abidiff compares each shared library of the
# build with it. Added functions are fine; a removed or changed function or
# variable, or a changed type that a public function uses, fails the test
# unless the library's soname differs from the baseline's: a release that
# breaks the ABI bumps the soname (meson.build) and then its baseline.
set -u
root=${TW_SOURCE:?}
build=${TW_BUILD:?}
command -v abidiff >/dev/null || { echo "abi: no abidiff (Debian: abigail-tools)"; exit 77; }
[ "${TW_SANITIZE:-none}" = none ] || { echo "abi: sanitized build, skipped"; exit 77; }
status=0
checked=0
for base in "$root"/src/abi/lib*.abi; do
	lib=$(basename "$base" .abi)
	so=$(ls "$build"/src/"$lib".so.*.*.* 2>/dev/null | head -n 1)
	[ -n "$so" ] || continue
	checked=$((checked + 1))
	old=$(sed -n "1s/.*soname='\([^']*\)'.*/\1/p" "$base")
	new=$(readelf -d "$so" | sed -n 's/.*(SONAME).*\[\(.*\)\]/\1/p')
	report=$(abidiff --headers-dir2 "$root/include" --drop-private-types --no-show-locs "$base" "$so")
	rc=$?
	if [ $rc -eq 0 ]; then
		echo "$lib: the ABI of $old, unchanged"
		continue
	fi
	if [ $((rc & 3)) -ne 0 ]; then
		echo "$report"
		echo "FAIL: abidiff could not compare $lib (exit $rc)"
		status=1
		continue
	fi
	if [ "$old" != "$new" ]; then
		echo "$lib: soname $old -> $new, an ABI break declared: run src/abi/update and commit the baseline"
		continue
	fi
	# Only additions, nothing removed or changed: still compatible.
	if [ $((rc & 8)) -eq 0 ] && ! echo "$report" | grep -Eq '(^|[^0-9])[1-9][0-9]* (Removed|Changed)'; then
		echo "$lib: compatible additions to the ABI of $new:"
		echo "$report" | grep -E 'summary|Added' | sed 's/^/  /'
		continue
	fi
	echo "$report"
	echo "FAIL: $lib changes the ABI of $new incompatibly without a soname bump (abidiff exit $rc)"
	status=1
done
[ $checked -gt 0 ] || { echo "abi: no shared library in $build/src"; exit 77; }
[ $status -eq 0 ] && echo "abi: OK ($checked libraries against src/abi)"
exit $status
