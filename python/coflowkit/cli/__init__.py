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

import importlib
import os
import sys
from typing import NoReturn

import click

from .._core import __version__
from .common import EXIT_DATA, EXIT_USAGE, one_line

__all__ = ["cli", "main"]

#: Each command, by name: the module of this package that defines it and its
#: name there. A command's module is imported when the command runs (or
#: `--help` lists them all), so that `coflowkit simulate` does not import the
#: experiment runner's, the testbed's or the replay's dependencies
#: (docs/benchmarks-history.md, issue 35).
COMMANDS = {
    "simulate": ("simulate", "simulate_cmd"),
    "schedulers": ("simulate", "schedulers_cmd"),
    "topology": ("topology", "topology_group"),
    "trace": ("trace", "trace_group"),
    "generate": ("trace", "generate_cmd"),
    "run": ("experiment", "run_cmd"),
    "plot": ("experiment", "plot_cmd"),
    "report": ("experiment", "report_cmd"),
    "testbed": ("testbed", "testbed_group"),
    "replay": ("replay", "replay_cmd"),
    "coordinator": ("runtime", "coordinator_cmd"),
    "agent": ("runtime", "agent_cmd"),
}


class _LazyGroup(click.Group):
    """A group whose commands are imported by name from :data:`COMMANDS` when used."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(COMMANDS)

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name not in COMMANDS:
            return None
        module, attr = COMMANDS[cmd_name]
        command: click.Command = getattr(importlib.import_module(f".{module}", __name__), attr)
        return command


@click.group(
    cls=_LazyGroup,
    context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100},
)
@click.version_option(__version__, prog_name="coflowkit")
def cli() -> None:
    """coflowkit: simulate coflow schedulers on traces and synthetic workloads."""


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
        _fail(one_line(Exception(e.format_message())), EXIT_USAGE)
    except click.ClickException as e:
        _fail(one_line(Exception(e.format_message())), e.exit_code)
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
