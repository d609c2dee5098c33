#!/bin/sh
# SPDX-License-Identifier: MIT
#
# rtloop used from another lab's stack, the way docs/install.md tells it:
# a fresh build installed to a real temporary prefix, then
#   1. the install (-Dtests=false: no Criterion, no suite built): what it
#      holds, that the installed tools run without LD_LIBRARY_PATH;
#   2. CMake consumers (find_package(rtloop)) in C and in C++, with the
#      shared and the static library, and the version file's rules;
#   3. the installed examples, built with their Makefile (pkg-config) and
#      their CMakeLists.txt, all with -Werror; a static link with pkg-config;
#   4. the installed rtde-sim on a loopback port, and against it the C++
#      example, the CMake-built external-loop example and a recording read
#      back by read_recording, each bounded by timeout(1);
#   5. every installed header alone as C17, C++17 and C++20 (-Wall -Wextra
#      -Werror -pedantic);
#   6. the same prefix moved elsewhere still works: the CMake package as it
#      is (relocatable), pkg-config with --define-variable=prefix=.
# Prints "ok - ..." / "not ok - ..." per check and exits 1 if any failed.
# Usage: .ci/check-consumers.sh [SOURCE_DIR] (default: this checkout).
# Environment: KEEP=1 keeps the scratch directory; MESON_OPTS extra options
# for meson setup.
set -u

src=$(cd "${1:-$(dirname "$0")/..}" && pwd) || exit 2
tmp=$(mktemp -d "${TMPDIR:-/tmp}/rtloop-consumers.XXXXXX") || exit 2
prefix=$tmp/prefix
# shellcheck source=.ci/checks.sh
. "$(dirname "$0")/checks.sh"

