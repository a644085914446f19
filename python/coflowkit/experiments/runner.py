"""Running an experiment: every point of its grid, in parallel, into its store.

A point is one call of :func:`run_point`: generate the workload with the
point's derived seed (or read the trace), simulate it under the point's
scheduler on the point's fabric, summarize. It is a pure function of the
point's ``task``, so it gives the same numbers wherever and in whatever
order it runs.

Where points run:

* locally (the default): a pool of threads, one per core. The simulation
  itself runs in Rust with the GIL released, so the threads use every core;
  there is no process start-up and nothing to pickle, which keeps the
  runner's own cost per point to about a millisecond (docs/benchmarks.md).
* on a Dask cluster (``cluster=ADDRESS``, ``coflowkit run --cluster``): the
  points are Dask tasks, submitted to the scheduler at ``ADDRESS`` (or named
  by a scheduler file, ``*.json``) and run by its workers. Dask owns the
  queue, the workers and their failures; the same cluster can come from
  ``dask scheduler``/``dask worker``, dask-jobqueue (SLURM, PBS) or
  dask-kubernetes. Workers need coflowkit of the same version (checked at
  connection) and must see the trace and topology files at the same paths.

Either way the results come back to this process, which alone writes the
store (:class:`~coflowkit.experiments.store.Store`): one part file per point, written
whole when the point finishes. A point already done is skipped, so running
an experiment again resumes it. A point that fails (an error of the core, a
panic, a Dask worker that died) is recorded with its error and the others go
on; failed points are tried again on the next run. On Ctrl-C, points not yet
started are cancelled and the store is consolidated; points that were
running are given up (they run again next time).
"""

from __future__ import annotations

import argparse
import concurrent.futures as cf
import json
import os
import pickle
import socket
import sys
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any, TypeVar

import pyarrow as pa

from .. import _core
from .._core import __version__
from .experiment import Experiment
from ..sim.results import COFLOW_COLUMNS, arrow_table
from .store import Store, utc_now
from ..sim.trace import load_trace

__all__ = [
    "PointsFailed",
    "RunInterrupted",
    "RunSummary",
    "RunnerError",
    "reproduction_parser",
    "run_each",
    "run_experiment",
    "run_point",
    "run_reproduction",
]


class RunnerError(RuntimeError):
    """The runner could not start (a cluster it cannot reach, a version mismatch)."""


@dataclass
class RunSummary:
    """What one run did."""

    store: Path
    #: Points in the grid.
    n_points: int
    #: Points already done before this run (skipped).
    n_skipped: int
    #: Points this run set out to run.
    n_todo: int
    #: Of those, finished and failed in this run.
    n_done: int = 0
    n_failed: int = 0
    #: Wall time of the run, s.
    wall_s: float = 0.0
    #: Where the points ran ("local, 2 threads" or the cluster's address).
    executor: str = ""

    @property
    def n_not_run(self) -> int:
        return self.n_todo - self.n_done - self.n_failed


class PointsFailed(RuntimeError):
    """A run of :func:`run_each` left failed points (they are in its store)."""

    def __init__(self, name: str, summary: RunSummary):
        super().__init__(f"{name}: {summary.n_failed} points failed; see {summary.store}/points.parquet")
        self.summary = summary


class RunInterrupted(KeyboardInterrupt):
    """Ctrl-C during a run: the store holds every point finished so far."""

    def __init__(self, summary: RunSummary):
        super().__init__()
        self.summary = summary


# -- one point (on a worker) ----------------------------------------------------------------------

_local = threading.local()
_traces: dict[tuple[str, int, int], Any] = {}
_traces_lock = threading.Lock()


