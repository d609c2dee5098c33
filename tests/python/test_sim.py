# SPDX-License-Identifier: MIT
"""rtloop.Sim: rtde-sim in-process. A raw RTDE client (the protocol of
docs/rtde-protocol.md, written out here so the test does not depend on the
bindings' own client) talks to it; the faults are checked by what that
client sees and by what the simulator's report counts. Every wait has a
deadline; no assertion depends on how fast the host is."""
import errno
import json
import math
import os
import socket
import struct
import subprocess
import sys
import threading
import time

import pytest

import rtloop

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "common"))
import simrule  # noqa: E402  (rtde-sim's cycle numbering and skip rule)

SIM = os.environ.get("RTLOOP_SIM")
DEADLINE = 10.0  # s, for anything that waits

V, VERSION, TEXT, DATA, OUTPUTS, INPUTS, START = 86, 118, 77, 85, 79, 73, 83


class Client:
    """Just enough RTDE (protocol v2) to set up, start and read packages."""

    def __init__(self, host, port):
        self.s = socket.create_connection((host, port), timeout=DEADLINE)
        self.buf = b""
        self.texts = 0

    def close(self):
        self.s.close()

    def send(self, ptype, payload=b""):
        self.s.sendall(struct.pack(">HB", 3 + len(payload), ptype) + payload)

    def recv(self):
        """The next package as (type, payload); b"" at EOF."""
        while True:
            if len(self.buf) >= 3:
                size, ptype = struct.unpack(">HB", self.buf[:3])
                if len(self.buf) >= size:
                    payload, self.buf = self.buf[3:size], self.buf[size:]
                    return ptype, payload
            chunk = self.s.recv(65536)
            if not chunk:
                return None, b""
            self.buf += chunk

    def expect(self, ptype):
        """The next package of type ptype (text messages in between are counted)."""
        while True:
            t, p = self.recv()
            assert t is not None, "the simulator closed the connection"
            if t == TEXT and ptype != TEXT:
                self.texts += 1
                continue
            assert t == ptype, (t, ptype)
            return p

    def protocol(self, version=2):
        self.send(V, struct.pack(">H", version))
        return self.expect(V)[0] == 1

    def controller_version(self):
        self.send(VERSION)
        return struct.unpack(">IIII", self.expect(VERSION))

    def setup_outputs(self, names, hz):
        self.send(OUTPUTS, struct.pack(">d", hz) + ",".join(names).encode())
        p = self.expect(OUTPUTS)
        return p[0], p[1:].decode().split(",")

    def setup_inputs(self, names):
        self.send(INPUTS, ",".join(names).encode())
        p = self.expect(INPUTS)
        return p[0], p[1:].decode().split(",")

    def start(self):
        self.send(START)
        assert self.expect(START)[0] == 1

    def timestamps(self, n):
        """n data packages of a recipe that is (timestamp,)."""
        return [struct.unpack(">Bd", self.expect(DATA))[1] for _ in range(n)]


def assert_consecutive(ts, sim):
    """Timestamps one period apart, but for cycles the host stalled the
    simulator past its catch-up limit (skipped and counted as overruns)."""
    steps = [round((b - a) / sim.period, 6) for a, b in zip(ts, ts[1:])]
    assert all(s >= 1 and s == int(s) for s in steps), steps
    gaps = sum(int(s) - 1 for s in steps)
    assert gaps <= sim.report()["stats"]["overruns"], (gaps, steps)


def client(sim, names=("timestamp",), hz=None):
    c = Client(sim.host, sim.port)
    assert c.protocol(2)
    rid, types = c.setup_outputs(list(names), hz or 1.0 / sim.period)
    assert rid == 1, types
    c.start()
    return c


# ---- running it ------------------------------------------------------------------------


