"""Where a policy's large coflows lose time on the testbed against the flow-level model: the flows of
a ``sim_vs_testbed.py`` run (its OUT directory), each with its FCT on the testbed and simulated, and its
connection's TCP counters over the flow (the replay workers' ``tcp``: retransmissions, timeouts, the time
spent recovering from them; Linux's ``struct tcp_info``)::

    .venv/bin/python examples/testbed/large_flows.py --out OUT [--policies pias,dcas,...]

For each policy, over the flows of the large coflows (total bytes at or above the 80th percentile, as the
page's split table), grouped by the class ``pias`` ends a flow in (its size against PIAS's thresholds):
flows, their FCT testbed / simulated, timeouts per flow, share of flows with one, the time in timeout
recovery; then over each large coflow's last flow on the testbed (the one its CCT waits for): the same,
and how much of the coflows' testbed-over-simulated CCT their recoveries account for. Runs the simulator
once for the policies' specs (the run's page.json).
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np
import pandas as pd

import coflowkit
from coflowkit.testbed import replay as rp

HERE = Path(__file__).resolve().parent
TRACE = HERE.parents[1].parent / "shared" / "data" / "FB2010-1Hr-150-0.txt"


def testbed_flows(work: Path, n_hosts: int) -> pd.DataFrame:
    """One row per flow of a replay's work directory: flow, start and finish (s after t0), and its TCP
    counters (NaN where the worker did not record them: a replay through the runtime)."""
    plan = json.loads((work / "plan.json").read_text())
    rows: dict[int, dict[str, float]] = {}
    fields: list[str] = []
    for h in range(n_hosts):
        r = json.loads((work / f"host{h}.json").read_text())
        t0 = r["t0"]
        fields = r.get("tcp_fields", fields)
        for fid, s in r["sent"].items():
            rows.setdefault(int(fid), {})["start_s"] = s[0] - t0
        for fid, g in r["received"].items():
            rows.setdefault(int(fid), {})["finish_s"] = g[0] - t0
        for fid, c in r.get("tcp", {}).items():
            rows.setdefault(int(fid), {}).update(dict(zip(fields, c, strict=True)))
    f = pd.DataFrame.from_dict(rows, orient="index").sort_index()
    f.index.name = "flow"
    arrival = pd.Series({fl["id"]: fl["start_s"] for fl in plan["flows"]})
    f["arrival_s"] = arrival.reindex(f.index)
    f["fct_s"] = f["finish_s"] - f["arrival_s"]
    return f.reset_index()


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", type=Path, required=True, help="a sim_vs_testbed.py run's OUT directory")
    ap.add_argument("--policies", default="plain,pias,karuna,fifo-lm,dcas,dcas-local")
    ap.add_argument("--csv", type=Path, default=None, help="write every large coflow's flow rows here")
    args = ap.parse_args(argv)
    saved = json.loads((args.out / "page.json").read_text())
    hosts = int(saved["topology"].split("hosts=")[1].split(",")[0])
    rate = saved["topology"].split("rate=")[1]
    size_scale = 5e-05 if rate == "25Mbps" else 0.0002
    fw = rp.fit(coflowkit.load_trace(TRACE), hosts, size_scale, 0.02).workload
    assert fw.n_flows == saved["n_flows"], "not this run's workload"
    c = fw.columns()
    wf = pd.DataFrame({"flow": np.arange(fw.n_flows), "coflow_id": c["coflow_id"], "bytes": c["bytes"]})
    totals = wf.groupby("coflow_id")["bytes"].sum()
    large = set(totals.index[totals >= int(rp.policy_keys(rp.policy_spec("fifo-lm", fw))["threshold"])])
    pias_thresholds = [int(x) for x in rp.policy_keys(rp.policy_spec("pias", fw))["thresholds"].split("/")]
    # the class pias ends a flow in: how many thresholds its size passes
    wf["pias_class"] = np.searchsorted(pias_thresholds, wf["bytes"].to_numpy(), side="left")
    specs = {row[0]: row[1] for row in saved["rows"]}
    policies = [p for p in args.policies.split(",") if p in specs]
    sim = coflowkit.simulate(fw, list(dict.fromkeys(specs[p] for p in policies)), topology=saved["topology"],
                             per_flow=True, progress=False)  # fmt: skip
    out = []
    for p in policies:
        sf = sim.flows(specs[p])
        assert len(sf) == fw.n_flows and (sf["bytes"].to_numpy() == c["bytes"]).all(), "flow order"
        f = testbed_flows(args.out / p, hosts).merge(wf, on="flow")
        f["sim_fct_s"] = sf["fct_s"].to_numpy()[f["flow"].to_numpy()]
        f["large"] = f["coflow_id"].isin(large)
        f["policy"] = p
        out.append(f)
    allf = pd.concat(out, ignore_index=True)
    if args.csv is not None:
        allf[allf["large"]].to_csv(args.csv, index=False)
    big = allf[allf["large"]]
    print("large coflows' flows by pias's final class (testbed):")
    g = big.groupby(["policy", "pias_class"], sort=False)
    t = pd.DataFrame({
        "flows": g.size(),
        "fct_tb": g["fct_s"].mean(),
        "fct_sim": g["sim_fct_s"].mean(),
        "rto_per_flow": g["total_rto"].mean(),
        "with_rto": g["total_rto"].apply(lambda x: (x > 0).mean()),
        "rto_time_s": g["total_rto_time_ms"].sum() / 1e3,
        "retrans_per_flow": g["total_retrans"].mean(),
    })  # fmt: skip
    print(t.round(4).to_string())
    print("\nper policy, the large coflows' flows and each large coflow's last flow on the testbed:")
    rows = []
    for p, f in big.groupby("policy", sort=False):
        last = f.loc[f.groupby("coflow_id")["finish_s"].idxmax()]
        co = f.groupby("coflow_id").agg(a=("arrival_s", "min"), fin=("finish_s", "max"))
        cct_tb = co["fin"] - co["a"]
        sim_co = f.assign(sf=f["arrival_s"] + f["sim_fct_s"]).groupby("coflow_id")["sf"].max() - co["a"]
        rows.append({
            "policy": p,
            "flows": len(f),
            "rtos": int(f["total_rto"].sum()),
            "with_rto": (f["total_rto"] > 0).mean(),
            "rto_time_s": f["total_rto_time_ms"].sum() / 1e3,
            "retrans": int(f["total_retrans"].sum()),
            "last_rtos": int(last["total_rto"].sum()),
            "last_with_rto": (last["total_rto"] > 0).mean(),
            "last_rto_time_s": last["total_rto_time_ms"].sum() / 1e3,
            "cct_tb_sum_s": cct_tb.sum(),
            "cct_sim_sum_s": sim_co.sum(),
            "excess_s": (cct_tb - sim_co).sum(),
        })  # fmt: skip
    print(pd.DataFrame(rows).round(4).to_string(index=False))
    print("\nper policy, the large coflows: testbed over simulated, of their CCT (their last flow's finish) and of")
    print("their flows' mean FCT (a coflow's mean flow), and the flows' FCT ratio testbed / simulated:")
    print(straggling(big).round(3).to_string(index=False))
    return 0


def straggling(flows: pd.DataFrame) -> pd.DataFrame:
    """Per policy of ``flows`` (columns policy, coflow_id, arrival_s, fct_s, sim_fct_s): how far the
    testbed's large coflows are above the simulated ones by their CCT, the finish of their last flow
    (``cct_gap``), and by the mean FCT of their flows (``flow_mean_gap``); and the median and 90th
    percentile of the flows' FCT testbed over simulated. A CCT gap well above the mean flow's is a
    coflow waiting for a few flows the testbed served much later than the fluid model."""
    rows = []
    for p, g in flows.groupby("policy", sort=False):
        g = g.assign(sim_finish=g["arrival_s"] + g["sim_fct_s"])
        co = g.groupby("coflow_id")
        a = co["arrival_s"].min()
        cct_tb, cct_sim = co["finish_s"].max() - a, co["sim_finish"].max() - a
        r = g["fct_s"] / g["sim_fct_s"]
        rows.append({
            "policy": p,
            "coflows": len(a),
            "cct_tb_s": cct_tb.mean(),
            "cct_sim_s": cct_sim.mean(),
            "cct_gap": cct_tb.sum() / cct_sim.sum() - 1,
            "flow_mean_gap": co["fct_s"].mean().sum() / co["sim_fct_s"].mean().sum() - 1,
            "fct_ratio_p50": r.median(),
            "fct_ratio_p90": r.quantile(0.9),
        })  # fmt: skip
    return pd.DataFrame(rows)


if __name__ == "__main__":
    raise SystemExit(main())
