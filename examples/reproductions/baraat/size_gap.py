"""Table 4's Bing and analytics rows: why our size-based policies (``srpt``, ``stf``) beat FIFO-LM at the
tail, while the paper's Baraat cuts pFabric's p95/p99 by 70-76% on Bing and 43-61% on analytics and
STF's by 84-97% on Bing.

Runs the rows' single-stage tasks (table4.toml's: 2,000 tasks of 40 workers on the 2 x 4 x 40 tree,
2:1 at the ToR; seeds 2014 and 2015 as given, not the toml's derived seeds) at flow level under
``fifo-lm:threshold=p80`` against ``srpt`` (pFabric's ideal: per-flow shortest remaining first),
``stf`` (smallest task first on the bytes a task has left), ``lcf`` (smallest task first on its
whole size, known up front: the paper's STF, "the whole task size information upfront") and
``fair``, and prints FIFO-LM's reductions against each (median / p95 / p99; ``1 - ours / other`` per
seed, averaged, as regenerate.py does). One thing is changed per run:

- ``--loads``: the generator's load (the most loaded link class's; at Table 4's 0.8, the ToR
  downlinks). Above 1 the backlog grows for the whole run, so the tail grows with ``--tasks``.
- ``--spreads``: sizes drawn per flow inside a task. Every flow of a generated Bing or analytics
  task has one size, so a task's flows are as short as the task is small and per-flow SRPT orders
  whole tasks, smallest first, as STF does. A spread ``s`` multiplies each flow's size by a factor
  uniform in [1 - s, 1 + s], then scales the task's flows so that the task keeps its bytes (its
  size, STF's and FIFO-LM's order and the load are unchanged; only what pFabric sees moves).

For each workload it also prints how often flow sizes tie (within coflowkit's ``BYTES_TIE``, 2
bytes: ``srpt`` breaks such ties by flow index, i.e. arrival order), between flows of one task and of
different tasks, what share of the bytes the 80% smallest tasks (those under FIFO-LM's threshold)
bring, the load of each aggregator's downlink (every flow of a single-stage task ends there; mean and
largest over the aggregators), and for each run the p95 and p99 completion times in units of an
isolated heavy task's (the p80-plus tasks' mean size at 1 Gbit/s) and the share of the tasks at or
above p95 that are above the threshold::

    python examples/reproductions/baraat/size_gap.py --sizes bing analytics
    python examples/reproductions/baraat/size_gap.py --sizes bing --loads 0.8 0.9 0.95 1.0 1.2
    python examples/reproductions/baraat/size_gap.py --sizes bing analytics --spreads 0 0.5 0.9
"""

from __future__ import annotations

import argparse
import math

import numpy as np
import pyarrow as pa

import coflowkit
from coflowkit.sim.trace import workload_from_table, workload_to_table

TOPOLOGY = "tree:pods=2,racks=4,hosts=40,tor_oversub=2"
OURS = "fifo-lm:threshold=p80"
OTHERS = ["srpt", "stf", "lcf", "fair"]
QUANTILES = (0.5, 0.95, 0.99)
#: coflowkit_model::stats::BYTES_TIE: byte counts this close order as equal.
BYTES_TIE = 2
HOST_BPS = 1e9


def p80(sizes: np.ndarray) -> int:
    """The 80th percentile by nearest rank, as crates/model/src/stats.rs takes it."""
    v = np.sort(sizes)
    return int(v[max(math.ceil(0.8 * len(v)), 1) - 1])


def label(spec: str) -> str:
    """A scheduler's short name: ``fifo-lm`` for ours, the spec otherwise."""
    return "fifo-lm" if spec == OURS else spec


def spread_within_tasks(w: coflowkit.Workload, spread: float, seed: int) -> coflowkit.Workload:
    """The workload with each flow's size times a factor in [1 - spread, 1 + spread], each task's
    total kept (to the byte, the rounding's remainder on its largest flow)."""
    table = workload_to_table(w)
    cols = w.columns()
    task = np.asarray(cols["coflow_id"])
    size = np.asarray(cols["bytes"]).astype(np.float64)
    rng = np.random.default_rng(seed)
    factor = rng.uniform(1 - spread, 1 + spread, len(size))
    _, inverse = np.unique(task, return_inverse=True)
    total = np.bincount(inverse, weights=size)
    scaled = np.bincount(inverse, weights=size * factor)
    new = np.maximum(np.floor(size * factor * (total / scaled)[inverse]), 1).astype(np.int64)
    remainder = (total - np.bincount(inverse, weights=new)).round().astype(np.int64)
    order = np.lexsort((-new, inverse))
    first = order[np.r_[0, np.flatnonzero(np.diff(inverse[order])) + 1]]
    new[first] += remainder[inverse[first]]
    i = table.column_names.index("bytes")
    table = table.set_column(i, "bytes", pa.array(new.astype(np.uint64), pa.uint64()))
    return workload_from_table(table, n_hosts=w.n_hosts)


