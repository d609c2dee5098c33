#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
#
# The simulator's side of a peers test (tests/peers/run.sh): rtde-sim's
# JSON report (--json) against what the third-party program saw, so a test
# passes only when the client's answers and the controller's state agree
# (a client that read nothing, or a command the simulator never counted,
# fails here even if the library returned success).
#
#   check-report.py TEST SIM_JSON CLIENT_OUTPUT
import json
import sys

failures = 0


def check(ok, what):
    global failures
    print(("ok" if ok else "not ok") + " - report: " + what)
    if not ok:
        failures += 1


def stream(r, facts, min_packages):
    s = r["stats"]
    check(s["connections"] >= 1, f"rtde-sim saw {s['connections']} connection(s)")
    check(s["data_sent"] >= min_packages,
          f"rtde-sim sent {s['data_sent']} data packages, the client read {min_packages}")
    check(s["errors_answered"] == 0 and s["desync_disconnects"] == 0,
          "no package of the client was malformed or out of sync")
    check(s["nonfinite_in"] == 0, "no NaN or infinite value in the client's inputs")
    check(r["frequency_hz"] == 500, f"an e-Series stream at {r['frequency_hz']} Hz")
    last = float(facts["last_timestamp"])
    check(42.0 <= float(facts["first_timestamp"]) <= last <= 42.0 + r["seconds"] + 0.01,
          f"the client's timestamps lie in the simulator's run (42 s .. {42.0 + r['seconds']:.3f} s)")
    check(r["robot"]["at_rest"], "the arm is at rest at the end")


def ur_rtde_receive(r, facts):
    stream(r, facts, int(facts["distinct"]))
    check(r["stats"]["inputs_applied"] == 0, "a receive-only client wrote no input")


def urcl_rtde(r, facts):
    stream(r, facts, int(facts["packages"]))
    check(r["stats"]["inputs_applied"] >= 1,
          f"rtde-sim applied the client's input packages ({r['stats']['inputs_applied']})")


def dashboard(r, facts):
    c = r["controller"]
    check(c["boot"], "rtde-sim started as a booted controller (--boot)")
    check(c["power_ons"] == 1, f"one power on counted ({c['power_ons']})")
    check(c["brake_releases"] == 1, f"one brake release counted ({c['brake_releases']})")
    check(c["power_offs"] == 1, f"one power off counted ({c['power_offs']})")
    check(c["robot_mode"] == "POWER_OFF", f"the robot ends powered off ({c['robot_mode']})")
    check(c["program_state"] == "STOPPED", f"the program ends stopped ({c['program_state']})")
    check(c["protective_stops"] == 0, "no protective stop")
    check(facts.get("polyscope_version", "").startswith(r["controller_version"]),
          f"the client's version {facts.get('polyscope_version')} is rtde-sim's "
          f"{r['controller_version']}")


def dashboard_commands(r, facts):
    c = r["controller"]
    check(c["protective_stops"] == 0, "no protective stop")
    check(c["robot_mode"] == "POWER_OFF", f"restart safety leaves the robot powered off ({c['robot_mode']})")


def ur_rtde_control(r, facts, min_commands=1):
    """rtde-sim ran ur_rtde's script in its model, with no failure."""
    m = next(x for x in r["controller"]["models"] if x["name"] == "ur_rtde")
    check(m["started"] >= 1, f"rtde-sim ran ur_rtde's control script ({m['started']} started)")
    check(m["failed"] == 0 and r["controller"]["last_exception"] is None,
          f"no runtime exception ({r['controller']['last_exception']})")
    check(m["unmodelled"] == 0, f"no command rtde-sim does not model ({m['last_unmodelled']})")
    check(m["commands"] >= min_commands,
          f"the script took {m['commands']} commands (at least {min_commands})")
    check(r["robot"]["at_rest"], "the arm is at rest at the end")
    check(r["stats"]["nonfinite_in"] == 0, "no NaN or infinite value in the client's inputs")
    return r["robot"]


def near(a, b, tol, what):
    """The report's doubles have 9 significant digits: hold them to 1e-7."""
    check(abs(float(a) - float(b)) <= tol, f"{what}: simulator {float(a):.9g}, client {float(b):.9g}")


def control_speedj(r, facts):
    rb = ur_rtde_control(r, facts, 500)
    near(rb["q"][0], facts["q0"], 1e-7, "the base joint where the client last read it")
    check(rb["stops"] >= 1 and rb["stops_at_rest"] == rb["stops"], "speedStop's stop reached rest")


def control_servoj(r, facts):
    rb = ur_rtde_control(r, facts, 1000)
    near(rb["q"][5], facts["q5"], 1e-7, "wrist 3 where the client last read it")


def control_moves(r, facts):
    rb = ur_rtde_control(r, facts, 5)
    for i in range(6):
        near(rb["q"][i], facts[f"q{i}"], 1e-7, f"joint {i} after the path")
    check(rb["moves_done"] >= 4,
          f"moves done: {rb['moves_done']} (moveJ, moveL, two paths; the stopped ones are not done)")


