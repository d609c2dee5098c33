#!/bin/sh
# SPDX-License-Identifier: MIT
#
# Records the rtloop LTTng-UST provider end to end and checks the trace.
# Usage: test-trace.sh PATH/TO/trace-emitter      (speaks TAP on stdout)
#
# 1. Skips (TAP "1..0 # SKIP") when lttng, lttng-sessiond or babeltrace2 is
#    missing, or when no session daemon can be reached or started.
# 2. Uses the session daemon of the calling user: as root the global one
#    (/var/run/lttng), otherwise the per-user one under $HOME/.lttng. If none
#    answers it starts one (lttng-sessiond --daemonize --no-kernel) and
#    leaves it running, as .ci/start-services does: another run, perhaps in
#    another build directory, may be using it by the time this one ends.
#    LTTNG_HOME is deliberately left alone: the root session daemon ignores
#    it, and the client, the daemon and the traced program must all agree.
# 3. Creates a session with a unique name whose output is in a mktemp
#    directory, a user-space channel big enough that nothing is discarded,
#    enables rtloop:* with the vpid context, starts it, runs the emitter,
#    stops and destroys the session (also on failure or signal: trap).
# 4. Reads the trace with babeltrace2 (text) and, keeping only the events of
#    this run's emitter (by vpid; other programs may be traced at the same
#    time), checks with awk: every event type is present; each frame has
#    exactly one event of each per-frame type, in the order of the loop;
#    every field has the value trace-emitter.c computes for it.
# Every lttng command, the emitter and babeltrace2 run under timeout(1).
set -u

emitter=${1:?usage: test-trace.sh PATH/TO/trace-emitter}
frames=60
seq0=1000 # SEQ0 in trace-emitter.c
motion_seq=1007 # MOTION_SEQ: the one frame with rtloop:motion_event (events 9)
t_cmd=30  # seconds allowed for any one command

# shellcheck source=SCRIPTDIR/../apps/tap.sh
. "$(dirname "$0")/../apps/tap.sh"

for tool in lttng lttng-sessiond babeltrace2 timeout; do
	have "$tool" || skip_all "$tool not installed (Debian: lttng-tools, babeltrace2)"
done
[ -x "$emitter" ] || skip_all "emitter '$emitter' not built"

tap_init rtloop-trace
session="rtloop-test-$$-$(date +%s%N)"
session_up=0
emitter_pid=

# shellcheck disable=SC2317 # invoked by the EXIT trap
cleanup()
{
	if [ -n "$emitter_pid" ]; then
		kill "$emitter_pid" 2>/dev/null
	fi
	if [ "$session_up" = 1 ]; then
		timeout 15 lttng destroy "$session" >/dev/null 2>&1
	fi
	tap_cleanup
}
trap cleanup EXIT

lt()
{
	timeout "$t_cmd" lttng "$@" >>"$tmp/lttng.log" 2>&1
}

# ---- session daemon ---------------------------------------------------------
sessiond_up || skip_all "no lttng session daemon reachable and none could be started"

# ---- record -----------------------------------------------------------------
rc=1
if lt create "$session" --output="$tmp/trace"; then
	session_up=1
	lt enable-channel --userspace --session="$session" --subbuf-size=1M --num-subbuf=4 \
		--discard rtl &&
		lt add-context --userspace --session="$session" --channel=rtl --type=vpid &&
		lt enable-event --userspace --session="$session" --channel=rtl 'rtloop:*' &&
		lt start "$session"
	rc=$?
fi
if [ "$rc" -eq 0 ]; then
	ok "session $session created, rtloop:* enabled, started"
else
	fail "session $session created, rtloop:* enabled, started" "$(cat "$tmp/lttng.log")"
	finish
fi

# The emitter's pid is the filter; exec keeps the pid of the shell that
# wrote it. LTTNG_UST_REGISTER_TIMEOUT: how long liblttng-ust's constructor
# waits for the session daemon to enable the events before main() runs.
# shellcheck disable=SC2016 # $$ is the inner shell's, on purpose
LTTNG_UST_REGISTER_TIMEOUT=10000 timeout "$t_cmd" \
	sh -c 'echo $$ >"$1"; shift; exec "$@"' sh "$tmp/pid" "$emitter" --frames "$frames" \
	>"$tmp/emitter.log" 2>&1 &
emitter_pid=$!
wait "$emitter_pid"
rc=$?
emitter_pid=
vpid=$(cat "$tmp/pid" 2>/dev/null)
if [ "$rc" -eq 0 ] && [ -n "$vpid" ]; then
	ok "trace-emitter --frames $frames ran (pid $vpid)"
else
	fail "trace-emitter --frames $frames ran" "exit status $rc" "$(cat "$tmp/emitter.log")"
	finish
fi

