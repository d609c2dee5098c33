# SPDX-License-Identifier: MIT
"""The plumbing the Python app tests share (tests/apps/test-view-*.py): TAP
results, the processes a test starts (their output in a scratch folder,
killed at the end), and bounded polling."""
import os
import shutil
import subprocess
import sys
import tempfile
import time


class Harness:
    def __init__(self, prefix, wait_s=20):
        self.tmp = tempfile.mkdtemp(prefix=prefix)
        self.procs = []
        self.wait_s = wait_s
        self.n = 0
        self.failed = 0

    def check(self, desc, cond, evidence=""):
        """One TAP result; the evidence (first 20 lines) under a failure."""
        self.n += 1
        print(("ok %d - %s" if cond else "not ok %d - %s") % (self.n, desc))
        if not cond:
            self.failed += 1
            for line in str(evidence).splitlines()[:20]:
                print("#   " + line)
        sys.stdout.flush()
        return cond

    def start(self, args, name):
        """Start args with stdout and stderr in NAME.out and NAME.err."""
        p = subprocess.Popen(args, stdout=open(os.path.join(self.tmp, name + ".out"), "w"),
                             stderr=open(os.path.join(self.tmp, name + ".err"), "w"))
        self.procs.append(p)
        return p

    def read(self, name):
        with open(os.path.join(self.tmp, name)) as f:
            return f.read()

    def wait_for(self, fn, what, timeout=None):
        """Poll fn() until it returns a true value (bounded); returns it or None."""
        end = time.monotonic() + (self.wait_s if timeout is None else timeout)
        while time.monotonic() < end:
            v = fn()
            if v:
                return v
            time.sleep(0.05)
        print("# timed out waiting for " + what)
        return None

    def cleanup(self):
        """Kill what still runs, remove the scratch folder."""
        for p in self.procs:
            if p.poll() is None:
                p.kill()
                p.wait()
        shutil.rmtree(self.tmp, ignore_errors=True)

    def finish(self):
        """Print the plan; exit 1 if a result failed."""
        print("1..%d" % self.n)
        sys.exit(1 if self.failed else 0)
