"""TAFE at packet level (issue 34): the packet-level columns of docs/reproductions/tafe.md,
run by ``tafe.py`` (``make repro-tafe``).

The packet engine models the network only and refuses a compute stage, and TAFE's
workloads are "CPU work, then network" (III). Here every server's CPU becomes a link of
its own: a compute stage of ``w`` units on host ``h`` is a network flow of ``w`` bytes
from an added host ``N + h`` to an added host ``2N + h`` (``N`` the hosts of the
workload), still in the task, still before its transfer. At flow level this is the same
model exactly (a CPU of capacity ``c`` serving work units is a link of rate ``c``
serving bytes; the table checks it on Fig. 2); at packet level the CPU stage is sent as
packets by the scheduler's transport. TAFE's task bytes are the whole task's at both
levels (the packet engine sums them over the task's senders and tells each), and a
``tafe`` run's ports serve the flows of a class first come, first served. Both columns
run on the emulated workload.

Schedulers at packet level: ``tafe`` and ``fifo-lm`` by their host policies (TAFE's
switches mark by task bytes), ``fifo`` through the coordinator every
``COORDINATOR_INTERVAL``, ``d2tcp`` and ``fair`` as the D2TCP and DCTCP transports
(no deadlines: D2TCP is DCTCP). Run alone (prints, writes nothing)::

    python examples/reproductions/tafe_packet.py
"""

from __future__ import annotations

import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from tafe_packet_page import render_causes, render_service
from tafe_packet_setup import (
    COMBINED_FLOWS,
    DEADLINE_K,
    FIFO_BY_CLASS,
    FIFO_PORTS,
    N_TASKS,
    SCHEMES,
    SIZE_GROUPS,
    SIZE_NAME,
    SLICE_SEEDS,
    SLICES,
    TAFE_FULL,
    combined_settings,
    more_service_settings,
    service_settings,
    settings,
)

import coflowkit
from coflowkit import _core
from coflowkit.experiments.runner import stored


def cpu_as_links(w: coflowkit.Workload) -> coflowkit.Workload:
    """``w`` with every compute stage on host ``h`` turned into a flow ``N + h -> 2N + h``."""
    c = w.columns()
    n = int(w.n_hosts)
    kind = np.asarray(c["kind"]).copy()
    src = np.asarray(c["src"]).astype(np.uint32).copy()
    dst = np.asarray(c["dst"]).astype(np.uint32).copy()
    cpu = kind == 1
    src[cpu] = n + src[cpu]
    dst[cpu] = 2 * n + dst[cpu]
    kind[cpu] = 0
    cols = {k: np.asarray(v) for k, v in c.items() if k not in ("src", "dst", "kind")}
    return _core.workload_from_columns(src=src, dst=dst, kind=kind.astype(np.uint8), n_hosts=3 * n,
                                       source="tafe, CPUs as links", **cols)


def topology(w: coflowkit.Workload) -> str:
    return f"bigswitch:hosts={w.n_hosts},rate=1Gbps"


def cct(res, spec: str) -> pd.Series:
    return res.coflows(spec).sort_values("coflow_id").set_index("coflow_id")["cct_s"]


def motivating() -> pd.DataFrame:
    """Fig. 2: each task's completion time (t = 1 ms): flow level with CPUs, flow level with
    CPUs as links, packet level."""
    w = coflowkit.generate("tafe", preset="motivating")
    e = cpu_as_links(w)
    specs = {"per-flow fair sharing": ("fair", "dctcp"), "D2TCP-like": ("d2tcp", "d2tcp"),
             "FIFO-LM (Baraat)": ("fifo-lm", "fifo-lm"),
             "TAFE, no demotion (one queue)": ("tafe:queues=1", "tafe:queues=1"),
             "TAFE, default thresholds": ("tafe", "tafe")}
    with_cpu = coflowkit.simulate(w, [f for f, _ in specs.values()], progress=False,
                                  topology="bigswitch:hosts=2,rate=1Gbps,cpu_rate=1Gbps")
    as_links = coflowkit.simulate(e, [f for f, _ in specs.values()], progress=False, topology=topology(e))
    rows = []
    for label, (f, p) in specs.items():
        pk = coflowkit.simulate(e, p, engine="packet", progress=False, topology=topology(e))
        rows.append({"scheme": label, "cpu": cct(with_cpu, f).to_numpy() * 1e3,
                     "links": cct(as_links, f).to_numpy() * 1e3,
                     "packet": cct(pk, pk.metrics().scheduler.iloc[0]).to_numpy() * 1e3})
    # The measurement behind the page's explanation: tasks in FIFO order by strict priority
    # (DCTCP, task k's flows in class k - 1) against the flow level's FIFO.
    fifo = coflowkit.simulate(w, "fifo", progress=False, topology="bigswitch:hosts=2,rate=1Gbps,cpu_rate=1Gbps")
    classes = [int(c) - 1 for c in np.asarray(e.columns()["coflow_id"])]
    pk = coflowkit.simulate(e, "dctcp", engine="packet", progress=False, topology=topology(e), classes=classes)
    rows.append({"scheme": FIFO_BY_CLASS, "cpu": cct(fifo, "fifo").to_numpy() * 1e3,
                 "links": cct(coflowkit.simulate(e, "fifo", progress=False, topology=topology(e)), "fifo").to_numpy() * 1e3,
                 "packet": cct(pk, pk.metrics().scheduler.iloc[0]).to_numpy() * 1e3})
    return pd.DataFrame(rows)


