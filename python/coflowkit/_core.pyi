"""Types of the Rust binding (crates/py). See that crate's docs for details."""

import os
from collections.abc import Callable, Sequence
from typing import Any, Final, Protocol, Self, final

from typing_extensions import Buffer

import numpy as np
import numpy.typing as npt

__all__ = [
    "__version__",
    "SimulationError",
    "Workload",
    "load_trace",
    "workload_from_columns",
    "synthetic",
    "synth_defaults",
    "generate_workload",
    "generators",
    "generator_params",
    "check_generator",
    "simulate",
    "refusals",
    "simulate_packet",
    "simulate_decomposed",
    "decomposed_run_parts",
    "check_decomposed_options",
    "check_decomposed_scheduler",
    "packet_transports",
    "packet_schedulers",
    "packet_options",
    "check_packet_options",
    "schedulers",
    "check_scheduler",
    "scheduler_descriptors",
    "scheduler_markdown",
    "runtime_main",
    "topology_info",
    "topology_graph",
    "parse_bytes",
    "karuna_thresholds",
    "karuna_model_fct",
    "receive_flows",
    "HostPolicy",
    "host_policy_replay",
    "control_encode",
    "control_decode",
    "AgentClient",
    "CoflowWriter",
    "NATIVE_COLUMNS",
    "BINS",
]

__version__: Final[str]
NATIVE_COLUMNS: Final[list[str]]
BINS: Final[list[str]]

class SimulationError(RuntimeError):
    """A simulation could not finish (a scheduler stalled, or the engine failed)."""

@final
class Workload:
    """A workload: coflows of flows on ``n_hosts`` hosts, as read or generated."""

    @property
    def n_hosts(self) -> int: ...
    @property
    def n_coflows(self) -> int: ...
    @property
    def n_flows(self) -> int: ...
    @property
    def source(self) -> str: ...
    def columns(self) -> dict[str, npt.NDArray[Any]]: ...
    def stats_text(self, capacity_bps: float = 1e9) -> str: ...
    def stats(self, capacity_bps: float = 1e9) -> dict[str, Any]: ...
    def write_csv(self, path: str | os.PathLike[str]) -> None: ...
    def __len__(self) -> int: ...

def load_trace(path: str | os.PathLike[str], fmt: str | None = None) -> Workload: ...
def workload_from_columns(
    coflow_id: npt.NDArray[np.uint64],
    arrival_ns: npt.NDArray[np.uint64],
    src: npt.NDArray[np.uint32],
    dst: npt.NDArray[np.uint32],
    bytes: npt.NDArray[np.uint64],
    job_id: npt.NDArray[np.uint64] | None = None,
    stage_id: npt.NDArray[np.uint32] | None = None,
    deadline_ns: npt.NDArray[np.uint64] | None = None,
    job_id_valid: npt.NDArray[np.bool_] | None = None,
    stage_id_valid: npt.NDArray[np.bool_] | None = None,
    deadline_ns_valid: npt.NDArray[np.bool_] | None = None,
    kind: npt.NDArray[np.uint8] | None = None,
    group: npt.NDArray[np.uint32] | None = None,
    after: npt.NDArray[np.uint32] | None = None,
    after_valid: npt.NDArray[np.bool_] | None = None,
    delay_ns: npt.NDArray[np.uint64] | None = None,
    flow_deadline_ns: npt.NDArray[np.uint64] | None = None,
    flow_deadline_ns_valid: npt.NDArray[np.bool_] | None = None,
    size_known: npt.NDArray[np.bool_] | None = None,
    parents_offsets: npt.NDArray[np.int64] | None = None,
    parents_data: npt.NDArray[np.uint8] | None = None,
    n_hosts: int | None = None,
    source: str = "<columns>",
) -> Workload: ...
def synthetic(
    n_hosts: int | None = None,
    n_coflows: int | None = None,
    load: float | None = None,
    seed: int | None = None,
    capacity_bps: float | None = None,
    mix: tuple[float, float, float, float] | None = None,
) -> Workload: ...
def synth_defaults() -> dict[str, Any]: ...
def generate_workload(name: str, preset: str | None = None, params: list[tuple[str, str]] = ...) -> Workload: ...
def generators() -> list[dict[str, Any]]: ...
def check_generator(name: str, preset: str | None = None, params: list[tuple[str, str]] = ...) -> None: ...
def generator_params(name: str, preset: str | None = None) -> list[tuple[str, str, str]]: ...
def simulate(
    workload: Workload,
    schedulers: list[str],
    capacity_bps: float | None = None,
    n_hosts: int | None = None,
    per_flow: bool = False,
    progress: bool = True,
    topology: str | None = None,
    link_util_bin_ns: int | None = None,
    missed: str = "finish",
) -> list[dict[str, Any]]: ...
def refusals(
    workload: Workload,
    schedulers: list[str],
    capacity_bps: float | None = None,
    n_hosts: int | None = None,
    topology: str | None = None,
) -> list[tuple[str, str]]: ...
def simulate_packet(
    workload: Workload,
    transports: list[str],
    options: str = "",
    classes: list[int] | None = None,
    capacity_bps: float | None = None,
    n_hosts: int | None = None,
    progress: bool = True,
    topology: str | None = None,
    paths: list[int | None] | None = None,
) -> list[dict[str, Any]]: ...
def simulate_decomposed(
    workload: Workload,
    transports: list[str],
    options: str = "",
    capacity_bps: float | None = None,
    n_hosts: int | None = None,
    progress: bool = True,
    topology: str | None = None,
    paths: list[int | None] | None = None,
    threads: int | None = None,
    decompose: str = "",
    run_parts: Callable[[list[bytes]], list[tuple[list[int], int]]] | None = None,
) -> list[dict[str, Any]]: ...
def decomposed_run_parts(parts: list[bytes], transport: str, options: str = "") -> list[tuple[list[int], int]]: ...
def check_decomposed_options(decompose: str) -> None: ...
def check_decomposed_scheduler(name: str) -> None: ...
def packet_transports() -> list[str]: ...
def packet_schedulers() -> list[tuple[str, str]]: ...
def packet_options() -> list[tuple[str, str]]: ...
def check_packet_options(options: str) -> None: ...
def topology_info(spec: str, n_hosts: int | None = None) -> dict[str, Any]: ...
def karuna_thresholds(sizes: str, load: float, n: int, kind: str) -> list[float]: ...
def karuna_model_fct(sizes: str, load: float, t: list[float], kind: str, capacity_bps: float) -> float: ...
def receive_flows(
    fd: int, host: int, n_in: int, deadline: float
) -> tuple[dict[int, tuple[float, int, int]], list[str], int]:
    """Serves a replay worker's listening socket ``fd`` natively (a thread per connection,
    without the GIL) until ``n_in`` flows arrived whole or the wall clock passes ``deadline``;
    returns (per flow id: instant of its last byte, bytes, CRC-32; the connections lost;
    how many flows arrived whole)."""
