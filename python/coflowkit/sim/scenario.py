"""Packet scenarios: a plain flow list and the packet engine's knobs in one
JSON file, the format ``bench/ns3`` reads too, so that one scenario runs in
coflowkit and in ns-3 and the two result directories compare column by
column (docs/packet-engine.md, "Scenario files").

Every field is checked at the door; a bad one is one ``ValueError``
``<file>: <field>: <message>``.
"""

from __future__ import annotations

import json
import os
import re
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .._core import Workload, check_packet_options
from ..util import atomic_path
from .results import Results
from .trace import workload_from_table

__all__ = ["Scenario", "load_scenario", "run_scenario", "SCENARIO_FIELDS"]

#: Every field of a scenario file: what it sets.
SCENARIO_FIELDS: dict[str, str] = {
    "name": "a label",
    "note": "what the scenario checks (free text)",
    "topology": "a topology spec (bigswitch:hosts=N,rate=R or leaf-spine:...)",
    "ecmp_seed": "the ECMP hash's seed (default 0; coflowkit's hash, not ns-3's)",
    "host_link_delay_ns": "one-way delay of host links",
    "fabric_link_delay_ns": "one-way delay of links between switches",
    "mtu": "bytes on the wire of a full data packet",
    "header_bytes": "bytes of headers per packet",
    "transport": "the transport (coflowkit_packet's list: `coflowkit simulate --engine packet --packet help`)",
    "min_rto_ns": "retransmission timer floor",
    "initial_rto_ns": "retransmission timer before an RTT sample (default: min_rto_ns)",
    "init_cwnd_packets": "initial window, segments",
    "delayed_ack": "true: ACK every 2nd segment or after 200 us",
    "sack": "true: SACK blocks and SACK-based loss recovery (RFC 2018, RFC 6675); false: NewReno (default)",
    "handshake": "true: SYN/SYN-ACK first (3 s SYN timeout), counted in the FCT",
    "dctcp_g": "DCTCP's g",
    "switch_buffer_bytes": "each switch port's drop-tail buffer",
    "ecn_k_bytes": "ECN marking threshold per switch port, or null for none",
    "host_queue": '{"kind": "unbounded"}, {"kind": "droptail", "packets": N}, {"kind": "ecn", "k_packets": K} or {"kind": "droptail_ecn", "packets": N, "k_packets": K}',
    "flows": "the flows: src, dst, start_ns, bytes, prio (0 highest, up to 7), spine (the ECMP path, default hashed), deadline_ns (relative to start_ns; D2TCP reads it)",
    "queue_sample_ns": "sample queues at this interval",
    "queue_ports": "the ports to sample: to-host-I, host-I, leaf-L-to-spine-S, spine-S-to-leaf-L",
    "options": "any other packet-engine knob, as {key: value} (the keys of --packet help), applied last",
}
_FLOW_FIELDS = ("src", "dst", "start_ns", "bytes", "prio", "spine", "deadline_ns")


@dataclass(frozen=True)
class Scenario:
    """A scenario file, read and checked."""

    path: str
    topology: str
    transport: str
    options: str
    workload: Workload
    classes: list[int]
    paths: list[int | None]
    queue_ports: list[str]


def _int(path: str, field: str, v: Any, least: int = 0) -> int:
    if isinstance(v, bool) or not isinstance(v, int) or v < least:
        raise ValueError(f"{path}: {field}: expected a whole number of at least {least}, got {v!r}")
    return v


def _bool(path: str, field: str, v: Any) -> bool:
    if not isinstance(v, bool):
        raise ValueError(f"{path}: {field}: expected true or false, got {v!r}")
    return v


