"""D-CAS's round rate, split: how often the senders' clock ticked, how late, and
how often a tick found a large subcoflow starving, on the packet engine and
(with ``--testbed``, as root, ``dcas`` or ``dcas-local``) on the emulated testbed, for the 16-host FB2010
replay of docs/lab/testbed-vs-simulation.md::

    sudo .venv/bin/python examples/testbed/dcas_clock.py [--testbed [--testbed-policy dcas-local]]
        [--packet-extra KNOBS] [--spec-extra KEYS] [--policies dcas,dcas-local,plain,pias] [--out DIR] [--trace FB2010]

Both sides run the same host policy (crates/sched/src/dcas/host.rs), whose
counters (``ticks``, ``ticks_late_ns``, ``grid_missed``, ``gaps_*``,
``large_life_*``) are read from the packet result's ``dcas_*`` scheduler
stats and from the testbed workers' reports (``work/hostH.json``'s ``dcas_counts``). Prints, per
side: the ticks and how late they ran past their 10 ms grid point, the gaps
between a subcoflow's consecutive ticks in multiples of delta, and over the
subcoflows that were ever large, their lives, ticks, starving ticks and
rounds per second of life. ``--policies`` also prints the packet engine's mean
CCT of each (``plain`` is ``fair``) and its timeouts (spurious, and those that fired
while the segment waited in its own host's queue or a switch's); the testbed the
hosts' kernel counters of the same (``KERNEL``).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections import Counter
from pathlib import Path

import coflowkit
from coflowkit import testbed as tb
from coflowkit.testbed import replay as rp

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import diagnose as dg  # noqa: E402

TRACE = HERE.parents[1].parent / "shared" / "data" / "FB2010-1Hr-150-0.txt"
TOPOLOGY = "bigswitch:hosts=16,rate=25Mbps"
#: The packet engine with the testbed's queues, TSQ, HTB's guaranteed rate and datagrams
#: (docs/lab/testbed-vs-simulation.md).
PACKET = (
    "transport=tcp,buffer=64KB,min_rto=200ms,initial_rto=1s,max_rto=1s,link_delay=20us,sack=on,"
    "buffer_per=queue,tsq=32KB,class_min=0.001,control_batch=on"
)
CLOCK = (
    "ticks", "ticks_late_ns", "grid_missed", "sub_ticks", "gaps_1", "gaps_2", "gaps_3", "gaps_4plus", "gap_ns",
    "large_subs", "large_life_ns", "large_life_ticks", "large_life_starving", "large_life_rounds",
    "large_life_gap_ns", "announcements", "negotiated", "fallback", "dropped_rounds",
)  # fmt: skip
#: The hosts' kernel counters of a testbed replay worth holding against the packet engine's timeouts:
#: Linux's retransmission timeouts, those it undid, and the resends it skipped as the segment was still in
#: the host's own queue (``skb_still_in_host_queue``; any resend, not only a timeout's).
KERNEL = ("TcpExtTCPTimeouts", "TcpExtTCPSpuriousRTOs", "TcpExtTCPSpuriousRtxHostQueues", "TcpRetransSegs")


def summary(c: dict[str, int]) -> dict[str, float]:
    """The counters ``c`` (summed over hosts) as rates."""
    life_s = c["large_life_ns"] / 1e9
    gaps = c["gaps_1"] + c["gaps_2"] + c["gaps_3"] + c["gaps_4plus"]
    ticks = max(c["large_life_ticks"], 1)
    return {
        "ticks": c["ticks"],
        "tick_late_mean_ms": c["ticks_late_ns"] / max(c["ticks"], 1) / 1e6,
        "grid_missed": c["grid_missed"],
        "gap_mean_ms": c["gap_ns"] / max(gaps, 1) / 1e6,
        "gaps_1/2/3/4+": "/".join(f"{c[k] / max(gaps, 1):.3f}" for k in ("gaps_1", "gaps_2", "gaps_3", "gaps_4plus")),
        "large_subs": c["large_subs"],
        "large_life_s": life_s,
        "large_gap_mean_ms": c["large_life_gap_ns"] / max(c["large_life_ticks"] - c["large_subs"], 1) / 1e6,
        "ticks_per_s": c["large_life_ticks"] / life_s if life_s else float("nan"),
        "starving_share": c["large_life_starving"] / ticks,
        "starving_per_s": c["large_life_starving"] / life_s if life_s else float("nan"),
        "rounds": c["large_life_rounds"],
        "rounds_per_s": c["large_life_rounds"] / life_s if life_s else float("nan"),
        "announcements": c["announcements"],
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--testbed", action="store_true", help="also replay on the testbed (root)")
    ap.add_argument("--testbed-policy", choices=("dcas", "dcas-local"), default="dcas")
    ap.add_argument("--packet-extra", default="", help="knobs added to the packet engine's (e.g. rto_undo=on)")
    ap.add_argument("--spec-extra", default="", help="keys added to every dcas spec (e.g. delta=20ms;t=40ms)")
    ap.add_argument("--policies", default="dcas", help="packet engine runs (dcas, dcas-local, plain, pias)")
    ap.add_argument("--trace", type=Path, default=TRACE, help="FB2010 (default: ../shared/data of the checkout)")
    ap.add_argument("--name", default="dclk")
    ap.add_argument("--out", type=Path, default=Path("/tmp/dcas_clock"))
    args = ap.parse_args(argv)
    fw = rp.fit(coflowkit.load_trace(args.trace), 16, 5e-05, 0.02).workload
    packet = PACKET + ("," + args.packet_extra if args.packet_extra else "")
    for p in filter(None, args.policies.split(",")):
        if p == "plain":
            spec = "fair"
        elif p.startswith("dcas"):
            spec = rp.policy_spec("dcas", fw, negotiate=p == "dcas")["spec"]
            spec += ";" + args.spec_extra if args.spec_extra else ""
        else:
            spec = rp.policy_spec(p, fw)["spec"]
        t = time.time()
        r = coflowkit.simulate(fw, spec, topology=TOPOLOGY, engine="packet", packet=packet, progress=False)
        cct = r.coflows(spec)["cct_s"].mean()
        print(f"packet {p}: mean CCT {cct:.4f} s ({time.time() - t:.0f} s) {spec}", flush=True)
        f = r.flows(spec)
        queued = {k: int(f[f"timeouts_{k}"].sum()) for k in ("spurious", "host_queued", "switch_queued")}
        print(f"packet {p}: timeouts {int(f['timeouts'].sum())} {json.dumps(queued)}", flush=True)
        if p.startswith("dcas"):
            st = r.scheduler_stats(spec)
            c = {k: int(st.get(f"dcas_{k}", 0)) for k in CLOCK}
            print(f"packet {p}: {json.dumps(summary(c))}", flush=True)
    if not args.testbed:
        return 0
    tp = args.testbed_policy
    policy = rp.policy_spec("dcas", fw, negotiate=tp == "dcas")
    if args.spec_extra:
        policy = {**policy, "spec": policy["spec"] + ";" + args.spec_extra}
    tb.down(args.name)
    bed = tb.up(TOPOLOGY, args.name)
    try:
        before = sum((dg.counters(ns) for ns in bed.host_ns), Counter())
        t = time.time()
        flows = rp.replay_on_testbed(fw, args.name, policy=policy, work_dir=args.out, nice=-10)
        grew = sum((dg.counters(ns) for ns in bed.host_ns), Counter())
        print(f"testbed {tp}: kernel {json.dumps({k: grew[k] - before[k] for k in KERNEL})}", flush=True)
        co, _ = rp.tables(fw, flows)
        print(f"testbed {tp}: mean CCT {co.to_pandas()['cct_s'].mean():.4f} s ({time.time() - t:.0f} s)", flush=True)
    finally:
        tb.down(args.name)
    c = {k: 0 for k in CLOCK}
    stalls = []
    for h in range(fw.n_hosts):
        worker = json.loads((args.out / f"host{h}.json").read_text())
        for k in CLOCK:
            c[k] += int(worker.get("dcas_counts", {}).get(k, 0))
        stalls.append(worker["stalls"])
    print(f"testbed {tp}: {json.dumps(summary(c))}", flush=True)
    print(f"testbed {tp}: event loop stalls (mean, p99, max s) per worker {stalls}", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