def topology_graph(spec: str, n_hosts: int | None = None) -> dict[str, Any]: ...
def schedulers() -> list[tuple[str, str]]: ...
def check_scheduler(spec: str) -> str: ...
def parse_bytes(text: str) -> int:
    """A size as every front end reads it (``10MiB``, ``5MB``, ``1460``): whole bytes, or ``ValueError``."""
def scheduler_descriptors() -> list[dict[str, Any]]: ...
def scheduler_markdown() -> str: ...
def runtime_main(argv: list[str]) -> int:
    """Runs the runtime's command line (``argv``: program name, then ``coordinator ...`` or
    ``agent ...``) in this process without the GIL until SIGINT; returns the exit code."""

# ---- the runtime's client (a binding of coflowkit_runtime::client) ----------

class _Socket(Protocol):
    def fileno(self) -> int: ...

#: What a host policy call returns: the flows whose marking changed, and the control messages to
#: send, each (destination host, kind 1 announce or 2 reply, number, coflow, value).
_HostEffects = tuple[list[int], list[tuple[int, int, int, int, int]]]

@final
class HostPolicy:
    """One host's policy (crates/sched/src/host), built from a scheduler spec: what the packet
    engine runs, driven by a replay worker. Times are integer ns since the run's origin."""

    def __new__(
        cls,
        spec: str,
        host: int,
        n_hosts: int,
        nic_bps: float,
        rtt_ns: int,
        flow_sizes: Sequence[float] = ...,
        coflow_sizes: Sequence[float] = ...,
    ) -> Self: ...
    @property
    def name(self) -> str: ...
    @property
    def negotiates(self) -> bool: ...
    def start(
        self,
        now: int,
        id: int,
        coflow: int,
        coflow_arrival: int,
        dst: int,
        size: int,
        size_known: bool = True,
        deadline: int | None = None,
    ) -> _HostEffects: ...
    def sent(self, now: int, id: int, n: int) -> _HostEffects: ...
    def finish(self, now: int, id: int) -> _HostEffects: ...
    def receive(self, now: int, src: int, kind: int, number: int, coflow: int, value: int) -> _HostEffects: ...
    def wake_at(self) -> int | None: ...
    def wake(self, now: int, unacked: Callable[[int], int]) -> _HostEffects: ...
    def feedback(self, now: int, id: int, min_ar: int, min_nr: int, unacked: Callable[[int], int]) -> _HostEffects:
        """Baraat: the switches on the flow's path answered with their least AR and NR, bits/s."""
    def demand(self, id: int) -> int | None:
        """The rate the flow asks of the switches on its path, bits/s (Baraat), or None."""
    def task(self, id: int) -> tuple[int, bool, int] | None:
        """(task id, heavy, task bytes sent) in the flow's header, or None."""
    def marking(self, id: int) -> tuple[int, int | None, str]:
        """(class 0-7, pacing rate bytes/s or None, congestion control name)."""
    def limit(self, id: int) -> int: ...
    def attach(self, id: int, fd: int) -> None:
        """Flow ``id`` sends on socket ``fd``: the native clock may read its queue and mark it."""
    def detach(self, id: int) -> None:
        """Flow ``id``'s socket is no longer the native clock's to touch (before it closes)."""
    def start_clock(
        self,
        t0: float,
        host: int,
        peers: Sequence[tuple[str, int]],
        ctl_fd: int | None = None,
        pace: int | None = None,
        rt_priority: int = 0,
        nice: int | None = None,
    ) -> None:
        """Runs the policy's clock on a native thread (wake-ups, control datagrams, marks)."""
    def stop_clock(self) -> dict[str, Any] | None:
        """Stops the native clock: its ``datagrams``, ``send_failed``, ``ignored``, ``realtime``, ``nice``, ``wakeups``."""
    def dcas_report(self) -> dict[str, Any] | None: ...