def load_scenario(path: str | os.PathLike[str]) -> Scenario:
    """Reads and checks a scenario file."""
    p = os.fspath(path)
    try:
        doc = json.loads(Path(p).read_text())
    except OSError as e:
        raise ValueError(f"{p}: cannot read: {e.strerror}") from None
    except json.JSONDecodeError as e:
        raise ValueError(f"{p}:{e.lineno}: not JSON: {e.msg}") from None
    if not isinstance(doc, dict):
        raise ValueError(f"{p}: expected one JSON object")
    unknown = sorted(set(doc) - set(SCENARIO_FIELDS))
    if unknown:
        raise ValueError(f"{p}: {unknown[0]}: unknown field (fields: {', '.join(SCENARIO_FIELDS)})")
    for field in ("topology", "flows"):
        if field not in doc:
            raise ValueError(f"{p}: {field}: missing")
    if not isinstance(doc["topology"], str):
        raise ValueError(f"{p}: topology: expected a spec string, got {doc['topology']!r}")
    topology = doc["topology"]
    if "ecmp_seed" in doc:
        topology += f"{',' if ':' in topology else ':'}ecmp_seed={_int(p, 'ecmp_seed', doc['ecmp_seed'])}"
    opts: list[str] = []
    if "host_link_delay_ns" in doc:
        opts.append(f"host_link_delay={_int(p, 'host_link_delay_ns', doc['host_link_delay_ns'])}ns")
    if "fabric_link_delay_ns" in doc:
        opts.append(f"fabric_link_delay={_int(p, 'fabric_link_delay_ns', doc['fabric_link_delay_ns'])}ns")
    for field, key in (("mtu", "mtu"), ("header_bytes", "header_bytes"), ("init_cwnd_packets", "init_cwnd")):
        if field in doc:
            opts.append(f"{key}={_int(p, field, doc[field], 1)}")
    if "min_rto_ns" in doc:
        rto = _int(p, "min_rto_ns", doc["min_rto_ns"], 1)
        opts.append(f"min_rto={rto}ns")
        opts.append(f"initial_rto={_int(p, 'initial_rto_ns', doc.get('initial_rto_ns', rto), 1)}ns")
    elif "initial_rto_ns" in doc:
        opts.append(f"initial_rto={_int(p, 'initial_rto_ns', doc['initial_rto_ns'], 1)}ns")
    if "delayed_ack" in doc:
        opts.append("delayed_ack=200us" if _bool(p, "delayed_ack", doc["delayed_ack"]) else "delayed_ack=off")
    if "sack" in doc:
        opts.append("sack=on" if _bool(p, "sack", doc["sack"]) else "sack=off")
    if "handshake" in doc:
        opts.append("handshake=3s" if _bool(p, "handshake", doc["handshake"]) else "handshake=off")
    if "dctcp_g" in doc:
        g = doc["dctcp_g"]
        if isinstance(g, bool) or not isinstance(g, int | float):
            raise ValueError(f"{p}: dctcp_g: expected a number, got {g!r}")
        opts.append(f"dctcp_g={g}")
    if "switch_buffer_bytes" in doc:
        opts.append(f"buffer={_int(p, 'switch_buffer_bytes', doc['switch_buffer_bytes'], 1)}B")
    if "ecn_k_bytes" in doc:
        k = doc["ecn_k_bytes"]
        opts.append("ecn_k=off" if k is None else f"ecn_k={_int(p, 'ecn_k_bytes', k, 1)}B")
    if "host_queue" in doc:
        opts.append(f"host_queue={_host_queue(p, doc['host_queue'])}")
    if "queue_sample_ns" in doc:
        opts.append(f"queue_trace={_int(p, 'queue_sample_ns', doc['queue_sample_ns'], 1)}ns")
    opts.extend(_options(p, doc.get("options", {})))
    transport = doc.get("transport", "dctcp")
    if not isinstance(transport, str):
        raise ValueError(f"{p}: transport: expected a name, got {transport!r}")
    flows = doc["flows"]
    if not isinstance(flows, list) or not flows:
        raise ValueError(f"{p}: flows: expected a non-empty list")
    cols: dict[str, list[int]] = {k: [] for k in ("coflow_id", "arrival_ns", "src", "dst", "bytes")}
    classes = []
    paths: list[int | None] = []
    deadlines: list[int | None] = []
    for i, f in enumerate(flows):
        where = f"flows[{i}]"
        if not isinstance(f, dict):
            raise ValueError(f"{p}: {where}: expected an object with {', '.join(_FLOW_FIELDS)}")
        bad = sorted(set(f) - set(_FLOW_FIELDS))
        if bad:
            raise ValueError(f"{p}: {where}.{bad[0]}: unknown field (fields: {', '.join(_FLOW_FIELDS)})")
        for field in ("src", "dst", "start_ns", "bytes"):
            if field not in f:
                raise ValueError(f"{p}: {where}.{field}: missing")
        cols["coflow_id"].append(i)
        cols["arrival_ns"].append(_int(p, f"{where}.start_ns", f["start_ns"]))
        src, dst = _int(p, f"{where}.src", f["src"]), _int(p, f"{where}.dst", f["dst"])
        if src == dst:
            raise ValueError(f"{p}: {where}: src and dst are both host {src}: a flow crosses the fabric "
                             f"from one host to another")
        cols["src"].append(src)
        cols["dst"].append(dst)
        cols["bytes"].append(_int(p, f"{where}.bytes", f["bytes"], 1))
        prio = _int(p, f"{where}.prio", f.get("prio", 0))
        if prio > 7:
            raise ValueError(f"{p}: {where}.prio: a priority class is 0 (highest) to 7, got {prio}")
        classes.append(prio)
        paths.append(_int(p, f"{where}.spine", f["spine"]) if "spine" in f else None)
        deadlines.append(_int(p, f"{where}.deadline_ns", f["deadline_ns"], 1) if "deadline_ns" in f else None)
    import pyarrow as pa

    table = pa.table(
        {
            "coflow_id": pa.array(cols["coflow_id"], pa.uint64()),
            "arrival_ns": pa.array(cols["arrival_ns"], pa.uint64()),
            "src": pa.array(cols["src"], pa.uint32()),
            "dst": pa.array(cols["dst"], pa.uint32()),
            "bytes": pa.array(cols["bytes"], pa.uint64()),
            "flow_deadline_ns": pa.array(deadlines, pa.uint64()),
        }
    )
    # Flows in coflow order = arrival order (ties by index): the engine's
    # flow order, which classes follow.
    order = sorted(range(len(flows)), key=lambda i: (cols["arrival_ns"][i], i))
    ports = doc.get("queue_ports", [])
    if not isinstance(ports, list) or not all(isinstance(x, str) for x in ports):
        raise ValueError(f"{p}: queue_ports: expected a list of port names")
    for name in ports:
        link_name(p, name)
    return Scenario(
        path=p,
        topology=topology,
        transport=transport,
        options=",".join(opts),
        workload=workload_from_table(table, source=p),
        classes=[classes[i] for i in order],
        paths=[paths[i] for i in order],
        queue_ports=ports,
    )


