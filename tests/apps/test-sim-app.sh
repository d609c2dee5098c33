#!/bin/sh
# SPDX-License-Identifier: MIT
#
# rtde-sim as a command: --help, a bad flag and a bad value (exit 2, named
# on stderr), then a one-second run on an ephemeral port whose --json
# report parses and counts about 500 cycles (e-Series, 500 Hz).
# Usage: test-sim-app.sh path/to/rtde-sim
# Writes TAP to stdout; exits non-zero when a check fails.
set -u

app=${1:?usage: $0 path/to/rtde-sim}
tmp=$(mktemp -d "${TMPDIR:-/tmp}/rtl-sim-app.XXXXXX") || exit 99
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
check "--help documents --profile" contains "$out" "--profile"

run --bogus
check "an unknown flag exits 2" [ "$rc" -eq 2 ]
check "an unknown flag is named on stderr" contains "$err" "--bogus"
check "an unknown flag prints nothing on stdout" [ -z "$out" ]

run --profile xyz
check "a bad --profile exits 2" [ "$rc" -eq 2 ]
check "a bad --profile names the flag" contains "$err" "--profile"
check "a bad --profile names the value" contains "$err" "xyz"

# --- a one-second run --------------------------------------------------------
run --port 0 --duration 1 --quiet --json "$tmp/sim.json"
check "a one-second run exits 0" [ "$rc" -eq 0 ]
check "the text report is on stdout" contains "$out" "cycles:"
if command -v python3 >/dev/null 2>&1; then
	check "the JSON parses and counts about 500 cycles" python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
assert d["program"] == "rtde-sim" and d["profile"] == "eseries", d
assert d["frequency_hz"] == 500, d["frequency_hz"]
c = d["stats"]["cycles"]
assert 400 <= c <= 510, c
assert d["port"] > 0, d["port"]
' "$tmp/sim.json"
else
	ok "# SKIP no python3 to parse the JSON"
fi

echo "1..$n"
[ "$failed" -eq 0 ]
