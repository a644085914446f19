"""D-CAS's starvation rule on the testbed and in the flow-level model: FB2010 fitted as
docs/lab/testbed-vs-simulation.md fits it, replayed on the testbed under sender policies with keys added to
their specs, and each simulated with the same spec (needs root)::

    sudo .venv/bin/python examples/testbed/starvation_guard.py [--runs dcas-local:t=100s,pias,dcas-local]
        [--out /tmp/guard] [--packet]

Each run is ``POLICY[:KEYS]``: a replay policy (``pias``, ``dcas``, ``dcas-local``, ...) with ``KEYS`` put in
its spec (``t=100s``: no subcoflow ever starving, so Pseudocode 1 never lifts one to the top large class).
Prints per run the mean CCT, what the large coflows add to it (as the page's split table), on the testbed
and simulated, and the large coflows' flows' TCP timeouts (the workers' per-flow ``tcp`` counters). With
``--packet`` the same specs also at packet level, with the testbed's settings of the page's last
packet-level table.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import numpy as np
import pandas as pd

import coflowkit
from coflowkit import testbed as tb
from coflowkit.testbed import replay as rp

import large_flows as lf  # noqa: E402  (this folder)

TOPOLOGY = "bigswitch:hosts=16,rate=25Mbps"
#: The packet engine with the testbed's queues, hosts and resends (docs/lab/testbed-vs-simulation.md).
PACKET = (
    "transport=tcp,buffer=64KB,min_rto=200ms,initial_rto=1s,max_rto=1s,link_delay=20us,sack=on,"
    "buffer_per=queue,tsq=32KB,class_min=0.001,control_batch=on,host_rtx=skip,rto_undo=on"
)


def spec_of(run: str, fw: coflowkit.Workload) -> tuple[str, dict[str, object]]:
    """The replay policy of ``run`` (``POLICY[:KEYS]``) and its spec, with KEYS replacing or joining its keys."""
    name, _, extra = run.partition(":")
    policy = rp.policy_spec("dcas", fw, negotiate=name == "dcas") if name.startswith("dcas") else rp.policy_spec(name, fw)
    if extra:
        head, _, rest = policy["spec"].partition(":")
        keys = dict(kv.split("=", 1) for kv in rest.split(";") if "=" in kv)
        keys.update(dict(kv.split("=", 1) for kv in extra.split(";")))
        policy = {**policy, "spec": head + ":" + ";".join(f"{k}={v}" for k, v in keys.items())}
    return name, policy


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--runs", default="dcas-local:t=100s,pias,dcas-local")
    ap.add_argument("--out", type=Path, default=Path("/tmp/guard"))
    ap.add_argument("--name", default="sgd")
    ap.add_argument("--packet", action="store_true", help="also at packet level")
    ap.add_argument("--no-testbed", action="store_true", help="only the simulators")
    args = ap.parse_args(argv)
    fw = rp.fit(coflowkit.load_trace(lf.TRACE), 16, 5e-05, 0.02).workload
    c = fw.columns()
    totals = pd.Series(c["bytes"]).groupby(c["coflow_id"]).sum()
    large = set(totals.index[totals >= int(rp.policy_keys(rp.policy_spec("fifo-lm", fw))["threshold"])])
    runs = args.runs.split(",")
    policies = dict((r, spec_of(r, fw)) for r in runs)
    specs = list(dict.fromkeys(p["spec"] for _, p in policies.values()))
    sim = coflowkit.simulate(fw, specs, topology=TOPOLOGY, progress=False)
    result: dict[str, dict[str, float]] = {}

    def split(cid: np.ndarray, cct: np.ndarray) -> tuple[float, float]:
        big = np.isin(cid, list(large))
        return float(cct.mean()), float(cct[big].sum() / len(cct))

    for r, (_, p) in policies.items():
        co = sim.coflows(p["spec"])
        mean, big = split(co["coflow_id"].to_numpy(), co["cct_s"].to_numpy())
        result[r] = {"sim_mean": mean, "sim_large": big}
    if args.packet:
        for r, (_, p) in policies.items():
            t = time.time()
            pk = coflowkit.simulate(fw, p["spec"], topology=TOPOLOGY, engine="packet", packet=PACKET, progress=False)
            co = pk.coflows(p["spec"])
            mean, big = split(co["coflow_id"].to_numpy(), co["cct_s"].to_numpy())
            f = pk.flows(p["spec"])
            fl = f[f["coflow_id"].isin(large)]
            result[r].update(packet_mean=mean, packet_large=big, packet_large_timeouts=int(fl["timeouts"].sum()))
            print(f"packet {r}: {mean:.4f} s, large {big:.4f} s ({time.time() - t:.0f} s)", flush=True)
    if not args.no_testbed:
        tb.down(args.name)
        tb.up(TOPOLOGY, args.name)
        try:
            for r, (_, p) in policies.items():
                work = args.out / r.replace(":", "_").replace(";", "_").replace("=", "")
                t = time.time()
                flows = rp.replay_on_testbed(fw, args.name, policy=p, work_dir=work, nice=-10)
                co = rp.tables(fw, flows)[0].to_pandas()
                mean, big = split(co["coflow_id"].to_numpy(), co["cct_s"].to_numpy())
                f = lf.testbed_flows(work, fw.n_hosts)
                f["coflow_id"] = c["coflow_id"][f["flow"].to_numpy()]
                fl = f[f["coflow_id"].isin(large)]
                result[r].update(
                    testbed_mean=mean, testbed_large=big, large_rtos=int(fl["total_rto"].sum()),
                    large_rto_time_s=float(fl["total_rto_time_ms"].sum() / 1e3),
                    all_rtos=int(f["total_rto"].sum()), wall_s=time.time() - t,
                )  # fmt: skip
                print(f"testbed {r}: {json.dumps(result[r])}", flush=True)
        finally:
            tb.down(args.name)
    print(pd.DataFrame(result).T.round(4).to_string())
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "guard.json").write_text(json.dumps({"runs": runs, "specs": {r: p["spec"] for r, (_, p) in policies.items()}, "result": result}, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
