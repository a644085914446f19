"""Traces in and out: coflow-benchmark text, native CSV and native Parquet.

The Rust core reads coflow-benchmark traces (``.txt``) and native CSV
(``.csv``) itself. Native Parquet (``.parquet``) is read and written here with
pyarrow, through the same native columns the core defines (one row per flow:
``coflow_id, arrival_ns, src, dst, bytes, job_id, stage_id, deadline_ns``;
the last three may be null). The host count travels in the Parquet schema's
metadata under ``coflowkit.n_hosts``, as it does in the CSV's
``# n_hosts=<N>`` line.

Bad input is refused at the door with one ``ValueError`` naming the file, the
1-based row and the column, ``<file>:<row>: <column>: <message>``, the same
shape as the core's messages. Row 0 means the file as a whole.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from . import _core
from ._atomic import atomic_path
from ._core import Workload

__all__ = ["load_trace", "write_trace", "workload_to_table", "workload_from_table", "FORMATS"]

#: Trace formats by file extension.
FORMATS = {".txt": "benchmark", ".csv": "csv", ".parquet": "parquet"}

_REQUIRED = {"coflow_id": np.uint64, "arrival_ns": np.uint64, "src": np.uint32, "dst": np.uint32, "bytes": np.uint64}
_OPTIONAL = {"job_id": np.uint64, "stage_id": np.uint32, "deadline_ns": np.uint64}
_ARROW_TYPES = {np.uint64: pa.uint64(), np.uint32: pa.uint32()}
_N_HOSTS_KEY = b"coflowkit.n_hosts"
_NATIVE = ", ".join(_core.NATIVE_COLUMNS)


def _format_of(path: Path, fmt: str | None) -> str:
    if fmt is not None:
        if fmt not in FORMATS.values():
            raise ValueError(f"fmt: unknown trace format {fmt!r} (one of {', '.join(FORMATS.values())})")
        return fmt
    try:
        return FORMATS[path.suffix.lower()]
    except KeyError:
        known = ", ".join(f"{ext} ({name})" for ext, name in FORMATS.items())
        raise ValueError(f"{path}: cannot tell the trace format from the extension {path.suffix!r} ({known})") from None


def load_trace(path: str | os.PathLike[str], fmt: str | None = None) -> Workload:
    """Read a trace; ``fmt`` (benchmark, csv, parquet) defaults to the extension's."""
    p = Path(path)
    kind = _format_of(p, fmt)
    if kind != "parquet":
        return _core.load_trace(p, kind)
    if not p.exists():
        raise FileNotFoundError(f"{p}: No such file or directory")
    try:
        table = pq.read_table(p)
    except (pa.ArrowException, OSError) as e:
        raise ValueError(f"{p}:0: file: not a readable Parquet file ({_one_line(e)})") from None
    meta = table.schema.metadata or {}
    n_hosts = None
    if _N_HOSTS_KEY in meta:
        try:
            n_hosts = int(meta[_N_HOSTS_KEY])
        except ValueError:
            raise ValueError(f"{p}:0: n_hosts: metadata {meta[_N_HOSTS_KEY]!r} is not an integer") from None
    return workload_from_table(table, source=str(p), n_hosts=n_hosts)


def workload_from_table(table: pa.Table, source: str = "<table>", n_hosts: int | None = None) -> Workload:
    """Build a workload from an Arrow table with the native columns."""
    names = table.column_names
    unknown = [n for n in names if n not in _REQUIRED and n not in _OPTIONAL]
    if unknown:
        raise ValueError(f"{source}:0: {unknown[0]}: unknown column (native columns: {_NATIVE})")
    cols: dict[str, Any] = {}
    for name, dtype in _REQUIRED.items():
        if name not in names:
            raise ValueError(f"{source}:0: {name}: column is missing (native columns: {_NATIVE})")
        cols[name], _ = _unsigned(table.column(name), name, dtype, source, required=True)
    for name, dtype in _OPTIONAL.items():
        if name in names:
            cols[name], cols[f"{name}_valid"] = _unsigned(table.column(name), name, dtype, source, required=False)
    if n_hosts is not None and not 0 <= n_hosts <= np.iinfo(np.uint32).max:
        raise ValueError(f"{source}:0: n_hosts: {n_hosts} is out of range")
    return _core.workload_from_columns(**cols, n_hosts=n_hosts, source=source)


def _unsigned(
    column: pa.ChunkedArray, name: str, dtype: Any, source: str, *, required: bool
) -> tuple[np.ndarray, np.ndarray]:
    """A column as (values of ``dtype``, validity), checked row by row."""
    arr = column.combine_chunks() if isinstance(column, pa.ChunkedArray) else column
    if pa.types.is_null(arr.type) and not required:
        n = len(arr)
        return np.zeros(n, dtype=dtype), np.zeros(n, dtype=bool)
    if not pa.types.is_integer(arr.type):
        raise ValueError(f"{source}:0: {name}: has type {arr.type}, expected unsigned integers")
    valid = arr.is_valid().to_numpy(zero_copy_only=False)
    if required and arr.null_count:
        row = int(np.argmin(valid)) + 1
        raise ValueError(f"{source}:{row}: {name}: missing")
    values = arr.fill_null(0).to_numpy(zero_copy_only=False)
    if values.dtype.kind == "i":
        negative = values < 0
        if negative.any():
            i = int(np.argmax(negative))
            raise ValueError(f"{source}:{i + 1}: {name}: {values[i]} is negative")
    top = np.iinfo(dtype).max
    if np.iinfo(values.dtype).max > top:
        over = values > top
        if over.any():
            i = int(np.argmax(over))
            raise ValueError(f"{source}:{i + 1}: {name}: {values[i]} is too large (at most {top})")
    return np.ascontiguousarray(values, dtype=dtype), np.ascontiguousarray(valid, dtype=bool)


def workload_to_table(workload: Workload) -> pa.Table:
    """The workload's native columns as an Arrow table (nulls where empty)."""
    cols = workload.columns()
    arrays = {name: pa.array(cols[name], type=_ARROW_TYPES[dtype]) for name, dtype in _REQUIRED.items()}
    for name, dtype in _OPTIONAL.items():
        arrays[name] = pa.array(cols[name], type=_ARROW_TYPES[dtype], mask=~cols[f"{name}_valid"])
    table = pa.table(arrays)
    return table.replace_schema_metadata({_N_HOSTS_KEY: str(workload.n_hosts).encode()})


def write_trace(workload: Workload, path: str | os.PathLike[str]) -> Path:
    """Write a workload as native CSV (``.csv``) or Parquet (``.parquet``)."""
    p = Path(path)
    kind = FORMATS.get(p.suffix.lower())
    if kind not in ("csv", "parquet"):
        raise ValueError(f"{p}: can write native traces as .csv or .parquet, not {p.suffix!r}")
    with atomic_path(p) as tmp:
        if kind == "csv":
            workload.write_csv(tmp)
        else:
            pq.write_table(workload_to_table(workload), tmp)
    return p


def _one_line(e: BaseException) -> str:
    return " ".join(str(e).split())
