"""What a paused flow's wait costs it after its turn comes (root; docs/lab/memcached-testbed.md).

Two flows into one host of a 3-host big switch at 100 Mbit/s, each its own task, named by address at
its sender's agent (transparent enforcement) under ``fifo-lm``: the older (host 0 to host 2) runs for
``--wait`` seconds after the younger (host 1 to host 2) starts, so the younger waits that long, paused,
then is served. Printed per run: the younger's sender's retransmission timeouts (host 1's
``TCPTimeouts``) and its restart gap, from the older's last byte to the first 50 ms in which the younger
moves at least half the link. ``--ceil line`` lets the paused flow borrow its idle sender's port (its
packets then wait, and are dropped, in the switch's best-effort queue, and TCP backs off); ``--ceil
rate`` holds it at its sender (a token rate, its packets queued in its host class).

    sudo .venv/bin/python examples/testbed/paused_restart.py --ceil line rate --wait 0.2 0.5 1 2
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from coflowkit import _core
from coflowkit.testbed import memcached as mc
from coflowkit.testbed import net as tb

RATE = 100e6


def timeouts(p: tb.Plan, host: int) -> int:
    """Host ``host``'s TCPTimeouts so far."""
    return mc.tcp_counters(p, [host])["TCPTimeouts"]


def one(p: tb.Plan, work: Path, ceil: str, wait: float, port0: int) -> dict[str, Any]:
    """One pair of flows (see the module's doc); the younger's timeouts and restart gap."""
    young_s = wait + 2.0
    with mc.runtime_on_testbed(p, "fifo-lm:threshold=1GiB", work, ceiling=ceil) as agents:
        clients = {h: _core.AgentClient(agents[h]) for h in (0, 1)}
        sinks = [tb._traffic(p, 2, "sink", "--port", str(port0 + k), "--timeout", "60") for k in range(2)]
        time.sleep(0.3)
        before = timeouts(p, 1)
        procs, named = [], []
        for k, (src, seconds, delay) in enumerate([(0, wait + 0.5, 0.0), (1, young_s, 0.5)]):
            time.sleep(delay)
            coflow = clients[src].register()
            named.append((src, coflow, clients[src].watch(coflow, 2, port0 + 500 + k, p.host_ip[2], port0 + k)))
            time.sleep(0.05)
            args = f"source --dst {p.host_ip[2]} --port {port0 + k} --seconds {seconds} --cc {p.tcp_cc}"
            procs.append(tb._traffic(p, src, *args.split(), "--src-port", str(port0 + 500 + k)))
        got = []
        for k in range(2):
            tb._finish(procs[k], f"source {k}", 60)
            got.append(tb._finish(sinks[k], f"sink {k}", 60))
            # Done: the coordinator learns it at once (as the Memcached client closes a get's flow), and
            # the younger's turn comes.
            src, coflow, flow = named[k]
            clients[src].close_watched(flow, got[k]["bytes"])
            clients[src].unregister(coflow)
        rtos = timeouts(p, 1) - before
    old_end = next(t for t, b in got[0]["samples"] if b == got[0]["bytes"])
    ys = got[1]["samples"]
    gap = None
    for i, (t, b) in enumerate(ys):
        if t < old_end:
            continue
        later = [(t2, b2) for t2, b2 in ys[i:] if t2 - t >= 0.05]
        if later and (later[0][1] - b) * 8 / (later[0][0] - t) >= 0.5 * RATE:
            gap = t - old_end
            break
    return {"ceil": ceil, "wait_s": wait, "young_rtos": rtos, "restart_gap_ms": None if gap is None else 1e3 * gap}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--ceil", nargs="+", default=["line", "rate"], choices=["line", "rate"])
    ap.add_argument("--wait", nargs="+", type=float, default=[0.2, 0.5, 1.0, 2.0])
    ap.add_argument("--repeat", type=int, default=1)
    a = ap.parse_args()
    name = f"pr{os.getpid() % 1000}"
    state = Path(tempfile.mkdtemp(prefix="ck-paused-"))
    tb.down(name, state)
    p = tb.up(f"bigswitch:hosts=3,rate={RATE:.0f}bps", name, state_dir=state)
    try:
        k = 0
        for _ in range(a.repeat):
            for wait in a.wait:
                for ceil in a.ceil:
                    r = one(p, state / f"rt{k}", ceil, wait, 44_000 + 10 * k)
                    k += 1
                    print(r, flush=True)
    finally:
        tb.down(name, state)
        subprocess.run(["rm", "-rf", str(state)], check=False)
    return 0


if __name__ == "__main__":
    sys.exit(main())
