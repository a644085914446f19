"""Baraat 5.1 / Table 3: Memcached multi-gets on the testbed through the runtime, and the same workload
in the flow- and packet-level simulators.

    sudo .venv/bin/python examples/reproductions/memcached.py [--requests 1000] [--out OUT]

Brings up the paper's fabric (a two-level tree, five racks of four hosts) as a testbed, runs Debian's
``memcached`` unmodified on the sixteen server hosts and the four front-end clients of the first rack
(coflowkit.testbed.memcached) under each scheduler through the runtime and over plain TCP, simulates
the same requests as a coflow trace, and writes OUT/results.json (every run's summary) and
OUT/ccts.csv (every request's completion time). ``docs/reproductions/memcached.md`` is written from
these by ``--page``.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path
from typing import Any

import coflowkit
from coflowkit.testbed import memcached as mc
from coflowkit.testbed import net as tb

#: The paper's fabric at a tenth of its rates (1 Gbit/s hosts there): the testbed's two shared cores
#: do not move 4 x 0.5 Gbit/s through bridges and HTB ports; the ToR uplinks carry their four hosts'
#: rate (no oversubscription), so the clients' own links are the bottleneck at 50% load.
RATE_BPS = 100e6
TOPOLOGY = f"tree:pods=1,racks=5,hosts=4,tor_oversub=1,rate={RATE_BPS:.0f}bps"
TASK_BYTES = 800_000
LOAD = 0.5
SEED = 20_261_129
#: Runtime schedulers (plain TCP is the fourth run); `fifo-lm` is Baraat's policy with its heavy
#: threshold far above a task (every task is 800 KB: no task turns heavy, as in the paper's runs,
#: where FIFO-LM's multiplexing serves heavy tasks the workload did not have).
SCHEDULERS = ["fifo-lm:threshold=100MB+host", "fifo-lm:threshold=100MB", "fair", "varys", "aalo"]
#: The simulators' runs: the flow level's schedulers, and the packet level's (its coordinator
#: schedulers over DCTCP, and plain TCP and RCP as transports).
FLOW_SCHEDULERS = ["fifo-lm:threshold=100MB", "fair", "varys", "aalo"]
PACKET_SCHEDULERS = ["fifo-lm:threshold=100MB", "fair", "varys", "aalo", "tcp", "rcp"]


#: The testbed's TCP as the packet engine models it: strict priority queues of 64 KB each, drops,
#: a 1 s ceiling on the timeout, SACK, TCP Small Queues.
TESTBED_TCP = "transport=tcp,buffer_per=queue,buffer=64KB,class_min=0.001,max_rto=1s,sack=on,tsq=32KB"
#: The packet level's further runs, (label, scheduler, packet options): over the testbed's TCP, and
#: `fifo-lm` run the runtime's way (`via=coordinator`) beside its host policy.
PACKET_RUNS = (
    ("fifo-lm:threshold=100MB/testbed-tcp", "fifo-lm:threshold=100MB", TESTBED_TCP),
    ("fair/testbed-tcp", "fair", TESTBED_TCP),
    ("varys/testbed-tcp", "varys", TESTBED_TCP),
    ("aalo/testbed-tcp", "aalo", TESTBED_TCP),
    ("fifo-lm:threshold=100MB/testbed-tcp/via-coordinator", "fifo-lm:threshold=100MB", TESTBED_TCP + ",via=coordinator"),
    ("fifo-lm:threshold=100MB/via-coordinator", "fifo-lm:threshold=100MB", "via=coordinator"),
)


def simulate(
    trace: Path, engine: str, schedulers: list[str], more: tuple[tuple[str, str, str], ...] = ()
) -> dict[str, dict[str, float]]:
    """Each scheduler's task completion summary, then each of ``more`` (label, scheduler, packet
    options) under its label."""
    runs: list[tuple[str, str, str | None]] = [(s, s, None) for s in schedulers] + list(more)
    out = {}
    for label, s, options in runs:
        r = coflowkit.simulate(str(trace), scheduler=s, topology=TOPOLOGY, engine=engine, packet=options,
                               progress=False)  # fmt: skip
        c = r.coflows(r.schedulers[0])
        out[label] = mc.summary_ms(list(c["cct_s"]))
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--requests", type=int, default=1000)
    ap.add_argument("--out", type=Path, default=Path("results/memcached"))
    ap.add_argument("--name", default="mc")
    ap.add_argument("--only", nargs="*",
                    help="runtime runs to do (scheduler specs, or 'tcp'); a spec ending in '+host' has each "
                    "agent mark the flows with the scheduler's host policy (--transparent-policy host)")
    ap.add_argument("--no-sim", action="store_true")
    ap.add_argument("--ceil", choices=["rate", "line"], default="line",
                    help="watched flows held to their scheduled rate, or work-conserving (default)")
    ap.add_argument("--dscp", choices=["on", "off"], default="on",
                    help="carry each flow's class to the switches as DSCP (default on)")
    ap.add_argument("--delta-ms", type=int, default=10, help="the runtime's interval")
    ap.add_argument("--naming", choices=["alongside", "before"], default="alongside",
                    help="a task registered and its flows named alongside its gets (default), or before they connect")
    ap.add_argument("--label", default="", help="appended to each run's label in the results")
    a = ap.parse_args(argv)
    out: Path = a.out
    out.mkdir(parents=True, exist_ok=True)
    p = tb.plan(TOPOLOGY, a.name)
    layout = mc.paper_layout(p)
    reqs = mc.requests(layout, a.requests, TASK_BYTES, LOAD, RATE_BPS, SEED)
    trace = out / "workload.csv"
    trace.write_text("\n".join(mc.workload_rows(reqs, TASK_BYTES, p.n_hosts)) + "\n")
    results_path = out / "results.json"
    results: dict[str, Any] = json.loads(results_path.read_text()) if results_path.exists() else {}
    results["setup"] = {"topology": TOPOLOGY, "requests": a.requests, "task_bytes": TASK_BYTES, "load": LOAD,
                        "seed": SEED, "clients": list(layout.clients), "servers": list(layout.servers)}  # fmt: skip
    if not a.no_sim:
        t = time.monotonic()
        results["flow"] = simulate(trace, "flow", FLOW_SCHEDULERS)
        results["packet"] = simulate(trace, "packet", PACKET_SCHEDULERS, PACKET_RUNS)
        print(f"simulators: {time.monotonic() - t:.0f} s", file=sys.stderr)
        results_path.write_text(json.dumps(results, indent=1))
    runs: list[str | None] = [None, *SCHEDULERS]
    if a.only is not None:
        runs = [None if r == "tcp" else r for r in a.only]
    state_dir = out / "state"
    tb.down(a.name, state_dir)
    p = tb.up(TOPOLOGY, a.name, state_dir=state_dir)
    rows = []
    try:
        seen: dict[str, int] = {}
        for s in runs:
            label = (s or "tcp") + a.label
            seen[label] = seen.get(label, 0) + 1
            if seen[label] > 1:  # a repeat in one call (alternating runs): label@2, label@3, ...
                label += f"@{seen[label]}"
            load_before = os.getloadavg()[0]
            t = time.monotonic()
            spec, policy = (s[: -len("+host")], "host") if s and s.endswith("+host") else (s, "coordinator")
            r = mc.run(p, spec, reqs, layout, TASK_BYTES, out / "work" / label.replace(":", "_").replace("+", "_"),
                       delta_ms=a.delta_ms, ceiling=a.ceil, dscp=a.dscp == "on", naming=a.naming,
                       policy=policy)  # fmt: skip
            if r["errors"]:
                print(f"{label}: {len(r['errors'])} errors, first: {r['errors'][0]}", file=sys.stderr)
            summ = mc.summary_ms([x["cct_s"] for x in r["results"]])
            summ["errors"] = len(r["errors"])
            summ["wall_s"] = time.monotonic() - t
            setup = sorted(x["setup_s"] for x in r["results"])
            summ["setup_avg_ms"] = 1e3 * sum(setup) / max(1, len(setup))
            summ["setup_p99_ms"] = 1e3 * setup[min(len(setup) - 1, -(-len(setup) * 99 // 100) - 1)] if setup else 0.0
            summ["named_after_avg_ms"] = 1e3 * sum(x["named_after_s"] for x in r["results"]) / max(1, len(r["results"]))
            summ["runtime_cpu_s"] = r.get("runtime_cpu_s", 0.0)
            summ["retrans_segs"] = r["tcp"]["RetransSegs"]
            summ["rto_timeouts"] = r["tcp"]["TCPTimeouts"]
            summ["syn_retrans"] = r["tcp"]["TCPSynRetrans"]
            summ["server_rto_timeouts"] = r["tcp_servers"]["TCPTimeouts"]
            summ["server_syn_retrans"] = r["tcp_servers"]["TCPSynRetrans"]
            summ["over_900ms"] = sum(x["cct_s"] > 0.9 for x in r["results"])
            summ["load_avg_1m_before"] = load_before
            summ["load_avg_1m"] = os.getloadavg()[0]
            results.setdefault("testbed", {})[label] = summ
            results_path.write_text(json.dumps(results, indent=1))
            rows += [f"{label},{x['task']},{x['client']},{x['cct_s']:.6f},{x['setup_s']:.6f}" for x in r["results"]]
            print(f"{label}: {summ}", file=sys.stderr)
    finally:
        tb.down(a.name, state_dir)
    with open(out / "ccts.csv", "a") as f:
        for row in rows:
            f.write(row + "\n")
    return 0


if __name__ == "__main__":
    os.environ.setdefault("RUST_LOG", "warn")
    sys.exit(main())