def _workload(task: dict[str, Any]) -> Any:
    """The point's workload: the trace (kept per process) or the generated one (kept per thread)."""
    if "trace_path" in task:
        path = task["trace_path"]
        st = os.stat(path)
        trace_key = (path, st.st_mtime_ns, st.st_size)
        with _traces_lock:
            w = _traces.get(trace_key)
        if w is None:
            w = load_trace(path)
            with _traces_lock:
                if len(_traces) >= 2:
                    _traces.pop(next(iter(_traces)))
                _traces[trace_key] = w
        return w
    spec = task["workload"]
    key = json.dumps(spec, sort_keys=True)
    last = getattr(_local, "last", None)
    if last is not None and last[0] == key:
        return last[1]
    _local.last = None  # free the previous workload before making the next
    w = _core.generate_workload(spec["generator"], spec["preset"], [tuple(p) for p in spec["params"]])
    _local.last = (key, w)
    return w


def _link_parts(parts: list[bytes], scheduler: str, packet: str) -> list[tuple[list[int], int]]:
    """Some of a decomposed point's packet-level runs (link simulations, paths alone), sent as bytes
    (on a Dask worker: it needs neither the point's workload nor its plan)."""
    return _core.decomposed_run_parts(parts, scheduler, packet)


def _decomposed(task: dict[str, Any], w: Any) -> dict[str, Any]:
    """A decomposed point. Its packet-level runs (link simulations, paths alone) run as
    ``link_tasks`` Dask tasks when the point runs on a Dask worker (the point is prepared and
    combined here; each task is sent its share as bytes, dealt in turn from the costliest, and the
    worker's own slot is given back while they run), else on that many threads here (one by
    default: the runner already runs one point per core)."""
    n = int(task.get("link_tasks", 1))
    decompose = task.get("decompose", "")
    args = (w, [task["scheduler"]], task["packet"], None, None, False, task["topology"], None)
    if n > 1:
        try:
            from distributed import get_worker, worker_client

            get_worker()  # a ValueError when not on a Dask worker
        except (ImportError, ValueError):
            pass
        else:

            def ship(parts: list[bytes]) -> list[tuple[list[int], int]]:
                with worker_client() as client:
                    shares = [parts[k::n] for k in range(n)]
                    futures = client.map(
                        _link_parts, shares, [task["scheduler"]] * n, [task["packet"]] * n, pure=False
                    )
                    got = client.gather(futures)
                out: list[Any] = [None] * len(parts)
                for k, share in enumerate(got):
                    out[k::n] = share
                return out

            return _core.simulate_decomposed(*args, 1, decompose, ship)[0]
    return _core.simulate_decomposed(*args, n, decompose)[0]


def run_point(task: dict[str, Any]) -> dict[str, Any]:
    """Run one point; never raises for a failure of the point itself.

    Returns ``status`` (done or failed), ``error`` (one line, or None),
    ``coflows`` (an Arrow table, or None), ``summary`` (CCT rows per bin),
    ``metrics``, ``n_events``, ``elapsed_s``, ``ran_on`` (host:pid),
    ``finished_at`` and ``coflowkit_version``."""
    t0 = time.perf_counter()
    out: dict[str, Any] = {"status": "done", "error": None, "coflows": None, "summary": None, "metrics": None}
    out["n_events"] = None
    try:
        w = _workload(task)
        engine = task.get("engine", "flow")
        if engine == "packet":
            run = _core.simulate_packet(w, [task["scheduler"]], task["packet"], None, None, None, False, task["topology"])[0]
        elif engine == "decomposed":
            run = _decomposed(task, w)
        else:
            missed = task.get("missed", "finish")
            run = _core.simulate(w, [task["scheduler"]], None, None, False, False, task["topology"], None, missed)[0]
        out["coflows"] = arrow_table(run["coflows"], COFLOW_COLUMNS)
        out["summary"] = run["summary"]
        out["metrics"] = run["metrics"]
        out["n_events"] = int(run["n_events"])
    except BaseException as e:  # a panic in the core is a BaseException (pyo3's PanicException)
        if isinstance(e, KeyboardInterrupt | SystemExit):
            raise
        out.update(status="failed", error=_error_text(e), coflows=None)
    out["elapsed_s"] = time.perf_counter() - t0
    out["ran_on"] = f"{socket.gethostname()}:{os.getpid()}"
    out["finished_at"] = utc_now()
    out["coflowkit_version"] = __version__
    return out