def _options(path: str, options: Any) -> list[str]:
    """The ``options`` field: knobs the schema has no field for, checked by the engine's parser."""
    if not isinstance(options, dict):
        raise ValueError(f"{path}: options: expected an object of knob: value, got {options!r}")
    out = []
    for key, value in options.items():
        if isinstance(value, bool) or not isinstance(value, str | int | float):
            raise ValueError(f"{path}: options.{key}: expected a string or a number, got {value!r}")
        text = str(value)
        if "," in text or ";" in text or "=" in text:
            raise ValueError(f"{path}: options.{key}: {text!r} may not contain ',', ';' or '='")
        if key == "transport":
            raise ValueError(f"{path}: options.transport: set the transport with the transport field")
        try:
            check_packet_options(f"{key}={text}")
        except ValueError as e:
            raise ValueError(f"{path}: options: {e}") from None
        out.append(f"{key}={text}")
    return out


def _host_queue(path: str, q: Any) -> str:
    if not isinstance(q, dict) or "kind" not in q:
        raise ValueError(f"{path}: host_queue: expected {SCENARIO_FIELDS['host_queue']}")
    kind = q["kind"]
    if kind == "unbounded":
        return "unbounded"
    if kind == "droptail":
        return f"droptail:{_int(path, 'host_queue.packets', q.get('packets'), 1)}"
    if kind == "ecn":
        return f"ecn:{_int(path, 'host_queue.k_packets', q.get('k_packets'), 1)}"
    if kind == "droptail_ecn":
        n = _int(path, "host_queue.packets", q.get("packets"), 1)
        k = _int(path, "host_queue.k_packets", q.get("k_packets"), 1)
        if k >= n:
            raise ValueError(f"{path}: host_queue.k_packets: {k} would never mark in a queue of {n} packets")
        return f"droptail:{n}+ecn:{k}"
    raise ValueError(f"{path}: host_queue.kind: unbounded, droptail, ecn or droptail_ecn, got {kind!r}")


