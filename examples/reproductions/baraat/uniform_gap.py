"""Table 4's uniform row: what makes our FIFO-LM median 40-46% under fair sharing's, the paper's 7%?

Runs the row's single-stage uniform tasks (table4.toml: 2,000 tasks of 40 workers on the 2 x 4 x 40
tree, 2:1 at the ToR, seeds 2014 and 2015) at flow level, at a given load and with the flow sizes
drawn per flow (``flow``, the workload's ``uniform``) or per task (``task``: every flow of a task one
size, uniform in [2 KB, 50 KB], as ``bing`` with no heavy task and a spread of 24/26), or the rows of
Bing-like and analytics tasks (``bing``, ``analytics``), and prints
``fifo-lm:threshold=p80``'s reductions against ``fair``, ``srpt``, ``stf`` and ``fifo`` (median /
p95 / p99; ``1 - ours / other`` per seed, averaged, as regenerate.py does) and how many tasks share
a task's aggregator downlink: the other tasks in service under ``fair`` (arrived, not finished) at
its aggregator when it arrives::

    python examples/reproductions/baraat/uniform_gap.py --load 0.3 --sizes flow
"""

from __future__ import annotations

import argparse
from typing import Any

import numpy as np

import coflowkit

TOPOLOGY = "tree:pods=2,racks=4,hosts=40,tor_oversub=2"
SEEDS = (2014, 2015)
OURS = "fifo-lm:threshold=p80"
OTHERS = ["fair", "srpt", "stf", "fifo"]
QUANTILES = (0.5, 0.95, 0.99)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--load", type=float, default=0.8, help="load of the most loaded link class (default 0.8)")
    ap.add_argument(
        "--sizes",
        choices=["flow", "task", "bing", "analytics"],
        default="flow",
        help="uniform sizes drawn per flow or per task, or the row of Bing-like or analytics tasks",
    )
    args = ap.parse_args()
    if args.sizes == "task":
        sizes: dict[str, Any] = dict(sizes="bing", bing_heavy_fraction=0.0, bing_light="26KB", bing_spread=24 / 26)
    else:
        sizes = dict(sizes="uniform" if args.sizes == "flow" else args.sizes)
    red: dict[str, list[list[float]]] = {o: [] for o in OTHERS}
    for seed in SEEDS:
        w = coflowkit.generate("baraat", seed=seed, load=args.load, workflow="single-stage", n_tasks=2000,
                               pods=2, racks_per_pod=4, hosts_per_rack=40, **sizes)  # fmt: skip
        r = coflowkit.simulate(w, [OURS, *OTHERS], topology=TOPOLOGY, progress=False)
        cct = {s: r.coflows(s)["cct_s"].to_numpy() for s in [OURS, *OTHERS]}
        for o in OTHERS:
            red[o].append([1 - np.quantile(cct[OURS], q) / np.quantile(cct[o], q) for q in QUANTILES])
        # Every flow of a single-stage task goes to its aggregator.
        cols = w.columns()
        aggregator = dict(zip(np.asarray(cols["coflow_id"]).tolist(), np.asarray(cols["dst"]).tolist()))
        fair = r.coflows("fair")
        arrival, finish = fair["arrival_s"].to_numpy(), fair["finish_s"].to_numpy()
        host = np.array([aggregator[c] for c in fair["coflow_id"].tolist()])
        sharing = np.array(
            [int(((arrival < a) & (finish > a) & (host == h)).sum()) for a, h in zip(arrival, host, strict=True)]
        )
        print(f"seed {seed}: median TCT (ms) " + ", ".join(f"{s} {np.median(x) * 1e3:.2f}" for s, x in cct.items())
              + f"; other tasks in service at its aggregator on arrival under fair: mean {sharing.mean():.2f}, "
              f"none {np.mean(sharing == 0):.0%}", flush=True)  # fmt: skip
    for o in OTHERS:
        m = np.mean(red[o], axis=0)
        print(f"sizes per {args.sizes}, load {args.load}: {OURS} against {o}: " + " / ".join(f"{x:.0%}" for x in m))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
