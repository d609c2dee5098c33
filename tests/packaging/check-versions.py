#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Every version of rtloop is meson.build's (TAP).

One number, in meson.build's project(), is the version of everything that
carries one; this checks each against it:
  - debian/changelog's newest entry (the Debian packages' version), and the
    shared-library package's name, librtloop<soname version>, in
    debian/control and in its symbols file's name and header;
  - pyproject.toml takes it from Meson (dynamic, never written there);
  - librtloop.so's soname (librtloop.so.0.<minor> at 0.x, .so.<major>
    from 1.0: docs/api.md) and the version rtl_version() returns;
  - rtloop.pc and the CMake package's version file;
  - rtloop.__version__ (the package on PYTHONPATH).
The tools' --version is tests/man's.

Usage: check-versions.py VERSION SOURCE_ROOT LIBRTLOOP_SO RTLOOP_PC CMAKE_VERSION_FILE [python]
(python: the bindings were built, so rtloop.__version__ is checked too)
"""
import ctypes
import os
import re
import subprocess
import sys
import tomllib

n = 0
failed = 0


def check(desc, ok, why=""):
    global n, failed
    n += 1
    if ok:
        print(f"ok {n} - {desc}")
    else:
        failed += 1
        print(f"not ok {n} - {desc}")
        if why:
            print("# " + why.replace("\n", "\n# "))


def soname_of(path):
    out = subprocess.run(["objdump", "-p", path], capture_output=True, text=True, check=True)
    m = re.search(r"^\s*SONAME\s+(\S+)", out.stdout, re.M)
    return m.group(1) if m else None


def main():
    if len(sys.argv) not in (6, 7) or sys.argv[6:] not in ([], ["python"]):
        sys.exit(__doc__)
    version, src, lib, pc, cmake_ver = sys.argv[1:6]
    major, minor, _ = version.split(".")
    soversion = f"0.{minor}" if major == "0" else major
    libpkg = "librtloop" + soversion

    with open(os.path.join(src, "debian", "changelog")) as f:
        m = re.match(r"rtloop \(([^)]+)\) ", f.readline())
    deb = m.group(1) if m else None
    check("debian/changelog's newest entry is the version", deb == version,
          f"debian/changelog says {deb}, meson.build {version}: add a changelog entry "
          "(dch -v VERSION, or by hand)")
    with open(os.path.join(src, "debian", "control")) as f:
        control = f.read()
    pkgs = re.findall(r"^Package: (librtloop[0-9][^\s]*)$", control, re.M)
    check(f"debian/control's library package is {libpkg}", pkgs == [libpkg],
          f"found {pkgs}: the package of a shared library is named after its soname")
    sym = os.path.join(src, "debian", libpkg + ".symbols")
    head = ""
    if os.path.exists(sym):
        with open(sym) as f:
            head = next((line for line in f if not line.startswith("#")), "")
    check(f"debian/{libpkg}.symbols names librtloop.so.{soversion} and {libpkg}",
          head.split()[:2] == [f"librtloop.so.{soversion}", libpkg], f"its header: {head!r}")

    with open(os.path.join(src, "pyproject.toml"), "rb") as f:
        project = tomllib.load(f)["project"]
    check("pyproject.toml takes the version from Meson",
          "version" not in project and "version" in project.get("dynamic", []),
          f"[project] has version={project.get('version')!r}, "
          f"dynamic={project.get('dynamic')!r}")

    so = soname_of(lib)
    check(f"librtloop.so's soname is librtloop.so.{soversion}", so == f"librtloop.so.{soversion}",
          f"the soname is {so}")
    rtl = ctypes.CDLL(lib)
    rtl.rtl_version.restype = ctypes.c_char_p
    got = rtl.rtl_version().decode()
    check("rtl_version() returns the version", got == version, f"rtl_version() = {got}")

    with open(pc) as f:
        m = re.search(r"^Version: (\S+)$", f.read(), re.M)
    check("rtloop.pc's Version is the version", m and m.group(1) == version,
          f"rtloop.pc says {m.group(1) if m else None}")
    with open(cmake_ver) as f:
        m = re.search(r'set\(PACKAGE_VERSION "([^"]+)"\)', f.read())
    check("the CMake package's version is the version", m and m.group(1) == version,
          f"rtloopConfigVersion.cmake says {m.group(1) if m else None}")

    if sys.argv[6:] == ["python"]:
        try:
            import rtloop
            got = rtloop.__version__
        except ImportError as e:
            got = f"not importable: {e}"
        check("rtloop.__version__ is the version", got == version, f"rtloop.__version__ = {got}")

    print(f"1..{n}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
