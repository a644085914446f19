"""Simulation against reality: one scaled workload replayed on the emulated
testbed under each sender policy, and simulated on the testbed's topology
under the scheduler each policy stands for; writes
``docs/lab/testbed-vs-simulation.md`` and its figures (needs root)::

    sudo .venv/bin/python examples/testbed/sim_vs_testbed.py [--workload fb2010|dcas] [--hosts 16]
        [--rate 100Mbps] [--size-scale S] [--time-scale T] [--max-coflows K]
        [--policies plain,pias,fifo-lm,tafe,karuna,dcas,aalo,varys] [--delta-ms 10]

The workload is FB2010 (../shared/data) or D-CAS's synthetic mix (V-A: the
four bins of short/long and narrow/wide coflows, flows up to 500 MiB, load 1;
``coflowkit generate coflow-benchmark --preset dcas`` for the testbed's hosts
and port rate), fitted to the testbed (``coflowkit.testbed.replay.fit``). Each
workload has a page of its own (``PAGES``). The testbed is brought up under its own name and
always taken down. ``aalo``, ``varys`` and the diagnostic ``fair-rt``
(``fair``), ``aalo-strict`` (``aalo:queues=strict``) and ``aalo-rates``
(``aalo`` with every flow in one class) run through the runtime (``RUNTIME``)
(``coflowkit.testbed.replay.replay_on_testbed_runtime``: the coordinator with that
scheduler, an agent in every host's namespace), the rest as sender
policies. Each policy's per-coflow CCTs are compared with the
simulated ones coflow by coflow; the page states the gap of the average CCT
per scheduler and whether the ranking of schedulers agrees. Each run saves what
the page needs in its OUT directory: ``--page-from OUT...`` writes the page again
from saved runs, and with ``--resimulate`` first simulates each saved run's
workload and specs again with today's code (the testbed's measurements kept:
for a change of the simulator, which needs no new replay).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import shlex
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

import coflowkit
from coflowkit.testbed import replay as rp
from coflowkit import testbed as tb

sys.path.insert(0, str(Path(__file__).resolve().parent))
import diagnose as dg  # noqa: E402
from sim_vs_testbed_page import combine, draw, write_page  # noqa: E402
from sim_vs_testbed_policies import (  # noqa: E402
    DCAS_RATE,
    DCAS_THRESHOLD,
    HOST_POLICIES,
    PAGES,
    ROOT,
    RUNTIME,
    RUNTIME_OPTIONS,
    SCALES,
    SIMULATED,
    TRACE,
)


def parser() -> argparse.ArgumentParser:
    """The command line (a saved run's ``command`` is read again with it by :func:`resimulate`)."""
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--workload", choices=sorted(PAGES), default="fb2010")
    ap.add_argument("--hosts", type=int, default=16)
    ap.add_argument("--rate", default="100Mbps")
    ap.add_argument("--size-scale", type=float, default=None, help="default: fb2010 0.0002, dcas 0.01")
    ap.add_argument(
        "--time-scale", type=float, default=None, help="default: fb2010 0.02, dcas the size scale (the same load)"
    )
    ap.add_argument("--max-coflows", type=int, default=None)
    ap.add_argument("--coflows", type=int, default=200, help="dcas: how many coflows to generate (default 200)")
    ap.add_argument("--load", type=float, default=1.0, help="dcas: the offered load (default 1, D-CAS V-A's)")
    ap.add_argument("--seed", type=int, default=1, help="dcas: the generator's seed (default 1)")
    ap.add_argument("--policies", default=",".join(["plain", *HOST_POLICIES, *RUNTIME]))
    ap.add_argument(
        "--nice", type=int, default=-10, help="the replay workers' niceness (default -10: see replay_on_testbed)"
    )
    ap.add_argument(
        "--delta-ms", type=int, default=10, help="the runtime's coordination period for aalo, varys, fair-rt (ms)"
    )
    ap.add_argument(
        "--buffer",
        type=int,
        default=None,
        help="bytes per queue of every switch port (default: the testbed's, 2 ms at the port's rate, at least 64 KiB)",
    )
    ap.add_argument(
        "--rto-max-ms",
        type=int,
        default=tb.DEFAULT_RTO_MAX_MS,
        help="TCP's ceiling on its timeout in the hosts (default: the testbed's; 120000 is the kernel's)",
    )
    ap.add_argument("--name", default="svt")
    ap.add_argument("--out", type=Path, default=ROOT / "results" / "testbed-vs-simulation")
    ap.add_argument(
        "--page-from",
        type=Path,
        nargs="+",
        default=None,
        help="only rewrite the page (and its figure) from the runs saved in these OUT directories; a policy in a "
        "later one replaces the same policy's row of an earlier one",
    )
    ap.add_argument(
        "--resimulate",
        action="store_true",
        help="with --page-from: simulate each saved run's workload and specs again with today's code first "
        "(the testbed's measurements stay the run's; OUT/page.json and OUT/P-coflows.csv are rewritten, the "
        "run's first page.json kept as OUT/page-as-run.json)",
    )
    return ap


def main(argv: list[str] | None = None) -> int:
    ap = parser()
    args = ap.parse_args(argv)
    if args.resimulate and args.page_from is None:
        ap.error("--resimulate: give the runs to simulate again with --page-from OUT...")
    if args.page_from is not None:
        if args.resimulate:
            for out in args.page_from:
                resimulate(out)
        saved, csvs = combine(args.page_from)
        draw(csvs, PAGES[saved["workload"]][1])
        write_page(saved)
        return 0
    policies = args.policies.split(",")
    known = ["plain", *HOST_POLICIES, *RUNTIME]
    unknown = [p for p in policies if p not in known]
    if unknown:
        ap.error(f"--policies: unknown {', '.join(unknown)} (known: {', '.join(known)})")
    missing = [p for p in policies if p in SIMULATED and SIMULATED[p].split(":")[0] not in dict(coflowkit.schedulers())]
    if missing:
        ap.error(f"--policies: the simulator has no {', '.join(SIMULATED[p] for p in missing)} to compare with")

    topology = topology_of(args)
    try:
        fitted, dcas_mix = workload_of(args)
    except ValueError as e:
        ap.error(f"--workload dcas: {e}")
    fw = fitted.workload
    print(f"{fw.source}: {fw.n_coflows} coflows, {fw.n_flows} flows", flush=True)
    args.out.mkdir(parents=True, exist_ok=True)
    specs = {
        p: rp.policy_spec("dcas", fw, negotiate=p != "dcas-local", **dcas_mix)
        if p.startswith("dcas")
        else rp.policy_spec(p, fw)
        for p in policies
        if p not in RUNTIME
    }
    sim_specs = []
    for p in policies:
        # A host policy is simulated with the replay's own spec: the same policy.
        s = specs[p]["spec"] if p in HOST_POLICIES else SIMULATED[p]
        if s.split(":")[0] == "aalo":
            # The coordinator's period (--delta-ms).
            s += (";" if ":" in s else ":") + f"delta={args.delta_ms}ms"
        sim_specs.append(s)
    # A counterpart the simulator refuses is refused now, not after an hour of replays.
    try:
        tiny = coflowkit.synthetic(n_hosts=args.hosts, n_coflows=2, seed=1)
        coflowkit.simulate(tiny, list(dict.fromkeys(sim_specs)), topology=topology, progress=False)
    except ValueError as e:
        ap.error(f"--policies: a simulated counterpart is refused: {e}")
    measured: dict[str, pd.DataFrame] = {}
    wall: dict[str, float] = {}
    why: dict[str, dict[str, float]] = {}
    tb.down(args.name)
    bed = tb.up(topology, args.name, buffer_bytes=args.buffer, rto_max_ms=args.rto_max_ms)
    try:
        for p in policies:
            load = os.getloadavg()[0]
            before = sum((dg.counters(ns) for ns in bed.host_ns), Counter())
            drops0 = dg.class_drops(bed)
            t = time.time()
            if p in RUNTIME:
                flows = rp.replay_on_testbed_runtime(
                    fw, RUNTIME[p], args.name, work_dir=args.out / p, delta_ms=args.delta_ms,
                    **RUNTIME_OPTIONS.get(p, {}),
                )  # fmt: skip
            else:
                flows = rp.replay_on_testbed(fw, args.name, policy=specs[p], work_dir=args.out / p, nice=args.nice)
            wall[p] = time.time() - t
            grew = sum((dg.counters(ns) for ns in bed.host_ns), Counter())
            drops1 = dg.class_drops(bed)
            co, _ = rp.tables(fw, flows)
            measured[p] = co.to_pandas()
            lag = (flows["start_s"] - flows["arrival_s"]).to_numpy()
            why[p] = {
                "load": max(load, os.getloadavg()[0]),
                "lag_mean": float(lag.mean()),
                "lag_p99": float(np.percentile(lag, 99)),
                # how long a connection opened for a flow waited for its receiver to accept it
                **accept_wait(flows),
                "late": float((lag > 0.1).mean()),
                "retrans": grew["TcpRetransSegs"] - before["TcpRetransSegs"],
                "rtos": grew["TcpExtTCPTimeouts"] - before["TcpExtTCPTimeouts"],
                "syn": grew["TcpExtTCPSynRetrans"] - before["TcpExtTCPSynRetrans"],
                "host_drops": sum(drops1["host"].values()) - sum(drops0["host"].values()),
                # flows sent again after their connection failed (their CCT includes the loss)
                "resent": int((flows["attempts"] > 1).sum()),
                "switch_drops": sum(drops1["switch"].values()) - sum(drops0["switch"].values()),
            }
            # The coflows with every flow started within 10 ms of its time: what the testbed measures
            # where the senders kept time.
            on_time = flows.assign(late=lag > 0.01, cid=fw.columns()["coflow_id"][flows["flow"].to_numpy()])
            punctual = set(on_time.groupby("cid")["late"].any().loc[lambda x: ~x].index)
            measured[p]["punctual"] = measured[p]["coflow_id"].isin(punctual)
            print(f"{p}: mean CCT {measured[p]['cct_s'].mean():.4f} s ({wall[p]:.0f} s) {why[p]}", flush=True)
            if p in specs and rp.negotiates(specs[p]):
                n = rp.negotiation_summary(args.out / p, fw.n_hosts)
                print(f"{p}: negotiation {n}", flush=True)
                i = policies.index(p)
                sim_specs[i] = negotiated(sim_specs[i], n, rp.seconds(rp.policy_keys(specs[p])["delta"]))
    finally:
        tb.down(args.name)
    rows, sim_s = compare(fw, topology, policies, sim_specs, measured, wall, why, args.out)
    draw({p: args.out / f"{p}-coflows.csv" for p in policies}, PAGES[args.workload][1])
    saved = {
        "workload": args.workload,
        "command": " ".join(sys.argv[1:] if argv is None else argv),
        "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        "source": fw.source,
        "n_coflows": fw.n_coflows,
        "n_flows": fw.n_flows,
        "local_flows_dropped": fitted.local_flows_dropped,
        "topology": topology,
        "buffer": args.buffer,
        "rto_max_ms": bed.rto_max_ms,
        "rows": rows,
        "why": why,
        "sim_s": sim_s,
    }
    (args.out / "page.json").write_text(json.dumps(saved, indent=1, default=float) + "\n")
    write_page(saved)
    return 0


def topology_of(args: argparse.Namespace) -> str:
    """The testbed's topology, which the simulator is given too."""
    return f"bigswitch:hosts={args.hosts},rate={args.rate}"


def workload_of(args: argparse.Namespace) -> tuple[rp.Fitted, dict[str, Any]]:
    """The workload the command line names, fitted to the testbed, and D-CAS's parameters for the D-CAS mix
    (``{}`` for FB2010). ValueError if the generator refuses the mix."""
    size_scale = args.size_scale if args.size_scale is not None else SCALES[args.workload][0]
    time_scale = args.time_scale
    if time_scale is None:
        time_scale = size_scale if args.workload == "dcas" else SCALES[args.workload][1]
    if args.workload == "dcas":
        return dcas_workload(
            topology_of(args), args.name, args.coflows, args.load, args.seed, size_scale, time_scale, args.max_coflows
        )
    return rp.fit(coflowkit.load_trace(TRACE), args.hosts, size_scale, time_scale, args.max_coflows), {}


def compare(
    fw: Any,
    topology: str,
    policies: list[str],
    sim_specs: list[str],
    measured: dict[str, pd.DataFrame],
    wall: dict[str, float],
    why: dict[str, dict[str, Any]],
    out: Path,
) -> tuple[list[tuple[Any, ...]], float]:
    """Simulates ``sim_specs`` (one per policy) on ``fw`` and sets each policy's simulated CCTs beside its
    measured ones (``measured[p]``: coflow_id, cct_s, punctual): writes OUT/P-coflows.csv, adds the simulated
    side of ``why[p]``, and returns the page's rows and how long the simulation took."""
    t = time.time()
    # One run per distinct scheduler (`plain` and `fair-rt` both stand for `fair`).
    sim = coflowkit.simulate(fw, list(dict.fromkeys(sim_specs)), topology=topology)
    sim_s = time.time() - t
    rows = []
    # The coflows at or above the 80th percentile of total bytes (FIFO-LM's default heavy threshold) carry
    # nearly all bytes: each side's mean CCT split into what the small and the large coflows add to it.
    c = fw.columns()
    totals = pd.Series(c["bytes"]).groupby(c["coflow_id"]).sum()
    large = set(totals.index[totals >= int(rp.policy_keys(rp.policy_spec("fifo-lm", fw))["threshold"])])
    for p, s in zip(policies, sim_specs, strict=True):
        sc = sim.coflows(s)[["coflow_id", "cct_s"]]
        m = measured[p][["coflow_id", "cct_s", "punctual"]].merge(sc, on="coflow_id", suffixes=("_testbed", "_sim"))
        m.to_csv(out / f"{p}-coflows.csv", index=False)
        tb_mean, sim_mean = m["cct_s_testbed"].mean(), m["cct_s_sim"].mean()
        tb_p95, sim_p95 = np.percentile(m["cct_s_testbed"], 95), np.percentile(m["cct_s_sim"], 95)
        pm = m[m["punctual"]]
        why[p].update(
            punctual=len(pm) / len(m), punctual_tb=pm["cct_s_testbed"].mean(), punctual_sim=pm["cct_s_sim"].mean()
        )
        big = m["coflow_id"].isin(large)
        why[p].update(
            n_large=int(big.sum()),
            small_tb=m.loc[~big, "cct_s_testbed"].sum() / len(m),
            small_sim=m.loc[~big, "cct_s_sim"].sum() / len(m),
            large_tb=m.loc[big, "cct_s_testbed"].sum() / len(m),
            large_sim=m.loc[big, "cct_s_sim"].sum() / len(m),
        )
        rows.append((p, s, tb_mean, sim_mean, tb_p95, sim_p95, wall[p]))
    return rows, sim_s


def resimulate(out: Path) -> None:
    """Simulates the run saved in ``out`` again with today's code: its workload made again from its command
    line, each policy's simulated spec as the run had it (D-CAS's with the negotiation the replay measured),
    the testbed's per-coflow CCTs and counters as measured. Rewrites OUT/page.json (marked ``resimulated``)
    and OUT/P-coflows.csv; the run's own page.json is kept as OUT/page-as-run.json. Refuses a run whose
    command makes another workload than the one it replayed."""
    f = out / "page.json"
    if not f.is_file():
        raise SystemExit(f"--resimulate {out}: no page.json there (not the OUT of a sim_vs_testbed run)")
    saved = {"workload": "fb2010", **json.loads(f.read_text())}
    try:
        args = parser().parse_args(shlex.split(saved["command"]))
    except SystemExit:
        raise SystemExit(f"--resimulate {out}: its command {saved['command']!r} does not parse today") from None
    if args.page_from is not None:
        raise SystemExit(f"--resimulate {out}: its page.json was written by --page-from, not by a run")
    fitted, _ = workload_of(args)
    fw = fitted.workload
    for key, now in (("source", fw.source), ("n_coflows", fw.n_coflows), ("n_flows", fw.n_flows)):
        if saved.get(key) != now:
            raise SystemExit(f"--resimulate {out}: its command makes a workload whose {key} is {now!r}, not the run's {saved.get(key)!r}")
    if saved.get("topology") != topology_of(args):
        raise SystemExit(f"--resimulate {out}: its topology {saved.get('topology')!r} is not its command's")
    policies = [r[0] for r in saved["rows"]]
    sim_specs = [r[1] for r in saved["rows"]]
    wall = {r[0]: r[6] for r in saved["rows"]}
    measured = {}
    for p in policies:
        csv = out / f"{p}-coflows.csv"
        if not csv.is_file():
            raise SystemExit(f"--resimulate {out}: no {csv.name} there, the testbed's CCTs of {p}")
        m = pd.read_csv(csv)
        measured[p] = m[["coflow_id", "cct_s_testbed", "punctual"]].rename(columns={"cct_s_testbed": "cct_s"})
    first = out / "page-as-run.json"
    if not first.exists():
        first.write_text(f.read_text())
    why = saved["why"]
    rows, sim_s = compare(fw, saved["topology"], policies, sim_specs, measured, wall, why, out)
    saved.update(rows=rows, why=why, sim_s=sim_s, resimulated=time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()))
    f.write_text(json.dumps(saved, indent=1, default=float) + "\n")
    print(f"{out}: simulated again ({sim_s:.1f} s)")