def control_force(r, facts):
    rb = ur_rtde_control(r, facts, 1500)
    near(rb["tcp_pose"][2], facts["z_tcp"], 1e-6, "the TCP's height after setTcp()")
    check(not rb["force_mode"], "force mode is off after forceModeStop()")
    near(rb["payload"], 1.5, 1e-12, "the payload setPayload() set")
    near(rb["payload_cog"][2], 0.08, 1e-12, "its centre of gravity")
    near(rb["tcp_offset"][2], 0.1, 1e-12, "the TCP setTcp() set")
    near(abs(rb["ft_bias"][2]), abs(float(facts["force_z"])), 1.0,
         "zeroFtSensor() on the surface took the press as its bias")


def control_teach(r, facts):
    rb = ur_rtde_control(r, facts, 2)
    near(rb["tcp_pose"][2], facts["z"], 1e-6, "the tool's height after the push")
    check(not rb["teach_mode"], "teach mode is off after endTeachMode()")


def control_kinematics(r, facts):
    rb = ur_rtde_control(r, facts, 10)
    near(rb["tcp_pose"][2], facts["fk_z"], 1e-7, "FK's height is the simulator's TCP")


def control_kinematics_upper(r, facts):
    control_kinematics(r, facts)
    m = next(x for x in r["controller"]["models"] if x["name"] == "ur_rtde")
    check(m["last"].endswith("registers 24-47"), f"the script used the upper registers ({m['last']})")


def control_watchdog(r, facts):
    m = next(x for x in r["controller"]["models"] if x["name"] == "ur_rtde")
    check(m["started"] == 1, f"one script started ({m['started']})")
    check(m["watchdog_stops"] == 1, f"the RTDE watchdog stopped it once ({m['watchdog_stops']})")
    exc = r["controller"]["last_exception"] or {}
    check("watchdog: input_int_register_0" in exc.get("text", ""),
          f"the runtime exception names the watchdog and its register ({exc})")
    check(r["controller"]["program_state"] == "STOPPED", "the program is stopped")
    check(r["robot"]["at_rest"], "the arm is at rest at the end")


def control_io(r, facts):
    check(r["stats"]["inputs_applied"] >= 6,
          f"rtde-sim applied the IO interface's packages ({r['stats']['inputs_applied']})")
    check(int(facts["bits"]) == (1 << 9) | (1 << 16), "configurable 1 and tool 0 still set")


def urcl_external_control(r, facts):
    m = next(x for x in r["controller"]["models"] if x["name"] == "external_control")
    check(m["started"] >= 1, f"rtde-sim ran URCL's External Control program ({m['started']} started)")
    check(m["failed"] == 0, f"no runtime exception ({r['controller']['last_exception']})")
    check(m["unmodelled"] == 0, f"no command rtde-sim does not model ({m['last_unmodelled']})")
    rb = r["robot"]
    for i in range(6):
        near(rb["q"][i], facts[f"q{i}"], 1e-7, f"joint {i} after the spline")
    near(rb["payload"], 1.2, 1e-6, "the payload the script command set")
    check(r["controller"]["program_state"] == "STOPPED", "the program ended with stopControl()")
    check(rb["at_rest"], "the arm is at rest at the end")


TESTS = {
    "urcl-external-control": urcl_external_control,
    "urcl-external-control-urcap": urcl_external_control,
    "ur_rtde-control-speedj": control_speedj,
    "ur_rtde-control-servoj": control_servoj,
    "ur_rtde-control-moves": control_moves,
    "ur_rtde-control-force": control_force,
    "ur_rtde-control-teach": control_teach,
    "ur_rtde-control-kinematics": control_kinematics,
    "ur_rtde-control-kinematics-upper": control_kinematics_upper,
    "ur_rtde-control-moves-cb3": control_moves,
    "ur_rtde-control-io": control_io,
    "ur_rtde-control-watchdog": control_watchdog,
    "ur_rtde-receive": ur_rtde_receive,
    "ur_rtde-dashboard": dashboard,
    "ur_rtde-dashboard-commands": dashboard_commands,
    "urcl-rtde": urcl_rtde,
    "urcl-dashboard": dashboard,
    "urcl-dashboard-commands": dashboard_commands,
}


def main():
    name, sim_json, client_out = sys.argv[1:4]
    with open(sim_json) as f:
        report = json.load(f)
    facts = {}
    with open(client_out) as f:
        for line in f:
            key, sep, value = line.rstrip("\n").partition("=")
            if sep and " " not in key:
                facts[key] = value
    try:
        TESTS[name](report, facts)
    except (KeyError, ValueError) as e:
        check(False, f"the client did not report {e} (did it run to the end?)")
    print(f"# report: {failures} failed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
