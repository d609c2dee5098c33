#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The fault matrix (issue #13): each of rtde-sim's faults against the
recorder (rtde-record), the loop (rtloop-admittance) and the client
(tests/soak/soak-client.c: the RTDE transport under the loop), each with the
exact counters it must produce. TAP on stdout.

Usage: fault-matrix.py RTDE-SIM RTDE-RECORD RTLOOP-ADMITTANCE SOAK-CLIENT

Expectations come from ground truth, never from the program under test:

  skips     rtde-sim skips cycle k when k % N >= N - K (apps/rtde-sim/sim.c)
            and cycle k carries timestamp start + k / 500 (start 42), so the
            skips inside a program's window [first, last] are known exactly;
  no loss   jitter, stalls (below every watchdog), bursts, fragmentation,
            text floods, protocol v1 and a slow reader beside lose nothing:
            every package of the window received, nothing counted lost, and
            the simulator's own count says the fault really happened;
  resets    the loop and the client reconnect once per reset of theirs; the
            recorder ends with exit 1 and a file of whole rows;
  refusals  IN_USE and NOT_FOUND end with exit 1, the message naming the
            field and the cause.

Each case runs the simulator for a few seconds with the programs against it
(--no-rt / --rt off), every subprocess under a time-out and killed on exit.
A case that checks the right behaviour of a program known to get it wrong is
listed in KNOWN_BROKEN: it still reports "not ok", with the evidence, for the
lead to decide.
"""
import csv
import json
import os
import re
import signal
import socket
import struct
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "common"))
import simrule  # noqa: E402  (tests/common: rtde-sim's cycle numbering and skip rule)

if len(sys.argv) != 5:
    sys.exit("usage: fault-matrix.py RTDE-SIM RTDE-RECORD RTLOOP-ADMITTANCE SOAK-CLIENT")
SIM, REC, LOOP, CLIENT = (os.path.abspath(p) for p in sys.argv[1:5])

HZ = 500.0  # the eseries profile's rate, the programs ask for the maximum
START = simrule.START  # rtde-sim's default --start-time
RUN_S = 2  # each program's run
TIMEOUT = 20  # no subprocess lives longer than this

# Cases asserting the right behaviour of a program that gets it wrong
# today (by TAP description prefix): reported "not ok", with a note.
KNOWN_BROKEN = {
}

TMP = tempfile.mkdtemp(prefix="fault-matrix.")
PROCS = []
N_TEST = 0
RESULTS = []


def cleanup():
    for p in PROCS:
        if p.poll() is None:
            p.kill()
            try:
                p.wait(5)
            except subprocess.TimeoutExpired:
                pass
    if not os.environ.get("FM_KEEP"):
        subprocess.call(["rm", "-rf", TMP])
    else:
        print("# kept " + TMP)


def on_signal(sig, frame):
    cleanup()
    sys.exit(1)


signal.signal(signal.SIGTERM, on_signal)


def report(desc, ok, why=""):
    """Records one TAP line (printed at the end with the plan first)."""
    known = any(desc.startswith(k) for k in KNOWN_BROKEN)
    RESULTS.append((desc, bool(ok) and not known, why, known))
    line = "%s %d - %s" % ("ok" if ok and not known else "not ok", len(RESULTS), desc)
    print(line, flush=True)
    if not ok and why:
        for l in str(why).splitlines():
            print("#   " + l, flush=True)
    if known:
        print("#   KNOWN_BROKEN: %s" % ("still broken" if not ok else "passes now: take it off the list"),
              flush=True)


def skip(desc, reason):
    RESULTS.append((desc, True, "", False))
    print("ok %d - %s # SKIP %s" % (len(RESULTS), desc, reason), flush=True)


def check(desc, conds):
    """conds: list of (bool, message when false). One TAP line."""
    bad = [m for c, m in conds if not c]
    report(desc, not bad, "\n".join(bad))


def eq(what, got, want):
    return (got == want, "%s: got %r, want %r" % (what, got, want))


skips_between = simrule.skips_between


def cyc(ts):
    """The simulator's cycle number of timestamp ts."""
    return simrule.cycle(ts, HZ, START)


