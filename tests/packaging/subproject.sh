#!/bin/sh
# SPDX-License-Identifier: MIT
# tests/consumer/meson as a new user's project: this repository under its
# subprojects/ (a symlink), its dependencies forced to the subproject by
# the README's --force-fallback-for=timerwheel (the subproject's name covers
# every dependency that falls back to it), then configure, build and run
# its consumers. Its own build
# directory, with the subproject's defaults: nothing of the main build used.
# Arguments: the modules this build has; their consumers must be built.
. "$(dirname "$0")/lib.sh"

proj=$tmp/project
mkdir -p "$proj/subprojects"
cp "$TW_SOURCE/tests/consumer/meson/meson.build" "$TW_SOURCE/tests/consumer/meson/meson_options.txt" "$proj/"
ln -s "$TW_SOURCE/tests/consumer/c" "$proj/c"
ln -s "$TW_SOURCE/tests/consumer/cpp" "$proj/cpp"
ln -s "$TW_SOURCE" "$proj/subprojects/timerwheel"

opts=""
for m in timerwheel-uv timerwheel-uring; do
	case " $* " in
	*" $m "*) opts="$opts -D${m#timerwheel-}=enabled -Dtimerwheel:${m#timerwheel-}=enabled" ;;
	*) opts="$opts -D${m#timerwheel-}=disabled -Dtimerwheel:${m#timerwheel-}=disabled" ;;
	esac
done
# An installed timerwheel in sight (staged: its pkg-config files), which
# the forced fallback must pass over.
tw_install
export PKG_CONFIG_PATH="$pcdir${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH}"
pkg-config --exists timerwheel || fail "the staged timerwheel.pc is not visible to pkg-config"
# shellcheck disable=SC2086
(cd "$proj" && "$TW_MESON" setup "$tmp/build" \
	--force-fallback-for=timerwheel $opts) >"$tmp/setup.log" 2>&1 ||
	{ cat "$tmp/setup.log"; fail "meson setup of the consumer project"; }
grep -q 'timerwheel *: *YES' "$tmp/setup.log" || { cat "$tmp/setup.log"; fail "subproject not used"; }
for m in "$@"; do
	grep -q "^Dependency $m found: YES .*(overridden)" "$tmp/setup.log" ||
		{ cat "$tmp/setup.log"; fail "$m did not come from the subproject"; }
done
"$TW_MESON" compile -C "$tmp/build" >"$tmp/build.log" 2>&1 || { cat "$tmp/build.log"; fail "build"; }
"$TW_MESON" test -C "$tmp/build" --no-rebuild --print-errorlogs >"$tmp/test.log" 2>&1 ||
	{ cat "$tmp/test.log"; fail "the consumers failed"; }
grep -E '^ *[0-9]+/[0-9]+ ' "$tmp/test.log"

for m in "$@"; do
	c=consumer
	[ "$m" = timerwheel ] || c=consumer_${m#timerwheel-}
	[ -x "$tmp/build/$c" ] || fail "$c not built"
	no_cxx_runtime "$tmp/build/$c"
done
[ -x "$tmp/build/consumer_cpp" ] || fail "consumer_cpp not built"

for so in "$tmp"/build/subprojects/timerwheel/src/libtimerwheel*.so.*.*.*; do
	[ -f "$so" ] && no_cxx_runtime "$so"
done
echo "subproject consumer: OK"
