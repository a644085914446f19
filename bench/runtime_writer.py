"""Throughput through the Python `CoflowWriter` against a raw Python socket on loopback (issue 10).

    .venv/bin/python bench/runtime_writer.py [--bytes 1073741824] [--runs 7]

Starts a coordinator (2 hosts at 1 Tbit/s, `fair`: the pacing rate never binds, so this measures the writer's
cost) and host 0's agent with `coflowkit coordinator|agent` (the runtime the extension carries: measure a release build,
`make demo`, or set COFLOWKIT_RUNTIME to a release binary), then sends the same bytes with `socket.sendall` and with `CoflowWriter.sendall` (1 MiB per call) to a
reader thread, runs interleaved, and prints the medians and their ratio.
"""

from __future__ import annotations

import argparse
import socket
import statistics
import threading
import time

from _runtime_cluster import one_host

import coflowkit


def _transfer(total: int, send: object) -> float:
    server = socket.create_server(("127.0.0.1", 0))
    port = server.getsockname()[1]
    got = [0]

    def read() -> None:
        conn, _ = server.accept()
        buf = bytearray(1 << 18)
        with conn:
            while n := conn.recv_into(buf):
                got[0] += n

    t = threading.Thread(target=read)
    t.start()
    block = b"\x5a" * (1 << 20)
    t0 = time.perf_counter()
    with socket.create_connection(("127.0.0.1", port)) as s:
        send(s, block, total)  # type: ignore[operator]
        s.shutdown(socket.SHUT_WR)
        t.join()
    dt = time.perf_counter() - t0
    server.close()
    assert got[0] == total, (got[0], total)
    return dt


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--bytes", type=int, default=1 << 30)
    ap.add_argument("--runs", type=int, default=7)
    a = ap.parse_args()
    with one_host("1Tbps", "fair") as sock:
        client = coflowkit.AgentClient(sock)
        assert client.connected
        raw: list[float] = []
        wrapped: list[float] = []

        def send_raw(s: socket.socket, block: bytes, total: int) -> None:
            left = total
            while left:
                k = min(left, len(block))
                s.sendall(block[:k] if k < len(block) else block)
                left -= k

        for _ in range(a.runs):
            raw.append(_transfer(a.bytes, send_raw))
            coflow = client.register()

            def send_wrapped(s: socket.socket, block: bytes, total: int, coflow: int = coflow) -> None:
                with client.writer(s, coflow, dst_host=1) as w:
                    assert w.scheduled
                    left = total
                    while left:
                        k = min(left, len(block))
                        w.sendall(block[:k] if k < len(block) else block)
                        left -= k

            wrapped.append(_transfer(a.bytes, send_wrapped))
            client.unregister(coflow)

        def gbps(t: float) -> float:
            return a.bytes * 8 / t / 1e9

        r, w = statistics.median(raw), statistics.median(wrapped)
        print(
            f"python writer: {a.bytes} bytes x {a.runs} runs each, interleaved; raw socket median "
            f"{gbps(r):.2f} Gbit/s (runs {gbps(max(raw)):.2f}-{gbps(min(raw)):.2f}), CoflowWriter median "
            f"{gbps(w):.2f} Gbit/s (runs {gbps(max(wrapped)):.2f}-{gbps(min(wrapped)):.2f}); writer/raw {r / w:.3f}"
        )


if __name__ == "__main__":
    main()
