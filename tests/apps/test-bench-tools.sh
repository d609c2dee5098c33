#!/bin/sh
# SPDX-License-Identifier: MIT
# The two micro-benchmarks as commands: --help, a bad flag, and a short run
# whose JSON parses with the keys the docs name. Timing is not judged here
# (benchmarks are not tests). TAP output.
# Usage: test-bench-tools.sh RING_BENCH CODEC_BENCH
set -u
ring=$1
codec=$2
# shellcheck source=SCRIPTDIR/tap.sh
. "$(dirname "$0")/tap.sh"
tap_init rtl-bench-tools
# shellcheck disable=SC2317 # invoked by check_quiet
bad_flag() { # tool: exits 2 and names the flag
	run_cmd "$1" --bogus-flag
	exits_saying 2 --bogus-flag
}
plan 8
check_quiet "ring-bench --help exits 0" "$ring" --help
check_quiet "ring-bench names a bad flag and exits 2" bad_flag "$ring"
check_quiet "ring-bench --quick --reps 1 runs" "$ring" --quick --reps 1 --json "$tmp/rb.json"
check_quiet "ring-bench JSON has the probe and the cases" json_has "$tmp/rb.json" probe_ns_one_way cases machine
check_quiet "rtde-codec-bench --help exits 0" "$codec" --help
check_quiet "rtde-codec-bench names a bad flag and exits 2" bad_flag "$codec"
check_quiet "rtde-codec-bench --reps 1 runs" "$codec" --reps 1 -R typical --json "$tmp/cb.json"
check_quiet "rtde-codec-bench JSON has the recipes" json_has "$tmp/cb.json" recipes machine reps
finish