cleanup() {
	stop_sim
	if [ "${KEEP:-0}" = 1 ]; then echo "# kept $tmp"; else rm -rf "$tmp"; fi
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

section() { echo "# --- $*"; }

# ---- 1. build and install ---------------------------------------------------------------
section "a fresh build of $src, installed to $prefix"
# shellcheck disable=SC2086 # MESON_OPTS is a list of options
# -Dtests=false, as docs/install.md says for an install: Meson builds every
# test program as part of its default target (which meson install builds),
# and the suites need Criterion.
if ! timeout 600 meson setup "$tmp/build" "$src" --prefix="$prefix" -Dtests=false \
	-Dwerror=true ${MESON_OPTS:-} >"$tmp/setup.log" 2>&1; then
	not_ok "meson setup --prefix=<tmp>/prefix -Dtests=false -Dwerror=true" "$tmp/setup.log"
	exit 1
fi
ok "meson setup --prefix=<tmp>/prefix -Dtests=false -Dwerror=true"
if ! timeout 1800 meson install -C "$tmp/build" >"$tmp/install.log" 2>&1; then
	not_ok "meson install (builds the default targets)" "$tmp/install.log"
	exit 1
fi
ok "meson install (builds the default targets)"

# Where Meson put the library (lib/ or lib/<triplet>/), found from the
# CMake package, which sits in <libdir>/cmake/rtloop.
config=$(find "$prefix" -name rtloopConfig.cmake | head -n 1)
libdir=$(cd "$(dirname "$config")/../.." 2>/dev/null && pwd)
examples=$prefix/share/doc/rtloop/examples
echo "# libdir: ${libdir:-not found}"

check "meson install built no test program (-Dtests=false)" \
	sh -c "! find '$tmp/build' -type f -name 'test-*' -perm -u+x | grep ."
missing=
for f in include/rtloop/loop.h include/rtloop/version.h include/rtloop/rtde_transport.h \
	bin/rtde-sim bin/rtde-record share/rtloop/rtloop_control.script; do
	[ -e "$prefix/$f" ] || missing="$missing $f"
done
for f in librtloop.so librtloop.a pkgconfig/rtloop.pc cmake/rtloop/rtloopConfig.cmake \
	cmake/rtloop/rtloopConfigVersion.cmake; do
	[ -e "$libdir/$f" ] || missing="$missing <libdir>/$f"
done
for f in minimal.c external_loop.c read_recording.c cpp_loop.cpp CMakeLists.txt Makefile; do
	[ -e "$examples/$f" ] || missing="$missing share/doc/rtloop/examples/$f"
done
check "the prefix holds headers, tools, both libraries, pkg-config, CMake package, examples${missing:+ (missing:$missing)}" \
	[ -z "$missing" ]
check "the CMake package names no absolute install path (relocatable)" \
	sh -c "! grep -F '$prefix' '$libdir/cmake/rtloop/rtloopConfig.cmake'"
check "installed tools link librtloop statically (no librtloop.so in their NEEDED)" \
	sh -c "! readelf -d '$prefix/bin/rtde-sim' '$prefix/bin/rtde-record' | grep -F 'librtloop.so'"
check "installed rtde-sim runs without LD_LIBRARY_PATH" \
	env -u LD_LIBRARY_PATH timeout 10 "$prefix/bin/rtde-sim" --help
# The Python package, where meson install put it (the prefix's site
# directory), used by Debian's interpreter: a Receive against the Sim.
pysite=$(dirname "$(find "$prefix" -path '*/rtloop/__init__.py' | head -n 1)")
check "the installed Python package imports and receives from its Sim (${pysite#"$prefix"/})" \
	env PYTHONPATH="$(dirname "$pysite")" timeout 30 /usr/bin/python3 -c '
import rtloop
with rtloop.Sim() as sim, rtloop.Receive("127.0.0.1", sim.port) as r:
    assert r.read(timeout=5.0) is not None and len(r.actual_q()) == 6
'

# ---- 2. CMake consumers ------------------------------------------------------------------
section "CMake consumers: find_package(rtloop CONFIG) with CMAKE_PREFIX_PATH=<prefix>"
mkdir -p "$tmp/consumer"
cat >"$tmp/consumer/CMakeLists.txt" <<'CMAKE'
cmake_minimum_required(VERSION 3.13)
project(rtloop_consumer LANGUAGES C CXX)
find_package(rtloop 0.1 CONFIG REQUIRED)
add_executable(consumer_c consumer.c)
target_link_libraries(consumer_c PRIVATE rtloop::rtloop)
add_executable(consumer_c_static consumer.c)
target_link_libraries(consumer_c_static PRIVATE rtloop::rtloop_static)
add_executable(consumer_cpp consumer.cpp)
set_target_properties(consumer_cpp PROPERTIES CXX_STANDARD 17 CXX_STANDARD_REQUIRED ON)
target_link_libraries(consumer_cpp PRIVATE rtloop::rtloop)
foreach(t consumer_c consumer_c_static consumer_cpp)
  target_compile_options(${t} PRIVATE -Wall -Wextra -Werror -pedantic)
endforeach()
CMAKE
cp "$src/.ci/ring-consumer.c" "$tmp/consumer/consumer.c"
cat >"$tmp/consumer/consumer.cpp" <<'CPP'
#include <cstdio>
#include <memory>
#include <rtloop/loop.h>
#include <rtloop/ring.h>
#include <rtloop/rtde_transport.h>
#include <rtloop/version.h>
struct RingDeleter {
	void operator()(rtl_ring *r) const noexcept { rtl_ring_destroy(r); }
};
int main()
{
	rtl_ring *raw = nullptr;
	unsigned long v = 7, out = 0;

	if (rtl_ring_create(&raw, 16, sizeof(v), NULL) != 0)
		return 1;
	std::unique_ptr<rtl_ring, RingDeleter> r(raw);
	rtl_ring_push_sz(r.get(), &v, sizeof(v));
	rtl_ring_pop_sz(r.get(), &out, sizeof(out));
	std::printf("consumer ok: %lu, rtloop %s\n", out, rtl_version());
	return out == 7 ? 0 : 1;
}
CPP
cmake_consumer() { # name, targets...: configure once, build the targets
	[ -f "$tmp/consumer-build/CMakeCache.txt" ] ||
		timeout 120 cmake -S "$tmp/consumer" -B "$tmp/consumer-build" \
			-DCMAKE_PREFIX_PATH="$prefix" || return 1
	timeout 300 cmake --build "$tmp/consumer-build" --target "$@"
}
runs_ok() { # program: runs without LD_LIBRARY_PATH and says "consumer ok: 7"
	env -u LD_LIBRARY_PATH timeout 10 "$1" >"$tmp/run.out" 2>&1 || return 1
	cat "$tmp/run.out"
	grep -q '^consumer ok: 7, rtloop ' "$tmp/run.out"
}
check "a C consumer links rtloop::rtloop" cmake_consumer consumer_c
check "... and runs from its build folder without LD_LIBRARY_PATH (CMake's rpath)" \
	runs_ok "$tmp/consumer-build/consumer_c"
check "... its rpath names <prefix>/<libdir>" \
	sh -c "readelf -d '$tmp/consumer-build/consumer_c' | grep -E 'R(UN)?PATH' | grep -F '$libdir'"
check "a C consumer links rtloop::rtloop_static (threads, m, expat, ... from the package)" \
	cmake_consumer consumer_c_static
check "... needs no librtloop.so" \
	sh -c "! readelf -d '$tmp/consumer-build/consumer_c_static' | grep -F librtloop.so"
check "... and runs" runs_ok "$tmp/consumer-build/consumer_c_static"
check "a C++17 consumer links rtloop::rtloop" cmake_consumer consumer_cpp
check "... and runs" runs_ok "$tmp/consumer-build/consumer_cpp"

# The version file: which requests 0.1.0 meets (for 0.x: the same major and
# minor, at least the patch asked for), and a 32-bit project meets none.
version=$(sed -n 's/^set(PACKAGE_VERSION "\(.*\)")$/\1/p' "$libdir/cmake/rtloop/rtloopConfigVersion.cmake")
major=${version%%.*}
rest=${version#*.}
minor=${rest%%.*}
patch=${rest#*.}
mkdir -p "$tmp/version"
# shellcheck disable=SC2016 # CMake's ${...}, not the shell's
{
	echo 'cmake_minimum_required(VERSION 3.19)'
	echo 'project(rtloop_version_check LANGUAGES C)'
	echo 'function(want request expect)'
	echo '  find_package(rtloop ${request} CONFIG QUIET)'
	echo '  set(got 0)'
	echo '  if(rtloop_FOUND)'
	echo '    set(got 1)'
	echo '  endif()'
	echo '  if(NOT got EQUAL expect)'
	echo '    message(SEND_ERROR "find_package(rtloop ${request}): found=${got}, expected ${expect}")'
	echo '  else()'
	echo '    message(STATUS "find_package(rtloop ${request}): found=${expect} as expected")'
	echo '  endif()'
	echo 'endfunction()'
	echo "want(\"\" 1)"
	echo "want(\"$major.$minor\" 1)"
	echo "want(\"$version\" 1)"
	echo "want(\"$version;EXACT\" 1)"
	echo "want(\"$major.$minor.$((patch + 1))\" 0)"
	echo "want(\"$major.$((minor + 1))\" 0)"
	echo "want(\"$((major + 1)).0\" 0)"
	if [ "$major" = 0 ] && [ "$minor" -gt 0 ]; then
		echo "want(\"0.$((minor - 1))\" 0)"
		echo "want(\"0.$((minor - 1))...0.$((minor + 1))\" 0)"
	fi
	echo "want(\"$major.$minor...$major.$((minor + 2))\" 1)"
	echo "want(\"$major.$minor...<$major.$minor.$((patch + 1))\" 1)"
	echo "want(\"$major.$minor.$((patch + 1))...$major.$((minor + 2))\" 0)"
	echo 'set(CMAKE_SIZEOF_VOID_P 4)'
	echo "want(\"$major.$minor\" 0)"
	echo "want(\"\" 0)"
} >"$tmp/version/CMakeLists.txt"
check "rtloopConfigVersion.cmake ($version): same major.minor and >= patch, ranges, 32-bit refused" \
	timeout 120 cmake -S "$tmp/version" -B "$tmp/version-build" -DCMAKE_PREFIX_PATH="$prefix"

# ---- 3. the installed examples -----------------------------------------------------------
section "the installed examples ($examples)"
cp -r "$examples" "$tmp/ex-make"
check "Makefile (pkg-config): the C examples, -Werror" \
	env PKG_CONFIG_PATH="$libdir/pkgconfig" timeout 300 make -C "$tmp/ex-make" c \
	CFLAGS="-O2 -Werror"
check "Makefile (pkg-config): the C++ example, -Werror" \
	env PKG_CONFIG_PATH="$libdir/pkgconfig" timeout 300 make -C "$tmp/ex-make" cpp \
	CXXFLAGS="-O2 -Werror"
cat >"$tmp/pc-static.c" <<'C'
#include <stdio.h>
#include <rtloop/version.h>
int main(void)
{
	return printf("consumer ok: 7, rtloop %s\n", rtl_version()) > 0 ? 0 : 1;
}
C
pc_static() ( # the static link of docs/install.md, with pkg-config alone (a subshell)
	export PKG_CONFIG_PATH="$1/pkgconfig"
	shift
	# shellcheck disable=SC2046 # pkg-config prints lists of flags
	cc -std=c17 -Wall -Wextra -Werror -pedantic "$tmp/pc-static.c" -o "$tmp/pc-static" \
		$(pkg-config "$@" --cflags rtloop) -L"$(pkg-config "$@" --variable=libdir rtloop)" \
		-Wl,-Bstatic -lrtloop -Wl,-Bdynamic \
		$(pkg-config "$@" --static --libs-only-l rtloop | sed 's/-lrtloop//') &&
		! readelf -d "$tmp/pc-static" | grep -F librtloop.so && runs_ok "$tmp/pc-static"
)
check "pkg-config --static: a program linking librtloop.a (docs/install.md)" \
	pc_static "$libdir"
check "CMakeLists.txt: configure against the prefix" \
	timeout 120 cmake -S "$examples" -B "$tmp/ex-cmake" -DCMAKE_PREFIX_PATH="$prefix" \
	-DCMAKE_C_FLAGS=-Werror -DCMAKE_CXX_FLAGS=-Werror
check "CMakeLists.txt: the C examples, -Werror" \
	timeout 300 cmake --build "$tmp/ex-cmake" --target minimal external_loop read_recording
check "CMakeLists.txt: the C++ example, -Werror" \
	timeout 300 cmake --build "$tmp/ex-cmake" --target cpp_loop

# ---- 4. against the installed rtde-sim ---------------------------------------------------
section "the installed rtde-sim (e-Series, 500 Hz) on a loopback port"
start_sim "$prefix/bin/rtde-sim" --profile eseries --duration 60

against_sim() { # description, expected output line (ERE), program, args...
	_d=$1
	_want=$2
	shift 2
	if [ -z "$port" ]; then
		not_ok "$_d (no simulator)"
	elif [ ! -x "$1" ]; then
		not_ok "$_d ($1 was not built)"
	elif env -u LD_LIBRARY_PATH timeout 30 "$@" >"$tmp/run.out" 2>&1; then
		if grep -Eq "$_want" "$tmp/run.out"; then
			ok "$_d: $(grep -E "$_want" "$tmp/run.out" | head -n 1)"
		else
			not_ok "$_d: exit 0 but no line matching '$_want'" "$tmp/run.out"
		fi
	else
		not_ok "$_d: exit status $?" "$tmp/run.out"
	fi
}
confirmed='stop confirmed at rest'
against_sim "cpp_loop (Makefile build) for 2 s" "^cpp_loop: [1-9][0-9]* steps.*$confirmed" \
	"$tmp/ex-make/cpp_loop" "$port" 2
against_sim "cpp_loop (CMake build) for 2 s" "^cpp_loop: [1-9][0-9]* steps.*$confirmed" \
	"$tmp/ex-cmake/cpp_loop" "$port" 2
against_sim "external_loop (CMake build) for 2 s" \
	"^external_loop: [1-9][0-9]* frames read.*$confirmed" "$tmp/ex-cmake/external_loop" "$port" 2
against_sim "minimal (Makefile build) runs its 5 s" "stop at exit: the arm was at rest" \
	"$tmp/ex-make/minimal" "$port"
if [ -n "$port" ] && env -u LD_LIBRARY_PATH timeout 20 "$prefix/bin/rtde-record" --port "$port" \
	--fields timestamp,actual_q --duration 1 --binary -o "$tmp/rec.rtlrec" >"$tmp/log" 2>&1; then
	ok "the installed rtde-record records 1 s (binary)"
else
	not_ok "the installed rtde-record records 1 s (binary)" "$tmp/log"
fi
against_sim "read_recording (CMake build) summarises it" \
	"^read_recording: binary, [1-9][0-9]* packages, 0 lost" "$tmp/ex-cmake/read_recording" \
	"$tmp/rec.rtlrec"
stop_sim
check "rtde-sim: the arm at rest at the end, no watchdog trip, no non-finite input" \
	python3 -c 'import json, sys
d = json.load(open(sys.argv[1]))
r = d["robot"]
sys.exit(0 if r["at_rest"] and not r["watchdog_trips"] and not d["stats"]["nonfinite_in"] else 1)' \
	"$tmp/sim.json"

# ---- 5. every installed header alone, as C and as C++ ------------------------------------
section "every installed header alone: C17, C++17, C++20, -Wall -Wextra -Werror -pedantic"
for h in "$prefix"/include/rtloop/*.h; do
	name=rtloop/$(basename "$h")
	printf '#include <%s>\n#include <%s>\nint rtl_header_probe;\n' "$name" "$name" >"$tmp/hdr.c"
	cp "$tmp/hdr.c" "$tmp/hdr.cpp"
	for lang in c17 c++17 c++20; do
		case $lang in
		c17) cmd="cc -std=c17 -x c $tmp/hdr.c" ;;
		*) cmd="c++ -std=$lang -x c++ $tmp/hdr.cpp" ;;
		esac
		# shellcheck disable=SC2086 # $cmd is a command line
		if timeout 60 $cmd -fsyntax-only -Wall -Wextra -Werror -pedantic \
			-I"$prefix/include" >"$tmp/log" 2>&1; then
			ok "<$name> as $lang"
		else
			not_ok "<$name> as $lang" "$tmp/log"
		fi
	done
done
check "the installed headers' call shape (tests/headers/check-call-shape.py --include)" python3 "$src/tests/headers/check-call-shape.py" --inline --include "$prefix/include"

# ---- 6. relocation -------------------------------------------------------------------------
section "the prefix moved elsewhere"
cp -a "$prefix" "$tmp/moved"
rm -rf "$prefix" # nothing may still point at the old place
check "a C consumer configures, builds and runs against the moved prefix" sh -c "
	timeout 120 cmake -S '$tmp/consumer' -B '$tmp/moved-build' -DCMAKE_PREFIX_PATH='$tmp/moved' &&
	timeout 300 cmake --build '$tmp/moved-build' --target consumer_c consumer_c_static &&
	env -u LD_LIBRARY_PATH timeout 10 '$tmp/moved-build/consumer_c' &&
	timeout 10 '$tmp/moved-build/consumer_c_static' &&
	grep -F '$tmp/moved/' '$tmp/moved-build/CMakeCache.txt' >/dev/null"

moved_libdir=$tmp/moved/${libdir#"$prefix"/}
check "pkg-config --define-variable=prefix=<moved> links and runs against the moved prefix" \
	pc_static "$moved_libdir" --define-variable=prefix="$tmp/moved"

finish check-consumers
