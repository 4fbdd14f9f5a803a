#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Write the first code block of a README section to a file.

    quickstart.py README.md OUT.c [HEADING [LANG]]

Without HEADING, the first ```c block of the section whose heading says
"Quick start": the docs suite compiles OUT.c with the project's warnings (as
errors) and runs it, so the quick start has to work as printed. With
HEADING, the section whose heading is exactly that ("libuv", "io_uring",
"C++"): the docs suite builds such a fragment inside a harness
(tests/docs/fragments_*.c) that declares what the README says its fragments
use, and runs it; or, with LANG cpp, the C++ section's whole program.
"""
import re
import sys

readme, out = sys.argv[1], sys.argv[2]
heading = sys.argv[3] if len(sys.argv) > 3 else None
lang = sys.argv[4] if len(sys.argv) > 4 else "c"
text = open(readme, encoding="utf-8").read()
if heading:
    start = re.search(r"^#+ %s$" % re.escape(heading), text, re.M)
else:
    start = re.search(r"^#+ .*Quick start.*$", text, re.M)
name = heading or "Quick start"
if not start:
    sys.exit("quickstart: no section whose heading says %s in %s" % (name, readme))
section = text[start.end():]
nxt = re.search(r"^#{1,%d} " % len(start.group(0).split(" ")[0]), section, re.M)
section = section[: nxt.start()] if nxt else section
block = re.search(r"^```%s\n(.*?)^```" % re.escape(lang), section, re.M | re.S)
if not block:
    sys.exit("quickstart: no ```%s block in the %s section" % (lang, name))
with open(out, "w", encoding="utf-8") as f:
    f.write(block.group(1))
