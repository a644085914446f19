"""The workload generators from Python and the CLI: every name, its parameters, files, simulation."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import coflowkit
from conftest import Cli, assert_one_line_error
from test_roundtrip import assert_same_columns

#: A small instance of every generator (and preset) that simulates quickly.
SMALL_TREE = {"pods": 2, "racks_per_pod": 3, "hosts_per_rack": 4, "workers": 5, "mids": 3}
SMALL = {
    ("coflow-benchmark", "aalo"): {"n_coflows": 20, "n_hosts": 10},
    ("coflow-benchmark", "dcas"): {"n_coflows": 20},
    ("baraat", "two-stage"): {"n_tasks": 30, **SMALL_TREE},
    ("baraat", "single-stage"): {"n_tasks": 30, "sizes": "bing", **SMALL_TREE},
    ("baraat", "storage"): {"n_tasks": 30, "sizes": "analytics", **SMALL_TREE},
    ("baraat", "data-parallel"): {"n_tasks": 10, "dp_stages": 2, "dp_senders": 3, "dp_receivers": 2, **SMALL_TREE},
    ("websearch", None): {"n_flows": 50, "n_hosts": 8, "type1_fraction": 0.3, "type3_fraction": 0.3},
    ("datamining", None): {"n_flows": 50, "n_hosts": 8},
    ("dag", None): {"n_jobs": 8, "n_hosts": 10},
    ("multi-wave", None): {"n_coflows": 20, "n_hosts": 10, "extra_task_fraction": 0.5},
    ("tafe", None): {"n_tasks": 20},
    ("tafe", "motivating"): {},
}


def test_every_generator_is_listed_with_its_parameters() -> None:
    gens = coflowkit.generators()
    names = [g["name"] for g in gens]
    assert names == ["coflow-benchmark", "baraat", "websearch", "datamining", "dag", "multi-wave", "tafe"]
    assert {name for name, _ in SMALL} == set(names)
    for g in gens:
        assert g["source"] and g["presets"] and g["params"]
        assert "seed" in [p[0] for p in g["params"]]


@pytest.mark.parametrize(("name", "preset"), list(SMALL))
def test_generators_round_trip_through_csv_and_parquet(tmp_path: Path, name: str, preset: str | None) -> None:
    w = coflowkit.generate(name, seed=3, preset=preset, **SMALL[(name, preset)])
    assert w.n_coflows > 0 and w.source.startswith(f"{name}(")
    again = coflowkit.generate(name, seed=3, preset=preset, **SMALL[(name, preset)])
    assert_same_columns(again.columns(), w.columns())
    for suffix in (".csv", ".parquet"):
        back = coflowkit.load_trace(coflowkit.write_trace(w, tmp_path / f"w{suffix}"))
        assert back.n_hosts == w.n_hosts
        assert_same_columns(back.columns(), w.columns())


@pytest.mark.parametrize(("name", "preset"), [k for k in SMALL if k[0] != "tafe"])
def test_simulate_accepts_generated_workloads(name: str, preset: str | None) -> None:
    w = coflowkit.generate(name, seed=3, preset=preset, **SMALL[(name, preset)])
    res = coflowkit.simulate(w, "fair", progress=False)
    assert len(res.coflows()) == w.n_coflows


def test_compute_stages_need_a_fabric_with_cpus() -> None:
    w = coflowkit.generate("tafe", preset="motivating")
    cols = w.columns()
    assert list(cols["kind"]) == [1, 0, 1, 0] * 2
    assert list(cols["after"][cols["after_valid"]]) == [1, 2, 1, 2]
    with pytest.raises(ValueError, match="CPU"):
        coflowkit.simulate(w, "fair", progress=False)


def test_coflow_benchmark_aalo_is_the_embedded_workload() -> None:
    assert_same_columns(coflowkit.generate("coflow-benchmark").columns(), coflowkit.synthetic().columns())
    a = coflowkit.generate("coflow-benchmark", seed=4, n_coflows=30, n_hosts=12, load=0.5)
    b = coflowkit.synthetic(n_coflows=30, n_hosts=12, load=0.5, seed=4)
    assert_same_columns(a.columns(), b.columns())


def test_python_parameters_take_numbers_booleans_sequences_and_units() -> None:
    w = coflowkit.generate(
        "coflow-benchmark", n_coflows=50, mix=(1, 0, 0, 0), deadline_fraction=1.0, deadline_mean="2ms"
    )
    cols = w.columns()
    assert cols["deadline_ns_valid"].all()
    assert (cols["bytes"] < 5 << 20).all()
    w = coflowkit.generate("tafe", motivating=True, unit="1KB")
    assert set(w.columns()["bytes"]) == {2000}


def test_bad_parameters_name_themselves() -> None:
    with pytest.raises(ValueError, match=r'unknown parameter "n_coflows" \(valid: n_hosts, n_flows'):
        coflowkit.generate("websearch", n_coflows=3)
    with pytest.raises(ValueError, match=r'unknown workload "nope" \(workloads: coflow-benchmark, baraat'):
        coflowkit.generate("nope")
    with pytest.raises(ValueError, match=r"baraat: mids: at most 870"):
        coflowkit.generate("baraat", mids=1000)
    with pytest.raises(ValueError, match=r'unknown preset "x"'):
        coflowkit.generate("tafe", preset="x")


def test_cli_generate_help_lists_workloads_and_parameters(cli: Cli) -> None:
    proc = cli("generate", "--help")
    assert proc.returncode == 0, proc.stderr
    for g in coflowkit.generators():
        assert f"{g['name']}: " in proc.stdout
    for needle in ("preset dcas", "workflow=two-stage", "type1_fraction=0", "max_waves=4", "starts_after_fraction=0.5"):
        assert needle in proc.stdout, needle


def test_cli_generates_every_workload(cli: Cli, tmp_path: Path) -> None:
    out = tmp_path / "b.parquet"
    proc = cli("generate", "baraat", "--preset", "storage", "--seed", 5, "--load", 0.4, "-p", "n_tasks=40", "-o", out)
    assert proc.returncode == 0, proc.stderr
    w = coflowkit.load_trace(out)
    same = coflowkit.generate("baraat", seed=5, load=0.4, preset="storage", n_tasks=40)
    assert_same_columns(w.columns(), same.columns())
    proc = cli("generate", "tafe", "--preset", "motivating", "-o", tmp_path / "t.csv")
    assert proc.returncode == 0, proc.stderr
    assert "compute,1,,0,,true," in (tmp_path / "t.csv").read_text()


def test_cli_parameter_errors_are_usage_errors(cli: Cli, tmp_path: Path) -> None:
    out = tmp_path / "x.csv"
    assert_one_line_error(cli("generate", "baraat", "-p", "bogus=1", "-o", out), 2, '"bogus"', "valid: workflow")
    assert_one_line_error(cli("generate", "baraat", "-p", "nonsense", "-o", out), 2, "NAME=VALUE")
    assert_one_line_error(cli("generate", "websearch", "--n-coflows", 3, "-o", out), 2, "--n-coflows", "n_flows")
    assert_one_line_error(cli("generate", "dag", "--preset", "x", "-o", out), 2, "--preset")
    assert_one_line_error(cli("generate", "bogus", "-o", out), 2, "bogus")
    assert_one_line_error(cli("generate", "websearch", "-p", "deadline_mean=10", "-o", out), 2, "needs a unit")
    assert not out.exists()


def test_baraat_two_stage_tasks_have_1230_flows() -> None:
    w = coflowkit.generate("baraat", n_tasks=20)
    cols = w.columns()
    assert w.n_hosts == 36_000 and w.n_flows == 20 * 1230
    _, counts = np.unique(cols["coflow_id"], return_counts=True)
    assert (counts == 1230).all()
    assert cols["after_valid"].sum() == 20 * 30


def test_trace_info_shows_the_fields_in_use(cli: Cli, tmp_path: Path) -> None:
    dag = coflowkit.generate("dag", n_jobs=20, n_hosts=10)
    features = dag.stats()["features"]
    assert features["in_jobs"] == dag.n_coflows and features["with_parents"] > 0
    path = coflowkit.write_trace(coflowkit.generate("tafe", preset="motivating"), tmp_path / "t.parquet")
    info = cli("trace", "info", path)
    assert info.returncode == 0, info.stderr
    assert "flows with    4 after a group, 0 delayed, 4 compute" in info.stdout
    plain = cli("trace", "info", coflowkit.write_trace(coflowkit.synthetic(n_coflows=5), tmp_path / "s.csv"))
    assert "flows with" not in plain.stdout


def test_a_generators_capacity_is_a_rate_with_or_without_a_unit() -> None:
    """``capacity_bps`` takes a rate as the help says rates do (``25Mbps``), or bits per second as a number."""
    kw = {"preset": "dcas", "n_hosts": 16, "n_coflows": 20}
    with_unit = coflowkit.generate("coflow-benchmark", capacity_bps="25Mbps", **kw)
    number = coflowkit.generate("coflow-benchmark", capacity_bps=25e6, **kw)
    assert np.array_equal(with_unit.columns()["arrival_ns"], number.columns()["arrival_ns"])
    with pytest.raises(ValueError, match=r"capacity_bps: '25MB/s': rates are in bits per second"):
        coflowkit.generate("coflow-benchmark", capacity_bps="25MB/s")
    with pytest.raises(ValueError, match=r"capacity_bps: must be a positive finite number, got -1"):
        coflowkit.generate("coflow-benchmark", capacity_bps=-1)
