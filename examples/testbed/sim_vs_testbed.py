"""Simulation against reality: one scaled workload replayed on the emulated
testbed under each sender policy, and simulated on the testbed's topology
under the scheduler each policy stands for; writes
``docs/testbed-vs-simulation.md`` and its figures (needs root)::

    sudo .venv/bin/python examples/testbed/sim_vs_testbed.py [--hosts 16] [--rate 100Mbps]
        [--size-scale 0.0002] [--time-scale 0.02] [--max-coflows K] [--policies plain,pias,fifo-lm]

The workload is FB2010 (../shared/data) fitted to the testbed
(``coflowkit.replay.fit``). The testbed is brought up under its own name and
always taken down. Each policy's per-coflow CCTs are compared with the
simulated ones coflow by coflow; the page states the gap of the average CCT
per scheduler and whether the ranking of schedulers agrees.
"""

from __future__ import annotations

import argparse
import math
import os
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd
from matplotlib.figure import Figure

import coflowkit
from coflowkit import replay as rp
from coflowkit import testbed as tb

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
TRACE = ROOT.parent / "shared" / "data" / "FB2010-1Hr-150-0.txt"
DOC = ROOT / "docs" / "testbed-vs-simulation.md"
FIGURES = ROOT / "docs" / "testbed"
#: The simulated scheduler each sender policy stands for.
SIMULATED = {"plain": "fair", "pias": "pias", "fifo-lm": "fifo-lm"}
#: A gap to explain: testbed and simulated average CCT differ by more than this.
GAP = 0.25


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--hosts", type=int, default=16)
    ap.add_argument("--rate", default="100Mbps")
    ap.add_argument("--size-scale", type=float, default=0.0002)
    ap.add_argument("--time-scale", type=float, default=0.02)
    ap.add_argument("--max-coflows", type=int, default=None)
    ap.add_argument("--policies", default="plain,pias,fifo-lm")
    ap.add_argument("--name", default="svt")
    ap.add_argument("--out", type=Path, default=ROOT / "results" / "testbed-vs-simulation")
    args = ap.parse_args(argv)
    policies = args.policies.split(",")
    unknown = [p for p in policies if p not in SIMULATED]
    if unknown:
        ap.error(f"--policies: unknown {', '.join(unknown)} (known: {', '.join(SIMULATED)})")
    missing = [p for p in policies if SIMULATED[p] not in dict(coflowkit.schedulers())]
    if missing:
        ap.error(f"--policies: the simulator has no {', '.join(SIMULATED[p] for p in missing)} to compare with")

    topology = f"bigswitch:hosts={args.hosts},rate={args.rate}"
    w = coflowkit.load_trace(TRACE)
    fitted = rp.fit(w, args.hosts, args.size_scale, args.time_scale, args.max_coflows)
    fw = fitted.workload
    print(f"{fw.source}: {fw.n_coflows} coflows, {fw.n_flows} flows", flush=True)
    args.out.mkdir(parents=True, exist_ok=True)
    specs = {p: rp.policy_spec(p, fw) for p in policies}
    sim_specs = []
    for p in policies:
        s = SIMULATED[p]
        if p == "pias":
            s = "pias:thresholds=" + "/".join(str(t) for t in specs[p]["thresholds"])
        elif p == "fifo-lm":
            s = f"fifo-lm:threshold={specs[p]['heavy']}"
        sim_specs.append(s)
    t = time.time()
    sim = coflowkit.simulate(fw, sim_specs, topology=topology)
    sim_s = time.time() - t
    measured: dict[str, pd.DataFrame] = {}
    wall: dict[str, float] = {}
    tb.down(args.name)
    tb.up(topology, args.name)
    try:
        for p in policies:
            t = time.time()
            flows = rp.replay_on_testbed(fw, args.name, policy=specs[p], work_dir=args.out / p)
            wall[p] = time.time() - t
            co, _ = rp.tables(fw, flows)
            measured[p] = co.to_pandas()
            print(f"{p}: mean CCT {measured[p]['cct_s'].mean():.4f} s ({wall[p]:.0f} s)", flush=True)
    finally:
        tb.down(args.name)
    rows = []
    FIGURES.mkdir(parents=True, exist_ok=True)
    fig = Figure(figsize=(3.3 * len(policies), 3.2))
    axes = fig.subplots(1, len(policies), squeeze=False)[0]
    for ax, p, s in zip(axes, policies, sim_specs, strict=True):
        sc = sim.coflows(s)[["coflow_id", "cct_s"]]
        m = measured[p][["coflow_id", "cct_s"]].merge(sc, on="coflow_id", suffixes=("_testbed", "_sim"))
        tb_mean, sim_mean = m["cct_s_testbed"].mean(), m["cct_s_sim"].mean()
        tb_p95, sim_p95 = np.percentile(m["cct_s_testbed"], 95), np.percentile(m["cct_s_sim"], 95)
        rows.append((p, s, tb_mean, sim_mean, tb_p95, sim_p95, wall[p]))
        ax.loglog(m["cct_s_sim"], m["cct_s_testbed"], ".", ms=3, alpha=0.5)
        lo = max(1e-5, min(m["cct_s_sim"].min(), m["cct_s_testbed"].min()))
        hi = max(m["cct_s_sim"].max(), m["cct_s_testbed"].max())
        ax.plot([lo, hi], [lo, hi], "k--", lw=0.8)
        ax.set_title(f"{p} (simulated: {SIMULATED[p]})", fontsize=9)
        ax.set_xlabel("simulated CCT (s)")
        ax.set_ylabel("testbed CCT (s)")
    fig.tight_layout()
    fig.savefig(FIGURES / "cct-scatter.png", dpi=150)
    write_page(args, topology, fitted, rows, sim_s)
    return 0


