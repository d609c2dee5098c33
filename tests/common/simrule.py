# SPDX-License-Identifier: MIT
"""rtde-sim's ground truth for the scripts that check counts against it
(tests/apps/fault-matrix.py, tests/soak/soak.py): its cycle numbering and
its skip rule (apps/rtde-sim/sim.c: with --skip-every N --skip-count K,
cycle k is skipped when k % N >= N - K; skipped packages are never resent).
"""

START = 42.0  # rtde-sim's default --start-time: the timestamp of cycle 0


def cycle(ts, hz, start=START):
    """The cycle number of timestamp ts at hz."""
    return int(round((ts - start) * hz))


def skips_between(a, b, n, k):
    """Cycles in [a, b] the simulator skips with --skip-every n --skip-count k."""
    if not n or b < a:
        return 0

    def upto(x):  # skipped cycles in [0, x)
        full, rest = divmod(x, n)
        return full * k + max(0, rest - (n - k))

    return upto(b + 1) - upto(a)
