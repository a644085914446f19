"""The `coflowkit` command end to end: simulate, trace info, generate, schedulers."""

from __future__ import annotations

import csv
import subprocess
import sys
from pathlib import Path

import click
import pyarrow.parquet as pq

import coflowkit
from coflowkit.cli import COMMANDS
from coflowkit.cli import cli as cli_group
from conftest import Cli

COFLOW_COLUMNS = [
    "coflow_id",
    "job_id",
    "stage_id",
    "arrival_s",
    "release_s",
    "finish_s",
    "cct_s",
    "deadline_s",
    "deadline_met",
    "width",
    "length_bytes",
    "total_bytes",
    "bin",
]


def read_csv(path: Path) -> list[dict[str, str]]:
    with path.open(newline="") as f:
        return list(csv.DictReader(f))


def test_schedulers_lists_every_name(cli: Cli) -> None:
    proc = cli("schedulers")
    assert proc.returncode == 0, proc.stderr
    names = [line.split()[0] for line in proc.stdout.splitlines()]
    assert names == [n for n, _ in coflowkit.schedulers()]
    assert "fair" in names and "varys" in names


def test_simulate_embedded_workload_writes_tables(cli: Cli, tmp_path: Path) -> None:
    out = tmp_path / "out"
    proc = cli("simulate", "--scheduler", "fair,varys", "--baseline", "fair", "--out", out, "--per-flow")
    assert proc.returncode == 0, proc.stderr
    assert "Traceback" not in proc.stderr
    text = proc.stdout
    assert "200 coflows" in text and "baseline   fair" in text
    # The comparison table, then the metrics table (the last one headed "scheduler").
    comparison, _, metrics = text.rpartition("\nscheduler ")
    rows = [line.split() for line in comparison.splitlines() if line.startswith(("fair ", "varys "))]
    assert [(r[0], r[1]) for r in rows] == [(s, b) for s in ("fair", "varys") for b in coflowkit.BINS]
    assert all(r[-2:] == ["1.00", "1.00"] for r in rows if r[0] == "fair" and r[2] != "0")
    assert metrics.split()[:4] == ["flows", "fct_mean_s", "fct_p99_s", "slowdown_mean"]
    metric_rows = [line.split() for line in metrics.splitlines() if line.startswith(("fair ", "varys "))]
    assert [r[0] for r in metric_rows] == ["fair", "varys"]
    assert all(r[-2:] == ["-", "-"] for r in metric_rows)  # no deadlines in this workload

    w = coflowkit.synthetic()
    for s in ("fair", "varys"):
        coflows = read_csv(out / s / "coflows.csv")
        assert list(coflows[0].keys()) == COFLOW_COLUMNS
        assert len(coflows) == w.n_coflows
        assert all(float(r["cct_s"]) > 0 for r in coflows)
        table = pq.read_table(out / s / "coflows.parquet")
        assert table.column_names == COFLOW_COLUMNS
        assert table.num_rows == w.n_coflows
        assert [str(v) for v in table.column("coflow_id").to_pylist()] == [r["coflow_id"] for r in coflows]
        assert pq.read_table(out / s / "flows.parquet").num_rows == w.n_flows
        assert len(read_csv(out / s / "flows.csv")) == w.n_flows
        jobs = read_csv(out / s / "jobs.csv")
        assert len(jobs) == w.n_coflows  # no job ids: every coflow is its own job
        assert not (out / s / "link_util.parquet").exists()
    summary = read_csv(out / "summary.csv")
    assert list(summary[0].keys()) == ["scheduler", "bin", "count", "mean", "median", "p95", "p99", "max"]
    assert len(summary) == 2 * len(coflowkit.BINS)
    compare = read_csv(out / "compare.csv")
    assert {r["scheduler"] for r in compare} == {"fair", "varys"}
    metrics = read_csv(out / "metrics.csv")
    assert [r["scheduler"] for r in metrics] == ["fair", "varys"]
    assert list(metrics[0].keys()) == ["scheduler", *coflowkit.sim.results.METRIC_COLUMNS]
    assert not list(out.rglob("*.tmp")), "temporary files were left behind"


def test_simulate_reports_karuna_metrics_and_drops_late_flows(cli: Cli, tmp_path: Path) -> None:
    trace = tmp_path / "ws.csv"
    made = cli("generate", "websearch", "--n-hosts", 8, "--load", 0.9, "-p", "n_flows=200",
               "-p", "type1_fraction=0.3", "-p", "type3_fraction=0.3", "-o", trace)
    assert made.returncode == 0, made.stderr
    tables = {}
    for missed in ("finish", "drop"):
        proc = cli("simulate", "--trace", trace, "--scheduler", "karuna,pias", "--missed", missed)
        assert proc.returncode == 0, proc.stderr
        _, _, karuna = proc.stdout.rpartition("\nscheduler ")
        assert karuna.split()[:6] == ["type1_missed", "dropped", "t23_fct_mean_s", "t23_fct_p95_s",
                                      "short_mean_s", "short_p95_s"]
        tables[missed] = {r[0]: r for r in (line.split() for line in karuna.splitlines()[1:])}
    for s in ("karuna", "pias"):
        assert tables["finish"][s][2] == "0"
        missed = int(tables["drop"][s][1].split("/")[0])
        assert missed > 0 and tables["drop"][s][2] == str(missed)  # every miss is a drop
    bad = cli("simulate", "--trace", trace, "--scheduler", "karuna", "--missed", "keep")
    assert bad.returncode == 2 and "--missed" in bad.stderr


