# SPDX-License-Identifier: MIT
"""rtloop.Rig: several arms (two rtloop.Sim in this process) and a
force/torque sensor (an RDT sensor of the test's, on loopback) in one rig:
every step's view of every source, with the fields, the wrench, the ages
and the frames the step did not see; the counters against each other; a
sensor that stops sending, under each policy; the errors that name what is
wrong."""
import errno
import socket
import struct
import threading
import time

import numpy as np
import pytest

import rtloop


class Sensor:
    """A Net F/T of the test's: answers a start request with records at
    `rate` Hz (Fz = -2 N), until paused or closed."""

    def __init__(self, rate=1000.0):
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.sock.bind(("127.0.0.1", 0))
        self.port = self.sock.getsockname()[1]
        self.rate = rate
        self.paused = threading.Event()
        self.done = threading.Event()
        self.sent = 0
        self.thread = threading.Thread(target=self.run, daemon=True)
        self.thread.start()

    def run(self):
        self.sock.settimeout(0.1)
        addr = None
        while addr is None and not self.done.is_set():
            try:
                data, addr = self.sock.recvfrom(64)
            except socket.timeout:
                continue
            assert struct.unpack(">HHI", data)[:2] == (0x1234, 2)
        k = 0
        nxt = time.monotonic()
        while not self.done.is_set():
            nxt += 1.0 / self.rate
            time.sleep(max(0.0, nxt - time.monotonic()))
            if self.paused.is_set():
                continue
            k += 1
            rec = struct.pack(">III6i", k, k * 7, 0, 0, 0, -2000000, 0, 0, 0)
            self.sock.sendto(rec, addr)
            self.sent = k

    def close(self):
        self.done.set()
        self.thread.join()
        self.sock.close()


@pytest.fixture
def sims():
    with rtloop.Sim() as a, rtloop.Sim(faults={"seed": 2}) as b:
        yield a, b


@pytest.fixture
def sensor():
    s = Sensor()
    yield s
    s.close()


def read_n(rig, n):
    last = None
    for _ in range(n):
        last = rig.read(timeout=2.0)
        assert last is not None
    return last


def test_every_source_is_seen_with_its_fields_and_age(sims, sensor):
    a, b = sims
    with rtloop.Rig([(a.host, a.port), (b.host, b.port)], sensors=[("127.0.0.1", sensor.port)],
                    sensor_rate=1000, fields=["timestamp", "actual_q", "actual_TCP_pose"]) as rig:
        assert rig.names == ("arm0", "arm1", "sensor0")
        view = read_n(rig, 50)
        arm0, arm1, ft = view
        assert [d["kind"] for d in view] == ["arm", "arm", "sensor"]
        for d in (arm0, arm1):
            assert d["live"] and not d["stale"] and not d["lost"] and not d["stopped"]
            assert isinstance(d["actual_q"], np.ndarray) and d["actual_q"].shape == (6,)
            assert 0 <= d["age"] < 0.5
        assert arm0["fresh"], "the clock source's frame is new at every step"
        assert np.allclose(ft["wrench"], [0, 0, -2.0, 0, 0, 0])
        assert list(ft["counts"]) == [0, 0, -2000000, 0, 0, 0]
        assert ft["status"] == 0 and ft["rdt_sequence"] >= 1
        stats = rig.stats()
        assert stats["steps"] >= 50
        src = stats["sources"]
        assert [s["name"] for s in src] == ["arm0", "arm1", "sensor0"]
        # the clock source: every step took one of its frames
        assert src[0]["taken"] <= src[0]["loop"]["frames"]
        assert src[0]["caused"] == src[1]["caused"] == src[2]["caused"] == 0
        assert "rig counters (3 sources)" in rig.report()
    assert rig.closed


def test_a_faster_sensor_is_sampled_and_its_other_frames_counted(sims):
    a, _ = sims
    s = Sensor(rate=2000)
    try:
        with rtloop.Rig([(a.host, a.port)], sensors=[("127.0.0.1", s.port)],
                        sensor_rate=2000) as rig:
            read_n(rig, 10)
            unseen = 0
            fresh = 0
            first = last = None
            for _ in range(200):
                view = rig.read(timeout=2.0)
                ft = view[1]
                if ft["fresh"]:
                    fresh += 1
                    if first is None:
                        first = ft["seq"]  # its unseen ones lie before it
                    else:
                        unseen += ft["unseen"]
                    last = ft["seq"]
            # 2 kHz against 500 Hz steps: frames go unseen; Python may miss
            # steps (it reads the newest), so seen + unseen may fall short of
            # the frames between the first and the last, never exceed them
            assert unseen > 0, "2 kHz against 500 Hz: frames go unseen"
            assert fresh + unseen <= last - first + 1
    finally:
        s.close()


@pytest.mark.parametrize("policy", ["all", "one"])
def test_a_silent_sensor_is_named_and_the_policy_applied(sims, sensor, policy):
    a, b = sims
    with rtloop.Rig([(a.host, a.port), (b.host, b.port)], sensors=[("127.0.0.1", sensor.port)],
                    sensor_rate=1000, policy=policy, stale=0.02) as rig:
        read_n(rig, 20)
        # silent for 60 ms: stale (20 ms), not yet lost (the transport
        # gives a sensor 100 of its periods, 100 ms)
        sensor.paused.set()
        time.sleep(0.06)
        view = read_n(rig, 1)
        sensor.paused.clear()
        assert view[2]["stale"] and not view[2]["live"]
        src = rig.stats()["sources"]
        assert src[2]["caused"] == 1 and src[2]["stale"] == 1
        if policy == "all":
            assert view[0]["stopped"] and view[1]["stopped"]
            assert src[0]["stopped"] == 1 and src[1]["stopped"] == 1
        else:
            assert not view[0]["stopped"] and not view[1]["stopped"]
            assert src[0]["stopped"] == 0


def test_bad_arguments_name_the_fix(sims):
    a, _ = sims
    with pytest.raises(ValueError, match="1 to 8 sources"):
        rtloop.Rig([])
    with pytest.raises(TypeError, match="host"):
        rtloop.Rig([42])
    with pytest.raises(ValueError, match="policy"):
        rtloop.Rig([(a.host, a.port)], policy="some")
    with pytest.raises(ValueError, match="period"):
        rtloop.Rig([(a.host, a.port)], clock=None)
    with pytest.raises(ValueError, match="clock"):
        rtloop.Rig([(a.host, a.port)], clock=3)


def test_a_host_where_nothing_listens_is_an_error():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]  # bound, never listening: refused
    with pytest.raises(rtloop.Error) as e:
        rtloop.Rig([("127.0.0.1", port)], timeout=0.5)
    assert e.value.errno in (errno.ECONNREFUSED, errno.ETIMEDOUT)


def test_a_closed_rig_refuses_reads(sims):
    a, _ = sims
    rig = rtloop.Rig([(a.host, a.port)])
    rig.close()
    rig.close()  # twice is fine
    with pytest.raises(ValueError, match="closed"):
        rig.read()
