"""One host's sending part of ``coflowkit replay --hosts``: sends the host's flows
at their start instants through its runtime agent, so the coordinator's
scheduler (``aalo``, ``varys``, ``fair``, ...) paces and marks them. It runs on
host ``I`` (its agent's socket is local) and shares no file with the driver:
plan, start instant and result go over its stdin and stdout
(:mod:`coflowkit.testbed.replay.protocol`).

    python -m coflowkit.testbed.replay.sender --host I < PLAN-THEN-T0

The plan (:class:`coflowkit.testbed.replay.plans.Plan`) is
:func:`coflowkit.testbed.replay.make_plan`'s with, in addition, every
host's agent socket (``agents``), one data port per host (``ports``) and the
runtime's coflow id of each coflow by FIFO rank (``coflow_ids``, registered
by the driver). The receiving part is ``coflowkit.testbed.replay.worker
--receive-only`` on the same host. The wire format is the worker's: a 16-byte
header (flow id, size), the flow's bytes, the receiver's one-byte answer once
it has them all; header and bytes go through a ``CoflowWriter`` (the flow the
agent sees is ``size + 16`` bytes). Each flow has a thread of its own from
its start instant (the writer blocks, without the GIL, while it is paced or
paused) and takes an idle connection to its destination from the host's pool,
or opens one; a connection whose flow was answered goes back to the pool,
unpaced (each writer applies its own flow's schedule at its first write), so
that a flow does not pay a handshake and a host does not open thousands of
connections. The process prints ``ready`` once its agent answers, then reads
the common start instant ``t0`` on stdin; its result holds, per flow sent,
[start, bytes, CRC-32, connected, whether the connection was opened for it,
last byte written, taken by the agent (its open is not waited for, Aalo 6.1:
the writer starts at once and is scheduled once its agent answers; read when
the result is made), then what the writer was told and
did (for examples/testbed/diagnose.py): its schedule when opened (rate in
bit/s or None, class), the number of schedule changes it saw between its
writes, the seconds its writes spent while the schedule said paused (rate
below 1 bit/s), and the time-weighted mean rate it was given (bit/s, None if
unthrottled throughout), when the writer was opened, and when its last write
returned], the errors, each naming its flow, the connections lost
(``broken``: their flows sent again from the first byte, up to three
attempts, ``resent`` counting them), and the congestion controls its
data sockets ended up with (``tcp_cc``: the plan's, if it names one). A writer unpaces its socket
when it closes (the client library's ``CoflowWriter``): the coordinator counts
bytes as the kernel takes them, so it takes the flow for done while its send
buffer still drains.

The flows are sent natively (``AgentClient.send_flows``,
crates/testbed/src/replay_sender.rs), each on a thread of its own without the GIL:
with a Python thread per flow, the hundreds of flows an FB2010 coflow starts on
a host at once queued for the GIL, and flows started seconds late.
"""

from __future__ import annotations

import argparse
import os
import sys
from typing import Any

from ... import _core
from .worker import BLOCK2
from .plans import Plan
from .protocol import Channel


class Sender:
    """One host's sender: its flows of ``plan``, written through its runtime agent."""

    def __init__(self, plan: Plan, host: int, deadline_s: float, channel: Channel) -> None:
        if plan.agents is None or plan.coflow_ids is None:
            missing = " and ".join(k for k in ("agents", "coflow_ids") if getattr(plan, k) is None)
            raise ValueError(f"the plan has no {missing}: a replay through the runtime needs them")
        self.host = host
        self.channel = channel
        self.addrs = [(a, plan.data_port(h)) for h, a in enumerate(plan.hosts)]
        self.coflow_ids = list(plan.coflow_ids)
        self.out = plan.flows_from(host)
        self.client = _core.AgentClient(plan.agents[host], delta_ms=plan.report_ms)
        self.deadline_s = deadline_s
        #: TCP congestion control for the data sockets ("": the host's default)
        self.cc = plan.tcp_cc
        #: tests: flows whose first connection is reset once half is written
        self.inject_reset = list(plan.inject_reset)

    def run(self) -> dict[str, Any]:
        """Says ready, waits for ``t0``, sends every flow; returns the result (the driver's record)."""
        if not self.client.connected:
            self.channel.ready()  # the driver learns of it from the result
            self.channel.t0()
            unreachable = f"host {self.host}: the agent at {self.client.socket} cannot be reached"
            return self.result({}, [unreachable], [], [], {})
        self.channel.ready()
        t0 = self.channel.t0()
        self.channel.watch_driver()
        # (flow id, destination, size, start, the coflow's runtime id by its FIFO rank)
        flows = [(f.id, f.dst, f.size, f.start_s, self.coflow_ids[f.coflow_rank]) for f in self.out]
        sent, errors, cc, broken, resent = self.client.send_flows(
            self.host, flows, self.addrs, self.cc, bytes(BLOCK2), t0, self.deadline_s, self.inject_reset
        )
        return self.result(sent, errors, cc, broken, resent)

    def result(
        self, sent: dict[int, list[Any]], errors: list[str], cc: list[str], broken: list[str], resent: dict[int, int]
    ) -> dict[str, Any]:
        """The result the driver reads: per flow sent its record, and what went wrong."""
        return {
            "host": self.host, "sent": sent, "received": {}, "errors": errors, "tcp_cc": cc,
            "broken": broken, "resent": resent,
        }  # fmt: skip


def main(argv: list[str] | None = None) -> int:
    """The sender's command line: ``--host I [--deadline S]``; the plan and ``t0`` come on stdin."""
    channel = Channel()  # first: from here on only the protocol reaches stdout
    ap = argparse.ArgumentParser(
        prog="coflowkit.testbed.replay.sender", description="The plan comes on stdin (see above)."
    )
    ap.add_argument("--host", type=int, required=True)
    ap.add_argument("--deadline", type=float, default=600.0, help="seconds after t0 to give up")
    args = ap.parse_args(argv)
    result = Sender(channel.plan(), args.host, args.deadline, channel).run()
    channel.result(result)
    # Threads still blocked past the deadline must not hold the process.
    os._exit(0 if not result["errors"] else 1)


if __name__ == "__main__":
    sys.exit(main())
