"""Karuna's packet-level gaps split by one-change runs (issue 34): the section "Split, one change
per run" of docs/reproductions/karuna.md, run by ``packet.run_all`` (``make repro-karuna``) and
kept in ``results/karuna-packet-split-*.pkl``.

Each run changes one model parameter of the packet engine from a base run the page already has,
and the tables give how much of the gap each change closes, as Baraat's page's "split" tables do:

* the headline (``headline_split``): ``karuna`` on web search with 10% and 30% deadline flows and
  ``fair`` (plain DCTCP) with 10%, 144 hosts, the host NICs marking at 65 packets; the gap is the
  packet level's p95 FCT of non-deadline flows (all, and those under 100 KB) above the flow level's;
* Fig. 2 (``fig2_split``): EDF over SJF on DCTCP senders in karuna's classes on 2.2's two hosts,
  the tail of short type 2 at 8% type 1 over that at 0% (the paper: about 5x);
* Fig. 1 (``fig1_split``): SJF's deadline miss rate at 13 KB and 100 KB on the two hosts (the paper:
  over 40% at 13 KB), with the NIC as ns-3's default device (one FIFO, 100 packets, no marks).

Run alone (prints the tables, writes nothing)::

    python examples/reproductions/karuna/split.py
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Callable
from typing import Any

import numpy as np
import pandas as pd

import coflowkit
import packet
from packet import HEADLINE_NIC, LEAF_SPINE, MS, TWO_HOSTS, Scheme, karuna_workload, run_flow, run_packet

#: The headline's one-change runs: (label, what the page says, packet options). Each is the base
#: run (``HEADLINE_NIC``) with one model parameter changed; "no window cuts" and "no timeouts" are one
#: change from "no loss" (no marks anywhere, so DCTCP never cuts a window; a timer floor of 200 ms, so
#: no timer fires where nothing is lost); "all" puts the ones that close a gap together.
HEADLINE_CHANGES: tuple[tuple[str, str, str], ...] = (
    ("no loss", "`buffer=inf`: no drop anywhere", f"{HEADLINE_NIC},buffer=inf"),
    ("first window 70", "`init_cwnd=70`: a flow under 100 KB sends all of itself in its first window, "
     "at line rate at once", f"{HEADLINE_NIC},init_cwnd=70"),
    ("headers 1 byte", "`header_bytes=1` for 40", f"{HEADLINE_NIC},header_bytes=1"),
    ("K 20", "ECN at 20 packets instead of 65 at every port and NIC (`ecn_k=20p`, `host_queue=ecn:20`): "
     "less queue in front of a class", "host_queue=ecn:20,ecn_k=20p"),
    ("K per queue", "`ecn_per=queue` at the switches: a packet marked by its own class's queue, not the "
     "port's (class 0's paced deadline flows then mark no lower class)", f"{HEADLINE_NIC},ecn_per=queue"),
    ("no window cuts", "no ECN mark anywhere and no loss (`ecn_k=off`, NIC unbounded, `buffer=inf`): "
     "DCTCP never cuts a window", "ecn_k=off,buffer=inf"),
    ("RTT / 10", "`link_delay=100ns` for 1 us: base RTT about 4 us instead of 11 us", f"{HEADLINE_NIC},link_delay=100ns"),
    ("no timeouts", "no loss and a 200 ms timer (`buffer=inf`, `min_rto`, `initial_rto`): one change from *no loss*; "
     "nothing is lost, so it takes away the spurious timeouts of flows starved in a low class",
     f"{HEADLINE_NIC},buffer=inf,min_rto=200ms,initial_rto=200ms"),
    ("all", "*first window 70*, *headers 1 byte* and *K 20* together (the changes that close a gap)",
     "host_queue=ecn:20,ecn_k=20p,init_cwnd=70,header_bytes=1"),
)
#: One change on the flow level's side (karuna only): MCP's RTT, which sets its pacing floor (two
#: segments per RTT) and its re-evaluation, at the packet host's base RTT (the fabric's, first host to
#: last, 11.08 us on this leaf-spine: ``coflowkit_packet``'s ``base_rtt_ns``) instead of the flow
#: level's 100 us.
FLOW_RTT = ("MCP RTT 11 us, flow level", "the flow level's `karuna` with `rtt=11us` for 100 us: MCP's floor of two "
            "segments per RTT and its re-evaluation at the packet host's base RTT; the share is of the gap closed "
            "from the flow level's side", ";rtt=11us")
#: The headline's cases split: (scheduler, share of deadline flows).
HEADLINE_CASES = (("karuna", 0.1), ("karuna", 0.3), ("fair", 0.1))
METRICS = ("fct_no_deadline_p95_s", "fct_short_no_deadline_p95_s", "flow_deadline_miss_rate")

#: Fig. 2's one-change runs from EDF over SJF on DCTCP senders in karuna's classes (the page's
#: "DCTCP senders, karuna's classes, NIC unbounded"): (label, what, packet options).
FIG2_CHANGES: tuple[tuple[str, str, str | None], ...] = (
    ("base", "as on the page", None),
    ("first window 2", "`init_cwnd=2`: slow start from 2 segments", "init_cwnd=2"),
    ("headers 1 byte", "`header_bytes=1`", "header_bytes=1"),
    ("K 65", "`ecn_k=65p`: the switch port marks at 65 packets, not 20", "ecn_k=65p"),
    ("K per queue", "`ecn_per=queue`: a class's marks from its own queue only", "ecn_per=queue"),
    ("no loss", "`buffer=inf`", "buffer=inf"),
    ("NIC ECN 20", "`host_queue=ecn:20`", "host_queue=ecn:20"),
    ("NIC FIFO", "`host_prio=fifo`: the NIC one FIFO, priorities at the switch only", "host_prio=fifo"),
    ("ns-3 NIC", "`host_prio=fifo,host_queue=droptail:100`: ns-3's default device queue",
     "host_prio=fifo,host_queue=droptail:100"),
    ("RTT 125 us", "`link_delay=25us`: base RTT about 125 us instead of 29 us", "link_delay=25us"),
)
FIG2_SEEDS = (1, 2, 3)
FIG2_SHARE = 0.08
#: Fig. 1's runs: SJF by 7 strict classes (karuna's split by size, deadlines hidden) with the NIC as
#: it is, one FIFO, and ns-3's default device.
FIG1_NICS: tuple[tuple[str, str | None], ...] = (
    ("NIC unbounded", None),
    ("NIC 100 packets", "host_queue=droptail:100"),
    ("NIC FIFO", "host_prio=fifo"),
    ("ns-3 NIC", "host_prio=fifo,host_queue=droptail:100"),
    ("NIC FIFO, ECN 20", "host_prio=fifo,host_queue=ecn:20"),
)
FIG1_SIZES = (1460, 13000, 100000)
FIG1_SEEDS = (1, 2, 3)
#: Say each run and its time on stderr (``KARUNA_VERBOSE=1``, or run alone).
VERBOSE = bool(os.environ.get("KARUNA_VERBOSE"))


def _say(msg: str) -> None:
    if VERBOSE:
        print(msg, file=sys.stderr)


def headline_split() -> dict[str, Any]:
    """Rows (scheduler, type1, change, metric, value) with the flow level and the base run as changes
    ``flow`` and ``base``, and the runs' timeouts."""
    t0 = time.perf_counter()
    rows = []
    sch = packet.schemes("websearch")
    for label, type1 in HEADLINE_CASES:
        w = karuna_workload("websearch", type1, packet.HEADLINE_FLOWS["websearch"])
        s = sch[label]
        flow = run_flow(w, [s.flow], LEAF_SPINE).loc[s.flow]
        for metric in METRICS:
            rows.append({"scheduler": label, "type1": type1, "change": "flow", "metric": metric,
                         "value": float(flow[metric])})
        for change, _, opts in (("base", "", HEADLINE_NIC), *HEADLINE_CHANGES):
            t = time.perf_counter()
            m, f = run_packet(w, s, LEAF_SPINE, packet=opts)
            _say(f"  {label} {type1:.0%} {change}: {time.perf_counter() - t:.1f} s")
            for metric in METRICS:
                rows.append({"scheduler": label, "type1": type1, "change": change, "metric": metric,
                             "value": float(m[metric])})
            rows.append({"scheduler": label, "type1": type1, "change": change, "metric": "timeouts",
                         "value": float(f["timeouts"].sum())})
    return {"rows": pd.DataFrame(rows), "seconds": time.perf_counter() - t0}


