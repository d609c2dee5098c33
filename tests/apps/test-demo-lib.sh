#!/bin/sh
# SPDX-License-Identifier: MIT
#
# apps/demo-lib.sh: stop_child ends a child and waits for it, and the wait
# is bounded when the child never takes the TERM (the model of a TERM lost
# between its fork and its exec): the guard's KILL ends it.
# Usage: test-demo-lib.sh apps/demo-lib.sh
# Writes TAP to stdout; exits non-zero when a check fails.
set -u

lib=${1:?usage: $0 apps/demo-lib.sh}
# shellcheck source=tests/apps/tap.sh
. "$(dirname "$0")/tap.sh"
# shellcheck source=apps/demo-lib.sh
. "$lib"
tap_init rtl-demo-lib
plan 3

# gone PID: the child was ended and reaped (kill -0 fails).
# shellcheck disable=SC2317 # called through check
gone() {
	! kill -0 "$1" 2>/dev/null
}

# A child that takes the TERM.
sleep 60 &
child=$!
stop_child "$child"
check "a child that takes the TERM is gone after stop_child" gone "$child"

# A child that ignores it: the TERM is ignored across the exec, as a lost
# one would be. A watchdog of 30 s ends it otherwise, so a wait that is not
# bounded fails here instead of hanging the suite.
sh -c 'trap "" TERM; exec sleep 60' &
child=$!
(
	sleep 30
	echo fired >"$tmp/fired"
	kill -9 "$child"
) >/dev/null 2>&1 &
dog=$!
stop_child "$child"
check "stop_child returns for a child that ignores the TERM (no watchdog)" [ ! -e "$tmp/fired" ]
check "that child is gone after it (the guard's KILL)" gone "$child"
kill "$dog" 2>/dev/null
finish
