"""Where a replay's time goes on the testbed: one scaled FB2010 replayed under
one policy, with the kernel's TCP counters of every host namespace (before and
after), the drops of every tc class, and each flow's timeline from the
workers' records (needs root)::

    sudo .venv/bin/python examples/testbed/diagnose.py [--hosts 16] [--policy plain]
        [--size-scale 0.0002] [--time-scale 0.02] [--max-coflows K] [--buffer BYTES] [--rto-min-ms MS]

Prints: the machine's load, the TCP counters that grew (retransmits, RTOs,
SYN retransmits, ...), the drops per queue summed over ports, the senders'
start lag (first byte against the scheduled start), and how much of each
coflow's CCT each flow's transfer explains, in size bins.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import numpy as np
import pandas as pd

import coflowkit
from coflowkit import replay as rp
from coflowkit import testbed as tb

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
TRACE = ROOT.parent / "shared" / "data" / "FB2010-1Hr-150-0.txt"
#: The counters of /proc/net/{snmp,netstat} worth reading for a replay.
COUNTERS = (
    "TcpRetransSegs",
    "TcpExtTCPTimeouts",
    "TcpExtTCPSynRetrans",
    "TcpExtTCPLossProbes",
    "TcpExtTCPFastRetrans",
    "TcpExtTCPSlowStartRetrans",
    "TcpExtTCPLostRetransmit",
    "TcpExtTCPSpuriousRTOs",
    "TcpExtListenOverflows",
    "TcpExtListenDrops",
    "TcpExtTCPBacklogDrop",
    "TcpExtTCPRcvQDrop",
    "TcpExtDelayedACKs",
    "TcpActiveOpens",
    "TcpPassiveOpens",
    "TcpOutSegs",
)


def counters(ns: str) -> Counter[str]:
    """The kernel's IP/TCP counters of namespace ``ns`` (/proc/net/snmp and netstat), named as nstat does."""
    out: Counter[str] = Counter()
    for f in ("/proc/net/snmp", "/proc/net/netstat"):
        text = subprocess.run(["ip", "netns", "exec", ns, "cat", f], capture_output=True, text=True).stdout
        lines = text.splitlines()
        for head, vals in zip(lines[::2], lines[1::2], strict=False):
            pfx, names = head.split(":", 1)
            _, values = vals.split(":", 1)
            for k, v in zip(names.split(), values.split(), strict=False):
                try:
                    out[pfx + k] += int(v)
                except ValueError:
                    pass
    return out


