#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Write the first C code block of the README's "Quick start" section to a file.

    quickstart.py README.md OUT.c
    quickstart.py README.md OUT.cpp "C++" cpp     a section's first ```cpp block

The docs suite compiles OUT.c (and the C++ section's program) with the
project's warnings (as errors) and runs it: they have to work as printed.
"""
import re
import sys

readme, out = sys.argv[1], sys.argv[2]
title = sys.argv[3] if len(sys.argv) > 3 else "Quick start"
lang = sys.argv[4] if len(sys.argv) > 4 else "c"
text = open(readme, encoding="utf-8").read()
start = re.search(r"^#+ .*%s.*$" % re.escape(title), text, re.M)
if not start:
    sys.exit("quickstart: no section whose heading says %s in %s" % (title, readme))
section = text[start.end():]
nxt = re.search(r"^#{1,%d} " % len(start.group(0).split(" ")[0]), section, re.M)
section = section[: nxt.start()] if nxt else section
block = re.search(r"^```%s\n(.*?)^```" % re.escape(lang), section, re.M | re.S)
if not block:
    sys.exit("quickstart: no ```%s block in the %s section" % (lang, title))
with open(out, "w", encoding="utf-8") as f:
    f.write(block.group(1))
