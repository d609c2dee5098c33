#!/bin/sh
# SPDX-License-Identifier: MIT
# A traced run of the loop against rtde-sim: rtloop-trace records it (its
# own session; starts lttng-sessiond if none runs), reports it as JSON, and
# this script checks that every stage's event is there for every frame, in
# loop order, exactly once. TAP output.
# Usage: test-trace-loop.sh RTLOOP_TRACE LOOP_TRACED
set -u
trace=$1
prog=$2
frames=300
# shellcheck source=SCRIPTDIR/../apps/tap.sh
. "$(dirname "$0")/../apps/tap.sh"
tap_init rtl-trace-loop

have lttng || skip_all "lttng (lttng-tools) is not installed"
plan 4
# Wait for the session daemon to register the program (CI sets the
# timeout to 0 for everything else): events before that are lost.
run_cmd "$trace" record --register-timeout 5000 --output "$tmp/t" -- "$prog" "$frames"
if [ "$rc" -eq 0 ]; then
	ok "recorded a run of $frames frames"
else
	fail "recorded a run of $frames frames" "$(tail -n 3 "$tmp/err")"
fi
pid=$(sed -n 's/^rtloop-trace: command pid \([0-9]*\).*/\1/p' "$tmp/err")
run_cmd "$trace" report --json ${pid:+--pid "$pid"} "$tmp/t"
cp "$tmp/out" "$tmp/r.json"
if [ "$rc" -eq 0 ]; then
	ok "report"
else
	fail "report" "$(tail -n 3 "$tmp/err")"
fi
# The checks of the report, one "ok<TAB>description[<TAB>diagnostic]" line each.
if ! python3 - "$tmp/r.json" "$frames" >"$tmp/checks.txt" 2>"$tmp/py.err" <<'PY'; then
import json, sys
r = json.load(open(sys.argv[1]))
want = int(sys.argv[2])
frames = r["frames"]
# The program stops the loop once it has stepped `want` frames; a frame the
# rx thread took in while the stop was on its way is received but never
# stepped. Only those may lack stages: at most frames - want of them.
cut = frames - want
ok3 = frames >= want and r["losses"]["incomplete_frames"] <= cut and \
      all(v <= cut for v in r["losses"]["missing_stages"].values()) and \
      r["losses"]["duplicate_events"] == 0 and r["losses"]["absent_frames"] == 0
print(("ok" if ok3 else "not ok") + "\tevery stage once per frame (%d frames, %d incomplete, "
      "%d allowed at the stop)" % (frames, r["losses"]["incomplete_frames"], cut))
# In order: no stage interval is negative (recorded as underflow).
neg = [s["name"] for s in r["stages"] if s["histogram"].get("underflow", 0)]
ok4 = not neg and all(s["count"] >= want for s in r["stages"])
print(("ok" if ok4 else "not ok") + "\tstages in loop order for every frame" +
      ("" if ok4 else "\tout of order: %s" % ",".join(neg)))
PY
	# Both checks count as failed, so the plan holds.
	fail "every stage once per frame" "the report's checker failed:" "$(tail -n 20 "$tmp/py.err")"
	fail "stages in loop order for every frame"
else
	report_lines "$tmp/checks.txt"
fi
finish
