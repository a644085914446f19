"""Replay a workload as real TCP transfers between hosts, and record each
coflow's completion time in the simulator's result format.

:func:`fit` turns a workload (a trace or a generated one) into the one both
the testbed and the simulator run: hosts folded onto the testbed's (``h mod
n``), flows of one coflow between the same two hosts merged into one (one
connection), flows that fold onto their own host dropped (they would not
cross the network), sizes and times scaled. Simulating :func:`fit`'s output
on the testbed's topology and replaying it for real compare like with like.

:func:`replay_on_testbed` runs one worker per host inside the testbed's
namespaces (``coflowkit._replay_worker``), each serving the flows sent to
it and sending its own at their start instants; every byte is counted and
checked (CRC-32 at both ends) and a flow that did not arrive whole is an
error naming it.

:func:`replay_on_runtime` replays through the runtime's agents instead (a
hosts file, :func:`load_hosts`, names each host's address and agent socket):
per host a receiver (the same worker, receiving only) and a sender
(``coflowkit._runtime_sender``) that writes every flow through a
``CoflowWriter``, so the coordinator's scheduler schedules it.
:func:`replay_on_testbed_runtime` does the same on the testbed: it starts
the coordinator on the management bridge and an agent in every host's
namespace, runs each host's receiver and sender there, and stops them all.
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import select
import shlex
import signal
import string
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa

from . import _core
from ._atomic import write_json
from ._replay_worker import check_combination, dcas_bands
from .analysis import _nearest_rank
from .experiment import DEFAULT_BINS
from .results import COFLOW_COLUMNS, FLOW_COLUMNS

#: The data port the workers listen on.
DATA_PORT = 5301
#: The UDP port of D-CAS's control channel (announcements and replies between the workers).
CONTROL_PORT = 5302
#: Flow-level policies of the replay senders: name -> what marks a connection.
POLICIES = {
    "plain": "unmarked TCP, no runtime (the baseline): every flow in the lowest queue",
    "pias": "PIAS: a flow starts in queue 0 and is demoted by the bytes it has sent (7 thresholds)",
    "fifo-lm": "FIFO-LM at each sender: a coflow rises one queue per quantum of age (older first), a heavy one "
    "stays a queue lower",
    "tafe": "TAFE's task-awareness at each sender: a task demoted through bands of queues by the bytes this host "
    "sent of it (thresholds 0.5/0.75 of the largest task), FIFO by age inside a band",
    "karuna": "Karuna: deadline flows paced at their minimal rate in queue 0; known sizes split through queues 1-7; "
    "unknown sizes sieved through queues 1-7 by bytes sent",
    "dcas": "D-CAS: small subcoflows FIFO by age in queues 0-3, large ones in queues 4-7 by the priority their "
    "senders negotiate with the receivers over UDP (max of the senders' bytes left), no coordinator",
}
#: Percentiles of the fitted workload's flow sizes used as Karuna's split and sieve thresholds.
KARUNA_DEFAULT_PERCENTILES = (50, 60, 70, 80, 90, 95)
#: Percentile of subcoflow sizes (a coflow's bytes from one host) under which D-CAS keeps a
#: subcoflow FIFO, when not told (D-CAS's thresholdVolume, 1 MiB on its unscaled workloads).
DCAS_DEFAULT_PERCENTILE = 80
#: Percentiles of the fitted workload's flow sizes used as PIAS thresholds when none are given.
PIAS_DEFAULT_PERCENTILES = (50, 60, 70, 80, 90, 95, 99)
#: Percentile of coflow sizes above which FIFO-LM calls a coflow heavy when not told (Baraat's
#: best was between the 80th and 90th, Fig. 12).
FIFO_LM_DEFAULT_PERCENTILE = 80


@dataclass
class Fitted:
    """A workload fitted to a testbed, and what fitting did to it."""

    workload: _core.Workload
    n_flows_in: int
    n_flows_merged: int
    local_flows_dropped: int
    local_bytes_dropped: int
    coflows_dropped: int


def fit(
    workload: _core.Workload,
    n_hosts: int,
    size_scale: float = 1.0,
    time_scale: float = 1.0,
    max_coflows: int | None = None,
    min_bytes: int = 1,
) -> Fitted:
    """``workload`` on ``n_hosts`` hosts: host ``h`` becomes ``h mod n_hosts``,
    the flows of a coflow between the same two hosts merge into one, flows
    whose ends fold onto one host are dropped, bytes are multiplied by
    ``size_scale`` (at least ``min_bytes``) and arrival times by
    ``time_scale``; ``max_coflows`` keeps the first coflows by arrival. Raises
    ``ValueError`` for what replay cannot carry (dependencies, compute stages,
    deadlines per flow)."""
    if n_hosts < 2:
        raise ValueError(f"fit: n_hosts must be at least 2, got {n_hosts}")
    for name, x in (("size_scale", size_scale), ("time_scale", time_scale)):
        if not (math.isfinite(x) and x > 0):
            raise ValueError(f"fit: {name} must be a positive number, got {x}")
    c = workload.columns()
    src = workload.source
    if c["kind"].any():
        raise ValueError(f"{src}: has compute stages (flow kind != network), which replay cannot run")
    if c["after_valid"].any() or c["delay_ns"].any() or len(c["parents_data"]):
        raise ValueError(f"{src}: has dependencies between flows or coflows, which replay does not follow yet")
    df = pd.DataFrame(
        {
            "coflow_id": c["coflow_id"],
            "arrival_ns": c["arrival_ns"],
            "src": c["src"] % n_hosts,
            "dst": c["dst"] % n_hosts,
            "bytes": c["bytes"],
        }
    )
    if max_coflows is not None:
        first = df.groupby("coflow_id")["arrival_ns"].min().sort_values(kind="stable")
        df = df[df["coflow_id"].isin(first.index[:max_coflows])]
    n_in = len(df)
    local = df["src"] == df["dst"]
    n_local, local_bytes = int(local.sum()), int(df.loc[local, "bytes"].sum())
    before = df["coflow_id"].nunique()
    df = df[~local]
    df = df.groupby(["coflow_id", "src", "dst"], as_index=False, sort=True).agg(
        arrival_ns=("arrival_ns", "min"), bytes=("bytes", "sum")
    )
    df["bytes"] = np.maximum(np.round(df["bytes"].to_numpy(dtype=float) * size_scale), min_bytes).astype(np.uint64)
    df["arrival_ns"] = np.round(df["arrival_ns"].to_numpy(dtype=float) * time_scale).astype(np.uint64)
    df = df.sort_values(["arrival_ns", "coflow_id", "src", "dst"], kind="stable")
    w = _core.workload_from_columns(
        df["coflow_id"].to_numpy(np.uint64),
        df["arrival_ns"].to_numpy(np.uint64),
        df["src"].to_numpy(np.uint32),
        df["dst"].to_numpy(np.uint32),
        df["bytes"].to_numpy(np.uint64),
        n_hosts=n_hosts,
        source=f"{src} fitted to {n_hosts} hosts (sizes x{size_scale:g}, times x{time_scale:g})",
    )
    return Fitted(w, n_in, len(df), n_local, local_bytes, before - df["coflow_id"].nunique())


def policy_spec(
    name: str,
    workload: _core.Workload,
    thresholds: list[int] | None = None,
    heavy: int | None = None,
    quantum_s: float | None = None,
    negotiate: bool = True,
    psi: str = "max",
    phi: str = "max",
    time_scale: float = 0.02,
    bands: list[int] | None = None,
) -> dict[str, Any]:
    """A sender policy with its parameters, defaults taken from ``workload``:
    PIAS thresholds at percentiles :data:`PIAS_DEFAULT_PERCENTILES` of its flow
    sizes, FIFO-LM's heavy threshold at percentile
    :data:`FIFO_LM_DEFAULT_PERCENTILE` of its coflow sizes and its age quantum
    at the median gap between coflow arrivals (so coflows that arrive one
    after another take different queues). ``negotiate`` (dcas): the
    senders negotiate with the receivers, or (False) each keeps its own desired
    priority; ``psi`` and ``phi`` its receivers' and senders' combinations
    (``max``, the paper's, ``min`` or ``mean``); ``time_scale`` how the
    replay's times compare with the paper's (its 100 ms, 1 s and 2 s for
    delta, T and expiry become these times ``time_scale``; delta never below
    10 ms); ``bands`` the three byte counts that cut a negotiated priority
    ``<1, P>`` into queues 4-7 (default: the threshold times 4, 16 and 64)."""
    if name not in POLICIES:
        raise ValueError(f"replay policy {name!r}: known policies are {', '.join(POLICIES)}")
    c = workload.columns()
    if name == "pias":
        if thresholds is None:
            sizes = np.sort(c["bytes"].astype(np.int64))
            thresholds = [int(_nearest_rank(sizes, q)) for q in PIAS_DEFAULT_PERCENTILES]
        if not 1 <= len(thresholds) <= 7 or any(t <= 0 for t in thresholds):
            raise ValueError(f"pias thresholds {thresholds}: give 1 to 7 positive byte counts")
        return {"name": name, "thresholds": sorted(int(t) for t in thresholds)}
    if name == "fifo-lm":
        if heavy is None:
            totals = pd.Series(c["bytes"].astype(np.int64)).groupby(c["coflow_id"]).sum().sort_values()
            heavy = int(_nearest_rank(totals.to_numpy(), FIFO_LM_DEFAULT_PERCENTILE))
        if heavy <= 0:
            raise ValueError(f"fifo-lm heavy threshold {heavy}: must be a positive number of bytes")
        if quantum_s is None:
            # A coflow climbs the eight queues in about the median gap between arrivals times 8.
            quantum_s = _age_quantum(c)
        if not (math.isfinite(quantum_s) and quantum_s > 0):
            raise ValueError(f"fifo-lm quantum {quantum_s}: must be a positive number of seconds")
        return {"name": name, "heavy": int(heavy), "quantum_s": quantum_s}
    sizes = np.sort(c["bytes"].astype(np.int64))
    if name == "tafe":
        if thresholds is None:
            totals = pd.Series(c["bytes"].astype(np.int64)).groupby(c["coflow_id"]).sum()
            thresholds = [int(0.5 * totals.max()), int(0.75 * totals.max())]  # TAFE V-B's
        if not 1 <= len(thresholds) <= 7 or any(t <= 0 for t in thresholds):
            raise ValueError(f"tafe thresholds {thresholds}: give 1 to 7 positive byte counts")
        return {"name": name, "thresholds": sorted(int(t) for t in thresholds), "quantum_s": _age_quantum(c)}
    if name == "karuna":
        if thresholds is None:
            thresholds = [int(_nearest_rank(sizes, q)) for q in KARUNA_DEFAULT_PERCENTILES]
        if len(thresholds) != 6 or any(t <= 0 for t in thresholds):
            raise ValueError(f"karuna thresholds {thresholds}: give 6 positive byte counts")
        t = sorted(int(x) for x in thresholds)
        return {"name": name, "split": t, "sieve": t}
    if name == "dcas":
        if heavy is None:
            heavy = int(_nearest_rank(np.sort(subcoflow_sizes(workload)), DCAS_DEFAULT_PERCENTILE))
        if heavy <= 0:
            raise ValueError(f"dcas threshold {heavy}: must be a positive number of bytes")
        for key, how in (("psi", psi), ("phi", phi)):
            check_combination(key, how)
        q = _age_quantum(c) if quantum_s is None else quantum_s
        if bands is not None:
            bands = dcas_bands(heavy, bands)
        if not (math.isfinite(time_scale) and time_scale > 0):
            raise ValueError(f"dcas time_scale {time_scale}: must be a positive number")
        # delta, T and expiry: D-CAS's 100 ms, 1 s and 2 s at the time scale (FB2010's usual x0.02:
        # 2 ms, 20 ms and 40 ms), delta never below 10 ms (a Python sender's timer). A negotiation is decided when
        # every receiver replied, or 8 ms after the announcement with the replies that came (on
        # loopback with 8 busy workers 94% of the replies came within 8 ms, 86% within 5 ms).
        return {
            "name": name,
            "threshold": int(heavy),
            "quantum_s": q,
            "delta_s": max(0.1 * time_scale, 0.01),
            "starve_s": 1.0 * time_scale,
            "negotiate": bool(negotiate),
            "expiry_s": 2.0 * time_scale,
            "wait_s": 0.008,
            "psi": psi,
            "phi": phi,
            **({"bands": bands} if bands is not None else {}),
        }
    return {"name": name}


def subcoflow_sizes(workload: _core.Workload) -> np.ndarray:
    """Each subcoflow's bytes (a coflow's flows from one sender, D-CAS's unit), in no set order."""
    c = workload.columns()
    return pd.Series(c["bytes"].astype(np.int64)).groupby([c["coflow_id"], c["src"]]).sum().to_numpy()


def _age_quantum(c: dict[str, Any]) -> float:
    """The median gap between coflow arrivals (at least 1 ms): the age quantum of the policies
    that order coflows by age."""
    gaps = np.diff(np.unique(c["arrival_ns"]) / 1e9)
    return max(float(np.median(gaps)) if len(gaps) else 0.01, 0.001)


def negotiation_summary(work: Path, n_hosts: int) -> dict[str, Any]:
    """D-CAS's negotiation over a replay's workers (``work/hostH.json``): the counts of
    :class:`coflowkit._replay_worker.Dcas` summed (announcements, replies received, missing,
    late, rounds negotiated or fallen back, how often Phi(replies) moved the value and the
    queue), the datagrams ignored by why, the replies' round trips and the rounds' time from
    announcement to decision (each over all workers: the mean, weighted by each worker's replies
    received or rounds decided, and the max, seconds)."""
    counts = ("announcements", "replies_received", "replies_missing", "replies_late", "replies_sent", "negotiated")
    counts += ("fallback", "raised_value", "changed_queue", "dropped_rounds", "send_failed", "datagrams")
    total: dict[str, Any] = {k: 0 for k in counts}
    total["ignored"] = {}
    # Per worker, (its spread, how many it averages) of the replies' round trips and of the rounds.
    parts: dict[str, list[tuple[list[float], int]]] = {"rtt": [], "round": []}
    for h in range(n_hosts):
        ctl = json.loads((Path(work) / f"host{h}.json").read_text()).get("control")
        if ctl is None:
            continue
        for k, v in ctl.items():
            if k == "ignored":
                for why, n in v.items():
                    total["ignored"][why] = total["ignored"].get(why, 0) + n
            elif k == "rtt_s":
                parts["rtt"].append((v, int(ctl.get("replies_received", 0))))
            elif k == "round_s":
                parts["round"].append((v, int(ctl.get("negotiated", 0)) + int(ctl.get("fallback", 0))))
            elif isinstance(v, int):
                total[k] = total.get(k, 0) + v
    for what, ps in parts.items():
        ps = [(v, n) for v, n in ps if v and n > 0]
        weight = sum(n for _, n in ps)
        total[f"{what}_mean_s"] = sum(v[0] * n for v, n in ps) / weight if weight else float("nan")
        total[f"{what}_max_s"] = max((v[2] for v, _ in ps), default=float("nan"))
    return total


def coflow_ranks(workload: _core.Workload) -> dict[int, int]:
    """Each coflow id's rank in FIFO order (by arrival, then id: the simulator's fifo order), the
    coflow number a plan's flows carry."""
    return _ranks(_first_arrivals(workload.columns()))


def _first_arrivals(c: dict[str, Any]) -> pd.Series:
    """Each coflow's arrival (ns), by coflow id, ascending."""
    return pd.DataFrame({"c": c["coflow_id"], "a": c["arrival_ns"]}).groupby("c")["a"].min()


def _ranks(first: pd.Series) -> dict[int, int]:
    return {int(cid): r for r, cid in enumerate(first.sort_values(kind="stable").index)}


def dcas_runs(work: Path, workload: _core.Workload) -> dict[int, list[int]]:
    """Per coflow id, how often the D-CAS senders of a replay (``work/hostH.json``) decided one of its
    subcoflows as large, and of those how often as starving (``Dcas.runs``, summed over hosts)."""
    of = {r: cid for cid, r in coflow_ranks(workload).items()}
    out: dict[int, list[int]] = {}
    for h in range(workload.n_hosts):
        worker = json.loads((Path(work) / f"host{h}.json").read_text())
        for rank, (large, starving) in worker.get("dcas_runs", {}).items():
            n = out.setdefault(of[int(rank)], [0, 0])
            n[0] += large
            n[1] += starving
    return out


def make_plan(workload: _core.Workload, hosts: list[str], policy: dict[str, Any] | None = None) -> dict[str, Any]:
    """The plan every worker reads: flows (id, src, dst, bytes, start seconds
    after ``t0``, 0, coflow rank in FIFO order, coflow arrival seconds; then,
    for a flow with a deadline or an unknown size, its deadline in seconds
    after its start or None, and whether its size is known), the sender
    policy, host addresses, the data port and the control port (UDP, D-CAS's
    negotiation)."""
    policy = policy if policy is not None else {"name": "plain"}
    if workload.n_hosts > len(hosts):
        raise ValueError(f"{workload.source}: uses {workload.n_hosts} hosts, only {len(hosts)} given (fit it first)")
    c = workload.columns()
    first = _first_arrivals(c)
    rank = _ranks(first)
    deadline = np.where(c["flow_deadline_ns_valid"], c["flow_deadline_ns"] / 1e9, np.nan)
    flows = [
        [i, int(s), int(d), int(b), int(a) / 1e9, 0, rank[int(cid)], int(first[cid]) / 1e9]
        + ([None if np.isnan(dl) else float(dl), bool(k)] if (not np.isnan(dl) or not k) else [])
        for i, (s, d, b, a, cid, dl, k) in enumerate(
            zip(
                c["src"],
                c["dst"],
                c["bytes"],
                c["arrival_ns"],
                c["coflow_id"],
                deadline,
                c["size_known"],
                strict=True,
            )
        )
    ]
    return {
        "version": 1,
        "port": DATA_PORT,
        "control_port": CONTROL_PORT,
        "hosts": hosts,
        "policy": policy,
        "flows": flows,
    }


def replay_on_testbed(
    workload: _core.Workload,
    name: str = "ck",
    state_dir: Path | None = None,
    policy: dict[str, Any] | None = None,
    work_dir: Path | None = None,
    deadline_s: float = 600.0,
    nice: int | None = None,
) -> pd.DataFrame:
    """Replays ``workload`` (fitted to the testbed) on testbed ``name``; returns
    one row per flow: coflow_id, src, dst, bytes, arrival_s, start_s,
    finish_s (seconds after the plan's ``t0``). Raises ``RuntimeError`` naming
    every flow that did not arrive whole. ``nice`` runs the workers at that
    niceness: on a machine busy with other jobs their timers fire late (a
    worker that used 2 s of CPU in 72 s saw its event loop stalled by up to
    3.8 s at a load of 12-20 on 2 cores: measured), as senders on hosts of
    their own would not."""
    from . import testbed as tb

    p = tb.load_plan(name, state_dir)
    plan = make_plan(workload, p.host_ip, policy)
    plan["tcp_cc"] = p.tcp_cc
    work = Path(work_dir) if work_dir is not None else Path(f"/tmp/coflowkit-replay-{os.getpid()}")
    workers = []
    for h in range(workload.n_hosts):
        argv = [sys.executable, "-m", "coflowkit._replay_worker", "--host", str(h), "--deadline", str(deadline_s)]
        if nice is not None:
            argv += ["--nice", str(nice)]
        workers.append(_Job(f"the worker of host {h}", tb.ns_cmd(p, h, argv), f"host{h}"))
    return _combine(plan, *_run_workers(plan, workers, deadline_s, work))


@dataclass(frozen=True)
class _Job:
    """One worker process of a replay: what it is in messages ("the sender of
    host 3"), its command line and the name of its files in the work dir
    (``NAME.json`` its result, ``NAME.log`` its stderr; both written by the
    driver, the worker writes no file)."""

    what: str
    argv: list[str]
    name: str


def _run_workers(
    plan: dict[str, Any], workers: list[_Job], deadline_s: float, work: Path, start_timeout_s: float = 120.0
) -> tuple[dict[int, Any], list[str]]:
    """Runs the protocol of :mod:`coflowkit._worker_protocol` with every
    worker: starts them all, gives each the plan on its stdin, waits for each
    to print ``ready``, then writes them all one start instant ``t0`` (set in
    ``plan``) and reads their results from their stdout. Returns the results
    (by position; each also written to ``work/NAME.json``, with the plan to
    ``work/plan.json``) and the problems they report. A worker that does not
    start, or has not said ``ready`` ``start_timeout_s`` after the start (a
    launcher that hangs), is an error naming it, with the end of its stderr;
    all are killed then."""
    work.mkdir(parents=True, exist_ok=True)
    plan_line = (json.dumps(plan) + "\n").encode()
    write_json(work / "plan.json", plan)
    procs: list[tuple[_Job, subprocess.Popen[bytes], Path]] = []

    def say(proc: subprocess.Popen[bytes], data: bytes) -> bool:
        assert proc.stdin is not None
        try:
            proc.stdin.write(data)
            proc.stdin.flush()
            return True
        except (BrokenPipeError, ValueError):
            return False  # it exited (or was killed and its pipe closed): reported with its stderr

    try:
        for job in workers:
            log = work / f"{job.name}.log"
            with open(log, "wb") as err:
                # A session of its own: on an error the whole group goes (a launcher's children too).
                proc = subprocess.Popen(
                    job.argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=err, start_new_session=True
                )
            procs.append((job, proc, log))
        # The plans in threads: a worker that does not read its stdin (a launcher that hangs)
        # must not hold the driver once the plan is more than a pipe holds.
        feeders = [threading.Thread(target=say, args=(proc, plan_line), daemon=True) for _, proc, _ in procs]
        for t in feeders:
            t.start()
        end = time.time() + start_timeout_s
        for job, proc, log in procs:
            line = _read_line(proc, end)
            if line is None:
                raise RuntimeError(
                    f"replay: {job.what} did not start: no 'ready' within {start_timeout_s:g} s: {_tail(log)}"
                )
            if line.strip() != b"ready":
                if line:
                    why = f"it printed {_clip(line)} where 'ready' was expected (is a login script printing?)"
                else:
                    why = f"it exited with {_status(proc)}"
                raise RuntimeError(f"replay: {job.what} did not start: {why}: {_tail(log)}")
        for t in feeders:
            t.join()  # done: every worker read its plan before saying ready
        # Every worker listens: start together, a little ahead so all read t0 in time.
        plan["t0"] = time.time() + 0.5
        for _job, proc, _log in procs:
            say(proc, f"{plan['t0']!r}\n".encode())
        results = {}
        problems = []
        end = plan["t0"] + deadline_s + 60
        for i, (job, proc, log) in enumerate(procs):
            out = _read_to_end(proc, end)
            _close(proc.stdin)  # the worker is done (or hangs past its deadline: the kill below)
            result = _result(out)
            if result is None:
                problems.append(f"{job.what}: exited with {_status(proc)} without a result: {_tail(log)}")
                continue
            write_json(work / f"{job.name}.json", result)
            results[i] = result
            problems += result["errors"]
        return results, problems
    finally:
        for _job, proc, _log in procs:
            if proc.poll() is None:  # not reaped yet, so its group id is still its own
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
            _close(proc.stdin)
            _close(proc.stdout)


def _close(pipe: Any) -> None:
    """Closes one end of a worker's pipe; a worker that is gone leaves nothing to flush to."""
    if pipe is not None:
        with contextlib.suppress(BrokenPipeError):
            pipe.close()


def _read_line(proc: subprocess.Popen[bytes], end: float) -> bytes | None:
    """One line of ``proc``'s stdout (None if none by the wall clock ``end``), read from the
    file descriptor byte by byte (so that nothing after it sits in a Python buffer that
    :func:`_read_to_end` would not see)."""
    assert proc.stdout is not None
    fd = proc.stdout.fileno()
    line = bytearray()
    while not line.endswith(b"\n"):
        if not select.select([fd], [], [], max(0.0, end - time.time()))[0]:
            return None
        b = os.read(fd, 1)
        if not b:
            break
        line += b
    return bytes(line)


def _read_to_end(proc: subprocess.Popen[bytes], end: float) -> bytes:
    """What ``proc`` prints until it closes its stdout (it exits) or the wall clock reaches ``end``."""
    assert proc.stdout is not None
    fd = proc.stdout.fileno()
    chunks = []
    while True:
        ready, _, _ = select.select([fd], [], [], max(0.0, end - time.time()))
        if not ready:
            return b"".join(chunks)  # past the deadline: no result
        chunk = os.read(fd, 1 << 16)
        if not chunk:
            return b"".join(chunks)
        chunks.append(chunk)


def _result(out: bytes) -> dict[str, Any] | None:
    """The worker's result: the last line of what it printed after ``ready``."""
    lines = out.strip().splitlines()
    if not lines:
        return None
    try:
        result = json.loads(lines[-1])
    except (json.JSONDecodeError, UnicodeDecodeError):
        return None
    return result if isinstance(result, dict) and "errors" in result else None


def _status(proc: subprocess.Popen[bytes]) -> str:
    try:
        proc.wait(timeout=10)
    except subprocess.TimeoutExpired:
        return "no exit (still running)"
    rc = proc.returncode
    return f"signal {-rc}" if rc < 0 else f"status {rc}"


def _clip(line: bytes) -> str:
    text = line.decode(errors="replace").strip()
    return repr(text if len(text) <= 80 else text[:80] + "...")


def _tail(log: Path, n_words: int = 60) -> str:
    """The end of a worker's stderr, on one line (or where to find it)."""
    words = log.read_text(errors="replace").split() if log.exists() else []
    if not words:
        return f"nothing on its stderr ({log})"
    return " ".join(words[-n_words:]) + f" (all of it: {log})"


@dataclass(frozen=True)
class RuntimeHost:
    """One host of a replay through the runtime: the address (and data port) its
    receiver listens on and senders connect to, and its agent's socket."""

    address: str
    port: int
    agent_socket: str


def load_hosts(path: str | os.PathLike[str]) -> list[RuntimeHost]:
    """A hosts file: one host a line, ``INDEX ADDRESS[:PORT] AGENT_SOCKET``
    (port :data:`DATA_PORT` when not given), ``#`` starts a comment; indices
    0 .. n-1, each once. Raises ``ValueError`` naming the file and line."""
    hosts: dict[int, RuntimeHost] = {}
    text = Path(path).read_text()
    for no, raw in enumerate(text.splitlines(), 1):
        line = raw.split("#", 1)[0].strip()
        if not line:
            continue
        where = f"{path}:{no}"
        parts = line.split()
        if len(parts) != 3:
            raise ValueError(f"{where}: expected 'INDEX ADDRESS[:PORT] AGENT_SOCKET', got {line!r}")
        index, addr, sock = parts
        if not index.isdigit():
            raise ValueError(f"{where}: host index {index!r} is not a non-negative integer")
        h = int(index)
        if h in hosts:
            raise ValueError(f"{where}: host {h} given twice")
        port = DATA_PORT
        if ":" in addr:
            addr, _, p = addr.rpartition(":")
            if not p.isdigit() or not 0 < int(p) < 65536:
                raise ValueError(f"{where}: port {p!r} is not a port number (1-65535)")
            port = int(p)
        hosts[h] = RuntimeHost(addr, port, sock)
    if not hosts:
        raise ValueError(f"{path}: no hosts")
    missing = sorted(set(range(max(hosts) + 1)) - set(hosts))
    if missing:
        raise ValueError(f"{path}: hosts are numbered 0..{max(hosts)}, missing {missing}")
    taken: dict[tuple[str, int], int] = {}
    for h in sorted(hosts):
        key = (hosts[h].address, hosts[h].port)
        if key in taken:
            raise ValueError(f"{path}: hosts {taken[key]} and {h} both listen on {key[0]}:{key[1]}")
        taken[key] = h
    return [hosts[h] for h in sorted(hosts)]


#: The placeholders of a launcher template (:func:`launcher`).
LAUNCH_PLACEHOLDERS = ("index", "address")


def launcher(template: str, hosts: list[RuntimeHost]) -> Callable[[int, list[str]], list[str]]:
    """The ``wrap`` of :func:`replay_on_runtime` that runs host ``h``'s
    workers through a launcher, say ``ssh -o BatchMode=yes {address}``:
    ``template`` split as a shell would (:func:`shlex.split`), ``{index}``
    and ``{address}`` in it replaced by the host's index and its address in
    the hosts file, then the worker's command as ONE argument, quoted for a
    shell (:func:`shlex.join`): ssh joins its arguments with spaces and the
    remote user's shell splits them again, so each of the worker's arguments
    arrives as it was. Raises ``ValueError`` for a template that is empty,
    does not parse, or names another placeholder, before anything runs."""
    try:
        parts = shlex.split(template)
    except ValueError as e:
        raise ValueError(f"launcher {template!r}: {e}") from None
    if not parts:
        raise ValueError("launcher: empty (give a command, say 'ssh -o BatchMode=yes {address}')")
    known = ", ".join(f"{{{k}}}" for k in LAUNCH_PLACEHOLDERS)
    for part in parts:
        try:
            fields = [f for _, f, _, _ in string.Formatter().parse(part) if f is not None]
        except ValueError as e:
            raise ValueError(f"launcher {template!r}: {e} (a literal brace is written {{{{ or }}}})") from None
        for f in fields:
            if f not in LAUNCH_PLACEHOLDERS:
                shown = f"{{{f}}}" if f else "{}"
                raise ValueError(f"launcher {template!r}: unknown placeholder {shown} (known: {known})")
        try:
            part.format(index=0, address=hosts[0].address if hosts else "")
        except (ValueError, IndexError, KeyError, AttributeError) as e:
            raise ValueError(f"launcher {template!r}: {part!r}: {e}") from None

    def wrap(h: int, argv: list[str]) -> list[str]:
        return [part.format(index=h, address=hosts[h].address) for part in parts] + [shlex.join(argv)]

    return wrap


def replay_on_runtime(
    workload: _core.Workload,
    hosts: list[RuntimeHost],
    work_dir: Path | None = None,
    deadline_s: float = 600.0,
    wrap: Callable[[int, list[str]], list[str]] | None = None,
    launch: str | None = None,
    python: str | None = None,
    start_timeout_s: float = 120.0,
    report_ms: int = 10,
    tcp_cc: str | None = None,
    inject_reset: Sequence[int] = (),
) -> pd.DataFrame:
    """Replays ``workload`` (fitted to ``len(hosts)`` hosts) through the
    runtime (the senders' client libraries report to their agents every
    ``report_ms``, as applications would every Δ): the agents of ``hosts`` and their coordinator must be up. Each
    coflow is registered through host 0's agent before the start (a coflow
    id is usable on every host; the coordinator sees a coflow arrive with
    its first flow), one receiver (``coflowkit._replay_worker
    --receive-only``) and one sender (``coflowkit._runtime_sender``) run per
    host, and every flow goes through a ``CoflowWriter``, so the
    coordinator's scheduler paces and marks it. Returns what
    :func:`replay_on_testbed` returns; every byte is checked (CRC-32 at both
    ends) and every coflow unregistered at the end.

    ``wrap(h, argv)`` is the command line running host ``h``'s receiver or
    sender ``argv`` (say, inside its namespace; default: as is).
    ``launch`` is a launcher template, ``ssh -o BatchMode=yes {address}``
    say, that runs them on each host's own machine (:func:`launcher` makes
    the ``wrap``); ``tcp_cc`` is the TCP congestion control every sender sets on
    its sockets (default: the host's own); ``inject_reset`` (tests) names flows whose first
    connection the sender resets halfway (each is then sent again); the workers share no file with the driver (plan, start
    and results go over their stdin and stdout), and ``python`` is the
    interpreter named in their command (default: ``python3`` with a
    launcher, this one without). Host 0's agent socket must be reachable
    from the driver (it registers the coflows): run it on host 0. A worker
    that has not said ``ready`` ``start_timeout_s`` after the start (an ssh
    that hangs) is an error naming it."""
    if launch is not None:
        if wrap is not None:
            raise ValueError("replay_on_runtime: give wrap or launch, not both")
        wrap = launcher(launch, hosts)
    if python is None:
        python = "python3" if launch is not None else sys.executable
    if workload.n_hosts > len(hosts):
        raise ValueError(f"{workload.source}: uses {workload.n_hosts} hosts, only {len(hosts)} given (fit it first)")
    plan = make_plan(workload, [h.address for h in hosts])
    plan["ports"] = [h.port for h in hosts]
    plan["agents"] = [h.agent_socket for h in hosts]
    plan["report_ms"] = report_ms
    if tcp_cc:
        plan["tcp_cc"] = tcp_cc
    if inject_reset:
        plan["inject_reset"] = [int(f) for f in inject_reset]
    n_coflows = len({f[6] for f in plan["flows"]})
    client = _core.AgentClient(hosts[0].agent_socket)
    if not client.connected:
        raise RuntimeError(f"replay: host 0's agent at {hosts[0].agent_socket} cannot be reached (is it running?)")
    ids: list[int] = []
    work = Path(work_dir) if work_dir is not None else Path(f"/tmp/coflowkit-replay-{os.getpid()}")
    try:
        ids += [client.register() for _ in range(n_coflows)]
        plan["coflow_ids"] = ids
        workers = []
        for h in range(len(hosts)):
            common = ["--host", str(h), "--deadline", str(deadline_s)]
            rx_argv = [python, "-m", "coflowkit._replay_worker", *common, "--receive-only"]
            tx_argv = [python, "-m", "coflowkit._runtime_sender", *common]
            if wrap is not None:
                rx_argv, tx_argv = wrap(h, rx_argv), wrap(h, tx_argv)
            workers.append(_Job(f"the receiver of host {h}", rx_argv, f"host{h}.received"))
            workers.append(_Job(f"the sender of host {h}", tx_argv, f"host{h}.sent"))
        return _combine(plan, *_run_workers(plan, workers, deadline_s, work, start_timeout_s))
    finally:
        for c in ids:
            with contextlib.suppress(ConnectionError, ValueError):  # the agent went away: its coflows go with it
                client.unregister(c)


def host_rate_bps(p: Any) -> float:
    """The rate the coordinator gives every host of testbed plan ``p``: the
    slowest of the hosts' own shaped ports (their NICs), or of all ports."""
    own = [port.capacity_bps for port in p.ports if port.ns in p.host_ns]
    return float(min(own or [port.capacity_bps for port in p.ports]))


def _stop_all(procs: list[subprocess.Popen[bytes]]) -> None:
    """SIGINT each (the runtime's clean exit), then SIGKILL what is still there after 5 s."""
    for proc in reversed(procs):
        if proc.poll() is None:
            proc.send_signal(signal.SIGINT)
    end = time.monotonic() + 5
    for proc in reversed(procs):
        try:
            proc.wait(timeout=max(0.1, end - time.monotonic()))
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def _await(
    what: str,
    ready: Callable[[], bool],
    proc: subprocess.Popen[bytes],
    log: Path,
    timeout: float,
    needs: tuple[str, subprocess.Popen[bytes], Path] | None = None,
) -> None:
    """Waits until ``ready()``; RuntimeError naming ``what`` if its ``proc`` exits first, or naming
    ``needs`` (what, process, log: the process ``proc`` depends on) if that one has exited: its exit is
    the cause, and ``proc``'s own failure only follows from it."""
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if needs is not None and needs[1].poll() is not None:
            raise RuntimeError(f"replay: {needs[0]} exited with {needs[1].returncode}: {_tail(needs[2])}")
        if ready():
            return
        if proc.poll() is not None:
            if needs is not None and needs[1].poll() is not None:
                continue  # the loop names the cause
            raise RuntimeError(f"replay: {what} exited with {proc.returncode}: {_tail(log)}")
        time.sleep(0.05)
    raise RuntimeError(f"replay: {what} was not ready after {timeout:.0f} s (its log: {log})")


def replay_on_testbed_runtime(
    workload: _core.Workload,
    scheduler: str,
    name: str = "ck",
    state_dir: Path | None = None,
    work_dir: Path | None = None,
    deadline_s: float = 600.0,
    runtime: list[str] | None = None,
    delta_ms: int = 10,
    classes: bool = True,
) -> pd.DataFrame:
    """Replays ``workload`` (fitted to the testbed) on testbed ``name``
    through the runtime: a coordinator (``scheduler``, every host at
    :func:`host_rate_bps`, coordination period ``delta_ms``; with
    ``classes=False`` every flow in class 0, only rates and pauses enforcing
    the schedule) outside the namespaces, listening on the
    management bridge's address; one agent per host inside its namespace,
    reaching the coordinator over the management network; then
    :func:`replay_on_runtime` with each host's receiver and sender inside its
    namespace, addressed by the host's data address. Every process it starts
    is stopped when it returns or raises; their logs stay in ``work_dir``."""
    import shutil
    import socket
    import tempfile

    from . import testbed as tb

    if runtime is None:  # the packaged runtime, or $COFLOWKIT_RUNTIME's binary
        from ._runtime_entry import runtime_command

        runtime = runtime_command()
    p = tb.load_plan(name, state_dir)
    work = Path(work_dir) if work_dir is not None else Path(f"/tmp/coflowkit-replay-{os.getpid()}")
    work.mkdir(parents=True, exist_ok=True)
    token = work / "token"
    token.write_text(os.urandom(24).hex() + "\n")
    token.chmod(0o600)
    with socket.socket() as s:  # a free port on the management address (the testbed's own)
        s.bind((p.mgmt_root_ip, 0))
        port = int(s.getsockname()[1])
    env = {**os.environ, "RUST_LOG": os.environ.get("RUST_LOG", "warn")}
    procs: list[subprocess.Popen[bytes]] = []
    # The agents' sockets in a short directory of their own (a socket's path has at most 107 bytes).
    socks = Path(tempfile.mkdtemp(prefix=f"ck-{p.name}-"))

    def start(argv: list[str], log: Path) -> subprocess.Popen[bytes]:
        with open(log, "wb") as f:
            proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=f, stderr=subprocess.STDOUT, env=env)
        procs.append(proc)
        return proc

    def listening() -> bool:
        with socket.socket() as s:
            return s.connect_ex((p.mgmt_root_ip, port)) == 0

    try:
        log = work / "coordinator.log"
        coord = start(
            [*runtime, "coordinator", "--hosts", str(p.n_hosts), "--host-rate", f"{host_rate_bps(p):.0f}",
             "--scheduler", scheduler, "--listen", f"{p.mgmt_root_ip}:{port}", "--token-file", str(token),
             "--delta-ms", str(delta_ms), "--classes", "on" if classes else "off"],
            log,
        )  # fmt: skip
        coordinator = (f"the coordinator ({scheduler})", coord, log)
        _await(coordinator[0], listening, coord, log, 30)
        hosts = []
        for h in range(p.n_hosts):
            sock = socks / f"agent{h}.sock"
            log = work / f"agent{h}.log"
            start(
                tb.ns_cmd(p, h, [*runtime, "agent", "--host", str(h), "--coordinator",
                                 f"http://{p.mgmt_root_ip}:{port}", "--socket", str(sock), "--socket-mode", "600",
                                 "--token-file", str(token), "--hello-retry-ms", "20000"]),
                log,
            )  # fmt: skip
            hosts.append(RuntimeHost(p.host_ip[h], DATA_PORT, str(sock)))
        for h, host in enumerate(hosts):
            _await(
                f"the agent of host {h}", Path(host.agent_socket).exists, procs[1 + h], work / f"agent{h}.log", 30,
                needs=coordinator,
            )  # fmt: skip
        # The clients report every Δ too: a writer learns a new schedule at its client's next report.
        # The senders use the testbed's congestion control, as every other replay on it: the hosts'
        # default is the machine's (BBR here), which collapses when starved behind a higher queue.
        return replay_on_runtime(
            workload, hosts, work, deadline_s, wrap=lambda h, argv: tb.ns_cmd(p, h, argv), report_ms=delta_ms,
            tcp_cc=p.tcp_cc,
        )  # fmt: skip
    finally:
        _stop_all(procs)
        shutil.rmtree(socks, ignore_errors=True)