def flow_rtt_split() -> pd.DataFrame:
    """FLOW_RTT's flow-level runs: rows as ``headline_split``'s, change FLOW_RTT[0]."""
    rows = []
    s = packet.schemes("websearch")["karuna"]
    for label, type1 in HEADLINE_CASES:
        if label != "karuna":
            continue
        w = karuna_workload("websearch", type1, packet.HEADLINE_FLOWS["websearch"])
        spec = s.flow + FLOW_RTT[2]
        m = run_flow(w, [spec], LEAF_SPINE).loc[spec]
        for metric in METRICS:
            rows.append({"scheduler": label, "type1": type1, "change": FLOW_RTT[0], "metric": metric,
                         "value": float(m[metric])})
    return pd.DataFrame(rows)


def fig2_split(mixed: Callable[..., coflowkit.Workload]) -> dict[str, Any]:
    """p95 FCT of short type 2 at 0% and FIG2_SHARE type 1, per seed and change, EDF over SJF on
    DCTCP senders in karuna's classes."""
    t0 = time.perf_counter()
    dctcp = Scheme("edf-sjf", "dctcp")
    rows = []
    for seed in FIG2_SEEDS:
        for share in (0.0, FIG2_SHARE):
            w = mixed(seed, 5000, share, None, n_background=packet.MOTIVATION_BG)
            classes = packet.sjf_classes(w)
            for change, _, opts in FIG2_CHANGES:
                t = time.perf_counter()
                m, _ = run_packet(w, dctcp, TWO_HOSTS, opts, classes)
                _say(f"  fig2 seed {seed} share {share} {change}: {time.perf_counter() - t:.1f} s")
                rows.append({"seed": seed, "share": share, "change": change,
                             "p95": float(m.fct_short_no_deadline_p95_s), "miss": float(m.flow_deadline_miss_rate)})
    return {"rows": pd.DataFrame(rows), "seconds": time.perf_counter() - t0}


