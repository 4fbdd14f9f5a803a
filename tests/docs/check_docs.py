#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The documents say only what is true, and each stands on its own.

    check_docs.py man MANDIR            the generated pages (section 3 and 7)
    check_docs.py text SOURCE_ROOT      README, CHANGELOG, examples

man: no page points at text it does not carry (the header's "top", a
quoted section that is not under its NOTES); timerwheel(7)'s SEE ALSO names
every section 3 page; the pages the manual's readers were sent astray from
carry the sections they name.

text: the README stays a manual (at most 450 lines); no hand-written clock
or timeout helper (now_ns, ms_until) in the README or the examples, where
the loop kit serves; no pin of a release tag, since releases are not tagged
(a version in meson.build and CHANGELOG.md, or a commit, is what a user
pins); the uv_timer_t table does not restart an armed timer with tw_add.
"""
import glob
import os
import re
import sys

failures = []


def fail(msg):
    failures.append(msg)
    print("FAIL: " + msg)


def check_man(mandir):
    pages = sorted(glob.glob(os.path.join(mandir, "*.3")))
    if not pages:
        fail("no section 3 pages in " + mandir)
        return
    names = {os.path.basename(p)[:-2] for p in pages}
    for p in pages:
        text = open(p, encoding="utf-8").read()
        name = os.path.basename(p)
        for bad in ("top of this header", "this header", "see \""):
            if bad in text:
                fail("%s says '%s': a page must carry what it refers to" % (name, bad))
        notes = set(re.findall(r"^\.SS (.*)$", text, re.M))
        for ref in re.findall(r"\\fI([^\\]+)\\fP in NOTES", text):
            if ref not in notes:
                fail("%s refers to %s in NOTES, which it lacks" % (name, ref))
    # The pages that once pointed at the header's top.
    must = {"tw_add_range": ["Slack"], "tw_config": ["Slack"], "tw_next_expiry": ["Slack"],
            "tw_uring_stats": ["Link chains"],
            "tw_uring_attach": ["Link chains", "Rings created with IORING_SETUP_DEFER_TASKRUN"]}
    for page, sections in must.items():
        path = os.path.join(mandir, page + ".3")
        if not os.path.exists(path):
            continue  # a backend this build lacks
        text = open(path, encoding="utf-8").read()
        for s in sections:
            if ".SS " + s not in text:
                fail("%s.3 does not carry the section %s" % (page, s))
    seven = os.path.join(mandir, "timerwheel.7")
    text = open(seven, encoding="utf-8").read()
    see = text[text.find(".SH SEE ALSO"):]
    listed = set(re.findall(r"^\.BR (\S+) \(3\)", see, re.M))
    for n in sorted(names - listed):
        fail("timerwheel(7)'s SEE ALSO lacks %s(3)" % n)
    for n in sorted(listed - names):
        fail("timerwheel(7)'s SEE ALSO names %s(3), which has no page" % n)
    if "unless a name says" in text:
        fail("timerwheel(7) speaks of names that say otherwise; there are none")
    print("man: %d pages, timerwheel(7) names each" % len(pages))


def check_text(root):
    readme = open(os.path.join(root, "README.md"), encoding="utf-8").read()
    lines = readme.count("\n")
    if lines > 450:
        fail("README.md has %d lines; it is a manual, at most about 400" % lines)
    if not re.search(r"^#+ .*Quick start", readme, re.M):
        fail("README.md has no Quick start section")
    if "tests/run" not in readme:
        fail("README.md does not give the test command, tests/run")
    files = [os.path.join(root, "README.md")] + glob.glob(os.path.join(root, "examples", "*.[ch]"))
    for path in files:
        text = open(path, encoding="utf-8").read()
        for helper in ("now_ns(", "ms_until("):
            if helper in text:
                fail("%s uses a hand-written %s...): the loop kit has it" % (os.path.relpath(path, root), helper))
    for path in [os.path.join(root, "README.md"), os.path.join(root, "CHANGELOG.md")]:
        text = open(path, encoding="utf-8").read()
        for m in re.finditer(r"revision\s*=\s*v[0-9]|\bv[0-9]+\.[0-9]+\.[0-9]+\b", text):
            fail("%s pins or names a tag (%s); the repository tags no release" % (os.path.basename(path), m.group(0)))
    for row in re.findall(r"^\|.*uv_timer_start.*repeat.*\|.*$", readme, re.M):
        if "tw_add(" in row:
            fail("README's uv_timer_t table restarts with tw_add, which returns -EBUSY on an armed timer")
    print("text: README.md %d lines" % lines)


if __name__ == "__main__":
    {"man": check_man, "text": check_text}[sys.argv[1]](sys.argv[2])
    sys.exit(1 if failures else 0)
