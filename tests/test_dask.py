"""The same experiment file on a Dask cluster started on this machine (a scheduler and
two workers, each its own process) gives the local run's results bit for bit."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from conftest import assert_one_line_error, assert_same_store, run_cli, write

#: 2 schedulers x 3 loads x 2 seeds on a fat-tree: 12 points, a second or two each way.
GRID = """
name = "on-dask"
seed = 5
seeds = 2
schedulers = ["fair", "varys"]
topology = "fat-tree:k=4"
[workload]
generator = "coflow-benchmark"
n_coflows = 30
n_hosts = 16
sweep = { load = [0.3, 0.6, 0.9] }
"""


class Cluster:
    def __init__(self, address: str, scheduler_file: Path, worker_pids: list[int]):
        self.address, self.scheduler_file, self.worker_pids = address, scheduler_file, worker_pids


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Cluster]:
    """`dask scheduler` and two `dask worker`s (one thread each, no nanny), as separate processes."""
    dask = str(Path(sys.executable).with_name("dask"))
    tmp = tmp_path_factory.mktemp("dask")
    scheduler_file = tmp / "scheduler.json"
    procs: list[subprocess.Popen[bytes]] = []

    def spawn(args: list[str], log: str) -> subprocess.Popen[bytes]:
        with (tmp / log).open("wb") as f:
            p = subprocess.Popen([dask, *args], stdout=f, stderr=subprocess.STDOUT, cwd=tmp)
        procs.append(p)
        return p

    try:
        spawn(
            [
                "scheduler",
                "--host",
                "127.0.0.1",
                "--port",
                "0",
                "--no-dashboard",
                "--scheduler-file",
                str(scheduler_file),
            ],
            "scheduler.log",
        )
        deadline = time.monotonic() + 60
        while not scheduler_file.exists() or not scheduler_file.read_text().strip():
            assert procs[0].poll() is None, (tmp / "scheduler.log").read_text()
            assert time.monotonic() < deadline, "the Dask scheduler did not start"
            time.sleep(0.05)
        address = json.loads(scheduler_file.read_text())["address"]
        workers = [
            spawn(
                [
                    "worker",
                    address,
                    "--nthreads",
                    "1",
                    "--no-nanny",
                    "--no-dashboard",
                    "--name",
                    f"w{i}",
                    "--local-directory",
                    str(tmp / f"w{i}"),
                ],
                f"worker{i}.log",
            )
            for i in range(2)
        ]
        from distributed import Client

        with Client(address, timeout=60) as client:
            client.wait_for_workers(2, timeout=60)
        yield Cluster(address, scheduler_file, [w.pid for w in workers])
    finally:
        for p in reversed(procs):
            p.terminate()
        for p in procs:
            try:
                p.wait(timeout=20)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()


def test_cluster_run_equals_local_run(cluster: Cluster, tmp_path: Path) -> None:
    exp = write(tmp_path, GRID)
    local = run_cli("run", exp, "--out", tmp_path / "local", timeout=600)
    assert local.returncode == 0, local.stderr
    assert "on local, " in local.stdout

    remote = run_cli("run", exp, "--out", tmp_path / "dask", "--cluster", cluster.address, timeout=600)
    assert remote.returncode == 0, remote.stderr
    assert f"12 points on Dask cluster {cluster.address}, 2 workers" in remote.stdout
    assert_same_store(tmp_path / "local", tmp_path / "dask")

    # The points really ran in the worker processes.
    ran_on = pq.read_table(tmp_path / "dask" / "points.parquet").column("ran_on").to_pylist()
    pids = {int(r.rsplit(":", 1)[1]) for r in ran_on}
    assert pids <= set(cluster.worker_pids), (pids, cluster.worker_pids)

    # A scheduler file names the same cluster (how batch systems pass it on).
    by_file = run_cli("run", exp, "--out", tmp_path / "by-file", "--cluster", cluster.scheduler_file, timeout=600)
    assert by_file.returncode == 0, by_file.stderr
    assert_same_store(tmp_path / "local", tmp_path / "by-file")


def test_unreachable_cluster_is_named() -> None:
    from coflowkit.experiments.runner import RunnerError, _DaskExecutor

    with pytest.raises(RunnerError, match=r"^cannot reach the Dask scheduler at tcp://127\.0\.0\.1:9: "):
        _DaskExecutor("tcp://127.0.0.1:9", connect_timeout=1.0)


def test_cluster_and_workers_are_exclusive(tmp_path: Path) -> None:
    exp = write(tmp_path, GRID)
    proc = run_cli("run", exp, "--cluster", "tcp://127.0.0.1:9", "--workers", "2")
    assert_one_line_error(proc, 2, "--workers sets local threads")


#: One decomposed point whose link simulations are split into 3 tasks.
DECOMPOSED = """
name = "decomposed-on-dask"
engine = "decomposed"
decompose = "cluster=40"
link_tasks = 3
schedulers = ["pias"]
topology = "leaf-spine:leaves=2,spines=2,hosts=4,rate=10Gbps"
[workload]
generator = "websearch"
n_hosts = 8
n_flows = 80
load = 0.4
capacity_bps = 10e9
"""


def test_a_decomposed_point_split_into_link_tasks_equals_the_local_run(cluster: Cluster, tmp_path: Path) -> None:
    """On Dask the point's link simulations run as tasks of their own (each shard prepares the same
    plan); locally as threads. The store is the same either way."""
    exp = write(tmp_path, DECOMPOSED)
    local = run_cli("run", exp, "--out", tmp_path / "local", timeout=600)
    assert local.returncode == 0, local.stderr
    remote = run_cli("run", exp, "--out", tmp_path / "dask", "--cluster", cluster.address, timeout=600)
    assert remote.returncode == 0, remote.stderr
    assert_same_store(tmp_path / "local", tmp_path / "dask")
    write(tmp_path, DECOMPOSED.replace("link_tasks = 3", "link_tasks = 1"))  # the same file, one task
    single = run_cli("run", exp, "--out", tmp_path / "single", timeout=600)
    assert single.returncode == 0, single.stderr
    assert_same_store(tmp_path / "local", tmp_path / "single")
