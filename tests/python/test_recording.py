# SPDX-License-Identifier: MIT
"""rtloop.read_recording: real files from the built rtde-record
(RTLOOP_RECORD) recording an in-process rtloop.Sim with skips injected, so
both are tested: the values against what the simulator sent (timestamps in
steps of its period, the lost column against its skip rule and its report),
then cut and corrupted copies for every error. Every wait has a deadline."""
import errno
import math
import os
import pathlib
import signal
import struct
import subprocess
import sys
import time

import numpy as np
import pytest

import rtloop

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "common"))
import simrule  # noqa: E402  (rtde-sim's cycle numbering and skip rule)

RECORD = os.environ.get("RTLOOP_RECORD")
DEADLINE = 20.0
SKIP_EVERY, SKIP_COUNT = 50, 2
ROWS = 400
# One field of every RTDE value type the registry's outputs have, and a
# scalar whose name ends in _0 (not a vector's first element).
FIELDS = [
    ("timestamp", "float64", ()),
    ("actual_q", "float64", (6,)),
    ("actual_tool_accelerometer", "float64", (3,)),
    ("joint_mode", "int32", (6,)),
    ("robot_mode", "int32", ()),
    ("runtime_state", "uint32", ()),
    ("actual_digital_output_bits", "uint64", ()),
    ("control_step", "uint64", ()),
    ("tool_output_mode", "uint8", ()),
    ("output_bit_register_64", "bool", ()),
    ("input_double_register_0", "float64", ()),
]
Q0 = [0.0, -math.pi / 2, math.pi / 2, -math.pi / 2, -math.pi / 2, 0.0]

needs_record = pytest.mark.skipif(not RECORD, reason="RTLOOP_RECORD (rtde-record) is not set")


def record(sim, out, *extra, samples=ROWS):
    cmd = [RECORD, "--host", sim.host, "--port", str(sim.port), "--frequency", "500",
           "--fields", ",".join(f for f, _, _ in FIELDS), "-o", str(out), *extra]
    if samples:
        cmd += ["--samples", str(samples)]
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=DEADLINE)
    assert p.returncode == 0, p.stderr
    return p


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    """A CSV and a binary recording, each of its own simulator (so each
    report counts one client), and the binary's --dump."""
    if not RECORD:
        pytest.skip("RTLOOP_RECORD (rtde-record) is not set")
    d = tmp_path_factory.mktemp("rec")
    out = {}
    for kind, name, extra in (("csv", "run.csv", []), ("binary", "run.rtlrec", ["--binary"])):
        with rtloop.Sim(faults={"skip_every": SKIP_EVERY, "skip_count": SKIP_COUNT}) as sim:
            record(sim, d / name, *extra)
            period, port = sim.period, sim.port
        out[kind] = {"path": d / name, "report": sim.report(), "period": period, "port": port}
    subprocess.run([RECORD, "--dump", str(d / "run.rtlrec"), "-o", str(d / "dump.csv")],
                   check=True, capture_output=True, timeout=DEADLINE)
    out["dump"] = d / "dump.csv"
    out["dir"] = d
    return out


@pytest.fixture(params=["csv", "binary"])
def kind(request):
    return request.param


# ---- what the file holds -------------------------------------------------------------------


def test_fields_dtypes_and_shapes(files, kind):
    rec = rtloop.read_recording(files[kind]["path"])
    extra = ["host_time_ns", "lost"] + (["seq", "ctrl_skipped", "dropped"] if kind == "binary"
                                        else [])
    assert rec.fields == tuple(f for f, _, _ in FIELDS) + tuple(extra)
    assert len(rec) == ROWS and rec.format == kind and not rec.truncated
    for name, dtype, shape in FIELDS:
        a = rec[name]
        assert isinstance(a, np.ndarray) and a.dtype == np.dtype(dtype), (name, a.dtype)
        assert a.shape == (ROWS,) + shape, (name, a.shape)
    assert rec["host_time_ns"].dtype == np.int64 and rec["lost"].dtype == np.uint64
    assert rec.meta["recipe"] == [f for f, _, _ in FIELDS]
    assert rec.meta["types"]["actual_q"] == "VECTOR6D"
    assert rec.meta["types"]["output_bit_register_64"] == "BOOL"


