#!/usr/bin/env python3
"""Sum meson's test logs of the given build dirs into one closing line."""
import json
import sys

passed = failed = skipped = 0
for d in sys.argv[1:]:
    try:
        lines = open(f"{d}/meson-logs/testlog.json").read().splitlines()
    except OSError:
        print(f"{d}: no test log", file=sys.stderr)
        failed += 1
        continue
    for line in lines:
        result = json.loads(line)["result"]
        if result in ("OK", "EXPECTEDFAIL"):
            passed += 1
        elif result == "SKIP":
            skipped += 1
        else:
            failed += 1
line = f"{passed} passed, {failed} failed"
if skipped:
    line += f", {skipped} skipped"
print(line)
sys.exit(1 if failed or passed == 0 else 0)
