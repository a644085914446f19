"""A Markdown page of an experiment: what ran, its tables and its figures.

``write_report(store)`` writes ``<store>/report.md`` (and the figures, with
:func:`coflowkit.experiments.plots.make_figures`, unless told not to): the experiment
and its grid, how many points finished or failed, the per-bin tables at the
plot slice (improvement or normalized CCT of the mean and the p95, and the
mean CCT itself), one table per swept parameter and metric, the figures,
the failed points with their errors, and the commands that reproduce it.
Values over seeds are the mean with the range in brackets, as in the
figures (:mod:`coflowkit.experiments.analysis`).
"""

from __future__ import annotations

import math
import os
from pathlib import Path
from typing import Any

import pandas as pd

from ..util import atomic_path
from .analysis import BAR_BINS, StoreData, load_store, metric_info
from .experiment import DEFAULT_BINS
from .plots import FigureFile, make_figures

__all__ = ["write_report"]

_MAX_FAILED_ROWS = 50


def write_report(
    source: str | os.PathLike[str] | StoreData,
    out: str | os.PathLike[str] | None = None,
    figures: bool = True,
) -> Path:
    """Write the report of a store (a directory, an experiment file, or loaded data) to
    ``out`` (default ``<store>/report.md``), figures in ``<store>/figures``."""
    data = source if isinstance(source, StoreData) else load_store(source)
    path = Path(out) if out is not None else data.store.root / "report.md"
    written: list[FigureFile] = []
    if figures and not data.done.empty:
        written = make_figures(data, data.store.root / "figures", formats=("png", "pdf"))
    text = _render(data, path, {f.name: f for f in written})
    with atomic_path(path) as tmp:
        tmp.write_text(text, encoding="utf-8")
    return path


def _render(data: StoreData, path: Path, figures: dict[str, FigureFile]) -> str:
    exp = data.experiment
    pts = data.points
    counts = pts["status"].value_counts()
    n_done, n_failed, n_pending = (int(counts.get(s, 0)) for s in ("done", "failed", "pending"))
    seeds = exp["seeds"]
    lines = [f"# Experiment `{exp['name']}`", ""]
    if exp["description"]:
        lines += [exp["description"], ""]
    versions = sorted({str(v) for v in pts["coflowkit_version"].dropna()})
    lines += [
        "| | |",
        "|---|---|",
        f"| file | `{exp['file']}` |",
        f"| store | `{data.store.root}` |",
        f"| points | {len(pts)}: {n_done} done, {n_failed} failed, {n_pending} not run |",
        f"| coflowkit | {', '.join(versions) or '-'} |",
        f"| workload | {_workload_text(exp['workload'])} |",
        f"| topology | {exp['topology'] or 'a big switch sized to the workload (1 Gbit/s ports)'} |",
        *_engine_rows(exp),
        f"| schedulers | {', '.join(f'`{s}`' for s in _scheduler_texts(exp))} |",
        f"| baseline | `{data.baseline}` |",
        f"| seeds | {seeds} per workload (experiment seed {exp['seed']}) |",
        f"| simulation time | {_fmt_s(float(pts['elapsed_s'].fillna(0).sum()))} s over all points run |",
        "",
    ]
    if data.axes:
        lines += ["## Grid", "", "| parameter | values |", "|---|---|"]
        for a in data.axes:
            lines.append(f"| `{a['name']}` | {', '.join(data.tick(a['name'], v) for v in a['values'])} |")
        lines.append("")
        if exp.get("grid") == "one-at-a-time":
            lines += [
                "One parameter at a time: every workload and topology parameter at the center "
                f"({data.slice_text()}) but the one varied.",
                "",
            ]
    if n_done == 0:
        lines += ["No point has finished yet: run the experiment (`coflowkit run`).", ""]
        return "\n".join(lines + _failed(data) + _reproduce(data, path))
    spread = " Values are the mean over the seeds with their range in brackets." if seeds > 1 else ""
    at = data.slice_text()
    lines += [f"## Per bin{f' at {at}' if at else ''}", ""]
    lines += [
        _bins_text(data.bin_thresholds)
        + f" Improvement = {data.baseline}'s CCT / the scheduler's, on the same workloads (above 1 is better)."
        + spread,
        "",
    ]
    kind = exp["plot"]["bars"]
    for stat in ("mean", "p95"):
        title = f"{'Improvement in' if kind == 'improvement' else 'Normalized'} {stat} CCT"
        lines += [f"### {title} (×)", "", *_bins_table(data, stat, kind, ratio=True), ""]
        lines += _figure(figures, f"bins-{kind}-{stat}", path)
    lines += ["### Mean CCT (s)", "", *_bins_table(data, "mean", None, ratio=False), ""]
    lines += _figure(figures, "cct-cdf", path)
    lines += _figure(figures, "cct-ccdf", path)
    for axis in data.sweep_axes():
        param = axis.split(".", 1)[1]
        others = data.slice_text(free=axis)
        lines += [f"## Against {param}{f' ({others})' if others else ''}", ""]
        for metric in data.metrics():
            info = metric_info(metric)
            table = _sweep_table(data, axis, metric)
            if not table:
                continue
            label = " ".join(info.label.format(baseline=data.baseline).split())
            lines += [f"### {label}", "", *table, ""]
            lines += _figure(figures, f"sweep-{param}-{metric}", path)
    return "\n".join(lines + _failed(data) + _reproduce(data, path))


