# SPDX-License-Identifier: MIT
"""rtloop.Motion against rtde-sim in this process: the motion API (Doosan's
speedl_rt family) over rtloop's UDP stream, RTDE and, where the library
holds the DRFL table, DRFL. Each command reaches the arm through the C
step; a Python that goes quiet has its stream stopped by the command
time-out or the loss count; every exit (close, an exception, the object
dropped, the interpreter's exit, a lost controller) stops the arm; nothing
non-finite or out of range is queued; and the counters account for every
frame and every command."""
import errno
import gc
import math
import socket
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import numpy as np
import pytest

import rtloop

ROOT = Path(__file__).resolve().parents[2]
REST = 1e-3  # rad/s: what the transports call at rest


def stream(m, seconds, send):
    """A Python loop at the controller's rate: read, then send(state)."""
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        st = m.read(timeout=1.0)
        assert st is not None, "no state within 1 s"
        send(st)


def accounts(s):
    """The identities every run keeps (stats() after close())."""
    py, mo = s["python"], s["motion"]
    # every frame received is stepped, skipped, left or dropped
    assert s["frames"] == s["steps"] + s["worker_skipped"] + s["unstepped"] + s["ring_full"], s
    # every step ran the motion, or found it not yet made, or a bad state
    assert s["steps"] == py["stepped"] + py["not_ready"] + py["nonfinite"], (s["steps"], py)
    assert mo["steps"] == py["stepped"], (mo, py)
    # every command Python queued reached the step, or was still queued
    assert py["commands"] + py["settings"] == py["applied"] + py["unapplied"], py
    if py["unapplied"] == 0:
        # ... and the motion API took each (its settings are not commands)
        assert py["commands"] == mo["commands"] + mo["rejected"], (py, mo)
    assert mo["rejected"] == 0, "a command the step refused passed the binding's checks"
    # every step's command had one outcome: sent, unchanged, would block,
    # refused by the check, late or after the stop
    assert s["steps"] == s["sends"] + s["suppressed"] + s["would_block"] + s["rejected"] \
        + s["stale"] + s["after_stop"], s
    assert s["rejected"] == 0 and s["watchdog"] == 0, s


def safe_end(rep):
    """The simulator's side: at rest, its watchdog never needed, nothing
    non-finite arrived."""
    assert rep["robot"]["at_rest"] or rep["robot"]["max_speed"] < REST, rep["robot"]
    assert rep["robot"]["watchdog_trips"] == 0, "the controller's watchdog had to stop the arm"
    assert rep["stats"]["nonfinite_in"] == 0


@pytest.fixture
def udp_sim():
    with rtloop.Sim(udp=True) as sim:
        yield sim


@pytest.fixture
def rtde_sim():
    with rtloop.Sim() as sim:
        yield sim


# ---- the commands reach the arm -------------------------------------------------------------


def test_speedl_over_udp_moves_the_tcp_at_the_commanded_velocity(udp_sim):
    with rtloop.Motion(udp_sim.host, udp_sim.port) as m:
        assert m.transport == "udp" and m.period == pytest.approx(0.001)
        st0 = m.read(timeout=2.0)
        stream(m, 0.6, lambda st: m.speedl([0.05, 0, 0, 0, 0, 0], acc=1.0))
        st = m.state()
        assert st["mode"] == "speed-cartesian"
        assert st["actual_tcp_speed"][0] == pytest.approx(0.05, abs=1e-3)
        # on the controller's clock: 0.05 m/s after a 0.05 s ramp at 1 m/s^2
        # (1.25 mm short), the state a period behind the setpoint
        dx = st["actual_tcp_pose"][0] - st0["actual_tcp_pose"][0]
        assert dx == pytest.approx(0.05 * (st["time"] - st0["time"]) - 0.00125, abs=0.0005)
        m.stop(dec=1.0)
        time.sleep(0.2)
        st = m.state()
        assert st["mode"] == "idle" and abs(st["actual_tcp_speed"][0]) < 1e-4
        assert [e["type"] for e in m.events()] == ["stopped"]
    s = m.stats()
    accounts(s)
    # a speedl after every read but the first, and the stop
    assert s["python"]["commands"] == s["python"]["reads"]
    assert s["stop_unconfirmed"] == 0
    safe_end(udp_sim.report())


