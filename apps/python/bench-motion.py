#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""The circle of rtloop-circle commanded from Python through rtloop.Motion,
against the same controller in C, in one run (docs/python.md, "The motion
API from Python").

Each repetition runs, in a rotating order, on a fresh simulator of the
build (rtde-sim --udp, 1 kHz):

  c        rtloop-circle --transport udp: the controller in the loop's C
           step, a command every period;
  py       apps/examples/motion.py: the same controller in Python, reading
           every state and commanding after each;
  py@R     the same, commanding R times a second (the C step holds the last
           command in between, as a Doosan controller would).

Each prints the RMS distance of the TCP from the circle; this prints every
run, then per peer the median of its ratio to c's error in the same
repetition, with min and max, and the Python command rates reached.

Usage: bench-motion.py --build BUILD [--reps N] [--seconds S] [--rates 250,100,50]
"""
import argparse
import json
import os
import re
import signal
import statistics
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def start_sim(build):
    sim = subprocess.Popen([os.path.join(build, "apps", "rtde-sim", "rtde-sim"), "--udp",
                            "--port", "0", "--duration", "600"],
                           stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    line = sim.stderr.readline()
    m = re.search(r"UDP on [0-9.]+:([0-9]+)", line)
    if not m:
        sim.kill()
        raise SystemExit(f"rtde-sim --udp did not start: {line}")
    return sim, int(m.group(1))


def run(peer, args, port):
    """The RMS error [mm] and the Python command rate (None for c)."""
    if peer == "c":
        out = subprocess.run([os.path.join(args.build, "apps", "rtloop-circle", "rtloop-circle"),
                              "--transport", "udp", "--port", str(port),
                              "--duration", str(args.seconds), "--json"],
                             capture_output=True, text=True, timeout=args.seconds + 30)
        if out.returncode != 0:
            raise SystemExit(f"rtloop-circle failed: {out.stderr}")
        return json.loads(out.stdout)["rms_error_mm"], None
    rate = peer.split("@")[1] if "@" in peer else "0"
    env = dict(os.environ, PYTHONPATH=os.path.join(args.build, "apps", "python"))
    out = subprocess.run([sys.executable, os.path.join(ROOT, "apps", "examples", "motion.py"),
                          "--host", "127.0.0.1", "--port", str(port), "--seconds",
                          str(args.seconds), "--rate", rate],
                         capture_output=True, text=True, env=env, timeout=args.seconds + 30)
    if out.returncode != 0:
        raise SystemExit(f"motion.py failed: {out.stdout}{out.stderr}")
    rms = float(re.search(r"RMS ([0-9.]+) mm", out.stdout).group(1))
    cps = float(re.search(r"commands \(([0-9.]+)/s\)", out.stdout).group(1))
    return rms, cps


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--build", required=True)
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--seconds", type=float, default=4.0)
    ap.add_argument("--rates", default="250,100,50")
    args = ap.parse_args()
    peers = ["c", "py"] + [f"py@{r}" for r in args.rates.split(",") if r]
    res = {p: [] for p in peers}
    print("rep peer rms_mm commands_per_s")
    for rep in range(args.reps):
        order = peers[rep % len(peers):] + peers[:rep % len(peers)]
        for p in order:
            sim, port = start_sim(args.build)
            try:
                rms, cps = run(p, args, port)
            finally:
                sim.send_signal(signal.SIGINT)
                sim.wait(timeout=30)
            res[p].append((rms, cps))
            print(f"{rep} {p} {rms:.3f} {cps if cps is not None else '-'}", flush=True)
            time.sleep(0.2)
    for p in peers[1:]:
        ratios = [a[0] / c[0] for a, c in zip(res[p], res["c"])]
        rates = [r[1] for r in res[p]]
        print(f"{p}: RMS error / C's x{statistics.median(ratios):.2f} "
              f"[{min(ratios):.2f}, {max(ratios):.2f}], {statistics.median(rates):.0f} commands/s; "
              f"C's median RMS {statistics.median(r[0] for r in res['c']):.3f} mm")


if __name__ == "__main__":
    main()
