"""Baraat at packet level (issue 34): the packet-level section of docs/reproductions/baraat.md,
run by ``regenerate.py`` (``make repro-baraat``).

Each case runs twice on one workload: on the flow-level engine and on the packet engine
(docs/packet-engine.md), so that the two columns differ only by the engine. Figs. 8-9 (Table 4)
take ``table4.toml``'s workload and tree with fewer tasks (``N_TASKS``, one seed). Schedulers at
packet level:

* ``baraat``: its host policy (``sched::host::baraat``: task id, heavy flag, Algorithm 2's demand,
  paced at the least AR) and Smart Priority Classes with Algorithm 1 at every port (``spc.rs``);
* ``fifo-lm``: its host policy over DCTCP (tasks in 7 classes by age, heavy tasks in the last);
* RCP (``fair``): the RCP transport and its switch rate (``crate::rcp``);
* pFabric (``srpt``): pFabric's transport and switch queues;
* Orchestra (``fifo``) and ``stf``: the flow-level scheduler run by the coordinator every
  ``COORDINATOR_INTERVAL`` on acknowledged bytes, its rates paced at the hosts over DCTCP (neither
  has a host policy).

Loss recovery is the same for every scheme but pFabric (``RECOVERY``: SACK, RFC 6675, with spurious
timeouts undone, and the engine's 10 ms timer floor), so that the comparison differs by the schedulers, not by
how each recovers a lost packet; pFabric keeps the recovery its paper gives it (its own timeout of a few
round trips, no back-off: ``crate::tcp``). The knob runs (``KNOBS``, ``MORE_KNOBS``) change one thing each
to measure a cause the page names, with the same recovery; ``SETTINGS`` reruns Figs. 8-9 under the
single-stage settings the paper leaves open (who aggregates, how a task's bytes split over its flows), at
both levels.

Run alone (prints the section; draws its figure into docs/reproductions/baraat/)::

    python examples/reproductions/baraat/packet.py
"""

from __future__ import annotations

import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

import coflowkit
from coflowkit import load_experiment
from coflowkit.experiments.runner import stored

HERE = Path(__file__).resolve().parent
#: Tasks per workload at packet level (table4.toml: 2,000 and two seeds).
N_TASKS = 500
SEED = 1
COORDINATOR_INTERVAL = "100us"
COORD = f"coordinator_interval={COORDINATOR_INTERVAL}"
#: Loss recovery of every scheme but pFabric: SACK blocks and SACK-based recovery (RFC 2018, RFC 6675) instead of
#: NewReno's one hole per round trip and a timeout's go-back-N, spurious timeouts undone (RFC 3522/4015, with the
#: engine's timestamps), the engine's 10 ms timer floor. pFabric keeps its own (pFabric 4.2).
RECOVERY = "sack=on,rto_undo=on,min_rto=10ms,initial_rto=10ms"


def recovering(opt: str | None) -> str:
    """Packet options ``opt`` with the common loss recovery (``RECOVERY``) first."""
    return RECOVERY if opt is None else f"{RECOVERY},{opt}"


SIZES = ("bing", "analytics", "uniform")
#: label -> (flow-level spec, packet-level spec, packet options)
SCHEMES = {
    "fair": ("fair", "rcp", RECOVERY),
    "srpt": ("srpt", "pfabric", None),
    "stf": ("stf", "stf", recovering(COORD)),
    "fifo": ("fifo", "fifo", recovering(COORD)),
    "fifo-lm": ("fifo-lm:threshold=p80", "fifo-lm:threshold=p80", RECOVERY),
    "baraat": ("baraat:threshold=p80;vc=0.5", "baraat:threshold=p80;vc=0.5", RECOVERY),
    "baraat vc=0": ("baraat:threshold=p80", "baraat:threshold=p80", RECOVERY),
}
PACKET_NAME = {"fair": "RCP transport", "srpt": "pFabric", "stf": "coordinator", "fifo": "coordinator",
               "fifo-lm": "host policy, DCTCP", "baraat": "host policy + SPC", "baraat vc=0": "host policy + SPC"}
#: Baraat's held flows ask every interval, as every flow did before issue 34's headers on data packets
#: (the paper: the exchange "is repeated once every round trip time").
HELD_EVERY_RTT = "spc_probe_max=0"
#: One change each, packet level, every workload: label -> (spec, packet options).
KNOBS = {
    "fair, no loss": ("rcp", "buffer=inf"),
    "baraat, no loss": ("baraat:threshold=p80;vc=0.5", "buffer=inf"),
    "baraat, rtt=1ms": ("baraat:threshold=p80;vc=0.5;rtt=1ms", None),
    "baraat, every rtt": ("baraat:threshold=p80;vc=0.5", HELD_EVERY_RTT),
    "baraat, alone": ("baraat:threshold=p80;vc=0.5", "spc_header=alone"),
    "fifo, 20us": ("fifo", "coordinator_interval=20us"),
}
#: More, kept apart (``baraat-packet-knobs.pkl``): without loss and, for RCP, without timeouts.
MORE_KNOBS = {
    "fifo, no loss": ("fifo", f"{COORD},buffer=inf"),
    "fair, no loss, no timeout": ("rcp", "buffer=inf,min_rto=200ms,initial_rto=200ms"),
    "baraat, alone, no loss": ("baraat:threshold=p80;vc=0.5", "spc_header=alone,buffer=inf"),
}
#: Baraat without loss (``buffer=inf``) and without virtual capacity against the flow level, split
#: (``baraat-packet-split.pkl``):
#: label -> what each run changes from the no-loss run: the packet headers (1 byte, the least the engine
#: takes, for 40), Baraat's own control bytes (none), held flows asking every interval (with no control
#: bytes, so that their requests cost nothing: one change from ``control free``), no spurious
#: timeouts (nothing is lost, so a 200 ms timer only takes those away); the last changes them all.
NO_RTO = "min_rto=200ms,initial_rto=200ms"
SPLIT = {
    "headers 1 byte": "header_bytes=1",
    "control free": "spc_control=free",
    "held every rtt, control free": "spc_probe_max=0,spc_control=free",
    "no timeouts": NO_RTO,
    "all four": f"header_bytes=1,spc_control=free,spc_probe_max=0,{NO_RTO}",
}
SPLIT_BASE = ("baraat:threshold=p80", "buffer=inf")
#: The lossless agreement over seeds (``baraat-packet-agreement.pkl``): the no-loss run without what the flow
#: level leaves out (headers, control bytes, held flows backing off), seeds 1-3 of every workload, pooled;
#: and uniform again with a 10 us interval at both levels (the rounds' timing, below).
AGREE_SEEDS = (1, 2, 3)
AGREE_COSTS_OFF = "buffer=inf,header_bytes=1,spc_control=free,spc_probe_max=0"
AGREE_FINE = ("uniform", "rtt=10us")
#: Fig. 7 (5.1, "Batched Requests"): one client reads 400 KB from each of three servers per task, n
#: tasks at once, 1 Gbit/s, the testbed's 1 ms RTT (250 us per host link).
FIG7_TASKS = (1, 2, 4, 8)
FIG7_KNOBS = "buffer=1MB,host_link_delay=250us"
#: Fig. 7 at packet level, split (``baraat-packet-fig7-split.pkl``): label -> (Baraat's spec, what the run
#: changes from ``FIG7_KNOBS``). ``rtt 4 us`` keeps Baraat's 1 ms interval; the next run shortens that too.
FIG7_SPLIT = {
    "headers 1 byte": ("baraat:rtt=1ms", "header_bytes=1"),
    "control free": ("baraat:rtt=1ms", "spc_control=free"),
    "rtt 4 us": ("baraat:rtt=1ms", "host_link_delay=1us"),
    "all three": ("baraat:rtt=1ms", "header_bytes=1,spc_control=free,host_link_delay=1us"),
    "rtt 4 us, interval 100 us": ("baraat:rtt=100us", "host_link_delay=1us"),
}
#: The three-task micro-benchmark of FIFO-LM's multiplexing: (bytes, arrival ms) from hosts 1-3 into
#: host 0 of a 1 Gbit/s switch; heavy from 2 MB.
THREE = ((5_000_000, 0.0), (1_000_000, 1.0), (1_000_000, 2.0))
THREE_HEAVY = "2MB"
#: The two single-stage settings Baraat 5.2 leaves open (docs/workloads.md, ``baraat``): who
#: aggregates ("the aggregator queries all other nodes in the rack") and how a task's bytes split over
#: its flows (Fig. 2 gives task sizes). The page's runs take the first choice of each; label ->
#: the generator parameters a run changes.
SETTINGS = {
    "one aggregator per rack": {"aggregators": "rack"},
    "flow sizes +-50% in a task": {"flow_spread": 0.5},
    "both": {"aggregators": "rack", "flow_spread": 0.5},
}
#: The schemes of Figs. 8-9 run under each setting (``SCHEMES``' labels).
SETTING_SCHEMES = ("baraat", "srpt", "fair", "fifo", "stf")
#: Say each run and its CPU time on stderr.
VERBOSE = False


