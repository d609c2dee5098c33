#!/bin/sh
# SPDX-License-Identifier: MIT
#
# rtde-record as a command: flags and exit codes, recipe errors, then real
# recordings from an rtde-sim this script starts on a free port: an XML
# config with a recipe key, the binary format and --dump, stdout, --json,
# and SIGINT. Usage: test-record-app.sh path/to/rtde-record path/to/rtde-sim
# Writes TAP to stdout; exits non-zero when a check fails.
set -u

app=${1:?usage: $0 path/to/rtde-record path/to/rtde-sim}
sim=${2:?usage: $0 path/to/rtde-record path/to/rtde-sim}
# shellcheck source=SCRIPTDIR/tap.sh
. "$(dirname "$0")/tap.sh"
tap_init rtl-record-app

lines() { wc -l <"$1" | tr -d ' '; }

# --- flags -------------------------------------------------------------------
check_exits 0 --help
check "--help documents --config, --fields and --binary" \
	in_order "$out" --config --fields --binary
check "--help documents --dump and the exit status" \
	in_order "$out" --dump "Exit status"

check_unknown_flag --bogus "unknown long flag"

run -x
check "unknown short flag exits 2 and is named" exits_saying 2 "'-x'"

run --samples many --fields actual_q
check "--samples with a word exits 2" [ "$rc" -eq 2 ]
check "--samples with a word is named" contains "$err" "--samples 'many'"

run --port 70000 --fields actual_q
check "--port out of range exits 2 and is named" exits_saying 2 "--port '70000'"

run --frequency
check "--frequency without a value exits 2 and is named" exits_saying 2 "'--frequency'"

run --fields actual_q stray
check "a stray argument exits 2 and is named" exits_saying 2 "'stray'"

run
check "no recipe exits 2" [ "$rc" -eq 2 ]
check "no recipe names --config and --fields" contains "$err" "--config FILE or --fields"

run --config "$tmp/missing.xml"
check "a missing --config file exits 1" [ "$rc" -eq 1 ]
check "a missing --config file is named" contains "$err" "$tmp/missing.xml"
check "a missing --config file says why" contains "$err" "No such file"

run --fields timestamp,actual_tcp_pose
check "an unknown field exits 1" [ "$rc" -eq 1 ]
check "an unknown field gets the closest name" contains "$err" "did you mean 'actual_TCP_pose'"

run --host 127.0.0.1 --port 1 --fields actual_q --no-rt -o "$tmp/refused.csv"
check "connection refused exits 1" [ "$rc" -eq 1 ]
check "connection refused names the fix" contains "$err" "connection refused"

run --dump "$tmp/missing.bin"
check "--dump of a missing file exits 1 and names it" exits_saying 1 "missing.bin"

# --- recordings from the simulator --------------------------------------------
if ! start_sim "$sim_rtde_port" --port 0 --duration 60 --skip-every 50; then
	fail "rtde-sim started" "$(cat "$tmp/sim.log")"
	finish
fi
ok "rtde-sim started on port $port"
at="--host 127.0.0.1 --port $port --no-rt"

cat >"$tmp/rec.xml" <<'XML'
<?xml version="1.0"?>
<rtde_config>
  <recipe key="state">
    <field name="timestamp" type="DOUBLE"/>
    <field name="actual_q" type="VECTOR6D"/>
    <field name="robot_mode" type="INT32"/>
  </recipe>
  <recipe key="out">
    <field name="timestamp" type="DOUBLE"/>
    <field name="target_q" type="VECTOR6D"/>
  </recipe>
</rtde_config>
XML

# shellcheck disable=SC2086
run $at --config "$tmp/rec.xml" --recipe state --frequency 0 --samples 100 -o "$tmp/state.csv"
check "XML config with --recipe state exits 0" [ "$rc" -eq 0 ]
check "its header is the state recipe, expanded" starts_with "$(head -n 1 "$tmp/state.csv")" \
	"timestamp actual_q_0 actual_q_1 actual_q_2 actual_q_3 actual_q_4 actual_q_5 robot_mode host_time_ns lost"
