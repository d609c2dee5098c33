#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The chaos run: the force-control experiment (apps/examples/experiment.py)
over and over against rtloop.Sim, each round with faults drawn at random
(protective stops, which it unlocks and re-uploads the control program
after, connection resets, stalls, skipped packages, jitter).

What must hold in every round, and what a failure of this script means:
- every phase is ok or failed with a named reason (never an unnamed one);
- every exit leaves the arm at rest: the loop's stop at exit confirmed it,
  or, when the connection was gone, the simulator's arm is at rest;
- nothing non-finite reached the wire (the simulator counts it);
- the counters' identity: every package the loop sent (commands and safe
  packages) was applied by the controller, exactly, in every round whose
  connection lasted to the end.

Usage: chaos.py --seconds S [--seed N] [--json FILE]; RTLOOP_SCRIPT is the
generated rtloop_control.script (for the re-upload). Exit 0 when everything
held. docs/experiment.md has the figures of a 30-minute run.
"""
import argparse
import collections
import faulthandler
import importlib.util
import json
import math
import os
import random
import socket
import sys
import time
from pathlib import Path

import rtloop

HERE = Path(__file__).resolve().parent
spec = importlib.util.spec_from_file_location(
    "experiment", HERE.parents[1] / "apps" / "examples" / "experiment.py")
ex = importlib.util.module_from_spec(spec)
spec.loader.exec_module(ex)

HOST = "127.0.0.1"


def faults_for(rng):
    """One round's faults: none, one or two of the kinds, with random sizes."""
    kinds = {
        "pstop": lambda: {"protective_stop_after": round(rng.uniform(0.3, 6.0), 2)},
        "reset": lambda: {"reset_after": rng.randint(200, 4000)},
        "stall": lambda: {"stall_ms": rng.randint(10, 120),
                          "stall_every": round(rng.uniform(0.5, 3.0), 2)},
        "skip": lambda: {"skip_every": rng.randint(20, 500),
                         "skip_count": rng.randint(1, 3)},
        "jitter": lambda: {"jitter_us": rng.randint(100, 1500)},
    }
    chosen = rng.sample(sorted(kinds), rng.choice([0, 1, 1, 2]))
    out = {}
    for k in chosen:
        out.update(kinds[k]())
    return chosen, out


def connection_lost(reason):
    """A phase's reason that says the connection, not the robot, ended it."""
    r = str(reason)
    return "loop has ended" in r or "could not be sent" in r


def dashboard(port, command):
    with socket.create_connection((HOST, port), timeout=2) as s:
        f = s.makefile("rw")
        f.readline()  # the greeting
        f.write(command + "\n")
        f.flush()
        return f.readline().strip()


def recover(sim, ctl, script):
    """After a protective stop: unlock it, re-upload the program, wait for it."""
    deadline = time.monotonic() + 5
    while "releasing" not in dashboard(sim.dashboard_port, "unlock protective stop").lower():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.1)
    with socket.create_connection((HOST, sim.primary_port), timeout=2) as s:
        s.sendall(script)
    for _ in range(500):
        st = ctl.read(timeout=1.0)
        ctl.write()
        if st is not None and st["runtime_state"] == 2 and st["safety_mode"] == 1:
            return True
    return False


def one_round(rng, args, script):
    chosen, faults = faults_for(rng)
    faults.update(push_x=5.0, push_after=0.3, push_for=0.4, seed=rng.randint(1, 1 << 30))
    sim = rtloop.Sim(contact_z=0.46, force_noise=0.2, unlock_delay=0.2, faults=faults).start()
    rnd = {"faults": faults, "kinds": chosen, "attempts": [], "ended": None}
    stats = None
    try:
        with rtloop.Control(HOST, sim.port, fields=ex.FIELDS + (ex.STATUS,),
                            watchdog_periods=ex.WATCHDOG_PERIODS) as ctl:
            for _ in range(3):  # an attempt, and a retry after each recovery
                phases = ex.experiment(ctl, args)
                rnd["attempts"].append(phases)
                last = phases[-1]
                if connection_lost(last.get("reason")):
                    rnd["ended"] = "connection lost"  # a reset: the loop ended
                    break
                if last["outcome"] == "ok" and len(phases) == 5:
                    break
                if last.get("reason") not in ("protective stop", "program stopped"):
                    break
                if not recover(sim, ctl, script):
                    rnd["ended"] = "recovery failed"
                    break
        stats = ctl.stats()
    except rtloop.Error as e:
        rnd["ended"] = f"{e.strerror} (errno {e.errno})"
        try:
            stats = ctl.stats()
        except (NameError, rtloop.Error):
            stats = None
    # let the controller's side settle (its watchdog stops an orphaned arm)
    time.sleep(0.4)
    sim.stop()
    rep = sim.report()
    rnd["stats"] = stats
    rnd["sim"] = {"nonfinite_in": rep["stats"]["nonfinite_in"],
                  "inputs_applied": rep["stats"]["inputs_applied"],
                  "protective_stops": rep["controller"].get("protective_stops"),
                  "at_rest": rep["robot"]["at_rest"]}
    return rnd


