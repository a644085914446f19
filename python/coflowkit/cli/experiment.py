"""``coflowkit run``, ``plot`` and ``report``: an experiment's sweep, figures and report."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

import click

from ..experiments.experiment import Experiment, load_experiment
from ..experiments.runner import RunInterrupted, RunnerError, RunSummary, default_store, run_experiment
from .common import DataError, data_errors, one_line


def _load_experiment(path: Path) -> Experiment:
    with data_errors():
        return load_experiment(path)


def _grid_text(exp: Experiment, n_points: int) -> str:
    """``75 points: 5 schedulers x load (5) x 3 seeds``."""
    n_specs = sum(len(e.specs()) for e in exp.schedulers)
    parts = [f"{n_specs} scheduler spec{'s' if n_specs != 1 else ''}"]
    axes = (*exp.workload_axes, *exp.topology_axes)
    if exp.grid == "one-at-a-time" and axes:
        # The center, then each axis's other values alone.
        stars = " + ".join(["center", *(f"{a.param} ({len(a.values) - 1})" for a in axes)])
        parts.append(f"({stars})")
    else:
        parts += [f"{a.param} ({len(a.values)})" for a in axes]
    parts.append(f"{exp.n_seeds} seed{'s' if exp.n_seeds != 1 else ''}")
    return f"{n_points} points: {' x '.join(parts)}"


@click.command("run")
@click.argument("experiment", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option(
    "--out",
    type=click.Path(file_okay=False, path_type=Path),
    default=None,
    help="The result store (default: results/<experiment name>). Points already there are skipped.",
)
@click.option(
    "--cluster",
    metavar="ADDRESS",
    default=None,
    help="Run the points on the Dask cluster whose scheduler is at ADDRESS (tcp://host:8786), "
    "or named by a scheduler file (*.json). Default: threads on this machine's cores.",
)
@click.option(
    "--workers",
    type=click.IntRange(min=1),
    default=None,
    help="Local threads (default: one per core). Not with --cluster.",
)
@click.option(
    "--retry-failed/--no-retry-failed",
    default=True,
    show_default=True,
    help="Run points that failed in an earlier run again.",
)
@click.option("--dry-run", is_flag=True, help="Check the file and print the grid; run nothing.")
@click.option(
    "--progress/--no-progress",
    default=True,
    show_default=True,
    help="Show points done, failed and time left on stderr.",
)
def run_cmd(
    experiment: Path,
    out: Path | None,
    cluster: str | None,
    workers: int | None,
    retry_failed: bool,
    dry_run: bool,
    progress: bool,
) -> None:
    """Run every point of an EXPERIMENT file (TOML or YAML) into its result store.

    See docs/experiments.md for the file; examples/experiments/ for examples.
    Running an experiment again resumes it: finished points are kept and skipped."""
    if cluster is not None and workers is not None:
        raise click.UsageError("--workers sets local threads; with --cluster, the cluster has its workers")
    exp = _load_experiment(experiment)
    points = exp.points()
    store = out if out is not None else default_store(exp)
    click.echo(f"experiment {exp.name} ({experiment}): {_grid_text(exp, len(points))}")
    click.echo(f"store      {store}")
    if dry_run:
        for p in points:
            coords = ", ".join(f"{k.split('.', 1)[1]}={v}" for k, v in p.coords.items())
            click.echo(f"  {p.index:>5}  {p.key}  {p.scheduler}  replicate {p.replicate}  {coords}".rstrip())
        return

    def started(s: RunSummary) -> None:
        if s.n_todo == 0:
            click.echo(f"running    nothing: all {s.n_points} points are done")
        else:
            click.echo(f"running    {s.n_todo} points on {s.executor} ({s.n_skipped} already done)")

    try:
        with data_errors():
            summary = run_experiment(
                exp,
                store,
                cluster=cluster,
                workers=workers,
                retry_failed=retry_failed,
                progress=sys.stderr if progress else None,
                on_start=started,
            )
    except RunnerError as e:
        raise DataError(one_line(e)) from None
    except RunInterrupted as e:
        s = e.summary
        click.echo(
            f"coflowkit: interrupted: {s.n_done} points finished and {s.n_failed} failed in this run are stored "
            f"in {s.store}; {s.n_not_run} did not finish: run the same command again to resume",
            err=True,
        )
        sys.stdout.flush()
        sys.stderr.flush()
        # Points still running on local threads are given up: leave without waiting for them.
        os._exit(130)
    click.echo(
        f"finished   {summary.n_done} done, {summary.n_failed} failed in {summary.wall_s:.1f} s "
        f"({summary.n_skipped} skipped as already done)"
    )
    click.echo(f"wrote      {store / 'points.parquet'}, {store / 'coflows.parquet'}")
    if summary.n_failed:
        raise DataError(
            f"{summary.n_failed} of {summary.n_todo} points failed: their errors are in "
            f"{store / 'points.parquet'} (status, error) and in `coflowkit report {store}`"
        )


def _load_store(source: Path) -> Any:
    """A store (or an experiment file's default store), read for figures and reports."""
    from ..experiments.analysis import load_store  # with plots and reports only: matplotlib is slow to import

    try:
        return load_store(source)
    except FileNotFoundError as e:
        raise click.BadParameter(one_line(e), param_hint="'STORE'") from None
    except (ValueError, OSError) as e:
        raise DataError(one_line(e)) from None


@click.command("plot")
@click.argument("store", type=click.Path(exists=True, path_type=Path))
@click.option(
    "-o",
    "--out",
    type=click.Path(file_okay=False, path_type=Path),
    default=None,
    help="Directory for the figures (default: STORE/figures).",
)
@click.option(
    "--format",
    "formats",
    default="png,pdf",
    show_default=True,
    help="Comma-separated formats: png, pdf, svg.",
)
def plot_cmd(store: Path, out: Path | None, formats: str) -> None:
    """Draw an experiment's figures from its result STORE (or from its experiment file).

    CCT CDF, improvement (or normalized CCT) per bin for the mean and p95, each
    metric against each swept parameter, and deadline miss rates when deadlines
    were set; see docs/experiments.md."""
    fmts = [f.strip().lower() for f in formats.split(",") if f.strip()]
    bad = [f for f in fmts if f not in ("png", "pdf", "svg")]
    if bad or not fmts:
        raise click.BadParameter(f"{bad[0] if bad else formats!r}: use png, pdf or svg", param_hint="'--format'")
    from ..experiments.plots import make_figures

    data = _load_store(store)
    with data_errors():
        figures = make_figures(data, out, fmts)
    target = out if out is not None else data.store.root / "figures"
    click.echo(f"wrote {len(figures)} figures to {target}{os.sep} ({', '.join(fmts)}):")
    for f in figures:
        click.echo(f"  {f.name}: {f.caption}")


@click.command("report")
@click.argument("store", type=click.Path(exists=True, path_type=Path))
@click.option(
    "-o",
    "--out",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="The Markdown file (default: STORE/report.md).",
)
@click.option("--no-figures", is_flag=True, help="Tables only; do not draw the figures.")
def report_cmd(store: Path, out: Path | None, no_figures: bool) -> None:
    """Write a Markdown report of an experiment (tables and figures) from its result STORE."""
    from ..experiments.report import write_report

    data = _load_store(store)
    with data_errors():
        path = write_report(data, out, figures=not no_figures)
    click.echo(f"wrote {path}")
