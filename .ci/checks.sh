# SPDX-License-Identifier: MIT
# Sourced by the .ci/check-*.sh scripts: their checks, one "ok - ..." or
# "not ok - ..." line each (a failure shows the end of its log), and the
# installed rtde-sim they run against. The sourcing script sets $tmp (a
# scratch directory) first and ends with "finish NAME".

pass=0
failed=0
sim_pid=

ok() {
	pass=$((pass + 1))
	echo "ok - $1"
}

not_ok() { # description, log file
	failed=$((failed + 1))
	echo "not ok - $1"
	if [ -n "${2:-}" ] && [ -s "$2" ]; then tail -n 25 "$2" | sed 's/^/#   /'; fi
}

# check DESCRIPTION COMMAND...: COMMAND's output goes to $tmp/log, shown
# when it fails.
check() {
	_d=$1
	shift
	if "$@" >"$tmp/log" 2>&1; then ok "$_d"; else not_ok "$_d" "$tmp/log"; fi
}

# finish NAME: the count line .ci/run reads, and the exit status.
finish() {
	echo "# $1: $pass passed, $failed failed"
	[ "$failed" -eq 0 ]
	exit $?
}

# start_sim RTDE_SIM ARGS...: rtde-sim on a free loopback port, its report
# in $tmp/sim.json; sets $port (empty when it did not start within 5 s).
start_sim() {
	_exe=$1
	shift
	"$_exe" --port 0 "$@" --json "$tmp/sim.json" >"$tmp/sim.out" 2>"$tmp/sim.log" &
	sim_pid=$!
	port=
	_i=0
	while [ $_i -lt 50 ] && [ -z "$port" ]; do
		port=$(sed -n 's/.*listening on [0-9.]*:\([0-9][0-9]*\).*/\1/p' "$tmp/sim.log" | head -n 1)
		[ -n "$port" ] || sleep 0.1
		_i=$((_i + 1))
	done
	if [ -n "$port" ]; then ok "rtde-sim listens on 127.0.0.1:$port"; else not_ok "rtde-sim started" "$tmp/sim.log"; fi
}

stop_sim() {
	if [ -n "$sim_pid" ]; then
		kill "$sim_pid" 2>/dev/null
		wait "$sim_pid" 2>/dev/null
		sim_pid=
	fi
}
