"""Simulation: load or generate a workload, simulate it under schedulers on a
fabric (the Rust core, :mod:`coflowkit._core`), and read the results as tables.

:mod:`.trace` reads and writes traces, :mod:`.results` holds a run's tables;
the functions here are the ones ``coflowkit`` exports (``coflowkit.simulate``
is :func:`simulate`).
"""

from __future__ import annotations

import math
import os
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from .. import _core
from .._core import Workload
from .results import BINS, Results
from .trace import load_trace, workload_from_table, workload_to_table, write_trace

__all__ = [
    "BINS",
    "Request",
    "RequestError",
    "Results",
    "check_request",
    "generate",
    "generators",
    "load_trace",
    "schedulers",
    "simulate",
    "synthetic",
    "topology_info",
    "workload_from_table",
    "workload_to_table",
    "write_trace",
]


def schedulers() -> list[tuple[str, str]]:
    """Every scheduler name with its one-line description."""
    return list(_core.schedulers())


def synthetic(
    n_hosts: int | None = None,
    n_coflows: int | None = None,
    load: float | None = None,
    seed: int | None = None,
    capacity_bps: float | None = None,
    mix: tuple[float, float, float, float] | None = None,
) -> Workload:
    """The embedded synthetic workload (FB2010-like bin mix at a target offered
    load), deterministic for a seed. Unset parameters take the defaults of
    ``coflowkit._core.synth_defaults()`` (50 hosts, 200 coflows, load 0.8,
    seed 1, 1 Gbit/s)."""
    return _core.synthetic(n_hosts, n_coflows, load, seed, capacity_bps, mix)


def _param_text(value: Any) -> str:
    """A parameter value as the text the core parses."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, list | tuple):
        return ",".join(_param_text(v) for v in value)
    return str(value)


def generate(
    name: str,
    seed: int | None = None,
    load: float | None = None,
    preset: str | None = None,
    **params: Any,
) -> Workload:
    """Generate workload ``name`` (one of ``generators()``), deterministic for a seed.

    ``preset`` picks a starting configuration (default: the generator's
    first); ``seed``, ``load`` and ``params`` override its parameters. Values
    may be numbers, booleans, sequences (e.g. ``mix=(0.5, 0.2, 0.2, 0.1)``) or
    text with units (``uniform_max="50KB"``, ``deadline_mean="10ms"``).
    Unknown names raise ``ValueError`` listing the valid ones::

        w = coflowkit.generate("baraat", seed=1, load=0.8, workflow="two-stage", n_tasks=10_000)
        coflowkit.simulate(w, "fair")
        coflowkit.write_trace(w, "baraat.parquet")
    """
    pairs = []
    if seed is not None:
        pairs.append(("seed", _param_text(seed)))
    if load is not None:
        pairs.append(("load", _param_text(load)))
    pairs.extend((k, _param_text(v)) for k, v in params.items())
    return _core.generate_workload(name, preset, pairs)


def generators() -> list[dict[str, Any]]:
    """Every workload generator: ``name``, ``about``, ``source`` (paper and
    section), ``presets`` (``(name, about)``, the first the default) and
    ``params`` (``(name, default, doc)``)."""
    return list(_core.generators())


#: The engines :func:`simulate` runs: exact fluid rates, packets, and packets one link at a time.
ENGINES = ("flow", "packet", "decomposed")


class RequestError(ValueError):
    """An argument of a simulation request that is wrong: ``field`` names it as :func:`simulate`
    does (the CLI maps it to its flag), ``message`` says what is wrong."""

    def __init__(self, field: str, message: str, text: str | None = None) -> None:
        super().__init__(text if text is not None else f"{field}: {message}")
        self.field = field
        self.message = message


@dataclass(frozen=True)
class Request:
    """A simulation request every argument of which is checked (:func:`check_request`), before
    any workload is read."""

    engine: str
    specs: list[str]
    baseline: str | None
    capacity_bps: float | None
    n_hosts: int | None
    topology: str | None
    bin_ns: int | None
    missed: str
    packet: str
    classes: list[int] | None
    paths: list[int | None] | None
    decompose: str = ""


def _specs(scheduler: str | Iterable[str]) -> list[str]:
    items = [scheduler] if isinstance(scheduler, str) else list(scheduler)
    specs = [part.strip() for item in items for part in str(item).split(",") if part.strip()]
    if not specs:
        raise RequestError("scheduler", "give at least one scheduler")
    seen = set()
    for s in specs:
        if s in seen:
            raise RequestError("scheduler", f"{s!r} is given twice")
        seen.add(s)
    return specs


def _checked(field: str, check: Any, *args: Any) -> None:
    """``check(*args)``, its ``ValueError`` as this request's error about ``field``."""
    try:
        check(*args)
    except RequestError:
        raise
    except ValueError as e:
        raise RequestError(field, str(e).removeprefix(f"{field}: ")) from None


