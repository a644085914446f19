"""Fitting a workload to a testbed (:func:`fit`): the one workload both the
testbed and the simulator run.

Hosts fold onto the testbed's (``h mod n``), flows of one coflow between the
same two hosts merge into one (one connection), flows that fold onto their
own host are dropped (they would not cross the network), sizes and times are
scaled. Simulating :func:`fit`'s output on the testbed's topology and
replaying it for real compare like with like.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pandas as pd

from ... import _core


@dataclass
class Fitted:
    """A workload fitted to a testbed, and what fitting did to it."""

    workload: _core.Workload
    n_flows_in: int
    n_flows_merged: int
    local_flows_dropped: int
    local_bytes_dropped: int
    coflows_dropped: int


def fit(
    workload: _core.Workload,
    n_hosts: int,
    size_scale: float = 1.0,
    time_scale: float = 1.0,
    max_coflows: int | None = None,
    min_bytes: int = 1,
) -> Fitted:
    """``workload`` on ``n_hosts`` hosts: host ``h`` becomes ``h mod n_hosts``,
    the flows of a coflow between the same two hosts merge into one, flows
    whose ends fold onto one host are dropped, bytes are multiplied by
    ``size_scale`` (at least ``min_bytes``) and arrival times by
    ``time_scale``; ``max_coflows`` keeps the first coflows by arrival. Raises
    ``ValueError`` for what replay cannot carry (dependencies, compute stages,
    deadlines per flow)."""
    if n_hosts < 2:
        raise ValueError(f"fit: n_hosts must be at least 2, got {n_hosts}")
    for name, x in (("size_scale", size_scale), ("time_scale", time_scale)):
        if not (math.isfinite(x) and x > 0):
            raise ValueError(f"fit: {name} must be a positive number, got {x}")
    c = workload.columns()
    src = workload.source
    if c["kind"].any():
        raise ValueError(f"{src}: has compute stages (flow kind != network), which replay cannot run")
    if c["after_valid"].any() or c["delay_ns"].any() or len(c["parents_data"]):
        raise ValueError(f"{src}: has dependencies between flows or coflows, which replay does not follow yet")
    df = pd.DataFrame(
        {
            "coflow_id": c["coflow_id"],
            "arrival_ns": c["arrival_ns"],
            "src": c["src"] % n_hosts,
            "dst": c["dst"] % n_hosts,
            "bytes": c["bytes"],
        }
    )
    if max_coflows is not None:
        first = df.groupby("coflow_id")["arrival_ns"].min().sort_values(kind="stable")
        df = df[df["coflow_id"].isin(first.index[:max_coflows])]
    n_in = len(df)
    local = df["src"] == df["dst"]
    n_local, local_bytes = int(local.sum()), int(df.loc[local, "bytes"].sum())
    before = df["coflow_id"].nunique()
    df = df[~local]
    df = df.groupby(["coflow_id", "src", "dst"], as_index=False, sort=True).agg(
        arrival_ns=("arrival_ns", "min"), bytes=("bytes", "sum")
    )
    df["bytes"] = np.maximum(np.round(df["bytes"].to_numpy(dtype=float) * size_scale), min_bytes).astype(np.uint64)
    df["arrival_ns"] = np.round(df["arrival_ns"].to_numpy(dtype=float) * time_scale).astype(np.uint64)
    df = df.sort_values(["arrival_ns", "coflow_id", "src", "dst"], kind="stable")
    w = _core.workload_from_columns(
        df["coflow_id"].to_numpy(np.uint64),
        df["arrival_ns"].to_numpy(np.uint64),
        df["src"].to_numpy(np.uint32),
        df["dst"].to_numpy(np.uint32),
        df["bytes"].to_numpy(np.uint64),
        n_hosts=n_hosts,
        source=f"{src} fitted to {n_hosts} hosts (sizes x{size_scale:g}, times x{time_scale:g})",
    )
    return Fitted(w, n_in, len(df), n_local, local_bytes, before - df["coflow_id"].nunique())