def test_values_are_what_the_simulator_sent(files, kind):
    rec = rtloop.read_recording(files[kind]["path"])
    period = files[kind]["period"]
    ts, lost = rec["timestamp"], rec["lost"]
    # Timestamps in whole periods; each step one period plus the rows lost.
    steps = np.diff(ts) / period
    assert np.allclose(steps, np.rint(steps), atol=1e-6)
    assert np.array_equal(np.rint(steps).astype(np.uint64), lost[1:] + 1)
    assert lost[0] == 0
    # control_step is timestamp / period, exactly (docs/rtde-sim.md).
    assert np.array_equal(rec["control_step"], np.rint(ts / period).astype(np.uint64))
    # The arm at rest at the simulator's initial pose.
    assert np.array_equal(rec["actual_q"], np.tile(Q0, (ROWS, 1)))
    assert np.all(np.diff(rec["host_time_ns"]) >= 0)


def test_the_lost_column_is_the_simulators_skips(files, kind):
    rec = rtloop.read_recording(files[kind]["path"])
    report, period = files[kind]["report"], files[kind]["period"]
    hz = round(1 / period)
    cycles = [simrule.cycle(t, hz) for t in rec["timestamp"]]
    rule = simrule.skips_between(cycles[0] + 1, cycles[-1] - 1, SKIP_EVERY, SKIP_COUNT)
    total = int(rec["lost"].sum())
    assert rule > 0
    # Beside the injected skips, only cycles the host stalled past the
    # catch-up limit are missing (counted as overruns, none on a quiet host).
    assert rule <= total <= rule + report["stats"]["overruns"], (total, rule, report["stats"])
    # The simulator's own count: every skip while the client was started,
    # those between the rows and at most a group before and after them.
    skipped = report["injected"]["skipped_packages"]
    assert total - report["stats"]["overruns"] <= skipped <= total + 2 * SKIP_COUNT, (
        skipped, total)
    assert report["faults"]["skip_every"] == SKIP_EVERY


def test_binary_bookkeeping_columns(files):
    rec = rtloop.read_recording(files["binary"]["path"])
    assert np.array_equal(rec["seq"], np.arange(ROWS, dtype=np.uint64))
    assert not rec["dropped"].any()
    assert np.array_equal(rec["lost"], rec["ctrl_skipped"] + rec["dropped"])


def test_binary_meta_is_the_header(files):
    m = rtloop.read_recording(files["binary"]["path"]).meta
    assert m["format"] == "binary" and m["host"] == "127.0.0.1"
    assert m["port"] == files["binary"]["port"]
    assert m["controller"] == "5.26.0.0" and m["frequency"] == 500.0
    assert m["period_ns"] == 2_000_000 and m["values_offset"] == 32
    assert m["rows"] == ROWS and m["header_bytes"] > 0


def test_the_binary_file_and_its_dump_read_the_same(files):
    b = rtloop.read_recording(files["binary"]["path"])
    c = rtloop.read_recording(files["dump"])
    assert c.format == "csv" and len(c) == len(b)
    for name in c.fields:
        assert np.array_equal(c[name], b[name]), name


def test_path_like_and_bytes_paths(files):
    p = files["csv"]["path"]
    for arg in (str(p), pathlib.Path(p), os.fsencode(str(p))):
        assert len(rtloop.read_recording(arg)) == ROWS


def test_the_arrays_are_ordinary_writable_arrays(files):
    rec = rtloop.read_recording(files["binary"]["path"])
    q = rec["actual_q"]
    assert q.flags["C_CONTIGUOUS"] and q.flags["WRITEABLE"] and q.flags["OWNDATA"]
    q[:] = 1.0
    del rec
    assert q.sum() == 6 * ROWS


