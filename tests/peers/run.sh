#!/bin/sh
# SPDX-License-Identifier: MIT
#
# One test of the peers suite (docs/peers.md): start rtde-sim, run one of
# the programs tests/peers/fetch.sh built against a third-party client
# library, stop the simulator, then hold its JSON report against what the
# program saw (tests/peers/check-report.py).
#
#   tests/peers/run.sh RTDE_SIM PEERS_BUILD_DIR TEST
#
# TEST names the program and how it runs (the table in run_test below).
# ur_rtde's RTDE interfaces and URCL's dashboard client connect to the
# default ports only, so those tests run in a private network namespace
# (unshare -n, loopback up) next to an rtde-sim on the default ports: root
# only. The others use an rtde-sim on free ports.
#
# Exit status: 0 passed, 1 failed, 77 skipped (the peers are not built, or
# no network namespace can be made), as Meson counts them; the reason is
# printed.
set -eu

sim=$1
peers=$2
name=$3
here=$(cd "$(dirname "$0")" && pwd)
bin=$peers/tests

skip() { echo "SKIP: peers-$name: $*"; exit 77; }
fail() { echo "FAIL: peers-$name: $*" >&2; exit 1; }

# What fetch.sh left: ok, skipped or failed (a failed peer build is a
# failure, not a skip: the archives were there).
if [ "${RTL_PEERS_IN_NETNS:-}" != 1 ]; then
	[ -f "$peers/status" ] || skip "the peer libraries are not built (no $peers/status): run 'tests/peers/fetch.sh $peers ARCHIVE_DIR' or 'make test PEERS=ARCHIVE_DIR' (docs/peers.md)"
	status=$(cat "$peers/status")
	case $status in
	ok) ;;
	skipped*) skip "${status#skipped: }" ;;
	*) fail "the peer build failed: ${status#failed: }" ;;
	esac
fi

# The table: program, arguments after the host, rtde-sim flags, whether it
# needs the default ports (a namespace). @P: the RTDE port, @D: the
# dashboard port, @R: tests/peers, @S: URCL's installed resources (its
# External Control program).
case $name in
ur_rtde-receive) prog=ur_rtde-receive args="1" flags="" netns=1 ;;
ur_rtde-dashboard) prog=ur_rtde-dashboard args="@D" flags="--boot" netns=0 ;;
ur_rtde-dashboard-commands) prog=ur_rtde-dashboard-commands args="@D" flags="" netns=0 ;;
ur_rtde-control-speedj | ur_rtde-control-servoj | ur_rtde-control-moves | \
	ur_rtde-control-kinematics | ur_rtde-control-io | ur_rtde-control-watchdog)
	prog=$name args="" flags="" netns=1 ;;
ur_rtde-control-kinematics-upper) prog=ur_rtde-control-kinematics args="upper" flags="" netns=1 ;;
ur_rtde-control-moves-cb3) prog=ur_rtde-control-moves args="" flags="--profile cb3" netns=1 ;;
ur_rtde-control-force) prog=$name args="" flags="--contact-z 0.4679" netns=1 ;;
ur_rtde-control-teach) prog=$name args="" flags="--push-z 10 --push-after 0.5 --push-for 1" netns=1 ;;
urcl-rtde) prog=urcl-rtde args="@P @R/urcl/output_recipe.txt @R/urcl/input_recipe.txt 1" flags="" netns=0 ;;
urcl-external-control | urcl-external-control-urcap)
	prog=urcl-external-control flags="" netns=1
	args="@S/external_control.urscript @R/urcl/driver_output_recipe.txt @R/urcl/driver_input_recipe.txt"
	[ "$name" = urcl-external-control ] || args="$args urcap" ;;
urcl-dashboard) prog=urcl-dashboard args="" flags="--boot" netns=1 ;;
urcl-dashboard-commands) prog=urcl-dashboard-commands args="" flags="" netns=1 ;;
*) fail "no such test: $name" ;;
esac
[ -x "$bin/$prog" ] || fail "$bin/$prog was not built (see $peers/tests.log)"

