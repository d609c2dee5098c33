#!/bin/sh
# SPDX-License-Identifier: MIT
#
# rtde-record --plot: recordings of an rtde-sim that skips packages (CSV and
# binary), a recording with its timestamp reset, and the failures (a field
# the recording lacks, no gnuplot, not a recording, no row, an output that
# cannot be written). The counts the tool prints and draws are checked
# against the recording itself (awk over its lost column), the PNG's size
# against the panels asked for, the SVG as XML holding the title's counts.
# Usage: test-record-plot.sh path/to/rtde-record path/to/rtde-sim OUTDIR
# (RTL_ARTIFACTS overrides OUTDIR: a plot is kept there). Writes TAP.
set -u

app=${1:?usage: $0 path/to/rtde-record path/to/rtde-sim OUTDIR}
sim=${2:?usage: $0 path/to/rtde-record path/to/rtde-sim OUTDIR}
outdir=${RTL_ARTIFACTS:-${3:?usage: $0 path/to/rtde-record path/to/rtde-sim OUTDIR}}
# shellcheck source=SCRIPTDIR/tap.sh
. "$(dirname "$0")/tap.sh"
tap_init rtl-record-plot
run_timeout=60

if ! have gnuplot; then
	skip "rtde-record --plot" "gnuplot is not installed (apt-get install gnuplot-nox)"
	finish
fi

# The truth of a CSV recording: rows, packages lost, rows with a loss.
truth() {
	awk 'NR == 1 { for (i = 1; i <= NF; i++) if ($i == "lost") c = i; next }
		{ n++; l += $c; if ($c > 0) g++ }
		END { printf "%d rows, %d packages lost in %d gaps", n, l, g }' "$1"
}

# The width and height of a PNG (its IHDR), as "WxH".
png_size() {
	od -An -tu1 -j16 -N8 "$1" | awk '{ printf "%dx%d", $1*16777216 + $2*65536 + $3*256 + $4,
		$5*16777216 + $6*65536 + $7*256 + $8 }'
}

# --- recordings with skips -----------------------------------------------------
if ! start_sim "$sim_rtde_port" --port 0 --skip-every 50 --skip-count 2 --duration 30; then
	fail "rtde-sim started (log: $(cat "$tmp/sim.log"))"
	finish
fi
run --port "$port" --frequency 0 --fields timestamp,actual_q,actual_TCP_force,robot_mode \
	--duration 1 --no-rt -o "$tmp/rec.csv"
check "a CSV recording with skips" [ "$rc" -eq 0 ]
run --port "$port" --frequency 0 --fields timestamp,actual_q --duration 1 --no-rt -b \
	-o "$tmp/rec.rtlrec"
check "a binary recording with skips" [ "$rc" -eq 0 ]
stop_sim

want=$(truth "$tmp/rec.csv")
run --plot "$tmp/rec.csv" --fields actual_q,actual_TCP_force,robot_mode -o "$tmp/p"
check "--plot a CSV: exit 0" [ "$rc" -eq 0 ]
check "--plot prints the recording's own counts: $want" contains "$err" "$want"
check "--plot wrote a PNG of 3 panels and the loss (1400x$((3 * 230 + 170 + 60)))" \
	[ "$(png_size "$tmp/p.png")" = "1400x$((3 * 230 + 170 + 60))" ]
py_check "--plot wrote an SVG whose title has the counts" '
import sys, xml.etree.ElementTree as ET
t = "".join(ET.parse(sys.argv[1]).getroot().itertext())
sys.exit(0 if sys.argv[2] in t and "actual_TCP_force_2" in t else 1)' "$tmp/p.svg" "$want"
check "the recording has skips to mark (${want})" \
	awk -v w="$want" 'BEGIN { split(w, a, " "); exit !(a[3] > 0) }'
mkdir -p "$outdir" && cp "$tmp/p.png" "$outdir/rtde-record-plot.png" &&
	echo "# plot kept: $outdir/rtde-record-plot.png"

"$app" --dump "$tmp/rec.rtlrec" -o "$tmp/dumped.csv" 2>/dev/null
want=$(truth "$tmp/dumped.csv")
run --plot "$tmp/rec.rtlrec"
check "--plot a binary recording: exit 0, its counts: $want" \
	sh -c '[ "$1" -eq 0 ] && case $2 in *"$3"*) exit 0 ;; *) exit 1 ;; esac' _ "$rc" "$err" "$want"
check "the default output is the recording's name: rec.png and rec.svg" \
	[ -s "$tmp/rec.png" ] && [ -s "$tmp/rec.svg" ]

# --- a timestamp that goes back --------------------------------------------------
# From row 202 on the controller's clock reads 100 s earlier: it went back.
awk 'NR > 201 { $1 = $1 - 100 } { print }' "$tmp/rec.csv" >"$tmp/reset.csv"
run --plot "$tmp/reset.csv" --fields robot_mode -o "$tmp/reset"
check "a timestamp that jumps is marked as one reset" contains "$err" "1 timestamp resets"

# --- failures --------------------------------------------------------------------
run --plot "$tmp/rec.csv" --fields actual_q,nope
check "a field the recording lacks: exit 2, named with the fields it has" \
	exits_saying 2 "no field 'nope'; it has timestamp, actual_q, actual_TCP_force, robot_mode"
run_cmd env PATH=/nonexistent "$app" --plot "$tmp/rec.csv"
check "no gnuplot: exit 1, naming the package" exits_saying 1 "apt-get install gnuplot-nox"
printf 'this is not a recording\n' >"$tmp/junk.csv"
run --plot "$tmp/junk.csv"
check "not a recording: exit 1" [ "$rc" -eq 1 ]
head -n 1 "$tmp/rec.csv" >"$tmp/empty.csv"
run --plot "$tmp/empty.csv"
check "a recording without a row: exit 1, nothing to plot" exits_saying 1 "no row"
run --plot "$tmp/rec.csv" -o "$tmp/no/such/dir/p"
check "an output that cannot be written: exit 1, gnuplot's reason" \
	exits_saying 1 "gnuplot failed"
run --plot "$tmp/rec.csv" --config x.xml
check "--plot with --config: a usage error" [ "$rc" -eq 2 ]
run --title T --fields actual_q
check "--title without --plot: a usage error" exits_saying 2 "--plot"
finish
