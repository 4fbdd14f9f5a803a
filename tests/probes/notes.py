#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Each library's USDT notes, as readelf -n lists them.

    notes.py READELF LIB=PROBE,PROBE... [LIB=...]

Every named probe must be in LIB's .note.stapsdt under the provider
timerwheel, and LIB must hold no other probe.
"""
import re
import subprocess
import sys


def probes(readelf, lib):
    out = subprocess.run([readelf, "-n", lib], capture_output=True, text=True, check=True).stdout
    return set(re.findall(r"Provider: (\S+)\s+Name: (\S+)", out))


def main():
    readelf, failures = sys.argv[1], 0
    for arg in sys.argv[2:]:
        lib, names = arg.split("=", 1)
        want = {("timerwheel", n) for n in names.split(",")}
        got = probes(readelf, lib)
        for provider, name in sorted(want - got):
            print(f"{lib}: no probe {provider}:{name}")
        for provider, name in sorted(got - want):
            print(f"{lib}: a probe nobody documented: {provider}:{name}")
        failures += len(want ^ got)
        print(f"{lib}: {', '.join(sorted(n for _, n in got))}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