def worker_version() -> str:
    """The coflowkit version where this runs (asked of every Dask worker)."""
    return __version__


def _error_text(e: BaseException) -> str:
    text = " ".join(str(e).split())
    return f"{type(e).__name__}: {text}" if text else type(e).__name__


# -- executors ------------------------------------------------------------------------------------


class _LocalExecutor:
    """Points on a pool of threads in this process."""

    def __init__(self, workers: int):
        self.pool = cf.ThreadPoolExecutor(max_workers=workers, thread_name_prefix="coflowkit-point")
        self.description = f"local, {workers} thread{'s' if workers != 1 else ''}"

    def submit_all(self, tasks: list[dict[str, Any]]) -> list[cf.Future[dict[str, Any]]]:
        return [self.pool.submit(run_point, t) for t in tasks]

    def as_completed(self, futures: list[Any]) -> Iterator[Any]:
        return cf.as_completed(futures)

    def cancel(self, futures: list[Any]) -> None:
        self.pool.shutdown(wait=False, cancel_futures=True)

    def close(self) -> None:
        self.pool.shutdown(wait=True)


class _DaskExecutor:
    """Points as tasks of a Dask distributed cluster."""

    def __init__(self, address: str, connect_timeout: float = 10.0, worker_timeout: float = 600.0):
        try:
            from distributed import Client
        except ImportError:
            raise RunnerError("--cluster needs dask's distributed package: pip install 'dask[distributed]'") from None
        try:
            if address.endswith(".json"):
                self.client = Client(scheduler_file=address, timeout=connect_timeout, set_as_default=False)
            else:
                self.client = Client(address, timeout=connect_timeout, set_as_default=False)
        except (OSError, TimeoutError, ValueError) as e:
            raise RunnerError(f"cannot reach the Dask scheduler at {address}: {_error_text(e)}") from None
        try:
            self.client.wait_for_workers(1, timeout=worker_timeout)
            versions = self.client.run(worker_version)
        except Exception as e:
            self.client.close()
            raise RunnerError(f"Dask cluster at {address}: no usable worker ({_error_text(e)})") from None
        wrong = {w: v for w, v in versions.items() if v != __version__}
        if wrong:
            self.client.close()
            worker, version = next(iter(wrong.items()))
            raise RunnerError(
                f"Dask worker {worker} has coflowkit {version}, this process {__version__}: "
                "install the same coflowkit on every worker"
            )
        n = len(versions)
        assert self.client.scheduler is not None  # a connected client has its scheduler
        self.description = f"Dask cluster {self.client.scheduler.address}, {n} worker{'s' if n != 1 else ''}"

    def submit_all(self, tasks: list[dict[str, Any]]) -> list[Any]:
        return self.client.map(run_point, tasks, pure=False)

    def as_completed(self, futures: list[Any]) -> Iterator[Any]:
        from distributed import as_completed

        return iter(as_completed(futures, loop=self.client.loop))

    def cancel(self, futures: list[Any]) -> None:
        self.client.cancel([f for f in futures if not f.done()])

    def close(self) -> None:
        self.client.close()


def _default_workers() -> int:
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:
        return max(1, os.cpu_count() or 1)


# -- progress -------------------------------------------------------------------------------------


