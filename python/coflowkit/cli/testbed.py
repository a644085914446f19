"""``coflowkit testbed up|down|status|check|exec``: the emulated cluster."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import click

from .. import testbed as tb
from ..testbed import (
    BUFFER_MIN_BYTES,
    DEFAULT_RTO_MAX_MS,
    DEFAULT_RTO_MIN_MS,
    KERNEL_RTO_MAX_MS,
    RTO_MAX_RANGE_MS,
    RTO_MIN_RANGE_MS,
)
from .common import DataError, check_topology, one_line, testbed_errors


@click.group("testbed")
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

    check_topology(topology_spec, n_hosts)
    with testbed_errors():
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
            raise click.BadParameter(one_line(e), param_hint="'--topology'") from None
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

    with testbed_errors():
        removed = tb.down(name, state_dir)
    said = f"down: removed {len(removed)} items" if removed else "nothing to remove"
    click.echo(f"testbed {name}: {said}")


@testbed_group.command("status")
@_TB_NAME
@_TB_STATE
@click.option("--json", "as_json", is_flag=True, help="Print the whole status as JSON.")
def testbed_status(name: str, state_dir: Path | None, as_json: bool) -> None:
    """Show the testbed: hosts, ports with the rate the kernel enforces, processes."""
    with testbed_errors():
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

    with testbed_errors():
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
    with testbed_errors():
        cmd = tb.ns_cmd(tb.load_plan(name, state_dir), host, list(argv))
    sys.exit(subprocess.call(cmd))
