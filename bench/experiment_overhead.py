"""The experiment runner's own cost per point: 1,000 tiny points, whole processes.

Each run times, in fresh processes, the median of ``--runs``:

* ``runner``: ``coflowkit run tiny.toml --out STORE --no-progress`` on an
  empty store (1,000 points: the embedded generator with 2 coflows on 2
  hosts, ``fair``), everything included: start-up, imports, checking the
  file, expanding the grid, the points, one Parquet part per point,
  consolidating the store;
* ``bare``: a process that imports coflowkit, reads the same file and makes
  the same 1,000 calls (generate, simulate) in a plain loop, writing
  nothing;

and reports (runner - bare) / 1,000: what the runner adds per point. With
``--workers 1`` the runner does the points on one thread as the bare loop
does, so the difference is the runner alone; with the default (a thread
per core) the points overlap and the difference can be smaller.

    python bench/experiment_overhead.py --runs 5
    python bench/experiment_overhead.py --runs 5 --workers 2

Build the extension in release mode first (`make demo`).
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

N_POINTS = 1000
TINY = f"""
name = "tiny"
seed = 1
seeds = {N_POINTS}
schedulers = ["fair"]
[workload]
generator = "coflow-benchmark"
n_coflows = 2
n_hosts = 2
mix = [1, 0, 0, 0]
"""
BARE = """
import sys
from coflowkit import _core
from coflowkit.experiments.experiment import load_experiment
for p in load_experiment(sys.argv[1]).points():
    w = p.task["workload"]
    workload = _core.generate_workload(w["generator"], w["preset"], [tuple(x) for x in w["params"]])
    _core.simulate(workload, [p.task["scheduler"]], None, None, False, False, p.task["topology"], None)
"""


def wall(cmd: list[str]) -> float:
    t0 = time.perf_counter()
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
    return time.perf_counter() - t0


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--workers", type=int, default=1, help="runner threads (default 1, like the bare loop)")
    args = ap.parse_args()
    bindir = Path(sys.executable).parent
    with tempfile.TemporaryDirectory() as tmp:
        exp = Path(tmp) / "tiny.toml"
        exp.write_text(TINY)
        store = Path(tmp) / "store"
        runner_cmd = [str(bindir / "coflowkit"), "run", str(exp), "--out", str(store), "--no-progress"]
        runner_cmd += ["--workers", str(args.workers)]
        bare_cmd = [sys.executable, "-c", BARE, str(exp)]
        runner, bare = [], []
        for _ in range(args.runs):
            shutil.rmtree(store, ignore_errors=True)
            runner.append(wall(runner_cmd))
            bare.append(wall(bare_cmd))
        parts = len(list((store / "parts").iterdir()))
        assert parts == N_POINTS, parts
    r, b = statistics.median(runner), statistics.median(bare)
    print(f"points={N_POINTS} runs={args.runs} workers={args.workers}")
    print(
        f"runner  median {r:.2f} s  (min {min(runner):.2f}, max {max(runner):.2f})  = {r / N_POINTS * 1e3:.2f} ms/point"
    )
    print(f"bare    median {b:.2f} s  (min {min(bare):.2f}, max {max(bare):.2f})  = {b / N_POINTS * 1e3:.2f} ms/point")
    print(f"runner overhead per point: {(r - b) / N_POINTS * 1e3:.2f} ms")


if __name__ == "__main__":
    main()
