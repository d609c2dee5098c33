#!/bin/sh
# SPDX-License-Identifier: MIT
#
# make demo ROBOT=... (apps/demo.sh) against rtde-sim --boot started here on
# free ports (--port 0; RTDE, dashboard and primary ports read back from its
# start messages, passed as PORT, DASHBOARD_PORT and PRIMARY_PORT): the
# read-only sequence prints its steps and writes nothing (the arm is still
# powered off after it); ARM=1 either refuses before writing anything (a
# rtloop-admittance without --upload) or runs the whole armed sequence.
# Usage: test-demo-robot.sh apps/demo.sh BUILD_DIR path/to/rtde-sim path/to/rtloop-arm
#        path/to/rtloop-admittance
# Writes TAP to stdout; exits non-zero when a check fails.
set -u

demo=${1:?usage: $0 apps/demo.sh BUILD_DIR rtde-sim rtloop-arm rtloop-admittance}
build=${2:?usage: $0 apps/demo.sh BUILD_DIR rtde-sim rtloop-arm rtloop-admittance}
sim=${3:?usage: $0 apps/demo.sh BUILD_DIR rtde-sim rtloop-arm rtloop-admittance}
arm=${4:?usage: $0 apps/demo.sh BUILD_DIR rtde-sim rtloop-arm rtloop-admittance}
adm=${5:?usage: $0 apps/demo.sh BUILD_DIR rtde-sim rtloop-arm rtloop-admittance}
# shellcheck source=SCRIPTDIR/tap.sh
. "$(dirname "$0")/tap.sh"
tap_init rtl-demo-robot
run_timeout=90

if ! start_sim "$sim_rtde_port" --boot --port 0 --duration 120; then
	fail "rtde-sim --boot started (log: $(cat "$tmp/sim.log"))"
	finish
fi
# The service ports are on the second line, which may come a moment later.
i=0
dport=
while [ -z "$dport" ] && [ "$i" -lt 100 ]; do
	dport=$(sed -n 's/.*dashboard port \([0-9][0-9]*\).*/\1/p' "$tmp/sim.log")
	[ -n "$dport" ] || sleep 0.05
	i=$((i + 1))
done
pport=$(sed -n 's/.*primary \([0-9][0-9]*\).*/\1/p' "$tmp/sim.log")
if [ -z "$dport" ] || [ -z "$pport" ]; then
	fail "rtde-sim named its dashboard and primary ports" "$(cat "$tmp/sim.log")"
	finish
fi
ok "rtde-sim --boot: RTDE $port, dashboard $dport, primary $pport"
tap_diag_file=$tmp/err

# no_view: no process runs with this test's telemetry name (the demo's
# rtloop-view was stopped and waited for; [d] keeps grep from seeing itself).
# shellcheck disable=SC2317 # called through check
no_view() {
	! grep -qa "[d]emo-robot-$$" /proc/[0-9]*/cmdline 2>/dev/null
}

robot() {
	run_cmd env ROBOT=127.0.0.1 PORT="$port" DASHBOARD_PORT="$dport" PRIMARY_PORT="$pport" \
		DURATION=1 DEMO_OUT="$tmp/demo" VIEW_PORT=0 TELEMETRY="demo-robot-$$" "$@" sh "$demo" "$build"
}

# --- read-only ---------------------------------------------------------------
robot ARM=0
check "read-only: exit 0" [ "$rc" -eq 0 ]
check "read-only: check, then the read-only loop, each step printed" \
	in_order "$out" "== demo: 1/2 rtloop-arm check" "robot mode: POWER_OFF" \
	"ARM=1 would power on and release the brakes" "== demo: 2/2 rtloop-admittance --read-only" \
	"admittance: read-only"
sends=$(echo "$out" | awk '$1 == "sends" { print $2 }')
check "read-only: the loop sent nothing (sends $sends)" [ "${sends:-x}" = 0 ]
if [ -x "$build/apps/rtloop-view/rtloop-view" ]; then
	check "the demo says where to watch it live (rtloop-view)" \
		contains "$out" "== watch it live: open http://127.0.0.1:"
else
	skip "the demo says where to watch it live" "this build has no rtloop-view"
fi
check "read-only: nothing the demo started still runs (rtloop-view)" no_view
run_cmd "$arm" check 127.0.0.1 --dashboard-port "$dport"
check "read-only: the arm is still powered off after it" contains "$out" "robot mode: POWER_OFF"

# --- armed --------------------------------------------------------------------
if "$adm" --help 2>/dev/null | grep -q -- --upload; then
	robot ARM=1
	check "ARM=1: exit 0" [ "$rc" -eq 0 ]
	check "ARM=1: up, the loop with --upload, stop, each step printed" \
		in_order "$out" "== demo: 1/3 rtloop-arm up" "brake release: RUNNING after" \
		"== demo: 2/3 rtloop-admittance --upload" "== demo: 3/3 rtloop-arm stop" \
		"program state: STOPPED"
	check "ARM=1: nothing the demo started still runs (rtloop-view)" no_view
	run_cmd "$arm" check 127.0.0.1 --dashboard-port "$dport"
	check "ARM=1: after it the arm is RUNNING and no program plays" \
		in_order "$out" "robot mode: RUNNING" "program state: STOPPED"
else
	robot ARM=1
	check "ARM=1 without rtloop-admittance --upload: exit 1, naming --upload" \
		exits_saying 1 "needs rtloop-admittance --upload"
	check "ARM=1 without --upload: refused before the warning and before any step" \
		[ -z "$out" ]
	run_cmd "$arm" check 127.0.0.1 --dashboard-port "$dport"
	check "ARM=1 without --upload: the arm is still powered off" \
		contains "$out" "robot mode: POWER_OFF"
	skip "ARM=1: the whole armed sequence" "rtloop-admittance has no --upload yet"
fi
finish
