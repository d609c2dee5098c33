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


def dashboard_pending(r, facts):
    c = r["controller"]
    check(c["protective_stops"] == 0, "no protective stop")
    check(c["robot_mode"] == "POWER_OFF", f"restart safety leaves the robot powered off ({c['robot_mode']})")


TESTS = {
    "ur_rtde-receive": ur_rtde_receive,
    "ur_rtde-dashboard": dashboard,
    "ur_rtde-dashboard-pending": dashboard_pending,
    "urcl-rtde": urcl_rtde,
    "urcl-dashboard": dashboard,
    "urcl-dashboard-pending": dashboard_pending,
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
