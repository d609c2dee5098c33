# SPDX-License-Identifier: MIT
"""rtloop.Control's commands beside the stream against rtde-sim: moves
(waited for, or handles), paths, stop_move, kinematics, payload and TCP,
force mode, teach mode and move_until_contact; each refusal raising
rtloop.Error with the controller's reason, and every bad argument raising
before anything is written."""
import errno
import math
import time

import numpy as np
import pytest

import rtloop
from conftest import HOST

Q0 = [0.0, -math.pi / 2, math.pi / 2, -math.pi / 2, -math.pi / 2, 0.0]
FIELDS = ("timestamp", "actual_q", "actual_qd", "actual_TCP_pose", "actual_TCP_force",
          "payload", "payload_cog", "tcp_offset", "safety_mode")
STATUS = "output_int_register_27"
FORCE_BIT, TEACH_BIT = 1 << 2, 1 << 3


def control(sim, **kw):
    # 20 ms for a step: a test shares two CPUs with the others
    return rtloop.Control(HOST, sim.port, fields=FIELDS, watchdog_periods=10, **kw)


def settle(ctl, n=5):
    """Step n frames with nothing new to send; the newest state."""
    st = None
    for _ in range(n):
        st = ctl.read(timeout=1.0)
        assert st is not None
        ctl.write()
    return st


def test_move_j_waits_until_the_arm_is_at_the_target(sim):
    target = list(Q0)
    target[0] += 0.4
    target[3] -= 0.2
    with control(sim) as ctl:
        assert ctl.move_j(target, 1.0, 2.0) is None
        st = settle(ctl, 2)
        np.testing.assert_allclose(st["actual_q"], target, atol=1e-9)
        assert np.max(np.abs(st["actual_qd"])) == 0
    assert sim.finish()["stats"]["nonfinite_in"] == 0


def test_move_l_and_the_kinematics_agree_with_the_model(sim):
    with control(sim) as ctl:
        pose = settle(ctl)["actual_TCP_pose"]
        np.testing.assert_allclose(ctl.forward_kinematics(Q0), pose, atol=1e-9)
        goal = list(pose)
        goal[2] -= 0.05
        ctl.move_l(goal, speed=0.1, acceleration=0.5)
        st = settle(ctl, 2)
        np.testing.assert_allclose(st["actual_TCP_pose"][:3], goal[:3], atol=1e-4)
        q = ctl.inverse_kinematics(goal, q_near=list(st["actual_q"]))
        np.testing.assert_allclose(q, st["actual_q"], atol=1e-4)
        with pytest.raises(rtloop.Error) as e:
            ctl.inverse_kinematics([3.0, 0, 0, 0, 0, 0])  # 3 m out: beyond any reach
        assert e.value.reason in ("no solution", "unreachable")
        assert e.value.errno == errno.EDOM


def test_a_refused_move_raises_with_the_controllers_reason(sim):
    far = list(Q0)
    far[2] = 4.0  # the elbow past its limit
    with control(sim) as ctl:
        with pytest.raises(rtloop.Error, match="joint limit") as e:
            ctl.move_j(far)
        assert e.value.reason == "joint limit" and e.value.errno == errno.EDOM
        np.testing.assert_allclose(settle(ctl)["actual_q"], Q0, atol=1e-12)


def test_a_handle_follows_a_move_and_a_newer_move_interrupts_it(sim):
    a = list(Q0)
    a[0] -= 1.0
    with control(sim) as ctl:
        h = ctl.move_j(a, speed=0.5, acceleration=1.0, wait=False)
        assert isinstance(h, rtloop.Request)
        deadline = time.monotonic() + 2
        while h.outcome != "running":
            assert not h.done() or h.outcome == "running"
            assert time.monotonic() < deadline, h
        assert h.reason is None
        h2 = ctl.move_j(Q0, wait=False)
        assert h2.wait(timeout=10.0) is True
        assert h.outcome == "interrupted" and h.done()
        with pytest.raises(rtloop.Error) as e:
            h.wait()
        assert e.value.errno == errno.ECANCELED and e.value.reason == "interrupted"
        np.testing.assert_allclose(settle(ctl, 2)["actual_q"], Q0, atol=1e-9)


def test_stop_move_brings_a_move_to_rest_short_of_its_target(sim):
    a = list(Q0)
    a[0] += 1.5
    with control(sim) as ctl:
        h = ctl.move_j(a, speed=0.5, acceleration=1.0, wait=False)
        for _ in range(200):  # 0.4 s of the move
            h.done()
        ctl.stop_move(deceleration=3.0)
        st = settle(ctl, 3)
        assert np.max(np.abs(st["actual_qd"])) == 0
        assert Q0[0] < st["actual_q"][0] < a[0] - 0.5
        assert h.done() and h.outcome in ("done", "interrupted")


