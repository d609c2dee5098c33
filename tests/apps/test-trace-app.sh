#!/bin/sh
# SPDX-License-Identifier: MIT
#
# rtloop-trace as a command. Usage:
#   test-trace-app.sh path/to/rtloop-trace [path/to/trace-emitter]
# Writes TAP to stdout; exits non-zero when a check fails.
#
# 1. Flags: --help exits 0; unknown flags, missing arguments and stray
#    arguments exit 2 with a message naming them; report on a directory with
#    no trace exits 1 naming the directory and the fix.
# 2. With the emitter: "record -- trace-emitter --frames 60" through a
#    session daemon (started if none answers, left running, as
#    test-trace.sh does), then "report --pid PID DIR": every stage is
#    listed with 60 samples and nothing missing, and the losses are the ones
#    trace-emitter.c computes (see its header): 6 skipped events of 12
#    frames (controller 2, worker 4, ring_full 6), 1 watchdog with 3
#    periods, 2 reconnects of which 1 failed. --pid keeps only our emitter:
#    the session records every process firing rtloop events meanwhile.
#    report --json parses with python3 and has the same figures.
# Skips the recording part (TAP "# SKIP") when lttng or the session daemon
# is unavailable, and everything ("1..0 # SKIP") when the app was not built.
set -u

app=${1:?usage: $0 path/to/rtloop-trace [path/to/trace-emitter]}
emitter=${2:-}
frames=60

# shellcheck source=SCRIPTDIR/tap.sh
. "$(dirname "$0")/tap.sh"
[ -x "$app" ] || skip_all "rtloop-trace not built (needs libbabeltrace2)"

tap_init rtl-trace-app
run_timeout=120 # run: each run of the app bounded
tap_diag_file=$tmp/err # under a "not ok": the last run's stderr

# --- flags -------------------------------------------------------------------
check_exits 0 --help
check "--help documents record and report" contains "$out" "record [OPTIONS] [--] COMMAND"
check "--help documents --json, --worst and --plot" \
	in_order "$out" --json --worst --plot
check "--help documents the exit status" contains "$out" "Exit status"
check_exits 0 report --help

check_unknown_flag --bogus "unknown global flag"

run report --bogus "$tmp"
check "unknown report flag exits 2" [ "$rc" -eq 2 ]
check "unknown report flag is named" contains "$err" "'--bogus'"

run record -x -- true
check "unknown short record flag exits 2" [ "$rc" -eq 2 ]
check "unknown short record flag is named" contains "$err" "'-x'"

run report --worst
check "--worst without a count exits 2" [ "$rc" -eq 2 ]
check "--worst without a count is named" contains "$err" "'--worst'"

run report --worst many "$tmp"
check "--worst with a bad count exits 2 naming it" exits_saying 2 "--worst 'many'"

run frobnicate
check "an unknown subcommand exits 2" [ "$rc" -eq 2 ]
check "an unknown subcommand is named" contains "$err" "'frobnicate'"

run
check "no subcommand exits 2" [ "$rc" -eq 2 ]

run record
check "record without a command exits 2" [ "$rc" -eq 2 ]

run report "$tmp" extra
check "a stray argument exits 2 and is named" exits_saying 2 "'extra'"

mkdir "$tmp/empty"
run report "$tmp/empty"
check "a directory without a trace exits 1" [ "$rc" -eq 1 ]
check "... naming the directory" contains "$err" "$tmp/empty"
check "... and the fix" contains "$err" "rtloop-trace record --output"

mkdir "$tmp/notctf"
echo "this is not CTF" >"$tmp/notctf/metadata"
echo "nor this" >"$tmp/notctf/channel_0"
run report "$tmp/notctf"
check "a directory with a bogus trace exits 1 naming it" exits_saying 1 "$tmp/notctf"

run report "$tmp/does-not-exist"
check "a missing directory exits 1 naming it" exits_saying 1 "does-not-exist"

mkdir "$tmp/full" && echo x >"$tmp/full/file"
run record --output "$tmp/full" -- true
check "record into a non-empty directory exits 2 naming it" exits_saying 2 "$tmp/full"

# --- record and report -----------------------------------------------------------
why=
if [ -z "$emitter" ] || [ ! -x "$emitter" ]; then
	why="trace-emitter not built (needs liblttng-ust)"
elif ! have lttng || ! have lttng-sessiond; then
	why="lttng not installed (Debian: lttng-tools)"
elif ! sessiond_up; then
	why="no lttng session daemon reachable and none could be started"
fi

if [ -n "$why" ]; then
	skip "record and report a trace of trace-emitter" "$why"
	finish
fi

trace="$tmp/trace"
LTTNG_UST_REGISTER_TIMEOUT=10000 run record --output "$trace" --subbuf-size 1M --num-subbuf 4 \
	-- "$emitter" --frames "$frames"
