#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The long soak (not run by CI): rtde-sim at 500 Hz with a fault schedule,
and against it at once five light clients (soak-client: the RTDE transport
under the loop), the recorder (rtde-record, CSV) and a loop that commands
the arm (rtloop-admittance), for DURATION seconds. Every 10 s it samples
each process's resident set (VmRSS) and open file descriptors. At the end it
writes one JSON document and prints a summary; exit 0 when every check
holds:

  loss      for each client and the recorder, every package the controller
            produced between the first and the last one seen was either
            received or skipped by an injected fault, and the skips counted
            equal the injected ones in that window (both computed from the
            controller's timestamps and the simulator's skip rule);
  drift     the controller's clock (its timestamps) against each client's
            CLOCK_MONOTONIC from its first package to its last, within
            50 ms (whatever the duration: the simulator's cycles are
            absolute deadlines, so a drift that grows with time is a bug);
  memory    each process's VmRSS at the end of streaming within 1 MiB of
            its value 60 s in, and its maximum in the second half no higher
            than in the first half plus 1 MiB;
  fds       each process's descriptor count constant after start-up;
  loop      the loop's counters: no ring overflow, receive error, time-out,
            reconnect, watchdog or rejection, every controller skip an
            injected one, the stop confirmed at rest;
  exits     every program exited 0, the simulator's arm at rest at the end.

