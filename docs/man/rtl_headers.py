# SPDX-License-Identifier: MIT
"""rtl_headers: rtloop's public headers read into declarations with their
comments, for the section-3 pages (docs/man/gen-api-page.py), their check
(tests/man/check-api-pages.py) and the call-shape check
(tests/headers/check-call-shape.py). Python 3 standard library only.

It is not a C parser: it reads the subset of C the headers are written in
(docs/style.md), which is small and regular, and reads it without the
preprocessor, so that the macros the headers use (RTL_API, RTL_INLINE,
RTL_ATOMIC(T), RTL_BEGIN_DECLS, RTL_FLEXIBLE_BEGIN, ...) stay as written.

- A scanner cuts the text into events: comments, preprocessor lines (with
  their continuations) and statements (up to a ';' outside brackets, or the
  closing brace of an inline function's body), with line numbers.
- Statements become items: functions (RTL_API prototypes and RTL_INLINE
  definitions), variables (RTL_API extern), structs and unions with their
  members (recursively), enums with their enumerators, typedefs, and macros
  (#define). Prototypes may span lines, carry __attribute__((...)), take
  function pointers, arrays (const double v[RTL_MOTION_AXES]) and macro
  types (RTL_ATOMIC(uint64_t) *c).
- Comments attach as the headers write them: a comment that ends on the
  line before an item (only #if/#include-like lines in between) leads it; a
  comment that starts on an item's last line trails it; an item with no
  comment that follows a commented one without a blank line shares that
  comment (a group: rtl_loop_arm() and rtl_loop_armed()). Any other comment
  is a free-standing note ("Common to every decoder below: ..."), or a
  divider (/* ---- title ---- */). The first comment that is not the SPDX
  line is the header's opening design comment.
"""
import bisect
import os
import re
from dataclasses import dataclass, field
from typing import List, Optional

# Macros that stand alone as a statement (no ';'): skipped.
MARKERS = {"RTL_BEGIN_DECLS", "RTL_END_DECLS", "RTL_FLEXIBLE_BEGIN", "RTL_FLEXIBLE_END"}
# Directives that neither end a group of items nor take a comment.
GLUE_DIRECTIVES = {"if", "ifdef", "ifndef", "elif", "else", "endif", "include", "undef",
                   "pragma", "error", "warning"}
DIVIDER = re.compile(r"^-{2,}\s*(.*?)\s*-*$")
EXTERN_C = re.compile(r'extern\s+"C"\s*\{')
CLANG_FORMAT = re.compile(r"(//|/\*)\s*clang-format\s+(on|off)\b")
IDENT = re.compile(r"[A-Za-z_]\w*")
ATTRIBUTE = re.compile(r"__attribute__\s*\(\(")
C_WORDS = {"const", "volatile", "struct", "union", "enum", "unsigned", "signed", "short",
           "long", "int", "char", "float", "double", "void", "bool", "static", "inline",
           "extern", "restrict"}


# ---- data ------------------------------------------------------------------------


@dataclass
class Comment:
    text: str  # cleaned: no /* */, no leading " * ", relative indentation kept
    first: int  # line numbers, from 1
    last: int
    trailing: bool = False  # starts on the line where a statement ended


@dataclass
class Param:
    text: str  # as written, whitespace collapsed
    name: str = ""
    type: str = ""  # the text without the name
    stars: int = 0  # pointer levels (an array parameter counts one)
    pointee_const: bool = False  # the outermost pointer points to const
    tag_kind: str = ""  # struct, union or enum
    tag: str = ""  # rtl_loop for struct rtl_loop
    typename: str = ""  # the base type otherwise (size_t, FILE, rtl_log_fn)
    array: str = ""  # [RTL_MOTION_AXES]
    funcptr: bool = False
    variadic: bool = False


@dataclass(kw_only=True)
class _Declared:
    """What every top-level item of a header carries: where it stands, and
    its comment (shared: the group's, written above another item)."""

    header: str = ""
    line: int = 0
    comment: Optional[Comment] = None
    shared: bool = False


