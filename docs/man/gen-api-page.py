#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""gen-api-page.py [--version V] [--pages LIST] HEADER OUTPUT: write the
scdoc source of the section-3 page of one public header.

The page of <rtloop/loop.h> is rtloop_loop.h(3): the include path with its
slash as an underscore, the scheme of the POSIX header pages
(sys_socket.h(0p)). It cannot be taken for a function's page (there are
no per-function pages, and so no symlinks), nor for a tool's
(rtloop-doctor(1) and rtloop_doctor.h(3) differ by more than the section).

The page is built from the header alone (docs/man/rtl_headers.py reads it):

  NAME         the page and the first sentence of the opening comment
  SYNOPSIS     the #include and every prototype: the RTL_API functions and
               the public inline ones (a name with a double underscore is
               an inline helper: internal, docs/api.md), as a user writes
               them (RTL_API dropped, RTL_INLINE as static inline)
  DESCRIPTION  the opening design comment
  FUNCTIONS    one subsection per call: its prototype, its comment, and
               under RETURN VALUE the comment's sentences about what it
               returns, under ERRORS its list of -E codes ("-EINVAL  text"
               lines); a comment that a group of calls shares is repeated
               in each, a free-standing comment ("Common to every decoder
               below") is a subsection of its own before the calls
  TYPES        structs, unions, enums and typedefs, with the members'
               comments; opaque types with their comment
  MACROS       the #defines (not the include guard, nor helpers that the
               header #undefs or names with a double underscore)
  VARIABLES    RTL_API extern objects
  SEE ALSO     the pages of the headers and tools the header names or
               includes (<rtloop/compiler.h> only when named), rtloop(7)

Comment text keeps its structure: paragraphs are filled, "- " lines are
lists, indented "term  text" tables become term lists, anything else
indented (a diagram, pseudo-code) stays literal; @name is underlined,
rtl_x() bold. Literal lines are kept within 80 columns as the tool pages
are (tests/man/check-render.py): prototypes and members are broken after a
comma.
"""
import argparse
import os
import re
import sys
import textwrap

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import rtl_headers as R  # noqa: E402

# The widest line of a literal block: 80 columns less the 7 of a section's
# text and the 4 of the block's indentation, less one to spare.
LIT = 68
INLINE = re.compile(r"(?P<param>@[A-Za-z_]\w*)|(?P<func>\brtl_\w+?(?:_\*)?\(\))"
                    r"|(?P<inc><rtloop/[\w.]+>)")
ERR_CODE = r"(?:-E[A-Z0-9]+|other\s+-errno|-errno)"
ERR_TERM = re.compile(r"^(?P<term>%s(?:(?:,\s*|\s+or\s+)%s)*|other)"
                      r"(?:[.,;]?\s*$|\s+(?P<desc>\S.*)$)" % (ERR_CODE, ERR_CODE))
RETURN_WORD = re.compile(r"\breturns?\b", re.I)


# ---- inline text ---------------------------------------------------------------------


def esc(s):
    """Text scdoc prints as it is. An underscore inside a word is already
    literal for scdoc (rtl_loop_create); one at a word's edge would start
    or end underlining."""
    s = s.replace("\\", "\\\\").replace("*", "\\*")
    return re.sub(r"(?<![A-Za-z0-9])_|_(?![A-Za-z0-9])", r"\\_", s)


def fmt(s):
    """One paragraph's text with the page's inline formatting."""
    out, pos = [], 0
    for m in INLINE.finditer(s):
        out.append(esc(s[pos:m.start()]))
        if m.group("param"):
            out.append("_" + esc(m.group("param")[1:]) + "_")
        elif m.group("func"):
            out.append("*" + esc(m.group("func")[:-2]) + "*()")
        else:
            out.append("*" + esc(m.group("inc")) + "*")
        pos = m.end()
    out.append(esc(s[pos:]))
    return guard_line("".join(out))


def guard_line(line):
    """A paragraph line must not start what scdoc or roff read as markup."""
    if line.startswith("."):
        return "\\ " + line
    if line[:1] in "[|:#-":
        return "\\" + line
    return line


def plain(s):
    """Text for a term or a title: escaped, @ dropped."""
    return esc(s.replace("@", ""))


# ---- comment text into blocks -----------------------------------------------------------


def indent_of(line):
    return len(line) - len(line.lstrip(" "))


def dedent(lines):
    n = min(indent_of(l) for l in lines if l.strip())
    return [l[n:] for l in lines]


def text_blocks(text):
    """Blocks of a comment: ("heading", title), ("para", text),
    ("bullets", [(text, sublines)]), ("indent", lines)."""
    lines = text.split("\n")
    blocks, i = [], 0
    while i < len(lines):
        line = lines[i]
        if not line.strip():
            i += 1
        elif indent_of(line) == 0 and i + 1 < len(lines) and \
                re.fullmatch(r"[-=]{3,}", lines[i + 1].strip()):
            blocks.append(("heading", line.strip()))
            i += 2
        elif indent_of(line) == 0 and line.startswith("- "):
            i = _bullets(lines, i, blocks)
        elif indent_of(line) == 0:
            para = []
            while i < len(lines) and lines[i].strip() and indent_of(lines[i]) == 0 \
                    and not lines[i].startswith("- ") and not (
                        i + 1 < len(lines) and re.fullmatch(r"[-=]{3,}", lines[i + 1].strip())):
                para.append(lines[i].strip())
                i += 1
            blocks.append(("para", " ".join(para)))
        else:
            block = []
            while i < len(lines) and lines[i].strip() and indent_of(lines[i]) > 0:
                block.append(lines[i])
                i += 1
            block = dedent(block)
            if all(l.startswith("- ") for l in block if indent_of(l) == 0):
                _bullets(block, 0, blocks)
            else:
                blocks.append(("indent", block))
    return blocks


def _bullets(lines, i, blocks):
    """A list of "- " items from lines[i]: an item's text is its line and
    the lines at its text's column; deeper lines are a block under it."""
    items = []
    base = indent_of(lines[i])
    while i < len(lines) and lines[i].strip():
        line = lines[i]
        ind = indent_of(line)
        if ind == base and line.lstrip().startswith("- "):
            items.append([line.strip()[2:].strip(), []])
        elif ind < base + 2 or not items:
            break
        elif ind == base + 2 and not items[-1][1]:
            items[-1][0] += " " + line.strip()
        else:
            items[-1][1].append(line[base + 2:])
        i += 1
    blocks.append(("bullets", [(t, dedent(sub) if sub else []) for t, sub in items]))
    return i


def sentences(para):
    """A paragraph cut into sentences (not inside brackets, not after
    e.g. or i.e.)."""
    out, depth, start = [], 0, 0
    for i, c in enumerate(para):
        if c in "([":
            depth += 1
        elif c in ")]":
            depth = max(0, depth - 1)
        elif c in ".!?" and depth == 0:
            if i + 1 < len(para) and not (para[i + 1] == " " and i + 2 < len(para) and (
                    para[i + 2].isupper() or para[i + 2].isdigit() or para[i + 2] in "@-\"(*")):
                continue
            word = para[start:i].split()[-1:] or [""]
            if word[0].lower() in ("e.g", "i.e", "etc", "cf", "vs"):
                continue
            out.append(para[start:i + 1].strip())
            start = i + 1
    tail = para[start:].strip()
    if tail:
        out.append(tail)
    return out


def return_clause(s):
    """What a sentence says about the call's own return value: the whole
    sentence when it opens with it ("Returns ...", "Same return codes",
    "The decoder returns ..."), the clause from the verb on when an earlier
    clause says what the call does ("...: returns 1 ...", "... and return
    it ..."), or None. A mention inside brackets, or after another call's
    name ("before commit returns"), is not one."""
    if re.match(r"Same return codes\b", s):
        return s, True
    depth = 0
    for i, c in enumerate(s):
        if c in "([":
            depth += 1
        elif c in ")]":
            depth = max(0, depth - 1)
        elif depth == 0 and RETURN_WORD.match(s, i) and (i == 0 or not s[i - 1].isalnum()):
            before = s[:i].split()
            if len(before) <= 2:
                return s, True
            if re.search(r"([:;,]|\b(and|or|then|call|also))\s*$", s[:i]):
                clause = s[i:]
                return "Returns" + clause[len(RETURN_WORD.match(clause).group(0)):], False
    return None


def error_entries(lines):
    """A "-ECODE  text" list (dedented lines) as [(term, text)], or None."""
    entries = []
    for line in lines:
        m = ERR_TERM.match(line) if indent_of(line) == 0 else None
        if m:
            entries.append([" ".join(m.group("term").split()), m.group("desc") or ""])
        elif indent_of(line) > 0 and entries:
            entries[-1][1] += " " + line.strip()
        else:
            return None
    return [(t, d.strip().rstrip(",;").rstrip()) for t, d in entries] or None


def term_entries(lines):
    """A table (dedented lines) as [(term, text)]: a line at the left edge
    is "term  text" (two spaces or more between), or a term alone whose
    text follows on the deeper lines."""
    entries = []
    for k, line in enumerate(lines):
        if indent_of(line) == 0:
            m = re.match(r"(\S.*?\S|\S)\s{2,}(\S.*)$", line)
            if m and len(m.group(1)) <= 40:
                entries.append([m.group(1), m.group(2)])
            elif k + 1 < len(lines) and indent_of(lines[k + 1]) > 0:
                entries.append([line.strip(), ""])
            else:
                return None
        else:
            entries[-1][1] += " " + line.strip()
    return [(t, d.strip()) for t, d in entries] or None


# ---- blocks into scdoc ------------------------------------------------------------------


def literal(lines, out):
    out.append("```")
    for line in lines:
        for piece in wrap_literal(line):
            out.append(piece)
    out.append("```")
    out.append("")


def wrap_literal(line, width=LIT):
    if len(line) <= width:
        return [line]
    ind = " " * (indent_of(line) + 2)
    return textwrap.wrap(line, width, subsequent_indent=ind, break_long_words=True,
                         break_on_hyphens=False)


def term_list(entries, out, tabs=0, fmt_term=plain):
    pre = "\t" * tabs
    for term, text in entries:
        out.append(pre + "*" + fmt_term(term) + "*")
        out.append(pre + "\t" + (fmt(text) if text else "\\-"))
    out.append("")


def render_blocks(blocks, out, tabs=0, heading="bold"):
    pre = "\t" * tabs
    for kind, body in blocks:
        if kind == "heading":
            out.append(("## " + esc(body)) if heading == "ss" else pre + "*" + plain(body) + "*")
            out.append("")
        elif kind == "para":
            out.append(pre + fmt(body))
            out.append("")
        elif kind == "bullets":
            for text, sub in body:
                out.append(pre + "- " + fmt(text))
                if sub:
                    out.append("")
                    _indented(sub, out, tabs + 1, in_list=True)
            out.append("")
        elif kind == "indent":
            _indented(body, out, tabs)


def _indented(lines, out, tabs, in_list=False):
    """An indented block: a list of codes, or a table most of whose lines do
    not fit, becomes a term list; the rest stays literal (a diagram or
    pseudo-code keeps its shape, a line or two too wide wrapped); inside a
    list or a term's text, lines are kept as lines."""
    errors = error_entries(lines)
    wide = sum(1 for l in lines if len(l) > LIT - 8 * tabs)
    fits = wide <= max(1, len(lines) // 5) if len(lines) > 1 else wide == 0
    if errors:
        term_list(errors, out, tabs, fmt_term=esc)
    elif fits and not tabs:
        literal(lines, out)
    elif term_entries(lines):
        term_list(term_entries(lines), out, tabs)
    elif tabs:
        for line in lines:
            out.append("\t" * tabs + fmt(line.strip()) + " ++")
        out.append("")
    else:
        literal(lines, out)


# ---- declarations as literal lines ------------------------------------------------------------


def wrap_decl(text, width=LIT, indent=0, cont=4):
    """A declaration broken so that each line fits width: after the '(' of
    its parameters and after the commas between them; continuation lines
    indented by cont more."""
    first = " " * indent
    if len(first + text) <= width:
        return [first + text]
    pieces, depth, cur, prev = [], 0, "", ""
    for c in text:
        cur += c
        if c == "(":
            depth += 1
            if depth == 1 and (prev.isalnum() or prev in "_)"):
                pieces.append(cur)
                cur = ""
        elif c == ")":
            depth -= 1
        elif c == "," and depth >= 1:
            pieces.append(cur)
            cur = ""
        if not c.isspace():
            prev = c
    pieces.append(cur)
    lines, line = [], first + pieces[0]
    pad = " " * (indent + cont)
    for p in pieces[1:]:
        if len(line + p) <= width or line.endswith("(") and len(line) <= len(pad):
            line += p
        elif line.endswith("(") and len(line + p.lstrip()) <= width:
            line += p.lstrip()
        else:
            lines.append(line.rstrip())
            line = pad + p.lstrip()
    lines.append(line)
    out = []
    for l in lines:
        out += wrap_literal(l, width) if len(l) > width else [l]
    return out


def prototype_lines(f):
    return wrap_decl(f.prototype())


def record_lines(kind, tag, members, indent=0, tail=""):
    pad = " " * indent
    lines = [pad + ("%s %s {" % (kind, tag) if tag else "%s {" % kind)]
    for m in members:
        if m.kind == "record":
            lines += record_lines(m.record_kind, "", m.members, indent + 4,
                                  " " + ", ".join(m.names))
        elif m.kind == "directive":
            lines += wrap_decl(m.text, indent=0)
        elif m.kind == "macro":
            lines += wrap_decl(m.text, indent=indent + 4)
        else:
            lines += wrap_decl(m.text + ";", indent=indent + 4)
    lines.append(pad + "}" + tail + ";")
    return lines


def enum_lines(e):
    lines = ["enum %s{" % (e.tag + " " if e.tag else "")]
    for v in e.values:
        lines += wrap_decl("%s%s," % (v.name, " = " + v.value if v.value else ""), indent=4)
    lines.append("};")
    return lines


# ---- the page's parts --------------------------------------------------------------------


def name_line(hdr, page):
    """NAME: the first sentence of the opening comment, its "rtl_x:" cut."""
    text = hdr.intro.text if hdr.intro else ""
    first = text.split("\n\n")[0]
    first = " ".join(l.strip() for l in first.split("\n") if l.strip())
    first = sentences(first)[0] if first else "rtloop header"
    m = re.match(r"(rtl_\w+(?: \w+)?):\s+", first)
    if m:
        first = first[m.end():]
    first = first.rstrip(".")
    return "%s - %s" % (esc(page), plain(first))


def function_parts(f):
    """(description blocks, return text, [(code, text)]) of a call."""
    if not f.comment:
        return [], "", []
    desc, rets, errs, cont = [], [], [], []
    nonvoid = f.ret != "void"
    after_errors = False
    for kind, body in text_blocks(f.comment.text):
        if kind == "para" and nonvoid and after_errors and body[:1].islower():
            cont.append(body)  # "with @err filled." after the list
        elif kind == "para" and nonvoid:
            keep = []
            for s in sentences(body):
                found = return_clause(s)
                if found:
                    rets.append(found[0])
                if not found or not found[1]:
                    keep.append(s)
            if keep:
                desc.append(("para", " ".join(keep)))
        elif kind == "indent" and error_entries(body):
            errs += error_entries(body)
            after_errors = True
            continue
        else:
            desc.append((kind, body))
        after_errors = False
    return desc, returns_text(rets, errs, cont), errs


def returns_text(rets, errs, cont):
    """The return sentences; one that the list of codes completes ("Returns
    0, or" and the list) says so."""
    text = " ".join(rets)
    tail = " ".join(cont)
    if errs and re.search(r"(,|\bor)\s*$", text):
        text += " one of the ERRORS below" + (", " + tail if tail else ".")
    elif errs and text.endswith(":"):
        text += " see ERRORS below" + (", " + tail if tail else ".")
    elif tail:
        text += " " + tail
    return text.strip()


def render_function(f, out):
    out.append("## " + esc(f.name))
    out.append("")
    literal(prototype_lines(f), out)
    desc, rets, errs = function_parts(f)
    render_blocks(desc, out)
    if rets:
        out.append("*RETURN VALUE*")
        out.append("\t" + fmt(rets))
        out.append("")
    if errs:
        out.append("*ERRORS*")
        term_list(errs, out, tabs=1, fmt_term=esc)


def member_entries(members, prefix=""):
    """[(names, comment)] for the members that have a comment; members that
    share a comment are one entry."""
    entries = []
    for m in members:
        names = [prefix + n for n in m.names]
        if m.comment is not None:
            if m.shared and entries and entries[-1][1] is m.comment:
                entries[-1][0].extend(names)
            else:
                entries.append((names, m.comment))
        if m.kind == "record":
            sub = prefix + (m.names[0] + "." if m.names else "")
            entries += member_entries(m.members, sub)
    return entries


def render_comment_entries(entries, out):
    for names, comment in entries:
        out.append(", ".join("*" + esc(n) + "*" for n in names))
        blocks = text_blocks(comment.text)
        render_blocks(blocks, out, tabs=1)
        if not blocks:
            out.append("")


def render_record(rec, out):
    out.append("## %s %s" % (rec.kind, esc(rec.tag)))
    out.append("")
    if rec.comment:
        render_blocks(text_blocks(rec.comment.text), out)
    if not rec.has_body:
        out.append("An opaque type: the header declares it without its members.")
        out.append("")
        return
    literal(record_lines(rec.kind, rec.tag, rec.members), out)
    render_comment_entries(member_entries(rec.members), out)


def render_enum(e, out):
    out.append("## enum " + (esc(e.tag) or "(constants)"))
    out.append("")
    if e.comment:
        render_blocks(text_blocks(e.comment.text), out)
    literal(enum_lines(e), out)
    entries = []
    for v in e.values:
        if v.comment is None:
            continue
        if v.shared and entries and entries[-1][1] is v.comment:
            entries[-1][0].append(v.name)
        else:
            entries.append(([v.name], v.comment))
    render_comment_entries(entries, out)


def render_declaration(d, out):
    """A typedef or a variable: its name, its declaration, its comment."""
    out.append("## " + esc(d.name))
    out.append("")
    literal(wrap_decl(d.text), out)
    if d.comment:
        render_blocks(text_blocks(d.comment.text), out)


def macro_term(m):
    head = "#define %s%s" % (m.name, m.params or "")
    if m.value and not m.conditional and len(m.value) <= 48:
        head += " " + m.value
    elif m.value:
        head += " ..."
    return "*" + esc(head) + "*"


def render_macros(macros, out):
    groups = []
    for m in macros:
        if m.shared and groups and groups[-1][-1].comment is m.comment:
            groups[-1].append(m)
        else:
            groups.append([m])
    for g in groups:
        terms = [macro_term(m) for m in g]
        for t in terms[:-1]:
            out.append(t + " ++")
        out.append(terms[-1])
        if g[0].comment:
            render_blocks(text_blocks(g[0].comment.text), out, tabs=1)
        else:
            out.append("")


def note_title(note, divider):
    """A note's subsection title: a divider's own title, or the note's
    opening clause when it says what it is about ("Common to every
    decoder below", "The codes every command below may return, besides
    its own"), or the divider above it."""
    if note.divider:
        return note.divider
    m = re.match(r"([^:.\n]{3,60})[:.]", note.comment.text)
    if m and (m.group(1).startswith("Common to") or re.search(r"\bbelow\b", m.group(1))):
        return m.group(1)
    return divider or "Notes"


def public_macro(m):
    return not (m.guard or m.undefined or "__" in m.name)


def sections(hdr):
    """The items of each section, notes placed before the next item they
    precede."""
    sec = {"FUNCTIONS": [], "TYPES": [], "MACROS": [], "VARIABLES": []}
    defined = {r.tag for r in hdr.records if r.has_body}
    pending, divider = [], None
    for item in hdr.items:
        if isinstance(item, R.Note):
            if item.divider:
                divider = item.divider
            if item.comment.text.strip():
                pending.append((item, divider))
            continue
        if isinstance(item, R.Function):
            key = "FUNCTIONS" if item.public and (item.api or item.inline) else None
        elif isinstance(item, (R.Record, R.Enum, R.Typedef)):
            key = "TYPES"
            if isinstance(item, R.Record) and not item.has_body and item.tag in defined:
                key = None
        elif isinstance(item, R.Macro):
            key = "MACROS" if public_macro(item) else None
        elif isinstance(item, R.Variable):
            key = "VARIABLES"
        else:
            key = None
        if key is None:
            continue
        sec[key] += pending
        pending = []
        sec[key].append(item)
    sec["FUNCTIONS"] += pending
    return sec


def see_also(hdr, pages, self_page):
    """The pages the header names (headers, tools) or includes."""
    text = (hdr.intro.text if hdr.intro else "") + "\n" + "\n".join(
        i.comment.text for i in hdr.items if getattr(i, "comment", None))
    refs = set()
    for name, sect in pages:
        if (name, sect) == self_page or name == "rtloop":
            continue
        if sect == "3":
            hname = name[len("rtloop_"):]
            mentioned = re.search(r"(?<![\w/.])(?:rtloop/)?%s\b" % re.escape(hname), text)
            included = "rtloop/" + hname in hdr.includes and hname != "compiler.h"
            if mentioned or included:
                refs.add((name, sect))
        elif re.search(r"(?<![\w-])%s(?![\w-])" % re.escape(name), text):
            refs.add((name, sect))
    order = sorted(refs, key=lambda p: (p[1] != "3", p[0]))
    return order + [("rtloop", "7")]


# ---- the page -------------------------------------------------------------------------------


def page_name(header_name):
    return "rtloop_" + header_name


def render_synopsis(hdr, out):
    out += ["# SYNOPSIS", "", "*#include <rtloop/%s>*" % esc(hdr.name), ""]
    lines = []
    for f in hdr.public_functions:
        lines += prototype_lines(f)
    for v in hdr.of(R.Variable):
        lines += wrap_decl(v.text)
    if lines:
        literal(lines, out)
        out += ["Link with *-lrtloop* (pkg-config: *rtloop*).", ""]


RENDERERS = {R.Function: render_function, R.Record: render_record, R.Enum: render_enum,
             R.Typedef: render_declaration, R.Variable: render_declaration}


def render_section(title, items, out):
    """One of FUNCTIONS, TYPES, MACROS, VARIABLES: its items in header
    order, each note as a subsection before the items it precedes."""
    out += ["# " + title, ""]
    macros = []
    for entry in items:
        if isinstance(entry, R.Macro):
            macros.append(entry)
            continue
        if macros:
            render_macros(macros, out)
            macros = []
        if isinstance(entry, tuple):
            note, divider = entry
            out += ["## " + plain(note_title(note, divider)), ""]
            render_blocks(text_blocks(note.comment.text), out)
        else:
            RENDERERS[type(entry)](entry, out)
    if macros:
        render_macros(macros, out)


def render(hdr, version, pages):
    """The scdoc source of the header's page."""
    page = page_name(hdr.name)
    out = ['%s(3) "rtloop %s"' % (page, version), "", "# NAME", "", name_line(hdr, page), ""]
    render_synopsis(hdr, out)
    out += ["# DESCRIPTION", ""]
    if hdr.intro:
        render_blocks(text_blocks(hdr.intro.text), out, heading="ss")
    sec = sections(hdr)
    for title in ("FUNCTIONS", "TYPES", "MACROS", "VARIABLES"):
        if sec[title]:
            render_section(title, sec[title], out)
    refs = see_also(hdr, pages, (page, "3"))
    out += ["# SEE ALSO", "", ", ".join("*%s*(%s)" % (esc(n), s) for n, s in refs), ""]
    return "\n".join(out)


def parse_pages(text):
    """"rtloop_loop.h.3,rtde-sim.1,rtloop.7" as [(name, section)]."""
    pages = []
    for p in filter(None, (t.strip() for t in text.split(","))):
        name, _, sect = p.rpartition(".")
        pages.append((name, sect))
    return pages


def main():
    ap = argparse.ArgumentParser(description="Write the scdoc source of a header's page.")
    ap.add_argument("--version", default="")
    ap.add_argument("--pages", default="", help="every page of the build: NAME.SECTION,...")
    ap.add_argument("header")
    ap.add_argument("output")
    args = ap.parse_args()
    hdr = R.parse(args.header)
    text = render(hdr, args.version, parse_pages(args.pages))
    with open(args.output, "w", encoding="utf-8") as f:
        f.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
