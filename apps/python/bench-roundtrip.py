#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""The round trip of a control loop in Python on rtloop's bindings, against
UR's Python RTDE client doing the same receive-and-send and against
rtloop's C loop, in one run on the same simulator (docs/python.md,
"Benchmark").

Each peer runs in its own process against a fresh `rtde-sim --echo-register
47` of the build (500 Hz, e-Series): every control period it takes the
newest data package and answers with an input package whose
input_double_register_47 holds that package's `timestamp`. The simulator
measures the round trip (the package handed to its socket -> the echo
received) in its echo histogram, the same way for every peer:

  c       rtloop-admittance --echo: rtloop's C loop (rx thread, worker,
          step, send), the demo's admittance controller;
  rtloop  rtloop.Control(echo=True) from Python: read(), then speedj() with
          zero speed (the step's command; the echo goes with it);
  ur      UR's RTDE_Python_Client_Library: receive(), then send() of the
          echo register (outputs timestamp, actual_q, actual_qd, as rtloop's
          peer). Not part of rtloop: pass its checkout with --ur-client
          (the directory that holds its rtde/ package); without it the
          peer is skipped.

The order of the peers rotates with the repetition, so the host's drift
hits each alike; the medians over the repetitions and their ratios to the
C loop are printed (benchmarks: ratios in one run, never absolute figures
from another day).

Usage: bench-roundtrip.py --build BUILD [--ur-client DIR] [--reps N] [--seconds S]
"""
import argparse
import json
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time

FIELDS = ("timestamp", "actual_q", "actual_qd")

RTLOOP_PEER = r"""
import sys, time
import rtloop
host, port, secs = sys.argv[1], int(sys.argv[2]), float(sys.argv[3])
with rtloop.Control(host, port, fields=%r, echo=True) as ctl:
    end = time.monotonic() + secs
    zero = [0.0] * 6
    while time.monotonic() < end:
        if ctl.read(timeout=1.0) is None:
            continue
        ctl.speedj(zero)
""" % (FIELDS,)

UR_PEER = r"""
import sys, time
sys.path.insert(0, sys.argv[4])
import rtde.rtde as rtde
host, port, secs = sys.argv[1], int(sys.argv[2]), float(sys.argv[3])
con = rtde.RTDE(host, port)
con.connect()
con.send_output_setup(%r, frequency=500)
setp = con.send_input_setup(["input_double_register_47"])
con.send_start()
end = time.monotonic() + secs
while time.monotonic() < end:
    s = con.receive()
    if s is None:
        continue
    setp.input_double_register_47 = s.timestamp
    con.send(setp)
con.send_pause()
con.disconnect()
""" % (list(FIELDS),)


def start_sim(sim, secs, json_path):
    p = subprocess.Popen([sim, "--port", "0", "--echo-register", "47", "--duration",
                          str(secs + 5), "--json", json_path],
                         stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    for line in p.stderr:
        if "listening on" in line:
            port = int(line.split("listening on ")[1].split()[0].rsplit(":", 1)[1])
            return p, port
    raise SystemExit("rtde-sim did not start")


def run_peer(name, args, port, secs):
    env = dict(os.environ)
    env["PYTHONPATH"] = os.path.join(args.build, "apps", "python")
    if name == "c":
        cmd = [os.path.join(args.build, "apps", "rtloop-admittance", "rtloop-admittance"),
               "-H", "127.0.0.1", "-p", str(port), "-d", str(secs), "--echo"]
    elif name == "rtloop":
        cmd = [sys.executable, "-c", RTLOOP_PEER, "127.0.0.1", str(port), str(secs)]
    else:
        cmd = [sys.executable, "-c", UR_PEER, "127.0.0.1", str(port), str(secs), args.ur_client]
    r = subprocess.run(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                       text=True, timeout=secs + 30)
    if r.returncode != 0:
        raise SystemExit(f"peer {name} failed ({r.returncode}): {r.stderr[-2000:]}")


def one(name, args, tmp):
    path = os.path.join(tmp, f"sim-{name}.json")
    sim, port = start_sim(os.path.join(args.build, "apps", "rtde-sim", "rtde-sim"),
                          args.seconds, path)
    try:
        run_peer(name, args, port, args.seconds)
    finally:
        sim.send_signal(signal.SIGINT)
        sim.wait(timeout=30)
    e = json.load(open(path))["echo"]["latency"]
    return e["count"], e["p50_ns"] / 1e3, e["p99_ns"] / 1e3


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--build", required=True)
    ap.add_argument("--ur-client", help="a checkout of UR's RTDE_Python_Client_Library")
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--seconds", type=float, default=5.0)
    args = ap.parse_args()
    peers = ["c", "rtloop"] + (["ur"] if args.ur_client else [])
    if not args.ur_client:
        print("# no --ur-client: UR's Python client is not measured", file=sys.stderr)
    res = {p: [] for p in peers}
    with tempfile.TemporaryDirectory() as tmp:
        print("rep peer echoes p50_us p99_us")
        for rep in range(args.reps):
            order = peers[rep % len(peers):] + peers[:rep % len(peers)]
            for p in order:
                n, p50, p99 = one(p, args, tmp)
                res[p].append((n, p50, p99))
                print(f"{rep} {p} {n} {p50:.1f} {p99:.1f}", flush=True)
                time.sleep(0.5)
    med = {p: (statistics.median(r[1] for r in v), statistics.median(r[2] for r in v))
           for p, v in res.items()}
    for p in peers:
        print(f"median {p}: p50 {med[p][0]:.1f} us, p99 {med[p][1]:.1f} us "
              f"(x{med[p][0] / med['c'][0]:.2f} and x{med[p][1] / med['c'][1]:.2f} the C loop)")
    if "ur" in med:
        print(f"rtloop / ur: p50 x{med['rtloop'][0] / med['ur'][0]:.2f}, "
              f"p99 x{med['rtloop'][1] / med['ur'][1]:.2f}")


if __name__ == "__main__":
    main()