Usage: tests/soak/soak.py [--duration S] [--build DIR] [--out FILE]
Defaults: 3600 s, build/, soak-<date>.json in the current directory.
"""
import argparse
import json
import os
import re
import signal
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "common"))
import simrule  # noqa: E402  (tests/common: rtde-sim's cycle numbering and skip rule)

# The fault schedule: periodic faults a real controller shows, each with a
# count in the simulator's report. Skips are the only ones that lose
# packages (a busy controller never resends); stalls, bursts, jitter and
# texts only move or add traffic.
FAULTS = [
    "--skip-every", "25000", "--skip-count", "2",  # 2 packages per 50 s
    "--jitter-us", "300",
    "--stall-ms", "40", "--stall-every", "90",  # below the 100 ms watchdog
    "--burst", "8", "--burst-every", "30",
    "--text-every", "20000",
    "--seed", "7",
]
SKIP_EVERY, SKIP_COUNT = 25000, 2
HZ = 500.0
START_TIME = simrule.START  # rtde-sim's default --start-time
DRIFT_MS = 50.0  # start-up queueing included
MIB = 1024


def fail(msg):
    sys.exit("soak: " + msg)


def wait_for(pred, timeout, what):
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        v = pred()
        if v:
            return v
        time.sleep(0.1)
    fail("timed out after %.0f s waiting for %s" % (timeout, what))


def proc_sample(pid):
    """(VmRSS kB, open fds) of pid, or None once it has gone."""
    try:
        with open("/proc/%d/status" % pid) as f:
            rss = next(int(l.split()[1]) for l in f if l.startswith("VmRSS:"))
        return rss, len(os.listdir("/proc/%d/fd" % pid))
    except (OSError, StopIteration):
        return None


def injected_skips(ts_first, ts_last):
    """(skipped, produced): the packages the simulator's skip rule dropped
    between two timestamps it sent (cycle k is skipped when k % N >= N - K),
    and the cycles from the first to the last, both included."""
    k0 = simrule.cycle(ts_first, HZ, START_TIME)
    k1 = simrule.cycle(ts_last, HZ, START_TIME)
    # Both ends were sent, so neither is a skipped cycle.
    return simrule.skips_between(k0 + 1, k1 - 1, SKIP_EVERY, SKIP_COUNT), k1 - k0 + 1


def series_stats(samples, t_warm, t_end):
    """Flatness of one process's (t, rss, fds) samples."""
    s = [x for x in samples if t_warm <= x[0] <= t_end]
    if len(s) < 2:
        return {"samples": len(s), "ok": False, "why": "too few samples"}
    half = s[len(s) // 2][0]
    first = [x[1] for x in s if x[0] <= half]
    second = [x[1] for x in s if x[0] > half] or first
    fds = sorted(set(x[2] for x in s))
    rss_ok = abs(s[-1][1] - s[0][1]) <= MIB and max(second) <= max(first) + MIB
    return {
        "samples": len(s),
        "rss_kb_start": s[0][1], "rss_kb_end": s[-1][1],
        "rss_kb_max_first_half": max(first), "rss_kb_max_second_half": max(second),
        "fds": fds,
        "ok": rss_ok and len(fds) == 1,
    }


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--duration", type=int, default=3600)
    ap.add_argument("--build", default="build")
    ap.add_argument("--clients", type=int, default=5)
    ap.add_argument("--out", default=time.strftime("soak-%Y%m%d-%H%M%S.json"))
    a = ap.parse_args()
    if a.duration < 30:
        fail("--duration must be at least 30 s (the warm-up is excluded)")
    b = a.build
    exe = {
        "sim": b + "/apps/rtde-sim/rtde-sim",
        "client": b + "/tests/soak/soak-client",
        "record": b + "/apps/rtde-record/rtde-record",
        "loop": b + "/apps/rtloop-admittance/rtloop-admittance",
    }
    for p in exe.values():
        if not os.access(p, os.X_OK):
            fail("%s is not an executable (build first, or --build DIR)" % p)

    tmp = tempfile.mkdtemp(prefix="rtl-soak.")
    procs = {}

    def spawn(name, argv):
        out = open(os.path.join(tmp, name + ".out"), "w")
        err = open(os.path.join(tmp, name + ".err"), "w")
        procs[name] = subprocess.Popen(argv, stdout=out, stderr=err)
        return procs[name]

    def text(name, stream):
        with open(os.path.join(tmp, "%s.%s" % (name, stream))) as f:
            return f.read()

    try:
        d = a.duration
        spawn("sim", [exe["sim"], "--profile", "eseries", "--port", "0",
                      "--duration", str(d + 60), "--json", tmp + "/sim.json"] + FAULTS)
        port = wait_for(lambda: (re.findall(r"listening on [0-9.]+:(\d+) ", text("sim", "err"))
                                 or [None])[0], 20, "rtde-sim to listen")
        t0 = time.monotonic()
        for c in range(a.clients):
            spawn("client%d" % c, [exe["client"], "-p", port, "-d", str(d)])
        csv = os.path.join(tmp, "record.csv")
        spawn("record", [exe["record"], "--port", port, "--frequency", "0",
                         "--fields", "timestamp,actual_q", "--duration", str(d),
                         "-o", csv, "--json"])
        spawn("loop", [exe["loop"], "-p", port, "-d", str(d), "-j", tmp + "/loop.json"])

        samples = {n: [] for n in procs}
        while any(p.poll() is None for n, p in procs.items() if n != "sim"):
            t = time.monotonic() - t0
            for n, p in procs.items():
                v = proc_sample(p.pid) if p.poll() is None else None
                if v:
                    samples[n].append((t, v[0], v[1]))
            time.sleep(min(10, max(1, d - t)) if t < d else 1)
            if t > d + 120:
                fail("the programs did not end 120 s after the duration")
        procs["sim"].send_signal(signal.SIGINT)
        procs["sim"].wait(timeout=30)

        # Streaming window for the flatness checks: 60 s (or 10 %) in, to
        # 5 s before the end.
        warm = min(60, d / 10)
        report = {"duration_s": d, "faults": FAULTS, "programs": {}, "checks": {}}
        ok = True

        def check(name, cond, detail):
            nonlocal ok
            report["checks"][name] = {"ok": bool(cond), "detail": detail}
            ok = ok and bool(cond)

        for c in range(a.clients):
            n = "client%d" % c
            line = text(n, "out").strip()
            kv = dict(x.split("=", 1) for x in line.split()) if line else {}
            if not kv:
                check(n + ".exit", False, text(n, "err").strip()[-300:])
                continue
            pk, sk = int(kv["packages"]), int(kv["skipped"])
            inj, produced = injected_skips(float(kv["first_ts"]), float(kv["last_ts"]))
            report["programs"][n] = {"packages": pk, "skipped": sk, "injected": inj,
                                     "produced": produced, "drift_ms": float(kv["drift_ms"]),
                                     "wall_s": float(kv["wall_s"]),
                                     "exit": procs[n].returncode}
            check(n + ".exit", procs[n].returncode == 0, procs[n].returncode)
            check(n + ".loss", pk + sk == produced and sk == inj,
                  "%d received + %d skipped of %d produced; %d skips injected"
                  % (pk, sk, produced, inj))
            check(n + ".drift", abs(float(kv["drift_ms"])) < DRIFT_MS,
                  "%s ms over %s s" % (kv["drift_ms"], kv["wall_s"]))

        # The recorder: every row's timestamp and lost column.
        rows = 0
        lost = 0
        ts_first = ts_last = None
        with open(csv) as f:
            hdr = f.readline().split()
            it, il = hdr.index("timestamp"), hdr.index("lost")
            for line in f:
                v = line.split()
                if len(v) != len(hdr):
                    check("record.rows", False, "a row of %d columns" % len(v))
                    break
                rows += 1
                lost += int(v[il])
                ts = float(v[it])
                ts_first = ts if ts_first is None else ts_first
                ts_last = ts
        summary = json.loads(text("record", "out") or "{}")
        inj, produced = injected_skips(ts_first, ts_last) if rows else (0, 0)
        report["programs"]["record"] = {"rows": rows, "lost": lost, "injected": inj,
                                        "produced": produced, "summary": summary,
                                        "exit": procs["record"].returncode}
        check("record.exit", procs["record"].returncode == 0, procs["record"].returncode)
        check("record.loss", rows > 0 and rows + lost == produced and lost == inj,
              "%d rows + %d lost of %d produced; %d skips injected" % (rows, lost, produced, inj))

        with open(tmp + "/loop.json") as f:
            loop = json.load(f)
        report["programs"]["loop"] = {"report": loop, "exit": procs["loop"].returncode}
        check("loop.exit", procs["loop"].returncode == 0,
              "%s: %s" % (procs["loop"].returncode, text("loop", "err").strip()[-300:]))
        # The loop's own accounting: nothing lost on its side (the worker
        # taking the newest frame, worker_skipped, is its policy, counted),
        # every controller skip one the schedule injected, and the stop
        # confirmed at rest.
        lc = loop["counters"]
        inj_all, _ = injected_skips(START_TIME, START_TIME + d + 60)
        bad = {k: lc[k] for k in ("ring_full", "rx_errors", "rx_timeouts", "reconnects",
                                  "watchdog", "rejected", "stop_unconfirmed") if lc.get(k)}
        check("loop.counters", not bad and lc["ctrl_skipped"] <= inj_all
              and abs(lc["frames"] + lc["ctrl_skipped"] - d * HZ) <= 0.01 * d * HZ,
              "frames %d, ctrl_skipped %d (at most %d injected), worker_skipped %d; %s"
              % (lc["frames"], lc["ctrl_skipped"], inj_all, lc["worker_skipped"],
                 "no loss counter set" if not bad else "set: %s" % bad))
        with open(tmp + "/sim.json") as f:
            sim = json.load(f)
        report["programs"]["sim"] = sim
        check("sim.at_rest", sim.get("robot", {}).get("at_rest_at_end", True),
              json.dumps(sim.get("robot")))

        report["resources"] = {}
        for n, s in samples.items():
            st = series_stats(s, warm, d - 5)
            report["resources"][n] = dict(st, series=s)
            check(n + ".resources", st["ok"], {k: v for k, v in st.items() if k != "series"})

        report["ok"] = ok
        with open(a.out, "w") as f:
            json.dump(report, f, indent=1)
        for name, c in report["checks"].items():
            print("%s %s: %s" % ("ok" if c["ok"] else "FAIL", name, c["detail"]))
        print("soak: %s; report in %s" % ("all checks hold" if ok else "FAILED", a.out))
        return 0 if ok else 1
    finally:
        for p in procs.values():
            if p.poll() is None:
                p.kill()
        subprocess.run(["rm", "-rf", tmp])


if __name__ == "__main__":
    sys.exit(main())
