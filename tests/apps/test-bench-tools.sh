#!/bin/sh
# SPDX-License-Identifier: MIT
# The two micro-benchmarks as commands: --help, a bad flag, and a short run
# whose JSON parses with the keys the docs name. Timing is not judged here
# (benchmarks are not tests). TAP output.
# Usage: test-bench-tools.sh RING_BENCH CODEC_BENCH
set -u
ring=$1
codec=$2
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT INT TERM
n=0
check() { # description, then a command that must succeed
	n=$((n + 1))
	d=$1
	shift
	if "$@" >"$dir/out" 2>&1; then
		echo "ok $n - $d"
	else
		echo "not ok $n - $d"
		sed 's/^/# /' "$dir/out" | tail -5
	fi
}
bad_flag() { # tool: exits 2 and names the flag
	"$1" --bogus-flag >"$dir/o" 2>"$dir/e"
	[ $? -eq 2 ] && grep -q -- "--bogus-flag" "$dir/e"
}
json_has() { # file, keys...
	f=$1
	shift
	python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); sys.exit(0 if all(k in d for k in sys.argv[2:]) else 1)' "$f" "$@"
}
echo "1..8"
check "ring-bench --help exits 0" "$ring" --help
check "ring-bench names a bad flag and exits 2" bad_flag "$ring"
check "ring-bench --quick --reps 1 runs" "$ring" --quick --reps 1 --json "$dir/rb.json"
check "ring-bench JSON has the probe and the cases" json_has "$dir/rb.json" probe_ns_one_way cases machine
check "rtde-codec-bench --help exits 0" "$codec" --help
check "rtde-codec-bench names a bad flag and exits 2" bad_flag "$codec"
check "rtde-codec-bench --reps 1 runs" "$codec" --reps 1 -R typical --json "$dir/cb.json"
check "rtde-codec-bench JSON has the recipes" json_has "$dir/cb.json" recipes machine reps
