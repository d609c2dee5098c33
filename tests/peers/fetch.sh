#!/bin/sh
# SPDX-License-Identifier: MIT
#
# Build the third-party UR client libraries that the peers suite runs
# against rtde-sim (docs/peers.md): SDU Robotics' ur_rtde 1.5.8 and
# Universal Robots' Client Library (URCL), from pinned, checksummed source
# archives, and then the suite's own programs (tests/peers/CMakeLists.txt)
# against them.
#
#   tests/peers/fetch.sh BUILD_DIR [ARCHIVE_DIR]
#
# ARCHIVE_DIR (or $PEERS) holds ur_rtde-5a02a9a.tar.gz and
# urcl-c5d1e26c.tar.gz; without it the same pinned commits are downloaded,
# when there is a network. Every archive is checked against
# tests/peers/SHA256SUMS before it is unpacked: an archive named there must
# match its checksum, and every unpacked tree must match its tree checksum
# (which is what a download, packed by another gzip, is held to).
#
# The peers are not rtloop's code: they are unpacked and built under
# BUILD_DIR (src/, build/, prefix/), never inside the checkout. Each is
# built once: a stamp holds the checksum and the flags it was built from,
# so a second run with the same archives rebuilds nothing.
#
# BUILD_DIR/status tells the tests what happened: "ok", "skipped: why" or
# "failed: why". Exit status: 0 built (or already built), 77 skipped (no
# archives and no network: nothing was built), 1 failed (a checksum
# mismatch, a build error), 2 usage.
set -eu

here=$(cd "$(dirname "$0")" && pwd)
sums=$here/SHA256SUMS

