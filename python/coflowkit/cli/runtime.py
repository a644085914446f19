"""``coflowkit coordinator`` and ``coflowkit agent``: the runtime's binary, run
with the arguments as given."""

from __future__ import annotations

import os

import click

from ..runtime import RuntimeNotFoundError, runtime_binary
from .common import DataError


def _exec_runtime(role: str, args: tuple[str, ...]) -> None:
    """Replace this process with the runtime's ``role`` given ``args``."""
    try:
        binary = runtime_binary()
    except RuntimeNotFoundError as e:
        raise DataError(str(e)) from None
    try:
        os.execv(binary, [binary, role, *args])
    except OSError as e:
        raise DataError(f"{binary}: {e.strerror}") from e


_PASS_THROUGH = {"ignore_unknown_options": True, "allow_extra_args": True, "help_option_names": []}


@click.command("coordinator", context_settings=_PASS_THROUGH)
@click.argument("args", nargs=-1, type=click.UNPROCESSED)
def coordinator_cmd(args: tuple[str, ...]) -> None:
    """Run the runtime's coordinator (one per cluster); options as `coflowkit-runtime coordinator --help`."""
    _exec_runtime("coordinator", args)


@click.command("agent", context_settings=_PASS_THROUGH)
@click.argument("args", nargs=-1, type=click.UNPROCESSED)
def agent_cmd(args: tuple[str, ...]) -> None:
    """Run the runtime's agent (one per host); options as `coflowkit-runtime agent --help`."""
    _exec_runtime("agent", args)