def test_servoj_over_udp_reaches_its_target_in_its_time(udp_sim):
    with rtloop.Motion(udp_sim.host, udp_sim.port) as m:
        q0 = m.read(timeout=2.0)["actual_q"]
        target = q0 + np.array([0.1, 0, 0, 0, 0, -0.05])
        m.servoj(target, time=0.3)
        # the states of the move, on the controller's clock, from the step
        # that took the command
        seen = []
        while not seen or seen[-1][0] - seen[0][0] < 0.5:
            st = m.read(timeout=1.0)
            if st["mode"] == "servo-joint" or seen:
                seen.append((st["time"], st["setpoint_pose"][0] - q0[0],
                             st["actual_q"][0] - q0[0]))
        half = min(seen, key=lambda p: abs(p[0] - seen[0][0] - 0.15))
        assert half[1] == pytest.approx(0.05, abs=0.002), "the setpoint halfway along its quintic"
        assert 0 < half[1] - half[2] < 0.02, "the arm follows the setpoint, a little behind"
        assert all(b[2] >= a[2] - 1e-9 for a, b in zip(seen, seen[1:])), "never back"
        st = m.state()
        assert np.allclose(st["actual_q"], target, atol=1e-4), st["actual_q"] - target
        assert np.max(np.abs(st["actual_qd"])) < REST
    accounts(m.stats())
    safe_end(udp_sim.report())


def test_speedj_and_servoj_over_rtde(rtde_sim):
    with rtloop.Motion(rtde_sim.host, rtde_sim.port, transport="rtde") as m:
        assert m.transport == "rtde" and m.period == pytest.approx(0.002)
        st = m.read(timeout=2.0)
        assert st["robot_mode"] == 7 and st["safety_mode"] == 1  # running, normal
        stream(m, 0.5, lambda st: m.speedj([0.2, 0, 0, 0, 0, 0], acc=2.0))
        assert m.state()["actual_qd"][0] == pytest.approx(0.2, abs=1e-3)
        q = m.state()["actual_q"] + np.array([0, 0, 0, 0, 0, 0.1])
        m.servoj(q, time=0.4)
        time.sleep(0.8)
        st = m.state()
        assert st["mode"] == "servo-joint"
        assert np.allclose(st["actual_q"], q, atol=2e-3), st["actual_q"] - q
        with pytest.raises(ValueError, match="raw\\(\\) is the UDP and DRFL state"):
            m.raw()
    s = m.stats()
    accounts(s)
    assert s["stop_unconfirmed"] == 0
    safe_end(rtde_sim.report())


def test_raw_is_the_udp_state_in_doosans_units(udp_sim):
    with rtloop.Motion(udp_sim.host, udp_sim.port) as m:
        st = m.read(timeout=2.0)
        raw = m.raw()
        assert len(raw["actual_joint_position"]) == 6 and len(raw["mass_matrix"]) == 36
        # the state in SI, the raw state in degrees: the same joints
        assert np.allclose(np.radians(raw["actual_joint_position"]), m.state()["actual_q"],
                           atol=1e-5)
        assert raw["time_stamp"] >= st["time"]
        assert m.get("actual_q").shape == (6,)
        with pytest.raises(KeyError, match="no 'actual_joint_position' in the state"):
            m.get("actual_joint_position")


# ---- a Python that goes quiet -----------------------------------------------------------------


def test_a_silent_python_is_stopped_by_the_command_timeout(udp_sim):
    with rtloop.Motion(udp_sim.host, udp_sim.port, command_timeout=0.05) as m:
        m.read(timeout=2.0)
        stream(m, 0.3, lambda st: m.speedl([0.04, 0, 0, 0, 0, 0], acc=1.0))
        m.events()
        time.sleep(0.3)  # Python hangs: no command
        st = m.state()
        assert st["mode"] == "idle" and np.max(np.abs(st["actual_qd"])) < REST
        types = [e["type"] for e in m.events()]
        assert types[:1] == ["timeout"] and "stopped" in types, types
    s = m.stats()
    assert s["motion"]["events"]["timeout"] == 1
    accounts(s)
    safe_end(udp_sim.report())


def test_loss_count_ends_a_stream_that_misses_periods(udp_sim):
    # commands every 10 ms while the loss count allows 5 periods (5 ms)
    with rtloop.Motion(udp_sim.host, udp_sim.port, loss_count=5, command_timeout=1.0) as m:
        m.read(timeout=2.0)
        for _ in range(20):
            m.speedl([0.02, 0, 0, 0, 0, 0], acc=1.0)
            time.sleep(0.01)
        time.sleep(0.1)
        assert m.state()["mode"] == "idle"
        assert "loss" in [e["type"] for e in m.events()]
    assert m.stats()["motion"]["events"]["loss"] >= 1


