#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""check-api-pages.py [--report] HEADER PAGE [HEADER PAGE ...]: each
generated section-3 page (docs/man/gen-api-page.py, roff as scdoc wrote
it) against the header it was made from (read with docs/man/rtl_headers.py):

1. every RTL_API function of the header, and every public inline one, is
   in the page's SYNOPSIS and has its own subsection under FUNCTIONS;
2. the page has NAME, SYNOPSIS, DESCRIPTION and SEE ALSO;
3. the subsection of every function that returns a value has a RETURN
   VALUE: the header's comment says what the call returns (docs/style.md:
   "Each public function's comment gives its behaviour, parameters, return
   codes ..."). A comment that says nothing about it is a failure, listed
   by header and function.

With --report, rule 3 only lists what it finds and does not fail (the
headers' comments are being completed; rules 1 and 2 still fail). Exit 77
(skip) when no page is given: the build found no scdoc, so no page exists.
Whether each page renders without a warning is man-render-PAGE's job
(check-render.py)."""
import argparse
import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "docs", "man"))
import rtl_headers as R  # noqa: E402

REQUIRED = ("NAME", "SYNOPSIS", "DESCRIPTION", "SEE ALSO")


def roff_text(s):
    """The plain text of a roff line: font changes and escapes dropped."""
    s = re.sub(r"\\f[BIRP]", "", s)
    s = s.replace("\\&", "").replace("\\_", "_").replace("\\-", "-").replace("\\\\", "\\")
    return s.strip().strip('"')


def page_sections(path):
    """{section: {subsection or "": [lines]}} of a roff page."""
    secs, sec, sub = {}, None, ""
    with open(path, encoding="utf-8") as f:
        for line in f:
            line = line.rstrip("\n")
            if line.startswith(".SH "):
                sec, sub = roff_text(line[4:]), ""
                secs.setdefault(sec, {"": []})
            elif line.startswith(".SS ") and sec is not None:
                sub = roff_text(line[4:])
                secs[sec].setdefault(sub, [])
            elif sec is not None:
                secs[sec][sub].append(line)
    return secs


def covering_note(hdr, func):
    """A free-standing note above func, under the same divider, about the
    calls below it ("Common to every decoder below: ...", "The codes every
    command below may return"): it may say what func returns, so the report
    names it for whoever completes the comment."""
    note = None
    for item in hdr.items:
        if item is func:
            return note
        if isinstance(item, R.Note):
            text = item.comment.text
            if item.divider:  # a new part of the header; its own text may cover it
                note = item.divider if text.strip() else None
            elif text.startswith("Common to") or re.search(r"\bbelow\b", text.split("\n")[0]):
                note = re.split(r"[:.]", text, 1)[0]
    return None


def check_pair(header, page):
    """(failures, missing returns) of one header and its page."""
    hdr = R.parse(header)
    name = os.path.basename(page)
    secs = page_sections(page)
    fails, no_return = [], []
    for s in REQUIRED:
        if s not in secs:
            fails.append("%s: no %s section" % (name, s))
    synopsis = "\n".join(roff_text(l) for l in secs.get("SYNOPSIS", {}).get("", []))
    funcs = secs.get("FUNCTIONS", {})
    for f in hdr.public_functions:
        if not re.search(r"\b%s\(" % re.escape(f.name), synopsis):
            fails.append("%s: %s: not in SYNOPSIS of %s" % (hdr.name, f.name, name))
        if f.name not in funcs:
            fails.append("%s: %s: no subsection under FUNCTIONS of %s" % (hdr.name, f.name, name))
            continue
        if f.ret == "void":
            continue
        body = "\n".join(funcs[f.name])
        if "RETURN VALUE" not in roff_text(body):
            why = "no comment" if f.comment is None else \
                "its comment says nothing about what it returns"
            note = covering_note(hdr, f)
            extra = "; the note '%s' above may cover it" % note if note else ""
            no_return.append("%s: %s (returns %s%s): %s%s" % (
                hdr.name, f.name, f.ret, ", inline" if f.inline else "", why, extra))
    return fails, no_return, len(hdr.public_functions)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--report", action="store_true",
                    help="list functions without RETURN VALUE, do not fail for them")
    ap.add_argument("pairs", nargs="*", metavar="HEADER PAGE")
    args = ap.parse_args()
    if not args.pairs:
        print("no pages given (the build found no scdoc): skipped")
        return 77
    if len(args.pairs) % 2:
        ap.error("HEADER and PAGE come in pairs")
    fails, no_return, calls = [], [], 0
    for header, page in zip(args.pairs[0::2], args.pairs[1::2]):
        f, n, c = check_pair(header, page)
        fails += f
        no_return += n
        calls += c
    for line in fails:
        print("not ok: " + line)
    for line in no_return:
        print(("report: " if args.report else "not ok: ") + line)
    pages = len(args.pairs) // 2
    print("%d pages, %d calls: %d problems with the pages, %d calls without RETURN VALUE%s" % (
        pages, calls, len(fails), len(no_return), " (report only)" if args.report else ""))
    return 1 if fails or (no_return and not args.report) else 0


if __name__ == "__main__":
    sys.exit(main())
