# SPDX-License-Identifier: MIT
"""rtloop.Receive against rtde-sim: the state as ur_rtde's receive interface
gives it, a reader that never stalls the C rx thread (every frame counted),
the statistics by their C names, and every bad argument raising."""
import errno
import re
import sys
import threading
import time
from pathlib import Path

import numpy as np
import pytest

import rtloop
from conftest import HOST

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests" / "common"))
import simrule  # noqa: E402  (rtde-sim's cycle numbering)

HZ = 500


def loop_stats_fields():
    """The loop's counters: the RTL_LOOP_COUNTERS table of rt/include/rtloop/loop.h."""
    text = (ROOT / "rt" / "include" / "rtloop" / "loop.h").read_text()
    body = re.search(r"#define RTL_LOOP_COUNTERS\(X\)(.*?)RTL_LOOP__TEST_COUNTERS", text,
                     re.S).group(1)
    return re.findall(r"\bX\((\w+),", body)


def test_the_state_as_ur_rtde_gives_it(sim):
    with rtloop.Receive(HOST, sim.port) as r:
        assert r.fields == rtloop.DEFAULT_FIELDS
        assert r.frequency == HZ and r.controller_version == "5.26.0"
        q = r.actual_q()
        assert isinstance(q, np.ndarray) and q.dtype == np.float64 and q.shape == (6,)
        q[0] = 99.0  # a copy: the next read is not changed by it
        assert r.get("actual_q")[0] != 99.0
        assert isinstance(r.timestamp(), float) and r.timestamp() >= simrule.START
        assert isinstance(r.robot_mode(), int) and isinstance(r.runtime_state(), int)
        assert r.actual_tcp_pose().shape == (6,) and r.actual_tcp_force().shape == (6,)
        state = r.state()
        assert list(state) == list(rtloop.DEFAULT_FIELDS)
        # Each getter is the newest state: a later call never goes back in time.
        t1 = r.timestamp()
        t2 = r.get("timestamp")
        assert t2 >= t1
        f = r.frame()
        assert set(f) == {"seq", "rx_ns", "ctrl_time", "ctrl_skipped"}
        # read() waits for a frame newer than the last one taken.
        s1 = r.read(timeout=1.0)
        seq1 = r.frame()["seq"]
        s2 = r.read(timeout=1.0)
        assert r.frame()["seq"] > seq1 and s2["timestamp"] > s1["timestamp"]


def test_a_reader_sleeping_50ms_never_stalls_the_rx_thread(sim):
    """The reader takes a state, sleeps 50 ms (25 periods), 40 times. The C
    rx thread receives every frame meanwhile. The identities asserted, all
    exact:
      - between the first and the last frame taken, every control cycle of
        the controller's clock is a frame the rx thread received (seq
        numbers every frame received) or one the controller skipped:
        cycles == seq_last - seq_first + skipped, and it skipped only what
        the simulator says it did not send (its overruns: 0 on a host that
        keeps up); the ring never filled (ring_full == 0);
      - the frames the reader did not take are the reader's skipped ones:
        worker_skipped == seq_last + 1 - reads (frames 0..seq_last were
        each taken or skipped), the frames after the last take are
        unstepped, so frames == steps + worker_skipped + unstepped +
        ring_full, with steps == the reads the binding made;
      - every data package the RTDE client decoded is a frame.
    """
    r = rtloop.Receive(HOST, sim.port, fields=("timestamp", "actual_q"))
    takes = []
    for _ in range(40):
        st = r.state()
        f = r.frame()
        assert st["timestamp"] == pytest.approx(f["ctrl_time"])
        takes.append(f)
        time.sleep(0.05)
    live = r.stats()
    r.close()
    s = r.stats()
    rep = sim.finish()

    first, last = takes[0], takes[-1]
    cycles = simrule.cycle(last["ctrl_time"], HZ) - simrule.cycle(first["ctrl_time"], HZ)
    received = last["seq"] - first["seq"]
    overruns = rep["stats"]["overruns"]
    assert s["ring_full"] == 0
    assert s["ctrl_skipped"] <= overruns, "the controller skipped only cycles it did not send"
    assert 0 <= cycles - received <= s["ctrl_skipped"]
    if overruns == 0:
        assert cycles == received, f"{cycles} control cycles, {received} frames received"
    # The reader skipped what it did not take, and nothing else vanished.
    assert s["steps"] == s["python"]["reads"] >= 40
    assert s["worker_skipped"] == last["seq"] + 1 - s["steps"]
    assert s["frames"] == s["steps"] + s["worker_skipped"] + s["unstepped"] + s["ring_full"]
    assert s["unstepped"] == s["frames"] - (last["seq"] + 1)
    assert s["worker_skipped"] >= 40 * 20, "a 50 ms sleep leaves about 25 frames each time"
    assert s["client"]["data"] == s["frames"] + s["stop_frames"]
    assert s["client"]["skipped"] == s["ctrl_skipped"]
    # Live, the counters were already moving on their own.
    assert live["frames"] > last["seq"]
    assert rep["stats"]["data_sent"] >= s["client"]["data"]