def table4_workload(sizes: str, **extra: Any) -> tuple[coflowkit.Workload, str]:
    """table4.toml's workload (its generator, preset and tree) with ``N_TASKS`` tasks and the generator
    parameters ``extra``, and its tree."""
    exp = load_experiment(HERE / "table4.toml")
    params = {**exp.workload["params"], "n_tasks": N_TASKS, "sizes": sizes, "seed": SEED, **extra}
    return coflowkit.generate(exp.workload["generator"], preset=exp.workload["preset"], **params), exp.topology


def run_packet(w, spec: str, topology: str, packet: str | None) -> dict[str, Any]:
    """One packet-level run: its CCTs (s), drops, timeouts and CPU seconds."""
    t0 = time.process_time()
    res = coflowkit.simulate(w, spec, engine="packet", progress=False, per_flow=True, topology=topology,
                             packet=packet)
    name = res.metrics().scheduler.iloc[0]
    fl = res.flows(name)
    out = {"cct": res.coflows(name).sort_values("coflow_id")["cct_s"].to_numpy(),
           "drops": int(fl["drops"].sum()), "timeouts": int(fl["timeouts"].sum()),
           "cpu_s": time.process_time() - t0}
    if VERBOSE:
        print(f"  {spec} {packet or ''}: {out['cpu_s']:.1f} s CPU", file=sys.stderr)
    return out


def figs8_9() -> pd.DataFrame:
    """Per (sizes, label, level): the CCTs and the run's counters; knob runs as level 'knob'."""
    rows = []
    for sizes in SIZES:
        w, topo = table4_workload(sizes)
        flow = coflowkit.simulate(w, [f for f, _, _ in SCHEMES.values()], progress=False, topology=topo)
        for label, (f, p, opt) in SCHEMES.items():
            rows.append({"sizes": sizes, "label": label, "level": "flow",
                         "cct": flow.coflows(f).sort_values("coflow_id")["cct_s"].to_numpy()})
            rows.append({"sizes": sizes, "label": label, "level": "packet", **run_packet(w, p, topo, opt)})
        for label, (p, opt) in KNOBS.items():
            rows.append({"sizes": sizes, "label": label, "level": "knob", **run_packet(w, p, topo, recovering(opt))})
    return pd.DataFrame(rows)


def settings() -> pd.DataFrame:
    """``SETTINGS``: per (sizes, setting, label, level) the CCTs of ``SETTING_SCHEMES`` at flow and
    packet level on the setting's workload."""
    rows = []
    for sizes in SIZES:
        for name, extra in SETTINGS.items():
            w, topo = table4_workload(sizes, **extra)
            specs = {lab: SCHEMES[lab] for lab in SETTING_SCHEMES}
            flow = coflowkit.simulate(w, [f for f, _, _ in specs.values()], progress=False, topology=topo)
            for lab, (f, p, opt) in specs.items():
                rows.append({"sizes": sizes, "setting": name, "label": lab, "level": "flow",
                             "cct": flow.coflows(f).sort_values("coflow_id")["cct_s"].to_numpy()})
                rows.append({"sizes": sizes, "setting": name, "label": lab, "level": "packet",
                             **run_packet(w, p, topo, opt)})
    return pd.DataFrame(rows)


def _client_reads(n: int) -> coflowkit.Workload:
    flows = [(i + 1, 0, s, 0, 400_000) for i in range(n) for s in (1, 2, 3)]
    return _workload(flows, n_hosts=4)


def _workload(flows: list[tuple[int, int, int, int, int]], n_hosts: int) -> coflowkit.Workload:
    """Flows (coflow id, arrival ns, src, dst, bytes) as a workload."""
    cols = list(zip(*flows))
    return coflowkit._core.workload_from_columns(
        coflow_id=np.array(cols[0], np.uint64), arrival_ns=np.array(cols[1], np.uint64),
        src=np.array(cols[2], np.uint32), dst=np.array(cols[3], np.uint32), bytes=np.array(cols[4], np.uint64),
        n_hosts=n_hosts, source="baraat micro-benchmark")


def fig7() -> pd.DataFrame:
    """Mean TCT (ms) of n batched client reads: baraat (rtt=1ms) and RCP, both levels, and DCTCP."""
    rows = []
    topo = "bigswitch:hosts=4,rate=1Gbps"
    for n in FIG7_TASKS:
        w = _client_reads(n)
        flow = coflowkit.simulate(w, ["baraat:rtt=1ms", "fair"], progress=False, topology=topo)
        row = {"n": n, "baraat_flow": flow.coflows("baraat:rtt=1ms")["cct_s"].mean() * 1e3,
               "fair_flow": flow.coflows("fair")["cct_s"].mean() * 1e3}
        for key, spec in (("baraat", "baraat:rtt=1ms"), ("rcp", "rcp"), ("dctcp", "dctcp")):
            row[f"{key}_pkt"] = run_packet(w, spec, topo, FIG7_KNOBS)["cct"].mean() * 1e3
        rows.append(row)
    return pd.DataFrame(rows)


def split() -> pd.DataFrame:
    """``SPLIT``: Baraat's no-loss run and each change from it, every workload of Figs. 8-9, with the
    flow level's p95 beside them (``level`` 'split')."""
    rows = []
    spec, base = SPLIT_BASE
    for sizes in SIZES:
        w, topo = table4_workload(sizes)
        for label, opt in {"no loss": None, **SPLIT}.items():
            rows.append({"sizes": sizes, "label": label, "level": "split",
                         **run_packet(w, spec, topo, recovering(base if opt is None else f"{base},{opt}"))})
    return pd.DataFrame(rows)


def agreement() -> pd.DataFrame:
    """Per (sizes, interval, seed): the TCTs (s) of Baraat without virtual capacity at flow level and at
    packet level without loss and without the costs the flow level leaves out (``AGREE_COSTS_OFF``)."""
    rows = []
    cases = [(z, None) for z in SIZES] + [(AGREE_FINE[0], AGREE_FINE[1])]
    for sizes, extra in cases:
        spec = SPLIT_BASE[0] if extra is None else f"{SPLIT_BASE[0]};{extra}"
        for seed in AGREE_SEEDS:
            w, topo = table4_workload(sizes, seed=seed)
            fl = coflowkit.simulate(w, spec, progress=False, topology=topo)
            flow = fl.coflows(fl.metrics().scheduler.iloc[0]).sort_values("coflow_id")["cct_s"].to_numpy()
            pkt = run_packet(w, spec, topo, recovering(AGREE_COSTS_OFF))
            rows.append({"sizes": sizes, "interval": extra or "rtt=100us", "seed": seed, "flow": flow,
                         "packet": pkt["cct"], "timeouts": pkt["timeouts"]})
    return pd.DataFrame(rows)


def _tasks(g: pd.DataFrame) -> tuple[np.ndarray, np.ndarray]:
    """The flow and packet TCTs of :func:`agreement`'s rows ``g``, every seed's tasks together."""
    return np.concatenate(list(g["flow"])), np.concatenate(list(g["packet"]))


def _gap(flow: np.ndarray, packet: np.ndarray, st: str) -> float:
    """The packet level's statistic ``st`` (mean or p95) against the flow level's, as a fraction."""
    return _stat(packet, st) / _stat(flow, st) - 1


