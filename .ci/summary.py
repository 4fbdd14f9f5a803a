#!/usr/bin/env python3
"""Sum the test logs of the given build dirs into one closing line: meson's
testlog.json, and where they exist the loaded run's testlog-loaded.json,
.ci/reliability's reliability.json, .ci/fresh-root's fresh-root.json and
tests/cross/run's consumer.json
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

for d in sys.argv[1:]:
    lines = read(f"{d}/meson-logs/testlog.json")
    if lines is None:
        print(f"{d}: no test log", file=sys.stderr)
        failed += 1
        failures.append(f"{d}: no test log")
        continue
    lines = [("testlog.json", line) for line in lines]
    for extra in ("meson-logs/testlog-loaded.json", "reliability.json", "fresh-root.json", "consumer.json"):
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
for f in failures:
    print(f"FAILED {f}")
line = f"{passed} passed, {failed} failed"
if skipped:
    line += f", {skipped} skipped"
print(line)
sys.exit(1 if failed or passed == 0 else 0)
