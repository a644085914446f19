"""``coflowkit simulate`` and ``coflowkit schedulers``: run schedulers on a
workload and print the comparison, metrics and deadline tables."""

from __future__ import annotations

import math
import os
from pathlib import Path

import click

from .. import _core
from .._core import Workload
from ..sim import RequestError, check_request
from ..sim import simulate as run_simulation
from ..sim import synthetic
from ..sim.results import Results
from ..sim.scenario import load_scenario, run_scenario
from ..sim.trace import load_trace
from .common import (
    TOPOLOGY_HELP,
    Duration,
    capacity_option,
    check_topology,
    data_errors,
    usage_errors,
)


@click.command("simulate")
@click.option(
    "--trace",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    help="Trace to simulate: .txt (coflow-benchmark), .csv or .parquet (native).",
)
@click.option(
    "--workload",
    type=click.Choice(["default"]),
    default=None,
    help="A built-in workload instead of --trace: 'default' is the embedded synthetic one (the default).",
)
@click.option(
    "--scheduler",
    "-s",
    "scheduler",
    metavar="SPECS",
    help="Comma-separated scheduler specs (see `coflowkit schedulers`); default: all of them.",
)
@click.option("--baseline", metavar="SPEC", help="Scheduler to compare against (default: fair, else the first).")
@click.option(
    "--out",
    type=click.Path(file_okay=False, path_type=Path),
    help="Write DIR/<scheduler>/coflows.{csv,parquet}, DIR/summary.csv and DIR/compare.csv.",
)
@click.option("--per-flow", is_flag=True, help="Also keep and write one row per flow.")
@click.option(
    "--link-util",
    "link_util",
    type=Duration(),
    metavar="BIN",
    default=None,
    help="Measure link utilization in bins of BIN (seconds, or e.g. 100ms) and write "
    "DIR/<scheduler>/link_util.parquet (needs --out).",
)
@click.option(
    "--missed",
    type=click.Choice(["finish", "drop"]),
    default="finish",
    show_default=True,
    help="A flow unfinished at its deadline goes on (finish) or is given up at its deadline (drop); "
    "either way it missed.",
)
@capacity_option("Port capacity of the big switch.")
@click.option(
    "--n-hosts",
    type=click.IntRange(min=1),
    default=None,
    help="Ports of the big switch (default: the workload's hosts).",
)
@click.option("--topology", metavar="SPEC", default=None, help=TOPOLOGY_HELP + " Default: a big switch.")
@click.option(
    "--progress/--no-progress",
    default=True,
    show_default=True,
    help="Draw a progress bar on stderr for long runs (only on a terminal).",
)
@click.option(
    "--engine",
    type=click.Choice(["flow", "packet", "decomposed"]),
    default="flow",
    show_default=True,
    help="flow: exact fluid rates per scheduler; packet: queues, ECN and transports per packet "
    "(--scheduler then names transports, --packet help lists them, or schedulers the packet engine "
    "runs: coflowkit schedulers --engine packet); decomposed: the packet engine one link at a time, "
    "for large fabrics (transports and schedulers whose host policies decide alone).",
)
@click.option(
    "--packet",
    "packet_options",
    metavar="KEY=VALUE,...",
    default=None,
    help="Packet engine knobs, e.g. buffer=100p,ecn_k=30KB,min_rto=1ms; 'help' lists them.",
)
@click.option(
    "--decompose",
    "decompose",
    metavar="KEY=VALUE,...",
    default=None,
    help="Decomposed engine: cluster=off|N (cluster alike links, simulating per cluster links until "
    "N flows), combine=sum|max|queues, sources=nic|fat, fluid=off|pace|pace-up|pace-rest|base|pace+base, "
    "pace+nic, pace+host, direct=on|off (docs/decomposed-engine.md).",
)
@click.option(
    "--queue-trace",
    "queue_trace",
    metavar="INTERVAL",
    default=None,
    help="Packet engine: sample every port's queue every INTERVAL (e.g. 100us) into "
    "DIR/<transport>/queue_trace.parquet (needs --out).",
)
@click.option(
    "--scenario",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    default=None,
    help="Packet engine: a scenario file (JSON: topology, knobs and a flow list; docs/packet-engine.md); "
    "writes DIR/flows.csv, DIR/queues.csv and DIR/summary.json as bench/ns3 does.",
)
@click.pass_context
def simulate_cmd(
    ctx: click.Context,
    trace: Path | None,
    workload: str | None,
    scheduler: str | None,
    baseline: str | None,
    out: Path | None,
    per_flow: bool,
    link_util: float | None,
    missed: str,
    capacity_gbps: float,
    n_hosts: int | None,
    topology: str | None,
    progress: bool,
    engine: str,
    packet_options: str | None,
    decompose: str | None,
    queue_trace: str | None,
    scenario: Path | None,
) -> None:
    """Simulate a workload under schedulers and print a comparison table."""
    if packet_options is not None and packet_options.strip() == "help":
        for key, what in _core.packet_options():
            click.echo(f"{key.ljust(18)} {what}")
        return
    if engine == "flow" and (packet_options is not None or queue_trace is not None or scenario is not None):
        raise click.UsageError("--packet, --queue-trace and --scenario need --engine packet (--packet also decomposed)")
    if engine == "decomposed" and (queue_trace is not None or scenario is not None):
        raise click.UsageError("--queue-trace and --scenario need --engine packet")
    if scenario is not None:
        _run_scenario(ctx, scenario, out, progress, trace, workload, scheduler, topology, packet_options, queue_trace)
        return
    if queue_trace is not None:
        if out is None:
            raise click.UsageError("--queue-trace writes DIR/<transport>/queue_trace.parquet: give --out DIR")
        usage_errors("'--queue-trace'")(_core.check_packet_options, f"queue_trace={queue_trace}")
        packet_options = f"{packet_options},queue_trace={queue_trace}" if packet_options else f"queue_trace={queue_trace}"
    if trace is not None and workload is not None:
        raise click.UsageError("--trace and --workload are exclusive: give one")
    if topology is not None:
        # A topology file that does not build is bad data (exit 1), a bad spec a usage error (2).
        check_topology(topology, 1)
    if link_util is not None and out is None:
        raise click.UsageError("--link-util writes DIR/<scheduler>/link_util.parquet: give --out DIR")
    if engine != "flow" and (link_util is not None or missed != "finish"):
        raise click.UsageError("--link-util and --missed are options of --engine flow")
    given_capacity = ctx.get_parameter_source("capacity_gbps") == click.core.ParameterSource.COMMANDLINE
    try:
        req = check_request(
            engine=engine,
            scheduler=scheduler if scheduler is not None or engine != "flow" else [n for n, _ in _core.schedulers()],
            baseline=baseline,
            capacity_gbps=capacity_gbps if given_capacity or topology is None else None,
            n_hosts=n_hosts,
            topology=topology,
            link_util_bin=link_util,
            missed=missed,
            packet=packet_options,
            decompose=decompose,
        )
    except RequestError as e:
        raise click.BadParameter(_in_flags(e.message), param_hint=f"'{FLAGS.get(e.field, e.field)}'") from None
    specs, baseline = req.specs, req.baseline
    if engine != "flow":
        per_flow = True
    if baseline is None:
        baseline = "fair" if "fair" in specs else specs[0]
    if engine != "flow" and baseline not in specs:
        raise click.UsageError(f"--baseline: {baseline!r} is not among the transports run ({', '.join(specs)})")
    with data_errors():
        if trace is not None:
            w = load_trace(trace)
            label = str(trace)
        else:
            w = synthetic()
            label = "default (embedded synthetic workload)"
        if scheduler is None and engine == "flow":
            specs = _without_refused(w, specs, capacity_gbps, n_hosts, topology)
        res = run_simulation(
            w,
            specs,
            baseline=baseline,
            capacity_gbps=None if topology is not None else capacity_gbps,
            per_flow=per_flow,
            n_hosts=n_hosts,
            progress=progress,
            topology=topology,
            link_util_bin=link_util,
            missed=missed,
            engine=engine,
            packet=packet_options,
            decompose=decompose,
        )
    click.echo(f"workload   {label}: {w.n_hosts} hosts, {w.n_coflows} coflows, {w.n_flows} flows")
    click.echo(f"fabric     {res.topology}")
    click.echo(f"baseline   {baseline} (x = baseline CCT / scheduler CCT; above 1 is better)")
    click.echo("")
    click.echo(_comparison_table(res, baseline))
    click.echo("")
    click.echo(_metrics_table(res))
    if any(m["flow_deadlines"] > 0 for m in res.metric_rows()):
        click.echo("")
        click.echo(_karuna_table(res))
    if out is not None:
        with data_errors():
            res.write(out)
        click.echo(f"\nwrote {out}{os.sep}")