def _pooled(ag: pd.DataFrame, sizes: str, interval: str, st: str) -> float:
    """:func:`_gap` over every seed's tasks of ``sizes`` at ``interval``."""
    return _gap(*_tasks(ag[(ag["sizes"] == sizes) & (ag["interval"] == interval)]), st)


def render_agreement(ag: pd.DataFrame) -> str:
    """The lossless agreement's table, packet against flow level per seed and pooled, and what it shows."""
    import measures as rg  # the page's helpers

    def cell(flow: np.ndarray, packet: np.ndarray) -> str:
        return f"{_gap(flow, packet, 'mean'):+.1%} / {_gap(flow, packet, 'p95'):+.1%}"

    rows = []
    for (sizes, interval), g in ag.groupby(["sizes", "interval"], sort=False):
        f, q = _tasks(g)
        rows.append([rg.SIZES[sizes], f"`{interval}`", f"{1e3 * f.mean():.1f} / {1e3 * _stat(f, 'p95'):.1f}",
                     *(cell(r["flow"], r["packet"]) for _, r in g.iterrows()), cell(f, q)])
    seeds = [f"seed {s}" for s in AGREE_SEEDS]
    return (f"\n**Baraat without loss against the flow level, over seeds** (`{SPLIT_BASE[0]}` at both levels, "
            f"packet level `{AGREE_COSTS_OFF}`: no loss, and none of the costs the flow level leaves out; "
            f"{N_TASKS} tasks per seed; the packet level's mean / p95 TCT against the flow level's, per seed and "
            f"over the {len(AGREE_SEEDS) * N_TASKS:,} tasks together):\n\n"
            + rg.table(["workload", "interval", "flow level mean / p95 (ms)", *seeds, "pooled"], rows)
            + "\n\n" + AGREE_NOTE.format(**{f"{z}_{st}": 100 * _pooled(ag, z, "rtt=100us", st)
                                          for z in SIZES for st in ("mean", "p95")},
                                       fine_mean=100 * _pooled(ag, AGREE_FINE[0], AGREE_FINE[1], "mean"),
                                       fine_p95=100 * _pooled(ag, AGREE_FINE[0], AGREE_FINE[1], "p95")))


AGREE_NOTE = """Over three seeds the packet level's mean / p95 is {bing_mean:+.1f}% / {bing_p95:+.1f}% off the flow level's on Bing,
{analytics_mean:+.1f}% / {analytics_p95:+.1f}% on analytics and {uniform_mean:+.1f}% / {uniform_p95:+.1f}% on uniform; one seed's p95 (the 25th
longest of 500 tasks) moves by several percent with the draw. Uniform's packet-level p95 stays below
the flow level's on every seed; with a 10 us interval at both levels the pooled gap is
{fine_mean:+.1f}% / {fine_p95:+.1f}%: the rest is in how each level times Baraat's rounds. The flow level starts every
flow's round at the instants k x rtt (a flow that starts waits for the next one to ask, a flow that ends
leaves its rate idle until then: `crates/sched/src/baraat/mod.rs`), while at packet level each flow's request reaches
the switch when it was sent, so a port hands a finished flow's bandwidth on within the interval. The
paper's Algorithm 1 is per request, as the packet level runs it; the flow level's shared round boundary is
its discretisation.
"""


def fig7_split() -> pd.DataFrame:
    """``FIG7_SPLIT``: Baraat's mean TCT (ms) at packet level on Fig. 7's n tasks, per change, and the
    flow level's with a 100 us interval (``flow 100us``)."""
    rows = []
    topo = "bigswitch:hosts=4,rate=1Gbps"
    for n in FIG7_TASKS:
        w = _client_reads(n)
        row: dict[str, Any] = {"n": n}
        for label, (spec, opt) in FIG7_SPLIT.items():
            row[label] = run_packet(w, spec, topo, f"{FIG7_KNOBS},{opt}")["cct"].mean() * 1e3
        flow = coflowkit.simulate(w, "baraat:rtt=100us", progress=False, topology=topo)
        row["flow 100us"] = flow.coflows("baraat:rtt=100us")["cct_s"].mean() * 1e3
        rows.append(row)
    return pd.DataFrame(rows)


def three_tasks() -> pd.DataFrame:
    """Each task's completion time after its arrival (ms), both levels: baraat with the heavy
    threshold, baraat as FIFO (never heavy), fair sharing (flow `fair`, packet DCTCP)."""
    flows = [(i + 1, int(at * 1e6), i + 1, 0, b) for i, (b, at) in enumerate(THREE)]
    w = _workload(flows, n_hosts=4)
    topo = "bigswitch:hosts=4,rate=1Gbps"
    cases = {f"baraat, heavy from {THREE_HEAVY}": (f"baraat:threshold={THREE_HEAVY}",) * 2,
             f"fifo-lm, heavy from {THREE_HEAVY}": (f"fifo-lm:threshold={THREE_HEAVY}",) * 2,
             "baraat, never heavy (FIFO)": ("baraat:threshold=inf",) * 2,
             "fair sharing (packet: DCTCP)": ("fair", "dctcp")}
    flow = coflowkit.simulate(w, [f for f, _ in cases.values()], progress=False, topology=topo)
    rows = []
    for label, (f, p) in cases.items():
        pk = run_packet(w, p, topo, "buffer=1MB")["cct"] * 1e3
        rows.append({"case": label, "flow": flow.coflows(f).sort_values("coflow_id")["cct_s"].to_numpy() * 1e3,
                     "packet": pk})
    return pd.DataFrame(rows)


# -- the page's section ---------------------------------------------------------------------------

STATS = {"median": 0.5, "p95": 0.95, "p99": 0.99}
#: Packet and flow level differ notably when one CCT ratio is more than this factor of the other.
DIFFER = 1.25


def _get(fig: pd.DataFrame, sizes: str, label: str, level: str) -> pd.Series:
    g = fig[(fig["sizes"] == sizes) & (fig["label"] == label) & (fig["level"] == level)]
    return g.iloc[0]


def reduction(fig: pd.DataFrame, sizes: str, other: str, s: str, level: str, ours: str = "baraat") -> float:
    """1 - ours' statistic / the other's, %."""
    a = _get(fig, sizes, ours, "knob" if "," in ours else level)["cct"]
    b = _get(fig, sizes, other, level)["cct"]
    return 100.0 * (1.0 - np.quantile(a, STATS[s]) / np.quantile(b, STATS[s]))


def _differ(flow_red: float, pkt_red: float) -> bool:
    """The two reductions, as CCT ratios (1 - r), more than DIFFER apart."""
    a, b = 1 - flow_red / 100, 1 - pkt_red / 100
    return a <= 0 or b <= 0 or max(a / b, b / a) > DIFFER


