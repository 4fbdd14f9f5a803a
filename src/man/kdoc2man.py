#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Section 3 manual pages from the kernel-doc comments of public headers.

    kdoc2man.py --list HEADER...             the pages it would write, one a line
    kdoc2man.py --outdir DIR --version V HEADER...

A page is written for every function declared with TW_API after a /** ...
*/ comment, and for every documented struct, enum, typedef and macro. The comment
is kernel-doc, as the headers write it:

    /**
     * name - one line of summary
     * @param: its description, continued on lines indented further
     *
     * Paragraphs of description; lines starting with "- " make a list.
     *
     * Return: what it returns, one paragraph.
     */

Pages name the header to include, the declaration as written, each
parameter, the description, the return value, and timerwheel(7).

A page stands alone: where a comment refers to a section of its header's
overview comment by name in quotes (see "Slack"), the page carries that
section's text under NOTES, and the reference points there. A section
starts with a paragraph whose first sentence is a short title ("Slack. A
timer may ...") and runs to the next such paragraph.

    kdoc2man.py --see-also HEADER...         timerwheel(7)'s SEE ALSO list
"""
import argparse
import datetime
import os
import re
import sys

DOC = re.compile(r"/\*\*\n(.*?)\*/\s*\n(.*?)(?=\n\s*\n|\Z)", re.S)


def include_of(path):
    parts = os.path.normpath(path).split(os.sep)
    if "include" in parts:
        return "/".join(parts[len(parts) - parts[::-1].index("include"):])
    return os.path.basename(path)


TITLE = re.compile(r"^([A-Za-z_][^.:()\n]{0,50})\.\s+(.*)$", re.S)


def sections(path):
    """The overview comment's sections: {title: [lines]}, in order."""
    text = open(path, encoding="utf-8").read()
    m = re.search(r"^/\*\n(.*?)\*/", text, re.S | re.M)
    if not m:
        return {}
    lines = [re.sub(r"^\s*\* ?", "", l) for l in m.group(1).rstrip().split("\n")]
    paras, cur = [], []
    for line in lines + [""]:
        if line.strip():
            cur.append(line)
        elif cur:
            paras.append(cur)
            cur = []
    out, title = {}, None
    for para in paras:
        head = TITLE.match(para[0])
        if head and not para[0].startswith("- "):
            title = head.group(1).strip()
            rest = [head.group(2)] + para[1:]
            out.setdefault(title, [])
            if out[title]:
                out[title].append("")
            out[title] += rest
        elif title:
            out[title] += [""] + para
    return out


REF = re.compile(r'"([^"\n]+)"')


def references(lines, known):
    """The section titles quoted in lines, then those their sections quote."""
    found = []
    pending = list(lines)
    while pending:
        new = [n for n in REF.findall(" ".join(pending)) if n in known and n not in found]
        new = list(dict.fromkeys(new))
        found += new
        pending = [l for n in new for l in known[n]]
    return found


def parse(path):
    """Yield (kind, name, summary, params, body, ret, declaration) per doc block."""
    text = open(path, encoding="utf-8").read()
    for m in DOC.finditer(text):
        lines = [re.sub(r"^\s*\* ?", "", l) for l in m.group(1).rstrip().split("\n")]
        head = re.match(r"^(?:(struct|enum|typedef)\s+)?(\w+)\s+-\s+(.*)$", lines[0])
        if not head:
            continue
        kind, name, summary = head.group(1) or "function", head.group(2), head.group(3).strip()
        decl = m.group(2).strip()
        if kind == "function":
            if not decl.startswith("TW_API"):
                # A typedef documented without the word (tw_notify_fn), or a macro.
                if decl.startswith("typedef"):
                    kind = "typedef"
                elif decl.startswith("#define"):
                    # The synopsis shows how to call it, not how it is made.
                    kind = "macro"
                    decl = decl.split("\n")[0].rstrip(" \\")
                else:
                    continue
            else:
                decl = decl[: decl.index(";") + 1] if ";" in decl else decl
                decl = re.sub(r"^TW_API\s+", "", decl)
        if kind in ("struct", "enum"):
            end = decl.find("};")
            decl = decl[: end + 2] if end >= 0 else decl
        params, body, ret = [], [], []
        section = "params"
        for line in lines[1:]:
            pm = re.match(r"^@(\w+|\.\.\.):\s*(.*)$", line)
            if section == "params" and pm:
                params.append([pm.group(1), pm.group(2)])
                continue
            if section == "params" and params and line.startswith(" ") and line.strip():
                params[-1][1] += " " + line.strip()
                continue
            if re.match(r"^Returns?:", line):
                section = "return"
                ret.append(re.sub(r"^Returns?:\s*", "", line))
                continue
            if section == "params":
                section = "body"
            (ret if section == "return" else body).append(line)
        yield kind, name, summary, params, body, ret, decl


def esc(s):
    s = s.replace("\\", "\\e")
    return s


def inline(s):
    """Text with the header's conventions turned into roff fonts."""
    s = esc(s)
    s = re.sub(r"@(\w+)", r"\\fI\1\\fP", s)
    s = re.sub(r"\b(tw_\w+|uv_\w+|io_uring_\w+|hrtimer_\w+)\(\)", r"\\fB\1\\fP()", s)
    s = re.sub(r"&(struct\s+)?(tw_\w+)\.(\w+)", r"\\fI\2.\3\\fP", s)
    s = s.replace("`", "")
    return s


def line_out(s):
    # A line may not start with a control character.
    return "\\&" + s if s[:1] in (".", "'") else s


def paragraphs(lines):
    out, para, in_list = [], [], False

    def flush():
        nonlocal para
        if para:
            out.append(line_out(inline(" ".join(para))))
            para = []

    for line in lines:
        if not line.strip():
            flush()
            if out and out[-1] != ".PP":
                out.append(".PP")
            in_list = False
            continue
        if line.startswith("- "):
            flush()
            out.append(".IP \\(bu 2")
            para.append(line[2:].strip())
            in_list = True
            continue
        if in_list and line.startswith("  "):
            para.append(line.strip())
            continue
        para.append(line.strip())
    flush()
    # A list item starts a paragraph of its own.
    out = [l for i, l in enumerate(out) if not (l == ".PP" and i + 1 < len(out) and out[i + 1].startswith(".IP"))]
    while out and out[-1] == ".PP":
        out.pop()
    while out and out[0] == ".PP":
        out.pop(0)
    return out


def page_name(kind, name):
    return name + ".3"


def page_date():
    # The build's date, or SOURCE_DATE_EPOCH's for a reproducible build.
    epoch = os.environ.get("SOURCE_DATE_EPOCH")
    when = datetime.datetime.fromtimestamp(int(epoch), datetime.timezone.utc) if epoch else \
        datetime.datetime.now(datetime.timezone.utc)
    return when.strftime("%Y-%m-%d")


def render(header, kind, name, summary, params, body, ret, decl, version, known):
    title = name.upper()
    out = [
        '.\\" Generated from %s by src/man/kdoc2man.py; edit the header, not this page.' % include_of(header),
        '.TH %s 3 %s "timerwheel %s" "timerwheel manual"' % (title, page_date(), version),
        ".SH NAME",
        "%s \\- %s" % (esc(name), esc(summary.replace("@", ""))),
        ".SH SYNOPSIS",
        ".nf",
        ".B #include <%s>" % include_of(header),
        ".PP",
    ]
    out += [line_out(esc(l)) for l in decl.split("\n")]
    out.append(".fi")
    if params:
        out.append(".SH %s" % ("FIELDS" if kind in ("struct", "enum") else "ARGUMENTS"))
        for p, d in params:
            out += [".TP", "\\fI%s\\fP" % esc(p), line_out(inline(d))]
    text = paragraphs(body)
    if text:
        out.append(".SH DESCRIPTION")
        out += text
    if ret:
        out.append(".SH RETURN VALUE")
        out += paragraphs(ret)
    notes = references([d for _, d in params] + body + ret, known)
    if notes:
        out.append(".SH NOTES")
        for n in notes:
            out += [".SS %s" % esc(n)] + paragraphs(known[n])

    def point(m):
        return "\\fI%s\\fP in NOTES" % m.group(1) if m.group(1) in notes else m.group(0)

    out = [l if l.startswith(".SS") else REF.sub(point, l) for l in out]
    out += [".SH SEE ALSO", ".BR timerwheel (7)"]
    return "\n".join(out) + "\n"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--list", action="store_true")
    ap.add_argument("--see-also", action="store_true")
    ap.add_argument("--outdir")
    ap.add_argument("--version", default="")
    ap.add_argument("headers", nargs="+")
    a = ap.parse_args()
    seen = {}
    every = {}
    for h in a.headers:
        for title, text in sections(h).items():
            every.setdefault(title, text)
    see_also = []
    for h in a.headers:
        # A header's own sections first, then the others' (uv_timer.h
        # refers to timerwheel.h's "Slack").
        known = dict(every)
        known.update(sections(h))
        for kind, name, summary, params, body, ret, decl in parse(h):
            page = page_name(kind, name)
            if page in seen:
                continue
            seen[page] = True
            see_also.append(name)
            if a.list:
                print(page)
            elif not a.see_also:
                with open(os.path.join(a.outdir, page), "w", encoding="utf-8") as f:
                    f.write(render(h, kind, name, summary, params, body, ret, decl, a.version, known))
    if a.see_also:
        print(",\n".join(".BR %s (3)" % esc(n) for n in see_also))
    if not seen:
        sys.exit("kdoc2man: no documented declaration in %s" % " ".join(a.headers))


if __name__ == "__main__":
    main()
