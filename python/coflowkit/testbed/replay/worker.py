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
(``_core.receive_flows``, crates/py/src/replay_receiver.rs: one epoll
loop for every connection, without the GIL); this process's event loop only sends. The
result holds, per flow sent,
its start instant, bytes and CRC, and per flow received its last byte's
instant, bytes and CRC and when its connection was accepted. A flow whose connection fails (the kernel gives it
up, the peer resets it) is sent again from its first byte on another
connection, up to three attempts in all, as a data-parallel framework
retries a fetch: its start stays the first attempt's, so its completion
time includes the loss. The result lists each lost connection, at both
ends (``broken``), and the attempts of each flow sent more than once
(``resent``); the receiver counts a flow in only when it has arrived whole.
Policies (``--policy``) mark a connection's DSCP: ``plain`` leaves it
unmarked. ``dcas`` with negotiation also opens a UDP
socket on the host's control port (the plan's ``control_port``, or
``control_ports`` per host), over which the workers' senders and receivers
negotiate (:class:`Dcas`); the result then holds the negotiation's counts
(``control``).
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
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

from ... import _core
from .modes import check_combination, dcas_bands
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


def _u32(v: int) -> bytes:
    return struct.pack("=I", v)


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


class Policy:
    """How a sender marks its flows: ``plain`` leaves every flow unmarked
    (queue 7, best effort). Subclasses pick a queue per flow and may change
    it as bytes are sent or as flows start and finish."""

    def start(self, flow: Flow) -> None:
        """``flow`` starts (called before its first byte)."""

    def queue(self, fid: int) -> int:
        """Flow ``fid``'s queue now (0 highest, 7 lowest)."""
        return 7

    def limit(self, fid: int, sent: int) -> int:
        """How many more bytes flow ``fid`` may send before its queue may change."""
        return 1 << 62

    def sent(self, flow: Flow, n: int) -> list[int]:
        """``n`` more bytes of ``flow`` sent; returns the flows whose queue changed."""
        return []

    def finish(self, flow: Flow) -> list[int]:
        """``flow`` finished; returns the flows whose queue changed."""
        return []

    def rate(self, fid: int) -> int | None:
        """Flow ``fid``'s pacing rate, bytes per second (None: not paced)."""
        return None

    #: The wall clock as of the last :meth:`tick` or :meth:`clock`.
    now: float = 0.0

    def clock(self, now: float) -> None:
        """The wall clock, before a flow starts (policies whose queues age keep theirs to :meth:`tick`)."""
        self.now = now

    #: Seconds between calls of :meth:`tick` (None: never).
    period: float | None = None

    def tick(self, now: float) -> list[int]:
        """The clock moved to ``now`` (wall clock); returns the flows whose queue changed."""
        return []


class Pias(Policy):
    """PIAS's demotion by bytes sent: a flow starts in queue 0 and moves to queue
    k once it has sent ``thresholds[k-1]`` bytes."""

    def __init__(self, thresholds: list[int]) -> None:
        self.thresholds = sorted(int(t) for t in thresholds)[:7]
        self.bytes: dict[int, int] = {}

    def start(self, flow: Flow) -> None:
        self.bytes[flow.id] = 0

    def queue(self, fid: int) -> int:
        b = self.bytes.get(fid, 0)
        return sum(1 for t in self.thresholds if b >= t)

    def limit(self, fid: int, sent: int) -> int:
        nxt = [t - sent for t in self.thresholds if t > sent]
        return min(nxt) if nxt else 1 << 62

    def sent(self, flow: Flow, n: int) -> list[int]:
        before = self.queue(flow.id)
        self.bytes[flow.id] += n
        return [flow.id] if self.queue(flow.id) != before else []

    def finish(self, flow: Flow) -> list[int]:
        self.bytes.pop(flow.id, None)
        return []


class _ByAge(Policy):
    """What :class:`FifoLm` and :class:`Tafe` share: a coflow's queue follows
    its age (moving every ``quantum`` seconds, re-marked at :meth:`tick`) and
    the bytes this host has sent of it; subclasses say how in
    ``_queue_at``."""

    def __init__(self, quantum_s: float, t0: float) -> None:
        self.quantum = float(quantum_s)
        self.period = self.quantum / 4
        self.t0 = self.now = t0
        self.arrival: dict[int, float] = {}  # flow id -> its coflow's arrival (s after t0)
        self.of: dict[int, int] = {}  # flow id -> coflow rank
        self.bytes: dict[int, int] = {}  # coflow rank -> bytes sent from here
        self.users: dict[int, int] = {}  # coflow rank -> active flows here

    def _queue_at(self, fid: int, now: float) -> int:
        raise NotImplementedError

    def clock(self, now: float) -> None:
        """Ages move only at :meth:`tick`, which re-marks the flows whose queue changed."""

    def start(self, flow: Flow) -> None:
        fid, c = flow.id, flow.coflow_rank
        self.arrival[fid] = flow.coflow_arrival_s
        self.of[fid] = c
        self.users[c] = self.users.get(c, 0) + 1

    def queue(self, fid: int) -> int:
        return self._queue_at(fid, self.now) if fid in self.of else 7

    def tick(self, now: float) -> list[int]:
        """The clock moved to ``now``: the flows whose queue changed with their age."""
        changed = [f for f in self.of if self._queue_at(f, now) != self._queue_at(f, self.now)]
        self.now = now
        return changed

    def finish(self, flow: Flow) -> list[int]:
        c = self.of.pop(flow.id)
        self.arrival.pop(flow.id, None)
        self.users[c] -= 1
        if self.users[c] == 0:
            del self.users[c]
            self.bytes.pop(c, None)
        return []