#: The flag of each field of a request (:class:`coflowkit.sim.RequestError`'s ``field``).
FLAGS = {
    "engine": "--engine",
    "scheduler": "--scheduler",
    "baseline": "--baseline",
    "capacity_gbps": "--capacity-gbps",
    "n_hosts": "--n-hosts",
    "topology": "--topology",
    "link_util_bin": "--link-util",
    "missed": "--missed",
    "packet": "--packet",
    "decompose": "--decompose",
}


def _in_flags(message: str) -> str:
    """A request check's message with the API's argument names as the CLI's flags."""
    for field in ("capacity_gbps", "n_hosts", "link_util_bin"):
        message = message.replace(field, FLAGS[field])
    return message


def _without_refused(
    w: Workload, specs: list[str], capacity_gbps: float, n_hosts: int | None, topology: str | None
) -> list[str]:
    """The default list without the schedulers ``simulate`` would refuse on ``w`` (``baraat`` over its
    budget), each named with its reason on stderr."""
    capacity_bps = None if topology is not None else capacity_gbps * 1e9
    refused = dict(_core.refusals(w, specs, capacity_bps, n_hosts, topology))
    for name, reason in refused.items():
        click.echo(f"left out {name}: {reason}", err=True)
    return [s for s in specs if s not in refused]


