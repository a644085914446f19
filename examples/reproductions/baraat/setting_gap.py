"""Baraat's Figs. 8-9 under the two settings the paper leaves open: who aggregates a single-stage
task, and how a task's bytes split over its 40 flows.

Section 5.2 says "the aggregator queries all other nodes in the rack, so each task comprises 40
flows" and gives task sizes (Fig. 2), not flow sizes. The page's runs take one choice of each
(any host may aggregate; every flow of a bing or analytics task has one size); this script runs
the other choices one at a time and together, on the packet section's workloads (``packet.py``:
table4.toml's tree and workloads, ``N_TASKS`` tasks, one seed), and prints Baraat's p95
reductions against pFabric (``srpt``), RCP (``fair``), Orchestra (``fifo``) and STF beside the
paper's, at flow level and (``--packet``) at packet level with ``packet.py``'s schemes::

    python examples/reproductions/baraat/setting_gap.py [--packet] [--sizes bing,analytics,uniform]

The generator's knobs (docs/workloads.md, ``baraat``): ``aggregators = rack`` (one aggregator per
rack, its first host) and ``flow_spread = s`` (a task's flow sizes uniform within +-s of its
per-flow size).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import packet as pk  # noqa: E402  (the packet section's workloads and schemes)

import coflowkit  # noqa: E402
from coflowkit import load_experiment  # noqa: E402

#: label -> the generator parameters it changes.
VARIANTS: dict[str, dict[str, Any]] = {
    "page (any host aggregates, one size per task)": {},
    "one aggregator per rack": {"aggregators": "rack"},
    "flow sizes +-50% in a task": {"flow_spread": 0.5},
    "both": {"aggregators": "rack", "flow_spread": 0.5},
}
#: Figs. 8-9's p95 reductions (the paper's Table 4): (other scheme, sizes) -> reduction.
PAPER = {
    ("srpt", "bing"): 0.70, ("srpt", "analytics"): 0.43, ("srpt", "uniform"): 0.66,
    ("fair", "bing"): 0.30, ("fair", "analytics"): 0.58, ("fair", "uniform"): 0.37,
    ("fifo", "bing"): 0.27, ("fifo", "analytics"): 0.93, ("fifo", "uniform"): 0.0,
    ("stf", "bing"): 0.84, ("stf", "analytics"): 0.37, ("stf", "uniform"): 0.01,
}
OTHERS = ("srpt", "fair", "fifo", "stf")
OURS = "baraat"


def workload(sizes: str, extra: dict[str, Any]) -> tuple[coflowkit.Workload, str]:
    exp = load_experiment(pk.HERE / "table4.toml")
    params = {**exp.workload["params"], "n_tasks": pk.N_TASKS, "sizes": sizes, "seed": pk.SEED, **extra}
    return coflowkit.generate(exp.workload["generator"], preset=exp.workload["preset"], **params), exp.topology


def p95_reductions(cct: dict[str, np.ndarray]) -> dict[str, float]:
    ours = np.quantile(cct[OURS], 0.95)
    return {o: 1.0 - ours / np.quantile(cct[o], 0.95) for o in OTHERS}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--packet", action="store_true", help="also at packet level (minutes per variant)")
    ap.add_argument("--sizes", default=",".join(pk.SIZES))
    a = ap.parse_args()
    labels = [OURS, *OTHERS]
    print("| sizes | setting | level | " + " | ".join(f"vs `{o}` (paper)" for o in OTHERS) + " |")
    print("|---|---|---|" + "---|" * len(OTHERS))
    for sizes in a.sizes.split(","):
        for name, extra in VARIANTS.items():
            w, topo = workload(sizes, extra)
            specs = {lab: pk.SCHEMES[lab] for lab in labels}
            flow = coflowkit.simulate(w, [f for f, _, _ in specs.values()], progress=False, topology=topo)
            levels = {"flow": {lab: flow.coflows(f).sort_values("coflow_id")["cct_s"].to_numpy()
                               for lab, (f, _, _) in specs.items()}}
            if a.packet:
                levels["packet"] = {lab: pk.run_packet(w, p, topo, opt)["cct"] for lab, (_, p, opt) in specs.items()}
            for level, cct in levels.items():
                red = p95_reductions(cct)
                cells = " | ".join(f"{100 * red[o]:.0f}% ({100 * PAPER[(o, sizes)]:.0f}%)" for o in OTHERS)
                print(f"| {sizes} | {name} | {level} | {cells} |", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