def render(fig: pd.DataFrame, f7: pd.DataFrame, three: pd.DataFrame, control: dict[str, float], seconds: float,
           sp: pd.DataFrame, f7s: pd.DataFrame, sets: pd.DataFrame, ag: pd.DataFrame, alone: bool = False) -> str:
    """The page's packet-level section; ``sp``, ``f7s``, ``sets`` and ``ag`` are :func:`split`'s,
    :func:`fig7_split`'s, :func:`settings`' and :func:`agreement`'s. ``alone``: the section is run and spliced into the page
    without the flow-level sections (``regenerate.py --packet-only``), and says so."""
    import measures as rg  # the page's helpers and the paper's Table 4

    out = ["## At packet level (issue 34)\n"]
    cpu = fig[fig["level"] != "flow"]["cpu_s"].sum()
    out.append(INTRO.format(n=N_TASKS, seed=SEED, interval=COORDINATOR_INTERVAL, seconds=seconds, cpu=cpu,
                            recovery=RECOVERY))
    if alone:
        out.append(ALONE)
    out.append("### Figs. 8-9 (Table 4) at packet level\n")
    out.append(f"Reductions with Baraat (`baraat:vc=0.5`) relative to each policy, median / p95 / p99, on "
               f"{N_TASKS} tasks per workload; flow level and packet level on the same tasks. `*`: flow and "
               f"packet differ by more than {DIFFER:g}x as CCT ratios, with the letter of the side whose statistic "
               f"moved by more than {DIFFER:g}x between levels (the causes below).\n")
    rows = []
    for o in rg.TABLE4:
        for sizes in SIZES:
            flow = [reduction(fig, sizes, o, s, "flow") for s in STATS]
            pkt = [reduction(fig, sizes, o, s, "packet") for s in STATS]
            mark = [f"{rg.pc(p)}{_cause(fig, sizes, o, s) if _differ(f, p) else ''}"
                    for f, p, s in zip(flow, pkt, STATS)]
            rows.append([rg.POLICY[o], rg.SIZES[sizes], " / ".join(f"{p}%" for p in rg.TABLE4[o][sizes]),
                         " / ".join(rg.pc(v) for v in flow), " / ".join(mark)])
    out.append(rg.table(["relative to", "workload", "paper", "flow level", "packet level"], rows))
    out.append(f"\n![p95 reductions at packet level]({figure(fig)})\n\n*Figs. 8-9 at packet level (ours): p95 TCT "
               "reduction with Baraat against each policy: the paper's, flow level and packet level on the same "
               "tasks, and the packet level with `rtt=1ms`.*\n")
    out.append("\nTask completion times (ms), flow / packet (mean, p95, p99), and each packet run's drops and "
               "timeouts:\n")
    rows = []
    for sizes in SIZES:
        for label in SCHEMES:
            f, p = _get(fig, sizes, label, "flow")["cct"], _get(fig, sizes, label, "packet")
            cells = [f"{1e3 * _stat(f, s):.1f} / {1e3 * _stat(p['cct'], s):.1f}" for s in ("mean", "p95", "p99")]
            rows.append([rg.SIZES[sizes], f"`{label}` ({PACKET_NAME[label]})"] + cells
                        + [f"{int(p['drops'])} / {int(p['timeouts'])}"])
    out.append(rg.table(["workload", "scheduler (packet level)", "mean", "p95", "p99", "drops / timeouts"], rows))
    out.append("\n**Knob runs** (packet level, one change each; p95 TCT in ms, drops / timeouts):\n")
    rows = []
    for sizes in SIZES:
        cells = []
        for label, base in (("fair, no loss", "fair"), ("fair, no loss, no timeout", "fair"),
                            ("fifo, 20us", "fifo"), ("fifo, no loss", "fifo"),
                            ("baraat, no loss", "baraat"), ("baraat, rtt=1ms", "baraat"),
                            ("baraat, every rtt", "baraat"), ("baraat, alone", "baraat")):
            k, b = _get(fig, sizes, label, "knob"), _get(fig, sizes, base, "packet")
            cells.append(f"{1e3 * _stat(b['cct'], 'p95'):.0f} -> {1e3 * _stat(k['cct'], 'p95'):.0f} "
                         f"({int(k['drops'])}/{int(k['timeouts'])})")
        rows.append([rg.SIZES[sizes]] + cells)
    out.append(rg.table(["workload", "RCP: no loss", "RCP: no loss, no RTO", "fifo: every 20us",
                         "fifo: no loss", "baraat: no loss", "baraat: rtt=1ms", "baraat: held ask every rtt",
                         "baraat: requests alone"], rows))
    out.append("\n**Baraat without loss against the flow level, split** (`baraat:threshold=p80`, no virtual "
               "capacity, at both levels; packet level, p95 and mean TCT in ms, in "
               "brackets the share of the no-loss run's gap to the flow level that the change closes, and the run's "
               "timeouts; each "
               "run changes one thing from the no-loss run, `buffer=inf`: headers of 1 byte for 40 (`header_bytes=1`), "
               "no bytes for Baraat's requests, echoes and headers (`spc_control=free`), held flows asking every "
               "interval (`spc_probe_max=0`, with `spc_control=free`: one change from the column before it), a 200 ms "
               "timer (`min_rto`, `initial_rto`: nothing is lost, so it takes away only spurious timeouts); "
               "the last all four):\n")
    rows = []
    for sizes in SIZES:
        for st in ("p95", "mean"):
            flow = 1e3 * _stat(_get(fig, sizes, "baraat vc=0", "flow")["cct"], st)
            nl = _split_stat(sp, sizes, "no loss", st)
            cells = [f"{v:.1f} ({100 * (nl - v) / (nl - flow):.0f}%)"
                     for v in (_split_stat(sp, sizes, k, st) for k in SPLIT)]
            rows.append([rg.SIZES[sizes], st, f"{flow:.1f}", f"{nl:.1f}"] + cells)
        rows.append([rg.SIZES[sizes], "timeouts", "", str(_split_timeouts(sp, sizes, "no loss"))]
                    + [str(_split_timeouts(sp, sizes, k)) for k in SPLIT])
    out.append(rg.table(["workload", "", "flow level", "no loss", *SPLIT], rows))
    out.append(render_agreement(ag))
    within = sum(not rg.gap(p, reduction(fig, z, o, st, "packet"))
                 for o in rg.TABLE4 for z in SIZES for p, st in zip(rg.TABLE4[o][z], STATS))
    out.append("\n" + FIGS_NOTE.format(**_numbers(fig), **control, **_split_numbers(fig, sp), within=within))
    out.append(render_settings(fig, sets))
    out.append("### Fig. 7 at packet level: batched requests\n")
    out.append("One client reads 400 KB from each of three servers per task, `n` tasks at once, on a 1 Gbit/s "
               f"switch with the testbed's 1 ms RTT (`{FIG7_KNOBS}`; Baraat's `rtt=1ms`). Mean TCT (ms):\n")
    rows = []
    for _, r in f7.iterrows():
        rows.append([f"{int(r['n'])}", f"{r['baraat_flow']:.1f} / {r['baraat_pkt']:.1f}",
                     f"{r['fair_flow']:.1f} / {r['rcp_pkt']:.1f}", f"{r['dctcp_pkt']:.1f}",
                     f"{100 * (1 - r['baraat_flow'] / r['fair_flow']):.0f}% / {100 * (1 - r['baraat_pkt'] / r['rcp_pkt']):.0f}%"])
    out.append(rg.table(["tasks", "baraat, flow / packet", "fair (flow) / RCP (packet)", "DCTCP (packet)",
                         "baraat's reduction, flow / packet"], rows))
    out.append("\nBaraat's mean TCT at packet level (ms), one change each from the runs above (the last all three):\n")
    g = f7.set_index("n")
    rows = [[f"{int(r['n'])}", f"{g.loc[r['n'], 'baraat_flow']:.1f}", f"{g.loc[r['n'], 'baraat_pkt']:.1f}"]
            + [f"{r[k]:.1f}" for k in [*FIG7_SPLIT, "flow 100us"]] for _, r in f7s.iterrows()]
    out.append(rg.table(["tasks", "flow level", "packet level", "headers 1 byte", "control free", "rtt 4 us",
                         "all three", "rtt 4 us, interval 100 us", "flow level, interval 100 us"], rows))
    out.append("\n" + FIG7_NOTE.format(**_fig7_numbers(f7, f7s)))
    out.append("### FIFO-LM's multiplexing: three tasks\n")
    out.append("Task A (5 MB from host 1) at 0, B (1 MB from host 2) at 1 ms, C (1 MB from host 3) at 2 ms, all "
               f"into host 0 of a 1 Gbit/s switch (`buffer=1MB`), heavy from {THREE_HEAVY}. Each task's "
               "completion time after its arrival (ms), A, B, C:\n")
    rows = [[r["case"], ", ".join(f"{v:.1f}" for v in r["flow"]), ", ".join(f"{v:.1f}" for v in r["packet"])]
            for _, r in three.iterrows()]
    out.append(rg.table(["case", "flow level", "packet level"], rows))
    out.append("\n" + THREE_NOTE)
    out.append("### Headline numbers: paper, flow level, packet level\n")
    out.append(f"p95 TCT reductions with Baraat ({N_TASKS} tasks per workload, both levels on the same tasks; "
               "the testbed cannot run `baraat`: no switch answers its requests):\n")
    rows = []
    for o, what in (("srpt", "Fig. 8"), ("fair", "Fig. 8"), ("fifo", "Fig. 9"), ("stf", "Fig. 9")):
        for sizes in SIZES:
            if o in ("fifo", "stf") and sizes == "uniform":
                continue
            rows.append([f"{what}: against {rg.POLICY[o]}, {rg.SIZES[sizes]}", f"{rg.TABLE4[o][sizes][1]}%",
                         rg.pc(reduction(fig, sizes, o, "p95", "flow")),
                         rg.pc(reduction(fig, sizes, o, "p95", "packet")),
                         rg.pc(reduction(fig, sizes, o, "p95", "packet", ours="baraat, rtt=1ms"))])
    g = f7.set_index("n")
    rows.append(["Fig. 7: one task's completion time", "about 12 ms", f"{g.loc[1, 'baraat_flow']:.1f} ms",
                 f"{g.loc[1, 'baraat_pkt']:.1f} ms", "-"])
    rows.append(["Fig. 7: mean TCT of 8 tasks against RCP", "almost 40%",
                 rg.pc(100 * (1 - g.loc[8, "baraat_flow"] / g.loc[8, "fair_flow"])),
                 rg.pc(100 * (1 - g.loc[8, "baraat_pkt"] / g.loc[8, "rcp_pkt"])), "-"])
    out.append(rg.table(["claim", "paper", "flow level", "packet level", "packet, `rtt=1ms`"], rows))
    return "\n".join(out) + "\n"


