#!/bin/sh
# SPDX-License-Identifier: MIT
#
# rtloop-circle as a command: flags and exit codes, then a 2-second circle
# over each transport against an rtde-sim this script starts on a free port
# (--udp --udp-port 0, or --port 0; the port is read back from its start
# message). The printed RMS tracking error must parse and stay below
# BOUND_MM: the simulator's plant tracks to about 0.5-0.8 mm
# (docs/rtloop-circle.md), so the bound catches a broken controller or
# backend, not a slow machine.
# Usage: test-circle-app.sh path/to/rtloop-circle path/to/rtde-sim
# Writes TAP to stdout; exits non-zero when a check fails.
set -u

app=${1:?usage: $0 path/to/rtloop-circle path/to/rtde-sim}
sim=${2:?usage: $0 path/to/rtloop-circle path/to/rtde-sim}
BOUND_MM=3
tmp=$(mktemp -d "${TMPDIR:-/tmp}/rtl-circle-app.XXXXXX") || exit 99
sim_pid=""
stop_sim() {
	if [ -n "$sim_pid" ]; then
		kill "$sim_pid" 2>/dev/null
		wait "$sim_pid" 2>/dev/null
		sim_pid=""
	fi
}
cleanup() {
	stop_sim
	rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 1' INT TERM

n=0
failed=0
ok() { n=$((n + 1)); echo "ok $n - $1"; }
fail() { n=$((n + 1)); failed=$((failed + 1)); echo "not ok $n - $1"; }
check() { # check DESCRIPTION COMMAND...: passes when COMMAND succeeds
	desc=$1
	shift
	if "$@"; then ok "$desc"; else fail "$desc"; fi
}
contains() { case $1 in *"$2"*) return 0 ;; esac; return 1; }

# run ARGS...: runs the app (bounded), leaving $out, $err and $rc.
run() {
	timeout 30 "$app" "$@" >"$tmp/out" 2>"$tmp/err"
	rc=$?
	out=$(cat "$tmp/out")
	err=$(cat "$tmp/err")
}

# start_sim SED-PATTERN ARGS...: starts rtde-sim ARGS in the background and
# sets $port from the first line of its stderr matching SED-PATTERN (which
# captures the port), waiting up to 5 s. Returns non-zero when it did not
# come up.
start_sim() {
	pattern=$1
	shift
	"$sim" "$@" >"$tmp/sim.txt" 2>"$tmp/sim.log" &
	sim_pid=$!
	port=""
	i=0
	while [ -z "$port" ] && [ $i -lt 100 ] && kill -0 "$sim_pid" 2>/dev/null; do
		port=$(sed -n "$pattern" "$tmp/sim.log" 2>/dev/null | head -1)
		[ -n "$port" ] || sleep 0.05
		i=$((i + 1))
	done
	[ -n "$port" ]
}

# circle TRANSPORT: a 2-second circle against the simulator on $port, then
# the checks on its report.
circle() {
	run --transport "$1" --port "$port" --duration 2
	check "$1: a 2 s circle runs to the end (exit 0)" [ "$rc" -eq 0 ]
	[ "$rc" -eq 0 ] || printf '%s\n' "$err" | sed 's/^/# /'
	rms=$(printf '%s\n' "$out" | sed -n 's/.*tracking error: RMS \([0-9.][0-9.]*\) mm.*/\1/p')
	samples=$(printf '%s\n' "$out" | sed -n 's/.*s: \([0-9][0-9]*\) samples$/\1/p')
	check "$1: the RMS tracking error parses (${rms:-none} mm)" \
		awk -v r="${rms:-x}" 'BEGIN { exit !(r ~ /^[0-9]+(\.[0-9]+)?$/) }'
	check "$1: the RMS tracking error is below $BOUND_MM mm (${rms:-none} mm)" \
		awk -v r="${rms:-x}" -v b="$BOUND_MM" 'BEGIN { exit !(r ~ /^[0-9.]+$/ && r + 0 < b) }'
	check "$1: the error was sampled (${samples:-0} samples)" [ "${samples:-0}" -gt 100 ]
}

# --- flags -------------------------------------------------------------------
run --help
check "--help exits 0" [ "$rc" -eq 0 ]
check "--help documents --transport, --radius and --duration" \
	sh -c 'case "$1" in *--transport*--radius*--duration*) exit 0 ;; esac; exit 1' _ "$out"
run --bogus
check "an unknown flag exits 2" [ "$rc" -eq 2 ]
check "an unknown flag is named" contains "$err" "--bogus"
run --transport carrier-pigeon
check "a bad --transport exits 2 naming it" \
	sh -c '[ "$1" -eq 2 ] && case $2 in *--transport*) exit 0 ;; esac; exit 1' _ "$rc" "$err"
run --radius 5
check "a radius out of range exits 2 naming --radius" \
	sh -c '[ "$1" -eq 2 ] && case $2 in *--radius*) exit 0 ;; esac; exit 1' _ "$rc" "$err"

# --- over UDP: rtde-sim --udp at 1 kHz -----------------------------------------
if start_sim 's/.*UDP on [0-9.]*:\([0-9][0-9]*\).*/\1/p' --udp --udp-port 0 --duration 30; then
	ok "rtde-sim --udp serves on port $port"
	circle udp
else
	fail "rtde-sim --udp started (log: $(cat "$tmp/sim.log"))"
fi
stop_sim

# --- over RTDE: rtde-sim at 500 Hz ----------------------------------------------
if start_sim 's/.*listening on [0-9.]*:\([0-9][0-9]*\).*/\1/p' --port 0 --duration 30; then
	ok "rtde-sim listens on port $port"
	circle rtde
else
	fail "rtde-sim started (log: $(cat "$tmp/sim.log"))"
fi
stop_sim

echo "1..$n"
[ "$failed" -eq 0 ]
