# SPDX-License-Identifier: MIT
"""rtloop.Control against rtde-sim: commands through rtloop's register
layout, the C watchdog and the stop at every exit guarding a Python loop
that is late, raises or dies, nothing non-finite on the wire, every bad
argument raising, and the long one: a 500 Hz loop in Python for 10 s with
every frame and every command accounted for."""
import errno
import gc
import json
import math
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import numpy as np
import pytest

import rtloop
from conftest import HOST

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests" / "common"))
import simrule  # noqa: E402  (rtde-sim's cycle numbering and skip rule)

HZ = 500
REST = 1e-3  # rad/s: the transport's rest speed
ZERO6 = [0.0] * 6


def move(ctl, seconds, qd0=0.3, acc=3.0):
    """A Python loop: read, then speedj on joint 0, for this long."""
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        assert ctl.read(timeout=1.0) is not None
        ctl.speedj([qd0, 0, 0, 0, 0, 0], acc=acc)


def assert_at_rest(port):
    """A second client sees the arm at rest."""
    with rtloop.Receive(HOST, port, fields=("timestamp", "actual_qd")) as r:
        qd = r.actual_qd()
    assert np.max(np.abs(qd)) < REST, f"the arm moves: actual_qd = {qd}"


def assert_safe_controller(rep):
    """The simulator's side of every test: nothing non-finite arrived, no
    command was refused, its own watchdog was never needed (every stop was
    the client's), the arm is at rest at the end, as the transport judges
    it (every joint below 0.001 rad/s; after a speedl the simulator's joints
    reach exactly 0 only later)."""
    st, robot = rep["stats"], rep["robot"]
    assert st["nonfinite_in"] == 0 and st["commands_refused"] == 0
    assert robot["watchdog_trips"] == 0, "the controller's watchdog had to stop the arm"
    assert robot["max_speed"] < REST, robot


def test_commands_move_the_robot_and_stop_it(sim):
    with rtloop.Control(HOST, sim.port) as ctl:
        with pytest.raises(ValueError, match="read"):
            ctl.get("actual_q")  # no step yet
        q0 = ctl.read(timeout=1.0)["actual_q"]
        move(ctl, 0.4)
        q1 = ctl.actual_q()
        assert q1[0] - q0[0] > 0.05, "speedj moved joint 0"
        assert ctl.get("actual_qd")[0] > 0.1
        # stop(): decelerate to rest (bounded).
        deadline = time.monotonic() + 3
        while True:
            st = ctl.read(timeout=1.0)
            assert ctl.stop(decel=3.0) >= 0
            if np.max(np.abs(st["actual_qd"])) < REST:
                break
            assert time.monotonic() < deadline, "the arm did not come to rest"
        # servoj to a target near where it stands, then speedl.
        target = st["actual_q"] + np.array([0.02, 0, 0, 0, 0, 0])
        for _ in range(200):
            ctl.read(timeout=1.0)
            ctl.servoj(target, time=0.002, lookahead=0.1, gain=300)
        assert abs(ctl.actual_q()[0] - target[0]) < 0.005
        for _ in range(50):
            ctl.read(timeout=1.0)
            assert ctl.speedl([0, 0, 0.01, 0, 0, 0], acc=0.5) >= 0
        assert ctl.read(timeout=1.0) is not None
        before = ctl.stats()
        n = ctl.write()
        after = ctl.stats()
        assert n == 0 or after["transport"]["keepalives"] > before["transport"]["keepalives"], (
            "the registers did not change: nothing to send but the keep-alive")
        assert "actual_qd" in ctl.fields  # the stop at exit waits for it
    s = ctl.stats()
    assert s["stop_unconfirmed"] == 0 and s["rejected"] == 0
    rep = sim.finish()
    assert_safe_controller(rep)
    assert rep["stats"]["inputs_applied"] == (s["transport"]["packages"]
                                              + s["transport"]["safe_packages"])