def _without_transport(options: str) -> str:
    """Packet options without their ``transport=`` items."""
    return ",".join(i for i in options.split(",") if i.split("=", 1)[0].strip() != "transport")


def check_request(
    engine: str = "flow",
    scheduler: str | Iterable[str] | None = None,
    baseline: str | None = None,
    capacity_gbps: float | None = None,
    n_hosts: int | None = None,
    topology: str | os.PathLike[str] | None = None,
    link_util_bin: float | None = None,
    missed: str = "finish",
    packet: str | Mapping[str, object] | None = None,
    classes: Sequence[int] | None = None,
    paths: Sequence[int | None] | None = None,
    decompose: str | None = None,
) -> Request:
    """Checks every argument of a simulation request that needs no workload, in one place for
    :func:`simulate` and ``coflowkit simulate`` alike: the engine and the options that belong to
    the other one, each scheduler spec (or transport) and the baseline, the fabric's arguments
    (a topology spec is built once to check it), the packet engine's knobs, ``link_util_bin`` and
    ``missed``. A wrong one raises :class:`RequestError` naming it. ``scheduler`` defaults to
    ``fair`` (flow) or ``dctcp`` (packet)."""
    if engine not in ENGINES:
        raise RequestError("engine", f"expected one of {', '.join(map(repr, ENGINES))}, got {engine!r}")
    if engine == "flow" and (packet or classes is not None or paths is not None):
        raise RequestError("packet, classes, paths", "options of engine='packet' or 'decomposed'")
    if engine != "decomposed" and decompose:
        raise RequestError("decompose", "an option of engine='decomposed'")
    if decompose:
        _checked("decompose", _core.check_decomposed_options, decompose)
    if engine == "decomposed" and classes is not None:
        raise RequestError("classes", "an option of engine='packet' (the decomposed engine takes no classes)")
    specs = _specs(scheduler if scheduler is not None else ("fair" if engine == "flow" else "dctcp"))
    check = {"flow": _core.check_scheduler, "packet": check_packet_run, "decomposed": check_decomposed_run}[engine]
    for s in specs:
        _checked("scheduler", check, s)
    if baseline is not None:
        baseline = baseline.strip()
        _checked("baseline", check, baseline)
    packet_text = packet_options_string(packet)
    if engine != "flow":
        if link_util_bin is not None or missed != "finish":
            raise RequestError("link_util_bin, missed", "options of the flow-level engine (engine='flow')")
        for i, c in enumerate(classes or []):
            if not (isinstance(c, int) and 0 <= c <= 7):
                raise RequestError(f"classes[{i}]", f"a priority class is 0 (highest) to 7, got {c!r}")
        for i, q in enumerate(paths or []):
            if q is not None and not (isinstance(q, int) and not isinstance(q, bool) and 0 <= q < 2**32):
                raise RequestError(f"paths[{i}]", f"a path index is a whole number from 0, or None, got {q!r}")
        if packet_text:
            # A transport's run takes every knob but `transport`; a scheduler's run takes that too
            # (the transport its hosts use), checked when the run is built.
            transports = set(_core.packet_transports())
            for s in specs:
                kept = packet_text if s in transports else _without_transport(packet_text)
                if kept:
                    _checked("packet", _core.check_packet_options, kept)
    if capacity_gbps is not None and not capacity_gbps > 0:
        raise RequestError("capacity_gbps", f"must be positive, got {capacity_gbps}")
    if n_hosts is not None and not 1 <= n_hosts < 2**32:
        raise RequestError("n_hosts", f"must be between 1 and {2**32 - 1}, got {n_hosts}")
    spec = None if topology is None else os.fspath(topology)
    if spec is not None and (capacity_gbps is not None or n_hosts is not None):
        raise RequestError(
            "topology",
            "capacity_gbps and n_hosts size the default big switch; "
            "with a topology, give its rates and hosts in the topology spec",
        )
    if spec is not None:
        try:
            topology_info(spec, 1)
        except ValueError as e:
            # The core's message names the spec or the file already.
            raise RequestError("topology", str(e), text=str(e)) from None
    bin_ns = None
    if link_util_bin is not None:
        if not (math.isfinite(link_util_bin) and link_util_bin > 0):
            raise RequestError("link_util_bin", f"must be a positive number of seconds, got {link_util_bin}")
        bin_ns = max(1, round(link_util_bin * 1e9))
    if missed not in ("finish", "drop"):
        raise RequestError("missed", f"expected 'finish' or 'drop', got {missed!r}")
    return Request(
        engine=engine,
        specs=specs,
        baseline=baseline,
        capacity_bps=None if capacity_gbps is None else float(capacity_gbps) * 1e9,
        n_hosts=n_hosts,
        topology=spec,
        bin_ns=bin_ns,
        missed=missed,
        packet=packet_text,
        classes=None if classes is None else [int(c) for c in classes],
        paths=None if paths is None else [None if q is None else int(q) for q in paths],
        decompose=decompose or "",
    )


