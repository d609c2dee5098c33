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
"""
import re
import subprocess
import sys


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    lib, symfile = sys.argv[1:]
    out = subprocess.run(["nm", "-D", "--defined-only", lib], capture_output=True, text=True,
                         check=True).stdout
    exported = {line.split()[-1] for line in out.splitlines() if line.strip()}
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
        print(f"#   not listed: {s}: add ' {s}@Base VERSION' (the version that adds it)")
    print(f"{'not ok' if removed else 'ok'} 3 - every listed symbol is exported")
    for s in removed:
        print(f"#   gone: {s}: an ABI break (docs/api.md), or a build without the feature")
    return 1 if added or removed or not listed else 0


if __name__ == "__main__":
    sys.exit(main())