@dataclass
class Function(_Declared):
    name: str
    ret: str
    params: List[Param]
    inline: bool = False
    api: bool = False
    attrs: List[str] = field(default_factory=list)
    text: str = ""  # the declaration as written, whitespace collapsed

    @property
    def public(self):
        """Not a helper of the inline functions (rtl_ring__slot)."""
        return "__" not in self.name

    @property
    def variadic(self):
        return any(p.variadic for p in self.params)

    def prototype(self):
        """The prototype as a user reads it: without RTL_API, an inline
        function as static inline, attributes after the parameters."""
        params = ", ".join(p.text for p in self.params) or "void"
        ret = self.ret
        head = ("static inline " if self.inline else "") + ret
        sep = "" if ret.endswith("*") else " "
        attrs = "".join(" " + a for a in self.attrs)
        return "%s%s%s(%s)%s;" % (head, sep, self.name, params, attrs)


@dataclass
class Member:
    kind: str  # field, funcptr, record (nested struct/union), macro, directive
    text: str  # the declaration as written
    names: List[str] = field(default_factory=list)
    type: str = ""
    params: List[Param] = field(default_factory=list)  # funcptr members
    members: List["Member"] = field(default_factory=list)  # nested records
    record_kind: str = ""
    comment: Optional[Comment] = None
    shared: bool = False
    line: int = 0


@dataclass
class Record(_Declared):
    kind: str  # struct or union
    tag: str
    has_body: bool
    members: List[Member] = field(default_factory=list)


@dataclass
class Enumerator:
    name: str
    value: str
    comment: Optional[Comment] = None
    shared: bool = False


@dataclass
class Enum(_Declared):
    tag: str
    values: List[Enumerator]


@dataclass
class Typedef(_Declared):
    name: str
    text: str
    funcptr: bool = False
    params: List[Param] = field(default_factory=list)


@dataclass
class Macro(_Declared):
    name: str
    params: Optional[str]  # "(major, minor, patch)" or None
    value: str
    last: int = 0
    guard: bool = False  # the include guard
    conditional: bool = False  # defined under #if (compiler.h's two spellings)
    undefined: bool = False  # #undef later in the header


@dataclass
class Variable(_Declared):
    name: str
    text: str


@dataclass
class Note:
    comment: Comment  # for a divider: the text under its title, maybe ""
    divider: Optional[str] = None  # the title of a /* ---- title ---- */
    line: int = 0


@dataclass
class Header:
    path: str
    name: str  # loop.h
    intro: Optional[Comment] = None
    items: list = field(default_factory=list)  # every item and note, in order
    includes: List[str] = field(default_factory=list)  # rtloop/x.h it includes

    def of(self, cls):
        return [i for i in self.items if isinstance(i, cls)]

    @property
    def functions(self):
        return self.of(Function)

    @property
    def api_functions(self):
        """RTL_API functions: what the library exports."""
        return [f for f in self.functions if f.api]

    @property
    def public_functions(self):
        """RTL_API functions and public inline ones (no double underscore)."""
        return [f for f in self.functions if f.public and (f.api or f.inline)]

    @property
    def records(self):
        return self.of(Record)

    @property
    def enums(self):
        return self.of(Enum)


# ---- scanning ----------------------------------------------------------------------


@dataclass
class _Event:
    kind: str  # comment, directive, statement
    text: str  # comment: raw; directive: joined; statement: code without comments
    first: int
    last: int
    start: int = 0  # offsets into the scanned text
    end: int = 0
    raw: str = ""  # statement: as written, comments included


class _Lines:
    """Offsets to line numbers."""

    def __init__(self, text, first_line=1):
        self.starts = [0] + [m.end() for m in re.finditer(r"\n", text)]
        self.first = first_line
        self.text = text

    def line(self, offset):
        return bisect.bisect_right(self.starts, offset) - 1 + self.first

    def blank(self, line):
        i = line - self.first
        if i < 0 or i >= len(self.starts):
            return True
        end = self.starts[i + 1] if i + 1 < len(self.starts) else len(self.text)
        return self.text[self.starts[i]:end].strip() == ""


def _at_line_start(text, i):
    j = i - 1
    while j >= 0 and text[j] in " \t":
        j -= 1
    return j < 0 or text[j] == "\n"


