"""Simulation results as tables: per coflow, per flow, per job, link
utilization, summaries, metrics, comparisons.

A :class:`Results` holds what the core returned for each scheduler spec (numpy
columns and summary rows) and turns it into pandas or polars frames, CCT
summaries per bin, flow/job/deadline metrics, comparisons against a baseline,
and files.

Definitions (the engine's; see docs/architecture.md): a coflow's CCT is its
completion (``finish_s``: its last flow's finish, or a Finishes-Before
parent's completion if later) minus its release (``release_s``: its arrival,
or later when Starts-After parents held it); a coflow deadline counts from
its arrival. A flow's FCT is its finish minus its start; its slowdown is the
FCT over the time it would take alone on an idle network (bytes * 8 / the
least capacity on its path); a flow deadline counts from its start. A job is
the coflows sharing a ``job_id`` (a coflow without one is its own job); its
completion time is its last coflow's completion minus its first coflow's
arrival. A flow dropped at its deadline (``simulate(missed="drop")``) has
``dropped`` true and ``finish_s`` at its deadline, and missed it. Karuna's
metrics (``fct_no_deadline_*``, ``fct_short_no_deadline_*``) are the FCTs of
the network flows without a deadline (types 2 and 3), all of them and those
under 100,000 bytes. Columns that may be empty (``job_id``, ``stage_id``,
``deadline_s``, ``deadline_met``) are pandas nullable columns (``<NA>``) and
Arrow nulls.

Bins follow the Aalo paper (7.1): a coflow is short when its largest flow is
under 5 MiB and narrow when it has at most 50 flows; ``All`` is every coflow.
Percentiles are nearest-rank, computed by the core.

Comparisons: for a scheme S and a baseline B, in each bin, the normalized CCT
is ``S / B`` (below 1 is better) and the improvement ``B / S`` (above 1 is
better), for the mean and for the 95th percentile.

pandas and pyarrow are imported by the methods that return or write their
tables, not with the module: ``coflowkit simulate`` prints its tables from the
plain rows (:meth:`Results.summary_rows`, :meth:`Results.compare_rows`,
:meth:`Results.metric_rows`) and so never loads them unless it writes files
(about 0.6 s of CPU; docs/benchmarks-history.md, issue 35).
"""

from __future__ import annotations

import math
import os
import re
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from .. import _core
from ..util import atomic_path

if TYPE_CHECKING:
    import pandas as pd
    import pyarrow as pa

__all__ = [
    "Results",
    "BINS",
    "COFLOW_COLUMNS",
    "FLOW_COLUMNS",
    "JOB_COLUMNS",
    "LINK_UTIL_COLUMNS",
    "METRIC_COLUMNS",
    "PACKET_FLOW_COLUMNS",
    "PORT_COLUMNS",
    "QUEUE_TRACE_COLUMNS",
]

