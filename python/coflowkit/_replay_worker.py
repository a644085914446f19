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
_BLOCK = random.Random(20261121).randbytes(1 << 20)
_CHUNK = 1 << 16


def _payload(fid: int, offset: int, n: int) -> bytes:
    """Bytes ``offset .. offset + n`` of flow ``fid`` (n <= _CHUNK): the block, rotated by the flow."""
    start = (fid * 7919 + offset) % len(_BLOCK)
    end = start + n
    if end <= len(_BLOCK):
        return _BLOCK[start:end]
    return _BLOCK[start:] + _BLOCK[: end - len(_BLOCK)]


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
        self.pool: dict[tuple[int, int], list[tuple[asyncio.StreamReader, asyncio.StreamWriter]]] = {}
        self.deadline = deadline_s
        if self.n_in == 0:
            self.all_in.set()

    async def serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        """One connection: flows one after another, each a header, its bytes and our ack."""
        fid = -1
        try:
            while True:
                try:
                    header = await reader.readexactly(_HEADER.size)
                except asyncio.IncompleteReadError as e:
                    if not e.partial:
                        return  # the sender closed between flows
                    raise
                fid, size = _HEADER.unpack(header)
                crc, n = 0, 0
                while n < size:
                    chunk = await reader.read(min(1 << 18, size - n))
                    if not chunk:
                        break
                    crc = zlib.crc32(chunk, crc)
                    n += len(chunk)
                t_end = time.time()
                self.received[fid] = [t_end, n, crc]
                self._check_all_in()
                if n < size:
                    return
                writer.write(b"k")
                await writer.drain()
        except (OSError, asyncio.IncompleteReadError) as e:
            self.errors.append(f"host {self.host}: receiving flow {fid}: {e}")
            self._check_all_in()
        finally:
            writer.close()

    def _check_all_in(self) -> None:
        if len(self.received) >= self.n_in:
            self.all_in.set()

    async def _connect(self, dst: int, tos: int) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
        """A connection to ``dst``: an idle one of the pool if there is one, else a new one."""
        idle = self.pool.setdefault((dst, tos), [])
        while idle:
            reader, writer = idle.pop()
            if not writer.is_closing():
                return reader, writer
        for attempt in range(1000):
            sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            try:
                if tos:
                    sock.setsockopt(socket.IPPROTO_IP, socket.IP_TOS, tos)
                sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
                sock.setblocking(False)
                await asyncio.get_running_loop().sock_connect(sock, (self.addrs[dst], self.port))
                return await asyncio.open_connection(sock=sock)
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
            if not isinstance(c, BaseException):
                self.pool.setdefault(key, []).append(c)

    async def send(self, flow: list[Any]) -> None:
        fid, _src, dst, size, start = flow[0], flow[1], flow[2], flow[3], flow[4]
        tos = flow[5] if len(flow) > 5 else 0
        await asyncio.sleep(max(0.0, self.t0 + start - time.time()))
        t_start = time.time()
        try:
            reader, writer = await self._connect(dst, tos)
        except OSError as e:
            self.errors.append(f"host {self.host}: flow {fid} to host {dst}: connect: {e}")
            return
        crc, n = 0, 0
        try:
            writer.write(_HEADER.pack(fid, size))
            while n < size:
                chunk = _payload(fid, n, min(_CHUNK, size - n))
                writer.write(chunk)
                crc = zlib.crc32(chunk, crc)
                n += len(chunk)
                await writer.drain()
            ack = await reader.readexactly(1)
            if ack != b"k":
                raise OSError("no acknowledgement from the receiver")
            self.sent[fid] = [t_start, n, crc]
            self.pool.setdefault((dst, tos), []).append((reader, writer))
        except (OSError, asyncio.IncompleteReadError) as e:
            self.errors.append(f"host {self.host}: flow {fid} to host {dst}: {e}")
            writer.close()

    async def run(self) -> dict[str, Any]:
        server = await asyncio.start_server(
            self.serve, host=self.addrs[self.host], port=self.port, backlog=4096, reuse_address=True
        )
        async with server:
            # Ready: listening. The driver answers with t0 once every worker is;
            # then connect to every peer (they all listen by then).
            print("ready", flush=True)
            line = await asyncio.get_running_loop().run_in_executor(None, sys.stdin.readline)
            self.t0 = float(line)
            self.deadline += self.t0
            await self.warm_up()
            senders = [asyncio.create_task(self.send(f)) for f in self.out]
            remaining = max(1.0, self.deadline - time.time())
            try:
                await asyncio.wait_for(asyncio.gather(*senders, self.all_in.wait()), timeout=remaining)
            except TimeoutError:
                self.errors.append(
                    f"host {self.host}: not done by the deadline: sent {len(self.sent)} of {len(self.out)} "
                    f"flows, received {len(self.received)} of {self.n_in}"
                )
            for conns in self.pool.values():
                for _reader, writer in conns:
                    writer.close()
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
    result = asyncio.run(Worker(plan, args.host, args.deadline).run())
    tmp = args.out + ".tmp"
    with open(tmp, "w") as f:
        json.dump(result, f)
    os.replace(tmp, args.out)
    return 0 if not result["errors"] else 1


if __name__ == "__main__":
    sys.exit(main())
