"""An emulated datacenter on one Linux machine: one network namespace per host
and per switch, veth links between them, and each port's capacity and eight
strict-priority queues enforced with ``tc``.

The fabric comes from the same topology spec or file as the simulator
(``_core.topology_graph``): every directed link of the simulator becomes the
egress of one veth end, shaped by an HTB tree::

    root 1: htb (default 1:17)
      1:1   rate = ceil = the link's capacity
        1:10 .. 1:17   prio 0 .. 7, ceil = capacity, a token guaranteed rate

Queue ``q`` (0 is the highest) is selected by DSCP class selector CS(7 - q)
on every port (a ``u32`` filter on the DS field), so unmarked traffic (CS0)
is in the lowest queue, and by ``SO_PRIORITY`` = ``0x10010 + q`` on a host's
own egress (the kernel picks the HTB class; the priority does not cross a
veth). HTB serves lower ``prio`` classes first when they borrow from the
parent: strict priority, since each class is guaranteed only a token rate.
Switches are Linux bridges, so the fabric must be loop-free (a big switch or
a tree); fabrics with path diversity are refused. Each host also gets a
management link to a bridge in the root namespace, unshaped, so that a
coordinator outside the namespaces reaches the agents inside them.

What this kernel lacks is probed, not assumed (:func:`probe`): without the
``red`` qdisc there is no ECN marking at a queue threshold, without ``netem``
no added propagation delay; ``status`` and ``up`` say so.

Everything ``up`` makes is named from the testbed's name and is recorded in a
state file before it is made, and ``down`` removes what the state file lists
and anything else that carries the name, so it cleans up after a crash too.
"""

from __future__ import annotations

import ipaddress
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .. import _core
from ..util import write_json

#: Queues per port; queue 0 is served first.
N_QUEUES = 8
#: The largest GSO packet a testbed veth passes (the kernel's default is 64 KiB).
GSO_MAX_BYTES = 16_384
#: A host's own egress queues (its NIC's), bytes each: deep enough that the host's own
#: senders never lose a packet there. A real host does not drop its own packets: the
#: NIC's ring, BQL and TCP Small Queues push back on the socket instead. Here a 64 KiB
#: host queue dropped 327,618 packets in one 16-host FB2010 replay (the switch ports
#: 2,193) and cost SYNs their one-second timeout (measured, examples/testbed/diagnose.py).
HOST_QUEUE_BYTES = 4 << 20
#: TCP Small Queues' limit in the host namespaces (net.ipv4.tcp_limit_output_bytes): the
#: bytes one socket may have in its host's queues. The machine's 4 MiB let a handful of
#: sockets fill a host queue; at 32 KiB (the kernel raises it to two GSO packets) the
#: sockets of one host take turns in its FIFO, about the per-flow sharing of the host's
#: link that the simulator assumes.
TSQ_BYTES = 32 << 10
#: TCP's minimum retransmission timeout on the data network, as datacenter stacks lower it.
DEFAULT_RTO_MIN_MS = 10
#: The minimum timeouts a testbed may set, ms (the kernel's own is 200).
RTO_MIN_RANGE_MS = (1, 200)
#: The kernel's ceiling on TCP's retransmission timeout (net.ipv4.tcp_rto_max_ms): 120 s, and at
#: least 1 s where it may be lowered (Linux 6.15 and later).
KERNEL_RTO_MAX_MS = 120_000
#: The ceilings a testbed may set, ms: the kernel's range.
RTO_MAX_RANGE_MS = (1_000, KERNEL_RTO_MAX_MS)
#: The least a switch queue may hold: two full-size packets.
BUFFER_MIN_BYTES = 3_000
#: The testbed's ceiling, where the kernel lets it be lowered: a flow starved behind a higher
#: strict-priority queue times out again and again, each timeout doubling the next, and at the
#: kernel's 120 s it then sat idle for up to tens of seconds after the queue above it had
#: emptied: `pias`'s replay took 94-114 s instead of plain TCP's 79 s and its large coflows
#: 0.55 s instead of 0.40 s (measured, docs/testbed.md). Linux lets datacenter stacks lower it
#: for this reason, as they lower the minimum (DEFAULT_RTO_MIN_MS).
DEFAULT_RTO_MAX_MS = 1_000
#: TCP's retries before it gives a connection up (net.ipv4.tcp_retries2) where the testbed lowers
#: the ceiling: the kernel measures the give-up time with the ceiling, so the default 15 retries
#: would give up after about 14 s without an ACK at a 1 s ceiling (924.6 s at 120 s); 255
#: retries give about 254 s.
RTO_MAX_RETRIES = 255
#: The TCP congestion control the testbed's senders use unless told otherwise, set on each
#: socket (a namespace's default can only be one the machine allows unprivileged; here the
#: machine's default was BBR, whose bandwidth estimate collapsed to a few kbit/s after a flow
#: sat starved behind a higher-priority queue, stalling a replay: measured).
DEFAULT_TCP_CC = "cubic"
#: Where state files live unless told otherwise.
DEFAULT_STATE_DIR = Path("/run/coflowkit")
_NAME_RE = re.compile(r"^[a-z][a-z0-9]{0,5}$")
#: How to try each qdisc kind (its arguments after `root`).
_QDISC_PROBES: dict[str, str] = {
    "htb": "htb",
    "tbf": "tbf rate 10mbit burst 10kb latency 10ms",
    "pfifo_fast": "pfifo_fast",
    "prio": "prio",
    "ets": "ets bands 8 strict 8",
    "red": "red limit 400000 min 30000 max 90000 avpkt 1000 burst 55 ecn probability 0.02 bandwidth 100mbit",
    "netem": "netem delay 1ms",
    "fq": "fq",
    "fq_codel": "fq_codel",
}