def test_a_path_with_blends_ends_at_its_last_point(sim):
    p1, p2 = list(Q0), list(Q0)
    p1[0] += 0.3
    p2[0] += 0.6
    p2[1] += 0.2
    with control(sim) as ctl:
        ctl.move_j([p1 + [1.0, 2.0, 0.05], p2 + [1.0, 2.0, 0.0]])
        np.testing.assert_allclose(settle(ctl, 2)["actual_q"], p2, atol=1e-9)


def test_payload_and_tcp_read_back_from_the_controller(sim):
    with control(sim) as ctl:
        ctl.set_payload(2.5, [0.0, 0.01, 0.08])
        ctl.set_tcp([0, 0, 0.12, 0, 0, 0])
        st = settle(ctl)
        assert st["payload"] == pytest.approx(2.5)
        np.testing.assert_allclose(st["payload_cog"], [0.0, 0.01, 0.08])
        np.testing.assert_allclose(st["tcp_offset"], [0, 0, 0.12, 0, 0, 0])
        ctl.zero_ft_sensor()
        assert np.max(np.abs(settle(ctl)["actual_TCP_force"][:3])) < 1e-6


@pytest.mark.parametrize("call, exc, text", [
    (lambda c: c.move_j([0] * 5), ValueError, "q must have 6 values"),
    (lambda c: c.move_j(Q0, speed=float("nan")), ValueError, "speed"),
    (lambda c: c.move_j(Q0, speed=10), ValueError, r"speed must be in \(0, 3\.15\]"),
    (lambda c: c.move_l([0, 0, 0, 0, float("inf"), 0]), ValueError, r"pose\[4\]"),
    (lambda c: c.move_j([Q0 + [1, 1]]), ValueError, r"path\[0\] must have 9"),
    (lambda c: c.set_payload(-1), ValueError, "mass"),
    (lambda c: c.set_payload(1, [0, 0]), ValueError, "cog must have 3"),
    (lambda c: c.set_tcp("pose"), TypeError, "pose must be a sequence"),
    (lambda c: c.inverse_kinematics(Q0, q_near=[0] * 7), ValueError, "q_near"),
    (lambda c: c.force_mode([0] * 6, [0, 0, 2, 0, 0, 0], [0] * 6, 2, [0.1] * 6),
     ValueError, r"selection_vector\[2\]"),
    (lambda c: c.force_mode([0] * 6, [0, 0, 1, 0, 0, 0], [0] * 6, 4, [0.1] * 6),
     ValueError, "type"),
    (lambda c: c.force_mode([0] * 6, [0, 0, 1, 0, 0, 0], [0] * 6, 2, [0.1] * 5 + [0]),
     ValueError, r"limits\[5\]"),
    (lambda c: c.force_mode([0] * 6, [0] * 6, [0] * 6, 2, [0.1] * 6, damping=2),
     ValueError, "damping"),
    (lambda c: c.move_until_contact([0] * 6), ValueError, "linear part"),
    (lambda c: c.move_until_contact([0, 0, -0.01, 0, 0, 0], retract=2), ValueError,
     "retract"),
])
def test_bad_request_arguments_raise_before_anything_is_sent(sim, call, exc, text):
    with control(sim) as ctl:
        settle(ctl, 2)
        before = ctl.stats()["transport"]["packages"]
        with pytest.raises(exc, match=text):
            call(ctl)
        assert ctl.stats()["transport"]["packages"] == before


def status(st):
    return int(st[STATUS])


def test_force_mode_presses_with_the_wrench_and_ends(start_sim):
    sim = start_sim(contact_z=0.0)
    with rtloop.Control(HOST, sim.port, fields=FIELDS + (STATUS,), watchdog_periods=10) as ctl:
        pose = settle(ctl)["actual_TCP_pose"]
        above = list(pose)
        above[2] = 0.01
        ctl.move_l(above, 0.1, 0.5)
        frame = [0, 0, 0, 0, 0, 0]
        ctl.force_mode(frame, [0, 0, 1, 0, 0, 0], [0, 0, -10, 0, 0, 0], 2,
                       [0.1, 0.1, 0.05, 0.1, 0.1, 0.1])
        st = settle(ctl, 1000)  # 2 s at 500 Hz
        assert status(st) & FORCE_BIT
        assert st["actual_TCP_force"][2] == pytest.approx(-10, abs=1.0)
        ctl.end_force_mode()
        assert not status(settle(ctl)) & FORCE_BIT
        ctl.force_mode(frame, [0, 0, 1, 0, 0, 0], [0, 0, -10, 0, 0, 0], 2, [0.1] * 6)
        assert status(settle(ctl)) & FORCE_BIT
    # ... and the stop at exit ends it
    with rtloop.Receive(HOST, sim.port, fields=("timestamp", STATUS)) as r:
        assert not int(r.read(timeout=1.0)[STATUS]) & FORCE_BIT