def render_settings(fig: pd.DataFrame, sets: pd.DataFrame) -> str:
    """The subsection of Figs. 8-9 under ``SETTINGS``: Baraat's p95 reductions against each scheme at
    both levels, the page's setting first."""
    import measures as rg

    out = ["### Figs. 8-9 under the settings the paper leaves open\n",
           SETTINGS_NOTE.format(n=N_TASKS),
           "p95 TCT reductions with Baraat, flow level / packet level (the paper's in brackets):\n"]
    others = [o for o in rg.TABLE4 if o in SETTING_SCHEMES]
    rows = []
    for sizes in SIZES:
        cells = [f"{rg.pc(reduction(fig, sizes, o, 'p95', 'flow'))} / {rg.pc(reduction(fig, sizes, o, 'p95', 'packet'))}"
                 f" ({rg.TABLE4[o][sizes][1]}%)" for o in others]
        rows.append([rg.SIZES[sizes], "the page's (any host aggregates, one size per task)", *cells])
        for name in SETTINGS:
            g = sets[(sets["sizes"] == sizes) & (sets["setting"] == name)]
            cells = []
            for o in others:
                pair = []
                for level in ("flow", "packet"):
                    ours = g[(g["label"] == "baraat") & (g["level"] == level)].iloc[0]["cct"]
                    oth = g[(g["label"] == o) & (g["level"] == level)].iloc[0]["cct"]
                    pair.append(rg.pc(100.0 * (1.0 - np.quantile(ours, 0.95) / np.quantile(oth, 0.95))))
                cells.append(f"{pair[0]} / {pair[1]} ({rg.TABLE4[o][sizes][1]}%)")
            rows.append([rg.SIZES[sizes], name, *cells])
    out.append(rg.table(["workload", "setting", *(f"against {rg.POLICY[o]}" for o in others)], rows))

    def moved(label: str, setting: str) -> list[float]:
        """Per workload, the packet level's p95 over the flow level's for ``label`` under ``setting``."""
        g = sets[sets["setting"] == setting]
        return [float(np.quantile(g[(g["sizes"] == z) & (g["label"] == label) & (g["level"] == "packet")].iloc[0]["cct"], 0.95)
                      / np.quantile(g[(g["sizes"] == z) & (g["label"] == label) & (g["level"] == "flow")].iloc[0]["cct"], 0.95))
                for z in SIZES]

    rack = "one aggregator per rack"
    ours = moved("baraat", rack)
    rest = [x for o in others for x in moved(o, rack)]
    out.append(f"\nWith one aggregator per rack Baraat's packet-level p95 is "
               f"{', '.join(f'{x:.1f}x' for x in ours)} its flow level's (Bing, analytics, uniform), the other "
               f"schemes' {min(rest):.1f}x to {max(rest):.1f}x: each rack's tasks converge on one of 8 downlinks, "
               "40 flows a task. Why Baraat's packet level parts from its flow level there is not split into causes "
               "yet; the flow level is the paper's model (5.2: a simulator that \"coarsely models\" the fabric).\n")
    return "\n".join(out) + "\n"


def figure(fig: pd.DataFrame) -> str:
    """Draws the p95 reductions (paper, flow, packet, packet with ``rtt=1ms``) beside the flow-level
    figure; returns its path relative to the page."""
    import measures as rg
    from matplotlib.figure import Figure

    f = Figure(figsize=(10, 3.4))
    axes = f.subplots(1, 3, sharey=True)
    others = list(rg.TABLE4)
    x = np.arange(len(others))
    for ax, sizes in zip(axes, SIZES):
        bars = {"paper": [rg.TABLE4[o][sizes][1] for o in others],
                "flow level": [reduction(fig, sizes, o, "p95", "flow") for o in others],
                "packet level": [reduction(fig, sizes, o, "p95", "packet") for o in others],
                "packet, rtt=1ms": [reduction(fig, sizes, o, "p95", "packet", ours="baraat, rtt=1ms")
                                    for o in others]}
        for i, (label, ys) in enumerate(bars.items()):
            ax.bar(x + (i - 1.5) * 0.2, ys, 0.2, label=label)
        ax.set_xticks(x, ["RCP", "pFabric", "STF", "Orchestra"])
        ax.axhline(0, color="k", lw=0.6)
        ax.set_title(rg.SIZES[sizes])
    axes[0].set_ylabel("p95 TCT reduction (%)")
    axes[0].legend(fontsize=7)
    f.tight_layout()
    rg.FIGURES.mkdir(parents=True, exist_ok=True)
    f.savefig(rg.FIGURES / "fig8-9-p95-packet.png", dpi=110)
    return "baraat/fig8-9-p95-packet.png"


def _stat(x: np.ndarray, s: str) -> float:
    return float(np.mean(x)) if s == "mean" else float(np.quantile(x, STATS[s]))


#: The cause letter of a starred cell's side that moved (FIGS_NOTE explains each).
CAUSE = {"baraat": "d", "fair": "a", "srpt": "b", "stf": "c", "fifo": "c"}


def _cause(fig: pd.DataFrame, sizes: str, other: str, s: str) -> str:
    """' *' and the letters of the sides whose statistic moved more than DIFFER between levels."""
    moved = []
    for label in ("baraat", other):
        f = np.quantile(_get(fig, sizes, label, "flow")["cct"], STATS[s])
        p = np.quantile(_get(fig, sizes, label, "packet")["cct"], STATS[s])
        if max(f / p, p / f) > DIFFER:
            moved.append(CAUSE[label])
    return f" *{','.join(moved)}" if moved else " *"


def _numbers(fig: pd.DataFrame) -> dict[str, float]:
    def p95(sizes: str, label: str, level: str) -> float:
        return 1e3 * _stat(_get(fig, sizes, label, level)["cct"], "p95")

    out: dict[str, float] = {}
    for sizes in SIZES:
        for label in ("fair", "srpt", "fifo", "stf", "fifo-lm", "baraat", "baraat vc=0"):
            out[f"{sizes}_{label.replace(' ', '_').replace('=', '')}_pkt"] = p95(sizes, label, "packet")
            out[f"{sizes}_{label.replace(' ', '_').replace('=', '')}_flow"] = p95(sizes, label, "flow")
        for knob in [*KNOBS, *MORE_KNOBS]:
            key = knob.replace(", ", "_").replace(" ", "_").replace("=", "")
            out[f"{sizes}_{key}"] = p95(sizes, knob, "knob")
        out[f"{sizes}_baraat_x"] = out[f"{sizes}_baraat_pkt"] / out[f"{sizes}_baraat_flow"]
        out[f"{sizes}_baraat_x1ms"] = out[f"{sizes}_baraat_rtt1ms"] / out[f"{sizes}_baraat_flow"]
        out[f"{sizes}_baraat_drops"] = float(_get(fig, sizes, "baraat", "packet")["drops"])
        out[f"{sizes}_baraat_alone_drops"] = float(_get(fig, sizes, "baraat, alone", "knob")["drops"])
        out[f"{sizes}_baraat_vc0_drops"] = float(_get(fig, sizes, "baraat vc=0", "packet")["drops"])
        out[f"{sizes}_baraat_xnl"] = out[f"{sizes}_baraat_no_loss"] / out[f"{sizes}_baraat_flow"]
        out[f"{sizes}_red_fifo_pkt"] = reduction(fig, sizes, "fifo", "p95", "packet")
        out[f"{sizes}_red_fair_pkt"] = reduction(fig, sizes, "fair", "p95", "packet")
        out[f"{sizes}_red_srpt_pkt"] = reduction(fig, sizes, "srpt", "p95", "packet")
    return out