@needs_record
def test_csv_without_the_extra_columns(tmp_path):
    with rtloop.Sim() as sim:
        record(sim, tmp_path / "plain.csv", "--no-extra-columns", samples=20)
    rec = rtloop.read_recording(tmp_path / "plain.csv")
    assert rec.fields == tuple(f for f, _, _ in FIELDS) and len(rec) == 20
    assert rec.meta["extra_columns"] is False and "lost" not in rec


@needs_record
@pytest.mark.parametrize("binary", [False, True])
def test_the_partial_file_of_a_killed_recorder_reads(tmp_path, binary):
    out = tmp_path / ("killed.rtlrec" if binary else "killed.csv")
    partial = pathlib.Path(str(out) + ".partial")
    with rtloop.Sim() as sim:
        cmd = [RECORD, "--host", sim.host, "--port", str(sim.port), "--frequency", "500",
               "--fields", "timestamp,actual_q", "-o", str(out)] + (["--binary"] if binary else [])
        p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            deadline = time.monotonic() + DEADLINE
            # Written at least every 100 ms: wait for a few kB of rows.
            while time.monotonic() < deadline and (
                    not partial.exists() or partial.stat().st_size < 4096):
                assert p.poll() is None, "rtde-record ended by itself"
                time.sleep(0.02)
            assert partial.exists() and partial.stat().st_size >= 4096
        finally:
            p.send_signal(signal.SIGKILL)
            p.wait(DEADLINE)
    assert not out.exists()
    try:
        rec = rtloop.read_recording(partial)
    except rtloop.TruncatedRecording:
        # The one window docs/rtde-record.md names: a write cut at a page.
        rec = rtloop.read_recording(partial, partial_ok=True)
    assert len(rec) > 10
    assert np.all(np.diff(rec["timestamp"]) > 0)


# ---- cut files -----------------------------------------------------------------------------


def row_starts(path, kind):
    """Byte offset of every row, and the end of the last."""
    data = pathlib.Path(path).read_bytes()
    if kind == "csv":
        starts = [data.index(b"\n") + 1]
        while starts[-1] < len(data):
            starts.append(data.index(b"\n", starts[-1]) + 1)
        return data, starts
    hdr = data.index(b"\nend\n") + 5
    size = rtloop.read_recording(path).meta["record_size"]
    return data, list(range(hdr, len(data) + 1, size))


@pytest.mark.parametrize("into", [1, 7])
def test_a_cut_last_row_names_the_row_and_the_offset(files, kind, tmp_path, into):
    data, starts = row_starts(files[kind]["path"], kind)
    cut_row = 250  # 1-based: the row the file ends inside
    offset = starts[cut_row - 1]
    path = tmp_path / ("cut." + kind)
    path.write_bytes(data[:offset + into])
    with pytest.raises(rtloop.TruncatedRecording) as e:
        rtloop.read_recording(path)
    err = e.value
    assert isinstance(err, rtloop.RecordingError) and isinstance(err, rtloop.Error)
    assert err.errno == errno.EBADMSG and err.filename == str(path)
    assert err.row == cut_row and err.offset == offset and err.rows == cut_row - 1
    assert f"row {cut_row}" in str(err) and f"byte offset {offset}" in str(err)
    assert "partial_ok=True" in str(err)
    rec = rtloop.read_recording(path, partial_ok=True)
    full = rtloop.read_recording(files[kind]["path"])
    assert rec.truncated and len(rec) == cut_row - 1
    for name in rec.fields:
        assert np.array_equal(rec[name], full[name][:cut_row - 1]), name


def test_a_file_cut_on_a_row_boundary_is_whole(files, kind, tmp_path):
    data, starts = row_starts(files[kind]["path"], kind)
    path = tmp_path / ("boundary." + kind)
    path.write_bytes(data[:starts[100]])
    rec = rtloop.read_recording(path)
    assert len(rec) == 100 and not rec.truncated


