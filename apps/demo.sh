#!/bin/sh
# SPDX-License-Identifier: MIT
#
# make demo: a real control loop, end to end (docs/demo.md).
#
#   sh apps/demo.sh BUILD_DIR
#
# Without ROBOT: starts rtde-sim (e-Series profile, 500 Hz, loopback, any
# free port, a contact plane 2.8 cm below the start pose of the TCP, echo
# register 47), runs rtloop-admittance against it for DURATION seconds
# (default 20), then prints the loop's report, the simulator's report (its
# round trip) and plots both into BUILD_DIR/demo/rtloop-demo.png.
#
# With ROBOT=<host>: the same loop against a real controller (docs/real-robot.md),
# each step printed and each failure naming its step (exit 1). Read-only
# unless ARM=1: rtloop-arm check (the dashboard, read-only), then
# rtloop-admittance --read-only. ARM=1: a 5 s warning, rtloop-arm up
# (--unlock with UNLOCK=1), rtloop-admittance --upload (uploads
# rtloop_control.script, waits for it, runs, stops arm and program at exit),
# then rtloop-arm stop as the final belt-and-braces step.
#
# Environment: ROBOT, ARM, UNLOCK, PORT (the robot's RTDE port, default
# 30004), DASHBOARD_PORT (default 29999), PRIMARY_PORT (default 30001): the
# ports, so the sequence runs against rtde-sim --boot --port 0 too; DURATION
# (seconds, default 20), TARGET (force in N, default 10), DEMO_OUT (where the
# files go, default BUILD_DIR/demo), VIEW_PORT (the live view's port, default
# 8070, 0: any free one; VIEW=0: no live view), TELEMETRY (the telemetry's
# name, default demo).
#
# The loop publishes its telemetry (--telemetry demo); rtloop-view
# serves it live on http://127.0.0.1:VIEW_PORT/ while the demo runs.
set -eu
# shellcheck source=apps/demo-lib.sh
. "$(dirname "$0")/demo-lib.sh"

build=${1:-build}
app="$build/apps/rtloop-admittance/rtloop-admittance"
view="$build/apps/rtloop-view/rtloop-view"
telemetry=${TELEMETRY:-demo}
sim="$build/apps/rtde-sim/rtde-sim"
arm="$build/apps/rtloop-arm/rtloop-arm"
out=${DEMO_OUT:-$build/demo}
duration=${DURATION:-20}
target=${TARGET:-10}
# The simulator starts the UR5e at (0, -pi/2, pi/2, -pi/2, -pi/2, 0): the TCP
# is at z = 0.4879 m. The plane 28 mm below is reached in about 0.75 s at the
# free-space speed of the law (target / damping = 10 / 250 = 0.04 m/s).
contact_z=0.46

die() {
	echo "demo: $*" >&2
	exit 1
}

# CPU placement, as docs/tuning.md advises: the simulator on the first CPU
# this process may use; with two CPUs the loop's rx thread runs the step
# itself on the other one (--inline: no hand-off on a CPU the two threads
# would share), with three or more the rx thread and the worker get one each.
# shellcheck disable=SC2046
set -- $(sed -n 's/^Cpus_allowed_list:[[:space:]]*//p' /proc/self/status | awk -F, '{
	for (i = 1; i <= NF; i++) {
		n = split($i, r, "-")
		for (c = r[1]; c <= (n == 2 ? r[2] : r[1]); c++)
			cpu[k++] = c
	}
	if (k) print k, cpu[0], cpu[1 % k], cpu[k - 1]
}')
ncpu=${1:-1}
if [ "$ncpu" -ge 3 ]; then
	sim_pin="taskset -c $2"
	loop_cpus="--cpus $3,$4"
elif [ "$ncpu" -eq 2 ]; then
	sim_pin="taskset -c $2"
	loop_cpus="--cpus $4,$4 --inline"
else
	sim_pin=""
	loop_cpus="--inline"
fi
command -v taskset >/dev/null 2>&1 || sim_pin=""

[ -x "$app" ] || die "$app is missing: run 'make' (or ninja -C $build) first"
mkdir -p "$out"
rm -f "$out/demo.csv" "$out/loop.json" "$out/sim.json" "$out/sim.txt" "$out/rtloop-demo.png" \
	"$out/view.txt" "$out/view.log"

