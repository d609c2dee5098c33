#!/bin/sh
# SPDX-License-Identifier: MIT
#
# rtloop-circle over the UDP transport and over the DRFL transport (the
# stand-in library of a -Ddrfl_standin=true build), each against a fresh
# rtde-sim --udp of the same build, alternating UDP and DRFL in every
# repetition (which goes first alternates too), so that the host's drift
# hits both alike. Per run: the tracking error and the simulator's echo
# round trip (a state sent -> the command that echoes it received: through
# the client's receive path, the loop, the step and the send). Prints one
# line per run and the medians, and the DRFL / UDP ratio of each median.
#
# Usage: compare-transports.sh BUILD_DIR [REPS] [SECONDS]
#   BUILD_DIR  a build configured with -Ddrfl_standin=true
#   REPS       repetitions (default 5), SECONDS per run (default 3)
set -eu

build=${1:?usage: $0 BUILD_DIR [REPS] [SECONDS]}
reps=${2:-5}
secs=${3:-3}
sim=$build/apps/rtde-sim/rtde-sim
circle=$build/apps/rtloop-circle/rtloop-circle
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

one() { # transport index
	"$sim" --udp --udp-port 0 --duration $((secs + 3)) --json "$tmp/sim.json" \
		>"$tmp/sim.out" 2>"$tmp/sim.err" &
	pid=$!
	port=
	for _ in $(seq 50); do
		port=$(sed -n 's/.*UDP on [0-9.]*:\([0-9][0-9]*\).*/\1/p' "$tmp/sim.err")
		[ -n "$port" ] && break
		sleep 0.1
	done
	[ -n "$port" ] || { echo "rtde-sim did not start: $(cat "$tmp/sim.err")" >&2; exit 1; }
	"$circle" --transport "$1" -H 127.0.0.1 -p "$port" -d "$secs" --json >"$tmp/c.json"
	kill -INT "$pid" 2>/dev/null || true
	wait "$pid" || true
	python3 - "$1" "$2" "$tmp/c.json" "$tmp/sim.json" >>"$tmp/runs.tsv" <<'EOF'
import json, sys
t, i, c, s = sys.argv[1], sys.argv[2], json.load(open(sys.argv[3])), json.load(open(sys.argv[4]))
e = s["echo_latency"]
print(t, i, c["rms_error_mm"], c["frames"], e["count"], e["p50_ns"] / 1e3, e["p99_ns"] / 1e3, sep="\t")
EOF
}

i=0
while [ "$i" -lt "$reps" ]; do
	if [ $((i % 2)) -eq 0 ]; then
		one udp "$i"
		one drfl "$i"
	else
		one drfl "$i"
		one udp "$i"
	fi
	i=$((i + 1))
done
python3 - "$tmp/runs.tsv" <<'EOF'
import statistics, sys
rows = [l.split("\t") for l in open(sys.argv[1]).read().split("\n") if l]
print("transport rep rms_mm frames echoes echo_p50_us echo_p99_us")
for r in rows:
    print(" ".join(r))
med = {}
for t in ("udp", "drfl"):
    mine = [r for r in rows if r[0] == t]
    med[t] = [statistics.median(float(r[k]) for r in mine) for k in (2, 5, 6)]
    print(f"median {t}: RMS {med[t][0]:.3f} mm, echo p50 {med[t][1]:.1f} us, p99 {med[t][2]:.1f} us")
print("drfl/udp: RMS x%.2f, echo p50 x%.2f, p99 x%.2f" % tuple(
    med["drfl"][k] / med["udp"][k] for k in range(3)))
EOF
