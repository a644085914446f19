"""Replay a workload as real TCP transfers between hosts, and record each
coflow's completion time in the simulator's result format.

The workload is first fitted to the hosts (:mod:`.fit`); the driver makes
its :class:`~.plans.Plan` (:mod:`.plans`) with a sender policy
(:mod:`.modes`), runs the workers (:mod:`.supervise`) and joins their
records (:mod:`.results`).

:func:`replay_on_testbed` runs one worker per host inside the testbed's
namespaces (``coflowkit.testbed.replay.worker``), each serving the flows sent to
it and sending its own at their start instants; every byte is counted and
checked (CRC-32 at both ends) and a flow that did not arrive whole is an
error naming it.

:func:`replay_on_runtime` replays through the runtime's agents instead (a
hosts file, :func:`~.hosts.load_hosts`, names each host's address and agent socket):
per host a receiver (the same worker, receiving only) and a sender
(``coflowkit.testbed.replay.sender``) that writes every flow through a
``CoflowWriter``, so the coordinator's scheduler schedules it.
:func:`replay_on_testbed_runtime` does the same on the testbed: it starts
the coordinator on the management bridge and an agent in every host's
namespace, runs each host's receiver and sender there, and stops them all.
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
import subprocess
import sys
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pandas as pd

from ... import _core
from ...runtime import runtime_command
from .hosts import RuntimeHost, launcher
from .plans import DATA_PORT, make_plan
from .results import collect
from .supervise import Job, run_workers, stop_all, wait_until

if TYPE_CHECKING:
    from ..net import Plan as TestbedPlan


def replay_on_testbed(
    workload: _core.Workload,
    name: str = "ck",
    state_dir: Path | None = None,
    policy: Mapping[str, Any] | None = None,
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
    from .. import net as tb

    p = tb.load_plan(name, state_dir)
    plan = dataclasses.replace(make_plan(workload, p.host_ip, policy), tcp_cc=p.tcp_cc or "")
    work = Path(work_dir) if work_dir is not None else Path(f"/tmp/coflowkit-replay-{os.getpid()}")
    workers = []
    for h in range(workload.n_hosts):
        argv = [sys.executable, "-m", "coflowkit.testbed.replay.worker", "--host", str(h)]
        argv += ["--deadline", str(deadline_s)]
        if nice is not None:
            argv += ["--nice", str(nice)]
        workers.append(Job(f"the worker of host {h}", tb.ns_cmd(p, h, argv), f"host{h}"))
    return collect(plan, run_workers(plan, workers, deadline_s, work))


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
    its first flow), one receiver (``coflowkit.testbed.replay.worker
    --receive-only``) and one sender (``coflowkit.testbed.replay.sender``) run per
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
    connection the sender resets halfway (each is then sent again); the workers share no file with the
    driver (plan, start
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
    plan = dataclasses.replace(
        make_plan(workload, [h.address for h in hosts]),
        ports=tuple(h.port for h in hosts),
        agents=tuple(h.agent_socket for h in hosts),
        report_ms=report_ms,
        tcp_cc=tcp_cc or "",
        inject_reset=tuple(int(f) for f in inject_reset),
    )
    client = _core.AgentClient(hosts[0].agent_socket)
    if not client.connected:
        raise RuntimeError(f"replay: host 0's agent at {hosts[0].agent_socket} cannot be reached (is it running?)")
    ids: list[int] = []
    work = Path(work_dir) if work_dir is not None else Path(f"/tmp/coflowkit-replay-{os.getpid()}")
    try:
        ids += [client.register() for _ in range(plan.n_coflows)]
        plan = dataclasses.replace(plan, coflow_ids=tuple(ids))
        workers = []
        for h in range(len(hosts)):
            common = ["--host", str(h), "--deadline", str(deadline_s)]
            rx_argv = [python, "-m", "coflowkit.testbed.replay.worker", *common, "--receive-only"]
            tx_argv = [python, "-m", "coflowkit.testbed.replay.sender", *common]
            if wrap is not None:
                rx_argv, tx_argv = wrap(h, rx_argv), wrap(h, tx_argv)
            workers.append(Job(f"the receiver of host {h}", rx_argv, f"host{h}.received"))
            workers.append(Job(f"the sender of host {h}", tx_argv, f"host{h}.sent"))
        return collect(plan, run_workers(plan, workers, deadline_s, work, start_timeout_s))
    finally:
        for c in ids:
            with contextlib.suppress(ConnectionError, ValueError):  # the agent went away: its coflows go with it
                client.unregister(c)


def host_rate_bps(p: TestbedPlan) -> float:
    """The rate the coordinator gives every host of testbed plan ``p``: the
    slowest of the hosts' own shaped ports (their NICs), or of all ports."""
    own = [port.capacity_bps for port in p.ports if port.ns in p.host_ns]
    return float(min(own or [port.capacity_bps for port in p.ports]))



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

    from .. import net as tb

    if runtime is None:  # the packaged runtime, or $COFLOWKIT_RUNTIME's binary
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
        wait_until(coordinator[0], listening, coord, log, 30)
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
            wait_until(
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
        stop_all(procs)
        shutil.rmtree(socks, ignore_errors=True)
