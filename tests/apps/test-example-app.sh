#!/bin/sh
# SPDX-License-Identifier: MIT
#
# The README's example (apps/examples/minimal.c) against an rtde-sim this
# script starts on a free port: it moves joint 0 for five seconds, ends
# with its step's -ECANCELED, and the loop stops the arm: the example's
# report says the stop was seen at rest, and the simulator's report that
# the arm ended at rest without its watchdog tripping.
# Usage: test-example-app.sh path/to/rtloop-example-minimal path/to/rtde-sim
set -u

app=${1:?usage: $0 path/to/rtloop-example-minimal path/to/rtde-sim}
sim=${2:?usage: $0 path/to/rtloop-example-minimal path/to/rtde-sim}
# shellcheck source=SCRIPTDIR/tap.sh
. "$(dirname "$0")/tap.sh"
tap_init rtl-example-app
run_timeout=30

if ! start_sim "$sim_rtde_port" --port 0 --duration 30 --json "$tmp/sim.json"; then
	fail "rtde-sim started (log: $(cat "$tmp/sim.log"))"
	finish
fi
ok "rtde-sim listens on port $port"
run "$port"
check "the example runs its five seconds (exit 0)" [ "$rc" -eq 0 ]
[ "$rc" -eq 0 ] || printf '%s\n' "$err" | sed 's/^/# /'
counter() { printf '%s\n' "$out" | awk -v k="$1" '$1 == k { print $2 }'; }
frames=$(counter frames)
steps=$(counter steps)
wskip=$(counter worker_skipped)
unstepped=$(counter unstepped)
# Five seconds of controller time are 2500 frames at 500 Hz; on a loaded
# host the worker takes the newest and skips some, counted: every frame is
# stepped, skipped by the worker or (at the end) unstepped.
check "five seconds of frames (${frames:-none}), each stepped (${steps:-none}), skipped by the worker (${wskip:-none}) or unstepped (${unstepped:-none})" \
	awk -v f="${frames:-0}" -v s="${steps:-0}" -v w="${wskip:-0}" -v u="${unstepped:-0}" \
	'BEGIN { exit !(f > 2400 && f <= 2600 && s + w + u == f) }'
check "the loop stopped the arm and saw it at rest" \
	contains "$out" "stop at exit: the arm was at rest"
stop_sim
py_check "the arm ends at rest, the executor's watchdog never tripped (rtde-sim's report)" \
	"$sim_left_safe_py" "$tmp/sim.json"
py_check "the simulator saw the stop reach rest" \
	'import json, sys; sys.exit(json.load(open(sys.argv[1]))["robot"]["stops_at_rest"] < 1)' \
	"$tmp/sim.json"
finish