def test_starts_on_an_ephemeral_loopback_port_and_streams_in_steps_of_the_period():
    with rtloop.Sim() as sim:
        assert sim.host == "127.0.0.1" and 0 < sim.port < 65536
        assert sim.period == pytest.approx(0.002) and sim.profile == "eseries"
        assert sim.running
        c = client(sim)
        ts = c.timestamps(50)
        c.close()
    assert not sim.running
    assert_consecutive(ts, sim)


@pytest.mark.parametrize("profile,version,period", [
    ("cb3", (3, 15, 8, 0), 0.008),
    ("eseries", (5, 26, 0, 0), 0.002),
    ("polyscope-x", (10, 13, 0, 0), 0.002),
])
def test_the_profile_sets_the_version_and_the_rate(profile, version, period):
    with rtloop.Sim(profile=profile) as sim:
        assert sim.period == pytest.approx(period)
        c = Client(sim.host, sim.port)
        assert c.controller_version() == version
        c.close()
        r = sim.report()
    assert r["profile"] == profile and r["frequency_hz"] == round(1 / period)


def test_two_simulators_run_side_by_side_on_their_own_ports():
    with rtloop.Sim() as a, rtloop.Sim(profile="cb3") as b:
        assert a.port != b.port
        ca, cb = client(a), client(b)
        assert len(ca.timestamps(5)) == len(cb.timestamps(5)) == 5
        ca.close()
        cb.close()


def test_the_duration_option_ends_it_and_wait_sees_it():
    with rtloop.Sim(duration=0.2) as sim:
        assert sim.wait(DEADLINE) is True
        assert not sim.running
        r = sim.report()
    assert r["seconds"] >= 0.2 and r["stats"]["cycles"] >= 1


def test_wait_with_a_timeout_returns_false_while_it_runs_and_true_after_stop():
    with rtloop.Sim() as sim:
        assert sim.wait(0.05) is False
        t = threading.Timer(0.1, sim.stop)
        t.start()
        assert sim.wait(DEADLINE) is True
        t.join()
    assert not sim.running


def test_the_simulator_runs_while_python_holds_the_gil():
    """Its thread never takes the GIL: a Python loop that does not let any
    other Python thread run does not stop its cycles."""
    with rtloop.Sim() as sim:
        before = sim.report()["stats"]["cycles"]
        old = sys.getswitchinterval()
        sys.setswitchinterval(100.0)
        try:
            t0 = time.monotonic()
            while time.monotonic() - t0 < 0.3:
                pass
        finally:
            sys.setswitchinterval(old)
        after = sim.report()["stats"]["cycles"]
    # 0.3 s at 500 Hz is 150 cycles; cycles a stalled host delays still run.
    assert after - before >= 100, (before, after)


def test_start_and_stop_without_with():
    sim = rtloop.Sim()
    assert sim.start() is sim
    c = client(sim)
    c.timestamps(3)
    c.close()
    sim.stop()
    assert not sim.running
    with pytest.raises(ConnectionRefusedError):
        socket.create_connection((sim.host, sim.port), timeout=DEADLINE)


def test_a_simulator_dropped_while_running_is_stopped_and_its_port_closed():
    sim = rtloop.Sim().start()
    port = sim.port
    del sim
    with pytest.raises(ConnectionRefusedError):
        socket.create_connection(("127.0.0.1", port), timeout=DEADLINE)


def test_a_port_in_use_is_an_rtloop_error_with_eaddrinuse():
    with rtloop.Sim() as a:
        b = rtloop.Sim(port=a.port)
        with pytest.raises(rtloop.Error) as e:
            b.start()
        assert e.value.errno == errno.EADDRINUSE and str(a.port) in str(e.value)
        assert not b.running


# ---- the report --------------------------------------------------------------------------


def key_tree(d):
    return {k: key_tree(v) if isinstance(v, dict) else type(v).__name__ for k, v in d.items()}


