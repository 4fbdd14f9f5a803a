#!/bin/sh
# SPDX-License-Identifier: MIT
# The manual as installed: every function a shared library exports has a
# section 3 page, the overview timerwheel(7) is there, every page passes
# mandoc's lint without a warning, and man finds and renders them.
. "$(dirname "$0")/lib.sh"

tw_install
mandir=$dest${TW_MANDIR:?}
[ -d "$mandir/man3" ] || fail "no pages installed in $mandir/man3"
[ -f "$mandir/man7/timerwheel.7" ] || fail "timerwheel.7 not installed in $mandir/man7"

missing=0
nfun=0
for so in "$libdir"/libtimerwheel*.so.*.*.*; do
	[ -f "$so" ] || continue
	for f in $(nm -D --defined-only "$so" | awk '$2 == "T" && $3 ~ /^tw_/ { sub(/@.*/, "", $3); print $3 }'); do
		nfun=$((nfun + 1))
		if [ ! -f "$mandir/man3/$f.3" ]; then
			echo "no page for $f ($(basename "$so"))"
			missing=$((missing + 1))
		fi
	done
done
[ $nfun -gt 0 ] || fail "no shared library with tw_ functions in $libdir"
[ $missing -eq 0 ] || fail "$missing exported functions have no manual page"

# Every page names the version it documents, the build's: the overview is
# written by hand, so this is what keeps it from naming an old release.
version_of() { sed -n 's/^\.TH .*"timerwheel \([^"]*\)".*/\1/p' "$1"; }
v3=$(version_of "$mandir/man3/tw_add.3")
v7=$(version_of "$mandir/man7/timerwheel.7")
[ -n "$v3" ] && [ "$v3" = "$v7" ] || fail "timerwheel.7 names version '$v7', tw_add.3 '$v3'"

if command -v mandoc >/dev/null; then
	mandoc -Tlint -W warning "$mandir"/man3/*.3 "$mandir"/man7/*.7 || fail "mandoc -Tlint: the warnings above"
else
	echo "(no mandoc: pages not linted)"
fi
if command -v man >/dev/null; then
	for p in tw_add timerwheel; do
		MANPATH=$mandir man -P cat "$p" 2>/dev/null | grep -q "^NAME" || fail "man $p does not render"
	done
fi
echo "man: OK ($nfun functions, $(ls "$mandir"/man3 | wc -l) pages in man3, timerwheel(7))"
