"""The result store of an experiment: Parquet, one file per finished point.

A store is a directory::

    DIR/experiment.json     the checked experiment (what plots and reports read)
    DIR/experiment.toml     the experiment file as it was run (or .yaml)
    DIR/grid.json           every point of the grid: key, label, spec, replicate, seed, axis values
    DIR/parts/<key>.parquet          a finished point: its coflows, and its record in the metadata
    DIR/parts/<key>.failed.parquet   a failed point: no rows, its record (with the error) in the metadata
    DIR/points.parquet      one row per point: configuration, status, summary, metrics
    DIR/coflows.parquet     one row per (point, coflow) of every finished point

The part files are the record: each is written whole to a temporary file
and renamed into place when its point finishes, so a crash or an interrupt
loses at most the points that were running, never a finished one, and
never leaves a half-written file. ``points.parquet`` and ``coflows.parquet``
are rebuilt from the grid and the parts (:meth:`Store.consolidate`) at the
end of every run, and again by ``plot`` and ``report`` when a part is newer.

Every point's record carries its full configuration (``config``, JSON: the
workload with every parameter and its derived seed, the topology, the
scheduler spec, the replicate, the axis values, the experiment's name, file
and seed) and the coflowkit version that computed it, so any number in a
figure traces back to what produced it: join ``coflows.parquet`` to
``points.parquet`` on ``point``.

``points.parquet`` columns: ``index`` (grid order), ``point`` (the key),
``cell`` (points sharing it ran on the same workload and topology),
``label``, ``scheduler`` (full spec), ``replicate``, ``seed`` (derived; null
for a trace), one column per axis (``workload.load``, ``scheduler.threshold``,
...; null where a point has no such axis), ``status`` (done, failed,
pending), ``error``, ``coflowkit_version``, ``n_events``, ``elapsed_s``,
``ran_on`` (host:pid), ``finished_at`` (UTC), CCT statistics for all coflows
(``cct_mean_s``, ``cct_median_s``, ``cct_p95_s``, ``cct_p99_s``,
``cct_max_s``) and per bin (``SN_n_coflows``,
``SN_cct_mean_s``, ...), the metrics of :meth:`Results.metrics`, and
``config``. ``elapsed_s``, ``ran_on`` and ``finished_at`` say how a point
ran, not what it computed (:data:`VOLATILE_COLUMNS`): two runs of one
experiment agree on every other column.
"""

from __future__ import annotations

import datetime as _dt
import json
import os
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from ..util import atomic_path
from .experiment import Experiment, Point
from ..sim.results import BINS, COFLOW_COLUMNS, METRIC_COLUMNS

__all__ = ["Store", "VOLATILE_COLUMNS", "StoreError"]

#: Columns of points.parquet that depend on how and where a point ran.
VOLATILE_COLUMNS = ("elapsed_s", "ran_on", "finished_at")
_STATS = ("mean", "median", "p95", "p99", "max")
_RECORD_KEY = b"coflowkit.point"
_EXPERIMENT_KEY = b"coflowkit.experiment"
_VERSION_KEY = b"coflowkit.version"


class StoreError(ValueError):
    """A store that cannot be read (missing files, a part that does not parse)."""


def summary_columns() -> list[str]:
    """The CCT summary columns of points.parquet, in order."""
    cols = [f"cct_{s}_s" for s in _STATS]
    for b in BINS[1:]:
        cols += [f"{b}_n_coflows", *(f"{b}_cct_{s}_s" for s in _STATS)]
    return cols


