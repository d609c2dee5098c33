#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""check-version.py TOOL VERSION: `TOOL --version` and `TOOL -V` exit 0 and
print "NAME (rtloop) VERSION", NAME being the tool's file name, and nothing
on stderr."""
import os
import subprocess
import sys


def main():
    if len(sys.argv) != 3:
        print("usage: check-version.py TOOL VERSION", file=sys.stderr)
        return 2
    tool, version = sys.argv[1], sys.argv[2]
    want = "%s (rtloop) %s\n" % (os.path.basename(tool), version)
    bad = 0
    for flag in ("--version", "-V"):
        r = subprocess.run([tool, flag], capture_output=True, text=True, timeout=30)
        what = "%s %s" % (os.path.basename(tool), flag)
        if r.returncode != 0:
            print("%s: exit status %d, want 0" % (what, r.returncode))
            bad += 1
        if r.stdout != want:
            print("%s: printed %r, want %r" % (what, r.stdout, want))
            bad += 1
        if r.stderr:
            print("%s: wrote to stderr: %r" % (what, r.stderr))
            bad += 1
        if not bad:
            print("%s: %s" % (what, r.stdout.strip()))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
