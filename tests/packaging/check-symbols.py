#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""librtloop.so exports exactly the symbols its Debian symbols file lists (TAP).

debian/librtloop<soversion>.symbols is the ABI the packages promise; the
package build fails when the library differs from it (debian/rules). This
check says so at make test already, with what to do: a symbol added is
listed with the version that adds it; a symbol removed (or changed in a way
that breaks callers) is an ABI break, which at 0.x takes a new minor
version (docs/api.md) and so a new soname.

Usage: check-symbols.py LIBRTLOOP_SO SYMBOLS_FILE
       check-symbols.py --update VERSION LIBRTLOOP_SO SYMBOLS_FILE
(--update: list the new exports with VERSION, drop the gone ones, and say
which; for a developer who changed the API on purpose.)
"""
import re
import subprocess
import sys


def exports(lib):
    out = subprocess.run(["nm", "-D", "--defined-only", lib], capture_output=True, text=True,
                         check=True).stdout
    return {line.split()[-1] for line in out.splitlines() if line.strip()}


def update(version, lib, symfile):
    exported = exports(lib)
    with open(symfile) as f:
        lines = f.read().splitlines()
    head = [line for line in lines if not line.startswith(" ")]
    entries = {re.match(r"^ (\S+)@Base", line).group(1): line
               for line in lines if line.startswith(" ")}
    for name in sorted(exported - set(entries)):
        print(f"added: {name} ({version})")
        entries[name] = f" {name}@Base {version}"
    for name in sorted(set(entries) - exported):
        print(f"dropped: {name}: an ABI break (docs/api.md)")
        del entries[name]
    with open(symfile, "w") as f:
        f.write("\n".join(head + [entries[k] for k in sorted(entries)]) + "\n")
    return 0


def main():
    if len(sys.argv) == 5 and sys.argv[1] == "--update":
        return update(*sys.argv[2:])
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    lib, symfile = sys.argv[1:]
    exported = exports(lib)
    listed = set()
    with open(symfile) as f:
        for line in f:
            m = re.match(r"^ (\S+)@Base \S+", line)
            if m:
                listed.add(m.group(1))
    added, removed = sorted(exported - listed), sorted(listed - exported)
    print("1..3")
    print(f"{'ok' if listed else 'not ok'} 1 - {symfile} lists symbols ({len(listed)})")
    print(f"{'not ok' if added else 'ok'} 2 - every exported symbol is listed")
    for s in added:
        print(f"#   not listed: {s}: add ' {s}@Base VERSION' (the version that adds it; "
              f"check-symbols.py --update VERSION LIB FILE does)")
    print(f"{'not ok' if removed else 'ok'} 3 - every listed symbol is exported")
    for s in removed:
        print(f"#   gone: {s}: an ABI break (docs/api.md), or a build without the feature")
    return 1 if added or removed or not listed else 0


if __name__ == "__main__":
    sys.exit(main())