if lt stop "$session" && lt destroy "$session"; then
	session_up=0
	ok "session stopped and destroyed"
else
	fail "session stopped and destroyed" "$(cat "$tmp/lttng.log")"
	finish
fi

# ---- read -------------------------------------------------------------------
timeout "$t_cmd" babeltrace2 "$tmp/trace" >"$tmp/all.txt" 2>"$tmp/bt.err"
rc=$?
grep -F "{ vpid = $vpid }" "$tmp/all.txt" >"$tmp/trace.txt"
if [ "$rc" -eq 0 ] && [ -s "$tmp/trace.txt" ] && ! grep -qi discarded "$tmp/bt.err"; then
	ok "babeltrace2 read $(wc -l <"$tmp/trace.txt") events of pid $vpid, none discarded"
else
	fail "babeltrace2 read the events of pid $vpid, none discarded" "exit status $rc" \
		"$(head -20 "$tmp/bt.err")" "$(head -5 "$tmp/all.txt")"
	finish
fi

# ---- check ------------------------------------------------------------------
# The awk program prints one "ok<TAB>description" or "not ok<TAB>description
# <TAB>diagnostic" line per check. Lines look like:
# [t] (+d) host rtloop:frame_received: { cpu_id = 1 }, { vpid = 42 }, { seq = 1001, ctrl_ts = 500.5, ... }
if ! awk -v N="$frames" -v SEQ0="$seq0" -v MSEQ="$motion_seq" '
function field(key,    s) {
	# the value of "key = value" in the payload, for plain numbers
	if (!match(payload, "[{ ]" key " = [^,}]*"))
		return "MISSING"
	s = substr(payload, RSTART + 1, RLENGTH - 1)
	sub(/^ *[a-z_]+ = /, "", s)
	sub(/ +$/, "", s)
	return s
}
function bad(ev, msg) {
	nbad[ev]++
	if (nbad[ev] <= 3)
		why[ev] = why[ev] (why[ev] == "" ? "" : "; ") msg
}
function expect(ev, key, want,    got) {
	got = field(key)
	if (got == "MISSING" || got + 0 != want + 0)
		bad(ev, "seq " seq ": " key " = " got ", want " sprintf("%.17g", want))
}
function report(ok, desc, diag) {
	printf "%s\t%s\t%s\n", ok ? "ok" : "not ok", desc, diag
}
BEGIN {
	nper = split("frame_received frame_decoded frame_committed worker_woke step_started step_finished", per, " ")
	split("controller worker ring_full", reason_name, " ")
	ntypes = split("frame_received frame_decoded frame_committed worker_woke step_started step_finished package_sent package_suppressed skipped watchdog_fired reconnect motion_event text", types, " ")
}
{
	if (!match($0, / rtloop:[a-z_]+: /))
		next
	ev = substr($0, RSTART + 8, RLENGTH - 10)
	total[ev]++
	# the payload is the last { ... } of the line
	payload = $0
	sub(/.*\}, \{ /, "{ ", payload)
	seq = field("seq")
	if (seq != "MISSING") {
		seq += 0
		cnt[ev, seq]++
		idx[ev, seq] = NR
		if (seq < SEQ0 || seq >= SEQ0 + N)
			bad(ev, "seq " seq " out of range")
	}
	if (ev == "frame_received") {
		expect(ev, "ctrl_ts", seq / 2)
		expect(ev, "rx_ns", seq % 4 ? 5000000000 + seq : -1)
		expect(ev, "bytes", 1060)
	} else if (ev == "frame_decoded") {
		expect(ev, "recipe", 1)
	} else if (ev == "frame_committed") {
		expect(ev, "fill", seq % 8 + 1)
	} else if (ev == "worker_woke") {
		expect(ev, "lateness_ns", seq % 2 ? -seq : seq)
	} else if (ev == "step_finished") {
		expect(ev, "duration_ns", 2 * seq + 1)
	} else if (ev == "package_sent" || ev == "package_suppressed") {
		expect(ev, "recipe", 2)
		expect(ev, "bytes", 40)
	} else if (ev == "skipped") {
		expect(ev, "count", seq % 3 + 1)
		r = int(seq / 10) % 3
		if (!match(payload, "reason = \\( \"" reason_name[r + 1] "\" : container = " r " \\)"))
			bad(ev, "seq " seq ": reason, want " reason_name[r + 1] " (" r ") in " payload)
	} else if (ev == "motion_event") {
		expect(ev, "seq", MSEQ)
		expect(ev, "events", 9)
	} else if (ev == "watchdog_fired") {
		expect(ev, "last_seq", SEQ0 + N - 1)
		expect(ev, "periods_missed", 3)
		watchdog_line = NR
	} else if (ev == "reconnect") {
		nrec++
		seq = "reconnect " nrec
		expect(ev, "attempt", nrec)
		expect(ev, "result", nrec == 1 ? -111 : 0)
	} else if (ev == "text") {
		ntext++
		want = ntext == 1 ? "trace-emitter start" : "trace-emitter end"
		if (index(payload, "msg = \"" want "\"") == 0 || field("level") + 0 != 6)
			bad(ev, "text " ntext ": " payload ", want level 6 and msg \"" want "\"")
		text_line[ntext] = NR
	}
}
END {
	for (i = 1; i <= ntypes; i++)
		report(total[types[i]] > 0, "rtloop:" types[i] " present (" total[types[i]] + 0 " events)", "")

	# exactly one of each per-frame event per frame, one package decision
	miss = ""; nmiss = 0
	for (s = SEQ0; s < SEQ0 + N; s++) {
		for (i = 1; i <= nper; i++)
			if (cnt[per[i], s] != 1) {
				nmiss++
				if (nmiss <= 5) miss = miss " " per[i] "@" s "x" cnt[per[i], s] + 0
			}
		pk = s % 2 ? "package_suppressed" : "package_sent"
		other = s % 2 ? "package_sent" : "package_suppressed"
		if (cnt[pk, s] != 1 || cnt[other, s] != 0) {
			nmiss++
			if (nmiss <= 5) miss = miss " " pk "@" s "x" cnt[pk, s] + 0
		}
		if (cnt["skipped", s] != (s % 10 == 0)) {
			nmiss++
			if (nmiss <= 5) miss = miss " skipped@" s "x" cnt["skipped", s] + 0
		}
	}
	for (i = 1; i <= ntypes; i++)
		if (types[i] != "watchdog_fired" && types[i] != "reconnect" && types[i] != "text" && types[i] != "motion_event") {
			want = (types[i] == "skipped") ? int((SEQ0 + N - 1) / 10) - int((SEQ0 - 1) / 10) : N
			if (types[i] ~ /^package_/) want = N / 2
			if (total[types[i]] != want) {
				nmiss++
				miss = miss " total " types[i] "=" total[types[i]] + 0 " want " want
			}
		}
	report(nmiss == 0, "one event of each stage per frame, " N " frames", nmiss " problems:" miss)

	# stage order within each frame, following the loop
	bad_order = 0; order_diag = ""
	for (s = SEQ0; s < SEQ0 + N; s++) {
		prev = idx["frame_received", s]
		chain = (s % 10 == 0 ? "skipped " : "") "frame_decoded frame_committed worker_woke step_started step_finished " (s % 2 ? "package_suppressed" : "package_sent")
		k = split(chain, st, " ")
		for (i = 1; i <= k; i++) {
			if (!(idx[st[i], s] > prev)) {
				bad_order++
				if (bad_order <= 3) order_diag = order_diag " seq " s ": " st[i] " not after its predecessor;"
			}
			prev = idx[st[i], s]
		}
		if (s > SEQ0 && !(idx["frame_received", s] > idx[(s % 2 ? "package_sent" : "package_suppressed"), s - 1])) {
			bad_order++
			if (bad_order <= 3) order_diag = order_diag " frame " s " started before frame " s - 1 " ended;"
		}
	}
	if (!(text_line[1] < idx["frame_received", SEQ0] && watchdog_line > idx["frame_received", SEQ0 + N - 1] && text_line[2] > watchdog_line)) {
		bad_order++
		order_diag = order_diag " start text / watchdog / end text out of place"
	}
	if (!(idx["motion_event", MSEQ] > idx["step_started", MSEQ] && idx["motion_event", MSEQ] < idx["step_finished", MSEQ])) {
		bad_order++
		order_diag = order_diag " motion_event not inside the step of frame " MSEQ ";"
	}
	report(bad_order == 0, "events in loop order within and across frames", bad_order " problems:" order_diag)

	# field values, per event type
	for (i = 1; i <= ntypes; i++)
		report(nbad[types[i]] == 0, "rtloop:" types[i] " field values as emitted", nbad[types[i]] + 0 " wrong: " why[types[i]])
	report(nrec == 2 && ntext == 2 && total["watchdog_fired"] == 1 && total["motion_event"] == 1, "reconnect x2, text x2, watchdog_fired x1, motion_event x1", "reconnect " nrec + 0 ", text " ntext + 0 ", watchdog_fired " total["watchdog_fired"] + 0 ", motion_event " total["motion_event"] + 0)
}' "$tmp/trace.txt" >"$tmp/checks.txt"; then
	fail "awk checker ran" "$(cat "$tmp/checks.txt")"
	finish
fi

report_lines "$tmp/checks.txt"
if [ "$failed" != 0 ]; then
	echo "# first events of the trace:"
	head -12 "$tmp/trace.txt" | sed 's/^/# /'
fi
finish