if [ $# -lt 1 ] || [ $# -gt 2 ] || [ "$1" = "-h" ] || [ "$1" = "--help" ]; then
	echo "usage: $0 BUILD_DIR [ARCHIVE_DIR]   (or PEERS=ARCHIVE_DIR)" >&2
	exit 2
fi
mkdir -p "$1"
out=$(cd "$1" && pwd)
archives=${2:-${PEERS:-}}
jobs=${PEERS_JOBS:-2}

say() { echo "peers: $*"; }
finish() { # status, exit code, message
	echo "$1${3:+: $3}" >"$out/status"
	[ -z "${3:-}" ] || say "$3" >&2
	exit "$2"
}

# The peers, one line each: name, archive, top directory of the archive,
# download URL of the pinned commit, the one library target, a directory
# left out of the tree checksum (the pinned ur_rtde archive has no doc/)
# and the CMake flags.
peer_list() {
	cat <<'EOF'
ur_rtde ur_rtde-5a02a9a.tar.gz ur_rtde-5a02a9a https://github.com/medra-ai/ur_rtde/archive/5a02a9a6ac4e2ec38dd647c15921cee5936f2817.tar.gz rtde doc -DPYTHON_BINDINGS=OFF -DEXAMPLES=OFF -DDOC=OFF
urcl urcl-c5d1e26c.tar.gz urcl-c5d1e26c https://github.com/UniversalRobots/Universal_Robots_Client_Library/archive/c5d1e26c719d4c681ba03bf1a43d64806021557d.tar.gz urcl - -DBUILDING_TESTS=OFF
EOF
}

sum_of() { # name in SHA256SUMS
	awk -v n="$1" '$1 !~ /^#/ && $2 == n { print $1 }' "$sums"
}

file_sum() { sha256sum "$1" | cut -d' ' -f1; }

# The checksum of an unpacked tree: sha256 of the sorted list of its
# files' checksums, without the directory @2 ('-' = none).
tree_sum() {
	(cd "$1" && find . -type f ! -path "./$2/*" -exec sha256sum {} + |
		LC_ALL=C sort -k2 | sha256sum | cut -d' ' -f1)
}

download() { # url, file
	if command -v curl >/dev/null 2>&1; then
		curl -fsSL --connect-timeout 10 --max-time 300 -o "$2" "$1"
	elif command -v wget >/dev/null 2>&1; then
		wget -q -T 10 -O "$2" "$1"
	else
		return 1
	fi
}

# Find or download each archive, and check the archives before anything
# is unpacked (a download is held to its tree checksum below).
mkdir -p "$out/downloads"
rm -f "$out/downloads/found" "$out/downloads/missing"
peer_list | while read -r name archive dir url target skip flags; do
	f=
	[ -n "$archives" ] && [ -f "$archives/$archive" ] && f=$archives/$archive
	[ -n "$f" ] || [ ! -f "$out/downloads/$archive" ] || f=$out/downloads/$archive
	if [ -z "$f" ]; then
		say "$archive not in ${archives:-(no archive directory)}: downloading $url"
		if download "$url" "$out/downloads/$archive.part"; then
			mv "$out/downloads/$archive.part" "$out/downloads/$archive"
			f=$out/downloads/$archive
		else
			rm -f "$out/downloads/$archive.part"
			echo "$archive" >>"$out/downloads/missing"
			continue
		fi
	fi
	want=$(sum_of "$archive")
	got=$(file_sum "$f")
	if [ "$got" != "$want" ] && [ "$f" != "$out/downloads/$archive" ]; then
		echo "$name: $f has sha256 $got, tests/peers/SHA256SUMS says ${want:-nothing}" >"$out/fail"
		exit 1
	fi
	echo "$name $f" >>"$out/downloads/found"
done || finish failed 1 "$(cat "$out/fail")"
if [ -f "$out/downloads/missing" ]; then
	missing=$(tr '\n' ' ' <"$out/downloads/missing")
	rm -f "$out/downloads/missing" "$out/downloads/found"
	finish skipped 77 "the peer libraries are not built: no archive of ${missing% } \
in ${archives:-(no archive directory given)} and no download (no network?). To run the peers \
suite, put the pinned archives (tests/peers/SHA256SUMS) in a directory and run \
'make test PEERS=DIR' or 'tests/peers/fetch.sh $out DIR'"
fi

# The build type: -O1, not Release. ur_rtde's Release build takes three
# minutes on two cores and its -O1 build half a minute, and nothing the
# suite measures depends on the peers' optimisation (their sources are
# built unchanged either way).
build_type="-DCMAKE_BUILD_TYPE=None -DCMAKE_CXX_FLAGS=-O1"

# Check, unpack and build each one that is not built yet.
peer_list | while read -r name archive dir url target skip flags; do
	f=$(awk -v n="$name" '$1 == n { print $2 }' "$out/downloads/found")
	want=$(sum_of "$archive")
	want_tree=$(sum_of "$dir/")
	[ -n "$want" ] && [ -n "$want_tree" ] || { echo "$name: no checksum in $sums" >"$out/fail"; exit 1; }
	got=$(file_sum "$f")
	stamp="$got $flags $build_type target=$target"
	if [ -f "$out/$name.stamp" ] && [ "$(cat "$out/$name.stamp")" = "$stamp" ]; then
		say "$name: built from $archive, nothing to do"
		continue
	fi
	say "$name: unpacking $f"
	rm -rf "$out/src/$dir" "$out/src/.unpack" "$out/build/$name" "$out/$name.stamp"
	mkdir -p "$out/src/.unpack"
	tar -xzf "$f" -C "$out/src/.unpack"
	# A download is named after the commit, the pinned archive after its prefix.
	mv "$out/src/.unpack"/* "$out/src/$dir"
	rmdir "$out/src/.unpack"
	[ "$skip" = - ] || rm -rf "${out:?}/src/$dir/$skip"
	tree=$(tree_sum "$out/src/$dir" "$skip")
	if [ "$tree" != "$want_tree" ]; then
		echo "$name: the tree of $f has checksum $tree, tests/peers/SHA256SUMS says $want_tree" >"$out/fail"
		exit 1
	fi
	say "$name: building the $target library (-O1, -j$jobs)"
	t0=$(date +%s)
	# shellcheck disable=SC2086 # the flags are words
	if ! { cmake -S "$out/src/$dir" -B "$out/build/$name" $build_type \
		-DCMAKE_INSTALL_PREFIX="$out/prefix" $flags >"$out/$name.log" 2>&1 &&
		cmake --build "$out/build/$name" --target "$target" -j "$jobs" >>"$out/$name.log" 2>&1 &&
		cmake --install "$out/build/$name" >>"$out/$name.log" 2>&1; }; then
		tail -n 30 "$out/$name.log" >&2
		echo "$name: the build failed, see $out/$name.log" >"$out/fail"
		exit 1
	fi
	echo "$stamp" >"$out/$name.stamp"
	say "$name: built in $(($(date +%s) - t0)) s, installed in $out/prefix"
done || { rm -f "$out/downloads/found"; finish failed 1 "$(cat "$out/fail" 2>/dev/null || echo "failed")"; }
rm -f "$out/downloads/found" "$out/fail"

# The suite's programs, against the installed peers (incremental: a no-op
# when nothing changed).
# shellcheck disable=SC2086 # the build type is words
if ! { cmake -S "$here" -B "$out/tests" $build_type \
	-DCMAKE_PREFIX_PATH="$out/prefix" >"$out/tests.log" 2>&1 &&
	cmake --build "$out/tests" -j "$jobs" >>"$out/tests.log" 2>&1; }; then
	tail -n 30 "$out/tests.log" >&2
	finish failed 1 "the test programs did not build, see $out/tests.log"
fi
finish ok 0
