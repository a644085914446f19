"""Table 4 rows at flow level with one unstated setting moved toward the paper: how much of each gap closes?

The paper's Table 4 (Baraat 5.2.1) does not say where a single-stage task's aggregator sits, how many
tasks an aggregator serves at once, or how a heavy Bing task is heavier. Ours (table4.toml) draw each
task's aggregator uniformly over the 320 hosts of the 2 x 4 x 40 tree, so 2,000 tasks are 6.25 per
aggregator over the whole run, and the bottleneck, each aggregator's downlink (all 40 flows of a
single-stage task end there; the 2:1 ToR carries one of them), is loaded 0.8 on average. This
script runs the rows' tasks (seeds 2014 and 2015 as given, as size_gap.py and fifo_lm_gap.py do)
under ``fifo-lm:threshold=p80`` (``mux=next``, the default), ``fair``, ``srpt``, ``stf`` and
``fifo`` with one setting changed per run (``--settings``, the first the base; ``base`` is
table4.toml's tasks):

- ``agg=N``: every task's aggregator moves to one of the first ``N`` hosts of its rack (host index
  modulo ``N``; the host that was there becomes the task's worker in its place, so a task keeps
  its 40 hosts), and the arrival times are scaled so that the aggregators' downlinks are loaded
  0.8 on average (the generator's definition, "the average load of bottlenecked network links",
  on the links that now bottleneck). ``agg=1``: one aggregator per rack ("the aggregator queries
  all other nodes in the rack", Baraat 5.2, read as a rack's aggregator), 250 tasks each;
  ``agg=4``: 62.5 each. With ``hot=F`` (``agg=1,hot=0.3``) only a share ``F`` of the tasks is
  moved (hot aggregators loaded 0.8), the rest stay at their drawn hosts, nearly idle: a few
  loaded bottlenecks among many light ones.
- ``rounds=K`` (Bing): a heavy task (flows above 40 KB) is ``K`` rounds one after another of its
  40 flows, each round a ``1 / K`` share: the same bytes on the same pairs, heavier by more
  responses or iterations (Baraat 2.1: "due to the variability in the number of the responses or
  iterations") rather than by larger ones; ``K = 10`` makes every flow light-sized.
- ``remote=1``: every task's 40 workers are the 40 hosts of the next rack of its pod, so that its
  flows cross the 2:1 ToR links (Baraat 5.2 sets the oversubscription, which tasks inside a rack
  never meet: on table4.toml's tasks the ToR links are loaded 0.04), and arrivals are scaled so
  that the ToR downlinks (each 40 aggregators behind 20 Gbit/s) are loaded 0.8 on average (the
  aggregators' downlinks then 0.4).
- ``even=1``: arrivals evenly spaced over the same span, in the same order (the paper does not
  state Table 4's arrival process; its testbed's is Poisson, as ours).
- ``tasks=N``: tasks per run (the paper's 10,000; ours 2,000); ``load=X``: the generator's load.

For each setting it prints FIFO-LM's reductions against each policy (median / p95 / p99; ``1 -
ours / other`` per seed, averaged, as regenerate.py does), the TCTs, how many other tasks are in
service under ``fair`` at a task's aggregator when it arrives, and per cell the paper's ratio of
completion times (``1 - reduction``), ours in the base and with the setting, whether it is within
1.5x of the paper's, and the share of the gap closed (``1 - |log(new / paper)| / |log(base /
paper)|``; negative: the cell moved away)::

    python examples/reproductions/baraat/tail_gap.py --settings base agg=1 agg=4
    python examples/reproductions/baraat/tail_gap.py --sizes bing --settings base rounds=10
    python examples/reproductions/baraat/tail_gap.py --settings base tasks=10000
    python examples/reproductions/baraat/tail_gap.py --settings base remote=1 even=1
    python examples/reproductions/baraat/tail_gap.py --settings base load=0.4 agg=1,load=0.4
    python examples/reproductions/baraat/tail_gap.py --sizes bing --lcf --settings base rounds=10
    python examples/reproductions/baraat/tail_gap.py --sizes bing --settings agg=1 agg=1,load=0.6 --link
    python examples/reproductions/baraat/tail_gap.py --sizes bing analytics --settings base agg=1,hot=0.3
"""

from __future__ import annotations

import argparse
import math

import numpy as np
import pyarrow as pa

import coflowkit
from coflowkit.sim.trace import workload_from_table, workload_to_table