def tasks(sizes: str, slice_: str, seed: int, flows_per_task: int = 2) -> coflowkit.Workload:
    """V-C/V-D's tasks (tafe.toml's generator settings; ``slice_`` "full" for the whole
    distribution), CPUs as links; with more than 12 flows per task, one server per flow."""
    lo, hi = SLICES.get(slice_, ("1KB", "1TB"))
    params = {"sizes": sizes, "n_tasks": N_TASKS, "min_task": lo, "max_task": hi, "seed": seed,
              "flows_per_task": flows_per_task, "n_servers": max(12, flows_per_task)}
    return cpu_as_links(coflowkit.generate("tafe", **params))


def with_deadlines(w: coflowkit.Workload, k: float) -> coflowkit.Workload:
    """``w`` with every flow (CPU stages included) given a deadline of ``k`` times its ideal
    time: its bytes alone on a 1 Gbit/s link, from its start (D2TCP's deadlines are per flow)."""
    c = {name: np.asarray(v) for name, v in w.columns().items()}
    c["flow_deadline_ns"] = np.ceil(k * c["bytes"].astype(float) * 8).astype(np.uint64)
    c["flow_deadline_ns_valid"] = np.ones(len(c["bytes"]), dtype=bool)
    return _core.workload_from_columns(n_hosts=int(w.n_hosts), source="tafe, deadlines", **c)


def _loss(fl: pd.DataFrame) -> dict[str, float]:
    """A packet-level run's drops and timeouts per task, the timeouts split into lost (no copy of
    the segment sent before the timer fired arrived) and spurious (one did: the segment was only
    waiting, or its ACK was on its way), from the engine's per-flow counters."""
    return {"drops": fl["drops"].sum() / N_TASKS, "timeouts": fl["timeouts"].sum() / N_TASKS,
            "lost": fl["timeouts_lost"].sum() / N_TASKS, "spurious": fl["timeouts_spurious"].sum() / N_TASKS}


def figures() -> pd.DataFrame:
    """Figs. 6-9: per (slice, sizes, seed, scheme): mean, p99 and max TCT at both levels."""
    rows = []
    for slice_ in SLICES:
        for sizes in ("websearch", "datamining"):
            for seed in SLICE_SEEDS[slice_]:
                w = tasks(sizes, slice_, seed)
                flow = coflowkit.simulate(w, [f for f, _, _ in SCHEMES.values()], progress=False,
                                          topology=topology(w))
                for label, (f, p, opt) in SCHEMES.items():
                    t0 = time.perf_counter()
                    pk = coflowkit.simulate(w, p, engine="packet", progress=False, topology=topology(w),
                                            packet=opt)
                    print(f"  {slice_} {sizes} seed {seed} {p}: {time.perf_counter() - t0:.1f} s", file=sys.stderr)
                    name = pk.metrics().scheduler.iloc[0]
                    fl = pk.flows(name)
                    loss = _loss(fl)
                    for level, c in (("flow", cct(flow, f)), ("packet", cct(pk, name))):
                        rows.append({"slice": slice_, "sizes": sizes, "seed": seed, "scheme": label,
                                     "level": level, **_stats(c), **(loss if level == "packet" else {})})
    return pd.DataFrame(rows)


# -- why TAFE does not beat D2TCP here: one change at a time --------------------------------------