sim_pid=""
view_pid=""
cleanup() {
	[ -z "$view_pid" ] || stop_child "$view_pid"
	[ -z "$sim_pid" ] || stop_child "$sim_pid"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# The live view: the loop's telemetry in the browser while it runs.
if [ "${VIEW:-1}" != 0 ] && [ -x "$view" ]; then
	# The file exists before the first look: under set -e a sed of a file
	# the background job has not created yet would end the demo silently.
	: >"$out/view.txt"
	"$view" --port "${VIEW_PORT:-8070}" "$telemetry" >"$out/view.txt" 2>"$out/view.log" &
	view_pid=$!
	url=""
	tries=0
	while [ -z "$url" ] && [ $tries -lt 40 ] && kill -0 "$view_pid" 2>/dev/null; do
		url=$(sed -n 's|.*\(http://[^ ]*/\).*|\1|p' "$out/view.txt")
		[ -n "$url" ] || sleep 0.05
		tries=$((tries + 1))
	done
	if [ -n "$url" ]; then
		echo "== watch it live: open $url in a browser on this machine (rtloop-view $telemetry;"
		echo "   over SSH: ssh -L ${VIEW_PORT:-8070}:127.0.0.1:${VIEW_PORT:-8070} this-host)"
	else
		echo "demo: no live view: $(cat "$out/view.log") (VIEW_PORT=N takes another port)" >&2
		# It may be slow rather than dead: not left running after the demo.
		stop_child "$view_pid"
		view_pid=""
	fi
elif [ "${VIEW:-1}" != 0 ]; then
	echo "demo: no live view: this build has no rtloop-view (libmicrohttpd-dev; make deps)" >&2
fi

if [ -n "${ROBOT:-}" ]; then
	# ---- a real controller -------------------------------------------------
	[ -x "$arm" ] || die "$arm is missing: run 'make' (or ninja -C $build) first"
	# The ports only when given: each tool's default is the controller's.
	dash_opt=${DASHBOARD_PORT:+--dashboard-port $DASHBOARD_PORT}
	primary_opt=${PRIMARY_PORT:+--primary-port $PRIMARY_PORT}
	step() {
		echo
		echo "== demo: $*"
	}
	if [ "${ARM:-0}" = 1 ]; then
		# Before the warning: an armed run needs the upload option of the
		# RTDE transport (io/rtde/rtde_transport.c) in rtloop-admittance.
		"$app" --help 2>/dev/null | grep -q -- --upload ||
			die "ARM=1 needs rtloop-admittance --upload (it uploads rtloop_control.script" \
				"through the primary port), which this build lacks: update and rebuild;" \
				"until then run the read-only demo (no ARM=1)"
		cat >&2 <<EOF

  ##########################################################################
  #  ARMED: the robot at $ROBOT WILL MOVE.
  #  rtloop-arm powers it on and releases the brakes (UNLOCK=1: unlocks a stop);
  #  rtloop_control.script is uploaded and started. The TCP goes DOWN
  #  along the base z axis at up to 0.1 m/s until the tool presses on a
  #  surface with $target N, and holds that for $duration s.
  #  Keep the emergency stop in reach.
  #  Starting in 5 s: Ctrl-C now to abort.
  ##########################################################################

EOF
		sleep 5
		# make demo runs the build's tools: the build's program too, unless
		# the caller names one (the installed copy is found otherwise).
		if [ -z "${RTLOOP_CONTROL_SCRIPT:-}" ] &&
			[ -f "$build/io/rtde/script/rtloop_control.script" ]; then
			RTLOOP_CONTROL_SCRIPT="$build/io/rtde/script/rtloop_control.script"
			export RTLOOP_CONTROL_SCRIPT
		fi
		unlock_opt=""
		[ "${UNLOCK:-0}" = 1 ] && unlock_opt="--unlock"
		step "1/3 rtloop-arm up $ROBOT: power on, brake release${unlock_opt:+, unlock a protective stop}"
		# shellcheck disable=SC2086
		"$arm" up "$ROBOT" $dash_opt $unlock_opt ||
			die "step 1/3 (rtloop-arm up) failed: the arm is not up; the fix is above" \
				"(docs/real-robot.md lists every message)"
		step "2/3 rtloop-admittance --upload: upload rtloop_control.script, wait for it, run $duration s"
		status=0
		# shellcheck disable=SC2086
		"$app" --host "$ROBOT" --port "${PORT:-30004}" --upload $primary_opt $dash_opt \
			--duration "$duration" --target-force "$target" --csv "$out/demo.csv" \
			--json "$out/loop.json" --telemetry "$telemetry" || status=$?
		# The final stop runs whatever the loop did.
		step "3/3 rtloop-arm stop $ROBOT: the program stopped, whatever happened above"
		stop_status=0
		# shellcheck disable=SC2086
		"$arm" stop "$ROBOT" $dash_opt || stop_status=$?
		[ "$status" -eq 0 ] ||
			die "step 2/3 (rtloop-admittance --upload) failed (exit $status); the fix is above"
		[ "$stop_status" -eq 0 ] ||
			die "step 3/3 (rtloop-arm stop) failed (exit $stop_status): stop the program" \
				"on the teach pendant"
	else
		echo "demo: ROBOT=$ROBOT: read-only (nothing is written to the controller;" \
			"ARM=1 makes it move)" >&2
		step "1/2 rtloop-arm check $ROBOT: the dashboard, read-only"
		# shellcheck disable=SC2086
		"$arm" check "$ROBOT" $dash_opt --no-dashboard-ok ||
			die "step 1/2 (rtloop-arm check) failed: the fix is above"
		step "2/2 rtloop-admittance --read-only: $duration s of pose and force, nothing sent"
		"$app" --host "$ROBOT" --port "${PORT:-30004}" --duration "$duration" \
			--target-force "$target" --read-only --csv "$out/demo.csv" \
			--json "$out/loop.json" --telemetry "$telemetry" ||
			die "step 2/2 (rtloop-admittance --read-only) failed against $ROBOT"
	fi
	hist_src=loop
else
	# ---- the simulator -----------------------------------------------------
	[ -x "$sim" ] || die "$sim is missing: run 'make' first"
	echo "== rtde-sim: e-Series profile, 500 Hz, loopback; contact plane at z = $contact_z m"
	# Port 0: the simulator takes a free port and names it on stderr. Its
	# --duration is a safety net; it is stopped (SIGTERM, clean report) when
	# the loop is done. --priority is best effort: refused, it runs as is.
	echo "   CPUs: ${sim_pin:+simulator on ${sim_pin#taskset -c }, }loop ${loop_cpus}"
	: >"$out/sim.log"
	# shellcheck disable=SC2086
	$sim_pin "$sim" --profile eseries --port 0 --contact-z "$contact_z" --force-noise 0.3 \
		--echo-register 47 --priority 70 --json "$out/sim.json" \
		--duration $((duration + 10)) >"$out/sim.txt" 2>"$out/sim.log" &
	sim_pid=$!
	port=""
	tries=0
	while [ -z "$port" ] && [ $tries -lt 100 ]; do
		kill -0 "$sim_pid" 2>/dev/null || {
			cat "$out/sim.log" >&2
			sim_pid=""
			die "rtde-sim did not start"
		}
		port=$(sed -n 's/.*listening on [0-9.]*:\([0-9][0-9]*\).*/\1/p' "$out/sim.log")
		[ -n "$port" ] || sleep 0.05
		tries=$((tries + 1))
	done
	[ -n "$port" ] || die "rtde-sim did not say which port it listens on ($out/sim.log)"
	echo "== rtloop-admittance: ${duration} s, pressing with $target N (speedl along z)"
	status=0
	# shellcheck disable=SC2086
	"$app" --port "$port" --duration "$duration" --target-force "$target" --echo $loop_cpus \
		--csv "$out/demo.csv" --json "$out/loop.json" --telemetry "$telemetry" || status=$?
	# The loop left once the arm was slower than 0.001 rad/s; the controller
	# (as a real one) goes on with the stop: give it the last creep before
	# its report says where the arm ended.
	sleep 0.5
	kill -TERM "$sim_pid" 2>/dev/null || true
	wait "$sim_pid" || true
	sim_pid=""
	echo
	echo "== rtde-sim's report (the round trip: data package out -> loop -> echo back in)"
	cat "$out/sim.txt"
	[ "$status" -eq 0 ] || die "rtloop-admittance failed (exit $status)"
	hist_src=sim
fi

# ---- the plot -----------------------------------------------------------------
if ! command -v gnuplot >/dev/null 2>&1 || ! command -v python3 >/dev/null 2>&1; then
	echo "demo: no plot: gnuplot and python3 are needed (make deps installs them)" >&2
	exit 0
fi

# The histograms of the JSON reports, re-binned at 20 bins per decade for a
# log-log plot; titles with the percentiles go to a gnuplot include.
python3 - "$hist_src" "$out" <<'EOF'
import json, math, sys

src, out = sys.argv[1], sys.argv[2]
if src == "sim":
    d = json.load(open(out + "/sim.json"))
    series = [("rt", d["echo"]["latency"], "round trip sim -> loop -> sim"),
              ("floor", d["wake_lateness"], "simulator wake-up lateness (floor)")]
    head = "RTDE round trip over loopback, 500 Hz (rtde-sim echo, register 47)"
else:
    d = json.load(open(out + "/loop.json"))
    h = d["histograms"]
    series = [("rt", h["rx_to_step"], "loop: receive -> step"),
              ("floor", h["step_to_send"], "loop: step -> send")]
    head = "Loop latency against the robot (client side)"
per = 20
inc = open(out + "/plot.gp", "w")
inc.write('head = "%s"\n' % head)
for name, hist, label in series:
    bins = {}
    for lower, count in hist.get("buckets", []):
        us = max(lower / 1e3, 0.1)
        k = math.floor(math.log10(us) * per)
        bins[k] = bins.get(k, 0) + count
    with open("%s/hist-%s.dat" % (out, name), "w") as f:
        for k in sorted(bins):
            f.write("%g %g %d\n" % (10 ** (k / per), 10 ** ((k + 1) / per), bins[k]))
        if not bins:
            f.write("1 1.1 0\n")
    n = hist.get("count", 0)
    t = "%s: n=%d p50=%.0f p99=%.0f max=%.0f us" % (
        label, n, hist.get("p50_ns", 0) / 1e3, hist.get("p99_ns", 0) / 1e3,
        hist.get("max_ns", 0) / 1e3)
    inc.write('t_%s = "%s"\n' % (name, t))
EOF

png="$out/rtloop-demo.png"
plane=""
[ "$hist_src" = sim ] &&
	plane=", $contact_z*1000 with lines dt 3 lw 1 lc rgb \"#555555\" title \"contact plane (rtde-sim --contact-z)\""
what="admittance control pressing with $target N"
[ -n "${ROBOT:-}" ] && [ "${ARM:-0}" != 1 ] && what="robot $ROBOT, read-only (no commands sent)"
[ -n "${ROBOT:-}" ] && [ "${ARM:-0}" = 1 ] && what="robot $ROBOT, pressing with $target N"
gnuplot 2>"$out/gnuplot.log" <<EOF || { cat "$out/gnuplot.log" >&2; die "gnuplot failed"; }
load "$out/plot.gp"
set terminal pngcairo size 1200,1100 font "Sans,11"
set output "$png"
set multiplot title "rtloop demo: $what" font "Sans,14"

# Top: the latency histogram, log-log.
set size 1,0.5
set origin 0,0.47
set title head noenhanced
set logscale x
set logscale y
set xlabel "latency [us] (log scale)"
set ylabel "samples per bin (log scale)"
set yrange [0.8:*]
set grid xtics ytics mxtics
set key top right box opaque noenhanced
set style fill transparent solid 0.45 border
plot "$out/hist-rt.dat" using (sqrt(\$1*\$2)):3:1:2:(0.8):3 with boxxyerror lc rgb "#1f77b4" title t_rt, \
     "$out/hist-floor.dat" using (sqrt(\$1*\$2)):3:1:2:(0.8):3 with boxxyerror lc rgb "#ff7f0e" title t_floor

# Bottom: TCP z and the pressing force, the whole run and the first 2 s.
unset logscale x
unset logscale y
set yrange [*:*]
set autoscale xfix
set datafile separator ","
set ylabel "TCP z [mm]" textcolor rgb "#1f77b4"
set y2label "pressing force -F_z [N]" textcolor rgb "#d62728"
set ytics nomirror textcolor rgb "#1f77b4"
set y2tics textcolor rgb "#d62728"
set y2range [-2:$target * 2]
set xlabel "time [s]"
set key top right box opaque noenhanced
set size 0.5,0.47
set origin 0,0
set title "TCP height and contact force, whole run"
plot "$out/demo.csv" using 1:(\$2*1000) every ::1 with lines lw 2 lc rgb "#1f77b4" title "TCP z (actual_TCP_pose)", \
     "$out/demo.csv" using 1:(-\$3) every ::1 axes x1y2 with lines lw 1 lc rgb "#d62728" title "-F_z (actual_TCP_force)", \
     $target axes x1y2 with lines dt 2 lw 2 lc rgb "#2ca02c" title "target $target N"$plane
set origin 0.5,0
set title "approach and contact, first 2 s"
set xrange [0:2]
plot "$out/demo.csv" using 1:(\$2*1000) every ::1 with lines lw 2 lc rgb "#1f77b4" title "TCP z (actual_TCP_pose)", \
     "$out/demo.csv" using 1:(-\$3) every ::1 axes x1y2 with lines lw 1 lc rgb "#d62728" title "-F_z (actual_TCP_force)", \
     $target axes x1y2 with lines dt 2 lw 2 lc rgb "#2ca02c" title "target $target N"$plane
unset multiplot
EOF
echo
echo "== plot: $png"
