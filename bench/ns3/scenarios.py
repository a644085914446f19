#!/usr/bin/env python3
"""Write the packet-engine validation scenarios (bench/ns3/SCENARIO.md format) into a directory.

    python3 bench/ns3/scenarios.py OUTDIR [--ls-flows 300] [--seed 1]

Plain Python (no ns-3 needed). Every scenario carries a "note" saying what it checks; the
metrics and their tolerances are in crosscheck.py. Scenario groups:
  (a) long-*      1 and 4 long TCP / DCTCP flows into one host of a 10 Gbit/s big switch
  (b) incast-*    N-to-1 incast of 64 KB flows, N = 8, 32, 64, TCP and DCTCP
  (c) prio-*      two strict-priority classes at one switch port
  (d) leafspine-* 4 leaves x 2 spines x 8 hosts, 10G hosts, 40G fabric, per-flow ECMP,
                  web-search sizes at load 0.5, Poisson arrivals
  (f) *-2us       the same leaf-spine with 2 us links, every port (host NICs included) a
                  166-packet drop-tail buffer marking at 65 packets, handshakes counted in FCT:
                  lone flows of 1,448 B, 8.76 KB and 100 KB; 2 and 8 long flows into one host;
                  8.76 KB flows behind a long flow on the same NIC; the web-search mix,
                  without and with SACK
"""

from __future__ import annotations

import argparse
import json
import math
import os
import random

# DCTCP web-search flow sizes: Alizadeh et al., "Data Center TCP (DCTCP)", SIGCOMM 2010, Fig. 4,
# as the piecewise-linear CDF in 1460-byte packets that pFabric (SIGCOMM 2013), PIAS (NSDI 2015)
# and Karuna (SIGCOMM 2016) simulated with; the same points as coflowkit's own
# crates/workload/src/dist.rs WEB_SEARCH (mean 1140.98 packets = 1,665,831 bytes).
WEB_SEARCH_PACKETS = [
    (6, 0.0), (6, 0.15), (13, 0.2), (19, 0.3), (33, 0.4), (53, 0.53), (133, 0.6),
    (667, 0.7), (1333, 0.8), (3333, 0.9), (6667, 0.97), (20000, 1.0),
]
SEGMENT = 1460

BASE = {
    "host_link_delay_ns": 1000,
    "fabric_link_delay_ns": 1000,
    "mtu": 1500,
    "header_bytes": 40,
    "min_rto_ns": 1_000_000,
    "init_cwnd_packets": 10,
    "delayed_ack": False,
    "handshake": False,
    "dctcp_g": 0.0625,
    "switch_buffer_bytes": 300_000,
    "queue_sample_ns": 100_000,
}


def websearch_bytes(rng: random.Random) -> int:
    u = rng.random()
    pts = WEB_SEARCH_PACKETS
    for (x0, p0), (x1, p1) in zip(pts, pts[1:]):
        if u <= p1:
            x = x0 if p1 == p0 else x0 + (x1 - x0) * (u - p0) / (p1 - p0)
            return max(1, int(round(x * SEGMENT)))
    return pts[-1][0] * SEGMENT


def websearch_mean_bytes() -> float:
    pts = WEB_SEARCH_PACKETS
    return SEGMENT * sum((p1 - p0) * (x0 + x1) / 2 for (x0, p0), (x1, p1) in zip(pts, pts[1:]))


def scenario(name: str, note: str, transport: str, topology: str, flows: list, **kw) -> dict:
    sc = {"name": name, "note": note, "topology": topology, "transport": transport}
    sc.update(BASE)
    # K only where ECN is used: TCP packets are not ECN-capable, so K would change nothing there
    sc["ecn_k_bytes"] = 30_000 if transport == "dctcp" else None
    # The host NIC queue is modelled like a switch port (as in the pFabric/PIAS/Karuna
    # simulations): drop-tail of 200 packets (the 300 KB switch buffer) for TCP, ECN at 20
    # packets (the 30 KB K) for DCTCP. NOT the schema's "unbounded": a lossless unbounded NIC
    # queue at the same rate as the switch port is the bottleneck of a lone flow, nothing ever
    # marks or drops there, and the window grows until the receive window (ns-3: RcvBufSize)
    # stops it; then a starved low-priority flow dumps megabytes into the switch (prio-*: 1171
    # drops) and ns-3's per-ACK cost grows with the window (prio-dctcp took 122 s of wall time).
    sc["host_queue"] = ({"kind": "ecn", "k_packets": 20} if transport == "dctcp"
                        else {"kind": "droptail", "packets": 200})
    sc.update(kw)
    sc["flows"] = flows
    return sc


