"""Where a replay's time goes on the testbed: one scaled FB2010 replayed under
one policy, with the kernel's TCP counters of every host namespace (before and
after), the drops of every tc class, and each flow's timeline from the
workers' records (needs root)::

    sudo .venv/bin/python examples/testbed/diagnose.py [--hosts 16] [--policy plain | --scheduler aalo]
        [--size-scale 0.0002] [--time-scale 0.02] [--max-coflows K] [--buffer BYTES] [--rto-min-ms MS] [--rto-max-ms MS]
        [--slow-start-after-idle 0|1] [--delta-ms 10]

With ``--scheduler S`` the replay runs through the runtime (the coordinator
with scheduler S, an agent per host): then, per flow, also what its writer
was told and did (time paused, rate given against rate achieved, schedule
changes) against the same flow in the simulator under S.

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
from coflowkit.testbed import replay as rp
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
    ap.add_argument("--scheduler", default=None, help="replay through the runtime with this scheduler instead")
    ap.add_argument("--delta-ms", type=int, default=10, help="the runtime's coordination period (--scheduler)")
    ap.add_argument(
        "--slow-start-after-idle",
        type=int,
        choices=(0, 1),
        default=None,
        help="net.ipv4.tcp_slow_start_after_idle in every host (default: the testbed's)",
    )
    ap.add_argument("--buffer", type=int, default=None, help="bytes per queue (default: the testbed's)")
    ap.add_argument("--rto-min-ms", type=int, default=tb.DEFAULT_RTO_MIN_MS)
    ap.add_argument("--rto-max-ms", type=int, default=tb.DEFAULT_RTO_MAX_MS, help="TCP's ceiling on its timeout")
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
    p = tb.up(topology, args.name, buffer_bytes=args.buffer, rto_min_ms=args.rto_min_ms, rto_max_ms=args.rto_max_ms)
    try:
        if args.slow_start_after_idle is not None:
            for ns in p.host_ns:
                v = f"net.ipv4.tcp_slow_start_after_idle={args.slow_start_after_idle}"
                subprocess.run(["ip", "netns", "exec", ns, "sysctl", "-qw", v], check=True)
        ssai = subprocess.run(
            ["ip", "netns", "exec", p.host_ns[0], "sysctl", "-n", "net.ipv4.tcp_slow_start_after_idle"],
            capture_output=True,
            text=True,
        ).stdout.strip()
        print(f"net.ipv4.tcp_slow_start_after_idle in the hosts: {ssai}")
        before = [counters(ns) for ns in p.host_ns]
        t = time.time()
        if args.scheduler:
            flows = rp.replay_on_testbed_runtime(
                fw, args.scheduler, args.name, work_dir=args.out, delta_ms=args.delta_ms
            )
        else:
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
    if args.scheduler:
        return runtime_report(args, fw, topology, flows)
    workers = [json.loads((args.out / f"host{h}.json").read_text()) for h in range(args.hosts)]
    print("warm-up s per worker:", [round(w["warm_up_s"], 2) for w in workers])
    print("event-loop stalls per worker (mean/p99/max s):", [[round(x, 3) for x in w["stalls"]] for w in workers])
    print("worker CPU s (user, sys) / wall:", [[round(x, 1) for x in w["cpu_s"]] for w in workers],
          round(workers[0]["wall_s"], 1))
    print("warm-up failed:", sum(w["warm_up_failed"] for w in workers), "new connections:",
          sum(w["new_conns"] for w in workers))
    if rp.negotiates(spec):
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


def runtime_report(args: argparse.Namespace, fw: coflowkit.Workload, topology: str, flows: pd.DataFrame) -> int:
    """Per flow, where a runtime replay's time went, against the simulator's flow under the same scheduler."""
    rows = []
    for h in range(args.hosts):
        for fid, s in json.loads((args.out / f"host{h}.sent.json").read_text())["sent"].items():
            rows.append((int(fid), s[0], s[3], s[5], s[7], s[8], s[9], s[10], s[11], s[12], s[13]))
    cols = ["flow", "abs_start", "conn_s", "written_s", "rate0", "class0", "changes", "paused", "given", "opened_s",
            "last_s"]  # fmt: skip
    f = flows.merge(pd.DataFrame(rows, columns=cols), on="flow")
    t0 = (f["abs_start"] - f["start_s"]).median()  # the records are wall-clock times, the flows' from t0
    for c in ("conn_s", "written_s", "opened_s", "last_s"):
        f[c] -= t0
    f["open_rpc"] = f["opened_s"] - f["conn_s"]  # the writer's OpenFlow to the agent
    f["write"] = f["last_s"] - f["opened_s"]
    f["close_rpc"] = f["written_s"] - f["last_s"]  # unpacing and the writer's CloseFlow
    f["lag"] = f["start_s"] - f["arrival_s"]
    f["connect"] = f["conn_s"] - f["start_s"]
    f["writer"] = f["written_s"] - f["conn_s"]  # in the writer: paused, paced, or waiting for the socket
    f["drain"] = f["finish_s"] - f["written_s"]  # its last bytes from the socket to the receiver
    f["achieved"] = f["bytes"] * 8 / f["writer"].clip(lower=1e-6)
    f["paused0"] = f["rate0"].fillna(np.inf) < 1.0
    sim = coflowkit.simulate(fw, [args.scheduler], topology=topology, per_flow=True)
    sf = sim.flows(args.scheduler).reset_index(drop=True)
    # The simulator's flow table is in the workload's flow order, as the replay's flow ids are.
    f = f.sort_values("flow").reset_index(drop=True)
    f["sim_fct"] = sf["fct_s"].to_numpy()[f["flow"].to_numpy()]
    f["sim_start_wait"] = (sf["start_s"] - sf["arrival_s"]).to_numpy()[f["flow"].to_numpy()]
    f["fct"] = f["finish_s"] - f["arrival_s"]
    f["bin"] = pd.cut(f["bytes"], [0, 10e3, 100e3, 1e6, 1e12], labels=["<10KB", "10-100KB", "0.1-1MB", ">1MB"])
    q = f.groupby("bin", observed=True).agg(
        n=("flow", "size"),
        fct_mean=("fct", "mean"),
        sim_fct_mean=("sim_fct", "mean"),
        lag_mean=("lag", "mean"),
        writer_mean=("writer", "mean"),
        open_mean=("open_rpc", "mean"),
        write_mean=("write", "mean"),
        close_mean=("close_rpc", "mean"),
        paused_mean=("paused", "mean"),
        drain_mean=("drain", "mean"),
        paused_at_open=("paused0", "mean"),
        changes_mean=("changes", "mean"),
        given_med=("given", "median"),
        achieved_med=("achieved", "median"),
    )
    with pd.option_context("display.width", 250, "display.max_columns", 20, "display.precision", 4):
        print(q)
    print(
        "over all flows: mean FCT {:.4f} s (simulated {:.4f}); of it lag {:.4f}, connect {:.4f}, writer {:.4f} "
        "(paused {:.4f}), drain {:.4f}".format(
            f["fct"].mean(), f["sim_fct"].mean(), f["lag"].mean(), f["connect"].mean(), f["writer"].mean(),
            f["paused"].mean(), f["drain"].mean(),
        )
    )  # fmt: skip
    # Per coflow: the flow that finished last, and where its time went.
    f["coflow"] = fw.columns()["coflow_id"][f["flow"].to_numpy()]
    last = f.loc[f.groupby("coflow")["finish_s"].idxmax()]
    print(
        "per coflow (its last flow): mean CCT {:.4f} s; lag {:.4f}, connect {:.4f}, writer {:.4f} (open {:.4f}, "
        "writes {:.4f} of which paused {:.4f}, close {:.4f}), drain {:.4f}; paused when opened: {:.0%}".format(
            last["fct"].mean(), last["lag"].mean(), last["connect"].mean(), last["writer"].mean(),
            last["open_rpc"].mean(), last["write"].mean(), last["paused"].mean(), last["close_rpc"].mean(),
            last["drain"].mean(), last["paused0"].mean(),
        )
    )  # fmt: skip
    co, _ = rp.tables(fw, flows)
    print(f"mean CCT {co.to_pandas()['cct_s'].mean():.4f} s")
    f.to_csv(args.out / "flows-timeline.csv", index=False)
    return 0


if __name__ == "__main__":
    sys.exit(main())
