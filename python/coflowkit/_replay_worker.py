"""One host's part of ``coflowkit replay``: serves the flows sent to it and sends
its own flows at their start instants, as real TCP connections.

    python -m coflowkit._replay_worker PLAN.json --host I --out RESULT.json

The plan (written by :mod:`coflowkit.replay`) holds every flow (id, source,
destination, bytes, start seconds after ``t0``), every host's address and the
data port, and the worker prints ``ready`` once it listens; the driver then
writes the common start instant ``t0`` (wall clock, shared by all namespaces
of one machine) on its stdin. A flow is a 16-byte header (flow id, size), then
its bytes, then the receiver's one-byte answer once it has all of them, so the
sender knows every byte arrived. Connections are kept and reused between two
hosts, as data-parallel frameworks do (see :meth:`Worker.warm_up` for those
opened before ``t0``), so a flow pays a handshake only when it needs a
connection of its own. Both ends keep a CRC-32 of
the bytes; the driver compares them. The result file holds, per flow sent,
its start instant, bytes and CRC, and per flow received its last byte's
instant, bytes and CRC. Policies (``--policy``) mark a connection's DSCP:
``plain`` leaves it unmarked.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import resource
import socket
import struct
import sys
import time
import zlib
from typing import Any

_HEADER = struct.Struct("!QQ")
_BLOCK_LEN = 1 << 20
#: The block twice, so that any window of up to a block is one slice (no copy).
_BLOCK2 = memoryview(random.Random(20261121).randbytes(_BLOCK_LEN) * 2)
_CHUNK = 1 << 18


def _payload(fid: int, offset: int, n: int) -> memoryview:
    """Bytes ``offset .. offset + n`` of flow ``fid`` (n <= 1 MiB): the block, rotated by the flow."""
    start = (fid * 7919 + offset) % _BLOCK_LEN
    return _BLOCK2[start : start + n]


class Worker:
    def __init__(self, plan: dict[str, Any], host: int, deadline_s: float) -> None:
        self.plan = plan
        self.host = host
        self.t0 = 0.0  # read from stdin once every worker listens
        self.port = int(plan["port"])
        self.addrs = plan["hosts"]
        self.out = [f for f in plan["flows"] if f[1] == host]
        self.n_in = sum(1 for f in plan["flows"] if f[2] == host)
        self.sent: dict[int, list[Any]] = {}
        self.received: dict[int, list[Any]] = {}
        self.errors: list[str] = []
        self.all_in = asyncio.Event()
        #: idle connections by (destination, IP_TOS)
        self.pool: dict[tuple[int, int], list[socket.socket]] = {}
        self.deadline = deadline_s
        self.loop = asyncio.new_event_loop()
        if self.n_in == 0:
            self.all_in.set()

    async def _recv_exactly(self, sock: socket.socket, n: int) -> bytes:
        buf = bytearray()
        while len(buf) < n:
            chunk = await self.loop.sock_recv(sock, n - len(buf))
            if not chunk:
                if buf:
                    raise OSError(f"connection closed after {len(buf)} of {n} header bytes")
                return b""
            buf += chunk
        return bytes(buf)

    async def serve(self, sock: socket.socket) -> None:
        """One connection: flows one after another, each a header, its bytes and our ack."""
        fid = -1
        buf = bytearray(_CHUNK)
        view = memoryview(buf)
        try:
            while True:
                header = await self._recv_exactly(sock, _HEADER.size)
                if not header:
                    return  # the sender closed between flows
                fid, size = _HEADER.unpack(header)
                crc, n = 0, 0
                while n < size:
                    k = await self.loop.sock_recv_into(sock, view[: min(_CHUNK, size - n)])
                    if k == 0:
                        break
                    crc = zlib.crc32(view[:k], crc)
                    n += k
                self.received[fid] = [time.time(), n, crc]
                self._check_all_in()
                if n < size:
                    return
                await self.loop.sock_sendall(sock, b"k")
        except OSError as e:
            self.errors.append(f"host {self.host}: receiving flow {fid}: {e}")
            self._check_all_in()
        finally:
            sock.close()

    def _check_all_in(self) -> None:
        if len(self.received) >= self.n_in:
            self.all_in.set()

    async def accept_loop(self, server: socket.socket) -> None:
        tasks = set()
        while True:
            conn, _ = await self.loop.sock_accept(server)
            conn.setblocking(False)
            t = asyncio.ensure_future(self.serve(conn))
            tasks.add(t)
            t.add_done_callback(tasks.discard)

    async def _connect(self, dst: int, tos: int) -> socket.socket:
        """A connection to ``dst``: an idle one of the pool if there is one, else a new one."""
        idle = self.pool.setdefault((dst, tos), [])
        if idle:
            return idle.pop()
        for attempt in range(1000):
            sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            try:
                if tos:
                    sock.setsockopt(socket.IPPROTO_IP, socket.IP_TOS, tos)
                sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
                sock.setblocking(False)
                await self.loop.sock_connect(sock, (self.addrs[dst], self.port))
                return sock
            except OSError:
                sock.close()
                if attempt == 999 or time.time() > self.deadline:
                    raise
                await asyncio.sleep(0.02)
        raise AssertionError("unreachable")

    async def warm_up(self) -> None:
        """Idle connections to every other host before ``t0``: as many (up to
        32) as flows to it that start at one instant, so that flows do not pay
        a handshake (or a lost SYN's one-second timeout) that the simulator
        does not model."""
        burst: dict[tuple[int, int], dict[float, int]] = {}
        for f in self.out:
            key = (f[2], f[5] if len(f) > 5 else 0)
            at = burst.setdefault(key, {})
            at[f[4]] = at.get(f[4], 0) + 1
        want = [(key, min(32, max(at.values()))) for key, at in burst.items()]
        jobs = [(key, self._connect(*key)) for key, k in want for _ in range(k)]
        conns = await asyncio.gather(*(j for _, j in jobs), return_exceptions=True)
        for (key, _), c in zip(jobs, conns, strict=True):
            if isinstance(c, socket.socket):
                self.pool.setdefault(key, []).append(c)

    async def send(self, flow: list[Any]) -> None:
        fid, _src, dst, size, start = flow[0], flow[1], flow[2], flow[3], flow[4]
        tos = flow[5] if len(flow) > 5 else 0
        await asyncio.sleep(max(0.0, self.t0 + start - time.time()))
        t_start = time.time()
        try:
            sock = await self._connect(dst, tos)
        except OSError as e:
            self.errors.append(f"host {self.host}: flow {fid} to host {dst}: connect: {e}")
            return
        crc, n = 0, 0
        try:
            await self.loop.sock_sendall(sock, _HEADER.pack(fid, size))
            while n < size:
                chunk = _payload(fid, n, min(_CHUNK, size - n))
                await self.loop.sock_sendall(sock, chunk)
                crc = zlib.crc32(chunk, crc)
                n += len(chunk)
            ack = await self.loop.sock_recv(sock, 1)
            if ack != b"k":
                raise OSError("no acknowledgement from the receiver")
            self.sent[fid] = [t_start, n, crc]
            self.pool.setdefault((dst, tos), []).append(sock)
        except OSError as e:
            self.errors.append(f"host {self.host}: flow {fid} to host {dst}: {e}")
            sock.close()

    async def run(self) -> dict[str, Any]:
        server = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        server.bind((self.addrs[self.host], self.port))
        server.listen(4096)
        server.setblocking(False)
        acceptor = asyncio.ensure_future(self.accept_loop(server))
        # Ready: listening. The driver answers with t0 once every worker is;
        # then connect to every peer (they all listen by then).
        print("ready", flush=True)
        line = await self.loop.run_in_executor(None, sys.stdin.readline)
        self.t0 = float(line)
        self.deadline += self.t0
        await self.warm_up()
        senders = [asyncio.ensure_future(self.send(f)) for f in self.out]
        remaining = max(1.0, self.deadline - time.time())
        try:
            await asyncio.wait_for(asyncio.gather(*senders, self.all_in.wait()), timeout=remaining)
        except TimeoutError:
            self.errors.append(
                f"host {self.host}: not done by the deadline: sent {len(self.sent)} of {len(self.out)} "
                f"flows, received {len(self.received)} of {self.n_in}"
            )
        for conns in self.pool.values():
            for sock in conns:
                sock.close()
        acceptor.cancel()
        server.close()
        return {"host": self.host, "sent": self.sent, "received": self.received, "errors": self.errors}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="coflowkit._replay_worker")
    ap.add_argument("plan")
    ap.add_argument("--host", type=int, required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--deadline", type=float, default=600.0, help="seconds after t0 to give up")
    args = ap.parse_args(argv)
    with open(args.plan) as f:
        plan = json.load(f)
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    worker = Worker(plan, args.host, args.deadline)
    try:
        result = worker.loop.run_until_complete(worker.run())
    finally:
        worker.loop.close()
    tmp = args.out + ".tmp"
    with open(tmp, "w") as f:
        json.dump(result, f)
    os.replace(tmp, args.out)
    return 0 if not result["errors"] else 1


if __name__ == "__main__":
    sys.exit(main())
