#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The documents say only what is true, and each stands on its own.

    check_docs.py man MANDIR            the generated pages (section 3 and 7)
    check_docs.py text SOURCE_ROOT [BUILD_ROOT]
                                        README, CHANGELOG, examples

man: no page points at text it does not carry (the header's "top", a
quoted section that is not under its NOTES); timerwheel(7)'s SEE ALSO names
every section 3 page; the pages the manual's readers were sent astray from
carry the sections they name.

text: the README stays a manual (at most 450 lines); no hand-written clock
or timeout helper (now_ns, ms_until) in the README or the examples, where
the loop kit serves; no pin of a release tag, since releases are not tagged
(a version in meson.build and CHANGELOG.md, or a commit, is what a user
pins); the uv_timer_t table does not restart an armed timer with tw_add.
Figures: each measured figure (a decimal in ns, us or ms) stands in a
paragraph, list item or table that names a command (`tests/...`,
`build/...` or `build-NAME/...`, `meson test ...`), or right after one; the
README's table of ratios is what bench.csv's medians give, and
tests/bench/README.md's tables of the committed run are what
`tests/bench/mdtable` prints from it. CI: the README names `.ci/run`, and the platform table gives no
run that only `.ci/run` makes (sanitizers, valgrind, a fresh root) to
`tests/run`. With BUILD_ROOT: every `meson test -C build NAME` and
`--suite NAME` the README gives is a test or suite of that build (those of
a backend the build lacks aside).
"""
import csv
import glob
import json
import os
import re
import subprocess
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
        fail("README.md has %d lines; it is a manual, at most 450" % lines)
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


# A measured figure: a decimal with a unit of time.
FIGURE = re.compile(r"\b\d+\.\d+ ?(ns|us|\u00b5s|ms)\b")
COMMAND = re.compile(r"`(tests/[^`]+|build(-[a-z]+)?/[^`]+|meson test[^`]*|\.ci/[^`]+)`")


def blocks(text):
    """The README's paragraphs, list items and tables, outside code fences."""
    out, cur, fence = [], [], False
    for line in text.split("\n"):
        if line.startswith("```"):
            fence = not fence
            if cur:
                out.append("\n".join(cur))
                cur = []
            continue
        if fence:
            continue
        starts_item = line.startswith("- ") or line.startswith("## ") or line.startswith("| ") and cur and not cur[-1].startswith("|")
        if not line.strip() or starts_item:
            if cur:
                out.append("\n".join(cur))
            cur = [line] if line.strip() else []
        else:
            cur.append(line)
    if cur:
        out.append("\n".join(cur))
    return out


def check_figures(readme):
    bs = blocks(readme)
    n = 0
    for i, b in enumerate(bs):
        if not FIGURE.search(b):
            continue
        n += 1
        # A table, or a list item, may take its command from the paragraph
        # that introduces it.
        before = bs[i - 1] if i and (b.startswith("|") or b.startswith("- ")) else ""
        if not COMMAND.search(b) and not COMMAND.search(before):
            fail("README figure without the command that prints it: %s" % b.strip()[:120])
    return n