def _skip_literal(text, i):
    """i at a quote: the offset after the literal."""
    q = text[i]
    i += 1
    while i < len(text) and text[i] != q:
        i += 2 if text[i] == "\\" else 1
    return i + 1


def _read_comment(text, i):
    if text.startswith("//", i):
        j = text.find("\n", i)
        return len(text) if j < 0 else j
    j = text.find("*/", i + 2)
    if j < 0:
        raise ValueError("unterminated comment")
    return j + 2


def _read_directive(text, i):
    """i at '#': the end of the directive (continuations included) and the
    offset of a comment that starts on its last line (or -1)."""
    j = i
    while j < len(text):
        c = text[j]
        if c == "\\" and text.startswith("\n", j + 1):
            j += 2
        elif c == "\n":
            return j, -1
        elif c in "\"'":
            j = _skip_literal(text, j)
        elif text.startswith("/*", j) or text.startswith("//", j):
            return j, j
        else:
            j += 1
    return j, -1


def _read_statement(text, i, terminators):
    """The end of the statement starting at i, its code without comments,
    and whether a terminator ended it."""
    depth = 0
    code = []
    j = i
    body_after_paren = False
    last_code = ""
    while j < len(text):
        c = text[j]
        if text.startswith("/*", j) or text.startswith("//", j):
            j = _read_comment(text, j)
            code.append(" ")
            continue
        if c == "#" and depth == 0 and _at_line_start(text, j) and j > i:
            return j, "".join(code), False
        if c in "\"'":
            k = _skip_literal(text, j)
            code.append(text[j:k])
            j = k
            continue
        if c in "([{":
            if c == "{" and depth == 0:
                body_after_paren = last_code == ")"
            depth += 1
        elif c in ")]}":
            depth -= 1
            if c == "}" and depth == 0 and body_after_paren:
                code.append(c)
                return j + 1, "".join(code), True
        elif depth == 0 and c in terminators:
            code.append(c)
            return j + 1, "".join(code), True
        code.append(c)
        if not c.isspace():
            last_code = c
        j += 1
    return j, "".join(code), False


def _scan(text, first_line=1, terminators=";"):
    """The events of text (a header, or the inside of a body)."""
    lines = _Lines(text, first_line)
    events = []
    i = 0
    n = len(text)
    while i < n:
        c = text[i]
        if c.isspace():
            i += 1
            continue
        if text.startswith("/*", i) or text.startswith("//", i):
            j = _read_comment(text, i)
            if not CLANG_FORMAT.match(text[i:j]):  # a fence for the formatter, not a doc
                events.append(_Event("comment", text[i:j], lines.line(i), lines.line(j - 1),
                                     i, j))
            i = j
            continue
        if c == "#" and _at_line_start(text, i):
            j, _ = _read_directive(text, i)
            joined = re.sub(r"\\\n", " ", text[i:j]).strip()
            events.append(_Event("directive", joined, lines.line(i), lines.line(j), i, j))
            i = j
            continue
        m = IDENT.match(text, i)
        if m and m.group(0) in MARKERS:
            i = m.end()
            continue
        m = EXTERN_C.match(text, i)
        if m:  # extern "C" { ... } spelled out: its braces are not a body
            i = m.end()
            continue
        if c == "}":
            i += 1
            continue
        j, code, _ = _read_statement(text, i, terminators)
        events.append(_Event("statement", " ".join(code.split()), lines.line(i),
                             lines.line(max(i, j - 1)), i, j, text[i:j]))
        i = j
    return events, lines


def clean_comment(raw):
    """The text of a comment: no delimiters, no leading ' * ', the
    indentation of each line relative to the comment's own kept."""
    if raw.startswith("//"):
        return raw[2:].strip()
    body = raw[2:-2]
    out = []
    for k, line in enumerate(body.split("\n")):
        line = line.expandtabs(8)
        if k > 0:
            line = line.lstrip()
            if line.startswith("*"):
                line = line[1:]
        if line.startswith(" "):
            line = line[1:]
        out.append(line.rstrip())
    while out and not out[0].strip():
        out.pop(0)
    while out and not out[-1].strip():
        out.pop()
    return "\n".join(out)


