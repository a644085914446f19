"""One host's part of ``coflowkit replay``: serves the flows sent to it and sends
its own flows at their start instants, as real TCP connections.

    python -m coflowkit.testbed.replay.worker --host I [--receive-only] < PLAN-THEN-T0

The driver (:mod:`coflowkit.testbed.replay`) talks to the worker over its stdin and
stdout only (:mod:`coflowkit.testbed.replay.protocol`), so no file is shared: the
plan comes as the first line of stdin (:class:`coflowkit.testbed.replay.plans.Plan`:
every flow's id, source, destination, bytes, start seconds after ``t0``;
every host's address and the data port),
the worker prints ``ready`` once it listens, the driver then writes the
common start instant ``t0`` (wall clock: one machine's, or clocks kept in
step) and the worker prints its result as one JSON line at the end. A flow is
a 16-byte header (flow id, size), then
its bytes, then the receiver's one-byte answer once it has all of them, so the
sender knows every byte arrived. Connections are kept and reused between two
hosts, as data-parallel frameworks do (see :meth:`Worker.warm_up` for those
opened before ``t0``), so a flow pays a handshake only when it needs a
connection of its own. Both ends keep a CRC-32 of
the bytes; the driver compares them. The receiving part is native
(``_core.receive_flows``, crates/testbed/src/replay_receiver.rs: one epoll
loop for every connection, without the GIL); this process's event loop only sends. The
result holds, per flow sent,
its start instant, bytes and CRC and its connection's TCP counters over it
(``tcp``: retransmissions and timeouts, from ``struct tcp_info``), and per flow
received its last byte's instant, bytes and CRC and when its connection was accepted. A flow whose connection fails (the kernel gives it
up, the peer resets it) is sent again from its first byte on another
connection, up to three attempts in all, as a data-parallel framework
retries a fetch: its start stays the first attempt's, so its completion
time includes the loss. The result lists each lost connection, at both
ends (``broken``), and the attempts of each flow sent more than once
(``resent``); the receiver counts a flow in only when it has arrived whole.
Policies (``--policy``) mark a connection's DSCP and pacing rate: ``plain``
leaves it unmarked; the others are the Rust host policies
(``_core.HostPolicy``, crates/sched/src/host: the code the packet engine
runs), which the worker tells what happens to its flows (start, bytes
written, finish, control messages, its wake-ups) in integer nanoseconds
since ``t0``, and whose markings it enforces. ``dcas`` with negotiation
also opens a UDP socket on the host's control port (the plan's
``control_port``, or ``control_ports`` per host), over which the workers'
policies exchange their announcements and replies; the result then holds
the negotiation's counts (``control``). D-CAS's clock runs natively
(:meth:`Worker.native_clock`, ``HostPolicy.start_clock``: crates/testbed/src/host_clock.rs):
a thread of its own wakes the policy at its instants, answers and applies the
control datagrams and marks the sockets, so that the policy ticks near its
``delta`` grid however late this process's event loop runs (on a loaded
testbed of 16 hosts on 2 cores the loop ran 6-7 ms late on average, and D-CAS
ticked every 22-25 ms instead of 10; with the thread, every 13.3-13.7 ms:
docs/lab/testbed-vs-simulation.md).
"""

from __future__ import annotations

import argparse
import asyncio
import fcntl
import os
import random
import resource
import socket
import struct
import sys
import termios
import time
import zlib
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from ... import _core
from .modes import KARUNA_RTT_NS, runs_clock_natively, runs_scheduler
from .plans import Flow, Plan
from .protocol import Channel

_HEADER = struct.Struct("!QQ")
_BLOCK_LEN = 1 << 20
#: The block twice, so that any window of up to a block is one slice (no copy).
BLOCK2 = memoryview(random.Random(20261121).randbytes(_BLOCK_LEN) * 2)
_CHUNK = 1 << 18
#: Attempts at a flow whose connection fails (the first included).
_ATTEMPTS = 3
#: SO_MAX_PACING_RATE (Linux; the socket module has no name for it) and its "unpaced" value.
SO_MAX_PACING_RATE = 47
_UNPACED = 0xFFFFFFFF


