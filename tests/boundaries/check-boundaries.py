#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The module boundaries of docs/architecture.md, proven with the build's own
compile commands: for a source file of each module, its exact command line
(from compile_commands.json) compiles a probe that includes a header the
module may use (it must compile: the positive control) and one it may not
(it must fail). And the prefix rule of docs/style.md: no rtl_ definition
in apps/. Prints TAP. Usage: check-boundaries.py BUILD_DIR."""
import json
import os
import re
import shlex
import subprocess
import sys
import tempfile

# io/ur's public headers: none may compile in io/rtde.
UR_HEADERS = ["<rtloop/ur_dashboard.h>", "<rtloop/ur_primary.h>", "<rtloop/ur_robot_api.h>",
              "<rtloop/ur_manage.h>", "<rtloop/ur_upload.h>"]

# (module, one of its sources, an allowed header, forbidden headers)
CASES = [
    ("ring", "ring/ring.c", "<rtloop/stat.h>",
     ["<rtloop/time.h>", "<rtl_trace.h>", "<rtloop/rtde.h>"]),
    ("rt", "rt/loop.c", "<rtloop/ring.h>",
     ["<rtloop/rtde.h>", "<rtloop/tcp.h>", "<rtloop/udp.h>", "<rtloop/motion.h>",
      '"cli.h"', '"io/rtde/include/rtloop/rtde.h"']),
    ("io/net", "io/net/tcp.c", "<rtloop/time.h>",
     ["<rtloop/rtde.h>", "<rtloop/motion.h>", '"cli.h"']),
    # io/rtde knows nothing of io/ur (the upload is io/ur's hook of the
    # transport's connect): no io/ur header compiles in it.
    ("io/rtde", "io/rtde/rtde_transport.c", "<rtloop/tcp.h>",
     ["<rtloop/udp.h>", "<rtloop/motion.h>", '"cli.h"', '"server.h"'] + UR_HEADERS),
    ("io/rtde", "io/rtde/rtde_codec.c", "<rtloop/tcp.h>",
     ["<rtloop/udp.h>", "<rtloop/motion.h>", '"cli.h"', '"server.h"'] + UR_HEADERS),
    # The control program's generator: the command layout alone.
    ("io/rtde (script generator)", "io/rtde/script/gen-control-script.c", "<rtloop/rtde_cmd.h>",
     ["<rtloop/tcp.h>", "<rtloop/loop.h>", '"cli.h"'] + UR_HEADERS),
    ("io/udp", "io/udp/udp.c", "<rtloop/dgram.h>",
     ["<rtloop/rtde.h>", "<rtloop/motion.h>", '"cli.h"']),
    # The F/T sensor's RDT: the loop and the datagram socket, no robot.
    ("io/netft", "io/netft/rdt_transport.c", "<rtloop/dgram.h>",
     ["<rtloop/rtde.h>", "<rtloop/udp.h>", "<rtloop/motion.h>", '"cli.h"']),
    ("io/motion", "io/motion/motion.c", "<rtloop/rtde_recipe.h>",
     ["<rtloop/drfl_api.h>", '"cli.h"']),
    # io/ur sits above io/rtde: its upload is a hook of the RTDE transport.
    ("io/ur", "io/ur/ur_dashboard.c", "<rtloop/rtde_transport.h>",
     ["<rtloop/udp.h>", "<rtloop/motion.h>", '"cli.h"', '"server.h"']),
    ("io/ur", "io/ur/ur_primary.c", "<rtloop/tcp.h>",
     ["<rtloop/udp.h>", "<rtloop/motion.h>", '"cli.h"', '"controller.h"']),
    ("io/ur", "io/ur/ur_upload.c", "<rtloop/rtde_cmd.h>",
     ["<rtloop/udp.h>", "<rtloop/motion.h>", "<rtloop/drfl_api.h>", '"cli.h"', '"server.h"']),
    ("io/drfl", "io/drfl/drfl_backend.c", "<rtloop/motion.h>", ['"cli.h"', '"server.h"']),
    # The loop's tests build against the runtime alone: no motion, no protocol.
    ("tests/rt (the loop's tests)", "tests/rt/test-loop.c", "<rtloop/loop.h>",
     ["<rtloop/motion.h>", "<rtloop/rtde.h>", "<rtloop/udp.h>"]),
]


# rtl_ is the library's prefix (docs/style.md, "Names"): no file under apps/
# defines a function, a type or a macro with it. A definition is a function
# head at the start of a line (not a prototype), a struct, union or enum with
# a body, or a #define.
APP_DEFINITION = re.compile(
    r"^(?:#\s*define\s+(?P<macro>(?:rtl|RTL)_\w+)"
    r"|(?:struct|union|enum)\s+(?P<tag>rtl_\w+)\s*\{"
    r"|(?!return\b)[A-Za-z_][\w \t\*]*?\b(?P<fn>rtl_\w+)\s*\([^;]*$)", re.M)


def apps_prefix(root):
    found = []
    for dirpath, _, files in os.walk(os.path.join(root, "apps")):
        for name in sorted(files):
            if not name.endswith((".c", ".h", ".cpp", ".in")):
                continue
            path = os.path.join(dirpath, name)
            with open(path, encoding="utf-8", errors="replace") as f:
                text = f.read()
            for m in APP_DEFINITION.finditer(text):
                what = m.group("macro") or m.group("tag") or m.group("fn")
                line = text.count("\n", 0, m.start()) + 1
                found.append("%s:%d: %s" % (os.path.relpath(path, root), line, what))
    return found


def command_for(db, src):
    for e in db:
        if os.path.normpath(e["file"]).endswith(os.path.normpath(src)):
            args = e["arguments"] if "arguments" in e else shlex.split(e["command"])
            return e["directory"], args
    return None, None


def probe(directory, args, src, header, tmp):
    path = os.path.join(tmp, "probe.c")
    with open(path, "w") as f:
        f.write("#include %s\nint rtl_probe(void);\nint rtl_probe(void) { return 0; }\n" % header)
    out, skip = [], False
    for a in args:
        if skip:
            skip = False
            continue
        if a in ("-o", "-MQ", "-MF"):
            skip = True
            continue
        if a in ("-c", "-MD") or os.path.normpath(os.path.join(directory, a)).endswith(
                os.path.normpath(src)):
            continue
        out.append(a)
    r = subprocess.run(out + ["-fsyntax-only", path], cwd=directory, capture_output=True,
                       text=True)
    return r.returncode == 0, r.stderr


def main():
    build = sys.argv[1]
    with open(os.path.join(build, "compile_commands.json")) as f:
        db = json.load(f)
    results = []
    with tempfile.TemporaryDirectory() as tmp:
        for module, src, allowed, forbidden in CASES:
            directory, args = command_for(db, src)
            if not args:
                results.append((False, "%s: no compile command for %s" % (module, src), ""))
                continue
            ok, err = probe(directory, args, src, allowed, tmp)
            results.append((ok, "%s may include %s (the control)" % (module, allowed), err))
            for h in forbidden:
                ok, err = probe(directory, args, src, h, tmp)
                results.append((not ok, "%s may not include %s: it does not compile" % (module, h),
                                "" if not ok else "it compiled"))
    root = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
    found = apps_prefix(root)
    results.append((not found, "apps/ defines no name with the library's prefix rtl_",
                    "\n".join(found[:5])))
    print("1..%d" % len(results))
    failed = 0
    for i, (ok, what, diag) in enumerate(results, 1):
        print("%s %d - %s" % ("ok" if ok else "not ok", i, what))
        if not ok:
            failed += 1
            for line in diag.strip().splitlines()[:5]:
                print("# " + line)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
