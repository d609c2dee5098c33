#!/bin/sh
# SPDX-License-Identifier: MIT
#
# rtloop-admittance as a command: flags and exit codes, then runs against an
# rtde-sim this script starts on a free port (--port 0, read back from its
# start message): read-only sends nothing; armed, the loop presses into the
# simulator's contact plane with the target force.
# Usage: test-admittance-app.sh path/to/rtloop-admittance path/to/rtde-sim
# Writes TAP to stdout; exits non-zero when a check fails.
set -u

app=${1:?usage: $0 path/to/rtloop-admittance path/to/rtde-sim}
sim=${2:?usage: $0 path/to/rtloop-admittance path/to/rtde-sim}
# shellcheck source=SCRIPTDIR/tap.sh
. "$(dirname "$0")/tap.sh"
tap_init rtl-admittance-app

# --- flags -------------------------------------------------------------------
check_exits 0 --help
check "--help documents --target-force, --echo, --read-only and --inline" \
	in_order "$out" --target-force --read-only --echo --inline
check_unknown_flag --bogus
run --duration soon
check "a bad value exits 2" [ "$rc" -eq 2 ]
check "a bad value is named" contains "$err" "--duration"
run --rt sometimes
check "--rt with a bad mode exits 2" [ "$rc" -eq 2 ]
run --echo --read-only
check "--echo with --read-only is refused" [ "$rc" -eq 2 ]

# --- against rtde-sim --------------------------------------------------------
# The UR5e starts with its TCP at z = 0.4879 m: the plane 28 mm below.
if ! start_sim "$sim_rtde_port" --port 0 --contact-z 0.46 --echo-register 47 --duration 30 \
	--json "$tmp/sim.json"; then
	fail "rtde-sim started (log: $(cat "$tmp/sim.log"))"
	finish
fi
ok "rtde-sim listens on port $port"

run --port "$port" --duration 0.5 --read-only --rt off
check "read-only: runs to the end (exit 0)" [ "$rc" -eq 0 ]
sends=$(echo "$out" | awk '$1 == "sends" { print $2 }')
check "read-only: nothing sent (sends $sends)" [ "${sends:-x}" = 0 ]

# The plane is 28 mm down; a 10 mm travel limit stops the descent before it.
# (The simulated robot stays where a client leaves it.) This run steps on the
# receive thread (--inline).
run --port "$port" --duration 1.5 --max-travel 0.01 --rt off --inline --csv "$tmp/travel.csv"
check "--inline: runs to the end (exit 0)" [ "$rc" -eq 0 ]
zend=$(awk -F, 'END { print $2 }' "$tmp/travel.csv")
check "--inline --max-travel 0.01 stops the descent 10 mm down (z $zend m)" \
	awk -v z="$zend" 'BEGIN { exit !(z > 0.4775 && z < 0.4785) }'

target=10
run --port "$port" --duration 3 --echo --target-force $target --rt off \
	--csv "$tmp/run.csv" --json "$tmp/loop.json"
check "armed: runs 3 s to the end (exit 0)" [ "$rc" -eq 0 ]
[ "$rc" -eq 0 ] || echo "# stderr: $err"
frames=$(echo "$out" | awk '$1 == "frames" { print $2 }')
check "the loop report shows > 1000 frames ($frames)" [ "${frames:-0}" -gt 1000 ]
check "--json wrote the loop report" grep -q '"counters":{"frames":' "$tmp/loop.json"
check "the CSV has a header and a row per frame" \
	sh -c 'head -1 "$1" | grep -q "^t_s,z_m,fz_N,vz_mps$" && [ "$(wc -l <"$1")" -gt 1000 ]' \
	_ "$tmp/run.csv"
# The mean pressing force (-fz) over the last second, against the target.
mean=$(awk -F, 'NR == FNR { if (FNR > 1) t = $1; next }
	FNR > 1 && $1 >= t - 1 { s += -$3; k++ }
	END { if (k) printf "%.3f", s / k; else print "nan" }' "$tmp/run.csv" "$tmp/run.csv")
check "the tool presses with the target: mean $mean N over the last second, target $target N" \
	awk -v m="$mean" -v t="$target" 'BEGIN { d = m - t; if (d < 0) d = -d; exit !(d < 0.3 * t) }'
zend=$(awk -F, 'END { print $2 }' "$tmp/run.csv")
check "the TCP went down into the plane (z $zend m < 0.46 m)" \
	awk -v z="$zend" 'BEGIN { exit !(z < 0.46 && z > 0.45) }'
check "the loop stopped the arm at the end and saw it at rest" \
	contains "$out" "stop at exit: the arm was at rest"

# A signal ends the loop the same way: the stop is sent and awaited.
"$app" --port "$port" --duration 20 --rt off >"$tmp/int.out" 2>"$tmp/int.err" &
pid=$!
sleep 1
kill -INT "$pid"
wait "$pid"
rc=$?
check "SIGINT: exits 0" [ "$rc" -eq 0 ]
check "SIGINT: the stop was sent and the arm seen at rest" \
	grep -q "stop at exit: the arm was at rest" "$tmp/int.out"

stop_sim
py_check "the arm ends at rest, the executor's watchdog never tripped (rtde-sim's report)" \
	"$sim_left_safe_py" "$tmp/sim.json"
trips=$(sed -n 's/.*"round_trips":\([0-9]*\).*/\1/p' "$tmp/sim.json")
check "the simulator measured echo round trips ($trips)" [ "${trips:-0}" -gt 1000 ]

finish
