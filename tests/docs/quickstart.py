#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Write the first C code block of the README's "Quick start" section to a file.

    quickstart.py README.md OUT.c

The docs suite compiles OUT.c with the project's warnings (as errors) and
runs it: the quick start has to work as printed.
"""
import re
import sys

readme, out = sys.argv[1], sys.argv[2]
text = open(readme, encoding="utf-8").read()
start = re.search(r"^#+ .*Quick start.*$", text, re.M)
if not start:
    sys.exit("quickstart: no section whose heading says Quick start in " + readme)
section = text[start.end():]
nxt = re.search(r"^#{1,%d} " % len(start.group(0).split(" ")[0]), section, re.M)
section = section[: nxt.start()] if nxt else section
block = re.search(r"^```c\n(.*?)^```", section, re.M | re.S)
if not block:
    sys.exit("quickstart: no ```c block in the Quick start section")
with open(out, "w", encoding="utf-8") as f:
    f.write(block.group(1))
