#!/usr/bin/env python3
"""Count test cases across Meson test logs.

For tests that speak TAP (every Criterion binary, via --tap), each test case
counts: 'ok', 'not ok', and '# SKIP'. Other tests count once by their
result; a should_fail test that failed as expected (EXPECTEDFAIL, such as
docs-refs-selftest) passes. Usage: tap-count.py BUILD_DIR... [--extra PASSED FAILED]
Prints 'passed failed skipped' on one line.
"""
import json
import os
import re
import sys

passed = failed = skipped = 0
args = sys.argv[1:]
if "--extra" in args:
    i = args.index("--extra")
    passed += int(args[i + 1])
    failed += int(args[i + 2])
    args = args[:i] + args[i + 3:]

line_re = re.compile(r"^(not ok|ok)\b(.*)$")
for build in args:
    log = os.path.join(build, "meson-logs", "testlog.json")
    if not os.path.exists(log):
        print(f"tap-count: no test log in {build}: counted as one failure", file=sys.stderr)
        failed += 1
        continue
    with open(log) as f:
        for raw in f:
            t = json.loads(raw)
            result = t.get("result")
            cases = 0
            for line in (t.get("stdout") or "").splitlines():
                m = line_re.match(line.strip())
                if not m:
                    continue
                cases += 1
                if m.group(1) == "not ok":
                    failed += 1
                elif "# SKIP" in m.group(2).upper():
                    skipped += 1
                else:
                    passed += 1
            if cases == 0:
                if result in ("OK", "EXPECTEDFAIL"):
                    passed += 1
                elif result == "SKIP":
                    skipped += 1
                else:
                    failed += 1
            elif result not in ("OK", "SKIP"):
                # The binary failed (crash, time-out) beyond its TAP lines.
                if not any(line.startswith("not ok") for line in (t.get("stdout") or "").splitlines()):
                    failed += 1
print(passed, failed, skipped)
