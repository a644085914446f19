"""A replay from start to end, as ``coflowkit replay`` runs it: the workload
fitted to the hosts, the senders' policy, one of the three ways to run the
flows (on the testbed with a sender policy; through the runtime's agents a
hosts file lists; through a runtime started on the testbed), the result
tables written in the simulator's format, and, if asked, the same workload
simulated beside it. Each step's outcome is told in one line through ``say``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ... import _core
from ...sim import simulate
from ...sim.results import spec_dirname, write_table
from ...sim.trace import write_trace
from .driver import replay_on_runtime, replay_on_testbed, replay_on_testbed_runtime
from .fit import fit
from .hosts import RuntimeHost
from .modes import negotiates, policy_spec, takes_thresholds
from .results import negotiation_summary, tables

__all__ = ["OptionError", "ReplayRequest", "run_replay"]


class OptionError(ValueError):
    """A value given for one option does not fit; ``option`` names it (``'--thresholds'``)."""

    def __init__(self, option: str, message: str) -> None:
        super().__init__(message)
        self.option = option


@dataclass(frozen=True)
class ReplayRequest:
    """What to replay, where and how: ``coflowkit replay``'s options, checked."""

    #: The directory for the results, the replayed workload and the workers' files (``work/``).
    out_dir: Path
    #: Seconds after the start to give up.
    deadline_s: float = 600.0
    #: Multiply every flow's bytes by this.
    size_scale: float = 1.0
    #: Multiply every arrival time by this.
    time_scale: float = 1.0
    #: Keep the first K coflows by arrival (None: all).
    max_coflows: int | None = None
    #: How senders mark their flows on the testbed (a name of ``POLICIES``).
    policy: str = "plain"
    #: The policy's thresholds in bytes, comma-separated as given (None: its defaults).
    thresholds: str | None = None
    #: fifo-lm's and dcas's heavy threshold in bytes (None: the default percentile).
    heavy: int | None = None
    #: fifo-lm's and dcas's seconds of age per queue (None: the median gap between arrivals).
    quantum: float | None = None
    #: dcas: senders negotiate their priority with the receivers.
    negotiate: bool = True
    #: The testbed to replay on (when not through a hosts file).
    testbed_name: str = "ck"
    #: The testbed's state directory (None: the default).
    state_dir: Path | None = None
    #: Replay through the runtime's agents these hosts name instead of the testbed's workers.
    hosts: Sequence[RuntimeHost] | None = None
    #: The hosts file, to name in what is said.
    hosts_path: Path | None = None
    #: With ``hosts``: the launcher template that runs each host's workers on its machine.
    launch: str | None = None
    #: With ``launch``: the Python that runs the workers there.
    remote_python: str | None = None
    #: Replay through a runtime started on the testbed, its coordinator running this scheduler.
    runtime_scheduler: str | None = None
    #: The command that starts the runtime for ``runtime_scheduler`` (None: :func:`coflowkit.runtime.runtime_command`).
    runtime: Sequence[str] | None = None
    #: The results' directory name for a runtime replay (default: ``runtime``).
    label: str | None = None
    #: Also simulate the replayed workload with these scheduler specs on ``topology``.
    simulate: Sequence[str] = ()
    #: The testbed's topology, for ``simulate``.
    topology: str | None = None