#: The bins of summaries, in report order ("All" first).
BINS: list[str] = list(_core.BINS)
#: Columns of a coflow table, in order.
COFLOW_COLUMNS = [
    "coflow_id",
    "job_id",
    "stage_id",
    "arrival_s",
    "release_s",
    "finish_s",
    "cct_s",
    "deadline_s",
    "deadline_met",
    "width",
    "length_bytes",
    "total_bytes",
    "bin",
]
#: Columns of a flow table, in order.
FLOW_COLUMNS = [
    "coflow_id",
    "src",
    "dst",
    "kind",
    "group",
    "bytes",
    "karuna_type",
    "arrival_s",
    "start_s",
    "finish_s",
    "fct_s",
    "slowdown",
    "deadline_s",
    "deadline_met",
    "dropped",
]
#: Columns a packet-level run adds to the flow table, in order.
PACKET_FLOW_COLUMNS = [
    "drops",
    "ecn_marks",
    "retransmits",
    "timeouts",
    "timeouts_lost",
    "timeouts_spurious",
    "timeouts_host_queued",
    "timeouts_switch_queued",
    "class_changes",
    "promotions",
    "reordered",
    "fast_retransmits",
    "fast_retransmits_spurious",
    "stalled_s",
] + [f"bytes_class{c}" for c in range(8)]
#: Columns of a packet-level run's port table, in order.
PORT_COLUMNS = ["port", "name", "tx_packets", "tx_bytes", "drops", "marks", "max_bytes"] + [
    f"class{q}_bytes" for q in range(8)
]
#: Columns of a packet-level run's queue trace, in order.
QUEUE_TRACE_COLUMNS = ["port", "time_s", "bytes"]
#: Columns of a job table, in order.
JOB_COLUMNS = ["job_id", "first_coflow_id", "n_coflows", "arrival_s", "completion_s", "jct_s"]
#: Columns of a link utilization table, in order.
LINK_UTIL_COLUMNS = ["link", "link_name", "bin_start_s", "utilization"]
#: Columns of :meth:`Results.metrics`, in order (after ``scheduler``).
METRIC_COLUMNS = [
    "n_coflows",
    "n_flows",
    "fct_mean_s",
    "fct_p95_s",
    "fct_p99_s",
    "slowdown_mean",
    "slowdown_p95",
    "slowdown_p99",
    "n_jobs",
    "jct_mean_s",
    "jct_median_s",
    "jct_p95_s",
    "jct_p99_s",
    "jct_max_s",
    "flow_deadlines",
    "flow_deadline_misses",
    "flow_deadline_miss_rate",
    "flow_deadline_drops",
    "n_flows_no_deadline",
    "fct_no_deadline_mean_s",
    "fct_no_deadline_p95_s",
    "n_short_no_deadline",
    "fct_short_no_deadline_mean_s",
    "fct_short_no_deadline_p95_s",
    "coflow_deadlines",
    "coflow_deadline_misses",
    "coflow_deadline_miss_rate",
]
_STATS = ["count", "mean", "median", "p95", "p99", "max"]
_COMPARE_COLUMNS = [
    "scheduler",
    "bin",
    "count",
    "mean",
    "p95",
    "norm_mean",
    "norm_p95",
    "improvement_mean",
    "improvement_p95",
]
_KINDS = ["net", "compute"]


def _pandas_column(cols: dict[str, Any], name: str) -> Any:
    """A core column for pandas: nullable where the core sent a ``<name>_valid`` mask."""
    import pandas as pd

    values = cols[name]
    valid = cols.get(f"{name}_valid")
    if valid is None:
        return values
    mask = ~np.asarray(valid, dtype=bool)
    if values.dtype == np.bool_:
        return pd.arrays.BooleanArray(values, mask)
    if values.dtype.kind == "f":
        return pd.arrays.FloatingArray(values, mask)
    return pd.arrays.IntegerArray(values, mask)


def _arrow_column(cols: dict[str, Any], name: str) -> pa.Array:
    """A core column for Arrow: nulls where the core's ``<name>_valid`` mask is False."""
    import pyarrow as pa

    valid = cols.get(f"{name}_valid")
    if valid is None:
        return pa.array(cols[name])
    return pa.array(cols[name], mask=~np.asarray(valid, dtype=bool))


def _frame(cols: dict[str, Any], names: list[str]) -> pd.DataFrame:
    import pandas as pd

    return pd.DataFrame({name: _pandas_column(cols, name) for name in names})


def arrow_table(cols: dict[str, Any], names: list[str]) -> pa.Table:
    """The core's columns ``cols`` as an Arrow table of the columns ``names``, in that order."""
    import pyarrow as pa

    return pa.table({name: _arrow_column(cols, name) for name in names})


def spec_dirname(spec: str) -> str:
    """A scheduler spec as a directory name (``fifo-lm:threshold=p90`` -> ``fifo-lm_threshold_p90``)."""
    return re.sub(r"[^A-Za-z0-9._-]+", "_", spec).strip("_") or "scheduler"