#: The SCHED_FIFO priority of the native clock's thread as root: none. At priority 10 its ticks
#: were on the grid (10.06 ms apart) but the workers' event loops stalled up to 2-6 s, and
#: `dcas`'s mean CCT went from 0.40 to 1.15 s (docs/lab/testbed-vs-simulation.md).
CLOCK_RT_PRIORITY = 0
#: The native clock thread's niceness as root: None, its process's (the replay's `--nice`, -10). At
#: -20 its ticks ran closer to the grid (12.3 against 13.5-13.7 ms apart) but the senders' own flows
#: started later (a mean lag of 60-80 against 33-39 ms): the negotiation's datagrams cost the 2 cores
#: what the event loops then lack (docs/lab/testbed-vs-simulation.md).
CLOCK_NICE: int | None = None


def _u32(v: int) -> bytes:
    return struct.pack("=I", v)


#: What :func:`tcp_counts` reads of Linux's ``struct tcp_info`` (include/uapi/linux/tcp.h): name, byte
#: offset, format. ``total_rto``, ``total_rto_recoveries`` and ``total_rto_time`` (ms spent recovering
#: from timeouts) came with Linux 6.7; an older kernel returns a shorter struct, and they read 0.
TCP_INFO_FIELDS = (
    ("total_retrans", 100, "I"),
    ("busy_us", 168, "Q"),
    ("bytes_retrans", 208, "Q"),
    ("total_rto", 240, "H"),
    ("total_rto_recoveries", 242, "H"),
    ("total_rto_time_ms", 244, "I"),
)
_TCP_INFO_LEN = 248


def tcp_counts(sock: socket.socket) -> list[int]:
    """The socket's TCP counters of :data:`TCP_INFO_FIELDS`, in their order (cumulative over the
    connection's life; a flow's are the difference at its end and its start)."""
    b = sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_INFO, _TCP_INFO_LEN)
    return [struct.unpack_from("=" + f, b, off)[0] if off + struct.calcsize(f) <= len(b) else 0
            for _, off, f in TCP_INFO_FIELDS]  # fmt: skip


def _payload(fid: int, offset: int, n: int) -> memoryview:
    """Bytes ``offset .. offset + n`` of flow ``fid`` (n <= 1 MiB): the block, rotated by the flow."""
    start = (fid * 7919 + offset) % _BLOCK_LEN
    return BLOCK2[start : start + n]


def _tos(q: int) -> int:
    """IP_TOS of queue q (0 highest): DSCP class selector CS(7 - q), as the testbed's filters."""
    return (7 - min(max(q, 0), 7)) << 5