class Store:
    """An experiment's result directory."""

    def __init__(self, root: str | os.PathLike[str]):
        self.root = Path(root)
        self.parts = self.root / "parts"

    def __repr__(self) -> str:
        return f"Store({str(self.root)!r})"

    # -- writing -------------------------------------------------------------------------------

    def begin(self, experiment: Experiment, points: list[Point]) -> None:
        """Record the experiment and its grid (before any point runs)."""
        self.parts.mkdir(parents=True, exist_ok=True)
        # Temporary files of a runner that was killed while writing (the caller holds the store's lock).
        for entry in os.scandir(self.parts):
            if entry.name.startswith(".") and entry.name.endswith(".tmp"):
                os.unlink(entry.path)
        _write_text(self.root / "experiment.json", json.dumps(experiment.to_json(), indent=2) + "\n")
        _write_text(self.root / f"experiment{experiment.path.suffix.lower()}", experiment.text)
        grid = [
            {
                "index": p.index,
                "point": p.key,
                "cell": p.cell,
                "label": p.label,
                "scheduler": p.scheduler,
                "replicate": p.replicate,
                "seed": p.seed,
                "coords": p.coords,
                "config": p.metadata(experiment),
            }
            for p in points
        ]
        _write_text(self.root / "grid.json", json.dumps(grid, indent=1) + "\n")

    def status(self) -> dict[str, str]:
        """Every point with a part file: key -> ``done`` or ``failed``."""
        out: dict[str, str] = {}
        if not self.parts.is_dir():
            return out
        for entry in os.scandir(self.parts):
            name = entry.name
            if name.startswith(".") or not name.endswith(".parquet"):
                continue
            stem = name[: -len(".parquet")]
            if stem.endswith(".failed"):
                out.setdefault(stem[: -len(".failed")], "failed")
            else:
                out[stem] = "done"
        return out

    def write_point(self, point: Point, config: Mapping[str, Any], result: Mapping[str, Any]) -> None:
        """Write a point's part file (replacing an earlier failure's)."""
        record = {k: v for k, v in result.items() if k != "coflows"}
        record["point"] = point.key
        record["config"] = config
        meta = {_RECORD_KEY: json.dumps(record).encode()}
        done = result["status"] == "done"
        table = result["coflows"] if done else _empty_coflows()
        table = table.replace_schema_metadata(meta)
        path = self.parts / (f"{point.key}.parquet" if done else f"{point.key}.failed.parquet")
        with atomic_path(path) as tmp:
            pq.write_table(table, tmp)
        if done:
            (self.parts / f"{point.key}.failed.parquet").unlink(missing_ok=True)

    # -- reading -------------------------------------------------------------------------------

    def experiment(self) -> dict[str, Any]:
        """The experiment as recorded by the last run."""
        path = self.root / "experiment.json"
        if not path.is_file():
            raise StoreError(f"{self.root}: not an experiment store (no experiment.json; run the experiment first)")
        experiment: dict[str, Any] = json.loads(path.read_text())
        return experiment

    def grid(self) -> list[dict[str, Any]]:
        path = self.root / "grid.json"
        if not path.is_file():
            raise StoreError(f"{self.root}: not an experiment store (no grid.json; run the experiment first)")
        grid: list[dict[str, Any]] = json.loads(path.read_text())
        return grid

    def read_part(self, key: str, status: str) -> tuple[pa.Table, dict[str, Any]]:
        """A part's coflow rows and its record."""
        path = self.parts / (f"{key}.parquet" if status == "done" else f"{key}.failed.parquet")
        try:
            table = pq.read_table(path)
            record = json.loads(table.schema.metadata[_RECORD_KEY])
        except (OSError, pa.ArrowException, KeyError, ValueError) as e:
            raise StoreError(f"{path}: not a readable part file ({' '.join(str(e).split())})") from None
        return table.replace_schema_metadata(None), record

    def is_stale(self) -> bool:
        """True when a part or the grid is newer than points.parquet."""
        points = self.root / "points.parquet"
        if not points.is_file():
            return True
        since = points.stat().st_mtime_ns
        newest = (self.root / "grid.json").stat().st_mtime_ns
        if self.parts.is_dir():
            for entry in os.scandir(self.parts):
                newest = max(newest, entry.stat().st_mtime_ns)
        return newest > since

    def consolidate(self, fresh: Mapping[str, tuple[pa.Table, dict[str, Any]]] | None = None) -> tuple[int, int]:
        """Rebuild points.parquet and coflows.parquet from the grid and the parts.

        ``fresh`` holds parts already in memory (key -> (coflows, record)), so a
        run need not read back what it just wrote. Parts of points no longer in
        the grid are left alone and not included. Returns (points, coflow rows)."""
        fresh = fresh or {}
        experiment = self.experiment()
        grid = self.grid()
        status = self.status()
        axes = [a["name"] for a in experiment["axes"]]
        rows: list[dict[str, Any]] = []
        tables: list[pa.Table] = []
        for g in grid:
            key = g["point"]
            st = status.get(key, "pending")
            row: dict[str, Any] = {
                "index": g["index"],
                "point": key,
                "cell": g["cell"],
                "label": g["label"],
                "scheduler": g["scheduler"],
                "replicate": g["replicate"],
                "seed": g["seed"],
                **{a: g["coords"].get(a) for a in axes},
                "status": st,
            }
            record: dict[str, Any] = {}
            if st != "pending":
                if key in fresh and fresh[key][1]["status"] == st:
                    table, record = fresh[key]
                else:
                    table, record = self.read_part(key, st)
                if st == "done":
                    tables.append(_with_point(table, key))
            row.update(_record_columns(record, g["config"]))
            rows.append(row)
        meta = {
            _EXPERIMENT_KEY: json.dumps(experiment).encode(),
            _VERSION_KEY: ",".join(sorted({r["coflowkit_version"] for r in rows if r["coflowkit_version"]})).encode(),
        }
        points = _points_table(rows, axes).replace_schema_metadata(meta)
        coflows = (pa.concat_tables(tables) if tables else _with_point(_empty_coflows(), None)).replace_schema_metadata(
            meta
        )
        with atomic_path(self.root / "coflows.parquet") as tmp:
            pq.write_table(coflows, tmp)
        # points.parquet last: its time stamp says the store is consolidated.
        with atomic_path(self.root / "points.parquet") as tmp:
            pq.write_table(points, tmp)
        return points.num_rows, coflows.num_rows

    def points(self) -> pa.Table:
        """points.parquet (consolidated first if a part is newer)."""
        if self.is_stale():
            self.consolidate()
        return pq.read_table(self.root / "points.parquet")

    def coflows(self) -> pa.Table:
        """coflows.parquet (consolidated first if a part is newer)."""
        if self.is_stale():
            self.consolidate()
        return pq.read_table(self.root / "coflows.parquet")


