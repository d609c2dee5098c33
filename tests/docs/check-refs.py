#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Every reference in the docs and the sources must resolve inside the
repository, so that the documentation stands alone.

Usage: check-refs.py ROOT

Two kinds of reference are checked:

- Markdown links, [text](path) and [text](path#anchor), in README.md,
  CHANGELOG.md and docs/**/*.md: the path must exist relative to the
  linking file; for an anchor into a .md file (or into the file itself), a
  heading with that GitHub-style slug must exist there. URLs (a scheme such
  as https: or mailto:) are not checked.
- Bare file names in the same Markdown files and in the sources and build
  files (*.c, *.h, *.cpp, *.in, *.py, *.sh, *.script, meson.build,
  meson_options.txt, Makefile, .clang-format, everything under .ci/): a
  word ending in .md, and a path that starts with one of the repository's
  top-level folders (docs/, apps/, io/, ...), must exist relative to the
  repository root or to the referring file. A path that climbs out of the
  repository with ../ never resolves, even where the file exists outside.

Not references: URLs; globs and templates (a path followed by *, [, { or <);
example paths with a placeholder component (foo, bar, xyz), such as the
io/foo/foo.c of docs/architecture.md's "a newcomer adds a transport";
build targets (what follows "ninja -C DIR" on a line); and generated paths
under an anchored entry of the root .gitignore (/tests/fuzz/corpus-work/).

Prints each broken reference as
  FILE:LINE: broken reference 'X': no such file in the repository
(or "no heading ... in FILE" for an anchor) and exits 1; otherwise prints
one line with the counts and exits 0. Build directories (build*, and the
Debian and pip builds' own), .git and the self-test's fixture folder (which holds a broken link on purpose) are
not scanned. Python 3 standard library only.
"""
import os
import re
import sys

SKIP_DIRS = {"tests/docs/fixture"}
PLACEHOLDERS = {"foo", "bar", "baz", "xyz"}
SOURCE_EXTS = (".c", ".h", ".cpp", ".in", ".py", ".sh", ".script")
SOURCE_NAMES = {"meson.build", "meson_options.txt", "Makefile", ".clang-format"}

URL = re.compile(r"\b[a-zA-Z][a-zA-Z0-9+.-]*://\S+|\bmailto:\S+")
LINK = re.compile(r"\[(?:[^\[\]]|\[[^\[\]]*\])*\]\(\s*<?([^()\s<>]*(?:\([^()\s]*\))?[^()\s<>]*)>?(?:\s+\"[^\"]*\")?\s*\)")
FENCE = re.compile(r"^\s*(```|~~~)")
HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")
MD_WORD = re.compile(r"(?<![\w/.@:-])((?:\.\.?/)*[\w./+-]*[\w-]\.md)(?![\w-])")
GLOB_NEXT = set("*[{<")
NINJA = re.compile(r"\bninja\s+-C\s+\S+.*")


def slug(text):
    """GitHub's anchor for a heading: lower case, punctuation dropped
    (hyphens and underscores kept), spaces to hyphens."""
    text = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", text)  # links: their text
    text = text.strip().lower()
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


_anchor_cache = {}


def anchors(path):
    """The anchors of a Markdown file's headings (duplicates numbered -1,
    -2, ... as GitHub does), headings inside code fences excluded."""
    if path in _anchor_cache:
        return _anchor_cache[path]
    seen = {}
    out = set()
    fenced = False
    with open(path, encoding="utf-8", errors="replace") as f:
        for line in f:
            if FENCE.match(line):
                fenced = not fenced
                continue
            m = None if fenced else HEADING.match(line)
            if not m:
                continue
            s = slug(m.group(2))
            n = seen.get(s, 0)
            seen[s] = n + 1
            out.add(s if n == 0 else "%s-%d" % (s, n))
    _anchor_cache[path] = out
    return out


def inside(root, path):
    root = os.path.realpath(root)
    path = os.path.realpath(path)
    return path == root or path.startswith(root + os.sep)


def resolves(root, referrer_dir, target):
    """True if @target names a file or folder in the repository, relative
    to the root or to the referring file's folder."""
    for base in (root, referrer_dir):
        p = os.path.normpath(os.path.join(base, target))
        if inside(root, p) and os.path.exists(p):
            return True
    return False


def skipped_dir(rel_dir, d):
    """Not scanned: .git, build directories (Meson's build*, the Debian
    build's obj-* and its staging trees under debian/, meson-python's
    .mesonpy-*) and SKIP_DIRS."""
    return (
        d == ".git"
        or d.startswith(("build", "obj-", ".mesonpy-"))
        or (rel_dir == "debian" and d != "source")
        or os.path.join(rel_dir, d) in SKIP_DIRS
    )


def walk(root):
    """Relative paths of the files to scan, in a stable order."""
    for dirpath, dirnames, filenames in os.walk(root):
        rel_dir = os.path.relpath(dirpath, root)
        rel_dir = "" if rel_dir == "." else rel_dir
        dirnames[:] = sorted(d for d in dirnames if not skipped_dir(rel_dir, d))
        for name in sorted(filenames):
            yield os.path.join(rel_dir, name)


def is_markdown(rel):
    return rel in ("README.md", "CHANGELOG.md") or (
        rel.startswith("docs" + os.sep) and rel.endswith(".md")
    )


def is_source(rel):
    name = os.path.basename(rel)
    return (
        name in SOURCE_NAMES
        or name.endswith(SOURCE_EXTS)
        or rel.startswith(".ci" + os.sep)
    )


class Checker:
    def __init__(self, root):
        self.root = root
        self.broken = []
        self.checked = 0
        self.files = 0
        tops = {"docs"}
        for d in os.listdir(root):
            if os.path.isdir(os.path.join(root, d)) and d != ".git" and not d.startswith("build"):
                tops.add(d)
        self.generated = []
        gi = os.path.join(root, ".gitignore")
        if os.path.isfile(gi):
            with open(gi, encoding="utf-8", errors="replace") as f:
                for entry in f:
                    entry = entry.strip()
                    if entry.startswith("/") and not re.search(r"[*?\[]", entry):
                        self.generated.append(entry.strip("/"))
        alt = "|".join(re.escape(t) for t in sorted(tops, key=len, reverse=True))
        # A path from a top-level folder, or one that climbs out with ../
        self.path_re = re.compile(
            r"(?<![\w./@:-])((?:\.\./)+[\w.+-][\w./+-]*|(?:\./)?(?:%s)/[\w./+-]*)" % alt
        )

    def report(self, rel, lineno, target, why="no such file in the repository"):
        self.broken.append("%s:%d: broken reference '%s': %s" % (rel, lineno, target, why))

    def check_bare(self, rel, lineno, line):
        ref_dir = os.path.join(self.root, os.path.dirname(rel))
        found = {}
        for rx in (MD_WORD, self.path_re):
            for m in rx.finditer(line):
                tok = m.group(1)
                end = m.end(1)
                if end < len(line) and line[end] in GLOB_NEXT:
                    continue
                tok = tok.rstrip(".,:;")
                if not tok or tok in (".", "..") or tok.endswith("/."):
                    continue
                parts = set(re.split(r"[/.]", tok))
                if parts & PLACEHOLDERS:
                    continue
                found.setdefault(m.start(1), tok)
        for tok in found.values():
            norm = os.path.normpath(tok)
            if any(norm == g or norm.startswith(g + os.sep) for g in self.generated):
                continue
            self.checked += 1
            if not resolves(self.root, ref_dir, tok):
                self.report(rel, lineno, tok)

    def check_link(self, rel, lineno, target):
        if re.match(r"^[a-zA-Z][a-zA-Z0-9+.-]*:", target):
            return  # a URL
        self.checked += 1
        path, _, anchor = target.partition("#")
        here = os.path.join(self.root, rel)
        if path:
            full = os.path.normpath(os.path.join(os.path.dirname(here), path))
            if not inside(self.root, full) or not os.path.exists(full):
                self.report(rel, lineno, target)
                return
        else:
            full = here
        if anchor and full.endswith(".md") and os.path.isfile(full):
            if anchor not in anchors(full):
                where = os.path.relpath(full, self.root)
                self.report(rel, lineno, target, "no heading '#%s' in %s" % (anchor, where))

    def scan(self, rel):
        md = is_markdown(rel)
        if not md and not is_source(rel):
            return
        self.files += 1
        fenced = False
        with open(os.path.join(self.root, rel), encoding="utf-8", errors="replace") as f:
            for lineno, line in enumerate(f, 1):
                line = URL.sub(" ", line.rstrip("\n"))
                if md:
                    if FENCE.match(line):
                        fenced = not fenced
                    if not fenced:
                        for m in LINK.finditer(line):
                            self.check_link(rel, lineno, m.group(1))
                        line = LINK.sub(" ", line)
                self.check_bare(rel, lineno, NINJA.sub(" ", line))

    def run(self):
        for rel in walk(self.root):
            self.scan(rel)
        return self.broken


def main(argv):
    if len(argv) != 2 or not os.path.isdir(argv[1]):
        print("usage: check-refs.py ROOT", file=sys.stderr)
        return 2
    c = Checker(argv[1])
    broken = c.run()
    for b in broken:
        print(b)
    if broken:
        print("%d broken of %d references in %d files" % (len(broken), c.checked, c.files))
        return 1
    print("%d references in %d files, all inside the repository" % (c.checked, c.files))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
