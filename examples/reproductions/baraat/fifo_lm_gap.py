"""Table 4's Bing row: why our FIFO-LM gains nothing on FIFO (the paper: 28% / 27% / 16%).

Runs the row's single-stage Bing-like tasks (table4.toml's: 2,000 tasks of 40 workers on the 2 x 4 x 40
tree, 2:1 at the ToR, load 0.8; seeds 2014 and 2015 as given, not the toml's derived seeds) at flow
level under ``fifo-lm`` (its threshold the p80 of the task sizes, in bytes), ``fifo``, ``fair`` and
``stf``, and measures at each task's bottleneck, its aggregator's downlink (every flow of a
single-stage task goes there), with a task heavy when it is at least twice the threshold (heavy
for at least half its bytes: on Bing tasks the generator's heavy tasks):

- how often a light task arrives while a heavy task is in service at its aggregator, what share of
  the light tasks' completion time passes while an earlier heavy task is in service there (under
  FIFO the light one waits), and how many light tasks finish before such a heavy task (under FIFO
  none can);
- at instants 0.1 ms apart, how often a busy aggregator has a heavy task at its head (the earliest
  task in service there) with tasks behind it, how many, and how often the task after the heavy one
  in the global task-id order, the one ``fifo-lm`` multiplexes with it, is at that aggregator;
- how many of the tasks at or above p95 are heavy, and the mean completion time of the light tasks
  that arrive behind a heavy one.

The multiplexing per link, as Baraat's switches do it (4.3.1: the heavy task shares its class with
the task next in priority at that switch), is the policy ``fifo-lm:mux=link`` ("fifo-lm link"
below), run beside the others. ``--isolated`` also runs each aggregator's tasks alone on the same
tree (one run per aggregator and seed), the emulation of the per-link partner used before the
policy existed (tasks at different aggregators then meet nowhere). Prints the reductions of
``fifo-lm`` and ``fifo-lm link`` against ``fifo``, ``fair`` and ``stf`` (median / p95 / p99, and
against ``fifo`` at p75 / p90; ``1 - ours / other`` per seed, averaged, as regenerate.py does).
``--pods`` and ``--racks`` shrink the tree under the same 2,000 tasks, so that more tasks share an
aggregator; ``--sizes uniform`` runs the uniform row::

    python examples/reproductions/baraat/fifo_lm_gap.py
    python examples/reproductions/baraat/fifo_lm_gap.py --pods 1 --racks 2
    python examples/reproductions/baraat/fifo_lm_gap.py --sizes uniform
"""

from __future__ import annotations

import argparse
import math

import numpy as np

import coflowkit
from coflowkit.sim.trace import workload_from_table, workload_to_table

SEEDS = (2014, 2015)
OTHERS = ["fifo", "fair", "stf"]
OURS = ["fifo-lm", "fifo-lm link"]
QUANTILES = (0.5, 0.95, 0.99)
#: Where the light tasks behind heavy ones sit under FIFO (printed too).
MIDDLE = (0.75, 0.9)
GRID_S = 1e-4


def p80(sizes: np.ndarray) -> int:
    """The 80th percentile by nearest rank, as crates/model/src/stats.rs takes it."""
    v = np.sort(sizes)
    return int(v[max(math.ceil(0.8 * len(v)), 1) - 1])


def covered(lo: float, hi: float, spans: list[tuple[float, float]]) -> float:
    """Length of [lo, hi] covered by the union of spans."""
    cuts = sorted((max(a, lo), min(b, hi)) for a, b in spans if b > lo and a < hi)
    total, end = 0.0, lo
    for a, b in cuts:
        a = max(a, end)
        if b > a:
            total += b - a
            end = b
    return total


def waits(arr: np.ndarray, fin: np.ndarray, agg: np.ndarray, heavy: np.ndarray) -> dict[str, float]:
    """Light tasks' time while an earlier heavy task is in service at their aggregator, and the
    light tasks (and their bytes' share) that finish before such a heavy task does."""
    light = np.flatnonzero(~heavy)
    found, behind, cct, done_first = 0, 0.0, 0.0, 0
    for i in light:
        ahead = np.flatnonzero(heavy & (agg == agg[i]) & (arr < arr[i]) & (fin > arr[i]))
        found += len(ahead) > 0
        behind += covered(arr[i], fin[i], [(arr[j], fin[j]) for j in ahead])
        cct += fin[i] - arr[i]
        done_first += bool(len(ahead)) and bool((fin[ahead] > fin[i]).any())
    return {
        "found": found / len(light),
        "behind": behind / cct,
        "done_first": done_first / len(light),
    }