def _combine(plan: dict[str, Any], results: dict[int, Any], problems: list[str]) -> pd.DataFrame:
    sent: dict[int, list[Any]] = {}
    got: dict[int, list[Any]] = {}
    resent: dict[int, int] = {}
    broken: list[str] = []
    for r in results.values():
        sent.update({int(k): v for k, v in r["sent"].items()})
        got.update({int(k): v for k, v in r["received"].items()})
        resent.update({int(k): int(v) for k, v in r.get("resent", {}).items()})
        broken += r.get("broken", [])
    t0 = plan["t0"]
    rows = []
    for fid, src, dst, size, start, *_ in plan["flows"]:
        s, g = sent.get(fid), got.get(fid)
        if s is None or g is None:
            problems.append(f"flow {fid} (host {src} -> host {dst}, {size} bytes): not completed")
            continue
        if not (s[1] == g[1] == size and s[2] == g[2]):
            problems.append(
                f"flow {fid} (host {src} -> host {dst}): sent {s[1]} bytes crc {s[2]:08x}, "
                f"received {g[1]} bytes crc {g[2]:08x}, expected {size} bytes"
            )
            continue
        # A connection opened for the flow (sent record: connected, fresh): how long it waited, handshake
        # done, for the receiver to accept it (received record: accepted).
        wait = g[3] - s[3] if len(g) > 3 and len(s) > 4 and s[4] else np.nan
        rows.append((fid, src, dst, size, start, s[0] - t0, g[0] - t0, resent.get(fid, 1), wait))
    if problems:
        shown = "; ".join(problems[:10])
        more = f" (and {len(problems) - 10} more)" if len(problems) > 10 else ""
        lost = f"; connections lost on the way: {len(broken)} ({'; '.join(broken[:3])})" if broken else ""
        raise RuntimeError(f"replay: {len(problems)} problem(s): {shown}{more}{lost}")
    # attempts: 1, or more for a flow sent again after its connection failed (its times span them all);
    # accept_wait_s: NaN for a flow sent on a connection already open
    columns = ["flow", "src", "dst", "bytes", "arrival_s", "start_s", "finish_s", "attempts", "accept_wait_s"]
    return pd.DataFrame(rows, columns=columns)


