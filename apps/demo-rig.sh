#!/bin/sh
# SPDX-License-Identifier: MIT
#
# make demo-rig: several devices in one loop, against simulators
# (docs/rig.md).
#
#   sh apps/demo-rig.sh BUILD_DIR
#
# 1. Two arms: two rtde-sims (each on free ports), the bimanual example
#    (apps/examples/bimanual.c) for DURATION seconds (default 8): arm A draws
#    a circle, arm B follows A's TCP with their start offset.
# 2. An arm and a force/torque sensor: an rtde-sim with a contact plane 28 mm
#    under the tool and its Net F/T sensor on the flange streaming RDT at
#    7 kHz, the admittance example (apps/examples/ft_admittance.c) pressing
#    10 N read by the sensor, for DURATION seconds.
# Prints each example's summary and its rig report's key lines, and plots
# both runs into BUILD_DIR/demo-rig/rtloop-rig.png (with gnuplot).
# Environment: DURATION, DEMO_OUT (default BUILD_DIR/demo-rig).
set -eu
# shellcheck source=apps/demo-lib.sh
. "$(dirname "$0")/demo-lib.sh"

build=${1:-build}
sim="$build/apps/rtde-sim/rtde-sim"
bimanual="$build/apps/examples/rtloop-example-bimanual"
admittance="$build/apps/examples/rtloop-example-ft-admittance"
out=${DEMO_OUT:-$build/demo-rig}
duration=${DURATION:-8}
pids=

die() {
	echo "demo-rig: $*" >&2
	exit 1
}

cleanup() {
	for p in $pids; do kill "$p" 2>/dev/null || true; done
	for p in $pids; do stop_child "$p"; done
}
trap cleanup EXIT
trap 'exit 130' INT TERM

for f in "$sim" "$bimanual" "$admittance"; do
	[ -x "$f" ] || die "$f is not built (make build)"
done
mkdir -p "$out"
rm -f "$out"/*.csv "$out"/*.log "$out"/*.txt "$out/rtloop-rig.png"

# start_sim NAME ARGS...: an rtde-sim on free ports; sets port (and ft_port
# when it serves a sensor).
start_sim() {
	name=$1
	shift
	: >"$out/$name.log"
	# SCHED_FIFO (best effort): a simulator starved by other work goes
	# silent, and the rig would rightly stop the arms.
	"$sim" --port 0 --priority 70 --duration $((duration + 20)) "$@" \
		>"$out/$name.txt" 2>"$out/$name.log" &
	pids="$pids $!"
	port='' ft_port='' i=0
	while [ -z "$port" ] && [ $i -lt 100 ]; do
		port=$(sed -n 's/.*listening on [0-9.]*:\([0-9][0-9]*\).*/\1/p' "$out/$name.log")
		ft_port=$(sed -n 's/.*RDT) on UDP [0-9.]*:\([0-9][0-9]*\).*/\1/p' "$out/$name.log")
		[ -n "$port" ] || sleep 0.05
		i=$((i + 1))
	done
	[ -n "$port" ] || { cat "$out/$name.log" >&2; die "rtde-sim did not start"; }
}

echo "== 1. two arms in one step: B follows A with their start offset ($duration s)"
start_sim arm-a --seed 1
port_a=$port
start_sim arm-b --seed 2
port_b=$port
echo "   rtde-sim A on 127.0.0.1:$port_a, rtde-sim B on 127.0.0.1:$port_b"
"$bimanual" "$port_a" "$port_b" "$duration" all "$out/bimanual.csv" >"$out/bimanual.txt" ||
	{ cat "$out/bimanual.txt"; die "the bimanual example failed"; }
grep '^bimanual:' "$out/bimanual.txt" | sed 's/^/   /'
grep -E '^  (steps|overruns|episodes) ' "$out/bimanual.txt" | head -3 | sed 's/^/   rig/'
grep -E '^stop at exit' "$out/bimanual.txt" | sed 's/^/   /'

echo "== 2. an arm and a force/torque sensor (RDT, 7 kHz): press 10 N ($duration s)"
start_sim arm-ft --contact-z 0.46 --force-noise 0.2 --ft-port 0
echo "   rtde-sim on 127.0.0.1:$port, its Net F/T sensor on UDP 127.0.0.1:$ft_port"
"$admittance" "$port" "$ft_port" "$duration" 10 "$out/admittance.csv" >"$out/admittance.txt" ||
	{ cat "$out/admittance.txt"; die "the admittance example failed"; }
grep '^ft_admittance:' "$out/admittance.txt" | sed 's/^/   /'

if command -v gnuplot >/dev/null 2>&1; then
	gnuplot <<EOF
set terminal pngcairo size 1200,900 font "Sans,11" noenhanced
set output "$out/rtloop-rig.png"
set datafile separator ","
set multiplot layout 2,2 title "rtloop rig: two arms in one step (top), an arm and an RDT sensor (bottom)"
set grid
set title "TCP paths seen from above"
set xlabel "x [mm]"
set ylabel "y [mm]"
set size ratio -1
plot "$out/bimanual.csv" using (\$2*1000):(\$3*1000) every ::1 with lines lw 2 title "arm A (circle)", \
     "" using (\$5*1000):(\$6*1000) every ::1 with lines lw 2 title "arm B (A + offset)"
set size noratio
set title "B's distance from A + the start offset"
set xlabel "time [s]"
set ylabel "error [mm]"
plot "$out/bimanual.csv" using 1:8 every ::1 with lines lw 1 title "|A + offset - B|"
set title "the press, read by the sensor"
set ylabel "force [N]"
plot "$out/admittance.csv" using 1:3 every ::1 with lines lw 1 title "sensor (RDT, 7 kHz)", \
     10 with lines dt 2 lw 2 title "target 10 N"
set title "the tool's height"
set ylabel "z [mm]"
plot "$out/admittance.csv" using 1:(\$2*1000) every ::1 with lines lw 2 title "TCP z", \
     460 with lines dt 2 title "the surface"
unset multiplot
EOF
	echo "== plot: $out/rtloop-rig.png"
else
	echo "demo-rig: no plot (gnuplot is not installed)"
fi