def test_stats_hold_every_loop_counter_by_its_c_name(sim):
    with rtloop.Receive(HOST, sim.port) as r:
        for _ in range(5):
            r.read(timeout=1.0)
        s = r.stats()
        h = r.histograms()
        text = r.report()
    names = loop_stats_fields()
    assert len(names) >= 25 and "worker_skipped" in names
    # Exactly the table: a counter added to it reaches Python with no edit here.
    assert set(s) - {"client", "transport", "python"} == set(names), set(s) ^ set(names)
    assert {"packages", "data", "skipped", "resets", "malformed", "wrong_recipe",
            "wrong_size", "unexpected", "text", "reconnects"} <= set(s["client"])
    assert {"packages", "keepalives", "safe_packages", "backlogged", "rx_bytes",
            "tx_bytes"} <= set(s["transport"])
    assert set(h) == {"rx_to_step", "step", "step_to_send", "interarrival", "wake"}
    for name, one in h.items():
        assert set(one) == {"count", "min", "p50", "p90", "p99", "max", "mean", "unit"}, name
        assert one["unit"] == "ns"
        assert one["min"] <= one["p50"] <= one["p90"] <= one["p99"] <= one["max"], name
    assert h["interarrival"]["count"] >= 4
    # A step ends at the next read: the last one's is not timed.
    assert h["step"]["count"] == s["steps"] - 1
    assert "frames" in text and "stop at exit" not in text
    # Closed: the final figures, copies the caller may change.
    final = r.stats()
    final["client"]["data"] = -1
    assert r.stats()["client"]["data"] >= 0
    assert r.histograms()["interarrival"]["count"] >= h["interarrival"]["count"]
    assert "stop at exit: no command was sent" in r.report()


def test_unknown_fields_name_the_field_and_the_valid_ones(sim):
    with pytest.raises(ValueError) as e:
        rtloop.Receive(HOST, sim.port, fields=("timestamp", "actual_qq"))
    msg = str(e.value)
    assert "'actual_qq'" in msg and "did you mean 'actual_q'" in msg
    assert "actual_TCP_pose" in msg and "output_int_register_0..47" in msg
    with pytest.raises(ValueError, match="'speed_slider_mask' is an input"):
        rtloop.Receive(HOST, sim.port, fields=("speed_slider_mask",))
    with rtloop.Receive(HOST, sim.port, fields=("timestamp", "actual_q")) as r:
        with pytest.raises(KeyError) as e:
            r.get("actual_TCP_pose")
        assert "'actual_TCP_pose'" in str(e.value) and "timestamp, actual_q" in str(e.value)
        with pytest.raises(KeyError, match="actual_qd"):
            r.actual_qd()
        with pytest.raises(TypeError):
            r.get(3)


@pytest.mark.parametrize("kwargs, exc, text", [
    ({"host": 127}, TypeError, "host must be a str"),
    ({"host": ""}, ValueError, "host"),
    ({"host": "a\0b"}, ValueError, "host"),
    ({"port": "30004"}, TypeError, "port must be an int"),
    ({"port": True}, TypeError, "port must be an int"),
    ({"port": 0}, ValueError, "1..65535"),
    ({"port": -1}, ValueError, "1..65535"),
    ({"port": 65536}, ValueError, "1..65535"),
    ({"port": 2**80}, ValueError, "1..65535"),
    ({"fields": "actual_q"}, TypeError, "not a string"),
    ({"fields": 5}, TypeError, "sequence"),
    ({"fields": ()}, ValueError, "empty"),
    ({"fields": ("timestamp", 7)}, TypeError, r"fields\[1\] must be a str"),
    ({"frequency": float("nan")}, ValueError, "frequency"),
    ({"frequency": 0.5}, ValueError, "frequency"),
    ({"frequency": "fast"}, TypeError, "frequency"),
    ({"timeout": -1}, ValueError, "timeout"),
    ({"timeout": float("inf")}, ValueError, "timeout"),
    ({"timeout": "1"}, TypeError, "timeout"),
    ({"bogus": 1}, TypeError, "bogus"),
])
def test_bad_arguments_raise(kwargs, exc, text):
    args = {"host": HOST, "port": 30004, **kwargs}
    with pytest.raises(exc, match=text):
        rtloop.Receive(args.pop("host"), args.pop("port"), **args)


