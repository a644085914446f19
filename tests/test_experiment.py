"""Experiment files: checked at the door, expanded into points with derived seeds,
run into a store that resumes, recorded failures, figures and a report."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow.parquet as pq
import pytest

import coflowkit
from coflowkit.experiments.experiment import ExperimentError, derive_seed, load_experiment
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


def test_missed_drop_is_part_of_each_point(tmp_path: Path) -> None:
    """`missed = "drop"` changes every key and reaches the runner; the default keeps older keys."""
    finish = load_experiment(write(tmp_path, SMALL)).points()
    drop = load_experiment(write(tmp_path, 'missed = "drop"\n' + SMALL)).points()
    assert not {p.key for p in finish} & {p.key for p in drop}
    assert all(p.task["missed"] == "drop" and p.config["missed"] == "drop" for p in drop)
    assert all("missed" not in p.config for p in finish)
    with pytest.raises(ExperimentError, match="missed: 'keep' is not one of finish, drop"):
        load_experiment(write(tmp_path, 'missed = "keep"\n' + SMALL))


#: The packet engine on a small web-search mix: DCTCP (the baseline), TCP with its own buffer, pFabric.
PACKET = """
name = "packet"
engine = "packet"
packet = "buffer=100p"
baseline = "dctcp"
schedulers = ["dctcp", { spec = "tcp", packet = { buffer = "50p" } }, "pfabric"]
metrics = ["fct_mean", "fct_p99"]