def test_a_header_without_rows_is_an_empty_recording(files, kind, tmp_path):
    data, starts = row_starts(files[kind]["path"], kind)
    path = tmp_path / ("header-only." + kind)
    path.write_bytes(data[:starts[0]])
    rec = rtloop.read_recording(path)
    assert len(rec) == 0 and rec["actual_q"].shape == (0, 6) and rec["timestamp"].shape == (0,)


@pytest.mark.parametrize("cut", [3, 20, -3])
def test_a_file_cut_inside_its_header_is_malformed(files, kind, tmp_path, cut):
    data, starts = row_starts(files[kind]["path"], kind)
    path = tmp_path / ("cut-header." + kind)
    path.write_bytes(data[:cut if cut > 0 else starts[0] + cut])
    with pytest.raises(rtloop.RecordingError) as e:
        rtloop.read_recording(path, partial_ok=True)
    assert not isinstance(e.value, rtloop.TruncatedRecording)
    assert e.value.errno in (errno.EBADMSG, errno.ENOMSG), e.value
    assert "cut short" in str(e.value) or "end" in str(e.value), str(e.value)


# ---- corrupt and foreign files ---------------------------------------------------------


def test_a_corrupt_cell_names_the_row_column_and_offset(files, tmp_path):
    data, starts = row_starts(files["csv"]["path"], "csv")
    line = data[starts[9]:starts[10]].split(b" ")
    line[3] = b"abc"  # actual_q_2
    bad = data[:starts[9]] + b" ".join(line) + data[starts[10]:]
    path = tmp_path / "corrupt.csv"
    path.write_bytes(bad)
    for partial_ok in (False, True):
        with pytest.raises(rtloop.RecordingError) as e:
            rtloop.read_recording(path, partial_ok=partial_ok)
        err = e.value
        assert not isinstance(err, rtloop.TruncatedRecording)
        assert err.errno == errno.EBADMSG and err.row == 10 and err.offset == starts[9]
        assert "actual_q_2" in str(err) and "'abc'" in str(err) and "line 11" in str(err)


@pytest.mark.parametrize("edit,words", [
    (lambda cells: cells[:-1], ["cells", "the header has"]),
    (lambda cells: cells + [b"7"], ["cells", "the header has"]),
    (lambda cells: [cells[0]] + [b"-1"] + cells[2:], []),  # a double: -1 is fine
    (lambda cells: cells[:4] + [b"1e999999"] + cells[5:], []),  # strtod: inf
    (lambda cells: cells[:17] + [b"-3"] + cells[18:], ["runtime_state", "UINT32"]),
    (lambda cells: cells[:17] + [b"4294967296"] + cells[18:], ["runtime_state"]),
    (lambda cells: cells[:16] + [b"2147483648"] + cells[17:], ["robot_mode", "INT32"]),
    (lambda cells: cells[:21] + [b"2"] + cells[22:], ["output_bit_register_64", "BOOL"]),
    (lambda cells: cells[:20] + [b"256"] + cells[21:], ["tool_output_mode", "UINT8"]),
    (lambda cells: cells[:-1] + [b"-1"], ["lost", "'-1'"]),
    (lambda cells: cells[:-2] + [b"1.5", cells[-1]], ["host_time_ns", "'1.5'"]),
])
def test_bad_cells_are_refused_exactly(files, tmp_path, edit, words):
    data, starts = row_starts(files["csv"]["path"], "csv")
    cells = data[starts[4]:starts[5] - 1].split(b" ")
    assert len(cells) == 25
    path = tmp_path / "edited.csv"
    new = b" ".join(edit(cells)) + b"\n"
    path.write_bytes(data[:starts[4]] + new + data[starts[5]:])
    if not words:
        assert len(rtloop.read_recording(path)) == ROWS
        return
    with pytest.raises(rtloop.RecordingError) as e:
        rtloop.read_recording(path)
    assert e.value.row == 5
    for w in words:
        assert w in str(e.value), (w, str(e.value))


