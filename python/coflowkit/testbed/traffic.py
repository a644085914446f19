"""Real TCP transfers for the testbed's checks, run inside a host namespace:

    python -m coflowkit.testbed.traffic sink --port P [--timeout S]
    python -m coflowkit.testbed.traffic source --dst IP --port P --seconds S [--tos T]

The source sends pseudo-random bytes for S seconds and prints
``{"bytes", "sha256"}``; the sink takes one connection, hashes what arrives
and prints ``{"bytes", "sha256", "samples"}``, samples being [wall-clock
seconds, bytes so far] every 20 ms (the clock is shared by all namespaces).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import random
import socket
import sys
import time


def _sink(port: int, timeout: float) -> dict[str, object]:
    srv = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    srv.bind(("0.0.0.0", port))
    srv.listen(1)
    srv.settimeout(timeout)
    conn, _ = srv.accept()
    conn.settimeout(timeout)
    h = hashlib.sha256()
    total = 0
    samples: list[list[float]] = []
    next_sample = 0.0
    buf = bytearray(1 << 18)
    view = memoryview(buf)
    while True:
        n = conn.recv_into(buf)
        if n == 0:
            break
        h.update(view[:n])
        total += n
        now = time.time()
        if now >= next_sample:
            samples.append([now, total])
            next_sample = now + 0.02
    samples.append([time.time(), total])
    conn.close()
    return {"bytes": total, "sha256": h.hexdigest(), "samples": samples}


def _source(dst: str, port: int, seconds: float, tos: int, cc: str = "", src_port: int = 0) -> dict[str, object]:
    deadline = time.monotonic() + 10.0
    while True:
        s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        if src_port:
            s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            s.bind(("0.0.0.0", src_port))
        if tos:
            s.setsockopt(socket.IPPROTO_IP, socket.IP_TOS, tos)
        if cc:
            s.setsockopt(socket.IPPROTO_TCP, socket.TCP_CONGESTION, cc.encode())
        try:
            s.connect((dst, port))
            break
        except OSError:
            s.close()
            if time.monotonic() > deadline:
                raise
            time.sleep(0.05)
    rng = random.Random(port)
    blocks = [rng.randbytes(1 << 16) for _ in range(4)]
    h = hashlib.sha256()
    total = 0
    end = time.monotonic() + seconds
    k = 0
    while time.monotonic() < end:
        b = blocks[k % 4]
        s.sendall(b)
        h.update(b)
        total += len(b)
        k += 1
    s.shutdown(socket.SHUT_WR)
    s.recv(1)  # wait for the sink to close: every byte was taken
    s.close()
    return {"bytes": total, "sha256": h.hexdigest()}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="coflowkit.testbed.traffic")
    sub = ap.add_subparsers(dest="cmd", required=True)
    a = sub.add_parser("sink")
    a.add_argument("--port", type=int, required=True)
    a.add_argument("--timeout", type=float, default=30.0)
    b = sub.add_parser("source")
    b.add_argument("--dst", required=True)
    b.add_argument("--port", type=int, required=True)
    b.add_argument("--seconds", type=float, required=True)
    b.add_argument("--tos", type=int, default=0)
    b.add_argument("--cc", default="", help="TCP congestion control (TCP_CONGESTION), e.g. cubic")
    b.add_argument("--src-port", type=int, default=0, help="the local port (0: the kernel's choice)")
    args = ap.parse_args(argv)
    sink = args.cmd == "sink"
    out = _sink(args.port, args.timeout) if sink else _source(
        args.dst, args.port, args.seconds, args.tos, args.cc, args.src_port
    )
    json.dump(out, sys.stdout)
    return 0


if __name__ == "__main__":
    sys.exit(main())