def heads(arr: np.ndarray, fin: np.ndarray, agg: np.ndarray, heavy: np.ndarray) -> dict[str, float]:
    """At instants GRID_S apart: aggregators whose head (earliest task in service) is heavy with a
    task behind it, and of those, how often the next task in service in the global arrival order
    (fifo-lm's partner of the heavy head) is at the same aggregator."""
    order = np.argsort(arr, kind="stable")
    arr, fin, agg, heavy = arr[order], fin[order], agg[order], heavy[order]
    n_busy, n_heavy_head, n_queued, n_partner_here = 0, 0, 0, 0
    for t in np.arange(0.0, arr.max(), GRID_S):
        active = np.flatnonzero((arr <= t) & (fin > t))
        if len(active) == 0:
            continue
        a = agg[active]
        _, first = np.unique(a, return_index=True)
        n_busy += len(first)
        for k in first:
            i = active[k]
            behind = a[k + 1 :] == a[k]
            if heavy[i] and behind.any():
                n_heavy_head += 1
                n_queued += int(behind.sum())
                n_partner_here += k + 1 < len(active) and agg[active[k + 1]] == agg[i]
    return {
        "heavy_head": n_heavy_head / max(n_busy, 1),
        "queued": n_queued / max(n_heavy_head, 1),
        "partner_here": n_partner_here / max(n_heavy_head, 1),
    }


def quantiles(cct: np.ndarray) -> np.ndarray:
    return np.array([np.quantile(cct, q) for q in QUANTILES])


Runs = dict[str, tuple[np.ndarray, np.ndarray, np.ndarray]]


def run(w: coflowkit.Workload, specs: dict[str, str], topology: str) -> Runs:
    """(coflow id, arrival, finish) of every coflow, by scheduler name."""
    r = coflowkit.simulate(w, list(specs.values()), topology=topology, progress=False)
    out: Runs = {}
    for name, spec in specs.items():
        df = r.coflows(spec)
        out[name] = (df["coflow_id"].to_numpy(), df["arrival_s"].to_numpy(), df["finish_s"].to_numpy())
    return out


