"""``coflowkit coordinator`` and ``coflowkit agent``: the runtime the extension
carries, run in this process with the arguments as given (or the binary
``$COFLOWKIT_RUNTIME`` names, exec'd)."""

from __future__ import annotations

import os

import click

from ..runtime import RUNTIME_ENV, run, runtime_override
from .common import DataError

#: Set in the environment of the binary ``$COFLOWKIT_RUNTIME`` names when it is exec'd: if that
#: binary is ``coflowkit`` itself (or anything that comes back here), the second pass finds it and
#: stops instead of exec'ing itself again, forever.
_EXECED_ENV = "COFLOWKIT_RUNTIME_EXECED"


def _exec_runtime(role: str, args: tuple[str, ...]) -> int:
    """Runs the runtime's ``role`` with ``args``; returns its exit code."""
    if binary := runtime_override():
        if os.environ.get(_EXECED_ENV) == binary:
            raise DataError(f"${RUNTIME_ENV} names {binary}, which ran `coflowkit {role}` again instead of the "
                            f"runtime: name a coflowkit-runtime binary there, or unset it to run the packaged runtime")
        try:
            os.execve(binary, [binary, role, *args], {**os.environ, _EXECED_ENV: binary})
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