# ---- declarations ------------------------------------------------------------------


def split_top(text, sep=","):
    """Split at sep outside brackets."""
    parts, depth, cur = [], 0, []
    for c in text:
        if c in "([{":
            depth += 1
        elif c in ")]}":
            depth -= 1
        if c == sep and depth == 0:
            parts.append("".join(cur))
            cur = []
        else:
            cur.append(c)
    parts.append("".join(cur))
    return [p.strip() for p in parts]


def _strip_attributes(text):
    """Remove every __attribute__((...)); return (text, attributes)."""
    attrs = []
    while True:
        m = ATTRIBUTE.search(text)
        if not m:
            return " ".join(text.split()), attrs
        depth, j = 0, m.start() + len("__attribute__")
        while j < len(text):
            if text[j] == "(":
                depth += 1
            elif text[j] == ")":
                depth -= 1
                if depth == 0:
                    break
            j += 1
        attrs.append(" ".join(text[m.start():j + 1].split()))
        text = text[:m.start()] + " " + text[j + 1:]


def _matching_open(text, close):
    """The offset of the '(' that the ')' at close closes."""
    depth = 0
    for j in range(close, -1, -1):
        if text[j] == ")":
            depth += 1
        elif text[j] == "(":
            depth -= 1
            if depth == 0:
                return j
    raise ValueError("unbalanced parentheses: " + text)


def _outside_parens(text):
    """text with everything inside parentheses blanked out."""
    out, depth = [], 0
    for c in text:
        if c == "(":
            depth += 1
            out.append(c)
        elif c == ")":
            depth -= 1
            out.append(c)
        else:
            out.append(" " if depth else c)
    return "".join(out)


def parse_param(text):
    """One parameter (or a declarator with its type: a member)."""
    text = " ".join(text.split())
    p = Param(text=text)
    if text == "...":
        p.variadic = True
        return p
    m = re.search(r"\(\s*\*\s*(\w+)\s*\)\s*\(", text)
    if m:
        p.funcptr = True
        p.name = m.group(1)
        p.type = (text[:m.start(1)] + text[m.end(1):]).strip()
        p.stars = 1
        return p
    bits = re.search(r"\s*:\s*\w+$", text)
    if bits and "(" not in text[bits.start():]:
        text = text[:bits.start()]  # a bit-field's width
    m = re.search(r"(\w+)\s*((?:\[[^\]]*\]\s*)+)$", text)
    if m:
        p.name, p.array = m.group(1), "".join(m.group(2).split())
        p.type = text[:m.start()].strip()
    else:
        m = re.search(r"(\w+)\s*$", text)
        words = IDENT.findall(_outside_parens(text))
        if m and len(words) > 1 and m.group(1) not in C_WORDS:
            p.name = m.group(1)
            p.type = text[:m.start()].strip()
        else:
            p.type = text
    _classify_type(p)
    return p


def _classify_type(p):
    bare = _outside_parens(p.type)
    segments = bare.split("*")
    p.stars = len(segments) - 1 + (1 if p.array else 0)
    if p.stars:
        # The qualifier of the outermost pointer's target sits between the
        # last two stars (const char **: none; T *const *: const), or before
        # the base type for one level (and for an array of T).
        target = segments[-2] if len(segments) > 2 else segments[0]
        if p.array and len(segments) > 1:
            target = segments[-1]
        p.pointee_const = bool(re.search(r"\bconst\b", target))
    m = re.search(r"\b(struct|union|enum)\s+(\w+)", p.type)
    if m:
        p.tag_kind, p.tag = m.group(1), m.group(2)
    else:
        words = [w for w in IDENT.findall(bare) if w not in C_WORDS]
        p.typename = words[-1] if words else " ".join(
            w for w in IDENT.findall(bare) if w not in ("const", "volatile"))


def parse_params(inner):
    inner = inner.strip()
    if inner in ("", "void"):
        return []
    return [parse_param(t) for t in split_top(inner)]