class FifoLm(_ByAge):
    """FIFO-LM with eight queues, decided by each sender alone. A light
    coflow's queue follows its age (its place in arrival order, which all
    senders agree on without talking): it starts in queue 6 and moves up one
    queue every ``quantum`` seconds, to queue 0; so older coflows are served
    first and coflows that arrived within one quantum share a queue. A
    coflow that has sent ``heavy`` bytes from this host (Baraat's per-link
    classification, on this host's uplink) is heavy: the heavy coflows share
    queue 7, below every light one, as Baraat multiplexes heavy tasks with
    the tasks after them instead of letting them block the line (3.3)."""

    def __init__(self, heavy: int, quantum_s: float, t0: float = 0.0) -> None:
        super().__init__(quantum_s, t0)
        self.heavy = int(heavy)

    def _queue_at(self, fid: int, now: float) -> int:
        age = max(0.0, now - self.t0 - self.arrival[fid])
        if self.bytes.get(self.of[fid], 0) >= self.heavy:
            return 7
        return max(0, 6 - int(age / self.quantum))

    def limit(self, fid: int, sent: int) -> int:
        left = self.heavy - self.bytes.get(self.of[fid], 0)
        return left if left > 0 else 1 << 62

    def sent(self, flow: Flow, n: int) -> list[int]:
        c = flow.coflow_rank
        before = self.bytes.get(c, 0)
        self.bytes[c] = before + n
        if before < self.heavy <= before + n:
            return [f for f, cc in self.of.items() if cc == c]
        return []


def _age_queue(first: int, n: int, age_s: float, quantum_s: float) -> int:
    """FIFO by age on the queues ``first .. first + n - 1``: a coflow enters the
    band's lowest queue and climbs one queue per ``quantum_s`` of age, so every
    sender agrees on the order of coflows without talking (Baraat's task ids
    as far as ``n`` queues can tell them apart)."""
    return first + max(0, n - 1 - int(max(0.0, age_s) / quantum_s))