def _split_stat(sp: pd.DataFrame, sizes: str, label: str, st: str = "p95") -> float:
    """Statistic ``st`` of the TCTs (ms) of ``split``'s run ``label`` on ``sizes``."""
    g = sp[(sp["sizes"] == sizes) & (sp["label"] == label)]
    return 1e3 * _stat(g.iloc[0]["cct"], st)


def _split_numbers(fig: pd.DataFrame, sp: pd.DataFrame) -> dict[str, float]:
    """Per workload and ``split`` run: ``{sizes}_sp_{key}`` its p95 (ms), ``{sizes}_sh_{key}`` the share of
    the no-loss run's gap to the flow level it closes (%), ``{sizes}_to_{key}`` its timeouts."""
    out: dict[str, float] = {}
    for sizes in SIZES:
        for st, tag in (("p95", "sh"), ("mean", "mh")):
            flow = 1e3 * _stat(_get(fig, sizes, "baraat vc=0", "flow")["cct"], st)
            nl = _split_stat(sp, sizes, "no loss", st)
            for label in ("no loss", *SPLIT):
                key = label.replace(", ", "_").replace(" ", "_")
                v = _split_stat(sp, sizes, label, st)
                if st == "p95":
                    out[f"{sizes}_sp_{key}"] = v
                    out[f"{sizes}_to_{key}"] = _split_timeouts(sp, sizes, label)
                out[f"{sizes}_{tag}_{key}"] = 100 * (nl - v) / (nl - flow)
        out[f"{sizes}_held"] = (_split_stat(sp, sizes, "held every rtt, control free", "mean")
                                - _split_stat(sp, sizes, "control free", "mean"))
    return out


def _split_timeouts(sp: pd.DataFrame, sizes: str, label: str) -> int:
    g = sp[(sp["sizes"] == sizes) & (sp["label"] == label)]
    return int(g.iloc[0]["timeouts"])


def _fig7_numbers(f7: pd.DataFrame, f7s: pd.DataFrame) -> dict[str, float]:
    """The note's numbers; ``t_*`` the time each task adds (tasks end ``T`` apart: the mean of n is
    ``c + T (n + 1) / 2``, fitted to 1 and 8 tasks), ``one_*`` one task's completion time."""
    g, s = f7.set_index("n"), f7s.set_index("n")

    def per_task(col: pd.Series) -> float:
        return float((col.loc[8] - col.loc[1]) / 3.5)

    t_pkt, t_flow = per_task(g["baraat_pkt"]), per_task(g["baraat_flow"])
    split = {"hdr": "headers 1 byte", "ctl": "control free", "rtt4": "rtt 4 us", "all": "all three",
             "i100": "rtt 4 us, interval 100 us", "f100": "flow 100us"}
    out = {"t_pkt": t_pkt, "t_flow": t_flow, "t_gap": t_pkt - t_flow, "one_flow": g.loc[1, "baraat_flow"]}
    for key, col in split.items():
        out[f"t_{key}"] = per_task(s[col])
        out[f"one_{key}"] = s.loc[1, col]
    for key in ("hdr", "ctl", "rtt4"):
        out[f"dt_{key}"] = t_pkt - out[f"t_{key}"]
        out[f"done_{key}"] = g.loc[1, "baraat_pkt"] - out[f"one_{key}"]
    out["one_gap"] = g.loc[1, "baraat_pkt"] - g.loc[1, "baraat_flow"]
    return out | {"one_pkt": g.loc[1, "baraat_pkt"], "one_rcp": g.loc[1, "rcp_pkt"],
            "red8_pkt": 100 * (1 - g.loc[8, "baraat_pkt"] / g.loc[8, "rcp_pkt"]),
            "red8_flow": 100 * (1 - g.loc[8, "baraat_flow"] / g.loc[8, "fair_flow"]),
            "red8_dctcp": 100 * (1 - g.loc[8, "baraat_pkt"] / g.loc[8, "dctcp_pkt"])}


#: Said when the section was rerun without the sections above (``regenerate.py --packet-only``).
ALONE = """**This section was rerun alone** (`regenerate.py --packet-only`) after `baraat` changed: a task's size
at a link is now the bytes its flows send through it (`task_size=sent`, the default; before, the ARs granted
there, `task_size=granted`), an idle port's virtual capacity returns to its link's capacity, and every
scheme but pFabric recovers losses alike. Sections 1-5 above are read from the result stores of the last
full `make repro-baraat`, made before these changes: their `baraat` columns are `task_size=granted`'s until
the next full run. Every number of this section, its flow level included, is today's code.
"""

INTRO = """Every case here runs twice on one workload: at flow level (exact max-min rates) and at packet
level (docs/packet-engine.md: 8 strict-priority queues per port, 170 KB switch buffers, unbounded host NIC
queues). Every scheme but pFabric recovers losses alike (`{recovery}`: SACK, spurious timeouts undone, a 10 ms
minimum RTO); pFabric keeps its own (a fixed timeout of a few round trips, pFabric 4.2). Figs. 8-9 use `table4.toml`'s workload and tree (2 pods x 4
racks x 40 hosts, 2:1 at the ToR, single-stage tasks at load 0.8) with {n} tasks per workload and one
seed ({seed}), not 2,000 and two: the packet-level column is on these tasks, and so is the flow-level
column beside it (the tables above are the larger flow-level runs). Schedulers at packet level (`coflowkit
schedulers --engine packet`): `baraat` by its host policy with Smart Priority Classes and Algorithm 1
at every port (`sched::host::baraat`, `crates/packet/src/spc.rs`); `fifo-lm` by its host policy over
DCTCP (7 classes by task age, heavy tasks in the last); RCP (`fair`) as the RCP transport; pFabric
(`srpt`) as pFabric's transport and queues; Orchestra (`fifo`) and `stf`, which have no host policy,
through the coordinator every {interval} (the flow-level scheduler on acknowledged bytes, its rates
paced at the hosts over DCTCP). Generated with the rest by `make repro-baraat`
(`examples/reproductions/baraat/packet.py`, {seconds:.0f} s of wall time for the packet part on the
shared 2 cores, {cpu:.0f} s of CPU for the Figs. 8-9 runs); `python examples/reproductions/baraat/packet.py`
alone prints the tables.
"""

