#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""rtloop-view --plotjuggler: the JSON datagrams PlotJuggler's UDP server
reads, captured on a loopback socket while rtloop-circle runs over the UDP
stream (or DRFL's) against rtde-sim --udp with --telemetry. TAP on stdout.

Usage: test-view-pj.py RTDE-SIM RTLOOP-VIEW RTLOOP-CIRCLE udp|drfl OUTDIR

Ground truth is not the view: rtloop.Telemetry (the Python reader) reads
the same shared-memory records beside it, and the circle prints its own
counters. Checked:

  form      every datagram is one JSON object with a numeric "timestamp" and
            the telemetry's name as its one other key; flattened as
            PlotJuggler flattens (objects joined by '/', array elements as
            name[i]) the paths are NAME/<signal> and NAME/<signal>[i];
  values    each record datagram holds exactly the values of the record of
            its frame (null where NaN), and its timestamp is that record's
            time to the nanosecond;
  rate      after a record sent at t, the next one sent is the first record
            at or after t + 1 / --pj-rate: none faster, none skipped beyond
            the limit;
  counters  counter datagrams come, loop.frames never decreases, and the
            last equals the circle's own count;
  loss      the view's count of datagrams sent equals those received.

The first datagrams go to OUTDIR/plotjuggler-capture-TRANSPORT.jsonl
(RTL_ARTIFACTS overrides OUTDIR).
"""
import json
import math
import os
import re
import signal
import socket
import sys
import threading
import time

if len(sys.argv) != 6:
    sys.exit("usage: test-view-pj.py RTDE-SIM RTLOOP-VIEW RTLOOP-CIRCLE udp|drfl OUTDIR")
SIM, VIEW, CIRCLE = (os.path.abspath(p) for p in sys.argv[1:4])
TRANSPORT = sys.argv[4]
OUT = os.environ.get("RTL_ARTIFACTS") or sys.argv[5]
RATE = 50.0
RUN_S = 2
WAIT_S = 20

import rtloop  # noqa: E402  (the build tree's, PYTHONPATH)

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "common"))
import taprun  # noqa: E402  (tests/common: TAP results, processes, polling)

H = taprun.Harness("view-pj.", WAIT_S)
TMP, check, start, read, wait_for = H.tmp, H.check, H.start, H.read, H.wait_for


def flatten(prefix, v, out):
    """PlotJuggler's flattening of a JSON message into series paths."""
    if isinstance(v, dict):
        for k, x in v.items():
            flatten(prefix + "/" + k if prefix else k, x, out)
    elif isinstance(v, list):
        for i, x in enumerate(v):
            flatten("%s[%d]" % (prefix, i), x, out)
    else:
        out[prefix] = v


def same(a, b):
    if b is None or (isinstance(b, float) and math.isnan(b)):
        return a is None
    return a is not None and (a == b or abs(a - b) <= 1e-9 * max(abs(a), abs(b)))


def main():
    name = "view-pj-%s-%d" % (TRANSPORT, os.getpid())
    rx = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    rx.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 8 << 20)
    rx.bind(("127.0.0.1", 0))
    rx.settimeout(0.2)
    grams = []
    stop = threading.Event()

    def receive():
        while not stop.is_set():
            try:
                grams.append(rx.recv(70000))
            except socket.timeout:
                pass

    threading.Thread(target=receive, daemon=True).start()

    sim = start([SIM, "--udp", "--udp-port", "0", "--duration", "60"], "sim")
    port = wait_for(lambda: (re.search(r"UDP on [0-9.]*:(\d+)", read("sim.err")) or [None, None])[1],
                    "rtde-sim's UDP port")
    if not check("rtde-sim --udp serves", port, read("sim.err")):
        return
    view = start([VIEW, "--port", "0", "--plotjuggler", "127.0.0.1:%d" % rx.getsockname()[1],
                  "--pj-rate", str(RATE), name], "view")
    url = wait_for(lambda: (re.search(r"(http://127\.0\.0\.1:\d+/)", read("view.out")) or [None, None])[1],
                   "rtloop-view's address")
    if not check("rtloop-view serves, PlotJuggler on port %d" % rx.getsockname()[1], url, read("view.err")):
        return
    circle = start([CIRCLE, "--transport", TRANSPORT, "--port", port, "--duration", str(RUN_S),
                    "--telemetry", name, "--json"], "circle")

    # The reader beside the view: every record, by frame.
    tel = None
    end = time.monotonic() + WAIT_S
    while tel is None and time.monotonic() < end:
        try:
            tel = rtloop.Telemetry(name, timeout=0.5)
        except (FileNotFoundError, BlockingIOError, OSError):
            time.sleep(0.05)
    if not check("rtloop.Telemetry opens the circle's telemetry", tel is not None, read("circle.err")):
        return
    recs = {}
    sigs = tel.info()["signals"]
    while True:
        d = tel.read()
        for k, fr in enumerate(d["frame"]):
            recs[int(fr)] = {"t_ns": int(d["t_ns"][k]),
                             **{s: d[s][k].tolist() for s in sigs}}
        if tel.info()["state"] == "ended":
            d = tel.read()
            for k, fr in enumerate(d["frame"]):
                recs[int(fr)] = {"t_ns": int(d["t_ns"][k]), **{s: d[s][k].tolist() for s in sigs}}
            break
        if circle.poll() is not None and time.monotonic() > end:
            break
        time.sleep(0.1)
    missed = tel.info()["missed"]
    circle.wait(WAIT_S)
    check("rtloop-circle --transport %s ran (exit 0)" % TRANSPORT, circle.returncode == 0, read("circle.err"))
    report = json.loads(read("circle.out"))

    def last_frames():
        for g in reversed(grams):
            m = json.loads(g)[name]
            if "counters" in m:
                return m["counters"].get("loop.frames")
        return None

    wait_for(lambda: last_frames() == report["frames"], "the final counters")
    view.send_signal(signal.SIGTERM)
    view.wait(WAIT_S)
    time.sleep(0.3)
    stop.set()
    sim.send_signal(signal.SIGTERM)
    sim.wait(WAIT_S)

    msgs = []
    bad = []
    for g in grams:
        try:
            m = json.loads(g)
            if not isinstance(m, dict) or name not in m:
                raise ValueError("not a message of " + name)
            if not (isinstance(m, dict) and set(m) == {"timestamp", name}
                    and isinstance(m["timestamp"], (int, float))):
                bad.append(g[:200])
            msgs.append(m)
        except ValueError:
            bad.append(g[:200])
            msgs.append({name: {}})
    check("all %d datagrams are JSON objects of a timestamp and %s" % (len(grams), name),
          grams and not bad, "\n".join(map(repr, bad[:5])))
    os.makedirs(OUT, exist_ok=True)
    cap = os.path.join(OUT, "plotjuggler-capture-%s.jsonl" % TRANSPORT)
    with open(cap, "wb") as f:
        for g in grams[:40]:
            f.write(g + b"\n")
    print("# capture: " + cap)

    raw_ts = [re.match(rb'\{"timestamp":(\d+\.\d{9}),', g) for g in grams]
    stamps = {}
    for m, t in zip(msgs, raw_ts):
        if "frame" in m.get(name, {}):
            stamps[m[name]["frame"]] = t[1].decode() if t else None
    records = [m for m in msgs if "frame" in m[name]]
    counters = [m for m in msgs if "counters" in m[name]]
    check("record datagrams (%d) and counter datagrams (%d) both came" % (len(records), len(counters)),
          len(records) > RUN_S * RATE / 2 and len(counters) > 3)
    check("the Python reader missed no record (%d records)" % len(recs), missed == 0 and len(recs) > 100)

    paths = {}
    flatten("", records[len(records) // 2], paths)
    want = ["timestamp", name + "/frame", name + "/ctrl_time"]
    for s, si in sigs.items():
        want += [name + "/" + s] if si["count"] == 1 else \
            ["%s/%s[%d]" % (name, s, i) for i in range(si["count"])]
    check("flattened as PlotJuggler does, a record is the series %s ... (%d)"
          % (", ".join(want[3:6]), len(want)), sorted(paths) == sorted(want),
          "missing %s; extra %s" % (sorted(set(want) - set(paths))[:8], sorted(set(paths) - set(want))[:8]))
    flatc = {}
    flatten("", counters[-1], flatc)
    check("the counters flatten to %s/counters/loop.frames and %s/latency_us/rx_to_step/p99"
          % (name, name), name + "/counters/loop.frames" in flatc
          and name + "/latency_us/rx_to_step/p99" in flatc, sorted(flatc)[:10])

    wrong = []
    for m in records:
        r = m[name]
        g = recs.get(r["frame"])
        if g is None:
            wrong.append("frame %d: no such record" % r["frame"])
            continue
        ts = "%d.%09d" % (g["t_ns"] // 10**9, g["t_ns"] % 10**9)
        if stamps.get(r["frame"]) != ts:
            wrong.append("frame %d: timestamp %s, record %s" % (r["frame"], stamps.get(r["frame"]), ts))
        for s, si in sigs.items():
            a, b = r[s], g[s]
            if si["count"] == 1:
                a, b = [a], [b]
            if len(a) != len(b) or not all(same(x, y) for x, y in zip(a, b)):
                wrong.append("frame %d: %s %r, record %r" % (r["frame"], s, a, b))
    check("each of the %d record datagrams holds its record's time and values" % len(records),
          not wrong, "\n".join(wrong[:10]))

    period_ns = round(1e9 / RATE)
    order = sorted(recs.items(), key=lambda kv: kv[1]["t_ns"])
    by_t = [kv[1]["t_ns"] for kv in order]
    frames = [kv[0] for kv in order]
    gaps = []
    for a, b in zip(records, records[1:]):
        ta = recs[a[name]["frame"]]["t_ns"]
        # The first record at or after ta + period, by the reader's records.
        k = next((i for i, t in enumerate(by_t) if t >= ta + period_ns), None)
        if k is None or frames[k] != b[name]["frame"]:
            gaps.append("after frame %d: sent %d, due %s" % (a[name]["frame"], b[name]["frame"],
                                                           frames[k] if k is not None else None))
    check("the rate limit: each record sent is the first %g ms after the last sent" % (1e3 / RATE),
          not gaps, "\n".join(gaps[:10]))

    seq = [m[name]["counters"]["loop.frames"] for m in counters]
    check("loop.frames in the counter datagrams never decreases and ends at the circle's %d"
          % report["frames"], seq == sorted(seq) and seq[-1] == report["frames"], seq[-5:])
    m = re.search(r"PlotJuggler: (\d+) datagrams sent, (\d+) failed", read("view.out"))
    check("rtloop-view sent %s datagrams, %s failed; %d received"
          % (m and m[1], m and m[2], len(grams)),
          m is not None and int(m[1]) == len(grams) and m[2] == "0", read("view.out"))


try:
    main()
finally:
    H.cleanup()
H.finish()
