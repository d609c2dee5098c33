#!/bin/sh
# SPDX-License-Identifier: MIT
#
# Soak test of rtde-sim (not run by CI): the simulator (e-Series, 500 Hz)
# with five light clients (tests/soak/soak-client.c: the RTDE transport under
# the loop, reading `timestamp`) for DURATION seconds, sampling the
# simulator's resident set (VmRSS) every 10 s. At the end it prints, per client, the packages, the
# skips the client counted and the drift of the controller's timestamps
# against the client's CLOCK_MONOTONIC, then the RSS series (start, max,
# end, and every sample).
#
# Usage: tests/soak/sim-soak.sh [DURATION_S]          (default 600)
#   BUILD=DIR        build directory (default: build)
#   RTDE_SIM=PATH    the simulator (default: $BUILD/apps/rtde-sim/rtde-sim)
#   SOAK_CLIENT=PATH the client (default: $BUILD/tests/soak/soak-client)
#   CLIENTS=N        number of clients (default 5)
# Exit status: 0 when every client streamed to the end, 1 otherwise, 2 for
# bad arguments or missing programs.
set -u

duration=${1:-600}
case $duration in
'' | *[!0-9]*)
	echo "sim-soak: DURATION must be whole seconds, not '$duration'" >&2
	exit 2
	;;
esac
build=${BUILD:-build}
sim=${RTDE_SIM:-$build/apps/rtde-sim/rtde-sim}
client=${SOAK_CLIENT:-$build/tests/soak/soak-client}
nclients=${CLIENTS:-5}
for p in "$sim" "$client"; do
	if [ ! -x "$p" ]; then
		echo "sim-soak: $p is not an executable (build first, or set BUILD)" >&2
		exit 2
	fi
done

tmp=$(mktemp -d "${TMPDIR:-/tmp}/rtl-sim-soak.XXXXXX") || exit 2
sim_pid=
cleanup() {
	[ -n "$sim_pid" ] && kill "$sim_pid" 2>/dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 1' INT TERM

# The simulator on an ephemeral port; it stops itself 30 s after the clients
# should have ended, in case this script dies.
"$sim" --profile eseries --port 0 --duration $((duration + 30)) \
	--json "$tmp/sim.json" >"$tmp/sim.out" 2>"$tmp/sim.err" &
sim_pid=$!
# The port is in its start line: "rtde-sim: listening on 127.0.0.1:PORT (...)".
port=
i=0
while [ -z "$port" ] && [ $i -lt 50 ]; do
	sleep 0.1
	i=$((i + 1))
	port=$(sed -n 's/.*listening on [0-9.]*:\([0-9]*\) .*/\1/p' "$tmp/sim.err")
done
if [ -z "$port" ]; then
	echo "sim-soak: rtde-sim did not start listening:" >&2
	cat "$tmp/sim.err" >&2
	exit 1
fi
rss() { awk '/^VmRSS:/ { print $2 }' /proc/$sim_pid/status 2>/dev/null; }

echo "sim-soak: rtde-sim pid $sim_pid on port $port, $nclients clients, $duration s"
pids=
c=1
while [ $c -le "$nclients" ]; do
	"$client" -p "$port" -d "$duration" >"$tmp/client$c.out" 2>"$tmp/client$c.err" &
	pids="$pids $!"
	c=$((c + 1))
done

# RSS every 10 s while the clients run (the first once they are up, the
# last before they end), then once after they have closed.
sleep 1
series=$(rss)
t=1
while [ $((t + 10)) -lt "$duration" ]; do
	sleep 10
	t=$((t + 10))
	series="$series $(rss)"
done

status=0
for p in $pids; do
	wait "$p" || status=1
done
after=$(rss)
kill -INT "$sim_pid"
wait "$sim_pid"
sim_pid=

echo "clients (drift = timestamp span - wall span between the first and the last package):"
c=1
while [ $c -le "$nclients" ]; do
	line=$(cat "$tmp/client$c.out")
	if [ -z "$line" ]; then
		echo "  client $c: failed: $(cat "$tmp/client$c.err")"
		status=1
	else
		echo "  client $c: $line"
	fi
	c=$((c + 1))
done
echo "$series" | awk '{
	max = $1
	for (i = 2; i <= NF; i++) if ($i + 0 > max + 0) max = $i
	printf "rtde-sim VmRSS [kB] while streaming: start %s, max %s, end %s (%d samples, every 10 s)\n", $1, max, $NF, NF
	printf "  series: %s\n", $0
}'
echo "rtde-sim VmRSS [kB] after the clients closed: $after"
sed -n 's/^ *\(cycles:.*\)/rtde-sim \1/p; s/^ *\(clients:.*\)/rtde-sim \1/p; s/^ *\(host:.*\)/rtde-sim \1/p; s/^ *\(cycle wake-up.*\)/rtde-sim \1/p' \
	"$tmp/sim.out"
exit $status
