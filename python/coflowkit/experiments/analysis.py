"""Numbers from a result store, as the figures and the report show them.

Every figure and table of ``coflowkit plot`` and ``coflowkit report`` comes
from here, so they agree:

* The *slice*: a figure over one axis (or none) fixes every other axis at
  the experiment's ``plot.at`` value (default: the middle value). A point
  without an axis (the baseline has no scheduler axes) belongs to every
  slice of it.
* Relative metrics pair points: a point's improvement is the baseline's CCT
  statistic divided by the point's, where the baseline ran on the same
  workload cell and topology (``cell``); normalized is the inverse. Bins
  follow the Aalo paper as the core defines them (short: longest flow under
  5 MiB; narrow: at most 50 flows), unless the experiment's ``bins`` says
  otherwise (D-CAS: short below 10 MiB): then every point's per-bin columns
  are recomputed from its coflows (:func:`rebin`), with the core's
  nearest-rank percentiles.
* Replicates: a value shown is the mean over the replicates (seeds) of the
  per-replicate values, with their minimum and maximum as the error bar. The
  CCT distribution pools the coflows of every replicate.
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import ArrayLike
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from .experiment import DEFAULT_BINS
from ..sim.results import BINS
from .store import Store

__all__ = ["MetricInfo", "StoreData", "load_store", "metric_info"]

#: Bins in the order figures show them.
BAR_BINS = [*BINS[1:], "All"]


@dataclass(frozen=True)
class MetricInfo:
    """How a metric is computed and labelled."""

    name: str
    #: The points.parquet column it reads.
    column: str
    #: None (the column itself), "improvement" (baseline / point) or "normalized" (point / baseline).
    relative: str | None
    #: Axis label, with units; ``{baseline}`` is replaced.
    label: str
    #: Multiply by this to show (100 for a rate in percent).
    scale: float = 1.0


def metric_info(name: str) -> MetricInfo:
    """What a metric of ``METRICS`` (experiment.py) reads and how it is labelled."""
    stat = name.rsplit("_", 1)[-1]
    if name.startswith(("improvement_", "normalized_")):
        kind = name.split("_", 1)[0]
        col = f"cct_{stat}_s"
        what = "mean CCT" if stat == "mean" else f"{stat} CCT"
        if kind == "improvement":
            return MetricInfo(name, col, kind, f"Improvement in {what}\nover {{baseline}} (×)")
        return MetricInfo(name, col, kind, f"{what[0].upper()}{what[1:]}\nnormalized to {{baseline}}")
    if name.startswith("cct_"):
        return MetricInfo(name, f"cct_{stat}_s", None, f"{_STAT_WORD[stat]} CCT (s)")
    if "no_deadline" in name:
        short = " of short flows" if name.startswith("fct_short") else ""
        return MetricInfo(name, f"{name}_s", None, f"{_STAT_WORD[stat]} FCT{short}\nwithout a deadline (s)")
    if name.startswith("fct_"):
        return MetricInfo(name, f"fct_{stat}_s", None, f"{_STAT_WORD[stat]} FCT (s)")
    if name.startswith("jct_"):
        return MetricInfo(name, f"jct_{stat}_s", None, f"{_STAT_WORD[stat]} job completion time (s)")
    if name.startswith("slowdown_"):
        return MetricInfo(name, name, None, f"{_STAT_WORD[stat]} flow slowdown")
    if name == "coflow_deadline_miss_rate":
        return MetricInfo(name, name, None, "Coflows missing\ntheir deadline (%)", 100.0)
    if name == "flow_deadline_miss_rate":
        return MetricInfo(name, name, None, "Flows missing\ntheir deadline (%)", 100.0)
    raise ValueError(f"unknown metric {name!r}")


_STAT_WORD = {"mean": "Mean", "median": "Median", "p95": "95th percentile", "p99": "99th percentile"}


@dataclass
class StoreData:
    """A store's experiment and points, ready for figures and tables."""

    store: Store
    experiment: dict[str, Any]
    #: points.parquet as pandas (every status).
    points: pd.DataFrame

    @property
    def baseline(self) -> str:
        """The experiment's baseline scheduler spec."""
        return str(self.experiment["baseline"])

    @property
    def labels(self) -> list[str]:
        return list(self.experiment["labels"])

    @property
    def axes(self) -> list[dict[str, Any]]:
        return list(self.experiment["axes"])

    @property
    def at(self) -> dict[str, Any]:
        return dict(self.experiment["plot"]["at"])

    @property
    def done(self) -> pd.DataFrame:
        return self.points[self.points["status"] == "done"]

    def axis_label(self, axis: str) -> str:
        """An axis's label in figures: the file's ``plot.labels``, else a known name, else the parameter."""
        given = self.experiment["plot"].get("labels", {})
        if axis in given:
            return str(given[axis])
        param = axis.split(".", 1)[1]
        return _AXIS_WORDS.get(param, param)

    def tick(self, axis: str, value: Any) -> str:
        """A value of an axis as figures and tables show it: the file's ``plot.ticks``, else the value."""
        text = _axis_text(value) if not isinstance(value, bool) else str(value).lower()
        return str(self.experiment["plot"].get("ticks", {}).get(axis, {}).get(text, str(value)))

    @property
    def bin_thresholds(self) -> dict[str, int]:
        """``short_below`` (bytes) and ``narrow_up_to`` (flows) of the bins shown."""
        return dict(self.experiment.get("bins", DEFAULT_BINS))

    def slice(self, df: pd.DataFrame, free: str | None = None) -> pd.DataFrame:
        """Rows of ``df`` at the plot slice on every axis but ``free`` (a point without an axis is in every slice)."""
        keep = np.ones(len(df), dtype=bool)
        for axis, value in self.at.items():
            if axis == free or axis not in df.columns:
                continue
            col = df[axis]
            keep &= (col.isna() | (col.astype(object) == _cast_like(value, col))).to_numpy(dtype=bool)
        return df[keep]

    def slice_text(self, free: str | None = None) -> str:
        """The slice in words (``load = 0.8, threshold = p80``)."""
        parts = [f"{axis.split('.', 1)[1]} = {self.tick(axis, v)}" for axis, v in self.at.items() if axis != free]
        return ", ".join(parts)

    def values(self, metric: MetricInfo, column: str | None = None) -> pd.DataFrame:
        """Per done point: ``label``, ``replicate``, ``cell``, the axes and ``value`` of
        ``metric`` (on ``column`` instead of the metric's own, for per-bin statistics).
        Relative metrics have no value for the baseline itself."""
        col = column or metric.column
        done = self.done
        out = done[["index", "label", "replicate", "cell", *(a["name"] for a in self.axes)]].copy()
        values = done[col].astype(float)
        if metric.relative is not None:
            base = done[done["label"] == self.baseline].set_index("cell")[col].astype(float)
            b = done["cell"].map(base).astype(float)
            with np.errstate(divide="ignore", invalid="ignore"):
                values = b / values if metric.relative == "improvement" else values / b
            values = values.where(done["label"] != self.baseline)
        out["value"] = values.to_numpy() * metric.scale
        return out.dropna(subset=["value"])

    def bins(self, stat: str, relative: str | None) -> pd.DataFrame:
        """At the slice, per label and bin: mean, min and max over replicates of a
        CCT statistic (``mean``, ``p95``), relative to the baseline or not."""
        name = f"{relative}_{stat}" if relative else f"cct_{stat}"
        metric = metric_info(name)
        rows = []
        for b in BAR_BINS:
            column = f"cct_{stat}_s" if b == "All" else f"{b}_cct_{stat}_s"
            v = self.slice(self.values(metric, column))
            for label, g in v.groupby("label", sort=False):
                rows.append(_agg(g["value"], label=label, bin=b))
        return _ordered(pd.DataFrame(rows, columns=["label", "bin", "mean", "min", "max", "n"]), self.labels)

    def sweep(self, axis: str, metric: MetricInfo) -> pd.DataFrame:
        """Along ``axis`` (others at the slice), per label and value: mean, min, max over replicates."""
        v = self.slice(self.values(metric), free=axis)
        v = v[v[axis].notna()]
        order = next(a["values"] for a in self.axes if a["name"] == axis)
        rows = []
        for (label, x), g in v.groupby(["label", axis], sort=False):
            rows.append(_agg(g["value"], label=label, x=x))
        df = pd.DataFrame(rows, columns=["label", "x", "mean", "min", "max", "n"])
        rank = {_axis_text(x): i for i, x in enumerate(order)}
        df["_x"] = df["x"].map(lambda x: rank.get(_axis_text(x), len(rank)))
        return _ordered(df.sort_values("_x", kind="stable"), self.labels).drop(columns="_x")

    def references(self, axis: str, metric: MetricInfo) -> pd.DataFrame:
        """For a scheduler axis: schedulers without it (the baseline, others), one value each
        at the slice (mean, min, max over replicates), to draw as flat references."""
        v = self.slice(self.values(metric), free=axis)
        v = v[v[axis].isna()]
        rows = [_agg(g["value"], label=label) for label, g in v.groupby("label", sort=False)]
        return _ordered(pd.DataFrame(rows, columns=["label", "mean", "min", "max", "n"]), self.labels)

    def ccts(self) -> dict[str, np.ndarray]:
        """At the slice, per label: every coflow's CCT (s), pooled over replicates."""
        pts = self.slice(self.done)
        table = self.store.coflows()
        keys = pts["point"].tolist()
        table = table.filter(pc.is_in(table["point"], value_set=pa.array(keys, type=pa.string())))
        df = pd.DataFrame({"point": table["point"].to_numpy(zero_copy_only=False), "cct_s": table["cct_s"].to_numpy()})
        label_of = dict(zip(pts["point"], pts["label"], strict=True))
        df["label"] = df["point"].map(label_of)
        return {
            label: df.loc[df["label"] == label, "cct_s"].to_numpy()
            for label in self.labels
            if label in set(df["label"])
        }

    def has_deadlines(self, kind: str) -> bool:
        """True if some finished point had coflow (``coflow``) or flow (``flow``) deadlines."""
        col = f"{kind}_deadlines"
        return bool(col in self.done and (self.done[col].fillna(0) > 0).any())

    def sweep_axes(self) -> list[str]:
        """Axes with at least two values."""
        return [a["name"] for a in self.axes if len(a["values"]) >= 2]

    def metrics(self) -> list[str]:
        """The experiment's metrics, and deadline miss rates when deadlines were set."""
        out = list(self.experiment["metrics"])
        for kind in ("coflow", "flow"):
            name = f"{kind}_deadline_miss_rate"
            if self.has_deadlines(kind) and name not in out:
                out.append(name)
        return out


