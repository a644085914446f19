"""Shared helpers of the Python tests: running the CLI, small workloads, the FB2010 trace."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

import coflowkit

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