def accept_wait(flows: pd.DataFrame) -> dict[str, float | None]:
    """The p99 and the longest of how long a connection opened for a flow
    waited between its handshake and its receiver's accept (None where the
    replay's records do not say)."""
    wait = flows["accept_wait_s"].dropna().to_numpy() if "accept_wait_s" in flows else np.array([])
    if len(wait) == 0:
        return {"accept_p99": None, "accept_max": None}
    return {"accept_p99": float(np.percentile(wait, 99)), "accept_max": float(wait.max())}


def dcas_workload(
    topology: str,
    name: str,
    coflows: int,
    load: float,
    seed: int,
    size_scale: float,
    time_scale: float,
    max_coflows: int | None = None,
) -> tuple[rp.Fitted, dict[str, Any]]:
    """D-CAS V-A's mix for the testbed of ``topology``, fitted to its hosts at the scales (the first
    ``max_coflows`` if given: ``replay.fit``), and the
    replay's D-CAS parameters for it (``replay.policy_spec("dcas", w, **params)``): the paper's
    thresholdVolume at the size scale and its delta, T and expiry at the time scale (the mix is generated
    for the testbed's ports, so against the paper's 1 Gbit/s a flow takes 1 Gbit/s / rate times longer
    before the scale), and queues 4-7 cut at the quartiles of the subcoflows above the threshold (the
    default, 4, 16 and 64 times the threshold, would put most of this mix's in queue 7). On FB2010, where
    1 MB scaled is tens of bytes, the report keeps the replay's defaults instead. ValueError if the
    generator refuses the mix."""
    planned = tb.plan(topology, name)
    # The load refers to a host's port: the slowest host port of the testbed's topology.
    rate = min(pt.capacity_bps for pt in planned.ports if pt.ns in planned.host_ns)
    w = coflowkit.generate(
        "coflow-benchmark", preset="dcas", seed=seed, load=load, n_hosts=len(planned.host_ns), n_coflows=coflows,
        capacity_bps=rate,
    )  # fmt: skip
    fitted = rp.fit(w, len(planned.host_ns), size_scale, time_scale, max_coflows)
    heavy = round(DCAS_THRESHOLD * size_scale)
    sub = rp.subcoflow_sizes(fitted.workload)
    bands = [int(x) for x in np.percentile(sub[sub >= heavy], [25, 50, 75])]
    return fitted, {"heavy": heavy, "time_scale": time_scale * DCAS_RATE / rate, "bands": bands}