def _bins_text(bins: dict[str, int]) -> str:
    short, narrow = bins["short_below"], bins["narrow_up_to"]
    source = "as in Aalo (SIGCOMM 2015) 7.1" if bins == DEFAULT_BINS else "as the experiment's `bins` sets them"
    return (
        f"Bins {source}: short (S) when the longest flow is under {_size_text(short)}, "
        f"narrow (N) with at most {narrow} flows; All is every coflow."
    )


def _size_text(n: int) -> str:
    for unit, scale in (("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if n % scale == 0:
            return f"{n // scale} {unit}"
    return f"{n} bytes"


def _workload_text(w: dict[str, Any]) -> str:
    if "trace" in w:
        return f"trace `{w['trace']}`"
    params = ", ".join(f"{k}={v}" for k, v in w["params"].items())
    return f"`{w['generator']}` (preset {w['preset']}){': ' + params if params else ''}"


def _engine_rows(exp: dict[str, Any]) -> list[str]:
    """The engine's row of the head table: only for the packet engines (older stores have no key)."""
    engine = exp.get("engine", "flow")
    if engine == "flow":
        return []
    own = [f"{s['label']}: `{s['packet']}`" for s in exp["schedulers"] if s.get("packet")]
    options = f" options `{exp['packet']}`" if exp.get("packet") else ""
    what = {"packet": "packet level (docs/packet-engine.md)", "decomposed": "packet level one link at a time (docs/decomposed-engine.md)"}[engine]
    return [f"| engine | {what}{options}{'; ' if own else ''}{', '.join(own)} |"]


def _scheduler_texts(exp: dict[str, Any]) -> list[str]:
    out = []
    for s in exp["schedulers"]:
        text = s["spec"] if s["label"] == s["spec"] else f"{s['label']} = {s['spec']}"
        if s["axes"]:
            text += f" sweeping {', '.join(a.split('.', 1)[1] for a in s['axes'])}"
        out.append(text)
    return out


def _bins_table(data: StoreData, stat: str, kind: str | None, ratio: bool) -> list[str]:
    df = data.bins(stat, kind)
    rows = ["| scheduler | " + " | ".join(BAR_BINS) + " |", "|---|" + "---:|" * len(BAR_BINS)]
    for label in data.labels:
        g = df[df["label"] == label].set_index("bin")
        if g.empty:
            continue
        cells = [_cell(g.loc[b] if b in g.index else None, ratio, data.experiment["seeds"]) for b in BAR_BINS]
        rows.append(f"| {label} | " + " | ".join(cells) + " |")
    return rows


def _sweep_table(data: StoreData, axis: str, metric: str) -> list[str]:
    info = metric_info(metric)
    df = data.sweep(axis, info)
    if df.empty:
        return []
    values = next(a["values"] for a in data.axes if a["name"] == axis)
    ratio = info.relative is not None
    header = " | ".join(data.tick(axis, v) for v in values)
    rows = [f"| scheduler | {header} |", "|---|" + "---:|" * len(values)]
    refs = data.references(axis, info).set_index("label") if axis.startswith("scheduler.") else None
    param = axis.split(".", 1)[1]
    for label in data.labels:
        g = df[df["label"] == label]
        if not g.empty:
            by_x = {_key(x): r for x, (_, r) in zip(g["x"], g.iterrows(), strict=True)}
            cells = [_cell(by_x.get(_key(v)), ratio, data.experiment["seeds"], info.scale == 100.0) for v in values]
            rows.append(f"| {label} | " + " | ".join(cells) + " |")
        elif refs is not None and label in refs.index and not (ratio and label == data.baseline):
            # A scheduler without this parameter: one value, the same in every column.
            cell = _cell(refs.loc[label], ratio, data.experiment["seeds"], info.scale == 100.0)
            rows.append(f"| {label} (no {param}) | " + " | ".join([cell] * len(values)) + " |")
    return rows


def _key(x: Any) -> str:
    if isinstance(x, float) and x.is_integer():
        return str(int(x))
    return str(x)


def _cell(row: pd.Series | None, ratio: bool, seeds: int, percent: bool = False) -> str:
    if row is None or not math.isfinite(float(row["mean"])):
        return "-"

    def fmt(x: float) -> str:
        if percent:
            return f"{x:.1f}%"
        return f"{x:.2f}" if ratio else _fmt_s(x)

    text = fmt(float(row["mean"]))
    if seeds > 1 and int(row["n"]) > 1:
        text += f" ({fmt(float(row['min']))}–{fmt(float(row['max']))})"
    return text


def _fmt_s(x: float) -> str:
    if x == 0:
        return "0"
    if abs(x) >= 1e4:
        return f"{x:.0f}"
    return f"{x:.4g}"


def _figure(figures: dict[str, FigureFile], name: str, report: Path) -> list[str]:
    f = figures.get(name)
    if f is None:
        return []
    png = next((p for p in f.paths if p.suffix == ".png"), f.paths[0])
    rel = os.path.relpath(png, report.parent)
    pdf = next((p for p in f.paths if p.suffix == ".pdf"), None)
    link = f" ([PDF]({os.path.relpath(pdf, report.parent)}))" if pdf else ""
    return [f"![{f.caption}]({rel})", "", f"*{f.caption}*{link}", ""]


def _failed(data: StoreData) -> list[str]:
    failed = data.points[data.points["status"] == "failed"]
    if failed.empty:
        return []
    lines = ["## Failed points", "", f"{len(failed)} points failed; a re-run tries them again.", ""]
    lines += ["| point | scheduler | replicate | values | error |", "|---:|---|---:|---|---|"]
    axes = [a["name"] for a in data.axes]
    for _, r in failed.head(_MAX_FAILED_ROWS).iterrows():
        coords = ", ".join(f"{a.split('.', 1)[1]}={r[a]}" for a in axes if pd.notna(r[a]))
        error = str(r["error"]).replace("|", "\\|")
        lines.append(f"| {r['index']} | `{r['scheduler']}` | {r['replicate']} | {coords} | {error} |")
    if len(failed) > _MAX_FAILED_ROWS:
        lines.append(f"| ... | {len(failed) - _MAX_FAILED_ROWS} more in points.parquet | | | |")
    return [*lines, ""]


def _reproduce(data: StoreData, report: Path) -> list[str]:
    exp = data.experiment
    store = data.store.root
    return [
        "## Reproduce and trace",
        "",
        "```sh",
        f"coflowkit run {exp['file']} --out {store}",
        f"coflowkit report {store}",
        "```",
        "",
        f"`{store}/points.parquet` has one row per point with its full configuration (`config`: workload "
        "parameters with the derived seed, topology, scheduler spec, replicate) and the coflowkit version; "
        f"`{store}/coflows.parquet` has one row per (point, coflow), joined on `point`.",
        "",
    ]
