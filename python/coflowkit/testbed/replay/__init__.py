"""Replaying a workload as real TCP transfers, on the testbed or through the
runtime's agents.

The driver's side, one module a step: fitting the workload to the hosts
(:mod:`.fit`), the sender policies a replay runs (:mod:`.modes`), the plan
every worker reads and its versioned codec (:mod:`.plans`), the hosts file
and launcher of a replay on machines of their own (:mod:`.hosts`), running
and stopping the processes (:mod:`.supervise`), the replays themselves
(:mod:`.driver`) and their result tables (:mod:`.results`). The processes it
starts: the per-host worker (:mod:`.worker`) and runtime sender
(:mod:`.sender`), which speak with the driver over their stdin and stdout
(:mod:`.protocol`).

The driver's names are importable from here: ``from coflowkit.testbed import
replay as rp; rp.fit(...)``. (Nothing here imports :mod:`.worker` or
:mod:`.sender` at load time: they run as ``python -m``, and a module this
package imported first would be imported twice.)
"""

from __future__ import annotations

from .driver import host_rate_bps, replay_on_runtime, replay_on_testbed, replay_on_testbed_runtime
from .fit import Fitted, fit
from .hosts import LAUNCH_PLACEHOLDERS, RuntimeHost, launcher, load_hosts
from .modes import (
    DCAS_DEFAULT_PERCENTILE,
    FIFO_LM_DEFAULT_PERCENTILE,
    KARUNA_DEFAULT_PERCENTILES,
    PIAS_DEFAULT_PERCENTILES,
    POLICIES,
    REPLAY_POLICIES,
    SWITCH_REFUSALS,
    PolicyArgs,
    ReplayPolicy,
    dcas_bands,
    negotiates,
    policy_keys,
    policy_spec,
    seconds,
    subcoflow_sizes,
    with_keys,
)
from .plans import CONTROL_PORT, DATA_PORT, PLAN_VERSION, Flow, Plan, PlanError, coflow_ranks, make_plan
from .results import collect, dcas_runs, negotiation_summary, tables
from .supervise import Job, WorkerRun, run_workers

__all__ = [
    "CONTROL_PORT",
    "DATA_PORT",
    "DCAS_DEFAULT_PERCENTILE",
    "FIFO_LM_DEFAULT_PERCENTILE",
    "Fitted",
    "Flow",
    "Job",
    "KARUNA_DEFAULT_PERCENTILES",
    "LAUNCH_PLACEHOLDERS",
    "PIAS_DEFAULT_PERCENTILES",
    "PLAN_VERSION",
    "POLICIES",
    "Plan",
    "PlanError",
    "PolicyArgs",
    "REPLAY_POLICIES",
    "ReplayPolicy",
    "RuntimeHost",
    "SWITCH_REFUSALS",
    "WorkerRun",
    "coflow_ranks",
    "collect",
    "dcas_bands",
    "dcas_runs",
    "fit",
    "host_rate_bps",
    "launcher",
    "load_hosts",
    "make_plan",
    "negotiation_summary",
    "policy_spec",
    "policy_keys",
    "with_keys",
    "negotiates",
    "seconds",
    "replay_on_runtime",
    "replay_on_testbed",
    "replay_on_testbed_runtime",
    "run_workers",
    "subcoflow_sizes",
    "tables",
]