def check(rnd):
    """The list of what did not hold in round @rnd."""
    bad = []
    for phases in rnd["attempts"]:
        for p in phases:
            if p["outcome"] != "ok" and not p.get("reason"):
                bad.append(f"phase {p['phase']} failed without a reason")
    if rnd["sim"]["nonfinite_in"]:
        bad.append(f"{rnd['sim']['nonfinite_in']} non-finite inputs on the wire")
    if not rnd["sim"]["at_rest"]:
        bad.append("the simulator's arm is not at rest at the end")
    st = rnd["stats"]
    if st is not None and rnd["ended"] is None:
        # after a reset the connection may be gone before the stop's
        # confirmation: the simulator's arm (checked above) is the truth
        if st["stop_unconfirmed"] and "reset" not in rnd["kinds"]:
            bad.append("the stop at exit did not confirm rest")
        sent = st["transport"]["packages"] + st["transport"]["safe_packages"]
        if "reset" not in rnd["kinds"] and sent != rnd["sim"]["inputs_applied"]:
            bad.append(f"sent {sent} packages, the controller applied "
                       f"{rnd['sim']['inputs_applied']}")
    return bad


def main():
    ap = argparse.ArgumentParser(description="the experiment under random faults")
    ap.add_argument("--seconds", type=float, default=60.0)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--json", help="write every round here")
    args_c = ap.parse_args()
    script_path = os.environ.get("RTLOOP_SCRIPT")
    if not script_path:
        sys.exit("chaos: RTLOOP_SCRIPT (the generated rtloop_control.script) is not set")
    script = Path(script_path).read_bytes()
    args = argparse.Namespace(force=10.0, press=1.0, slide=0.02, approach=0.05, retract=0.0,
                              teach=1.0, tolerance=1.5)
    rng = random.Random(args_c.seed)
    # bounded: a round that hangs is a failure, with every thread's stack
    faulthandler.dump_traceback_later(args_c.seconds + 60, exit=True)
    rounds, problems = [], 0
    phase_counts = collections.Counter()
    t_end = time.monotonic() + args_c.seconds
    t0 = time.monotonic()
    while time.monotonic() < t_end:
        rnd = one_round(rng, args, script)
        rnd["problems"] = check(rnd)
        problems += len(rnd["problems"])
        for phases in rnd["attempts"]:
            for p in phases:
                reason = str(p.get("reason"))
                if connection_lost(reason):
                    reason = "connection lost"
                phase_counts[p["outcome"] if p["outcome"] == "ok" else "failed: " + reason] += 1
        if rnd["ended"]:
            phase_counts["connection: " + rnd["ended"].split(" (")[0]] += 1
        rounds.append(rnd)
        print(f"round {len(rounds)}: faults {','.join(rnd['kinds']) or 'none'}: "
              f"{' / '.join(' '.join(p['outcome'][0] for p in a) for a in rnd['attempts'])}"
              f"{' ended: ' + rnd['ended'] if rnd['ended'] else ''}"
              f"{' PROBLEMS: ' + '; '.join(rnd['problems']) if rnd['problems'] else ''}",
              flush=True)
    complete = sum(1 for r in rounds if r["attempts"] and r["attempts"][-1][-1]["outcome"] == "ok"
                   and len(r["attempts"][-1]) == 5)
    summary = {
        "seconds": round(time.monotonic() - t0, 1), "rounds": len(rounds),
        "complete": complete, "recoveries": sum(len(r["attempts"]) - 1 for r in rounds),
        "protective_stops": sum(r["sim"]["protective_stops"] or 0 for r in rounds),
        "outcomes": dict(phase_counts), "problems": problems,
        "nonfinite_in": sum(r["sim"]["nonfinite_in"] for r in rounds),
    }
    print(json.dumps(summary, indent=1))
    if args_c.json:
        Path(args_c.json).write_text(json.dumps({"summary": summary, "rounds": rounds},
                                                indent=1, default=str))
    return 0 if problems == 0 and rounds else 1


if __name__ == "__main__":
    sys.exit(main())
