# SPDX-License-Identifier: MIT
#
# The TAP plumbing shared by the shell tests (tests/apps/*.sh and
# tests/tracing/*.sh). POSIX sh; sourced, never run:
#   . "$(dirname "$0")/tap.sh"            (from tests/apps)
#   . "$(dirname "$0")/../apps/tap.sh"    (from tests/tracing)
#
# State it keeps in the sourcing script: n (results printed), failed (how
# many were "not ok"), tmp (the scratch directory), out/err/rc (the last
# run), sim_pid/port (the rtde-sim started by start_sim). Its own scratch
# variables start with _tap_ so they never clobber a script's.
# Optional settings: app (what run runs), sim (what start_sim starts),
# run_timeout (seconds run/run_cmd allow, none when empty), tap_diag_file (a
# file shown, when not empty, under each "not ok").
# shellcheck shell=sh disable=SC2034 # out, err, rc, port: read by the scripts

n=0
failed=0
tap_planned=
tmp=
sim_pid=
port=

# tap_init NAME: makes $tmp (NAME.XXXXXX under $TMPDIR), removed on exit
# (with the rtde-sim of start_sim, if one runs); a signal ends the script.
# A script with more to undo sets its own EXIT trap and calls tap_cleanup.
tap_init() {
	tmp=$(mktemp -d "${TMPDIR:-/tmp}/$1.XXXXXX") || exit 99
	trap tap_cleanup EXIT
	trap 'exit 129' HUP
	trap 'exit 130' INT
	trap 'exit 143' TERM
}

# tap_cleanup: stops the simulator and removes $tmp.
tap_cleanup() {
	stop_sim
	[ -n "$tmp" ] && rm -rf "$tmp"
}

# plan COUNT: prints the plan first, for a script with a fixed number of
# results; finish then checks that many were printed.
plan() {
	tap_planned=$1
	echo "1..$1"
}

# skip_all REASON: the whole script is skipped ("1..0 # SKIP"); exits 0.
skip_all() {
	echo "1..0 # SKIP $1"
	exit 0
}

# ok DESCRIPTION: a passing result.
ok() {
	n=$((n + 1))
	echo "ok $n - $1"
}

# fail DESCRIPTION [DIAGNOSTIC...]: a failing result, each non-empty
# DIAGNOSTIC (and $tap_diag_file, when set and not empty) shown as "# " lines.
fail() {
	n=$((n + 1))
	failed=$((failed + 1))
	echo "not ok $n - $1"
	shift
	for _tap_g in "$@"; do
		if [ -n "$_tap_g" ]; then
			printf '%s\n' "$_tap_g" | sed 's/^/# /'
		fi
	done
	if [ -n "${tap_diag_file:-}" ] && [ -s "$tap_diag_file" ]; then
		sed 's/^/# /' "$tap_diag_file" | head -20
	fi
	return 0
}

# skip DESCRIPTION REASON: a result not checked here ("ok # SKIP REASON").
skip() {
	n=$((n + 1))
	echo "ok $n - $1 # SKIP $2"
}

# check DESCRIPTION COMMAND...: passes when COMMAND succeeds.
check() {
	_tap_desc=$1
	shift
	if "$@"; then ok "$_tap_desc"; else fail "$_tap_desc"; fi
}

# check_quiet DESCRIPTION COMMAND...: as check, COMMAND's output kept out of
# the TAP stream; its last 5 lines are shown when it fails.
check_quiet() {
	_tap_desc=$1
	shift
	if "$@" >"$tmp/check.out" 2>&1; then
		ok "$_tap_desc"
	else
		fail "$_tap_desc" "$(tail -n 5 "$tmp/check.out")"
	fi
}

# report_lines FILE: one result per line of FILE, as a checker written in
# another language prints them: "ok<TAB>description" or
# "not ok<TAB>description<TAB>diagnostic".
report_lines() {
	_tap_tab=$(printf '\t')
	while IFS="$_tap_tab" read -r _tap_v _tap_d _tap_g; do
		if [ "$_tap_v" = ok ]; then ok "$_tap_d"; else fail "$_tap_d" "$_tap_g"; fi
	done <"$1"
}

# finish: prints the plan (unless plan printed it) and exits 0 when every
# result passed (and, after plan, all of them were printed), else 1.
finish() {
	if [ -z "$tap_planned" ]; then
		echo "1..$n"
	elif [ "$n" -ne "$tap_planned" ]; then
		echo "# planned $tap_planned results, printed $n"
		exit 1
	fi
	[ "$failed" -eq 0 ] || exit 1
	exit 0
}

# have COMMAND: succeeds when COMMAND is on the PATH.
have() {
	command -v "$1" >/dev/null 2>&1
}

# run_cmd COMMAND ARGS...: runs COMMAND (under timeout(1) when $run_timeout
# is set), leaving its exit status in $rc, its output in $out and $err (and
# in the files $tmp/out and $tmp/err).
run_cmd() {
	if [ -n "${run_timeout:-}" ]; then
		timeout "$run_timeout" "$@" >"$tmp/out" 2>"$tmp/err"
	else
		"$@" >"$tmp/out" 2>"$tmp/err"
	fi
	rc=$?
	out=$(cat "$tmp/out")
	err=$(cat "$tmp/err")
}

# run ARGS...: run_cmd on the app under test, $app.
run() {
	run_cmd "${app:?run: set app to the program under test}" "$@"
}

# check_exits CODE ARGS...: runs the app with ARGS and checks that it exited
# CODE ("ARGS exits CODE"); $out and $err are left for further checks.
check_exits() {
	_tap_code=$1
	shift
	run "$@"
	check "$* exits $_tap_code" [ "$rc" -eq "$_tap_code" ]
}

