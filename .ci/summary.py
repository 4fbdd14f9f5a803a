#!/usr/bin/env python3
"""Sum the test logs of the given build dirs into one closing line: meson's
testlog.json, and where they exist the loaded run's testlog-loaded.json,
.ci/reliability's reliability.json, .ci/fresh-root's fresh-root.json,
.ci/debian's debian.json, tests/release/dist-check's dist.json and
tests/cross/run's consumer.json, .ci/probe-test's probes.json, or tests/cross/run's skip.json alone for
a target this host cannot run
(one JSON object a line, each with a "result"). Each failure is named on a
line of its own before the closing line."""
import json
import sys

passed = failed = skipped = 0
failures = []
def read(path):
    try:
        return open(path).read().splitlines()
    except OSError:
        return None

skips = []
for d in sys.argv[1:]:
    lines = read(f"{d}/meson-logs/testlog.json")
    # A stage this host cannot run (tests/cross/run's probe) leaves
    # skip.json, with its reason, instead of a test log.
    skip = read(f"{d}/skip.json")
    if lines is None and skip:
        for line in skip:
            skipped += 1
            skips.append(f"{d}: {json.loads(line).get('reason', '?')}")
        continue
    if lines is None:
        print(f"{d}: no test log", file=sys.stderr)
        failed += 1
        failures.append(f"{d}: no test log")
        continue
    lines = [("testlog.json", line) for line in lines]
    for extra in ("meson-logs/testlog-loaded.json", "reliability.json", "fresh-root.json", "consumer.json",
                  "probes.json", "debian.json", "dist.json"):
        lines += [(extra.split("/")[-1], line) for line in read(f"{d}/{extra}") or []]
    for source, line in lines:
        test = json.loads(line)
        result = test["result"]
        if result in ("OK", "EXPECTEDFAIL"):
            passed += 1
        elif result == "SKIP":
            skipped += 1
        else:
            failed += 1
            failures.append(f"{d}/{source}: {test.get('name', '?')}: {result}")
# The failures by name, just above the closing line: the end of a long log
# is what a reader sees first.
for s in skips:
    print(f"SKIPPED {s}")
for f in failures:
    print(f"FAILED {f}")
line = f"{passed} passed, {failed} failed"
if skipped:
    line += f", {skipped} skipped"
print(line)
# Nothing run at all is a failure; a run whose every stage was skipped,
# each with its reason above, is not.
sys.exit(1 if failed or passed + skipped == 0 else 0)
