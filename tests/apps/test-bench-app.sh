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
tmp=$(mktemp -d "${TMPDIR:-/tmp}/rtl-bench-app.XXXXXX") || exit 99
trap 'rm -rf "$tmp"' EXIT INT TERM

n=0
failed=0
ok() { n=$((n + 1)); echo "ok $n - $1"; }
fail() { n=$((n + 1)); failed=$((failed + 1)); echo "not ok $n - $1"; }
check() { # check DESCRIPTION COMMAND...: passes when COMMAND succeeds
	desc=$1
	shift
	if "$@"; then ok "$desc"; else fail "$desc"; fi
}

# run ARGS...: runs the app, leaving $out, $err and $rc.
run() {
	"$app" "$@" >"$tmp/out" 2>"$tmp/err"
	rc=$?
	out=$(cat "$tmp/out")
	err=$(cat "$tmp/err")
}

contains() { case $1 in *"$2"*) return 0 ;; esac; return 1; }

# --- flags -------------------------------------------------------------------
run --help
check "--help exits 0" [ "$rc" -eq 0 ]
for flag in --transport --duration --rate --profile --cpus --priority --json --plot --quick; do
	check "--help documents $flag" contains "$out" "$flag"
done

run --no-such-flag
check "an unknown flag exits 2" [ "$rc" -eq 2 ]
check "an unknown flag is named" contains "$err" "--no-such-flag"

run --reps 0
check "--reps 0 exits 2" [ "$rc" -eq 2 ]
check "--reps 0 is named" contains "$err" "--reps"

run --profile nonesuch
check "an unknown profile exits 2 naming --profile" \
	sh -c '[ "$1" -eq 2 ] && case $2 in *--profile*) exit 0 ;; esac; exit 1' _ "$rc" "$err"

run --cpus 0,x
check "a bad CPU list exits 2 naming --cpus" \
	sh -c '[ "$1" -eq 2 ] && case $2 in *--cpus*) exit 0 ;; esac; exit 1' _ "$rc" "$err"

run --profile cb3 --rate 500
check "a rate above the profile's exits 2 naming --rate" \
	sh -c '[ "$1" -eq 2 ] && case $2 in *--rate*) exit 0 ;; esac; exit 1' _ "$rc" "$err"

run --transport pigeon
check "an unknown transport exits 2 naming --transport" \
	sh -c '[ "$1" -eq 2 ] && case $2 in *--transport*) exit 0 ;; esac; exit 1' _ "$rc" "$err"

run --transport udp --profile cb3
check "--profile with --transport udp exits 2 naming --profile" \
	sh -c '[ "$1" -eq 2 ] && case $2 in *--profile*) exit 0 ;; esac; exit 1' _ "$rc" "$err"

run --transport udp --rate 2000
check "a UDP rate above 1000 Hz exits 2 naming --rate" \
	sh -c '[ "$1" -eq 2 ] && case $2 in *--rate*) exit 0 ;; esac; exit 1' _ "$rc" "$err"

run --duration
check "a missing argument exits 2" [ "$rc" -eq 2 ]

run extra
check "a stray argument exits 2" [ "$rc" -eq 2 ]

# --- short runs ------------------------------------------------------------------
# quick_run TRANSPORT FLOOR_PROTO: a two-second quick run and its JSON.
quick_run() {
	tr=$1
	proto=$2
	json="$tmp/bench-$tr.json"
	run --transport "$tr" --quick --duration 2 --json "$json"
	check "$tr: --quick --duration 2 --json runs (exit 0)" [ "$rc" -eq 0 ]
	if [ "$rc" -ne 0 ]; then
		printf '%s\n' "$err" | sed 's/^/# /'
	fi
	check "$tr: the table has the round trip, the wake-up and the stages" \
		sh -c 'case $1 in *"round trip"*"worker wake-up"*"rx_to_step"*) exit 0 ;; esac; exit 1' _ "$out"
	check "$tr: the floor is a bare $proto ping-pong" contains "$out" "floor (bare $proto)"
	check "$tr: the report states the target" contains "$out" "target: round-trip p99"
	check "$tr: --json wrote a file" [ -s "$json" ]
	if command -v python3 >/dev/null 2>&1; then
		check "$tr: --json parses and has the keys" python3 -c '
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
' "$json" "$tr"
	elif command -v jq >/dev/null 2>&1; then
		check "$tr: --json parses and has the keys" \
			jq -e '.round_trip.ours.count > 0 and .round_trip.floor.count > 0
				and .wake.ours.count > 0 and .wake.floor.count > 0
				and (.stages | has("rx_to_step") and has("step") and has("step_to_send")
					and has("interarrival"))
				and (.target.met | type == "boolean")
				and (.reps | length) == .config.reps' "$json" >/dev/null
	else
		ok "# SKIP no python3 or jq to parse JSON"
	fi
}

quick_run rtde TCP
quick_run udp UDP

echo "1..$n"
[ "$failed" -eq 0 ]
