"""The Baraat page's numbers: the paper's (Table 4 with its policies and statistics), ours read from
the result stores (a label's CCTs, reductions and ratios paired by seed, the worst task, run times),
and how the page writes them (percentages, ratios, tables, whether a gap is worth explaining). Shared
by the page (page.py), its packet-level section (packet.py) and regenerate.py, so it lives apart from
each."""

from __future__ import annotations

from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[2]
FIGURES = ROOT / "docs" / "reproductions" / "baraat"
#: A gap worth explaining: ours and the paper's differ by more than this factor.
GAP = 1.5
SIZES = {"bing": "Bing", "analytics": "Data-analytics", "uniform": "Uniform"}
#: Table 4: reduction with Baraat relative to each policy (median, p95, p99), per workload.
TABLE4 = {
    "fair": {"bing": (-5, 30, 34), "analytics": (25, 58, 62), "uniform": (7, 37, 40)},
    "srpt": {"bing": (4, 70, 76), "analytics": (4, 43, 61), "uniform": (38, 66, 75)},
    "stf": {"bing": (-8, 84, 97), "analytics": (0, 37, 64), "uniform": (0, 1, 6)},
    "fifo": {"bing": (28, 27, 16), "analytics": (94, 93, 84), "uniform": (0, 0, 0)},
}
POLICY = {"fair": "RCP (`fair`)", "srpt": "pFabric (`srpt`)", "stf": "STF (`stf`)", "fifo": "Orchestra (`fifo`)"}
STATS = {"median": 0.5, "p95": 0.95, "p99": 0.99}
#: Experiment files whose store is not there (the page marks their numbers n/a).
MISSING: list[str] = []


# -- numbers --------------------------------------------------------------------------------------


def ccts(data, key: str, label: str, replicate: int | None = None, **where) -> np.ndarray:
    """CCTs (s) of ``label`` in ``key``'s store, at the workload values ``where``, every replicate or one."""
    pts, cof = data[key]
    sel = pts["label"] == label
    for k, v in where.items():
        col = k if k in pts.columns else f"workload.{k}"
        sel &= pts[col].astype(str) == str(v)
    if replicate is not None:
        sel &= pts["replicate"] == replicate
    return cof[cof["point"].isin(pts[sel]["point"])]["cct_s"].to_numpy()


def replicates(data, key: str) -> list[int]:
    return sorted(data[key][0]["replicate"].unique().tolist())


def fx(x: float) -> str:
    return "n/a" if np.isnan(x) else f"{x:.2f}x"


def stat(x: np.ndarray, s: str) -> float:
    return float(np.mean(x)) if s == "mean" else float(np.quantile(x, STATS[s]))


def reduction(data, key: str, ours: str, other: str, s: str, **where) -> float:
    """1 - ours / other for statistic ``s``, averaged over replicates (paired), in %."""
    r = []
    for rep in replicates(data, key):
        a, b = ccts(data, key, ours, rep, **where), ccts(data, key, other, rep, **where)
        if len(a) and len(b):
            r.append(1.0 - stat(a, s) / stat(b, s))
    return 100.0 * float(np.mean(r)) if r else float("nan")


def ratio(data, key: str, a: str, b: str, s: str, **where) -> float:
    """stat(a) / stat(b), averaged over replicates."""
    r = []
    for rep in replicates(data, key):
        x, y = ccts(data, key, a, rep, **where), ccts(data, key, b, rep, **where)
        if len(x) and len(y):
            r.append(stat(x, s) / stat(y, s))
    return float(np.mean(r)) if r else float("nan")


def wall(data, key: str, label: str, **where) -> float:
    pts, _ = data[key]
    sel = pts["label"] == label
    for k, v in where.items():
        sel &= pts[f"workload.{k}"].astype(str) == str(v)
    return float(pts[sel]["elapsed_s"].sum())


def ms_stats(x: np.ndarray) -> list[str]:
    """Mean, median, p95 and p99 of CCTs ``x`` (s) in ms, or n/a where there are none (a store not run)."""
    if not len(x):
        return ["n/a"] * 4
    return [f"{1e3 * v:.2f}" for v in (np.mean(x), np.median(x), np.quantile(x, 0.95), np.quantile(x, 0.99))]


def pc(x: float) -> str:
    return "n/a" if np.isnan(x) else f"{x:.0f}%"


def gap(paper: float, ours: float) -> bool:
    """Whether reductions (in %) differ by more than GAP as CCT ratios (1 - r)."""
    a, b = 1 - paper / 100, 1 - ours / 100
    if a <= 0 or b <= 0:
        return True
    return max(a / b, b / a) > GAP


def table(header: list[str], rows: list[list[str]]) -> str:
    out = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    out += ["| " + " | ".join(r) + " |" for r in rows]
    return "\n".join(out)


def max_red(data, key: str, lab: str, **where) -> float:
    """Reduction of the worst TCT against fair's, %, averaged over replicates."""
    r = []
    for rep in replicates(data, key):
        a, b = ccts(data, key, lab, rep, **where), ccts(data, key, "fair", rep, **where)
        if len(a) and len(b):
            r.append(1.0 - a.max() / b.max())
    return 100.0 * float(np.mean(r)) if r else float("nan")