def fig1_split(mixed: Callable[..., coflowkit.Workload]) -> dict[str, Any]:
    """SJF's deadline miss rate (10 ms deadlines, 2% of each link) per size, seed and NIC: 7 strict
    classes by size over DCTCP (deadlines hidden, a flow missed if its FCT is above 10 ms). pFabric's
    hosts keep their own priority queue, so pure SJF as pFabric has no NIC to change."""
    t0 = time.perf_counter()
    queues = Scheme("karuna:split=mining", "karuna:split=mining")
    rows = []
    for size in FIG1_SIZES:
        for seed in FIG1_SEEDS:
            w = mixed(seed, size, 0.02, 10.0, n_background=packet.MOTIVATION_BG)
            blind = mixed(seed, size, 0.02, 10.0, deadlines=False, n_background=packet.MOTIVATION_BG)
            is1 = np.asarray(w.columns()["flow_deadline_ns_valid"])
            for nic, opts in FIG1_NICS:
                t = time.perf_counter()
                _, f = run_packet(blind, queues, TWO_HOSTS, opts)
                rows.append({"size": size, "seed": seed, "nic": nic, "scheme": "SJF, 7 queues",
                             "miss": float((f["fct_s"].to_numpy()[is1] > 0.010).mean()),
                             "timeouts": float(f["timeouts"].sum())})
                _say(f"  fig1 {size} seed {seed} {nic}: {time.perf_counter() - t:.1f} s")
    return {"rows": pd.DataFrame(rows), "seconds": time.perf_counter() - t0}


def run_all(mixed: Callable[..., coflowkit.Workload], store: Any, no_run: bool) -> dict[str, Any]:
    """The three splits, each kept in ``store`` (regenerate.py's ``--no-run`` reads them back)."""
    from coflowkit.experiments.runner import stored

    h = stored(store / "karuna-packet-split-headline.pkl", no_run, headline_split)
    rtt = stored(store / "karuna-packet-split-flow-rtt.pkl", no_run, flow_rtt_split)
    return {"headline": {**h, "rows": pd.concat([h["rows"], rtt], ignore_index=True)},
            "fig2": stored(store / "karuna-packet-split-fig2.pkl", no_run, lambda: fig2_split(mixed)),
            "fig1": stored(store / "karuna-packet-split-fig1.pkl", no_run, lambda: fig1_split(mixed))}


# -- the page's tables ----------------------------------------------------------------------------


def _closed(base: float, changed: float, flow: float) -> str:
    """The share of the gap from ``base`` down to ``flow`` that ``changed`` closes."""
    gap = base - flow
    return _pct((base - changed) / gap) if abs(gap) > 1e-12 else "-"


def _pct(x: float) -> str:
    """A share as a whole percent, never '-0%'."""
    out = f"{x:.0%}"
    return "0%" if out == "-0%" else out