# ---- processes ------------------------------------------------------------------


def spawn(name, argv, stdout=True):
    out = open(os.path.join(TMP, name + ".out"), "w")
    err = open(os.path.join(TMP, name + ".err"), "w")
    p = subprocess.Popen(argv, stdout=out, stderr=err, stdin=subprocess.DEVNULL)
    p.name = name
    PROCS.append(p)
    return p


def text(name, which):
    try:
        with open(os.path.join(TMP, name + "." + which)) as f:
            return f.read()
    except OSError:
        return ""


def finish(p, timeout=TIMEOUT):
    try:
        return p.wait(timeout)
    except subprocess.TimeoutExpired:
        p.kill()
        p.wait(5)
        return "killed after %d s" % timeout


class Sim:
    """rtde-sim on a free port; stop() ends it (SIGTERM) and reads its JSON."""

    def __init__(self, name, args):
        self.name = name
        self.json_path = os.path.join(TMP, name + ".json")
        self.p = spawn(name, [SIM, "-p", "0", "-d", str(TIMEOUT), "--no-mlock",
                              "-j", self.json_path] + args)
        self.port = None
        end = time.monotonic() + 5
        while time.monotonic() < end and self.p.poll() is None:
            m = re.search(r"listening on [0-9.]+:(\d+) ", text(name, "err"))
            if m:
                self.port = int(m.group(1))
                break
            time.sleep(0.02)
        self.report = None

    def stop(self):
        if self.p.poll() is None:
            self.p.send_signal(signal.SIGTERM)
        self.rc = finish(self.p, 10)
        try:
            with open(self.json_path) as f:
                self.report = json.load(f)
        except (OSError, ValueError):
            self.report = None
        return self.report


def start_recorder(sim, name, fields="timestamp", extra=()):
    csv_path = os.path.join(TMP, name + ".csv")
    p = spawn(name, [REC, "--port", str(sim.port), "--frequency", "0", "--fields", fields,
                     "--duration", str(RUN_S), "--json", "--no-rt", "-o", csv_path] + list(extra))
    p.csv = csv_path
    return p


def start_loop(sim, name, extra=()):
    p = spawn(name, [LOOP, "-p", str(sim.port), "-d", str(RUN_S), "--rt", "off", "--inline",
                     "-j", os.path.join(TMP, name + ".json"),
                     "-c", os.path.join(TMP, name + ".csv")] + list(extra))
    return p


def start_client(sim, name):
    return spawn(name, [CLIENT, "-p", str(sim.port), "-d", str(RUN_S)])


class Result:
    pass


def recorder_result(p):
    r = Result()
    r.rc = finish(p)
    r.err = text(p.name, "err")
    r.summary = None
    for line in r.err.splitlines():
        if line.startswith("{"):
            try:
                r.summary = json.loads(line)
            except ValueError:
                pass
    r.rows, r.ragged = [], 0
    path = p.csv if os.path.exists(p.csv) else p.csv + ".partial"
    r.path = path
    try:
        with open(path, newline="") as f:
            data = f.read()
        r.whole = data == "" or data.endswith("\n")
        rd = csv.reader(data.splitlines(), delimiter=" ")
        head = next(rd, [])
        ti, li = head.index("timestamp"), head.index("lost")
        for row in rd:
            if len(row) != len(head):
                r.ragged += 1
                continue
            r.rows.append((float(row[ti]), int(row[li])))
    except (OSError, ValueError, StopIteration):
        r.whole = False
    return r


def loop_result(p):
    r = Result()
    r.rc = finish(p)
    r.err = text(p.name, "err")
    r.out = text(p.name, "out")
    try:
        with open(os.path.join(TMP, p.name + ".json")) as f:
            r.c = json.load(f)["counters"]
    except (OSError, ValueError, KeyError):
        r.c = None
    r.t = []
    try:
        with open(os.path.join(TMP, p.name + ".csv")) as f:
            rd = csv.reader(f)
            next(rd)
            r.t = [int(round(float(row[0]) * HZ)) for row in rd]
    except (OSError, ValueError, StopIteration):
        pass
    return r


