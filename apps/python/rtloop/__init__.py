# SPDX-License-Identifier: MIT
"""rtloop for Python: receive, record, simulate and run slow control loops.

The real-time parts (the receive thread, the loop, the watchdog, the
simulator) are rtloop's C code; Python talks to them without ever sitting
on the receive thread's path. docs/python.md is the manual.
"""
from ._rtloop import Error, __version__
from ._rtloop import DEFAULT_FIELDS, Control, Receive, Request

__all__ = ["Error", "__version__"]
__all__ += ["DEFAULT_FIELDS", "Receive", "Control", "Request"]

# The motion API (speedl_rt family) over UDP, RTDE or DRFL (docs/python.md).
from ._rtloop import TRANSPORTS, Motion  # noqa: E402

__all__ += ["TRANSPORTS", "Motion"]

# The simulator for tests: rtde-sim in-process (docs/python.md).
from ._rtloop import Sim  # noqa: E402

__all__ += ["Sim"]

# Telemetry: a running loop's records, counters and histograms (docs/telemetry.md).
from ._rtloop import Telemetry  # noqa: E402

__all__ += ["Telemetry"]

# Recordings: rtde-record's files as NumPy arrays (docs/python.md).
from ._rtloop import Recording, RecordingError, TruncatedRecording, read_recording  # noqa: E402

__all__ += ["Recording", "RecordingError", "TruncatedRecording", "read_recording"]

# Several arms and force/torque sensors in one rig, receive only (docs/rig.md).
from ._rtloop import Rig  # noqa: E402

__all__ += ["Rig"]
