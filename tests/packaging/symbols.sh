#!/bin/sh
# SPDX-License-Identifier: MIT
# What the installed libraries export and need: each shared library has a
# soname, exports only tw_* symbols, each under the library's version node
# (src/*.map), and does not need libstdc++; no static
# library refers to the C++ runtime, so a C linker alone can link every
# object in it.
. "$(dirname "$0")/lib.sh"

for t in nm readelf gcc; do
	command -v $t >/dev/null || skip "no $t"
done
tw_install
checked=0

for so in "$libdir"/libtimerwheel*.so.*.*.*; do
	[ -f "$so" ] || continue
	base=$(basename "$so")
	soname=$(readelf -d "$so" | sed -n 's/.*(SONAME).*\[\(.*\)\]/\1/p')
	[ "$soname" = "${base%.so.*}.so.$TW_SOVERSION" ] || fail "$base: soname '$soname'"
	[ -L "$libdir/$soname" ] || fail "$base: no $soname link installed"
	[ -L "$libdir/${base%.so.*}.so" ] || fail "$base: no ${base%.so.*}.so link installed"
	node=$(echo "${base%.so.*}" | sed 's/^lib//' | tr 'a-z-' 'A-Z_')_$TW_SOVERSION
	# (The version node itself is an absolute symbol of the library.)
	nm -D --defined-only "$so" | awk '{ print $NF }' | grep -vx "$node" | sort -u >"$tmp/exports"
	if grep -v '^tw_' "$tmp/exports"; then
		fail "$base exports the symbols above, which are not tw_*"
	fi
	objdump -T "$so" | grep -v '\*UND\*' | awk '$NF ~ /^tw_/ && $(NF-1) != "'"$node"'" { print $NF, $(NF-1) }' >"$tmp/unversioned"
	if [ -s "$tmp/unversioned" ]; then
		cat "$tmp/unversioned"
		fail "$base: the symbols above are not under the version node $node"
	fi
	no_cxx_runtime "$so"
	echo "$base: soname $soname, $(wc -l <"$tmp/exports") symbols, all tw_* under $node; needs $(needed "$so" | tr '\n' ' ')"
	checked=$((checked + 1))
done

for a in "$libdir"/libtimerwheel*.a; do
	[ -f "$a" ] || continue
	base=$(basename "$a")
	nm --defined-only "$a" | awk 'NF == 3 { print $3 }' | sort -u >"$tmp/defined"
	nm -u "$a" | awk 'NF == 2 { print $2 }' | sort -u >"$tmp/undefined"
	comm -23 "$tmp/undefined" "$tmp/defined" >"$tmp/external"
	# C++ runtime: mangled names (operator new, std::), __cxa_*, the EH
	# personality and the unwinder.
	if grep -E '^(_Z|__cxa_|__gxx_|_Unwind_|__dynamic_cast)' "$tmp/external"; then
		fail "$base refers to the C++ runtime symbols above"
	fi
	# And the proof: every object of the archive links with gcc, no g++.
	deps=""
	case $base in
	libtimerwheel-uv.a) deps="$libdir/libtimerwheel.a -luv" ;;
	libtimerwheel-uring.a) deps="$libdir/libtimerwheel.a -luring" ;;
	esac
	# (-no-pie: the objects need not be PIC, -Db_staticpic=false.)
	echo 'int main(void) { return 0; }' >"$tmp/main.c"
	# shellcheck disable=SC2086
	gcc -no-pie -o "$tmp/whole" "$tmp/main.c" \
		-Wl,--whole-archive "$a" -Wl,--no-whole-archive $deps ||
		fail "$base does not link whole with gcc alone"
	no_cxx_runtime "$tmp/whole"
	echo "$base: needs from outside only $(grep -v '^tw_' "$tmp/external" | tr '\n' ' ')"
	checked=$((checked + 1))
done
[ $checked -gt 0 ] || fail "no library installed in $libdir"
echo "symbols: OK ($checked libraries)"
