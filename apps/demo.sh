#!/bin/sh
# make demo: what can be shown today. The simulator-driven admittance demo
# replaces this once rtde-sim and the loop exist.
set -eu
build=${1:-build}
echo "== rtloop-doctor: is this machine ready for real-time loops?"
"$build/apps/rtloop-doctor/rtloop-doctor" || true
if [ -x "$build/apps/ring-bench/ring-bench" ]; then
	echo
	echo "== ring-bench --quick: our SPSC ring against Concurrency Kit's ck_ring"
	"$build/apps/ring-bench/ring-bench" --quick
fi