def test_a_binary_header_that_does_not_add_up_is_malformed(files, tmp_path):
    data = pathlib.Path(files["binary"]["path"]).read_bytes()
    path = tmp_path / "bad.rtlrec"
    path.write_bytes(data.replace(b"record_size 176\n", b"record_size 184\n", 1))
    with pytest.raises(rtloop.RecordingError) as e:
        rtloop.read_recording(path)
    assert e.value.errno == errno.EBADMSG and "record_size" in str(e.value)


@pytest.mark.parametrize("content", [
    b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00",
    b"hello world\n",
    b'{"program": "rtde-sim"}\n',
    b"a b c\n1 2 3\n",  # a CSV, but no timestamp: not rtde-record's
    b"\x00" * 100,
    b"x" * (2 << 20),  # no newline in the first MiB
])
def test_a_foreign_file_is_not_a_recording(tmp_path, content):
    path = tmp_path / "foreign"
    path.write_bytes(content)
    with pytest.raises(rtloop.RecordingError) as e:
        rtloop.read_recording(path)
    assert e.value.errno == errno.ENOMSG
    assert str(e.value).startswith(f"[Errno {errno.ENOMSG}] not an rtde-record file: starts "
                                   "with b")
    assert repr(content[:8])[2:-1] in str(e.value)


def test_an_empty_file(tmp_path):
    path = tmp_path / "empty.csv"
    path.write_bytes(b"")
    with pytest.raises(rtloop.RecordingError) as e:
        rtloop.read_recording(path)
    assert e.value.errno == errno.ENODATA and "empty" in str(e.value)


# ---- files written by hand: the formats, not the writer -------------------------------------


def test_a_record_py_style_csv_reads(tmp_path):
    path = tmp_path / "recordpy.csv"
    path.write_bytes(b"timestamp actual_q_0 actual_q_1 actual_q_2 actual_q_3 actual_q_4 "
                     b"actual_q_5 output_bit_register_64\r\n"
                     b"1.5 0.0 1.0 2.0 3.0 4.0 5.0 True\r\n"
                     b"1.502 nan inf -inf 1e-05 1e+16 -0.0 False\r\n")
    rec = rtloop.read_recording(path)
    assert rec.fields == ("timestamp", "actual_q", "output_bit_register_64")
    assert rec["timestamp"].tolist() == [1.5, 1.502]
    assert rec["actual_q"][0].tolist() == [0.0, 1.0, 2.0, 3.0, 4.0, 5.0]
    q = rec["actual_q"][1]
    assert math.isnan(q[0]) and q[1] == math.inf and q[2] == -math.inf and q[3] == 1e-05
    assert rec["output_bit_register_64"].tolist() == [True, False]


def test_uint64_and_int64_cells_are_exact_past_2_to_the_53(tmp_path):
    path = tmp_path / "big.csv"
    path.write_bytes(b"timestamp actual_digital_output_bits host_time_ns lost\n"
                     b"1.0 18446744073709551615 -9223372036854775808 18446744073709551615\n")
    rec = rtloop.read_recording(path)
    assert int(rec["actual_digital_output_bits"][0]) == 2 ** 64 - 1
    assert int(rec["host_time_ns"][0]) == -2 ** 63 and int(rec["lost"][0]) == 2 ** 64 - 1


def test_an_unknown_column_reads_as_a_double_and_a_half_vector_is_refused(tmp_path):
    path = tmp_path / "unknown.csv"
    path.write_bytes(b"timestamp future_field\n1.0 2.5\n")
    rec = rtloop.read_recording(path)
    assert rec["future_field"].dtype == np.float64 and rec["future_field"][0] == 2.5
    path.write_bytes(b"timestamp actual_q_0 actual_q_1\n1.0 2.0 3.0\n")
    with pytest.raises(rtloop.RecordingError) as e:
        rtloop.read_recording(path)
    assert e.value.errno == errno.EBADMSG and "actual_q" in str(e.value)