def client_result(p):
    r = Result()
    r.rc = finish(p)
    r.err = text(p.name, "err")
    out = text(p.name, "out").split()
    r.kv = dict(x.split("=", 1) for x in out if "=" in x)
    return r


def num(kv, key):
    try:
        return int(kv[key])
    except (KeyError, ValueError):
        try:
            return float(kv[key])
        except (KeyError, ValueError):
            return None


def run_case(name, sim_args, programs=("rec", "loop", "client"), rec_fields="timestamp",
             rec_extra=(), loop_extra=(), beside=None):
    """One simulator with the programs against it at once; beside(sim) runs
    while they do (raw sockets) and returns what it saw. Returns
    (sim report, {program: Result}, beside's result)."""
    sim = Sim(name + "-sim", sim_args)
    if sim.port is None:
        sim.stop()
        return None, {}, None
    extra = beside(sim) if beside else None
    ps = {}
    if "rec" in programs:
        ps["rec"] = start_recorder(sim, name + "-rec", rec_fields, rec_extra)
    if "loop" in programs:
        ps["loop"] = start_loop(sim, name + "-loop", loop_extra)
    if "client" in programs:
        ps["client"] = start_client(sim, name + "-client")
    res = {}
    for k, p in ps.items():
        res[k] = {"rec": recorder_result, "loop": loop_result, "client": client_result}[k](p)
    if extra is not None and hasattr(extra, "finish"):
        extra = extra.finish()
    rep = sim.stop()
    return rep, res, extra


# ---- generic checks --------------------------------------------------------------


def rec_window(r):
    if not r.rows:
        return None
    return cyc(r.rows[0][0]), cyc(r.rows[-1][0])


def rec_lossless(desc, r, rc=0):
    w = rec_window(r)
    s = r.summary or {}
    conds = [eq("exit status", r.rc, rc), (r.summary is not None, "no JSON summary: " + r.err[-300:]),
             (w is not None, "no rows")]
    if w:
        conds += [eq("rows", len(r.rows), w[1] - w[0] + 1),
                  eq("lost column sum", sum(l for _, l in r.rows), 0)]
    for key in ("lost", "skipped", "controller_skips", "wrong_size", "wrong_recipe", "malformed",
                "writer_overflow", "dropped"):
        if key in s:
            conds.append(eq("summary " + key, s[key], 0))
    if w:
        conds.append(eq("summary packages", s.get("packages"), len(r.rows)))
    check(desc, conds)


def loop_base(r):
    c = r.c or {}
    return [eq("exit status", r.rc, 0), (r.c is not None, "no JSON report: " + r.err[-300:])] + [
        eq(k, c.get(k), 0) for k in ("ring_full", "reconnects", "rx_errors", "rx_timeouts",
                                     "watchdog", "stop_unconfirmed", "rejected")]


def loop_lossless(desc, r):
    """The loop steps the latest frame (a burst's held ones are received,
    counted in frames, and not stepped: worker_skipped), so its CSV may
    have holes; every hole must be one it says it did not step, and no
    package may be missing from the stream (ctrl_skipped)."""
    c = r.c or {}
    conds = loop_base(r) + [eq("ctrl_skipped", c.get("ctrl_skipped"), 0)]
    holes = sum(b - a - 1 for a, b in zip(r.t, r.t[1:]))
    bad = [b - a for a, b in zip(r.t, r.t[1:]) if b - a < 1]
    conds += [(len(r.t) > 0, "empty CSV"), (not bad, "CSV timestamps not increasing: %r" % bad[:5]),
              (holes <= c.get("worker_skipped", 0),
               "CSV holes %d > worker_skipped %r: frames missing" % (holes, c.get("worker_skipped"))),
              eq("steps", c.get("steps"), len(r.t)),
              (c.get("frames", 0) >= len(r.t) + holes,
               "frames %r < the %d cycles of the CSV's span" % (c.get("frames"), len(r.t) + holes))]
    check(desc, conds)


def client_window(r):
    f, l = num(r.kv, "first_ts"), num(r.kv, "last_ts")
    if f is None or l is None:
        return None
    return cyc(f), cyc(l)