# check_unknown_flag FLAG [WHAT]: runs the app with the unknown option FLAG
# and checks how the apps' shared option parsing (apps/common/cli.h) refuses
# it: exit 2, 'FLAG' named on stderr, a pointer to --help, nothing on
# stdout. WHAT (default "an unknown flag") begins each description.
check_unknown_flag() {
	_tap_what=${2:-an unknown flag}
	run "$1"
	check "$_tap_what exits 2" [ "$rc" -eq 2 ]
	check "$_tap_what is named on stderr" contains "$err" "'$1'"
	check "$_tap_what points at --help" contains "$err" "--help"
	check "$_tap_what prints nothing on stdout" [ -z "$out" ]
}

# contains TEXT PART: succeeds when PART occurs in TEXT.
contains() {
	case $1 in *"$2"*) return 0 ;; esac
	return 1
}

# in_order TEXT PART...: succeeds when every PART occurs in TEXT, in order.
in_order() {
	_tap_t=$1
	shift
	for _tap_p in "$@"; do
		case $_tap_t in
		*"$_tap_p"*) _tap_t=${_tap_t#*"$_tap_p"} ;;
		*) return 1 ;;
		esac
	done
	return 0
}

# starts_with TEXT PREFIX: succeeds when TEXT begins with PREFIX.
starts_with() {
	case $1 in "$2"*) return 0 ;; esac
	return 1
}

# matches TEXT ERE: succeeds when a line of TEXT matches the extended
# regular expression ERE (grep -E).
matches() {
	printf '%s\n' "$1" | grep -Eq -- "$2"
}

# exits_saying CODE TEXT: the last run exited CODE and named TEXT on stderr
# (a refused flag: exits_saying 2 --flag).
exits_saying() {
	[ "$rc" -eq "$1" ] && contains "$err" "$2"
}

# py_check DESCRIPTION CODE ARGS...: passes when python3 -c CODE ARGS
# succeeds (the JSON checks); its stderr is shown when it fails. Skipped
# without python3.
py_check() {
	_tap_desc=$1
	shift
	if ! have python3; then
		skip "$_tap_desc" "no python3"
	elif python3 -c "$@" 2>"$tmp/py.err"; then
		ok "$_tap_desc"
	else
		fail "$_tap_desc" "$(tail -n 20 "$tmp/py.err")"
	fi
}

# json_has FILE KEY...: FILE is a JSON object holding every KEY (python3).
json_has() {
	python3 -c 'import json, sys
d = json.load(open(sys.argv[1]))
sys.exit(0 if all(k in d for k in sys.argv[2:]) else 1)' "$@"
}

# For py_check: rtde-sim's JSON report (sys.argv[1], either mode) says the
# arm ended at rest, the executor's watchdog never had to stop it, and no
# non-finite value arrived ("every app ends with the arm at rest").
sim_left_safe_py='import json, sys
d = json.load(open(sys.argv[1]))
r = d["robot"]
bad = []
if not r["at_rest"]:
    bad.append("the arm moves at the end (%g rad/s)" % r["max_speed"])
if r["watchdog_trips"]:
    bad.append("the watchdog tripped %d times" % r["watchdog_trips"])
if d["stats"]["nonfinite_in"]:
    bad.append("%d non-finite values arrived" % d["stats"]["nonfinite_in"])
sys.exit("; ".join(bad) if bad else 0)'

# Port patterns for start_sim: rtde-sim's start message, TCP or UDP.
sim_rtde_port='s/.*listening on [0-9.]*:\([0-9][0-9]*\).*/\1/p'
sim_udp_port='s/.*UDP on [0-9.]*:\([0-9][0-9]*\).*/\1/p'

# start_sim SED-PATTERN ARGS...: starts "$sim" ARGS in the background
# (stdout to $tmp/sim.out, stderr to $tmp/sim.log) and sets $port from the
# first line of its stderr matching SED-PATTERN (which prints the port),
# waiting up to 5 s. Fails when the simulator did not come up.
start_sim() {
	_tap_pat=$1
	shift
	# Emptied here, not only by the child's redirection: a second start_sim
	# could otherwise read the port of the previous simulator's log.
	: >"$tmp/sim.log"
	"${sim:?start_sim: set sim to rtde-sim}" "$@" >"$tmp/sim.out" 2>"$tmp/sim.log" &
	sim_pid=$!
	port=
	_tap_i=0
	while [ -z "$port" ] && [ "$_tap_i" -lt 100 ] && kill -0 "$sim_pid" 2>/dev/null; do
		port=$(sed -n "$_tap_pat" "$tmp/sim.log" 2>/dev/null | head -n 1)
		[ -n "$port" ] || sleep 0.05
		_tap_i=$((_tap_i + 1))
	done
	[ -n "$port" ]
}

# stop_sim: stops the simulator start_sim started (SIGTERM, so that it
# writes its reports) and waits for it.
stop_sim() {
	if [ -n "$sim_pid" ]; then
		kill "$sim_pid" 2>/dev/null
		wait "$sim_pid" 2>/dev/null
		sim_pid=
	fi
}

# sessiond_up: succeeds when an lttng session daemon answers, starting one
# (lttng-sessiond --daemonize --no-kernel, left running for other runs to
# share) when none does, and polling up to 5 s for it.
sessiond_up() {
	timeout 10 lttng list >/dev/null 2>&1 && return 0
	# A concurrent run may start one at the same time; either way, poll.
	timeout 30 lttng-sessiond --daemonize --no-kernel </dev/null >/dev/null 2>&1
	_tap_i=0
	while ! timeout 10 lttng list >/dev/null 2>&1; do
		_tap_i=$((_tap_i + 1))
		[ "$_tap_i" -lt 20 ] || return 1
		sleep 0.25
	done
	return 0
}
