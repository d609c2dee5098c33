#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""check-parser.py: the header parser (docs/man/rtl_headers.py) and the page
generator (docs/man/gen-api-page.py), and the rules of
tests/headers/check-call-shape.py, on tests/man/fixture.h, a header that
holds each construct the public headers use: multi-line prototypes, RTL_API
and RTL_INLINE, __attribute__, function-pointer and array parameters,
comments before and after a declaration, a comment shared by two calls,
nested unions and structs, bit-fields, enums, typedefs, macros with
continuations, a divider, an extern object. The real headers change under
the parser all the time; this pins what it must read in them, so that a
parser change that loses something fails here, not as a silently thinner
page or a violation nobody sees. Prints each failed expectation; exits 1
if any."""
import importlib.util
import os
import shutil
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
MAN = os.path.join(HERE, "..", "..", "docs", "man")
sys.path.insert(0, MAN)
import rtl_headers as R  # noqa: E402

FIXTURE = os.path.join(HERE, "fixture.h")
failures = []


def expect(what, got, want):
    if got != want:
        failures.append("%s: got %r, want %r" % (what, got, want))


def generator():
    spec = importlib.util.spec_from_file_location("gen_api_page",
                                                  os.path.join(MAN, "gen-api-page.py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def check_functions(h):
    f = {x.name: x for x in h.functions}
    expect("public calls", [x.name for x in h.public_functions],
           ["rtl_fix_create", "rtl_fix_destroy", "rtl_fix_arm", "rtl_fix_armed",
            "rtl_fix_config_of", "rtl_fix_each", "rtl_fix_log", "rtl_fix_open",
            "rtl_fix_get_stats", "rtl_fix_stats", "rtl_fix_first"])
    expect("helper is not public", f["rtl_fix__helper"].public, False)
    c = f["rtl_fix_create"]
    expect("create: params", [(p.name, p.tag, p.stars, p.pointee_const) for p in c.params],
           [("out", "rtl_fix", 2, False), ("cfg", "rtl_fix_config", 1, True),
            ("err", "rtl_error", 1, False)])
    expect("create: comment", c.comment.text.splitlines()[0], "Create a fixture from @cfg.")
    expect("armed: shares arm's comment", (f["rtl_fix_armed"].shared,
           f["rtl_fix_armed"].comment.text), (True, "Arm or disarm @f, and read it back."))
    expect("config_of: return type", f["rtl_fix_config_of"].ret, "const struct rtl_fix_config *")
    expect("config_of: trailing comment", f["rtl_fix_config_of"].comment.text,
           "the configuration it holds")
    e = f["rtl_fix_each"]
    expect("each: params", [(p.name, p.funcptr, p.typename or p.tag, p.array, p.pointee_const)
                            for p in e.params],
           [("f", False, "rtl_fix", "", False), ("fn", False, "rtl_fix_fn", "", False),
            ("alloc", True, "", "", False), ("v", False, "double", "[RTL_FIX_AXES]", True),
            ("out", False, "double", "[RTL_FIX_AXES]", False)])
    lg = f["rtl_fix_log"]
    expect("log: variadic, attribute", (lg.variadic, lg.attrs),
           (True, ["__attribute__((format(printf, 2, 3)))"]))
    expect("first: inline", (f["rtl_fix_first"].inline, f["rtl_fix_first"].api), (True, False))
    expect("first: prototype", f["rtl_fix_first"].prototype(),
           "static inline const double *rtl_fix_first(const double v[RTL_FIX_AXES]);")


def check_types(h):
    recs = {r.tag: r for r in h.records}
    expect("opaque", (recs["rtl_fix"].has_body, recs["rtl_fix"].comment.text),
           (False, "The object: opaque."))
    m = recs["rtl_fix_config"].members
    expect("members", [(x.kind, x.names) for x in m],
           [("field", ["size"]), ("field", ["a", "b"]), ("field", ["c"]), ("field", ["flag"]),
            ("record", ["u"]), ("funcptr", ["cb"])])
    expect("c shares the pair's comment", (m[2].shared, m[2].comment.text),
           (True, "A comment above a pair."))
    inner = m[4].members
    expect("nested", [(x.kind, x.names) for x in inner], [("field", ["d"]), ("record", ["p"])])
    expect("nested comment", inner[0].comment.text, "a double")
    expect("nested struct", inner[1].members[0].names, ["x", "y"])
    expect("funcptr member params", [p.name for p in m[5].params], ["f", "user", "err"])
    en = h.enums[0]
    expect("enum", [(v.name, v.value, v.comment.text) for v in en.values],
           [("RTL_FIX_A", "0", "the first"), ("RTL_FIX_B", "", "The second, above it.")])
    td = h.of(R.Typedef)[0]
    expect("typedef", (td.name, td.funcptr, [p.name for p in td.params]),
           ("rtl_fix_fn", True, ["user", "v"]))
    var = h.of(R.Variable)[0]
    expect("variable", (var.name, var.comment.text), ("rtl_fix_defaults", "The defaults."))


def check_rest(h):
    mac = {x.name: x for x in h.of(R.Macro)}
    expect("guard", mac["RTLOOP_FIXTURE_H"].guard, True)
    expect("macro", (mac["RTL_FIX_AXES"].value, mac["RTL_FIX_AXES"].comment.text),
           ("6", "Axes of a vector."))
    expect("function-like macro", (mac["RTL_FIX_TWICE"].params, mac["RTL_FIX_TWICE"].value,
                                   mac["RTL_FIX_TWICE"].comment.text),
           ("(x)", "((x) * 2)", "twice @x"))
    notes = h.of(R.Note)
    expect("divider", [n.divider for n in notes], ["objects"])
    expect("intro", h.intro.text.splitlines()[0],
           "rtl_fix: a header that is never installed nor compiled, holding each")
    expect("includes", h.includes, ["rtloop/compiler.h", "rtloop/error.h"])


def check_page(h):
    gen = generator()
    page = gen.render(h, "0.0.0", [("rtloop_fixture.h", "3"), ("rtloop_error.h", "3")])
    want = [
        'rtloop_fixture.h(3) "rtloop 0.0.0"',
        "rtloop_fixture.h - a header that is never installed nor compiled, holding each "
        "construct the header parser (docs/man/rtl_headers.py) must read, for "
        "tests/man/check-parser.py; it also breaks call-shape rules on purpose, for the "
        "self-test of tests/headers/check-call-shape.py",
        "## Design",
        "## rtl_fix_create",
        "\tReturns 0 and sets \\*_out_, or one of the ERRORS below, with _err_ filled.",
        "\t*-EINVAL*",
        "\t\t_out_ or _cfg_ is NULL",
        "\tReturns 1 when it ran, 0 otherwise.",
        "## struct rtl_fix",
        "*u.d*",
        "*#define RTL_FIX_TWICE(x) ((x) \\* 2)*",
        "## rtl_fix_defaults",
        "*rtloop_error.h*(3), *rtloop*(7)",
    ]
    lines = page.split("\n")
    for w in want:
        if w not in lines:
            failures.append("page: no line %r" % w)
    if "rtl_fix__helper" in page:
        failures.append("page: the inline helper rtl_fix__helper is on the page")
    create = page.split("## rtl_fix_create")[1].split("## ")[0]
    if "*RETURN VALUE*" not in create or "*ERRORS*" not in create:
        failures.append("page: rtl_fix_create has no RETURN VALUE or no ERRORS")
    arm = page.split("## rtl_fix_armed")[1].split("## ")[0]
    if "RETURN VALUE" in arm:
        failures.append("page: rtl_fix_armed has a RETURN VALUE its comment does not give")


def check_call_shape(h):
    """The call-shape check finds exactly the violations the fixture holds."""
    path = os.path.join(HERE, "..", "headers", "check-call-shape.py")
    spec = importlib.util.spec_from_file_location("check_call_shape", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    api = mod.Api([h], inline=False)
    found = []
    for n, rule in ((1, mod.rule1), (2, mod.rule2), (3, mod.rule3), (4, mod.rule4),
                    (5, mod.rule5), (6, mod.rule6)):
        found += [(n, v[1]) for v in rule(api)]
    expect("call-shape violations", sorted(found),
           [(1, "rtl_fix_open"), (2, "rtl_fix_each"), (2, "rtl_fix_open"), (3, "rtl_fix_stats"),
            (4, "rtl_fix_get_stats"), (5, "rtl_fix_stats"), (6, "struct rtl_fix_opts")])


def check_render(h):
    """scdoc takes the fixture's page (when scdoc is there)."""
    if not shutil.which("scdoc"):
        return
    page = generator().render(h, "0.0.0", [])
    r = subprocess.run(["scdoc"], input=page, capture_output=True, text=True, timeout=30)
    if r.returncode != 0:
        failures.append("scdoc refuses the fixture's page: " + r.stderr.strip())


def main():
    h = R.parse(FIXTURE)
    for check in (check_functions, check_types, check_rest, check_page, check_call_shape,
                  check_render):
        try:
            check(h)
        except (KeyError, IndexError, AttributeError) as e:
            failures.append("%s: %s: %r" % (check.__name__, type(e).__name__, e))
    for f in failures:
        print("not ok: " + f)
    print("%s: %d failed expectations" % (os.path.basename(FIXTURE), len(failures)))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