def client_lossless(desc, r):
    w = client_window(r)
    conds = [eq("exit status", r.rc, 0), (w is not None, "no first_ts/last_ts: %r %s" % (r.kv, r.err))]
    if w:
        conds += [eq("packages", num(r.kv, "packages"), w[1] - w[0] + 1),
                  eq("skipped", num(r.kv, "skipped"), 0),
                  eq("resets", num(r.kv, "resets"), 0)]
    if "reconnects" in r.kv:
        conds.append(eq("reconnects", num(r.kv, "reconnects"), 0))
    check(desc, conds)


def sim_ok(desc, rep, conds):
    if rep is None:
        report(desc, False, "rtde-sim did not start or wrote no report")
        return
    check(desc, conds(rep))


def lossless_case(name, label, sim_args, injected, beside=None, extra_sim=None):
    """A fault that must not lose anything: the simulator injected it, and
    each program received every package of its window."""
    rep, res, side = run_case(name, sim_args, beside=beside)

    def sc(d):
        inj = d["injected"]
        cs = [(inj.get(k, 0) > 0, "simulator's injected %s is 0: the fault never happened" % k)
              for k in injected]
        if extra_sim:
            cs += extra_sim(d, side)
        return cs
    sim_ok("%s: rtde-sim injected it (%s)" % (label, ", ".join(injected) or "counters"), rep, sc)
    if "rec" in res:
        rec_lossless("%s: rtde-record lost nothing" % label, res["rec"])
    if "loop" in res:
        loop_lossless("%s: rtloop-admittance lost nothing" % label, res["loop"])
    if "client" in res:
        client_lossless("%s: soak-client lost nothing" % label, res["client"])
    return rep, res, side


# ---- raw RTDE peers ----------------------------------------------------------------


def pkg(kind, payload=b""):
    return struct.pack(">HB", 3 + len(payload), ord(kind)) + payload


def read_pkg(s):
    def exact(n):
        b = b""
        while len(b) < n:
            c = s.recv(n - len(b))
            if not c:
                raise EOFError
            b += c
        return b
    size, kind = struct.unpack(">HB", exact(3))
    return chr(kind), exact(size - 3)


def handshake_and_start(port, fields, rcvbuf=None):
    """A raw protocol-2 client up to START accepted; returns the socket."""
    s = socket.socket()
    if rcvbuf:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, rcvbuf)
    s.settimeout(5)
    s.connect(("127.0.0.1", port))
    s.sendall(pkg("V", struct.pack(">H", 2)))
    while True:
        k, b = read_pkg(s)
        if k == "V":
            break
    s.sendall(pkg("O", struct.pack(">d", 500.0) + fields.encode()))
    while True:
        k, b = read_pkg(s)
        if k == "O":
            break
    s.sendall(pkg("S"))
    while True:
        k, b = read_pkg(s)
        if k == "S":
            if not b or b[0] != 1:
                raise RuntimeError("START refused")
            break
    return s


# ---- the cases -----------------------------------------------------------------------


