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
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT INT TERM

if ! command -v lttng >/dev/null 2>&1; then
	echo "1..0 # SKIP lttng (lttng-tools) is not installed"
	exit 0
fi
echo "1..4"
# Wait for the session daemon to register the program (CI sets the
# timeout to 0 for everything else): events before that are lost.
if "$trace" record --register-timeout 5000 --output "$dir/t" -- "$prog" "$frames" >"$dir/out" 2>"$dir/err"; then
	echo "ok 1 - recorded a run of $frames frames"
else
	echo "not ok 1 - record failed: $(tail -3 "$dir/err" | tr '\n' ' ')"
fi
pid=$(sed -n 's/^rtloop-trace: command pid \([0-9]*\).*/\1/p' "$dir/err")
if "$trace" report --json ${pid:+--pid "$pid"} "$dir/t" >"$dir/r.json" 2>"$dir/rerr"; then
	echo "ok 2 - report"
else
	echo "not ok 2 - report failed: $(tail -3 "$dir/rerr" | tr '\n' ' ')"
fi
python3 - "$dir/r.json" "$frames" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
want = int(sys.argv[2])
frames = r["frames"]
ok3 = frames >= want and r["losses"]["incomplete_frames"] == 0 and \
      all(v == 0 for v in r["losses"]["missing_stages"].values()) and \
      r["losses"]["duplicate_events"] == 0 and r["losses"]["absent_frames"] == 0
print(("ok" if ok3 else "not ok") + " 3 - every stage once per frame (%d frames, %d incomplete)"
      % (frames, r["losses"]["incomplete_frames"]))
# In order: no stage interval is negative (recorded as underflow).
neg = [s["name"] for s in r["stages"] if s["histogram"].get("underflow", 0)]
ok4 = not neg and all(s["count"] == frames for s in r["stages"])
print(("ok" if ok4 else "not ok") + " 4 - stages in loop order for every frame" +
      ("" if ok4 else " (out of order: %s)" % ",".join(neg)))
PY