def check_decomposed_run(spec: str) -> None:
    """Checks one decomposed run: a packet-engine run (:func:`check_packet_run`) that needs no
    central coordinator; a ``ValueError`` naming the engines that run it otherwise."""
    check_packet_run(spec)
    _core.check_decomposed_scheduler(spec.split(":", 1)[0].strip())


def check_packet_run(spec: str) -> None:
    """Checks one packet-engine run: a transport's name, or a scheduler the
    packet engine runs (by its host policy or a coordinator); a ``ValueError``
    naming it otherwise."""
    transports = list(_core.packet_transports())
    runnable = [name for name, _ in _core.packet_schedulers()]
    if spec in transports:
        return
    if spec.split(":", 1)[0].strip() in runnable:
        _core.check_scheduler(spec)
        return
    raise ValueError(
        f"scheduler: {spec!r} is neither a transport of the packet engine ({', '.join(transports)}) "
        f"nor a scheduler it runs ({', '.join(runnable)})"
    )


def packet_options_string(options: str | Mapping[str, object] | None) -> str:
    """The packet engine's options as ``key=value,...`` (from a string or a mapping)."""
    if options is None:
        return ""
    if isinstance(options, str):
        return options
    return ",".join(f"{k}={v}" for k, v in options.items())


def simulate(
    trace_or_workload: str | os.PathLike[str] | Workload,
    scheduler: str | Iterable[str] | None = None,
    baseline: str | None = None,
    capacity_gbps: float | None = None,
    per_flow: bool = False,
    n_hosts: int | None = None,
    progress: bool = True,
    topology: str | os.PathLike[str] | None = None,
    link_util_bin: float | None = None,
    missed: str = "finish",
    engine: str = "flow",
    packet: str | Mapping[str, object] | None = None,
    classes: Sequence[int] | None = None,
    paths: Sequence[int | None] | None = None,
    decompose: str | None = None,
) -> Results:
    """Simulate a trace (a path) or a workload under one or more schedulers.

    ``scheduler`` is a spec (``"fair"``, ``"fifo-lm:threshold=p90"``), a
    comma-separated list of specs, or a list of them. A ``baseline`` not among
    them is run too. The fabric is a big switch of ``n_hosts`` (default: the
    workload's) ports of ``capacity_gbps`` Gbit/s (default 1), or
    ``topology``: a spec string (``"fat-tree:k=8"``,
    ``"tree:pods=2,racks=4,hosts=8,tor_oversub=2"``, ``"bigswitch"``) or a
    ``.toml``/``.yaml`` topology file, built by the Rust core; with a topology,
    give rates and hosts in it, not in ``capacity_gbps``/``n_hosts``. With
    ``progress``, a bar is drawn on stderr (only on a terminal, only for runs
    longer than a second). With ``link_util_bin`` (seconds), each link's
    utilization is measured in bins of that length (:meth:`Results.link_util`).
    ``missed`` says what happens to a flow unfinished at its deadline:
    ``"finish"`` (it goes on; the scheduler decides how) or ``"drop"`` (the
    application gives it up at its deadline; its remaining bytes are never
    sent). Either way it counts as missed.

    ``engine="packet"`` runs the packet-level engine instead (docs/packet-engine.md):
    ``scheduler`` then names transports (``"dctcp"``, the default, ``"tcp"``,
    ``"rcp"``, ``"d2tcp"``, which reads each flow's deadline, or ``"pfabric"``)
    or schedulers it runs (``"pias"`` by its host policy on every host,
    ``"aalo"``, ``"varys"``, ``"fair"``, ... by a coordinator; see
    ``coflowkit schedulers --engine packet``) over the transport of the
    ``packet`` option ``transport`` (default dctcp),
    ``packet`` sets its knobs (``"buffer=100p,ecn_k=30KB"`` or a dict; see
    ``coflowkit simulate --packet help``), ``classes`` gives each flow's
    strict-priority class (0 highest) in the workload's flow order, ``paths``
    pins each flow to one of the fabric's equal-cost paths between its hosts
    (an index; on a leaf-spine the spine; None for the ECMP hash's), and every
    run keeps per-flow rows with drops, ECN marks, retransmissions and timeouts.

    ``engine="decomposed"`` estimates the packet engine's flow completion times
    from one packet-level simulation per link (docs/decomposed-engine.md):
    the same transports and knobs, schedulers whose host policies decide
    alone (``pias``, ``karuna``, ...; one run by a coordinator is refused),
    ``paths`` as for ``"packet"``, no ``classes``; ``decompose`` its own
    options (``"cluster=2000,combine=max"``: clustering alike links, how a
    flow's per-link costs combine, what stands for its sources).
    """
    req = check_request(
        engine,
        scheduler,
        baseline,
        capacity_gbps,
        n_hosts,
        topology,
        link_util_bin,
        missed,
        packet,
        classes,
        paths,
        decompose,
    )
    workload = trace_or_workload if isinstance(trace_or_workload, Workload) else load_trace(trace_or_workload)
    specs = list(req.specs)
    if req.baseline is not None and req.baseline not in specs:
        specs.append(req.baseline)
    if req.topology is None:
        described = f"big switch, {req.n_hosts or workload.n_hosts} ports of {(req.capacity_bps or 1e9) / 1e9:g} Gbit/s"
        port_bps = req.capacity_bps or 1e9
    else:
        info = topology_info(req.topology, workload.n_hosts)
        described = info["description"]
        port_bps = info["host_rate_bps"]
    if req.engine == "decomposed":
        runs = _core.simulate_decomposed(
            workload,
            specs,
            req.packet,
            req.capacity_bps,
            req.n_hosts,
            progress,
            req.topology,
            req.paths,
            decompose=req.decompose,
        )
    elif req.engine == "packet":
        runs = _core.simulate_packet(
            workload, specs, req.packet, req.classes, req.capacity_bps, req.n_hosts, progress, req.topology, req.paths
        )
    else:
        runs = _core.simulate(
            workload, specs, req.capacity_bps, req.n_hosts, per_flow, progress, req.topology, req.bin_ns, req.missed
        )
    return Results(runs, source=workload.source, capacity_bps=port_bps, baseline=req.baseline, topology=described)


def topology_info(topology: str | os.PathLike[str], n_hosts: int | None = None) -> dict[str, Any]:
    """Describe a topology (a spec string or a ``.toml``/``.yaml`` file): hosts,
    switches per tier, links per kind with capacities, the bisection and its
    oversubscription, ECMP paths, and ``text``, the report ``coflowkit topology
    info`` prints. A big switch without ``hosts`` gets ``n_hosts``."""
    return dict(_core.topology_info(os.fspath(topology), n_hosts))
