#!/bin/sh
# SPDX-License-Identifier: MIT
# An install where no loader looks, used as tests/README.md says: a libuv
# program ported with <timerwheel/uv_port.h>, which calls only the
# uv_timer_t layer, built with `pkg-config --libs timerwheel-uv` and
# -Wl,-rpath,LIBDIR (and --as-needed, which leaves the core out of the
# program), runs with no LD_LIBRARY_PATH. The layer's library must find the
# core beside itself: the program's RUNPATH serves only its own needs.
# Arguments: the modules this build has (timerwheel timerwheel-uv ...).
. "$(dirname "$0")/lib.sh"

case " $* " in
*" timerwheel-uv "*) ;;
*) skip "no libuv backend in this build" ;;
esac
command -v gcc >/dev/null || skip "no gcc"
command -v pkg-config >/dev/null || skip "no pkg-config"
tw_install
tw_pkgconfig

cat >"$tmp/ported.c" <<'PROGRAM'
#include <stdio.h>
#include <uv.h>

static int fired;

static void on_timeout(uv_timer_t *t)
{
	fired++;
	uv_close((uv_handle_t *)t, NULL);
}

int main(void)
{
	uv_timer_t t;

	uv_timer_init(uv_default_loop(), &t);
	uv_timer_start(&t, on_timeout, 1, 0);
	uv_run(uv_default_loop(), UV_RUN_DEFAULT);
	printf("fired %d\n", fired);
	return fired == 1 ? 0 : 1;
}
PROGRAM
# shellcheck disable=SC2046 # pkg-config's words are meant to split
gcc -include timerwheel/uv_port.h -Wall -Werror -o "$tmp/ported" "$tmp/ported.c" -Wl,--as-needed \
	$(pkg-config --cflags --libs timerwheel-uv) -Wl,-rpath,"$libdir" || fail "building the ported program"
echo "NEEDED of the program: $(needed "$tmp/ported" | tr '\n' ' ')"

# The core must come from this install, not from one the loader knows.
loaded=$(env -u LD_LIBRARY_PATH LD_TRACE_LOADED_OBJECTS=1 "$tmp/ported" | awk '$1 ~ /^libtimerwheel\.so/ { print $3 }')
case $loaded in
/*) ;;
*) fail "the loader does not find libtimerwheel.so for the program (no RUNPATH of \$ORIGIN on libtimerwheel-uv?)" ;;
esac
same_file "$(dirname "$loaded")" "$libdir" || fail "the core loads from $loaded, not from $libdir"
echo "the core loads from $loaded"
out=$(env -u LD_LIBRARY_PATH "$tmp/ported") || fail "the ported program: $out"
[ "$out" = "fired 1" ] || fail "the ported program printed: $out"
echo "custom prefix: OK ($out)"
