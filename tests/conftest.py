"""Shared helpers of the Python tests: running the CLI, small workloads, the FB2010 trace."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pandas as pd
import pyarrow.parquet as pq
import pytest
from hypothesis import settings

import coflowkit
from coflowkit.experiments.store import VOLATILE_COLUMNS

# The suite's verdict depends on the commit only: Hypothesis draws the same
# examples on every machine and reads no example database. Fresh examples are
# `make fuzz`'s (tests/fuzz.py), which selects the "fuzz" profile and a seed.
settings.register_profile("deterministic", derandomize=True, database=None, print_blob=True)
settings.register_profile("fuzz", derandomize=False, database=None, print_blob=True)
settings.load_profile(os.environ.get("COFLOWKIT_HYPOTHESIS_PROFILE", "deterministic"))

ROOT = Path(__file__).resolve().parents[1]
#: The Facebook 2010 coflow-benchmark trace, kept outside the repository.
FB2010 = ROOT.parent / "shared" / "data" / "FB2010-1Hr-150-0.txt"

Cli = Callable[..., subprocess.CompletedProcess[str]]


def run_cli(*args: object, cwd: Path | None = None, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    """Runs `coflowkit ARGS...` in a fresh interpreter (the venv's), capturing its output."""
    return subprocess.run(
        [sys.executable, "-m", "coflowkit", *map(str, args)],
        capture_output=True,
        text=True,
        cwd=cwd,
        timeout=timeout,
    )


@pytest.fixture
def cli() -> Cli:
    return run_cli


@pytest.fixture(scope="session")
def small() -> coflowkit.Workload:
    """A workload that simulates in well under a second in a dev build."""
    return coflowkit.synthetic(n_hosts=16, n_coflows=40, seed=5)


@pytest.fixture
def fb2010() -> Path:
    if not FB2010.exists():
        pytest.skip(f"{FB2010} is absent")
    return FB2010


def assert_one_line_error(proc: subprocess.CompletedProcess[str], code: int, *needles: str) -> str:
    """The process failed with `code` and printed exactly one error line containing `needles`."""
    assert proc.returncode == code, (proc.returncode, proc.stdout, proc.stderr)
    assert "Traceback" not in proc.stderr and "Traceback" not in proc.stdout
    lines = proc.stderr.splitlines()
    assert len(lines) == 1, proc.stderr
    line = lines[0]
    assert line.startswith("coflowkit: error: "), line
    for needle in needles:
        assert needle in line, (needle, line)
    return line


def write(tmp_path: Path, text: str, name: str = "exp.toml") -> Path:
    """Writes an experiment file; returns its path."""
    path = tmp_path / name
    path.write_text(text)
    return path


def comparable(store: Path) -> tuple[pd.DataFrame, pd.DataFrame]:
    """A store's tables without what says how a point ran (time, place, resolved paths)."""
    points = pq.read_table(store / "points.parquet").to_pandas().drop(columns=list(VOLATILE_COLUMNS))
    points["config"] = points["config"].map(lambda c: {k: v for k, v in json.loads(c).items() if k != "resolved"})
    coflows = pq.read_table(store / "coflows.parquet").to_pandas()
    return points, coflows


def assert_same_store(a: Path, b: Path) -> None:
    """Two stores hold the same points, configurations and numbers, bit for bit."""
    points_a, coflows_a = comparable(a)
    points_b, coflows_b = comparable(b)
    pd.testing.assert_frame_equal(points_a, points_b, check_exact=True)
    pd.testing.assert_frame_equal(coflows_a, coflows_b, check_exact=True)