@pytest.mark.long
def test_long_500hz_python_loop_for_10s_accounts_for_every_frame(start_sim):
    """THE LONG ONE (10 s). A Python external loop at the controller's
    500 Hz: read, speedj on a cosine, for 10 s, against a controller that
    skips 2 packages in every 100 cycles; the loop ends with the arm moving
    (0.3 rad/s), and leaving the with block stops it (the loop's stop at
    exit: the safe set, then the wait for rest). Every frame and every
    command is accounted for, exactly:
      (1) frames == steps + worker_skipped + unstepped + ring_full
          (each frame the rx thread received was taken by Python, skipped
          for a newer one, left when the loop ended, or dropped by a full
          ring);
      (2) steps == the reads the binding made == the test's reads;
      (3) sends + suppressed + would_block + rejected + stale + after_stop
          == writes == steps (one command per step, each with one outcome);
      (4) client data packages == frames + stop_frames (every package the
          RTDE client decoded became a frame, during the run or during the
          stop at exit);
      (5) the simulator's view, between the first and the last frame taken:
          every control cycle is a frame the rx thread received (the seq
          difference) or a package the simulator did not send (its skip
          rule, plus its own overruns: 0 on a host that keeps up);
      (6) every command package the loop sent was applied by the
          controller, nothing non-finite arrived;
      (7) the arm is at rest after the loop ends, stopped by the client:
          the stop at exit confirmed it, a second client sees it, the
          controller's watchdog never tripped.
    """
    every, count = 100, 2
    sim = start_sim(skip_every=every, skip_count=count)
    reads = writes = 0
    first = last = None
    with rtloop.Control(HOST, sim.port, fields=("timestamp", "actual_q", "actual_qd")) as ctl:
        start = time.monotonic()
        end = start + 10.0
        while True:
            now = time.monotonic()
            if now >= end:
                break
            st = ctl.read(timeout=1.0)
            assert st is not None, "no frame for 1 s"
            reads += 1
            last = ctl.frame()
            first = first or last
            ctl.speedj([0.3 * math.cos(math.pi * (now - start)), 0, 0, 0, 0, 0], acc=3.0)
            writes += 1
        moving = abs(st["actual_qd"][0])
    s = ctl.stats()
    assert_at_rest(sim.port)
    rep = sim.finish()
    c0, c1 = simrule.cycle(first["ctrl_time"], HZ), simrule.cycle(last["ctrl_time"], HZ)
    rule = simrule.skips_between(c0 + 1, c1, every, count)
    received = last["seq"] - first["seq"]
    unsent = (c1 - c0) - received - rule
    overruns = rep["stats"]["overruns"]
    print("\n500 Hz, 10 s:", json.dumps(s))
    print("window:", json.dumps({"cycles": c1 - c0, "frames_received": received,
                                 "skipped_by_rule": rule, "unexplained": unsent,
                                 "speed_at_the_end": moving}))
    print("simulator:", json.dumps({"stats": rep["stats"], "injected": rep["injected"],
                                    "robot": rep["robot"]}))

    # (1), (2), (3): the loop's identities.
    assert s["frames"] == s["steps"] + s["worker_skipped"] + s["unstepped"] + s["ring_full"]
    assert s["steps"] == s["python"]["reads"] == reads
    assert s["python"]["writes"] == writes == reads and s["python"]["lone_writes"] == 0
    assert s["python"]["write_errors"] == 0
    assert (s["sends"] + s["suppressed"] + s["would_block"] + s["rejected"] + s["stale"]
            + s["after_stop"]) == writes
    assert s["rejected"] == 0
    # Frames 0..last were each taken, skipped for a newer one, or dropped
    # (a full ring: only a Python stall of 64 periods does that).
    if s["ring_full"] == 0:
        assert s["worker_skipped"] == last["seq"] + 1 - s["steps"]
    assert s["worker_skipped"] + s["ring_full"] >= last["seq"] + 1 - s["steps"]
    # A step late by the watchdog time is stale, once per episode at most.
    assert s["stale"] <= s["watchdog"]
    # (4) the client's view.
    assert s["client"]["data"] == s["frames"] + s["stop_frames"]
    assert s["client"]["skipped"] >= s["ctrl_skipped"]
    # (5) the simulator's view.
    assert c1 - c0 >= 10 * HZ * 0.9 and rule >= 90
    assert 0 <= unsent <= overruns, (
        f"{c1 - c0} cycles = {received} frames + {rule} skipped by rule + {unsent} unexplained")
    assert s["ctrl_skipped"] >= rule
    assert rep["injected"]["skipped_packages"] >= s["client"]["skipped"] - overruns
    # (6) the controller applied every command package sent.
    assert rep["stats"]["inputs_applied"] == (s["transport"]["packages"]
                                              + s["transport"]["safe_packages"])
    # (7) at rest after the loop, stopped by the client's stop at exit.
    assert moving > 0.2, "the arm moved when the loop ended"
    assert s["stop_unconfirmed"] == 0 and s["stop_wait_ns"] > 0 and s["stop_frames"] > 0
    assert rep["robot"]["stops"] >= 1
    assert_safe_controller(rep)


