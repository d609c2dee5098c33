#!/bin/sh
# SPDX-License-Identifier: MIT
#
# pip install . as docs/python.md tells it, where no package index is
# reachable (CI, a lab's offline real-time PC): a fresh virtual environment
# that sees Debian's packages (python3-mesonpy builds, python3-numpy runs),
# pip install --no-build-isolation of a copy of the tree, then
#   1. what pip installed: the package with its extension, _rtloop.pyi and
#      py.typed, and nothing else of rtloop (no tools, headers, library);
#   2. the versions: pip's metadata, rtloop.__version__ and meson.build's;
#   3. the package imports from the venv, outside any tree, with the
#      library linked into its extension (no librtloop.so needed);
#   4. stubtest and mypy --strict against the installed package;
#   5. every Python test suite (tests/python) against the installed package.
# Prints "ok - ..." / "not ok - ..." per check, then
# "# check-pip: N passed, N failed".
# Usage: .ci/check-pip.sh BUILD_DIR (a build of the tree: the tests take
# rtde-sim and rtde-record from it) [SOURCE_DIR]
set -u

build=$(cd "${1:?usage: $0 BUILD_DIR [SOURCE_DIR]}" && pwd) || exit 2
src=$(cd "${2:-$(dirname "$0")/..}" && pwd) || exit 2
tmp=$(mktemp -d "${TMPDIR:-/tmp}/rtloop-pip.XXXXXX") || exit 2
venv=$tmp/venv
# shellcheck source=.ci/checks.sh
. "$(dirname "$0")/checks.sh"
trap 'rm -rf "$tmp"' EXIT


version=$(sed -n "s/^  version: '\([^']*\)',$/\1/p" "$src/meson.build")
echo "# rtloop $version from $src, the tests' tools from $build"

# A copy of the tree as a clean checkout holds it: meson-python builds in
# the source directory's .mesonpy-* and writes its native file there.
mkdir -p "$tmp/src"
if ! (cd "$src" && git ls-files -z | xargs -0 cp --parents -t "$tmp/src") 2>"$tmp/copy.log"; then
	not_ok "a copy of the tree's files" "$tmp/copy.log"
	finish check-pip
fi
check "python3 -m venv --system-site-packages (Debian's interpreter)" \
	/usr/bin/python3 -m venv --system-site-packages "$venv"
[ -x "$venv/bin/python" ] || finish check-pip
check "pip install --no-build-isolation . (meson-python, -Dwheel=true)" \
	env -u PYTHONPATH timeout 900 "$venv/bin/pip" install --no-index --no-build-isolation "$tmp/src"

# ---- 1. what was installed -------------------------------------------------------------
"$venv/bin/pip" show -f rtloop >"$tmp/show" 2>&1
files=$(sed -n 's/^  //p' "$tmp/show" | grep -v -e '^rtloop-[^/]*\.dist-info/' -e '__pycache__' | sort | tr '\n' ' ')
expect="rtloop/__init__.py rtloop/_rtloop.cpython-*.so rtloop/_rtloop.pyi rtloop/py.typed "
# shellcheck disable=SC2254 # $expect is a pattern on purpose (the ABI tag)
case $files in
$expect) ok "the wheel holds the package alone: $files" ;;
*) not_ok "the wheel holds the package alone (got: $files)" "$tmp/show" ;;
esac
site=$("$venv/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["platlib"])')
check "nothing of rtloop outside the package (no tools, headers or library in the venv)" \
	sh -c "! find '$venv' -name 'rtde-sim' -o -name 'librtloop*' -o -name 'loop.h' | grep ."

# ---- 2. versions ----------------------------------------------------------------------
pipver=$(sed -n 's/^Version: //p' "$tmp/show")
check "pip's metadata says $version (meson.build's): $pipver" [ "$pipver" = "$version" ]
cd "$tmp" || finish check-pip
check "import rtloop from the venv, outside the tree: __version__ $version, from site-packages" \
	env -u PYTHONPATH "$venv/bin/python" -c "
import rtloop, sys
assert rtloop.__version__ == '$version', rtloop.__version__
assert rtloop.__file__.startswith('$site'), rtloop.__file__
print(rtloop.__file__)"

# ---- 3. it runs with the library inside -----------------------------------------------
check "the extension needs no librtloop.so" \
	sh -c "! readelf -d '$site'/rtloop/_rtloop*.so | grep -F librtloop.so"
check "the installed package receives from its in-process Sim" \
	env -u PYTHONPATH timeout 30 "$venv/bin/python" -c '
import rtloop
with rtloop.Sim() as sim, rtloop.Receive(sim.host, sim.port) as r:
    assert r.read(timeout=5.0) is not None and len(r.actual_q()) == 6
'

# ---- 4. the type information ----------------------------------------------------------
check "stubtest: _rtloop.pyi matches the installed extension" \
	env -u PYTHONPATH "$venv/bin/python" "$src/tests/python/typecheck.py" stubtest \
	"$src/tests/python/stubtest-allowlist.txt"
check "mypy --strict: the examples against the installed package" \
	env -u PYTHONPATH "$venv/bin/python" "$src/tests/python/typecheck.py" strict \
	"$src/apps/examples/experiment.py" "$src/apps/examples/motion.py"

# ---- 5. the Python tests --------------------------------------------------------------
for t in "$src"/tests/python/test_*.py; do
	name=$(basename "$t" .py)
	check "pytest $name against the installed package" \
		env -u PYTHONPATH RTLOOP_SIM="$build/apps/rtde-sim/rtde-sim" \
		RTLOOP_RECORD="$build/apps/rtde-record/rtde-record" \
		timeout 600 "$venv/bin/python" -m pytest -q -p no:cacheprovider "$t"
done
finish check-pip