def test_what_the_library_refuses_is_its_sentence(sim):
    with pytest.raises(rtloop.Error) as e:
        rtloop.Receive(HOST, sim.port, fields=("timestamp", "actual_q", "timestamp"))
    assert e.value.errno == errno.EEXIST and "timestamp" in str(e.value)
    # Faster than the controller: its maximum.
    with rtloop.Receive(HOST, sim.port, frequency=1e9) as r:
        assert r.frequency == HZ


def test_bad_read_arguments_raise(sim):
    with rtloop.Receive(HOST, sim.port) as r:
        for bad, exc in (("1", TypeError), (-0.5, ValueError), (float("nan"), ValueError),
                         (True, TypeError)):
            with pytest.raises(exc, match="timeout"):
                r.read(timeout=bad)
        with pytest.raises(TypeError):
            r.read(1, 2)
        assert r.read(timeout=0.5) is not None


def test_a_refused_connection_is_econnrefused_with_the_librarys_sentence(free_port):
    with pytest.raises(rtloop.Error) as e:
        rtloop.Receive(HOST, free_port, timeout=1.0)
    assert e.value.errno == errno.ECONNREFUSED
    assert "connection refused" in str(e.value) and f"{HOST}:{free_port}" in str(e.value)
    assert "nothing listens" in str(e.value)


def test_use_after_close_raises_and_close_twice_is_fine(sim):
    r = rtloop.Receive(HOST, sim.port)
    r.state()
    r.close()
    r.close()
    assert r.closed
    for call in (r.read, r.state, r.frame, r.actual_q, r.timestamp, lambda: r.get("actual_q"),
                 r.__enter__):
        with pytest.raises(ValueError, match="closed"):
            call()
    assert r.stats()["steps"] >= 1
    with pytest.raises(rtloop.Error) as e:
        r.__init__(HOST, sim.port)
    assert e.value.errno == errno.EALREADY
    # An object whose __init__ never ran is closed too.
    blank = rtloop.Receive.__new__(rtloop.Receive)
    with pytest.raises(ValueError, match="closed"):
        blank.state()
    with pytest.raises(ValueError, match="never opened"):
        blank.stats()
    blank.close()


def wait_until_busy(obj, thread):
    """Until the other thread is inside the loop (frame() refused), bounded."""
    deadline = time.monotonic() + 3
    while thread.is_alive() and time.monotonic() < deadline:
        try:
            obj.frame()
        except rtloop.Error as e:
            assert e.errno == errno.EBUSY
            return True
    return False


def test_reading_from_two_threads_at_once_raises_ebusy(sim):
    """At 1 Hz, a read right after a frame waits about a second for the
    next one: meanwhile a second thread's read, state() and get() are
    refused (EBUSY), and the first read still returns its state. Then a
    close() from the second thread ends a read that waits: it returns None."""
    r = rtloop.Receive(HOST, sim.port, frequency=1, timeout=5.0)
    out = {}

    def reader():
        out["state"] = r.read(timeout=3.0)

    r.read(timeout=3.0)  # a frame has just come
    t = threading.Thread(target=reader)
    t.start()
    assert wait_until_busy(r, t), "the reading thread never entered the loop"
    for call in (r.read, r.state, lambda: r.get("timestamp"), r.frame):
        with pytest.raises(rtloop.Error) as e:
            call()
        assert e.value.errno == errno.EBUSY and "one thread at a time" in str(e.value)
    assert t.is_alive(), "the first read was still waiting for its frame"
    t.join(5)
    assert not t.is_alive() and out["state"] is not None
    assert r.stats()["python"]["reads"] == 2

    t = threading.Thread(target=reader)
    t.start()
    assert wait_until_busy(r, t)
    r.close()
    t.join(5)
    assert not t.is_alive() and out["state"] is None
    assert r.closed
    r.close()


def test_the_end_of_the_stream_raises_the_transports_reason(sim):
    r = rtloop.Receive(HOST, sim.port)
    r.state()
    sim.finish()  # the controller goes away
    with pytest.raises(rtloop.Error) as e:
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline:
            r.read(timeout=1.0)
    assert e.value.errno != 0
    assert "the loop has ended" in str(e.value) and str(sim.port) in str(e.value)
    # Every call says so again, until close().
    with pytest.raises(rtloop.Error, match="the loop has ended"):
        r.state()
    r.close()
    assert r.closed
