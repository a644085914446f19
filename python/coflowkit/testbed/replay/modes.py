"""The replay's sender policies (its modes): one :class:`ReplayPolicy` each in
:data:`REPLAY_POLICIES`, the one place where they differ (their help, the
spec keys each derives from the workload, the option that carries its
thresholds, whether its clock runs natively), and :func:`policy_spec`,
which makes the spec a plan carries (``name`` and the scheduler spec,
defaults taken from the fitted workload); the workers build the Rust policy
of that spec (``_core.HostPolicy``, crates/sched/src/host: the code the
packet engine runs, with the same spec as the simulator's scheduler of that
name) in :func:`coflowkit.testbed.replay.worker.make_policy`. What is the
Rust policy's own (whether it negotiates over a control channel) is read
from the binding, and what the testbed cannot run from the scheduler's
descriptor (``_core.scheduler_descriptors()``): no code but the table
tests a policy's name (tests/test_scheduler_names.py).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from ... import _core
from ...experiments.analysis import nearest_rank

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
#: Karuna's base RTT at the testbed's hosts (its pacing floor: two segments per RTT).
KARUNA_RTT_NS = 100_000
#: How often a Karuna sender re-evaluates a deadline flow's pacing rate (the host key ``repace``).
KARUNA_REPACE = "10ms"


@dataclass(frozen=True)
class PolicyArgs:
    """What a policy's spec keys are made from: the fitted workload and the options given
    (:func:`policy_spec`'s; None: the policy's default). A policy reads the ones it takes."""

    workload: _core.Workload
    thresholds: list[int] | None = None
    heavy: int | None = None
    quantum_s: float | None = None
    negotiate: bool = True
    psi: str = "max"
    phi: str = "max"
    time_scale: float = 0.02
    bands: list[int] | None = None


@dataclass(frozen=True)
class ReplayPolicy:
    """One sender policy of the replay: what differs from another's, declared once."""

    #: its name (``--policy``; the scheduler's, whose spec it runs)
    name: str
    #: what marks a connection, in one line (``--policy``'s choices, :data:`POLICIES`)
    help: str
    #: its scheduler spec's keys, made from the workload and the options (refusing a bad one with
    #: ``ValueError``); None: no scheduler at all (no spec, no host policy: every flow unmarked)
    keys: Callable[[PolicyArgs], dict[str, str]] | None = None
    #: whether ``--thresholds`` carries its thresholds: a bad parameter of it is then blamed on that
    #: option (``coflowkit replay``), else on ``--policy``
    takes_thresholds: bool = False
    #: whether its workers run its clock natively (:meth:`coflowkit.testbed.replay.worker.Worker.native_clock`):
    #: D-CAS's ticks on its ``delta`` grid, which the workers' event loops ran 6-7 ms late on a loaded testbed
    native_clock: bool = False


def _flow_sizes(workload: _core.Workload) -> np.ndarray:
    """The workload's flow sizes, ascending."""
    return np.sort(workload.columns()["bytes"].astype(np.int64))


def _coflow_totals(c: dict[str, Any]) -> pd.Series:
    """Each coflow's bytes, by coflow id."""
    return pd.Series(c["bytes"].astype(np.int64)).groupby(c["coflow_id"]).sum()


def _pias_keys(a: PolicyArgs) -> dict[str, str]:
    """PIAS: 7 demotion thresholds (default: percentiles :data:`PIAS_DEFAULT_PERCENTILES` of the flow sizes)."""
    thresholds = a.thresholds
    if thresholds is None:
        sizes = _flow_sizes(a.workload)
        thresholds = [int(nearest_rank(sizes, q)) for q in PIAS_DEFAULT_PERCENTILES]
    if not 1 <= len(thresholds) <= 7 or any(t <= 0 for t in thresholds):
        raise ValueError(f"pias thresholds {thresholds}: give 1 to 7 positive byte counts")
    return {"thresholds": "/".join(map(str, _ascending(thresholds)))}


