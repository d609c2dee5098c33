#!/bin/sh
# SPDX-License-Identifier: MIT
#
# The force-control example (apps/examples/experiment.c) against rtde-sim
# instances this script starts on free ports, judged by its --json summary:
#   - its options: --help, a bad value (exit 2);
#   - a start pose past a joint limit: the first phase fails with the
#     controller's reason, nothing else runs, exit 1, the arm at rest; a
#     phase over --phase-limit, no contact within --travel, and SIGINT in
#     the middle, the same;
#   - the whole experiment: every phase ok, the start joints reached, contact at the plane, 10 N
#     held within the tolerance while sliding, the retract 5 cm up, the
#     hand's push moving the arm in teach mode (rtde-sim's --push-x, rtloop
#     #23: skipped, with the reason, while the simulator lacks it), the arm
#     at rest at the end.
# Usage: test-experiment-app.sh path/to/rtloop-example-experiment path/to/rtde-sim
set -u

app=${1:?usage: $0 path/to/rtloop-example-experiment path/to/rtde-sim}
sim=${2:?usage: $0 path/to/rtloop-example-experiment path/to/rtde-sim}
# shellcheck source=SCRIPTDIR/tap.sh
. "$(dirname "$0")/tap.sh"
tap_init rtl-experiment-app
run_timeout=40

# json_py CODE: python3 code run on the summary, d = the JSON; exits
# non-zero (with a message) when CODE says what is wrong.
json_py() {
	printf 'import json, sys\nd = json.load(open(sys.argv[1]))\np = {x["name"]: x for x in d["phases"]}\n%s\n' "$1"
}

check_exits 0 --help
check "--help names --json" contains "$out" "--json"
check_exits 2 --force -3
check "a bad value is named on stderr" contains "$err" "--force"

# ---- a phase that fails: the start pose past the elbow's limit ------------------
if ! start_sim "$sim_rtde_port" --port 0 --duration 30 --json "$tmp/sim.json"; then
	fail "rtde-sim started (log: $(cat "$tmp/sim.log"))"
	finish
fi
run --port "$port" --no-rt --phase-limit 10 --start-q 0,-1.5708,4.0,-1.5708,-1.5708,0 \
	--json "$tmp/fail.json"
check "a failing phase exits 1" [ "$rc" -eq 1 ]
check "the table names the controller's reason" contains "$out" "move_j failed: joint limit"
py_check "the summary: start failed (move_j, joint limit), nothing after it ran, the arm at rest" \
	"$(json_py '
s = p["start"]
assert not d["ok"], d
assert s["outcome"] == "failed", s
assert s["request"] == "move_j" and s["reason"] == "joint limit", s
assert all(p[n]["outcome"] == "not_run" for n in p if n != "start"), d
assert d["at_rest_at_exit"], d')" "$tmp/fail.json"
run --port "$port" --no-rt --phase-limit 0.2 --json "$tmp/slow.json"
check "a phase over --phase-limit exits 1" [ "$rc" -eq 1 ]
py_check "the summary: start timed out, the arm at rest" "$(json_py '
assert p["start"]["outcome"] == "failed" and p["start"]["error"] == "timed out", p["start"]
assert d["at_rest_at_exit"], d')" "$tmp/slow.json"
# No surface under the tool (this simulator has no contact plane): the
# search gives up after --travel.
run --port "$port" --no-rt --travel 0.05 --json "$tmp/travel.json"
check "no contact within --travel exits 1" [ "$rc" -eq 1 ]
py_check "the summary: start ok, contact failed after 5 cm down, the arm at rest" "$(json_py '
c = p["contact"]
assert p["start"]["outcome"] == "ok", p["start"]
assert c["outcome"] == "failed" and c["error"] == "no contact within --travel", c
assert 0.05 <= p["start"]["pose"][2] - c["pose"][2] < 0.06, (p["start"], c)
assert d["at_rest_at_exit"], d')" "$tmp/travel.json"
# SIGINT in the middle (the search for a contact that is not there): the
# loop's stop at exit still brings the arm to rest.
"$app" --port "$port" --no-rt --travel 1 --json "$tmp/int.json" >"$tmp/int.out" 2>&1 &
app_pid=$!
sleep 3
kill -INT "$app_pid" 2>/dev/null
i=0
while kill -0 "$app_pid" 2>/dev/null && [ "$i" -lt 100 ]; do
	sleep 0.1
	i=$((i + 1))
