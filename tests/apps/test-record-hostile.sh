#!/bin/sh
# SPDX-License-Identifier: MIT
#
# rtde-record against hostile peers and broken disks (issue #13): a
# controller that stalls after START, sends packages of the wrong size,
# closes mid-handshake or mid-stream, jumps its timestamp, sends escape
# sequences; an output that fills up (RLIMIT_FSIZE, SIGXFSZ ignored: no root
# or mount needed) and a SIGKILL mid-run. Each case asserts the exact
# message or counter and that the file left behind parses. The peers are
# tests/apps/rtde-hostile.py on an ephemeral loopback port; every wait is
# bounded (run_timeout, the fake's --linger).
# Usage: test-record-hostile.sh path/to/rtde-record path/to/rtde-hostile.py
set -u

app=${1:?usage: $0 path/to/rtde-record path/to/rtde-hostile.py}
fake=${2:?usage: $0 path/to/rtde-record path/to/rtde-hostile.py}
# shellcheck source=SCRIPTDIR/tap.sh
. "$(dirname "$0")/tap.sh"
tap_init rtl-record-hostile
have python3 || skip_all "no python3"
run_timeout=30
fake_pid=

lines() { wc -l <"$1" | tr -d ' '; }

# start_fake MODE ARGS...: the hostile controller; sets $port.
start_fake() {
	# Emptied here, not by the child's redirection: that may come after the
	# first read below, which would find the last fake's port.
	: >"$tmp/fake.log"
	python3 "$fake" --linger 15 "$@" 2>>"$tmp/fake.log" &
	fake_pid=$!
	port=
	_i=0
	while [ -z "$port" ] && [ "$_i" -lt 100 ]; do
		port=$(sed -n 's/^listening on 127.0.0.1:\([0-9]*\)$/\1/p' "$tmp/fake.log")
		[ -n "$port" ] || sleep 0.05
		_i=$((_i + 1))
	done
}

stop_fake() {
	if [ -n "$fake_pid" ]; then
		kill "$fake_pid" 2>/dev/null
		wait "$fake_pid" 2>/dev/null
		fake_pid=
	fi
}

# record ARGS...: rtde-record against the fake just started.
record() {
	run --host 127.0.0.1 --port "$port" --no-rt "$@"
	stop_fake
}

# csv_ok FILE: every line has the header's column count, the last ends in
# a newline, and every cell is a number.
csv_ok() {
	python3 -c '
import csv, sys
data = open(sys.argv[1], "rb").read()
assert data.endswith(b"\n"), "cut last line: %r" % data[-40:]
rows = list(csv.reader(open(sys.argv[1]), delimiter=" "))
n = len(rows[0])
bad = [i for i, r in enumerate(rows) if len(r) != n]
assert not bad, "rows %s have another column count" % bad[:5]
[float(x) for r in rows[1:] for x in r]
' "$1" 2>"$tmp/py.err"
}