def _fifo_lm_keys(a: PolicyArgs) -> dict[str, str]:
    """FIFO-LM: its heavy threshold (default: percentile :data:`FIFO_LM_DEFAULT_PERCENTILE` of the
    coflow sizes) and age quantum (default: the median gap between arrivals)."""
    c = a.workload.columns()
    heavy = a.heavy
    if heavy is None:
        totals = _coflow_totals(c).sort_values()
        heavy = int(nearest_rank(totals.to_numpy(), FIFO_LM_DEFAULT_PERCENTILE))
    if heavy <= 0:
        raise ValueError(f"fifo-lm heavy threshold {heavy}: must be a positive number of bytes")
    quantum_s = a.quantum_s
    if quantum_s is None:
        # A coflow climbs the eight queues in about the median gap between arrivals times 8.
        quantum_s = _age_quantum(c)
    if not (math.isfinite(quantum_s) and quantum_s > 0):
        raise ValueError(f"fifo-lm quantum {quantum_s}: must be a positive number of seconds")
    # What 8 queues carry (docs/testbed.md): light coflows above every heavy one, heavy judged per
    # sender; not Baraat's multiplexing of a heavy coflow with the next one (mux=next). The host
    # policy is this by construction; the keys tell the simulator.
    return {"threshold": str(int(heavy)), "age": _ns(quantum_s), "mux": "last", "per": "sender"}


def _tafe_keys(a: PolicyArgs) -> dict[str, str]:
    """TAFE: its task thresholds (default: 0.5 and 0.75 of the largest task, TAFE V-B's)."""
    c = a.workload.columns()
    thresholds = a.thresholds
    if thresholds is None:
        totals = _coflow_totals(c)
        thresholds = [int(0.5 * totals.max()), int(0.75 * totals.max())]  # TAFE V-B's
    if not 1 <= len(thresholds) <= 7 or any(t <= 0 for t in thresholds):
        raise ValueError(f"tafe thresholds {thresholds}: give 1 to 7 positive byte counts")
    # Flow-awareness needs TAFE's window rule in TCP: the testbed's flows of a task share by the
    # kernel's TCP, so the simulator shares them fairly too (flows=fair).
    t = "/".join(str(int(x)) for x in sorted(thresholds))
    return {"thresholds": t, "age": _ns(_age_quantum(c)), "flows": "fair"}


def _karuna_keys(a: PolicyArgs) -> dict[str, str]:
    """Karuna: 6 thresholds for both split and sieve (default: percentiles
    :data:`KARUNA_DEFAULT_PERCENTILES` of the flow sizes)."""
    thresholds = a.thresholds
    if thresholds is None:
        sizes = _flow_sizes(a.workload)
        thresholds = [int(nearest_rank(sizes, q)) for q in KARUNA_DEFAULT_PERCENTILES]
    if len(thresholds) != 6 or any(t <= 0 for t in thresholds):
        raise ValueError(f"karuna thresholds {thresholds}: give 6 positive byte counts")
    t = "/".join(map(str, _ascending(thresholds)))
    return {"split": t, "sieve": t, "repace": KARUNA_REPACE}


