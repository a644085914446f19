"""Experiment files: checked at the door, expanded into points with derived seeds,
run into a store that resumes, recorded failures, figures and a report."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow.parquet as pq
import pytest

import coflowkit
from coflowkit.experiment import ExperimentError, derive_seed, load_experiment
from conftest import ROOT, Cli, assert_one_line_error, assert_same_store, write

#: A small grid: 3 scheduler specs x 2 loads x 2 seeds = 12 points, each well under a second in a dev build.
SMALL = """
name = "small"
seed = 11
seeds = 2
baseline = "fair"
schedulers = ["fair", "varys", { spec = "fifo-lm", sweep = { threshold = ["p50", "inf"] } }]

[workload]
generator = "coflow-benchmark"
n_coflows = 20
n_hosts = 10
sweep = { load = [0.5, 1.0] }
"""


# -- checked at the door --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "needle"),
    [
        ("schedulerz = ['fair']", "schedulerz: unknown key (known: name, description, seed, seeds"),
        ("seeds = 0", "seeds: must be at least 1, got 0"),
        ("seed = 'x'", "seed: expected a whole number, got text ('x')"),
        ("[workload]\ngenerator = 'nope'", "workload.generator: unknown workload 'nope' (workloads: coflow-benchmark"),
        (
            "[workload]\ngenerator = 'default'\nn_cofflows = 3",
            'workload.n_cofflows: coflow-benchmark: unknown parameter "n_cofflows"',
        ),
        ("[workload]\ngenerator = 'default'\nseed = 3", "workload.seed: the generator's seed is derived per point"),
        (
            "[workload]\ngenerator = 'default'\nsweep = { load = [0.5, -1] }",
            "workload.sweep.load[1]: coflow-benchmark: load: must be a positive finite number, got -1",
        ),
        (
            "[workload]\ngenerator = 'default'\nsweep = { load = [0.5, 0.5] }",
            "workload.sweep.load[1]: 0.5 is given twice",
        ),
        ("[workload]\ngenerator = 'default'\nsweep = { load = 0.5 }", "workload.sweep.load: expected a non-empty list"),
        ("[workload]\ntrace = 'missing.txt'", "workload.trace:"),
    ],
)
def test_bad_files_name_the_key(tmp_path: Path, text: str, needle: str) -> None:
    base = "schedulers = ['fair']\n" if "schedulers" not in text else ""
    if "[workload]" not in text:
        base += "\n" if not base else ""
        text = text + "\n[workload]\ngenerator = 'default'\n"
    path = write(tmp_path, base + text)
    with pytest.raises(ExperimentError) as e:
        load_experiment(path)
    assert str(e.value).startswith(f"{path}: "), str(e.value)
    assert needle in str(e.value), str(e.value)


@pytest.mark.parametrize(
    ("schedulers", "extra", "needle"),
    [
        ("['fair', 'bogus']", "", "schedulers[1].spec: unknown scheduler"),
        ("[{ spec = 'fifo-lm', sweep = { threshold = ['p80', 'p200'] } }]", "", "schedulers[0].sweep.threshold[1]: "),
        ("[{ spec = 'fair', sweep = { k = [1, 2] } }]", "", "schedulers[0].sweep.k[0]: "),
        ("['fair', 'fair']", "", "schedulers[1]: 'fair' is given twice"),
        ("[{ spec = 'fifo-lm', sweep = { threshold = ['p50', 'p80'] } }]", "", "baseline: fifo-lm sweeps threshold"),
        ("['fair']", "metrics = ['speed']", "metrics[0]: unknown metric 'speed' (known: improvement_mean"),
        ("['fair']", "topology = 'fat-tree:k=5'", "topology.spec: topology 'fat-tree:k=5': fat-tree: k must be even"),
        ("['fair']", "[plot]\nat = { load = 0.3 }", "plot.at.load: not a swept parameter"),
    ],
)
def test_bad_schedulers_topologies_metrics(tmp_path: Path, schedulers: str, extra: str, needle: str) -> None:
    text = f"schedulers = {schedulers}\n{extra}\n[workload]\ngenerator = 'default'\n"
    if extra.startswith("[plot]"):
        text = f"schedulers = {schedulers}\n[workload]\ngenerator = 'default'\n{extra}\n"
    with pytest.raises(ExperimentError) as e:
        load_experiment(write(tmp_path, text))
    assert needle in str(e.value), str(e.value)


def test_trace_workloads_take_one_seed_and_no_sweep(tmp_path: Path) -> None:
    trace = tmp_path / "t.csv"
    coflowkit.write_trace(coflowkit.synthetic(n_hosts=8, n_coflows=5, seed=1), trace)
    ok = load_experiment(write(tmp_path, "schedulers = ['fair']\n[workload]\ntrace = 't.csv'\n"))
    assert len(ok.points()) == 1 and ok.points()[0].seed is None
    with pytest.raises(ExperimentError, match=r"seeds: a trace is one workload"):
        load_experiment(write(tmp_path, "seeds = 2\nschedulers = ['fair']\n[workload]\ntrace = 't.csv'\n"))
    with pytest.raises(ExperimentError, match=r"workload.sweep: a trace has no parameters"):
        load_experiment(write(tmp_path, "schedulers = ['fair']\n[workload]\ntrace = 't.csv'\nsweep = { load = [1] }\n"))


def test_syntax_errors_give_line_and_column(tmp_path: Path) -> None:
    with pytest.raises(ExperimentError, match=r"exp\.toml:2:\d+: "):
        load_experiment(write(tmp_path, "schedulers = ['fair']\nseeds = = 3\n"))
    with pytest.raises(ExperimentError, match=r"exp\.yaml:3:\d+: "):
        load_experiment(write(tmp_path, "schedulers: [fair]\nseeds: 2\n  x: 1\n", "exp.yaml"))


def test_cli_reports_a_bad_file_in_one_line(cli: Cli, tmp_path: Path) -> None:
    path = write(tmp_path, "schedulers = ['fair']\n[workload]\ngenerator = 'default'\nload = 'heavy'\n")
    assert_one_line_error(cli("run", path), 1, f"{path}: workload.load: coflow-benchmark: load:")


def test_yaml_and_toml_give_the_same_grid(tmp_path: Path) -> None:
    toml = load_experiment(write(tmp_path, SMALL))
    yaml_text = """
