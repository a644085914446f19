"""Bad input dies at the door: one line naming file, line (or row) and field; no traceback."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import coflowkit
from coflowkit import _core
from conftest import Cli, assert_one_line_error

GOOD_BENCHMARK = "4 2\n1 0 1 0 1 1:1.0\n2 10 2 0 1 1 2:3.0\n"


def test_a_bad_benchmark_line_names_file_line_and_field(cli: Cli, tmp_path: Path) -> None:
    trace = tmp_path / "bad.txt"
    trace.write_text(GOOD_BENCHMARK.replace("2 10 2 0 1 1 2:3.0", "2 10 2 0 x 1 2:3.0"))
    for args in (("trace", "info", trace), ("simulate", "--trace", trace, "-s", "fair")):
        line = assert_one_line_error(cli(*args), 1, f"{trace}:3:")
        assert "mapper" in line


def test_a_good_benchmark_trace_simulates(cli: Cli, tmp_path: Path) -> None:
    trace = tmp_path / "good.txt"
    trace.write_text(GOOD_BENCHMARK)
    proc = cli("simulate", "--trace", trace, "-s", "fair,varys")
    assert proc.returncode == 0, proc.stderr


def test_a_bad_native_csv_field_is_named(cli: Cli, tmp_path: Path) -> None:
    trace = tmp_path / "bad.csv"
    trace.write_text(
        "# n_hosts=4\ncoflow_id,arrival_ns,src,dst,bytes,job_id,stage_id,deadline_ns\n1,0,0,1,100,,,\n1,0,9,1,100,,,\n"
    )
    assert_one_line_error(cli("trace", "info", trace), 1, f"{trace}:4:", "src")


def test_an_unknown_scheduler_is_a_usage_error(cli: Cli) -> None:
    assert_one_line_error(cli("simulate", "--scheduler", "fair,bogus"), 2, "bogus", "--scheduler")
    assert_one_line_error(cli("simulate", "--baseline", "nope"), 2, "nope")
    assert_one_line_error(cli("simulate", "-s", "fifo-lm:threshold=banana"), 2, "threshold", "banana")


def test_a_missing_file_is_named(cli: Cli, tmp_path: Path) -> None:
    missing = tmp_path / "nope.txt"
    assert_one_line_error(cli("trace", "info", missing), 2, str(missing))
    assert_one_line_error(cli("simulate", "--trace", missing), 2, str(missing))


def test_bad_parameters_are_usage_errors(cli: Cli, tmp_path: Path) -> None:
    assert_one_line_error(cli("generate", "default", "--load", "-1", "-o", tmp_path / "x.csv"), 2, "--load")
    assert_one_line_error(cli("generate", "default", "-o", tmp_path / "x.json"), 2, "x.json")
    assert_one_line_error(cli("simulate", "--capacity-gbps", "0"), 2, "--capacity-gbps")
    assert_one_line_error(cli("simulate", "--bogus"), 2, "--bogus")
    assert not (tmp_path / "x.csv").exists()


def test_a_trace_with_unknown_extension(cli: Cli, tmp_path: Path) -> None:
    trace = tmp_path / "t.json"
    trace.write_text("{}")
    assert_one_line_error(cli("trace", "info", trace), 1, str(trace), "extension")


def _parquet(path: Path, **cols: pa.Array) -> Path:
    base = {
        "coflow_id": pa.array([1, 1, 2], pa.uint64()),
        "arrival_ns": pa.array([0, 0, 5], pa.uint64()),
        "src": pa.array([0, 1, 2], pa.uint32()),
        "dst": pa.array([1, 2, 3], pa.uint32()),
        "bytes": pa.array([10, 20, 30], pa.uint64()),
    }
    base.update(cols)
    pq.write_table(pa.table(base), path)
    return path


def test_parquet_rows_are_checked(cli: Cli, tmp_path: Path) -> None:
    ok = coflowkit.load_trace(_parquet(tmp_path / "ok.parquet"))
    assert (ok.n_hosts, ok.n_coflows, ok.n_flows) == (4, 2, 3)
    cases = {
        "negative.parquet": ({"src": pa.array([0, -1, 2], pa.int64())}, ":2: src:", "negative"),
        "null.parquet": ({"bytes": pa.array([10, None, 30], pa.uint64())}, ":2: bytes:", "missing"),
        "float.parquet": ({"dst": pa.array([1.0, 2.0, 3.0])}, ":0: dst:", "type"),
        "stage.parquet": ({"job_id": pa.array([None, None, 7], pa.uint64())}, ":3: stage_id:", "job_id"),
        "arrival.parquet": ({"arrival_ns": pa.array([0, 3, 5], pa.uint64())}, ":2: arrival_ns:", "differs"),
        "kind.parquet": ({"kind": pa.array(["net", "cpu", "net"])}, ":2: kind:", "'cpu'"),
        "kindtype.parquet": ({"kind": pa.array([0, 1, 0], pa.uint8())}, ":0: kind:", "type"),
        "known.parquet": ({"size_known": pa.array([1, 0, 1], pa.uint8())}, ":0: size_known:", "type"),
        "parents.parquet": ({"parents": pa.array(["", "", "1:xx"])}, ":3: parents:", "xx"),
        "fdl.parquet": ({"flow_deadline_ns": pa.array([None, 0, 1], pa.uint64())}, ":2: flow_deadline_ns:", "positive"),
        "after.parquet": ({"after": pa.array([-1, 0, 1], pa.int64())}, ":1: after:", "negative"),
        "unknown.parquet": ({"colour": pa.array([1, 2, 3])}, ":0: colour:", "unknown column"),
    }
    for name, (cols, where, what) in cases.items():
        path = _parquet(tmp_path / name, **cols)
        with pytest.raises(ValueError) as e:
            coflowkit.load_trace(path)
        assert f"{path}{where}" in str(e.value) and what in str(e.value), str(e.value)
        assert_one_line_error(cli("trace", "info", path), 1, f"{path}{where}")
    garbage = tmp_path / "garbage.parquet"
    garbage.write_bytes(b"not parquet at all")
    assert_one_line_error(cli("trace", "info", garbage), 1, str(garbage))


def test_columns_errors_name_the_row() -> None:
    cols = {
        "coflow_id": np.array([1, 1, 2], np.uint64),
        "arrival_ns": np.array([0, 0, 5], np.uint64),
        "src": np.array([0, 1, 2], np.uint32),
        "dst": np.array([1, 2, 7], np.uint32),
        "bytes": np.array([10, 20, 30], np.uint64),
    }
    with pytest.raises(ValueError, match=r"^mine:3: dst: 7 is outside the fabric"):
        _core.workload_from_columns(**cols, n_hosts=4, source="mine")
    with pytest.raises(ValueError, match=r"^mine:0: arrival_ns: has 2 rows"):
        _core.workload_from_columns(**{**cols, "arrival_ns": cols["arrival_ns"][:2]}, source="mine")


def test_python_api_errors() -> None:
    w = coflowkit.synthetic(n_hosts=10, n_coflows=5, seed=1)
    with pytest.raises(ValueError, match="unknown scheduler 'bogus'"):
        coflowkit.simulate(w, "bogus")
    with pytest.raises(ValueError, match="given twice"):
        coflowkit.simulate(w, ["fair", "fair"])
    with pytest.raises(ValueError, match="the workload is for 10 hosts but the fabric has 4"):
        coflowkit.simulate(w, "fair", n_hosts=4)
    with pytest.raises(FileNotFoundError, match="nope.txt"):
        coflowkit.load_trace("nope.txt")
    with pytest.raises(ValueError, match="n_hosts: must be at least 1"):
        coflowkit.synthetic(n_hosts=0)
    with pytest.raises(ValueError, match="capacity"):
        coflowkit.simulate(w, "fair", capacity_gbps=-1)


@pytest.mark.parametrize(
    ("kwargs", "flags", "field", "needle"),
    [
        ({"capacity_gbps": 0}, ["--capacity-gbps", "0"], "capacity_gbps", "must be positive"),
        ({"missed": "late"}, ["--missed", "late"], "missed", "expected 'finish' or 'drop'"),
        ({"scheduler": "fair,nope"}, ["--scheduler", "fair,nope"], "scheduler", "nope"),
        ({"baseline": "nope"}, ["--baseline", "nope"], "baseline", "nope"),
        ({"topology": "fat-tree:k=3"}, ["--topology", "fat-tree:k=3"], "topology", "k must be even"),
        ({"engine": "packet", "packet": "buffer=-1"}, ["--engine", "packet", "--packet", "buffer=-1"], "packet", "buffer"),
    ],
)
def test_a_request_is_checked_in_one_place_for_the_api_and_the_cli(
    cli: Cli, kwargs: dict[str, object], flags: list[str], field: str, needle: str
) -> None:
    """`coflowkit.sim.check_request` refuses the request before any workload is read, naming the
    argument; `simulate` and `coflowkit simulate` both reach it, the CLI naming its flag (where
    click's own type of the flag refuses first, its message names the flag and the value)."""
    with pytest.raises(coflowkit.sim.RequestError, match=needle) as e:
        coflowkit.sim.check_request(**kwargs)  # type: ignore[arg-type]
    assert e.value.field == field
    with pytest.raises(ValueError, match=needle):
        coflowkit.simulate("no-such-trace.txt", **kwargs)  # type: ignore[arg-type]
    assert_one_line_error(cli("simulate", *flags), 2, flags[-2], flags[-1] if field in ("capacity_gbps", "missed") else needle)