class Results:
    """The outcome of :func:`coflowkit.simulate`: one run per scheduler spec."""

    def __init__(
        self,
        runs: list[dict[str, Any]],
        *,
        source: str,
        capacity_bps: float,
        baseline: str | None = None,
        topology: str | None = None,
    ):
        self._runs = {r["spec"]: r for r in runs}
        self._order = [r["spec"] for r in runs]
        #: Where the workload came from.
        self.source = source
        #: Port capacity (host 0's NIC on a multi-hop fabric), bit/s.
        self.capacity_bps = capacity_bps
        #: The fabric the runs used, in one line ("big switch, 150 ports of 1 Gbit/s").
        self.topology = topology
        #: The default baseline of :meth:`compare`, if one was given.
        self.baseline = baseline

    @property
    def schedulers(self) -> list[str]:
        """The scheduler specs, in the order they were given."""
        return list(self._order)

    def __repr__(self) -> str:
        return f"Results(schedulers={self._order!r}, source={self.source!r}, baseline={self.baseline!r})"

    def _run(self, scheduler: str | None) -> dict[str, Any]:
        if scheduler is None:
            if len(self._order) != 1:
                raise ValueError(f"several schedulers ran ({', '.join(self._order)}): name one, or use to_pandas()")
            scheduler = self._order[0]
        try:
            return self._runs[scheduler]
        except KeyError:
            raise ValueError(f"scheduler {scheduler!r} did not run (ran: {', '.join(self._order)})") from None

    def n_events(self, scheduler: str | None = None) -> int:
        """Events the engine processed for ``scheduler``."""
        return int(self._run(scheduler)["n_events"])

    def coflows(self, scheduler: str | None = None) -> pd.DataFrame:
        """One row per coflow, in (arrival, id) order; times in seconds."""
        import pandas as pd

        df = _frame(self._run(scheduler)["coflows"], COFLOW_COLUMNS)
        df["bin"] = pd.Categorical(df["bin"], categories=BINS[1:])
        return df

    def flows(self, scheduler: str | None = None) -> pd.DataFrame:
        """One row per flow (only with ``per_flow=True``), coflow by coflow; times in seconds."""
        import pandas as pd

        cols = self._flow_columns(scheduler)
        if cols is None:
            raise ValueError("flows were not kept: simulate with per_flow=True")
        df = _frame(cols, self._flow_names(scheduler))
        df["kind"] = pd.Categorical(df["kind"], categories=_KINDS)
        return df

    def _flow_columns(self, scheduler: str | None) -> dict[str, Any] | None:
        run = self._run(scheduler)
        if run["flows"] is None:
            return None
        flows: dict[str, Any] = run["flows"]
        packet = run.get("packet")
        if packet is None:
            return flows
        extra = dict(packet["flows"])
        # The core counts the waits in picoseconds; the table's times are seconds.
        extra["stalled_s"] = np.asarray(extra.pop("stalled_ps"), dtype=np.float64) / 1e12
        return {**flows, **extra}

    def _flow_names(self, scheduler: str | None) -> list[str]:
        packet = self._run(scheduler).get("packet") is not None
        return FLOW_COLUMNS + (PACKET_FLOW_COLUMNS if packet else [])

    def _packet(self, scheduler: str | None) -> dict[str, Any]:
        packet = self._run(scheduler).get("packet")
        if packet is None:
            raise ValueError("a packet-level table: simulate with engine='packet'")
        return dict(packet)

    def ports(self, scheduler: str | None = None) -> pd.DataFrame:
        """A packet-level run's ports, one row per link: packets and bytes sent,
        drops, ECN marks, the most bytes ever queued, and the payload bytes of
        data sent from each strict-priority class (``class0_bytes`` ...)."""
        return _frame(self._packet(scheduler)["ports"], PORT_COLUMNS)

    def queue_trace(self, scheduler: str | None = None) -> pd.DataFrame:
        """A packet-level run's queue samples (``queue_trace`` option): every
        port's queued bytes at each sampling instant, instant by instant."""
        cols = self._packet(scheduler)["queue_trace"]
        if cols is None:
            raise ValueError("queues were not sampled: set the packet option queue_trace=INTERVAL")
        return _frame(cols, QUEUE_TRACE_COLUMNS)

    def scheduler_stats(self, scheduler: str | None = None) -> dict[str, int]:
        """What a packet-level run's scheduler did: with host policies
        ``marking_changes``, ``control_sent``, ``control_delivered``,
        ``control_dropped``, ``wakes``; with ``dcas`` host policies also their
        negotiation summed over the hosts, ``dcas_announcements``,
        ``dcas_replies_received`` ... ``dcas_dropped_rounds`` (the counters the
        testbed's workers report) and ``dcas_decided_large``,
        ``dcas_decided_starving`` (Pseudocode 1's runs that found a subcoflow
        large, and of those starving), and the host policy's clock,
        ``dcas_ticks`` ... ``dcas_large_life_gap_ns`` (its ticks and how late,
        the gaps between a subcoflow's ticks, each large subcoflow's life,
        ticks, starving ticks and rounds; crates/sched/src/dcas/host.rs
        ``COUNTERS``); with a coordinator
        ``coordinator_ticks``, ``coordinator_decisions``; with ``baraat`` also
        ``spc_requests``, ``spc_carried`` (of them, on data packets), ``spc_echoes``,
        ``spc_lost`` (requests and answers),
        ``spc_heavy`` (tasks turned heavy, per port), ``spc_expired`` (tasks
        the ports dropped as stale); empty for a transport alone."""
        return {k: int(v) for k, v in dict(self._packet(scheduler).get("scheduler") or {}).items()}

    def packets(self, scheduler: str | None = None) -> int:
        """A packet-level run's per-hop transmissions (each time a packet left a port)."""
        return int(self._packet(scheduler)["packets"])

    def jobs(self, scheduler: str | None = None) -> pd.DataFrame:
        """One row per job, in order of its first coflow; ``job_id`` is <NA> for a
        coflow without a job (its own job, named by ``first_coflow_id``)."""
        return _frame(self._run(scheduler)["jobs"], JOB_COLUMNS)

    def link_util(self, scheduler: str | None = None) -> pd.DataFrame:
        """Link utilization (only with ``link_util_bin``): one row per link and time
        bin, link by link; ``utilization`` is bytes carried * 8 / (capacity * bin)."""
        import pandas as pd

        cols = self._run(scheduler)["link_util"]
        if cols is None:
            raise ValueError("link utilization was not measured: simulate with link_util_bin=SECONDS")
        return pd.DataFrame(
            {
                "link": cols["link"],
                "link_name": pd.Categorical.from_codes(cols["link"].astype(np.int64), categories=cols["link_names"]),
                "bin_start_s": cols["bin_start_s"],
                "utilization": cols["utilization"],
            }
        )

    def metric_rows(self) -> list[dict[str, Any]]:
        """:meth:`metrics` as plain rows (dicts), without pandas."""
        return [{"scheduler": s, **self._runs[s]["metrics"]} for s in self._order]

    def metrics(self) -> pd.DataFrame:
        """One row per scheduler: flow completion time and slowdown (mean, p95,
        p99), job completion time, and deadline misses of flows and coflows
        (miss rates are NaN when nothing has a deadline)."""
        import pandas as pd

        return pd.DataFrame(self.metric_rows(), columns=["scheduler", *METRIC_COLUMNS])

    def _coflow_table(self, scheduler: str) -> pa.Table:
        return arrow_table(self._run(scheduler)["coflows"], COFLOW_COLUMNS)

    def _flow_table(self, scheduler: str) -> pa.Table | None:
        cols = self._flow_columns(scheduler)
        return None if cols is None else arrow_table(cols, self._flow_names(scheduler))

    def _job_table(self, scheduler: str) -> pa.Table:
        return arrow_table(self._run(scheduler)["jobs"], JOB_COLUMNS)

    def _link_util_table(self, scheduler: str) -> pa.Table | None:
        if self._run(scheduler)["link_util"] is None:
            return None
        import pyarrow as pa

        return pa.Table.from_pandas(self.link_util(scheduler), preserve_index=False)

    def to_arrow(self) -> pa.Table:
        """Every scheduler's coflow table stacked, with a leading ``scheduler`` column."""
        import pyarrow as pa

        tables = []
        for s in self._order:
            t = self._coflow_table(s)
            tables.append(t.add_column(0, "scheduler", pa.array([s] * t.num_rows, type=pa.string())))
        return pa.concat_tables(tables)

    def to_pandas(self) -> pd.DataFrame:
        """:meth:`to_arrow` as a pandas DataFrame (``bin`` categorical)."""
        import pandas as pd

        frames = [self.coflows(s).assign(scheduler=s) for s in self._order]
        df = pd.concat(frames, ignore_index=True)
        return df[["scheduler", *COFLOW_COLUMNS]]

    def to_polars(self) -> Any:
        """:meth:`to_arrow` as a polars DataFrame (needs the ``polars`` extra)."""
        try:
            import polars as pl
        except ImportError:
            raise ImportError("to_polars() needs polars: pip install 'coflowkit[polars]'") from None
        return pl.from_arrow(self.to_arrow())

    def summary_rows(self) -> list[dict[str, Any]]:
        """:meth:`summary` as plain rows (dicts), without pandas."""
        return [{"scheduler": s, **row} for s in self._order for row in self._runs[s]["summary"]]

    def summary(self) -> pd.DataFrame:
        """CCT statistics (seconds) per scheduler and bin: count, mean, median, p95, p99, max."""
        import pandas as pd

        df = pd.DataFrame(self.summary_rows(), columns=["scheduler", "bin", *_STATS])
        df["bin"] = pd.Categorical(df["bin"], categories=BINS)
        return df

    def compare_rows(self, baseline: str | None = None) -> list[dict[str, Any]]:
        """:meth:`compare` as plain rows (dicts), without pandas."""
        baseline = baseline if baseline is not None else self.baseline
        if baseline is None:
            raise ValueError("compare: no baseline (pass baseline= here or to simulate)")
        if baseline not in self._runs:
            raise ValueError(f"compare: baseline {baseline!r} did not run (ran: {', '.join(self._order)})")
        base = {row["bin"]: row for row in self._runs[baseline]["summary"]}
        out = []
        for row in self.summary_rows():
            b = base.get(row["bin"])
            b_mean, b_p95 = (float(b["mean"]), float(b["p95"])) if b is not None else (math.nan, math.nan)
            mean, p95 = float(row["mean"]), float(row["p95"])
            out.append(
                {
                    "scheduler": row["scheduler"],
                    "bin": row["bin"],
                    "count": row["count"],
                    "mean": mean,
                    "p95": p95,
                    "norm_mean": _ratio(mean, b_mean),
                    "norm_p95": _ratio(p95, b_p95),
                    "improvement_mean": _ratio(b_mean, mean),
                    "improvement_p95": _ratio(b_p95, p95),
                }
            )
        return out

    def compare(self, baseline: str | None = None) -> pd.DataFrame:
        """Each scheduler against ``baseline``, per bin.

        Columns: scheduler, bin, count, mean, p95 (seconds), norm_mean and
        norm_p95 (scheme / baseline), improvement_mean and improvement_p95
        (baseline / scheme).
        """
        import pandas as pd

        df = pd.DataFrame(self.compare_rows(baseline), columns=_COMPARE_COLUMNS)
        df["bin"] = pd.Categorical(df["bin"], categories=BINS)
        return df

    def write(self, out_dir: str | os.PathLike[str]) -> Path:
        """Write ``DIR/<scheduler>/coflows.{csv,parquet}`` and ``jobs.{csv,parquet}``
        (and ``flows.*`` with per-flow results, ``link_util.parquet`` with link
        utilization, ``ports.*`` and ``queue_trace.parquet`` from a packet-level run), ``DIR/summary.csv``, ``DIR/metrics.csv`` and, with a
        baseline, ``DIR/compare.csv``. Each file is replaced whole or not at all."""
        out = Path(out_dir)
        dirs = {s: spec_dirname(s) for s in self._order}
        if len(set(dirs.values())) != len(dirs):
            raise ValueError(f"schedulers {', '.join(self._order)} would share an output directory")
        out.mkdir(parents=True, exist_ok=True)
        for s in self._order:
            d = out / dirs[s]
            write_table(self._coflow_table(s), d / "coflows.csv", d / "coflows.parquet")
            write_table(self._job_table(s), d / "jobs.csv", d / "jobs.parquet")
            flows = self._flow_table(s)
            if flows is not None:
                write_table(flows, d / "flows.csv", d / "flows.parquet")
            link_util = self._link_util_table(s)
            if link_util is not None:
                _write_parquet(link_util, d / "link_util.parquet")
            packet = self._run(s).get("packet")
            if packet is not None:
                write_table(arrow_table(packet["ports"], PORT_COLUMNS), d / "ports.csv", d / "ports.parquet")
                if packet["queue_trace"] is not None:
                    _write_parquet(arrow_table(packet["queue_trace"], QUEUE_TRACE_COLUMNS), d / "queue_trace.parquet")
        _write_csv(self.summary(), out / "summary.csv")
        _write_csv(self.metrics(), out / "metrics.csv")
        if self.baseline is not None:
            _write_csv(self.compare(), out / "compare.csv")
        return out


def _ratio(a: float, b: float) -> float:
    """``a / b`` as numpy divides floats: +-inf for a nonzero over zero, NaN for 0 / 0 or a NaN."""
    if b == 0.0:
        return math.nan if a == 0.0 or math.isnan(a) else math.copysign(math.inf, a) * math.copysign(1.0, b)
    return a / b


def _write_csv(df: pd.DataFrame, path: Path) -> None:
    with atomic_path(path) as tmp:
        df.to_csv(tmp, index=False)


def _write_parquet(table: pa.Table, path: Path) -> None:
    import pyarrow.parquet as pq

    with atomic_path(path) as tmp:
        pq.write_table(table, tmp)


def write_table(table: pa.Table, csv_path: Path, parquet_path: Path) -> None:
    """Write ``table`` as CSV and as Parquet, each file atomically."""
    _write_csv(table.to_pandas(), csv_path)
    _write_parquet(table, parquet_path)