def test_a_late_python_step_gets_the_watchdogs_safe_set(sim):
    """A step that takes 50 ms (25 periods; the watchdog is 3): the loop's
    C watchdog sends the safe set meanwhile (mode STOP), the late command
    is discarded as stale, and the next step's command goes out in full."""
    with rtloop.Control(HOST, sim.port, watchdog_periods=3) as ctl:
        move(ctl, 0.3)
        s0 = ctl.stats()
        ctl.read(timeout=1.0)
        time.sleep(0.05)  # the late step: the stimulus, not a measurement
        assert ctl.speedj([0.3, 0, 0, 0, 0, 0], acc=3.0) == 0, "the late command went out"
        s1 = ctl.stats()
        sent = [ctl.speedj([0.3, 0, 0, 0, 0, 0], acc=3.0)
                for _ in range(20) if ctl.read(timeout=1.0) is not None]
        assert any(n > 0 for n in sent), "an on-time step after the safe set is sent in full"
        ctl.stop()
    assert s1["watchdog"] >= s0["watchdog"] + 1
    assert s1["stale"] == s0["stale"] + 1
    assert s1["safe_sends"] > s0["safe_sends"]
    assert s1["transport"]["safe_packages"] > s0["transport"]["safe_packages"]
    rep = sim.finish()
    assert rep["robot"]["stops"] >= 1, "the safe set stopped the moving arm"
    assert_safe_controller(rep)


def test_an_exception_in_with_stops_the_arm_and_propagates(sim):
    with pytest.raises(ZeroDivisionError):
        with rtloop.Control(HOST, sim.port) as ctl:
            move(ctl, 0.3)
            assert np.max(np.abs(ctl.actual_qd())) > 0.1
            1 / 0
    assert ctl.closed
    s = ctl.stats()
    assert s["stop_unconfirmed"] == 0 and s["stop_wait_ns"] > 0 and s["stop_frames"] > 0
    assert "at rest" in ctl.report()
    assert_at_rest(sim.port)
    ctl.close()
    ctl.close()
    assert_safe_controller(sim.finish())


def test_the_dealloc_of_an_unclosed_control_stops_the_arm(sim):
    ctl = rtloop.Control(HOST, sim.port)
    move(ctl, 0.3)
    del ctl
    gc.collect()
    assert_at_rest(sim.port)
    assert_safe_controller(sim.finish())


