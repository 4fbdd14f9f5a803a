#!/bin/sh
# SPDX-License-Identifier: MIT
# The README's uninstall: `ninja -C BUILDDIR uninstall` removes every file
# `meson install` wrote from that build directory, as listed in its
# meson-logs/install-log.txt. Installed here to a staging root (nothing
# rebuilt), then uninstalled with that command: no file may be left.
# The log is the build directory's own, which every install rewrites, so
# meson runs this test alone (is_parallel: false in tests/meson.build).
. "$(dirname "$0")/lib.sh"

command -v ninja >/dev/null || skip "no ninja"
tw_install
log=$TW_BUILD/meson-logs/install-log.txt
# The log must name the staging root only: the uninstall deletes what it lists.
if grep -v "^#" "$log" | grep -v -e "^$dest/" -e "^$dest\$" | grep .; then
	fail "$log lists the files above, outside the staging root $dest"
fi
installed=$(find "$dest" ! -type d | wc -l)
[ "$installed" -gt 0 ] || fail "nothing installed in $dest"
ninja -C "$TW_BUILD" uninstall >"$tmp/uninstall.log" 2>&1 || { cat "$tmp/uninstall.log"; fail "ninja uninstall"; }
left=""
# (Meson removes the directories it created too, the root included.)
[ ! -d "$dest" ] || left=$(find "$dest")
if [ -n "$left" ]; then
	echo "$left"
	fail "ninja -C BUILDDIR uninstall left the files and directories above"
fi
echo "uninstall: OK ($installed files installed, all removed by ninja -C BUILDDIR uninstall)"