def _run_scenario(
    ctx: click.Context,
    scenario: Path,
    out: Path | None,
    progress: bool,
    trace: Path | None,
    workload: str | None,
    scheduler: str | None,
    topology: str | None,
    packet_options: str | None,
    queue_trace: str | None,
) -> None:
    """``--scenario``: the file holds the workload, the fabric and the knobs."""
    clash = [
        name
        for name, given in (
            ("--trace", trace is not None),
            ("--workload", workload is not None),
            ("--scheduler", scheduler is not None),
            ("--topology", topology is not None),
            ("--packet", packet_options is not None),
            ("--queue-trace", queue_trace is not None),
        )
        if given
    ]
    if clash:
        raise click.UsageError(f"--scenario holds the workload, fabric and knobs: drop {', '.join(clash)}")
    if out is None:
        raise click.UsageError("--scenario writes DIR/flows.csv, DIR/queues.csv and DIR/summary.json: give --out DIR")
    with data_errors():
        s = load_scenario(scenario)
        res = run_scenario(s, out, progress=progress)
    flows = res.flows()
    click.echo(f"scenario   {scenario}: {len(flows)} flows, {s.transport} on {s.topology}")
    click.echo(
        f"fct        mean {flows['fct_s'].mean():.6g} s, p99 {flows['fct_s'].quantile(0.99):.6g} s; "
        f"drops {int(flows['drops'].sum())}, ECN marks {int(flows['ecn_marks'].sum())}, "
        f"timeouts {int(flows['timeouts'].sum())}"
    )
    click.echo(f"\nwrote {out}{os.sep}")


def _fmt_seconds(x: float) -> str:
    if math.isnan(x):
        return "-"
    return f"{x:.0f}" if x >= 1e4 else f"{x:.4g}"


def _fmt_ratio(x: float) -> str:
    return "-" if math.isnan(x) or math.isinf(x) else f"{x:.2f}"


def _comparison_table(res: Results, baseline: str) -> str:
    """Per scheduler and bin: count, mean/median/p95/p99 CCT and the improvement over the baseline."""
    header = ["scheduler", "bin", "coflows", "mean_s", "median_s", "p95_s", "p99_s", "x_mean", "x_p95"]
    rows: list[list[str]] = []
    for s, c in zip(res.summary_rows(), res.compare_rows(baseline), strict=True):
        rows.append(
            [
                s["scheduler"],
                str(s["bin"]),
                str(s["count"]),
                _fmt_seconds(s["mean"]),
                _fmt_seconds(s["median"]),
                _fmt_seconds(s["p95"]),
                _fmt_seconds(s["p99"]),
                _fmt_ratio(c["improvement_mean"]),
                _fmt_ratio(c["improvement_p95"]),
            ]
        )
    widths = [max(len(h), *(len(r[i]) for r in rows)) for i, h in enumerate(header)]

    def line(r: list[str]) -> str:
        cells = [r[0].ljust(widths[0]), r[1].ljust(widths[1])] + [
            c.rjust(w) for c, w in zip(r[2:], widths[2:], strict=True)
        ]
        return "  ".join(cells).rstrip()

    lines = [line(header)]
    for i, r in enumerate(rows):
        if i > 0 and r[0] != rows[i - 1][0]:
            lines.append("")
        lines.append(line(r))
    return "\n".join(lines)


