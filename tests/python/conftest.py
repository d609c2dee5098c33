# SPDX-License-Identifier: MIT
"""Fixtures of the Python tests: the simulator each test talks to.

Until rtloop.Sim (the simulator in process) is there, the built rtde-sim
($RTLOOP_SIM) runs as a subprocess on a free port, one per test, and its
report is its JSON (--json), written when it is stopped (SIGTERM): the
figures the tests hold the loop's counters against.
"""
import json
import os
import re
import signal
import subprocess
import time

import pytest

HOST = "127.0.0.1"


def pytest_configure(config):
    config.addinivalue_line("markers", "long: the long-running test of its file (seconds, not milliseconds)")


def args(faults):
    """rtde-sim's options for a faults dict (rtloop.Sim's spelling):
    {"skip_every": 100} -> --skip-every 100."""
    out = []
    for key, value in faults.items():
        out += ["--" + key.replace("_", "-"), str(value)]
    return out


class SimProcess:
    """rtde-sim on a free port: .port, and finish() -> its JSON report."""

    def __init__(self, directory, faults):
        exe = os.environ.get("RTLOOP_SIM")
        if not exe:
            pytest.fail("RTLOOP_SIM is not set: run the tests through meson test")
        self.json = directory / "sim.json"
        self.log = directory / "sim.log"
        self.report = None
        with open(self.log, "w") as log:
            self.proc = subprocess.Popen(
                [exe, "--port", "0", "--no-mlock", "--json", str(self.json), *args(faults)],
                stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=log)
        self.port = self._wait_port()

    def _wait_port(self):
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            m = re.search(r"listening on [0-9.]+:([0-9]+)", self.log.read_text())
            if m:
                return int(m.group(1))
            if self.proc.poll() is not None:
                break
            time.sleep(0.02)
        self.kill()
        pytest.fail("rtde-sim did not start: " + self.log.read_text())

    def finish(self):
        """Stop it as SIGINT/SIGTERM do (every connection closed in order,
        the input it holds applied) and return its report."""
        if self.report is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.kill()
                pytest.fail("rtde-sim did not stop within 20 s of SIGTERM")
            assert self.proc.returncode == 0, self.log.read_text()
            self.report = json.loads(self.json.read_text())
        return self.report

    def kill(self):
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()


@pytest.fixture
def start_sim(tmp_path):
    """start_sim(**faults): a new rtde-sim with these faults
    (skip_every=100, skip_count=2, ...)."""
    sims = []

    def start(**faults):
        d = tmp_path / f"sim{len(sims)}"
        d.mkdir()
        sims.append(SimProcess(d, faults))
        return sims[-1]

    yield start
    for s in sims:
        s.kill()


@pytest.fixture
def sim(start_sim):
    """An e-Series rtde-sim at 500 Hz without faults."""
    return start_sim()


@pytest.fixture
def free_port():
    """A TCP port nothing listens on (bound, then released)."""
    import socket

    with socket.socket() as s:
        s.bind((HOST, 0))
        return s.getsockname()[1]
