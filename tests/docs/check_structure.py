#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The library's shape, kept: no source file in src/ over 600 lines, no
function over 40 lines, and struct tw_wheel with at most 15 direct members
(its parts, held as members or as bases, and its own fields).

    check_structure.py SRCDIR

A function is a definition whose opening brace stands alone on its line
(the project's style, the kernel's), counted from its signature's last line
to its closing brace at the same indentation. Prints each breach and
exits 1, or a line of what it checked. It first checks itself on sources
made to breach each limit by one, so that a change of the code's shape
that it no longer reads fails here rather than passing unseen."""
import glob
import os
import re
import sys

MAX_FILE = 600
MAX_FUNCTION = 40
MAX_WHEEL_MEMBERS = 15

# The end of a signature's last line, its trailing comment dropped: the
# parameters' `)`, then qualifiers, and a trailing return type.
SIGNATURE_END = re.compile(r"\)\s*(const\s*)?(&&?\s*)?(noexcept(\([^()]*\))?\s*)?((override|final)\s*)*"
                           r"(->\s*[\w:<>,*&\s]+)?$")
NOT_A_SIGNATURE = ("if", "for", "while", "switch", "else", "do", "return", "case")


def functions(lines):
    """(line number, length, signature) of each function definition."""
    i = 1
    while i < len(lines):
        m = re.match(r"^(\t*)\{\s*$", lines[i])
        prev = re.sub(r"//.*|/\*.*?\*/", "", lines[i - 1]).rstrip()
        if m and SIGNATURE_END.search(prev) and not re.match(r"\s*(%s)\b" % "|".join(NOT_A_SIGNATURE), prev):
            close = re.compile("^" + m.group(1) + r"\}")
            j = i + 1
            while j < len(lines) and not close.match(lines[j]):
                j += 1
            yield i, j - i + 2, prev.strip()
            i = j
        i += 1


def top_level(text, stop):
    """Split text at the characters of `stop` that stand outside any
    bracket and outside template arguments. A `<` opens template
    arguments only right after a name (`list<T>`; a comparison is spaced,
    `a < b`), and `->` closes nothing."""
    parts, depth, angle, start = [], 0, 0, 0
    for k, c in enumerate(text):
        before = text[k - 1] if k else ""
        if c in "([{":
            depth += 1
        elif c in ")]}" and depth:
            depth -= 1
        elif c == "<" and (before.isalnum() or before == "_"):
            angle += 1
        elif c == ">" and angle and before != "-":
            angle -= 1
        elif c in stop and not depth and not angle:
            parts.append(text[start:k])
            start = k + 1
    parts.append(text[start:])
    return parts


def declares_function(stmt):
    """Whether a member declaration declares a function, not data: its
    first bracket outside template arguments is a parameter list that
    follows the declared name, not an initialiser, a function pointer's
    `(*name)`, or alignas()/decltype()."""
    stmt = re.sub(r"^template\s*<.*?>\s*", "", stmt.strip(), flags=re.S)
    angle = 0
    for k, c in enumerate(stmt):
        if c == "<":
            angle += 1
        elif c == ">" and angle:
            angle -= 1
        elif angle:
            continue
        elif c in "={[":
            return False
        elif c == "(":
            if re.match(r"\(\s*[*&]", stmt[k:]):
                return False
            words = re.findall(r"~?[A-Za-z_][\w:]*|operator\S+", stmt[:k])
            if not words or words[-1] in ("alignas", "decltype", "__attribute__", "__declspec"):
                return False
            return len(words) > 1 or words[-1].lstrip("~") == "tw_wheel"
    return False


def wheel_members(text):
    """The direct members of struct tw_wheel: its bases and its data fields,
    one per declarator."""
    m = re.search(r"^struct tw_wheel\b([^{;]*)\{(.*?)^\};", text, re.S | re.M)
    if not m:
        return None
    head = m.group(1).strip()
    bases = len(top_level(head[1:], ",")) if head.startswith(":") else 0
    body = re.sub(r"//[^\n]*|/\*.*?\*/", "", m.group(2), flags=re.S)
    body = re.sub(r"\b(public|private|protected)\s*:(?!:)", "", body)
    fields, depth, stmt = 0, 0, ""
    for c in body:
        if depth:
            depth += (c == "{") - (c == "}")
            if not depth and not function_body:
                stmt += "{}"
            continue
        if c == "{":
            # A function's body ends its definition; a braced initialiser
            # or a nested type's body belongs to the declaration.
            function_body = declares_function(stmt)
            depth = 1
            if function_body:
                stmt = ""
            continue
        if c != ";":
            stmt += c
            continue
        code = " ".join(stmt.split())
        stmt = ""
        if not code or re.match(r"(static|using|friend|typedef|enum|static_assert)\b", code):
            continue
        if declares_function(code) or re.fullmatch(r"(struct|class|union)\s+\w+\s*\{\}", code):
            continue
        fields += len(top_level(code, ","))
    return bases + fields


SELF_TEST_WHEEL = """struct tw_wheel%s {
	tw::wheel_clock clock;
	tw_notify_fn notify = nullptr;          // a ( in a comment
	uint64_t (*hook)(tw_wheel *w, int x);  // a function pointer
	unsigned a = unsigned(3), b{4};
	alignas(64) char apart[64];
	std::function<void(int)> f;
	bool below = 1 < 2, above = 2 > 1;
	tw_timer *first = nullptr, **tail = &first;
	std::map<int, int> m;
	pair<sizeof first->expires, 2> x, y;
	struct inner {
		int x;
	};
	int get() const
	{
		return 0;
	}
	auto size() const -> size_t;
	template <bool Ms> unsigned enqueue(tw_timer *t,
					    uint64_t tick);
	static constexpr unsigned n = 8;
	tw_wheel(int x);
private:
	%s
};
"""


def self_test():
    """The checker against sources made to breach its limits by one."""
    base = SELF_TEST_WHEEL % ("", "int c;")
    assert wheel_members(base) == 15, wheel_members(base)
    assert wheel_members(SELF_TEST_WHEEL % (" : tw::lifetime, tw::policy", "int c, d;")) == 18
    body = ["\tx++;"] * (MAX_FUNCTION - 3)
    for sig in ("int f(int x)", "auto f() const -> uint64_t", "void f() // why", "bool f() noexcept(true)"):
        lengths = [n for _, n, _ in functions(["", sig, "{"] + body + ["}"])]
        assert lengths == [MAX_FUNCTION], (sig, lengths)
        lengths = [n for _, n, _ in functions(["", sig, "{"] + body + ["\ty++;", "}"])]
        assert lengths == [MAX_FUNCTION + 1], (sig, lengths)
    assert not list(functions(["\tif (x)", "\t{", "\t}"]))


def main():
    self_test()
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
