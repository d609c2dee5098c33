# SPDX-License-Identifier: MIT
"""Fixtures of the Python tests: the simulator each test talks to.

start_sim() gives rtloop.Sim, the simulator in this process (its own C
thread, on a free loopback port), one per test; its report() after the
stop is the figures the tests hold the loop's counters against, the same
keys as rtde-sim --json. SimProcess runs the built rtde-sim ($RTLOOP_SIM)
as a subprocess instead, for a test that needs the controller outside this
process (start_sim(process=True)).
"""
import json
import os
import re
import signal
import subprocess
import time

import pytest

import rtloop

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


# rtloop.Sim's keyword options; every other key is a fault.
SIM_OPTIONS = {"start_time", "echo_register", "duration", "contact_z", "contact_stiffness",
               "contact_damping", "force_noise", "watchdog_ms", "bind"}


class SimInProcess:
    """rtloop.Sim with SimProcess's face: .port, finish() -> the final report."""

    def __init__(self, settings):
        options = {k: v for k, v in settings.items() if k in SIM_OPTIONS}
        faults = {k: v for k, v in settings.items() if k not in SIM_OPTIONS}
        self.sim = rtloop.Sim(faults=faults or None, **options).start()
        self.port = self.sim.port
        self.report = None

    def finish(self):
        if self.report is None:
            self.sim.stop()
            self.report = self.sim.report()
        return self.report

    def kill(self):
        self.sim.stop()


@pytest.fixture
def start_sim(tmp_path):
    """start_sim(**settings): a new simulator with these faults and options
    (skip_every=100, skip_count=2, echo_register=47, ...); process=True for
    rtde-sim in a process of its own."""
    sims = []

    def start(process=False, **settings):
        if process:
            d = tmp_path / f"sim{len(sims)}"
            d.mkdir()
            sims.append(SimProcess(d, settings))
        else:
            sims.append(SimInProcess(settings))
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