def binary_file(values_offset=32, rows=((0, 100, 0, 0, 42.0, 7), (1, 200, 3, 1, 42.008, 8))):
    """A binary recording written from docs/rtde-record.md, not by rtde-record."""
    rs = values_offset + 16
    hdr = (b"RTLREC1\n# by hand\nendian little\nhost -\nport 30004\ncontroller 3.15.8.0\n"
           b"frequency 125\nperiod_ns 8000000\n" +
           f"record_size {rs}\nvalues_offset {values_offset}\nvalues_size 12\nfields 2\n"
           .encode() + b"field timestamp DOUBLE 0\nfield robot_mode INT32 8\nend\n")
    body = b""
    for seq, rx, skipped, dropped, ts, mode in rows:
        counts = (struct.pack("<QQ", skipped, dropped) if values_offset == 32
                  else struct.pack("<II", skipped, dropped))
        body += struct.pack("<Qq", seq, rx) + counts + struct.pack("<di", ts, mode) + b"\0" * 4
    return hdr + body


@pytest.mark.parametrize("values_offset", [32, 24])
def test_a_binary_file_by_hand_in_both_layouts(tmp_path, values_offset):
    path = tmp_path / "hand.rtlrec"
    path.write_bytes(binary_file(values_offset))
    rec = rtloop.read_recording(path)
    assert rec.fields == ("timestamp", "robot_mode", "host_time_ns", "lost", "seq",
                          "ctrl_skipped", "dropped")
    assert rec["timestamp"].tolist() == [42.0, 42.008]
    assert rec["robot_mode"].tolist() == [7, 8] and rec["host_time_ns"].tolist() == [100, 200]
    assert rec["lost"].tolist() == [0, 4] and rec["ctrl_skipped"].tolist() == [0, 3]
    assert rec.meta["host"] is None and rec.meta["controller"] == "3.15.8.0"
    assert rec.meta["values_offset"] == values_offset and rec.meta["period_ns"] == 8_000_000


# ---- bad arguments: exceptions, never a crash ----------------------------------------------


def test_a_missing_file():
    with pytest.raises(FileNotFoundError):
        rtloop.read_recording("/nonexistent/run.csv")


def test_a_directory(tmp_path):
    with pytest.raises(IsADirectoryError):
        rtloop.read_recording(tmp_path)


def test_a_device_is_not_read():
    with pytest.raises(rtloop.Error) as e:
        rtloop.read_recording("/dev/zero")
    assert e.value.errno == errno.EINVAL and "regular file" in str(e.value)


@pytest.mark.parametrize("arg,exc", [
    (None, TypeError), (3, TypeError), (3.5, TypeError), (["a"], TypeError),
    ("a\0b", ValueError), (b"a\0b", ValueError),
])
def test_bad_paths(arg, exc):
    with pytest.raises(exc):
        rtloop.read_recording(arg)


def test_bad_calls():
    with pytest.raises(TypeError):
        rtloop.read_recording()
    with pytest.raises(TypeError):
        rtloop.read_recording("x", True)  # partial_ok is keyword-only
    with pytest.raises(TypeError):
        rtloop.read_recording("x", nonsense=1)
    with pytest.raises(TypeError):
        rtloop.Recording()


def test_recording_misuse(tmp_path):
    path = tmp_path / "hand.rtlrec"
    path.write_bytes(binary_file())
    rec = rtloop.read_recording(path)
    with pytest.raises(KeyError, match="timestamp, robot_mode"):
        rec["nope"]
    with pytest.raises(TypeError):
        rec[0]
    with pytest.raises(TypeError):
        rec[None]
    assert "timestamp" in rec and "nope" not in rec and 0 not in rec
    assert list(rec) == list(rec.fields) == rec.keys()
    for attr in ("fields", "meta", "path", "format", "truncated"):
        with pytest.raises(AttributeError):
            setattr(rec, attr, None)
    assert "2 rows" in repr(rec)


# ---- nothing crashes: every cut, random damage, threads --------------------------------------


def small_csv():
    return (b"timestamp actual_q_0 actual_q_1 actual_q_2 actual_q_3 actual_q_4 actual_q_5 "
            b"robot_mode host_time_ns lost\n" +
            b"".join(b"42.%03d 0.0 -1.5 1.5 -1.5 -1.5 0.0 7 %d 0\n" % (2 * i, 1000 + i)
                     for i in range(5)))