@pytest.mark.skipif(not SIM, reason="RTLOOP_SIM (the built rtde-sim) is not set")
def test_the_report_has_the_keys_of_rtde_sim_json(tmp_path):
    out = tmp_path / "sim.json"
    subprocess.run([SIM, "--port", "0", "--duration", "0.1", "--quiet", "--no-mlock",
                    "--json", str(out)], check=True, timeout=DEADLINE, capture_output=True)
    cli = json.loads(out.read_text())
    with rtloop.Sim() as sim:
        live = sim.report()
    final = sim.report()
    # Integers where the program has integers, floats where it has floats
    # (a count of 0 and a float of 0.0 alike), every key in the same place.
    assert key_tree(live) == key_tree(cli)
    assert key_tree(final) == key_tree(cli)
    assert final["program"] == "rtde-sim" and final["port"] == sim.port


@pytest.mark.skipif(not SIM, reason="RTLOOP_SIM (the built rtde-sim) is not set")
def test_the_udp_report_has_the_keys_of_rtde_sim_udp_json(tmp_path):
    out = tmp_path / "udp.json"
    subprocess.run([SIM, "--udp", "--udp-port", "0", "--duration", "0.1", "--quiet",
                    "--no-mlock", "--json", str(out)], check=True, timeout=DEADLINE,
                   capture_output=True)
    cli = json.loads(out.read_text())
    with rtloop.Sim(udp=True, faults={"skip_every": 10, "skip_count": 2}) as sim:
        assert sim.udp and sim.period == pytest.approx(0.001)
        live = sim.report()
    final = sim.report()
    assert key_tree(live) == key_tree(cli) == key_tree(final)
    assert final["mode"] == "udp" and final["port"] == sim.port
    assert final["skip_every"] == 10 and final["skip_count"] == 2


def test_the_report_is_live_while_running_and_final_after_stop():
    with rtloop.Sim() as sim:
        c = client(sim)
        c.timestamps(20)
        live = sim.report()
        assert live["stats"]["connections"] == 1 and live["stats"]["data_sent"] >= 20
        c.close()
    final = sim.report()
    assert final["stats"]["cycles"] >= live["stats"]["cycles"]
    assert final["stats"]["data_sent"] >= live["stats"]["data_sent"]
    assert final == sim.report(), "after the end, the report no longer changes"
    assert final["memory_locked"] is False and final["scheduling"].startswith("SCHED_")


# ---- faults --------------------------------------------------------------------------------


@pytest.mark.parametrize("faults", [
    {"skip_every": 50, "skip_count": 2},
    {"skip-every": 25, "skip-count": 1},
])
def test_skips_are_the_simulators_rule_and_the_report_counts_them(faults):
    n, k = [faults.get(a, faults.get(a.replace("_", "-"))) for a in ("skip_every", "skip_count")]
    with rtloop.Sim(faults=faults) as sim:
        c = client(sim)
        ts = c.timestamps(300)
        c.close()
    r = sim.report()
    hz = round(1 / sim.period)
    cycles = [simrule.cycle(t, hz) for t in ts]
    gaps = sum(b - a - 1 for a, b in zip(cycles, cycles[1:]))
    expected = simrule.skips_between(cycles[0] + 1, cycles[-1] - 1, n, k)
    # Cycles the host stalled past the catch-up limit are skipped too, and
    # counted as overruns: none on a quiet host, and never unaccounted.
    assert expected <= gaps <= expected + r["stats"]["overruns"], (gaps, expected, r["stats"])
    assert expected > 0
    assert r["faults"]["skip_every"] == n and r["faults"]["skip_count"] == k
    # The simulator counts every skip while the client was started: those
    # between its packages, and at most a group before the first and after
    # the last.
    skipped = r["injected"]["skipped_packages"]
    assert expected <= skipped <= expected + 2 * k, (skipped, expected)


def test_protocol_v1_only_refuses_version_2():
    with rtloop.Sim(faults={"max_protocol": 1}) as sim:
        c = Client(sim.host, sim.port)
        assert c.protocol(2) is False
        assert c.protocol(1) is True
        c.close()


