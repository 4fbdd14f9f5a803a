#!/bin/sh
# SPDX-License-Identifier: MIT
# bpftrace counts the fire probe over 10^4 timers of a running program,
# attached by its pid, and the count must be the program's own.
#
#   bpftrace_fire.sh LIBTIMERWHEEL FIRE_COUNT
#
# Exit 77 (a skip), saying why, where bpftrace cannot attach: not
# installed, not root, no uprobes in the kernel, or BPF refused.
set -eu
lib=$1
prog=$2
skip() {
	echo "SKIP: $*"
	exit 77
}
command -v bpftrace >/dev/null || skip "bpftrace is not installed (Debian package bpftrace)"
[ "$(id -u)" -eq 0 ] || skip "bpftrace needs root to attach uprobes"
[ -e /sys/bus/event_source/devices/uprobe ] || skip "the kernel has no uprobe events"
out=$(timeout 60 bpftrace -e 'BEGIN { printf("ok\n"); exit(); }' 2>&1) || skip "bpftrace cannot load a program here: $out"
tmp=$(mktemp -d)
trap 'kill "$pid" "$bt" 2>/dev/null || true; rm -rf "$tmp"' EXIT
"$prog" "$tmp/go" >"$tmp/prog.out" 2>&1 &
pid=$!
# BEGIN runs once every probe is attached.
bpftrace -p "$pid" -e "
BEGIN { printf(\"attached\\n\"); }
usdt:$lib:timerwheel:fire { @fired = count(); }" >"$tmp/bt.out" 2>"$tmp/bt.err" &
bt=$!
i=0
until grep -q attached "$tmp/bt.out"; do
	i=$((i + 1))
	if [ $i -gt 600 ] || ! kill -0 "$bt" 2>/dev/null; then
		cat "$tmp/bt.err"
		skip "bpftrace did not attach to $lib in pid $pid within 60 s"
	fi
	sleep 0.1
done
touch "$tmp/go"
wait "$pid" || { cat "$tmp/prog.out"; echo "FAIL: fire_count failed"; exit 1; }
kill -INT "$bt"
wait "$bt" || true
cat "$tmp/prog.out"
own=$(sed -n 's/^fire_count: \([0-9]*\) fired$/\1/p' "$tmp/prog.out")
seen=$(sed -n 's/^@fired: \([0-9]*\)$/\1/p' "$tmp/bt.out")
echo "the program fired $own timers; bpftrace counted ${seen:-no} fire probes"
[ -n "$seen" ] && [ "$seen" = "$own" ] && [ "$own" = 10000 ] || {
	cat "$tmp/bt.out" "$tmp/bt.err"
	echo "FAIL: the counts differ"
	exit 1
}