def test_simulate_defaults_to_every_scheduler(cli: Cli, tmp_path: Path) -> None:
    trace = tmp_path / "tiny.csv"
    assert cli("generate", "default", "--n-coflows", 12, "--n-hosts", 10, "--seed", 3, "-o", trace).returncode == 0
    proc = cli("simulate", "--trace", trace)
    assert proc.returncode == 0, proc.stderr
    ran = {line.split()[0] for line in proc.stdout.splitlines()[4:] if line.strip()} - {"scheduler"}
    assert ran == {n for n, _ in coflowkit.schedulers()}


def test_simulate_prints_without_pandas_or_pyarrow(cli: Cli, tmp_path: Path) -> None:
    """`coflowkit simulate` without --out prints its tables from plain rows and reads a CSV
    trace in the core: importing pandas and pyarrow (0.6 s of CPU) is left to the commands
    and methods that return or write tables (docs/benchmarks-history.md, issue 35)."""
    trace = tmp_path / "tiny.csv"
    assert cli("generate", "default", "--n-coflows", 10, "--n-hosts", 10, "-o", trace).returncode == 0
    code = (
        "import sys; from coflowkit.cli import main; "
        f"rc = main(['simulate', '--trace', {str(trace)!r}, '--scheduler', 'fair,varys', '--no-progress']); "
        "print(sorted({m.split('.')[0] for m in sys.modules} & {'pandas', 'pyarrow'}), rc)"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    assert "fair       All" in proc.stdout
    assert proc.stdout.splitlines()[-1] == "[] 0"


def test_every_command_is_found_by_its_name() -> None:
    ctx = click.Context(cli_group)
    for name in COMMANDS:
        command = cli_group.get_command(ctx, name)
        assert command is not None and command.name == name, name
    assert cli_group.list_commands(ctx) == sorted(COMMANDS)


def test_generate_and_trace_info_agree(cli: Cli, tmp_path: Path) -> None:
    for name in ("g.csv", "g.parquet"):
        path = tmp_path / "sub" / name
        proc = cli("generate", "default", "--seed", 9, "--load", 0.5, "--n-coflows", 30, "--n-hosts", 12, "-o", path)
        assert proc.returncode == 0, proc.stderr
        info = cli("trace", "info", path)
        assert info.returncode == 0, info.stderr
        assert "hosts          12\n" in info.stdout
        assert "coflows        30\n" in info.stdout
        assert "offered load   0.500" in info.stdout
    a = coflowkit.load_trace(tmp_path / "sub" / "g.csv").columns()
    b = coflowkit.load_trace(tmp_path / "sub" / "g.parquet").columns()
    assert all((a[k] == b[k]).all() for k in a)


def test_a_failed_write_keeps_what_was_written(cli: Cli, tmp_path: Path) -> None:
    trace = tmp_path / "tiny.csv"
    assert cli("generate", "default", "--n-coflows", 10, "--n-hosts", 10, "-o", trace).returncode == 0
    out = tmp_path / "out"
    assert cli("simulate", "--trace", trace, "-s", "fair", "--out", out).returncode == 0
    before = (out / "fair" / "coflows.csv").read_bytes()
    (out / "summary.csv").unlink()
    (out / "summary.csv").mkdir()  # the next run cannot write its summary
    proc = cli("simulate", "--trace", trace, "-s", "fair", "--out", out)
    assert proc.returncode == 1
    assert "summary.csv" in proc.stderr and "Traceback" not in proc.stderr
    assert (out / "fair" / "coflows.csv").read_bytes() == before
    assert not list(out.rglob("*.tmp"))


def test_simulate_link_util_writes_a_long_table(cli: Cli, tmp_path: Path) -> None:
    trace = tmp_path / "tiny.csv"
    assert cli("generate", "default", "--n-coflows", 8, "--n-hosts", 10, "--seed", 4, "-o", trace).returncode == 0
    out = tmp_path / "out"
    proc = cli("simulate", "--trace", trace, "-s", "fair,varys", "--link-util", "50ms", "--out", out)
    assert proc.returncode == 0, proc.stderr
    for s in ("fair", "varys"):
        table = pq.read_table(out / s / "link_util.parquet")
        assert table.column_names == coflowkit.sim.results.LINK_UTIL_COLUMNS
        df = table.to_pandas()
        n_links = 2 * 10
        assert df["link"].nunique() == n_links and table.num_rows % n_links == 0
        assert set(df["link_name"].astype(str)) >= {"Uplink(HostId(0))", "Downlink(HostId(9))"}
        starts = sorted(df["bin_start_s"].unique())
        assert starts[:2] == [0.0, 0.05]
        assert df["utilization"].between(0, 1 + 1e-9).all() and df["utilization"].max() > 0


def test_link_util_needs_out_and_a_duration(cli: Cli) -> None:
    from conftest import assert_one_line_error

    assert_one_line_error(cli("simulate", "-s", "fair", "--link-util", "1s"), 2, "--out")
    assert_one_line_error(cli("simulate", "-s", "fair", "--link-util", "soon", "--out", "x"), 2, "not a duration")
    assert_one_line_error(cli("simulate", "-s", "fair", "--link-util", "0", "--out", "x"), 2, "at least 1 ns")
