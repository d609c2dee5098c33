#!/bin/sh
# SPDX-License-Identifier: MIT
#
# rtde-sim as a command: --help, a bad flag and a bad value (exit 2, named
# on stderr), then a one-second run on an ephemeral port whose --json
# report parses and counts about 500 cycles (e-Series, 500 Hz), and a short
# UDP run whose report holds every counter.
# Usage: test-sim-app.sh path/to/rtde-sim
# Writes TAP to stdout; exits non-zero when a check fails.
set -u

app=${1:?usage: $0 path/to/rtde-sim}
# shellcheck source=SCRIPTDIR/tap.sh
. "$(dirname "$0")/tap.sh"
tap_init rtl-sim-app

# --- flags -------------------------------------------------------------------
check_exits 0 --help
check "--help documents --profile" contains "$out" "--profile"

check_unknown_flag --bogus

run --profile xyz
check "a bad --profile exits 2" [ "$rc" -eq 2 ]
check "a bad --profile names the flag" contains "$err" "--profile"
check "a bad --profile names the value" contains "$err" "xyz"

# --- a one-second run --------------------------------------------------------
run --port 0 --duration 1 --quiet --json "$tmp/sim.json"
check "a one-second run exits 0" [ "$rc" -eq 0 ]
check "the text report is on stdout" contains "$out" "cycles:"
py_check "the JSON parses and counts about 500 cycles" '
import json, sys
d = json.load(open(sys.argv[1]))
assert d["program"] == "rtde-sim" and d["profile"] == "eseries", d
assert d["frequency_hz"] == 500, d["frequency_hz"]
c = d["stats"]["cycles"]
assert 400 <= c <= 510, c
assert d["port"] > 0, d["port"]
' "$tmp/sim.json"

# --- UDP mode: every counter in the report -------------------------------------
run --udp --udp-port 0 --duration 0.3 --quiet --json "$tmp/sim-udp.json"
check "a UDP run exits 0" [ "$rc" -eq 0 ]
check "the UDP text report counts the loss count's sessions" contains "$out" \
	"closed by the loss count"
check "the UDP text report counts the clamped commands" contains "$out" \
	"with a velocity clamped"
py_check "the UDP JSON parses and holds the old and the new counters" '
import json, sys
d = json.load(open(sys.argv[1]))
assert d["program"] == "rtde-sim" and d["mode"] == "udp", d
s = d["stats"]
old = ["cycles", "overruns", "states_sent", "states_skipped", "send_errors",
       "datagrams_in", "bad_in", "hellos", "sessions", "rejected", "byes", "timeouts",
       "commands", "commands_lost", "refused", "unsupported", "watchdog_trips", "echoes",
       "echo_unmatched", "nonfinite_in", "stale_in", "duplicate_in", "bad_target_time"]
new = ["loss_closed", "alarms_sent", "byes_sent", "limits_in", "bad_limits",
       "vel_clamped", "acc_clamped", "limit_alarms_suppressed",
       "unsupported_alarms_suppressed"]
assert list(s) == old + new, list(s)
assert s["cycles"] > 0, s
assert all(s[k] == 0 for k in new), s
' "$tmp/sim-udp.json"

finish
