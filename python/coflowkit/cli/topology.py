"""``coflowkit topology info``: describe a fabric."""

from __future__ import annotations

import click

from .common import check_topology


@click.group("topology")
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
    info = check_topology(spec, n_hosts, "'SPEC'")
    click.echo(f"topology       {spec.strip()}")
    click.echo(info["text"])
