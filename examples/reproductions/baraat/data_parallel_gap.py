"""Fig. 11's data-parallel batches: does the three-stage gain need every job's stage on one bottleneck?

Baraat's case for serializing multi-stage tasks (3.1, Fig. 4b) has each stage on its own bottleneck,
shared by every task: under fair sharing the tasks finish a stage together and move on together,
while FIFO pipelines them. Our generator draws every job's hosts at random (stage 0 from 8 random
hosts to 5, each later stage from the previous receivers to 5 new ones, on the 320-host tree), so a
stage's links are shared by a few jobs and fair sharing lets jobs drift apart between stages. This
runs batches of the generator's data-parallel jobs (data-parallel.toml: all at time 0, uniform flow
sizes, seeds 2014 and 2015) with their hosts as drawn (``random``) and with every job's hosts moved
onto one set per role (``shared``: stage-0 senders onto 8 hosts of rack 1, stage s's receivers
onto 5 hosts of rack s + 2, so that all jobs meet at every stage, Fig. 4b's setting), and prints
``fifo-lm:threshold=p80``'s and ``fifo``'s reduction of the mean and the worst job completion time
against ``fair`` (``1 - ours / fair``, averaged over the seeds)::

    python examples/reproductions/baraat/data_parallel_gap.py --jobs 40

(Seeds 2014 and 2015 as given, not the tomls' derived seeds: the ``random`` numbers differ from
the page's table by a few percent.)
"""

from __future__ import annotations

import argparse

import numpy as np
import pyarrow as pa

import coflowkit
from coflowkit.sim.trace import workload_from_table, workload_to_table

TOPOLOGY = "tree:pods=2,racks=4,hosts=40,tor_oversub=2"
SEEDS = (2014, 2015)
SCHEDULERS = ["fair", "fifo-lm:threshold=p80", "fifo"]


def shared(w: coflowkit.Workload) -> coflowkit.Workload:
    """Every job's hosts moved onto one host per role (stage-0 sender i, stage-s receiver j)."""
    table = workload_to_table(w)
    cols = w.columns()
    job, group = np.asarray(cols["coflow_id"]), np.asarray(cols["group"])
    src, dst = np.asarray(cols["src"]).copy(), np.asarray(cols["dst"]).copy()
    for c in np.unique(job).tolist():
        rows = np.flatnonzero(job == c)
        where: dict[int, int] = {}
        for i, h in enumerate(sorted(set(src[rows[group[rows] == 0]].tolist()))):
            where.setdefault(h, 40 + i)
        for s in np.unique(group[rows]).tolist():
            for j, h in enumerate(sorted(set(dst[rows[group[rows] == s]].tolist()))):
                where.setdefault(h, 40 * (s + 2) + j)
        src[rows] = [where[h] for h in src[rows].tolist()]
        dst[rows] = [where[h] for h in dst[rows].tolist()]
    table = table.set_column(table.column_names.index("src"), "src", pa.array(src, pa.uint32()))
    table = table.set_column(table.column_names.index("dst"), "dst", pa.array(dst, pa.uint32()))
    return workload_from_table(table, source="shared hosts", n_hosts=w.n_hosts)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--jobs", type=int, default=40, help="jobs per batch (default 40; the paper's largest 400)")
    ap.add_argument("--shapes", nargs="+", choices=["random", "shared"], default=["random", "shared"],
                    help="hosts as drawn, or every job's on one set per role (default both)")  # fmt: skip
    args = ap.parse_args()
    for shape in args.shapes:
        for stages in (1, 3):
            red: dict[str, list[tuple[float, float]]] = {s: [] for s in SCHEDULERS[1:]}
            for seed in SEEDS:
                w = coflowkit.generate("baraat", seed=seed, workflow="data-parallel", n_tasks=args.jobs,
                                       pods=2, racks_per_pod=4, hosts_per_rack=40, dp_stages=stages)  # fmt: skip
                if shape == "shared":
                    w = shared(w)
                r = coflowkit.simulate(w, SCHEDULERS, topology=TOPOLOGY, progress=False)
                fair = r.coflows("fair")["cct_s"].to_numpy()
                for s in SCHEDULERS[1:]:
                    ours = r.coflows(s)["cct_s"].to_numpy()
                    red[s].append((1 - ours.mean() / fair.mean(), 1 - ours.max() / fair.max()))
            for s, rows in red.items():
                m = np.mean(rows, axis=0)
                print(f"{shape} hosts, {args.jobs} jobs, {stages} stage(s): {s} against fair: "
                      f"mean {m[0]:.0%}, worst {m[1]:.0%}", flush=True)  # fmt: skip
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