def run_replay(workload: _core.Workload, n_hosts: int, request: ReplayRequest, say: Callable[[str], None]) -> None:
    """Replay ``workload`` on ``n_hosts`` hosts as ``request`` says and write its tables.

    A bad threshold or policy parameter raises :class:`OptionError`; a workload
    that does not fit or a replay that fails raises ``ValueError`` or
    ``RuntimeError`` (the testbed's and the simulator's errors are both)."""
    r = request
    fitted = fit(workload, n_hosts, r.size_scale, r.time_scale, r.max_coflows)
    fw = fitted.workload
    say(
        f"workload   {fw.source}: {fw.n_coflows} coflows, {fw.n_flows} flows "
        f"({fitted.n_flows_in} before merging; {fitted.local_flows_dropped} local flows dropped)"
    )
    try:
        cuts = None if r.thresholds is None else [int(float(x)) for x in r.thresholds.split(",")]
        spec = policy_spec(r.policy, fw, cuts, r.heavy, r.quantum, r.negotiate)
    except ValueError as e:
        raise OptionError("'--thresholds'" if takes_thresholds(r.policy) else "'--policy'", str(e)) from None
    runtime = r.hosts is not None or r.runtime_scheduler is not None
    if r.runtime_scheduler is not None:
        say(f"runtime    {r.runtime_scheduler} on testbed {r.testbed_name}: {n_hosts} agents in the hosts' namespaces")
    else:
        where = "" if r.launch is None else f", workers launched by {r.launch!r}"
        say(f"policy     {spec}" if r.hosts is None else f"runtime    {n_hosts} hosts' agents ({r.hosts_path}{where})")
    out_dir = r.out_dir
    out_dir.mkdir(parents=True, exist_ok=True)
    write_trace(fw, out_dir / "workload.csv")
    work = out_dir / "work"
    if r.runtime_scheduler is not None:
        flows = replay_on_testbed_runtime(
            fw, r.runtime_scheduler, r.testbed_name, r.state_dir, work, r.deadline_s,
            None if r.runtime is None else list(r.runtime),
        )
    elif r.hosts is None:
        flows = replay_on_testbed(fw, r.testbed_name, r.state_dir, spec, work, r.deadline_s)
    else:
        flows = replay_on_runtime(fw, list(r.hosts), work, r.deadline_s, launch=r.launch, python=r.remote_python)
    coflows, flow_table = tables(fw, flows)
    name = spec_dirname(r.label or "runtime") if runtime else r.policy
    d = out_dir / name
    d.mkdir(exist_ok=True)
    write_table(coflows, d / "coflows.csv", d / "coflows.parquet")
    write_table(flow_table, d / "flows.csv", d / "flows.parquet")
    cct = coflows.column("cct_s").to_numpy()
    say(
        f"{'runtime' if runtime else 'testbed':<10} {name}: mean CCT {cct.mean():.4f} s, "
        f"p95 {np.percentile(cct, 95):.4f} s "
        f"({fw.n_flows} flows, {int(flows['bytes'].sum())} bytes, every byte checked)"
    )
    again = int((flows["attempts"] > 1).sum())
    if again:
        say(
            f"{again} flow(s) sent again from their first byte after their connection failed "
            f"(their CCTs include the loss; the workers' results in {work} name each)"
        )
    if negotiates(spec) and not runtime:
        n = negotiation_summary(work, n_hosts)
        say(
            f"negotiation {n['announcements']} announcements, {n['replies_received']} replies in time, "
            f"{n['replies_missing']} missing ({n['replies_late']} late); rounds {n['negotiated']} negotiated, "
            f"{n['fallback']} fell back on <1, d>; priority moved by negotiation {n['changed_queue']} times "
            f"(value {n['raised_value']}); round trip mean {n['rtt_mean_s'] * 1e3:.1f} ms, max "
            f"{n['rtt_max_s'] * 1e3:.1f} ms; rounds decided after {n['round_mean_s'] * 1e3:.1f} ms on average; "
            f"datagrams ignored {sum(n['ignored'].values())}"
        )
    if r.simulate:
        res = simulate(fw, list(r.simulate), topology=r.topology)
        res.write(out_dir / "simulated")
        for s in r.simulate:
            sim = res.coflows(s)["cct_s"].to_numpy()
            say(
                f"simulated  {s}: mean CCT {sim.mean():.4f} s, p95 {np.percentile(sim, 95):.4f} s "
                f"(testbed / simulated mean: {cct.mean() / sim.mean():.2f})"
            )
    say(f"wrote      {d}/coflows.csv, flows.csv" + (f"; {out_dir}/simulated/" if r.simulate else ""))