class Tafe(_ByAge):
    """TAFE's task-awareness, decided by each sender on what it has sent: a
    task (coflow) is at level k once this host has sent ``thresholds[k-1]``
    bytes of it (TAFE counts the task's bytes everywhere: here each sender
    counts its own). The 8 queues are split into bands, one per level
    (level 0 the highest, the first band the widest); inside a band, tasks
    FIFO by age as :class:`FifoLm` (TAFE's FIFO among the tasks of a
    queue). Flows that start later enter their task's current level. TAFE's
    flow-awareness (the window rule, shorter remaining flow first inside a
    task) needs a TCP change and is not emulated: the flows of a task share
    by TCP."""

    def __init__(self, thresholds: list[int], quantum_s: float, t0: float = 0.0) -> None:
        super().__init__(quantum_s, t0)
        self.thresholds = sorted(int(t) for t in thresholds)[:7]
        levels = len(self.thresholds) + 1
        width = [8 // levels] * levels
        width[0] += 8 - sum(width)
        self.bands = [(sum(width[:k]), width[k]) for k in range(levels)]

    def level(self, c: int) -> int:
        """Coflow ``c``'s level: how many thresholds the bytes this host sent of it reached."""
        b = self.bytes.get(c, 0)
        return sum(1 for t in self.thresholds if b >= t)

    def _queue_at(self, fid: int, now: float) -> int:
        first, n = self.bands[self.level(self.of[fid])]
        return _age_queue(first, n, now - self.t0 - self.arrival[fid], self.quantum)

    def limit(self, fid: int, sent: int) -> int:
        b = self.bytes.get(self.of[fid], 0)
        nxt = [t - b for t in self.thresholds if t > b]
        return min(nxt) if nxt else 1 << 62

    def sent(self, flow: Flow, n: int) -> list[int]:
        c = flow.coflow_rank
        before = self.level(c)
        self.bytes[c] = self.bytes.get(c, 0) + n
        return [f for f, cc in self.of.items() if cc == c] if self.level(c) != before else []


class Karuna(Policy):
    """Karuna's three flow types at each sender. Type 1 (a deadline): queue 0,
    paced at its minimal rate, bytes left over time left (never below the
    floor), re-set every ``period`` (SO_MAX_PACING_RATE). Type 2 (a known
    size): queue ``1 + #{t in split: size > t}``. Type 3 (size unknown):
    starts in queue 1, demoted by bytes sent through ``sieve`` (as PIAS).
    A flow of the plan is type 1 if it carries a deadline (``deadline_s``,
    seconds after its start), type 3 if its size is unknown
    (``size_known`` false), else type 2."""

    period = 0.01

    def __init__(self, split: list[int], sieve: list[int], rtt_s: float = 100e-6) -> None:
        #: the pacing floor, bytes per second: two 1,460-byte segments per RTT (the simulator's)
        self.floor = 2 * 1460 / rtt_s
        self.split = sorted(int(t) for t in split)[:6]
        self.sieve = sorted(int(t) for t in sieve)[:6]
        self.flows: dict[int, Flow] = {}
        self.bytes: dict[int, int] = {}
        self.began: dict[int, float] = {}
        self.now = 0.0

    @staticmethod
    def kind(flow: Flow) -> int:
        """Karuna's type of ``flow``: 1 (a deadline), 2 (a known size) or 3 (size unknown)."""
        if flow.deadline_s is not None:
            return 1
        if not flow.size_known:
            return 3
        return 2

    def start(self, flow: Flow) -> None:
        self.flows[flow.id] = flow
        self.bytes[flow.id] = 0
        self.began[flow.id] = self.now

    def queue(self, fid: int) -> int:
        flow = self.flows.get(fid)
        if flow is None:
            return 7
        k = self.kind(flow)
        if k == 1:
            return 0
        if k == 2:
            return 1 + sum(1 for t in self.split if flow.size > t)
        return 1 + sum(1 for t in self.sieve if self.bytes[fid] >= t)

    def rate(self, fid: int) -> int | None:
        """A type-1 flow's pacing rate now, bytes per second (None: not paced)."""
        flow = self.flows.get(fid)
        if flow is None or flow.deadline_s is None:  # not type 1
            return None
        left = flow.size - self.bytes[fid]
        time_left = self.began[fid] + flow.deadline_s - self.now
        need = left / time_left if time_left > 0 else 0.0
        return int(max(need, self.floor))

    def limit(self, fid: int, sent: int) -> int:
        if self.kind(self.flows[fid]) != 3:
            return 1 << 62
        nxt = [t - sent for t in self.sieve if t > sent]
        return min(nxt) if nxt else 1 << 62

    def sent(self, flow: Flow, n: int) -> list[int]:
        before = self.queue(flow.id)
        self.bytes[flow.id] += n
        return [flow.id] if self.queue(flow.id) != before else []

    def tick(self, now: float) -> list[int]:
        self.now = now
        return [f for f, flow in self.flows.items() if self.kind(flow) == 1]

    def finish(self, flow: Flow) -> list[int]:
        self.flows.pop(flow.id, None)
        self.bytes.pop(flow.id, None)
        self.began.pop(flow.id, None)
        return []


#: D-CAS's control messages (UDP): a datagram is a head (magic, version, kind, the host that sends
#: it, how many entries follow) and up to :data:`_CONTROL_MAX` entries of one kind, each the
#: announcement number (the sender's round for that coflow, echoed by the reply), the coflow (its
#: rank in the plan, which every host knows) and the value (bytes). A sender puts every
#: announcement of a tick to one receiver in one datagram, and a receiver its replies to one sender
#: (version 2; version 1 carried one entry a datagram, and cost a 2-core testbed of 16 hosts half a
#: core: docs/testbed.md).
_CONTROL_HEAD = struct.Struct("!4sBBHH")
_CONTROL_ENTRY = struct.Struct("!IQQ")
_CONTROL_MAGIC = b"CKDC"
_CONTROL_VERSION = 2
#: Entries a datagram carries at most (1,290 bytes: one packet on any link of 1,500 bytes).
_CONTROL_MAX = 64
#: How many of the negotiated decisions that moved a priority a worker reports.
_RAISED_LOG = 1000
ANNOUNCE, REPLY = 1, 2


def encode_control(kind: int, host: int, entries: Sequence[tuple[int, int, int]]) -> bytes:
    """One control datagram: ``kind`` :data:`ANNOUNCE` (a sender's desired priorities) or
    :data:`REPLY` (a receiver's feedback), from ``host``, with ``entries`` (number, coflow, value):
    1 to :data:`_CONTROL_MAX` of them."""
    if not 1 <= len(entries) <= _CONTROL_MAX:
        raise ValueError(f"a control datagram carries 1 to {_CONTROL_MAX} entries, not {len(entries)}")
    head = _CONTROL_HEAD.pack(_CONTROL_MAGIC, _CONTROL_VERSION, kind, host, len(entries))
    return head + b"".join(_CONTROL_ENTRY.pack(*e) for e in entries)


def decode_control(data: bytes, n_hosts: int) -> tuple[int, int, list[tuple[int, int, int]]] | str:
    """``(kind, host, entries)`` of a control datagram, each entry ``(number, coflow, value)``, or why
    it is not one (``size``, ``magic``, ``version``, ``kind``, ``host``): never raises."""
    if len(data) < _CONTROL_HEAD.size:
        return "size"
    magic, version, kind, host, n = _CONTROL_HEAD.unpack_from(data)
    if magic != _CONTROL_MAGIC:
        return "magic"
    if version != _CONTROL_VERSION:
        return "version"
    if not 1 <= n <= _CONTROL_MAX or len(data) != _CONTROL_HEAD.size + n * _CONTROL_ENTRY.size:
        return "size"
    if kind not in (ANNOUNCE, REPLY):
        return "kind"
    if host >= n_hosts:
        return "host"
    return kind, host, list(_CONTROL_ENTRY.iter_unpack(data[_CONTROL_HEAD.size :]))


def combine(how: str, values: list[int]) -> int:
    """D-CAS's Ψ and Φ over ``values`` (not empty): ``max`` (the paper's), ``min``, or ``mean``
    rounded to the nearest whole value, halves up (the simulator's ``Combine``)."""
    if how == "max":
        return max(values)
    if how == "min":
        return min(values)
    if how == "mean":
        return (2 * sum(values) + len(values)) // (2 * len(values))
    raise ValueError(f"dcas: unknown combination {how!r} (max, min, mean)")


class _Sub:
    """A subcoflow at a tick (:meth:`Dcas._subcoflows`)."""

    __slots__ = ("arrival", "in_socket", "receivers")

    def __init__(self, arrival: float) -> None:
        self.arrival = arrival
        self.in_socket = 0
        self.receivers: set[int] = set()


class _Round:
    """A negotiation in progress: announcement ``number`` of desired priority ``d`` to
    ``receivers`` at ``at``, decided at ``deadline`` or when every receiver replied."""

    __slots__ = ("number", "d", "receivers", "at", "deadline", "replies")

    def __init__(self, number: int, d: int, receivers: list[int], at: float, deadline: float) -> None:
        self.number, self.d, self.receivers, self.at, self.deadline = number, d, receivers, at, deadline
        self.replies: dict[int, int] = {}


class Dcas(Policy):
    """D-CAS (Pseudocode 1 and 2) at each host, with no coordinator.

    Sender, every ``period`` (delta) and when a subcoflow (a coflow's flows
    from this host) appears: bytes left here below ``threshold`` give
    ``<0, arrival order>``: FIFO by age on queues 0-3; else no bytes sent for
    longer than ``starve_s`` gives ``<1, 0>``: queue 4; else the desired
    priority ``d`` is the bytes left here (D-CAS's rem over the NIC rate,
    every NIC alike) and ``<1, P>`` goes to queues 4-7 by ``P`` against
    ``bands`` (three byte counts; default ``threshold`` times 4, 16, 64). With ``negotiate`` the sender announces
    ``d`` to the receivers of the subcoflow (the hosts its flows here go to)
    through :attr:`post` and sets ``<1, Φ(replies)>`` once every
    receiver replied, or at ``wait_s`` after the announcement with the
    replies that came (``phi``: Φ, ``max`` by default); ``<1, d>`` if none came (all lost). Meanwhile the
    subcoflow keeps its priority (``<1, d>`` if it has none yet). A new
    announcement drops a negotiation still open. Without ``negotiate`` a
    sender keeps its own ``<1, d>``: D-CAS when every control message is
    lost (the simulator's ``dcas:loss=1``).

    Receiver (:meth:`announce`): caches the latest desired priority per
    (coflow, sender), drops entries older than ``expiry_s`` and replies
    Ψ (``psi``, ``max`` by default) of the cached values of that coflow to
    the announcer.

    The worker carries the messages (:meth:`Worker.control`) and calls
    :meth:`reply` and :meth:`settle`; :attr:`stats` counts what happened."""

    def __init__(
        self,
        threshold: int,
        quantum_s: float,
        delta_s: float,
        starve_s: float,
        t0: float = 0.0,
        negotiate: bool = False,
        expiry_s: float | None = None,
        wait_s: float | None = None,
        host: int = 0,
        psi: str = "max",
        phi: str = "max",
        keep_own: bool = False,
        bands: Sequence[int] | None = None,
        count: str = "wire",
    ) -> None:
        self.threshold = int(threshold)
        if count not in ("wire", "written"):
            raise ValueError(f"dcas: count {count!r} must be 'wire' or 'written'")
        #: how a sender counts a subcoflow's bytes left and whether it was served: ``wire`` (the
        #: default) by the bytes its receivers have not acknowledged yet, as the simulator's bytes left;
        #: ``written`` (a diagnostic: how the replay counted before 2026-11-24) by the bytes not yet
        #: handed to the socket, which holds up to its send buffer of them, so that a subcoflow whose
        #: last bytes wait there counts as short (queues 0-3) and as served while they wait
        self.count = count
        #: bytes of flow ``fid`` in its socket, written and not yet acknowledged (the worker sets it)
        self.unacked: Callable[[int], int] = lambda fid: 0
        self.acked: dict[int, int] = {}  # coflow -> bytes acknowledged at the last tick (count="wire")
        self.bands = dcas_bands(self.threshold, bands)
        self.quantum = float(quantum_s)
        self.period = float(delta_s)
        self.starve = float(starve_s)
        self.t0 = self.now = t0
        self.negotiate = bool(negotiate)
        #: a diagnostic: negotiate (every message sent, replied to and counted) but set ``<1, d>``, the
        #: sender's own, at once and whatever the replies say, as without negotiation: what negotiating
        #: costs a host apart from what it decides
        self.keep_own = bool(keep_own)
        # D-CAS's expiry is twice T (2 s and 1 s); a round ends before the next tick.
        self.expiry = float(expiry_s) if expiry_s is not None else 2 * self.starve
        self.wait = float(wait_s) if wait_s is not None else 0.8 * self.period
        if not 0 < self.wait < self.period:
            raise ValueError(f"dcas: wait_s {self.wait} must be positive and shorter than delta_s {self.period}")
        self.host = int(host)
        for key, how in (("psi", psi), ("phi", phi)):
            check_combination(key, how)  # now, not at the first message
        self.psi, self.phi = psi, phi
        self.flows: dict[int, Flow] = {}
        self.bytes: dict[int, int] = {}
        self.left: dict[int, int] = {}  # coflow -> bytes left here to write (of its started flows)
        self.total: dict[int, int] = {}  # coflow -> bytes of its flows started here and not all finished
        self.served: dict[int, float] = {}  # coflow -> last instant it sent
        self.prio: dict[int, int] = {}  # coflow -> queue, decided at the last tick
        # Sender: the announcement number per coflow, and the negotiations open.
        self.number: dict[int, int] = {}
        self.open: dict[int, _Round] = {}
        # Receiver: coflow -> sender -> (latest desired priority, when it came).
        self.cache: dict[int, dict[int, tuple[int, float]]] = {}
        #: Messages to send, (destination host, datagram), unless the worker sets :attr:`post`.
        self.outbox: list[tuple[int, bytes]] = []
        #: Entries to send at the next :meth:`flush`, by (destination host, kind).
        self.batch: dict[tuple[int, int], list[tuple[int, int, int]]] = {}
        self.post: Callable[[int, bytes], None] = lambda dst, msg: self.outbox.append((dst, msg))
        #: Per coflow, how often its subcoflow here was decided as large (at or above the threshold),
        #: and of those how often as starving (``<1, 0>``): the simulator's decision log counts the same.
        self.runs: dict[int, list[int]] = {}
        #: Round trips (announcement to reply) of the replies that came in time, seconds.
        self.rtts: list[float] = []
        #: how long each round took from its announcement to its decision (the last reply, or the wait)
        self.rounds: list[float] = []
        #: The negotiated decisions that moved a priority: (instant, coflow, d, Phi(replies),
        #: queue), the first :data:`_RAISED_LOG` of them.
        self.raised: list[tuple[float, int, int, int, int]] = []
        self.stats = {
            "announcements": 0,  # sent (one per receiver and round)
            "replies_received": 0,  # in time, for the open round
            "replies_missing": 0,  # not there when the round was decided or dropped
            "replies_late": 0,  # came for a round no longer open
            "replies_sent": 0,  # as a receiver
            "negotiated": 0,  # rounds decided with at least one reply
            "fallback": 0,  # rounds decided with none: <1, d>
            "raised_value": 0,  # negotiated rounds where Phi(replies) != d
            "changed_queue": 0,  # ... and it gave another queue than <1, d> would
            "dropped_rounds": 0,  # rounds still open when the next one started (or the subcoflow ended)
            "datagrams": 0,  # sent, announcements and replies (several entries each)
        }

    def _large(self, value: int) -> int:
        """The queue of ``<1, value>``: 4-7 by ``value`` against :attr:`bands`."""
        return 4 + sum(1 for b in self.bands if value >= b)

    def _subcoflows(self) -> dict[int, _Sub]:
        """The subcoflows here, in one pass over the flows: each one's arrival, bytes written and not
        yet acknowledged (none counted with ``count="written"``) and receivers."""
        out: dict[int, _Sub] = {}
        wire = self.count == "wire"
        for fid, f in self.flows.items():
            sub = out.get(f.coflow_rank)
            if sub is None:
                sub = out[f.coflow_rank] = _Sub(f.coflow_arrival_s)
            if wire:
                sub.in_socket += self.unacked(fid)
            sub.receivers.add(f.dst)
        return out

    def _decide(self, c: int, now: float, sub: _Sub) -> int:
        """Pseudocode 1 for coflow ``c``'s subcoflow here, ``sub``: its queue (announcing, if it
        negotiates)."""
        self._drop(c)
        left = self.left.get(c, 0) + sub.in_socket
        if left < self.threshold:
            return _age_queue(0, 4, now - self.t0 - sub.arrival, self.quantum)
        runs = self.runs.setdefault(c, [0, 0])
        runs[0] += 1
        if now - self.served.get(c, now) > self.starve:
            runs[1] += 1
            return 4
        if not self.negotiate:
            return self._large(left)
        n = self.number[c] = self.number.get(c, 0) + 1
        receivers = sorted(sub.receivers)
        self.open[c] = _Round(n, left, receivers, now, now + self.wait)
        for r in receivers:
            self.stats["announcements"] += 1
            self.batch.setdefault((r, ANNOUNCE), []).append((n, c, max(0, left)))
        if self.keep_own:
            return self._large(left)
        return self.prio.get(c, self._large(left))

    def _drop(self, c: int) -> None:
        r = self.open.pop(c, None)
        if r is not None:
            self.stats["dropped_rounds"] += 1
            self.stats["replies_missing"] += len(r.receivers) - len(r.replies)

    def _set(self, c: int, q: int) -> list[int]:
        if q == self.prio.get(c):
            return []
        self.prio[c] = q
        return [fid for fid, f in self.flows.items() if f.coflow_rank == c]

    def _close(self, c: int, now: float) -> list[int]:
        """The end of ``c``'s negotiation: ``<1, Φ(replies)>``, or ``<1, d>`` with none."""
        r = self.open.pop(c)
        self.rounds.append(now - r.at)
        self.stats["replies_missing"] += len(r.receivers) - len(r.replies)
        if r.replies:
            p = combine(self.phi, list(r.replies.values()))
            self.stats["negotiated"] += 1
            self.stats["raised_value"] += p != r.d
            self.stats["changed_queue"] += self._large(p) != self._large(r.d)
            if p != r.d and len(self.raised) < _RAISED_LOG:
                self.raised.append((now, c, r.d, p, self._large(p)))
        else:
            p = r.d
            self.stats["fallback"] += 1
        return self._set(c, self._large(r.d if self.keep_own else p))

    def start(self, flow: Flow) -> None:
        fid, c = flow.id, flow.coflow_rank
        new = c not in self.left
        self.flows[fid] = flow
        self.bytes[fid] = 0
        self.left[c] = self.left.get(c, 0) + flow.size
        self.total[c] = self.total.get(c, 0) + flow.size
        if new:
            self.served[c] = self.now
            # Its first flow here: nothing written yet, one receiver.
            sub = _Sub(flow.coflow_arrival_s)
            sub.receivers.add(flow.dst)
            self.prio[c] = self._decide(c, self.now, sub)
            self.flush()

    def queue(self, fid: int) -> int:
        flow = self.flows.get(fid)
        return self.prio.get(flow.coflow_rank, 7) if flow is not None else 7

    def sent(self, flow: Flow, n: int) -> list[int]:
        self.bytes[flow.id] += n
        self.left[flow.coflow_rank] -= n
        if self.count == "written":
            self.served[flow.coflow_rank] = self.now
        return []

    def settle(self, now: float) -> list[int]:
        """Decides the negotiations whose wait is over at ``now``; returns the flows whose queue changed."""
        changed = []
        for c in [c for c, r in self.open.items() if r.deadline <= now]:
            changed += self._close(c, now)
        return changed

    def tick(self, now: float) -> list[int]:
        changed = self.settle(now)
        self.now = now
        subs = self._subcoflows()
        for c, sub in subs.items():
            if self.count == "wire":
                # Served: its receivers acknowledged bytes since the last tick (bytes handed to the
                # socket may wait there, starved, as long as they would wait in the application).
                acked = self.total[c] - self.left[c] - sub.in_socket
                if acked > self.acked.get(c, 0):
                    self.served[c] = now
                self.acked[c] = acked
            changed += self._set(c, self._decide(c, now, sub))
        self.flush()
        for c in list(self.cache):  # receiver: forget what expired
            self._expire(c, now)
        return list(dict.fromkeys(changed))

    def _expire(self, c: int, now: float) -> None:
        entries = self.cache[c]
        for s in [s for s, (_, at) in entries.items() if at + self.expiry <= now]:
            del entries[s]
        if not entries:
            del self.cache[c]

    def announce(self, now: float, sender: int, number: int, c: int, value: int) -> None:
        """Pseudocode 2: ``sender`` desires ``value`` for coflow ``c``: cache it, drop what
        expired, reply max(cached values of ``c``)."""
        self.cache.setdefault(c, {})[sender] = (value, now)
        self._expire(c, now)
        psi = combine(self.psi, [v for v, _ in self.cache[c].values()])
        self.stats["replies_sent"] += 1
        self.batch.setdefault((sender, REPLY), []).append((number, c, psi))

    def flush(self) -> None:
        """Posts what :meth:`tick`, :meth:`start` and :meth:`announce` queued: one datagram per
        destination and kind (more past :data:`_CONTROL_MAX` entries)."""
        for (dst, kind), entries in self.batch.items():
            for i in range(0, len(entries), _CONTROL_MAX):
                self.stats["datagrams"] += 1
                self.post(dst, encode_control(kind, self.host, entries[i : i + _CONTROL_MAX]))
        self.batch.clear()

    def reply(self, now: float, receiver: int, number: int, c: int, value: int) -> list[int]:
        """``receiver``'s feedback ``value`` to announcement ``number`` of coflow ``c``; returns
        the flows whose queue changed (the round is decided once every receiver replied)."""
        r = self.open.get(c)
        if r is None or r.number != number or receiver not in r.receivers or receiver in r.replies:
            self.stats["replies_late"] += 1
            return []
        self.stats["replies_received"] += 1
        self.rtts.append(now - r.at)
        r.replies[receiver] = value
        return self._close(c, now) if len(r.replies) == len(r.receivers) else []

    def finish(self, flow: Flow) -> list[int]:
        c = flow.coflow_rank
        self.flows.pop(flow.id, None)
        self.left[c] -= flow.size - self.bytes.pop(flow.id, 0)
        if not any(f.coflow_rank == c for f in self.flows.values()):
            self._drop(c)
            for d in (self.left, self.total, self.acked, self.served, self.prio):
                d.pop(c, None)
        return []


def spread(xs: list[float]) -> list[float]:
    """Durations in a worker's result: [mean, 99th percentile, max], or [] if none."""
    return [float(np.mean(xs)), float(np.percentile(xs, 99)), float(max(xs))] if xs else []


def make_policy(spec: Mapping[str, Any]) -> Policy:
    """The policy a plan's ``policy`` spec names (``plain`` if it names none)."""
    name = spec.get("name", "plain")
    if name == "plain":
        return Policy()
    if name == "pias":
        return Pias(spec["thresholds"])
    if name == "fifo-lm":
        return FifoLm(spec["heavy"], spec["quantum_s"])
    if name == "tafe":
        return Tafe(spec["thresholds"], spec["quantum_s"])
    if name == "karuna":
        return Karuna(spec["split"], spec["sieve"], spec.get("rtt_s", 100e-6))
    if name == "dcas":
        return Dcas(
            spec["threshold"],
            spec["quantum_s"],
            spec["delta_s"],
            spec["starve_s"],
            negotiate=spec.get("negotiate", False),
            expiry_s=spec.get("expiry_s"),
            wait_s=spec.get("wait_s"),
            psi=spec.get("psi", "max"),
            phi=spec.get("phi", "max"),
            keep_own=spec.get("keep_own", False),
            bands=spec.get("bands"),
            count=spec.get("count", "wire"),
        )
    raise ValueError(f"unknown replay policy {name!r}")


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
        #: tests: flows whose first connection this sender resets halfway through the flow
        self.inject_reset = set(plan.inject_reset)
        #: idle connections by destination
        self.pool: dict[int, list[socket.socket]] = {}
        self.deadline = deadline_s
        self.policy = make_policy(plan.policy)
        if isinstance(self.policy, Dcas):
            self.policy.unacked = self._unacked
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
        for fid in fids:
            sock = self.socks.get(fid)
            if sock is not None:
                sock.setsockopt(socket.IPPROTO_IP, socket.IP_TOS, _tos(self.policy.queue(fid)))
                rate = self.policy.rate(fid)
                rate = self.pace if rate is None else rate
                if rate is not None:
                    sock.setsockopt(socket.SOL_SOCKET, SO_MAX_PACING_RATE, _u32(min(rate, _UNPACED - 1)))
                    self.paced.add(sock)

    async def _heartbeat(self) -> None:
        """How late the event loop wakes a 10 ms timer: its stalls, whoever caused them."""
        while True:
            t = time.time()
            await asyncio.sleep(0.01)
            self.stalls.append(time.time() - t - 0.01)

    async def _ticker(self) -> None:
        period = self.policy.period or 1.0
        while True:
            await asyncio.sleep(period)
            self._mark(self.policy.tick(time.time()))
            self._settle_later()

    def _settle_later(self) -> None:
        """D-CAS: decide the negotiations just announced once their wait is over (unless every reply came first)."""
        policy = self.policy
        if self.ctl is not None and isinstance(policy, Dcas) and policy.open:
            self.loop.call_later(policy.wait, lambda: self._mark(policy.settle(time.time())))

    def _open_control(self) -> None:
        """D-CAS's control channel: a UDP socket on this host's control port, marked queue 0 so
        that announcements and replies are not stuck behind data. UDP because D-CAS tolerates a
        lost message by design (the sender falls back on its own desired priority), so there is
        no connection to keep and nothing to retransmit."""
        if not isinstance(self.policy, Dcas) or not self.policy.negotiate:
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
        self.policy.host = self.host
        self.policy.post = self._post
        self.loop.add_reader(ctl.fileno(), self.control)

    def _post(self, dst: int, msg: bytes) -> None:
        assert self.ctl is not None
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
        assert self.ctl is not None and isinstance(self.policy, Dcas)
        while True:
            try:
                data, src = self.ctl.recvfrom(2048)
            except BlockingIOError:
                self.policy.flush()  # the replies to what came, one datagram per sender
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
            now = time.time()
            for number, coflow, value in entries:
                try:
                    if kind == ANNOUNCE:
                        self.policy.announce(now, host, number, coflow, value)
                    else:
                        self._mark(self.policy.reply(now, host, number, coflow, value))
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
            self.policy.clock(time.time())
            self.policy.start(flow)
            self._mark([fid])
            self._settle_later()
            await self.loop.sock_sendall(sock, _HEADER.pack(fid, size))
            while n < size:
                k = min(_CHUNK, size - n, max(1, self.policy.limit(fid, n)))
                cut = attempt == 1 and fid in self.inject_reset  # tests: reset once half is written
                if cut:
                    k = min(k, max(1, size // 2 - n))
                chunk = _payload(fid, n, k)
                await self.loop.sock_sendall(sock, chunk)
                crc = zlib.crc32(chunk, crc)
                n += k
                self._mark(self.policy.sent(flow, k))
                if cut and 2 * n >= size:
                    sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
                    raise OSError(f"reset on purpose after {n} of {size} bytes (inject_reset)")
            t_written = time.time()
            ack = await self.loop.sock_recv(sock, 1)
            if ack != b"k":
                raise OSError("no acknowledgement from the receiver")
            # start, bytes, CRC; then when the connection was ready, whether it
            # was opened for this flow, and when its last byte was written.
            self.sent[fid] = [t_start, n, crc, t_conn, fresh, t_written]
            self.pool.setdefault(dst, []).append(sock)
            return True
        except OSError as e:
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
            self._mark(self.policy.finish(flow))

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
        # crates/py/src/replay_receiver.rs); it ends once every flow sent here arrived
        # whole, or at the deadline.
        rx = self.loop.run_in_executor(
            None, _core.receive_flows, server.fileno(), self.host, self.n_in, self.deadline
        )  # fmt: skip
        t = time.time()
        await self.warm_up()
        self.warm_up_s = time.time() - t
        if isinstance(self.policy, FifoLm | Tafe | Dcas):
            self.policy.t0 = self.policy.now = self.t0
        ticker = asyncio.ensure_future(self._ticker()) if self.policy.period else None
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
        if ticker is not None:
            ticker.cancel()
        server.close()
        if self.ctl is not None:
            self.loop.remove_reader(self.ctl.fileno())
            self.ctl.close()
        return {
            "host": self.host,
            "sent": self.sent,
            "received": self.received,
            "errors": self.errors,
            "broken": self.broken,
            "resent": self.resent,
            "t0": self.t0,
            "warm_up_s": self.warm_up_s,
            "warm_up_failed": self.warm_up_failed,
            "new_conns": self.new_conns,
            # the event loop's stalls (s): mean, 99th percentile, max; the worker's CPU seconds and wall
            "stalls": spread(self.stalls),
            "cpu_s": [cpu1.ru_utime - cpu0.ru_utime, cpu1.ru_stime - cpu0.ru_stime],
            "wall_s": time.time() - wall0,
            **({"control": self._control_stats()} if self.ctl is not None else {}),
            # D-CAS: per coflow, [decided as large, of which starving] (Dcas.runs)
            **({"dcas_runs": self.policy.runs} if isinstance(self.policy, Dcas) else {}),
        }

    def _control_stats(self) -> dict[str, Any]:
        """D-CAS's negotiation as this host saw it: the policy's counts, the datagrams ignored and
        sends that failed, the round trips of the replies that came in time and the time rounds took
        from announcement to decision (mean, p99, max s)."""
        assert isinstance(self.policy, Dcas)
        rtts, rounds = self.policy.rtts, self.policy.rounds
        return {
            **self.policy.stats,
            "ignored": dict(self.ctl_bad),
            "send_failed": self.ctl_send_failed,
            "rtt_s": spread(rtts),
            # rounds decided: from the announcement to the decision (mean, p99, max s)
            "round_s": spread(rounds),
            # instant (s after t0), coflow, d, Phi(replies), queue
            "raised": [[at - self.t0, *rest] for at, *rest in self.policy.raised],
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