def test_interpreter_exit_without_close_stops_the_arm(sim, tmp_path):
    """A program that moves the arm and exits without close(): rtloop's
    atexit hook stops the loop (the stop at exit, confirmed at rest), not
    the controller's watchdog. The program's own atexit function, registered
    before rtloop's, runs after it and prints the final stats."""
    script = tmp_path / "leave.py"
    script.write_text(textwrap.dedent(f"""
        import atexit, json, sys, time

        def after():
            print(json.dumps({{"closed": ctl.closed, **ctl.stats()}}))

        atexit.register(after)
        import rtloop

        ctl = rtloop.Control("{HOST}", {sim.port})
        end = time.monotonic() + 0.3
        while time.monotonic() < end:
            ctl.read(timeout=1.0)
            ctl.speedj([0.3, 0, 0, 0, 0, 0], acc=3.0)
        assert abs(ctl.actual_qd()[0]) > 0.1
    """))
    out = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                         timeout=60)
    assert out.returncode == 0, out.stderr
    final = json.loads(out.stdout.strip().splitlines()[-1])
    assert final["closed"] and final["stop_unconfirmed"] == 0 and final["stop_wait_ns"] > 0
    assert_at_rest(sim.port)
    rep = sim.finish()
    assert rep["robot"]["stops"] >= 1
    assert_safe_controller(rep)


@pytest.mark.parametrize("call, exc, text", [
    (lambda c: c.speedj([0.1, 0, 0, 0, 0, float("nan")]), ValueError, r"qd\[5\] is nan"),
    (lambda c: c.speedj([float("inf")] + [0] * 5), ValueError, r"qd\[0\] is inf"),
    (lambda c: c.speedj(ZERO6, acc=float("nan")), ValueError, "acc is nan"),
    (lambda c: c.speedj(ZERO6, acc=-1), ValueError, "acc must be in"),
    (lambda c: c.speedj([0] * 5), ValueError, "6 values"),
    (lambda c: c.speedj(np.zeros(7)), ValueError, "6 values"),
    (lambda c: c.speedj("abcdef"), TypeError, "sequence"),
    (lambda c: c.speedj(3.0), TypeError, "sequence"),
    (lambda c: c.speedj([0, 0, 0, 0, 0, "x"]), TypeError, r"qd\[5\] must be a number"),
    (lambda c: c.speedj([0, 0, 0, 0, 0, None]), TypeError, r"qd\[5\] must be a number"),
    (lambda c: c.speedj(), TypeError, "qd"),
    (lambda c: c.speedl([0, 0, float("-inf"), 0, 0, 0]), ValueError, r"xd\[2\] is -inf"),
    (lambda c: c.servoj([0] * 6, time=float("nan")), ValueError, "time is nan"),
    (lambda c: c.servoj([0] * 6, time=0), ValueError, "time must be in"),
    (lambda c: c.servoj([0] * 6, lookahead=0.5), ValueError,
     r"lookahead must be in \[0\.03, 0\.2\]"),  # the range, not "%g"
    (lambda c: c.servoj([0] * 6, gain=50), ValueError, "gain must be in"),
    (lambda c: c.servoj([0] * 6, gain=float("inf")), ValueError, "gain is inf"),
    (lambda c: c.stop(decel=float("nan")), ValueError, "decel is nan"),
    (lambda c: c.stop(decel="fast"), TypeError, "decel must be a number"),
])
def test_bad_command_arguments_raise_before_the_wire(sim, call, exc, text):
    with rtloop.Control(HOST, sim.port) as ctl:
        ctl.read(timeout=1.0)
        before = ctl.stats()
        with pytest.raises(exc, match=text):
            call(ctl)
        after = ctl.stats()
        assert after["python"]["writes"] == before["python"]["writes"], "nothing was sent"
    assert after["rejected"] == 0
    rep = sim.finish()
    assert rep["stats"]["nonfinite_in"] == 0 and rep["stats"]["commands_refused"] == 0