_AXIS_WORDS = {
    "load": "Offered load",
    "threshold": "Threshold",
    "k": "K (queues)",
    "n_coflows": "Coflows",
    "n_hosts": "Hosts",
    "deadline_fraction": "Share of coflows with a deadline",
    "tor_oversub": "ToR oversubscription",
}


def _axis_text(x: Any) -> str:
    """An axis value as text, equal for 1 and 1.0 (the store may hold either)."""
    if isinstance(x, float | np.floating) and float(x).is_integer():
        return str(int(x))
    return str(x)


def _cast_like(value: Any, col: pd.Series) -> Any:
    """``value`` as the column holds it (axis columns are numbers only when every value is one)."""
    if pd.api.types.is_numeric_dtype(col) and not isinstance(value, bool):
        try:
            return float(value)
        except (TypeError, ValueError):
            return value
    return str(value) if not pd.api.types.is_bool_dtype(col) else value


def _agg(values: pd.Series, **keys: Any) -> dict[str, Any]:
    v = values.to_numpy(dtype=float)
    return {**keys, "mean": float(np.mean(v)), "min": float(np.min(v)), "max": float(np.max(v)), "n": len(v)}


def _ordered(df: pd.DataFrame, labels: list[str]) -> pd.DataFrame:
    rank = {label: i for i, label in enumerate(labels)}
    return df.sort_values("label", key=lambda s: s.map(rank), kind="stable").reset_index(drop=True)


