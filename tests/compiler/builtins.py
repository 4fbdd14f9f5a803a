#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""No compiler extension outside src/compiler.hpp.

    builtins.py SOURCE_ROOT

The C and C++ sources under src/ and include/ spell no GNU builtin,
attribute, inline assembly, typeof or __extension__ (MSVC rejects them):
src/compiler.hpp wraps each, with a branch for MSVC. Comments may name
them. ALLOWED lists the few uses that stay where they are, each with its
reason; an entry that no longer matches fails too, so the list stays true.
"""
import os
import re
import sys

FORBIDDEN = re.compile(r"__atomic|__builtin|__sync_|\basm\b|__asm|__attribute__|\b(?:__)?typeof(?:__)?\b"
                       r"|__extension__|__int128")

# (path, the line's text that holds the use): why it stays.
ALLOWED = {
    ("include/timerwheel.h", '#define TW_API __attribute__((visibility("default")))'):
        "the exported-symbol macro of a public header, which cannot include "
        "src/compiler.hpp; under __GNUC__ only, empty for other compilers, "
        "__declspec(dllexport) on Windows",
}

WRAPPER = "src/compiler.hpp"
SUFFIXES = (".c", ".h", ".cpp", ".hpp")


def code_lines(text):
    """The text's lines with comments blanked (string literals kept)."""
    buf, i, n, state = [], 0, len(text), None
    while i < n:
        c = text[i]
        if state is None:
            if text.startswith("//", i):
                j = text.find("\n", i)
                i = n if j < 0 else j
                continue
            if text.startswith("/*", i):
                j = text.find("*/", i + 2)
                j = n if j < 0 else j + 2
                buf.append("".join(ch if ch == "\n" else " " for ch in text[i:j]))
                i = j
                continue
            if c in "\"'":
                state = c
        elif c == "\\":
            buf.append(text[i:i + 2])
            i += 2
            continue
        elif c == state or c == "\n":
            state = None
        buf.append(c)
        i += 1
    return "".join(buf).split("\n")


def main():
    root = sys.argv[1]
    failures, used = [], set()
    for top in ("src", "include"):
        for dirpath, _, files in os.walk(os.path.join(root, top)):
            for name in sorted(files):
                path = os.path.relpath(os.path.join(dirpath, name), root).replace(os.sep, "/")
                if not name.endswith(SUFFIXES) or path == WRAPPER:
                    continue
                with open(os.path.join(root, path), encoding="utf-8") as f:
                    for number, line in enumerate(code_lines(f.read()), 1):
                        if not FORBIDDEN.search(line):
                            continue
                        key = (path, line.strip())
                        if key in ALLOWED:
                            used.add(key)
                        else:
                            failures.append(f"{path}:{number}: {line.strip()}")
    for key in ALLOWED.keys() - used:
        failures.append(f"{key[0]}: allowed, but no longer there: {key[1]}")
    for f in failures:
        print(f)
    if failures:
        print(f"{len(failures)} compiler extension(s) outside {WRAPPER}: put them behind it")
        return 1
    print(f"no compiler extension outside {WRAPPER} but the {len(ALLOWED)} allowed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