class TestbedError(RuntimeError):
    """A testbed command could not be carried out; the message says what and where."""

    __test__ = False  # not a pytest test class


def dscp_of_queue(q: int) -> int:
    """The DSCP (class selector) that selects queue ``q`` (0 is the highest)."""
    if not 0 <= q < N_QUEUES:
        raise ValueError(f"queue {q}: must be 0..{N_QUEUES - 1}")
    return (N_QUEUES - 1 - q) << 3


def tos_of_queue(q: int) -> int:
    """The IP_TOS byte (DSCP << 2, ECN bits clear) that selects queue ``q``."""
    return dscp_of_queue(q) << 2


def so_priority_of_queue(q: int) -> int:
    """The SO_PRIORITY that selects queue ``q`` at a host's own egress (HTB class 1:1q)."""
    if not 0 <= q < N_QUEUES:
        raise ValueError(f"queue {q}: must be 0..{N_QUEUES - 1}")
    return 0x10010 + q


# --- running commands --------------------------------------------------------------


def _run(cmd: Sequence[str], what: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    p = subprocess.run(list(cmd), capture_output=True, text=True)
    if check and p.returncode != 0:
        err = " ".join((p.stderr or p.stdout).split()) or f"exit {p.returncode}"
        raise TestbedError(f"{what}: `{' '.join(cmd)}` failed: {err}")
    return p


def require_rights() -> None:
    """Refuse early, naming what is missing: the tools and the rights to use them."""
    missing = [t for t in ("ip", "tc") if shutil.which(t) is None]
    if missing:
        raise TestbedError(f"testbed: {' and '.join(missing)} not found on PATH (Debian package iproute2)")
    if os.geteuid() != 0:
        # CAP_NET_ADMIN and CAP_SYS_ADMIN (for `ip netns`) are needed; root has both.
        caps = _effective_caps()
        need = {"CAP_NET_ADMIN": 12, "CAP_SYS_ADMIN": 21}
        lacking = [n for n, bit in need.items() if not caps >> bit & 1]
        if lacking:
            raise TestbedError(
                "testbed: needs root (or " + " and ".join(lacking) + ") to create namespaces, "
                "links and qdiscs; run it as root, e.g. with sudo"
            )


def _effective_caps() -> int:
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("CapEff:"):
                return int(line.split()[1], 16)
    except OSError:
        pass
    return 0


# --- the plan ----------------------------------------------------------------------


@dataclass
class Port:
    """The egress of one veth end: a directed link of the simulator's fabric."""

    link: str  # the simulator's name for the link
    ns: str
    dev: str
    capacity_bps: float


@dataclass
class Plan:
    """Everything ``up`` makes, named, before it is made."""

    name: str
    topology: str
    n_hosts: int
    host_ns: list[str]
    switch_ns: list[str]
    switch_names: list[str]
    #: veth pairs: (ns_a, dev_a, ns_b, dev_b)
    veths: list[tuple[str, str, str, str]] = field(default_factory=list)
    ports: list[Port] = field(default_factory=list)
    host_ip: list[str] = field(default_factory=list)
    mgmt_ip: list[str] = field(default_factory=list)
    mgmt_bridge: str = ""
    mgmt_root_ip: str = ""
    #: for each host, the switch namespace its data link attaches to
    host_switch: list[int] = field(default_factory=list)
    #: bytes each queue of a port holds (None: :func:`default_buffer` of the port's capacity)
    buffer_bytes: int | None = None
    #: TCP's minimum retransmission timeout on the hosts' data routes, ms (None: the kernel's, 200 ms)
    rto_min_ms: int | None = DEFAULT_RTO_MIN_MS
    #: TCP's ceiling on the retransmission timeout in the hosts, ms (None: the kernel's, 120 s)
    rto_max_ms: int | None = DEFAULT_RTO_MAX_MS
    #: the TCP congestion control the testbed's tools set on their sockets (TCP_CONGESTION)
    tcp_cc: str = DEFAULT_TCP_CC

    def to_json(self) -> dict[str, Any]:
        d = dict(self.__dict__)
        d["ports"] = [p.__dict__ for p in self.ports]
        return d

    @staticmethod
    def from_json(d: dict[str, Any]) -> Plan:
        d = dict(d)
        d["ports"] = [Port(**p) for p in d["ports"]]
        d["veths"] = [tuple(v) for v in d["veths"]]
        return Plan(**d)


def _host_ip(i: int) -> str:
    n = i + 1
    return f"10.{n >> 16 & 255}.{n >> 8 & 255}.{n & 255}"


#: The management networks a testbed may take, in the order tried: 172.30.0.0/16 first, then the rest of
#: 172.16.0.0/12, so that testbeds (and a leftover of a crashed one) coexist on one machine.
MGMT_SECOND_OCTETS: tuple[int, ...] = (30, 31, *range(29, 15, -1))


def _mgmt_ip(i: int, octet: int = 30) -> str:
    n = i + 2
    return f"172.{octet}.{n >> 8 & 255}.{n & 255}"


def _free_mgmt_octet(addrs: str, routes: str) -> int | None:
    """The first of :data:`MGMT_SECOND_OCTETS` whose 172.x.0.0/16 overlaps no address and no route of the
    root namespace (``ip -o addr show`` and ``ip -o route show``), or None when all are taken."""
    taken: list[ipaddress.IPv4Network | ipaddress.IPv6Network] = []
    for line in addrs.splitlines():
        m = re.search(r"\binet (\d+\.\d+\.\d+\.\d+/\d+)", line)
        if m:
            taken.append(ipaddress.ip_network(m.group(1), strict=False))
    for line in routes.splitlines():
        first = line.split()[0] if line.split() else ""
        if first == "default":
            continue
        try:
            taken.append(ipaddress.ip_network(first if "/" in first else f"{first}/32", strict=False))
        except ValueError:
            continue
    for octet in MGMT_SECOND_OCTETS:
        net = ipaddress.ip_network(f"172.{octet}.0.0/16")
        if not any(isinstance(t, ipaddress.IPv4Network) and t.overlaps(net) for t in taken):
            return octet
    return None


def plan(
    topology: str,
    name: str = "ck",
    n_hosts: int | None = None,
    buffer_bytes: int | None = None,
    rto_min_ms: int | None = DEFAULT_RTO_MIN_MS,
    tcp_cc: str = DEFAULT_TCP_CC,
    rto_max_ms: int | None = DEFAULT_RTO_MAX_MS,
) -> Plan:
    """The testbed a topology gives: namespaces, veths, shaped ports and addresses.
    Raises ``ValueError`` for a bad spec, a bad name, or a fabric the testbed
    cannot build (path diversity, too many hosts)."""
    if not _NAME_RE.match(name):
        raise ValueError(
            f"testbed name {name!r}: must be 1-6 lowercase letters or digits, starting with a letter "
            "(it prefixes every namespace and interface the testbed makes)"
        )
    g = _core.topology_graph(os.fspath(topology), n_hosts)
    nh = int(g["n_hosts"])
    if nh > 65_000:
        raise ValueError(f"topology {topology}: {nh} hosts; the testbed takes at most 65,000")
    switches = g["switches"]
    p = Plan(
        name=name,
        topology=os.fspath(topology),
        n_hosts=nh,
        host_ns=[f"{name}-h{i}" for i in range(nh)],
        switch_ns=[f"{name}-s{j}" for j in range(len(switches))],
        switch_names=[s["name"] for s in switches],
        host_ip=[_host_ip(i) for i in range(nh)],
        mgmt_ip=[_mgmt_ip(i) for i in range(nh)],
        mgmt_bridge=f"{name}-mgmt",
        mgmt_root_ip="172.30.0.1",
        host_switch=[-1] * nh,
        buffer_bytes=buffer_bytes,
        rto_min_ms=rto_min_ms,
        rto_max_ms=rto_max_ms,
        tcp_cc=tcp_cc,
    )
    available = Path("/proc/sys/net/ipv4/tcp_available_congestion_control")
    if available.exists() and tcp_cc not in available.read_text().split():
        raise ValueError(
            f"tcp_cc {tcp_cc!r}: this kernel offers {available.read_text().strip()} "
            "(see /proc/sys/net/ipv4/tcp_available_congestion_control)"
        )
    lo, hi = RTO_MIN_RANGE_MS
    if rto_min_ms is not None and not lo <= rto_min_ms <= hi:
        raise ValueError(f"rto_min {rto_min_ms} ms: must be {lo}..{hi} ms (200 is the kernel's default)")
    lo, hi = RTO_MAX_RANGE_MS
    if rto_max_ms is not None and not lo <= rto_max_ms <= hi:
        raise ValueError(f"rto_max {rto_max_ms} ms: must be {lo}..{hi} ms (the kernel's range; {hi} is its default)")
    if buffer_bytes is not None and buffer_bytes < BUFFER_MIN_BYTES:
        raise ValueError(
            f"buffer {buffer_bytes} bytes: a queue must hold at least two full-size packets ({BUFFER_MIN_BYTES} bytes)"
        )
    # Pair the two directions of each cable: (host i, switch j) or (switch a, switch b).
    cables: dict[tuple[tuple[str, int], tuple[str, int]], dict[tuple[tuple[str, int], tuple[str, int]], Any]] = {}
    for link in g["links"]:
        src: tuple[str, int] = (link["src"][0], link["src"][1])
        dst: tuple[str, int] = (link["dst"][0], link["dst"][1])
        key = (src, dst) if src <= dst else (dst, src)
        cables.setdefault(key, {})[(src, dst)] = link
    sw_edges = 0
    for (a, b), dirs in sorted(cables.items()):
        if len(dirs) != 2:
            only = next(iter(dirs.values()))
            raise ValueError(
                f"topology {topology}: link {only['name']} has no link back; the testbed needs both "
                "directions of every cable"
            )
        sw_edges += a[0] == "switch" and b[0] == "switch"
        ends = []
        for kind, idx in (a, b):
            ns = p.host_ns[idx] if kind == "host" else p.switch_ns[idx]
            other = b if (kind, idx) == a else a
            dev = "eth0" if kind == "host" else f"{other[0][0]}{other[1]}"
            ends.append((ns, dev))
            if kind == "host":
                if p.host_switch[idx] != -1:
                    raise ValueError(
                        f"topology {topology}: host {idx} has more than one link; the testbed gives each host one port"
                    )
                if other[0] != "switch":
                    raise ValueError(f"topology {topology}: host {idx} is linked to a host, not a switch")
                p.host_switch[idx] = other[1]
        p.veths.append((ends[0][0], ends[0][1], ends[1][0], ends[1][1]))
        for (src, _dst), link in sorted(dirs.items()):
            ns, dev = ends[0] if src == a else ends[1]
            p.ports.append(Port(link=link["name"], ns=ns, dev=dev, capacity_bps=float(link["capacity_bps"])))
    if len(switches) > 1 and sw_edges != len(switches) - 1:
        raise ValueError(
            f"topology {topology}: {len(switches)} switches joined by {sw_edges} links: the fabric has "
            "path diversity (or is not connected), which the testbed's bridges cannot emulate; "
            "use a big switch or a tree"
        )
    for i, s in enumerate(p.host_switch):
        if s == -1:
            raise ValueError(f"topology {topology}: host {i} has no link")
    return p


# --- probing -----------------------------------------------------------------------


def probe() -> dict[str, bool]:
    """Which qdiscs and classifiers this kernel offers, tried for real in a
    throw-away namespace: ``{"htb": True, "red": False, ...}``."""
    require_rights()
    ns = f"ckprobe{os.getpid()}"
    _run(["ip", "netns", "add", ns], "probe")
    try:
        _run(["ip", "-n", ns, "link", "add", "name", "pa", "type", "veth", "peer", "name", "pb"], "probe")
        found: dict[str, bool] = {}
        for kind, args in _QDISC_PROBES.items():
            ok = (
                _run(
                    ["ip", "netns", "exec", ns, "tc", "qdisc", "add", "dev", "pa", "root", *args.split()],
                    "probe",
                    check=False,
                ).returncode
                == 0
            )
            found[kind] = ok
            if ok:
                _run(["ip", "netns", "exec", ns, "tc", "qdisc", "del", "dev", "pa", "root"], "probe", check=False)
        _run(["ip", "netns", "exec", ns, "tc", "qdisc", "add", "dev", "pa", "root", "handle", "1:", "htb"], "probe")
        u32 = f"ip netns exec {ns} tc filter add dev pa parent 1: protocol ip prio 1 u32 match ip dsfield 0xb8 0xfc"
        found["u32"] = _run([*u32.split(), "flowid", "1:10"], "probe", check=False).returncode == 0
        found["rto_max"] = (
            _run(["ip", "netns", "exec", ns, "sysctl", "-n", "net.ipv4.tcp_rto_max_ms"], "probe", check=False).returncode
            == 0
        )
        found["bridge"] = (
            _run(["ip", "-n", ns, "link", "add", "name", "pbr", "type", "bridge"], "probe", check=False).returncode == 0
        )
        return found
    finally:
        _run(["ip", "netns", "del", ns], "probe", check=False)


def limitations(features: dict[str, bool]) -> list[str]:
    """What the testbed cannot emulate on this kernel, in plain words."""
    out = []
    if not features.get("red"):
        out.append(
            "no ECN marking at a queue threshold (the red qdisc is missing): DCTCP-style marking "
            "and Karuna's ECN-based transport are not emulated; queues drop at their limit"
        )
    if not features.get("netem"):
        out.append("no added propagation delay (the netem qdisc is missing): RTTs are the veth's, tens of µs")
    if not (features.get("prio") or features.get("ets")):
        out.append("strict priority comes from HTB class priorities (no prio or ets qdisc)")
    if not features.get("rto_max", True):
        out.append(
            "TCP's timeout ceiling stays the kernel's 120 s (no net.ipv4.tcp_rto_max_ms before Linux 6.15): "
            "a flow starved behind a higher queue backs off for up to minutes"
        )
    return out


# --- up / down / status ------------------------------------------------------------


def state_path(name: str, state_dir: Path | None = None) -> Path:
    return (state_dir or DEFAULT_STATE_DIR) / f"testbed-{name}.json"


def _write_state(path: Path, d: dict[str, Any]) -> None:
    write_json(path, d, indent=1)


def default_buffer(capacity_bps: float) -> int:
    """A queue's buffer when not given: 2 ms at the port's rate, at least 64 KiB
    (four of the testbed's GSO packets)."""
    return max(65_536, int(capacity_bps * 0.002 / 8))


def _htb(ns: str, dev: str, capacity_bps: float, buffer_bytes: int) -> list[list[str]]:
    """The commands that shape one port: capacity, 8 strict-priority classes
    (each a byte FIFO of ``buffer_bytes``), DSCP filters."""
    rate = f"{int(capacity_bps)}bit"
    token = f"{max(8_000, int(capacity_bps / 1000))}bit"
    # Burst: at least one 64 KiB GSO packet, else 1 ms at the line rate.
    burst = str(max(65_536 + 1_514, int(capacity_bps / 8 / 1000)))
    tc = f"ip netns exec {ns} tc"
    bursts = f"burst {burst} cburst {burst}"
    cmds = [
        f"{tc} qdisc replace dev {dev} root handle 1: htb default {10 + N_QUEUES - 1}",
        f"{tc} class add dev {dev} parent 1: classid 1:1 htb rate {rate} ceil {rate} {bursts}",
    ]
    for q in range(N_QUEUES):
        cls = f"1:{10 + q}"
        shape = f"rate {token} ceil {rate} {bursts} prio {q} quantum 1514"
        cmds.append(f"{tc} class add dev {dev} parent 1:1 classid {cls} htb {shape}")
        match = f"match ip dsfield {hex(tos_of_queue(q))} 0xfc"
        cmds.append(f"{tc} filter add dev {dev} parent 1: protocol ip prio 1 u32 {match} flowid {cls}")
        cmds.append(f"{tc} qdisc add dev {dev} parent {cls} handle {10 + q}: bfifo limit {buffer_bytes}")
    return [c.split() for c in cmds]


def up(
    topology: str,
    name: str = "ck",
    n_hosts: int | None = None,
    state_dir: Path | None = None,
    buffer_bytes: int | None = None,
    rto_min_ms: int | None = DEFAULT_RTO_MIN_MS,
    tcp_cc: str = DEFAULT_TCP_CC,
    rto_max_ms: int | None = DEFAULT_RTO_MAX_MS,
) -> Plan:
    """Create the testbed. On any failure, removes what it made and raises
    :class:`TestbedError` naming the step. The input is validated first, so a
    bad topology is named as such also where the tools or rights are missing."""
    p = plan(topology, name, n_hosts, buffer_bytes, rto_min_ms, tcp_cc, rto_max_ms)
    require_rights()
    path = state_path(name, state_dir)
    existing = _our_namespaces(name)
    if path.exists() or existing:
        raise TestbedError(
            f"testbed {name!r} is already up ({len(existing)} namespaces; state {path}); "
            f"run `coflowkit testbed down --name {name}` first"
        )
    # The management network: the first 172.x.0.0/16 this machine does not use (another testbed, a
    # leftover of a crashed one, a container bridge), so that testbeds coexist.
    addrs = _run(["ip", "-o", "-4", "addr", "show"], "list addresses", check=False).stdout
    routes = _run(["ip", "-o", "-4", "route", "show"], "list routes", check=False).stdout
    octet = _free_mgmt_octet(addrs, routes)
    if octet is None:
        raise TestbedError(
            f"testbed {name!r}: every management network 172.16.0.0/16 .. 172.31.0.0/16 is in use on this machine "
            "(other testbeds are up? `ip -o addr show`); take one down first"
        )
    p.mgmt_ip = [_mgmt_ip(i, octet) for i in range(p.n_hosts)]
    p.mgmt_root_ip = _mgmt_ip(-1, octet)
    features = probe()
    for need in ("htb", "u32", "bridge"):
        if not features.get(need):
            raise TestbedError(f"testbed: this kernel has no {need}, which the testbed needs for every port")
    if p.rto_max_ms is not None and not features.get("rto_max"):
        if rto_max_ms != DEFAULT_RTO_MAX_MS:
            raise TestbedError(
                f"testbed: rto_max {rto_max_ms} ms asked for, but this kernel has no net.ipv4.tcp_rto_max_ms "
                "(Linux 6.15 and later)"
            )
        p.rto_max_ms = None  # the kernel's; `status` names it among what is not emulated
    state = {"version": 1, "complete": False, "plan": p.to_json(), "features": features}
    _write_state(path, state)
    try:
        _build(p)
    except BaseException:
        down(name, state_dir)
        raise
    state["complete"] = True
    _write_state(path, state)
    return p


def _build(p: Plan) -> None:
    for ns in (*p.host_ns, *p.switch_ns):
        _run(["ip", "netns", "add", ns], f"namespace {ns}")
        _run(["ip", "-n", ns, "link", "set", "lo", "up"], f"namespace {ns}")
    for ns in p.switch_ns:
        _run(
            ["ip", "-n", ns, "link", "add", "name", "br0", "type", "bridge", "stp_state", "0", "forward_delay", "0"],
            f"switch {ns}",
        )
        _run(["ip", "-n", ns, "link", "set", "br0", "up"], f"switch {ns}")
    for ns_a, dev_a, ns_b, dev_b in p.veths:
        what = f"link {ns_a}/{dev_a} <-> {ns_b}/{dev_b}"
        pair = f"ip link add name {p.name}tmpa netns {ns_a} type veth peer name {p.name}tmpb netns {ns_b}"
        _run(pair.split(), what)
        _run(["ip", "-n", ns_a, "link", "set", f"{p.name}tmpa", "name", dev_a], what)
        _run(["ip", "-n", ns_b, "link", "set", f"{p.name}tmpb", "name", dev_b], what)
        for ns, dev in ((ns_a, dev_a), (ns_b, dev_b)):
            if ns in p.switch_ns:
                _run(["ip", "-n", ns, "link", "set", dev, "master", "br0"], what)
            # Small GSO packets, so that a queue of tens of KB is not one or two super-packets.
            _run(["ip", "-n", ns, "link", "set", dev, "gso_max_size", str(GSO_MAX_BYTES)], what)
            _run(["ip", "-n", ns, "link", "set", dev, "up"], what)
    for i, ns in enumerate(p.host_ns):
        _run(["ip", "-n", ns, "addr", "add", f"{p.host_ip[i]}/8", "dev", "eth0"], f"host {i}")
        if p.rto_min_ms is not None:
            route = f"ip -n {ns} route replace 10.0.0.0/8 dev eth0 proto kernel scope link src {p.host_ip[i]}"
            _run([*route.split(), "rto_min", f"{p.rto_min_ms}ms"], f"host {i}")
    for ns in p.host_ns:
        _run(["ip", "netns", "exec", ns, "sysctl", "-qw", f"net.ipv4.tcp_limit_output_bytes={TSQ_BYTES}"], ns)
        # A SYN-ACK in the SYN's queue: the replay opens connections in queue 0.
        _run(["ip", "netns", "exec", ns, "sysctl", "-qw", "net.ipv4.tcp_reflect_tos=1"], ns, check=False)
        if p.rto_max_ms is not None:
            sysctl = ["ip", "netns", "exec", ns, "sysctl", "-qw"]
            _run([*sysctl, f"net.ipv4.tcp_rto_max_ms={p.rto_max_ms}"], ns)
            _run([*sysctl, f"net.ipv4.tcp_retries2={RTO_MAX_RETRIES}"], ns)
    for port in p.ports:
        buffer = p.buffer_bytes if p.buffer_bytes is not None else default_buffer(port.capacity_bps)
        if port.ns in p.host_ns:
            buffer = max(buffer, HOST_QUEUE_BYTES)
        for cmd in _htb(port.ns, port.dev, port.capacity_bps, buffer):
            _run(cmd, f"port {port.ns}/{port.dev} ({port.link})")
    # Management network: a root-namespace bridge, one unshaped veth per host.
    br = p.mgmt_bridge
    _run(["ip", "link", "add", "name", br, "type", "bridge"], "management bridge")
    _run(["ip", "addr", "add", f"{p.mgmt_root_ip}/16", "dev", br], "management bridge")
    _run(["ip", "link", "set", br, "up"], "management bridge")
    for i, ns in enumerate(p.host_ns):
        root_dev = f"{p.name}m{i}"
        what = f"management link of host {i}"
        _run(["ip", "link", "add", "name", root_dev, "type", "veth", "peer", "name", "mgmt0", "netns", ns], what)
        _run(["ip", "link", "set", root_dev, "master", br], what)
        _run(["ip", "link", "set", root_dev, "up"], what)
        _run(["ip", "-n", ns, "addr", "add", f"{p.mgmt_ip[i]}/16", "dev", "mgmt0"], what)
        _run(["ip", "-n", ns, "link", "set", "mgmt0", "up"], what)


def _our_namespaces(name: str) -> list[str]:
    pat = re.compile(rf"^{re.escape(name)}-[hs]\d+$")
    return [ns for ns in _all_namespaces() if pat.match(ns)]


def _our_root_links(name: str) -> list[str]:
    out = _run(["ip", "-o", "link", "show"], "list links", check=False).stdout
    pat = re.compile(rf"^({re.escape(name)}m\d+|{re.escape(name)}-mgmt|{re.escape(name)}tmp[ab])$")
    found = []
    for line in out.splitlines():
        parts = line.split(":")
        if len(parts) > 1:
            dev = parts[1].strip().split("@")[0]
            if pat.match(dev):
                found.append(dev)
    return found


def _kill_in(ns: str) -> int:
    """Stops every process inside namespace ``ns`` (SIGTERM, then SIGKILL); returns how many."""
    pids = [int(x) for x in _run(["ip", "netns", "pids", ns], f"namespace {ns}", check=False).stdout.split()]
    for sig in (signal.SIGTERM, signal.SIGKILL):
        alive = []
        for pid in pids:
            try:
                os.kill(pid, sig)
                alive.append(pid)
            except ProcessLookupError:
                pass
        if not alive:
            break
        deadline = time.monotonic() + 2.0
        while time.monotonic() < deadline and any(_alive(pid) for pid in alive):
            time.sleep(0.05)
        pids = [pid for pid in alive if _alive(pid)]
    return len(pids)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    # A zombie of ours still answers kill(0); reap it if it is our child.
    try:
        done, _ = os.waitpid(pid, os.WNOHANG)
        return done == 0
    except ChildProcessError:
        return True


def down(name: str = "ck", state_dir: Path | None = None) -> list[str]:
    """Remove everything testbed ``name`` made (from its state file and by its
    name, so also after a crash): processes inside its namespaces, the
    namespaces (and with them their links and qdiscs), the management links
    and bridge, the state file. Returns what it removed; idempotent."""
    require_rights()
    if not _NAME_RE.match(name):
        raise TestbedError(f"testbed name {name!r}: must be 1-6 lowercase letters or digits")
    path = state_path(name, state_dir)
    namespaces = set(_our_namespaces(name))
    if path.exists():
        try:
            p = Plan.from_json(json.loads(path.read_text())["plan"])
            namespaces |= set(p.host_ns) & set(_all_namespaces())
            namespaces |= set(p.switch_ns) & set(_all_namespaces())
        except (ValueError, KeyError, TypeError):
            pass  # a damaged state file: the names are enough
    removed = []
    for ns in sorted(namespaces):
        _kill_in(ns)
        _run(["ip", "netns", "del", ns], f"remove namespace {ns}")
        removed.append(f"namespace {ns}")
    for dev in _our_root_links(name):
        _run(["ip", "link", "del", dev], f"remove link {dev}", check=False)
        removed.append(f"link {dev}")
    if path.exists():
        path.unlink()
        removed.append(f"state {path}")
    leftover = _our_namespaces(name) + _our_root_links(name)
    if leftover:
        raise TestbedError(f"testbed {name!r}: could not remove {', '.join(leftover)}")
    return removed


def _all_namespaces() -> list[str]:
    out = _run(["ip", "netns", "list"], "list namespaces", check=False).stdout
    return [line.split()[0] for line in out.splitlines() if line.split()]


def status(name: str = "ck", state_dir: Path | None = None) -> dict[str, Any]:
    """What is up: the plan, which namespaces and ports exist, each port's
    shaped rate as the kernel reports it, processes per host, and what this
    kernel cannot emulate."""
    path = state_path(name, state_dir)
    present = _our_namespaces(name)
    out: dict[str, Any] = {"name": name, "state_file": str(path), "namespaces_present": len(present)}
    if not path.exists():
        out["up"] = False
        out["stray"] = present + _our_root_links(name)
        return out
    state = json.loads(path.read_text())
    p = Plan.from_json(state["plan"])
    out.update(
        up=bool(state.get("complete")),
        topology=p.topology,
        n_hosts=p.n_hosts,
        n_switches=len(p.switch_ns),
        features=state.get("features", {}),
        limitations=limitations(state.get("features", {})),
    )
    missing = [ns for ns in (*p.host_ns, *p.switch_ns) if ns not in present]
    out["missing_namespaces"] = missing
    ports = []
    for port in p.ports:
        shaped = None
        if port.ns in present:
            txt = _run(
                ["ip", "netns", "exec", port.ns, "tc", "class", "show", "dev", port.dev, "classid", "1:1"],
                "status",
                check=False,
            ).stdout
            m = re.search(r"rate (\S+)", txt)
            shaped = m.group(1) if m else None
        ports.append(
            {
                "link": port.link,
                "ns": port.ns,
                "dev": port.dev,
                "capacity_bps": port.capacity_bps,
                "kernel_rate": shaped,
            }
        )
    out["ports"] = ports
    out["hosts"] = [
        {
            "ns": ns,
            "ip": p.host_ip[i],
            "mgmt_ip": p.mgmt_ip[i],
            "processes": len(_run(["ip", "netns", "pids", ns], "status", check=False).stdout.split())
            if ns in present
            else None,
        }
        for i, ns in enumerate(p.host_ns)
    ]
    return out


def load_plan(name: str = "ck", state_dir: Path | None = None) -> Plan:
    """The plan of a testbed that is up; raises TestbedError if it is not."""
    path = state_path(name, state_dir)
    if not path.exists():
        raise TestbedError(f"testbed {name!r} is not up (no {path}); run `coflowkit testbed up` first")
    state = json.loads(path.read_text())
    if not state.get("complete"):
        raise TestbedError(f"testbed {name!r} did not finish coming up; run `coflowkit testbed down --name {name}`")
    return Plan.from_json(state["plan"])


def ns_cmd(p: Plan, host: int, argv: Sequence[str]) -> list[str]:
    """The command line running ``argv`` inside host ``host``'s namespace."""
    if not 0 <= host < p.n_hosts:
        raise TestbedError(f"host {host}: the testbed has hosts 0..{p.n_hosts - 1}")
    return ["ip", "netns", "exec", p.host_ns[host], *argv]


# --- checks with real TCP -------------------------------------------------------------


def _traffic(p: Plan, host: int, *args: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        ns_cmd(p, host, [sys.executable, "-m", "coflowkit.testbed.traffic", *args]),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def _finish(proc: subprocess.Popen[str], what: str, timeout: float) -> dict[str, Any]:
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        out, err = proc.communicate()
        raise TestbedError(f"{what}: timed out after {timeout:.0f} s") from None
    if proc.returncode != 0:
        raise TestbedError(f"{what}: exit {proc.returncode}: {' '.join(err.split())}")
    result: dict[str, Any] = json.loads(out)
    return result


def path_capacity(p: Plan, src: int, dst: int) -> float:
    """The smallest capacity on the path from host ``src`` to host ``dst`` (the
    fabric is a tree: one path)."""
    g = _core.topology_graph(p.topology, p.n_hosts)
    adj: dict[tuple[str, int], list[tuple[tuple[str, int], float]]] = {}
    for link in g["links"]:
        adj.setdefault(tuple(link["src"]), []).append((tuple(link["dst"]), float(link["capacity_bps"])))
    best: dict[tuple[str, int], float] = {("host", src): float("inf")}
    stack = [("host", src)]
    while stack:
        u = stack.pop()
        for v, c in adj.get(u, []):
            if v not in best and (v[0] == "switch" or v == ("host", dst)):
                best[v] = min(best[u], c)
                stack.append(v)
    if ("host", dst) not in best:
        raise TestbedError(f"no path from host {src} to host {dst}")
    return best[("host", dst)]


def measure(
    p: Plan, senders: Sequence[tuple[int, int, int]], seconds: float = 2.0, start_offsets: Sequence[float] | None = None
) -> list[dict[str, Any]]:
    """Run TCP transfers for real: ``senders`` is a list of (src host, dst
    host, queue). Returns, per transfer, the bytes the receiver got with their
    timestamps (``samples``: [wall-clock seconds, bytes so far]) and
    the sender's checksum check. A transfer with queue -1 is left unmarked."""
    sinks, sources = [], []
    port0 = 40_000 + os.getpid() % 10_000
    for k, (_src, dst, _q) in enumerate(senders):
        sinks.append(_traffic(p, dst, "sink", "--port", str(port0 + k), "--timeout", str(seconds + 10)))
    time.sleep(0.3)
    offsets = list(start_offsets or [0.0] * len(senders))
    t0 = time.monotonic()
    for k, (src, dst, q) in enumerate(senders):
        while time.monotonic() - t0 < offsets[k]:
            time.sleep(0.01)
        tos = "0" if q < 0 else str(tos_of_queue(q))
        args = f"source --dst {p.host_ip[dst]} --port {port0 + k} --seconds {seconds} --tos {tos} --cc {p.tcp_cc}"
        sources.append(_traffic(p, src, *args.split()))
    results = []
    for k, (src, dst, q) in enumerate(senders):
        sent = _finish(sources[k], f"sender host {src} -> host {dst}", seconds + 30)
        got = _finish(sinks[k], f"receiver host {dst} <- host {src}", 30)
        if got["bytes"] != sent["bytes"] or got["sha256"] != sent["sha256"]:
            raise TestbedError(
                f"host {src} -> host {dst}: sent {sent['bytes']} bytes (sha256 {sent['sha256'][:12]}), "
                f"received {got['bytes']} (sha256 {got['sha256'][:12]})"
            )
        results.append({"src": src, "dst": dst, "queue": q, **got})
    return results


def goodput_bps(samples: Sequence[Sequence[float]], t_from: float, t_to: float) -> float:
    """Bits per second received between two instants of a transfer's samples."""

    def at(t: float) -> float:
        prev = (0.0, 0.0)
        for s in samples:
            if s[0] >= t:
                t1, b1 = s
                t0_, b0 = prev
                return b0 if t1 == t0_ else b0 + (b1 - b0) * (t - t0_) / (t1 - t0_)
            prev = (s[0], s[1])
        return prev[1]

    if t_to <= t_from:
        raise ValueError("empty window")
    return (at(t_to) - at(t_from)) * 8 / (t_to - t_from)


def check_capacity(
    p: Plan, pairs: Sequence[tuple[int, int]] | None = None, seconds: float = 2.0
) -> list[dict[str, Any]]:
    """Each pair's TCP goodput (one pair at a time, the first 0.5 s left out as
    slow start) against the smallest capacity on its path."""
    pairs = list(pairs) if pairs is not None else [(i, (i + 1) % p.n_hosts) for i in range(p.n_hosts)]
    out = []
    for src, dst in pairs:
        [r] = measure(p, [(src, dst, -1)], seconds)
        first, last = r["samples"][0][0], r["samples"][-1][0]
        bps = goodput_bps(r["samples"], first + min(0.5, (last - first) / 4), last)
        cap = path_capacity(p, src, dst)
        out.append({"src": src, "dst": dst, "capacity_bps": cap, "goodput_bps": bps, "ratio": bps / cap})
    return out


def check_priority(p: Plan, hi: int, lo: int, dst: int, seconds: float = 3.0) -> dict[str, Any]:
    """Two transfers into one host: the low-priority one (queue 7) starts first,
    the high-priority one (queue 0) a second later; returns each one's goodput
    while both run (their overlap, less 0.3 s at each end)."""
    lo_r, hi_r = measure(p, [(lo, dst, N_QUEUES - 1), (hi, dst, 0)], seconds, start_offsets=[0.0, 1.0])
    a = max(lo_r["samples"][0][0], hi_r["samples"][0][0]) + 0.3
    b = min(lo_r["samples"][-1][0], hi_r["samples"][-1][0]) - 0.3
    if b - a < 0.2:
        raise TestbedError(f"priority check: the two transfers overlapped for only {b - a + 0.6:.2f} s")
    hi_bps = goodput_bps(hi_r["samples"], a, b)
    lo_bps = goodput_bps(lo_r["samples"], a, b)
    cap = path_capacity(p, hi, dst)
    return {
        "capacity_bps": cap,
        "high_bps": hi_bps,
        "low_bps": lo_bps,
        "high_share": hi_bps / (hi_bps + lo_bps),
        "window_s": b - a,
    }