def write_page(args: argparse.Namespace, topology: str, fitted: rp.Fitted, rows: list[tuple], sim_s: float) -> None:
    base = {r[0]: r for r in rows}.get("plain")
    lines = [
        "# Simulation against the emulated testbed",
        "",
        "Generated by `sudo .venv/bin/python examples/testbed/sim_vs_testbed.py "
        + " ".join(f"{a}" for a in sys.argv[1:])
        + f"` on {time.strftime('%Y-%m-%d')} (this machine: {os.cpu_count()} cores; "
        "other jobs running change the testbed's numbers, not the simulator's).",
        "",
        f"Workload: {fitted.workload.source}: {fitted.workload.n_coflows} coflows, {fitted.workload.n_flows} flows "
        f"({fitted.local_flows_dropped} flows folded onto their own host dropped). Testbed and simulator: "
        f"`{topology}` (see docs/testbed.md). Simulating all schedulers took {sim_s:.1f} s.",
        "",
        "| testbed policy | simulated | testbed mean CCT | simulated mean | gap | testbed p95 | simulated p95 "
        "| testbed: improvement over plain (mean / p95) | simulated: over fair (mean / p95) | replay wall |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for p, s, tm, sm, tp, sp, wall in rows:
        gap = tm / sm - 1
        imp = sim_imp = "-"
        if base is not None:
            imp = f"{base[2] / tm:.2f}x / {base[4] / tp:.2f}x"
            sim_imp = f"{base[3] / sm:.2f}x / {base[5] / sp:.2f}x"
        lines.append(
            f"| {p} | `{s}` | {tm:.4f} s | {sm:.4f} s | {gap:+.0%} | {tp:.4f} s | {sp:.4f} s | {imp} | {sim_imp} "
            f"| {wall:.0f} s |"
        )
    tb_rank = [r[0] for r in sorted(rows, key=lambda r: r[2])]
    sim_rank = [r[0] for r in sorted(rows, key=lambda r: r[3])]
    agree = "agrees" if tb_rank == sim_rank else "does not agree"
    lines += [
        "",
        f"Ranking by mean CCT: testbed {' < '.join(tb_rank)}; simulated {' < '.join(sim_rank)}: it {agree}.",
        "",
        "![testbed against simulated CCT per coflow](testbed/cct-scatter.png)",
        "",
        "What the fluid model leaves out, and so the first suspects for any gap: TCP's slow start and",
        "loss recovery, its 95.6% goodput, per-packet queueing in shallow buffers, and the senders'",
        "scheduling on a shared 2-core machine. Gaps above 25% are not explained yet: finding their",
        "causes is open work (issue 11).",
    ]
    big = [r for r in rows if math.isfinite(r[2] / r[3]) and abs(r[2] / r[3] - 1) > GAP]
    if big:
        lines.append(f"Schedulers with a gap above {GAP:.0%}: {', '.join(r[0] for r in big)}.")
    DOC.write_text("\n".join(lines) + "\n")
    print(f"wrote {DOC}")


if __name__ == "__main__":
    sys.exit(main())
