#!/bin/sh
# SPDX-License-Identifier: MIT
#
# make demo-rig (apps/demo-rig.sh): for 3 s each, two simulated arms in one
# step (B follows A), then an arm and its simulated Net F/T sensor at 7 kHz
# pressing 10 N read by the sensor. The summaries the demo prints are
# checked (both arms live and at rest at the end, the press near its
# target), and the plot when gnuplot is there.
# Usage: test-demo-rig.sh path/to/demo-rig.sh BUILD_DIR. Writes TAP.
set -u

demo=${1:?usage: $0 path/to/demo-rig.sh BUILD_DIR}
build=${2:?usage: $0 path/to/demo-rig.sh BUILD_DIR}
# shellcheck source=SCRIPTDIR/tap.sh
. "$(dirname "$0")/tap.sh"
tap_init rtl-demo-rig
run_timeout=120

DURATION=3 DEMO_OUT="$tmp/demo" run_cmd sh "$demo" "$build"
tap_diag_file="$tmp/err"
check "make demo-rig exits 0" [ "$rc" -eq 0 ]
check "it names both simulators" matches "$out" '^   rtde-sim A on 127\.0\.0\.1:[0-9]+, rtde-sim B on 127\.0\.0\.1:[0-9]+$'
steps=$(printf '%s\n' "$out" | sed -n 's/.*bimanual: \([0-9]*\) steps with both arms live.*/\1/p')
check "the bimanual step ran with both arms live ($steps steps)" [ "${steps:-0}" -gt 500 ]
mean=$(printf '%s\n' "$out" | sed -n 's/.*B followed A at \([0-9.]*\) mm mean.*/\1/p')
check "B followed A within 2 mm on average ($mean mm)" \
	awk -v m="${mean:-99}" 'BEGIN { exit !(m < 2) }'
check "nobody was stopped by the policy" \
	[ "$(printf '%s\n' "$out" | grep -c 'faults caused 0 .* stopped by the policy 0')" -eq 2 ]
check "both arms were at rest at the end" \
	[ "$(printf '%s\n' "$out" | grep -c 'stop at exit: the arm was at rest')" -eq 2 ]
press=$(printf '%s\n' "$out" | sed -n 's/.*the sensor read \([-0-9.]*\) N at the end.*/\1/p')
check "the sensor read the press ($press N, asked 10 N)" \
	awk -v p="${press:-0}" 'BEGIN { exit !(p > 7 && p < 13) }'
check "the sensor streamed: records reached the step" \
	matches "$out" 'sensor records [1-9][0-9]* \([0-9]* unseen by the step\)'
if have gnuplot; then
	check "the plot was drawn" [ -s "$tmp/demo/rtloop-rig.png" ]
else
	skip "the plot" "gnuplot is not installed"
fi
finish