def per_aggregator(w: coflowkit.Workload, specs: dict[str, str], topology: str) -> Runs:
    """Each aggregator's tasks run alone on the tree, pooled."""
    table = workload_to_table(w)
    dst = np.asarray(w.columns()["dst"])
    parts: dict[str, list[tuple[np.ndarray, np.ndarray, np.ndarray]]] = {name: [] for name in specs}
    for h in np.unique(dst).tolist():
        sub = workload_from_table(table.filter(dst == h), source=f"aggregator {h}", n_hosts=w.n_hosts)
        for name, part in run(sub, specs, topology).items():
            parts[name].append(part)
    out: Runs = {}
    for name, p in parts.items():
        c, arr, fin = (np.concatenate(x) for x in zip(*p, strict=True))
        out[name] = (c, arr, fin)
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--load", type=float, default=0.8, help="load of the most loaded link class (default 0.8)")
    ap.add_argument("--sizes", choices=["bing", "analytics", "uniform"], default="bing",
                    help="task sizes (default bing)")  # fmt: skip
    ap.add_argument("--bing-heavy", default="200KB", help="worker flow of a heavy Bing task (default 200KB)")
    ap.add_argument("--pods", type=int, default=2, help="pods of the tree (default 2)")
    ap.add_argument("--racks", type=int, default=4, help="racks per pod (default 4)")
    ap.add_argument("--isolated", action="store_true", help="also run each aggregator's tasks alone")
    args = ap.parse_args()
    topology = f"tree:pods={args.pods},racks={args.racks},hosts=40,tor_oversub=2"
    kinds = ["one run", "per aggregator"] if args.isolated else ["one run"]
    red: dict[tuple[str, str], dict[str, list[np.ndarray]]] = {
        (k, u): {o: [] for o in OTHERS} for k in kinds for u in OURS
    }
    light_cct: dict[str, list[float]] = {}
    middle: dict[tuple[str, str], list[np.ndarray]] = {(k, u): [] for k in kinds for u in OURS}
    for seed in SEEDS:
        extra = dict(bing_heavy=args.bing_heavy) if args.sizes == "bing" else {}
        w = coflowkit.generate("baraat", seed=seed, load=args.load, workflow="single-stage", n_tasks=2000,
                               pods=args.pods, racks_per_pod=args.racks, hosts_per_rack=40,
                               sizes=args.sizes, **extra)  # fmt: skip
        cols = w.columns()
        ids = np.asarray(cols["coflow_id"]).tolist()
        aggregator: dict[int, int] = dict(zip(ids, np.asarray(cols["dst"]).tolist(), strict=True))
        size: dict[int, int] = {}
        for c, b in zip(ids, np.asarray(cols["bytes"]).tolist(), strict=True):
            size[c] = size.get(c, 0) + b
        threshold = p80(np.array(list(size.values())))
        specs = {"fifo-lm": f"fifo-lm:threshold={threshold}B",
                 "fifo-lm link": f"fifo-lm:threshold={threshold}B;mux=link", **{o: o for o in OTHERS}}  # fmt: skip
        runs = {"one run": run(w, specs, topology)}
        if args.isolated:
            runs["per aggregator"] = per_aggregator(w, specs, topology)
        for kind, by in runs.items():
            for u in OURS:
                ours = quantiles(by[u][2] - by[u][1])
                for o in OTHERS:
                    red[(kind, u)][o].append(1 - ours / quantiles(by[o][2] - by[o][1]))
                middle[(kind, u)].append(1 - np.quantile(by[u][2] - by[u][1], MIDDLE)
                                         / np.quantile(by["fifo"][2] - by["fifo"][1], MIDDLE))  # fmt: skip
            for name in ("fifo", *OURS):
                c, arr, fin = by[name]
                agg = np.array([aggregator[x] for x in c.tolist()])
                # Heavy: at least twice the threshold, so heavy for at least half its bytes.
                heavy = np.array([size[x] >= 2 * threshold for x in c.tolist()])
                wt, hd = waits(arr, fin, agg, heavy), heads(arr, fin, agg, heavy)
                behind = np.array([bool((heavy & (agg == agg[i]) & (arr < arr[i]) & (fin > arr[i])).any())
                                   for i in range(len(c))]) & ~heavy  # fmt: skip
                light_cct.setdefault(f"{kind} {name}", []).extend((fin - arr)[behind].tolist())
                tail = (fin - arr) >= np.quantile(fin - arr, 0.95)
                if kind == "per aggregator" and name == "fifo":
                    continue
                print(f"seed {seed}, {kind}, {name}: threshold {threshold} B; heavy tasks (>= 2x) {heavy.mean():.1%}, "
                      f"{sum(size[x] for x in c[heavy].tolist()) / sum(size.values()):.0%} of bytes; "
                      f"light tasks arriving while a heavy one is in service at their aggregator {wt['found']:.0%}, "
                      f"share of light CCT while an earlier heavy one is in service there {wt['behind']:.0%}, "
                      f"light tasks done before it {wt['done_first']:.1%}; "
                      f"busy aggregators with a heavy head and a task behind it {hd['heavy_head']:.0%} "
                      f"(tasks behind: {hd['queued']:.1f}), "
                      f"with the next task in global order there {hd['partner_here']:.1%}; "
                      f"heavy tasks among those at or above p95 {heavy[tail].mean():.0%}", flush=True)  # fmt: skip
        print(f"seed {seed}: median / p95 / p99 TCT (ms) " + "; ".join(
            f"{kind} {s} " + " / ".join(f"{x * 1e3:.1f}" for x in quantiles(by[s][2] - by[s][1]))
            for kind, by in runs.items() for s in specs), flush=True)  # fmt: skip
    label = f"{args.sizes}" + (f" (heavy flows {args.bing_heavy})" if args.sizes == "bing" else "")
    label += f", {args.pods} x {args.racks} racks"
    for (kind, u), by_other in red.items():
        for o, rows in by_other.items():
            m = np.mean(rows, axis=0)
            print(f"{label}, load {args.load}, {kind}: {u} p80 against {o}: " + " / ".join(f"{x:.0%}" for x in m))
    for (kind, u), rows in middle.items():
        print(f"{label}, {kind}: {u} p80 against fifo at p75 / p90: " + " / ".join(
            f"{x:.0%}" for x in np.mean(rows, axis=0)))  # fmt: skip
    for key, v in light_cct.items():
        print(f"light tasks that arrive behind a heavy one, {key}: {len(v)}, mean TCT {np.mean(v) * 1e3:.1f} ms")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