def case_skips():
    n, k = 50, 3
    rep, res, _ = run_case("skips", ["--skip-every", str(n), "--skip-count", str(k)])
    sim_ok("skips 3/50: rtde-sim skipped packages", rep,
           lambda d: [(d["injected"]["skipped_packages"] > 0, "no skipped packages")])
    r = res["rec"]
    w = rec_window(r)
    conds = [eq("exit status", r.rc, 0), (w is not None, "no rows: " + r.err[-300:])]
    if w:
        want = skips_between(w[0], w[1], n, k)
        s = r.summary or {}
        # Each row's lost = the skipped cycles just before it, by the rule.
        wrong = [(ts, lost) for (p, _), (ts, lost) in zip(r.rows, r.rows[1:])
                 if lost != skips_between(cyc(p) + 1, cyc(ts) - 1, n, k) or cyc(ts) - cyc(p) - 1 != lost]
        conds += [(want > 0, "window [%d, %d] holds no skip" % w),
                  eq("lost column sum", sum(l for _, l in r.rows), want),
                  eq("summary skipped", s.get("skipped"), want),
                  eq("summary controller_skips", s.get("controller_skips"), want),
                  eq("summary lost", s.get("lost"), want),
                  eq("rows + skips", len(r.rows) + want, w[1] - w[0] + 1),
                  (not wrong, "rows whose lost is not the rule's gap: %r" % wrong[:5])]
        for key in ("wrong_size", "wrong_recipe", "malformed", "writer_overflow"):
            conds.append(eq("summary " + key, s.get(key, 0), 0))
    check("skips 3/50: rtde-record lost column, skipped and controller_skips = the rule's skips in its window", conds)
    r = res["client"]
    w = client_window(r)
    conds = [eq("exit status", r.rc, 0), (w is not None, "no window: %r" % r.kv)]
    if w:
        want = skips_between(w[0], w[1], n, k)
        conds += [(want > 0, "window holds no skip"), eq("skipped", num(r.kv, "skipped"), want),
                  eq("packages + skipped", num(r.kv, "packages") + want, w[1] - w[0] + 1),
                  eq("resets", num(r.kv, "resets"), 0)]
    check("skips 3/50: soak-client skipped = the rule's skips in [first_ts, last_ts]", conds)
    # The loop's CSV timestamps are relative to its first frame: the cycles
    # it stepped must be ones the rule sends for exactly one phase of that
    # frame, and the ones it did not step (the loop steps the latest frame:
    # worker_skipped) no more than it says.
    r = res["loop"]
    c = r.c or {}
    conds = loop_base(r) + [(len(r.t) > 2 * n, "CSV too short: %d" % len(r.t))]
    if r.t:
        seen = set(r.t)
        span = r.t[-1]
        phases = []
        for p in range(n - k):
            if any((p + x) % n >= n - k for x in seen):
                continue
            unstepped = sum(1 for x in range(span + 1) if (p + x) % n < n - k and x not in seen)
            if unstepped <= c.get("worker_skipped", 0):
                phases.append(p)
        conds.append((len(phases) == 1, "stepped cycles match the rule for phases %r" % phases[:5]))
        if len(phases) == 1:
            # frames + ctrl_skipped cycles from the first frame: the skips
            # the rule puts there must be ctrl_skipped.
            frames, ctrl = c.get("frames", 0), c.get("ctrl_skipped", 0)
            p = phases[0]
            want = skips_between(p, p + frames + ctrl - 1, n, k)
            conds += [eq("ctrl_skipped", ctrl, want), (want > 0, "no skip in the window"),
                      (frames + ctrl - 1 >= span, "frames + ctrl_skipped short of the CSV's span")]
    check("skips 3/50: rtloop-admittance ctrl_skipped = the rule's skips in its window", conds)