check "it holds 100 rows and the header" [ "$(lines "$tmp/state.csv")" -eq 101 ]
check "the summary counts 100 packages" contains "$err" "100 packages recorded"
check "the summary names controller skips and writer overflow" \
	in_order "$err" "controller skips" "writer overflow: 0"

# shellcheck disable=SC2086
run $at --config "$tmp/rec.xml" --samples 20 --no-extra-columns -o "$tmp/out.csv"
check "XML config without --recipe exits 0" [ "$rc" -eq 0 ]
check "XML config without --recipe takes \"out\", strict layout" \
	[ "$(head -n 1 "$tmp/out.csv")" = "timestamp target_q_0 target_q_1 target_q_2 target_q_3 target_q_4 target_q_5" ]

# shellcheck disable=SC2086
run $at --config "$tmp/rec.xml" --recipe nope --samples 1 -o "$tmp/nope.csv"
check "an unknown --recipe key exits 1 and lists the keys" exits_saying 1 "'state'"

# shellcheck disable=SC2086
run $at --fields actual_q --frequency 0 --samples 200 --binary -o "$tmp/rec.bin"
check "--binary records" [ "$rc" -eq 0 ]
check "the binary file starts with its magic" [ "$(head -n 1 "$tmp/rec.bin")" = "RTLREC1" ]
check "a note says timestamp was added" contains "$err" "'timestamp' added"
run --dump "$tmp/rec.bin" -o "$tmp/dump.csv"
check "--dump exits 0" [ "$rc" -eq 0 ]
check "--dump writes the header and every row" [ "$(lines "$tmp/dump.csv")" -eq 201 ]
check "--dump's header has the extra columns" \
	[ "$(head -n 1 "$tmp/dump.csv")" = "timestamp actual_q_0 actual_q_1 actual_q_2 actual_q_3 actual_q_4 actual_q_5 host_time_ns lost" ]
run --dump "$tmp/rec.bin" --no-extra-columns
check "--dump to stdout exits 0" [ "$rc" -eq 0 ]
check "--dump to stdout, strict layout" \
	[ "$(printf '%s\n' "$out" | head -n 1)" = "timestamp actual_q_0 actual_q_1 actual_q_2 actual_q_3 actual_q_4 actual_q_5" ]

# shellcheck disable=SC2086
run $at --fields timestamp,actual_qd --samples 10 -o - --json
check "-o - exits 0" [ "$rc" -eq 0 ]
check "-o - streams the CSV to stdout" [ "$(printf '%s\n' "$out" | wc -l | tr -d ' ')" -eq 11 ]
printf '%s\n' "$err" | tail -n 1 >"$tmp/sum.json"
py_check "--json prints the summary as JSON" '
import json, sys
d = json.load(open(sys.argv[1]))
assert d["packages"] == 10 and d["writer_overflow"] == 0 and d["end"] == "samples", d
assert d["bytes"] > 0 and "controller_skips" in d and "rate_hz" in d, d
' "$tmp/sum.json"
printf '%s\n' "$out" >"$tmp/stdout.csv"
py_check "Python's csv module reads it as record.py output" '
import csv, sys
rows = list(csv.reader(open(sys.argv[1]), delimiter=" "))
assert len(rows) == 11 and all(len(r) == len(rows[0]) for r in rows), rows[:2]
assert rows[0][:2] == ["timestamp", "actual_qd_0"], rows[0]
[float(x) for r in rows[1:] for x in r]
' "$tmp/stdout.csv"

# SIGINT: the recording stops cleanly and is flushed to the last row.
# shellcheck disable=SC2086
"$app" $at --fields actual_q -o "$tmp/int.csv" >"$tmp/int.out" 2>"$tmp/int.err" &
recpid=$!
sleep 1
kill -INT "$recpid"
wait "$recpid"
rc=$?
check "SIGINT stops the recording with exit 0" [ "$rc" -eq 0 ]
check "the summary says it was stopped" contains "$(cat "$tmp/int.err")" "ended: stopped"
check "the file ends with a whole row" [ "$(tail -c 1 "$tmp/int.csv" | od -An -c | tr -d ' ')" = '\n' ]
check "the file holds rows" [ "$(lines "$tmp/int.csv")" -gt 50 ]

stop_sim

finish
