"""The replay's sender policies (its modes): their names (:data:`POLICIES`)
and :func:`policy_spec`, which makes the spec a plan carries (``name`` and
the scheduler spec, defaults taken from the fitted workload); the workers
build the Rust policy of that spec (``_core.HostPolicy``,
crates/sched/src/host: the code the packet engine runs, with the same spec
as the simulator's scheduler of that name) in
:func:`coflowkit.testbed.replay.worker.make_policy`.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from ... import _core
from ...experiments.analysis import nearest_rank

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
    threshold times 4, 16 and 64)."""
    if name == "baraat":
        raise ValueError(
            "replay policy 'baraat': its rates come from switches that answer each flow's request every RTT "
            "(Algorithm 1), and the testbed's Linux bridge answers none; run it in the packet engine "
            "(coflowkit simulate --engine packet --scheduler baraat)"
        )
    if name not in POLICIES:
        raise ValueError(f"replay policy {name!r}: known policies are {', '.join(POLICIES)}")
    if name == "plain":
        return {"name": name}
    keys = _policy_keys(name, workload, thresholds, heavy, quantum_s, negotiate, psi, phi, time_scale, bands)
    spec = f"{name}:" + ";".join(f"{k}={v}" for k, v in keys.items())
    _core.HostPolicy(spec, 0, 1, 1e9, KARUNA_RTT_NS)  # checked here as the workers build it
    return {"name": name, "spec": spec}


#: Karuna's base RTT at the testbed's hosts (its pacing floor: two segments per RTT).
KARUNA_RTT_NS = 100_000
#: How often a Karuna sender re-evaluates a deadline flow's pacing rate (the host key ``repace``).
KARUNA_REPACE = "10ms"


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


def _policy_keys(
    name: str,
    workload: _core.Workload,
    thresholds: list[int] | None,
    heavy: int | None,
    quantum_s: float | None,
    negotiate: bool,
    psi: str,
    phi: str,
    time_scale: float,
    bands: list[int] | None,
) -> dict[str, str]:
    """The spec keys of policy ``name`` (see :func:`policy_spec`)."""
    c = workload.columns()
    sizes = np.sort(c["bytes"].astype(np.int64))
    if name == "pias":
        if thresholds is None:
            thresholds = [int(nearest_rank(sizes, q)) for q in PIAS_DEFAULT_PERCENTILES]
        if not 1 <= len(thresholds) <= 7 or any(t <= 0 for t in thresholds):
            raise ValueError(f"pias thresholds {thresholds}: give 1 to 7 positive byte counts")
        return {"thresholds": "/".join(map(str, _ascending(thresholds)))}
    if name == "fifo-lm":
        if heavy is None:
            totals = pd.Series(c["bytes"].astype(np.int64)).groupby(c["coflow_id"]).sum().sort_values()
            heavy = int(nearest_rank(totals.to_numpy(), FIFO_LM_DEFAULT_PERCENTILE))
        if heavy <= 0:
            raise ValueError(f"fifo-lm heavy threshold {heavy}: must be a positive number of bytes")
        if quantum_s is None:
            # A coflow climbs the eight queues in about the median gap between arrivals times 8.
            quantum_s = _age_quantum(c)
        if not (math.isfinite(quantum_s) and quantum_s > 0):
            raise ValueError(f"fifo-lm quantum {quantum_s}: must be a positive number of seconds")
        # What 8 queues carry (docs/testbed.md): light coflows above every heavy one, heavy judged per
        # sender; not Baraat's multiplexing of a heavy coflow with the next one (mux=next). The host
        # policy is this by construction; the keys tell the simulator.
        return {"threshold": str(int(heavy)), "age": _ns(quantum_s), "mux": "last", "per": "sender"}
    if name == "tafe":
        if thresholds is None:
            totals = pd.Series(c["bytes"].astype(np.int64)).groupby(c["coflow_id"]).sum()
            thresholds = [int(0.5 * totals.max()), int(0.75 * totals.max())]  # TAFE V-B's
        if not 1 <= len(thresholds) <= 7 or any(t <= 0 for t in thresholds):
            raise ValueError(f"tafe thresholds {thresholds}: give 1 to 7 positive byte counts")
        # Flow-awareness needs TAFE's window rule in TCP: the testbed's flows of a task share by the
        # kernel's TCP, so the simulator shares them fairly too (flows=fair).
        t = "/".join(str(int(x)) for x in sorted(thresholds))
        return {"thresholds": t, "age": _ns(_age_quantum(c)), "flows": "fair"}
    if name == "karuna":
        if thresholds is None:
            thresholds = [int(nearest_rank(sizes, q)) for q in KARUNA_DEFAULT_PERCENTILES]
        if len(thresholds) != 6 or any(t <= 0 for t in thresholds):
            raise ValueError(f"karuna thresholds {thresholds}: give 6 positive byte counts")
        t = "/".join(map(str, _ascending(thresholds)))
        return {"split": t, "sieve": t, "repace": KARUNA_REPACE}
    # dcas
    if heavy is None:
        heavy = int(nearest_rank(np.sort(subcoflow_sizes(workload)), DCAS_DEFAULT_PERCENTILE))
    if heavy <= 0:
        raise ValueError(f"dcas threshold {heavy}: must be a positive number of bytes")
    for key, how in (("psi", psi), ("phi", phi)):
        check_combination(key, how)
    q = _age_quantum(c) if quantum_s is None else quantum_s
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
        "loss": "0" if negotiate else "1",
        "psi": psi,
        "phi": phi,
    }
    # <1, P> cut into queues 4-7 by the bytes left: the host's classes, and the simulator's D-CAS with
    # the same classes (TCP shares a queue: max-min among equals).
    keys["desired"] = "bands:" + "/".join(map(str, dcas_bands(heavy, bands)))
    return keys


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
    """Whether the workers of ``spec`` negotiate over their control channel (``dcas`` unless every
    message is taken as lost, ``loss=1``)."""
    return spec.get("name") == "dcas" and policy_keys(spec).get("loss", "0") != "1"


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