FIGS_NOTE = """**Packet level against flow level, and why** (the letters of the starred cells; each
measured by the knob runs above, which change one thing each):

- (d) **Baraat's packet model: the SPC header, and losses.** Issue 34's first wiring sent every
  flow's request and echo as packets of their own, one each per 100 us interval, held flows
  included: 52% of the bytes on the uniform run's host downlinks (where the aggregators receive)
  were not data, and Baraat's p95 was 2.6-6.8x its flow-level model's, behind every scheme. Now a
  sending flow's request rides on its next data packet and the switches' answer on that packet's
  ACK (4.3, Fig. 6a), and a flow held at AR 0, which has no data to carry it, asks alone: after an
  interval while its least NR is above 0, and, while that is 0 too (the tasks above it take its
  ports), after 1, 2, 4, ... intervals, at most 1 ms (`spc_probe_max`; docs/packet-engine.md). On
  the uniform run {ctl:.0%} of the downlink bytes are not data ({ctl_rtt1ms:.0%} with `rtt=1ms`).
  A flow's FIN, which returns its rates behind its last data, went in queue 0 and could overtake
  that data: the next port dropped the task, and the data waited in queue 7 behind every later task
  until its timer fired (tasks 22 ms late on Fig. 7 with 100 us intervals); it now queues with its
  data (docs/packet-engine.md). Baraat's p95 is {bing_baraat_pkt:.0f} against {bing_baraat_flow:.0f} ms on Bing, {analytics_baraat_pkt:.0f} against {analytics_baraat_flow:.0f} on analytics and
  {uniform_baraat_pkt:.0f} against {uniform_baraat_flow:.0f} on uniform tasks ({bing_baraat_x:.1f}x, {analytics_baraat_x:.1f}x and {uniform_baraat_x:.1f}x). What is left,
  by knob runs:
  - **The held flows' requests** were most of the old cost: with held flows asking every interval
    (`spc_probe_max=0`, the paper's "repeated once every round trip time") the control share is
    {ctl_every_rtt:.0%} and the p95 {bing_baraat_every_rtt:.0f}, {analytics_baraat_every_rtt:.0f} and {uniform_baraat_every_rtt:.0f} ms, as before. With the back-off but every request
    alone (`spc_header=alone`) it is {bing_baraat_alone:.0f}, {analytics_baraat_alone:.0f} and {uniform_baraat_alone:.0f} ms, a little below the data packets': without loss
    the data packets do save (p95 {bing_baraat_alone_no_loss:.0f}, {analytics_baraat_alone_no_loss:.0f} and {uniform_baraat_alone_no_loss:.0f} ms alone against {bing_baraat_no_loss:.0f}, {analytics_baraat_no_loss:.0f} and {uniform_baraat_no_loss:.0f} on data
    packets, both with `buffer=inf`; {ctl_alone:.0%} of the uniform run's downlink bytes are control
    alone), but with loss the larger control traffic of requests alone comes off the capacity
    Algorithm 1 shares and changes how far the virtual capacity overcommits ({bing_baraat_alone_drops:.0f}, {analytics_baraat_alone_drops:.0f} and {uniform_baraat_alone_drops:.0f} drops
    against {bing_baraat_drops:.0f}, {analytics_baraat_drops:.0f} and {uniform_baraat_drops:.0f}).
  - **Losses**: the virtual capacity (`vc=0.5`: ARs that sum above the
    link) and stale ARs (a flow paces at its last AR until its next answer) overfill ports
    ({bing_baraat_drops:.0f}, {analytics_baraat_drops:.0f} and {uniform_baraat_drops:.0f} drops, and 10 ms timeouts). With no loss (`buffer=inf`) the p95 is
    {bing_baraat_no_loss:.0f}, {analytics_baraat_no_loss:.0f} and {uniform_baraat_no_loss:.0f} ms, {bing_baraat_xnl:.2f}x, {analytics_baraat_xnl:.2f}x and {uniform_baraat_xnl:.2f}x the flow level. Without virtual capacity
    (`baraat vc=0`: {bing_baraat_vc0_drops:.0f}, {analytics_baraat_vc0_drops:.0f} and {uniform_baraat_vc0_drops:.0f} drops) the packet-level p95 is {bing_baraat_vc0_pkt:.0f}, {analytics_baraat_vc0_pkt:.0f} and
    {uniform_baraat_vc0_pkt:.0f} ms (flow level {bing_baraat_vc0_flow:.0f}, {analytics_baraat_vc0_flow:.0f}, {uniform_baraat_vc0_flow:.0f}), against {bing_baraat_pkt:.0f}, {analytics_baraat_pkt:.0f} and {uniform_baraat_pkt:.0f} ms with it.
  - **The rest** (the no-loss runs without virtual capacity, `baraat:threshold=p80`, against its
    flow level), split by the runs of the table "Baraat without loss against the flow level,
    split", one change each (shares of the mean's gap; the p95's in the table). The headers (40
    bytes of 1500) close {bing_mh_headers_1_byte:.0f}%, {analytics_mh_headers_1_byte:.0f}% and {uniform_mh_headers_1_byte:.0f}% of it
    and Baraat's control bytes (requests and echoes alone, the header on data packets and ACKs, whose
    rate the ports take off the capacity Algorithm 1 shares) {bing_mh_control_free:.0f}%, {analytics_mh_control_free:.0f}% and {uniform_mh_control_free:.0f}%: each is a few
    percent of a port, but at load 0.8 the queue of tasks at an aggregator grows with any capacity
    lost. Held flows asking every interval (their requests free, against free requests alone)
    move the mean by {bing_held:+.1f}, {analytics_held:+.1f} and {uniform_held:+.1f} ms.
    Spurious timeouts close {bing_mh_no_timeouts:.0f}%, {analytics_mh_no_timeouts:.0f}% and {uniform_mh_no_timeouts:.0f}% ({bing_to_no_loss:.0f}, {analytics_to_no_loss:.0f} and {uniform_to_no_loss:.0f} timers fire with nothing
    lost: a packet waited 10 ms in a queue). All four together close {bing_mh_all_four:.0f}%,
    {analytics_mh_all_four:.0f}% and {uniform_mh_all_four:.0f}% of the mean's gap and {bing_sh_all_four:.0f}%, {analytics_sh_all_four:.0f}% and {uniform_sh_all_four:.0f}% of the p95's (p95 {bing_sp_all_four:.0f}, {analytics_sp_all_four:.0f} and {uniform_sp_all_four:.0f} ms):
    these are what the flow level leaves out, and with them taken away the two levels run one model
    (on the analytics tasks of single racks, within 5% on the mean and the p95:
    `crates/packet/tests/baraat.rs`). Two faults of the packet model were found splitting this gap
    and are fixed: data waited in a queue per class chosen as it arrived, so a packet queued while
    its task was 8th stayed in the last queue when the tasks before it left, behind newer tasks
    (now one first-come-first-served data queue; the rates order the tasks), and a flow's pacer
    spaced its previous full packet at the small rate its last bytes ask for (1.3 ms; now a lower
    rate paces the packets from the next on). The shares do not add, and the p95 of 500 tasks (the
    25th longest) moves by a few ms with any
    change. The first request's round trip before any data (about 12 us of propagation on this
    tree, and at most one data packet per hop ahead of it in queue 0) is no longer than the flow
    level's wait for its first round (up to 100 us): no cost against it. What is left is the task
    switch, measured on Fig. 7 below: the next task's flows learn that the port is free at their
    next request and their rates converge over requests, where the flow level gives each flow its
    share at the next round's start. With `rtt=1ms` (a tenth of the requests, rates that move 10
    times more slowly) the p95 is {bing_baraat_rtt1ms:.0f}, {analytics_baraat_rtt1ms:.0f} and {uniform_baraat_rtt1ms:.0f} ms.
- (c) **FIFO and STF through a coordinator, over DCTCP.** Each task is a 40-flow incast into its
  aggregator; DCTCP's 10-segment first windows overflow its 170 KB port and flows wait out 10 ms
  RTOs. Deciding every 20 us instead of 100 us changes nothing (p95 {bing_fifo_pkt:.0f} -> {bing_fifo_20us:.0f} ms on
  Bing); with no loss (`buffer=inf`) FIFO's p95 is {bing_fifo_no_loss:.0f}, {analytics_fifo_no_loss:.0f} and {uniform_fifo_no_loss:.0f} ms (with loss
  {bing_fifo_pkt:.0f}, {analytics_fifo_pkt:.0f}, {uniform_fifo_pkt:.0f}; flow level {bing_fifo_flow:.0f}, {analytics_fifo_flow:.0f}, {uniform_fifo_flow:.0f}): without
  drops the windows queue instead, and timeouts remain (a queue of many windows delays ACKs past the
  RTO), so the gap is the incast under a window transport, not the coordinator; it is not split
  further here.
- (a) **RCP.** RCP's flows start at the rate the port last advertised, so 40 flows arriving at once
  overfill the aggregator's port. Without loss and without timeouts (`buffer=inf`, 200 ms RTO) its
  p95 is {uniform_fair_no_loss_no_timeout:.0f} ms on uniform tasks (flow level {uniform_fair_flow:.0f}, with loss {uniform_fair_pkt:.0f}), but
  {bing_fair_no_loss_no_timeout:.0f} on Bing (flow level {bing_fair_flow:.0f}, with loss {bing_fair_pkt:.0f}) and {analytics_fair_no_loss_no_timeout:.0f} on analytics
  ({analytics_fair_flow:.0f}, {analytics_fair_pkt:.0f}): on the workloads with unequal tasks RCP's own rate control (one
  rate per port, converging over round trips, the queue term draining what the start-up built) costs
  it as much as the losses do; not split further. The paper's RCP is an ideal with "no protocol
  overhead", as our flow-level `fair`: against it the flow-level column is the comparable one.
- (b) **pFabric is near its ideal**: p95 {bing_srpt_pkt:.0f} against {bing_srpt_flow:.0f} ms on Bing, {analytics_srpt_pkt:.0f} against
  {analytics_srpt_flow:.0f} on analytics, {uniform_srpt_pkt:.0f} against {uniform_srpt_flow:.0f} on uniform tasks (its drops and timeouts are
  its design: 36 KB buffers, a fixed timeout of a few round trips).

**Against the paper.** At packet level {within} of the 36 Table 4 cells are within 1.5x of the paper's
reduction (as CCT ratios; 2 with the first wiring's header). Where the packet-level Baraat is behind a
policy (the table's negative cells), it is by cause (d): losses under its virtual
capacity first, then its control traffic and task switches, differences of our packet model that
the paper's simulator ("coarsely models", with no loss) does not have. The flow-level column on the
same tasks carries the comparison with the paper (its gaps: section 1).
"""