def link_name(path: str, port: str) -> str:
    """coflowkit's name of the link behind a scenario's port name."""
    for pattern, fmt in (
        (r"to-host-(\d+)", "host {0} downlink"),
        (r"host-(\d+)", "host {0} uplink"),
        (r"leaf-(\d+)-to-spine-(\d+)", "leaf {0} -> spine {1}"),
        (r"spine-(\d+)-to-leaf-(\d+)", "spine {0} -> leaf {1}"),
    ):
        m = re.fullmatch(pattern, port)
        if m:
            return fmt.format(*m.groups())
    raise ValueError(f"{path}: queue_ports: {port!r} is not to-host-I, host-I, leaf-L-to-spine-S or spine-S-to-leaf-L")


def run_scenario(s: Scenario, out: str | os.PathLike[str], progress: bool = True) -> Results:
    """Runs a scenario and writes ``flows.csv``, ``queues.csv`` and ``summary.json`` to ``out``."""
    from . import simulate

    t0 = time.monotonic()
    res = simulate(
        s.workload,
        s.transport,
        topology=s.topology,
        engine="packet",
        packet=s.options,
        classes=s.classes,
        paths=s.paths if any(q is not None for q in s.paths) else None,
        progress=progress,
    )
    wall = time.monotonic() - t0
    d = Path(out)
    d.mkdir(parents=True, exist_ok=True)
    flows = res.flows()
    coflow = flows["coflow_id"].to_numpy()
    start_ns = (flows["start_s"].to_numpy() * 1e9).round().astype("int64")
    finish_ns = (flows["finish_s"].to_numpy() * 1e9).round().astype("int64")
    rows = ["flow,src,dst,bytes,start_ns,finish_ns,fct_ns,drops,ecn_marks,retransmits,timeouts"]
    order = sorted(range(len(flows)), key=lambda i: int(coflow[i]))
    for i in order:
        r = flows.iloc[i]
        rows.append(
            f"{int(coflow[i])},{int(r.src)},{int(r.dst)},{int(r.bytes)},{start_ns[i]},{finish_ns[i]},"
            f"{finish_ns[i] - start_ns[i]},{int(r.drops)},{int(r.ecn_marks)},{int(r.retransmits)},{int(r.timeouts)}"
        )
    with atomic_path(d / "flows.csv") as tmp:
        Path(tmp).write_text("\n".join(rows) + "\n")
    queue_rows = ["port,time_ns,bytes"]
    if s.queue_ports:
        ports = res.ports()
        ids = {link_name(s.path, q): q for q in s.queue_ports}
        by_id = {int(r.port): ids[r.name] for r in ports.itertuples() if r.name in ids}
        missing = sorted(set(ids) - set(ports["name"]))
        if missing:
            raise ValueError(f"{s.path}: queue_ports: {ids[missing[0]]!r} is no port of {s.topology}")
        trace = res.queue_trace()
        for r in trace.itertuples():
            if int(r.port) in by_id:
                queue_rows.append(f"{by_id[int(r.port)]},{round(r.time_s * 1e9)},{int(r.bytes)}")
    with atomic_path(d / "queues.csv") as tmp:
        Path(tmp).write_text("\n".join(queue_rows) + "\n")
    summary = {
        "simulator": "coflowkit",
        "scenario": s.path,
        "wall_s": wall,
        "packets": res.packets(),
        "events": res.n_events(),
    }
    with atomic_path(d / "summary.json") as tmp:
        Path(tmp).write_text(json.dumps(summary, indent=2) + "\n")
    return res