name: small
seed: 11
seeds: 2
baseline: fair
schedulers: [fair, varys, {spec: fifo-lm, sweep: {threshold: [p50, inf]}}]
workload: {generator: coflow-benchmark, n_coflows: 20, n_hosts: 10, sweep: {load: [0.5, 1.0]}}
"""
    yaml = load_experiment(write(tmp_path, yaml_text, "exp.yaml"))
    assert [p.key for p in yaml.points()] == [p.key for p in toml.points()]


# -- the grid and its seeds -----------------------------------------------------------------------


def test_grid_pairs_schedulers_on_one_workload_per_cell(tmp_path: Path) -> None:
    exp = load_experiment(write(tmp_path, SMALL))
    points = exp.points()
    assert len(points) == 4 * 2 * 2  # fair, varys, fifo-lm x 2 thresholds; 2 loads; 2 seeds
    assert len({p.key for p in points}) == len(points)
    by_cell: dict[str, set[int | None]] = {}
    for p in points:
        by_cell.setdefault(p.cell, set()).add(p.seed)
    assert len(by_cell) == 4 and all(len(seeds) == 1 for seeds in by_cell.values())
    assert len({p.seed for p in points}) == 4
    fifo = [p for p in points if p.label == "fifo-lm"]
    assert {p.scheduler for p in fifo} == {"fifo-lm:threshold=p50", "fifo-lm:threshold=inf"}
    assert points[0].seed == derive_seed(11, 0, {"load": 0.5})


def test_seeds_depend_on_values_not_positions(tmp_path: Path) -> None:
    """Adding a load keeps every other point (and its stored result) as it was."""
    before = {p.key: p.seed for p in load_experiment(write(tmp_path, SMALL)).points()}
    grown = SMALL.replace("load = [0.5, 1.0]", "load = [0.3, 0.5, 1.0]")
    after = {p.key: p.seed for p in load_experiment(write(tmp_path, grown)).points()}
    assert set(before) < set(after)
    assert all(after[k] == s for k, s in before.items())
    reseeded = SMALL.replace("seed = 11", "seed = 12")
    assert not set(before) & {p.key for p in load_experiment(write(tmp_path, reseeded)).points()}


def test_common_seeds_share_a_replicate_s_seed_across_cells(tmp_path: Path) -> None:
    exp = load_experiment(write(tmp_path, SMALL.replace("seeds = 2", "seeds = 2\ncommon_seeds = true")))
    seeds = {(p.replicate, p.coords["workload.load"]): p.seed for p in exp.points()}
    assert seeds[(0, 0.5)] == seeds[(0, 1.0)] == derive_seed(11, 0, {})
    assert seeds[(1, 0.5)] == seeds[(1, 1.0)] != seeds[(0, 0.5)]
    with pytest.raises(ExperimentError, match=r"common_seeds: expected true or false"):
        load_experiment(write(tmp_path, SMALL.replace("seeds = 2", "seeds = 2\ncommon_seeds = 1")))


# -- runs -----------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def small_store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """SMALL run once through the CLI (two local threads)."""
    from conftest import run_cli

    tmp = tmp_path_factory.mktemp("small")
    path = write(tmp, SMALL)
    proc = run_cli("run", path, "--out", tmp / "store", "--workers", "2")
    assert proc.returncode == 0, proc.stderr
    assert "16 points: 4 scheduler specs x load (2) x 2 seeds" in proc.stdout
    assert "finished   16 done, 0 failed" in proc.stdout
    return tmp / "store"


def test_store_rows_configuration_and_version(small_store: Path) -> None:
    points = pq.read_table(small_store / "points.parquet").to_pandas()
    coflows = pq.read_table(small_store / "coflows.parquet").to_pandas()
    assert len(points) == 16 and set(points["status"]) == {"done"}
    assert list(points["index"]) == list(range(16))
    assert set(points["coflowkit_version"]) == {coflowkit.__version__}
    assert (points["n_coflows"] == 20).all()
    assert len(coflows) == 16 * 20
    assert coflows.groupby("point").size().to_dict() == dict.fromkeys(points["point"], 20)
    assert list(coflows.columns) == ["point", *coflowkit.results.COFLOW_COLUMNS]
    # Every point carries what produced it; regenerating from it gives the same numbers.
    row = points[(points["label"] == "varys") & (points["workload.load"] == 1.0)].iloc[0]
    config = json.loads(row["config"])
    assert config["scheduler"] == "varys" and config["workload"]["params"]["load"] == 1.0
    assert config["workload"]["params"]["seed"] == row["seed"]
    w = coflowkit.generate(
        config["workload"]["generator"], preset=config["workload"]["preset"], **config["workload"]["params"]
    )
    again = coflowkit.simulate(w, "varys", progress=False).coflows()
    mine = coflows[coflows["point"] == row["point"]]
    assert list(again["cct_s"]) == list(mine["cct_s"])
    assert row["cct_mean_s"] == pytest.approx(again["cct_s"].mean(), rel=1e-12)
    meta = pq.read_schema(small_store / "points.parquet").metadata
    assert json.loads(meta[b"coflowkit.experiment"])["name"] == "small"


def test_a_rerun_skips_finished_points(cli: Cli, small_store: Path, tmp_path: Path) -> None:
    parts = {p.name: p.stat().st_mtime_ns for p in (small_store / "parts").iterdir()}
    exp = json.loads((small_store / "experiment.json").read_text())
    proc = cli("run", exp["file"], "--out", small_store)
    assert proc.returncode == 0, proc.stderr
    assert "running    nothing: all 16 points are done" in proc.stdout
    assert {p.name: p.stat().st_mtime_ns for p in (small_store / "parts").iterdir()} == parts


def test_results_do_not_depend_on_the_number_of_threads(cli: Cli, small_store: Path, tmp_path: Path) -> None:
    exp = json.loads((small_store / "experiment.json").read_text())
    proc = cli("run", exp["file"], "--out", tmp_path / "one", "--workers", "1", "--no-progress")
    assert proc.returncode == 0, proc.stderr
    assert_same_store(small_store, tmp_path / "one")


def test_a_failing_point_is_recorded_and_the_others_run(cli: Cli, tmp_path: Path) -> None:
    """A fabric too small for the workload fails its points; the rest finish, and the run exits 1."""
    text = """
