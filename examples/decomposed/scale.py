"""The decomposed engine at data-center scale: one experiment point (examples/decomposed/scale.toml,
or FILE) run locally and on local Dask clusters of 1, 2 and 4 workers; wall time and peak memory of
each, and the point's p50 / p99 FCT slowdown per size bin.

    python examples/decomposed/scale.py [FILE] [--workers 1 2 4] [--no-local] [--out DIR]
        [--decompose OPTIONS]

Each run is a fresh process (`coflowkit run`), timed whole. Locally the point's link simulations
run on `link_tasks` threads; on Dask (a `dask scheduler` and N `dask worker --nthreads 1`
processes on this machine) as `link_tasks` Dask tasks. `--decompose` replaces the file's
`decompose` (e.g. `cluster=20000`: more links simulated per cluster, so that the link simulations,
which more workers share, are more of the run). Peak memory: the largest sum, over the
run, of the resident memory of every process it uses (sampled every 0.2 s)."""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
BINS = [(0, 100_000, "<=100KB"), (100_000, 1_000_000, "100KB-1MB"), (1_000_000, 2**63, ">1MB")]


def rss(pids: list[int]) -> int:
    """The resident bytes of `pids` (those still alive)."""
    total = 0
    for pid in pids:
        try:
            for line in Path(f"/proc/{pid}/status").read_text().splitlines():
                if line.startswith("VmRSS:"):
                    total += int(line.split()[1]) * 1024
        except OSError:
            pass
    return total


def descendants(pid: int) -> list[int]:
    """`pid` and every process below it."""
    out, todo = [], [pid]
    while todo:
        p = todo.pop()
        out.append(p)
        try:
            kids = Path(f"/proc/{p}/task/{p}/children").read_text().split()
        except OSError:
            kids = []
        todo.extend(int(k) for k in kids)
    return out


class Peak:
    """Samples the resident memory of some process trees until stopped; keeps the largest sum."""

    def __init__(self, roots: list[int]):
        self.roots, self.peak, self._stop = roots, 0, threading.Event()
        self._t = threading.Thread(target=self._run, daemon=True)
        self._t.start()

    def _run(self) -> None:
        while not self._stop.wait(0.2):
            pids = [p for r in self.roots for p in descendants(r)]
            self.peak = max(self.peak, rss(pids))

    def stop(self) -> int:
        self._stop.set()
        self._t.join()
        return self.peak


def dask_cluster(workers: int, tmp: Path) -> tuple[str, list[subprocess.Popen[bytes]]]:
    """A Dask scheduler and `workers` one-thread workers on this machine."""
    dask = str(Path(sys.executable).with_name("dask"))
    sched_file = tmp / "scheduler.json"
    log = open(tmp / "dask.log", "ab")
    procs = [subprocess.Popen([dask, "scheduler", "--host", "127.0.0.1", "--port", "0", "--no-dashboard",
                               "--scheduler-file", str(sched_file)], stdout=log, stderr=subprocess.STDOUT)]
    deadline = time.monotonic() + 60
    while not sched_file.exists() or not sched_file.read_text().strip():
        if time.monotonic() > deadline:
            raise SystemExit("the Dask scheduler did not start: " + str(tmp / "dask.log"))
        time.sleep(0.1)
    address = json.loads(sched_file.read_text())["address"]
    for i in range(workers):
        procs.append(subprocess.Popen([dask, "worker", address, "--nthreads", "1", "--no-nanny", "--no-dashboard",
                                       "--memory-limit", "0", "--name", f"w{i}", "--local-directory", str(tmp / f"w{i}")],
                                      stdout=log, stderr=subprocess.STDOUT))
    from distributed import Client

    with Client(address, timeout=60) as c:
        c.wait_for_workers(workers, timeout=120)
    return address, procs