def tables(workload: _core.Workload, flows: pd.DataFrame) -> tuple[pa.Table, pa.Table]:
    """The measured flows as the simulator's coflow and flow tables (same
    columns; bins by the default thresholds)."""
    c = workload.columns()
    f = flows.sort_values("flow").reset_index(drop=True)
    f["coflow_id"] = c["coflow_id"][f["flow"].to_numpy()]
    # A flow's clock starts at its coflow's arrival, as in the simulator.
    f["fct_s"] = f["finish_s"] - f["arrival_s"]
    n = len(f)
    flow_table = pd.DataFrame(
        {
            "coflow_id": f["coflow_id"].astype(np.uint64),
            "src": f["src"].astype(np.uint32),
            "dst": f["dst"].astype(np.uint32),
            "kind": ["network"] * n,
            "group": np.zeros(n, dtype=np.uint32),
            "bytes": f["bytes"].astype(np.uint64),
            "karuna_type": [None] * n,
            "arrival_s": f["arrival_s"],
            "start_s": f["start_s"],
            "finish_s": f["finish_s"],
            "fct_s": f["fct_s"],
            "slowdown": [np.nan] * n,
            "deadline_s": [np.nan] * n,
            "deadline_met": [None] * n,
            "dropped": np.zeros(n, dtype=bool),  # the replay gives no flow up
        }
    )[FLOW_COLUMNS]
    g = f.groupby("coflow_id", sort=True)
    co = pd.DataFrame(
        {
            "arrival_s": g["arrival_s"].min(),
            "finish_s": g["finish_s"].max(),
            "width": g.size(),
            "length_bytes": g["bytes"].max(),
            "total_bytes": g["bytes"].sum(),
        }
    ).reset_index()
    co["release_s"] = co["arrival_s"]
    co["cct_s"] = co["finish_s"] - co["arrival_s"]
    co["job_id"] = pd.array([None] * len(co), dtype="UInt64")
    co["stage_id"] = pd.array([None] * len(co), dtype="UInt32")
    co["deadline_s"] = np.nan
    co["deadline_met"] = pd.array([None] * len(co), dtype="boolean")
    short = co["length_bytes"] < DEFAULT_BINS["short_below"]
    narrow = co["width"] <= DEFAULT_BINS["narrow_up_to"]
    co["bin"] = np.where(narrow, np.where(short, "SN", "LN"), np.where(short, "SW", "LW"))
    return pa.Table.from_pandas(co[COFLOW_COLUMNS], preserve_index=False), pa.Table.from_pandas(
        flow_table, preserve_index=False
    )