def test_teach_mode_follows_a_push_and_the_stop_at_exit_ends_it(start_sim):
    sim = start_sim(push_z=10.0, push_after=0.2, push_for=0.5)
    with rtloop.Control(HOST, sim.port, fields=FIELDS + (STATUS,), watchdog_periods=10) as ctl:
        z0 = settle(ctl)["actual_TCP_pose"][2]
        ctl.teach_mode()
        st = settle(ctl, 75)  # 0.15 s: before the push
        assert status(st) & TEACH_BIT
        assert st["actual_TCP_pose"][2] == pytest.approx(z0, abs=1e-9)
        st = settle(ctl, 750)  # through the push and after it
        assert st["actual_TCP_pose"][2] - z0 > 0.02
        assert np.max(np.abs(st["actual_qd"])) == 0
    assert ctl.stats()["stop_unconfirmed"] == 0
    # the stop at exit ended teach mode: a second client sees the bit clear
    with rtloop.Receive(HOST, sim.port, fields=("timestamp", STATUS)) as r:
        assert not int(r.read(timeout=1.0)[STATUS]) & TEACH_BIT
    rep = sim.finish()
    assert rep["stats"]["nonfinite_in"] == 0


def test_move_until_contact_stops_at_the_surface_and_retracts(start_sim):
    sim = start_sim(contact_z=0.3)
    with rtloop.Control(HOST, sim.port, fields=FIELDS, watchdog_periods=10) as ctl:
        z0 = settle(ctl)["actual_TCP_pose"][2]
        assert z0 > 0.3
        ctl.move_until_contact([0, 0, -0.05, 0, 0, 0], acceleration=0.5, retract=0.01)
        st = settle(ctl, 2)
        assert st["actual_TCP_pose"][2] == pytest.approx(0.31, abs=3e-3)
        assert np.max(np.abs(st["actual_qd"])) == 0


def test_the_experiment_example_runs_every_phase(start_sim):
    """apps/examples/experiment.py, shortened, against the simulator."""
    import argparse
    import importlib.util
    from pathlib import Path

    path = Path(__file__).resolve().parents[2] / "apps" / "examples" / "experiment.py"
    spec = importlib.util.spec_from_file_location("experiment", path)
    ex = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(ex)
    sim = start_sim(contact_z=0.46, push_x=5.0, push_after=0.5, push_for=0.5)
    args = argparse.Namespace(force=10.0, press=1.0, slide=0.02, approach=0.05,
                              retract=0.0, teach=1.5, tolerance=1.5)
    with rtloop.Control(HOST, sim.port, fields=ex.FIELDS + (ex.STATUS,),
                        watchdog_periods=ex.WATCHDOG_PERIODS) as ctl:
        phases = ex.experiment(ctl, args)
    assert [p["phase"] for p in phases] == ["start", "contact", "press", "retract", "teach"]
    assert all(p["outcome"] == "ok" for p in phases), phases
    press, teach = phases[2], phases[4]
    assert press["force_err_max"] < 1.5
    assert press["pose"][2] == pytest.approx(0.46 - 10 / 5000, abs=1e-3)
    assert teach["moved_mm"] == pytest.approx(25.0, abs=2.0)  # 5 N / 100 N s/m for 0.5 s
    assert ctl.stats()["stop_unconfirmed"] == 0


def test_a_protective_stop_fails_the_waited_move_and_the_stopped_program_is_named(start_sim):
    """The stop freezes the program's answer: the move cannot hang on it."""
    sim = start_sim(protective_stop_after=0.3)
    far = list(Q0)
    far[0] += 1.5
    with control(sim) as ctl:
        with pytest.raises(rtloop.Error) as e:
            ctl.move_j(far, speed=0.5, acceleration=1.0)
        assert e.value.reason == "protective stop" and e.value.errno == errno.EPERM
        with pytest.raises(rtloop.Error) as e:
            ctl.move_j(Q0)
        assert e.value.reason in ("protective stop", "program stopped")