def test_limits_clamp_the_motion_and_say_so(udp_sim):
    with rtloop.Motion(udp_sim.host, udp_sim.port) as m:
        m.read(timeout=2.0)
        m.set_velx(0.01)
        stream(m, 0.3, lambda st: m.speedl([0.05, 0, 0, 0, 0, 0], acc=1.0))
        assert m.state()["actual_tcp_speed"][0] == pytest.approx(0.01, abs=5e-4)
        limit = [e for e in m.events() if e["type"] == "limit"]
        assert limit and limit[0]["limit"] == "velocity" and limit[0]["axis"] == 0
        assert limit[0]["value"] == pytest.approx(0.05) and limit[0]["max"] == pytest.approx(0.01)
    s = m.stats()
    assert s["motion"]["limit_clamps"] > 0 and s["python"]["settings"] == 1
    accounts(s)


# ---- every exit stops the arm -----------------------------------------------------------------


def moving(sim, transport="udp"):
    m = rtloop.Motion(sim.host, sim.port, transport=transport)
    m.read(timeout=2.0)
    stream(m, 0.3, lambda st: m.speedj([0.3, 0, 0, 0, 0, 0], acc=3.0))
    assert m.state()["actual_qd"][0] > 0.25
    return m


@pytest.mark.parametrize("transport", ["udp", "rtde"])
def test_close_while_moving_stops_the_arm(transport):
    with rtloop.Sim(udp=transport == "udp") as sim:
        m = moving(sim, transport)
        m.close()
        m.close()  # again: nothing
        assert m.closed
        s = m.stats()
        assert s["stop_unconfirmed"] == 0 and s["safe_sends"] >= 2
        accounts(s)
        rep = sim.report()
    safe_end(rep)


def test_an_exception_in_the_block_stops_the_arm_and_propagates(udp_sim):
    with pytest.raises(ZeroDivisionError):
        with moving(udp_sim) as m:
            1 / 0
    assert m.closed and m.stats()["stop_unconfirmed"] == 0
    safe_end(udp_sim.report())


def test_a_dropped_object_stops_the_arm(udp_sim):
    m = moving(udp_sim)
    del m
    gc.collect()
    time.sleep(0.05)
    safe_end(udp_sim.report())


def test_the_interpreters_exit_stops_the_arm(udp_sim):
    code = textwrap.dedent(f"""
        import rtloop, time
        m = rtloop.Motion("127.0.0.1", {udp_sim.port})
        m.read(timeout=2.0)
        end = time.monotonic() + 0.3
        while time.monotonic() < end:
            m.speedj([0.3, 0, 0, 0, 0, 0], acc=3.0)
            m.read(timeout=1.0)
        print(m.state()["actual_qd"][0])
        # no close(): the interpreter ends with the stream running
    """)
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    assert float(r.stdout) > 0.25
    safe_end(udp_sim.report())


def test_a_lost_controller_ends_the_loop_with_the_reason():
    sim = rtloop.Sim(udp=True).start()
    m = rtloop.Motion(sim.host, sim.port, timeout=0.5)
    m.read(timeout=2.0)
    sim.stop()
    with pytest.raises(rtloop.Error) as e:
        while m.read(timeout=3.0) is not None:
            pass
    assert e.value.errno in (errno.ECONNRESET, errno.ETIMEDOUT)
    assert "the loop has ended" in str(e.value)
    with pytest.raises(rtloop.Error, match="the loop has ended"):
        m.speedl([0.01, 0, 0, 0, 0, 0])
    m.close()
    with pytest.raises(ValueError, match="closed"):
        m.speedl([0.01, 0, 0, 0, 0, 0])


# ---- hostile peers and bad arguments -----------------------------------------------------------


def test_a_peer_that_never_answers_fails_the_open_in_its_time():
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as quiet:
        quiet.bind(("127.0.0.1", 0))
        t0 = time.monotonic()
        with pytest.raises(rtloop.Error) as e:
            rtloop.Motion("127.0.0.1", quiet.getsockname()[1], timeout=0.3)
        assert time.monotonic() - t0 < 5.0
        assert e.value.errno == errno.ETIMEDOUT, e.value