def test_fieldbus_makes_its_registers_in_use():
    with rtloop.Sim(faults={"fieldbus": True}) as sim:
        c = Client(sim.host, sim.port)
        assert c.protocol(2)
        rid, types = c.setup_inputs(["input_int_register_0"])
        assert rid == 0 and types == ["IN_USE"]
        rid, types = c.setup_inputs(["input_int_register_24"])
        assert rid == 1 and types == ["INT32"]
        c.close()


def test_an_older_controller_version_answers_not_found_for_newer_fields():
    with rtloop.Sim(faults={"controller_version": "5.10.0"}) as sim:
        c = Client(sim.host, sim.port)
        assert c.controller_version() == (5, 10, 0, 0)
        assert c.protocol(2)
        rid, types = c.setup_outputs(["timestamp", "control_step"], 500)
        assert rid == 0 and types == ["DOUBLE", "NOT_FOUND"]
        c.close()


def test_an_idle_connection_is_closed_by_the_handshake_timeout():
    with rtloop.Sim(faults={"handshake_timeout": 0.2}) as sim:
        c = Client(sim.host, sim.port)
        while True:  # the ERROR text, then EOF
            t, _ = c.recv()
            if t is None:
                break
        c.close()
        r = sim.report()
    assert r["stats"]["idle_closed"] == 1


def test_text_every_interleaves_text_messages_with_the_data():
    with rtloop.Sim(faults={"text_every": 10}) as sim:
        c = client(sim)
        c.timestamps(55)
        c.close()
    assert c.texts >= 5
    assert sim.report()["injected"]["texts"] >= 5


def test_reset_after_resets_the_connection():
    with rtloop.Sim(faults={"reset_after": 5}) as sim:
        c = client(sim)
        assert len(c.timestamps(5)) == 5
        with pytest.raises(ConnectionResetError):
            while c.recv()[0] is not None:
                pass
        c.close()
        deadline = time.monotonic() + DEADLINE
        while sim.report()["injected"]["resets"] < 1 and time.monotonic() < deadline:
            time.sleep(0.01)
        assert sim.report()["injected"]["resets"] == 1


def test_fragmented_writes_still_carry_every_package():
    with rtloop.Sim(faults={"fragment": True, "fragment_max": 3, "seed": 7}) as sim:
        c = client(sim)
        ts = c.timestamps(30)
        c.close()
    assert_consecutive(ts, sim)
    r = sim.report()
    assert r["injected"]["fragments"] > 30 and r["faults"]["seed"] == 7


def test_jitter_stall_and_burst_are_configured_and_counted():
    faults = {"jitter_us": 200, "stall_ms": 20, "stall_every": 0.1, "burst": 4,
              "burst_every": 0.1}
    with rtloop.Sim(faults=faults) as sim:
        c = client(sim)
        ts = c.timestamps(150)
        c.close()
    r = sim.report()
    assert r["faults"]["jitter_us"] == 200 and r["faults"]["stall_ms"] == 20
    assert r["injected"]["jittered_cycles"] > 0 and r["injected"]["stalls"] >= 1
    assert r["injected"]["bursts"] >= 1
    # Held, not skipped: the timestamps stay consecutive.
    assert_consecutive(ts, sim)


def test_options_set_the_start_time_and_the_echo_register():
    with rtloop.Sim(start_time=100.0, echo_register=47) as sim:
        c = client(sim)
        t = c.timestamps(1)[0]
        c.close()
    assert 100.0 <= t < 100.0 + DEADLINE
    assert sim.report()["echo"]["register"] == 47


# ---- bad arguments: exceptions, never a crash ----------------------------------------------


