"""The ``coflowkit`` command.

::

    coflowkit simulate [--trace PATH | --workload default] [--scheduler fair,varys,...]
                       [--baseline fair] [--out DIR] [--per-flow] [--link-util BIN]
                       [--missed finish|drop]
                       [--capacity-gbps 1 [--n-hosts N] | --topology SPEC]
    coflowkit topology info SPEC [--n-hosts N]
    coflowkit trace info PATH
    coflowkit generate WORKLOAD [--preset P] [--seed N] [--load L] [--param key=value ...] -o trace.csv|.parquet
    coflowkit schedulers
    coflowkit run EXPERIMENT [--out DIR] [--cluster ADDRESS | --workers N] [--dry-run]
    coflowkit plot STORE [-o DIR] [--format png,pdf]
    coflowkit report STORE [-o report.md]
    coflowkit testbed up --topology SPEC | down | status | check | exec HOST -- CMD
    coflowkit replay [--trace PATH] [--testbed NAME] [--size-scale F] [--time-scale F] [--simulate fair] --out DIR
    coflowkit replay [--trace PATH] --hosts FILE [--label NAME] ... --out DIR   (through the runtime's agents)
    coflowkit replay [--trace PATH] --hosts FILE --launch "ssh {address}" ... --out DIR   (workers on the hosts)
    coflowkit replay [--trace PATH] [--testbed NAME] --scheduler aalo|varys|fair ... --out DIR   (runtime, testbed)
    coflowkit coordinator --hosts N --token-file F [--scheduler aalo] [--host-rate 1Gbps] ...
    coflowkit agent --host H --socket PATH --token-file F [--coordinator URL] ...

Errors never show a traceback: bad input prints one line
``coflowkit: error: <message>`` on stderr and exits with 2 for a usage error
(an unknown option or scheduler, a bad parameter, a missing file) or 1 for
bad data (a trace that does not parse, a workload that does not fit the
fabric, a run that cannot finish). Outputs are written to temporary files and
renamed into place, so an error never leaves a half-written file.
"""

from __future__ import annotations

import math
import os
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, NoReturn

import click
import numpy as np

from . import __version__, _core, synthetic, topology_info
from . import simulate as run_simulation
from .experiment import Experiment, load_experiment
from .replay import POLICIES
from .results import Results
from .testbed import (
    BUFFER_MIN_BYTES,
    DEFAULT_RTO_MAX_MS,
    DEFAULT_RTO_MIN_MS,
    KERNEL_RTO_MAX_MS,
    RTO_MAX_RANGE_MS,
    RTO_MIN_RANGE_MS,
)
from .runner import RunInterrupted, RunnerError, RunSummary, default_store, run_experiment
from .trace import FORMATS, load_trace, write_trace

EXIT_DATA = 1
EXIT_USAGE = 2


class DataError(click.ClickException):
    """Bad data (not bad usage): exit code 1."""

    exit_code = EXIT_DATA


def _one_line(e: BaseException) -> str:
    if isinstance(e, OSError) and e.filename is not None and e.strerror:
        return f"{e.filename}: {e.strerror}"
    return " ".join(str(e).split()) or type(e).__name__


def _capacity_option(help_text: str):
    """The `--capacity-gbps` option (port capacity, Gbit/s), shared by commands."""
    return click.option(
        "--capacity-gbps",
        type=click.FloatRange(min=0, min_open=True),
        default=1.0,
        show_default=True,
        help=help_text,
    )


class Duration(click.ParamType):
    """A span of time: seconds, or a number with a unit (ns, us, ms, s), e.g. ``100ms``."""

    name = "duration"
    _UNITS = {"ns": 1e-9, "us": 1e-6, "ms": 1e-3, "s": 1.0, "": 1.0}

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> float:
        if isinstance(value, float):
            return value
        text = str(value).strip()
        number = text.rstrip("nusm")
        unit = text[len(number) :]
        try:
            seconds = float(number) * self._UNITS[unit]
        except (ValueError, KeyError):
            self.fail(f"{value!r} is not a duration (seconds, or a number with ns, us, ms or s)", param, ctx)
        if not (math.isfinite(seconds) and seconds >= 1e-9):
            self.fail(f"{value!r}: a bin must be at least 1 ns", param, ctx)
        return seconds


@contextmanager
def _data_errors() -> Iterator[None]:
    """Turn the core's errors (bad trace, bad workload, failed run) into DataError."""
    try:
        yield
    except (ValueError, OSError, _core.SimulationError) as e:
        raise DataError(_one_line(e)) from None


