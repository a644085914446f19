"""Killing the runner mid-sweep loses no finished point; running again runs only the rest,
and the store ends equal to an uninterrupted run's."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pyarrow.parquet as pq

from conftest import assert_same_store, run_cli, write

#: 12 points of the embedded workload's size (50 hosts, 200 coflows): long enough to stop mid-sweep.
SWEEP = """
name = "resume"
seed = 3
seeds = 3
schedulers = ["fair", "varys"]
[workload]
generator = "coflow-benchmark"
sweep = { load = [0.4, 0.8] }
"""
N_POINTS = 12
_WITH_DEFAULT_SIGINT = (
    "import os, signal, sys; signal.signal(signal.SIGINT, signal.SIG_DFL); "
    "os.execv(sys.executable, [sys.executable, '-m', 'coflowkit', *sys.argv[1:]])"
)


def parts(store: Path) -> dict[str, tuple[int, int]]:
    """Finished part files: name -> (inode, mtime), to tell whether one was rewritten."""
    d = store / "parts"
    if not d.is_dir():
        return {}
    return {p.name: (p.stat().st_ino, p.stat().st_mtime_ns) for p in d.iterdir() if not p.name.startswith(".")}


def start_and_stop(exp: Path, store: Path, sig: signal.Signals, after: int) -> subprocess.CompletedProcess[str]:
    """Starts `coflowkit run` on one thread, sends `sig` once `after` points are stored."""
    args = ["run", str(exp), "--out", str(store), "--workers", "1", "--no-progress"]
    # As from a terminal: SIGINT at its default. A background job of a non-interactive shell (how CI
    # may start the suite) ignores SIGINT, children inherit that, and Python then keeps ignoring it.
    cmd = [sys.executable, "-c", _WITH_DEFAULT_SIGINT, *args]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 300
    while len(parts(store)) < after:
        assert proc.poll() is None, ("the run ended before it could be stopped", proc.communicate())
        assert time.monotonic() < deadline, "no point finished in time"
        time.sleep(0.01)
    proc.send_signal(sig)
    out, err = proc.communicate(timeout=120)
    return subprocess.CompletedProcess(cmd, proc.returncode, out, err)


def test_killed_runner_resumes_with_only_unfinished_points(tmp_path: Path) -> None:
    exp = write(tmp_path, SWEEP)
    reference = run_cli("run", exp, "--out", tmp_path / "reference", timeout=600)
    assert reference.returncode == 0, reference.stderr

    store = tmp_path / "store"
    killed = start_and_stop(exp, store, signal.SIGKILL, after=3)
    assert killed.returncode == -signal.SIGKILL
    finished = parts(store)
    k = len(finished)
    assert 3 <= k < N_POINTS, f"{k} points finished before the kill: make the points longer"

    again = run_cli("run", exp, "--out", store, timeout=600)
    assert again.returncode == 0, again.stderr
    assert f"running    {N_POINTS - k} points on local" in again.stdout and f"({k} already done)" in again.stdout
    assert f"finished   {N_POINTS - k} done, 0 failed" in again.stdout
    after = parts(store)
    assert len(after) == N_POINTS
    assert {name: after[name] for name in finished} == finished  # not one finished point was run again
    assert not [p for p in (store / "parts").iterdir() if p.name.startswith(".")]  # no temporary left
    assert_same_store(tmp_path / "reference", store)


def test_ctrl_c_stores_what_finished_and_says_how_to_resume(tmp_path: Path) -> None:
    exp = write(tmp_path, SWEEP)
    store = tmp_path / "store"
    stopped = start_and_stop(exp, store, signal.SIGINT, after=2)
    assert stopped.returncode == 130, (stopped.stdout, stopped.stderr)
    assert "Traceback" not in stopped.stderr
    assert "coflowkit: interrupted:" in stopped.stderr and "run the same command again to resume" in stopped.stderr
    points = pq.read_table(store / "points.parquet").to_pandas()
    assert len(points) == N_POINTS
    done = set(points.loc[points["status"] == "done", "point"])
    assert len(done) >= 2 and {p.split(".")[0] for p in parts(store)} == done
    assert set(points["status"]) <= {"done", "pending"}
    coflows = pq.read_table(store / "coflows.parquet")
    assert set(coflows.column("point").to_pylist()) == done
    assert os.path.exists(store / "grid.json")
