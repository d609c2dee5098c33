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
# With DRFL=drfl (librtloop holds the DRFL table: the vendor's or, in CI,
# the stand-in of -Ddrfl_standin=true) also a circle over --transport
# drfl against rtde-sim --udp; without it, --transport drfl must fail
# naming the missing library and the fix.
# Usage: test-circle-app.sh path/to/rtloop-circle path/to/rtde-sim [drfl|no-drfl]
# Writes TAP to stdout; exits non-zero when a check fails.
set -u

app=${1:?usage: $0 path/to/rtloop-circle path/to/rtde-sim}
sim=${2:?usage: $0 path/to/rtloop-circle path/to/rtde-sim}
drfl=${3:-no-drfl}
BOUND_MM=3
# shellcheck source=SCRIPTDIR/tap.sh
. "$(dirname "$0")/tap.sh"
tap_init rtl-circle-app
run_timeout=30 # run: each run of the app bounded

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
check_exits 0 --help
check "--help documents --transport, --radius and --duration" \
	in_order "$out" --transport --radius --duration
check_unknown_flag --bogus
run --transport carrier-pigeon
check "a bad --transport exits 2 naming it" exits_saying 2 --transport
run --radius 5
check "a radius out of range exits 2 naming --radius" exits_saying 2 --radius

# --- over UDP: rtde-sim --udp at 1 kHz -----------------------------------------
if start_sim "$sim_udp_port" --udp --udp-port 0 --duration 30 --json "$tmp/sim-udp.json"; then
	ok "rtde-sim --udp serves on port $port"
	circle udp
else
	fail "rtde-sim --udp started (log: $(cat "$tmp/sim.log"))"
fi
stop_sim
py_check "udp: the arm ends at rest, the controller's time-out never fired" \
	"$sim_left_safe_py" "$tmp/sim-udp.json"

# --- over RTDE: rtde-sim at 500 Hz ----------------------------------------------
if start_sim "$sim_rtde_port" --port 0 --duration 30 --json "$tmp/sim-rtde.json"; then
	ok "rtde-sim listens on port $port"
	circle rtde
else
	fail "rtde-sim started (log: $(cat "$tmp/sim.log"))"
fi
stop_sim
py_check "rtde: the arm ends at rest, the executor's watchdog never tripped" \
	"$sim_left_safe_py" "$tmp/sim-rtde.json"

# --- over DRFL: the DRFL table on rtde-sim --udp, or the error without it ------
if [ "$drfl" = drfl ]; then
	if start_sim "$sim_udp_port" --udp --udp-port 0 --duration 30 --json "$tmp/sim-drfl.json"; then
		ok "rtde-sim --udp serves on port $port (for DRFL)"
		circle drfl
		check "drfl: the report counts what DRFL handed over" \
			in_order "$out" "DRFL:" "states handed over" "alarms" "calls sent"
	else
		fail "rtde-sim --udp started (log: $(cat "$tmp/sim.log"))"
	fi
	stop_sim
	py_check "drfl: the arm ends at rest, the controller's time-out never fired" \
		"$sim_left_safe_py" "$tmp/sim-drfl.json"
else
	run --transport drfl --port 9 --duration 1
	check "without DRFL, --transport drfl exits 1 naming the library and the fix" \
		exits_saying 1 "built without Doosan's DRFL library; fix: install DRFL"
fi

finish
