# SPDX-License-Identifier: MIT
# shellcheck shell=sh
#
# What apps/demo.sh and apps/demo-rig.sh share; sourced, not run.

# stop_child PID: ends a child the script started in the background and
# waits for it. A TERM that reaches the child between its fork and its exec
# is taken by the trap it still shares with this shell and is lost there,
# so a guard sends it once more after 1 s and KILL after 3 s: the wait is
# bounded, whenever the child was started.
stop_child() {
	kill "$1" 2>/dev/null || true
	(
		sleep 1
		kill "$1"
		sleep 2
		kill -9 "$1"
	) >/dev/null 2>&1 &
	_demo_guard=$!
	wait "$1" 2>/dev/null || true
	kill "$_demo_guard" 2>/dev/null || true
}
