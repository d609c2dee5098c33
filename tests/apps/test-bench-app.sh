#!/bin/sh
# SPDX-License-Identifier: MIT
#
# rtloop-bench as a command: flags and exit codes, then a two-second quick
# run for each transport (RTDE, then --transport udp) whose --json must
# parse and hold every section. It checks that the
# benchmark runs and reports, never its figures: a benchmark does not fail
# because the machine was slow (docs/benchmarks.md).
# Usage: test-bench-app.sh path/to/rtloop-bench
# Writes TAP to stdout; exits non-zero when a check fails.
set -u

app=${1:?usage: $0 path/to/rtloop-bench}
# shellcheck source=SCRIPTDIR/tap.sh
. "$(dirname "$0")/tap.sh"
tap_init rtl-bench-app

# --- flags -------------------------------------------------------------------
check_exits 0 --help
for flag in --transport --duration --rate --profile --cpus --priority --mode --spin-us \
	--spin-lead-us --json --plot --quick; do
	check "--help documents $flag" contains "$out" "$flag"
done

check_unknown_flag --no-such-flag

check_exits 2 --reps 0
check "--reps 0 is named" contains "$err" "--reps"

run --profile nonesuch
check "an unknown profile exits 2 naming --profile" exits_saying 2 --profile

run --cpus 0,x
check "a bad CPU list exits 2 naming --cpus" exits_saying 2 --cpus

run --profile cb3 --rate 500
check "a rate above the profile's exits 2 naming --rate" exits_saying 2 --rate

run --transport pigeon
check "an unknown transport exits 2 naming --transport" exits_saying 2 --transport

run --transport udp --profile cb3
check "--profile with --transport udp exits 2 naming --profile" exits_saying 2 --profile

run --transport udp --rate 2000
check "a UDP rate above 1000 Hz exits 2 naming --rate" exits_saying 2 --rate

run --mode sideways
check "an unknown loop mode exits 2 naming --mode" exits_saying 2 --mode

run --mode inline --spin-lead-us 50
check "a spin with --mode inline exits 2 naming --mode" exits_saying 2 --mode

run --spin-lead-us 200000
check "a spin lead above 100 ms exits 2 naming --spin-lead-us" exits_saying 2 --spin-lead-us

run --duration
check "a missing argument exits 2" [ "$rc" -eq 2 ]

run extra
check "a stray argument exits 2" [ "$rc" -eq 2 ]

# --- short runs ------------------------------------------------------------------
# quick_run TRANSPORT FLOOR_PROTO MODE [FLAGS...]: a two-second quick run
# and its JSON; MODE is the loop mode the run must report.
quick_run() {
	tr=$1
	proto=$2
	mode=$3
	shift 3
	json="$tmp/bench-$tr.json"
	run --transport "$tr" --quick --duration 2 --json "$json" "$@"
	check "$tr: --quick --duration 2 --json runs (exit 0)" [ "$rc" -eq 0 ]
	if [ "$rc" -ne 0 ]; then
		printf '%s\n' "$err" | sed 's/^/# /'
	fi
	check "$tr: the table has the round trip, the wake-up and the stages" \
		in_order "$out" "round trip" "worker wake-up" "rx_to_step"
	check "$tr: the floor is a bare $proto ping-pong" contains "$out" "floor (bare $proto)"
	check "$tr: the report states the target" contains "$out" "target: round-trip p99"
	check "$tr: the report names the loop mode ($mode)" contains "$out" "loop mode: $mode"
	check "$tr: --json wrote a file" [ -s "$json" ]
	if have python3; then
		py_check "$tr: --json parses and has the keys" '
import json, sys
d = json.load(open(sys.argv[1]))
for k in ("tool", "machine", "config", "round_trip", "wake", "stages", "target", "reps"):
    assert k in d, k
for k in ("ours", "floor", "ratio"):
    assert k in d["round_trip"] and k in d["wake"], k
for q in ("p50", "p99", "p999", "max"):
    assert q in d["round_trip"]["ratio"], q
for k in ("rx_to_step", "step", "step_to_send", "interarrival"):
    assert k in d["stages"], k
assert d["config"]["transport"] == sys.argv[2], d["config"]["transport"]
assert d["round_trip"]["ours"]["count"] > 0 and d["round_trip"]["floor"]["count"] > 0
assert d["wake"]["ours"]["count"] > 0 and d["wake"]["floor"]["count"] > 0
assert len(d["reps"]) == d["config"]["reps"]
assert d["config"]["data_package_bytes"] > 0 and d["config"]["input_package_bytes"] > 0
if sys.argv[2] == "udp":
    # the datagrams of docs/udp.md: 32 + 1338 and 32 + 176 bytes
    assert d["config"]["data_package_bytes"] == 1370, d["config"]
    assert d["config"]["input_package_bytes"] == 208, d["config"]
assert isinstance(d["target"]["met"], bool)
assert d["config"]["mode"] == sys.argv[3], d["config"]["mode"]
' "$json" "$tr" "$mode"
	elif have jq; then
		check "$tr: --json parses and has the keys" \
			jq -e '.round_trip.ours.count > 0 and .round_trip.floor.count > 0
				and .wake.ours.count > 0 and .wake.floor.count > 0
				and (.stages | has("rx_to_step") and has("step") and has("step_to_send")
					and has("interarrival"))
				and (.target.met | type == "boolean")
				and (.reps | length) == .config.reps' "$json" >/dev/null
	else
		skip "$tr: --json parses and has the keys" "no python3 or jq to parse JSON"
	fi
}

# The default layout (rx and worker on one CPU) runs inline; the threaded
# loop with a spin window is the other mode.
quick_run rtde TCP inline
quick_run udp UDP threads --mode threads --spin-lead-us 50

# --telemetry: the fourth phase, the loop publishing with a reader beside.
run --quick --duration 2 --telemetry --json "$tmp/bench-tel.json"
check "--telemetry: runs (exit 0)" [ "$rc" -eq 0 ]
check "--telemetry: the table compares the loop with telemetry on and off" \
	in_order "$out" "4 phases" "telemetry: the same loop" "round_trip" "ratio on/off" "step" \
	"telemetry counts:"
if have python3; then
	py_check "--telemetry: the JSON has on, off and their ratio, and the reader's counts" '
import json, sys
d = json.load(open(sys.argv[1]))
t = d["telemetry"]
for k in ("round_trip", "rx_to_step", "step", "step_to_send"):
    assert t[k]["on"]["count"] > 0 and t[k]["off"]["count"] > 0, k
    assert "p99" in t[k]["ratio"], k
assert t["records"] > 0 and t["read"] > 0, t
assert t["missed"] == 0, t
assert all(r["round_trip_telemetry"]["count"] > 0 for r in d["reps"])
' "$tmp/bench-tel.json"
else
	skip "--telemetry: the JSON" "no python3"
fi

finish
