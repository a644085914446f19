"""``coflowkit coordinator`` and ``coflowkit agent``: the runtime the extension
carries, run in this process with the arguments as given (or the binary
``$COFLOWKIT_RUNTIME`` names, exec'd)."""

from __future__ import annotations

import os

import click

from ..runtime import run, runtime_override
from .common import DataError


def _exec_runtime(role: str, args: tuple[str, ...]) -> int:
    """Runs the runtime's ``role`` with ``args``; returns its exit code."""
    if binary := runtime_override():
        try:
            os.execv(binary, [binary, role, *args])
        except OSError as e:
            raise DataError(f"{binary}: {e.strerror}") from e
    return run([role, *args], prog="coflowkit")


_PASS_THROUGH = {"ignore_unknown_options": True, "allow_extra_args": True, "help_option_names": []}


@click.command("coordinator", context_settings=_PASS_THROUGH)
@click.argument("args", nargs=-1, type=click.UNPROCESSED)
def coordinator_cmd(args: tuple[str, ...]) -> int:
    """Run the runtime's coordinator (one per cluster); options as `coflowkit coordinator --help`."""
    return _exec_runtime("coordinator", args)


@click.command("agent", context_settings=_PASS_THROUGH)
@click.argument("args", nargs=-1, type=click.UNPROCESSED)
def agent_cmd(args: tuple[str, ...]) -> int:
    """Run the runtime's agent (one per host); options as `coflowkit agent --help`."""
    return _exec_runtime("agent", args)