def _dcas_keys(a: PolicyArgs) -> dict[str, str]:
    """D-CAS: its threshold (default: percentile :data:`DCAS_DEFAULT_PERCENTILE` of the subcoflow
    sizes), age quantum, its times at ``time_scale``, negotiation, combinations and bands."""
    c = a.workload.columns()
    heavy = a.heavy
    if heavy is None:
        heavy = int(nearest_rank(np.sort(subcoflow_sizes(a.workload)), DCAS_DEFAULT_PERCENTILE))
    if heavy <= 0:
        raise ValueError(f"dcas threshold {heavy}: must be a positive number of bytes")
    for key, how in (("psi", a.psi), ("phi", a.phi)):
        check_combination(key, how)
    q = _age_quantum(c) if a.quantum_s is None else a.quantum_s
    time_scale = a.time_scale
    if not (math.isfinite(time_scale) and time_scale > 0):
        raise ValueError(f"dcas time_scale {time_scale}: must be a positive number")
    # delta, T and expiry: D-CAS's 100 ms, 1 s and 2 s at the time scale (FB2010's usual x0.02:
    # 2 ms, 20 ms and 40 ms), delta never below 10 ms (a Python sender's timer). A negotiation is decided when
    # every receiver replied, or 8 ms after the announcement with the replies that came (on
    # loopback with 8 busy workers 94% of the replies came within 8 ms, 86% within 5 ms).
    keys = {
        "threshold": str(int(heavy)),
        "age": _ns(q),
        "delta": _ns(max(0.1 * time_scale, 0.01)),
        "t": _ns(1.0 * time_scale),
        "expiry": _ns(2.0 * time_scale),
        "wait": "8ms",
        "loss": "0" if a.negotiate else "1",
        "psi": a.psi,
        "phi": a.phi,
    }
    # <1, P> cut into queues 4-7 by the bytes left: the host's classes, and the simulator's D-CAS with
    # the same classes (TCP shares a queue: max-min among equals).
    keys["desired"] = "bands:" + "/".join(map(str, dcas_bands(heavy, a.bands)))
    return keys


#: Every sender policy of the replay, by name, in ``--policy``'s order: the one table of what
#: differs between them.
REPLAY_POLICIES: dict[str, ReplayPolicy] = {
    p.name: p
    for p in (
        ReplayPolicy("plain", "unmarked TCP, no runtime (the baseline): every flow in the lowest queue"),
        ReplayPolicy(
            "pias",
            "PIAS: a flow starts in queue 0 and is demoted by the bytes it has sent (7 thresholds)",
            _pias_keys,
            takes_thresholds=True,
        ),
        ReplayPolicy(
            "fifo-lm",
            "FIFO-LM at each sender: a coflow rises one queue per quantum of age (older first), a heavy one "
            "stays a queue lower",
            _fifo_lm_keys,
        ),
        ReplayPolicy(
            "tafe",
            "TAFE's task-awareness at each sender: a task demoted through bands of queues by the bytes this host "
            "sent of it (thresholds 0.5/0.75 of the largest task), FIFO by age inside a band",
            _tafe_keys,
            takes_thresholds=True,
        ),
        ReplayPolicy(
            "karuna",
            "Karuna: deadline flows paced at their minimal rate in queue 0; known sizes split through queues 1-7; "
            "unknown sizes sieved through queues 1-7 by bytes sent",
            _karuna_keys,
            takes_thresholds=True,
        ),
        ReplayPolicy(
            "dcas",
            "D-CAS: small subcoflows FIFO by age in queues 0-3, large ones in queues 4-7 by the priority their "
            "senders negotiate with the receivers over UDP (max of the senders' bytes left), no coordinator",
            _dcas_keys,
            native_clock=True,
        ),
    )
}
#: Flow-level policies of the replay senders: name -> what marks a connection.
POLICIES = {name: p.help for name, p in REPLAY_POLICIES.items()}

#: Why the testbed cannot run a scheduler whose switches do more than serve the classes its hosts
#: mark (its Linux bridge serves queues by DSCP, nothing else), by what the scheduler's descriptor
#: says its switches do (``_core.scheduler_descriptors()``, ``parts["switch"]``).
SWITCH_REFUSALS = {
    "smart-priority-classes": "its rates come from switches that answer each flow's request every RTT "
    "(Algorithm 1), and the testbed's Linux bridge answers none",
}