schedulers = ["fair", "varys"]
[workload]
generator = "coflow-benchmark"
n_coflows = 10
n_hosts = 10
[topology]
spec = "bigswitch"
sweep = { hosts = [4, 10] }
"""
    path = write(tmp_path, text)
    proc = cli("run", path, "--out", tmp_path / "store")
    line = assert_one_line_error(proc, 1, "2 of 4 points failed")
    assert "points.parquet" in line
    points = pq.read_table(tmp_path / "store" / "points.parquet").to_pandas()
    failed = points[points["status"] == "failed"]
    assert list(failed["topology.hosts"]) == [4, 4]
    assert failed["error"].str.contains("host", case=False).all(), list(failed["error"])
    assert (points[points["status"] == "done"]["topology.hosts"] == 10).all()
    report = cli("report", tmp_path / "store", "--no-figures")
    assert report.returncode == 0, report.stderr
    text = (tmp_path / "store" / "report.md").read_text()
    assert "## Failed points" in text and "hosts=4" in text


# -- figures and report ---------------------------------------------------------------------------


def test_plot_writes_every_figure_kind_as_png_and_pdf(cli: Cli, small_store: Path, tmp_path: Path) -> None:
    proc = cli("plot", small_store, "-o", tmp_path / "figs")
    assert proc.returncode == 0, proc.stderr
    names = {p.stem for p in (tmp_path / "figs").iterdir()}
    assert {
        "cct-cdf",
        "bins-improvement-mean",
        "bins-improvement-p95",
        "sweep-load-improvement_mean",
        "sweep-load-improvement_p95",
        "sweep-threshold-improvement_mean",
    } <= names
    for name in names:
        assert (tmp_path / "figs" / f"{name}.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
        assert (tmp_path / "figs" / f"{name}.pdf").read_bytes()[:5] == b"%PDF-"


def test_report_has_tables_and_figures(cli: Cli, small_store: Path) -> None:
    proc = cli("report", small_store)
    assert proc.returncode == 0, proc.stderr
    text = (small_store / "report.md").read_text()
    assert text.startswith("# Experiment `small`")
    assert "| scheduler | SN | LN | SW | LW | All |" in text
    assert "![" in text and "(figures/cct-cdf.png)" in text
    assert "## Against load (threshold = p50)" in text
    assert "## Against threshold (load = 0.5)" in text
    # fifo-lm with an infinite threshold is FIFO; with threshold p50 it is not fair: numbers differ.
    assert "| fifo-lm |" in text


def test_the_example_experiments_are_valid(cli: Cli) -> None:
    for path in sorted((ROOT / "examples" / "experiments").iterdir()):
        proc = cli("run", path, "--dry-run")
        if path.name == "fb2010.toml" and not (ROOT.parent / "shared" / "data").is_dir():
            continue
        assert proc.returncode == 0, (path, proc.stderr)
    loads = load_experiment(ROOT / "examples" / "experiments" / "loads.toml")
    assert len(loads.points()) == 5 * 5 * 3


def test_the_tafe_reproduction_files_are_valid(cli: Cli) -> None:
    # examples/reproductions/tafe*.toml (make repro-tafe): every scheduler spec, generator
    # parameter and the topology with CPUs check at the door.
    for name in ("tafe.toml", "tafe-large.toml"):
        proc = cli("run", ROOT / "examples" / "reproductions" / name, "--dry-run")
        assert proc.returncode == 0, (name, proc.stderr)
    exp = load_experiment(ROOT / "examples" / "reproductions" / "tafe.toml")
    # 2 distributions x 4 task counts x 5 seeds, 12 scheduler points each.
    assert len(exp.points()) == 2 * 4 * 5 * 12
