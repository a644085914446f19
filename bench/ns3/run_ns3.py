#!/usr/bin/env python3
"""Run one packet scenario (bench/ns3/SCENARIO.md) in ns-3 and write its result directory.

    /work/ns3-venv/bin/python bench/ns3/run_ns3.py SCENARIO.json OUTDIR
    /work/ns3-venv/bin/python bench/ns3/run_ns3.py --many OUTROOT A.json B.json ...   (OUTROOT/<name>/)
    --stock-dctcp: ns-3's TcpDctcp as shipped (no 2-segment floor on the reduced window)

Needs the ns-3 Python bindings (`pip install ns3==3.44.post0`, Python 3.11). ns-3 is an outside
reference for the cross-check, never a dependency of coflowkit. The model itself is C++ in
ck_ns3.h (compiled at run time by cling through cppyy); this file only reads the scenario, hands
it over and writes flows.csv, queues.csv and summary.json.
"""

from __future__ import annotations

import csv
import json
import os
import re
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))

KNOWN_FIELDS = {
    "name", "note", "topology", "host_link_delay_ns", "fabric_link_delay_ns", "mtu", "header_bytes",
    "transport", "min_rto_ns", "init_cwnd_packets", "delayed_ack", "handshake", "dctcp_g",
    "switch_buffer_bytes", "ecn_k_bytes", "host_queue", "flows", "queue_sample_ns", "queue_ports",
    "sack",
    # optional, ns-3 side only (see SCENARIO.md): seed of the per-flow ECMP hash, hard stop
    "ecmp_seed", "stop_ns",
}
FLOW_FIELDS = {"src", "dst", "start_ns", "bytes", "prio", "spine"}


class ScenarioError(Exception):
    pass


def parse_rate(s: str) -> int:
    m = re.fullmatch(r"\s*([0-9.]+)\s*([KMGT]?)(bps|b/s|bit/s)?\s*", str(s), re.I)
    if not m:
        raise ScenarioError(f"topology: bad rate {s!r} (want e.g. 10Gbps)")
    mult = {"": 1, "K": 10**3, "M": 10**6, "G": 10**9, "T": 10**12}[m.group(2).upper()]
    return int(round(float(m.group(1)) * mult))


def parse_topology(spec: str) -> dict:
    kind, _, rest = spec.partition(":")
    kv = {}
    for part in filter(None, rest.split(",")):
        k, eq, v = part.partition("=")
        if not eq:
            raise ScenarioError(f"topology: bad parameter {part!r} in {spec!r}")
        kv[k.strip()] = v.strip()
    try:
        if kind == "bigswitch":
            return {"leafspine": False, "leaves": 1, "spines": 0, "hosts_per_leaf": int(kv["hosts"]),
                    "rate": parse_rate(kv["rate"]), "fabric_rate": parse_rate(kv["rate"])}
        if kind == "leaf-spine":
            return {"leafspine": True, "leaves": int(kv["leaves"]), "spines": int(kv["spines"]),
                    "hosts_per_leaf": int(kv["hosts"]), "rate": parse_rate(kv["rate"]),
                    "fabric_rate": parse_rate(kv.get("spine_rate", kv["rate"]))}
    except KeyError as e:
        raise ScenarioError(f"topology: {spec!r} lacks {e.args[0]}") from None
    raise ScenarioError(f"topology: unsupported kind {kind!r} (bigswitch or leaf-spine)")


def splitmix64(x: int) -> int:
    x = (x + 0x9E3779B97F4A7C15) & 0xFFFFFFFFFFFFFFFF
    x = ((x ^ (x >> 30)) * 0xBF58476D1CE4E5B9) & 0xFFFFFFFFFFFFFFFF
    x = ((x ^ (x >> 27)) * 0x94D049BB133111EB) & 0xFFFFFFFFFFFFFFFF
    return x ^ (x >> 31)


def ecmp_spine(seed: int, flow: int, src: int, dst: int, spines: int) -> int:
    """Per-flow ECMP: a hash of (seed, flow index, src, dst); the flow keeps its spine."""
    return splitmix64(splitmix64(splitmix64(seed) ^ flow) ^ (src << 32 | dst)) % spines