def _fmt_rate(misses: int, total: int) -> str:
    return "-" if total == 0 else f"{misses}/{total}"


def _metrics_table(res: Results) -> str:
    """Per scheduler: flow completion time and slowdown, job completion time, deadline misses."""
    header = [
        "scheduler",
        "flows",
        "fct_mean_s",
        "fct_p99_s",
        "slowdown_mean",
        "slowdown_p99",
        "jobs",
        "jct_mean_s",
        "flow_dl_missed",
        "coflow_dl_missed",
    ]
    rows = [
        [
            m["scheduler"],
            str(m["n_flows"]),
            _fmt_seconds(m["fct_mean_s"]),
            _fmt_seconds(m["fct_p99_s"]),
            _fmt_ratio(m["slowdown_mean"]),
            _fmt_ratio(m["slowdown_p99"]),
            str(m["n_jobs"]),
            _fmt_seconds(m["jct_mean_s"]),
            _fmt_rate(m["flow_deadline_misses"], m["flow_deadlines"]),
            _fmt_rate(m["coflow_deadline_misses"], m["coflow_deadlines"]),
        ]
        for m in res.metric_rows()
    ]
    widths = [max(len(h), *(len(r[i]) for r in rows)) for i, h in enumerate(header)]
    lines = [
        "  ".join([r[0].ljust(widths[0])] + [c.rjust(w) for c, w in zip(r[1:], widths[1:], strict=True)]).rstrip()
        for r in [header, *rows]
    ]
    return "\n".join(lines)


def _karuna_table(res: Results) -> str:
    """Karuna's metrics (2.1), when flows have deadlines: type 1 misses (and drops), and the
    FCT of the flows without a deadline (types 2 and 3), all and under 100 KB."""
    header = ["scheduler", "type1_missed", "dropped", "t23_fct_mean_s", "t23_fct_p95_s", "short_mean_s", "short_p95_s"]
    rows = [
        [
            m["scheduler"],
            _fmt_rate(m["flow_deadline_misses"], m["flow_deadlines"]),
            str(m["flow_deadline_drops"]),
            _fmt_seconds(m["fct_no_deadline_mean_s"]),
            _fmt_seconds(m["fct_no_deadline_p95_s"]),
            _fmt_seconds(m["fct_short_no_deadline_mean_s"]),
            _fmt_seconds(m["fct_short_no_deadline_p95_s"]),
        ]
        for m in res.metric_rows()
    ]
    widths = [max(len(h), *(len(r[i]) for r in rows)) for i, h in enumerate(header)]
    lines = [
        "  ".join([r[0].ljust(widths[0])] + [c.rjust(w) for c, w in zip(r[1:], widths[1:], strict=True)]).rstrip()
        for r in [header, *rows]
    ]
    return "\n".join(lines)


@click.command("schedulers")
@click.option("--markdown", is_flag=True, help="Print the parameter tables of docs/schedulers.md instead.")
@click.option(
    "--engine",
    type=click.Choice(["flow", "packet"]),
    default="flow",
    show_default=True,
    help="packet: only the schedulers the packet engine runs, and how (host policy or via coordinator).",
)
def schedulers_cmd(markdown: bool, engine: str) -> None:
    """List the schedulers: what each does, its source, what it needs, its parameters."""
    if markdown:
        click.echo(_core.scheduler_markdown(), nl=False)
        return
    if engine == "packet":
        described = dict(_core.schedulers())
        runs = _core.packet_schedulers()
        width = max(len(name) for name, _ in runs)
        how_width = max(len(how) for _, how in runs)
        for name, how in runs:
            click.echo(f"{name.ljust(width)}  {how.ljust(how_width)}  {described.get(name, '')}")
        return
    descriptors = _core.scheduler_descriptors()
    width = max(len(d["name"]) for d in descriptors)
    for d in descriptors:
        params = " ".join(f"{p['key']}={p['default']}" for p in d["params"])
        line = f"{d['name'].ljust(width)}  {d['description']} [{d['paper']}]"
        click.echo(f"{line}; {params}" if params else line)