done
kill -KILL "$app_pid" 2>/dev/null
wait "$app_pid"
rc=$?
check "SIGINT in the middle exits 1" [ "$rc" -eq 1 ]
py_check "the summary: a phase left unfinished, nothing after it, the arm at rest" "$(json_py '
left = [x for x in d["phases"] if x["outcome"] == "failed"]
assert len(left) == 1 and left[0]["error"] == "unfinished: the loop stopped", d
assert d["at_rest_at_exit"], d')" "$tmp/int.json"
stop_sim
py_check "the simulator: the arm at rest, no watchdog trip" "$sim_left_safe_py" "$tmp/sim.json"

# ---- the whole experiment --------------------------------------------------------
# The hand's push of teach mode (--push-x) is newer than the requests: a
# simulator without it runs the rest, and the push's check is skipped.
push=
if "$sim" --help 2>/dev/null | grep -q -- --push-x; then
	push="--push-x 5 --push-after 1 --push-for 1"
fi
# shellcheck disable=SC2086 # $push: several options or none
if ! start_sim "$sim_rtde_port" --port 0 --duration 50 --contact-z 0.46 $push \
	--json "$tmp/sim.json"; then
	fail "rtde-sim started (log: $(cat "$tmp/sim.log"))"
	finish
fi
run --port "$port" --no-rt --json "$tmp/run.json" --csv "$tmp/run.csv"
check "the experiment exits 0" [ "$rc" -eq 0 ]
[ "$rc" -eq 0 ] || printf '%s\n%s\n' "$out" "$err" | sed 's/^/# /'
check "the table says every phase ok" contains "$out" "experiment: every phase ok"
py_check "every phase ok, in order, the arm at rest at exit" "$(json_py '
names = [x["name"] for x in d["phases"]]
assert names == ["start", "contact", "press", "end_force", "retract", "teach", "end_teach"], names
bad = [x for x in d["phases"] if x["outcome"] != "ok"]
assert d["ok"] and not bad, bad
assert d["at_rest_at_exit"], d')" "$tmp/run.json"
py_check "start: the joints reached (< 1 mrad)" \
	"$(json_py 'assert p["start"]["q_err"] < 1e-3, p["start"]')" "$tmp/run.json"
py_check "contact: the TCP stopped at the plane z = 0.46 (within 1 cm below it)" \
	"$(json_py 'z = p["contact"]["pose"][2]; assert 0.45 < z < 0.4605, z')" "$tmp/run.json"
py_check "press: 10 N held within the tolerance, the tool slid along x" "$(json_py '
s = p["press"]
assert s["held"] and s["force_err_max"] <= d["tolerance"], s
assert s["force_err_mean"] < 0.5 * d["tolerance"], s
assert s["pose"][0] - p["contact"]["pose"][0] > 0.02, (s["pose"], p["contact"]["pose"])')" \
	"$tmp/run.json"
py_check "retract: 5 cm straight up (1 mm)" "$(json_py '
a, b = p["end_force"]["pose"], p["retract"]["pose"]
assert abs(b[2] - a[2] - 0.05) < 1e-3 and abs(b[0] - a[0]) < 1e-3, (a, b)')" "$tmp/run.json"
if [ -n "$push" ]; then
	py_check "teach: the push along x moved the arm (> 2 cm), then it came to rest" "$(json_py '
t = p["teach"]
assert t["moved"] > 0.02, t
assert t["pose"][0] - p["retract"]["pose"][0] > 0.02, (t["pose"], p["retract"]["pose"])
assert abs(p["end_teach"]["pose"][0] - t["pose"][0]) < 0.01, p["end_teach"]')" "$tmp/run.json"
else
	skip "teach: the push along x moved the arm" \
		"this rtde-sim has no --push-x yet (teach mode's push, rtloop #23)"
fi
# shellcheck disable=SC2016 # $1 is awk's
check "the CSV has a row per frame of the run" \
	awk -F, 'NR == 1 && $1 != "t" { exit 1 } END { exit !(NR > 2000) }' "$tmp/run.csv"
stop_sim
py_check "the simulator: the arm at rest, no watchdog trip" "$sim_left_safe_py" "$tmp/sim.json"
finish
