"""Supervising a replay's processes: the workers (:func:`run_workers` runs
the protocol of :mod:`.protocol` with each: plan, ``ready``, start instant,
result), and the runtime's coordinator and agents a replay through the
runtime starts on the testbed (:func:`wait_until`, :func:`stop_all`).

A worker that does not start, hangs or exits without a result is an error
naming it, with the end of its stderr; every process started is stopped
(its whole session for a worker, a launcher's children too) on the way out.
"""

from __future__ import annotations

import contextlib
import json
import os
import select
import signal
import subprocess
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from ...util import write_json
from .plans import Plan


@dataclass(frozen=True)
class Job:
    """One worker process of a replay: what it is in messages ("the sender of
    host 3"), its command line and the name of its files in the work dir
    (``NAME.json`` its result, ``NAME.log`` its stderr; both written by the
    driver, the worker writes no file)."""

    what: str
    argv: list[str]
    name: str


@dataclass(frozen=True)
class WorkerRun:
    """What :func:`run_workers` brings back: each worker's result (by its position in the list of
    jobs; missing for one that gave none), the problems they reported, and the start instant."""

    #: each worker's result (its JSON object), by its position among the jobs
    results: dict[int, dict[str, Any]]
    #: the errors the workers reported, and each worker that gave no result
    problems: list[str]
    #: the common start instant (wall clock, seconds since the epoch)
    t0: float


def run_workers(
    plan: Plan, workers: list[Job], deadline_s: float, work: Path, start_timeout_s: float = 120.0
) -> WorkerRun:
    """Runs the protocol of :mod:`coflowkit.testbed.replay.protocol` with every
    worker: starts them all, gives each the plan on its stdin, waits for each
    to print ``ready``, then writes them all one start instant ``t0`` and reads their results
    from their stdout. Returns the results (by position; each also written to
    ``work/NAME.json``, with the plan to ``work/plan.json``), the problems they
    report and ``t0``. A worker that does not
    start, or has not said ``ready`` ``start_timeout_s`` after the start (a
    launcher that hangs), is an error naming it, with the end of its stderr;
    all are killed then."""
    work.mkdir(parents=True, exist_ok=True)
    plan_line = (plan.to_wire() + "\n").encode()
    write_json(work / "plan.json", plan.to_json())
    procs: list[tuple[Job, subprocess.Popen[bytes], Path]] = []

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
        t0 = time.time() + 0.5
        for _job, proc, _log in procs:
            say(proc, f"{t0!r}\n".encode())
        results: dict[int, dict[str, Any]] = {}
        problems: list[str] = []
        end = t0 + deadline_s + 60
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
        return WorkerRun(results, problems, t0)
    finally:
        for _job, proc, _log in procs:
            if proc.poll() is None:  # not reaped yet, so its group id is still its own
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
            _close(proc.stdin)
            _close(proc.stdout)


def _close(pipe: IO[bytes] | None) -> None:
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
    chunks: list[bytes] = []
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
    """How ``proc`` ended, for messages (waiting up to 10 s for it)."""
    try:
        proc.wait(timeout=10)
    except subprocess.TimeoutExpired:
        return "no exit (still running)"
    rc = proc.returncode
    return f"signal {-rc}" if rc < 0 else f"status {rc}"


def _clip(line: bytes) -> str:
    """A line a worker printed, quoted and cut at 80 characters, for messages."""
    text = line.decode(errors="replace").strip()
    return repr(text if len(text) <= 80 else text[:80] + "...")


def _tail(log: Path, n_words: int = 60) -> str:
    """The end of a worker's stderr, on one line (or where to find it)."""
    words = log.read_text(errors="replace").split() if log.exists() else []
    if not words:
        return f"nothing on its stderr ({log})"
    return " ".join(words[-n_words:]) + f" (all of it: {log})"


def stop_all(procs: list[subprocess.Popen[bytes]]) -> None:
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


def wait_until(
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