@pytest.mark.parametrize("make", [small_csv, binary_file])
def test_every_cut_of_a_small_file_reads_or_raises_a_recording_error(tmp_path, make):
    data = make()
    path = tmp_path / "cut"
    path.write_bytes(data)
    rows = len(rtloop.read_recording(path))
    whole = 0
    for n in range(len(data) + 1):
        path.write_bytes(data[:n])
        for partial_ok in (False, True):
            try:
                rec = rtloop.read_recording(path, partial_ok=partial_ok)
                assert len(rec) <= rows and (partial_ok or not rec.truncated)
                whole += not rec.truncated
            except rtloop.RecordingError as e:
                assert e.errno in (errno.ENODATA, errno.ENOMSG, errno.EBADMSG), e
                assert not (partial_ok and isinstance(e, rtloop.TruncatedRecording))
    assert whole == 2 * (rows + 1)  # the header alone and each whole row, either flag


def test_random_damage_reads_or_raises_a_recording_error(files, kind, tmp_path):
    rng = np.random.default_rng(16)
    data = bytearray(pathlib.Path(files[kind]["path"]).read_bytes())
    path = tmp_path / "damaged"
    for _ in range(150):
        d = bytearray(data)
        for pos in rng.integers(0, len(d), size=int(rng.integers(1, 8))):
            d[pos] = int(rng.integers(0, 256))
        if rng.random() < 0.3:
            del d[int(rng.integers(0, len(d))):]
        path.write_bytes(bytes(d))
        try:
            rec = rtloop.read_recording(path, partial_ok=bool(rng.random() < 0.5))
            assert len(rec) <= ROWS + 1 and rec["timestamp"].shape[0] == len(rec)
        except rtloop.RecordingError:
            pass


def test_names_and_messages_that_are_not_utf8(tmp_path):
    path = tmp_path / "latin1.rtlrec"
    path.write_bytes(binary_file().replace(b"field robot_mode", b"field r\xe9bot"))
    rec = rtloop.read_recording(path)
    assert "r\\xe9bot" in rec.fields
    path.write_bytes(binary_file().replace(b"host -", b"host \xff"))
    assert rtloop.read_recording(path).meta["host"] == "\\xff"
    path = tmp_path / "latin1.csv"
    path.write_bytes(b"timestamp\n\xe9\n")
    with pytest.raises(rtloop.RecordingError, match=r"\\xe9"):
        rtloop.read_recording(path)


def test_a_field_twice_in_a_binary_header(tmp_path):
    path = tmp_path / "twice.rtlrec"
    path.write_bytes(binary_file().replace(b"field robot_mode INT32", b"field timestamp INT32"))
    with pytest.raises(rtloop.RecordingError, match="timestamp twice") as e:
        rtloop.read_recording(path)
    assert e.value.errno == errno.EBADMSG


def test_reads_from_threads_at_once(files):
    import concurrent.futures as cf
    paths = [files["csv"]["path"], files["binary"]["path"]] * 8
    with cf.ThreadPoolExecutor(4) as ex:
        lens = list(ex.map(lambda p: len(rtloop.read_recording(p)), paths))
    assert lens == [ROWS] * len(paths)


def test_a_numpy_stand_in_is_refused_not_overrun(files, monkeypatch):
    class FakeNumpy:
        @staticmethod
        def empty(shape, dtype):
            return bytearray(1)  # a writable buffer of the wrong size

    monkeypatch.setitem(sys.modules, "numpy", FakeNumpy)
    with pytest.raises(RuntimeError, match="another size"):
        rtloop.read_recording(files["binary"]["path"])


def test_without_numpy_read_recording_says_so(files, monkeypatch):
    monkeypatch.setitem(sys.modules, "numpy", None)
    with pytest.raises(ImportError):
        rtloop.read_recording(files["csv"]["path"])