def _usage_errors(param: str) -> Callable[..., Any]:
    """Run ``fn`` and turn its ValueError into a usage error about ``param``."""

    def call(fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
        try:
            return fn(*args, **kwargs)
        except ValueError as e:
            raise click.BadParameter(_one_line(e), param_hint=param) from None

    return call


TOPOLOGY_HELP = (
    "Fabric: a spec, bigswitch[:hosts=N,rate=1Gbps] | "
    "tree[:pods=30,racks=30,hosts=40,tor_oversub=2,agg_oversub=1,rate=1Gbps] | "
    "leaf-spine[:leaves=4,spines=2,hosts=8,rate=1Gbps,spine_rate=R] | fat-tree[:k=4,rate=1Gbps] "
    "(all take cpu_rate=R and ecmp_seed=N), or a .toml/.yaml topology file "
    "(see examples/topologies)."
)


def _is_topology_file(spec: str) -> bool:
    return spec.strip().lower().endswith((".toml", ".yaml", ".yml"))


def _check_topology(spec: str, n_hosts: int | None = None, param: str = "'--topology'") -> dict[str, Any]:
    """Build the topology once to check it: a bad spec string or a missing file
    is a usage error (2); a file that does not make a fabric is bad data (1)."""
    if _is_topology_file(spec) and not Path(spec.strip()).is_file():
        raise click.BadParameter(f"{spec.strip()}: no such file", param_hint=param)
    try:
        return topology_info(spec, n_hosts)
    except (ValueError, OSError) as e:
        if _is_topology_file(spec):
            raise DataError(_one_line(e)) from None
        raise click.BadParameter(_one_line(e), param_hint=param) from None


def _check_schedulers(text: str | None) -> list[str]:
    specs = [s.strip() for s in (text or "").split(",") if s.strip()]
    if text is not None and not specs:
        raise click.BadParameter("give at least one scheduler", param_hint="'--scheduler'")
    for s in specs:
        _usage_errors("'--scheduler'")(_core.check_scheduler, s)
    if len(set(specs)) != len(specs):
        raise click.BadParameter("a scheduler is given twice", param_hint="'--scheduler'")
    return specs


@click.group(context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100})
@click.version_option(__version__, prog_name="coflowkit")
def cli() -> None:
    """coflowkit: simulate coflow schedulers on traces and synthetic workloads."""


@cli.command("simulate")
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
@_capacity_option("Port capacity of the big switch.")
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
) -> None:
    """Simulate a workload under schedulers and print a comparison table."""
    if trace is not None and workload is not None:
        raise click.UsageError("--trace and --workload are exclusive: give one")
    if topology is not None:
        given = ctx.get_parameter_source("capacity_gbps") == click.core.ParameterSource.COMMANDLINE
        if given or n_hosts is not None:
            raise click.UsageError(
                "--capacity-gbps and --n-hosts size the default big switch; "
                "with --topology, give rates and hosts in the topology spec"
            )
        _check_topology(topology, 1)
    if link_util is not None and out is None:
        raise click.UsageError("--link-util writes DIR/<scheduler>/link_util.parquet: give --out DIR")
    specs = _check_schedulers(scheduler) or [name for name, _ in _core.schedulers()]
    if baseline is not None:
        baseline = baseline.strip()
        _usage_errors("'--baseline'")(_core.check_scheduler, baseline)
    else:
        baseline = "fair" if "fair" in specs else specs[0]
    with _data_errors():
        if trace is not None:
            w = load_trace(trace)
            label = str(trace)
        else:
            w = synthetic()
            label = "default (embedded synthetic workload)"
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
        )
    click.echo(f"workload   {label}: {w.n_hosts} hosts, {w.n_coflows} coflows, {w.n_flows} flows")
    click.echo(f"fabric     {res.topology}")
    click.echo(f"baseline   {baseline} (x = baseline CCT / scheduler CCT; above 1 is better)")
    click.echo("")
    click.echo(_comparison_table(res, baseline))
    click.echo("")
    click.echo(_metrics_table(res))
    if (res.metrics()["flow_deadlines"] > 0).any():
        click.echo("")
        click.echo(_karuna_table(res))
    if out is not None:
        with _data_errors():
            res.write(out)
        click.echo(f"\nwrote {out}{os.sep}")


def _fmt_seconds(x: float) -> str:
    if math.isnan(x):
        return "-"
    return f"{x:.0f}" if x >= 1e4 else f"{x:.4g}"


def _fmt_ratio(x: float) -> str:
    return "-" if math.isnan(x) or math.isinf(x) else f"{x:.2f}"