[workload]
generator = "websearch"
n_hosts = 4
n_flows = 100
load = 0.5
"""


def test_packet_engine_points_carry_their_options(tmp_path: Path) -> None:
    """`engine = "packet"` reaches each point with the file's options, then the entry's; the flow
    engine keeps older keys."""
    points = load_experiment(write(tmp_path, PACKET)).points()
    assert [(p.task["engine"], p.task["packet"]) for p in points] == [
        ("packet", "buffer=100p"),
        ("packet", "buffer=100p,buffer=50p"),
        ("packet", "buffer=100p"),
    ]
    assert all(p.config["engine"] == "packet" for p in points)
    assert all("engine" not in p.config and "engine" not in p.task for p in load_experiment(write(tmp_path, SMALL)).points())


@pytest.mark.parametrize(
    ("change", "needle"),
    [
        ('engine = "ns3"', "engine: 'ns3' is not one of flow, packet, decomposed"),
        ('engine = "flow"', 'packet: options of the packet engine: set engine = "packet"'),
        ('packet = "nope=1"', "packet: packet option 'nope': unknown option"),
        ('missed = "drop"', "missed: 'drop': dropping late flows is an option of the flow-level engine"),
        ('decompose = "cluster=9"', 'decompose: an option of the decomposed engine: set engine = "decomposed"'),
        ("link_tasks = 2", 'link_tasks: an option of the decomposed engine: set engine = "decomposed"'),
        ('schedulers = ["dctcp", "quic"]', "schedulers[1].spec: unknown scheduler 'quic'"),
    ],
)
def test_bad_packet_experiments_name_the_key(tmp_path: Path, change: str, needle: str) -> None:
    key = change.split(" ", 1)[0]
    text = "\n".join(line for line in PACKET.splitlines() if not line.startswith(key + " "))
    with pytest.raises(ExperimentError) as e:
        load_experiment(write(tmp_path, change + "\n" + text))
    assert needle in str(e.value) and "\n" not in str(e.value), str(e.value)


def test_a_decomposed_experiment_runs_and_refuses_a_coordinator(cli: Cli, tmp_path: Path) -> None:
    text = PACKET.replace('engine = "packet"', 'engine = "decomposed"').replace(', "pfabric"]', ', "pias"]')
    path = write(tmp_path, text)
    cli("run", path, "--out", tmp_path / "store")
    points = pq.read_table(tmp_path / "store" / "points.parquet").to_pandas()
    assert list(points["status"]) == ["done"] * 3, points["error"].tolist()
    cli("report", tmp_path / "store")
    assert "packet level one link at a time" in (tmp_path / "store" / "report.md").read_text()
    with pytest.raises(ExperimentError, match="needs a central coordinator"):
        load_experiment(write(tmp_path, text.replace(', "pias"]', ', "aalo"]')))
    # Its own options: checked by the engine, naming the key; in the points' keys (they change the
    # results) but for link_tasks (it does not: every split gives the same run, tested below).
    for bad, says in [('decompose = "cluster=x"', "decompose: decomposed option"), ("link_tasks = 0", "link_tasks: must be at least 1")]:
        with pytest.raises(ExperimentError, match=says):
            load_experiment(write(tmp_path, bad + "\n" + text))
    split = 'decompose = "cluster=30"\nlink_tasks = 3\n' + text
    points = load_experiment(write(tmp_path, split)).points()
    assert [p.task["decompose"] for p in points] == ["cluster=30"] * 3
    assert [p.task["link_tasks"] for p in points] == [3] * 3
    one = load_experiment(write(tmp_path, split.replace("link_tasks = 3", "link_tasks = 1"))).points()
    assert [p.key for p in points] == [p.key for p in one]
    assert points[0].key != load_experiment(write(tmp_path, text)).points()[0].key


def test_a_packet_experiment_runs_and_reports(cli: Cli, tmp_path: Path) -> None:
    path = write(tmp_path, PACKET)
    cli("run", path, "--out", tmp_path / "store")
    points = pq.read_table(tmp_path / "store" / "points.parquet").to_pandas()
    assert list(points["status"]) == ["done"] * 3, points["error"].tolist()
    cli("report", tmp_path / "store")
    report = (tmp_path / "store" / "report.md").read_text()
    assert "| engine | packet level (docs/packet-engine.md) options `buffer=100p`; tcp: `buffer=50p` |" in report


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
    assert list(coflows.columns) == ["point", *coflowkit.sim.results.COFLOW_COLUMNS]
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
        "cct-ccdf",
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
    """Every example and reproduction experiment file checks (none is run: `make repro-*` does that)."""
    files = [*(ROOT / "examples" / "experiments").iterdir(), *(ROOT / "examples" / "reproductions").glob("*.toml")]
    files = [p for p in files if p.name != "claims.toml"]  # the claims table's declaration (claims.py)
    for path in sorted(files):
        proc = cli("run", path, "--dry-run")
        if "fb2010" in path.name and not (ROOT.parent / "shared" / "data").is_dir():
            continue
        assert proc.returncode == 0, (path, proc.stderr)
    loads = load_experiment(ROOT / "examples" / "experiments" / "loads.toml")
    assert len(loads.points()) == 5 * 5 * 3


# -- one parameter at a time, bins, tick names ----------------------------------------------------

#: Two workload axes and a topology axis varied one at a time around the center (plot.at).
STAR = """
name = "star"
seed = 5
seeds = 2
grid = "one-at-a-time"
schedulers = ["fair", "varys"]
bins = { short_below = "10MiB", narrow_up_to = 20 }

[workload]
generator = "coflow-benchmark"
n_coflows = 12
sweep = { load = [0.5, 1.0, 1.5], n_hosts = [10, 20], mix = [[0.52, 0.16, 0.15, 0.17], [1, 0, 0, 0]] }

[topology]
spec = "bigswitch"
sweep = { host_rate = ["1Gbps", "10Gbps"] }

