"""Figures of an experiment, as the coflow papers draw them (matplotlib).

``make_figures(store)`` writes, in PNG and PDF:

* ``cct-cdf``: the CDF of coflow completion times (log x), one line per
  scheduler, at the plot slice, pooled over seeds; ``cct-ccdf``: the same
  as the fraction of coflows slower than x on log-log axes, which shows the
  tail (the slowest 1%, 0.1%) that the CDF squeezes against 1;
* ``bins-improvement-mean`` and ``bins-improvement-p95`` (or
  ``bins-normalized-*`` with ``plot.bars = "normalized"``): one group of bars
  per bin (SN, LN, SW, LW, All), one bar per scheduler but the baseline, the
  mean over seeds with the seeds' range as an error bar, a line at 1;
* ``sweep-<param>-<metric>``: each metric of the experiment (default:
  improvement of the mean and p95 CCT) against each swept parameter (load,
  K, threshold, Δ, ...), the other parameters at the slice; a categorical
  axis when the values are not numbers;
* deadline miss rates against each swept parameter when the workload had
  deadlines (``sweep-<param>-coflow_deadline_miss_rate``).

Defaults are for a column of a two-column paper: 3.4 x 2.3 inches, 8-point
type, fonts embedded as TrueType in PDFs, axis labels with units, a legend,
one colour, marker and line style per scheduler (the baseline black and
dashed) that stay the same in every figure, colours from the Okabe-Ito
palette so they survive colour blindness and grey-scale printing. No
pyplot: figures are objects, nothing global is touched but an rc context.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import matplotlib
import numpy as np
from matplotlib.figure import Figure
from matplotlib.ticker import FuncFormatter

from ..util import atomic_path
from .analysis import BAR_BINS, StoreData, load_store, metric_info

__all__ = ["FigureFile", "make_figures", "FORMATS"]

#: Formats written by default.
FORMATS = ("png", "pdf")
#: Width and height (inches) of one figure: a column of a two-column paper.
SIZE = (3.4, 2.3)
_STYLE = {
    "font.size": 8,
    "axes.labelsize": 8,
    "axes.titlesize": 8,
    "legend.fontsize": 7,
    "xtick.labelsize": 7,
    "ytick.labelsize": 7,
    "axes.spines.top": False,
    "axes.spines.right": False,
    "axes.grid": True,
    "grid.alpha": 0.35,
    "grid.linewidth": 0.5,
    "axes.axisbelow": True,
    "lines.linewidth": 1.3,
    "lines.markersize": 4,
    "legend.frameon": False,
    "pdf.fonttype": 42,
    "ps.fonttype": 42,
    "savefig.dpi": 300,
    "savefig.bbox": "tight",
    "savefig.pad_inches": 0.02,
    "figure.dpi": 100,
}
# Okabe and Ito, "Color Universal Design" (2008), without yellow (too light on white).
_COLORS = ["#E69F00", "#56B4E9", "#009E73", "#0072B2", "#D55E00", "#CC79A7", "#999999"]
_MARKERS = ["o", "s", "^", "D", "v", "P", "X", "*"]
_LINES: list[Any] = ["-", "-.", ":", (0, (5, 1)), (0, (3, 1, 1, 1, 1, 1)), "-", "-.", ":"]
_HATCHES = ["", "//", "..", "xx", "\\\\", "--", "++", "oo"]


@dataclass(frozen=True)
class FigureFile:
    """A figure written: its name (without extension), the files, and a caption."""

    name: str
    paths: tuple[Path, ...]
    caption: str


class _Looks:
    """One colour, marker, line and hatch per label, the same in every figure."""

    def __init__(self, labels: list[str], baseline: str):
        self.baseline = baseline
        self.style: dict[str, dict[str, Any]] = {}
        i = 0
        for label in labels:
            if label == baseline:
                self.style[label] = {"color": "black", "marker": "x", "linestyle": "--", "hatch": ""}
            else:
                self.style[label] = {
                    "color": _COLORS[i % len(_COLORS)],
                    "marker": _MARKERS[i % len(_MARKERS)],
                    "linestyle": _LINES[i % len(_LINES)],
                    "hatch": _HATCHES[i % len(_HATCHES)],
                }
                i += 1

    def line(self, label: str) -> dict[str, Any]:
        s = self.style[label]
        return {"color": s["color"], "marker": s["marker"], "linestyle": s["linestyle"]}


def make_figures(
    source: str | os.PathLike[str] | StoreData,
    out: str | os.PathLike[str] | None = None,
    formats: Iterable[str] = FORMATS,
    dpi: int | None = None,
) -> list[FigureFile]:
    """Write every figure of a store (a directory, an experiment file, or loaded data) to
    ``out`` (default ``<store>/figures``), PNGs at ``dpi`` (default 300); returns what was written."""
    data = source if isinstance(source, StoreData) else load_store(source)
    formats = tuple(formats)
    for f in formats:
        if f not in ("png", "pdf", "svg"):
            raise ValueError(f"format: {f!r} is not png, pdf or svg")
    out_dir = Path(out) if out is not None else data.store.root / "figures"
    if data.done.empty:
        raise ValueError(f"{data.store.root}: no finished point to plot yet")
    looks = _Looks(data.labels, data.baseline)
    written: list[FigureFile] = []
    # Any keys: matplotlib types rc_context's keys as the literal names of its parameters.
    style: dict[Any, Any] = dict(_STYLE, **({"savefig.dpi": dpi} if dpi is not None else {}))
    with matplotlib.rc_context(style):
        slice_text = data.slice_text()
        where = f" at {slice_text}" if slice_text else ""
        seeds = data.experiment["seeds"]
        pooled = f", {seeds} seeds pooled" if seeds > 1 else ""
        fig = _cdf(data, looks)
        if fig is not None:
            written.append(_save(fig, out_dir, "cct-cdf", formats, f"CDF of coflow completion times{where}{pooled}."))
        fig = _cdf(data, looks, tail=True)
        if fig is not None:
            caption = f"Fraction of coflows slower than x (the tail of the CDF){where}{pooled}."
            written.append(_save(fig, out_dir, "cct-ccdf", formats, caption))
        kind = data.experiment["plot"]["bars"]
        for stat in ("mean", "p95"):
            fig = _bars(data, looks, stat, kind)
            if fig is not None:
                what = "improvement over" if kind == "improvement" else "CCT normalized to"
                spread = f"; mean of {seeds} seeds, bars span their range" if seeds > 1 else ""
                caption = f"{stat} CCT {what} {data.baseline} per bin{where}{spread}."
                written.append(_save(fig, out_dir, f"bins-{kind}-{stat}", formats, caption[0].upper() + caption[1:]))
        for axis in data.sweep_axes():
            for metric in data.metrics():
                fig = _sweep(data, looks, axis, metric)
                if fig is None:
                    continue
                param = axis.split(".", 1)[1]
                others = data.slice_text(free=axis)
                at = f" ({others})" if others else ""
                spread = f"; mean of {seeds} seeds, error bars span their range" if seeds > 1 else ""
                caption = f"{metric_info(metric).label.format(baseline=data.baseline)} against {param}{at}{spread}."
                written.append(_save(fig, out_dir, f"sweep-{param}-{metric}", formats, " ".join(caption.split())))
    return written


def _save(fig: Figure, out_dir: Path, name: str, formats: tuple[str, ...], caption: str) -> FigureFile:
    paths = []
    for fmt in formats:
        path = out_dir / f"{name}.{fmt}"
        with atomic_path(path) as tmp:
            fig.savefig(tmp, format=fmt, metadata=_metadata(fmt, caption))
        paths.append(path)
    return FigureFile(name, tuple(paths), caption)


def _metadata(fmt: str, caption: str) -> dict[str, str]:
    from .._core import __version__

    if fmt == "png":
        return {"Software": f"coflowkit {__version__} (matplotlib {matplotlib.__version__})", "Description": caption}
    if fmt == "pdf":
        return {"Creator": f"coflowkit {__version__}", "Subject": caption}
    return {}


def _figure() -> tuple[Figure, Any]:
    fig = Figure(figsize=SIZE, layout="constrained")
    return fig, fig.subplots()


def _cdf(data: StoreData, looks: _Looks, tail: bool = False) -> Figure | None:
    """The CDF of CCTs (log x); with ``tail``, the fraction slower than x (log-log)."""
    ccts = data.ccts()
    if not ccts:
        return None
    fig, ax = _figure()
    smallest = 1.0
    for label, values in ccts.items():
        v = np.sort(values[values > 0])
        if v.size == 0:
            continue
        y = np.arange(1, v.size + 1) / v.size
        if tail:
            # Fraction of coflows with a CCT above v[i]; the last point (0) cannot be drawn on a log axis.
            v, y = v[:-1], 1.0 - y[:-1]
            if v.size == 0:
                continue
            smallest = min(smallest, float(y[-1]))
        style = looks.line(label)
        # A line through the sorted points (not a staircase): dashes stay readable with hundreds of steps.
        ax.plot(v, y, label=label, color=style["color"], linestyle=style["linestyle"])
    ax.set_xscale("log")
    ax.set_xlabel("Coflow completion time (s)")
    if tail:
        ax.set_yscale("log")
        ax.set_ylim(smallest / 1.5, 1.05)
        ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
        ax.set_ylabel("Fraction of coflows\nslower than x")
        ax.legend(loc="lower left")
    else:
        ax.set_ylim(0, 1.02)
        ax.set_ylabel("Fraction of coflows")
        # Curves rise to the right on a log axis: the upper left stays clear.
        ax.legend(loc="upper left")
    return fig


def _bars(data: StoreData, looks: _Looks, stat: str, kind: str) -> Figure | None:
    df = data.bins(stat, kind)
    labels = [label for label in data.labels if label != data.baseline and label in set(df["label"])]
    if not labels:
        return None
    fig, ax = _figure()
    n = len(labels)
    width = 0.8 / n
    log = _wants_log(df["max"].to_numpy(dtype=float), df["min"].to_numpy(dtype=float))
    x = np.arange(len(BAR_BINS))
    for i, label in enumerate(labels):
        rows = df[df["label"] == label].set_index("bin").reindex(BAR_BINS)
        mean = rows["mean"].to_numpy(dtype=float)
        lo = mean - rows["min"].to_numpy(dtype=float)
        hi = rows["max"].to_numpy(dtype=float) - mean
        s = looks.style[label]
        offsets = x - 0.4 + width * (i + 0.5)
        # On a log axis bars grow from 1 (up: better than the baseline, down: worse).
        bottom = 1.0 if log else 0.0
        ax.bar(
            offsets,
            np.nan_to_num(mean, nan=bottom) - bottom,
            width * 0.92,
            bottom=bottom,
            label=label,
            color=s["color"],
            hatch=s["hatch"],
            edgecolor="black",
            linewidth=0.4,
        )
        if data.experiment["seeds"] > 1:
            ax.errorbar(offsets, mean, yerr=[lo, hi], fmt="none", ecolor="black", elinewidth=0.6, capsize=1.5)
    ax.axhline(1.0, color="black", linewidth=0.8, linestyle="--")
    ax.set_xticks(x, BAR_BINS)
    ax.set_xlabel("Coflow bin")
    what = "mean" if stat == "mean" else "p95"
    if kind == "improvement":
        ax.set_ylabel(f"Improvement in {what} CCT\nover {data.baseline} (×)")
    else:
        ax.set_ylabel(f"{what[0].upper()}{what[1:]} CCT\nnormalized to {data.baseline}")
    _scale_y(ax, df["max"].to_numpy(dtype=float), df["min"].to_numpy(dtype=float), log)
    ax.grid(axis="x", visible=False)
    fig.legend(loc="outside upper center", ncols=min(n, 4))
    return fig


def _sweep(data: StoreData, looks: _Looks, axis: str, metric: str) -> Figure | None:
    info = metric_info(metric)
    df = data.sweep(axis, info)
    if df.empty or df["x"].nunique() < 2:
        return None
    values = next(a["values"] for a in data.axes if a["name"] == axis)
    numeric = all(isinstance(v, int | float) and not isinstance(v, bool) for v in values)
    fig, ax = _figure()
    positions = {str(v): i for i, v in enumerate(values)}
    for label, g in df.groupby("label", sort=False):
        if numeric:
            xs = g["x"].to_numpy(dtype=float)
        else:
            xs = np.array([positions.get(str(v), np.nan) for v in g["x"]], dtype=float)
        mean = g["mean"].to_numpy(dtype=float)
        style = looks.line(str(label))
        ax.plot(xs, mean, label=str(label), **style)
        if data.experiment["seeds"] > 1:
            lo = mean - g["min"].to_numpy(dtype=float)
            hi = g["max"].to_numpy(dtype=float) - mean
            ax.errorbar(xs, mean, yerr=[lo, hi], fmt="none", ecolor=style["color"], elinewidth=0.6, capsize=1.5)
    if axis.startswith("scheduler."):
        # Schedulers without this parameter are one value each: flat lines across the axis.
        for r in data.references(axis, info).itertuples(index=False):
            if info.relative is not None and r.label == data.baseline:
                continue
            style = looks.line(str(r.label))
            ax.axhline(r.mean, color=style["color"], linestyle=style["linestyle"], linewidth=1.0, label=str(r.label))
    if not numeric:
        ax.set_xticks(range(len(values)), [data.tick(axis, v) for v in values])
    elif min(values) > 0 and max(values) / min(values) >= 20:
        ax.set_xscale("log")
    if info.relative is not None:
        ax.axhline(1.0, color="black", linewidth=0.8, linestyle="--")
        highs, lows = df["max"].to_numpy(dtype=float), df["min"].to_numpy(dtype=float)
        _scale_y(ax, highs, lows, _wants_log(highs, lows))
    elif info.scale == 100.0:
        top = float(np.nanmax(df["max"].to_numpy(dtype=float)))
        ax.set_ylim(0, min(100.0, max(top * 1.15, 5.0)))
    ax.set_xlabel(data.axis_label(axis))
    ax.set_ylabel(info.label.format(baseline=data.baseline))
    handles, names = ax.get_legend_handles_labels()
    rank = {label: i for i, label in enumerate(data.labels)}
    pairs = sorted(zip(names, handles, strict=True), key=lambda p: rank.get(p[0], len(rank)))
    ax.legend([h for _, h in pairs], [n for n, _ in pairs], ncols=2 if len(pairs) > 3 else 1)
    return fig


def _wants_log(highs: np.ndarray, lows: np.ndarray) -> bool:
    """Log y when ratios span more than 20x (improvements of 10x next to 0.1x)."""
    values = np.concatenate([highs, lows])
    values = values[np.isfinite(values) & (values > 0)]
    return bool(values.size) and max(values.max(), 1.0) / min(values.min(), 1.0) > 20


def _scale_y(ax: Any, highs: np.ndarray, lows: np.ndarray, log: bool) -> None:
    """A ratio axis: log with plain numbers (0.1, 1, 10), or linear from 0."""
    if log:
        ax.set_yscale("log")
        ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
        return
    highs = highs[np.isfinite(highs)]
    if highs.size:
        ax.set_ylim(bottom=0, top=max(1.05, highs.max()) * 1.08)
