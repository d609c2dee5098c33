#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Several devices in one loop (<rtloop/rig.h>) against simulators.

The bimanual example (apps/examples/bimanual.c) against two rtde-sims: both
arms move and B holds A's offset; one controller killed mid-run under each
policy: stop-all (the other arm is stopped by the policy, the rig ends, the
arm that is left is at rest), stop-source (the other arm goes on); the
counters name the source. The sensor-based admittance example
(apps/examples/ft_admittance.c) against rtde-sim --ft-port at 7 kHz with
records skipped and reordered: the press is held, and the sensor's loss
counts agree with the faults the simulator injected; a stalled sensor stops
the arm. Writes TAP.
Usage: test-rig.py RTDE_SIM BIMANUAL FT_ADMITTANCE"""
import json
import os
import re
import signal
import subprocess
import sys
import tempfile
import time

SIM, BIMANUAL, ADMITTANCE = sys.argv[1:4]
results = []


def check(ok, what, diag=""):
    results.append((bool(ok), what, diag))


def start_sim_ports(args, tmp, name):
    log_path = os.path.join(tmp, name + ".log")
    log = open(log_path, "w")
    # SCHED_FIFO (best effort), as make demo runs it: a simulator starved by
    # other work on the host goes silent, and the rig rightly stops the arm.
    p = subprocess.Popen([SIM, "--port", "0", "--priority", "60"] + args,
                         stdout=subprocess.DEVNULL, stderr=log)
    port = ft = None
    end = time.time() + 10
    while time.time() < end and (port is None or ("--ft-port" in args and ft is None)):
        text = open(log_path).read()
        m = re.search(r"listening on [0-9.]+:(\d+)", text)
        port = int(m.group(1)) if m else None
        m = re.search(r"F/T sensor .* on UDP [0-9.]+:(\d+)", text)
        ft = int(m.group(1)) if m else None
        if p.poll() is not None:
            break
        time.sleep(0.05)
    return p, port, ft, log_path


def stop(p):
    if p.poll() is None:
        p.send_signal(signal.SIGINT)
    try:
        p.wait(timeout=10)
    except subprocess.TimeoutExpired:
        p.kill()
        p.wait()


def num(pattern, text, default=None):
    m = re.search(pattern, text)
    return float(m.group(1)) if m else default


def arm_line(text, arm):
    m = re.search(r"bimanual: arm %s: (\d+) frames taken, faults caused (\d+) \(lost (\d+), "
                  r"stale (\d+), non-finite (\d+)\), stopped by the policy (\d+)" % arm, text)
    return [int(x) for x in m.groups()] if m else None


def csv_range(path, col):
    vals = []
    with open(path) as f:
        next(f)
        for line in f:
            vals.append(float(line.split(",")[col]))
    return (max(vals) - min(vals)) if vals else 0.0


def bimanual(tmp):
    a, pa, _, la = start_sim_ports(["--duration", "30"], tmp, "a")
    b, pb, _, lb = start_sim_ports(["--duration", "30", "--seed", "2"], tmp, "b")
    csv = os.path.join(tmp, "bimanual.csv")
    try:
        r = subprocess.run([BIMANUAL, str(pa), str(pb), "3", "all", csv], capture_output=True,
                           text=True, timeout=60)
    finally:
        stop(a)
        stop(b)
    out = r.stdout
    check(r.returncode == 0, "bimanual: two arms for 3 s, exit 0", out[-600:] + r.stderr[-300:])
    A, B = arm_line(out, "A"), arm_line(out, "B")
    check(A and B and A[0] > 1000 and B[0] > 1000,
          "bimanual: the step took frames of both arms (500 Hz each)", out[:400])
    mean = num(r"at ([0-9.]+) mm mean", out, 1e9)
    check(mean < 2.0, "bimanual: B held A's offset within 2 mm on average (%.2f mm)" % mean,
          out[:300])
    ax, bx = csv_range(csv, 1), csv_range(csv, 4)
    check(ax > 0.05 and bx > 0.05 and abs(ax - bx) < 0.005,
          "bimanual: both arms moved, by the same (A x %.1f mm, B x %.1f mm)" %
          (ax * 1e3, bx * 1e3))
    check(A and B and A[1] == 0 and B[1] == 0 and A[5] == 0 and B[5] == 0,
          "bimanual: no fault, nobody stopped by the policy", out[:400])
    check(out.count("stop at exit: the arm was at rest") == 2,
          "bimanual: the stop at exit confirmed both arms at rest", out[-800:])


def bimanual_fault(tmp, policy):
    a, pa, _, _ = start_sim_ports(["--duration", "30"], tmp, "fa")
    b, pb, _, _ = start_sim_ports(["--duration", "30", "--seed", "2"], tmp, "fb")
    try:
        t0 = time.time()
        p = subprocess.Popen([BIMANUAL, str(pa), str(pb), "4", policy], stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True)
        time.sleep(1.5)
        b.kill()  # arm B's controller dies mid-run
        out, err = p.communicate(timeout=60)
        took = time.time() - t0
    finally:
        stop(a)
        stop(b)
    A, B = arm_line(out, "A"), arm_line(out, "B")
    what = "bimanual, B killed, %s: " % policy
    check(B and B[1] == 1 and B[2] == 1, what + "B is named: caused 1 fault (lost)", out[:500])
    check(A and A[1] == 0, what + "A caused nothing", out[:500])
    if policy == "all":
        check(A and A[5] == 1, what + "the policy stopped A", out[:500])
        check(p.returncode != 0 and took < 3.8,
              what + "the rig ended with the loss (exit %d after %.1f s)" % (p.returncode, took),
              out[-300:])
        check(re.search(r"source 0: A.*?stop at exit: the arm was at rest", out, re.S),
              what + "A's stop at exit confirmed it at rest", out[-1500:])
    else:
        check(A and A[5] == 0, what + "A was not stopped", out[:500])
        check(p.returncode == 0 and A and B and A[0] > B[0] + 500,
              what + "A went on to the end (%s frames, B %s)" % (A and A[0], B and B[0]),
              out[:400])
    check("NOT CONFIRMED: the connection was lost" in out,
          what + "B's report says its stop could not be seen", out[-800:])


def udp_buffer_drops():
    """The kernel's count of UDP datagrams dropped on a full receive buffer
    (every socket of the machine): losses that are no fault injected."""
    with open("/proc/net/snmp") as f:
        rows = [line.split() for line in f if line.startswith("Udp:")]
    return int(rows[1][rows[0].index("RcvbufErrors")])


def admittance(tmp, faults, name):
    sim_args = ["--duration", "8", "--contact-z", "0.46", "--force-noise", "0.2",
                "--ft-port", "0", "--json", os.path.join(tmp, name + ".json")] + faults
    s, port, ft, log = start_sim_ports(sim_args, tmp, name)
    try:
        r = subprocess.run([ADMITTANCE, str(port), str(ft), "4", "10"], capture_output=True,
                           text=True, timeout=60)
    finally:
        s.wait(timeout=30)
    rep = json.load(open(os.path.join(tmp, name + ".json")))["ft"]
    return r, rep


def sensor(tmp):
    drops0 = udp_buffer_drops()
    r, rep = admittance(tmp, ["--ft-skip-every", "50", "--ft-reorder-every", "37"], "ft")
    drops = udp_buffer_drops() - drops0
    out = r.stdout
    check(r.returncode == 0, "admittance on the sensor: exit 0", out[-500:] + r.stderr[-300:])
    press = num(r"the sensor read ([-0-9.]+) N at the end", out, 1e9)
    check(abs(press - 10.0) < 2.0, "admittance: the sensor reads the 10 N press (%.2f N)" % press,
          out[:1500])
    lost = num(r"lost (\d+),", out, -1)
    late = num(r"late (\d+),", out, -1)
    records = num(r"sensor records (\d+)", out, 0)
    check(records > 1000, "the sensor streamed (%d records to the transport)" % records)
    check(rep["skipped"] > 10 and rep["reordered"] > 10,
          "the simulator skipped %d and reordered %d records" % (rep["skipped"],
                                                                rep["reordered"]))
    # a record the kernel dropped on a full buffer is lost too (a late one
    # dropped so is no longer late): the host's, counted apart
    check(rep["reordered"] - 2 - drops <= late <= rep["reordered"] + 2,
          "every reordered record was counted late (%d late, %d reordered, %d dropped by "
          "the kernel)" % (late, rep["reordered"], drops))
    check(abs((lost - late) - rep["skipped"]) <= 2 + 2 * drops,
          "lost - late = the records skipped (%d - %d vs %d; %d dropped by the kernel)" %
          (lost, late, rep["skipped"], drops))
    check(re.search(r"rdt transport moves nothing \(a sensor\)", out),
          "the sensor's stop at exit: nothing to stop", out[-600:])
    # a sensor that stalls 150 ms once a second: stale, the arm stopped
    r, rep = admittance(tmp, ["--ft-stall-ms", "150", "--ft-stall-every", "1.5"], "stall")
    out = r.stdout
    m = re.search(r"source 1: ft.*?caused\s+(\d+).*?source|source 1: ft.*?caused\s+(\d+)", out,
                  re.S)
    caused = int(next(g for g in m.groups() if g)) if m else 0
    stopped = re.search(r"source 0: arm.*?stopped\s+(\d+)", out, re.S)
    check(rep["stalls"] >= 1 and caused >= 1,
          "a stalled sensor is a fault named against it (%d stalls, caused %d)" %
          (rep["stalls"], caused), out[:600])
    check(stopped and int(stopped.group(1)) == 1, "and the policy stopped the arm", out[:900])


with tempfile.TemporaryDirectory() as tmp:
    for f in (lambda: bimanual(tmp), lambda: bimanual_fault(tmp, "all"),
              lambda: bimanual_fault(tmp, "one"), lambda: sensor(tmp)):
        try:
            f()
        except Exception as e:  # a crash of the harness is a failure, not a pass
            check(False, "the harness ran", repr(e))

print("1..%d" % len(results))
bad = 0
for i, (ok, what, diag) in enumerate(results, 1):
    print("%s %d - %s" % ("ok" if ok else "not ok", i, what))
    if not ok:
        bad += 1
        for line in str(diag).strip().splitlines()[:12]:
            print("# " + line)
sys.exit(1 if bad else 0)
