"""D-CAS's negotiation between replay workers on loopback (no testbed, no root): one address,
a data and a control port per host, every flow paced at a link's rate (``pace_bps``). The
switch's queues are not there, so CCTs mean nothing here; what it measures is the negotiation
itself: announcements, replies in time, missing and late, and how often the negotiated
priority moved a subcoflow's value and its queue::

    .venv/bin/python examples/testbed/dcas_loopback.py [--hosts 8] [--max-coflows 150]
        [--rate-mbps 100] [--size-scale 0.0002] [--time-scale 0.02] [--no-negotiate] [--wait-ms 5]
"""

from __future__ import annotations

import argparse
import dataclasses
import socket
import sys
import tempfile
import time
from pathlib import Path

import coflowkit
from coflowkit.testbed import replay as rp

TRACE = Path(__file__).resolve().parents[2].parent / "shared" / "data" / "FB2010-1Hr-150-0.txt"


def _port(kind: int) -> int:
    with socket.socket(socket.AF_INET, kind) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--hosts", type=int, default=8)
    ap.add_argument("--max-coflows", type=int, default=150)
    ap.add_argument("--rate-mbps", type=float, default=100.0, help="every flow paced at this rate")
    ap.add_argument("--size-scale", type=float, default=0.0002)
    ap.add_argument("--time-scale", type=float, default=0.02)
    ap.add_argument("--no-negotiate", action="store_true")
    ap.add_argument("--wait-ms", type=float, default=None, help="how long a round waits for replies (default: the spec's)")
    args = ap.parse_args(argv)
    fw = rp.fit(coflowkit.load_trace(TRACE), args.hosts, args.size_scale, args.time_scale, args.max_coflows).workload
    spec = rp.policy_spec("dcas", fw, negotiate=not args.no_negotiate)
    if args.wait_ms is not None:
        spec = rp.with_keys(spec, wait=f"{round(args.wait_ms * 1e6)}ns")
    plan = dataclasses.replace(
        rp.make_plan(fw, ["127.0.0.1"] * args.hosts, spec),
        ports=tuple(_port(socket.SOCK_STREAM) for _ in range(args.hosts)),
        control_ports=tuple(_port(socket.SOCK_DGRAM) for _ in range(args.hosts)),
        pace_bps=int(args.rate_mbps * 1e6 / 8),
    )
    print(f"{fw.source}: {fw.n_coflows} coflows, {fw.n_flows} flows; {spec}", flush=True)
    with tempfile.TemporaryDirectory() as d:
        work = Path(d)
        jobs = [
            rp.Job(f"the worker of host {h}", [sys.executable, "-m", "coflowkit.testbed.replay.worker", "--host", str(h),
                                                "--deadline", "600"], f"host{h}")
            for h in range(args.hosts)
        ]  # fmt: skip
        t = time.time()
        flows = rp.collect(plan, rp.run_workers(plan, jobs, 600, work))
        wall = time.time() - t
        print(f"{len(flows)} flows, {int(flows['bytes'].sum())} bytes, every byte checked; wall {wall:.1f} s")
        if rp.negotiates(spec):
            n = rp.negotiation_summary(work, args.hosts)
            print("negotiation:", n)
            rounds = n["negotiated"] + n["fallback"]
            if rounds:
                print(
                    f"rounds {rounds}: {n['negotiated'] / rounds:.1%} negotiated, {n['fallback'] / rounds:.1%} fell "
                    f"back; Phi(replies) != d in {n['raised_value'] / rounds:.1%}, another queue in "
                    f"{n['changed_queue'] / rounds:.1%}; replies in time "
                    f"{n['replies_received'] / max(1, n['announcements']):.1%} of announcements"
                )
    return 0


if __name__ == "__main__":
    sys.exit(main())