def _comparison_table(res: Results, baseline: str) -> str:
    """Per scheduler and bin: count, mean/median/p95/p99 CCT and the improvement over the baseline."""
    summary = res.summary()
    cmp = res.compare(baseline)
    header = ["scheduler", "bin", "coflows", "mean_s", "median_s", "p95_s", "p99_s", "x_mean", "x_p95"]
    rows: list[list[str]] = []
    for s, c in zip(summary.itertuples(index=False), cmp.itertuples(index=False), strict=True):
        rows.append(
            [
                s.scheduler,
                str(s.bin),
                str(s.count),
                _fmt_seconds(s.mean),
                _fmt_seconds(s.median),
                _fmt_seconds(s.p95),
                _fmt_seconds(s.p99),
                _fmt_ratio(c.improvement_mean),
                _fmt_ratio(c.improvement_p95),
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


@cli.group("topology")
def topology_group() -> None:
    """Inspect topologies."""


@topology_group.command("info")
@click.argument("spec")
@click.option(
    "--n-hosts",
    type=click.IntRange(min=1),
    default=None,
    help="Ports of a big switch whose spec has no hosts=.",
)
def topology_info_cmd(spec: str, n_hosts: int | None) -> None:
    """Print a topology's hosts, switches, links by kind, bisection and ECMP paths.

    SPEC is a spec such as tree:pods=30,racks=30,hosts=40,tor_oversub=2, fat-tree:k=8,
    leaf-spine:leaves=4,spines=2,hosts=8 or bigswitch:hosts=150, or a .toml/.yaml
    topology file (see `coflowkit simulate --help` for every key).
    """
    info = _check_topology(spec, n_hosts, "'SPEC'")
    click.echo(f"topology       {spec.strip()}")
    click.echo(info["text"])


@cli.group("testbed")
def testbed_group() -> None:
    """An emulated cluster on this machine: namespaces, veth links and tc (needs root).

    Every port of the topology is shaped to its capacity with 8 strict-priority
    queues (queue q selected by DSCP CS(7-q)); see docs/testbed.md.
    """


_TB_NAME = click.option(
    "--name", default="ck", show_default=True, help="The testbed's name: prefixes every namespace and link it makes."
)
_TB_STATE = click.option(
    "--state-dir",
    type=click.Path(file_okay=False, path_type=Path),
    default=None,
    help="Where the state file lives (default /run/coflowkit).",
)


@contextmanager
def _testbed_errors() -> Iterator[None]:
    from .testbed import TestbedError

    try:
        yield
    except TestbedError as e:
        raise DataError(_one_line(e)) from None


@testbed_group.command("up")
@click.option(
    "--topology",
    "topology_spec",
    metavar="SPEC",
    required=True,
    help="The fabric, as for `coflowkit simulate --topology` (a big switch or a tree).",
)
@click.option("--n-hosts", type=click.IntRange(min=1), default=None, help="Ports of a big switch without hosts=.")
@click.option(
    "--buffer",
    "buffer_bytes",
    type=click.IntRange(min=BUFFER_MIN_BYTES),
    default=None,
    help="Bytes each queue of a switch port holds [default: 2 ms at the port's rate, at least 64 KiB].",
)
@click.option(
    "--rto-min-ms",
    type=click.IntRange(*RTO_MIN_RANGE_MS),
    default=DEFAULT_RTO_MIN_MS,
    show_default=True,
    help="TCP's minimum retransmission timeout on the data network (the kernel's is 200).",
)
@click.option(
    "--rto-max-ms",
    type=click.IntRange(*RTO_MAX_RANGE_MS),
    default=DEFAULT_RTO_MAX_MS,
    show_default=True,
    help=f"TCP's ceiling on its retransmission timeout in the hosts (the kernel's is {KERNEL_RTO_MAX_MS}; "
    "needs Linux 6.15).",
)
@_TB_NAME
@_TB_STATE
def testbed_up(
    topology_spec: str,
    n_hosts: int | None,
    buffer_bytes: int | None,
    rto_min_ms: int,
    rto_max_ms: int,
    name: str,
    state_dir: Path | None,
) -> None:
    """Create the testbed; on failure remove whatever was made."""
    from . import testbed as tb

    _check_topology(topology_spec, n_hosts)
    with _testbed_errors():
        try:
            p = tb.up(
                topology_spec,
                name,
                n_hosts,
                state_dir,
                buffer_bytes=buffer_bytes,
                rto_min_ms=rto_min_ms,
                rto_max_ms=rto_max_ms,
            )
        except ValueError as e:
            # The options' ranges are the plan's own (click refuses them first): what is left is the topology.
            raise click.BadParameter(_one_line(e), param_hint="'--topology'") from None
        st = tb.status(name, state_dir)
    click.echo(
        f"testbed {name} up: {p.n_hosts} hosts ({p.host_ns[0]}..{p.host_ns[-1]}), "
        f"{len(p.switch_ns)} switches, {len(p.ports)} shaped ports"
    )
    click.echo(f"hosts      data {p.host_ip[0]}.., management {p.mgmt_ip[0]}.. (root side {p.mgmt_root_ip})")
    for lim in st.get("limitations", []):
        click.echo(f"not emulated: {lim}")


@testbed_group.command("down")
@_TB_NAME
@_TB_STATE
def testbed_down(name: str, state_dir: Path | None) -> None:
    """Remove everything the testbed made (also after a crash); safe to repeat."""
    from . import testbed as tb

    with _testbed_errors():
        removed = tb.down(name, state_dir)
    said = f"down: removed {len(removed)} items" if removed else "nothing to remove"
    click.echo(f"testbed {name}: {said}")


@testbed_group.command("status")
@_TB_NAME
@_TB_STATE
@click.option("--json", "as_json", is_flag=True, help="Print the whole status as JSON.")
def testbed_status(name: str, state_dir: Path | None, as_json: bool) -> None:
    """Show the testbed: hosts, ports with the rate the kernel enforces, processes."""
    import json

    from . import testbed as tb

    with _testbed_errors():
        st = tb.status(name, state_dir)
    if as_json:
        click.echo(json.dumps(st, indent=1))
        return
    if not st["up"] and "topology" not in st:
        stray = st.get("stray") or []
        click.echo(f"testbed {name}: down" + (f" (stray: {', '.join(stray)}; run down)" if stray else ""))
        return
    click.echo(
        f"testbed {name}: {'up' if st['up'] else 'INCOMPLETE (run down)'}, {st['topology']}, "
        f"{st['n_hosts']} hosts, {st['n_switches']} switches"
    )
    if st["missing_namespaces"]:
        click.echo(f"missing namespaces: {', '.join(st['missing_namespaces'])}")
    for port in st["ports"]:
        click.echo(
            f"  {port['ns']}/{port['dev']:<5} {port['link']:<28} {port['capacity_bps'] / 1e6:9.1f} Mbit/s "
            f"(kernel: {port['kernel_rate'] or 'missing'})"
        )
    for i, h in enumerate(st["hosts"]):
        click.echo(f"  host {i}: {h['ns']} {h['ip']} mgmt {h['mgmt_ip']} processes {h['processes']}")
    for lim in st["limitations"]:
        click.echo(f"not emulated: {lim}")


@testbed_group.command("check")
@_TB_NAME
@_TB_STATE
@click.option(
    "--seconds", type=click.FloatRange(min=1.0), default=2.0, show_default=True, help="Length of each TCP transfer."
)
def testbed_check(name: str, state_dir: Path | None, seconds: float) -> None:
    """Measure each host's port with real TCP and the strict priority between two queues."""
    from . import testbed as tb

    with _testbed_errors():
        p = tb.load_plan(name, state_dir)
        bad = 0
        for r in tb.check_capacity(p, seconds=seconds):
            ok = abs(r["ratio"] - 1) <= 0.10
            bad += not ok
            click.echo(
                f"host {r['src']} -> host {r['dst']}: {r['goodput_bps'] / 1e6:.1f} Mbit/s of "
                f"{r['capacity_bps'] / 1e6:.1f} ({r['ratio']:.1%}) {'ok' if ok else 'OFF BY MORE THAN 10%'}"
            )
        if p.n_hosts >= 3:
            r = tb.check_priority(p, 0, 1, 2, seconds=seconds + 1)
            ok = r["high_share"] >= 0.9
            bad += not ok
            click.echo(
                f"priority: queue 0 got {r['high_bps'] / 1e6:.1f} Mbit/s, queue 7 {r['low_bps'] / 1e6:.1f} "
                f"({r['high_share']:.1%} to queue 0) {'ok' if ok else 'NOT STRICT'}"
            )
    if bad:
        raise DataError(f"testbed {name}: {bad} check(s) failed")


@testbed_group.command("exec", context_settings={"ignore_unknown_options": True})
@click.argument("host", type=click.IntRange(min=0))
@click.argument("argv", nargs=-1, required=True, type=click.UNPROCESSED)
@_TB_NAME
@_TB_STATE
def testbed_exec(host: int, argv: tuple[str, ...], name: str, state_dir: Path | None) -> None:
    """Run a command inside host HOST's namespace (e.g. `coflowkit testbed exec 3 -- ip addr`)."""
    import subprocess

    from . import testbed as tb

    with _testbed_errors():
        cmd = tb.ns_cmd(tb.load_plan(name, state_dir), host, list(argv))
    sys.exit(subprocess.call(cmd))


@cli.command("replay")
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
    from . import replay as rp
    from . import testbed as tb
    from .results import _dirname, _write_table

    specs = _check_schedulers(sim_specs) if sim_specs else []
    hosts = None
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
        _check_schedulers(rt_scheduler)
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
            raise click.BadParameter(_one_line(e), param_hint="'--hosts'") from None
        if launch is not None:
            try:
                rp.launcher(launch, hosts)
            except ValueError as e:
                raise click.BadParameter(_one_line(e), param_hint="'--launch'") from None
        n_hosts = len(hosts)
    elif label is not None and rt_scheduler is None:
        raise click.BadParameter(
            "only with --hosts or --scheduler (a testbed replay is named by its policy)", param_hint="'--label'"
        )
    else:
        with _testbed_errors():
            p = tb.load_plan(testbed_name, state_dir)
        n_hosts = p.n_hosts
    with _data_errors():
        w = load_trace(trace_path) if trace_path is not None else synthetic()
        fitted = rp.fit(w, n_hosts, size_scale, time_scale, max_coflows)
    fw = fitted.workload
    click.echo(
        f"workload   {fw.source}: {fw.n_coflows} coflows, {fw.n_flows} flows "
        f"({fitted.n_flows_in} before merging; {fitted.local_flows_dropped} local flows dropped)"
    )
    try:
        cuts = None if thresholds is None else [int(float(x)) for x in thresholds.split(",")]
        spec = rp.policy_spec(policy, fw, cuts, heavy, quantum, negotiate)
    except ValueError as e:
        hint = "'--thresholds'" if policy in ("pias", "tafe", "karuna") else "'--policy'"
        raise click.BadParameter(_one_line(e), param_hint=hint) from None
    runtime = hosts is not None or rt_scheduler is not None
    if rt_scheduler is not None:
        click.echo(f"runtime    {rt_scheduler} on testbed {testbed_name}: {n_hosts} agents in the hosts' namespaces")
    else:
        where = "" if launch is None else f", workers launched by {launch!r}"
        click.echo(
            f"policy     {spec}" if hosts is None else f"runtime    {n_hosts} hosts' agents ({hosts_path}{where})"
        )
    out_dir.mkdir(parents=True, exist_ok=True)
    write_trace(fw, out_dir / "workload.csv")
    with _testbed_errors(), _data_errors():
        try:
            if rt_scheduler is not None:
                flows = rp.replay_on_testbed_runtime(
                    fw, rt_scheduler, testbed_name, state_dir, out_dir / "work", deadline
                )
            elif hosts is None:
                flows = rp.replay_on_testbed(fw, testbed_name, state_dir, spec, out_dir / "work", deadline)
            else:
                flows = rp.replay_on_runtime(fw, hosts, out_dir / "work", deadline, launch=launch, python=remote_python)
        except RuntimeError as e:
            raise DataError(_one_line(e)) from None
    coflows, flow_table = rp.tables(fw, flows)
    name = _dirname(label or "runtime") if runtime else policy
    d = out_dir / name
    d.mkdir(exist_ok=True)
    _write_table(coflows, d / "coflows.csv", d / "coflows.parquet")
    _write_table(flow_table, d / "flows.csv", d / "flows.parquet")
    cct = coflows.column("cct_s").to_numpy()
    click.echo(
        f"{'runtime' if runtime else 'testbed':<10} {name}: mean CCT {cct.mean():.4f} s, "
        f"p95 {np.percentile(cct, 95):.4f} s "
        f"({fw.n_flows} flows, {int(flows['bytes'].sum())} bytes, every byte checked)"
    )
    again = int((flows["attempts"] > 1).sum())
    if again:
        click.echo(f"{again} flow(s) sent again from their first byte after their connection failed "
                   f"(their CCTs include the loss; the workers' results in {out_dir / 'work'} name each)")
    if spec.get("negotiate") and not runtime:
        n = rp.negotiation_summary(out_dir / "work", n_hosts)
        click.echo(
            f"negotiation {n['announcements']} announcements, {n['replies_received']} replies in time, "
            f"{n['replies_missing']} missing ({n['replies_late']} late); rounds {n['negotiated']} negotiated, "
            f"{n['fallback']} fell back on <1, d>; priority moved by negotiation {n['changed_queue']} times "
            f"(value {n['raised_value']}); round trip mean {n['rtt_mean_s'] * 1e3:.1f} ms, max "
            f"{n['rtt_max_s'] * 1e3:.1f} ms; rounds decided after {n['round_mean_s'] * 1e3:.1f} ms on average; "
            f"datagrams ignored {sum(n['ignored'].values())}"
        )
    if specs:
        with _data_errors():
            res = run_simulation(fw, specs, topology=p.topology)
            res.write(out_dir / "simulated")
        for s in specs:
            sim = res.coflows(s)["cct_s"].to_numpy()
            click.echo(
                f"simulated  {s}: mean CCT {sim.mean():.4f} s, p95 {np.percentile(sim, 95):.4f} s "
                f"(testbed / simulated mean: {cct.mean() / sim.mean():.2f})"
            )
    click.echo(f"wrote      {d}/coflows.csv, flows.csv" + (f"; {out_dir}/simulated/" if specs else ""))


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
            m.scheduler,
            str(m.n_flows),
            _fmt_seconds(m.fct_mean_s),
            _fmt_seconds(m.fct_p99_s),
            _fmt_ratio(m.slowdown_mean),
            _fmt_ratio(m.slowdown_p99),
            str(m.n_jobs),
            _fmt_seconds(m.jct_mean_s),
            _fmt_rate(m.flow_deadline_misses, m.flow_deadlines),
            _fmt_rate(m.coflow_deadline_misses, m.coflow_deadlines),
        ]
        for m in res.metrics().itertuples(index=False)
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
            m.scheduler,
            _fmt_rate(m.flow_deadline_misses, m.flow_deadlines),
            str(m.flow_deadline_drops),
            _fmt_seconds(m.fct_no_deadline_mean_s),
            _fmt_seconds(m.fct_no_deadline_p95_s),
            _fmt_seconds(m.fct_short_no_deadline_mean_s),
            _fmt_seconds(m.fct_short_no_deadline_p95_s),
        ]
        for m in res.metrics().itertuples(index=False)
    ]
    widths = [max(len(h), *(len(r[i]) for r in rows)) for i, h in enumerate(header)]
    lines = [
        "  ".join([r[0].ljust(widths[0])] + [c.rjust(w) for c, w in zip(r[1:], widths[1:], strict=True)]).rstrip()
        for r in [header, *rows]
    ]
    return "\n".join(lines)