SETTINGS_NOTE = """Section 5.2 says that "the aggregator queries all other nodes in the rack, so each task
comprises 40 flows", and gives task sizes (Fig. 2), not how a task's bytes split over its flows. The
runs above let any host aggregate (a worker's uplink then carries flows of the tasks of every host of
its rack) and give every flow of a Bing or analytics task one size (per-flow SRPT then serves whole
tasks in order: task-aware by accident). Here the other choices, one at a time and together, on the
same trees, schedulers and {n} tasks (the generator's `aggregators = rack`: one aggregator per rack;
`flow_spread = 0.5`: a task's flow sizes uniform within +-50% of its per-flow size; the uniform
workload draws every flow apart already). The paper's text does not choose between them; the headline
table and the claims table keep the page's choice.
"""

FIG7_NOTE = """One task takes {one_pkt:.1f} ms at packet level, {one_flow:.1f} at flow level (the paper: about 12 ms, 9.6 ms of
transmission plus 2 RTTs; RCP {one_rcp:.1f} ms). By the runs above, which change one thing each: the 1 ms
round trip costs {done_rtt4:.1f} ms of the {one_gap:.1f} more (with 4 us round trips one task takes {one_rtt4:.1f} ms): the
first request's round trip before any data (1 ms), and the three flows' rates converging over round
trips (the first flow's request is granted the whole port, the other two are held until its next
request gives some back, an interval later, and their data reaches the port a round trip after
that); the headers {done_hdr:.1f} ms (9.6 ms of payload are 9.86 on the wire); Baraat's control bytes
{done_ctl:.1f} ms. With 4 us round trips and 100 us intervals one task takes {one_i100:.1f} ms, the flow level
with 100 us rounds {one_f100:.1f} ms.

Each task added adds {t_pkt:.1f} ms at packet level and {t_flow:.1f} at flow level (tasks end that far apart;
fitted as mean = c + T (n + 1) / 2 to 1 and 8 tasks): {t_gap:.1f} ms more per task, of which the round trip
{dt_rtt4:.1f} ms (the next task's flows, held, learn at their next request that the port is free, and
their data reaches it a round trip later), the headers {dt_hdr:.2f} ms and the control bytes
{dt_ctl:.2f} ms. What is left with 4 us round trips, {t_rtt4:.1f} ms per task against the flow level's {t_flow:.1f}
({t_i100:.1f} against {t_f100:.1f} with 100 us intervals and rounds), is the task switch: the next task's
flows ask once per interval and their rates converge over requests as one task's do, where the flow
level gives every flow its share at the next round's start.

With 8 tasks Baraat's mean is {red8_pkt:.0f}% below this engine's RCP at packet level
and {red8_flow:.0f}% below fair sharing at flow level (the paper: "almost 40%" against its optimized RCP,
an upper bound for fair sharing), {red8_dctcp:.0f}% below DCTCP. The packet-level RCP drops and times out
under this 24-flow incast, which flatters Baraat; the flow-level `fair` is the paper's ideal RCP.
"""

THREE_NOTE = """By hand, without headers (the flow level's numbers): under Baraat A holds the port alone until
it has reserved 2 MB (16 ms), then shares its class with the next task, B, both at half the port,
so B's 1 MB ends at 32 ms (31 after its arrival); C waits behind {A, B} (a heavy task is multiplexed
with the next task only, FIFO for the rest) and once B is done shares with A, ending at 48 ms (46
after its arrival); A ends with the port's 7 MB at 56 ms. As FIFO (never heavy) A ends at 40 ms, B
and C behind it at 48 and 56 (47 and 54 after their arrivals). The packet-level Baraat is within 7%
of these in every case: headers (1500 bytes on the wire for 1460), the first request's round trip,
the requests' share of the port, and B's held flow learning up to 1 ms late that A turned heavy
(`spc_probe_max`; within 5% when held flows asked every interval). `fifo-lm` at packet level is its host policy: A turns heavy at
its own host (2 MB sent) and drops to the last class, and B and C, light and within one age quantum
of each other, share a class over DCTCP, so C does not wait for B (31.4 ms, where FIFO-LM's order
gives 46): the host-side reading of FIFO-LM in 8 queues has no "heavy shares with the next" and no
order inside a class (docs/packet-engine.md).
"""


def run_all(store: Path, no_run: bool) -> dict[str, Any]:
    """Every packet-level case, kept in ``store/baraat-packet.pkl``; with ``no_run`` read back from it."""

    def run() -> dict[str, Any]:
        t0 = time.perf_counter()
        return {"figs": figs8_9(), "fig7": fig7(), "three": three_tasks(), "seconds": time.perf_counter() - t0}

    out = stored(store / "baraat-packet.pkl", no_run, run)
    more = stored(store / "baraat-packet-knobs.pkl", no_run, more_knobs)
    out["figs"] = pd.concat([out["figs"], more], ignore_index=True)
    out["control"] = stored(store / "baraat-packet-control.pkl", no_run, control_share)
    out["split"] = stored(store / "baraat-packet-split.pkl", no_run, split)
    out["fig7_split"] = stored(store / "baraat-packet-fig7-split.pkl", no_run, fig7_split)
    out["agreement"] = stored(store / "baraat-packet-agreement.pkl", no_run, agreement)
    out["settings"] = stored(store / "baraat-packet-settings.pkl", no_run, settings)
    return out


def control_share() -> dict[str, float]:
    """On uniform tasks, the share of the bytes sent on hosts' downlinks (where the aggregators
    receive) that are not data (requests, echoes, ACKs: headers of data packets counted as data,
    one per 1,460 payload bytes), for ``baraat``, for it with ``rtt=1ms`` and with its held flows asking
    every interval."""
    w, topo = table4_workload("uniform")
    out = {}
    base = "baraat:threshold=p80;vc=0.5"
    for key, spec, opt in (("ctl", base, None), ("ctl_rtt1ms", f"{base};rtt=1ms", None),
                           ("ctl_every_rtt", base, HELD_EVERY_RTT), ("ctl_alone", base, "spc_header=alone")):
        res = coflowkit.simulate(w, spec, engine="packet", progress=False, topology=topo, packet=opt)
        ports = res.ports()
        down = ports[ports["name"].str.endswith("downlink")]
        payload = down[[f"class{i}_bytes" for i in range(8)]].to_numpy().sum()
        data = payload * (1 + 40 / 1460)
        out[key] = float(1 - data / down["tx_bytes"].sum())
    return out


def more_knobs() -> pd.DataFrame:
    """``MORE_KNOBS`` on each workload of Figs. 8-9."""
    rows = []
    for sizes in SIZES:
        w, topo = table4_workload(sizes)
        for label, (p, opt) in MORE_KNOBS.items():
            rows.append({"sizes": sizes, "label": label, "level": "knob", **run_packet(w, p, topo, recovering(opt))})
    return pd.DataFrame(rows)


def main() -> None:
    global VERBOSE
    VERBOSE = True
    t0 = time.perf_counter()
    three, f7, f7s = three_tasks(), fig7(), fig7_split()
    fig = pd.concat([figs8_9(), more_knobs()], ignore_index=True)
    print(render(fig, f7, three, control_share(), time.perf_counter() - t0, split(), f7s, settings(), agreement()))


if __name__ == "__main__":
    main()