if [ "$netns" = 1 ] && [ "${RTL_PEERS_IN_NETNS:-}" != 1 ]; then
	[ "$(id -u)" = 0 ] || skip "$prog connects to the default ports only, which needs a private network namespace (unshare -n): run as root"
	command -v unshare >/dev/null 2>&1 && command -v ip >/dev/null 2>&1 ||
		skip "needs unshare (util-linux) and ip (iproute2) for a private network namespace"
	unshare -n true 2>/dev/null || skip "unshare -n is not permitted here (a container without CAP_SYS_ADMIN?)"
	RTL_PEERS_IN_NETNS=1 exec unshare -n sh "$0" "$@"
fi
if [ "${RTL_PEERS_IN_NETNS:-}" = 1 ]; then
	ip link set lo up || fail "cannot bring up loopback in the namespace"
	port=30004
else
	port=0
fi

tmp=$(mktemp -d "${TMPDIR:-/tmp}/rtl-peers.XXXXXX")
pid=
cleanup() {
	[ -z "$pid" ] || kill "$pid" 2>/dev/null || true
	rm -rf "$tmp"
}
trap cleanup EXIT

# rtde-sim bounded by --duration (and killed by the trap if we stop early).
# The log exists before the simulator starts: the background job opens its
# redirection only once it runs, and the first read below may come first.
: >"$tmp/sim.log"
# shellcheck disable=SC2086 # the flags are words
"$sim" --port "$port" $flags --duration 30 --json "$tmp/sim.json" >"$tmp/sim.txt" 2>"$tmp/sim.log" &
pid=$!
rtde= dash= i=0
while { [ -z "$rtde" ] || [ -z "$dash" ]; } && [ $i -lt 100 ] && kill -0 "$pid" 2>/dev/null; do
	rtde=$(sed -n 's/.*listening on [0-9.]*:\([0-9][0-9]*\).*/\1/p' "$tmp/sim.log")
	dash=$(sed -n 's/.*dashboard port \([0-9][0-9]*\).*/\1/p' "$tmp/sim.log")
	[ -n "$rtde" ] && [ -n "$dash" ] || sleep 0.05
	i=$((i + 1))
done
[ -n "$rtde" ] && [ -n "$dash" ] || { cat "$tmp/sim.log" >&2; fail "rtde-sim did not start"; }
echo "# rtde-sim $flags on 127.0.0.1: rtde $rtde, dashboard $dash${RTL_PEERS_IN_NETNS:+ (private network namespace)}"

# ur_rtde's control interface first stops a program that plays (it waits
# 3 s for that program to answer as its own script would): the control
# tests start from a controller with no program, as a robot at rest in
# remote control is found, by the dashboard's stop. The watchdog test
# keeps rtloop's program playing, so that path (ur_rtde stops it, then
# uploads its own) stays covered.
case $name in
ur_rtde-control-watchdog) ;;
ur_rtde-control-*)
	python3 - "$dash" <<'PY' || fail "the dashboard's stop was not answered"
import socket, sys
s = socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=5)
f = s.makefile("rw")
f.readline()
f.write("stop\n")
f.flush()
sys.exit(0 if f.readline().strip() == "Stopped" else 1)
PY
	;;
esac

set -- 127.0.0.1
for a in $args; do
	a=$(echo "$a" | sed "s|@P|$rtde|; s|@D|$dash|; s|@R|$here|; s|@S|$peers/prefix/share/ur_client_library/resources|")
	set -- "$@" "$a"
done
echo "# $prog $*"
rc=0
timeout 60 "$bin/$prog" "$@" >"$tmp/client.out" 2>"$tmp/client.err" || rc=$?
cat "$tmp/client.out"
[ $rc = 0 ] || { echo "# $prog exited $rc; its stderr:"; sed 's/^/#   /' "$tmp/client.err"; }

# SIGTERM: rtde-sim closes every connection and writes its report.
kill -TERM "$pid" 2>/dev/null || true
wait "$pid" || { cat "$tmp/sim.log" >&2; fail "rtde-sim failed"; }
pid=
python3 "$here/check-report.py" "$name" "$tmp/sim.json" "$tmp/client.out" || rc=1
exit $rc
