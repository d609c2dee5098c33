#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The package's type information against the package (PEP 561).

  typecheck.py stubtest ALLOWLIST        mypy's stubtest: every public name of
                                         rtloop and rtloop._rtloop, with its
                                         arguments and defaults as the
                                         extension states them (its text
                                         signatures), is in _rtloop.pyi, and
                                         nothing else is
  typecheck.py strict FILE...            mypy --strict over programs that use
                                         the package (the examples)

rtloop is imported from PYTHONPATH (the build tree) or, without it, from
the interpreter's site directories (an installed package). Exits 77 (a
skip, with the reason) when mypy is not installed (Debian: mypy).
"""
import os
import subprocess
import sys
import tempfile


def main() -> int:
    try:
        import mypy  # noqa: F401
    except ImportError:
        print("skip: mypy is not installed (Debian: apt-get install mypy)")
        return 77
    if len(sys.argv) < 3 or sys.argv[1] not in ("stubtest", "strict"):
        print(__doc__, file=sys.stderr)
        return 2
    env = dict(os.environ)
    paths = [os.path.abspath(a) for a in sys.argv[2:]]  # run in a scratch directory
    with tempfile.TemporaryDirectory() as cache:
        if sys.argv[1] == "stubtest":
            cmd = [sys.executable, "-m", "mypy.stubtest", "--allowlist", paths[0],
                   "rtloop"]
        else:
            # mypy finds the package where the interpreter would, plus
            # PYTHONPATH (which mypy itself ignores).
            if env.get("PYTHONPATH"):
                env["MYPYPATH"] = env["PYTHONPATH"]
            cmd = [sys.executable, "-m", "mypy", "--strict", "--cache-dir", cache,
                   "--config-file", os.devnull, *paths]
        print("+ " + " ".join(cmd), flush=True)
        return subprocess.run(cmd, env=env, cwd=cache).returncode


if __name__ == "__main__":
    sys.exit(main())