[plot]
at = { load = 1.0, n_hosts = 20, mix = "0.52,0.16,0.15,0.17", host_rate = "1Gbps" }
ticks = { mix = { "1,0,0,0" = "SN only", "0.52,0.16,0.15,0.17" = "mixed" } }
"""


def test_one_at_a_time_varies_each_axis_alone_around_the_center(tmp_path: Path) -> None:
    exp = load_experiment(write(tmp_path, STAR))
    points = exp.points()
    center = {"workload.load": 1.0, "workload.n_hosts": 20, "workload.mix": "0.52,0.16,0.15,0.17"}
    center["topology.host_rate"] = "1Gbps"
    cells = {tuple(sorted(p.coords.items())) for p in points}
    expected = [center]
    for axis, values in [
        ("workload.load", [0.5, 1.5]),
        ("workload.n_hosts", [10]),
        ("workload.mix", ["1,0,0,0"]),
        ("topology.host_rate", ["10Gbps"]),
    ]:
        expected += [{**center, axis: v} for v in values]
    assert cells == {tuple(sorted(c.items())) for c in expected}
    assert len(points) == len(expected) * 2 * 2  # cells x replicates x schedulers
    assert len({p.key for p in points}) == len(points)
    # A cell's seed is the same as the product grid would give it: adding an axis value moves nothing.
    product = load_experiment(write(tmp_path, STAR.replace('grid = "one-at-a-time"', "")))
    keys = {p.key for p in product.points()}
    assert {p.key for p in points} <= keys and len(keys) == 3 * 2 * 2 * 2 * 2 * 2
    with pytest.raises(ExperimentError, match=r"grid: 'star' is not one of product, one-at-a-time"):
        load_experiment(write(tmp_path, STAR.replace('"one-at-a-time"', '"star"')))


def test_dry_run_describes_a_one_at_a_time_grid(cli: Cli, tmp_path: Path) -> None:
    proc = cli("run", write(tmp_path, STAR), "--dry-run")
    assert proc.returncode == 0, proc.stderr
    assert "24 points: 2 scheduler specs x (center + load (2) + n_hosts (1) + mix (1) + host_rate (1))" in proc.stdout


@pytest.mark.parametrize(
    ("change", "needle"),
    [
        (('short_below = "10MiB"', 'short_below = "10 parsecs"'), "bins.short_below: "),
        (('short_below = "10MiB"', "short_below = 0"), "bins.short_below: must be at least 1 byte"),
        (("narrow_up_to = 20", "narrow_up_to = 0"), "bins.narrow_up_to: must be at least 1, got 0"),
        (("narrow_up_to = 20", "wide_from = 20"), "bins.wide_from: unknown key (known: short_below, narrow_up_to)"),
        (('"1,0,0,0" = "SN only"', '"0,1,0,0" = "LN only"'), "plot.ticks.mix.0,1,0,0: not among the swept values"),
        (("ticks = { mix", "ticks = { hosts"), "plot.ticks.hosts: not a swept parameter"),
    ],
)
def test_bad_bins_and_ticks_name_the_key(tmp_path: Path, change: tuple[str, str], needle: str) -> None:
    assert change[0] in STAR
    with pytest.raises(ExperimentError) as e:
        load_experiment(write(tmp_path, STAR.replace(*change)))
    assert needle in str(e.value), str(e.value)


def test_rebinning_at_the_core_s_thresholds_gives_the_core_s_numbers(small_store: Path) -> None:
    """`rebin` (Python, from coflows.parquet) against the core's own per-bin summary."""
    from coflowkit.experiments.analysis import rebin
    from coflowkit.experiments.store import Store

    store = Store(small_store)
    points = store.points().to_pandas()
    again = rebin(points, store.coflows(), 5 * 2**20, 50)
    for b in ("SN", "LN", "SW", "LW"):
        assert list(again[f"{b}_n_coflows"].fillna(0)) == list(points[f"{b}_n_coflows"].fillna(0))
        for stat in ("mean", "median", "p95", "p99", "max"):
            col = f"{b}_cct_{stat}_s"
            pd_testing_close(again[col], points[col])


