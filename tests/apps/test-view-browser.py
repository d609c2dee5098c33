#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""rtloop-view in a real browser: Debian's headless Chromium, driven by
Selenium through chromedriver, against the demo's loop on rtde-sim. TAP on
stdout.

Usage: test-view-browser.py RTDE-SIM RTLOOP-VIEW RTLOOP-ADMITTANCE OUTDIR

The view starts first (it waits for the loop), then rtde-sim, then
rtloop-admittance --telemetry. The test reads what the page shows, from its
DOM, and checks it against ground truth the page does not make:

  while it runs  the state is "running", records and counters grow, every
                 signal of the layout has a plot, the robot's state reads
                 as rtde-sim's report says it was (RUNNING, NORMAL, PLAYING);
  at the end     the state turns "ended" and every loop counter on the page
                 equals the loop's own --json report, the histograms' counts
                 and percentiles too; the transport's counters equal what
                 rtde-sim counted on its side (data packages and bytes it
                 sent, less the whole packages still in flight when the
                 loop closed its connection; input packages it applied);
                 the view missed nothing.

Screenshots of both moments go to OUTDIR (RTL_ARTIFACTS overrides it: CI
keeps them). Without chromium, chromedriver or python3-selenium the test
skips (.ci/packages-browser has them). Every wait is bounded.
"""
import json
import os
import re
import signal
import subprocess
import sys
import time
import urllib.request

if len(sys.argv) != 5:
    sys.exit("usage: test-view-browser.py RTDE-SIM RTLOOP-VIEW RTLOOP-ADMITTANCE OUTDIR")
SIM, VIEW, LOOP = (os.path.abspath(p) for p in sys.argv[1:4])
OUT = os.environ.get("RTL_ARTIFACTS") or sys.argv[4]
CHROMIUM = "/usr/bin/chromium"
CHROMEDRIVER = "/usr/bin/chromedriver"
RUN_S = 4  # the loop's run
WAIT_S = 20  # no wait is longer

missing = [p for p in (CHROMIUM, CHROMEDRIVER) if not os.access(p, os.X_OK)]
try:
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service
    from selenium.webdriver.common.by import By
except ImportError:
    missing.append("python3-selenium")
if missing:
    print("1..0 # SKIP no headless browser: %s (apt-get install chromium "
          "chromium-driver python3-selenium)" % ", ".join(missing))
    sys.exit(0)

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "common"))
import taprun  # noqa: E402  (tests/common: TAP results, processes, polling)

H = taprun.Harness("view-browser.", WAIT_S)
TMP, check, start, read, wait_for = H.tmp, H.check, H.start, H.read, H.wait_for


def bail(msg):
    check(msg, False)
    H.cleanup()
    H.finish()


def main():
    name = "view-test-%d" % os.getpid()
    os.makedirs(OUT, exist_ok=True)

    view = start([VIEW, "--port", "0", name], "view")
    url = wait_for(lambda: (re.search(r"(http://127\.0\.0\.1:\d+/)", read("view.out")) or [None, None])[1],
                   "rtloop-view's address")
    if not url:
        bail("rtloop-view serves (%s)" % read("view.err").strip())
    check("rtloop-view serves on loopback: " + url, True)

    opts = webdriver.ChromeOptions()
    opts.binary_location = CHROMIUM
    for a in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
              "--disable-background-networking", "--disable-component-update", "--disable-sync",
              "--disable-default-apps", "--no-first-run", "--window-size=1400,1100",
              "--user-data-dir=" + os.path.join(TMP, "chromium")):
        opts.add_argument(a)
    opts.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    try:
        drv = webdriver.Chrome(service=Service(CHROMEDRIVER), options=opts)
    except Exception as e:  # noqa: BLE001  (the browser's own reason)
        bail("headless Chromium starts: %s" % e)
    drv.set_page_load_timeout(WAIT_S)
    try:
        run(drv, url, name)
    finally:
        try:
            logs = drv.get_log("browser")
        except Exception:  # noqa: BLE001
            logs = []
        drv.quit()
        view.send_signal(signal.SIGTERM)
        try:
            view.wait(10)
        except subprocess.TimeoutExpired:
            pass
    errors = [e["message"] for e in logs if e.get("level") == "SEVERE"]
    check("the page logged no error in the browser's console", not errors, "\n".join(errors))
    check("rtloop-view exits 0 on SIGTERM", view.returncode == 0, read("view.err"))


def text(drv, css):
    try:
        return drv.find_element(By.CSS_SELECTOR, css).text
    except Exception:  # noqa: BLE001  (not there yet)
        return ""


def table(drv, attr):
    """{data-ATTR: [cell texts]} of a table's rows."""
    out = {}
    for tr in drv.find_elements(By.CSS_SELECTOR, "tr[data-%s]" % attr):
        out[tr.get_attribute("data-" + attr)] = [td.text for td in tr.find_elements(By.TAG_NAME, "td")]
    return out


