"""Replaying a workload as real TCP transfers, on the testbed or through the
runtime's agents: the driver and its plans (:mod:`.plan`), the per-host worker
(:mod:`.worker`) and runtime sender (:mod:`.sender`) it starts, and the
protocol it speaks with them over their stdin and stdout (:mod:`.protocol`).

The driver's names are importable from here: ``from coflowkit.testbed import
replay as rp; rp.fit(...)``.
"""

from __future__ import annotations

from .plan import (
    DATA_PORT,
    CONTROL_PORT,
    POLICIES,
    KARUNA_DEFAULT_PERCENTILES,
    DCAS_DEFAULT_PERCENTILE,
    PIAS_DEFAULT_PERCENTILES,
    FIFO_LM_DEFAULT_PERCENTILE,
    Fitted,
    fit,
    policy_spec,
    subcoflow_sizes,
    negotiation_summary,
    coflow_ranks,
    dcas_runs,
    make_plan,
    replay_on_testbed,
    RuntimeHost,
    load_hosts,
    LAUNCH_PLACEHOLDERS,
    launcher,
    replay_on_runtime,
    host_rate_bps,
    replay_on_testbed_runtime,
    tables,
)

__all__ = [
    "CONTROL_PORT",
    "DATA_PORT",
    "DCAS_DEFAULT_PERCENTILE",
    "FIFO_LM_DEFAULT_PERCENTILE",
    "Fitted",
    "KARUNA_DEFAULT_PERCENTILES",
    "LAUNCH_PLACEHOLDERS",
    "PIAS_DEFAULT_PERCENTILES",
    "POLICIES",
    "RuntimeHost",
    "coflow_ranks",
    "dcas_runs",
    "fit",
    "host_rate_bps",
    "launcher",
    "load_hosts",
    "make_plan",
    "negotiation_summary",
    "policy_spec",
    "replay_on_runtime",
    "replay_on_testbed",
    "replay_on_testbed_runtime",
    "subcoflow_sizes",
    "tables",
]
