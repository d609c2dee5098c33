#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""A circle traced from Python with speedl streaming (rtloop.Motion).

The same controller as rtloop-circle, in Python: each state read, the TCP
velocity along a horizontal circle plus 10/s times the position error goes
to speedl(); rtloop's C step runs the speedl_rt profile every period (1 kHz
over UDP, 500 Hz over RTDE) whatever Python's own rate. Prints the
tracking error (the distance of each TCP position from the circle), the
rates and what the counters say. --rate makes Python command less often (a
notebook at 100 Hz, say) while the step still runs every period. Without
--host it starts rtloop.Sim in this process (rtloop's UDP stream, or RTDE
with --transport rtde).
"""
import argparse
import math
import sys
import time
from typing import Any

import rtloop

GAIN = 10.0  # position feedback [1/s]
EASE_S = 0.3  # angular speed ramp [s]


def circle(m: rtloop.Motion, radius: float, turn_s: float, seconds: float,
           rate: float) -> dict[str, Any]:
    """Run the circle for @seconds, commanding at most @rate times a second
    (0: after every state); returns what it measured."""
    st = m.read(timeout=2.0)
    assert st is not None, "no state from the controller"
    t0, p0 = st["time"], st["actual_tcp_pose"]
    cx, cy, cz = p0[0] - radius, p0[1], p0[2]
    omega = 2 * math.pi / turn_s
    errors: list[float] = []
    steps, last = 0, -math.inf
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        st = m.read(timeout=1.0)
        if st is None:
            continue
        t, p = st["time"] - t0, st["actual_tcp_pose"]
        if t > 0.05:
            errors.append(math.hypot(math.hypot(p[0] - cx, p[1] - cy) - radius, p[2] - cz))
        if rate and t - last < 1.0 / rate - 1e-4:
            continue  # a slower Python: the C step holds the last command
        last = t
        w = omega * min(1.0, t / EASE_S)
        th = omega * t * t / (2 * EASE_S) if t < EASE_S else omega * (t - EASE_S / 2)
        ix, iy = cx + radius * math.cos(th), cy + radius * math.sin(th)
        m.speedl([-radius * w * math.sin(th) + GAIN * (ix - p[0]),
                  radius * w * math.cos(th) + GAIN * (iy - p[1]),
                  GAIN * (cz - p[2]), 0, 0, 0])
        steps += 1
    m.stop()
    return {"python_steps": steps, "samples": len(errors),
            "rms_mm": 1e3 * math.sqrt(sum(e * e for e in errors) / max(1, len(errors))),
            "max_mm": 1e3 * max(errors, default=math.nan)}


def main() -> int:
    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    ap.add_argument("--host", help="the controller (default: rtloop.Sim in this process)")
    ap.add_argument("--port", type=int, help="default: 12347 (udp, drfl), 30004 (rtde)")
    ap.add_argument("--transport", default="udp", choices=rtloop.TRANSPORTS)
    ap.add_argument("--radius", type=float, default=0.05, help="m (default 0.05)")
    ap.add_argument("--turn", type=float, default=2.0, help="s per turn (default 2)")
    ap.add_argument("--seconds", type=float, default=4.0, help="how long (default 4)")
    ap.add_argument("--rate", type=float, default=0.0,
                    help="commands per second at most (default: one per state)")
    args = ap.parse_args()

    sim = None
    host, port = args.host, args.port
    if host is None:
        sim = rtloop.Sim(udp=args.transport != "rtde").start()
        host, port = sim.host, sim.port
    try:
        with rtloop.Motion(host, port, transport=args.transport) as m:
            m.set_velx(1.0)  # as rtloop-circle: the same controller, the same limit
            out = circle(m, args.radius, args.turn, args.seconds, args.rate)
            time.sleep(0.1)  # the stop's profile
            mode = m.state()["mode"]
        s = m.stats()
    finally:
        if sim:
            sim.stop()
    print(f"motion: {args.transport} at {1 / m.period:.0f} Hz, r = {args.radius} m, "
          f"{args.turn} s per turn, {args.seconds} s")
    print(f"  tracking error: RMS {out['rms_mm']:.3f} mm, max {out['max_mm']:.3f} mm "
          f"({out['samples']} samples)")
    print(f"  Python: {out['python_steps']} commands ({out['python_steps'] / args.seconds:.0f}/s); "
          f"C step: {s['python']['stepped']} periods, {s['sends']} sends, "
          f"{s['ctrl_skipped']} lost by the controller, {s['overruns']} overruns")
    print(f"  at the end: {mode}; stop at exit "
          + ("confirmed at rest" if s["stop_unconfirmed"] == 0 else "NOT confirmed"))
    ok = s["stop_unconfirmed"] == 0 and out["samples"] > 0 and out["rms_mm"] < 3.0
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