@cli.group("trace")
def trace_group() -> None:
    """Inspect traces."""


@trace_group.command("info")
@click.argument("path", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@_capacity_option("Port capacity the offered load refers to.")
def trace_info(path: Path, capacity_gbps: float) -> None:
    """Print a trace's statistics: coflows, flows, bytes, load, bins, widths, lengths."""
    with _data_errors():
        w = load_trace(path)
        text = w.stats_text(capacity_gbps * 1e9)
    click.echo(f"trace          {path}")
    click.echo(text)


#: The workload names `generate` accepts: every generator, and "default" for
#: the embedded workload (coflow-benchmark, preset aalo).
_WORKLOADS = ["default", *(g["name"] for g in _core.generators())]

#: Options that are shorthands for parameters: (option name, parameter, scale).
_SHORTHANDS = {
    "seed": ("seed", "seed", 1),
    "load": ("load", "load", 1),
    "n_coflows": ("n-coflows", "n_coflows", 1),
    "n_hosts": ("n-hosts", "n_hosts", 1),
    "capacity_gbps": ("capacity-gbps", "capacity_bps", 1e9),
}


class _GenerateCommand(click.Command):
    """`generate`, whose help lists every workload with its presets and parameters."""

    def format_epilog(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        formatter.write_paragraph()
        formatter.write_text(
            "Workloads, their presets (the first is the default) and parameters "
            "(--param NAME=VALUE; defaults shown for the default preset). "
            "Sizes take units (50KB, 5MiB), durations need one (10ms), rates may (1Gbps). "
            "'default' is coflow-benchmark with preset aalo, the embedded workload."
        )
        for g in _core.generators():
            with formatter.section(f"{g['name']}: {g['about']} [{g['source']}]"):
                formatter.write_dl([(f"preset {name}", about) for name, about in g["presets"]])
                formatter.write_dl([(f"{name}={default}", doc) for name, default, doc in g["params"]])


@cli.command("generate", cls=_GenerateCommand)
@click.argument("workload", metavar="WORKLOAD", type=click.Choice(_WORKLOADS))
@click.option("--preset", default=None, help="The workload's preset (see below).")
@click.option("--seed", type=click.IntRange(min=0), default=None, help="Generator seed (default 1).")
@click.option("--load", type=float, default=None, help="Target load (each workload defines it; see below).")
@click.option(
    "--param",
    "-p",
    "params",
    multiple=True,
    metavar="NAME=VALUE",
    help="Set a parameter of the workload (repeatable; see below).",
)
@click.option("--n-coflows", type=click.IntRange(min=0), default=None, help="Shorthand for --param n_coflows=K.")
@click.option("--n-hosts", type=click.IntRange(min=1), default=None, help="Shorthand for --param n_hosts=H.")
@click.option(
    "--capacity-gbps",
    type=click.FloatRange(min=0, min_open=True),
    default=None,
    help="Shorthand for --param capacity_bps (in Gbit/s).",
)
@click.option(
    "-o",
    "--output",
    type=click.Path(dir_okay=False, path_type=Path),
    required=True,
    help="Where to write the trace: .csv or .parquet (native format).",
)
def generate_cmd(
    workload: str,
    preset: str | None,
    seed: int | None,
    load: float | None,
    params: tuple[str, ...],
    n_coflows: int | None,
    n_hosts: int | None,
    capacity_gbps: float | None,
    output: Path,
) -> None:
    """Generate WORKLOAD (deterministic for a seed) and write it as a native trace."""
    if FORMATS.get(output.suffix.lower()) not in ("csv", "parquet"):
        raise click.BadParameter(f"{output}: write a .csv or .parquet file", param_hint="'-o'")
    if workload == "default":
        if preset not in (None, "aalo"):
            raise click.BadParameter("'default' is coflow-benchmark with preset aalo", param_hint="'--preset'")
        workload, preset = "coflow-benchmark", "aalo"
    given = {"seed": seed, "load": load, "n_coflows": n_coflows, "n_hosts": n_hosts, "capacity_gbps": capacity_gbps}
    pairs: dict[str, str] = {}
    options: dict[str, str] = {}
    for key, value in given.items():
        if value is not None:
            option, param, scale = _SHORTHANDS[key]
            pairs[param] = repr(value * scale) if scale != 1 else str(value)
            options[param] = f"'--{option}'"
    for item in params:
        name, eq, value = item.partition("=")
        if not eq or not name.strip():
            raise click.BadParameter(f"{item!r} is not NAME=VALUE", param_hint="'--param'")
        pairs[name.strip()] = value.strip()
    try:
        w = _core.generate_workload(workload, preset, list(pairs.items()))
    except ValueError as e:
        # The core says "<workload>: <param>: <message>" or "<workload>: unknown ...".
        _, _, rest = _one_line(e).partition(": ")
        field, _, detail = rest.partition(": ")
        if rest.startswith("unknown preset"):
            raise click.BadParameter(rest, param_hint="'--preset'") from None
        if field in options:
            raise click.BadParameter(detail, param_hint=options[field]) from None
        unknown = rest.split('"')[1] if rest.startswith('unknown parameter "') else None
        raise click.BadParameter(rest, param_hint=options.get(unknown or "", "'--param'")) from None
    with _data_errors():
        write_trace(w, output)
    click.echo(f"wrote {output}: {w.n_hosts} hosts, {w.n_coflows} coflows, {w.n_flows} flows")


def _load_experiment(path: Path) -> Experiment:
    with _data_errors():
        return load_experiment(path)


def _grid_text(exp: Experiment, n_points: int) -> str:
    """``75 points: 5 schedulers x load (5) x 3 seeds``."""
    n_specs = sum(len(e.specs()) for e in exp.schedulers)
    parts = [f"{n_specs} scheduler spec{'s' if n_specs != 1 else ''}"]
    axes = (*exp.workload_axes, *exp.topology_axes)
    if exp.grid == "one-at-a-time" and axes:
        # The center, then each axis's other values alone.
        stars = " + ".join(["center", *(f"{a.param} ({len(a.values) - 1})" for a in axes)])
        parts.append(f"({stars})")
    else:
        parts += [f"{a.param} ({len(a.values)})" for a in axes]
    parts.append(f"{exp.n_seeds} seed{'s' if exp.n_seeds != 1 else ''}")
    return f"{n_points} points: {' x '.join(parts)}"


@cli.command("run")
@click.argument("experiment", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option(
    "--out",
    type=click.Path(file_okay=False, path_type=Path),
    default=None,
    help="The result store (default: results/<experiment name>). Points already there are skipped.",
)
@click.option(
    "--cluster",
    metavar="ADDRESS",
    default=None,
    help="Run the points on the Dask cluster whose scheduler is at ADDRESS (tcp://host:8786), "
    "or named by a scheduler file (*.json). Default: threads on this machine's cores.",
)
@click.option(
    "--workers",
    type=click.IntRange(min=1),
    default=None,
    help="Local threads (default: one per core). Not with --cluster.",
)
@click.option(
    "--retry-failed/--no-retry-failed",
    default=True,
    show_default=True,
    help="Run points that failed in an earlier run again.",
)
@click.option("--dry-run", is_flag=True, help="Check the file and print the grid; run nothing.")
@click.option(
    "--progress/--no-progress",
    default=True,
    show_default=True,
    help="Show points done, failed and time left on stderr.",
)
def run_cmd(
    experiment: Path,
    out: Path | None,
    cluster: str | None,
    workers: int | None,
    retry_failed: bool,
    dry_run: bool,
    progress: bool,
) -> None:
    """Run every point of an EXPERIMENT file (TOML or YAML) into its result store.

    See docs/experiments.md for the file; examples/experiments/ for examples.
    Running an experiment again resumes it: finished points are kept and skipped."""
    if cluster is not None and workers is not None:
        raise click.UsageError("--workers sets local threads; with --cluster, the cluster has its workers")
    exp = _load_experiment(experiment)
    points = exp.points()
    store = out if out is not None else default_store(exp)
    click.echo(f"experiment {exp.name} ({experiment}): {_grid_text(exp, len(points))}")
    click.echo(f"store      {store}")
    if dry_run:
        for p in points:
            coords = ", ".join(f"{k.split('.', 1)[1]}={v}" for k, v in p.coords.items())
            click.echo(f"  {p.index:>5}  {p.key}  {p.scheduler}  replicate {p.replicate}  {coords}".rstrip())
        return

    def started(s: RunSummary) -> None:
        if s.n_todo == 0:
            click.echo(f"running    nothing: all {s.n_points} points are done")
        else:
            click.echo(f"running    {s.n_todo} points on {s.executor} ({s.n_skipped} already done)")

    try:
        with _data_errors():
            summary = run_experiment(
                exp,
                store,
                cluster=cluster,
                workers=workers,
                retry_failed=retry_failed,
                progress=sys.stderr if progress else None,
                on_start=started,
            )
    except RunnerError as e:
        raise DataError(_one_line(e)) from None
    except RunInterrupted as e:
        s = e.summary
        click.echo(
            f"coflowkit: interrupted: {s.n_done} points finished and {s.n_failed} failed in this run are stored "
            f"in {s.store}; {s.n_not_run} did not finish: run the same command again to resume",
            err=True,
        )
        sys.stdout.flush()
        sys.stderr.flush()
        # Points still running on local threads are given up: leave without waiting for them.
        os._exit(130)
    click.echo(
        f"finished   {summary.n_done} done, {summary.n_failed} failed in {summary.wall_s:.1f} s "
        f"({summary.n_skipped} skipped as already done)"
    )
    click.echo(f"wrote      {store / 'points.parquet'}, {store / 'coflows.parquet'}")
    if summary.n_failed:
        raise DataError(
            f"{summary.n_failed} of {summary.n_todo} points failed: their errors are in "
            f"{store / 'points.parquet'} (status, error) and in `coflowkit report {store}`"
        )


def _load_store(source: Path) -> Any:
    """A store (or an experiment file's default store), read for figures and reports."""
    from .analysis import load_store  # with plots and reports only: matplotlib is slow to import

    try:
        return load_store(source)
    except FileNotFoundError as e:
        raise click.BadParameter(_one_line(e), param_hint="'STORE'") from None
    except (ValueError, OSError) as e:
        raise DataError(_one_line(e)) from None


@cli.command("plot")
@click.argument("store", type=click.Path(exists=True, path_type=Path))
@click.option(
    "-o",
    "--out",
    type=click.Path(file_okay=False, path_type=Path),
    default=None,
    help="Directory for the figures (default: STORE/figures).",
)
@click.option(
    "--format",
    "formats",
    default="png,pdf",
    show_default=True,
    help="Comma-separated formats: png, pdf, svg.",
)
def plot_cmd(store: Path, out: Path | None, formats: str) -> None:
    """Draw an experiment's figures from its result STORE (or from its experiment file).

    CCT CDF, improvement (or normalized CCT) per bin for the mean and p95, each
    metric against each swept parameter, and deadline miss rates when deadlines
    were set; see docs/experiments.md."""
    fmts = [f.strip().lower() for f in formats.split(",") if f.strip()]
    bad = [f for f in fmts if f not in ("png", "pdf", "svg")]
    if bad or not fmts:
        raise click.BadParameter(f"{bad[0] if bad else formats!r}: use png, pdf or svg", param_hint="'--format'")
    from .plots import make_figures

    data = _load_store(store)
    with _data_errors():
        figures = make_figures(data, out, fmts)
    target = out if out is not None else data.store.root / "figures"
    click.echo(f"wrote {len(figures)} figures to {target}{os.sep} ({', '.join(fmts)}):")
    for f in figures:
        click.echo(f"  {f.name}: {f.caption}")


@cli.command("report")
@click.argument("store", type=click.Path(exists=True, path_type=Path))
@click.option(
    "-o",
    "--out",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="The Markdown file (default: STORE/report.md).",
)
@click.option("--no-figures", is_flag=True, help="Tables only; do not draw the figures.")
def report_cmd(store: Path, out: Path | None, no_figures: bool) -> None:
    """Write a Markdown report of an experiment (tables and figures) from its result STORE."""
    from .report import write_report

    data = _load_store(store)
    with _data_errors():
        path = write_report(data, out, figures=not no_figures)
    click.echo(f"wrote {path}")


@cli.command("schedulers")
def schedulers_cmd() -> None:
    """List the schedulers and what they do."""
    names = _core.schedulers()
    width = max(len(n) for n, _ in names)
    for name, about in names:
        click.echo(f"{name.ljust(width)}  {about}")


def _exec_runtime(role: str, args: tuple[str, ...]) -> int:
    """Runs the runtime's ``role``: the binary $COFLOWKIT_RUNTIME names (exec'd), else the
    runtime the extension carries, in this process; returns its exit code."""
    from ._runtime_entry import run, runtime_override

    if binary := runtime_override():
        try:
            os.execv(binary, [binary, role, *args])
        except OSError as e:
            raise DataError(f"{binary}: {e.strerror}") from e
    return run([role, *args], prog="coflowkit")


_PASS_THROUGH = {"ignore_unknown_options": True, "allow_extra_args": True, "help_option_names": []}


@cli.command("coordinator", context_settings=_PASS_THROUGH)
@click.argument("args", nargs=-1, type=click.UNPROCESSED)
def coordinator_cmd(args: tuple[str, ...]) -> int:
    """Run the runtime's coordinator (one per cluster); options as `coflowkit coordinator --help`."""
    return _exec_runtime("coordinator", args)


@cli.command("agent", context_settings=_PASS_THROUGH)
@click.argument("args", nargs=-1, type=click.UNPROCESSED)
def agent_cmd(args: tuple[str, ...]) -> int:
    """Run the runtime's agent (one per host); options as `coflowkit agent --help`."""
    return _exec_runtime("agent", args)


def _fail(message: str, code: int) -> NoReturn:
    click.echo(f"coflowkit: error: {message}", err=True)
    sys.exit(code)


def main(argv: list[str] | None = None) -> int:
    """Run the CLI; returns the exit code."""
    try:
        rv = cli.main(args=argv, prog_name="coflowkit", standalone_mode=False)
    except click.exceptions.NoArgsIsHelpError as e:
        click.echo(e.ctx.get_help() if e.ctx else "", err=True)
        return EXIT_USAGE
    except click.UsageError as e:
        _fail(_one_line(Exception(e.format_message())), EXIT_USAGE)
    except click.ClickException as e:
        _fail(_one_line(Exception(e.format_message())), e.exit_code)
    except (click.exceptions.Abort, KeyboardInterrupt) as e:
        # click turns Ctrl-C into Abort; say what happened and exit as a shell would.
        if isinstance(e, KeyboardInterrupt) or isinstance(e.__context__, KeyboardInterrupt):
            click.echo("coflowkit: interrupted", err=True)
            return 130
        _fail("aborted", EXIT_DATA)
    except BrokenPipeError:
        # The reader went away (e.g. `| head`): stop quietly.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 1
    return rv if isinstance(rv, int) else 0