def parse_function(code, inline_body):
    """A prototype (or the head of an inline definition) into a Function."""
    text = code
    if inline_body:
        text = text[:text.index("{")]
    text = text.rstrip().rstrip(";")
    text, attrs = _strip_attributes(text)
    api = bool(re.search(r"\bRTL_API\b", text))
    inline = bool(re.search(r"\bRTL_INLINE\b|\binline\b", text))
    text = re.sub(r"\b(RTL_API|RTL_INLINE|static|inline|extern)\b", " ", text)
    text = " ".join(text.split())
    close = text.rstrip().rfind(")")
    if close < 0:
        return None
    open_ = _matching_open(text, close)
    m = re.search(r"(\w+)\s*$", text[:open_])
    if not m:
        return None
    ret = text[:m.start()].strip()
    ret = re.sub(r"\s*\*\s*", " *", ret).replace("* *", "**").strip()
    return Function(name=m.group(1), ret=ret, params=parse_params(text[open_ + 1:close]),
                    inline=inline, api=api, attrs=attrs)


def _parse_typedef(code):
    text = code.rstrip(";").strip()
    text = re.sub(r"^typedef\s+", "", text)
    m = re.search(r"\(\s*\*\s*(\w+)\s*\)\s*\((.*)\)\s*$", text)
    if m:
        return Typedef(name=m.group(1), text=code, funcptr=True,
                       params=parse_params(m.group(2)))
    m = re.search(r"(\w+)\s*$", text)
    return Typedef(name=m.group(1) if m else text, text=code)


def _body_span(raw):
    """The offsets inside the outermost braces of a statement."""
    open_ = raw.index("{")
    depth = 0
    for j in range(open_, len(raw)):
        if raw[j] == "{":
            depth += 1
        elif raw[j] == "}":
            depth -= 1
            if depth == 0:
                return open_ + 1, j
    raise ValueError("unbalanced braces")


def _parse_members(raw, first_line):
    """The members of a struct or union body (raw text between braces)."""
    events, lines = _scan(raw, first_line)
    items = []
    for ev in events:
        if ev.kind == "statement":
            items.append(_member(ev))
        elif ev.kind == "directive":
            items.append(Member(kind="directive", text=ev.text, line=ev.first))
    _attach(items, events, lines, member_mode=True)
    return [i for i in items if isinstance(i, Member)]


def _member(ev):
    code = ev.text.rstrip(";").strip()
    if "{" in code:
        start, end = _body_span(ev.raw)
        head = ev.raw[:start - 1]
        inner_first = ev.first + ev.raw[:start].count("\n")
        kind = "union" if re.match(r"\s*union\b", head) else "struct"
        tail = ev.raw[end + 1:]
        tail = re.sub(r"/\*.*?\*/", " ", tail, flags=re.S).strip().rstrip(";").strip()
        return Member(kind="record", text=code, names=[n.strip() for n in split_top(tail)],
                      record_kind=kind, members=_parse_members(ev.raw[start:end], inner_first),
                      line=ev.first)
    if not ev.text.endswith(";"):
        return Member(kind="macro", text=code, line=ev.first)
    parts = split_top(code)
    first = parse_param(parts[0])
    if first.funcptr:
        return Member(kind="funcptr", text=code, names=[first.name], type=first.type,
                      params=_funcptr_params(parts[0]) if len(parts) == 1 else
                      _funcptr_params(code), line=ev.first)
    names = [first.name] + [re.sub(r"[\s*]|\[.*", "", p) for p in parts[1:]]
    return Member(kind="field", text=code, names=[n for n in names if n], type=first.type,
                  line=ev.first)


def _funcptr_params(text):
    m = re.search(r"\(\s*\*\s*\w+\s*\)\s*\(", text)
    close = text.rstrip().rstrip(";").rstrip().rfind(")")
    return parse_params(text[m.end():close])


def _parse_enum(ev):
    start, end = _body_span(ev.raw)
    inner_first = ev.first + ev.raw[:start].count("\n")
    events, lines = _scan(ev.raw[start:end], inner_first, terminators=",")
    items = []
    for e in events:
        if e.kind == "statement":
            text = e.text.rstrip(",").strip()
            name, _, value = text.partition("=")
            items.append(Enumerator(name=name.strip(), value=" ".join(value.split()))
                         if text else None)
    _attach(items, events, lines, member_mode=True)
    tag = re.match(r"\s*enum\s*(\w*)", ev.text).group(1)
    return Enum(tag=tag, values=[i for i in items if i is not None])


