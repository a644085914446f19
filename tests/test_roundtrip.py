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
    rows = []
    for cid in ids:
        arrival = draw(st.integers(0, 2**64 - 1))
        job = draw(st.none() | st.tuples(st.integers(0, 2**64 - 1), st.integers(0, 2**32 - 1)))
        deadline = draw(st.none() | st.integers(1, 2**64 - 1))
        for _ in range(draw(st.integers(1, 4))):
            rows.append((cid, arrival, draw(host), draw(host), draw(st.integers(0, 2**64 - 1)), job, deadline))
    # Rows of a coflow need not be adjacent; the first row of each coflow keeps its order.
    rows = draw(st.permutations(rows))
    cols = {
        "coflow_id": np.array([r[0] for r in rows], np.uint64),
        "arrival_ns": np.array([r[1] for r in rows], np.uint64),
        "src": np.array([r[2] for r in rows], np.uint32),
        "dst": np.array([r[3] for r in rows], np.uint32),
        "bytes": np.array([r[4] for r in rows], np.uint64),
        "job_id": np.array([r[5][0] if r[5] else 0 for r in rows], np.uint64),
        "job_id_valid": np.array([r[5] is not None for r in rows]),
        "stage_id": np.array([r[5][1] if r[5] else 0 for r in rows], np.uint32),
        "stage_id_valid": np.array([r[5] is not None for r in rows]),
        "deadline_ns": np.array([r[6] or 0 for r in rows], np.uint64),
        "deadline_ns_valid": np.array([r[6] is not None for r in rows]),
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
