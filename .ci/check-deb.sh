#!/bin/sh
# SPDX-License-Identifier: MIT
#
# The Debian packages (debian/, docs/install.md "Debian packages") as a lab
# gets them: built from a copy of the tree by dpkg-buildpackage, checked by
# lintian, installed with apt-get, then used from the installed files only:
#   1. the build: the five packages (and their -dbgsym), the symbols file
#      held at check level 4 (an ABI change fails the build);
#   2. lintian --pedantic: no error, no warning (the overrides in debian/
#      say why each is there);
#   3. apt-get install ./*.deb, each at meson.build's version;
#   4. the tools: rtde-sim --version and its manual pages (1, 3, 7);
#   5. a C consumer (the installed examples' Makefile, pkg-config) and a
#      CMake consumer (find_package(rtloop), no prefix given), run against
#      the installed rtde-sim;
#   6. python3 -c 'import rtloop' from the installed package alone, its
#      version, a Receive from its Sim, its type information (mypy), and
#      the installed motion.py (a UDP control loop from Python);
#   7. apt-get purge: the machine as it was.
# Prints "ok - ..." / "not ok - ..." per check, then
# "# check-deb: N passed, N failed". Needs root (apt-get) and the build
# dependencies of debian/control (.ci/packages).
# Usage: .ci/check-deb.sh [--build-only] [SOURCE_DIR] [OUT_DIR]
# OUT_DIR keeps the .deb files and lintian's report (default: a scratch
# directory); --build-only stops after lintian (make deb: the packages, not
# installed).
set -u

build_only=
if [ "${1:-}" = --build-only ]; then
	build_only=1
	shift
fi
src=$(cd "${1:-$(dirname "$0")/..}" && pwd) || exit 2
tmp=$(mktemp -d "${TMPDIR:-/tmp}/rtloop-deb.XXXXXX") || exit 2
out=${2:-$tmp/out}
# shellcheck source=.ci/checks.sh
. "$(dirname "$0")/checks.sh"
installed=
pkgs="librtloop-dev librtloop0.1 python3-rtloop rtloop-doc rtloop-tools"

cleanup() {
	stop_sim
	# shellcheck disable=SC2086 # a list of package names
	[ -n "$installed" ] && apt-get purge -y -qq $pkgs >/dev/null 2>&1
	rm -rf "$tmp"
}
trap cleanup EXIT


version=$(sed -n "s/^  version: '\([^']*\)',$/\1/p" "$src/meson.build")
arch=$(dpkg --print-architecture)
echo "# rtloop $version ($arch) from $src"

# ---- 1. the build -------------------------------------------------------------------
# dpkg-buildpackage writes next to the tree: a copy of the tracked files, in
# a directory of its own.
tree=$tmp/rtloop-$version
mkdir -p "$tree" "$out"
if ! (cd "$src" && git ls-files -z | xargs -0 cp --parents -t "$tree") 2>"$tmp/copy.log"; then
	not_ok "a copy of the tree's files" "$tmp/copy.log"
	finish check-deb
fi
check "the build dependencies of debian/control are installed (dpkg-checkbuilddeps)" \
	sh -c "cd '$tree' && dpkg-checkbuilddeps"
check "dpkg-buildpackage -b -us -uc (symbols at check level 4)" \
	sh -c "cd '$tree' && timeout 1800 dpkg-buildpackage -b -us -uc"
changes=$tmp/rtloop_${version}_$arch.changes
[ -f "$changes" ] || finish check-deb
debs=
for p in $pkgs; do
	f=$(ls "$tmp/${p}_${version}"_*.deb 2>/dev/null | head -n 1)
	[ -n "$f" ] && debs="$debs $f"
