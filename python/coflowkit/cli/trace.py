"""``coflowkit trace info`` and ``coflowkit generate``: inspect a trace, write a
generated workload as one."""

from __future__ import annotations

from pathlib import Path

import click

from .. import _core
from ..sim.trace import FORMATS, load_trace, write_trace
from .common import capacity_option, data_errors, one_line


@click.group("trace")
def trace_group() -> None:
    """Inspect traces."""


@trace_group.command("info")
@click.argument("path", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@capacity_option("Port capacity the offered load refers to.")
def trace_info(path: Path, capacity_gbps: float) -> None:
    """Print a trace's statistics: coflows, flows, bytes, load, bins, widths, lengths."""
    with data_errors():
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


@click.command("generate", cls=_GenerateCommand)
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
        name, eq, text = item.partition("=")
        if not eq or not name.strip():
            raise click.BadParameter(f"{item!r} is not NAME=VALUE", param_hint="'--param'")
        pairs[name.strip()] = text.strip()
    try:
        w = _core.generate_workload(workload, preset, list(pairs.items()))
    except ValueError as e:
        # The core says "<workload>: <param>: <message>" or "<workload>: unknown ...".
        _, _, rest = one_line(e).partition(": ")
        field, _, detail = rest.partition(": ")
        if rest.startswith("unknown preset"):
            raise click.BadParameter(rest, param_hint="'--preset'") from None
        if field in options:
            raise click.BadParameter(detail, param_hint=options[field]) from None
        unknown = rest.split('"')[1] if rest.startswith('unknown parameter "') else None
        raise click.BadParameter(rest, param_hint=options.get(unknown or "", "'--param'")) from None
    with data_errors():
        write_trace(w, output)
    click.echo(f"wrote {output}: {w.n_hosts} hosts, {w.n_coflows} coflows, {w.n_flows} flows")