@pytest.mark.parametrize("kwargs,exc,words", [
    ({"profile": "ur5"}, ValueError, ["ur5", "cb3", "eseries", "polyscope-x"]),
    ({"profile": None}, TypeError, ["profile"]),
    ({"profile": 3}, TypeError, ["profile"]),
    ({"port": -1}, ValueError, ["0..65535"]),
    ({"port": 65536}, ValueError, ["0..65535"]),
    ({"port": 2 ** 70}, ValueError, ["0..65535"]),
    ({"port": "30004"}, TypeError, ["port"]),
    ({"port": None}, TypeError, ["port"]),
    ({"port": 1.5}, TypeError, ["port"]),
    ({"udp": "yes"}, TypeError, ["udp"]),
    ({"udp": None}, TypeError, ["udp"]),
    ({"faults": [("skip_every", 2)]}, TypeError, ["faults"]),
    ({"faults": "skip_every"}, TypeError, ["faults"]),
    ({"faults": {1: 2}}, TypeError, ["key"]),
    ({"faults": {"skip_evry": 10}}, ValueError, ["skip_evry", "skip_every", "jitter_us"]),
    ({"faults": {"skip_every": 1}}, ValueError, ["skip_every", "[2, 1000000]"]),
    ({"faults": {"skip_every": -5}}, ValueError, ["skip_every", "range"]),
    ({"faults": {"skip_every": 2 ** 64}}, ValueError, ["skip_every", "range"]),
    ({"faults": {"skip_every": 10.5}}, TypeError, ["skip_every", "integer"]),
    ({"faults": {"skip_every": "10"}}, TypeError, ["skip_every", "integer"]),
    ({"faults": {"skip_every": True}}, TypeError, ["skip_every", "integer"]),
    ({"faults": {"skip_every": None}}, TypeError, ["skip_every", "None"]),
    ({"faults": {"skip_count": 2}}, ValueError, ["skip_count", "skip_every"]),
    ({"faults": {"skip_every": 3, "skip_count": 3}}, ValueError, ["below"]),
    ({"faults": {"stall_ms": 10}}, ValueError, ["stall_ms", "stall_every"]),
    ({"faults": {"stall_every": float("nan")}}, ValueError, ["finite"]),
    ({"faults": {"burst_every": float("inf")}}, ValueError, ["finite"]),
    ({"faults": {"fragment": 1}}, TypeError, ["fragment", "True or False"]),
    ({"faults": {"controller_version": "5.x"}}, ValueError, ["controller_version", "X.Y.Z"]),
    ({"faults": {"controller_version": "3.15.8"}}, ValueError, ["eseries", "profile"]),
    ({"faults": {"controller_version": 5}}, TypeError, ["controller_version", "str"]),
    ({"faults": {"start_time": 1.0}}, ValueError, ["start_time", "option", "faults"]),
    ({"faults": {"fieldbus": True}, "echo_register": 3}, ValueError, ["fieldbus", "24..47"]),
    ({"skip_every": 10}, ValueError, ["skip_every", "fault"]),
    ({"nonsense": 1}, ValueError, ["nonsense", "start_time", "duration"]),
    ({"start_time": -1.0}, ValueError, ["start_time", "range"]),
    ({"start_time": "now"}, TypeError, ["start_time", "number"]),
    ({"echo_register": 48}, ValueError, ["echo_register", "[0, 47]"]),
    ({"bind": "localhost"}, ValueError, ["bind", "IPv4"]),
    ({"bind": 127}, TypeError, ["bind"]),
    ({"udp": True, "faults": {"jitter_us": 10}}, ValueError, ["jitter_us", "UDP", "skip_every"]),
    ({"udp": True, "echo_register": 47}, ValueError, ["echo_register", "UDP"]),
])
def test_bad_arguments_raise(kwargs, exc, words):
    with pytest.raises(exc) as e:
        rtloop.Sim(**kwargs)
    for w in words:
        assert w in str(e.value), (w, str(e.value))


def test_positional_arguments_are_refused():
    with pytest.raises(TypeError):
        rtloop.Sim("eseries")


