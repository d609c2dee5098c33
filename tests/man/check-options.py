#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""check-options.py TOOL PAGE.scd: the long options of `TOOL --help` and of
the manual page's source are the same set, so that the page cannot drift
from the code; and the parser takes each option the help lists (a help
line without a row in the option table is a promise the tool breaks).

In the help, an option is defined by a line that starts, after two to eight
spaces, with "-x, --name" or "--name" (deeper lines continue a description
and only mention options). In the page, by a line that starts with a bold
term, "*-x*, *--name* _ARG_": the scdoc convention of docs/man/*.scd."""
import os
import re
import subprocess
import sys

# A tool whose options belong to its subcommands: an option is taken if the
# top level or one of them takes it.
SUBCOMMANDS = {"rtloop-trace": [None, "record", "report"]}

HELP_DEF = re.compile(r"^ {2,8}(?:-[A-Za-z0-9], )?--([a-z0-9][a-z0-9-]*)")
PAGE_DEF = re.compile(r"^\*-")
LONG = re.compile(r"--([a-z0-9][a-z0-9-]*)")


def help_options(tool):
    r = subprocess.run([tool, "--help"], capture_output=True, text=True, timeout=30)
    if r.returncode != 0:
        sys.exit("%s --help: exit status %d" % (tool, r.returncode))
    opts = set()
    for line in r.stdout.splitlines():
        m = HELP_DEF.match(line)
        if m:
            opts.add(m.group(1))
    return opts


# Sorts after every option, so that the parse stops there at the latest.
SENTINEL = "--rtl-check-no-such-option"


def parser_refuses(tool, name, sub):
    """Does TOOL [SUB] refuse --NAME as unknown? --NAME=x is answered either
    "takes no argument", a bad value, or, taken, the sentinel's error: all
    but "unknown option '--NAME" mean the option is known."""
    argv = [tool] + ([sub] if sub else []) + ["--%s=x" % name, SENTINEL]
    r = subprocess.run(argv, capture_output=True, text=True, timeout=30)
    return r.returncode == 0 or ("unknown option '--%s" % name) in r.stderr


def page_options(path):
    opts = set()
    with open(path, encoding="utf-8") as f:
        for line in f:
            if PAGE_DEF.match(line):
                opts.update(LONG.findall(line))
    return opts


def main():
    if len(sys.argv) != 3:
        print("usage: check-options.py TOOL PAGE.scd", file=sys.stderr)
        return 2
    tool, page = sys.argv[1], sys.argv[2]
    in_help, in_page = help_options(tool), page_options(page)
    if not in_help:
        print("%s --help: no option found (has the help's layout changed?)" % tool)
        return 1
    bad = 0
    for o in sorted(in_help - in_page):
        print("--%s: in %s --help, not in %s" % (o, tool, page))
        bad += 1
    for o in sorted(in_page - in_help):
        print("--%s: in %s, not in %s --help" % (o, page, tool))
        bad += 1
    subs = SUBCOMMANDS.get(os.path.basename(tool), [None])
    for o in sorted(in_help):
        if all(parser_refuses(tool, o, sub) for sub in subs):
            print("--%s: in %s --help, refused as unknown by its parser" % (o, tool))
            bad += 1
    if not bad:
        print("%d options, the same in --help and %s, each taken by the parser"
              % (len(in_help), page))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