class _Progress:
    """Points done, failed and time left, redrawn on one line of a terminal (nothing elsewhere)."""

    def __init__(self, total: int, skipped: int, stream: IO[str] | None):
        self.total, self.skipped = total, skipped
        self.stream = stream if stream is not None and stream.isatty() else None
        self.done = self.failed = 0
        self.t0 = time.monotonic()
        self.last_draw = 0.0

    def update(self, status: str) -> None:
        if status == "done":
            self.done += 1
        else:
            self.failed += 1
        if self.stream is None:
            return
        now = time.monotonic()
        if now - self.last_draw >= 0.1 or self.done + self.failed == self.total:
            self.last_draw = now
            self.stream.write("\r" + self.line(now) + "\x1b[K")
            self.stream.flush()

    def line(self, now: float) -> str:
        finished = self.done + self.failed
        elapsed = now - self.t0
        left = self.total - finished
        eta = "--:--" if finished == 0 else _clock(elapsed / finished * left)
        width = 24
        filled = int(width * finished / self.total) if self.total else width
        bar = "#" * filled + "." * (width - filled)
        skipped = f", {self.skipped} skipped" if self.skipped else ""
        return (
            f"points [{bar}] {finished}/{self.total}: {self.done} done, {self.failed} failed{skipped}; "
            f"{_clock(elapsed)} elapsed, {eta} left"
        )

    def close(self) -> None:
        if self.stream is not None and self.done + self.failed:
            self.stream.write("\n")
            self.stream.flush()


def _clock(seconds: float) -> str:
    s = int(round(seconds))
    h, rem = divmod(s, 3600)
    m, s = divmod(rem, 60)
    return f"{h}:{m:02d}:{s:02d}" if h else f"{m:02d}:{s:02d}"


# -- the run --------------------------------------------------------------------------------------


def default_store(experiment: Experiment) -> Path:
    """Where an experiment's results go without ``--out``: ``results/<name>``."""
    return Path("results") / experiment.name


def run_experiment(
    experiment: Experiment,
    out: str | os.PathLike[str] | None = None,
    *,
    cluster: str | None = None,
    workers: int | None = None,
    retry_failed: bool = True,
    progress: IO[str] | None = None,
    on_start: Callable[[RunSummary], None] | None = None,
) -> RunSummary:
    """Run every point of ``experiment`` not yet done into the store at ``out``
    (default ``results/<name>``), locally on ``workers`` threads (default: one
    per core) or on the Dask cluster at ``cluster``; draw progress on
    ``progress`` (a stream) if given. Raises :class:`RunInterrupted` on Ctrl-C."""
    if workers is not None and workers < 1:
        raise ValueError(f"workers: must be at least 1, got {workers}")
    store = Store(out if out is not None else default_store(experiment))
    with _store_lock(store.root):
        return _run(experiment, store, cluster, workers, retry_failed, progress, on_start)


def run_each(
    runs: Iterable[tuple[Experiment, str | os.PathLike[str]]],
    *,
    workers: int | None = None,
    progress: IO[str] | None = None,
) -> list[RunSummary]:
    """Run each ``(experiment, store)`` in turn with :func:`run_experiment`
    (resuming), writing one line per run to ``progress``; raises
    :class:`PointsFailed` after the first run that left failed points (what
    a paper's reproduction script needs: every figure from complete stores)."""
    summaries = []
    for experiment, out in runs:
        summary = run_experiment(experiment, out, workers=workers, progress=progress)
        if progress is not None:
            progress.write(
                f"{experiment.name}: {summary.n_done} run, {summary.n_skipped} already done, "
                f"{summary.n_failed} failed in {summary.wall_s:.0f} s\n"
            )
        if summary.n_failed:
            raise PointsFailed(experiment.name, summary)
        summaries.append(summary)
    return summaries


def reproduction_parser(doc: str | None, results: Path) -> argparse.ArgumentParser:
    """The command line every paper's reproduction script shares: ``--workers``,
    ``--results`` (stores go in ``results/<experiment name>``, default ``results``)
    and ``--no-run`` (redraw and rewrite from the stores only). The
    description is the first paragraph of ``doc`` (the script's docstring)."""
    ap = argparse.ArgumentParser(description=(doc or "").split("\n\n")[0])
    ap.add_argument("--workers", type=int, default=None, help="threads (default: one per core)")
    ap.add_argument("--results", type=Path, default=results, help="where the stores go")
    ap.add_argument("--no-run", action="store_true", help="only redraw and rewrite from the stores")
    return ap


_T = TypeVar("_T")