def _unknown(name: str) -> ValueError:
    """Why ``name`` is no replay policy: what its descriptor's switches need and where to run it
    instead, or the policies there are."""
    described = {d["name"]: d for d in _core.scheduler_descriptors()}.get(name)
    why = None if described is None else SWITCH_REFUSALS.get(described["parts"]["switch"])
    if why is not None:
        return ValueError(
            f"replay policy {name!r}: {why}; run it in the packet engine "
            f"(coflowkit simulate --engine packet --scheduler {name})"
        )
    return ValueError(f"replay policy {name!r}: known policies are {', '.join(REPLAY_POLICIES)}")


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
    """A sender policy with its parameters, defaults taken from ``workload``: ``{"name": name,
    "spec": scheduler spec}``, the spec the workers build their Rust policy from
    (``_core.HostPolicy``, crates/sched/src/host: the same scheduler spec as the simulator's, with
    the host keys ``age``, ``wait``, ...), checked here by building one. PIAS thresholds at
    percentiles :data:`PIAS_DEFAULT_PERCENTILES` of its flow sizes, FIFO-LM's heavy threshold at
    percentile :data:`FIFO_LM_DEFAULT_PERCENTILE` of its coflow sizes and its age quantum at the
    median gap between coflow arrivals (so coflows that arrive one after another take different
    queues). ``negotiate`` (dcas): the senders negotiate with the receivers, or (False: the
    simulator's ``loss=1``) each keeps its own desired priority; ``psi`` and ``phi`` its
    receivers' and senders' combinations (``max``, the paper's, ``min`` or ``mean``);
    ``time_scale`` how the replay's times compare with the paper's (its 100 ms, 1 s and 2 s for
    delta, T and expiry become these times ``time_scale``; delta never below 10 ms); ``bands``
    the three byte counts that cut a negotiated priority ``<1, P>`` into queues 4-7 (default: the
    threshold times 4, 16 and 64). A name of no policy in :data:`REPLAY_POLICIES` is refused, a
    scheduler whose switches the testbed does not have with where to run it instead."""
    policy = REPLAY_POLICIES.get(name)
    if policy is None:
        raise _unknown(name)
    if policy.keys is None:
        return {"name": name}
    args = PolicyArgs(workload, thresholds, heavy, quantum_s, negotiate, psi, phi, time_scale, bands)
    keys = policy.keys(args)
    spec = f"{name}:" + ";".join(f"{k}={v}" for k, v in keys.items())
    _core.HostPolicy(spec, 0, 1, 1e9, KARUNA_RTT_NS)  # checked here as the workers build it
    return {"name": name, "spec": spec}


def runs_scheduler(name: str) -> bool:
    """Whether replay policy ``name`` runs a scheduler (a host policy marks its flows): every policy
    of :data:`REPLAY_POLICIES` but the one without keys; a name of none (a plan's own) does."""
    policy = REPLAY_POLICIES.get(name)
    return policy is None or policy.keys is not None


def runs_clock_natively(name: str) -> bool:
    """Whether the workers of policy ``name`` run its clock natively (:attr:`ReplayPolicy.native_clock`)."""
    policy = REPLAY_POLICIES.get(name)
    return policy is not None and policy.native_clock


def takes_thresholds(name: str) -> bool:
    """Whether ``--thresholds`` carries the thresholds of policy ``name`` (:attr:`ReplayPolicy.takes_thresholds`)."""
    policy = REPLAY_POLICIES.get(name)
    return policy is not None and policy.takes_thresholds


def _ns(seconds: float) -> str:
    """A duration of ``seconds`` as a spec writes it, in whole nanoseconds."""
    return f"{round(seconds * 1e9)}ns"


def _ascending(t: Sequence[int]) -> list[int]:
    """``t`` sorted, each at least one byte above the one before (percentiles of a workload's
    sizes may repeat; the specs take strictly ascending thresholds, and a flow passes equal ones
    a byte apart instead of at once)."""
    out: list[int] = []
    for x in sorted(int(v) for v in t):
        out.append(max(x, out[-1] + 1) if out else x)
    return out