def headline_table(h: dict[str, Any]) -> str:
    """One table per metric: per case, the flow level, the base packet run, and each change (the share
    of the gap it closes in brackets); then the runs' timeouts."""
    r = h["rows"]
    changes = [c for c, _, _ in HEADLINE_CHANGES]
    if (r["change"] == FLOW_RTT[0]).any():
        changes.append(FLOW_RTT[0])
    names = {"fct_no_deadline_p95_s": "p95 FCT of non-deadline flows (ms)",
             "fct_short_no_deadline_p95_s": "p95 FCT of non-deadline flows under 100 KB (ms)",
             "flow_deadline_miss_rate": "deadline flows missed (%)", "timeouts": "timeouts (the runs' timers that fired)"}
    out = []
    for metric, name in names.items():
        first = "| case | flow level | packet level | " if metric != "timeouts" else "| case | packet level | "
        lines = [f"{name}:\n", first + " | ".join(changes) + " |",
                 "|" + "---|" * (len(changes) + first.count("|") - 1)]
        for (label, type1), g in r.groupby(["scheduler", "type1"], sort=False):
            if label == "fair" and metric == "flow_deadline_miss_rate":
                continue
            v = g[g["metric"] == metric].set_index("change")["value"]
            if metric == "timeouts":
                cells = [f"{v[c]:.0f}" if c in v.index else "-" for c in ["base", *changes]]
            else:
                scale, fmt = (100, "{:.1f}") if metric == "flow_deadline_miss_rate" else (1 / MS, "{:.2f}")
                flow, base = v["flow"], v["base"]
                cells = [fmt.format(flow * scale), fmt.format(base * scale)]
                cells += [("-" if c not in v.index else
                           f"{fmt.format(v[c] * scale)} ({_closed(flow, v[c], base)})" if c == FLOW_RTT[0] else
                           f"{fmt.format(v[c] * scale)} ({_closed(base, v[c], flow)})") for c in changes]
            lines.append(f"| {label}, {type1:.0%} | " + " | ".join(cells) + " |")
        out.append("\n".join(lines))
    return "\n\n".join(out)


def fig2_ratios(f: dict[str, Any]) -> pd.DataFrame:
    """Per change: the tail at FIG2_SHARE over the tail at 0% (seed means first, as the page's
    Fig. 2), each seed's own ratio, the tails themselves and the deadline miss rate."""
    r = f["rows"]
    out = []
    for change, g in r.groupby("change", sort=False):
        lo = g[g["share"] == 0].set_index("seed")["p95"]
        hi = g[g["share"] > 0].set_index("seed")
        out.append({"change": change, "ratio": float(hi["p95"].mean() / lo.mean()),
                    "per_seed": [float(x) for x in hi["p95"] / lo], "p0": float(lo.mean()),
                    "p8": float(hi["p95"].mean()), "miss": float(hi["miss"].mean())})
    return pd.DataFrame(out).set_index("change")


def fig2_table(f: dict[str, Any]) -> str:
    r = fig2_ratios(f)
    lines = ["| run (one change from the first) | tail at 0% (ms) | at 8% (ms) | 8% against 0% [per seed] | "
             "deadline flows missed at 8% |", "|---|---|---|---|---|"]
    what = {c: w for c, w, _ in FIG2_CHANGES}
    for change, row in r.iterrows():
        per = ", ".join(f"{x:.2f}" for x in row["per_seed"])
        lines.append(f"| {change}: {what[change]} | {row['p0'] / MS:.3f} | {row['p8'] / MS:.3f} | "
                     f"{row['ratio']:.2f}x [{per}] | {row['miss']:.1%} |")
    return "\n".join(lines)


