#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""check-call-shape.py [--include DIR] [--inline] [--list] [--report-only]
[HEADER ...]: the call shape of rtloop's API, checked on every RTL_API
prototype of a set of headers (docs/api.md, "The call shape, checked", has
each rule with its reason):

  1. one lifetime pair per object: an opaque type struct rtl_X (declared
     without a body) has rtl_X_create(struct rtl_X **out, ...) and
     void rtl_X_destroy(struct rtl_X *), and no _open, _close, _connect,
     _new, _free, _init or _fini; LIFETIME_EXCEPTIONS below lists the
     others, each with its reason;
  2. parameter order: the subject (the parameter whose struct, union or
     enum type names the function: struct rtl_loop *loop for rtl_loop_*;
     or int fd, the socket of a call of <rtloop/tcp.h>),
     a part index (i, idx, index, or a field handle) after it, the out-parameters, the
     inputs, the error last; a _create takes its **out first;
  3. struct rtl_error * (or a type of ERROR_TYPES) is the last parameter
     wherever it appears (prototypes, function-pointer members, typedefs),
     unless it is the subject (rtl_error_set()); every _create takes one;
  4. a *_stats function fills a struct through an out-parameter; no
     function is named *_get_stats;
  5. no name is both a type (struct, union or enum tag) and a function;
  6. every config struct (_config, _opts, _attr) and ops table (_ops, _api,
     or members mostly function pointers) has size_t size first.

