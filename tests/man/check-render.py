#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""check-render.py PAGE: man renders the generated page PAGE at 80 columns
with groff's warnings on (man --warnings) and says nothing on stderr, and
no rendered line is wider than the 80 columns. Exit 77 (skip) without man."""
import os
import shutil
import subprocess
import sys

WIDTH = 80


def main():
    if len(sys.argv) != 2:
        print("usage: check-render.py PAGE", file=sys.stderr)
        return 2
    page = sys.argv[1]
    if not shutil.which("man"):
        print("man not found (Debian: man-db): skipped")
        return 77
    env = dict(os.environ, MANWIDTH=str(WIDTH), LC_ALL="C.UTF-8")
    env.pop("MANPAGER", None)
    env.pop("PAGER", None)
    r = subprocess.run(["man", "--warnings", "-E", "UTF-8", "-l", page],
                       capture_output=True, text=True, env=env, timeout=60)
    bad = 0
    if r.returncode != 0:
        print("man -l %s: exit status %d" % (page, r.returncode))
        bad += 1
    if r.stderr:
        print("man -l %s: warnings:\n%s" % (page, r.stderr.rstrip()))
        bad += 1
    for n, line in enumerate(r.stdout.splitlines(), 1):
        if len(line) > WIDTH:
            print("line %d is %d columns wide: %s" % (n, len(line), line.strip()))
            bad += 1
    if not r.stdout.strip():
        print("man -l %s: rendered nothing" % page)
        bad += 1
    if not bad:
        print("%s: %d lines, no warning" % (os.path.basename(page),
                                           len(r.stdout.splitlines())))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
