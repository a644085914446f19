"""Native traces round-trip through CSV and Parquet exactly (columns in, same columns out)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pyarrow.parquet as pq
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import coflowkit
from coflowkit import _core


def assert_same_columns(a: dict[str, np.ndarray], b: dict[str, np.ndarray]) -> None:
    assert a.keys() == b.keys()
    for k in a:
        assert a[k].dtype == b[k].dtype, k
        np.testing.assert_array_equal(a[k], b[k], err_msg=k)


def test_synthetic_round_trips(tmp_path: Path) -> None:
    w = coflowkit.synthetic(n_hosts=20, n_coflows=50, seed=11)
    for name in ("t.csv", "t.parquet"):
        path = coflowkit.write_trace(w, tmp_path / name)
        back = coflowkit.load_trace(path)
        assert back.n_hosts == w.n_hosts
        assert_same_columns(back.columns(), w.columns())
    meta = pq.read_schema(tmp_path / "t.parquet").metadata
    assert meta[b"coflowkit.n_hosts"] == b"20"


@st.composite
def workloads(draw: st.DrawFn) -> coflowkit.Workload:
    """Small workloads with every optional column in use, coflow rows interleaved."""
    n_hosts = draw(st.integers(1, 6))
    host = st.integers(0, n_hosts - 1)
    n_coflows = draw(st.integers(1, 5))
    ids = draw(st.lists(st.integers(0, 2**64 - 1), min_size=n_coflows, max_size=n_coflows, unique=True))
    parent = st.tuples(st.integers(0, 2**64 - 1), st.sampled_from(["sa", "fb"])).map(lambda p: f"{p[0]}:{p[1]}")
    rows = []
    for cid in ids:
        arrival = draw(st.integers(0, 2**64 - 1))
        job = draw(st.none() | st.tuples(st.integers(0, 2**64 - 1), st.integers(0, 2**32 - 1)))
        deadline = draw(st.none() | st.integers(1, 2**64 - 1))
        parents = ";".join(draw(st.lists(parent, max_size=3)))
        for _ in range(draw(st.integers(1, 4))):
            flow = (
                draw(host),
                draw(host),
                draw(st.integers(0, 2**64 - 1)),
                draw(st.integers(0, 1)),  # kind
                draw(st.integers(0, 2**32 - 1)),  # group
                draw(st.none() | st.integers(0, 2**32 - 1)),  # after
                draw(st.integers(0, 2**64 - 1)),  # delay
                draw(st.none() | st.integers(1, 2**64 - 1)),  # flow deadline
                draw(st.booleans()),  # size known
            )
            rows.append((cid, arrival, job, deadline, parents, *flow))
    # Rows of a coflow need not be adjacent; the first row of each coflow keeps its order.
    rows = draw(st.permutations(rows))
    text = [r[4].encode() for r in rows]
    cols = {
        "coflow_id": np.array([r[0] for r in rows], np.uint64),
        "arrival_ns": np.array([r[1] for r in rows], np.uint64),
        "src": np.array([r[5] for r in rows], np.uint32),
        "dst": np.array([r[6] for r in rows], np.uint32),
        "bytes": np.array([r[7] for r in rows], np.uint64),
        "job_id": np.array([r[2][0] if r[2] else 0 for r in rows], np.uint64),
        "job_id_valid": np.array([r[2] is not None for r in rows]),
        "stage_id": np.array([r[2][1] if r[2] else 0 for r in rows], np.uint32),
        "stage_id_valid": np.array([r[2] is not None for r in rows]),
        "deadline_ns": np.array([r[3] or 0 for r in rows], np.uint64),
        "deadline_ns_valid": np.array([r[3] is not None for r in rows]),
        "kind": np.array([r[8] for r in rows], np.uint8),
        "group": np.array([r[9] for r in rows], np.uint32),
        "after": np.array([r[10] or 0 for r in rows], np.uint32),
        "after_valid": np.array([r[10] is not None for r in rows]),
        "delay_ns": np.array([r[11] for r in rows], np.uint64),
        "flow_deadline_ns": np.array([r[12] or 0 for r in rows], np.uint64),
        "flow_deadline_ns_valid": np.array([r[12] is not None for r in rows]),
        "size_known": np.array([r[13] for r in rows], bool),
        "parents_offsets": np.concatenate([[0], np.cumsum([len(t) for t in text])]).astype(np.int64),
        "parents_data": np.frombuffer(b"".join(text), np.uint8).copy(),
    }
    return _core.workload_from_columns(**cols, n_hosts=n_hosts)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(w=workloads())
def test_any_workload_round_trips(tmp_path: Path, w: coflowkit.Workload) -> None:
    cols = w.columns()
    assert_same_columns(_core.workload_from_columns(**cols, n_hosts=w.n_hosts).columns(), cols)
    for name in ("h.csv", "h.parquet"):
        back = coflowkit.load_trace(coflowkit.write_trace(w, tmp_path / name))
        assert back.n_hosts == w.n_hosts
        assert_same_columns(back.columns(), cols)


def test_arrow_table_has_nulls_where_empty() -> None:
    w = _core.workload_from_columns(
        coflow_id=np.array([1, 2], np.uint64),
        arrival_ns=np.array([0, 1], np.uint64),
        src=np.array([0, 1], np.uint32),
        dst=np.array([1, 0], np.uint32),
        bytes=np.array([5, 6], np.uint64),
        deadline_ns=np.array([0, 9], np.uint64),
        deadline_ns_valid=np.array([False, True]),
    )
    t = coflowkit.workload_to_table(w)
    assert t.column("deadline_ns").to_pylist() == [None, 9]
    assert t.column("job_id").null_count == 2
    assert_same_columns(coflowkit.workload_from_table(t).columns(), w.columns())


def test_old_parquet_files_read_with_defaults(tmp_path: Path) -> None:
    """A file with only the first eight columns (written before groups existed) reads with defaults."""
    w = coflowkit.synthetic(n_hosts=8, n_coflows=6, seed=2)
    table = coflowkit.workload_to_table(w)
    old = table.select(["coflow_id", "arrival_ns", "src", "dst", "bytes", "job_id", "stage_id", "deadline_ns"])
    pq.write_table(old, tmp_path / "old.parquet")
    back = coflowkit.load_trace(tmp_path / "old.parquet")
    assert_same_columns(back.columns(), w.columns())
    cols = back.columns()
    assert (cols["kind"] == 0).all() and cols["size_known"].all() and not cols["after_valid"].any()
    assert (cols["parents_offsets"] == 0).all()


def test_new_columns_in_parquet_are_readable(tmp_path: Path) -> None:
    """kind is dictionary text, parents plain text: other tools read them without coflowkit."""
    w = _core.workload_from_columns(
        coflow_id=np.array([1, 2, 2], np.uint64),
        arrival_ns=np.array([0, 5, 5], np.uint64),
        src=np.array([0, 1, 1], np.uint32),
        dst=np.array([1, 1, 0], np.uint32),
        bytes=np.array([5, 6, 7], np.uint64),
        kind=np.array([0, 1, 0], np.uint8),
        group=np.array([0, 1, 2], np.uint32),
        after=np.array([0, 0, 1], np.uint32),
        after_valid=np.array([False, False, True]),
        parents_offsets=np.array([0, 0, 4, 8], np.int64),
        parents_data=np.frombuffer(b"1:sa1:sa", np.uint8).copy(),
    )
    path = coflowkit.write_trace(w, tmp_path / "g.parquet")
    t = pq.read_table(path)
    assert t.column_names == list(_core.NATIVE_COLUMNS)
    assert t.column("kind").to_pylist() == ["net", "compute", "net"]
    assert t.column("after").to_pylist() == [None, None, 1]
    assert t.column("parents").to_pylist() == ["", "1:sa", "1:sa"]
    assert_same_columns(coflowkit.load_trace(path).columns(), w.columns())
    csv_text = coflowkit.write_trace(w, tmp_path / "g.csv").read_text()
    assert "2,5,1,1,6,,,,compute,1,,0,,true,1:sa" in csv_text
