#!/bin/sh
# SPDX-License-Identifier: MIT
#
# Memcheck over short real sessions: rtde-sim, rtde-record and a loop
# (rtloop-admittance: the RTDE transport, both threads, the stop at exit)
# each run under valgrind against the others on loopback. A run is clean
# when valgrind reports no error (invalid reads or writes, uninitialised
# values, bad frees) and no definite or indirect leak, and the program
# itself exits 0: `--error-exitcode` turns any report into exit 99.
#
#   .ci/check-valgrind.sh [BUILD_DIR]            (default: build)
#
# Prints "ok - ..." / "not ok - ..." per program and a count line
# "# check-valgrind: N passed, N failed"; exits 1 if any failed. Real-time
# scheduling and memory locking are off under valgrind (it serialises
# threads; a SCHED_FIFO thread would starve its own tool), and the CB3
# profile (125 Hz) keeps the simulated controller within valgrind's pace.
set -u

build=${1:-build}
sim=$build/apps/rtde-sim/rtde-sim
rec=$build/apps/rtde-record/rtde-record
loop=$build/apps/rtloop-admittance/rtloop-admittance
for p in "$sim" "$rec" "$loop"; do
	if [ ! -x "$p" ]; then
		echo "check-valgrind: $p is not an executable (build $build first)" >&2
		exit 2
	fi
done
if ! command -v valgrind >/dev/null; then
	echo "check-valgrind: valgrind is not installed (apt-get install valgrind)" >&2
	exit 2
fi

tmp=$(mktemp -d "${TMPDIR:-/tmp}/rtl-valgrind.XXXXXX") || exit 2
sim_pid=
cleanup() {
	[ -n "$sim_pid" ] && kill "$sim_pid" 2>/dev/null
	if [ "${KEEP:-0}" = 1 ]; then echo "# kept $tmp"; else rm -rf "$tmp"; fi
}
trap cleanup EXIT
pass=0
failed=0
vg="valgrind --quiet --error-exitcode=99 --leak-check=full --errors-for-leak-kinds=definite,indirect --show-leak-kinds=definite,indirect"

result() { # name, status, log
	if [ "$2" -eq 0 ]; then
		pass=$((pass + 1))
		echo "ok - $1"
	else
		failed=$((failed + 1))
		echo "not ok - $1 (exit $2)"
		sed 's/^/#   /' "$3" | tail -40
	fi
}

# start_sim WRAPPER...: rtde-sim on an ephemeral port, for 30 s at most;
# sets sim_pid and port.
start_sim() {
	# shellcheck disable=SC2068
	$@ "$sim" --profile cb3 --port 0 --no-mlock --duration 30 \
		>"$tmp/sim.out" 2>"$tmp/sim.err" &
	sim_pid=$!
	port=
	i=0
	while [ -z "$port" ] && [ $i -lt 200 ]; do
		sleep 0.1
		i=$((i + 1))
		port=$(sed -n 's/.*listening on [0-9.]*:\([0-9]*\) .*/\1/p' "$tmp/sim.err" | head -1)
		kill -0 "$sim_pid" 2>/dev/null || break
	done
	[ -n "$port" ]
}
stop_sim() { # sets sim_status
	kill -INT "$sim_pid" 2>/dev/null
	wait "$sim_pid"
	sim_status=$?
	sim_pid=
}

# 1. rtde-sim under memcheck, served a recording and a loop.
if start_sim $vg --log-file="$tmp/vg-sim.log"; then
	timeout 60 "$rec" --port "$port" --fields timestamp,actual_q --duration 3 --no-rt \
		-o "$tmp/a.csv" 2>"$tmp/rec0.err"
	timeout 60 "$loop" -p "$port" -d 3 --rt off >"$tmp/loop0.out" 2>&1
	stop_sim
	cat "$tmp/sim.err" >>"$tmp/vg-sim.log"
	result "rtde-sim under memcheck: a recording and a loop, no error, no leak" "$sim_status" "$tmp/vg-sim.log"
else
	cat "$tmp/sim.err" >"$tmp/vg-sim.log"
	result "rtde-sim under memcheck starts" 1 "$tmp/vg-sim.log"
fi

# 2. rtde-record and 3. the loop under memcheck, against a plain rtde-sim.
if start_sim; then
	timeout 120 $vg --log-file="$tmp/vg-rec.log" "$rec" --port "$port" \
		--fields timestamp,actual_q,actual_TCP_pose --duration 3 --no-rt -o "$tmp/b.csv" \
		2>>"$tmp/vg-rec.log"
	result "rtde-record under memcheck: 3 s of CSV, no error, no leak" $? "$tmp/vg-rec.log"
	timeout 120 $vg --log-file="$tmp/vg-loop.log" "$loop" -p "$port" -d 3 --rt off \
		>>"$tmp/vg-loop.out" 2>&1
	st=$?
	cat "$tmp/vg-loop.out" >>"$tmp/vg-loop.log"
	result "rtloop-admittance under memcheck: 3 s of the loop and the stop, no error, no leak" \
		"$st" "$tmp/vg-loop.log"
	stop_sim
else
	cat "$tmp/sim.err" >"$tmp/sim-plain.log"
	result "rtde-sim starts" 1 "$tmp/sim-plain.log"
fi

echo "# check-valgrind: $pass passed, $failed failed"
[ "$failed" -eq 0 ]
