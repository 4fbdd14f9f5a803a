#!/bin/sh
# SPDX-License-Identifier: MIT
# order_recheck --checkpoint survives SIGKILL and SIGTERM: 10^4 orders due
# over 6 s on the real clock, four runs of the program over them, then the
# journal (FILE.done) must name every order exactly once, with its amount,
# and no re-check before its deadline.
#
#   run 1  fresh, a checkpoint every 200 ms; SIGKILL after two of them and
#          500 re-checks
#   run 2  restores; checkpoints only at its start; SIGKILL after 300 more
#          re-checks, which its checkpoint still holds as pending
#   run 3  restores and must skip those through the journal; SIGTERM after
#          two checkpoints: exits 0, saved
#   run 4  starts after every deadline has passed: restores every pending
#          order as overdue, re-checks them at once, and ends
#
#   checkpoint.sh ORDER_RECHECK
set -u
bin=${1:?usage: checkpoint.sh ORDER_RECHECK}
n=10000
dir=$(mktemp -d "${TMPDIR:-/tmp}/tw-checkpoint.XXXXXX")
trap 'kill -9 $pid 2>/dev/null; rm -rf "$dir"' EXIT
cp=$dir/orders
pid=

fail() { echo "FAIL: $*"; for f in "$dir"/out*; do echo "--- $f"; cat "$f"; done; exit 1; }
lines() { if [ -f "$1" ]; then wc -l <"$1"; else echo 0; fi; }
checkpoints() { c=$(grep -c '^checkpoint:' "$1" 2>/dev/null); echo "${c:-0}"; }

# wait_for WHAT CONDITION...: up to 60 s, under any load.
wait_for() {
	what=$1
	shift
	i=0
	until "$@"; do
		kill -0 "$pid" 2>/dev/null || fail "the program ended while waiting for $what"
		i=$((i + 1))
		[ $i -le 1200 ] || fail "no $what in 60 s"
		sleep 0.05
	done
}
journal_at_least() { [ "$(lines "$cp.done")" -ge "$1" ]; }
checkpoints_at_least() { [ "$(checkpoints "$1")" -ge "$2" ]; }
# restored FILE FIELD: a figure of the "restored" line (1 armed, 2 overdue, 3 in the journal)
restored() { sed -n 's/^restored \([0-9]*\) orders, \([0-9]*\) overdue.*, \([0-9]*\) already in the journal$/\1 \2 \3/p' "$1" | cut -d' ' -f"$2"; }

# Run 1.
"$bin" --checkpoint "$cp" -n $n --recheck-ms 1000 --burst-ms 6000 --interval-ms 200 >"$dir/out1" 2>&1 &
pid=$!
wait_for "two checkpoints" checkpoints_at_least "$dir/out1" 2
wait_for "500 re-checks" journal_at_least 500
kill -9 $pid
wait $pid 2>/dev/null
[ "$(lines "$cp.done")" -lt $n ] || fail "run 1 re-checked every order before it was killed: nothing to restore"
echo "run 1: killed (SIGKILL) after $(checkpoints "$dir/out1") checkpoints and $(lines "$cp.done") re-checks"

# Run 2.
sleep 0.5
before=$(lines "$cp.done")
"$bin" --checkpoint "$cp" --interval-ms 60000 >"$dir/out2" 2>&1 &
pid=$!
wait_for "300 re-checks" journal_at_least $((before + 300))
kill -9 $pid
wait $pid 2>/dev/null
echo "run 2: $(grep '^restored' "$dir/out2"); killed (SIGKILL) after $(($(lines "$cp.done") - before)) re-checks"

# Run 3.
"$bin" --checkpoint "$cp" --interval-ms 200 >"$dir/out3" 2>&1 &
pid=$!
wait_for "two checkpoints" checkpoints_at_least "$dir/out3" 2
kill -TERM $pid
wait $pid
rc=$?
[ $rc -eq 0 ] || fail "run 3 exited with $rc on SIGTERM"
grep -q '^stopped by a signal' "$dir/out3" || fail "run 3 did not save on SIGTERM"
skipped=$(restored "$dir/out3" 3)
[ "${skipped:-0}" -ge 300 ] || fail "run 3 skipped ${skipped:-?} orders through the journal, run 2 re-checked 300 after its checkpoint"
echo "run 3: $(grep '^restored' "$dir/out3"); $(tail -n 1 "$dir/out3")"

# Run 4, once every deadline of the checkpoint has passed (ns, 19 digits:
# compared as strings).
last=$(tail -n +2 "$cp" | cut -d' ' -f3 | sort | tail -n 1)
pending=$(head -n 1 "$cp" | cut -d' ' -f4)
[ "$pending" -gt 0 ] || fail "run 3 left no order pending: the deadlines passed too fast"
i=0
while [ "$(date +%s%N)" \< "$last" ]; do
	i=$((i + 1))
	[ $i -le 200 ] || fail "the last deadline $last is not past after 10 s"
	sleep 0.05
done
"$bin" --checkpoint "$cp" --interval-ms 200 >"$dir/out4" 2>&1 || fail "run 4 failed"
[ "$(restored "$dir/out4" 1)" = "$pending" ] || fail "run 4 restored $(restored "$dir/out4" 1) orders of $pending"
[ "$(restored "$dir/out4" 2)" = "$pending" ] || fail "run 4 found $(restored "$dir/out4" 2) of $pending overdue"
grep -q '^every order re-checked' "$dir/out4" || fail "run 4 did not finish"
echo "run 4: $(grep '^restored' "$dir/out4")"
grep 'lateness' "$dir/out4"

# The journal: every id once, its amount, none early.
awk -v n=$n '
	{ seen[$1]++; if ($2 != ($1 * 7919) % 100000 + 1) bad++; if ($4 < $3 "") early++ }
	END {
		for (i = 0; i < n; i++) if (seen[i] != 1) { wrong++; if (wrong < 5) print "order " i " re-checked " seen[i] + 0 " times" }
		printf "journal: %d re-checks, %d orders not exactly once, %d early, %d wrong amounts\n", NR, wrong, early, bad
		exit !(NR == n && !wrong && !early && !bad)
	}' "$cp.done" || fail "the journal is wrong"
echo "checkpoint: every order re-checked exactly once, none early"
