"""``coflowkit replay``: replay a workload as real TCP transfers on the testbed
or through the runtime's agents (the work is :mod:`coflowkit.testbed.replay`)."""

from __future__ import annotations

from pathlib import Path

import click

from .. import testbed as tb
from ..sim import synthetic
from ..sim.trace import load_trace
from ..testbed import replay as rp
from ..testbed.replay import POLICIES
from ..testbed.replay.run import OptionError, ReplayRequest, run_replay
from .common import DataError, check_schedulers, data_errors, one_line, testbed_errors


@click.command("replay")
@click.option(
    "--trace",
    "trace_path",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    default=None,
    help="Workload to replay: a trace (coflow-benchmark .txt, native .csv/.parquet). Default: the embedded workload.",
)
@click.option("--testbed", "testbed_name", default="ck", show_default=True, help="The testbed to replay on (up).")
@click.option(
    "--hosts",
    "hosts_path",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    default=None,
    help="Replay through the runtime instead of on the testbed: a file of 'INDEX ADDRESS[:PORT] AGENT_SOCKET' "
    "lines, one per host; the coordinator and agents must be up, and the coordinator's scheduler schedules.",
)
@click.option(
    "--launch",
    default=None,
    metavar="TEMPLATE",
    help="With --hosts: run each host's receiver and sender on that host's own machine through this launcher, "
    'say "ssh -o BatchMode=yes {address}" ({index} and {address} come from the hosts file); the worker\'s '
    "command is added as one shell-quoted argument. Workers need coflowkit installed there, no shared files "
    "(plan and results go over ssh's stdin and stdout). Run replay on host 0 (it registers the coflows through "
    "host 0's agent).",
)
@click.option(
    "--remote-python",
    default=None,
    metavar="PYTHON",
    help="With --launch: the Python that runs the workers on the hosts (default: python3).",
)
@click.option(
    "--scheduler",
    "rt_scheduler",
    default=None,
    help="Replay through the runtime on the testbed: a coordinator with this scheduler (aalo, varys, fair, ...) "
    "on the management bridge, an agent in every host's namespace, every flow through its host's agent; "
    "results go to OUT/SCHEDULER. All of it is stopped at the end.",
)
@click.option(
    "--label",
    default=None,
    help="With --hosts: the results' directory name under OUT (say, the coordinator's scheduler; default: runtime).",
)
@click.option(
    "--state-dir",
    type=click.Path(file_okay=False, path_type=Path),
    default=None,
    help="The testbed's state directory (default /run/coflowkit).",
)
@click.option(
    "--size-scale",
    type=click.FloatRange(min=0, min_open=True),
    default=1.0,
    show_default=True,
    help="Multiply every flow's bytes by this.",
)
@click.option(
    "--time-scale",
    type=click.FloatRange(min=0, min_open=True),
    default=1.0,
    show_default=True,
    help="Multiply every arrival time by this.",
)
@click.option("--max-coflows", type=click.IntRange(min=1), default=None, help="Keep the first K coflows by arrival.")
@click.option(
    "--policy",
    type=click.Choice(sorted(POLICIES)),
    default="plain",
    show_default=True,
    help="How senders mark their flows.",
)
@click.option(
    "--thresholds",
    default=None,
    metavar="B1,B2,...",
    help="pias (7), tafe (1-7), karuna (6, split and sieve): thresholds in bytes (default: see docs/testbed.md).",
)
@click.option(
    "--heavy",
    type=click.IntRange(min=1),
    default=None,
    help="fifo-lm: bytes after which a coflow is heavy (default: 80th percentile of coflow sizes); "
    "dcas: a subcoflow's bytes left under which it is FIFO (default: 80th percentile of subcoflow sizes).",
)
@click.option(
    "--quantum",
    type=click.FloatRange(min=0, min_open=True),
    default=None,
    help="fifo-lm, dcas: seconds of age per queue climbed (default: the median gap between arrivals).",
)
@click.option(
    "--negotiate/--no-negotiate",
    default=True,
    show_default=True,
    help="dcas: senders negotiate their priority with the receivers (UDP), or each keeps its own "
    "(D-CAS with every control message lost).",
)
@click.option(
    "--simulate",
    "sim_specs",
    metavar="SCHEDULERS",
    default=None,
    help="Also simulate the replayed workload on the testbed's topology with these schedulers "
    "(comma-separated) and compare.",
)
@click.option(
    "--out",
    "out_dir",
    type=click.Path(file_okay=False, path_type=Path),
    required=True,
    help="Directory for the results (the simulator's format) and the replayed workload.",
)
@click.option(
    "--deadline",
    type=click.FloatRange(min=1),
    default=600.0,
    show_default=True,
    help="Seconds after the start to give up.",
)
def replay_cmd(
    trace_path: Path | None,
    testbed_name: str,
    hosts_path: Path | None,
    launch: str | None,
    remote_python: str | None,
    rt_scheduler: str | None,
    label: str | None,
    state_dir: Path | None,
    size_scale: float,
    time_scale: float,
    max_coflows: int | None,
    policy: str,
    thresholds: str | None,
    heavy: int | None,
    quantum: float | None,
    negotiate: bool,
    sim_specs: str | None,
    out_dir: Path,
    deadline: float,
) -> None:
    """Replay a workload as real TCP transfers on the testbed; write each coflow's CCT.

    The workload is first fitted to the testbed (hosts folded h mod n, flows of a coflow
    between the same two hosts merged, flows onto their own host dropped, sizes and times
    scaled); OUT/workload.csv is what ran, so `coflowkit simulate --trace OUT/workload.csv
    --topology ...` simulates exactly it. Every byte is checked (CRC-32 at both ends).

    With --hosts the flows go through the runtime's agents instead (one receiver and one
    sender process per host, every flow through a CoflowWriter), so the coordinator's
    scheduler (aalo, varys, fair, ...) schedules them; results go to OUT/LABEL.
    They run where replay runs unless --launch runs each host's pair on its own
    machine (over ssh, say: --launch "ssh -o BatchMode=yes {address}").
    With --scheduler the same runs on the testbed: a coordinator on its management
    bridge, an agent and the replay's receiver and sender in every host's namespace,
    all stopped at the end; results go to OUT/SCHEDULER.
    """
    specs = check_schedulers(sim_specs) if sim_specs else []
    hosts = None
    topology = None
    if launch is not None and hosts_path is None:
        raise click.BadParameter(
            "only with --hosts (the testbed runs its workers in its namespaces)", param_hint="'--launch'"
        )
    if remote_python is not None and launch is None:
        raise click.BadParameter(
            "only with --launch (without it the workers run with this Python)", param_hint="'--remote-python'"
        )
    if rt_scheduler is not None:
        if hosts_path is not None:
            raise click.BadParameter(
                "not with --hosts (the testbed's own agents are started)", param_hint="'--scheduler'"
            )
        check_schedulers(rt_scheduler)
        if "," in rt_scheduler:
            raise click.BadParameter("one scheduler (the coordinator's)", param_hint="'--scheduler'")
        if label is None:
            label = rt_scheduler
    if (hosts_path is not None or rt_scheduler is not None) and policy != "plain":
        raise click.BadParameter(
            "with --hosts or --scheduler the coordinator's scheduler decides; sender policies are the testbed's",
            param_hint="'--policy'",
        )
    if hosts_path is not None:
        if specs:
            raise click.BadParameter("not with --hosts yet (the hosts' fabric is not known)", param_hint="'--simulate'")
        try:
            hosts = rp.load_hosts(hosts_path)
        except (ValueError, OSError) as e:
            raise click.BadParameter(one_line(e), param_hint="'--hosts'") from None
        if launch is not None:
            try:
                rp.launcher(launch, hosts)
            except ValueError as e:
                raise click.BadParameter(one_line(e), param_hint="'--launch'") from None
        n_hosts = len(hosts)
    elif label is not None and rt_scheduler is None:
        raise click.BadParameter(
            "only with --hosts or --scheduler (a testbed replay is named by its policy)", param_hint="'--label'"
        )
    else:
        with testbed_errors():
            p = tb.load_plan(testbed_name, state_dir)
        n_hosts = p.n_hosts
        topology = p.topology
    with data_errors():
        w = load_trace(trace_path) if trace_path is not None else synthetic()
    request = ReplayRequest(
        out_dir=out_dir,
        deadline_s=deadline,
        size_scale=size_scale,
        time_scale=time_scale,
        max_coflows=max_coflows,
        policy=policy,
        thresholds=thresholds,
        heavy=heavy,
        quantum=quantum,
        negotiate=negotiate,
        testbed_name=testbed_name,
        state_dir=state_dir,
        hosts=hosts,
        hosts_path=hosts_path,
        launch=launch,
        remote_python=remote_python,
        runtime_scheduler=rt_scheduler,
        label=label,
        simulate=specs,
        topology=topology,
    )
    with testbed_errors(), data_errors():
        try:
            run_replay(w, n_hosts, request, click.echo)
        except OptionError as e:
            raise click.BadParameter(one_line(e), param_hint=e.option) from None
        except RuntimeError as e:
            raise DataError(one_line(e)) from None
