"""A replay's plan: what the driver tells every worker, as typed values and
as the one JSON line that carries them (:mod:`.protocol`, step 1).

A :class:`Plan` holds the hosts (their addresses, data and control ports,
runtime agents), the sender policy and every :class:`Flow` of the fitted
workload. Both are frozen: the driver builds a plan once (:func:`make_plan`,
then :func:`dataclasses.replace` for what a mode adds: per-host ports, agents,
coflow ids) and every worker reads the same one.

The codec (:meth:`Plan.to_json`, :meth:`Plan.from_json`, and their one-line
forms :meth:`Plan.to_wire`, :meth:`Plan.from_wire`) writes a ``version``
(:data:`PLAN_VERSION`) and one JSON object per flow with named fields;
optional fields are left out when they hold their default and filled in on
decoding. Decoding validates at the door: an unknown version, a missing or
mistyped field, or a flow naming a host the plan does not have raises
:class:`PlanError` naming the field (and the flow's index in ``flows``).

Correctness properties:

- ``Plan.from_json(plan.to_json()) == plan`` for every plan (floats go
  through JSON as their shortest repr, so bit for bit);
  tests/test_replay_plans.py.
- A decoded plan's flows name hosts ``0 .. len(hosts) - 1``, and per-host
  lists (``ports``, ``control_ports``, ``agents``) have one entry per host:
  checked in :meth:`Plan.from_json`.

Version 1 (the drivers before this module) carried each flow as a positional
list ``[id, src, dst, bytes, start_s, 0, coflow_rank, coflow_arrival_s,
(deadline_s, size_known)]``, whose sixth entry (once a flow's DSCP queue) was
always 0; version 2 names every field and drops that one.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar

import numpy as np
import pandas as pd

from ... import _core

#: The data port the workers listen on.
DATA_PORT = 5301
#: The UDP port of D-CAS's control channel (announcements and replies between the workers).
CONTROL_PORT = 5302
#: The plan format :meth:`Plan.to_json` writes and :meth:`Plan.from_json` reads.
PLAN_VERSION = 2

T = TypeVar("T")


class PlanError(ValueError):
    """A plan that cannot be decoded: names the field, and the flow by its index in ``flows``."""


@dataclass(frozen=True, slots=True)
class Flow:
    """One flow of a plan: sent from host ``src`` to host ``dst`` at ``start_s`` after ``t0``."""

    #: the flow's id: its row in the fitted workload (the results name flows by it)
    id: int
    #: the sending host's index
    src: int
    #: the receiving host's index
    dst: int
    #: bytes to send
    size: int
    #: seconds after the common start ``t0`` at which the flow starts (its arrival)
    start_s: float
    #: its coflow's rank in FIFO order (by arrival, then id): the coflow number every host agrees on
    coflow_rank: int
    #: its coflow's arrival, seconds after ``t0`` (the policies that order coflows by age read it)
    coflow_arrival_s: float
    #: seconds after its start by which it should finish (Karuna's type 1), or None
    deadline_s: float | None = None
    #: whether a sender may know its size (False: Karuna's type 3)
    size_known: bool = True


@dataclass(frozen=True)
class Plan:
    """What every worker of a replay reads: the hosts, the sender policy, the flows."""

    #: each host's address (its receiver listens there, senders connect there)
    hosts: tuple[str, ...]
    #: every flow, in id order
    flows: tuple[Flow, ...]
    #: the sender policy (:func:`coflowkit.testbed.replay.modes.policy_spec`): ``name`` and its parameters
    policy: Mapping[str, Any] = field(default_factory=lambda: {"name": "plain"})
    #: the data port of every host, unless ``ports`` gives one per host
    port: int = DATA_PORT
    #: one data port per host (hosts sharing an address), or None: ``port`` for all
    ports: tuple[int, ...] | None = None
    #: D-CAS's control port (UDP) of every host, unless ``control_ports`` gives one per host; None: none
    control_port: int | None = None
    #: one control port per host, or None: ``control_port`` for all
    control_ports: tuple[int, ...] | None = None
    #: the TCP congestion control of the data sockets ("": the host's default)
    tcp_cc: str = ""
    #: every flow paced at most at this rate, bytes per second, unless its policy paces it (None: not paced)
    pace_bps: int | None = None
    #: through the runtime: each host's agent socket
    agents: tuple[str, ...] | None = None
    #: through the runtime: the runtime's coflow id of each coflow, by FIFO rank (registered by the driver)
    coflow_ids: tuple[int, ...] | None = None
    #: through the runtime: how often the senders' client libraries report to their agents, ms
    report_ms: int = 10
    #: tests: flows whose first connection the sender resets halfway (each is then sent again)
    inject_reset: tuple[int, ...] = ()

    @property
    def n_hosts(self) -> int:
        """How many hosts the plan has."""
        return len(self.hosts)

    @property
    def n_coflows(self) -> int:
        """How many coflows its flows belong to."""
        return len({f.coflow_rank for f in self.flows})

    def data_port(self, host: int) -> int:
        """The data port ``host`` listens on."""
        return self.ports[host] if self.ports is not None else self.port

    def host_control_port(self, host: int) -> int | None:
        """``host``'s control port (D-CAS's negotiation), or None if the plan has none."""
        return self.control_ports[host] if self.control_ports is not None else self.control_port

    def flows_from(self, host: int) -> list[Flow]:
        """The flows ``host`` sends, in id order."""
        return [f for f in self.flows if f.src == host]

    def flows_to(self, host: int) -> list[Flow]:
        """The flows ``host`` receives, in id order."""
        return [f for f in self.flows if f.dst == host]

    def to_json(self) -> dict[str, Any]:
        """The plan as a JSON object (version :data:`PLAN_VERSION`); optional fields holding their
        default are left out."""
        out: dict[str, Any] = {
            "version": PLAN_VERSION,
            "hosts": list(self.hosts),
            "port": self.port,
            "policy": dict(self.policy),
            "flows": [_flow_to_json(f) for f in self.flows],
        }
        optional: dict[str, Any] = {
            "ports": None if self.ports is None else list(self.ports),
            "control_port": self.control_port,
            "control_ports": None if self.control_ports is None else list(self.control_ports),
            "tcp_cc": self.tcp_cc or None,
            "pace_bps": self.pace_bps,
            "agents": None if self.agents is None else list(self.agents),
            "coflow_ids": None if self.coflow_ids is None else list(self.coflow_ids),
            "report_ms": None if self.report_ms == 10 else self.report_ms,
            "inject_reset": list(self.inject_reset) or None,
        }
        out.update({k: v for k, v in optional.items() if v is not None})
        return out

    def to_wire(self) -> str:
        """The plan as one line of JSON, without its newline (what a worker reads on its stdin)."""
        return json.dumps(self.to_json())

    @classmethod
    def from_wire(cls, line: str | bytes) -> Plan:
        """The plan in one line of JSON; :class:`PlanError` if it is not JSON or not a plan."""
        try:
            obj = json.loads(line)
        except (json.JSONDecodeError, UnicodeDecodeError) as e:
            raise PlanError(f"plan: not JSON: {e}") from None
        return cls.from_json(obj)

    @classmethod
    def from_json(cls, obj: Any) -> Plan:
        """The plan in JSON object ``obj`` (:meth:`to_json`'s); :class:`PlanError` naming the field
        (and the flow's index) for an unknown version or anything missing, mistyped or out of range."""
        if not isinstance(obj, dict):
            raise PlanError(f"plan: expected a JSON object, got {_kind(obj)}")
        version = obj.get("version")
        if version != PLAN_VERSION:
            raise PlanError(
                f"plan: field 'version': {version!r} is not a plan version this coflowkit reads "
                f"({PLAN_VERSION}; is the driver's coflowkit another version than the worker's?)"
            )
        hosts = tuple(_list_of(obj, "hosts", _str, required=True) or ())
        n = len(hosts)
        if n == 0:
            raise PlanError("plan: field 'hosts': no hosts")
        policy = _get(obj, "policy", dict, "an object", {"name": "plain"})
        if not isinstance(policy.get("name", "plain"), str):
            raise PlanError(f"plan: field 'policy': 'name' must be a string, got {policy['name']!r}")
        raw_flows = _get(obj, "flows", list, "a list", None)
        if raw_flows is None:
            raise PlanError("plan: field 'flows': missing")
        flows = tuple(_flow_from_json(i, f, n) for i, f in enumerate(raw_flows))
        ports = _list_of(obj, "ports", _int)
        control_ports = _list_of(obj, "control_ports", _int)
        agents = _list_of(obj, "agents", _str)
        for k, v in (("ports", ports), ("control_ports", control_ports), ("agents", agents)):
            if v is not None and len(v) != n:
                raise PlanError(f"plan: field {k!r}: {len(v)} entries for {n} hosts")
        return cls(
            hosts=hosts,
            flows=flows,
            policy=policy,
            port=_get(obj, "port", int, "an integer", DATA_PORT),
            ports=_tuple(ports),
            control_port=_get(obj, "control_port", int, "an integer", None),
            control_ports=_tuple(control_ports),
            tcp_cc=_get(obj, "tcp_cc", str, "a string", ""),
            pace_bps=_get(obj, "pace_bps", int, "an integer", None),
            agents=_tuple(agents),
            coflow_ids=_tuple(_list_of(obj, "coflow_ids", _int)),
            report_ms=_get(obj, "report_ms", int, "an integer", 10),
            inject_reset=tuple(_list_of(obj, "inject_reset", _int) or ()),
        )


def _flow_to_json(f: Flow) -> dict[str, Any]:
    """One flow's JSON object: every field, ``deadline_s`` and ``size_known`` only when not their default."""
    out: dict[str, Any] = {
        "id": f.id,
        "src": f.src,
        "dst": f.dst,
        "size": f.size,
        "start_s": f.start_s,
        "coflow_rank": f.coflow_rank,
        "coflow_arrival_s": f.coflow_arrival_s,
    }
    if f.deadline_s is not None:
        out["deadline_s"] = f.deadline_s
    if not f.size_known:
        out["size_known"] = False
    return out


def _flow_from_json(i: int, obj: Any, n_hosts: int) -> Flow:
    """Flow ``i`` of a plan's ``flows``; :class:`PlanError` naming it and the field."""
    if not isinstance(obj, dict):
        raise PlanError(f"plan: flow {i}: expected a JSON object, got {_kind(obj)}")

    def need(key: str, check: Callable[[str, Any], T]) -> T:
        if key not in obj:
            raise PlanError(f"plan: flow {i}: field {key!r}: missing")
        return _at(f"flow {i}", key, check, obj[key])

    src, dst = need("src", _int), need("dst", _int)
    for key, h in (("src", src), ("dst", dst)):
        if h >= n_hosts:
            raise PlanError(f"plan: flow {i}: field {key!r}: host {h}, but the plan has {n_hosts} hosts")
    deadline = obj.get("deadline_s")
    return Flow(
        id=need("id", _int),
        src=src,
        dst=dst,
        size=need("size", _int),
        start_s=need("start_s", _float),
        coflow_rank=need("coflow_rank", _int),
        coflow_arrival_s=need("coflow_arrival_s", _float),
        deadline_s=None if deadline is None else _at(f"flow {i}", "deadline_s", _float, deadline),
        size_known=_at(f"flow {i}", "size_known", _bool, obj.get("size_known", True)),
    )


def _kind(x: Any) -> str:
    """What a JSON value is, for messages."""
    return f"{type(x).__name__} {x!r}" if len(repr(x)) <= 40 else type(x).__name__


def _int(what: str, x: Any) -> int:
    """A non-negative integer (not a bool)."""
    if isinstance(x, bool) or not isinstance(x, int) or x < 0:
        raise PlanError(f"{what}: expected a non-negative integer, got {_kind(x)}")
    return x


def _float(what: str, x: Any) -> float:
    """A finite number (an integer taken as a float)."""
    if isinstance(x, bool) or not isinstance(x, int | float) or not math.isfinite(x):
        raise PlanError(f"{what}: expected a finite number, got {_kind(x)}")
    return float(x)


def _bool(what: str, x: Any) -> bool:
    """true or false."""
    if not isinstance(x, bool):
        raise PlanError(f"{what}: expected true or false, got {_kind(x)}")
    return x


def _str(what: str, x: Any) -> str:
    """A string."""
    if not isinstance(x, str):
        raise PlanError(f"{what}: expected a string, got {_kind(x)}")
    return x


def _at(where: str, key: str, check: Callable[[str, Any], T], x: Any) -> T:
    """``check`` of field ``key`` of ``where`` (a flow, or the plan)."""
    return check(f"plan: {where}: field {key!r}", x)


def _get(obj: dict[str, Any], key: str, typ: type[T], what: str, default: T) -> T:
    """The plan's field ``key`` if given (and not null), of type ``typ`` (a bool is no integer), else ``default``."""
    x = obj.get(key)
    if x is None:
        return default
    if not isinstance(x, typ) or (typ is int and isinstance(x, bool)):
        raise PlanError(f"plan: field {key!r}: expected {what}, got {_kind(x)}")
    return x


def _list_of(obj: dict[str, Any], key: str, check: Callable[[str, Any], T], required: bool = False) -> list[T] | None:
    """The plan's field ``key``, a list each of whose entries passes ``check``; None if not given."""
    x = obj.get(key)
    if x is None:
        if required:
            raise PlanError(f"plan: field {key!r}: missing")
        return None
    if not isinstance(x, list):
        raise PlanError(f"plan: field {key!r}: expected a list, got {_kind(x)}")
    return [check(f"plan: field {key!r}: entry {j}", v) for j, v in enumerate(x)]


def _tuple(x: list[T] | None) -> tuple[T, ...] | None:
    return None if x is None else tuple(x)


def make_plan(workload: _core.Workload, hosts: Sequence[str], policy: Mapping[str, Any] | None = None) -> Plan:
    """The plan of ``workload`` on ``hosts`` (addresses) with sender ``policy`` (default
    ``plain``): one :class:`Flow` per flow of the workload, its id its row, its start its arrival,
    the data port :data:`DATA_PORT` and the control port :data:`CONTROL_PORT` on every host."""
    if workload.n_hosts > len(hosts):
        raise ValueError(f"{workload.source}: uses {workload.n_hosts} hosts, only {len(hosts)} given (fit it first)")
    c = workload.columns()
    first = _first_arrivals(c)
    rank = _ranks(first)
    deadline = np.where(c["flow_deadline_ns_valid"], c["flow_deadline_ns"] / 1e9, np.nan)
    flows = tuple(
        Flow(
            id=i,
            src=int(s),
            dst=int(d),
            size=int(b),
            start_s=int(a) / 1e9,
            coflow_rank=rank[int(cid)],
            coflow_arrival_s=int(first[cid]) / 1e9,
            deadline_s=None if np.isnan(dl) else float(dl),
            size_known=bool(k),
        )
        for i, (s, d, b, a, cid, dl, k) in enumerate(
            zip(c["src"], c["dst"], c["bytes"], c["arrival_ns"], c["coflow_id"], deadline, c["size_known"], strict=True)
        )
    )
    return Plan(
        hosts=tuple(hosts),
        flows=flows,
        policy=dict(policy) if policy is not None else {"name": "plain"},
        port=DATA_PORT,
        control_port=CONTROL_PORT,
    )


def coflow_ranks(workload: _core.Workload) -> dict[int, int]:
    """Each coflow id's rank in FIFO order (by arrival, then id: the simulator's fifo order), the
    coflow number a plan's flows carry."""
    return _ranks(_first_arrivals(workload.columns()))


def _first_arrivals(c: Mapping[str, Any]) -> pd.Series:
    """Each coflow's arrival (ns), by coflow id, ascending."""
    first: pd.Series = pd.DataFrame({"c": c["coflow_id"], "a": c["arrival_ns"]}).groupby("c")["a"].min()
    return first


def _ranks(first: pd.Series) -> dict[int, int]:
    """Coflow id -> its rank by first arrival (ties by id: the index is sorted)."""
    return {int(cid): r for r, cid in enumerate(first.sort_values(kind="stable").index)}