done
# shellcheck disable=SC2086 # a list of files
check "five packages built: $pkgs" [ "$(echo $debs | wc -w)" -eq 5 ]
cp "$tmp"/*.deb "$changes" "$out"/ 2>/dev/null

# ---- 2. lintian ---------------------------------------------------------------------
if lintian --pedantic -I -E --fail-on error,warning --tag-display-limit 0 "$changes" \
	>"$out/lintian.txt" 2>&1; then
	ok "lintian --pedantic: no error, no warning ($(grep -c '^[IPX]:' "$out/lintian.txt") info or pedantic notes)"
else
	not_ok "lintian --pedantic: no error, no warning" "$out/lintian.txt"
fi
sed 's/^/# lintian: /' "$out/lintian.txt"
if [ -n "$build_only" ]; then
	echo "# the packages are in $out"
	finish check-deb
fi

# ---- 3. install ---------------------------------------------------------------------
# shellcheck disable=SC2086 # a list of files
if apt-get install -y -qq --no-install-recommends $debs >"$tmp/apt.log" 2>&1; then
	installed=1
	ok "apt-get install of the five packages"
else
	not_ok "apt-get install of the five packages" "$tmp/apt.log"
	finish check-deb
fi
for p in $pkgs; do
	v=$(dpkg-query -W -f='${Version}' "$p" 2>/dev/null)
	check "$p $v installed, meson.build's version" [ "$v" = "$version" ]
done

# ---- 4. the tools -------------------------------------------------------------------
cd "$tmp" || finish check-deb
check "rtde-sim --version from /usr/bin: rtde-sim (rtloop) $version" \
	sh -c "[ \"\$(command -v rtde-sim)\" = /usr/bin/rtde-sim ] &&
		[ \"\$(rtde-sim --version)\" = 'rtde-sim (rtloop) $version' ]"
check "the manual pages: rtde-sim(1), rtloop(7), rtloop_loop.h(3)" \
	sh -c 'man -w rtde-sim && man -w 7 rtloop && man -w 3 rtloop_loop.h'
check "the control script is in /usr/share/rtloop" [ -s /usr/share/rtloop/rtloop_control.script ]

# ---- 5. C and CMake consumers against the installed rtde-sim -------------------------
examples=/usr/share/doc/rtloop/examples
cp -r "$examples" "$tmp/ex-make"
check "a C consumer: the examples' Makefile, pkg-config from /usr, -Werror" \
	timeout 300 make -C "$tmp/ex-make" c CFLAGS="-O2 -Werror"
check "a CMake consumer: find_package(rtloop) with no prefix, -Werror" \
	sh -c "timeout 120 cmake -S '$examples' -B '$tmp/ex-cmake' -DCMAKE_C_FLAGS=-Werror \
		-DCMAKE_CXX_FLAGS=-Werror && timeout 300 cmake --build '$tmp/ex-cmake'"
start_sim rtde-sim --duration 60
runs() { # description, expected line (ERE), program, args...
	_d=$1
	_want=$2
	shift 2
	if [ -n "$port" ] && timeout 30 "$@" >"$tmp/run.out" 2>&1 && grep -Eq "$_want" "$tmp/run.out"; then
		ok "$_d: $(grep -E "$_want" "$tmp/run.out" | head -n 1)"
	else
		not_ok "$_d" "$tmp/run.out"
	fi
}
runs "the C consumer (minimal, Makefile build) runs its 5 s" "stop at exit: the arm was at rest" \
	"$tmp/ex-make/minimal" "$port"
runs "the CMake consumer (cpp_loop) for 2 s" "^cpp_loop: [1-9][0-9]* steps.*stop confirmed at rest" \
	"$tmp/ex-cmake/cpp_loop" "$port" 2
check "the consumers link /usr's librtloop.so.0.1" \
	sh -c "ldd '$tmp/ex-make/minimal' | grep -F '/usr/lib/' | grep -F librtloop.so"

# ---- 6. Python from the installed package alone ----------------------------------------
check "python3 -c 'import rtloop' (no PYTHONPATH): $version from /usr/lib/python3/dist-packages" \
	env -u PYTHONPATH /usr/bin/python3 -c "
import rtloop
assert rtloop.__version__ == '$version', rtloop.__version__
assert rtloop.__file__ == '/usr/lib/python3/dist-packages/rtloop/__init__.py', rtloop.__file__"
check "the installed package receives from its Sim" \
	env -u PYTHONPATH timeout 30 /usr/bin/python3 -c '
import rtloop
with rtloop.Sim() as sim, rtloop.Receive(sim.host, sim.port) as r:
    assert r.read(timeout=5.0) is not None and len(r.actual_q()) == 6'
check "its type information: stubtest and mypy --strict on the installed package" \
	sh -c "env -u PYTHONPATH /usr/bin/python3 '$src/tests/python/typecheck.py' stubtest \
		'$src/tests/python/stubtest-allowlist.txt' &&
		env -u PYTHONPATH /usr/bin/python3 '$src/tests/python/typecheck.py' strict \
		'$src/apps/examples/experiment.py' '$src/apps/examples/motion.py'"
check "a UDP control loop from Python: the installed motion.py against its Sim" \
	env -u PYTHONPATH timeout 60 /usr/bin/python3 "$examples/motion.py" --seconds 1

stop_sim
finish check-deb