The headers: those named, or with --include DIR the installed ones
(DIR/rtloop/*.h), or by default the source tree's public headers
(*/include/rtloop/*.h). --inline checks the public RTL_INLINE functions
too (they are API, but not exported symbols). Prints one line per
violation, "HEADER: NAME: rule N: what", and a summary; exits 1 when there
is one, 0 with --report-only. --list prints the API inventory instead,
"HEADER: prototype", one line each. The parser is docs/man/rtl_headers.py,
the one the section-3 pages are made with."""
import argparse
import glob
import os
import re
import signal
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "docs", "man"))
import rtl_headers as R  # noqa: E402

# Types a call reports an error through, besides struct rtl_error: the
# richer error types of docs/api.md, which carry the code and the sentence
# and say more.
ERROR_TYPES = {
    "rtl_error": "the one error type (<rtloop/error.h>)",
    "rtl_rtde_report": "a recipe builder's report: every problem found, the first one's code",
    "rtl_rtde_client_error": "embeds struct rtl_error; says whether it ends the connection",
    "rtl_rtde_framer_last_error": "embeds struct rtl_error; says where in the stream",
}
# Opaque objects whose lifetime pair is not _create/_destroy: the type, the
# call that ends the object, and why. Keep it short: each entry is a call a
# user must learn apart from the rule.
LIFETIME_EXCEPTIONS = {
    "rtl_thread": ("rtl_thread_join",
                   "joining is the destroy, as with pthreads: a running thread cannot be "
                   "freed, and its result comes with the join"),
}
# Lifetime verbs that rule 1 refuses for opaque objects.
OTHER_LIFETIME = ("open", "close", "connect", "new", "free", "init", "fini")
# A void * named so is the caller's own pointer handed back to a callback:
# an input, not an out-parameter.
USER_POINTERS = {"user", "arg"}
# A part index after the subject: its names and types.
INDEX_NAMES = {"i", "idx", "index"}
INDEX_TYPES = {"unsigned", "unsigned int", "size_t", "uint32_t"}
# Handles that select a part of the subject, as an index does:
# rtl_rtde_frame_get(f, h, &out) mirrors rtl_rtde_frame_set(f, h, value);
# a row of the UDP state's layout table selects a field of a state
# (rtl_udp_state_get(s, f, out, max)).
PART_HANDLES = {"rtl_rtde_handle", "rtl_udp_field"}
# The size of a writable buffer, right after it (the pair is one out).
SIZE_NAME = re.compile(r"^(cap|len|max|size|\w+_(?:size|len|cap|max))$")
SIZE_TYPES = {"size_t", "unsigned", "unsigned int", "uint32_t", "int"}
CONFIG_SUFFIXES = ("_config", "_opts", "_attr")
OPS_SUFFIXES = ("_ops", "_api")

RULES = {
    1: "one lifetime pair",
    2: "parameter order",
    3: "error last",
    4: "counters",
    5: "type or function",
    6: "size first",
}


class Api:
    """What the rules need to know about the whole set of headers."""

    def __init__(self, headers, inline):
        self.headers = headers
        self.defined, self.declared, self.tags = set(), {}, set()
        self.funcptr_typedefs = set()
        for h in headers:
            for r in h.records:
                self.tags.add(r.tag)
                if r.has_body:
                    self.defined.add(r.tag)
                else:
                    self.declared.setdefault(r.tag, h.name)
            self.tags.update(e.tag for e in h.enums)
            self.funcptr_typedefs.update(t.name for t in h.of(R.Typedef) if t.funcptr)
        self.opaque = {t: h for t, h in self.declared.items() if t not in self.defined}
        self.checked = []
        for h in headers:
            for f in h.functions:
                if f.api or (inline and f.inline and f.public):
                    self.checked.append(f)
        self.by_name = {f.name: f for f in self.checked}
        self.all_functions = [f for h in headers for f in h.functions if f.api or f.inline]


def named_for(tag, name):
    return bool(tag) and (name == tag or name.startswith(tag + "_"))


def is_error(p):
    return p.tag_kind == "struct" and p.tag in ERROR_TYPES and p.stars == 1


def subject_index(f):
    """0 when the first parameter's type names the function, or is a file
    descriptor (int fd: the socket a call of <rtloop/tcp.h> works on),
    else None."""
    if f.params and named_for(f.params[0].tag, f.name):
        return 0
    if f.params and f.params[0].name == "fd" and f.params[0].typename == "int" \
            and f.params[0].stars == 0:
        return 0
    return None


def param_classes(f, api):
    """One letter per parameter: S subject, X part index, O out, Z the
    size of the out buffer before it, I input, E error."""
    classes = []
    subject = subject_index(f)
    for k, p in enumerate(f.params):
        if p.variadic:
            classes.append("I")
        elif k == subject:
            classes.append("S")
        elif is_error(p):
            classes.append("E")
        elif k == 1 and subject == 0 and (
                (p.stars == 0 and p.name in INDEX_NAMES and p.typename in INDEX_TYPES) or
                (p.tag_kind == "struct" and p.tag in PART_HANDLES and
                 (p.stars == 0 or (p.stars == 1 and p.pointee_const)))):
            classes.append("X")
        elif is_out(p, f, api):
            classes.append("O")
        elif k > 0 and classes[-1] == "O" and p.stars == 0 and SIZE_NAME.match(p.name) \
                and p.typename in SIZE_TYPES and f.params[k - 1].tag_kind in (None, "", "enum"):
            classes.append("Z")  # the buffer's size goes with it (of scalars or enums)
        else:
            classes.append("I")
    return classes


def is_out(p, f, api):
    """A writable pointer that is not a callback, the caller's user pointer
    or a handle of another object (an opaque type)."""
    if p.stars == 0 or p.pointee_const or p.funcptr or p.typename in api.funcptr_typedefs:
        return False
    if p.typename == "void" and p.stars == 1 and p.name in USER_POINTERS:
        return False
    if p.tag in api.opaque and p.stars == 1:
        return False
    return True


# ---- the rules ------------------------------------------------------------------------


def rule1(api):
    """Lifetime pairs of the opaque objects."""
    out = []
    for tag, hname in sorted(api.opaque.items()):
        create = api.by_name.get(tag + "_create")
        exc = LIFETIME_EXCEPTIONS.get(tag)
        destroy_name = exc[0] if exc else tag + "_destroy"
        destroy = api.by_name.get(destroy_name)
        if create is None:
            out.append((hname, tag, "struct %s has no %s_create()" % (tag, tag)))
        elif not (create.params and create.params[0].tag == tag and create.params[0].stars == 2):
            out.append((create.header, create.name,
                        "takes no struct %s **out first" % tag))
        if destroy is None:
            out.append((hname, tag, "struct %s has no %s()" % (tag, destroy_name)))
        elif not exc and not (destroy.ret == "void" and len(destroy.params) == 1 and
                              destroy.params[0].tag == tag and destroy.params[0].stars == 1):
            out.append((destroy.header, destroy.name,
                        "is not void %s(struct %s *)" % (destroy_name, tag)))
        for verb in OTHER_LIFETIME:
            other = api.by_name.get("%s_%s" % (tag, verb))
            if other is not None:
                out.append((other.header, other.name,
                            "a lifetime call of struct %s named _%s (make it _create or "
                            "_destroy)" % (tag, verb)))
    for f in api.checked:
        for p in f.params:
            tag = p.tag
            if tag in api.opaque and p.stars == 2 and f.name != tag + "_create" and \
                    not any(f.name == "%s_%s" % (tag, v) for v in OTHER_LIFETIME):
                out.append((f.header, f.name,
                            "makes a struct %s (@%s) outside %s_create()" % (tag, p.name, tag)))
    return out


def rule2(api):
    out = []
    for f in api.checked:
        classes = param_classes(f, api)
        names = [p.name or p.text for p in f.params]
        if f.name.endswith("_create"):
            tag = f.name[:-len("_create")]
            if not (f.params and f.params[0].tag == tag and f.params[0].stars == 2) \
                    and tag not in api.opaque:
                out.append((f.header, f.name, "a _create takes its struct %s **out first" % tag))
        late = []
        if subject_index(f) is None:
            late = [k for k, p in enumerate(f.params)
                    if k > 0 and named_for(p.tag, f.name) and p.tag != f.name][:1]
            for k in late:
                out.append((f.header, f.name, "the subject @%s (%s %s) is not the first "
                            "parameter" % (names[k], f.params[k].tag_kind, f.params[k].tag)))
        first_input = next((k for k, c in enumerate(classes) if c == "I"), None)
        if first_input is not None:
            late_outs = [k for k in range(first_input + 1, len(classes))
                         if classes[k] == "O" and k not in late]
            if late_outs:
                out.append((f.header, f.name, "out-parameter%s %s after the input @%s" % (
                    "s" if len(late_outs) > 1 else "",
                    ", ".join("@" + names[k] for k in late_outs), names[first_input])))
    return out


def error_not_last(params, subject_first):
    """The names of error parameters that are not last."""
    bad = []
    for k, p in enumerate(params):
        if is_error(p) and k != len(params) - 1 and not (k == 0 and subject_first):
            if k == len(params) - 2 and params[-1].variadic:
                continue
            bad.append(p.name or p.text)
    return bad


def rule3(api):
    out = []
    for f in api.checked:
        bad = error_not_last(f.params, subject_index(f) == 0)
        if bad:
            out.append((f.header, f.name, "the error @%s is not the last parameter" % bad[0]))
        if f.name.endswith("_create") and not any(is_error(p) for p in f.params):
            out.append((f.header, f.name, "a _create takes no struct rtl_error *err"))
    for h in api.headers:
        for rec in h.records:
            for m in _funcptr_members(rec.members):
                bad = error_not_last(m.params, False)
                if bad:
                    out.append((h.name, "struct %s.%s" % (rec.tag, m.names[0]),
                                "the error @%s is not the last parameter" % bad[0]))
        for t in h.of(R.Typedef):
            if t.funcptr and error_not_last(t.params, False):
                out.append((h.name, t.name, "the error is not the last parameter"))
    return out


def _funcptr_members(members):
    for m in members:
        if m.kind == "funcptr":
            yield m
        elif m.kind == "record":
            yield from _funcptr_members(m.members)


def rule4(api):
    out = []
    for f in api.checked:
        if "_get_stats" in f.name:
            out.append((f.header, f.name, "named _get_stats: a counters call is *_stats"))
        if f.name.endswith("_stats") or "_get_stats" in f.name:
            fills = any(p.stars == 1 and not p.pointee_const and p.tag_kind == "struct"
                        and k > 0 for k, p in enumerate(f.params))
            if not fills:
                out.append((f.header, f.name, "returns %s instead of filling a struct through "
                            "an out-parameter" % (f.ret or "nothing")))
    return out


def rule5(api):
    out = []
    for f in api.all_functions:
        if f.public and f.name in api.tags:
            out.append((f.header, f.name, "is also a type: %s" % _tag_kind(api, f.name)))
    return out


def _tag_kind(api, tag):
    for h in api.headers:
        for r in h.records:
            if r.tag == tag:
                return "%s %s (%s)" % (r.kind, tag, h.name)
        for e in h.enums:
            if e.tag == tag:
                return "enum %s (%s)" % (tag, h.name)
    return tag


def rule6(api):
    out = []
    for h in api.headers:
        for rec in h.records:
            if not rec.has_body:
                continue
            fields = [m for m in rec.members if m.kind in ("field", "funcptr", "record")]
            fptrs = sum(1 for m in fields if m.kind == "funcptr")
            if rec.tag.endswith(CONFIG_SUFFIXES):
                what = "config struct"
            elif rec.tag.endswith(OPS_SUFFIXES) or (fptrs >= 2 and 2 * fptrs >= len(fields)):
                what = "ops table"
            else:
                continue
            first = fields[0] if fields else None
            if first is None or not (first.kind == "field" and first.names == ["size"] and
                                     re.fullmatch(r"size_t", first.type)):
                got = first.text if first else "nothing"
                out.append((h.name, "struct " + rec.tag,
                            "%s without size_t size first (first: %s)" % (what, got)))
    return out


# ---- driving -------------------------------------------------------------------------------


def find_headers(args):
    if args.headers:
        return args.headers
    if args.include:
        d = args.include
        if os.path.isdir(os.path.join(d, "rtloop")):
            d = os.path.join(d, "rtloop")
        return sorted(glob.glob(os.path.join(d, "*.h")))
    return R.source_headers(ROOT)


def inventory(api, inline):
    for h in api.headers:
        for item in h.items:
            if isinstance(item, R.Function) and item in api.checked:
                print("%s: %s%s" % (h.name, "RTL_API " if item.api else "", item.prototype()))
            elif isinstance(item, R.Variable):
                print("%s: RTL_API %s" % (h.name, item.text))


def main():
    ap = argparse.ArgumentParser(description="Check the call shape of rtloop's headers.")
    ap.add_argument("--include", metavar="DIR", help="the installed headers: DIR/rtloop/*.h")
    ap.add_argument("--inline", action="store_true", help="check public inline functions too")
    ap.add_argument("--list", action="store_true", help="print the API inventory")
    ap.add_argument("--report-only", action="store_true", help="print, never fail")
    ap.add_argument("headers", nargs="*")
    args = ap.parse_args()
    signal.signal(signal.SIGPIPE, signal.SIG_DFL)  # --list | head
    paths = find_headers(args)
    if not paths:
        print("check-call-shape: no headers found", file=sys.stderr)
        return 2
    api = Api(R.parse_all(paths), args.inline)
    if args.list:
        inventory(api, args.inline)
        return 0
    found = []
    for n, rule in ((1, rule1), (2, rule2), (3, rule3), (4, rule4), (5, rule5), (6, rule6)):
        found += [(n,) + v for v in rule(api)]
    for n, header, name, what in found:
        print("%s: %s: rule %d (%s): %s" % (header, name, n, RULES[n], what))
    counts = ", ".join("rule %d: %d" % (n, sum(1 for v in found if v[0] == n)) for n in RULES)
    bad_headers = len({v[1] for v in found})
    print("check-call-shape: %d violations in %d of %d headers (%s); %d prototypes checked%s" % (
        len(found), bad_headers, len(api.headers), counts, len(api.checked),
        " (report only)" if args.report_only and found else ""))
    return 1 if found and not args.report_only else 0


if __name__ == "__main__":
    sys.exit(main())