def _record_columns(record: Mapping[str, Any], config: Mapping[str, Any]) -> dict[str, Any]:
    """A part's record as points.parquet columns (nulls for a pending point)."""
    out: dict[str, Any] = {
        "error": record.get("error"),
        "coflowkit_version": record.get("coflowkit_version"),
        "n_events": record.get("n_events"),
        "elapsed_s": record.get("elapsed_s"),
        "ran_on": record.get("ran_on"),
        "finished_at": record.get("finished_at"),
    }
    summary = {row["bin"]: row for row in record.get("summary") or []}
    for b in BINS:
        row = summary.get(b, {})
        prefix = "" if b == "All" else f"{b}_"
        if b != "All":  # the count of all coflows is the metrics' n_coflows
            out[f"{b}_n_coflows"] = row.get("count")
        for s in _STATS:
            out[f"{prefix}cct_{s}_s"] = row.get(s)
    metrics = record.get("metrics") or {}
    for m in METRIC_COLUMNS:
        out[m] = metrics.get(m)
    out["config"] = json.dumps(config, sort_keys=True)
    return out


def _points_table(rows: list[dict[str, Any]], axes: Iterable[str]) -> pa.Table:
    """points.parquet from rows, with fixed types (an axis: numbers if every value is one, else text)."""
    types: dict[str, pa.DataType] = {
        "index": pa.int64(),
        "point": pa.string(),
        "cell": pa.string(),
        "label": pa.string(),
        "scheduler": pa.string(),
        "replicate": pa.int64(),
        "seed": pa.int64(),
        "status": pa.string(),
        "error": pa.string(),
        "coflowkit_version": pa.string(),
        "n_events": pa.int64(),
        "elapsed_s": pa.float64(),
        "ran_on": pa.string(),
        "finished_at": pa.string(),
        "config": pa.string(),
    }
    for c in summary_columns():
        types[c] = pa.int64() if "n_coflows" in c else pa.float64()
    for m in METRIC_COLUMNS:
        integer = m.startswith("n_") or m.endswith(("_deadlines", "_misses"))
        types[m] = pa.int64() if integer else pa.float64()
    axes = list(axes)
    order = ["index", "point", "cell", "label", "scheduler", "replicate", "seed", *axes, "status", "error"]
    order += ["coflowkit_version", "n_events", "elapsed_s", "ran_on", "finished_at", *summary_columns()]
    order += [*METRIC_COLUMNS, "config"]
    arrays = {}
    for name in order:
        values = [r.get(name) for r in rows]
        if name in types:
            arrays[name] = pa.array(values, type=types[name])
        else:
            arrays[name] = _axis_array(values)
    return pa.table(arrays)


def _axis_array(values: list[Any]) -> pa.Array:
    present = [v for v in values if v is not None]
    if present and all(isinstance(v, bool) for v in present):
        return pa.array(values, type=pa.bool_())
    if present and all(isinstance(v, int) and not isinstance(v, bool) for v in present):
        return pa.array(values, type=pa.int64())
    if present and all(isinstance(v, int | float) and not isinstance(v, bool) for v in present):
        return pa.array([None if v is None else float(v) for v in values], type=pa.float64())
    return pa.array([None if v is None else str(v) for v in values], type=pa.string())


def _empty_coflows() -> pa.Table:
    types = {
        "coflow_id": pa.uint64(),
        "job_id": pa.uint64(),
        "stage_id": pa.uint32(),
        "deadline_met": pa.bool_(),
        "width": pa.uint32(),
        "length_bytes": pa.uint64(),
        "total_bytes": pa.uint64(),
        "bin": pa.string(),
    }
    return pa.table({c: pa.array([], type=types.get(c, pa.float64())) for c in COFLOW_COLUMNS})


def _with_point(table: pa.Table, key: str | None) -> pa.Table:
    return table.add_column(0, "point", pa.array([key] * table.num_rows, type=pa.string()))


def _write_text(path: Path, text: str) -> None:
    with atomic_path(path) as tmp:
        tmp.write_text(text, encoding="utf-8")


def utc_now() -> str:
    """The time now, UTC, to the second (ISO 8601)."""
    return _dt.datetime.now(_dt.UTC).replace(microsecond=0).isoformat()