def load_store(source: str | os.PathLike[str]) -> StoreData:
    """A store directory (or an experiment file, whose store is ``results/<name>``) read for figures."""
    store = Store(resolve_store(source))
    experiment = store.experiment()
    points = store.points().to_pandas()
    for axis in experiment["axes"]:
        if axis["name"] not in points.columns:
            points[axis["name"]] = pd.NA
    bins = experiment.get("bins", DEFAULT_BINS)
    if bins != DEFAULT_BINS and (points["status"] == "done").any():
        points = rebin(points, store.coflows(), bins["short_below"], bins["narrow_up_to"])
    return StoreData(store=store, experiment=experiment, points=points)


def coflow_bins(length_bytes: ArrayLike, width: ArrayLike, short_below: float, narrow_up_to: int) -> np.ndarray:
    """Each coflow's bin name (SN, LN, SW, LW): short when its longest flow (``length_bytes``) is below
    ``short_below`` bytes, narrow with at most ``narrow_up_to`` flows (``width``)."""
    names = np.array(["LW", "SW", "LN", "SN"])  # index: 2 * narrow + short
    bins: np.ndarray = names[2 * (np.asarray(width) <= narrow_up_to).astype(int) + (np.asarray(length_bytes) < short_below)]
    return bins


def rebin(points: pd.DataFrame, coflows: pa.Table, short_below: int, narrow_up_to: int) -> pd.DataFrame:
    """``points`` with its per-bin columns (``SN_n_coflows``, ``SN_cct_mean_s``, ...)
    recomputed from ``coflows`` (one row per point and coflow) for bins with
    these thresholds: short when the longest flow is below ``short_below``
    bytes, narrow with at most ``narrow_up_to`` flows. Percentiles are
    nearest-rank, as the core's; a bin without coflows has NaN statistics
    and a count of 0 (a point not done keeps nulls)."""
    df = pd.DataFrame(
        {
            "point": coflows["point"].to_numpy(zero_copy_only=False),
            "cct_s": coflows["cct_s"].to_numpy(),
            "bin": coflow_bins(
                coflows["length_bytes"].to_numpy(), coflows["width"].to_numpy(), short_below, narrow_up_to
            ),
        }
    )
    out = points.copy()
    done = out["status"] == "done"
    stats: dict[str, dict[str, Any]] = {}
    for (point, b), g in df.groupby(["point", "bin"], sort=False):
        v = np.sort(g["cct_s"].to_numpy(dtype=float))
        stats.setdefault(point, {})[b] = {
            "n_coflows": len(v),
            "cct_mean_s": float(np.mean(v)),
            "cct_median_s": nearest_rank(v, 50.0),
            "cct_p95_s": nearest_rank(v, 95.0),
            "cct_p99_s": nearest_rank(v, 99.0),
            "cct_max_s": float(v[-1]),
        }
    for b in BINS[1:]:
        for stat in ("n_coflows", "cct_mean_s", "cct_median_s", "cct_p95_s", "cct_p99_s", "cct_max_s"):
            empty = 0 if stat == "n_coflows" else np.nan
            col = f"{b}_{stat}"
            values = out["point"].map(lambda p, b=b, s=stat, e=empty: stats.get(p, {}).get(b, {}).get(s, e))
            out[col] = values.where(done, None if stat == "n_coflows" else np.nan)
            if stat == "n_coflows":
                out[col] = out[col].astype("Int64")
    return out


def nearest_rank(sorted_values: np.ndarray, q: float) -> float:
    """The core's percentile (``coflowkit_model::percentile``): the value at rank ceil(q/100 * n)."""
    rank = max(1, math.ceil(q / 100.0 * len(sorted_values)))
    return float(sorted_values[min(rank, len(sorted_values)) - 1])


def resolve_store(source: str | os.PathLike[str]) -> Path:
    """The store a ``plot`` or ``report`` argument names: a directory, or an experiment file's default store."""
    p = Path(source)
    if p.is_dir():
        return p
    if p.is_file() and p.suffix.lower() in (".toml", ".yaml", ".yml"):
        from .experiment import load_experiment
        from .runner import default_store

        return default_store(load_experiment(p))
    raise FileNotFoundError(f"{p}: not a result store directory or an experiment file")
