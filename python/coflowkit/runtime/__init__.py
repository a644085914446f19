"""The runtime's coordinator and agent from the installed package, with no separate binary.

The extension carries the runtime: ``_core.runtime_main(argv)`` runs the ``coflowkit-runtime``
command line (``coflowkit_runtime::cli::run``) in this process with the GIL released, on a tokio
runtime of its own that lives as long as the call. So:

* ``coflowkit coordinator|agent ...`` run it in their own process (:func:`run`);
* whatever starts the runtime as a child process (the testbed's replay, inside network namespaces;
  the tests; the benchmarks) runs :func:`runtime_command` plus ``coordinator ...`` or ``agent ...``:
  ``python -m coflowkit.runtime``, this interpreter running this module.

``$COFLOWKIT_RUNTIME``, when set, names a ``coflowkit-runtime`` binary to run instead (say, a release
build with ``--features tls``). Nothing here looks for a cargo build in a checkout.
"""

from __future__ import annotations

import os
import signal
import sys
import threading
from collections.abc import Sequence

__all__ = ["MODULE", "RUNTIME_ENV", "main", "run", "runtime_command", "runtime_override"]

#: The variable that names a ``coflowkit-runtime`` binary to run instead of the packaged runtime.
RUNTIME_ENV = "COFLOWKIT_RUNTIME"

#: This package's name, for ``python -m`` (its ``__main__`` runs :func:`main`).
MODULE = "coflowkit.runtime"


def runtime_override() -> str | None:
    """The binary ``$COFLOWKIT_RUNTIME`` names, or None (the packaged runtime)."""
    return os.environ.get(RUNTIME_ENV) or None


def runtime_command() -> list[str]:
    """The command that starts the runtime as a child process, to which ``coordinator ...`` or
    ``agent ...`` is appended: the ``$COFLOWKIT_RUNTIME`` binary if set, else this Python
    running the runtime the extension carries."""
    if binary := runtime_override():
        return [binary]
    return [sys.executable, "-m", MODULE]


def run(argv: Sequence[str], prog: str = "coflowkit-runtime") -> int:
    """Runs the runtime (``argv``: ``coordinator ...`` or ``agent ...``) in this process until
    SIGINT stops it cleanly; returns its exit code (0, 2 for a usage error, 1 for any other).

    Meant to be the process's last act: SIGINT goes to the runtime alone from here on (Python's
    own handler would raise KeyboardInterrupt after the runtime's clean stop), and the runtime's
    handler stays once it is installed."""
    from .. import _core

    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGINT, signal.SIG_DFL)
    sys.stdout.flush()
    sys.stderr.flush()
    return int(_core.runtime_main([prog, *argv]))


def main() -> int:
    """``python -m coflowkit.runtime coordinator|agent ...``: as ``coflowkit-runtime``."""
    return run(sys.argv[1:])