def stored(path: Path, no_run: bool, make: Callable[[], _T]) -> _T:
    """A reproduction's results that live outside an experiment store (cases a script builds
    itself): ``make()``'s value, pickled to ``path``; with ``no_run`` (``--no-run``) read back
    from ``path`` instead when it is there. The file is the script's own, never shared input."""
    if no_run and path.exists():
        with path.open("rb") as fh:
            value: _T = pickle.load(fh)
        return value
    value = make()
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("wb") as fh:
        pickle.dump(value, fh)
    return value


def run_reproduction(runs: Iterable[tuple[Experiment, str | os.PathLike[str]]], workers: int | None) -> bool:
    """:func:`run_each` for a reproduction script, progress on stderr: False
    (with the failed points said on stderr) when a run left failed points,
    so that no page is written from incomplete stores."""
    try:
        run_each(runs, workers=workers, progress=sys.stderr)
    except PointsFailed as e:
        print(e, file=sys.stderr)
        return False
    return True


@contextmanager
def _store_lock(root: Path) -> Iterator[None]:
    """Hold ``root/.lock`` for the run: one runner per store (the lock goes with the process)."""
    root.mkdir(parents=True, exist_ok=True)
    try:
        import fcntl
    except ImportError:  # not POSIX: no lock
        yield
        return
    fd = os.open(root / ".lock", os.O_RDWR | os.O_CREAT, 0o644)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise RunnerError(f"{root}: another coflowkit run is writing this store") from None
        yield
    finally:
        os.close(fd)


def _run(
    experiment: Experiment,
    store: Store,
    cluster: str | None,
    workers: int | None,
    retry_failed: bool,
    progress: IO[str] | None,
    on_start: Callable[[RunSummary], None] | None,
) -> RunSummary:
    t0 = time.perf_counter()
    points = experiment.points()
    status = store.status()
    todo = [p for p in points if status.get(p.key) != "done" and (retry_failed or p.key not in status)]
    summary = RunSummary(store=store.root, n_points=len(points), n_skipped=len(points) - len(todo), n_todo=len(todo))
    executor = None
    if todo:
        executor = _DaskExecutor(cluster) if cluster else _LocalExecutor(workers or _default_workers())
        summary.executor = executor.description
    store.begin(experiment, points)
    if on_start is not None:
        on_start(summary)
    fresh: dict[str, tuple[pa.Table, dict[str, Any]]] = {}
    bar = _Progress(len(todo), summary.n_skipped, progress)
    futures: list[Any] = []
    try:
        if executor is not None:
            futures = executor.submit_all([p.task for p in todo])
            by_future = {id(f): p for f, p in zip(futures, todo, strict=True)}
            for fut in executor.as_completed(futures):
                point = by_future[id(fut)]
                result = _result_of(fut)
                config = point.metadata(experiment)
                store.write_point(point, config, result)
                record = {k: v for k, v in result.items() if k != "coflows"}
                if result["status"] == "done":
                    fresh[point.key] = (result["coflows"], record)
                    summary.n_done += 1
                else:
                    summary.n_failed += 1
                bar.update(result["status"])
    except KeyboardInterrupt:
        bar.close()
        if executor is not None:
            executor.cancel(futures)
        store.consolidate(fresh)
        summary.wall_s = time.perf_counter() - t0
        raise RunInterrupted(summary) from None
    except BaseException:
        # The store could not be written (a full disk, ...): stop the points still queued.
        bar.close()
        if executor is not None:
            executor.cancel(futures)
        raise
    bar.close()
    if executor is not None:
        executor.close()
    store.consolidate(fresh)
    summary.wall_s = time.perf_counter() - t0
    return summary


def _result_of(fut: Any) -> dict[str, Any]:
    """A finished future's result; a future that raised (a Dask worker that died) becomes a failure."""
    try:
        result: dict[str, Any] = fut.result()
        return result
    except Exception as e:
        return {
            "status": "failed",
            "error": _error_text(e),
            "coflows": None,
            "summary": None,
            "metrics": None,
            "n_events": None,
            "elapsed_s": None,
            "ran_on": None,
            "finished_at": utc_now(),
            "coflowkit_version": None,
        }
