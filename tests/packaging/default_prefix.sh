#!/bin/sh
# SPDX-License-Identifier: MIT
# The install as a user meets it, with no environment set: when the prefix
# is a system one (/usr/local, /usr), the configured libdir must be where
# pkg-config looks by default (its pc_path) and where the dynamic loader
# looks (/etc/ld.so.conf and its includes, or ldconfig's built-in dirs).
# The other packaging tests stage the install and point PKG_CONFIG_PATH and
# LD_LIBRARY_PATH at it, so they cannot see a libdir nobody searches, such
# as the lib64 Meson picks on Debian without dpkg-dev. (CMake's search is
# checked by cmake.sh: its prefix search looks under the same libdirs.)
# No argument; the environment comes from tests/meson.build.
. "$(dirname "$0")/lib.sh"

case $TW_PREFIX in
/usr | /usr/local) ;;
*) skip "prefix $TW_PREFIX is not a system one: its users point pkg-config and the loader at it" ;;
esac
command -v pkg-config >/dev/null || skip "no pkg-config"
command -v ldconfig >/dev/null || PATH=$PATH:/sbin:/usr/sbin
command -v ldconfig >/dev/null || skip "no ldconfig"

# Paths compared after resolving symlinks (/lib is /usr/lib on Debian 12);
# the libdir need not exist yet.
norm() {
	readlink -m "$1"
}
libdir=$(norm "$TW_LIBDIR")
pcdir=$(norm "$TW_LIBDIR/pkgconfig")

# pkg-config's own default path, not one this test's environment set.
pc_path=$(env -u PKG_CONFIG_PATH -u PKG_CONFIG_LIBDIR -u PKG_CONFIG_SYSROOT_DIR \
	pkg-config --variable pc_path pkg-config)
found=no
for d in $(echo "$pc_path" | tr ':' ' '); do
	[ "$(norm "$d")" = "$pcdir" ] && found=yes
done
bad=""
if [ $found = yes ]; then
	echo "pkg-config looks in $TW_LIBDIR/pkgconfig"
else
	echo "libdir $TW_LIBDIR: pkg-config does not look in $TW_LIBDIR/pkgconfig (its path: $pc_path)" >&2
	bad=yes
fi

# The loader's directories: ld.so.conf with its includes (a directory that
# does not exist yet is still searched once ldconfig runs after the
# install), and those ldconfig reports, its built-in ones among them.
# shellcheck disable=SC2086
conf_dirs() { # file...
	for f in "$@"; do
		[ -f "$f" ] || continue
		sed 's/#.*//' "$f" | while read -r a b; do
			case $a in
			"") ;;
			include) conf_dirs $b ;; # unquoted: include takes a glob
			*) echo "$a" ;;
			esac
		done
	done
}
{
	conf_dirs /etc/ld.so.conf
	ldconfig -vN 2>/dev/null | sed -n 's/^\([^[:space:]][^:]*\):.*/\1/p'
} >"$tmp/ld-dirs"
found=no
while read -r d; do
	[ "$(norm "$d")" = "$libdir" ] && found=yes
done <"$tmp/ld-dirs"
if [ $found = yes ]; then
	echo "the dynamic loader looks in $TW_LIBDIR (after ldconfig)"
else
	echo "libdir $TW_LIBDIR is not in the dynamic loader's search path" \
		"($(sort -u "$tmp/ld-dirs" | tr '\n' ' ')): programs would not find libtimerwheel.so.${TW_SOVERSION:-1}" >&2
	bad=yes
fi
[ -z "$bad" ] || fail "a libdir nobody searches; on Debian, is dpkg-dev installed? (Meson asks" \
	"dpkg-architecture for the multiarch libdir)"
echo "default prefix: OK (libdir $TW_LIBDIR)"