@pytest.mark.parametrize("kwargs, exc, text", [
    ({"watchdog_periods": 0}, ValueError, "1..128"),
    ({"watchdog_periods": 129}, ValueError, "1..128"),
    ({"watchdog_periods": "3"}, TypeError, "watchdog_periods must be an int"),
    ({"watchdog_periods": True}, TypeError, "watchdog_periods must be an int"),
    ({"stop_timeout": -1}, ValueError, "stop_timeout"),
    ({"stop_timeout": float("nan")}, ValueError, "stop_timeout"),
    ({"port": 70000}, ValueError, "1..65535"),
    ({"port": None}, TypeError, "port must be an int"),
    ({"fields": ("actual_q", "nonsense")}, ValueError, "unknown output field 'nonsense'"),
    ({"frequency": float("inf")}, ValueError, "frequency"),
])
def test_bad_control_arguments_raise(kwargs, exc, text):
    args = {"host": HOST, "port": 30004, **kwargs}
    with pytest.raises(exc, match=text):
        rtloop.Control(args.pop("host"), args.pop("port"), **args)


def test_a_refused_connection_is_econnrefused(free_port):
    with pytest.raises(rtloop.Error) as e:
        rtloop.Control(HOST, free_port, timeout=1.0)
    assert e.value.errno == errno.ECONNREFUSED and "connection refused" in str(e.value)


def test_a_control_opened_as_a_receive_refuses_commands(sim):
    ctl = rtloop.Control.__new__(rtloop.Control)
    rtloop.Receive.__init__(ctl, HOST, sim.port)
    ctl.read(timeout=1.0)
    with pytest.raises(TypeError, match="opened as a Receive"):
        ctl.speedj(ZERO6)
    ctl.close()
    with pytest.raises(TypeError):
        rtloop.Control.__init__(rtloop.Receive.__new__(rtloop.Receive), HOST, sim.port)


def test_use_after_close_raises(sim):
    ctl = rtloop.Control(HOST, sim.port)
    ctl.read(timeout=1.0)
    ctl.close()
    for call in (ctl.read, ctl.write, ctl.stop, lambda: ctl.speedj(ZERO6),
                 lambda: ctl.servoj(ZERO6), lambda: ctl.speedl(ZERO6), ctl.actual_q):
        with pytest.raises(ValueError, match="closed"):
            call()
    assert isinstance(ctl, rtloop.Receive)
    assert ctl.stats()["steps"] == 1


def test_commands_while_another_thread_reads_raise_ebusy(sim):
    """At 1 Hz a read waits about a second: meanwhile the commands, write()
    and read() of another thread are refused (EBUSY), nothing is sent."""
    ctl = rtloop.Control(HOST, sim.port, frequency=1, timeout=5.0)
    ctl.read(timeout=3.0)  # a frame has just come
    t = threading.Thread(target=lambda: ctl.read(timeout=3.0))
    t.start()
    deadline = time.monotonic() + 3
    busy = False
    while not busy and t.is_alive() and time.monotonic() < deadline:
        try:
            ctl.frame()
        except rtloop.Error as e:
            busy = e.errno == errno.EBUSY
    assert busy, "the reading thread never entered the loop"
    for call in (lambda: ctl.speedj(ZERO6), lambda: ctl.servoj(ZERO6), ctl.stop, ctl.write,
                 ctl.read, ctl.state):
        with pytest.raises(rtloop.Error) as e:
            call()
        assert e.value.errno == errno.EBUSY
    assert t.is_alive()
    t.join(5)
    assert ctl.stats()["python"]["writes"] == 0
    ctl.close()
    assert_safe_controller(sim.finish())


def test_echo_writes_each_steps_timestamp_for_the_round_trip(start_sim):
    """Control(echo=True) answers every step with its frame's timestamp in
    input_double_register_47: the simulator matches each echo with the
    package it sent (none unmatched) and counts one round trip per step."""
    sim = start_sim(echo_register=47)
    steps = 0
    with rtloop.Control(HOST, sim.port, echo=True) as ctl:
        while steps < 200:
            if ctl.read(timeout=2.0) is None:
                continue
            ctl.speedj([0.0] * 6)
            steps += 1
    echo = sim.finish()["echo"]
    assert echo["register"] == 47
    assert echo["unmatched"] == 0, echo
    # Each step echoes a new timestamp; the stop at exit may add one more.
    assert steps <= echo["round_trips"] <= steps + 1, echo