def run(drv, url, name):
    drv.get(url)
    check("the page waits for the loop before it starts",
          wait_for(lambda: text(drv, "#state") == "waiting", "state waiting") is not None,
          text(drv, "#state"))

    sim = start([SIM, "--port", "0", "--contact-z", "0.46", "--duration", "60",
                 "--json", os.path.join(TMP, "sim.json")], "sim")
    port = wait_for(lambda: (re.search(r"listening on [0-9.]*:(\d+)", read("sim.err")) or [None, None])[1],
                    "rtde-sim's port")
    if not port:
        bail("rtde-sim starts (%s)" % read("sim.err"))
    loop = start([LOOP, "--port", port, "--duration", str(RUN_S), "--rt", "off",
                  "--telemetry", name, "--json", os.path.join(TMP, "loop.json")], "loop")

    # While it runs.
    ok = wait_for(lambda: text(drv, "#state") == "running" and int(text(drv, "#records") or 0) > 200,
                  "running with records")
    check("the page shows the loop running, with records", ok, text(drv, "#state"))
    r1, u1 = int(text(drv, "#records") or 0), int(text(drv, "#updates") or 0)
    ok = wait_for(lambda: int(text(drv, "#records") or 0) > r1 + 100 and int(text(drv, "#updates") or 0) > u1 + 5,
                  "records to grow")
    check("records and page updates grow while it runs", ok,
          "records %d -> %s, updates %d -> %s" % (r1, text(drv, "#records"), u1, text(drv, "#updates")))
    print("# the page's update rate: %s a second (it polls every 50 ms)" % text(drv, "#update-rate"))
    with urllib.request.urlopen(url + "api/info", timeout=WAIT_S) as r:
        info = json.load(r)
    plotted = [e.get_attribute("data-signal") for e in drv.find_elements(By.CSS_SELECTOR, "section[data-signal]")]
    expect = [s["name"] for s in info["signals"]
              if s["count"] <= 8 and s["name"] not in ("robot_mode", "safety_mode", "runtime_state")]
    check("every signal of the loop's layout has a plot (%s)" % ", ".join(plotted), plotted == expect,
          "plotted %s, layout %s" % (plotted, expect))
    for sig in ("contact_force", "z_from_start", "actual_TCP_force"):
        check("the %s plot is drawn (a canvas with pixels)" % sig,
              drv.execute_script(
                  "const c = document.querySelector(`section[data-signal='%s'] canvas`);"
                  "return c && c.width > 100 && c.height > 50;" % sig))
    robot = wait_for(lambda: table(drv, "robot") if len(table(drv, "robot")) == 3 else None, "the robot's state")
    drv.save_screenshot(os.path.join(OUT, "rtloop-view-running.png"))

    # The end: the loop exits on its own, then the simulator writes its report.
    try:
        loop.wait(RUN_S + WAIT_S)
    except subprocess.TimeoutExpired:
        bail("rtloop-admittance ends after %d s" % RUN_S)
    check("rtloop-admittance ran to the end (exit 0)", loop.returncode == 0, read("loop.err"))
    ok = wait_for(lambda: text(drv, "#state") == "ended", "state ended")
    check("the page shows the loop ended", ok, text(drv, "#state"))
    # Two more updates after "ended": the figures on the page are the final ones.
    u = int(text(drv, "#updates") or 0)
    wait_for(lambda: int(text(drv, "#updates") or 0) >= u + 2, "updates after the end")
    time.sleep(0.3)  # the histogram poll (every 100 ms) after the end, too
    counters = table(drv, "counter")
    hists = table(drv, "hist")
    drv.save_screenshot(os.path.join(OUT, "rtloop-view-ended.png"))
    sim.send_signal(signal.SIGTERM)
    sim.wait(WAIT_S)

    report = json.loads(read("loop.json"))
    simr = json.loads(read("sim.json"))
    ctl = simr["controller"]
    check("the robot's state reads as rtde-sim had it: robot_mode %s, safety_mode %s, program %s"
          % (ctl["robot_mode"], ctl["safety_mode"], ctl["program_state"]),
          robot is not None and robot.get("robot_mode", [None, None])[1] == ctl["robot_mode"]
          and robot.get("safety_mode", [None, None])[1] == ctl["safety_mode"]
          and robot.get("runtime_state", [None, None])[1] == ctl["program_state"], robot)

    def page(name):
        row = counters.get(name)
        return int(row[1]) if row and row[1].isdigit() else None

    diff = {k: (page("loop." + k), v) for k, v in report["counters"].items() if page("loop." + k) != v}
    check("every one of the loop's %d counters on the page equals its --json report (frames %s)"
          % (len(report["counters"]), page("loop.frames")), not diff and page("loop.frames"), diff)
    st = simr["stats"]
    # What rtde-sim sent while the loop closed its connection (at most a
    # couple of packages in flight, whole ones) reached no client: the
    # page's counts are the sim's less those
    data, rx = page("client.data"), page("transport.rx_bytes")
    gap = st["data_sent"] - data if data is not None else -1
    check("data packages: the page's client.data %s = rtde-sim's data_sent %d, but for %d "
          "in flight at the close" % (data, st["data_sent"], gap), 0 <= gap <= 2)
    bgap = st["bytes_sent"] - rx if rx is not None else -1
    check("bytes: the page's transport.rx_bytes %s = rtde-sim's bytes_sent %d, but for the "
          "%d bytes of those packages" % (rx, st["bytes_sent"], bgap),
          (gap == 0 and bgap == 0) or (gap > 0 and bgap > 0 and bgap % gap == 0))
    sent = (page("transport.packages") or 0) + (page("transport.safe_packages") or 0)
    check("inputs: the page's transport.packages + safe_packages %d = rtde-sim's inputs_applied %d"
          % (sent, st["inputs_applied"]), sent == st["inputs_applied"])
    for h, rep in report["histograms"].items():
        row = hists.get(h)
        cols = dict(zip(["name", "count", "p50", "p90", "p99", "p999", "max", "over"], row or []))
        good = row is not None and cols["count"] == str(rep["count"])
        for p in ("p50", "p99", "max"):
            # The page shows microseconds with one or two decimals.
            good = good and cols[p] != "–" and abs(float(cols[p]) * 1e3 - rep[p + "_ns"]) <= 50
        check("histogram %s on the page: count %s, p50 %s, p99 %s, max %s us as the report has it"
              % (h, cols.get("count"), cols.get("p50"), cols.get("p99"), cols.get("max")), good,
              "report: count %d p50 %d p99 %d max %d ns" % (rep["count"], rep["p50_ns"], rep["p99_ns"], rep["max_ns"]))
    check("the view missed no record (%s)" % text(drv, "#missed"), text(drv, "#missed") == "0")
    print("# screenshots: %s" % ", ".join(os.path.join(OUT, f) for f in
                                          ("rtloop-view-running.png", "rtloop-view-ended.png")))


try:
    main()
finally:
    H.cleanup()
H.finish()
