"""What every part of the Aalo page (regenerate.py) uses: where the figures go and the CCT bins,
numbers read from the result stores (a statistic's column, a label's points, ratios paired by
replicate) and their formatting, the figures' common parts (grouped bars, ratio axes, one legend
above the panels), and the page being written. Shared by regenerate.py, sections.py and
discussion.py, so it lives apart from each."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from matplotlib.figure import Figure

from coflowkit.experiments.analysis import StoreData
from coflowkit.experiments.plots import _COLORS, _HATCHES

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[2]
FIGS = ROOT / "docs" / "reproductions" / "aalo"
BINS = ["SN", "LN", "SW", "LW", "All"]


# -- numbers ----------------------------------------------------------------------------------------


def stat_col(stat: str, b: str) -> str:
    """The points.parquet column of a CCT statistic in a bin."""
    return f"cct_{stat}_s" if b == "All" else f"{b}_cct_{stat}_s"


def point_of(data: StoreData, label: str, **axes: Any) -> pd.DataFrame:
    """The done points of a label, optionally at given axis values (``scheduler.k=2``)."""
    df = data.done[data.done["label"] == label]
    for axis, value in axes.items():
        col = axis.replace("__", ".")
        df = df[df[col].map(_text) == _text(value)]
    return df


def _text(x: Any) -> str:
    """An axis value as text, 1 and 1.0 alike (a numeric axis column holds floats)."""
    if isinstance(x, float | np.floating) and float(x).is_integer():
        return str(int(x))
    return str(x)


def one(df: pd.DataFrame, col: str) -> float:
    """The value of a column in a one-row frame (one replicate of a trace)."""
    if len(df) != 1:
        raise ValueError(f"expected one point, got {len(df)}")
    return float(df[col].iloc[0])


def paired_ratio(num: pd.DataFrame, den: pd.DataFrame, col: str, by: str = "replicate") -> np.ndarray:
    """Per replicate: num's column over den's (points paired by replicate)."""
    a = num.set_index(by)[col].astype(float)
    b = den.set_index(by)[col].astype(float)
    common = a.index.intersection(b.index)
    return (a[common] / b[common]).to_numpy()


def fmt(x: float, digits: int = 2) -> str:
    if x is None or not np.isfinite(x):
        return "–"
    return f"{x:.{digits}f}"


def fmt_x(x: float) -> str:
    return f"{fmt(x)}x"


def tri_text(y: tuple[float, float, float]) -> str:
    """(mean, min, max) as ``1.23x (1.10-1.40)``, or one number when min = max."""
    return fmt_x(y[0]) if y[1] == y[2] else f"{fmt(y[0])}x ({fmt(y[1])}-{fmt(y[2])})"


def rng_text(v: np.ndarray) -> str:
    """Mean over replicates with their range."""
    if len(v) == 1:
        return fmt_x(float(v[0]))
    return f"{fmt(float(np.mean(v)))}x ({fmt(float(np.min(v)))}-{fmt(float(np.max(v)))})"


def table(header: list[str], rows: list[list[str]]) -> str:
    out = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    out += ["| " + " | ".join(r) + " |" for r in rows]
    return "\n".join(out)


# -- figures ----------------------------------------------------------------------------------------


def save(fig: Figure, name: str) -> str:
    """Writes a figure as a PNG under FIGS; returns its path relative to the page."""
    FIGS.mkdir(parents=True, exist_ok=True)
    path = FIGS / f"{name}.png"
    fig.savefig(path, dpi=200, metadata={"Software": None})
    return f"aalo/{name}.png"


def bar_groups(
    ax: Any, groups: list[str], series: dict[str, list[tuple[float, float, float]]], ref: float | None = 1.0
) -> None:
    """Grouped bars: one group per entry of ``groups``, one bar per series; each value is
    (mean, min, max) and gets an error bar when min < max."""
    n = len(series)
    width = 0.8 / max(n, 1)
    x = np.arange(len(groups))
    for i, (label, vals) in enumerate(series.items()):
        mean = np.array([v[0] for v in vals])
        lo = np.array([v[0] - v[1] for v in vals])
        hi = np.array([v[2] - v[0] for v in vals])
        pos = x - 0.4 + width * (i + 0.5)
        ax.bar(pos, mean, width, label=label, color=_COLORS[i % len(_COLORS)], hatch=_HATCHES[i % len(_HATCHES)],
               edgecolor="black", linewidth=0.4)
        if (lo > 0).any() or (hi > 0).any():
            ax.errorbar(pos, mean, yerr=[lo, hi], fmt="none", ecolor="black", elinewidth=0.6, capsize=1.5)
    ax.set_xticks(x, groups)
    if ref is not None:
        ax.axhline(ref, color="black", linewidth=0.7, linestyle="--")


def ratio_axis(ax: Any, log: bool) -> None:
    """A y axis of ratios: log or linear, ticks as plain numbers (0.5, 1, 2, 10)."""
    from matplotlib.ticker import FuncFormatter, NullFormatter

    if log:
        from matplotlib.ticker import FixedLocator

        ax.set_yscale("log")
        ax.yaxis.set_major_locator(FixedLocator([0.1, 0.2, 0.5, 1, 2, 5, 10, 20, 50, 100, 200, 500, 1000]))
        ax.yaxis.set_major_formatter(FuncFormatter(lambda y, _: f"{y:g}"))
        ax.yaxis.set_minor_formatter(NullFormatter())


def top_legend(fig: Figure, ax: Any, ncols: int = 4) -> None:
    """One legend for a figure of panels, above them."""
    handles, labels = ax.get_legend_handles_labels()
    fig.legend(handles, labels, loc="lower center", ncols=ncols, bbox_to_anchor=(0.5, 1.0), fontsize=7)


def tri(v: np.ndarray) -> tuple[float, float, float]:
    return (float(np.mean(v)), float(np.min(v)), float(np.max(v)))


class Page:
    """The page being written: text blocks in order."""

    def __init__(self) -> None:
        self.parts: list[str] = []

    def add(self, text: str) -> None:
        self.parts.append(text.strip("\n"))

    def text(self) -> str:
        return "\n\n".join(self.parts) + "\n"