def class_drops(p: tb.Plan) -> dict[str, Counter[int]]:
    """Packets dropped per queue (0 the highest), summed over the hosts' egress ports and the switches' ports."""
    drops: dict[str, Counter[int]] = {"host": Counter(), "switch": Counter()}
    for port in p.ports:
        text = subprocess.run(
            ["ip", "netns", "exec", port.ns, "tc", "-s", "qdisc", "show", "dev", port.dev],
            capture_output=True,
            text=True,
        ).stdout
        where = "switch" if port.ns in p.switch_ns else "host"
        for m in re.finditer(r"qdisc bfifo (\d+):.*?\n\s*Sent \d+ bytes (\d+) pkt \(dropped (\d+)", text):
            q = int(m.group(1)) - 10
            drops[where][q] += int(m.group(3))
    return drops


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--hosts", type=int, default=16)
    ap.add_argument("--rate", default="100Mbps")
    ap.add_argument("--size-scale", type=float, default=0.0002)
    ap.add_argument("--time-scale", type=float, default=0.02)
    ap.add_argument("--max-coflows", type=int, default=None)
    ap.add_argument("--policy", default="plain")
    ap.add_argument("--buffer", type=int, default=None, help="bytes per queue (default: the testbed's)")
    ap.add_argument("--rto-min-ms", type=int, default=tb.DEFAULT_RTO_MIN_MS)
    ap.add_argument(
        "--nice", type=int, default=-10, help="the replay workers' niceness (default -10: see replay_on_testbed)"
    )
    ap.add_argument("--name", default="dg")
    ap.add_argument("--out", type=Path, default=ROOT / "results" / "testbed-diagnose")
    args = ap.parse_args(argv)
    print(f"load average before: {os.getloadavg()}")
    topology = f"bigswitch:hosts={args.hosts},rate={args.rate}"
    fw = rp.fit(coflowkit.load_trace(TRACE), args.hosts, args.size_scale, args.time_scale, args.max_coflows).workload
    spec = rp.policy_spec(args.policy, fw)
    tb.down(args.name)
    p = tb.up(topology, args.name, buffer_bytes=args.buffer, rto_min_ms=args.rto_min_ms)
    try:
        before = [counters(ns) for ns in p.host_ns]
        t = time.time()
        flows = rp.replay_on_testbed(fw, args.name, policy=spec, work_dir=args.out, nice=args.nice)
        wall = time.time() - t
        after = [counters(ns) for ns in p.host_ns]
        drops = class_drops(p)
    finally:
        tb.down(args.name)
    print(f"load average after: {os.getloadavg()}; replay wall {wall:.0f} s")
    grew = sum((Counter({k: a[k] - b[k] for k in a}) for a, b in zip(after, before, strict=True)), Counter())
    print("TCP counters (all hosts):", {k: grew[k] for k in COUNTERS if grew[k]})
    for where, d in drops.items():
        print(f"drops at {where} queues:", dict(sorted(d.items())))
    workers = [json.loads((args.out / f"host{h}.json").read_text()) for h in range(args.hosts)]
    print("warm-up s per worker:", [round(w["warm_up_s"], 2) for w in workers])
    print("event-loop stalls per worker (mean/p99/max s):", [[round(x, 3) for x in w["stalls"]] for w in workers])
    print("worker CPU s (user, sys) / wall:", [[round(x, 1) for x in w["cpu_s"]] for w in workers],
          round(workers[0]["wall_s"], 1))
    print("warm-up failed:", sum(w["warm_up_failed"] for w in workers), "new connections:",
          sum(w["new_conns"] for w in workers))
    if spec.get("negotiate"):
        print("dcas negotiation (all hosts):", rp.negotiation_summary(args.out, args.hosts))
    t0 = workers[0]["t0"]
    rows = []
    for w in workers:
        for fid, s in w["sent"].items():
            rows.append((int(fid), s[0] - t0, s[3] - t0, bool(s[4]), s[5] - t0))
    ext = pd.DataFrame(rows, columns=["flow", "start_s", "conn_s", "fresh", "written_s"])
    f = flows.merge(ext.drop(columns="start_s"), on="flow")
    f["lag"] = f["start_s"] - f["arrival_s"]
    f["connect"] = f["conn_s"] - f["start_s"]
    f["transfer"] = f["finish_s"] - f["conn_s"]
    f["ideal"] = f["bytes"] * 8 / 95.6e6
    f["bin"] = pd.cut(f["bytes"], [0, 10e3, 100e3, 1e6, 1e12], labels=["<10KB", "10-100KB", "0.1-1MB", ">1MB"])
    q = f.groupby("bin", observed=True).agg(
        n=("flow", "size"),
        lag_med=("lag", "median"),
        lag_p99=("lag", lambda x: np.percentile(x, 99)),
        connect_p99=("connect", lambda x: np.percentile(x, 99)),
        fresh=("fresh", "sum"),
        transfer_med=("transfer", "median"),
        transfer_p95=("transfer", lambda x: np.percentile(x, 95)),
        ideal_med=("ideal", "median"),
        over_200ms=("transfer", lambda x: int((x > 0.2).sum())),
    )
    with pd.option_context("display.width", 200, "display.max_columns", 20):
        print(q)
    co, _ = rp.tables(fw, flows)
    print(f"mean CCT {co.to_pandas()['cct_s'].mean():.4f} s")
    f.to_csv(args.out / "flows-timeline.csv", index=False)
    return 0


if __name__ == "__main__":
    sys.exit(main())