def load_scenario(path: str) -> dict:
    with open(path) as f:
        sc = json.load(f)
    unknown = set(sc) - KNOWN_FIELDS
    if unknown:
        raise ScenarioError(f"{sorted(unknown)[0]}: unknown field")
    for k in ("topology", "mtu", "header_bytes", "transport", "flows"):
        if k not in sc:
            raise ScenarioError(f"{k}: missing")
    if sc["transport"] not in ("tcp", "dctcp"):
        raise ScenarioError(f"transport: unknown {sc['transport']!r} (tcp or dctcp)")
    if not 0 < sc["header_bytes"] < sc["mtu"]:
        raise ScenarioError("mtu: must exceed header_bytes")
    return sc


def run(sc: dict, outdir: str, stock_dctcp: bool = False) -> dict:
    t0 = time.time()
    from ns import ns  # noqa: F401  (loads libraries and headers; prints harmless cling warnings)
    import cppyy

    if not hasattr(cppyy.gbl, "ck"):
        cppyy.include(os.path.join(HERE, "ck_ns3.h"))
    ck = cppyy.gbl.ck
    t_import = time.time() - t0

    topo = parse_topology(sc["topology"])
    nhosts = topo["leaves"] * topo["hosts_per_leaf"]
    ck.Reset()
    c = ck.cfg
    c.leafspine = topo["leafspine"]
    c.leaves, c.spines, c.hostsPerLeaf = topo["leaves"], topo["spines"], topo["hosts_per_leaf"]
    c.hostRate = f"{topo['rate']}bps"
    c.fabricRate = f"{topo['fabric_rate']}bps"
    c.hostDelayNs = int(sc.get("host_link_delay_ns", 1000))
    c.fabricDelayNs = int(sc.get("fabric_link_delay_ns", 1000))
    c.mtu, c.headerBytes = int(sc["mtu"]), int(sc["header_bytes"])
    c.dctcp = sc["transport"] == "dctcp"
    c.stockDctcp = stock_dctcp
    c.minRtoNs = int(sc.get("min_rto_ns", 200_000_000))
    c.initCwnd = int(sc.get("init_cwnd_packets", 10))
    c.delayedAck = bool(sc.get("delayed_ack", False))
    c.sack = bool(sc.get("sack", False))
    c.dctcpG = float(sc.get("dctcp_g", 0.0625))
    c.switchBufBytes = int(sc.get("switch_buffer_bytes", 300000))
    k = sc.get("ecn_k_bytes")
    c.ecnKBytes = -1 if k is None else int(k)
    hq = sc.get("host_queue", {"kind": "unbounded"})
    if hq["kind"] == "unbounded":
        c.hostQueueKind = 0
    elif hq["kind"] == "droptail":
        c.hostQueueKind, c.hostQueuePackets = 1, int(hq["packets"])
    elif hq["kind"] == "ecn":
        c.hostQueueKind, c.hostQueuePackets = 2, int(hq["k_packets"])
    elif hq["kind"] == "droptail_ecn":
        c.hostQueueKind, c.hostQueuePackets, c.hostQueueK = 3, int(hq["packets"]), int(hq["k_packets"])
        if not 0 < c.hostQueueK < c.hostQueuePackets:
            raise ScenarioError("host_queue: want 0 < k_packets < packets")
    else:
        raise ScenarioError(f"host_queue.kind: unknown {hq['kind']!r}")
    c.sampleNs = int(sc.get("queue_sample_ns", 0) or 0)
    c.stopNs = int(sc.get("stop_ns", 0) or 0)
    seed = int(sc.get("ecmp_seed", 0))
    c.protectSyn = not bool(sc.get("handshake", False))

    spines_used = []
    for i, fl in enumerate(sc["flows"]):
        extra = set(fl) - FLOW_FIELDS
        if extra:
            raise ScenarioError(f"flows[{i}].{sorted(extra)[0]}: unknown field")
        src, dst = int(fl["src"]), int(fl["dst"])
        if not (0 <= src < nhosts and 0 <= dst < nhosts) or src == dst:
            raise ScenarioError(f"flows[{i}]: src/dst must be distinct hosts in 0..{nhosts - 1}")
        prio = int(fl.get("prio", 0))
        if not 0 <= prio <= 7:
            raise ScenarioError(f"flows[{i}].prio: 0..7")
        if int(fl["bytes"]) <= 0:
            raise ScenarioError(f"flows[{i}].bytes: must be positive")
        if topo["spines"] > 0:
            plane = int(fl["spine"]) if "spine" in fl else ecmp_spine(seed, i, src, dst, topo["spines"])
            if not 0 <= plane < topo["spines"]:
                raise ScenarioError(f"flows[{i}].spine: 0..{topo['spines'] - 1}")
        else:
            plane = 0
        spines_used.append(plane)
        ck.AddFlow(src, dst, int(fl["start_ns"]), int(fl["bytes"]), prio, plane)
    for p in sc.get("queue_ports", []) or []:
        ck.AddSamplePort(p)

    t1 = time.time()
    err = str(ck.Build())
    if err:
        raise ScenarioError(err)
    t2 = time.time()
    ck.Run()
    t3 = time.time()

    os.makedirs(outdir, exist_ok=True)
    handshake = bool(sc.get("handshake", False))
    unfinished = 0
    with open(os.path.join(outdir, "flows.csv"), "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["flow", "src", "dst", "bytes", "start_ns", "finish_ns", "fct_ns", "drops",
                    "ecn_marks", "retransmits", "timeouts"])
        for i in range(len(sc["flows"])):
            r = ck.flows[i]
            fin = int(r.finish_ns)
            if fin < 0:
                unfinished += 1
                finish = fct = ""
            else:
                # handshake: FCT from start_ns (the SYN). Without: from the first data segment sent.
                t_from = int(r.start_ns) if handshake else int(r.first_data_tx_ns)
                finish, fct = fin, fin - t_from
            w.writerow([i, r.src, r.dst, int(r.bytes), int(r.start_ns), finish, fct, int(r.drops),
                        int(r.marks) if c.dctcp or c.ecnKBytes >= 0 else "", int(r.retx),
                        int(r.timeouts)])
    names = [str(n) for n in ck.samplePortNames]
    with open(os.path.join(outdir, "queues.csv"), "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["port", "time_ns", "bytes"])
        for p, t, b in zip(ck.qsPort, ck.qsTime, ck.qsBytes):
            w.writerow([names[p], int(t), int(b)])
    wall_run = t3 - t2
    summary = {
        "simulator": "ns-3.44 (PyPI ns3==3.44.post0)",
        "scenario": sc.get("name"),
        "wall_seconds": round(wall_run, 3),
        "wall_seconds_total": round(time.time() - t0, 3),
        "wall_seconds_import": round(t_import, 3),
        "wall_seconds_build": round(t2 - t1, 3),
        "sim_end_ns": int(ck.NowNs()),
        "packets": int(ck.hopTx),
        "packets_data": int(ck.hopTxData),
        "packets_per_wall_second": round(int(ck.hopTx) / wall_run) if wall_run > 0 else None,
        "events": int(ck.EventCount()),
        "flows": len(sc["flows"]),
        "flows_unfinished": unfinished,
        "drops": int(ck.totalDrops),
        "ecn_marks": int(ck.totalMarks),
        "syn_admitted_over_buffer": int(ck.synAdmittedOverLimit),
        # packets refused, by port (ports with none left out), and of them SYNs and SYN-ACKs
        "drops_per_port": {str(ck.portNames[i]): int(ck.portDrops[i])
                           for i in range(len(ck.portNames)) if int(ck.portDrops[i]) > 0},
        "syn_drops": int(ck.synDrops),
        # of ecn_marks, those on packets without payload (ns-3 sends pure ACKs ECT; coflowkit does not)
        "ecn_marks_payloadless": int(ck.payloadlessMarks),
        "fast_recoveries": sum(int(ck.flows[i].recoveries) for i in range(len(sc["flows"]))),
        # ns-3.44 leaves loss recovery for CWR on an ECN-Echo (README: Transport)
        "ece_loss_to_cwr": sum(int(ck.flows[i].lossToCwr) for i in range(len(sc["flows"]))),
        "ece_recovery_to_cwr": sum(int(ck.flows[i].recoveryToCwr) for i in range(len(sc["flows"]))),
        # ACKs the senders receive: duplicates, and one-segment advances right after one (ck_ns3.h)
        "dup_acks": sum(int(ck.flows[i].dupAcks) for i in range(len(sc["flows"]))),
        "one_segment_acks_after_dup": sum(int(ck.flows[i].oneSegAfterDup) for i in range(len(sc["flows"]))),
        # every retransmission timer expiry (flows.csv `timeouts` counts entries into CA_LOSS), and
        # the bytes outstanding at the entries into CA_LOSS, summed (ck_ns3.h)
        "rto_expiries": sum(int(ck.flows[i].rtoExpiries) for i in range(len(sc["flows"]))),
        "rto_expiries_log": [[int(a), int(b)] for a, b in zip(ck.rtoLogFlow, ck.rtoLogNs)],
        "rto_expiries_per_flow": [int(ck.flows[i].rtoExpiries) for i in range(len(sc["flows"]))],
        "loss_outstanding_bytes": sum(int(ck.flows[i].lossOutstanding) for i in range(len(sc["flows"]))),
        # already delivered data resent (ck_ns3.h): by the sender's state when resent
        # (open, disorder, cwr, recovery, loss), the receiver's duplicate arrivals, and at each
        # timer expiry the bytes outstanding and the bytes of them the receiver already held
        "retx_by_state": [sum(int(ck.flows[i].retxByState[k]) for i in range(len(sc["flows"]))) for k in range(5)],
        "retx_held_by_state": [sum(int(ck.flows[i].retxHeldByState[k]) for i in range(len(sc["flows"]))) for k in range(5)],
        "retx_held_by_distance": [sum(int(ck.flows[i].heldAt[k]) for i in range(len(sc["flows"]))) for k in range(5)],
        "data_segments_sent": sum(int(ck.flows[i].dataSent) for i in range(len(sc["flows"]))),
        "data_segments_arrived": sum(int(ck.flows[i].dataArrivals) for i in range(len(sc["flows"]))),
        "dup_arrivals": sum(int(ck.flows[i].dupArrivals) for i in range(len(sc["flows"]))),
        "rto_outstanding_bytes": sum(int(ck.flows[i].rtoOutstanding) for i in range(len(sc["flows"]))),
        "rto_held_bytes": sum(int(ck.flows[i].rtoHeld) for i in range(len(sc["flows"]))),
        "tcp": "NewReno" if not c.dctcp else ("TcpDctcp (stock)" if stock_dctcp else "TcpDctcp, ssthresh floored at 2 segments"),
        "fct_from": "start_ns (SYN sent)" if handshake else "first data segment sent",
        "wire_bytes_full_data_packet": c.mtu - c.headerBytes + 42,
        "wire_bytes_pure_ack": 42,
    }
    if topo["spines"] > 0:
        summary["ecmp"] = "per-flow, address planes; spine = flows[i].spine or hash(ecmp_seed, i, src, dst)"
        summary["spine_per_flow"] = spines_used
    with open(os.path.join(outdir, "summary.json"), "w") as f:
        json.dump(summary, f, indent=1)
        f.write("\n")
    ck.Destroy()
    return summary


def main(argv: list[str]) -> int:
    stock = "--stock-dctcp" in argv
    argv = [a for a in argv if a != "--stock-dctcp"]
    if len(argv) >= 3 and argv[1] == "--many":
        # one process for several scenarios: ns-3 and the JIT are loaded once (about 20 s)
        jobs = [(p, os.path.join(argv[2], os.path.splitext(os.path.basename(p))[0])) for p in argv[3:]]
    elif len(argv) == 3:
        jobs = [(argv[1], argv[2])]
    else:
        print("\n".join(__doc__.strip().splitlines()[2:4]), file=sys.stderr)
        return 2
    rc = 0
    for path, out in jobs:
        try:
            sc = load_scenario(path)
            s = run(sc, out, stock)
        except ScenarioError as e:
            print(f"error: {path}: {e}", file=sys.stderr)
            rc = 1
            continue
        print(json.dumps({k: s[k] for k in ("scenario", "wall_seconds", "packets",
                                            "packets_per_wall_second", "flows_unfinished", "drops",
                                            "ecn_marks")}), flush=True)
    return rc


if __name__ == "__main__":
    sys.exit(main(sys.argv))