def pd_testing_close(a: object, b: object) -> None:
    import numpy as np

    x, y = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    assert np.array_equal(np.isnan(x), np.isnan(y))
    assert np.allclose(x[~np.isnan(x)], y[~np.isnan(y)], rtol=1e-12, atol=0)


def test_a_star_store_reports_its_bins_and_ticks(cli: Cli, tmp_path: Path) -> None:
    path = write(tmp_path, STAR.replace("seeds = 2", "seeds = 1"))
    proc = cli("run", path, "--out", tmp_path / "store", "--workers", "2", "--no-progress")
    assert proc.returncode == 0, proc.stderr
    from coflowkit.experiments.analysis import load_store

    data = load_store(tmp_path / "store")
    coflows = data.store.coflows().to_pandas()
    for _, row in data.done.iterrows():
        mine = coflows[coflows["point"] == row["point"]]
        sn = mine[(mine["length_bytes"] < 10 * 2**20) & (mine["width"] <= 20)]
        assert row["SN_n_coflows"] == len(sn)
        sums = sum(row[f"{b}_n_coflows"] for b in ("SN", "LN", "SW", "LW"))
        assert sums == len(mine) == row["n_coflows"]
    proc = cli("report", tmp_path / "store")
    assert proc.returncode == 0, proc.stderr
    text = (tmp_path / "store" / "report.md").read_text()
    assert "short (S) when the longest flow is under 10 MiB, narrow (N) with at most 20 flows" in text
    assert "| scheduler | mixed | SN only |" in text
    assert "One parameter at a time" in text
    names = {p.stem for p in (tmp_path / "store" / "figures").iterdir()}
    assert {"sweep-load-improvement_mean", "sweep-n_hosts-improvement_mean", "sweep-mix-improvement_mean"} <= names


def test_the_tafe_reproduction_files_are_valid(cli: Cli) -> None:
    # examples/reproductions/tafe*.toml (make repro-tafe): every scheduler spec, generator
    # parameter and the topology with CPUs check at the door.
    for name in ("tafe.toml", "tafe-large.toml"):
        proc = cli("run", ROOT / "examples" / "reproductions" / name, "--dry-run")
        assert proc.returncode == 0, (name, proc.stderr)
    exp = load_experiment(ROOT / "examples" / "reproductions" / "tafe.toml")
    # 2 distributions x 4 task counts x 5 seeds, 12 scheduler points each.
    assert len(exp.points()) == 2 * 4 * 5 * 12


def test_run_each_runs_in_turn_and_resumes(tmp_path: Path) -> None:
    """`run_each` (the reproduction scripts' loop): one line per run, and a second call finds every point done."""
    import io

    from coflowkit.experiments.runner import run_each

    text = 'name = "{}"\nschedulers = ["fair", "fifo"]\n[workload]\ngenerator = "coflow-benchmark"\nn_coflows = 6\n'
    exps = [load_experiment(write(tmp_path, text.format(n), name=f"{n}.toml")) for n in ("one", "two")]
    runs = [(e, tmp_path / "stores" / e.name) for e in exps]
    out = io.StringIO()
    first = run_each(runs, workers=1, progress=out)
    assert [(s.n_done, s.n_failed) for s in first] == [(2, 0), (2, 0)]
    lines = [x for x in out.getvalue().splitlines() if x.startswith(("one:", "two:"))]
    assert [x.split(":")[0] for x in lines] == ["one", "two"] and "2 run, 0 already done, 0 failed" in lines[0]
    again = run_each(runs, workers=1)
    assert [(s.n_done, s.n_skipped) for s in again] == [(0, 2), (0, 2)]


def test_coflow_bins_short_below_and_narrow_up_to():
    """Short strictly below the length bound, narrow up to and including the width bound."""
    from coflowkit.experiments.analysis import coflow_bins

    got = coflow_bins([99, 100, 99, 100], [50, 50, 51, 51], 100, 50)
    assert got.tolist() == ["SN", "LN", "SW", "LW"]