def control_encode(kind: int, host: int, entries: Sequence[tuple[int, int, int]]) -> bytes:
    """A D-CAS control datagram (the native clock's wire format): ValueError unless 1 to 64 entries
    and kind 1 or 2."""

def control_decode(data: bytes, n_hosts: int) -> tuple[int, int, list[tuple[int, int, int]]] | str:
    """``(kind, host, entries)`` of a control datagram, or why it is not one; never raises."""

def host_policy_replay(
    spec: str,
    host: int,
    n_hosts: int,
    nic_bps: float,
    rtt_ns: int,
    events: Sequence[tuple[str, int, Sequence[int | None]]],
) -> list[
    tuple[
        list[int],
        list[tuple[int, int, int, int, int]],
        list[tuple[int, int, int | None, str, int, tuple[int, bool, int] | None, int | None]],
        int | None,
    ]
]:
    """What the policy of ``spec`` decides at each event, driven in Rust (the differential test's
    reference)."""

@final
class AgentClient:
    """A connection to the local agent's Unix socket. Never fails to build:
    without an agent ``connected`` is False and writers are plain TCP."""

    def __new__(cls, socket: str | os.PathLike[str], delta_ms: int = 10) -> Self: ...
    @property
    def connected(self) -> bool: ...
    @property
    def socket(self) -> str: ...
    def register(self, parents: Sequence[int] = ...) -> int:
        """A new coflow depending on ``parents``; ConnectionError without an agent,
        ValueError naming what the agent refused."""
    def unregister(self, coflow: int) -> None: ...
    def watch(
        self, coflow: int, dst_host: int, src_port: int, dst_addr: str, dst_port: int, size_hint: int | None = None
    ) -> int:
        """Names a flow of an unmodified application at this agent by its address as the agent's host
        sends it; the agent enforces and counts it in the kernel. Returns the flow's id."""
    def close_watched(self, flow: int, bytes_arrived: int = 0) -> None: ...
    def writer(
        self, sock: _Socket | int, coflow: int, dst_host: int, size_hint: int | None = None, wait: bool = True
    ) -> CoflowWriter: ...
    def send_flows(
        self,
        host: int,
        flows: Sequence[tuple[int, int, int, float, int]],
        addrs: Sequence[tuple[str, int]],
        tcp_cc: str,
        block2: bytes,
        t0: float,
        deadline_s: float,
        inject_reset: Sequence[int] = ...,
    ) -> tuple[dict[int, list[Any]], list[str], list[str], list[str], dict[int, int]]:
        """Sends one host's replay flows ``(id, dst, size, start, coflow)`` natively, each
        on a thread of its own without the GIL; returns (records by flow id, errors, the
        congestion controls the sockets ended up with, lost connections, attempts of the
        flows sent again); see coflowkit.testbed.replay.sender."""

@final
class CoflowWriter:
    """Writes to a connected socket as a flow of ``coflow``: bytes are counted as
    the kernel takes them; the socket is paced, marked and paused as scheduled."""

    @property
    def taken(self) -> bool: ...
    def write(self, data: Buffer) -> int: ...
    def sendall(self, data: Buffer) -> None: ...
    @property
    def bytes_written(self) -> int: ...
    @property
    def scheduled(self) -> bool: ...
    @property
    def schedule(self) -> tuple[float | None, int]: ...
    @property
    def coflow(self) -> int: ...
    @property
    def dst_host(self) -> int: ...
    @property
    def closed(self) -> bool: ...
    def fileno(self) -> int: ...
    def close(self) -> None: ...
    def __enter__(self) -> Self: ...
    def __exit__(self, *args: object) -> bool: ...
