# SPDX-License-Identifier: MIT
"""A hostile RTDE controller for rtde-record's tests (python3, stdlib only).

It listens on an ephemeral loopback port, prints "listening on
127.0.0.1:PORT" on stderr, serves one client and exits. The handshake is
protocol 2 (docs/rtde-protocol.md 3.2-3.7) as a 5.26 controller answers it;
then MODE decides what goes wrong:

  stall               START accepted, then no data package at all
  stall-after N       N good packages, then silence
  wrong-size N        N data packages one byte short, then silence
  mixed N K           N good packages; every (N // K)-th is one byte short
  jump N S            N good packages, the timestamp jumps S seconds after
                      the first half
  text N              a TEXT_MESSAGE with escapes, CR, BEL and a fake
                      "rtde-record:" line, then N good packages
  close-at STEP       close on receiving STEP (V, v, O or S) instead of
                      answering it
  stream N            N good packages, then close

Good packages come every 2 ms (500 Hz; wrong-size ones back to back), timestamp +0.002 s each. Fields:
timestamp (DOUBLE), robot_mode (INT32), actual_q (VECTOR6D); any other
name is answered NOT_FOUND. Every wait is bounded (--linger, default 20 s).
"""
import socket
import struct
import sys
import time

TYPES = {"timestamp": ("DOUBLE", "d"), "robot_mode": ("INT32", "i"),
         "actual_q": ("VECTOR6D", "6d")}


def pkg(kind, payload=b""):
    return struct.pack(">HB", 3 + len(payload), ord(kind)) + payload


def read_pkg(conn):
    head = b""
    while len(head) < 3:
        chunk = conn.recv(3 - len(head))
        if not chunk:
            return None, b""
        head += chunk
    size, kind = struct.unpack(">HB", head)
    body = b""
    while len(body) < size - 3:
        chunk = conn.recv(size - 3 - len(body))
        if not chunk:
            return None, b""
        body += chunk
    return chr(kind), body


def main():
    args = sys.argv[1:]
    linger = 20.0
    if "--linger" in args:
        i = args.index("--linger")
        linger = float(args[i + 1])
        del args[i:i + 2]
    mode, params = args[0], args[1:]
    srv = socket.socket()
    srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    srv.bind(("127.0.0.1", 0))
    srv.listen(1)
    srv.settimeout(linger)
    print("listening on 127.0.0.1:%d" % srv.getsockname()[1], file=sys.stderr, flush=True)
    conn, _ = srv.accept()
    conn.settimeout(linger)
    conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    fmt = ">"
    while True:
        kind, body = read_pkg(conn)
        if kind is None:
            return
        if mode == "close-at" and kind == params[0]:
            conn.close()
            return
        if kind == "V":
            conn.sendall(pkg("V", b"\x01"))
        elif kind == "v":
            conn.sendall(pkg("v", struct.pack(">IIII", 5, 26, 0, 0)))
        elif kind == "O":
            names = body[8:].decode().rstrip(",").split(",")
            types = [TYPES.get(n, ("NOT_FOUND", ""))[0] for n in names]
            fmt += "".join(TYPES.get(n, ("", ""))[1] for n in names)
            ok = "NOT_FOUND" not in types
            conn.sendall(pkg("O", bytes([1 if ok else 0]) + ",".join(types).encode()))
        elif kind == "S":
            conn.sendall(pkg("S", b"\x01"))
            break
    stream(conn, mode, params, fmt)
    # Silence (or the end of the stream): keep the connection open until the
    # client closes it, at most --linger seconds.
    if mode != "stream":
        conn.settimeout(linger)
        try:
            while conn.recv(4096):
                pass
        except OSError:
            pass
    conn.close()


def values(fmt, ts):
    n = struct.calcsize(fmt) - 8
    # The first field is the timestamp (the recorder puts it first); the
    # rest are zeros of the right size.
    return struct.pack(">d", ts) + b"\0" * n


def stream(conn, mode, params, fmt):
    if mode in ("stall", "close-at"):
        return
    n = int(params[0]) if params else 0
    if mode == "text":
        msg = b"\x1b[2Jcleared\rrtde-record: fake line\x07\nend\tx\x7f"
        conn.sendall(pkg("M", bytes([len(msg)]) + msg + b"\x09URControl\x02"))
    ts = 100.0
    start = time.monotonic()
    for i in range(n):
        due = start + i * 0.002
        delay = due - time.monotonic()
        if delay > 0 and mode != "wrong-size":
            time.sleep(delay)
        data = values(fmt, ts)
        if mode == "wrong-size" or (mode == "mixed" and i % (n // int(params[1])) == 5):
            data = data[:-1]
        conn.sendall(pkg("U", b"\x01" + data))
        ts += 0.002
        if mode == "jump" and i == n // 2:
            ts += float(params[1])


if __name__ == "__main__":
    main()
