#!/bin/sh
# SPDX-License-Identifier: MIT
# bpftrace on a running program, attached by its pid: its count of the
# fire probe over 10^4 timers must be the program's own, and each script
# of tools/ must attach beside it and report what it saw.
#
#   bpftrace_fire.sh LIBTIMERWHEEL FIRE_COUNT TOOLSDIR
#
# Exit 77 (a skip), saying why, where bpftrace cannot attach: not
# installed, not root, no uprobes in the kernel, or BPF refused.
set -eu
lib=$1
prog=$2
tools=$3
skip() {
	echo "SKIP: $*"
	exit 77
}
command -v bpftrace >/dev/null || skip "bpftrace is not installed (Debian package bpftrace)"
[ "$(id -u)" -eq 0 ] || skip "bpftrace needs root to attach uprobes"
[ -e /sys/bus/event_source/devices/uprobe ] || skip "the kernel has no uprobe events"
out=$(timeout 60 bpftrace -e 'BEGIN { printf("ok\n"); exit(); }' 2>&1) || skip "bpftrace cannot load a program here: $out"
tmp=$(mktemp -d)
pids=""
trap 'kill $pids 2>/dev/null || true; rm -rf "$tmp"' EXIT
"$prog" "$tmp/go" >"$tmp/prog.out" 2>&1 &
pid=$!
pids=$pid
# Each tracer prints a line from BEGIN, which runs once its probes are
# attached; each ends when the program does.
bpftrace -p "$pid" -e "
BEGIN { printf(\"count: attached\\n\"); }
usdt:$lib:timerwheel:fire { @fired = count(); }" >"$tmp/count.out" 2>"$tmp/count.err" &
bts=$!
names="count"
for script in "$tools"/timerwheel-*.bt; do
	name=$(basename "$script" .bt)
	bpftrace -p "$pid" "$script" >"$tmp/$name.out" 2>"$tmp/$name.err" &
	bts="$bts $!"
	names="$names $name"
done
pids="$pid $bts"
for name in $names; do
	i=0
	until grep -q "^$name: " "$tmp/$name.out"; do
		i=$((i + 1))
		if [ $i -gt 600 ]; then
			cat "$tmp/$name.err"
			skip "bpftrace ($name) did not attach to pid $pid within 60 s"
		fi
		sleep 0.1
	done
done
touch "$tmp/go"
wait "$pid" || { cat "$tmp/prog.out"; echo "FAIL: fire_count failed"; exit 1; }
for bt in $bts; do
	wait "$bt" || true
done
cat "$tmp/prog.out"
fail=0
own=$(sed -n 's/^fire_count: \([0-9]*\) fired$/\1/p' "$tmp/prog.out")
seen=$(sed -n 's/^@fired: \([0-9]*\)$/\1/p' "$tmp/count.out")
echo "the program fired $own timers; bpftrace counted ${seen:-no} fire probes"
[ -n "$seen" ] && [ "$seen" = "$own" ] && [ "$own" = 10000 ] || {
	echo "FAIL: the counts differ"
	fail=1
}
# What each script must have printed of that run: a histogram of the
# firings' lateness, the callbacks' count, the cascades by level, the
# timers the budget left due (counted while the semaphore is raised).
check() {
	if grep -q "$2" "$tmp/$1.out"; then
		echo "$1: printed $2"
	else
		cat "$tmp/$1.out" "$tmp/$1.err"
		echo "FAIL: $1 printed no $2"
		fail=1
	fi
}
check timerwheel-lateness '^@late_ns\['
check timerwheel-latest '^@fired\[.*\]: 10000$'
check timerwheel-cascades '^@by_level\[1\]: '
check timerwheel-budget '^@left_per_advance: '
exit $fail
