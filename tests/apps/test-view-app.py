#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""rtloop-view as a command and a server, without a browser. TAP on stdout.

Usage: test-view-app.py RTLOOP-VIEW RTDE-SIM RTLOOP-CIRCLE

  flags      --help, a missing or bad NAME, a bad --bind or --plotjuggler
             (exit 2, named); Chart.js missing (exit 1, the package named); a
             port in use (exit 1);
  exposure   on loopback a request naming another Host is refused (421), a
             POST too (405); --bind 0.0.0.0 serves and prints what anyone on
             that network can see;
  hostile    clients that connect and never send a byte do not stop it from
             answering; an unknown path is a 404;
  producers  waiting (the reason and the fix in /api/info), running, ended
             with the circle's own frame count, a second loop under the same
             name followed as generation 2, a loop killed with SIGKILL shown
             as gone.

Every wait is bounded.
"""
import http.client
import json
import os
import re
import signal
import socket
import subprocess
import sys
import time

if len(sys.argv) != 4:
    sys.exit("usage: test-view-app.py RTLOOP-VIEW RTDE-SIM RTLOOP-CIRCLE")
VIEW, SIM, CIRCLE = (os.path.abspath(p) for p in sys.argv[1:4])
WAIT_S = 20
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "common"))
import taprun  # noqa: E402  (tests/common: TAP results, processes, polling)

H = taprun.Harness("view-app.", WAIT_S)
TMP, check, start, read, wait_for = H.tmp, H.check, H.start, H.read, H.wait_for


def run(args, timeout=WAIT_S):
    p = subprocess.run([VIEW] + args, capture_output=True, text=True, timeout=timeout)
    return p.returncode, p.stdout, p.stderr


def serve(args, name):
    """Start rtloop-view; returns (process, port) once it serves."""
    p = start([VIEW, "--port", "0"] + args, name)
    m = wait_for(lambda: re.search(r"http://[^ ]*:(\d+)/", read(name + ".out")), name + "'s address")
    return p, int(m[1]) if m else None


def get(port, path, host=None, method="GET"):
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=WAIT_S)
    c.request(method, path, headers={"Host": host} if host else {})
    r = c.getresponse()
    body = r.read()
    c.close()
    return r.status, body


def api(port, path):
    status, body = get(port, path)
    return json.loads(body) if status == 200 else None


def main():
    # --- flags ----------------------------------------------------------------------
    rc, out, err = run(["--help"])
    check("--help exits 0 and documents --bind, --plotjuggler, --pj-rate",
          rc == 0 and all(k in out for k in ("--bind", "--plotjuggler", "--pj-rate")), out)
    rc, out, err = run([])
    check("no NAME: exit 2, named", rc == 2 and "NAME is missing" in err, err)
    rc, out, err = run(["bad/name"])
    check("a bad NAME: exit 2, the rule named", rc == 2 and "A-Z a-z 0-9 _ . -" in err, err)
    rc, out, err = run(["--bind", "not-an-address", "x"])
    check("--bind with a name: exit 2, an address asked for", rc == 2 and "IPv4 or IPv6" in err, err)
    rc, out, err = run(["--plotjuggler", "[::1", "x"])
    check("--plotjuggler malformed: exit 2, named", rc == 2 and "--plotjuggler" in err, err)
    rc, out, err = run(["--chartjs", "/nonexistent/chart.js", "--port", "0", "x"])
    check("Chart.js missing: exit 1, the package and --chartjs named",
          rc == 1 and "libjs-chart.js" in err and "--chartjs" in err, err)
    hold = socket.socket()
    hold.bind(("127.0.0.1", 0))
    hold.listen(1)
    rc, out, err = run(["--port", str(hold.getsockname()[1]), "x"])
    check("a port in use: exit 1, the fix named", rc == 1 and "--port" in err, err)
    hold.close()

    # --- exposure and hostile clients --------------------------------------------
    name = "view-app-%d" % os.getpid()
    view, port = serve([name], "view")
    if not check("rtloop-view serves on loopback", port, read("view.err")):
        return
    check("a request naming another Host is refused (421)",
          get(port, "/api/info", host="evil.example:80")[0] == 421)
    check("a POST is refused (405)", get(port, "/api/info", method="POST")[0] == 405)
    check("an unknown path is a 404", get(port, "/etc/passwd")[0] == 404)
    status, body = get(port, "/")
    js = get(port, "/app.js")[1]
    check("/ is the page; it and its script load nothing from another origin",
          status == 200 and b"/chart.min.js" in body
          and not any(u in t for u in (b"http://", b"https://", b"//cdn") for t in (body, js)),
          body[:200])
    silent = []
    for _ in range(10):
        s = socket.create_connection(("127.0.0.1", port), timeout=WAIT_S)
        silent.append(s)
    t0 = time.monotonic()
    status, _ = get(port, "/api/info")
    check("10 clients that never send a byte: it still answers (%.0f ms)"
          % ((time.monotonic() - t0) * 1e3), status == 200)
    for s in silent:
        s.close()
    info = api(port, "/api/info")
    check("waiting: /api/info says so, with the reason and the fix",
          info and info["state"] == "waiting" and "--telemetry " + name in info["error"], info)

    wide, wport = serve(["--bind", "0.0.0.0", name + "-wide"], "wide")
    check("--bind 0.0.0.0 serves", wport and get(wport, "/api/info", host="192.0.2.1")[0] == 200)
    check("--bind 0.0.0.0 prints what anyone on that network can see",
          "anyone there sees" in read("wide.err") and "without a login" in read("wide.err"),
          read("wide.err"))
    wide.send_signal(signal.SIGTERM)
    wide.wait(WAIT_S)

    # --- producers ------------------------------------------------------------------
    sim = start([SIM, "--udp", "--udp-port", "0", "--duration", "60"], "sim")
    m = wait_for(lambda: re.search(r"UDP on [0-9.]*:(\d+)", read("sim.err")), "rtde-sim's UDP port")
    if not check("rtde-sim --udp serves", m, read("sim.err")):
        return
    sport = m[1]

    def circle(tag, seconds):
        return start([CIRCLE, "--transport", "udp", "--port", sport, "--duration", str(seconds),
                      "--telemetry", name, "--json"], tag)

    c1 = circle("c1", 1)
    ok = wait_for(lambda: (api(port, "/api/data?window=0.1") or {}).get("state") == "running", "running")
    check("the first loop: running, generation 1",
          ok and api(port, "/api/info")["generation"] == 1, api(port, "/api/info"))
    c1.wait(WAIT_S)
    frames = json.loads(read("c1.out"))["frames"]

    def final():
        d = api(port, "/api/data?window=0.1")
        i = api(port, "/api/info")
        if d and d["state"] == "ended":
            return dict(zip(i["counters"], d["counters"]))
        return None

    c = wait_for(final, "ended")
    check("it ended: the state says so, loop.frames is the circle's own %d" % frames,
          c and c.get("loop.frames") == frames, c and c.get("loop.frames"))

    c2 = circle("c2", 30)
    ok = wait_for(lambda: (api(port, "/api/info") or {}).get("generation") == 2
                  and (api(port, "/api/data?window=0.1") or {}).get("state") == "running",
                  "generation 2")
    check("a second loop under the same name is followed: generation 2, running", ok,
          api(port, "/api/info"))
    time.sleep(0.3)  # a few records, then the producer dies without ending
    c2.send_signal(signal.SIGKILL)
    c2.wait(WAIT_S)
    ok = wait_for(lambda: (api(port, "/api/data?window=0.1") or {}).get("state") == "gone", "gone")
    check("a loop killed with SIGKILL is shown as gone", ok, api(port, "/api/data?window=0.1"))
    try:
        os.unlink("/dev/shm/rtloop-" + name)  # what the killed producer left
    except FileNotFoundError:
        pass
    view.send_signal(signal.SIGTERM)
    view.wait(WAIT_S)
    check("rtloop-view exits 0 on SIGTERM", view.returncode == 0, read("view.err"))
    sim.send_signal(signal.SIGTERM)
    sim.wait(WAIT_S)


try:
    main()
finally:
    H.cleanup()
H.finish()