PODS, RACKS, HOSTS = 2, 4, 40
TOPOLOGY = f"tree:pods={PODS},racks={RACKS},hosts={HOSTS},tor_oversub=2"
HOST_BPS = 1e9
OURS = "fifo-lm:threshold=p80"
#: ``--link``: Baraat's per-link partner (4.3.1), slow (docs/schedulers.md).
LINK = "fifo-lm:threshold=p80;mux=link"
OTHERS = ["fair", "srpt", "stf", "fifo"]
QUANTILES = (0.5, 0.95, 0.99)
STATS = ("median", "p95", "p99")
#: Table 4: reduction with Baraat relative to each policy (median, p95, p99), % (regenerate.py's).
TABLE4 = {
    "fair": {"bing": (-5, 30, 34), "analytics": (25, 58, 62), "uniform": (7, 37, 40)},
    "srpt": {"bing": (4, 70, 76), "analytics": (4, 43, 61), "uniform": (38, 66, 75)},
    "stf": {"bing": (-8, 84, 97), "analytics": (0, 37, 64), "uniform": (0, 1, 6)},
    "fifo": {"bing": (28, 27, 16), "analytics": (94, 93, 84), "uniform": (0, 0, 0)},
}
GAP = 1.5


def _flows(w: coflowkit.Workload) -> tuple[np.ndarray, ...]:
    """The flows' task, sender, receiver, bytes (as floats, for loads) and arrival (ns)."""
    cols = w.columns()
    return (
        np.asarray(cols["coflow_id"]).astype(np.int64),
        np.asarray(cols["src"]).astype(np.int64),
        np.asarray(cols["dst"]).astype(np.int64),
        np.asarray(cols["bytes"]).astype(np.float64),
        np.asarray(cols["arrival_ns"]).astype(np.int64),
    )


