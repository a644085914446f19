"""Traces in and out: coflow-benchmark text, native CSV and native Parquet.

The Rust core reads coflow-benchmark traces (``.txt``) and native CSV
(``.csv``) itself. Native Parquet (``.parquet``) is read and written here with
pyarrow, through the same native columns the core defines (one row per flow;
see ``crates/workload/src/native.rs`` and ``docs/workloads.md``):

=================  =====================  ==========================================
column             Parquet type           when absent or null
=================  =====================  ==========================================
coflow_id          uint64                 required
arrival_ns         uint64                 required
src, dst           uint32                 required
bytes              uint64                 required
job_id, stage_id   uint64, uint32         none (set both or neither)
deadline_ns        uint64                 no coflow deadline
kind               dictionary string      ``net`` (or ``compute``)
group              uint32                 0
after              uint32                 the flow waits for no group
delay_ns           uint64                 0
flow_deadline_ns   uint64                 no flow deadline
size_known         bool                   true
parents            large_string           no dependencies (``12:sa;13:fb``)
=================  =====================  ==========================================

Files written before a column existed read with its default. The host count
travels in the Parquet schema's metadata under ``coflowkit.n_hosts``, as it
does in the CSV's ``# n_hosts=<N>`` line.

pyarrow is imported by the Parquet paths only, not with the module, so that
reading a ``.txt`` or ``.csv`` trace (``coflowkit simulate --trace``) does not
load it.

Bad input is refused at the door with one ``ValueError`` naming the file, the
1-based row and the column, ``<file>:<row>: <column>: <message>``, the same
shape as the core's messages. Row 0 means the file as a whole.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from .. import _core
from ..util import atomic_path
from .._core import Workload

if TYPE_CHECKING:
    import pyarrow as pa

__all__ = ["load_trace", "write_trace", "workload_to_table", "workload_from_table", "FORMATS"]

#: Trace formats by file extension.
FORMATS = {".txt": "benchmark", ".csv": "csv", ".parquet": "parquet"}

_REQUIRED = {"coflow_id": np.uint64, "arrival_ns": np.uint64, "src": np.uint32, "dst": np.uint32, "bytes": np.uint64}
#: Integer columns that may be null (a validity mask crosses to the core).
_OPTIONAL = {
    "job_id": np.uint64,
    "stage_id": np.uint32,
    "deadline_ns": np.uint64,
    "after": np.uint32,
    "flow_deadline_ns": np.uint64,
}
#: Integer columns with a default where absent or null.
_DEFAULTED: dict[str, tuple[type[np.unsignedinteger[Any]], int]] = {"group": (np.uint32, 0), "delay_ns": (np.uint64, 0)}
#: The flow kinds, by their code in the core's columns.
_KINDS = ["net", "compute"]
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
    import pyarrow as pa
    import pyarrow.parquet as pq

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
    known = set(_core.NATIVE_COLUMNS)
    unknown = [n for n in names if n not in known]
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
    for name, (dtype, default) in _DEFAULTED.items():
        if name in names:
            values, valid = _unsigned(table.column(name), name, dtype, source, required=False)
            cols[name] = np.where(valid, values, dtype(default)).astype(dtype)
    if "kind" in names:
        cols["kind"] = _kind_codes(table.column("kind"), source)
    if "size_known" in names:
        cols["size_known"] = _size_known(table.column("size_known"), source)
    if "parents" in names:
        cols["parents_offsets"], cols["parents_data"] = _text(table.column("parents"), "parents", source)
    if n_hosts is not None and not 0 <= n_hosts <= np.iinfo(np.uint32).max:
        raise ValueError(f"{source}:0: n_hosts: {n_hosts} is out of range")
    return _core.workload_from_columns(**cols, n_hosts=n_hosts, source=source)


def _unsigned(
    column: pa.ChunkedArray, name: str, dtype: Any, source: str, *, required: bool
) -> tuple[np.ndarray, np.ndarray]:
    """A column as (values of ``dtype``, validity), checked row by row."""
    import pyarrow as pa

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


def _plain(column: pa.ChunkedArray | pa.Array) -> pa.Array:
    """One array, dictionaries decoded."""
    import pyarrow as pa

    arr = column.combine_chunks() if isinstance(column, pa.ChunkedArray) else column
    if pa.types.is_dictionary(arr.type):
        arr = arr.dictionary_decode()
    return arr


def _first_bad(mask: np.ndarray) -> int:
    return int(np.argmax(mask)) + 1


def _kind_codes(column: pa.ChunkedArray, source: str) -> np.ndarray:
    """The ``kind`` column (``net``/``compute`` text, null = net) as uint8 codes."""
    import pyarrow as pa
    import pyarrow.compute as pc

    arr = _plain(column)
    if not (pa.types.is_string(arr.type) or pa.types.is_large_string(arr.type) or pa.types.is_null(arr.type)):
        raise ValueError(f"{source}:0: kind: has type {arr.type}, expected text (net or compute)")
    if pa.types.is_null(arr.type):
        return np.zeros(len(arr), dtype=np.uint8)
    codes = pc.index_in(arr, value_set=pa.array(_KINDS))
    bad = pc.and_(codes.is_null(), arr.is_valid()).to_numpy(zero_copy_only=False)
    if bad.any():
        row = _first_bad(bad)
        raise ValueError(f"{source}:{row}: kind: {arr[row - 1].as_py()!r} is not a flow kind (net, compute)")
    return np.ascontiguousarray(codes.fill_null(0).to_numpy(zero_copy_only=False), dtype=np.uint8)


def _size_known(column: pa.ChunkedArray, source: str) -> np.ndarray:
    """The ``size_known`` column (bool, null = true)."""
    import pyarrow as pa

    arr = _plain(column)
    if pa.types.is_null(arr.type):
        return np.ones(len(arr), dtype=bool)
    if not pa.types.is_boolean(arr.type):
        raise ValueError(f"{source}:0: size_known: has type {arr.type}, expected booleans")
    return np.ascontiguousarray(arr.fill_null(True).to_numpy(zero_copy_only=False), dtype=bool)


def _text(column: pa.ChunkedArray, name: str, source: str) -> tuple[np.ndarray, np.ndarray]:
    """A text column (null = empty) as Arrow-style (int64 offsets, uint8 bytes)."""
    import pyarrow as pa

    arr = _plain(column)
    if pa.types.is_null(arr.type):
        return np.zeros(len(arr) + 1, dtype=np.int64), np.zeros(0, dtype=np.uint8)
    if not (pa.types.is_string(arr.type) or pa.types.is_large_string(arr.type)):
        raise ValueError(f"{source}:0: {name}: has type {arr.type}, expected text")
    arr = arr.fill_null("").cast(pa.large_string())
    _, offsets_buf, data_buf = arr.buffers()
    offsets = np.frombuffer(offsets_buf, dtype=np.int64)[arr.offset : arr.offset + len(arr) + 1]
    data = np.frombuffer(data_buf, dtype=np.uint8) if data_buf is not None else np.zeros(0, np.uint8)
    return np.ascontiguousarray(offsets), np.ascontiguousarray(data)


def workload_to_table(workload: Workload) -> pa.Table:
    """The workload's native columns as an Arrow table (nulls where empty)."""
    import pyarrow as pa

    arrow_types = {np.uint64: pa.uint64(), np.uint32: pa.uint32()}
    cols = workload.columns()
    n = len(cols["coflow_id"])
    arrays = {name: pa.array(cols[name], type=arrow_types[dtype]) for name, dtype in _REQUIRED.items()}
    for name in ("job_id", "stage_id", "deadline_ns"):
        arrays[name] = pa.array(cols[name], type=arrow_types[_OPTIONAL[name]], mask=~cols[f"{name}_valid"])
    arrays["kind"] = pa.DictionaryArray.from_arrays(pa.array(cols["kind"], pa.int8()), pa.array(_KINDS))
    arrays["group"] = pa.array(cols["group"], pa.uint32())
    arrays["after"] = pa.array(cols["after"], pa.uint32(), mask=~cols["after_valid"])
    arrays["delay_ns"] = pa.array(cols["delay_ns"], pa.uint64())
    arrays["flow_deadline_ns"] = pa.array(
        cols["flow_deadline_ns"], pa.uint64(), mask=~cols["flow_deadline_ns_valid"]
    )
    arrays["size_known"] = pa.array(cols["size_known"], pa.bool_())
    arrays["parents"] = pa.LargeStringArray.from_buffers(
        n, pa.py_buffer(cols["parents_offsets"]), pa.py_buffer(cols["parents_data"])
    )
    table = pa.table({name: arrays[name] for name in _core.NATIVE_COLUMNS})
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
            import pyarrow.parquet as pq

            pq.write_table(workload_to_table(workload), tmp)
    return p


def _one_line(e: BaseException) -> str:
    return " ".join(str(e).split())
