#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The library's shape, kept: no source file in src/ over 600 lines, no
function over 40 lines, and struct tw_wheel with at most 15 direct members
(its parts, held as bases, and its own fields).

    check_structure.py SRCDIR

A function is a definition whose opening brace stands alone on its line
(the project's style, the kernel's), counted from its signature's last line
to its closing brace at the same indentation. Prints each breach and
exits 1, or a line of what it checked."""
import glob
import os
import re
import sys

MAX_FILE = 600
MAX_FUNCTION = 40
MAX_WHEEL_MEMBERS = 15

SIGNATURE_END = re.compile(r"\)\s*(const)?\s*(noexcept)?\s*(override)?\s*$")


def functions(lines):
    """(line number, length, signature) of each function definition."""
    i = 1
    while i < len(lines):
        m = re.match(r"^(\t*)\{\s*$", lines[i])
        if m and SIGNATURE_END.search(lines[i - 1]) and not lines[i - 1].lstrip().startswith(("if", "for", "while", "switch")):
            close = re.compile("^" + m.group(1) + r"\}")
            j = i + 1
            while j < len(lines) and not close.match(lines[j]):
                j += 1
            yield i, j - i + 2, lines[i - 1].strip()
            i = j
        i += 1


def wheel_members(text):
    """The direct members of struct tw_wheel: its bases and its data fields."""
    m = re.search(r"^struct tw_wheel\s*:(.*?)\{(.*?)^\};", text, re.S | re.M)
    if not m:
        return None
    bases = [b for b in m.group(1).split(",") if b.strip()]
    fields = 0
    depth = 0
    for line in m.group(2).split("\n"):
        code = re.sub(r"//.*", "", line).strip()
        if depth == 0 and code.endswith(";") and "(" not in code and not code.startswith(
                ("static", "using", "friend", "typedef", "enum", "}", "return")):
            fields += 1
        depth += code.count("{") - code.count("}")
    return len(bases) + fields


def main():
    src = sys.argv[1]
    bad = []
    files = sorted(glob.glob(os.path.join(src, "*.[ch]")) + glob.glob(os.path.join(src, "*.[ch]pp")))
    nfunc = 0
    for f in files:
        lines = open(f, encoding="utf-8").read().split("\n")
        name = os.path.basename(f)
        if len(lines) - 1 > MAX_FILE:
            bad.append("%s: %d lines, over %d" % (name, len(lines) - 1, MAX_FILE))
        for at, n, sig in functions(lines):
            nfunc += 1
            if n > MAX_FUNCTION:
                bad.append("%s:%d: %s: %d lines, over %d" % (name, at, sig[:60], n, MAX_FUNCTION))
    members = wheel_members(open(os.path.join(src, "wheel.hpp"), encoding="utf-8").read())
    if members is None:
        bad.append("wheel.hpp: no struct tw_wheel found")
    elif members > MAX_WHEEL_MEMBERS:
        bad.append("struct tw_wheel: %d direct members, over %d" % (members, MAX_WHEEL_MEMBERS))
    for b in bad:
        print("FAIL: " + b)
    if bad:
        return 1
    print("structure: %d files, %d functions, struct tw_wheel of %d members: within %d lines a file, "
          "%d a function, %d members" % (len(files), nfunc, members, MAX_FILE, MAX_FUNCTION, MAX_WHEEL_MEMBERS))
    return 0


if __name__ == "__main__":
    sys.exit(main())