def test_a_numpy_style_integer_is_an_integer():
    class Index:
        def __index__(self):
            return 40

    sim = rtloop.Sim(faults={"skip_every": Index()}, port=Index())
    assert sim.port == 40


def test_report_and_wait_before_start_raise():
    sim = rtloop.Sim()
    with pytest.raises(RuntimeError, match="not started"):
        sim.report()
    with pytest.raises(RuntimeError, match="not started"):
        sim.wait(0.01)
    assert not sim.running
    sim.stop()  # nothing to stop: nothing happens
    assert "not started" in repr(sim)


def test_use_after_stop():
    sim = rtloop.Sim().start()
    sim.stop()
    sim.stop()  # again: nothing
    assert sim.wait(0) is True and not sim.running
    assert sim.report()["program"] == "rtde-sim"
    with pytest.raises(RuntimeError, match="runs once"):
        sim.start()
    with pytest.raises(RuntimeError, match="runs once"):
        with sim:
            pass
    with pytest.raises(RuntimeError):
        sim.__init__(profile="cb3")
    assert "stopped" in repr(sim)


def test_starting_twice_raises():
    with rtloop.Sim() as sim:
        with pytest.raises(RuntimeError, match="already running"):
            sim.start()


def test_bad_wait_timeouts_raise():
    with rtloop.Sim() as sim:
        for bad in (-1, float("nan"), 1e12):
            with pytest.raises(ValueError):
                sim.wait(bad)
        with pytest.raises(TypeError):
            sim.wait("1")


