# SPDX-License-Identifier: MIT
"""rtloop.Telemetry reading a running loop's telemetry (an rtloop.Motion
with telemetry=NAME over rtde-sim's UDP stream, in this process): a record
per step, holding what that step saw; the counters and histograms, final
once the loop has closed; several readers at once; a reader that starts
from now on; the errors that name what is wrong."""
import errno
import os
import threading
import time

import numpy as np
import pytest

import rtloop


def name_of(what):
    return f"pytest-{os.getpid()}-{what}"


@pytest.fixture
def udp_sim():
    with rtloop.Sim(udp=True) as sim:
        yield sim


def stream(m, n):
    """n steps of speedl, keeping the states Motion.read() returned."""
    seen = {}
    for _ in range(n):
        st = m.read(timeout=1.0)
        assert st is not None
        seen[st["seq"]] = st
        m.speedl([0.03, 0, 0, 0, 0, 0], acc=1.0)
    return seen


def test_a_record_per_step_holding_what_the_step_saw(udp_sim):
    name = name_of("records")
    with rtloop.Motion(udp_sim.host, udp_sim.port, telemetry=name) as m:
        t = rtloop.Telemetry(name)
        info = t.info()
        assert info["state"] == "running" and info["label"].startswith("rtloop.Motion, udp")
        assert info["period"] == pytest.approx(0.001)
        assert info["signals"]["actual_q"] == {"unit": "rad", "count": 6}
        seen = stream(m, 300)
        d = t.read()
    s = m.stats()
    rest = t.read()  # the records of the last steps, after the stop
    n = len(d["index"]) + len(rest["index"])
    assert n == s["steps"], "a record per step"
    assert t.info()["missed"] == 0
    frames = np.concatenate([d["frame"], rest["frame"]])
    assert np.all(np.diff(frames) > 0), "in order"
    assert np.all(np.diff(np.concatenate([d["index"], rest["index"]])) == 1)
    assert d["actual_q"].shape == (len(d["index"]), 6) and d["motion_mode"].shape == (len(d["index"]),)
    # the record of a step holds the state Motion.read() gave for that frame
    matched = 0
    for i, f in enumerate(d["frame"]):
        st = seen.get(int(f))
        if st is not None:
            assert np.array_equal(d["actual_q"][i], st["actual_q"])
            assert np.array_equal(d["setpoint_vel"][i], st["setpoint_vel"])
            matched += 1
    assert matched > 250
    assert d["cmd_vel"][-1][0] == pytest.approx(30.0), "the command in mm/s (Doosan's units)"
    t.close()


def test_counters_and_histograms_are_the_loops_final_ones_after_close(udp_sim):
    name = name_of("final")
    with rtloop.Motion(udp_sim.host, udp_sim.port, telemetry=name) as m:
        t = rtloop.Telemetry(name)
        stream(m, 200)
    s, h = m.stats(), m.histograms()
    assert t.info()["state"] == "ended"
    c = t.counters()
    for key in ("frames", "steps", "sends", "stop_frames", "stop_wait_ns", "safe_sends"):
        assert c["loop." + key] == s[key], key
    assert c["transport.commands"] == s["transport"]["commands"]
    th = t.histograms()
    for key in ("step", "interarrival", "rx_to_step"):
        assert th[key]["count"] == h[key]["count"], key
        assert th[key]["p99"] == h[key]["p99"], key
    lower, count = t.histogram("interarrival")
    assert count.sum() == h["interarrival"]["count"]
    assert np.all(np.diff(lower) > 0)
    with pytest.raises(KeyError, match="no histogram 'nope'"):
        t.histogram("nope")


def test_several_readers_and_a_reader_from_now_on(udp_sim):
    name = name_of("readers")
    with rtloop.Motion(udp_sim.host, udp_sim.port, telemetry=name) as m:
        a, b, late = rtloop.Telemetry(name), rtloop.Telemetry(name), rtloop.Telemetry(name)
        stream(m, 100)
        late.seek(None)
        first_b = b.read()
        stream(m, 100)
        ra, rb, rl = a.read(), b.read(), late.read()
        assert np.array_equal(np.concatenate([first_b["index"], rb["index"]]), ra["index"])
        assert rl["index"][0] > first_b["index"][-1], "only records published after the seek"
        assert len(a.read(max=0)["index"]) == 0
        few = rtloop.Telemetry(name)
        assert len(few.read(max=10)["index"]) == 10


def test_a_reader_waits_for_a_loop_that_starts_later(udp_sim):
    name = name_of("later")

    def start():
        time.sleep(0.3)
        with rtloop.Motion(udp_sim.host, udp_sim.port, telemetry=name) as m:
            stream(m, 50)
            time.sleep(0.5)

    th = threading.Thread(target=start)
    th.start()
    t = rtloop.Telemetry(name, timeout=5.0)
    assert t.info()["state"] == "running"
    th.join()


def test_errors_name_the_problem(udp_sim):
    with pytest.raises(rtloop.Error, match="no loop publishes 'nobody-here'") as e:
        rtloop.Telemetry("nobody-here")
    assert e.value.errno == errno.ENOENT
    with pytest.raises(rtloop.Error, match=r"\[A-Za-z0-9_.-\]") as e:
        rtloop.Motion(udp_sim.host, udp_sim.port, telemetry="a/b")
    assert e.value.errno == errno.EINVAL
    name = name_of("taken")
    with rtloop.Motion(udp_sim.host, udp_sim.port, telemetry=name):
        with pytest.raises(rtloop.Error, match="belongs to a running producer") as e:
            rtloop.Motion(udp_sim.host, udp_sim.port, telemetry=name)
        assert e.value.errno == errno.EEXIST
    with pytest.raises(ValueError, match="timeout must be"):
        rtloop.Telemetry(name, timeout=-1)
    t = rtloop.Telemetry.__new__(rtloop.Telemetry)
    with pytest.raises(ValueError, match="closed"):
        t.read()