def _classify(ev):
    """A top-level statement as an item, or None (a static assertion, ...)."""
    code = ev.text
    if not code or code.startswith(("RTL_STATIC_ASSERT", "_Static_assert", "static_assert")):
        return None
    if code.startswith("typedef"):
        return _parse_typedef(code)
    if re.search(r"\bRTL_API\b", code) or code.startswith(("RTL_INLINE", "static inline")):
        if re.search(r"\bextern\b", code) or "(" not in _outside_parens(code.split("=")[0]):
            text = " ".join(re.sub(r"\bRTL_API\b", "", code).split())
            m = re.search(r"(\w+)\s*(\[[^\]]*\])?\s*;?\s*$", text.split("=")[0])
            return Variable(name=m.group(1), text=text)
        return parse_function(code, code.endswith("}"))
    m = re.match(r"(struct|union)\s+(\w+)\s*(\{|;)", code)
    if m:
        rec = Record(kind=m.group(1), tag=m.group(2), has_body=m.group(3) == "{")
        if rec.has_body:
            start, end = _body_span(ev.raw)
            rec.members = _parse_members(ev.raw[start:end],
                                         ev.first + ev.raw[:start].count("\n"))
        return rec
    if re.match(r"enum\s*\w*\s*\{", code):
        return _parse_enum(ev)
    return None


def _macro(ev):
    m = re.match(r"#\s*define\s+(\w+)(\([^)]*\))?\s*(.*)$", ev.text, re.S)
    if not m:
        return None
    value = m.group(3)
    value = re.sub(r"/\*.*?\*/", " ", value, flags=re.S)
    return Macro(name=m.group(1), params=m.group(2), value=" ".join(value.split()))


# ---- comments to items -------------------------------------------------------------


def _between_is_glue(events, a, b, lines):
    """No blank line between events a and b, and only glue directives."""
    ea, eb = events[a], events[b]
    for line in range(ea.last + 1, eb.first):
        if lines.blank(line):
            return False
    for k in range(a + 1, b):
        ev = events[k]
        if ev.kind != "directive":
            return False
        word = re.match(r"#\s*(\w+)", ev.text)
        if not word or word.group(1) not in GLUE_DIRECTIVES:
            return False
    return True


def _attach(items, events, lines, member_mode=False, notes=None, skip=()):
    """Give each item its comment. items[k] belongs to the k-th statement or
    define event (in order); notes collects the free-standing comments;
    the comments at the indices in skip are left alone."""
    owners = [k for k, ev in enumerate(events)
              if ev.kind == "statement" or (ev.kind == "directive" and
                                            re.match(r"#\s*define\b", ev.text))
              or (member_mode and ev.kind == "directive")]
    owner_item = {}
    it = iter(items)
    for k in owners:
        item = next(it, None)
        if item is not None:
            owner_item[k] = item
    used = set()
    # Trailing comments: start on the line where an owner ends.
    for k, ev in enumerate(events):
        if ev.kind != "comment" or k in skip:
            continue
        prev = k - 1
        if prev >= 0 and events[prev].kind != "comment" and events[prev].last == ev.first:
            item = owner_item.get(prev)
            if item is not None:
                c = Comment(clean_comment(ev.text), ev.first, ev.last, trailing=True)
                item.comment = _join(item.comment, c)
            used.add(k)
    # Leading comments: end right before an owner (glue in between).
    for k, ev in enumerate(events):
        if ev.kind != "comment" or k in used or k in skip:
            continue
        nxt = k + 1
        while nxt < len(events) and events[nxt].kind == "directive" and \
                not re.match(r"#\s*define\b", events[nxt].text) and not member_mode:
            nxt += 1
        if nxt < len(events) and nxt in owner_item and _between_is_glue(events, k, nxt, lines) \
                and events[nxt].kind != "comment":
            item = owner_item[nxt]
            if item is not None:
                c = Comment(clean_comment(ev.text), ev.first, ev.last)
                item.comment = _join(c, item.comment)
                item._leading = True
            used.add(k)
        elif notes is not None:
            notes.append((k, Comment(clean_comment(ev.text), ev.first, ev.last)))
    # Groups: an uncommented item right after a commented one shares its
    # leading comment.
    prev_k = None
    for k in owners:
        item = owner_item.get(k)
        if item is None:
            continue
        if item.comment is None and prev_k is not None:
            prev = owner_item[prev_k]
            if getattr(prev, "_leading", False) and _between_is_glue(events, prev_k, k, lines):
                item.comment = prev.comment
                item.shared = True
                item._leading = True
        prev_k = k