def fig1_table(f: dict[str, Any]) -> str:
    r = f["rows"]
    g = r.groupby(["scheme", "size", "nic"], sort=False).agg(miss=("miss", "mean"), timeouts=("timeouts", "sum"))
    nics = [n for n, _ in FIG1_NICS]
    lines = ["| SJF at packet level | size (bytes) | " + " | ".join(nics) + " |", "|" + "---|" * (len(nics) + 2)]
    for (scheme, size), gs in g.groupby(level=[0, 1], sort=False):
        gs = gs.droplevel([0, 1])
        cells = [f"{gs.loc[n, 'miss']:.1%} ({gs.loc[n, 'timeouts']:.0f})" if n in gs.index else "-" for n in nics]
        lines.append(f"| {scheme} | {size:,} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main() -> None:
    import regenerate

    global VERBOSE
    VERBOSE = True
    packet.VERBOSE = False
    for name, fn in (("fig1", lambda: fig1_table(fig1_split(regenerate.mixed))),
                     ("fig2", lambda: fig2_table(fig2_split(regenerate.mixed))),
                     ("headline", lambda: headline_table(headline_split()))):
        t0 = time.perf_counter()
        print(fn())
        print(f"{name} {time.perf_counter() - t0:.0f} s")


if __name__ == "__main__":
    main()


# -- the page's sections --------------------------------------------------------------------------


def _closing(h: dict[str, Any], label: str, type1: float, metric: str) -> list[tuple[str, float, float]]:
    """(change, share of the gap closed, value) for one case and metric, the largest share first."""
    r = h["rows"]
    g = r[(r["scheduler"] == label) & np.isclose(r["type1"], type1) & (r["metric"] == metric)]
    v = g.set_index("change")["value"]
    gap = v["base"] - v["flow"]
    out = [(c, (v["base"] - v[c]) / gap if abs(gap) > 1e-12 else float("nan"), float(v[c]))
           for c, _, _ in HEADLINE_CHANGES]
    return sorted(out, key=lambda x: -x[1])


def headline_numbers(h: dict[str, Any]) -> dict[str, Any]:
    """The values the page's prose quotes: per case (k10, k30, f10) and metric (all, short, miss)
    and change, the value and the share of the gap it closes."""
    r = h["rows"]
    keys = {("karuna", 0.1): "k10", ("karuna", 0.3): "k30", ("fair", 0.1): "f10"}
    mk = {"fct_no_deadline_p95_s": "all", "fct_short_no_deadline_p95_s": "short", "flow_deadline_miss_rate": "miss"}
    slug = {"flow": "flow", "base": "base", FLOW_RTT[0]: "flow_rtt",
            **{c: c.replace(" ", "_").replace("/", "").replace("__", "_") for c, _, _ in HEADLINE_CHANGES}}
    out: dict[str, Any] = {}
    for (label, type1), key in keys.items():
        g = r[(r["scheduler"] == label) & np.isclose(r["type1"], type1)]
        for metric, m in mk.items():
            v = g[g["metric"] == metric].set_index("change")["value"]
            scale = 100 if m == "miss" else 1 / MS
            for c in v.index:
                out[f"{key}_{m}_{slug[c]}"] = float(v[c]) * scale
                if c not in ("flow", "base"):
                    gap = v["base"] - v["flow"]
                    moved = v[c] - v["flow"] if c == FLOW_RTT[0] else v["base"] - v[c]
                    out[f"{key}_{m}_{slug[c]}_closed"] = float(moved / gap) if abs(gap) > 1e-12 else 0.0
        t = g[g["metric"] == "timeouts"].set_index("change")["value"]
        for c in t.index:
            out[f"{key}_timeouts_{slug[c]}"] = float(t[c])
    out["seconds"] = h["seconds"]
    return out


def _top(h: dict[str, Any], label: str, type1: float, metric: str, n: int = 2) -> str:
    """'K 20 (61%) and no loss (12%)': the changes that close the most of one gap."""
    best = [x for x in _closing(h, label, type1, metric) if x[0] != "all"][:n]
    return " and ".join(f"{c} ({s:.0%})" for c, s, _ in best)


def headline_section(h: dict[str, Any]) -> str:
    what = "; ".join(f"*{c}*: {w}" for c, w, _ in (*HEADLINE_CHANGES, FLOW_RTT))
    lines = [f"**Packet against flow level, split** (`examples/reproductions/karuna/split.py`, run by "
             f"`make repro-karuna`, {h['seconds']:.0f} s; web search on the 144-host fabric as above, one "
             f"change per run from the headline's packet run; in brackets the share of the packet level's gap "
             f"to the flow level that the change closes, negative where it widens it; the runs' timeouts "
             f"last). The changes: {what}.\n", headline_table(h) + "\n"]
    cases = [("karuna", 0.1), ("karuna", 0.3), ("fair", 0.1)]
    lines.append("Largest closers of one change at packet level: " + "; ".join(
        f"{label} at {type1:.0%}, all flows: {_top(h, label, type1, 'fct_no_deadline_p95_s')}, "
        f"under 100 KB: {_top(h, label, type1, 'fct_short_no_deadline_p95_s')}" for label, type1 in cases) + ".\n")
    lines.append(headline_note(h))
    return "\n".join(lines)


def motivation_section(s: dict[str, Any]) -> str:
    f2 = fig2_ratios(s["fig2"])
    what = {c: w for c, w, _ in FIG2_CHANGES}
    out = [f"**Fig. 2, split** (`split.py`, {s['fig2']['seconds']:.0f} s): EDF over SJF on DCTCP senders in "
           f"karuna's classes, the NIC unbounded (the second row of the table above), deadline flows one by one, "
           f"seeds {', '.join(map(str, FIG2_SEEDS))}; each run changes one model parameter from the first. Tail of "
           f"short type 2 (p95 FCT of type 2 flows under 100 KB):\n", fig2_table(s["fig2"]) + "\n"]
    near = [c for c in f2.index if packet._near(f2.loc[c, "ratio"])]
    top = f2["ratio"].drop("base").sort_values(ascending=False)
    out.append(fig2_note(s))
    out.append(f"**Fig. 1, split** (`split.py`, {s['fig1']['seconds']:.0f} s): SJF's deadline miss rate (10 ms deadlines, "
               f"2% of each link, seeds {', '.join(map(str, FIG1_SEEDS))}, in brackets the runs' timeouts) with the NIC "
               f"as above, drop-tail at 100 packets (`host_queue=droptail:100`), as one FIFO (`host_prio=fifo`: "
               f"priorities at the switch only) and as ns-3's default device "
               f"(one FIFO of 100 packets, drop-tail, no marks: `host_prio=fifo,host_queue=droptail:100`), and one FIFO "
               f"marking ECN at 20 packets as the switch port does (`host_prio=fifo,host_queue=ecn:20`):\n")
    out.append(fig1_table(s["fig1"]) + "\n")
    out.append(fig1_note(s))
    return "\n".join(out)


def fig2_note(s: dict[str, Any]) -> str:
    """What the Fig. 2 split shows, from its numbers."""
    r = fig2_ratios(s["fig2"])
    base = r.loc["base"]
    same = [c for c in r.index if c != "base" and abs(r.loc[c, "p0"] - base["p0"]) < 1e-12
            and abs(r.loc[c, "p8"] - base["p8"]) < 1e-12]
    moved = [c for c in r.index if c not in same and c not in ("base", "NIC FIFO", "ns-3 NIC")]
    near = [c for c in r.index if packet._near(r.loc[c, "ratio"])]
    what = {c: (w.split("`: ")[0] + "`" if "`: " in w else w) for c, w, _ in FIG2_CHANGES}
    out = (f"No change of the transport or of the queues brings Fig. 2's factor near the paper's 5x"
           + (f" (within 1.5x of it: {', '.join(near)})" if near else "")
           + f": from the base's {base['ratio']:.2f}x, "
           + ", ".join(f"{c} ({what[c]}) gives {r.loc[c, 'ratio']:.2f}x" for c in moved) + ". ")
    if same:
        out += (f"{', '.join(same[:-1]) + ' and ' + same[-1] if len(same) > 1 else same[0]} change nothing at all "
                "(the same tails to the nanosecond): on two hosts of one rate the sender's NIC is the only queue, "
                "and the switch port never holds 20 packets. ")
    fifo, ns3 = r.loc["NIC FIFO"], r.loc["ns-3 NIC"]
    out += (f"With the NIC as one FIFO the priorities are gone where the queue is: short type 2's tail is "
            f"{fifo['p0'] / MS:.0f} ms at 0% already (DCTCP's windows grow unmarked in it) and the deadline flows "
            f"add little ({fifo['ratio']:.2f}x; {fifo['miss']:.0%} of them late); as ns-3's default device (one FIFO "
            f"of 100 packets, which drops) the tails are {ns3['p0'] / MS:.1f} ms at 0% and {ns3['p8'] / MS:.1f} ms at 8%, "
            f"and they move from seed to seed far more than with the deadline share ({ns3['ratio']:.2f}x ["
            + ", ".join(f"{x:.2f}" for x in ns3["per_seed"])
            + "]). So on these runs the transport's parameters and the queues do not make Fig. 2's gap; the one model "
            "difference measured to reach the paper's size is the deadline flows' arrivals in bursts (the table "
            "before this one), whose size the seed does not give.\n")
    return out


def fig1_note(s: dict[str, Any]) -> str:
    """What the Fig. 1 split shows, from its numbers."""
    r = s["fig1"]["rows"]
    g = r.groupby(["size", "nic"])["miss"].mean()
    paper = 0.40
    m13 = {n: g.loc[(13000, n)] for n, _ in FIG1_NICS}
    best = max(m13, key=lambda n: m13[n])
    within = paper / 1.5 <= m13[best] <= paper * 1.5
    small = min(FIG1_SIZES)
    return (f"SJF in strict classes at every port, the NIC's too, misses {m13['NIC unbounded']:.1%} of the 13 KB "
            f"deadline flows (the paper: over 40%). The NIC decides it. Drop-tail at 100 packets over all its "
            f"classes gives {m13['NIC 100 packets']:.1%} (the background's DCTCP windows, unmarked there, fill it, "
            f"and a deadline flow's packet that finds it full waits for a 10 ms timer, whatever its class). With the "
            f"priorities at the switch only (`host_prio=fifo`) the deadline flows wait behind those windows in "
            f"the sender's FIFO: {m13['NIC FIFO']:.1%} of the 13 KB flows miss and {g.loc[(100000, 'NIC FIFO')]:.0%} "
            f"of the 100 KB ones, {g.loc[(small, 'NIC FIFO')]:.1%} of the {small:,} B ones (the paper: none below "
            f"its 1st percentile); as ns-3's default device (one FIFO of 100 packets) {m13['ns-3 NIC']:.1%}, "
            f"{g.loc[(100000, 'ns-3 NIC')]:.1%} and {g.loc[(small, 'ns-3 NIC')]:.1%}; one FIFO marking ECN at 20 packets "
            f"{m13['NIC FIFO, ECN 20']:.1%}, {g.loc[(100000, 'NIC FIFO, ECN 20')]:.1%} and "
            f"{g.loc[(small, 'NIC FIFO, ECN 20')]:.1%}. The largest, "
            f"{m13[best]:.1%} ({best}), is {'within' if within else 'not within'} 1.5x of the paper's 40%: "
            f"the paper's misses need the deadline flows to queue behind the background's unmarked windows at the "
            f"sender, which the NIC's own strict classes prevent, and so do ECN marks at a FIFO NIC. What the "
            f"paper's hosts did the seed does not say; "
            f"these runs measure the size of that model difference, the NIC's queue, not that it was the paper's.\n")


def measured(s: dict[str, Any]) -> dict[str, str]:
    """One sentence each for the page's "Gaps and assumptions": what the Fig. 1 and Fig. 2 splits measured."""
    g = s["fig1"]["rows"]
    g = g[g["size"] == 13000].groupby("nic")["miss"].mean()
    r = fig2_ratios(s["fig2"])
    moved = r.drop(["NIC FIFO", "ns-3 NIC"])["ratio"]
    return {
        "fig1": (f"At packet level (\"Fig. 1, split\" above) SJF in strict classes still misses "
                 f"{g['NIC unbounded']:.0%} of the 13 KB deadline flows; the misses come with the sender's NIC, "
                 f"the one queue on two hosts of one rate, when it neither keeps the classes apart nor marks: "
                 f"{g['NIC FIFO']:.0%} with the NIC one FIFO (the priorities at the switch only), "
                 f"{g['NIC 100 packets']:.1%} with a 100-packet drop-tail NIC, {g['ns-3 NIC']:.1%} as ns-3's "
                 f"default device, {g['NIC FIFO, ECN 20']:.0%} with a FIFO marking ECN at 20 packets; what the "
                 f"paper's NIC did the seed does not say."),
        "fig2": (f"One change at a time of the transport and the queues at packet level (first window, headers, "
                 f"ECN threshold, loss, the NIC, the RTT; \"Fig. 2, split\" above) gives "
                 f"{moved.min():.2f}x to {moved.max():.2f}x: none is the gap."),
    }


def headline_note(h: dict[str, Any]) -> str:
    """What the headline split shows, from its numbers."""
    n = headline_numbers(h)

    def c(key: str) -> str:
        return _pct(n[key])

    out = [
        f"*Short flows* (under 100 KB): the first window makes most of the gap. With every flow's first window "
        f"at 70 segments, so that a flow under 100 KB leaves at once as the flow level gives it its share at once, "
        f"`karuna`'s short-flow p95 falls from {n['k10_short_base']:.2f} to {n['k10_short_first_window_70']:.2f} ms "
        f"with 10% deadline flows ({c('k10_short_first_window_70_closed')} of the gap to the flow level's "
        f"{n['k10_short_flow']:.2f} ms) and from {n['k30_short_base']:.2f} to {n['k30_short_first_window_70']:.2f} ms "
        f"with 30% ({c('k30_short_first_window_70_closed')}); plain DCTCP's (`fair`) from {n['f10_short_base']:.2f} to "
        f"{n['f10_short_first_window_70']:.2f} ms ({c('f10_short_first_window_70_closed')}). Slow start costs more "
        f"than the base round trip (about 11 us, ten segments at 10 Gbit/s) would say, because a short flow's "
        f"round trips are taken through the queues of its class: ECN at 20 packets instead of 65, which shortens "
        f"them, closes "
        f"{c('k10_short_K_20_closed')}, {c('k30_short_K_20_closed')} and {c('f10_short_K_20_closed')} of the three "
        f"gaps, the headers {c('k10_short_headers_1_byte_closed')}, {c('k30_short_headers_1_byte_closed')} and "
        f"{c('f10_short_headers_1_byte_closed')}. Losses are not it: without any (*no loss*) the short flows' p95 "
        f"rises ({n['k10_short_no_loss']:.2f} ms with 10%; the buffers then hold more in front of them), and "
        f"taking DCTCP's cuts away as well (*no window cuts*: nothing marks, nothing drops) raises it most "
        f"({n['k10_short_no_window_cuts']:.2f} ms; `fair` {n['f10_short_no_window_cuts']:.2f} ms): DCTCP's cuts are what "
        f"keeps the queues short. All together (*all*) the short flows' p95 is {n['k10_short_all']:.2f}, "
        f"{n['k30_short_all']:.2f} and {n['f10_short_all']:.2f} ms ({c('k10_short_all_closed')}, "
        f"{c('k30_short_all_closed')} and {c('f10_short_all_closed')} of the gaps).",
        f"*All non-deadline flows* (the long ones set the p95): with 10% deadline flows `karuna`'s gap is "
        f"{n['k10_all_base'] / n['k10_all_flow'] - 1:.0%} ({n['k10_all_flow']:.2f} against {n['k10_all_base']:.2f} ms), "
        f"with 30% {n['k30_all_base'] / n['k30_all_flow'] - 1:.0%} ({n['k30_all_flow']:.2f} against "
        f"{n['k30_all_base']:.2f} ms), `fair`'s {n['f10_all_base'] / n['f10_all_flow'] - 1:.0%}. The headers close "
        f"{c('k10_all_headers_1_byte_closed')}, {c('k30_all_headers_1_byte_closed')} and "
        f"{c('f10_all_headers_1_byte_closed')} of them"
        + (" (under `fair` the 2.7% of the wire they take is the whole gap), " if n["f10_all_headers_1_byte_closed"] >= 0.9
           else ", ") +
        f"ECN at 20 packets {c('k10_all_K_20_closed')}, {c('k30_all_K_20_closed')} and {c('f10_all_K_20_closed')}, "
        f"marks by each class's own queue at the switches (*K per queue*) {c('k10_all_K_per_queue_closed')}, "
        f"{c('k30_all_K_per_queue_closed')} and {c('f10_all_K_per_queue_closed')}, "
        f"the first window {c('k10_all_first_window_70_closed')}, {c('k30_all_first_window_70_closed')} and "
        f"{c('f10_all_first_window_70_closed')}, and the spurious timeouts of flows starved in a low class "
        f"(*no timeouts*, against *no loss*: {n['k10_timeouts_no_loss']:.0f} and {n['k30_timeouts_no_loss']:.0f} "
        f"timers fire where nothing is lost) {c('k10_all_no_timeouts_closed')}, {c('k30_all_no_timeouts_closed')} and "
        f"{c('f10_all_no_timeouts_closed')} (against the headline run; the p95 is {n['k10_all_no_timeouts']:.2f}, "
        f"{n['k30_all_no_timeouts']:.2f} and {n['f10_all_no_timeouts']:.2f} ms against {n['k10_all_no_loss']:.2f}, "
        f"{n['k30_all_no_loss']:.2f} and {n['f10_all_no_loss']:.2f} ms without them). All together: "
        f"{n['k10_all_all']:.2f}, {n['k30_all_all']:.2f} and {n['f10_all_all']:.2f} ms ({c('k10_all_all_closed')}, "
        f"{c('k30_all_all_closed')} and {c('f10_all_all_closed')}). The shares do not add, and the p95 of "
        f"1,400-1,800 flows (their 70th-90th longest) moves by a few percent with any change. One more model "
        f"difference is on the flow level's side: MCP's RTT. The packet host paces a deadline flow at no less than "
        f"two segments per base RTT (11 us here), the flow level per 100 us, so a deadline flow that is late, or "
        f"needs little, takes about nine times more of class 0 at packet level. The flow level at 11 us "
        f"(*{FLOW_RTT[0]}*) rises to {n['k10_all_flow_rtt']:.2f} and {n['k30_all_flow_rtt']:.2f} ms, "
        f"{c('k10_all_flow_rtt_closed')} and {c('k30_all_flow_rtt_closed')} of `karuna`'s gaps from that side, and "
        f"misses {n['k10_miss_flow_rtt']:.1f}% and {n['k30_miss_flow_rtt']:.1f}% of the deadline flows. With both "
        f"sides changed (*all* at packet level, MCP's RTT at flow level) the packet level's p95 is "
        f"{n['k10_all_all'] / n['k10_all_flow_rtt'] - 1:.0%} and {n['k30_all_all'] / n['k30_all_flow_rtt'] - 1:.0%} above "
        f"the flow level's, against {n['k10_all_base'] / n['k10_all_flow'] - 1:.0%} and "
        f"{n['k30_all_base'] / n['k30_all_flow'] - 1:.0%}; what is left is not split by these runs.",
        f"*Deadlines* (`karuna`, {n['k10_miss_flow']:.1f}% missed at flow level, {n['k10_miss_base']:.1f}% at packet "
        f"level with 10% deadline flows): ECN at 20 packets closes {c('k10_miss_K_20_closed')} of that gap and the "
        f"headers {c('k10_miss_headers_1_byte_closed')}, no loss {c('k10_miss_no_loss_closed')}, the three of *all* "
        f"together {c('k10_miss_all_closed')} ({n['k10_miss_all']:.1f}%): MCP paces a deadline "
        f"flow at exactly the rate its payload needs, so whatever delays it, the headers on the wire or what the "
        f"lower classes keep at the ports (the shared buffer's drops, a packet of theirs on the wire), makes a flow "
        f"with no slack late. The first window changes nothing ({n['k10_miss_first_window_70']:.1f}%): deadline "
        f"flows are paced from their first packet.",
        f"*The round trip* (*RTT / 10*: 100 ns links, base RTT about 4 us) closes none of `karuna`'s gaps (all "
        f"flows {n['k10_all_RTT_10']:.2f} ms, short {n['k10_short_RTT_10']:.2f} ms with 10% deadline flows; "
        f"`fair`'s short flows {c('f10_short_RTT_10_closed')}): the flow level's instant shares are not a matter of "
        f"propagation here.",
    ]
    return "\n\n".join(out) + "\n"
