# SPDX-License-Identifier: MIT
# Sourced by the packaging tests. The environment comes from
# tests/meson.build: TW_BUILD, TW_SOURCE, TW_MESON, TW_PREFIX, TW_LIBDIR,
# TW_INCLUDEDIR (absolute, as configured) and TW_SANITIZE.
set -eu

skip() {
	echo "SKIP: $*"
	exit 77
}

fail() {
	echo "FAIL: $*" >&2
	exit 1
}

# A sanitized build's libraries need the sanitizer runtime, so a consumer
# linked the plain way cannot use them: these tests are about the plain build.
[ "${TW_SANITIZE:-none}" = none ] || skip "sanitized build (b_sanitize=$TW_SANITIZE)"

tmp=$(mktemp -d "${TMPDIR:-/tmp}/tw-packaging.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

# tw_install: install the build as it is (no rebuild) into $tmp/dest and
# set dest, libdir, includedir, pcdir to the staged paths.
tw_install() {
	dest=$tmp/dest
	"$TW_MESON" install -C "$TW_BUILD" --destdir "$dest" --no-rebuild --quiet >"$tmp/install.log" 2>&1 ||
		{ cat "$tmp/install.log"; fail "meson install"; }
	libdir=$dest$TW_LIBDIR
	includedir=$dest$TW_INCLUDEDIR
	pcdir=$libdir/pkgconfig
	[ -f "$includedir/timerwheel.h" ] || fail "timerwheel.h not installed in $includedir"
	[ -f "$pcdir/timerwheel.pc" ] || fail "timerwheel.pc not installed in $pcdir"
}

# tw_pkgconfig: make pkg-config see the staged tree first. The .pc files name
# the configured prefix; PKG_CONFIG_SYSROOT_DIR maps it into the stage,
# unless they are relocatable (-Dpkgconfig.relocatable=true).
tw_pkgconfig() {
	export PKG_CONFIG_PATH="$pcdir${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH}"
	grep -q 'pcfiledir' "$pcdir/timerwheel.pc" || export PKG_CONFIG_SYSROOT_DIR="$dest"
	got=$(pkg-config --variable=libdir timerwheel)
	same_file "$got" "$libdir" || fail "pkg-config finds timerwheel in $got, not in the stage $libdir"
}

# same_file <a> <b>: both name the same file (POSIX test has no -ef).
same_file() {
	[ -e "$1" ] && [ "$(readlink -f "$1")" = "$(readlink -f "$2")" ]
}

# needed <elf>: its DT_NEEDED entries, one a line.
needed() {
	readelf -d "$1" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p'
}

# no_cxx_runtime <elf>: fail if it needs libstdc++ (or libc++).
no_cxx_runtime() {
	if needed "$1" | grep -E 'lib(std|sup)?c\+\+'; then
		fail "$1 needs a C++ runtime"
	fi
}
