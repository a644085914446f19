"""Why D-CAS's negotiation gains less on the testbed than in the simulator
(docs/lab/testbed-vs-simulation-dcas.md, item 5). D-CAS's synthetic mix, made as
``sim_vs_testbed.py --workload dcas`` makes it, replayed on one testbed under
D-CAS without negotiation (``local``), with it (``dcas``), and negotiating while
keeping the sender's own priority (``keep``: what the messages cost alone), and
each variant simulated with the replay's parameters (``dcas`` with the delay
and losses its replay measured; ``keep`` decides as ``local``, its counterpart). Needs root::

    sudo .venv/bin/python examples/testbed/dcas_starving.py [--variants local,dcas,keep]
        [--hosts 16] [--rate 25Mbps] [--coflows 200] [--seed 1] [--out DIR]

Prints, per variant and D-CAS bin (longest flow under 10 MiB x the size scale:
short; at most 50 flows: narrow), what the bin's coflows add to the mean CCT on
the testbed and simulated, how often one of their subcoflows was decided as
large (each tick of delta, at or above the threshold) and how often of those as
starving (no byte acknowledged, in the simulator no byte served, for T: the
subcoflow goes to ``<1, 0>``, queue 4, ahead of every negotiated one); and per
variant the workers' CPU seconds and the negotiation's round trips and missing
replies. The simulator's counts come from its decision log
(crates/sim/examples/dcas_runs.rs, built with cargo here).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd

import coflowkit
from coflowkit.testbed import replay as rp
from coflowkit import testbed as tb
from coflowkit.experiments.analysis import coflow_bins

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
sys.path.insert(0, str(HERE))
import sim_vs_testbed as svt  # noqa: E402

VARIANTS = ("local", "dcas", "keep")


def bins_of(w: coflowkit.Workload, size_scale: float) -> pd.Series:
    """Each coflow id's D-CAS bin: short when its longest flow is under 10 MiB x the size scale, narrow
    with at most 50 flows (D-CAS V-A's bins)."""
    c = w.columns()
    g = pd.DataFrame({"cid": c["coflow_id"], "b": c["bytes"]}).groupby("cid")["b"].agg(["size", "max"])
    return pd.Series(coflow_bins(g["max"], g["size"], 10 * 2**20 * size_scale, 50), index=g.index)


def simulated_runs(binary: Path, workload_csv: Path, rate_bps: float, spec: str) -> dict[int, list[int]]:
    """The simulator's per-coflow [large, starving] decisions under D-CAS ``spec`` (dcas_runs)."""
    out = subprocess.run([str(binary), str(workload_csv), repr(rate_bps), spec], capture_output=True, text=True)
    if out.returncode != 0:
        raise SystemExit(f"dcas_runs {spec}: {out.stderr.strip()}")
    return {int(c): [int(a), int(b)] for c, a, b in (line.split() for line in out.stdout.splitlines()[1:])}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--variants", default=",".join(VARIANTS), help="in this order: local, dcas, keep")
    ap.add_argument("--hosts", type=int, default=16)
    ap.add_argument("--rate", default="25Mbps")
    ap.add_argument("--coflows", type=int, default=200)
    ap.add_argument("--load", type=float, default=1.0)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--size-scale", type=float, default=0.01, help="sizes and times alike (the load stays)")
    ap.add_argument("--name", default="dst")
    ap.add_argument("--out", type=Path, default=ROOT / "results" / "testbed-dcas-starving")
    args = ap.parse_args(argv)
    variants = args.variants.split(",")
    unknown = [v for v in variants if v not in VARIANTS]
    if unknown:
        ap.error(f"--variants: unknown {', '.join(unknown)} (known: {', '.join(VARIANTS)})")
    topology = f"bigswitch:hosts={args.hosts},rate={args.rate}"
    try:
        fitted, mix = svt.dcas_workload(
            topology, args.name, args.coflows, args.load, args.seed, args.size_scale, args.size_scale
        )
    except ValueError as e:
        ap.error(f"the mix: {e}")
    fw = fitted.workload
    rate = min(p.capacity_bps for p in tb.plan(topology, args.name).ports)
    args.out.mkdir(parents=True, exist_ok=True)
    csv = args.out / "workload.csv"
    coflowkit.write_trace(fw, csv)
    subprocess.run(["cargo", "build", "--release", "-q", "-p", "coflowkit-sim", "--example", "dcas_runs"],
                   cwd=ROOT, check=True)  # fmt: skip
    binary = ROOT / "target" / "release" / "examples" / "dcas_runs"
    bins = bins_of(fw, args.size_scale)
    print(f"{fw.source}: {fw.n_coflows} coflows, {fw.n_flows} flows; D-CAS {mix}", flush=True)
    rows = []
    tb.down(args.name)
    tb.up(topology, args.name)
    try:
        for v in variants:
            spec = rp.policy_spec("dcas", fw, negotiate=v != "local", **mix)
            if v == "keep":
                spec = rp.with_keys(spec, keep_own="yes")
            work = args.out / v
            flows = rp.replay_on_testbed(fw, args.name, policy=spec, work_dir=work)
            co = rp.tables(fw, flows)[0].to_pandas().set_index("coflow_id")["cct_s"]
            # keep decides as local does (the sender's own priority): its counterpart is local's.
            # The simulator runs the replay's own spec (its host keys ignored there).
            sim_spec = (rp.policy_spec("dcas", fw, negotiate=False, **mix) if v == "keep" else spec)["spec"]
            line = ""
            if rp.negotiates(spec):
                n = rp.negotiation_summary(work, fw.n_hosts)
                if v == "dcas":
                    sim_spec = svt.negotiated(sim_spec, n, rp.seconds(rp.policy_keys(spec)["delta"]))
                line = (
                    f"; replies {n['rtt_mean_s'] * 1e3:.1f} ms, {n['replies_missing'] / n['announcements']:.1%} "
                    f"missing, {n['datagrams']:,} datagrams for {n['announcements']:,} announcements"
                )
            cpu = sum(sum(json.loads((work / f"host{h}.json").read_text())["cpu_s"]) for h in range(fw.n_hosts))
            print(f"{v}: mean CCT {co.mean():.4f} s; workers {cpu:.0f} CPU-s{line}", flush=True)
            sim = coflowkit.simulate(fw, [sim_spec], topology=topology, progress=False).coflows(sim_spec)
            sim = sim.set_index("coflow_id")["cct_s"]
            for side, runs, cct in (
                ("testbed", rp.dcas_runs(work, fw), co),
                ("simulated", simulated_runs(binary, csv, rate, sim_spec), sim),
            ):
                for b in sorted(set(bins)):
                    ids = bins.index[bins == b]
                    large = sum(runs.get(int(c), [0, 0])[0] for c in ids)
                    starving = sum(runs.get(int(c), [0, 0])[1] for c in ids)
                    rows.append((v, side, b, len(ids), cct.reindex(ids).sum() / len(cct), large, starving))
    finally:
        tb.down(args.name)
    t = pd.DataFrame(rows, columns=["variant", "side", "bin", "coflows", "adds_to_mean_s", "large", "starving"])
    t["starving_share"] = t["starving"] / t["large"].clip(lower=1)
    t.to_csv(args.out / "bins.csv", index=False)
    with pd.option_context("display.width", 200, "display.precision", 3):
        print(t.to_string(index=False))
    return 0


if __name__ == "__main__":
    sys.exit(main())
