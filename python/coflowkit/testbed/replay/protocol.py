"""How ``coflowkit replay`` talks to its workers (``coflowkit.testbed.replay.worker``,
``coflowkit.testbed.replay.sender``): over the worker's stdin and stdout only, so a
worker needs no file shared with the driver and can run on another machine
(``coflowkit replay --hosts FILE --launch "ssh {address}"``).

1. driver -> worker (stdin): one line, the plan (JSON: :meth:`.plans.Plan.to_wire`);
2. worker -> driver (stdout): ``ready``, once it can start (it listens, its
   agent answered);
3. driver -> worker (stdin): one line, the common start instant ``t0``
   (wall clock, seconds since the epoch);
4. worker -> driver (stdout): one line, its result (JSON); then it exits.

The driver keeps the worker's stdin open until it has the result: a worker
whose stdin closes before it is done has lost its driver (killed, or its ssh
connection gone) and exits at once instead of running on to its deadline
with its port taken (:meth:`Channel.watch_driver`).

Nothing else may reach the worker's stdout: :class:`Channel` keeps the real
stdout to itself and points file descriptor 1 (``print``, and any library
writing to it) at stderr, which the driver keeps as the worker's log.
"""

from __future__ import annotations

import json
import os
import sys
import threading
from typing import IO, Any

from .plans import Plan, PlanError

#: The line a worker prints once it can start.
READY = "ready"


class Channel:
    """The worker's end of the protocol. Create it first thing in ``main``,
    before anything could print."""

    def __init__(self) -> None:
        sys.stdout.flush()
        self._out: IO[str] = os.fdopen(os.dup(1), "w")
        os.dup2(2, 1)
        sys.stdout = sys.stderr
        self._in = sys.stdin
        self._done = False

    def _line(self, what: str) -> str:
        line = self._in.readline()
        if not line.endswith("\n"):
            raise SystemExit(f"stdin closed before the {what} (the driver went away)")
        return line

    def plan(self) -> Plan:
        """Step 1: the plan; exits naming what is wrong with it if it is not one."""
        line = self._line("plan")
        try:
            return Plan.from_wire(line)
        except PlanError as e:
            raise SystemExit(f"the plan (first line of stdin): {e}") from None

    def ready(self) -> None:
        """Step 2."""
        self._out.write(READY + "\n")
        self._out.flush()

    def t0(self) -> float:
        """Step 3: the start instant."""
        line = self._line("start instant")
        try:
            return float(line)
        except ValueError:
            raise SystemExit(f"the start instant (second line of stdin) is not a number: {line.strip()!r}") from None

    def watch_driver(self) -> None:
        """After step 3: exit at once (status 3) when stdin closes, that is when
        the driver has gone away before the result."""

        def watch() -> None:
            while self._in.readline():
                pass
            if self._done:
                return
            print("stdin closed: the driver went away; stopping", file=sys.stderr, flush=True)
            os._exit(3)

        threading.Thread(target=watch, daemon=True).start()

    def result(self, result: dict[str, Any]) -> None:
        """Step 4: the result, one line."""
        self._done = True
        self._out.write(json.dumps(result) + "\n")
        self._out.flush()
