#!/bin/sh
# SPDX-License-Identifier: MIT
# What each shared library of the build needs at run time, as the README
# says: the core only the C library, a backend the core, libuv or liburing,
# and the C library. Nothing of the compiler's (libgcc_s, libstdc++ and
# their Windows DLLs): its helpers are linked in (src/meson.build).
#
#   needed.sh LIBRARY...    the built shared libraries (meson passes them)
#
# It reads the files of the build, not an install, so it runs in a cross
# build too: readelf reads ELF of any architecture, and objdump -p the DLL
# names of a PE file. A sanitized build may need the sanitizer's runtime.
set -eu

fail() {
	echo "FAIL: $*" >&2
	exit 1
}

[ $# -gt 0 ] || { echo "SKIP: no shared library in this build (default_library=static)"; exit 77; }

# The C library: glibc (libpthread and librt before 2.34, the loader),
# musl, and Windows' own DLLs under any name case.
libc='libc\.so\..*|libpthread\.so\..*|librt\.so\..*|libdl\.so\..*|ld-linux.*\.so\..*|libc\.musl-.*\.so\..*'
libc="$libc|kernel32\.dll|msvcrt\.dll|ucrtbase\.dll|api-ms-win-.*\.dll|ws2_32\.dll|advapi32\.dll"
sanitizer='lib(asan|ubsan|tsan|lsan)\.so\..*'

needed() {
	if readelf -h "$1" >/dev/null 2>&1; then
		readelf -d "$1" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p'
	elif command -v objdump >/dev/null && objdump -p "$1" >/dev/null 2>&1; then
		objdump -p "$1" | sed -n 's/^[[:space:]]*DLL Name: \(.*\)/\1/p'
	else
		# stderr: stdout is the list its caller captures.
		echo "SKIP: neither readelf nor objdump reads $1" >&2
		exit 77
	fi
}

command -v readelf >/dev/null || { echo "SKIP: no readelf (binutils)"; exit 77; }
for lib in "$@"; do
	base=$(basename "$lib")
	case $base in
	libtimerwheel-uv*) own='libtimerwheel\.so\..*|libtimerwheel.*\.dll|libuv\.so\..*|libuv.*\.dll' ;;
	libtimerwheel-uring*) own='libtimerwheel\.so\..*|liburing\.so\..*' ;;
	libtimerwheel*) own='' ;;
	*) fail "$base: not a library of timerwheel" ;;
	esac
	allowed="$libc${own:+|$own}"
	[ "${TW_SANITIZE:-none}" = none ] || allowed="$allowed|$sanitizer"
	list=$(needed "$lib")
	[ -n "$list" ] || fail "$base: no NEEDED entries read (not a shared library?)"
	others=$(printf '%s\n' "$list" | grep -Eivx "$allowed" || true)
	[ -z "$others" ] || fail "$base needs $(echo "$others" | tr '\n' ' ')besides the C library and its own dependencies"
	echo "$base needs: $(echo "$list" | tr '\n' ' ')"
done
echo "needed: OK ($# libraries)"