def long_flows(transport: str, n: int, delayed_ack: bool = False, unbounded_host: bool = False) -> dict:
    total = 50_000_000  # bytes into the receiver, split evenly
    recv = n
    flows = [{"src": i, "dst": recv, "start_ns": 0, "bytes": total // n, "prio": 0} for i in range(n)]
    sfx = ("-delack" if delayed_ack else "") + ("-unbounded" if unbounded_host else "")
    sc = scenario(
        f"long-{transport}-{n}{sfx}",
        f"(a) {n} long {transport.upper()} flow(s) of {total // n // 10**6} MB into host {recv} of a "
        f"10 Gbit/s big switch{' with delayed ACKs' if delayed_ack else ''}: per-flow throughput "
        "(bytes / FCT; equal shares when n > 1) and occupancy of the bottleneck port "
        f"to-host-{recv} (mean, min, max after the first ms)",
        transport,
        f"bigswitch:hosts={n + 1},rate=10Gbps",
        flows,
        delayed_ack=delayed_ack,
        queue_ports=[f"to-host-{recv}", "host-0"],
    )
    if unbounded_host:
        # The schema's default host queue: a lone flow's bottleneck is its own NIC, where nothing
        # drops or marks, so its window is held only by the receive window (ns-3: RcvBufSize).
        sc["host_queue"] = {"kind": "unbounded"}
        sc["note"] += ("; host NIC queue unbounded and lossless (the schema default) instead of "
                       "drop-tail 200 packets: the host-queue model alone moves this flow's FCT")
    return sc


def incast(transport: str, n: int, rounds: int = 1, gap_ns: int = 20_000_000) -> dict:
    # One round: a synchronised incast is deterministic, so further rounds are exact replicas.
    size = 64 * 1024
    recv = n
    flows = [
        {"src": i, "dst": recv, "start_ns": r * gap_ns, "bytes": size, "prio": 0}
        for r in range(rounds)
        for i in range(n)
    ]
    return scenario(
        f"incast-{transport}-{n}",
        f"(b) {n}-to-1 incast of {size // 1024} KB flows, {transport.upper()}, all starting at "
        "t=0, SYN/SYN-ACK counted in FCT: FCT mean and p99, drops, "
        "timeouts (300 KB drop-tail port buffer, min RTO 1 ms)",
        transport,
        f"bigswitch:hosts={n + 1},rate=10Gbps",
        flows,
        handshake=True,
        queue_ports=[f"to-host-{recv}"],
    )


def prio(transport: str) -> dict:
    flows = [
        {"src": 0, "dst": 2, "start_ns": 0, "bytes": 10_000_000, "prio": 1},
        {"src": 1, "dst": 2, "start_ns": 2_000_000, "bytes": 2_000_000, "prio": 0},
    ]
    return scenario(
        f"prio-{transport}",
        "(c) two strict-priority classes at port to-host-2: a 10 MB class-1 flow from t=0 and a "
        "2 MB class-0 flow from t=2 ms; the class-0 flow should see an empty port (FCT near "
        "2 MB at line rate) and the class-1 flow pauses meanwhile (its FCT grows by about that). "
        "Min RTO 10 ms so the paused flow does not time out spuriously",
        transport,
        "bigswitch:hosts=3,rate=10Gbps",
        flows,
        min_rto_ns=10_000_000,
        queue_ports=["to-host-2"],
    )


def leafspine(transport: str, n_flows: int, seed: int, load: float = 0.5) -> dict:
    leaves, spines, per_leaf, rate = 4, 2, 8, 10e9
    hosts = leaves * per_leaf
    rng = random.Random(seed)
    # Poisson arrivals over the whole network; the mean load on each host link is `load`
    lam = load * rate * hosts / (8 * websearch_mean_bytes())  # flows per second
    t = 0.0
    flows = []
    for _ in range(n_flows):
        t += rng.expovariate(lam)
        src = rng.randrange(hosts)
        dst = rng.randrange(hosts - 1)
        dst += dst >= src
        flows.append({"src": src, "dst": dst, "start_ns": int(t * 1e9), "bytes": websearch_bytes(rng),
                      "prio": 0})
    return scenario(
        f"leafspine-{transport}",
        f"(d) leaf-spine {leaves}x{spines}x{per_leaf}, 10G host links, 40G fabric, per-flow ECMP, "
        f"{n_flows} web-search flows (DCTCP paper Fig. 4 CDF), Poisson arrivals at load {load} "
        f"of each host link, uniform random src != dst, seed {seed}, {transport.upper()}: "
        "mean and p99 FCT by size bin (<=100 KB, 100 KB-10 MB, >10 MB), drops, timeouts",
        transport,
        f"leaf-spine:leaves={leaves},spines={spines},hosts={per_leaf},rate=10Gbps,spine_rate=40Gbps",
        flows,
        queue_ports=["leaf-0-to-spine-0", "spine-0-to-leaf-1", "to-host-0"],
    )


# (f): every port the same kind, a DCTCP marker with a bound: 166 full packets (1502 B on ns-3's
# wire, 1500 in coflowkit's: 166 fit in both, 167 in neither) marking at 65 packets (65 x 1500 B;
# ns-3's occupancy counts its device queue's packet at 1502, so 65 packets reach it there too).
MARKER_2US = {
    "host_link_delay_ns": 2000,
    "fabric_link_delay_ns": 2000,
    "handshake": True,
    "switch_buffer_bytes": 166 * 1502,
    "ecn_k_bytes": 65 * 1500,
    "host_queue": {"kind": "droptail_ecn", "packets": 166, "k_packets": 65},
}
LS_2US = "leaf-spine:leaves=4,spines=2,hosts=8,rate=10Gbps,spine_rate=40Gbps"
LONE_SIZES = (1448, 8760, 100_000)


def lone_2us() -> dict:
    """One flow at a time: each size within a leaf (host 0 to 1) and across (host 0 to 8),
    1 ms apart, so every flow finds the network empty."""
    flows = [{"src": 0, "dst": dst, "start_ns": 1_000_000 * (2 * i + j), "bytes": b, "prio": 0}
             for i, b in enumerate(LONE_SIZES) for j, dst in enumerate((1, 8))]
    return scenario(
        "lone-dctcp-2us",
        "(f) one flow alone at a time on the 2 us leaf-spine, handshake counted in FCT, sizes "
        "1,448 B, 8.76 KB and 100 KB, within a leaf (0 -> 1) and across leaves (0 -> 8): each FCT, "
        "which two simulators with the same base RTT should agree on to a fraction of a us",
        "dctcp", LS_2US, flows, **MARKER_2US, queue_ports=[])


def long_2us(n: int) -> dict:
    total = 24_000_000
    flows = [{"src": 8 + i, "dst": 0, "start_ns": 0, "bytes": total // n, "prio": 0} for i in range(n)]
    return scenario(
        f"long-dctcp-{n}-2us",
        f"(f) {n} long DCTCP flows of {total // n / 1e6:g} MB from leaf 1 into host 0 on the 2 us "
        "leaf-spine, every port a 166-packet buffer marking at 65: throughput per flow and the "
        "bottleneck port to-host-0's queue (mean, min, max after the first ms)",
        "dctcp", LS_2US, flows, **MARKER_2US,
        queue_sample_ns=10_000, queue_ports=["to-host-0", "host-8"])


def behind_2us() -> dict:
    """8.76 KB flows from host 0 while its long flow fills host 0's NIC (the NIC is that flow's
    bottleneck: same rate as the switch port). Each short flow's SYN and data wait there."""
    flows = [{"src": 0, "dst": 8, "start_ns": 0, "bytes": 30_000_000, "prio": 0}]
    flows += [{"src": 0, "dst": 16 + i, "start_ns": 2_000_000 + 500_000 * i, "bytes": 8760, "prio": 0}
              for i in range(8)]
    return scenario(
        "behind-dctcp-2us",
        "(f) eight 8.76 KB flows, 0.5 ms apart from 2 ms, from host 0 to leaf 2 behind a 30 MB "
        "DCTCP flow from host 0 to host 8 on the 2 us leaf-spine (host NIC: 166 packets, marks at "
        "65): the short flows' FCT (their SYN and data queue in host 0's NIC) and host 0's queue",
        "dctcp", LS_2US, flows, **MARKER_2US,
        queue_sample_ns=10_000, queue_ports=["host-0"])


def leafspine_2us(n_flows: int, seed: int) -> dict:
    sc = leafspine("dctcp", n_flows, seed)
    sc.update(MARKER_2US)
    sc["name"] = "leafspine-dctcp-2us"
    sc["note"] = sc["note"].replace("(d) leaf-spine", "(f) leaf-spine") + (
        "; 2 us links, every port (host NICs included) a 166-packet buffer marking at 65 "
        "packets, handshake counted in FCT")
    return sc


def all_scenarios(ls_flows: int = 300, seed: int = 1) -> list[dict]:
    out = []
    for tr in ("tcp", "dctcp"):
        out.append(long_flows(tr, 1))
        out.append(long_flows(tr, 4))
    out.append(long_flows("tcp", 1, unbounded_host=True))
    out.append(long_flows("dctcp", 4, delayed_ack=True))
    for tr in ("tcp", "dctcp"):
        for n in (8, 32, 64):
            out.append(incast(tr, n))
    for tr in ("tcp", "dctcp"):
        out.append(prio(tr))
    out.append(leafspine("dctcp", ls_flows, seed))
    out.append(leafspine("tcp", ls_flows, seed))
    out += [with_sack(sc) for sc in (long_flows("tcp", 1), long_flows("tcp", 4), incast("tcp", 32),
                                     incast("tcp", 64))]
    out += [lone_2us(), long_2us(2), long_2us(8), behind_2us(), leafspine_2us(ls_flows, seed)]
    # With SACK, ns-3's scoreboard knows what the receiver holds: host-22's NIC carries flow 23,
    # which without SACK resends 3,304 segments in ns-3 (none in coflowkit), and small flows queue
    # behind it there (docs/packet-engine.md, "The 2 µs leaf-spine with markers everywhere").
    out.append(dict(with_sack(leafspine_2us(ls_flows, seed)), queue_sample_ns=10_000,
                    queue_ports=["leaf-0-to-spine-0", "spine-0-to-leaf-1", "to-host-0", "host-22"]))
    return out


def with_sack(sc: dict) -> dict:
    """The loss-heavy TCP scenario `sc` with SACK on in both simulators (ns-3: TcpSocketBase::Sack
    and its RFC 6675 scoreboard; coflowkit: the packet knob sack=on)."""
    return dict(sc, name=sc["name"] + "-sack", sack=True,
                note=sc["note"] + "; SACK on (RFC 2018 blocks, RFC 6675 loss recovery)")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("outdir")
    ap.add_argument("--ls-flows", type=int, default=300, help="flows in the leaf-spine scenarios")
    ap.add_argument("--seed", type=int, default=1)
    a = ap.parse_args()
    os.makedirs(a.outdir, exist_ok=True)
    for sc in all_scenarios(a.ls_flows, a.seed):
        with open(os.path.join(a.outdir, sc["name"] + ".json"), "w") as f:
            json.dump(sc, f, indent=1)
            f.write("\n")
        print(sc["name"])


if __name__ == "__main__":
    main()