def case_skips_dense():
    # Only every 4th cycle sent: between a first and a last received frame
    # exactly 3 skipped per frame after the first, whatever the phase.
    n, k = 4, 3
    rep, res, _ = run_case("skips-dense", ["--skip-every", str(n), "--skip-count", str(k)])
    sim_ok("skips 3/4: rtde-sim skipped packages", rep,
           lambda d: [(d["injected"]["skipped_packages"] > 0, "no skipped packages")])
    r = res["loop"]
    c = r.c or {}
    conds = loop_base(r) + [(c.get("frames", 0) > 10, "too few frames")]
    conds.append(eq("ctrl_skipped", c.get("ctrl_skipped"), k * (c.get("frames", 1) - 1)))
    # Every step is n periods after the last one, unless the worker let a
    # frame go (a loaded host): then a multiple of n, and each frame not
    # stepped is one the loop counted.
    steps = [b - a for a, b in zip(r.t, r.t[1:])]
    gaps = sorted(set(steps))
    missed = sum(g // n - 1 for g in steps if g % n == 0)
    not_stepped = c.get("worker_skipped", 0) + c.get("unstepped", 0)
    conds.append((all(g % n == 0 and g > 0 for g in gaps),
                  "CSV gaps (periods) %r: all multiples of %d" % (gaps, n)))
    conds.append((n in gaps, "CSV gaps (periods) %r include %d" % (gaps, n)))
    conds.append((missed <= not_stepped,
                  "%d frames not stepped in the CSV, the loop counted %d" % (missed, not_stepped)))
    check("skips 3/4: rtloop-admittance ctrl_skipped = 3 x (frames - 1)", conds)
    r = res["rec"]
    w = rec_window(r)
    conds = [eq("exit status", r.rc, 0), (w is not None, "no rows")]
    if w:
        want = skips_between(w[0], w[1], n, k)
        conds += [eq("lost column sum", sum(l for _, l in r.rows), want),
                  eq("summary skipped", (r.summary or {}).get("skipped"), want),
                  eq("rows", len(r.rows), w[1] - w[0] + 1 - want)]
    check("skips 3/4: rtde-record lost = the rule's skips", conds)
    r = res["client"]
    w = client_window(r)
    conds = [eq("exit status", r.rc, 0), (w is not None, "no window")]
    if w:
        want = skips_between(w[0], w[1], n, k)
        conds += [eq("skipped", num(r.kv, "skipped"), want),
                  eq("packages", num(r.kv, "packages"), w[1] - w[0] + 1 - want)]
    check("skips 3/4: soak-client skipped = the rule's skips", conds)


def case_jitter():
    lossless_case("jitter", "jitter 1500 us", ["--jitter-us", "1500"], ["jittered_cycles"])


def case_stall():
    # 40 ms: below the executor's 100 ms watchdog and the clients' timeouts.
    lossless_case("stall", "stalls 40 ms every 0.5 s", ["--stall-ms", "40", "--stall-every", "0.5"],
                  ["stalls"])


def case_burst():
    lossless_case("burst", "bursts of 10 every 0.3 s", ["--burst", "10", "--burst-every", "0.3"],
                  ["bursts"])


def case_fragment():
    lossless_case("fragment", "fragmented writes (max 7 B)", ["--fragment", "--fragment-max", "7"],
                  ["fragments"])


def case_v1():
    lossless_case("v1", "protocol v1 only", ["--max-protocol", "1"], [],
                  extra_sim=lambda d, side: [eq("max_protocol", d["max_protocol"], 1),
                                             (d["stats"]["data_sent"] > 0, "nothing sent")])


def case_text():
    # One program per simulator: the simulator counts its texts over all
    # sessions. The client counts the texts it received.
    every = 50
    rep, res, _ = run_case("text-client", ["--text-every", str(every)], programs=("client",))
    sim_ok("text floods: rtde-sim sent texts", rep,
           lambda d: [(d["injected"]["texts"] > 0, "no texts injected")])
    client_lossless("text floods: soak-client lost nothing", res["client"])
    r = res["client"]
    t = num(r.kv, "text")
    inj = rep["injected"]["texts"] if rep else None
    # The simulator counts a text when it queues it; the client stops
    # reading at its --duration while the simulator still streams, so the
    # texts queued after its last read are never received: at most the
    # ones queued with the packages after the client's last (one text per
    # 50 packages: a client that stops within 50 packages of its last read
    # misses at most one).
    check("text floods: soak-client text = rtde-sim's texts to it (the last one may race the end)",
          [(t is not None, "no text= in %r" % r.kv),
           (inj is not None and t is not None and inj - 1 <= t <= inj,
            "text %r, rtde-sim injected %r" % (t, inj))])
    rep, res, _ = run_case("text-rl", ["--text-every", str(every)], programs=("rec", "loop"))
    sim_ok("text floods: rtde-sim sent texts to the recorder and the loop", rep,
           lambda d: [(d["injected"]["texts"] > 0, "no texts injected")])
    rec_lossless("text floods: rtde-record lost nothing", res["rec"])
    loop_lossless("text floods: rtloop-admittance lost nothing", res["loop"])


def case_reset():
    after = 300  # packages per connection: 0.6 s at 500 Hz, 3 resets in 2 s
    # Neither program asks for reconnects (the loop's reconnect_attempts is
    # 0 in both): the first reset ends the run, exit 1, after exactly the
    # packages the simulator sent before it, none lost, and the message
    # says the connection was reset.
    for prog in ("loop", "client"):
        rep, res, _ = run_case("reset-" + prog, ["--reset-after", str(after)], programs=(prog,))
        sim_ok("resets after %d: rtde-sim reset the %s's connection once" % (after, prog), rep,
               lambda d: [eq("resets", d["injected"]["resets"], 1)])
        r = res[prog]
        if prog == "loop":
            c = r.c or {}
            name = "rtloop-admittance"
            conds = [(r.c is not None, "no report: " + r.err[-300:]),
                     eq("frames", c.get("frames"), after), eq("ctrl_skipped", c.get("ctrl_skipped"), 0),
                     eq("reconnects", c.get("reconnects"), 0),
                     eq("stop_unconfirmed (no connection to send it on)", c.get("stop_unconfirmed"), 1)]
        else:
            name = "soak-client"
            conds = [eq("packages", num(r.kv, "packages"), after), eq("skipped", num(r.kv, "skipped"), 0),
                     eq("reconnects", num(r.kv, "reconnects"), 0)]
        conds += [eq("exit status", r.rc, 1),
                  ("reset" in r.err.lower(), "the reset is not named: " + r.err[-400:])]
        check("resets after %d: %s exits 1 after exactly %d packages, the reset named" % (after, name, after),
              conds)
        check("resets after %d: %s's message does not blame slow reading for a reset" % (after, name),
              [(not re.search(r"reads too slowly|receive buffer overflowed", r.err),
                "it does: " + r.err[-500:])])
    # The recorder records one connection: its first reset ends it.
    rep, res, _ = run_case("reset-rec", ["--reset-after", str(after)], programs=("rec",))
    r = res["rec"]
    conds = [eq("exit status", r.rc, 1),
             (re.search(r"rtde-record: .*(reset|closed|lost)", r.err) is not None,
              "no message about the lost connection: " + r.err[-400:]),
             eq("end", (r.summary or {}).get("end"), "connection lost"),
             (r.whole, "the file does not end with a whole row"), eq("ragged rows", r.ragged, 0),
             (0 < len(r.rows) <= after, "rows %d, reset after %d" % (len(r.rows), after))]
    w = rec_window(r)
    if w:
        conds.append(eq("rows span", w[1] - w[0] + 1, len(r.rows)))
    check("resets after %d: rtde-record exits 1 with a message, a file of whole rows, none lost" % after, conds)


def case_in_use():
    # Two loops write the same registers: the second one's inputs answer
    # IN_USE. And under --fieldbus (registers 0-23 and the standard inputs
    # IN_USE) the loop, whose registers are 24..47, runs.
    sim = Sim("inuse-sim", [])
    first = start_loop(sim, "inuse-first", ["-d", "4"]) if sim.port else None
    time.sleep(1)
    second = loop_result(start_loop(sim, "inuse-second")) if sim.port else None
    if first:
        loop_result(first)
    sim.stop()
    r = second
    check("IN_USE: a second rtloop-admittance exits 1, naming the register and IN_USE",
          [(r is not None, "no simulator"), eq("exit status", r and r.rc, 1),
           (r is not None and re.search(r"input_\w+_register_\d+", r.err) is not None,
            "no register named: %s" % (r and r.err[-400:])),
           (r is not None and re.search(r"IN_USE|in use", r.err) is not None,
            "IN_USE not said: %s" % (r and r.err[-400:]))])
    rep, res, _ = run_case("fieldbus", ["--fieldbus"], programs=("loop",))
    loop_lossless("IN_USE: rtloop-admittance under --fieldbus (registers 24..47) runs, lost nothing",
                  res["loop"])


def case_not_found():
    rep, res, _ = run_case("notfound-rec", ["--profile", "cb3"], programs=("rec",),
                           rec_fields="timestamp,ft_raw_wrench")
    r = res["rec"]
    check("NOT_FOUND: rtde-record against CB3 asking for ft_raw_wrench exits 1, naming the field and the cause",
          [eq("exit status", r.rc, 1), ("ft_raw_wrench" in r.err, "field not named: " + r.err[-400:]),
           (re.search(r"NOT_FOUND|not found|not available|unknown|does not have|needs", r.err, re.I)
            is not None, "cause not said: " + r.err[-400:])])
    rep, res, _ = run_case("notfound-loop", ["--controller-version", "5.2.0"], programs=("loop",))
    r = res["loop"]
    check("NOT_FOUND: rtloop-admittance against 5.2.0 (no registers 24..47) exits 1, naming the register and the cause",
          [eq("exit status", r.rc, 1),
           (re.search(r"(in|out)put_\w+_register_(2[4-9]|3\d|4[0-7])", r.err) is not None,
            "register not named: " + r.err[-400:]),
           (re.search(r"NOT_FOUND|not found|not available|does not have|needs|since", r.err, re.I)
            is not None, "cause not said: " + r.err[-400:])])
    # The client asks for timestamp only, which every version has: CB3 at 125 Hz.
    rep, res, _ = run_case("cb3-client", ["--profile", "cb3"], programs=("client",))
    r = res["client"]
    w = client_window(r)
    check("NOT_FOUND: soak-client (timestamp only) against CB3 streams at 125 Hz, lost nothing",
          [eq("exit status", r.rc, 0), (w is not None, "no window")] +
          ([eq("packages", num(r.kv, "packages"), (w[1] - w[0]) // 4 + 1),
            eq("skipped", num(r.kv, "skipped"), 0)] if w else []))


class Idle:
    """N raw sockets that never send a byte."""

    def __init__(self, port, n):
        self.socks = []
        for _ in range(n):
            s = socket.create_connection(("127.0.0.1", port), 5)
            self.socks.append(s)
        self.t0 = time.monotonic()

    def finish(self):
        closed, texts = 0, 0
        for s in self.socks:
            s.settimeout(max(0.1, 8 - (time.monotonic() - self.t0)))
            try:
                while True:
                    k, b = read_pkg(s)
                    if k == "M" and b"handshake-timeout" in b:
                        texts += 1
            except EOFError:
                closed += 1
            except OSError:
                pass
            s.close()
        self.closed, self.texts = closed, texts
        return self


def case_idle():
    label = "idle connections (5, --handshake-timeout 1)"
    help_text = subprocess.run([SIM, "--help"], capture_output=True, text=True, timeout=10).stdout
    if "--handshake-timeout" not in help_text:
        for what in ("rtde-sim closed each, with a text", "rtde-record", "rtloop-admittance", "soak-client"):
            skip("%s: %s" % (label, what), "rtde-sim has no --handshake-timeout")
        return
    n = 5
    lossless_case("idle", label, ["--handshake-timeout", "1"], [],
                  beside=lambda sim: Idle(sim.port, n),
                  extra_sim=lambda d, side: [eq("idle_closed", d["stats"].get("idle_closed"), n),
                                             eq("idle sockets closed", side.closed, n),
                                             eq("idle sockets told why", side.texts, n)])


class Slow:
    """A raw client that starts a wide stream and never reads."""

    def __init__(self, port):
        self.s = handshake_and_start(port, ",".join(
            ["timestamp", "actual_q", "actual_qd", "actual_current", "target_q", "target_qd",
             "target_qdd", "actual_TCP_pose", "actual_TCP_speed", "actual_TCP_force"]), rcvbuf=4096)

    def finish(self):
        self.s.close()
        return self


def case_slow():
    lossless_case("slow", "a slow reader beside (--send-buffer 16384 --sndbuf 4096)",
                  ["--send-buffer", "16384", "--sndbuf", "4096"], [],
                  beside=lambda sim: Slow(sim.port),
                  extra_sim=lambda d, side: [eq("slow_disconnects", d["stats"]["slow_disconnects"], 1)])


def main():
    cases = [case_skips, case_skips_dense, case_jitter, case_stall, case_burst, case_fragment,
             case_text, case_v1, case_reset, case_in_use, case_not_found, case_idle, case_slow]
    only = os.environ.get("FM_ONLY")
    t0 = time.monotonic()
    try:
        for c in cases:
            if only and only not in c.__name__:
                continue
            c()
    finally:
        cleanup()
    print("1..%d" % len(RESULTS))
    print("# %.1f s" % (time.monotonic() - t0))
    return 0 if all(ok for _, ok, _, _ in RESULTS) else 1


if __name__ == "__main__":
    sys.exit(main())
