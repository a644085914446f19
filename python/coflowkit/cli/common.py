"""What the command modules share: exit codes, turning errors into one line,
and the options and checks several commands take."""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TypeVar

import click

from .. import _core
from ..sim import topology_info
from ..testbed import TestbedError


#: What a click decorator decorates (a command's function).
FC = TypeVar("FC", bound=Callable[..., Any])

EXIT_DATA = 1
EXIT_USAGE = 2


class DataError(click.ClickException):
    """Bad data (not bad usage): exit code 1."""

    exit_code = EXIT_DATA


def one_line(e: BaseException) -> str:
    if isinstance(e, OSError) and e.filename is not None and e.strerror:
        return f"{e.filename}: {e.strerror}"
    return " ".join(str(e).split()) or type(e).__name__


def capacity_option(help_text: str) -> Callable[[FC], FC]:
    """The `--capacity-gbps` option (port capacity, Gbit/s), shared by commands."""
    return click.option(
        "--capacity-gbps",
        type=click.FloatRange(min=0, min_open=True),
        default=1.0,
        show_default=True,
        help=help_text,
    )


class Duration(click.ParamType[float]):
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
def data_errors() -> Iterator[None]:
    """Turn the core's errors (bad trace, bad workload, failed run) into DataError."""
    try:
        yield
    except (ValueError, OSError, _core.SimulationError) as e:
        raise DataError(one_line(e)) from None


def usage_errors(param: str) -> Callable[..., Any]:
    """Run ``fn`` and turn its ValueError into a usage error about ``param``."""

    def call(fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
        try:
            return fn(*args, **kwargs)
        except ValueError as e:
            raise click.BadParameter(one_line(e), param_hint=param) from None

    return call


TOPOLOGY_HELP = (
    "Fabric: a spec, bigswitch[:hosts=N,rate=1Gbps] | "
    "tree[:pods=30,racks=30,hosts=40,tor_oversub=2,agg_oversub=1,rate=1Gbps] | "
    "leaf-spine[:leaves=4,spines=2,hosts=8,rate=1Gbps,spine_rate=R] | fat-tree[:k=4,rate=1Gbps] "
    "(all take cpu_rate=R and ecmp_seed=N), or a .toml/.yaml topology file "
    "(see examples/topologies)."
)


def is_topology_file(spec: str) -> bool:
    return spec.strip().lower().endswith((".toml", ".yaml", ".yml"))


def check_topology(spec: str, n_hosts: int | None = None, param: str = "'--topology'") -> dict[str, Any]:
    """Build the topology once to check it: a bad spec string or a missing file
    is a usage error (2); a file that does not make a fabric is bad data (1)."""
    if is_topology_file(spec) and not Path(spec.strip()).is_file():
        raise click.BadParameter(f"{spec.strip()}: no such file", param_hint=param)
    try:
        return topology_info(spec, n_hosts)
    except (ValueError, OSError) as e:
        if is_topology_file(spec):
            raise DataError(one_line(e)) from None
        raise click.BadParameter(one_line(e), param_hint=param) from None


def check_schedulers(text: str | None) -> list[str]:
    specs = [s.strip() for s in (text or "").split(",") if s.strip()]
    if text is not None and not specs:
        raise click.BadParameter("give at least one scheduler", param_hint="'--scheduler'")
    for s in specs:
        usage_errors("'--scheduler'")(_core.check_scheduler, s)
    if len(set(specs)) != len(specs):
        raise click.BadParameter("a scheduler is given twice", param_hint="'--scheduler'")
    return specs


@contextmanager
def testbed_errors() -> Iterator[None]:
    try:
        yield
    except TestbedError as e:
        raise DataError(one_line(e)) from None