def policy_keys(spec: Mapping[str, Any]) -> dict[str, str]:
    """The ``key=value`` pairs of a policy's scheduler spec (:func:`policy_spec`; none for ``plain``)."""
    text = str(spec.get("spec", ""))
    rest = text.split(":", 1)[1] if ":" in text else ""
    return dict(kv.split("=", 1) for kv in rest.split(";") if "=" in kv)


def with_keys(spec: Mapping[str, Any], **keys: str) -> dict[str, Any]:
    """``spec`` (:func:`policy_spec`) with ``keys`` set (the diagnostics' variants: ``keep_own="yes"``,
    another ``wait``), checked as the workers will build it."""
    kv = {**policy_keys(spec), **keys}
    out = {**spec, "spec": f"{spec['name']}:" + ";".join(f"{k}={v}" for k, v in kv.items())}
    _core.HostPolicy(out["spec"], 0, 1, 1e9, KARUNA_RTT_NS)
    return out


def negotiates(spec: Mapping[str, Any]) -> bool:
    """Whether the workers of ``spec`` negotiate over their control channel: what the Rust policy of
    its scheduler spec says (``HostPolicy.negotiates``: ``dcas`` unless every message is taken as
    lost, ``loss=1``); False without a spec (``plain``)."""
    text = spec.get("spec")
    return isinstance(text, str) and _core.HostPolicy(text, 0, 1, 1e9, KARUNA_RTT_NS).negotiates


def seconds(value: str) -> float:
    """A duration of a policy spec (:func:`policy_spec` writes whole nanoseconds, ``123ns``; ``ms``
    and ``s`` are read too), in seconds."""
    for unit, scale in (("ns", 1e-9), ("us", 1e-6), ("ms", 1e-3), ("s", 1.0)):
        if value.endswith(unit):
            return float(value[: -len(unit)]) * scale
    raise ValueError(f"duration {value!r}: give a unit (ns, us, ms, s)")


def subcoflow_sizes(workload: _core.Workload) -> np.ndarray:
    """Each subcoflow's bytes (a coflow's flows from one sender, D-CAS's unit), in no set order."""
    c = workload.columns()
    sums: np.ndarray = pd.Series(c["bytes"].astype(np.int64)).groupby([c["coflow_id"], c["src"]]).sum().to_numpy()
    return sums


def _age_quantum(c: dict[str, Any]) -> float:
    """The median gap between coflow arrivals (at least 1 ms): the age quantum of the policies
    that order coflows by age."""
    gaps = np.diff(np.unique(c["arrival_ns"]) / 1e9)
    return max(float(np.median(gaps)) if len(gaps) else 0.01, 0.001)


#: D-CAS's combinations for Psi and Phi (``max``, the paper's, first).
COMBINATIONS = ("max", "min", "mean")


def check_combination(key: str, how: str) -> None:
    """Refuses an unknown combination for ``key`` (``psi`` or ``phi``), naming both."""
    if how not in COMBINATIONS:
        known = f"{', '.join(COMBINATIONS[:-1])} or {COMBINATIONS[-1]}"
        raise ValueError(f"dcas {key} {how!r}: {known} (unknown combination {how!r})")


def dcas_bands(threshold: int, bands: Sequence[int] | None = None) -> list[int]:
    """The three byte counts that cut D-CAS's negotiated ``<1, P>`` into queues 4-7: ``bands``, or
    ``threshold`` times 4, 16 and 64. Refuses anything but three strictly ascending positive counts
    (what the simulator's ``desired=bands:..`` takes)."""
    b = [int(x) for x in bands] if bands is not None else [m * int(threshold) for m in (4, 16, 64)]
    if len(b) != 3 or min(b) < 1 or any(x >= y for x, y in zip(b, b[1:])):
        raise ValueError(f"dcas bands {b}: give 3 ascending positive byte counts")
    return b
