"""OpenFlow latency through the Python `AgentClient`, shaped like the testbed's runtime sender (issue 11).

    PYTHONPATH=python .venv/bin/python bench/runtime_opens.py [--flows 100] [--bytes 262144] [--rounds 3]

Starts a coordinator (2 hosts at 1 Gbit/s, `--scheduler`, default `aalo`) and host 0's agent with the
runtime the extension carries (or the ``COFLOWKIT_RUNTIME`` binary), then, per round, `--flows`
Python threads of this one process (one `AgentClient`, as `coflowkit.testbed.replay.sender` has one per host) each
open a writer on a connected socket at once, send `--bytes` in 16 KiB slices with a CRC-32 of each (the sender's
loop) and close (`--at-once`: `writer(..., wait=False)`, which does not wait for the agent). Prints the latency
of opening (the call to `client.writer`, which holds no GIL while it waits for the agent, but takes the GIL back
after) and of closing, p50 / p99 / max over all rounds, and the whole round's time. No testbed needed.
"""

from __future__ import annotations

import argparse
import os
import socket
import statistics
import threading
import time
import zlib

from _runtime_cluster import one_host

from coflowkit import _core

_SLICE = 16 << 10


def _pct(xs: list[float], p: float) -> float:
    xs = sorted(xs)
    return xs[min(len(xs) - 1, max(0, int(len(xs) * p + 0.999999) - 1))]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--flows", type=int, default=100)
    ap.add_argument("--bytes", type=int, default=256 << 10)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--scheduler", default="aalo")
    ap.add_argument("--at-once", action="store_true", help="writer(..., wait=False): no wait for the agent")
    a = ap.parse_args()
    with one_host("1Gbps", a.scheduler) as sock:
        server = socket.create_server(("127.0.0.1", 0), backlog=4096)
        sink_port = server.getsockname()[1]

        def sink() -> None:
            while True:
                try:
                    conn, _ = server.accept()
                except OSError:
                    return

                def drain(c: socket.socket = conn) -> None:
                    with c:
                        while c.recv(1 << 16):
                            pass

                threading.Thread(target=drain, daemon=True).start()

        threading.Thread(target=sink, daemon=True).start()
        try:
            client = _core.AgentClient(str(sock))
            assert client.connected
            opens: list[float] = []
            closes: list[float] = []
            walls: list[float] = []
            block = os.urandom(_SLICE)
            for _ in range(a.rounds):
                coflow = client.register()
                conns = [socket.create_connection(("127.0.0.1", sink_port)) for _ in range(a.flows)]
                go = threading.Barrier(a.flows + 1)
                lock = threading.Lock()

                def flow(
                    s: socket.socket, coflow: int = coflow, go: threading.Barrier = go, lock: threading.Lock = lock
                ) -> None:
                    go.wait()
                    t = time.perf_counter()
                    w = client.writer(s, coflow, dst_host=1, size_hint=a.bytes, wait=not a.at_once)
                    t_open = time.perf_counter() - t
                    crc, n = 0, 0
                    while n < a.bytes:
                        k = min(_SLICE, a.bytes - n)
                        chunk = memoryview(block)[:k]
                        w.sendall(chunk)
                        crc = zlib.crc32(chunk, crc)
                        n += k
                    t = time.perf_counter()
                    w.close()
                    t_close = time.perf_counter() - t
                    for _ in range(10_000):  # taken by the agent (answered by now, or soon)
                        if w.taken:
                            break
                        time.sleep(0.001)
                    assert w.taken
                    with lock:
                        opens.append(t_open)
                        closes.append(t_close)

                threads = [threading.Thread(target=flow, args=(s,)) for s in conns]
                for t in threads:
                    t.start()
                t0 = time.perf_counter()
                go.wait()
                for t in threads:
                    t.join()
                walls.append(time.perf_counter() - t0)
                for s in conns:
                    s.close()
                client.unregister(coflow)
            ms = 1e3
            print(
                f"python opens ({a.scheduler}{', wait=False' if a.at_once else ''}): {a.flows} flows at once "
                f"x {a.rounds} rounds, {a.bytes} bytes each; "
                f"open p50 {_pct(opens, 0.5) * ms:.2f} ms, p99 {_pct(opens, 0.99) * ms:.2f} ms, "
                f"max {max(opens) * ms:.2f} ms; close p50 {_pct(closes, 0.5) * ms:.2f} ms, "
                f"p99 {_pct(closes, 0.99) * ms:.2f} ms, max {max(closes) * ms:.2f} ms; "
                f"round median {statistics.median(walls) * ms:.1f} ms"
            )
        finally:
            server.close()


if __name__ == "__main__":
    main()