def concentrate(w: coflowkit.Workload, per_rack: int, load: float, hot: float = 1.0) -> coflowkit.Workload:
    """Each task's aggregator moved to host ``rack * HOSTS + (index % per_rack)`` of its rack (swapped
    with the host there, which becomes the task's worker), arrivals scaled to ``load`` on the
    aggregators' downlinks (their mean over the span of arrivals). With ``hot < 1`` only that share
    of the tasks (every task whose id's hash falls under it) is moved, and the load is the moved
    aggregators'; the other tasks stay at their drawn hosts, nearly idle."""
    table = workload_to_table(w)
    task, src, dst, size, arrival = _flows(w)
    moved = (task * 2654435761 % 2**32) / 2**32 < hot
    # Single-stage: every flow of a task ends at its aggregator.
    new_agg = np.where(moved, dst // HOSTS * HOSTS + dst % HOSTS % per_rack, dst)
    src = np.where(src == new_agg, dst, src)
    dst = new_agg
    span_s = (arrival.max() - arrival.min()) / 1e9
    down = np.bincount(dst, weights=size * 8.0) / (HOST_BPS * span_s)
    hot_hosts = np.unique(dst[moved])
    factor = down[hot_hosts].mean() / load
    start = arrival.min()
    arrival = start + np.round((arrival - start) * factor).astype(np.int64)
    for name, values, kind in (("src", src, pa.uint32()), ("dst", dst, pa.uint32()),
                               ("arrival_ns", arrival, pa.uint64())):  # fmt: skip
        table = table.set_column(table.column_names.index(name), name, pa.array(values.astype(np.uint64), kind))
    return workload_from_table(table, n_hosts=w.n_hosts)


def iterations(w: coflowkit.Workload, rounds: int) -> coflowkit.Workload:
    """Each heavy Bing task (its flows above twice the light flow, 20 KB) as ``rounds`` rounds one
    after another of its 40 flows, each a ``1 / rounds`` share of the flow (the last round takes
    the remainder): the same bytes on the same pairs, more responses or iterations (Baraat 2.1)
    rather than larger ones."""
    table = workload_to_table(w)
    size = np.asarray(w.columns()["bytes"]).astype(np.int64)
    heavy = size > 40_000
    reps = np.where(heavy, rounds, 1)
    rows = np.repeat(np.arange(len(size)), reps)
    k = np.arange(len(rows)) - np.repeat(np.cumsum(reps) - reps, reps)
    part = size[rows] // reps[rows]
    last = k == reps[rows] - 1
    part[last] = size[rows][last] - part[last] * (reps[rows][last] - 1)
    table = table.take(pa.array(rows))
    table = table.set_column(table.column_names.index("bytes"), "bytes", pa.array(part.astype(np.uint64), pa.uint64()))
    table = table.set_column(table.column_names.index("group"), "group", pa.array(k.astype(np.uint32), pa.uint32()))
    table = table.set_column(table.column_names.index("after"), "after",
                             pa.array((k - 1).clip(0).astype(np.uint32), pa.uint32(), mask=k == 0))  # fmt: skip
    return workload_from_table(table, n_hosts=w.n_hosts)


def remote(w: coflowkit.Workload, load: float) -> coflowkit.Workload:
    """Each task's 40 workers moved to the next rack of its pod (all 40 hosts there: the workers of
    the aggregator's rack to the same place in the next, the one of the next rack to the
    aggregator's place), so every flow crosses both racks' 2:1 ToR links, and arrivals scaled so
    that the ToR downlinks, the most loaded class now (40 aggregators behind 20 Gbit/s), are loaded
    ``load`` on average."""
    table = workload_to_table(w)
    _, src, dst, size, arrival = _flows(w)
    rack = dst // HOSTS
    nxt = rack // RACKS * RACKS + (rack % RACKS + 1) % RACKS
    src = np.where(src // HOSTS == rack, nxt * HOSTS + src % HOSTS, nxt * HOSTS + dst % HOSTS)
    span_s = (arrival.max() - arrival.min()) / 1e9
    tor_down = np.bincount(rack, weights=size * 8.0, minlength=PODS * RACKS) / (HOSTS * HOST_BPS / 2 * span_s)
    factor = tor_down.mean() / load
    start = arrival.min()
    arrival = start + np.round((arrival - start) * factor).astype(np.int64)
    for col, values, kind in (("src", src, pa.uint32()), ("arrival_ns", arrival, pa.uint64())):
        table = table.set_column(table.column_names.index(col), col, pa.array(values.astype(np.uint64), kind))
    return workload_from_table(table, n_hosts=w.n_hosts)


def even(w: coflowkit.Workload) -> coflowkit.Workload:
    """Arrivals evenly spaced over the same span, in the same order (no Poisson bursts)."""
    table = workload_to_table(w)
    arrival = np.asarray(w.columns()["arrival_ns"]).astype(np.int64)
    ids, first, inverse = np.unique(arrival, return_index=True, return_inverse=True)
    del first
    grid = ids.min() + np.round(np.linspace(0, ids.max() - ids.min(), len(ids))).astype(np.int64)
    table = table.set_column(table.column_names.index("arrival_ns"), "arrival_ns",
                             pa.array(grid[inverse].astype(np.uint64), pa.uint64()))  # fmt: skip
    return workload_from_table(table, n_hosts=w.n_hosts)


def sharing(w: coflowkit.Workload, fair) -> tuple[float, float, int]:
    """Under ``fair``: the other tasks in service at a task's aggregator when it arrives (mean, share
    with none), and the number of aggregators."""
    cols = w.columns()
    agg = dict(zip(np.asarray(cols["coflow_id"]).tolist(), np.asarray(cols["dst"]).tolist()))
    arrival, finish = fair["arrival_s"].to_numpy(), fair["finish_s"].to_numpy()
    host = np.array([agg[c] for c in fair["coflow_id"].tolist()])
    order = np.argsort(arrival, kind="stable")
    n = np.zeros(len(arrival), np.int64)
    for h in np.unique(host):
        idx = order[host[order] == h]
        a, f = arrival[idx], finish[idx]
        for k, i in enumerate(idx):
            n[i] = int((f[:k] > a[k]).sum())
    return float(n.mean()), float(np.mean(n == 0)), len(np.unique(host))


def parse(setting: str) -> dict[str, float]:
    """``base`` or ``agg=1,tasks=10000,...`` as a dict (keys: agg, hot, rounds, tasks, load, remote, even)."""
    out: dict[str, float] = {}
    for part in setting.split(","):
        if part == "base":
            continue
        key, _, value = part.partition("=")
        if key not in ("agg", "hot", "rounds", "tasks", "load", "remote", "even") or not value:
            raise SystemExit(f"tail_gap.py: setting {setting!r}: {part!r} is not agg=N, hot=F, rounds=N, tasks=N, "
                             "load=X, remote=1 or even=1")
        out[key] = float(value)
    return out


def run(sizes: str, seeds: list[int], setting: str, link: bool) -> dict[str, dict[str, np.ndarray]]:
    """Reductions of FIFO-LM (and with ``link`` of its per-link variant) against each policy (3
    statistics), averaged over the seeds, %."""
    opts = parse(setting)
    tasks, load = int(opts.get("tasks", 2000)), opts.get("load", 0.8)
    ours = [OURS, LINK] if link else [OURS]
    red: dict[str, dict[str, list[list[float]]]] = {u: {o: [] for o in OTHERS} for u in ours}
    schedulers = [*ours, *OTHERS]
    for seed in seeds:
        w = coflowkit.generate("baraat", seed=seed, load=load, workflow="single-stage", n_tasks=tasks,
                               pods=PODS, racks_per_pod=RACKS, hosts_per_rack=HOSTS, sizes=sizes)  # fmt: skip
        if "agg" in opts:
            w = concentrate(w, int(opts["agg"]), load, opts.get("hot", 1.0))
        if opts.get("remote"):
            w = remote(w, load)
        if opts.get("even"):
            w = even(w)
        if "rounds" in opts and sizes == "bing":
            w = iterations(w, int(opts["rounds"]))
        r = coflowkit.simulate(w, schedulers, topology=TOPOLOGY, progress=False)
        cct = {s: r.coflows(s)["cct_s"].to_numpy() for s in schedulers}
        for u in ours:
            for o in OTHERS:
                red[u][o].append([100 * (1 - np.quantile(cct[u], q) / np.quantile(cct[o], q)) for q in QUANTILES])
        mean, none, n_agg = sharing(w, r.coflows("fair"))
        print(f"  {sizes} {setting} seed {seed}: {n_agg} aggregators ({tasks / n_agg:.1f} tasks each), others in "
              f"service at arrival under fair {mean:.2f} (none {none:.0%}); TCT ms (median / p95 / p99): "
              + "; ".join(f"{name(s)} "
                          + " / ".join(f"{np.quantile(cct[s], q) * 1e3:.1f}" for q in QUANTILES)
                          for s in schedulers), flush=True)  # fmt: skip
    return {u: {o: np.mean(red[u][o], axis=0) for o in OTHERS} for u in ours}


def name(spec: str) -> str:
    return {OURS: "fifo-lm", LINK: "fifo-lm link"}.get(spec, spec)


def pc(x: float) -> str:
    return "n/a" if math.isnan(x) else f"{x:.0f}%"


def within(paper: float, ours: float) -> bool:
    a, b = 1 - paper / 100, 1 - ours / 100
    return a > 0 and b > 0 and max(a / b, b / a) <= GAP


def closed(paper: float, base: float, new: float) -> float:
    """Share of the log gap between ours as generated and the paper closed by the setting, %."""
    p, b, n = 1 - paper / 100, 1 - base / 100, 1 - new / 100
    if min(p, b, n) <= 0 or abs(math.log(b / p)) < 0.02:  # no gap to close (within 2%)
        return float("nan")
    return 100 * (1 - abs(math.log(n / p)) / abs(math.log(b / p)))


def compare(sizes: str, ours: str, base: str, setting: str, b: dict[str, np.ndarray],
            v: dict[str, np.ndarray]) -> None:  # fmt: skip
    """Per cell: the paper's ratio of completion times, ours in the base and with the setting, and the
    share of the gap closed."""
    cells = []
    n_base = n_new = 0
    for o in OTHERS:
        for k, stat in enumerate(STATS):
            p = TABLE4[o][sizes][k]
            n_base += within(p, b[o][k])
            n_new += within(p, v[o][k])
            bk, vk = b[o][k], v[o][k]
            cells.append(f"{o} {stat}: paper {1 - p / 100:.2f}, {1 - bk / 100:.2f} -> {1 - vk / 100:.2f}"
                         f"{' (within 1.5x)' if within(p, vk) else ''}, closed {pc(closed(p, bk, vk))}")
    print(f"{sizes}: {name(ours)}, {setting} against {base} (ratios 1 - reduction): within 1.5x {n_base} -> {n_new} "
          "of 12; " + "; ".join(cells), flush=True)  # fmt: skip


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sizes", nargs="+", choices=["bing", "analytics", "uniform"],
                    default=["bing", "analytics", "uniform"])  # fmt: skip
    ap.add_argument("--seeds", nargs="+", type=int, default=[2014, 2015])
    ap.add_argument("--settings", nargs="+", default=["base", "agg=1"],
                    help="settings to run, the first the base the others are compared with: base (as "
                         "table4.toml), or comma-separated agg=N, hot=F, rounds=N, tasks=N, load=X, "
                         "remote=1, even=1")  # fmt: skip
    ap.add_argument("--link", action="store_true",
                    help="also run fifo-lm:mux=link (minutes a point on table4.toml's tasks)")
    ap.add_argument("--lcf", action="store_true", help="run lcf (smallest task first on its whole size, "
                    "known up front: the paper's STF) in stf's place")  # fmt: skip
    args = ap.parse_args()
    if args.lcf:
        OTHERS[OTHERS.index("stf")] = "lcf"
        TABLE4["lcf"] = TABLE4["stf"]
    for setting in args.settings:
        parse(setting)
    for sizes in args.sizes:
        all_results = {}
        for setting in args.settings:
            all_results[setting] = run(sizes, args.seeds, setting, args.link)
            for u, red in all_results[setting].items():
                print(f"{sizes} {setting}: {name(u)} against "
                      + "; ".join(f"{o} " + " / ".join(f"{x:.0f}%" for x in red[o]) for o in OTHERS),
                      flush=True)  # fmt: skip
        base = args.settings[0]
        for u in all_results[base]:
            for setting in args.settings[1:]:
                compare(sizes, u, base, setting, all_results[base][u], all_results[setting][u])
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
