"""One host's sending part of ``coflowkit replay --hosts``: sends the host's flows
at their start instants through its runtime agent, so the coordinator's
scheduler (``aalo``, ``varys``, ``fair``, ...) paces and marks them. It runs on
host ``I`` (its agent's socket is local) and shares no file with the driver:
plan, start instant and result go over its stdin and stdout
(:mod:`coflowkit._worker_protocol`).

    python -m coflowkit._runtime_sender --host I < PLAN-THEN-T0

The plan is :func:`coflowkit.replay.make_plan`'s with, in addition, every
host's agent socket (``agents``), one data port per host (``ports``) and the
runtime's coflow id of each coflow by FIFO rank (``coflow_ids``, registered
by the driver). The receiving part is ``coflowkit._replay_worker
--receive-only`` on the same host. The wire format is the worker's: a 16-byte
header (flow id, size), the flow's bytes, the receiver's one-byte answer once
it has them all; header and bytes go through a ``CoflowWriter`` (the flow the
agent sees is ``size + 16`` bytes). Each flow has a thread of its own from
its start instant (the writer blocks, without the GIL, while it is paced or
paused) and takes an idle connection to its destination from the host's pool,
or opens one; a connection whose flow was answered goes back to the pool,
unpaced (each writer applies its own flow's schedule at its first write), so
that a flow does not pay a handshake and a host does not open thousands of
connections. The process prints ``ready`` once its agent answers, then reads
the common start instant ``t0`` on stdin; its result holds, per flow sent,
[start, bytes, CRC-32, connected, whether the connection was opened for it,
last byte written, taken by the agent (its open is not waited for, Aalo 6.1:
the writer starts at once and is scheduled once its agent answers; read when
the result is made), then what the writer was told and
did (for examples/testbed/diagnose.py): its schedule when opened (rate in
bit/s or None, class), the number of schedule changes it saw between its
writes, the seconds its writes spent while the schedule said paused (rate
below 1 bit/s), and the time-weighted mean rate it was given (bit/s, None if
unthrottled throughout), when the writer was opened, and when its last write
returned], and the errors, each naming its flow. A writer unpaces its socket
when it closes (the client library's ``CoflowWriter``): the coordinator counts
bytes as the kernel takes them, so it takes the flow for done while its send
buffer still drains.
"""

from __future__ import annotations

import argparse
import os
import socket
import sys
import threading
import time
import zlib
from typing import Any

from . import _core
from ._replay_worker import _HEADER, _UNPACED, SO_MAX_PACING_RATE, _payload, _u32, new_socket
from ._worker_protocol import Channel

#: Bytes per write of the sender's loop: small enough to see a flow's schedule change between writes.
_SLICE = 16 << 10


