"""coflowkit: a coflow-scheduling simulator with a Rust core.

Load a trace or generate a workload, simulate it under one or more
schedulers, and read the results as pandas (or polars) tables::

    import coflowkit
    w = coflowkit.synthetic(n_coflows=100, seed=7)
    res = coflowkit.simulate(w, ["fair", "varys"], baseline="fair")
    res.summary()            # CCT per scheduler and bin
    res.metrics()            # FCT, slowdown, job completion, deadline misses
    res.compare()            # improvement over the baseline
    res.write("results/")    # CSV and Parquet per scheduler

The simulation itself runs in Rust (``coflowkit._core``) with the GIL
released, several schedulers in parallel threads.
"""

from __future__ import annotations

import math
import os
from collections.abc import Iterable

from . import _core
from ._core import SimulationError, Workload
from .results import BINS, Results
from .trace import load_trace, workload_from_table, workload_to_table, write_trace

__version__: str = _core.__version__

__all__ = [
    "BINS",
    "Results",
    "SimulationError",
    "Workload",
    "load_trace",
    "schedulers",
    "simulate",
    "synthetic",
    "workload_from_table",
    "workload_to_table",
    "write_trace",
    "__version__",
]


def schedulers() -> list[tuple[str, str]]:
    """Every scheduler name with its one-line description."""
    return list(_core.schedulers())


def synthetic(
    n_hosts: int | None = None,
    n_coflows: int | None = None,
    load: float | None = None,
    seed: int | None = None,
    capacity_bps: float | None = None,
    mix: tuple[float, float, float, float] | None = None,
) -> Workload:
    """The embedded synthetic workload (FB2010-like bin mix at a target offered
    load), deterministic for a seed. Unset parameters take the defaults of
    ``coflowkit._core.synth_defaults()`` (50 hosts, 200 coflows, load 0.8,
    seed 1, 1 Gbit/s)."""
    return _core.synthetic(n_hosts, n_coflows, load, seed, capacity_bps, mix)


def _specs(scheduler: str | Iterable[str]) -> list[str]:
    items = [scheduler] if isinstance(scheduler, str) else list(scheduler)
    specs = [part.strip() for item in items for part in str(item).split(",") if part.strip()]
    if not specs:
        raise ValueError("scheduler: give at least one scheduler")
    seen = set()
    for s in specs:
        if s in seen:
            raise ValueError(f"scheduler: {s!r} is given twice")
        seen.add(s)
    return specs


def simulate(
    trace_or_workload: str | os.PathLike[str] | Workload,
    scheduler: str | Iterable[str] = "fair",
    baseline: str | None = None,
    capacity_gbps: float = 1.0,
    per_flow: bool = False,
    n_hosts: int | None = None,
    progress: bool = True,
    link_util_bin: float | None = None,
) -> Results:
    """Simulate a trace (a path) or a workload under one or more schedulers.

    ``scheduler`` is a spec (``"fair"``, ``"fifo-lm:threshold=p90"``), a
    comma-separated list of specs, or a list of them. A ``baseline`` not among
    them is run too. The fabric is a big switch of ``n_hosts`` (default: the
    workload's) ports of ``capacity_gbps`` Gbit/s. With ``progress``, a bar is
    drawn on stderr (only on a terminal, only for runs longer than a second).
    With ``link_util_bin`` (seconds), each link's utilization is measured in
    bins of that length (:meth:`Results.link_util`).
    """
    workload = trace_or_workload if isinstance(trace_or_workload, Workload) else load_trace(trace_or_workload)
    specs = _specs(scheduler)
    if baseline is not None:
        baseline = baseline.strip()
        if baseline not in specs:
            specs.append(baseline)
    if not capacity_gbps > 0:
        raise ValueError(f"capacity_gbps: must be positive, got {capacity_gbps}")
    if n_hosts is not None and not 1 <= n_hosts < 2**32:
        raise ValueError(f"n_hosts: must be between 1 and {2**32 - 1}, got {n_hosts}")
    bin_ns = None
    if link_util_bin is not None:
        if not (math.isfinite(link_util_bin) and link_util_bin > 0):
            raise ValueError(f"link_util_bin: must be a positive number of seconds, got {link_util_bin}")
        bin_ns = max(1, round(link_util_bin * 1e9))
    capacity_bps = float(capacity_gbps) * 1e9
    runs = _core.simulate(workload, specs, capacity_bps, n_hosts, per_flow, progress, bin_ns)
    return Results(runs, source=workload.source, capacity_bps=capacity_bps, baseline=baseline)