def causes(fig: pd.DataFrame, runs: list[tuple[str, str, str, int]] | None = None) -> pd.DataFrame:
    """TAFE and D2TCP at both levels under each of ``runs`` (default `settings`): per seed, mean, p99 and max TCT,
    and at packet level the drops and timeouts summed over the flows, per task. With deadlines,
    TAFE's packet-level run is the base run's (`fig`, the same tasks): no TAFE host or port
    reads a deadline (the engine gives one to D2TCP's and MCP's senders only)."""
    rows = []
    for setting, slice_, sizes, n_flows in settings() if runs is None else runs:
        for seed in SLICE_SEEDS.get(slice_, SLICE_SEEDS["small"]):
            w = tasks(sizes, slice_, seed, n_flows)
            if setting == "deadlines":
                w = with_deadlines(w, DEADLINE_K)
            specs = {"tafe": TAFE_FULL if slice_ == "full" else "tafe", "d2tcp": "d2tcp"}
            flow = coflowkit.simulate(w, list(specs.values()), progress=False, topology=topology(w))
            for label, spec in specs.items():
                if setting == "deadlines" and label == "tafe":
                    rows.append({"setting": setting, "slice": slice_, "sizes": sizes, "seed": seed,
                                 "scheme": label, "level": "flow", **_stats(cct(flow, spec))})
                    base = fig[(fig["slice"] == slice_) & (fig["sizes"] == sizes) & (fig["seed"] == seed)
                               & (fig["scheme"] == label) & (fig["level"] == "packet")]
                    rows.append({**base.iloc[0].to_dict(), "setting": setting})
                    continue
                t0 = time.perf_counter()
                pk = coflowkit.simulate(w, spec, engine="packet", progress=False, topology=topology(w))
                print(f"  {setting} {slice_} {sizes} seed {seed} {spec}: {time.perf_counter() - t0:.1f} s",
                      file=sys.stderr)
                name = pk.metrics().scheduler.iloc[0]
                fl = pk.flows(name)
                loss = _loss(fl)
                for level, c in (("flow", cct(flow, spec)), ("packet", cct(pk, name))):
                    rows.append({"setting": setting, "slice": slice_, "sizes": sizes, "seed": seed,
                                 "scheme": label, "level": level, **_stats(c),
                                 **(loss if level == "packet" else {})})
    return pd.DataFrame(rows)


def service(runs: list[tuple[str, str, str, int]] | None = None) -> pd.DataFrame:
    """TAFE at packet level with `tafe_service=fifo` (`FIFO_PORTS`) on ``runs`` (default
    `service_settings`), the seeds and tasks of the runs it is held against: rows as `causes`'
    packet rows."""
    rows = []
    for setting, slice_, sizes, n_flows in service_settings() if runs is None else runs:
        for seed in SLICE_SEEDS.get(slice_, SLICE_SEEDS["small"]):
            w = tasks(sizes, slice_, seed, n_flows)
            spec = TAFE_FULL if slice_ == "full" else "tafe"
            t0 = time.perf_counter()
            pk = coflowkit.simulate(w, spec, engine="packet", progress=False, topology=topology(w),
                                    packet="tafe_service=fifo")
            print(f"  {FIFO_PORTS} {setting} {slice_} {sizes} seed {seed}: {time.perf_counter() - t0:.1f} s",
                  file=sys.stderr)
            name = pk.metrics().scheduler.iloc[0]
            rows.append({"setting": setting, "slice": slice_, "sizes": sizes, "seed": seed, "scheme": FIFO_PORTS,
                         "level": "packet", **_stats(cct(pk, name)), **_loss(pk.flows(name))})
    return pd.DataFrame(rows)


def by_size() -> pd.DataFrame:
    """Where (b) and (c) together lose, on seed 1 of each whole distribution, with 2 and
    `COMBINED_FLOWS` flows per task: per group of tasks by size (`SIZE_GROUPS`), TAFE's and
    D2TCP's mean TCT at both levels and, at packet level, their timeouts per task."""
    rows = []
    for sizes in SIZE_NAME:
        for n_flows in (2, COMBINED_FLOWS):
            w = tasks(sizes, "full", 1, n_flows)
            c = w.columns()
            task_bytes = pd.Series(np.asarray(c["bytes"], dtype=float)).groupby(np.asarray(c["coflow_id"])).sum()
            edges = [0.0, task_bytes.quantile(0.5), task_bytes.quantile(0.9), np.inf]
            group = pd.cut(task_bytes, edges, labels=list(SIZE_GROUPS))
            flow = coflowkit.simulate(w, [TAFE_FULL, "d2tcp"], progress=False, topology=topology(w))
            runs = [("tafe", TAFE_FULL, None), ("d2tcp", "d2tcp", None)]
            if n_flows == COMBINED_FLOWS:
                runs.append((FIFO_PORTS, TAFE_FULL, "tafe_service=fifo"))
            for label, spec, opt in runs:
                pk = coflowkit.simulate(w, spec, engine="packet", progress=False, topology=topology(w), packet=opt)
                name = pk.metrics().scheduler.iloc[0]
                per_task = pk.flows(name).groupby("coflow_id")[["timeouts", "timeouts_lost", "timeouts_spurious"]].sum()
                t = pd.DataFrame({"flow": cct(flow, spec), "packet": cct(pk, name)})
                t = t.join(per_task.rename(columns={"timeouts_lost": "lost", "timeouts_spurious": "spurious"}))
                t = t.fillna({"timeouts": 0, "lost": 0, "spurious": 0})
                t["group"] = group.reindex(t.index)
                for g, h in t.groupby("group", observed=True):
                    rows.append({"sizes": sizes, "flows": n_flows, "group": g, "scheme": label, "tasks": len(h),
                                 "flow": h["flow"].mean(), "packet": h["packet"].mean(),
                                 "timeouts": h["timeouts"].mean(), "lost": h["lost"].mean(),
                                 "spurious": h["spurious"].mean()})
    return pd.DataFrame(rows)