def new_socket(cc: str | None = None) -> socket.socket:
    """A TCP socket for a replay's connection, not yet connected: no Nagle, congestion
    control ``cc`` if given, and marked for queue 0, so that its handshake is in the top queue
    (the testbed reflects a SYN's mark on its SYN-ACK; the receiver marks its accepted side
    queue 0 itself): the simulator has no handshake, and a lost SYN costs a one-second
    timeout. Senders mark their data afterwards."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    try:
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        if cc:
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_CONGESTION, cc.encode())
        sock.setsockopt(socket.IPPROTO_IP, socket.IP_TOS, _tos(0))
    except OSError:
        sock.close()
        raise
    return sock


#: D-CAS's control messages (UDP): a datagram is a head (magic, version, kind, the host that sends
#: it, how many entries follow) and up to :data:`_CONTROL_MAX` entries of one kind, each the
#: announcement number (the sender's round for that coflow, echoed by the reply), the coflow (its
#: rank in the plan, which every host knows) and the value (bytes). A sender puts every
#: announcement of a tick to one receiver in one datagram, and a receiver its replies to one sender
#: (version 2; version 1 carried one entry a datagram, and cost a 2-core testbed of 16 hosts half a
#: core: docs/testbed.md).
#: The wire format is written once, in Rust (crates/testbed/src/host_clock.rs), which the native clock
#: sends and reads; the event loop calls the same code through :func:`encode_control` and
#: :func:`decode_control`.
_CONTROL_MAX = 64
ANNOUNCE, REPLY = 1, 2


def encode_control(kind: int, host: int, entries: Sequence[tuple[int, int, int]]) -> bytes:
    """One control datagram: ``kind`` :data:`ANNOUNCE` (a sender's desired priorities) or
    :data:`REPLY` (a receiver's feedback), from ``host``, with ``entries`` (number, coflow, value):
    1 to :data:`_CONTROL_MAX` of them (else ValueError)."""
    return _core.control_encode(kind, host, list(entries))


def decode_control(data: bytes, n_hosts: int) -> tuple[int, int, list[tuple[int, int, int]]] | str:
    """``(kind, host, entries)`` of a control datagram, each entry ``(number, coflow, value)``, or why
    it is not one (``size``, ``magic``, ``version``, ``kind``, ``host``): never raises."""
    return _core.control_decode(data, n_hosts)


def spread(xs: list[float]) -> list[float]:
    """Durations in a worker's result: [mean, 99th percentile, max], or [] if none."""
    return [float(np.mean(xs)), float(np.percentile(xs, 99)), float(max(xs))] if xs else []


def make_policy(spec: Mapping[str, Any], host: int = 0, n_hosts: int = 1) -> _core.HostPolicy | None:
    """The Rust policy a plan's ``policy`` names (:func:`coflowkit.testbed.replay.modes.policy_spec`:
    ``name`` and the scheduler ``spec``) at ``host``; None for ``plain`` (every flow unmarked)."""
    name = spec.get("name", "plain")
    if not runs_scheduler(name):
        return None
    if not isinstance(spec.get("spec"), str):
        raise ValueError(f"replay policy {name!r}: the plan carries no scheduler 'spec' (make it with policy_spec)")
    return _core.HostPolicy(spec["spec"], host, n_hosts, 1e9, int(spec.get("rtt_ns", KARUNA_RTT_NS)))


class Worker:
    """One host's worker: receives the flows of ``plan`` sent to ``host`` and sends its own."""

    def __init__(
        self, plan: Plan, host: int, deadline_s: float, channel: Channel, receive_only: bool = False
    ) -> None:
        self.plan = plan
        self.channel = channel
        self.host = host
        self.t0 = 0.0  # read from stdin once every worker listens
        self.addrs = list(plan.hosts)
        # One port for every host (the testbed), or one per host ("ports": hosts sharing an address).
        self.ports = [plan.data_port(h) for h in range(plan.n_hosts)]
        # receive_only: another process sends this host's flows (coflowkit.testbed.replay.sender).
        self.out: list[Flow] = [] if receive_only else plan.flows_from(host)
        self.n_in = len(plan.flows_to(host))
        self.sent: dict[int, list[Any]] = {}
        self.received: dict[int, list[Any]] = {}
        self.errors: list[str] = []
        #: connections lost, at either end (their flows sent again, or in ``errors`` once out of attempts)
        self.broken: list[str] = []
        #: attempts of each flow sent more than once
        self.resent: dict[int, int] = {}
        #: per flow sent, its connection's TCP counters over the flow (:data:`TCP_INFO_FIELDS`): from its
        #: header's write to the receiver's answer, so every byte of it acknowledged
        self.tcp: dict[int, list[int]] = {}
        #: tests: flows whose first connection this sender resets halfway through the flow
        self.inject_reset = set(plan.inject_reset)
        #: idle connections by destination
        self.pool: dict[int, list[socket.socket]] = {}
        self.deadline = deadline_s
        self.policy = make_policy(plan.policy, host, plan.n_hosts)
        #: the policy's wake-up (ns since t0) and its timer, once t0 is known
        self.wake_ns: int | None = None
        self.wake_timer: asyncio.TimerHandle | None = None
        #: control entries to send at the next flush, by (destination host, kind)
        self.batch: dict[tuple[int, int], list[tuple[int, int, int]]] = {}
        self.datagrams = 0
        # D-CAS's control channel: UDP on a port per host (one for all on the testbed).
        self.ctl: socket.socket | None = None
        self.ctl_ports = [plan.host_control_port(h) or 0 for h in range(plan.n_hosts)]  # 0: none
        self.ctl_bad: dict[str, int] = {}  # datagrams ignored, by why
        self.ctl_send_failed = 0
        self.cc = plan.tcp_cc
        # Every flow paced at most at this rate (bytes/s) unless its policy paces it, and its
        # writes held to 64 KiB ahead of the wire (TCP_NOTSENT_LOWAT), so that a sender counts
        # its bytes as they leave: a link's rate where there is none (tests on loopback).
        self.pace: int | None = plan.pace_bps or None
        self.socks: dict[int, socket.socket] = {}  # active flow -> its connection
        self.paced: set[socket.socket] = set()
        self.stalls: list[float] = []
        self.new_conns = 0  # connections opened (warm-up and on demand)
        self.warm_up_s = 0.0  # how long the warm-up took (seconds)
        self.warm_up_failed = 0
        self.loop = asyncio.new_event_loop()
        #: whether the policy's clock runs natively (D-CAS: :meth:`native_clock`), and what it counted
        self.native = False
        self.clock_stats: dict[str, Any] = {}
        #: the native clock thread's SCHED_FIFO priority (0: none) and niceness (None: the process's); both
        #: need root (diagnostics: the environment's COFLOWKIT_CLOCK_RT and COFLOWKIT_CLOCK_NICE, "" for None)
        root = os.geteuid() == 0
        self.clock_rt = int(os.environ.get("COFLOWKIT_CLOCK_RT", CLOCK_RT_PRIORITY)) if root else 0
        nice = os.environ.get("COFLOWKIT_CLOCK_NICE", "" if CLOCK_NICE is None else str(CLOCK_NICE))
        self.clock_nice = int(nice) if root and nice else None

    async def _connect(self, dst: int) -> socket.socket:
        """A connection to ``dst``: an idle one of the pool if there is one, else a new one."""
        idle = self.pool.setdefault(dst, [])
        if idle:
            return idle.pop()
        self.new_conns += 1
        for attempt in range(1000):
            sock = new_socket(self.cc)
            if self.pace:
                sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NOTSENT_LOWAT, 1 << 16)
            try:
                sock.setblocking(False)
                await self.loop.sock_connect(sock, (self.addrs[dst], self.ports[dst]))
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
        burst: dict[int, dict[float, int]] = {}
        for f in self.out:
            at = burst.setdefault(f.dst, {})
            at[f.start_s] = at.get(f.start_s, 0) + 1
        want = [(dst, min(32, max(at.values()))) for dst, at in burst.items()]
        jobs = [(dst, self._connect(dst)) for dst, k in want for _ in range(k)]
        conns = await asyncio.gather(*(j for _, j in jobs), return_exceptions=True)
        for (key, _), c in zip(jobs, conns, strict=True):
            if isinstance(c, socket.socket):
                self.pool.setdefault(key, []).append(c)
            else:
                self.warm_up_failed += 1

    def _unacked(self, fid: int) -> int:
        """Bytes of flow ``fid`` in its socket, written and not yet acknowledged (SIOCOUTQ); 0 if it
        has no connection."""
        sock = self.socks.get(fid)
        if sock is None or sock.fileno() < 0:
            return 0
        try:
            return int(struct.unpack("i", fcntl.ioctl(sock.fileno(), termios.TIOCOUTQ, b"\0\0\0\0"))[0])
        except OSError:
            return 0

    def _mark(self, fids: list[int]) -> None:
        """Enforces the policy's marking of flows ``fids``: the DSCP of its class, its pacing rate
        (or the plan's), with the kernel's own tools. The congestion control a policy names
        (Karuna's MCP, TAFE's window rule) has no kernel module here: the plan's ``tcp_cc`` runs."""
        for fid in fids:
            sock = self.socks.get(fid)
            if sock is not None:
                q, rate = (7, None) if self.policy is None else self.policy.marking(fid)[:2]
                sock.setsockopt(socket.IPPROTO_IP, socket.IP_TOS, _tos(q))
                rate = self.pace if rate is None else rate
                if rate is not None:
                    sock.setsockopt(socket.SOL_SOCKET, SO_MAX_PACING_RATE, _u32(min(rate, _UNPACED - 1)))
                    self.paced.add(sock)

    def _now(self) -> int:
        """The policy's clock: integer nanoseconds since ``t0``."""
        return max(0, round((time.time() - self.t0) * 1e9))

    def _apply(self, out: tuple[list[int], list[tuple[int, int, int, int, int]]], flush: bool = True) -> None:
        """What a policy call did: marks the flows it changed, queues its messages (sent at once
        unless ``flush`` is False: the control loop sends its replies once it has read every
        datagram waiting) and sets the timer for its next wake-up."""
        changed, sends = out
        self._mark(changed)
        for dst, kind, number, coflow, value in sends:
            self.batch.setdefault((dst, kind), []).append((number, coflow, value))
        if flush:
            self.flush()
        if not self.native:  # the native clock follows the policy's wake-ups itself
            self._rearm()

    def flush(self) -> None:
        """Posts the queued control entries: one datagram per destination and kind (more past
        :data:`_CONTROL_MAX` entries)."""
        for (dst, kind), entries in self.batch.items():
            for i in range(0, len(entries), _CONTROL_MAX):
                self.datagrams += 1
                self._post(dst, encode_control(kind, self.host, entries[i : i + _CONTROL_MAX]))
        self.batch.clear()

    def _rearm(self) -> None:
        """Sets the timer for the policy's next wake-up if it moved (the policy names it: a
        coflow's next age step, D-CAS's next tick or the end of a negotiation)."""
        at = self.policy.wake_at() if self.policy is not None else None
        if at == self.wake_ns:
            return
        if self.wake_timer is not None:
            self.wake_timer.cancel()
        self.wake_ns, self.wake_timer = at, None
        if at is not None:
            self.wake_timer = self.loop.call_later(max(0.0, self.t0 + at / 1e9 - time.time()), self._wake)

    def native_clock(self) -> None:
        """Runs the policy's clock natively from now on if its replay policy says so
        (:attr:`~.modes.ReplayPolicy.native_clock`: D-CAS's; ``t0`` known, the control socket
        open if it negotiates): its wake-ups, the control datagrams and the marks they change are
        the clock thread's; this loop still tells the policy what its flows do (start, bytes
        written, finish) and sends what those calls announce."""
        if self.policy is None or not runs_clock_natively(self.policy.name):
            return
        if self.ctl is not None:
            self.loop.remove_reader(self.ctl.fileno())
        peers = [(self.addrs[h], self.ctl_ports[h]) for h in range(self.plan.n_hosts)]
        self.policy.start_clock(
            self.t0,
            self.host,
            peers,
            self.ctl.fileno() if self.ctl is not None else None,
            self.pace,
            self.clock_rt,
            self.clock_nice,
        )
        self.native = True

    def _stop_clock(self) -> None:
        """Stops the native clock (if one runs) and keeps what it counted."""
        if self.native and self.policy is not None:
            self.clock_stats = self.policy.stop_clock() or {}
            self.native = False
            self.datagrams += self.clock_stats.get("datagrams", 0)
            self.ctl_send_failed += self.clock_stats.get("send_failed", 0)
            for why, n in self.clock_stats.get("ignored", {}).items():
                self.ctl_bad[why] = self.ctl_bad.get(why, 0) + n

    def _wake(self) -> None:
        assert self.policy is not None
        self.wake_ns = self.wake_timer = None
        self._apply(self.policy.wake(self._now(), self._unacked))

    async def _heartbeat(self) -> None:
        """How late the event loop wakes a 10 ms timer: its stalls, whoever caused them."""
        while True:
            t = time.time()
            await asyncio.sleep(0.01)
            self.stalls.append(time.time() - t - 0.01)

    def _open_control(self) -> None:
        """D-CAS's control channel: a UDP socket on this host's control port, marked queue 0 so
        that announcements and replies are not stuck behind data. UDP because D-CAS tolerates a
        lost message by design (the sender falls back on its own desired priority), so there is
        no connection to keep and nothing to retransmit."""
        if self.policy is None or not self.policy.negotiates:
            return
        if not all(self.ctl_ports):
            raise ValueError("the plan has no control port (control_port or control_ports) for dcas's negotiation")
        ctl = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        ctl.setsockopt(socket.IPPROTO_IP, socket.IP_TOS, _tos(0))
        try:
            ctl.bind((self.addrs[self.host], self.ctl_ports[self.host]))
        except OSError as e:
            ctl.close()
            where = f"{self.addrs[self.host]}:{self.ctl_ports[self.host]}"
            raise OSError(f"host {self.host}: control port {where}: {e}") from e
        ctl.setblocking(False)
        self.ctl = ctl
        self.loop.add_reader(ctl.fileno(), self.control)

    def _post(self, dst: int, msg: bytes) -> None:
        if self.ctl is None:  # not negotiating: nothing to send on
            return
        try:
            self.ctl.sendto(msg, (self.addrs[dst], self.ctl_ports[dst]))
        except OSError:  # a full socket buffer, an ICMP error: D-CAS takes it as a lost message
            self.ctl_send_failed += 1

    def _ignore(self, why: str) -> None:
        self.ctl_bad[why] = self.ctl_bad.get(why, 0) + 1

    def control(self) -> None:
        """Every datagram waiting on the control socket: announcements answered, replies
        applied; anything else (bad size or fields, or not from the claimed host's control
        port) ignored and counted, never raised."""
        assert self.ctl is not None and self.policy is not None
        while True:
            try:
                data, src = self.ctl.recvfrom(2048)
            except BlockingIOError:
                self.flush()  # the replies to what came, one datagram per sender
                return
            except OSError:
                self._ignore("recv_error")
                continue
            m = decode_control(data, len(self.addrs))
            if isinstance(m, str):
                self._ignore(m)
                continue
            kind, host, entries = m
            if src != (self.addrs[host], self.ctl_ports[host]):
                self._ignore("source")
                continue
            now = self._now()
            for number, coflow, value in entries:
                try:
                    self._apply(self.policy.receive(now, host, kind, number, coflow, value), flush=False)
                except Exception as e:  # noqa: BLE001 - a message must never stop the worker
                    self._ignore(f"error: {type(e).__name__}")

    async def send(self, flow: Flow) -> None:
        """Sends ``flow`` at its start instant, up to :data:`_ATTEMPTS` times if its connection fails."""
        await asyncio.sleep(max(0.0, self.t0 + flow.start_s - time.time()))
        t_start = time.time()
        for attempt in range(1, _ATTEMPTS + 1):
            if await self._send_once(flow, t_start, attempt):
                return

    async def _send_once(self, flow: Flow, t_start: float, attempt: int) -> bool:
        """One attempt at ``flow``; False if its connection failed and another attempt is due."""
        fid, dst, size = flow.id, flow.dst, flow.size
        fresh = not self.pool.get(dst)
        try:
            sock = await self._connect(dst)
            t_conn = time.time()
        except OSError as e:
            self.errors.append(f"host {self.host}: flow {fid} to host {dst}: connect: {e}")
            return True
        crc, n = 0, 0
        try:
            self.socks[fid] = sock
            if self.native and self.policy is not None:
                self.policy.attach(fid, sock.fileno())
            if self.policy is not None:
                deadline = None if flow.deadline_s is None else round(flow.deadline_s * 1e9)
                arrival = round(flow.coflow_arrival_s * 1e9)
                self._apply(
                    self.policy.start(
                        self._now(), fid, flow.coflow_rank, arrival, dst, size, flow.size_known, deadline
                    )
                )
            self._mark([fid])
            tcp0 = tcp_counts(sock)
            await self.loop.sock_sendall(sock, _HEADER.pack(fid, size))
            while n < size:
                limit = self.policy.limit(fid) if self.policy is not None else _CHUNK
                k = min(_CHUNK, size - n, max(1, limit))
                cut = attempt == 1 and fid in self.inject_reset  # tests: reset once half is written
                if cut:
                    k = min(k, max(1, size // 2 - n))
                chunk = _payload(fid, n, k)
                await self.loop.sock_sendall(sock, chunk)
                crc = zlib.crc32(chunk, crc)
                n += k
                if self.policy is not None:
                    self._apply(self.policy.sent(self._now(), fid, k))
                if cut and 2 * n >= size:
                    sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
                    raise OSError(f"reset on purpose after {n} of {size} bytes (inject_reset)")
            t_written = time.time()
            ack = await self.loop.sock_recv(sock, 1)
            if ack != b"k":
                raise OSError("no acknowledgement from the receiver")
            self.tcp[fid] = [b - a for a, b in zip(tcp0, tcp_counts(sock), strict=True)]
            # start, bytes, CRC; then when the connection was ready, whether it
            # was opened for this flow, and when its last byte was written.
            self.sent[fid] = [t_start, n, crc, t_conn, fresh, t_written]
            self.pool.setdefault(dst, []).append(sock)
            return True
        except OSError as e:
            if self.native and self.policy is not None:
                self.policy.detach(fid)  # before its socket closes: the clock's thread marks attached sockets
            sock.close()
            where = f"host {self.host}: flow {fid} to host {dst}, attempt {attempt}: {e}"
            if attempt < _ATTEMPTS and time.time() < self.deadline:
                self.broken.append(f"{where}; sent again on another connection")
                self.resent[fid] = attempt + 1
                return False
            self.errors.append(where)
            return True
        finally:
            self.socks.pop(fid, None)
            if sock in self.paced:  # back to unpaced before the pool hands it on
                self.paced.discard(sock)
                if sock.fileno() >= 0:
                    sock.setsockopt(socket.SOL_SOCKET, SO_MAX_PACING_RATE, _u32(_UNPACED))
            if self.policy is not None:
                self._apply(self.policy.finish(self._now(), fid))

    async def run(self) -> dict[str, Any]:
        """Listens, says ready, waits for ``t0``, sends and receives every flow; returns the result."""
        server = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        server.bind((self.addrs[self.host], self.ports[self.host]))
        server.listen(4096)
        self._open_control()
        # Ready: listening. The driver answers with t0 once every worker is;
        # then connect to every peer (they all listen by then).
        self.channel.ready()
        self.t0 = await self.loop.run_in_executor(None, self.channel.t0)
        self.channel.watch_driver()
        self.deadline += self.t0
        # The receiving part, natively (one epoll loop, without the GIL:
        # crates/testbed/src/replay_receiver.rs); it ends once every flow sent here arrived
        # whole, or at the deadline.
        rx = self.loop.run_in_executor(
            None, _core.receive_flows, server.fileno(), self.host, self.n_in, self.deadline
        )  # fmt: skip
        t = time.time()
        await self.warm_up()
        self.warm_up_s = time.time() - t
        self.native_clock()
        if not self.native:
            self._rearm()  # the policy's first wake-up, now that t0 is known
        senders = [asyncio.ensure_future(self.send(f)) for f in self.out]
        heartbeat = asyncio.ensure_future(self._heartbeat())
        cpu0 = resource.getrusage(resource.RUSAGE_SELF)
        wall0 = time.time()
        remaining = max(1.0, self.deadline - time.time())
        late = False
        try:
            await asyncio.wait_for(asyncio.gather(*senders), timeout=remaining)
        except TimeoutError:
            late = True
        received, broken, whole = await rx
        self._stop_clock()
        self.received = {int(k): list(v) for k, v in received.items()}
        self.broken += broken
        if late or whole < self.n_in:
            self.errors.append(
                f"host {self.host}: not done by the deadline: sent {len(self.sent)} of {len(self.out)} "
                f"flows, received {whole} of {self.n_in}"
            )
        for conns in self.pool.values():
            for sock in conns:
                sock.close()
        cpu1 = resource.getrusage(resource.RUSAGE_SELF)
        heartbeat.cancel()
        self._stop_clock()  # already stopped, unless the deadline passed
        if self.wake_timer is not None:
            self.wake_timer.cancel()
        server.close()
        if self.ctl is not None:
            self.loop.remove_reader(self.ctl.fileno())  # none if the native clock read it
            self.ctl.close()
        report = self.policy.dcas_report() if self.policy is not None else None
        return {
            "host": self.host,
            "sent": self.sent,
            "received": self.received,
            "errors": self.errors,
            "broken": self.broken,
            "resent": self.resent,
            # per flow sent, its connection's TCP counters over the flow (TCP_INFO_FIELDS)
            "tcp": self.tcp,
            "tcp_fields": [name for name, _, _ in TCP_INFO_FIELDS],
            "t0": self.t0,
            "warm_up_s": self.warm_up_s,
            "warm_up_failed": self.warm_up_failed,
            "new_conns": self.new_conns,
            # the event loop's stalls (s): mean, 99th percentile, max; the worker's CPU seconds and wall
            "stalls": spread(self.stalls),
            "cpu_s": [cpu1.ru_utime - cpu0.ru_utime, cpu1.ru_stime - cpu0.ru_stime],
            "wall_s": time.time() - wall0,
            # the native clock (D-CAS): its thread's wake-ups and whether it ran at a real-time priority
            **({"clock": {k: self.clock_stats[k] for k in ("wakeups", "realtime", "nice")}} if self.clock_stats else {}),
            **({"control": self._control_stats(report)} if self.ctl is not None and report is not None else {}),
            # D-CAS: per coflow, [decided as large, of which starving] (the policy's runs)
            **({"dcas_runs": report["runs"]} if report is not None else {}),
            # D-CAS: the policy's counters (its negotiation's and its sender's clock), also without negotiation
            **({"dcas_counts": report["counts"]} if report is not None else {}),
        }

    def _control_stats(self, report: dict[str, Any]) -> dict[str, Any]:
        """D-CAS's negotiation as this host saw it: the policy's counts (``report``, its
        ``dcas_report``), the datagrams sent and ignored and sends that failed, the round trips of the
        replies that came in time and the time rounds took from announcement to decision (mean, p99,
        max s)."""
        return {
            **report["counts"],
            "datagrams": self.datagrams,
            "ignored": dict(self.ctl_bad),
            "send_failed": self.ctl_send_failed,
            "rtt_s": spread([x / 1e9 for x in report["rtt_ns"]]),
            # rounds decided: from the announcement to the decision (mean, p99, max s)
            "round_s": spread([x / 1e9 for x in report["round_ns"]]),
            # instant (s after t0), coflow, d, Phi(replies), queue
            "raised": [[at / 1e9, *rest] for at, *rest in report["raised"]],
        }


def main(argv: list[str] | None = None) -> int:
    """The worker's command line: ``--host I [--receive-only] [--deadline S] [--nice N]``."""
    channel = Channel()  # first: from here on only the protocol reaches stdout
    ap = argparse.ArgumentParser(
        prog="coflowkit.testbed.replay.worker", description="The plan comes on stdin (see above)."
    )
    ap.add_argument("--host", type=int, required=True)
    ap.add_argument("--deadline", type=float, default=600.0, help="seconds after t0 to give up")
    ap.add_argument("--nice", type=int, default=None, help="run at this niceness (below 0 needs root)")
    ap.add_argument("--receive-only", action="store_true", help="serve the flows to this host; send none")
    args = ap.parse_args(argv)
    if args.nice is not None:
        os.setpriority(os.PRIO_PROCESS, 0, args.nice)
    plan = channel.plan()
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    worker = Worker(plan, args.host, args.deadline, channel, args.receive_only)
    try:
        result = worker.loop.run_until_complete(worker.run())
    finally:
        worker.loop.close()
    channel.result(result)
    return 0 if not result["errors"] else 1


if __name__ == "__main__":
    sys.exit(main())