# bin_rows FILE: the records of a binary recording; fails unless its size
# is the header plus a whole number of records.
bin_rows() {
	python3 -c '
import sys
data = open(sys.argv[1], "rb").read()
end = data.index(b"\nend\n") + 5
head = data[:end].decode().split("\n")
size = int([l.split()[1] for l in head if l.startswith("record_size ")][0])
assert (len(data) - end) % size == 0, "%d bytes after the header, records of %d" % (len(data) - end, size)
print((len(data) - end) // size)
' "$1" 2>"$tmp/py.err"
}

# --- 1. a controller that stalls after START ------------------------------------------
start_fake stall
t0=$(date +%s)
record --fields timestamp --duration 4 -o "$tmp/stall.csv"
t1=$(date +%s)
check "a stall after START exits 3" [ "$rc" -eq 3 ]
check "a stall after START is named" \
	contains "$err" "rtde-record: the controller sent no data package for 1.0 s after START"
check "a stall ends in bounded time (before --duration 4)" [ $((t1 - t0)) -lt 4 ]
check "a stall records nothing and leaves no file" [ ! -e "$tmp/stall.csv" ]
check "a stall leaves no partial file" [ ! -e "$tmp/stall.csv.partial" ]

start_fake stall
record --fields timestamp --data-timeout 0.3 -o "$tmp/stall.csv"
check "--data-timeout 0.3 is the limit in the message" \
	exits_saying 3 "the controller sent no data package for 0.3 s after START"

start_fake stall-after 200
record --fields timestamp --frequency 0 -o "$tmp/stall2.csv"
check "a stall mid-stream exits 3 and names the last package" \
	exits_saying 3 "the controller sent no data package for 1.0 s after package 200"
check "the rows before a stall are kept" [ "$(lines "$tmp/stall2.csv")" -eq 201 ]

start_fake stall
record --fields timestamp --data-timeout 0 --duration 1 -o "$tmp/zero.csv"
check "no row at all is an error (exit 3)" [ "$rc" -eq 3 ]
check "no row at all says why" contains "$err" \
	"rtde-record: no row was recorded: the controller sent no data package in the 1.0 s of the recording"

# --- 2. the client's drops are counted apart, never as controller skips --------------
start_fake wrong-size 2000
record --fields timestamp --duration 4 --json -o "$tmp/ws.csv"
check "2000 wrong-size packages: exit 3, not 0" [ "$rc" -eq 3 ]
check "2000 wrong-size packages are named as dropped by the client" \
	contains "$err" "this client dropped all 2000 it sent"
printf '%s\n' "$err" | tail -n 1 >"$tmp/ws.json"
py_check "the JSON counts 2000 wrong-size drops (wrong_size or, until the client splits them, malformed) and 0 controller skips" '
import json, sys
d = json.load(open(sys.argv[1]))
assert d["packages"] == 0 and d["skipped"] == 0 and d["controller_skips"] == 0, d
assert d["wrong_size"] == 2000 and d["malformed"] == 0 and d["wrong_recipe"] == 0, d
' "$tmp/ws.json"

start_fake mixed 1000 10
record --fields timestamp --frequency 0 --samples 985 --json -o "$tmp/mixed.csv"
check "10 wrong-size among good packages: exit 0" [ "$rc" -eq 0 ]
printf '%s\n' "$err" | tail -n 1 >"$tmp/mixed.json"
py_check "the 10 are the client's drops under their name, not controller skips nor lost" '
import json, sys
d = json.load(open(sys.argv[1]))
assert d["skipped"] == 0 and d["controller_skips"] == 0, d
assert d["wrong_size"] == 10 and d["malformed"] == 0 and d["lost"] == 0, d
lost = sum(int(l.split()[-1]) for l in open(sys.argv[2]).readlines()[1:])
assert lost == 0, lost
' "$tmp/mixed.json" "$tmp/mixed.csv"
start_fake mixed 1000 10
record --fields timestamp --frequency 0 --samples 985 -o "$tmp/mixed.csv"
check "the text summary says so" contains "$err" \
	"rtde-record: controller skips: 0; dropped by this client: wrong_size "

# --- 3. a run that could not start leaves the old file ---------------------------------
echo "precious" >"$tmp/old.csv"
run --host 127.0.0.1 --port 1 --fields timestamp --no-rt -o "$tmp/old.csv"
check "connection refused exits 1" [ "$rc" -eq 1 ]
check "connection refused leaves the previous recording" [ "$(cat "$tmp/old.csv")" = "precious" ]
check "connection refused leaves no partial file" [ ! -e "$tmp/old.csv.partial" ]
start_fake stall
record --fields timestamp -o "$tmp/old.csv"
check "a stall leaves the previous recording" [ "$(cat "$tmp/old.csv")" = "precious" ]
start_fake stream 300
record --fields timestamp --frequency 0 --samples 100 -o "$tmp/old.csv"
check "a good run replaces it" [ "$(lines "$tmp/old.csv")" -eq 101 ]
echo "rows of a killed run" >"$tmp/left.csv.partial"
run --host 127.0.0.1 --port 1 --fields timestamp --no-rt -o "$tmp/left.csv"
check "an existing FILE.partial is never overwritten" \
	exits_saying 1 "rtde-record: --output '$tmp/left.csv': '$tmp/left.csv.partial' exists"
check "it is left as it was" [ "$(cat "$tmp/left.csv.partial")" = "rows of a killed run" ]

# --- 4. a full disk and SIGKILL leave files that parse --------------------------------
# $limited FSIZE PROGRAM ARGS...: PROGRAM with RLIMIT_FSIZE at FSIZE bytes
# and SIGXFSZ ignored, so a write past it fails with EFBIG as on a full disk.
limited='import os, resource, signal, sys
n = int(sys.argv[1])
resource.setrlimit(resource.RLIMIT_FSIZE, (n, n))
signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
os.execv(sys.argv[2], sys.argv[2:])'
start_fake stream 3000
run_cmd python3 -c "$limited" 20000 "$app" --host 127.0.0.1 --port "$port" --no-rt --fields timestamp,actual_q \
	--frequency 0 -o "$tmp/full.csv"
stop_fake
rows=$(($(lines "$tmp/full.csv") - 1))
check "a full disk exits 4" [ "$rc" -eq 4 ]
check "a full disk names the file and the rows it holds ($rows)" contains "$err" \
	"rtde-record: $tmp/full.csv: File too large after $rows complete rows; the file holds those $rows rows"
check "the file after a full disk holds rows" [ "$rows" -gt 10 ]
check "the file after a full disk parses (whole rows)" csv_ok "$tmp/full.csv"
check "the summary counts the rows in the file" contains "$err" "$rows packages recorded"
check "the summary counts the bytes in the file" \
	contains "$err" "bytes written: $(wc -c <"$tmp/full.csv" | tr -d ' ')"

start_fake stream 3000
run_cmd python3 -c "$limited" 20000 "$app" --host 127.0.0.1 --port "$port" --no-rt --fields timestamp,actual_q \
	--frequency 0 --binary -o "$tmp/full.bin"
stop_fake
brows=$(bin_rows "$tmp/full.bin")
check "a full disk, binary: exits 4 and names the rows in the file ($brows)" exits_saying 4 \
	"$tmp/full.bin: File too large after $brows complete rows; the file holds those $brows rows"
check "the binary file is the header and whole records" [ -n "$brows" ]
run --dump "$tmp/full.bin" -o "$tmp/full-dump.csv"
check "it dumps without a warning" eval '[ "$rc" -eq 0 ] && [ -z "$err" ]'

start_fake stream 5000
"$app" --host 127.0.0.1 --port "$port" --no-rt --fields timestamp,actual_q --frequency 0 \
	-o "$tmp/kill.csv" >/dev/null 2>"$tmp/kill.err" &
recpid=$!
sleep 1.5
kill -KILL "$recpid"
wait "$recpid" 2>/dev/null
stop_fake
check "after SIGKILL the rows are in FILE.partial" [ -s "$tmp/kill.csv.partial" ]
check "FILE.partial after SIGKILL parses (whole rows)" csv_ok "$tmp/kill.csv.partial"
check "FILE.partial after SIGKILL holds rows" [ "$(lines "$tmp/kill.csv.partial")" -gt 10 ]

start_fake stream 5000
"$app" --host 127.0.0.1 --port "$port" --no-rt --fields timestamp,actual_q --frequency 0 \
	--binary -o "$tmp/kill.bin" >/dev/null 2>"$tmp/kill.err" &
recpid=$!
sleep 1.5
kill -KILL "$recpid"
wait "$recpid" 2>/dev/null
stop_fake
check "binary FILE.partial after SIGKILL is the header and whole records" \
	[ -n "$(bin_rows "$tmp/kill.bin.partial")" ]

start_fake stream 300
record --fields timestamp --frequency 0 -o "$tmp/lost.csv"
check "a lost connection keeps the rows, renamed to FILE" [ "$(lines "$tmp/lost.csv")" -eq 301 ]
check "the file after a lost connection parses" csv_ok "$tmp/lost.csv"

# --- 5. locked out is not a slow reader -------------------------------------------------
check "a close while streaming exits 1" [ "$rc" -eq 1 ]
check "a close while streaming says what the controller did" contains "$err" \
	"the controller closed the connection"
check "... after how many packages" contains "$err" "after 300 data packages"
check "... and that this host kept up" contains "$err" "so not for reading slowly"
check "... and never blames a slow reader" eval '! contains "$err" "reads too slowly"'
start_fake close-at O
record --fields timestamp -o "$tmp/hs.csv"
check "a close during the handshake names the step" exits_saying 1 \
	"closed the connection while the client waited for the CONTROL_PACKAGE_SETUP_OUTPUTS reply"
check "... and never blames a slow reader" eval '! contains "$err" "reads too slowly"'

# --- 6. the lost column is 64-bit --------------------------------------------------------
for jump in 1e6 1e7; do
	start_fake jump 100 "$jump"
	record --fields timestamp --frequency 0 --samples 100 --json -o "$tmp/jump.csv"
	want=$(python3 -c "print(int(float('$jump') * 500))")
	printf '%s\n' "$err" | tail -n 1 >"$tmp/jump.json"
	py_check "a timestamp jump of $jump s: lost = $want in the column and the JSON" '
import json, sys
want = int(sys.argv[3])
d = json.load(open(sys.argv[1]))
assert d["skipped"] == want and d["lost"] == want, (d["skipped"], d["lost"], want)
lost = [int(l.split()[-1]) for l in open(sys.argv[2]).readlines()[1:]]
assert max(lost) == want and sum(lost) == want, (max(lost), want)
' "$tmp/jump.json" "$tmp/jump.csv" "$want"
done
start_fake jump 100 1e7
record --fields timestamp --frequency 0 --samples 100 --binary -o "$tmp/jump.bin"
run --dump "$tmp/jump.bin"
check "the binary format keeps it 64-bit too" contains "$out" " 5000000000"

# --- 7. controller text is escaped --------------------------------------------------------
start_fake text 100
record --fields timestamp --frequency 0 --samples 50 -v -o "$tmp/text.csv"
check "controller text is printed escaped" contains "$err" \
	'\x1b[2Jcleared\rrtde-record: fake line\x07\nend\tx\x7f'
check "no escape byte reaches the terminal" eval \
	'! printf "%s" "$err" | LC_ALL=C grep -q "$(printf "[\033\007\r]")"'
check "no forged rtde-record: line" eval '! matches "$err" "^rtde-record: fake line"'

finish