check "record exits with the command's status (0)" [ "$rc" -eq 0 ]
pid=$(sed -n 's/^rtloop-trace: command pid \([0-9][0-9]*\)$/\1/p' "$tmp/err")
check "record names the command's pid" [ -n "$pid" ]
check "record says where the trace is" contains "$err" "trace in $trace"
check "record left no session behind" sh -c '! lttng list 2>/dev/null | grep -qF "$1"' sh "$trace"

run record --output "$tmp/trace-false" -- false
check "record passes the command's exit status on (false: 1)" [ "$rc" -eq 1 ]
run record --output "$tmp/trace-missing" -- "$tmp/no-such-command"
check "record of a missing command exits 127 naming it" exits_saying 127 "no-such-command"

if [ -z "$pid" ]; then
	fail "report (no pid from record)"
	finish
fi

run report --pid "$pid" "$trace"
check "report exits 0" [ "$rc" -eq 0 ]
for stage in received-\>decoded decoded-\>committed committed-\>woke woke-\>step_started \
	step_started-\>step_finished step_finished-\>sent received-\>sent; do
	line=$(printf '%s\n' "$out" | grep -F "  $stage " | head -1)
	# name, count, missing, then four figures
	check "report lists $stage with $frames samples, none missing" \
		sh -c 'n=$1; set -- $2; [ "$2" = "$n" ] && [ "$3" = 0 ] && [ "$#" -ge 7 ]' sh "$frames" "$line"
done
check "report counts $frames frames, 30 sent and 30 suppressed" \
	contains "$out" "$frames frames (30 sent, 30 suppressed)"
check "report lists the 5 worst frames" contains "$out" "Worst 5 frames by end to end"
worst_rows=$(printf '%s\n' "$out" | sed -n '/^Worst/,/^$/p' | grep -c ' \(sent\|suppressed\)$')
check "... five rows of breakdown" [ "$worst_rows" -eq 5 ]
check "skipped: 12 frames in 6 events (controller 2, worker 4, ring_full 6)" \
	contains "$out" "12 in 6 events (controller 2, worker 4, ring_full 6)"
check "watchdog fired once, 3 periods" matches "$out" 'watchdog fired +1 \(3 periods missed\)'
check "2 reconnects, 1 failed" matches "$out" 'reconnects +2 \(1 failed\)'
check "no incomplete frames" matches "$out" 'incomplete frames +0$'
check "no absent frames" matches "$out" 'absent frames +0 '
check "nothing discarded" matches "$out" 'tracer discarded +0 events, 0 packets'

run report --pid "$pid" --worst 2 "$trace"
check "--worst 2 lists 2 frames" contains "$out" "Worst 2 frames"

run report --json --pid "$pid" "$trace"
check "report --json exits 0" [ "$rc" -eq 0 ]
printf '%s' "$out" >"$tmp/json"
py_check "report --json parses and has every stage and loss" '
import json, sys
d = json.load(open(sys.argv[1]))
n = int(sys.argv[2])
names = ["received->decoded", "decoded->committed", "committed->woke",
         "woke->step_started", "step_started->step_finished",
         "step_finished->sent", "received->sent"]
assert [s["name"] for s in d["stages"]] == names, d["stages"]
for s in d["stages"]:
    assert s["count"] == n and s["missing"] == 0, s
    assert s["histogram"]["count"] == n, s
    assert 0 <= s["p50_ns"] <= s["p99_ns"] <= s["p999_ns"] <= s["max_ns"], s
assert d["frames"] == n and d["sent"] == n // 2 and d["suppressed"] == n // 2, d
assert len(d["worst"]) == 5 and all(w["end_to_end_ns"] >= 0 for w in d["worst"]), d["worst"]
e2e = [w["end_to_end_ns"] for w in d["worst"]]
assert e2e == sorted(e2e, reverse=True), e2e
assert set(d["worst"][0]["stages_ns"]) == set(names[:6])
l = d["losses"]
assert l["skipped"] == {"events": 6, "frames": 12, "controller": 2, "worker": 4,
                        "ring_full": 6, "unknown": 0}, l
assert l["watchdog"] == 1 and l["watchdog_periods"] == 3, l
assert l["reconnects"] == 2 and l["reconnects_failed"] == 1, l
assert l["incomplete_frames"] == 0 and l["absent_frames"] == 0, l
assert l["discarded_events"] == 0 and l["duplicate_events"] == 0, l
assert [p["pid"] for p in d["processes"]] == [int(sys.argv[3])], d["processes"]
' "$tmp/json" "$frames" "$pid"

if have gnuplot; then
	run report --pid "$pid" --plot "$tmp/hist.png" "$trace"
	if [ "$rc" -eq 0 ] && [ "$(head -c 4 "$tmp/hist.png" 2>/dev/null | tail -c 3)" = PNG ]; then
		ok "--plot exits 0 and writes a PNG"
	else
		fail "--plot exits 0 and writes a PNG"
	fi
	run report --pid "$pid" --plot "$tmp/no-such-dir/hist.png" "$trace"
	check "--plot into a missing directory exits 1" [ "$rc" -eq 1 ]
else
	skip "--plot writes a PNG" "gnuplot not installed (Debian: gnuplot-nox)"
fi

finish