def run(file: Path, store: Path, cluster: str | None, watch: list[int]) -> tuple[float, int]:
    """`coflowkit run FILE` into `store` (fresh), on `cluster` or locally: wall seconds, peak bytes."""
    cmd = [sys.executable, "-m", "coflowkit", "run", str(file), "--out", str(store)]
    if cluster:
        cmd += ["--cluster", cluster]
    t = time.perf_counter()
    p = subprocess.Popen(cmd)
    peak = Peak([p.pid, *watch])
    rc = p.wait()
    wall = time.perf_counter() - t
    top = peak.stop()
    if rc != 0:
        raise SystemExit(f"{' '.join(cmd)}: exit {rc}")
    return wall, top


def slowdowns(store: Path, rate_bps: float = 10e9) -> list[str]:
    """The point's p50 / p99 FCT slowdown per size bin, as lines: each web-search flow is a coflow of
    its own, so its FCT is the coflow's CCT, over its bytes at `rate_bps` (every path's slowest hop)."""
    import numpy as np
    import pyarrow.parquet as pq

    t = pq.read_table(store / "coflows.parquet", columns=["cct_s", "total_bytes"])
    size = np.asarray(t.column("total_bytes"), dtype=float)
    slow = np.asarray(t.column("cct_s")) / (size * 8 / rate_bps)
    out = []
    for lo, hi, name in BINS:
        v = slow[(size > lo) & (size <= hi)]
        out.append(f"{name:<10} {len(v):>9} flows  p50 {np.percentile(v, 50):7.2f}  p99 {np.percentile(v, 99):7.2f}")
    return out


def with_decompose(file: Path, options: str, out: Path) -> Path:
    """A copy of experiment `file` in `out` whose `decompose` is `options`."""
    lines = file.read_text().splitlines()
    at = [i for i, line in enumerate(lines) if line.split("=")[0].strip() == "decompose"]
    if len(at) != 1:
        raise SystemExit(f"{file}: expected one `decompose = ...` line to replace, found {len(at)}")
    lines[at[0]] = f"decompose = {json.dumps(options)}"
    copy = out / file.name
    copy.write_text("\n".join(lines) + "\n")
    return copy


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("file", nargs="?", type=Path, default=HERE / "scale.toml")
    ap.add_argument("--workers", type=int, nargs="*", default=[1, 2, 4], help="Dask clusters' sizes (default 1 2 4)")
    ap.add_argument("--no-local", action="store_true", help="skip the local run")
    ap.add_argument("--out", type=Path, default=None, help="where the stores go (default: a temporary directory)")
    ap.add_argument("--decompose", default=None, help="the decomposition's options, instead of the file's")
    a = ap.parse_args()
    out = a.out or Path(tempfile.mkdtemp(prefix="coflowkit-scale-"))
    out.mkdir(parents=True, exist_ok=True)
    if a.decompose is not None:
        a.file = with_decompose(a.file, a.decompose, out)
    rows = []
    if not a.no_local:
        wall, peak = run(a.file, out / "local", None, [])
        rows.append(("local", wall, peak))
        print(f"local: {wall:.1f} s, peak {peak / 1e9:.2f} GB", flush=True)
        for line in slowdowns(out / "local"):
            print("  " + line)
    for n in a.workers:
        tmp = out / f"dask-{n}"
        tmp.mkdir(exist_ok=True)
        address, procs = dask_cluster(n, tmp)
        try:
            wall, peak = run(a.file, tmp / "store", address, [p.pid for p in procs])
        finally:
            for p in procs:
                p.terminate()
            for p in procs:
                try:
                    p.wait(timeout=30)
                except subprocess.TimeoutExpired:
                    p.kill()
                    p.wait()
        rows.append((f"Dask, {n} worker{'s' if n > 1 else ''}", wall, peak))
        print(f"Dask {n}: {wall:.1f} s, peak {peak / 1e9:.2f} GB", flush=True)
    print("\n| run | wall | peak memory |\n|---|---|---|")
    for name, wall, peak in rows:
        print(f"| {name} | {wall / 60:.1f} min ({wall:.0f} s) | {peak / 1e9:.2f} GB |")
    print(f"\nstores: {out}  (cpus: {os.cpu_count()})")


if __name__ == "__main__":
    main()
