#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The force-control experiment of experiment.c, in Python with rtloop.Control.

Move to a start pose, move_until_contact down, press with 10 N in force
mode while a speedl loop slides the tool along x, retract with move_l, then
teach mode for 5 s while a (simulated) hand pushes. Prints what each phase
did; --json and --csv keep the run. Without --host it starts rtloop.Sim in
this process, with a contact plane under the start pose and a push in teach
mode (docs/experiment.md).
"""
import argparse
import csv
import json
import math
import sys
import time
from typing import Any, Callable, Optional

import rtloop

START = [0.3, -math.pi / 2, math.pi / 2, -math.pi / 2, -math.pi / 2, 0.0]
FIELDS = ("timestamp", "actual_q", "actual_qd", "actual_TCP_pose", "actual_TCP_force")
STATUS = "output_int_register_27"
FORCE_BIT, TEACH_BIT = 1 << 2, 1 << 3
# A frame may wait 20 ms (10 periods at 500 Hz) for Python before the safe
# set goes out: a Python process shares its CPU with whatever else runs.
WATCHDOG_PERIODS = 10


class Run:
    """The connection, the phase being run and what was recorded."""

    def __init__(self, ctl: rtloop.Control, csv_writer: Optional[Any]) -> None:
        self.ctl, self.csv, self.phase = ctl, csv_writer, ""
        self.t0: Optional[float] = None
        self.phases: list[dict[str, Any]] = []

    def step(self, write: bool = True) -> dict[str, Any]:
        """One frame: record it, end its step (nothing new to send)."""
        st = self.ctl.read(timeout=1.0)
        if st is None:
            raise rtloop.Error(110, "no frame from the controller in 1 s")
        if self.t0 is None:
            self.t0 = st["timestamp"]
        if self.csv:
            p, f = st["actual_TCP_pose"], st["actual_TCP_force"]
            self.csv.writerow([f"{st['timestamp'] - self.t0:.3f}", self.phase,
                               *(f"{v:.5f}" for v in p[:3]), *(f"{v:.3f}" for v in f[:3]),
                               int(st[STATUS])])
        if write:
            self.ctl.write()
        return st

    def run(self, name: str, fn: Callable[[], Optional[dict[str, Any]]]) -> bool:
        """Phase @name: fn() -> extra figures; the outcome recorded either way."""
        self.phase = name
        t = self.ctl.get("timestamp") if self.t0 is not None else None
        out: dict[str, Any] = {"phase": name}
        try:
            out.update(fn() or {})
            out["outcome"] = "ok"
        except rtloop.Error as e:
            out.update(outcome="failed", reason=getattr(e, "reason", None) or e.strerror)
        out["seconds"], out["pose"] = None, [math.nan] * 3
        self.phases.append(out)
        try:
            st = self.step()
        except rtloop.Error:
            out["outcome"] = "failed"  # the connection is gone: no state to show
            out.setdefault("reason", "the connection ended")
            return False
        out["seconds"] = round(st["timestamp"] - (t if t is not None else st["timestamp"]), 3)
        out["pose"] = [round(v, 4) for v in st["actual_TCP_pose"][:3]]
        return bool(out["outcome"] == "ok")


def experiment(ctl: rtloop.Control, args: argparse.Namespace,
               csv_writer: Optional[Any] = None) -> list[dict[str, Any]]:
    """The phases; returns the list of what each did."""
    r = Run(ctl, csv_writer)
    r.step()

    def start() -> None:
        ctl.move_j(START, 1.0, 1.4)
        ctl.zero_ft_sensor()  # in free air: the press reads the contact alone

    def contact() -> None:
        ctl.move_until_contact([0, 0, -args.approach, 0, 0, 0], acceleration=0.5,
                               retract=args.retract)

    def press() -> dict[str, Any]:
        ctl.force_mode([0] * 6, [0, 0, 1, 0, 0, 0], [0, 0, -args.force, 0, 0, 0], 2,
                       [0.1, 0.1, 0.1, 0.1, 0.1, 0.1])
        errs: list[float] = []
        n = int(args.press * 500)
        for i in range(n):
            st = r.step(write=False)
            if not int(st[STATUS]) & FORCE_BIT:
                raise rtloop.Error(5, "force mode went off")
            slide = args.slide if i < n - 250 else 0.0  # brake for the last 0.5 s
            ctl.speedl([slide, 0, 0, 0, 0, 0], acc=0.5)
            if i >= 150:  # settled after 0.3 s
                errs.append(abs(st["actual_TCP_force"][2] + args.force))
        ctl.stop(decel=1.0)
        ctl.end_force_mode()
        mean, worst = sum(errs) / len(errs), max(errs)
        if worst > args.tolerance:
            raise rtloop.Error(34, f"force error {worst:.2f} N over {args.tolerance} N")
        return {"force_err_mean": round(mean, 3), "force_err_max": round(worst, 3)}

    def retract() -> None:
        pose = list(r.step()["actual_TCP_pose"])
        pose[2] += 0.05
        ctl.move_l(pose, 0.1, 0.5)

    def teach() -> dict[str, Any]:
        p0 = r.step()["actual_TCP_pose"]
        ctl.teach_mode()
        fmax = 0.0
        for _ in range(int(args.teach * 500)):
            st = r.step()
            fmax = max(fmax, math.hypot(*st["actual_TCP_force"][:3]))
        ctl.end_teach_mode()
        p1 = r.step()["actual_TCP_pose"]
        return {"moved_mm": round(1000 * math.dist(p0[:3], p1[:3]), 1),
                "force_max": round(fmax, 2)}

    for name, fn in (("start", start), ("contact", contact), ("press", press),
                     ("retract", retract), ("teach", teach)):
        if not r.run(name, fn):
            break
    return r.phases


def main() -> int:
    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    ap.add_argument("--host", help="the controller (default: rtloop.Sim in this process)")
    ap.add_argument("--port", type=int, default=30004)
    ap.add_argument("--force", type=float, default=10.0, help="N pressed (default 10)")
    ap.add_argument("--press", type=float, default=3.0, help="s of the press (default 3)")
    ap.add_argument("--slide", type=float, default=0.02, help="m/s along x while pressing")
    ap.add_argument("--approach", type=float, default=0.05, help="m/s toward the surface")
    ap.add_argument("--retract", type=float, default=0.0, help="m back after contact")
    ap.add_argument("--teach", type=float, default=5.0, help="s of teach mode (default 5)")
    ap.add_argument("--tolerance", type=float, default=1.5, help="N of force error allowed")
    ap.add_argument("--json", help="write the phases here")
    ap.add_argument("--csv", help="write every frame here")
    args = ap.parse_args()

    sim = None
    if args.host is None:
        # the plane 28 mm under the start pose; a hand pushing 5 N along x
        sim = rtloop.Sim(contact_z=0.46, force_noise=0.2,
                         faults={"push_x": 5.0, "push_after": 1.0, "push_for": 1.0}).start()
        args.host, args.port = sim.host, sim.port
    out = open(args.csv, "w", newline="") if args.csv else None
    writer = csv.writer(out) if out else None
    if writer:
        writer.writerow(["t", "phase", "x", "y", "z", "fx", "fy", "fz", "status"])
    try:
        with rtloop.Control(args.host, args.port, fields=FIELDS + (STATUS,),
                            watchdog_periods=WATCHDOG_PERIODS) as ctl:
            phases = experiment(ctl, args, writer)
        rest = ctl.stats()["stop_unconfirmed"] == 0
    finally:
        if out:
            out.close()
        if sim:
            sim.stop()
    print(f"{'phase':10} {'time':>6}  {'pose reached [mm]':26} outcome")
    for p in phases:
        x, y, z = (1000 * v for v in p["pose"])
        secs = p["seconds"] if p["seconds"] is not None else math.nan
        extra = {k: v for k, v in p.items()
                 if k not in ("phase", "seconds", "pose", "outcome", "reason")}
        print(f"{p['phase']:10} {secs:5.2f}s  ({x:7.1f} {y:7.1f} {z:7.1f})  "
              f"{p['outcome']}{' (' + str(p['reason']) + ')' if 'reason' in p else ''}"
              f"{'  ' + json.dumps(extra) if extra else ''}")
    print("stop at exit: " + ("the arm at rest" if rest else "rest NOT confirmed"))
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"phases": phases, "at_rest": rest}, f, indent=1)
    ok = rest and len(phases) == 5 and all(p["outcome"] == "ok" for p in phases)
    print("experiment: " + ("every phase ok" if ok else "FAILED"))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
