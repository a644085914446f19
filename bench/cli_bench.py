"""Whole-process benchmark of the `coflowkit` CLI: wall time and peak memory.

Runs one command several times, each in a fresh process, and reports the
median wall time and the largest peak resident memory of the child (from
wait4's rusage). Used for the numbers in docs/benchmarks.md, e.g.:

    python bench/cli_bench.py --runs 3 -- .venv/bin/coflowkit simulate \
        --trace ../shared/data/FB2010-1Hr-150-0.txt --scheduler fair

Build the extension in release mode first (`make demo`, or
`.venv/bin/maturin develop --release`): a dev build is several times slower.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time


def run_once(cmd: list[str]) -> tuple[float, float]:
    """Runs `cmd` once; returns (wall seconds, peak RSS in MiB)."""
    t0 = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - t0
    if os.waitstatus_to_exitcode(status) != 0:
        err = proc.stderr.read().decode(errors="replace") if proc.stderr else ""
        sys.exit(f"cli_bench: error: {' '.join(cmd)} failed: {err.strip()}")
    return wall, usage.ru_maxrss / 1024.0


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=3, help="number of runs (median reported)")
    ap.add_argument("cmd", nargs=argparse.REMAINDER, help="the command, after --")
    args = ap.parse_args()
    cmd = args.cmd[1:] if args.cmd[:1] == ["--"] else args.cmd
    if not cmd:
        ap.error("no command given")
    walls, rss = [], []
    for _ in range(args.runs):
        w, r = run_once(cmd)
        walls.append(w)
        rss.append(r)
    print(
        f"runs={args.runs} median_wall_s={statistics.median(walls):.2f} "
        f"min_wall_s={min(walls):.2f} max_wall_s={max(walls):.2f} peak_rss_mib={max(rss):.0f}"
    )


if __name__ == "__main__":
    main()