def negotiated(spec: str, n: dict[str, Any], delta_s: float) -> str:
    """D-CAS's simulated counterpart of a replay that negotiated, given the negotiation the replay
    measured (:func:`coflowkit.testbed.replay.negotiation_summary`): each message takes half the mean time a
    round took from its announcement to its decision, as a simulated round is decided two message
    delays after it is announced (the simulator needs a round to end before the next, so at most just
    under half of delta). That time, not a reply's round trip, is how long a subcoflow keeps its old
    priority: a round waits for the slowest of its receivers, or the wait when a reply is missing
    (replays before 2026-11-24 07:00 UTC did not record it: there, half the replies' mean round trip).
    Each message is lost with the probability that makes a reply miss its round as often as the
    replay's did (a reply is missing when the announcement or the reply is lost: 1 - (1 - loss)^2)."""
    if not n["announcements"] or not np.isfinite(n["rtt_mean_s"]):
        return spec
    took = n["round_mean_s"] if np.isfinite(n.get("round_mean_s", float("nan"))) else n["rtt_mean_s"]
    delay_us = min(took / 2, delta_s / 2 * 0.99) * 1e6
    missing = n["replies_missing"] / n["announcements"]
    loss = 1 - math.sqrt(1 - min(missing, 1.0))
    return f"{spec};msg_delay={delay_us:.0f}us;loss={loss:.4f}"


if __name__ == "__main__":
    sys.exit(main())