def _join(a, b):
    if a is None:
        return b
    if b is None:
        return a
    return Comment(a.text + "\n\n" + b.text, a.first, b.last, a.trailing and b.trailing)


# ---- a header ----------------------------------------------------------------------


def parse(path, name=None):
    """Read the header at path into a Header."""
    with open(path, encoding="utf-8") as f:
        text = f.read()
    hdr = Header(path=path, name=name or os.path.basename(path))
    events, lines = _scan(text)
    items = []
    depth = 0
    guard = None
    macros = {}
    for k, ev in enumerate(events):
        if ev.kind == "statement":
            item = _classify(ev)
            items.append(item)
            if item is not None:
                item.line = ev.first
        elif ev.kind == "directive":
            word = re.match(r"#\s*(\w+)\s*(\S*)", ev.text)
            what, arg = (word.group(1), word.group(2)) if word else ("", "")
            if what == "define":
                mac = _macro(ev)
                items.append(mac)
                if mac is None:
                    continue
                mac.line, mac.last = ev.first, ev.last
                mac.guard = mac.name == guard
                mac.conditional = depth > 0
                if mac.name in macros:
                    macros[mac.name].conditional = True
                    items[-1] = None
                else:
                    macros[mac.name] = mac
            elif what == "ifndef" and guard is None and depth == 0:
                guard = arg
            elif what in ("if", "ifdef", "ifndef"):
                depth += 1
            elif what == "endif" and depth > 0:
                depth -= 1
            elif what == "undef" and arg in macros:
                macros[arg].undefined = True
            elif what == "include":
                m = re.match(r"#\s*include\s*<(rtloop/[\w.]+)>", ev.text)
                if m:
                    hdr.includes.append(m.group(1))
    intro = _intro_index(events)
    if intro is not None:
        ev = events[intro]
        hdr.intro = Comment(clean_comment(ev.text), ev.first, ev.last)
    notes = []
    _attach(items, events, lines, notes=notes, skip={intro})
    for k, c in notes:
        if c.text.startswith("SPDX-License-Identifier"):
            continue
        first, _, rest = c.text.partition("\n")
        m = DIVIDER.match(first)
        if m:
            c = Comment(rest.strip("\n"), c.first, c.last)
        note = Note(comment=c, divider=m.group(1).strip() if m else None)
        note.line = c.first
        items.append(note)
    for item in items:
        if item is not None:
            item.header = hdr.name
    hdr.items = sorted((i for i in items if i is not None), key=lambda i: i.line)
    return hdr


def _intro_index(events):
    """The opening design comment: the first comment other than the SPDX
    line, before any declaration."""
    for k, ev in enumerate(events):
        if ev.kind == "statement":
            return None
        if ev.kind == "comment" and "SPDX-License-Identifier" not in ev.text:
            return k
    return None


def parse_all(paths):
    """Parse several headers; a header named twice is read once."""
    seen, out = set(), []
    for p in paths:
        name = os.path.basename(p)
        if name in seen:
            continue
        seen.add(name)
        out.append(parse(p))
    return out


def source_headers(root):
    """The public headers of a source tree: */include/rtloop/*.h and
    */*/include/rtloop/*.h (build directories excluded)."""
    found = []
    for dirpath, dirnames, filenames in os.walk(root):
        rel = os.path.relpath(dirpath, root)
        dirnames[:] = [d for d in dirnames if not d.startswith((".", "build"))]
        if rel.replace(os.sep, "/").endswith("include/rtloop"):
            found += [os.path.join(dirpath, f) for f in filenames if f.endswith(".h")]
    return sorted(found, key=os.path.basename)
