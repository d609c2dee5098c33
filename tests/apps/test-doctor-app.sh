#!/bin/sh
# SPDX-License-Identifier: MIT
#
# rtloop-doctor as a command: flags, exit codes and both output formats, on
# fake /proc, /sys and /dev trees (--root), so the verdicts do not depend on
# the machine. Usage: test-doctor-app.sh path/to/rtloop-doctor
# Writes TAP to stdout; exits non-zero when a check fails.
set -u

app=${1:?usage: $0 path/to/rtloop-doctor}
# shellcheck source=SCRIPTDIR/tap.sh
. "$(dirname "$0")/tap.sh"
tap_init rtl-doctor-app

put() { # put ROOT REL TEXT
	mkdir -p "$(dirname "$1/$2")"
	printf '%b' "$3" >"$1/$2"
}

# A healthy machine; CapEff holds CAP_SYS_NICE and CAP_IPC_LOCK, so the
# real rlimits of the caller do not matter.
good_tree() {
	r=$1
	put "$r" proc/sys/kernel/version '#1 SMP PREEMPT_RT Debian 6.1.90-1\n'
	put "$r" proc/cmdline 'ro isolcpus=managed_irq,domain,2-3 nohz_full=2-3 rcu_nocbs=2-3\n'
	put "$r" proc/self/status 'Name:\tdoctor\nCapEff:\t0000000000804000\n'
	put "$r" proc/swaps 'Filename\tType\tSize\tUsed\tPriority\n'
	put "$r" sys/devices/system/cpu/nohz_full '2-3\n'
	for c in 0 1 2 3; do
		put "$r" sys/devices/system/cpu/cpu$c/cpufreq/scaling_governor 'performance\n'
	done
	mkdir -p "$r/sys/devices/system/node/node0"
	put "$r" sys/kernel/mm/transparent_hugepage/enabled 'always madvise [never]\n'
	put "$r" dev/cpu_dma_latency ''
}

# --- flags -------------------------------------------------------------------
check_exits 0 --help
check "--help documents --json and --root" contains "$out" "--json"
check "--help documents the exit status" contains "$out" "Exit status"

check_unknown_flag --bogus "unknown long flag"

run -x
check "unknown short flag exits 2 and is named" [ "$rc" -eq 2 ]
check "unknown short flag is named on stderr" contains "$err" "'-x'"

run --root
check "--root without a directory exits 2" [ "$rc" -eq 2 ]
check "--root without a directory is named" contains "$err" "'--root'"

run extra
check "a stray argument exits 2" [ "$rc" -eq 2 ]
check "a stray argument is named" contains "$err" "'extra'"

run --root "$tmp/does-not-exist"
check "--root to a missing directory exits 2" [ "$rc" -eq 2 ]
check "--root to a missing directory says why" contains "$err" "does-not-exist"

# --- verdicts and exit codes --------------------------------------------------
good="$tmp/good"
good_tree "$good"
run --root "$good"
check "healthy tree exits 0" [ "$rc" -eq 0 ]
check "healthy tree: one line per finding plus a summary" [ "$(printf '%s\n' "$out" | grep -c .)" -ge 15 ]
for id in preempt rtprio memlock cap_sys_nice cap_ipc_lock governor isolcpus nohz_full \
	rcu_nocbs numa thp swap cpu_dma_latency timer_slack; do
	check "text names $id" contains "$out" " $id "
done
check "healthy tree: preempt ok" contains "$out" "ok    preempt"
check "healthy tree: no bad in the summary" contains "$out" ", 0 bad"

warn="$tmp/warn"
good_tree "$warn"
put "$warn" sys/kernel/mm/transparent_hugepage/enabled '[always] madvise never\n'
run --root "$warn"
check "a warning alone still exits 0" [ "$rc" -eq 0 ]
check "the warning is shown" contains "$out" "warn  thp"
check "its fix is shown" contains "$out" "fix: echo never > /sys/kernel/mm/transparent_hugepage/enabled"

bad="$tmp/bad"
good_tree "$bad"
put "$bad" proc/sys/kernel/version '#1 SMP PREEMPT_DYNAMIC Debian 6.12\n'
put "$bad" sys/kernel/debug/sched/preempt 'none (voluntary) full lazy\n'
run --root "$bad"
check "a bad finding exits 1" [ "$rc" -eq 1 ]
check "the bad finding is shown" contains "$out" "bad   preempt"
check "with its fix" contains "$out" "PREEMPT_RT kernel"

# --- JSON -------------------------------------------------------------------------
run --json --root "$bad"
check "--json keeps the exit code" [ "$rc" -eq 1 ]
check "--json starts with {" starts_with "$out" "{"
printf '%s' "$out" >"$tmp/json"
if have python3; then
	py_check "--json parses and has every finding" '
import json, sys
d = json.load(open(sys.argv[1]))
ids = [f["id"] for f in d["findings"]]
assert len(ids) == 14 and len(set(ids)) == 14, ids
assert d["worst"] == "bad" and d["counts"]["bad"] >= 1, d
assert all(f["verdict"] in ("ok", "warn", "bad") for f in d["findings"])
' "$tmp/json"
elif have jq; then
	check "--json parses and has every finding" \
		[ "$(jq '.findings | length' "$tmp/json")" = 14 ]
else
	skip "--json parses and has every finding" "no python3 or jq to parse JSON"
fi

# --- the real machine --------------------------------------------------------
run
check "the real system gives 0 or 1" [ "$rc" -le 1 ]
check "the real system prints a summary" contains "$out" " ok, "

finish