def check_bench_table(readme, root):
    """The table of ratios: each cell is bench.csv's median for the peer over
    timerwheel's, for the workload and N its row names ("(W4 at 10^6)")."""
    med = {}
    with open(os.path.join(root, "tests", "bench", "results", "bench.csv"), encoding="utf-8") as f:
        for row in csv.DictReader(f):
            med[(row["peer"], row["n"], row["workload"])] = float(row["median"])
    head = re.search(r"^\| cost as a multiple of timerwheel's \|(.*)\|$", readme, re.M)
    if not head:
        fail("README has no table 'cost as a multiple of timerwheel's'")
        return
    names = {"timerwheel": "tw", "libev": "libev", "libuv": "libuv", "libevent": "libevent"}
    peers = []
    for col in [c.strip() for c in head.group(1).split("|")]:
        peers.append(names.get(col, "heap" if col.startswith("binary heap") else col))
    rows = re.findall(r"^\| ([^|]*) \|(.*)\|$", readme[head.end():].split("\n\n")[0], re.M)
    checked = 0
    for label, cells in rows:
        w = re.search(r"\((\w+) at 10\^(\d+)\)", label)
        if not w:
            continue
        work, n = w.group(1), str(10 ** int(w.group(2)))
        cells = [c.strip() for c in cells.split("|")]
        if len(cells) != len(peers):
            fail("README's table of ratios: row %r has %d cells for %d columns" % (label, len(cells), len(peers)))
            continue
        for peer, cell in zip(peers, cells):
            got, base = med.get((peer, n, work)), med.get(("tw", n, work))
            if got is None or not base:
                fail("README's %s at %s for %s is not in bench.csv" % (work, n, peer))
                continue
            want = "%.1fx" % (got / base)
            if cell != want:
                fail("README's %s at %s for %s says %s; bench.csv's medians give %s" % (work, n, peer, cell, want))
            checked += 1
    if not checked:
        fail("README's table of ratios has no row checked against bench.csv")


def check_bench_readme_tables(root):
    """tests/bench/README.md's tables of the committed run are what
    `tests/bench/mdtable tests/bench/results/bench.csv N` prints."""
    text = open(os.path.join(root, "tests", "bench", "README.md"), encoding="utf-8").read()
    tables = re.findall(r"^(\| N = (\d+) \|.*?)\n(?!\|)", text, re.M | re.S)
    if not tables:
        fail("tests/bench/README.md has no table of the committed run")
    for table, n in tables:
        want = subprocess.run(["sh", os.path.join(root, "tests", "bench", "mdtable"),
                               os.path.join(root, "tests", "bench", "results", "bench.csv"), n],
                              capture_output=True, text=True, check=True).stdout.strip()
        if table.strip() != want:
            fail("tests/bench/README.md's table at N = %s is not what mdtable prints for bench.csv" % n)
    print("bench tables: %d checked against mdtable" % len(tables))


def check_ci(readme):
    if "`.ci/run`" not in readme:
        fail("README does not name `.ci/run`, the command CI runs")
    for row in re.findall(r"^\|.*\|$", readme, re.M):
        if "`tests/run`" in row and re.search(r"ASan|TSan|sanitiz|valgrind|fresh", row):
            fail("README's platform table gives tests/run a run only .ci/run makes: " + row)


def check_test_names(readme, build):
    path = os.path.join(build, "meson-info", "intro-tests.json")
    if not os.path.exists(path):  # a subproject's build: meson-info is its parent's
        print("test names: not checked, no %s" % path)
        return
    info = json.load(open(path, encoding="utf-8"))
    names = {t["name"] for t in info}
    suites = {s.split(":")[-1] for t in info for s in t["suite"]}
    for cmd in re.findall(r"meson test -C build ([^`]*)`", readme):
        words = cmd.split()
        for i, word in enumerate(words):
            if word.startswith("-") or i and words[i - 1] in ("--suite", "--setup"):
                continue
            lacking = word.startswith("uv") and "uv" not in suites or word.startswith("uring") and "uring" not in suites
            if word not in names and not lacking:
                fail("README gives `meson test -C build %s`, whose %s is no test of this build" % (cmd, word))
        for i, word in enumerate(words[:-1]):
            if word == "--suite" and words[i + 1] not in suites and words[i + 1] not in ("uv", "uring"):
                fail("README gives `--suite %s`, which is no suite of this build" % words[i + 1])


if __name__ == "__main__":
    if sys.argv[1] == "text":
        check_text(sys.argv[2])
        readme = open(os.path.join(sys.argv[2], "README.md"), encoding="utf-8").read()
        print("figures: %d paragraphs with figures checked for their command" % check_figures(readme))
        check_bench_table(readme, sys.argv[2])
        check_bench_readme_tables(sys.argv[2])
        check_ci(readme)
        if len(sys.argv) > 3:
            check_test_names(readme, sys.argv[3])
    else:
        check_man(sys.argv[2])
    sys.exit(1 if failures else 0)
