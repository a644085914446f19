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
- ``tasks=N``: tasks per run (the paper's 10,000; ours 2,000); ``load=X``: the generator's load (with
  ``agg``, the moved aggregators' downlinks'; above 1 an overloaded hot spot).
- ``hx=K`` (Bing): a heavy task's flows ``K`` times the light ones (the generator's ``bing_heavy``;
  ours 10x): "significantly heavier" by less, so the light tasks bring more of a bottleneck's bytes.
- ``hf=F`` (Bing): the share of heavy tasks (the generator's ``bing_heavy_fraction``; ours 0.15,
  Baraat 2.1's "approximately 15%").
- ``spread=A`` (Bing): each heavy task times its own Pareto(``A``) factor of mean 1, a heavy mode
  that is itself heavy-tailed in place of our +-10% (arrivals scaled so the load stays).
- ``two=1``: two-stage tasks as table4-two-stage.toml's (6 mids x 40 workers, 300 tasks; run with
  ``--no-srpt --seeds 2014``, srpt takes tens of minutes there); ``top=1``: the same with every
  task's top aggregator the first host of its pod's top rack, "Top-level aggregators are located in
  a separate rack, one per pod" (Baraat 5.2) read as one top aggregator a pod, arrivals scaled so
  that its downlink is loaded 0.8 (the mids' downlinks then lightly; with ``hot=F`` only a share).

For each setting it prints FIFO-LM's reductions against each policy (median / p95 / p99; ``1 -
ours / other`` per seed, averaged, as regenerate.py does), the TCTs, how many other tasks are in
service under ``fair`` at a task's aggregator when it arrives, and per cell the paper's ratio of
completion times (``1 - reduction``), ours in the base and with the setting, whether it is within
1.5x of the paper's, and the share of the gap closed (``1 - |log(new / paper)| / |log(base /
paper)|``; negative: the cell moved away). For single-stage tasks it also prints the busy-period
bound (``busy_bound``): each quantile of the rest of the aggregator downlink's busy period from a
task's arrival, which bounds that quantile under any policy that keeps the link busy, over
FIFO-LM's: the largest ratio of a slow policy's statistic to FIFO-LM's these bottlenecks allow
(the paper's STF p99 is 33x Baraat's on Bing), and the share of each policy's tasks within it.
``--anatomy`` prints what makes the tail of FIFO (the spec in ``fifo``'s place) and FIFO-LM
(single-stage tasks): the share of heavy tasks (above FIFO-LM's p80 threshold) among the tasks at
or above p95 and p99, each class's own quantiles, the floor the heavy tasks put under a quantile
(with a share ``h`` heavy, at least ``(1 - q) N`` heavy tasks sit at or above their
``1 - (1 - q) / h`` quantile, so the q-quantile of all tasks is at least that), and, from each
aggregator's downlink as one FIFO server, how the tail tasks' waits split between the heavy and the
light tasks ahead of them::

    python examples/reproductions/baraat/tail_gap.py --settings base agg=1 agg=4
    python examples/reproductions/baraat/tail_gap.py --sizes bing --settings base rounds=10
    python examples/reproductions/baraat/tail_gap.py --settings base tasks=10000
    python examples/reproductions/baraat/tail_gap.py --settings base remote=1 even=1
    python examples/reproductions/baraat/tail_gap.py --settings base load=0.4 agg=1,load=0.4
    python examples/reproductions/baraat/tail_gap.py --sizes bing --lcf --settings base rounds=10
    python examples/reproductions/baraat/tail_gap.py --sizes bing --settings agg=1 agg=1,load=0.6 --link
    python examples/reproductions/baraat/tail_gap.py --sizes bing analytics --settings base agg=1,hot=0.3
    python examples/reproductions/baraat/tail_gap.py --sizes bing --settings base hx=2 agg=1,hot=0.3,hx=2
    python examples/reproductions/baraat/tail_gap.py --sizes bing --seeds 2014 --no-srpt --settings two=1 top=1
    python examples/reproductions/baraat/tail_gap.py --sizes bing --stf varys:recompute=coflow --settings base agg=1
    python examples/reproductions/baraat/tail_gap.py --sizes bing analytics uniform --per-task --settings base
    python examples/reproductions/baraat/tail_gap.py --stf stf:backfill=off --fifo fifo:backfill=off --settings base
    python examples/reproductions/baraat/tail_gap.py --sizes bing --anatomy --settings base hf=0.05 hx=2
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
#: ``two=1``, ``top=1``: two-stage tasks as table4-two-stage.toml's (6 mids x 40 workers, 300 tasks).
MIDS = 6
OURS = "fifo-lm:threshold=p80"
#: ``--link``: Baraat's per-link partner (4.3.1), slow (docs/schedulers.md).
LINK = "fifo-lm:threshold=p80;mux=link"
OTHERS = ["fair", "srpt", "stf", "fifo"]
QUANTILES = (0.5, 0.95, 0.99)
STATS = ("median", "p95", "p99")
#: Table 4: reduction with Baraat relative to each policy (median, p95, p99), % (measures.py's).
TABLE4 = {
    "fair": {"bing": (-5, 30, 34), "analytics": (25, 58, 62), "uniform": (7, 37, 40)},
    "srpt": {"bing": (4, 70, 76), "analytics": (4, 43, 61), "uniform": (38, 66, 75)},
    "stf": {"bing": (-8, 84, 97), "analytics": (0, 37, 64), "uniform": (0, 1, 6)},
    "fifo": {"bing": (28, 27, 16), "analytics": (94, 93, 84), "uniform": (0, 0, 0)},
}
GAP = 1.5
#: ``--per-task``: Table 4's statistics read as quantiles of each task's own reduction.
PER_TASK = False
#: ``--anatomy``: what makes FIFO's and FIFO-LM's tails.
ANATOMY = False


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


def spread_heavy(w: coflowkit.Workload, shape: float, seed: int) -> coflowkit.Workload:
    """Each heavy Bing task (flows above 40 KB) times its own factor, Pareto of shape ``shape`` with
    mean 1 (minimum ``(shape - 1) / shape``), all its flows alike: a heavy mode that is itself
    heavy-tailed (more or fewer "responses or iterations", Baraat 2.1) in place of our +-10%,
    the heavy tasks' mean kept. Arrivals are scaled by the bytes' ratio, so the load stays."""
    table = workload_to_table(w)
    task, _, _, size, arrival = _flows(w)
    heavy = size > 40_000
    ids = np.unique(task)
    rng = np.random.default_rng(seed)
    xm = (shape - 1) / shape
    factor = dict(zip(ids.tolist(), (xm * (1 + rng.pareto(shape, len(ids)))).tolist()))
    f = np.array([factor[t] for t in task.tolist()])
    new = np.where(heavy, np.maximum(1, np.round(size * f)), size)
    start = arrival.min()
    arrival = start + np.round((arrival - start) * new.sum() / size.sum()).astype(np.int64)
    for col, values, kind in (("bytes", new, pa.uint64()), ("arrival_ns", arrival, pa.uint64())):
        table = table.set_column(table.column_names.index(col), col, pa.array(values.astype(np.uint64), kind))
    return workload_from_table(table, n_hosts=w.n_hosts)


def top_one(w: coflowkit.Workload, load: float, hot: float = 1.0) -> coflowkit.Workload:
    """Two-stage tasks: every task's top aggregator (the receiver of its group-0 mid -> top flows) moved
    to the first host of its pod's top rack, "Top-level aggregators are located in a separate rack,
    one per pod" (Baraat 5.2) read as one top aggregator a pod, and arrivals scaled so that those
    hosts' downlinks are loaded ``load``; the mid aggregators' downlinks are then lightly loaded.
    With ``hot < 1`` only that share of the tasks is moved. The top racks hold no workers or mids."""
    table = workload_to_table(w)
    task, src, dst, size, arrival = _flows(w)
    group = np.asarray(w.columns()["group"]).astype(np.int64)
    moved = ((task * 2654435761 % 2**32) / 2**32 < hot) & (group == 0)
    dst = np.where(moved, dst // HOSTS * HOSTS, dst)
    span_s = (arrival.max() - arrival.min()) / 1e9
    down = np.bincount(dst, weights=size * 8.0) / (HOST_BPS * span_s)
    factor = down[np.unique(dst[moved])].mean() / load
    start = arrival.min()
    arrival = start + np.round((arrival - start) * factor).astype(np.int64)
    for col, values, kind in (("dst", dst, pa.uint32()), ("arrival_ns", arrival, pa.uint64())):
        table = table.set_column(table.column_names.index(col), col, pa.array(values.astype(np.uint64), kind))
    return workload_from_table(table, n_hosts=w.n_hosts)


def busy_bound(w: coflowkit.Workload) -> dict[int, float]:
    """Per task, the rest of the busy period of its aggregator's downlink from its arrival (s): that
    link as one 1 Gbit/s server fed the bytes of the tasks that end there, at their arrivals. Under
    any policy that keeps that link busy while it has work (fair, srpt, stf, fifo, fifo-lm alike)
    a task whose only bottleneck is that link ends by then, so each quantile of this bounds that
    quantile of any such policy's completion times: ``bound_q / fifo-lm_q`` is the largest ratio
    of a slow policy's statistic to FIFO-LM's that these bottlenecks allow (single-stage tasks)."""
    task, _, dst, size, arrival = _flows(w)
    agg: dict[int, int] = {}
    work: dict[int, float] = {}
    start: dict[int, int] = {}
    for t, d, b, a in zip(task.tolist(), dst.tolist(), size.tolist(), arrival.tolist()):
        agg[t] = d
        work[t] = work.get(t, 0.0) + b * 8.0 / HOST_BPS
        start[t] = min(start.get(t, a), a)
    out: dict[int, float] = {}
    by_host: dict[int, list[int]] = {}
    for t in sorted(agg, key=lambda t: start[t]):
        by_host.setdefault(agg[t], []).append(t)
    for ts in by_host.values():
        period: list[int] = []
        end = -math.inf
        for t in ts:
            a = start[t] / 1e9
            if a >= end and period:  # the link emptied before this arrival: close the busy period
                for u in period:
                    out[u] = end - start[u] / 1e9
                period = []
            end = max(end, a) + work[t]
            period.append(t)
        for u in period:
            out[u] = end - start[u] / 1e9
    return out


def sharing(w: coflowkit.Workload, fair) -> tuple[float, float, int]:
    """Under ``fair``: the other tasks in service at a task's (top) aggregator, the receiver of its
    group-0 flows, when it arrives (mean, share with none), and the number of aggregators."""
    cols = w.columns()
    first = np.asarray(cols["group"]) == 0
    agg = dict(zip(np.asarray(cols["coflow_id"])[first].tolist(), np.asarray(cols["dst"])[first].tolist()))
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


def fifo_waits(w: coflowkit.Workload, heavy: dict[int, bool], only_heavy: bool = False
               ) -> dict[int, tuple[float, float, float]]:  # fmt: skip
    """Per task, from its aggregator's downlink as one FIFO server (tasks in arrival order, each its bytes
    at 1 Gbit/s): its own time, and the wait behind heavy and behind light tasks ahead of it (s). With
    ``only_heavy`` the server sees the heavy tasks alone."""
    task, _, dst, size, arrival = _flows(w)
    agg: dict[int, int] = {}
    work: dict[int, float] = {}
    start: dict[int, int] = {}
    for t, d, b, a in zip(task.tolist(), dst.tolist(), size.tolist(), arrival.tolist()):
        if only_heavy and not heavy[t]:
            continue
        agg[t] = d
        work[t] = work.get(t, 0.0) + b * 8.0 / HOST_BPS
        start[t] = min(start.get(t, a), a)
    by_host: dict[int, list[int]] = {}
    for t in sorted(agg, key=lambda t: (start[t], t)):
        by_host.setdefault(agg[t], []).append(t)
    out: dict[int, tuple[float, float, float]] = {}
    for ts in by_host.values():
        served: list[tuple[int, float, float]] = []  # (task, begin, end) on the server
        end = -math.inf
        for t in ts:
            a = start[t] / 1e9
            behind = {True: 0.0, False: 0.0}
            for u, b0, b1 in served:
                if b1 > a:
                    behind[heavy[u]] += b1 - max(b0, a)
            begin = max(end, a)
            end = begin + work[t]
            served.append((t, begin, end))
            out[t] = (work[t], behind[True], behind[False])
    return out


def anatomy(w: coflowkit.Workload, r, sizes: str, specs: list[str], hints: list[str]) -> None:
    """What makes the tails of ``specs`` (FIFO's and FIFO-LM's): see the module doc. Heavy: on Bing tasks
    a task above 1.5 times a light one (40 x 20 KB), the heavy mode; else above the p80 of task sizes."""
    cols = w.columns()
    task = np.asarray(cols["coflow_id"]).astype(np.int64)
    size = np.asarray(cols["bytes"]).astype(np.float64)
    total: dict[int, float] = {}
    for t, b in zip(task.tolist(), size.tolist()):
        total[t] = total.get(t, 0.0) + b
    threshold = 1.5 * 40 * 20_000 if sizes == "bing" else np.quantile(np.array(list(total.values())), 0.8)
    heavy = {t: b > threshold for t, b in total.items()}
    h = float(np.mean(list(heavy.values())))
    waits = fifo_waits(w, heavy)
    alone = fifo_waits(w, heavy, only_heavy=True)
    alone_ms = np.array([sum(v) * 1e3 for v in alone.values()])
    fifo_cct = r.coflows(specs[0])["cct_s"].to_numpy() * 1e3
    floors = []
    for q in QUANTILES[1:]:
        level = 1 - (1 - q) / h
        f = np.quantile(alone_ms, level) if 0 < level < 1 else float("nan")
        floors.append(f"p{q * 100:.0f} {f:.1f} ms (their p{level * 100:.0f}; {f / np.quantile(fifo_cct, q):.2f} of "
                      f"{name(specs[0])}'s p{q * 100:.0f})")  # fmt: skip
    print("  anatomy " + " ".join(hints) + f": {h:.1%} of the tasks heavy (above {threshold / 1e6:.2f} MB); the heavy "
          "tasks alone at their aggregators (FIFO, no light task ahead), from the top 5% and 1% of all tasks: "
          + ", ".join(floors), flush=True)  # fmt: skip
    for spec in specs:
        df = r.coflows(spec)
        ids, cct = df["coflow_id"].to_numpy(), df["cct_s"].to_numpy() * 1e3
        is_heavy = np.array([heavy[int(c)] for c in ids])
        parts = [name(spec)]
        for q in QUANTILES[1:]:
            v = np.quantile(cct, q)
            tail = cct >= v
            level = 1 - (1 - q) / h
            floor = np.quantile(cct[is_heavy], level) if 0 < level < 1 else float("nan")
            own, wh, wl = (np.mean([waits[int(c)][k] * 1e3 for c in ids[tail]]) for k in range(3))
            parts.append(f"p{q * 100:.0f} {v:.1f} ms: tail {np.mean(is_heavy[tail]):.0%} heavy; light p{q * 100:.0f} "
                         f"{np.quantile(cct[~is_heavy], q):.1f}, heavy p{q * 100:.0f} "
                         f"{np.quantile(cct[is_heavy], q):.1f},"
                         f" heavy p{level * 100:.0f} {floor:.1f}; tail tasks as FIFO at one server: own "
                         f"{own:.1f} ms, behind heavy {wh:.1f}, behind light {wl:.1f}")  # fmt: skip
        print("  anatomy " + " ".join(hints) + ": " + "; ".join(parts), flush=True)
    model = np.array([sum(waits[int(c)]) * 1e3 for c in r.coflows(specs[0])["coflow_id"].to_numpy()])
    print("  anatomy " + " ".join(hints) + f": the one-server FIFO model against {name(specs[0])}'s TCTs: median / "
          f"p95 / p99 {' / '.join(f'{np.quantile(model, q):.1f}' for q in QUANTILES)} ms against "
          f"{' / '.join(f'{np.quantile(fifo_cct, q):.1f}' for q in QUANTILES)}", flush=True)  # fmt: skip


KEYS = ("agg", "hot", "rounds", "tasks", "load", "remote", "even", "spread", "two", "top", "hx", "hf")


def parse(setting: str) -> dict[str, float]:
    """``base`` or ``agg=1,tasks=10000,...`` as a dict (keys: agg, hot, rounds, tasks, load, remote, even, spread,
    two, top, hx, hf)."""
    out: dict[str, float] = {}
    for part in setting.split(","):
        if part == "base":
            continue
        key, _, value = part.partition("=")
        if key not in KEYS or not value:
            raise SystemExit(f"tail_gap.py: setting {setting!r}: {part!r} is not agg=N, hot=F, rounds=N, tasks=N, "
                             "load=X, remote=1, even=1, spread=A, two=1, top=1, hx=K or hf=F")
        out[key] = float(value)
    return out


def run(sizes: str, seeds: list[int], setting: str, link: bool) -> dict[str, dict[str, np.ndarray]]:
    """Reductions of FIFO-LM (and with ``link`` of its per-link variant) against each policy (3
    statistics), averaged over the seeds, %."""
    opts = parse(setting)
    two = bool(opts.get("two") or opts.get("top"))
    tasks, load = int(opts.get("tasks", 300 if two else 2000)), opts.get("load", 0.8)
    ours = [OURS, LINK] if link else [OURS]
    red: dict[str, dict[str, list[list[float]]]] = {u: {o: [] for o in OTHERS} for u in ours}
    schedulers = [*ours, *OTHERS]
    for seed in seeds:
        shape = {"workflow": "two-stage", "mids": MIDS} if two else {"workflow": "single-stage"}
        if "hx" in opts:  # a heavy Bing flow hx times the light one (20 KB); ours 10x
            shape["bing_heavy"] = int(opts["hx"] * 20_000)
        if "hf" in opts:  # the share of heavy Bing tasks; ours 0.15
            shape["bing_heavy_fraction"] = opts["hf"]
        w = coflowkit.generate("baraat", seed=seed, load=load, n_tasks=tasks, pods=PODS, racks_per_pod=RACKS,
                               hosts_per_rack=HOSTS, sizes=sizes, **shape)  # fmt: skip
        if "spread" in opts and sizes == "bing":
            w = spread_heavy(w, opts["spread"], seed)
        if opts.get("top"):
            w = top_one(w, load, opts.get("hot", 1.0))
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
                if PER_TASK:  # quantiles of each task's own reduction, tasks matched by id
                    mine, other = (r.coflows(x).sort_values("coflow_id")["cct_s"].to_numpy() for x in (u, o))
                    red[u][o].append([100 * np.quantile(1 - mine / other, q) for q in QUANTILES])
                else:
                    red[u][o].append([100 * (1 - np.quantile(cct[u], q) / np.quantile(cct[o], q)) for q in QUANTILES])
        if ANATOMY and not two and "rounds" not in opts:
            anatomy(w, r, sizes, [OTHERS[-1], *ours], [sizes, setting, f"seed {seed}"])
        mean, none, n_agg = sharing(w, r.coflows("fair"))
        if not two and "rounds" not in opts:
            bound = busy_bound(w)
            ids = r.coflows(OURS)["coflow_id"].to_numpy()
            rest = np.array([bound[int(c)] for c in ids])
            held = {o: float(np.mean(r.coflows(o)["cct_s"].to_numpy() <= np.array(
                [bound[int(c)] for c in r.coflows(o)["coflow_id"].to_numpy()]) + 1e-3)) for o in OTHERS}
            print(f"  {sizes} {setting} seed {seed}: busy-period bound at the aggregator, ms (median / p95 / p99) "
                  + " / ".join(f"{np.quantile(rest, q) * 1e3:.1f}" for q in QUANTILES)
                  + "; over fifo-lm's " + " / ".join(f"{np.quantile(rest, q) / np.quantile(cct[OURS], q):.2f}x"
                                                    for q in QUANTILES)
                  + "; tasks within it (+1 ms) " + ", ".join(f"{o} {v:.0%}" for o, v in held.items()),
                  flush=True)  # fmt: skip
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
          f"of {3 * len(OTHERS)}; " + "; ".join(cells), flush=True)  # fmt: skip


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sizes", nargs="+", choices=["bing", "analytics", "uniform"],
                    default=["bing", "analytics", "uniform"])  # fmt: skip
    ap.add_argument("--seeds", nargs="+", type=int, default=[2014, 2015])
    ap.add_argument("--settings", nargs="+", default=["base", "agg=1"],
                    help="settings to run, the first the base the others are compared with: base (as "
                         "table4.toml), or comma-separated agg=N, hot=F, rounds=N, tasks=N, load=X, "
                         "remote=1, even=1, hx=K, spread=A, two=1, top=1")  # fmt: skip
    ap.add_argument("--link", action="store_true",
                    help="also run fifo-lm:mux=link (minutes a point on table4.toml's tasks)")
    ap.add_argument("--lcf", action="store_true", help="run lcf (smallest task first on its whole size, "
                    "known up front: the paper's STF) in stf's place")  # fmt: skip
    ap.add_argument("--stf", metavar="SPEC", help="run SPEC in stf's place (e.g. varys:recompute=coflow, which "
                    "leaves bandwidth idle until the next task event), compared with the paper's STF")  # fmt: skip
    ap.add_argument("--fifo", metavar="SPEC", help="run SPEC in fifo's place (e.g. fifo:backfill=off, which serves "
                    "a task only where it is first on every link it uses), compared with Orchestra")  # fmt: skip
    ap.add_argument("--per-task", action="store_true", help="reductions as quantiles of each task's own "
                    "reduction (1 - fifo-lm's TCT / the other's), not of the ratio of the two quantiles")  # fmt: skip
    ap.add_argument("--anatomy", action="store_true", help="print what makes FIFO's and FIFO-LM's tails "
                    "(single-stage tasks)")  # fmt: skip
    ap.add_argument("--no-srpt", action="store_true", help="leave srpt out (tens of minutes on two-stage tasks, "
                    "table4-two-stage.toml); cells then of 9")  # fmt: skip
    args = ap.parse_args()
    global PER_TASK, ANATOMY
    PER_TASK, ANATOMY = args.per_task, args.anatomy
    if args.no_srpt:
        OTHERS.remove("srpt")
    if args.lcf:
        OTHERS[OTHERS.index("stf")] = "lcf"
        TABLE4["lcf"] = TABLE4["stf"]
    if args.stf:
        OTHERS[OTHERS.index("stf")] = args.stf
        TABLE4[args.stf] = TABLE4["stf"]
    if args.fifo:
        OTHERS[OTHERS.index("fifo")] = args.fifo
        TABLE4[args.fifo] = TABLE4["fifo"]
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