def test_stop_from_many_threads_at_once():
    sim = rtloop.Sim().start()
    threads = [threading.Thread(target=sim.stop) for _ in range(8)]
    reports = []
    threads += [threading.Thread(target=lambda: reports.append(sim.report())) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(DEADLINE)
    assert not any(t.is_alive() for t in threads)
    assert not sim.running and len(reports) == 8
    assert all(math.isfinite(r["seconds"]) for r in reports)


# ---- nothing crashes: every setting against values of every kind ---------------------------

FAULT_KEYS = ["max_clients", "handshake_timeout", "send_buffer", "sndbuf", "controller_version",
              "max_protocol", "fieldbus", "text_v2", "jitter_us", "skip_every", "skip_count",
              "stall_ms", "stall_every", "burst", "burst_every", "fragment", "fragment_max",
              "reset_after", "text_every", "seed", "local_control", "no_dashboard",
              "protective_stop_after", "push_x", "push_y", "push_z", "push_after", "push_for"]
OPTION_KEYS = ["start_time", "echo_register", "duration", "contact_z", "contact_stiffness",
               "contact_damping", "force_noise", "watchdog_ms", "boot", "power_on_time",
               "brake_release_time", "unlock_delay", "control_script", "external_control_urp",
               "urcap_host", "urcap_port", "bind"]
ODD_VALUES = [None, True, False, 0, -1, 1, 3, 2 ** 31, 2 ** 64, -2 ** 70, 0.5, -0.0, 1e308,
              float("nan"), float("inf"), "", "5.4.0", "x" * 10000, b"1", [], {}, object()]


def test_the_teach_mode_push_is_a_fault_of_the_option_table():
    with rtloop.Sim(faults={"push-z": -20.0, "push_after": 0.5, "push_for": 1.0}) as sim:
        assert 0 < sim.port < 65536
    with pytest.raises(ValueError) as e:
        rtloop.Sim(faults={"push-z": -250.0})
    assert "push_z" in str(e.value)
    with pytest.raises(ValueError):
        rtloop.Sim(push_z=-20.0)  # a fault, not an option


def test_the_unknown_keys_list_is_the_tables():
    with pytest.raises(ValueError) as e:
        rtloop.Sim(faults={"?": 1})
    assert str(e.value).endswith("(valid faults: " + ", ".join(FAULT_KEYS) + ")")
    with pytest.raises(ValueError) as e:
        rtloop.Sim(**{"?": 1})
    assert str(e.value).endswith("(valid options: " + ", ".join(OPTION_KEYS) + ")")


@pytest.mark.parametrize("udp", [False, True])
def test_every_setting_with_odd_values_raises_or_builds(udp):
    built = 0
    for key in FAULT_KEYS + OPTION_KEYS:
        for value in ODD_VALUES:
            kwargs = {"faults": {key: value}} if key in FAULT_KEYS else {key: value}
            try:
                rtloop.Sim(udp=udp, **kwargs)
                built += 1
            except (TypeError, ValueError) as e:
                assert key in str(e) or "bind" in str(e), (key, value, str(e))
    assert built > 20


def test_a_value_that_changes_the_dict_while_it_is_read():
    faults = {"skip_every": None, "jitter_us": 5, "seed": 3}

    class Evil:
        def __index__(self):
            faults.clear()
            return 10

    faults["skip_every"] = Evil()
    try:
        rtloop.Sim(faults=faults)
    except (TypeError, ValueError, RuntimeError):
        pass  # "dictionary changed size" or applied: both fine, no crash


def test_an_index_that_raises():
    class Bad:
        def __index__(self):
            raise ZeroDivisionError("no")

    with pytest.raises(ZeroDivisionError):
        rtloop.Sim(faults={"skip_every": Bad()})
    with pytest.raises(ZeroDivisionError):
        rtloop.Sim(port=Bad())


def test_a_forked_child_leaves_the_parents_simulator_alone():
    with rtloop.Sim() as sim:
        pid = os.fork()
        if pid == 0:  # the child: dropping its copy must not stop the parent's
            try:
                sim.__exit__(None, None, None)
                os._exit(0 if not sim.running else 3)
            finally:
                os._exit(4)
        _, status = os.waitpid(pid, 0)
        assert os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0, status
        assert sim.running
        c = client(sim)
        assert len(c.timestamps(5)) == 5
        c.close()


def test_the_module_objects_cannot_be_made_half_way():
    with pytest.raises(TypeError):
        object.__new__(rtloop.Sim)
    sim = rtloop.Sim.__new__(rtloop.Sim)  # no __init__: the defaults
    assert sim.profile == "eseries" and sim.port == 0
    with pytest.raises(TypeError):
        class Sub(rtloop.Sim):
            pass


def _dashboard(port):
    s = socket.create_connection(("127.0.0.1", port), timeout=DEADLINE)
    f = s.makefile("rwb", buffering=0)

    def ask(line):
        f.write(line.encode() + b"\n")
        return f.readline().decode().strip()
    return s, f.readline().decode().strip(), ask


def test_boot_starts_powered_off_and_the_dashboard_brings_it_up():
    with rtloop.Sim(boot=True, power_on_time=0.05, brake_release_time=0.05) as sim:
        assert sim.dashboard_port and sim.primary_port and sim.secondary_port
        assert len({sim.port, sim.dashboard_port, sim.primary_port, sim.secondary_port,
                    sim.realtime_port}) == 5
        s, greeting, ask = _dashboard(sim.dashboard_port)
        with s:
            assert greeting.startswith("Connected: Universal Robots Dashboard Server")
            assert ask("robotmode") == "Robotmode: POWER_OFF"
            assert ask("power on") == "Powering on"
            assert ask("brake release") == "Brake releasing"
            deadline = time.monotonic() + DEADLINE
            mode = ask("robotmode")
            while mode != "Robotmode: RUNNING" and time.monotonic() < deadline:
                time.sleep(0.01)
                mode = ask("robotmode")
            assert mode == "Robotmode: RUNNING"


def test_no_dashboard_serves_none_and_ports_are_none_before_start():
    sim = rtloop.Sim(faults={"no_dashboard": True})
    assert sim.dashboard_port is None and sim.primary_port is None
    with sim:
        assert sim.dashboard_port is None
        assert sim.primary_port is not None