def test_nothing_non_finite_or_out_of_range_is_queued(udp_sim):
    bad = [
        (lambda m: m.speedl([0, 0, math.nan, 0, 0, 0]), ValueError, r"vel\[2\] is nan"),
        (lambda m: m.speedl([0, 0, 0, 0, 0, math.inf]), ValueError, r"vel\[5\] is inf"),
        (lambda m: m.speedl([0, 0, 0]), ValueError, "must have 6 values"),
        (lambda m: m.speedl("fast"), TypeError, "sequence of 6 numbers"),
        (lambda m: m.speedj([0] * 6, acc=0), ValueError, "acc must be > 0"),
        (lambda m: m.speedj([0] * 6, acc=[1, 1, 1, 1, 1, -1]), ValueError, "axis 5"),
        (lambda m: m.speedj([0] * 6, time=-1), ValueError, "time must be in"),
        (lambda m: m.speedj([0] * 6, time=1e9), ValueError, r"time must be in \[0, 3600\]"),
        (lambda m: m.servoj([0] * 6, vel=[math.nan] * 6), ValueError, r"vel\[0\] is nan"),
        (lambda m: m.stop(dec=-1), ValueError, "dec must be in"),
        (lambda m: m.set_velx(0), ValueError, "trans must be > 0"),
        (lambda m: m.set_velj([1, 1, 1, 1, 1, math.nan]), ValueError, r"limits\[5\]"),
        (lambda m: m.set_accj([1, 1]), ValueError, "6 numbers"),
    ]
    with rtloop.Motion(udp_sim.host, udp_sim.port) as m:
        m.read(timeout=2.0)
        for call, exc, msg in bad:
            with pytest.raises(exc, match=msg):
                call(m)
        s = m.stats()
        assert s["python"]["commands"] == 0 and s["python"]["settings"] == 0
        m.set_velx(math.inf)  # no limit: allowed
    safe_end(udp_sim.report())


@pytest.mark.parametrize("kwargs, exc, msg", [
    ({"transport": "can"}, ValueError, "transport must be 'udp'"),
    ({"watchdog_periods": 0}, ValueError, "watchdog_periods must be 1..128"),
    ({"loss_count": 0}, ValueError, "loss_count must be an int in 1..100000"),
    ({"port": 70000}, ValueError, "port"),
    ({"timeout": math.nan}, ValueError, "timeout"),
    ({"command_timeout": 0}, ValueError, "command_timeout"),
])
def test_bad_arguments_are_refused_before_connecting(kwargs, exc, msg):
    with pytest.raises(exc, match=msg):
        rtloop.Motion("127.0.0.1", **kwargs)


@pytest.mark.skipif("drfl" in rtloop.TRANSPORTS, reason="this build holds the DRFL table")
def test_drfl_without_the_library_names_the_build():
    with pytest.raises(rtloop.Error, match="built without Doosan's DRFL") as e:
        rtloop.Motion("127.0.0.1", transport="drfl")
    assert e.value.errno == errno.ENOTSUP


@pytest.mark.skipif("drfl" not in rtloop.TRANSPORTS,
                    reason="no DRFL table in this build (-Ddrfl_standin=true or the vendor's)")
def test_speedl_over_drfl(udp_sim):
    with rtloop.Motion(udp_sim.host, udp_sim.port, transport="drfl") as m:
        assert m.transport == "drfl"
        m.read(timeout=3.0)
        stream(m, 0.5, lambda st: m.speedl([0.03, 0, 0, 0, 0, 0], acc=1.0))
        assert m.state()["actual_tcp_speed"][0] == pytest.approx(0.03, abs=1e-3)
        assert len(m.raw()["actual_joint_position"]) == 6
    s = m.stats()
    assert s["stop_unconfirmed"] == 0 and s["transport"]["commands"] > 0
    accounts(s)
    safe_end(udp_sim.report())


# ---- threads ------------------------------------------------------------------------------------


def test_one_thread_reads_while_another_commands(udp_sim):
    with rtloop.Motion(udp_sim.host, udp_sim.port) as m:
        m.read(timeout=2.0)
        got, errors = [], []

        def reader():
            try:
                for _ in range(200):
                    got.append(m.read(timeout=1.0))
            except Exception as e:  # noqa: BLE001 (reported below)
                errors.append(e)

        t = threading.Thread(target=reader)
        t.start()
        while t.is_alive():
            m.speedl([0.02, 0, 0, 0, 0, 0], acc=1.0)
            time.sleep(0.002)
        t.join()
        assert not errors and all(st is not None for st in got)
        assert m.state()["actual_tcp_speed"][0] == pytest.approx(0.02, abs=1e-3)


def test_a_second_reader_is_refused_while_one_waits(udp_sim):
    with rtloop.Motion(udp_sim.host, udp_sim.port) as m:
        m.read(timeout=2.0)

        def reading():  # inside read() nearly all the time, the GIL let go
            end = time.monotonic() + 0.3
            while time.monotonic() < end:
                m.read(timeout=1.0)

        t = threading.Thread(target=reading)
        t.start()
        refused = 0
        while t.is_alive():
            try:
                m.read(timeout=0.0)
            except rtloop.Error as e:
                assert e.errno == errno.EBUSY and "read from one thread at a time" in str(e)
                refused += 1
        t.join()
        assert refused > 0, "a second reader got in beside the first"
