"""A replay's results: the workers' records of every flow joined into one
row per flow (:func:`collect`, which checks every byte), that table as the
simulator's coflow and flow tables (:func:`tables`), and what the D-CAS
workers report of their negotiation (:func:`negotiation_summary`,
:func:`dcas_runs`).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa  # type: ignore[import-untyped, unused-ignore]

from ... import _core
from ...experiments.experiment import DEFAULT_BINS
from ...sim.results import COFLOW_COLUMNS, FLOW_COLUMNS
from .plans import Plan, coflow_ranks
from .supervise import WorkerRun


def collect(plan: Plan, run: WorkerRun) -> pd.DataFrame:
    """One row per flow of ``plan`` from the workers' records in ``run``: flow, src, dst, bytes,
    arrival_s, start_s, finish_s (seconds after ``t0``), attempts, accept_wait_s. Raises
    ``RuntimeError`` naming every flow that did not arrive whole (bytes and CRC-32 at both ends) and
    every problem the workers reported."""
    sent: dict[int, list[Any]] = {}
    got: dict[int, list[Any]] = {}
    resent: dict[int, int] = {}
    broken: list[str] = []
    problems = list(run.problems)
    for r in run.results.values():
        sent.update({int(k): v for k, v in r["sent"].items()})
        got.update({int(k): v for k, v in r["received"].items()})
        resent.update({int(k): int(v) for k, v in r.get("resent", {}).items()})
        broken += r.get("broken", [])
    t0 = run.t0
    rows = []
    for f in plan.flows:
        fid, src, dst, size, start = f.id, f.src, f.dst, f.size, f.start_s
        s, g = sent.get(fid), got.get(fid)
        if s is None or g is None:
            problems.append(f"flow {fid} (host {src} -> host {dst}, {size} bytes): not completed")
            continue
        if not (s[1] == g[1] == size and s[2] == g[2]):
            problems.append(
                f"flow {fid} (host {src} -> host {dst}): sent {s[1]} bytes crc {s[2]:08x}, "
                f"received {g[1]} bytes crc {g[2]:08x}, expected {size} bytes"
            )
            continue
        # A connection opened for the flow (sent record: connected, fresh): how long it waited, handshake
        # done, for the receiver to accept it (received record: accepted).
        wait = g[3] - s[3] if len(g) > 3 and len(s) > 4 and s[4] else np.nan
        rows.append((fid, src, dst, size, start, s[0] - t0, g[0] - t0, resent.get(fid, 1), wait))
    if problems:
        shown = "; ".join(problems[:10])
        more = f" (and {len(problems) - 10} more)" if len(problems) > 10 else ""
        lost = f"; connections lost on the way: {len(broken)} ({'; '.join(broken[:3])})" if broken else ""
        raise RuntimeError(f"replay: {len(problems)} problem(s): {shown}{more}{lost}")
    # attempts: 1, or more for a flow sent again after its connection failed (its times span them all);
    # accept_wait_s: NaN for a flow sent on a connection already open
    columns = ["flow", "src", "dst", "bytes", "arrival_s", "start_s", "finish_s", "attempts", "accept_wait_s"]
    return pd.DataFrame(rows, columns=columns)


def tables(workload: _core.Workload, flows: pd.DataFrame) -> tuple[pa.Table, pa.Table]:
    """The measured flows as the simulator's coflow and flow tables (same
    columns; bins by the default thresholds)."""
    c = workload.columns()
    f = flows.sort_values("flow").reset_index(drop=True)
    f["coflow_id"] = c["coflow_id"][f["flow"].to_numpy()]
    # A flow's clock starts at its coflow's arrival, as in the simulator.
    f["fct_s"] = f["finish_s"] - f["arrival_s"]
    n = len(f)
    flow_table = pd.DataFrame(
        {
            "coflow_id": f["coflow_id"].astype(np.uint64),
            "src": f["src"].astype(np.uint32),
            "dst": f["dst"].astype(np.uint32),
            "kind": ["network"] * n,
            "group": np.zeros(n, dtype=np.uint32),
            "bytes": f["bytes"].astype(np.uint64),
            "karuna_type": [None] * n,
            "arrival_s": f["arrival_s"],
            "start_s": f["start_s"],
            "finish_s": f["finish_s"],
            "fct_s": f["fct_s"],
            "slowdown": [np.nan] * n,
            "deadline_s": [np.nan] * n,
            "deadline_met": [None] * n,
            "dropped": np.zeros(n, dtype=bool),  # the replay gives no flow up
        }
    )[FLOW_COLUMNS]
    g = f.groupby("coflow_id", sort=True)
    co = pd.DataFrame(
        {
            "arrival_s": g["arrival_s"].min(),
            "finish_s": g["finish_s"].max(),
            "width": g.size(),
            "length_bytes": g["bytes"].max(),
            "total_bytes": g["bytes"].sum(),
        }
    ).reset_index()
    co["release_s"] = co["arrival_s"]
    co["cct_s"] = co["finish_s"] - co["arrival_s"]
    co["job_id"] = pd.array([None] * len(co), dtype="UInt64")
    co["stage_id"] = pd.array([None] * len(co), dtype="UInt32")
    co["deadline_s"] = np.nan
    co["deadline_met"] = pd.array([None] * len(co), dtype="boolean")
    short = co["length_bytes"] < DEFAULT_BINS["short_below"]
    narrow = co["width"] <= DEFAULT_BINS["narrow_up_to"]
    co["bin"] = np.where(narrow, np.where(short, "SN", "LN"), np.where(short, "SW", "LW"))
    return pa.Table.from_pandas(co[COFLOW_COLUMNS], preserve_index=False), pa.Table.from_pandas(
        flow_table, preserve_index=False
    )


def negotiation_summary(work: Path, n_hosts: int) -> dict[str, Any]:
    """D-CAS's negotiation over a replay's workers (``work/hostH.json``): the counts of
    the workers' D-CAS policies (crates/sched/src/dcas/host.rs) summed (announcements, replies received, missing,
    late, rounds negotiated or fallen back, how often Phi(replies) moved the value and the
    queue), the datagrams ignored by why, the replies' round trips and the rounds' time from
    announcement to decision (each over all workers: the mean, weighted by each worker's replies
    received or rounds decided, and the max, seconds)."""
    counts: tuple[str, ...] = ("announcements", "replies_received", "replies_missing", "replies_late")
    counts += ("replies_sent", "negotiated")
    counts += ("fallback", "raised_value", "changed_queue", "dropped_rounds", "send_failed", "datagrams")
    total: dict[str, Any] = {k: 0 for k in counts}
    total["ignored"] = {}
    # Per worker, (its spread, how many it averages) of the replies' round trips and of the rounds.
    parts: dict[str, list[tuple[list[float], int]]] = {"rtt": [], "round": []}
    for h in range(n_hosts):
        ctl = json.loads((Path(work) / f"host{h}.json").read_text()).get("control")
        if ctl is None:
            continue
        for k, v in ctl.items():
            if k == "ignored":
                for why, n in v.items():
                    total["ignored"][why] = total["ignored"].get(why, 0) + n
            elif k == "rtt_s":
                parts["rtt"].append((v, int(ctl.get("replies_received", 0))))
            elif k == "round_s":
                parts["round"].append((v, int(ctl.get("negotiated", 0)) + int(ctl.get("fallback", 0))))
            elif isinstance(v, int):
                total[k] = total.get(k, 0) + v
    for what, ps in parts.items():
        ps = [(v, n) for v, n in ps if v and n > 0]
        weight = sum(n for _, n in ps)
        total[f"{what}_mean_s"] = sum(v[0] * n for v, n in ps) / weight if weight else float("nan")
        total[f"{what}_max_s"] = max((v[2] for v, _ in ps), default=float("nan"))
    return total


def dcas_runs(work: Path, workload: _core.Workload) -> dict[int, list[int]]:
    """Per coflow id, how often the D-CAS senders of a replay (``work/hostH.json``) decided one of its
    subcoflows as large, and of those how often as starving (the policy's ``runs``, summed over hosts)."""
    of = {r: cid for cid, r in coflow_ranks(workload).items()}
    out: dict[int, list[int]] = {}
    for h in range(workload.n_hosts):
        worker = json.loads((Path(work) / f"host{h}.json").read_text())
        for rank, (large, starving) in worker.get("dcas_runs", {}).items():
            n = out.setdefault(of[int(rank)], [0, 0])
            n[0] += large
            n[1] += starving
    return out