def _stats(c: pd.Series) -> dict[str, float]:
    return {"mean": c.mean(), "p99": c.quantile(0.99), "max": c.max()}


def demotion() -> pd.DataFrame:
    """Where TAFE's packets went at packet level: the share of the payload bytes sent from the
    classes of each level (level 0: classes 0-3; 1: 4-5; 2: 6-7), on seed 1 of each slice but the
    large data-mining one (minutes at packet level), from the ports' per-class counters."""
    rows = []
    for slice_, sizes in (("small", "websearch"), ("small", "datamining"), ("large", "websearch")):
        w = tasks(sizes, slice_, 1)
        res = coflowkit.simulate(w, "tafe", engine="packet", progress=False, topology=topology(w))
        by_class = res.ports()[[f"class{i}_bytes" for i in range(8)]].sum().to_numpy(float)
        total = by_class.sum()
        rows.append({"slice": slice_, "sizes": sizes, "level0": by_class[:4].sum() / total,
                     "level1": by_class[4:6].sum() / total, "level2": by_class[6:].sum() / total})
    return pd.DataFrame(rows)


def run_all(store: Path, no_run: bool) -> dict[str, Any]:
    """Fig. 2, Figs. 6-9, where TAFE's bytes went, the one-change runs, (b) and (c) together and
    their groups by size, each kept in a ``store/tafe-packet*.pkl`` of its own; with ``no_run``
    read back from there (a file that is not there is run)."""

    def run() -> dict[str, Any]:
        t0 = time.perf_counter()
        return {"fig2": motivating(), "figs": figures(), "seconds": time.perf_counter() - t0}

    out = stored(store / "tafe-packet.pkl", no_run, run)
    out["demotion"] = stored(store / "tafe-packet-demotion.pkl", no_run, demotion)

    def run_causes() -> dict[str, Any]:
        t0 = time.perf_counter()
        return {"causes": causes(out["figs"]), "seconds": time.perf_counter() - t0}

    cz = stored(store / "tafe-packet-causes.pkl", no_run, run_causes)

    def run_combined() -> dict[str, Any]:
        t0 = time.perf_counter()
        return {"causes": causes(out["figs"], combined_settings()), "seconds": time.perf_counter() - t0}

    both = stored(store / "tafe-packet-combined.pkl", no_run, run_combined)
    out["causes"] = pd.concat([cz["causes"], both["causes"]], ignore_index=True)
    out["causes_seconds"] = cz["seconds"] + both["seconds"]
    out["by_size"] = stored(store / "tafe-packet-by-size.pkl", no_run, by_size)

    def run_service() -> dict[str, Any]:
        t0 = time.perf_counter()
        return {"service": service(), "seconds": time.perf_counter() - t0}

    sv = stored(store / "tafe-packet-service.pkl", no_run, run_service)

    def run_more() -> dict[str, Any]:
        t0 = time.perf_counter()
        return {"service": service(more_service_settings()), "seconds": time.perf_counter() - t0}

    more = stored(store / "tafe-packet-service-more.pkl", no_run, run_more)
    out["service"] = pd.concat([sv["service"], more["service"]], ignore_index=True)
    out["causes_seconds"] += sv["seconds"] + more["seconds"]
    return out


def main() -> None:
    t0 = time.perf_counter()
    print(motivating().to_string())
    print(f"{time.perf_counter() - t0:.0f} s")
    t0 = time.perf_counter()
    fig = figures()
    print(fig.to_string())
    print(f"{time.perf_counter() - t0:.0f} s")
    t0 = time.perf_counter()
    cz = pd.concat([causes(fig), causes(fig, combined_settings())], ignore_index=True)
    bs = by_size()
    print(render_causes(fig, cz, bs))
    print(render_service(fig, cz, service(), bs))
    print(f"{time.perf_counter() - t0:.0f} s")


if __name__ == "__main__":
    main()