class Sender:
    def __init__(self, plan: dict[str, Any], host: int, deadline_s: float, channel: Channel) -> None:
        self.host = host
        self.channel = channel
        self.addrs = plan["hosts"]
        self.ports = [int(p) for p in plan["ports"]]
        self.coflow_ids = [int(c) for c in plan["coflow_ids"]]
        self.out = [f for f in plan["flows"] if f[1] == host]
        self.client = _core.AgentClient(plan["agents"][host], delta_ms=int(plan.get("report_ms", 10)))
        self.deadline_s = deadline_s
        self.t0 = 0.0
        self.sent: dict[int, list[Any]] = {}
        self.errors: list[str] = []
        self.lock = threading.Lock()
        #: idle connections by destination
        self.pool: dict[int, list[socket.socket]] = {}
        #: each sent flow's (closed) writer, to read at the end whether its agent took it
        self.writers: dict[int, Any] = {}

    def _connection(self, dst: int, timeout: float) -> tuple[socket.socket, bool]:
        """An idle connection to ``dst`` from the pool, or a new one (and whether it is new)."""
        with self.lock:
            idle = self.pool.get(dst)
            if idle:
                return idle.pop(), False
        # In the top queue (new_socket): opened unmarked (CS0, the lowest queue), the
        # 16-host runs lost thousands of SYNs behind the other flows' data (docs/testbed.md).
        s = new_socket()
        try:
            s.settimeout(timeout)
            s.connect((self.addrs[dst], self.ports[dst]))
        except OSError:
            s.close()
            raise
        return s, True

    def send(self, flow: list[Any]) -> None:
        fid, _src, dst, size, start, _, rank = flow[:7]
        time.sleep(max(0.0, self.t0 + start - time.time()))
        t_start = time.time()
        left = max(1.0, self.t0 + self.deadline_s - t_start)
        s = None
        try:
            s, fresh = self._connection(dst, left)
            s.settimeout(left)
            t_conn = time.time()
            crc, n = 0, 0
            coflow = self.coflow_ids[rank]
            # Not waiting for the agent (Aalo 6.1): the flow starts with its coflow's schedule in this
            # process, or unpaced in class 0, and takes the agent's once it answers.
            with self.client.writer(s, coflow, dst_host=dst, size_hint=size + _HEADER.size, wait=False) as w:
                t_opened = time.time()
                first = last = w.schedule
                changes, paused_s, given, timed = 0, 0.0, 0.0, 0.0
                t = time.time()
                w.sendall(_HEADER.pack(fid, size))
                if first[0] is not None and first[0] < 1.0:
                    paused_s += time.time() - t
                last = w.schedule
                while n < size:
                    k = min(_SLICE, size - n)
                    chunk = _payload(fid, n, k)
                    t = time.time()
                    w.sendall(chunk)
                    dt = time.time() - t
                    now = w.schedule
                    changes += now != last
                    # What the schedule said before and after this write, averaged; a write begun while
                    # the schedule said paused waited for the resumption.
                    rates = [r for r in (last[0], now[0]) if r is not None]
                    if rates:
                        given += sum(rates) / len(rates) * dt
                        timed += dt
                    if last[0] is not None and last[0] < 1.0:
                        paused_s += dt
                    last = now
                    crc = zlib.crc32(chunk, crc)
                    n += k
                t_last = time.time()
            t_written = time.time()
            if s.recv(1) != b"k":
                raise OSError("no acknowledgement from the receiver")
            # Whether the agent took the flow: its open was not waited for, so read again at the end.
            scheduled = w.taken
            s.setsockopt(socket.SOL_SOCKET, SO_MAX_PACING_RATE, _u32(_UNPACED))
            with self.lock:
                self.sent[fid] = [
                    t_start, n, crc, t_conn, fresh, t_written, scheduled,
                    first[0], first[1], changes, paused_s, given / timed if timed > 0 else None,
                    t_opened, t_last,
                ]  # fmt: skip
                self.pool.setdefault(dst, []).append(s)
                self.writers[fid] = w
        except (OSError, ValueError) as e:
            if s is not None:
                s.close()
            with self.lock:
                self.errors.append(f"host {self.host}: flow {fid} to host {dst}: {e}")

    def run(self) -> dict[str, Any]:
        if not self.client.connected:
            self.errors.append(f"host {self.host}: the agent at {self.client.socket} cannot be reached")
            self.channel.ready()  # the driver learns of it from the result
            self.channel.t0()
            return self.result()
        self.channel.ready()
        self.t0 = self.channel.t0()
        self.channel.watch_driver()
        # Each flow's thread starts at the flow's start instant (not all at
        # t0: a host has up to thousands of flows).
        threads = []
        end = self.t0 + self.deadline_s
        for f in sorted(self.out, key=lambda f: f[4]):
            time.sleep(max(0.0, self.t0 + f[4] - time.time()))
            if time.time() > end:
                break
            t = threading.Thread(target=self.send, args=(f,), daemon=True)
            t.start()
            threads.append(t)
        for t in threads:
            t.join(timeout=max(0.0, end - time.time()))
        if any(t.is_alive() for t in threads):
            self.errors.append(
                f"host {self.host}: not done by the deadline: sent {len(self.sent)} of {len(self.out)} flows"
            )
        return self.result()

    def result(self) -> dict[str, Any]:
        # An answer that comes after the flow's last byte still counts its bytes (the client's next
        # report): on a loaded host it may still be on its way, so wait for it (10 s at most; the
        # wait ends as soon as every flow is answered, so only a missing answer costs the time).
        limit = time.time() + 10.0
        with self.lock:
            writers = dict(self.writers)
        while time.time() < limit and not all(w.taken for w in writers.values()):
            time.sleep(0.01)
        with self.lock:
            for fid, w in writers.items():
                self.sent[fid][6] = w.taken
            return {"host": self.host, "sent": dict(self.sent), "received": {}, "errors": list(self.errors)}


def main(argv: list[str] | None = None) -> int:
    channel = Channel()  # first: from here on only the protocol reaches stdout
    ap = argparse.ArgumentParser(prog="coflowkit._runtime_sender", description="The plan comes on stdin (see above).")
    ap.add_argument("--host", type=int, required=True)
    ap.add_argument("--deadline", type=float, default=600.0, help="seconds after t0 to give up")
    args = ap.parse_args(argv)
    result = Sender(channel.plan(), args.host, args.deadline, channel).run()
    channel.result(result)
    # Threads still blocked past the deadline must not hold the process.
    os._exit(0 if not result["errors"] else 1)


if __name__ == "__main__":
    sys.exit(main())