def describe(w: coflowkit.Workload) -> str:
    """Ties, the small tasks' share of the bytes and the aggregators' downlink loads."""
    cols = w.columns()
    task = np.asarray(cols["coflow_id"])
    size = np.asarray(cols["bytes"]).astype(np.int64)
    dst = np.asarray(cols["dst"])
    arrival = np.asarray(cols["arrival_ns"])
    order = np.lexsort((size, task))
    same_task = np.diff(task[order]) == 0
    close = np.diff(size[order]) <= BYTES_TIE
    tied = np.zeros(len(size), bool)
    tied[order[1:][same_task & close]] = True
    tied[order[:-1][same_task & close]] = True
    # Across tasks: a flow ties another task's if a flow of another task is within BYTES_TIE.
    by_size = np.argsort(size, kind="stable")
    s, t = size[by_size], task[by_size]
    across = np.zeros(len(size), bool)
    for k in range(1, 64):  # neighbours up to 64 places apart in size order
        ok = (s[k:] - s[:-k] <= BYTES_TIE) & (t[k:] != t[:-k])
        across[by_size[k:][ok]] = True
        across[by_size[:-k][ok]] = True
        if not (s[k:] - s[:-k] <= BYTES_TIE).any():
            break
    totals = np.bincount(np.unique(task, return_inverse=True)[1], weights=size)
    threshold = p80(totals.astype(np.int64))
    small = totals[totals <= threshold].sum() / totals.sum()
    span_s = (arrival.max() - arrival.min()) / 1e9
    down = np.bincount(dst, weights=size * 8.0) / (HOST_BPS * span_s)
    down = down[down > 0]
    return (
        f"flows tied with another of their task {tied.mean():.1%}, with another task's {across.mean():.2%}; "
        f"tasks <= p80 ({threshold / 1e3:.0f} KB) bring {small:.0%} of the bytes; "
        f"aggregator downlink load mean {down.mean():.2f}, max {down.max():.2f} ({len(down)} aggregators, "
        f"{len(np.unique(task)) / len(down):.1f} tasks each)"
    )


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sizes", nargs="+", choices=["bing", "analytics"], default=["bing", "analytics"])
    ap.add_argument("--seeds", nargs="+", type=int, default=[2014, 2015])
    ap.add_argument("--tasks", type=int, default=2000, help="tasks per run (default 2000, Table 4's)")
    ap.add_argument("--loads", nargs="+", type=float, default=[0.8], help="generator loads (default 0.8)")
    ap.add_argument("--spreads", nargs="+", type=float, default=[0.0], help="per-flow size spreads in a task")
    ap.add_argument("--bing-spread", type=float, help="the generator's bing_spread (default its 0.1; 0: all light "
                    "tasks one size, all heavy ones another)")  # fmt: skip
    ap.add_argument("--ties-share", action="store_true", help="also run srpt:ties=share (tied flows share max-min)")
    args = ap.parse_args()
    others = OTHERS + (["srpt:ties=share"] if args.ties_share else [])
    schedulers = [OURS, *others]
    extra = {} if args.bing_spread is None else {"bing_spread": args.bing_spread}
    for sizes in args.sizes:
        tag = f" (bing_spread {args.bing_spread})" if extra and sizes == "bing" else ""
        for load in args.loads:
            for spread in args.spreads:
                red: dict[str, list[list[float]]] = {o: [] for o in others}
                tails: dict[str, list[list[float]]] = {s: [] for s in schedulers}
                for seed in args.seeds:
                    w = coflowkit.generate("baraat", seed=seed, load=load, workflow="single-stage",
                                           n_tasks=args.tasks, pods=2, racks_per_pod=4, hosts_per_rack=40,
                                           sizes=sizes, **(extra if sizes == "bing" else {}))  # fmt: skip
                    if spread > 0:
                        w = spread_within_tasks(w, spread, seed)
                    print(f"{sizes}{tag} load {load} spread {spread} seed {seed}: {describe(w)}", flush=True)
                    r = coflowkit.simulate(w, schedulers, topology=TOPOLOGY, progress=False)
                    cols = w.columns()
                    task = np.asarray(cols["coflow_id"])
                    ids, inverse = np.unique(task, return_inverse=True)
                    totals = dict(zip(ids.tolist(), np.bincount(inverse, weights=np.asarray(cols["bytes"])).tolist()))
                    threshold = p80(np.array(list(totals.values()), dtype=np.int64))
                    # Heavy: above FIFO-LM's threshold (at it, where no task is above: few tasks, one size).
                    over = any(b > threshold for b in totals.values())
                    heavy = {i: b > threshold or (not over and b == threshold) for i, b in totals.items()}
                    heavy_s = np.mean([b for i, b in totals.items() if heavy[i]]) * 8 / HOST_BPS
                    cct = {}
                    for s in schedulers:
                        c = r.coflows(s)
                        cct[s] = c["cct_s"].to_numpy()
                        above = cct[s] >= np.quantile(cct[s], 0.95)
                        big = np.array([heavy[i] for i in c["coflow_id"].tolist()])
                        tails[s].append([np.quantile(cct[s], q) / heavy_s for q in (0.95, 0.99)]
                                        + [float(big[above].mean())])  # fmt: skip
                    for o in others:
                        red[o].append([1 - np.quantile(cct[OURS], q) / np.quantile(cct[o], q) for q in QUANTILES])
                    print("  TCT ms (median / p95 / p99): " + "; ".join(
                        f"{label(s)} " + " / ".join(f"{np.quantile(cct[s], q) * 1e3:.1f}" for q in QUANTILES)
                        for s in schedulers), flush=True)  # fmt: skip
                for o in others:
                    m = np.mean(red[o], axis=0)
                    print(f"{sizes}{tag} load {load} spread {spread}: fifo-lm against {o}: "
                          + " / ".join(f"{x:.0%}" for x in m))  # fmt: skip
                mean_tails = {s: np.mean(tails[s], axis=0) for s in schedulers}
                print(f"{sizes}{tag} load {load} spread {spread}: p95 / p99 in isolated heavy tasks, "
                      "share heavy at >= p95: "
                      + "; ".join(f"{label(s)} {t[0]:.2f} / {t[1]:.2f}, {t[2]:.0%}" for s, t in mean_tails.items()),
                      flush=True)  # fmt: skip
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
