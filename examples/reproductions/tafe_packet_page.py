"""The packet-level section of docs/reproductions/tafe.md (tafe.py puts it in the page): the tables of
Fig. 2 and Figs. 6-9 at both levels, then the one-change runs that split TAFE's gap to the paper
(their tables, the numbers their notes quote and the verdict), from what tafe_packet.py's runs
returned. Apart from the runs so that the page is written from stored results without their code."""

from __future__ import annotations

from typing import Any, Iterator

import numpy as np
import pandas as pd
from tafe_packet_notes import (
    BY_SIZE_INTRO,
    BY_SIZE_NOTE,
    CAUSES_INTRO,
    CAUSES_NOTE,
    COMBINED_NOTE,
    FIG2_NOTE,
    FIGS_NOTE,
    SERVICE_INTRO,
    SERVICE_NOTE,
    VERDICT_INTRO,
    VERDICT_NOTE,
)
from tafe_packet_setup import (
    COMBINED,
    COMBINED_FLOWS,
    COORDINATOR_INTERVAL,
    DEADLINE_K,
    FIFO_BY_CLASS,
    FIFO_PORTS,
    FLOWS_PER_TASK,
    N_TASKS,
    SCHEMES,
    SIZE_GROUPS,
    SIZE_NAME,
    SLICE_CLAIMS,
    SLICE_SEEDS,
    SLICES,
    TAFE_FULL,
    service_settings,
)


def render_by_size(bs: pd.DataFrame) -> str:
    """The table of `by_size` and what it shows."""
    out = ["| workload | flows per task | tasks by size | flow: TAFE / D2TCP | packet: TAFE / D2TCP | "
           "packet mean TCT (ms): TAFE; D2TCP | timeouts (lost / spurious) per task: TAFE; D2TCP |",
           "|---|---|---|---|---|---|---|"]
    for sizes in SIZE_NAME:
        for n_flows in (2, COMBINED_FLOWS):
            for g in SIZE_GROUPS:
                h = bs[(bs["sizes"] == sizes) & (bs["flows"] == n_flows) & (bs["group"] == g)].set_index("scheme")
                t, d = h.loc["tafe"], h.loc["d2tcp"]
                out.append(f"| {SIZE_NAME[sizes]}, whole | {n_flows} | {g} ({int(t['tasks'])} tasks) | "
                           f"{t['flow'] / d['flow']:.2f} | {t['packet'] / d['packet']:.2f} | "
                           f"{_ms(t['packet'] * 1e3)}; {_ms(d['packet'] * 1e3)} | "
                           f"{_split(t)}; {_split(d)} |")
    return "\n".join(out)


def _split(r: Any) -> str:
    """Timeouts per task with their split: `12.3 (10.1 / 2.2)`."""
    return f"{r['timeouts']:.1f} ({r['lost']:.1f} / {r['spurious']:.1f})"


def by_size_numbers(bs: pd.DataFrame) -> dict[str, float]:
    def v(sizes: str, n_flows: int, g: str, scheme: str, what: str) -> float:
        h = bs[(bs["sizes"] == sizes) & (bs["flows"] == n_flows) & (bs["group"] == g) & (bs["scheme"] == scheme)]
        return float(h[what].iloc[0])

    n, big, small = COMBINED_FLOWS, SIZE_GROUPS[2], SIZE_GROUPS[0]
    return {
        "dm_big_2": v("datamining", 2, big, "tafe", "flow") / v("datamining", 2, big, "d2tcp", "flow"),
        "dm_big_n": v("datamining", n, big, "tafe", "flow") / v("datamining", n, big, "d2tcp", "flow"),
        "ws_small_2": v("websearch", 2, small, "tafe", "packet") * 1e3,
        "ws_small_n": v("websearch", n, small, "tafe", "packet") * 1e3,
        "ws_small_n_d": v("websearch", n, small, "d2tcp", "packet") * 1e3,
        "ws_small_to": v("websearch", n, small, "tafe", "timeouts"),
        "ws_small_to_d": v("websearch", n, small, "d2tcp", "timeouts"),
        "dm_mid_to": v("datamining", n, SIZE_GROUPS[1], "tafe", "timeouts"),
        "dm_mid_to_d": v("datamining", n, SIZE_GROUPS[1], "d2tcp", "timeouts"),
        "dm_small_d_2": v("datamining", 2, small, "d2tcp", "packet") * 1e3,
        "ws_mid_to": v("websearch", n, SIZE_GROUPS[1], "tafe", "timeouts"),
        "ws_mid_to_d": v("websearch", n, SIZE_GROUPS[1], "d2tcp", "timeouts"),
        "ws_mid_p": (v("websearch", n, SIZE_GROUPS[1], "tafe", "packet")
                     / v("websearch", n, SIZE_GROUPS[1], "d2tcp", "packet")),
        "dm_small_t_2": v("datamining", 2, small, "tafe", "packet") * 1e3,
        "dm_small_d_n": v("datamining", n, small, "d2tcp", "packet") * 1e3,
        "dm_mid_p": (v("datamining", n, SIZE_GROUPS[1], "tafe", "packet")
                     / v("datamining", n, SIZE_GROUPS[1], "d2tcp", "packet")),
    }


#: How the tables name each slice.
SLICE_WHAT = {"small": "1-100 KB", "large": "from 10 MB", "full": "whole"}
#: The settings of the tables of claims, in order.
SETTINGS_ORDER = ["base", "deadlines", "full"] + [f"{n} flows" for n in FLOWS_PER_TASK] + [COMBINED]


def _by_headline(both: pd.DataFrame) -> Iterator[tuple[str, str, str, pd.DataFrame]]:
    """``both``'s rows per (setting, slice, sizes) that has any, in `SETTINGS_ORDER`."""
    for setting in SETTINGS_ORDER:
        g = both[both["setting"] == setting]
        for slice_ in ("small", "large", "full"):
            for sizes in SIZE_NAME:
                h = g[(g["slice"] == slice_) & (g["sizes"] == sizes)]
                if not h.empty:
                    yield setting, slice_, sizes, h


def render_causes(fig: pd.DataFrame, cz: pd.DataFrame, bs: pd.DataFrame) -> str:
    """The page's subsection on the three settings."""
    base = fig[fig["scheme"].isin(["tafe", "d2tcp"])].assign(setting="base")
    both = pd.concat([base, cz[cz["scheme"] != FIFO_PORTS]], ignore_index=True)
    out = ["### Why not: one change at a time (issue 34)", "", CAUSES_INTRO.format(
        k=DEADLINE_K, flows=", ".join(map(str, FLOWS_PER_TASK)), tafe_full=TAFE_FULL), "",
        "| setting | workload | claim | paper | flow | packet | packet within 1.5x | "
        "drops / timeouts per task: D2TCP; TAFE | lost / spurious: D2TCP; TAFE | packet / flow mean: D2TCP; TAFE |",
        "|---|---|---|---|---|---|---|---|---|---|"]
    found = []
    for setting, slice_, sizes, h in _by_headline(both):
        pk = h[h["level"] == "packet"].groupby("scheme")[["drops", "timeouts", "lost", "spurious"]].mean()
        loss = "; ".join(f"{pk.loc[s, 'drops']:.1f} / {pk.loc[s, 'timeouts']:.2f}" for s in ("d2tcp", "tafe"))
        split = "; ".join(f"{pk.loc[s, 'lost']:.2f} / {pk.loc[s, 'spurious']:.2f}" for s in ("d2tcp", "tafe"))
        m = h.groupby(["scheme", "level"])["mean"].mean()
        cost = "; ".join(f"{m[(s, 'packet')] / m[(s, 'flow')]:.2f}" for s in ("d2tcp", "tafe"))
        what = SLICE_WHAT[slice_]
        for stat, paper, fig_name in SLICE_CLAIMS[slice_]:
            f = ratio(h, slice_, sizes, "d2tcp", stat, "flow")
            k = ratio(h, slice_, sizes, "d2tcp", stat, "packet")
            ok = k <= 1.5 * paper
            if ok and setting != "base":
                found.append((setting, f"{SIZE_NAME[sizes]} {what}, {fig_name} {stat} ({k:.2f})"))
            out.append(f"| {setting} | {SIZE_NAME[sizes]}, {what} | {fig_name}, {stat} | {paper:.2f} | "
                       f"{f:.2f} | {k:.2f} | {'yes' if ok else 'no'} | {loss} | {split} | {cost} |")
    out += ["", "(TAFE's TCT over D2TCP's, mean over seeds; within 1.5x: the packet ratio at most 1.5 times "
            "the paper's. Drops and timeouts: summed over a run's flows, per task, packet level; lost / spurious: "
            "the timeouts whose segment no copy sent before the timer reached the receiver, and those "
            "whose segment one did (it was waiting in a queue, or its ACK was). Packet / "
            "flow mean: each scheme's mean TCT at packet level over its flow level's, what packets cost it.)", ""]
    within: dict[str, list[str]] = {}
    for setting, claim in found:
        if setting == COMBINED:
            continue
        name = {"full": "the whole distributions", "deadlines": "deadlines"}.get(setting, f"{setting} per task")
        within.setdefault(name, []).append(claim)
    by_setting = "; ".join(f"{k} bring {' and '.join(v)}" for k, v in within.items()) or "none brings any"
    out += [CAUSES_NOTE.format(**_causes_numbers(both), by_setting=by_setting), "",
            COMBINED_NOTE.format(**combined_numbers(both)), "", BY_SIZE_INTRO.format(n=COMBINED_FLOWS), "",
            render_by_size(bs), "", BY_SIZE_NOTE.format(n=COMBINED_FLOWS, **by_size_numbers(bs)), ""]
    return "\n".join(out)


#: TAFE's loss to D2TCP (its ratio above 1) below which `_share` says nothing: the share of a
#: loss near 0 is noise over a small number.
MIN_LOSS = 0.05


def _share(tafe: float, fifo: float) -> float:
    """The part of TAFE's loss to D2TCP (its ratio above 1) that FIFO ports take away; NaN when
    TAFE loses less than `MIN_LOSS`."""
    return (tafe - fifo) / (tafe - 1) if tafe > 1 + MIN_LOSS else float("nan")


def _pct(x: float) -> str:
    return "-" if np.isnan(x) else f"{x:.0%}"


def service_rows(fig: pd.DataFrame, cz: pd.DataFrame, sv: pd.DataFrame) -> pd.DataFrame:
    """Per (setting, workload, claim) of `service_settings`: TAFE's and TAFE-with-FIFO-ports'
    packet-level ratio to D2TCP, the share of TAFE's loss the one-by-one rule accounts for, and
    the timeouts per task with their split."""
    base = fig[fig["scheme"].isin(["tafe", "d2tcp"])].assign(setting="base")
    both = pd.concat([base, cz, sv], ignore_index=True)
    rows = []
    for setting, slice_, sizes, _n in service_settings():
        g = both[both["setting"] == setting]
        pk = g[(g["slice"] == slice_) & (g["sizes"] == sizes) & (g["level"] == "packet")]
        loss = pk.groupby("scheme")[["timeouts", "lost", "spurious"]].mean()
        for stat, paper, fig_name in SLICE_CLAIMS[slice_]:
            t = ratio(g, slice_, sizes, "d2tcp", stat, "packet", "tafe")
            f = ratio(g, slice_, sizes, "d2tcp", stat, "packet", FIFO_PORTS)
            rows.append({"setting": setting, "slice": slice_, "sizes": sizes, "stat": stat, "paper": paper,
                         "fig": fig_name, "tafe": t, "fifo": f, "share": _share(t, f),
                         **{f"{k}_{s}": loss.loc[s, k] for s in ("tafe", FIFO_PORTS)
                            for k in ("timeouts", "lost", "spurious")}})
    return pd.DataFrame(rows)


def _claim_cells(r: Any) -> str:
    """A claim row's first cells: setting, workload, claim, the paper's ratio."""
    return (f"| {r['setting']} | {SIZE_NAME[r['sizes']]}, {SLICE_WHAT[r['slice']]} | {r['fig']}, {r['stat']} | "
            f"{r['paper']:.2f} |")


def render_service(fig: pd.DataFrame, cz: pd.DataFrame, sv: pd.DataFrame, bs: pd.DataFrame) -> str:
    """The page's subsection on TAFE's one-by-one ports, measured apart."""
    rows = service_rows(fig, cz, sv)
    out = ["### The one-by-one ports, measured apart (issue 34)", "", SERVICE_INTRO, "",
           "| setting | workload | claim | paper | packet: TAFE | TAFE, FIFO ports | one-by-one's share of "
           "TAFE's loss | timeouts (lost / spurious) per task: TAFE; FIFO ports |", "|---|---|---|---|---|---|---|---|"]
    for _, r in rows.iterrows():
        split = "; ".join(f"{r[f'timeouts_{s}']:.2f} ({r[f'lost_{s}']:.2f} / {r[f'spurious_{s}']:.2f})"
                          for s in ("tafe", FIFO_PORTS))
        out.append(f"{_claim_cells(r)} {r['tafe']:.2f} | {r['fifo']:.2f} | {_pct(r['share'])} | {split} |")
    out += ["", "(TAFE's TCT over D2TCP's at packet level, mean over seeds, with its ports as the paper's "
            "(one flow after the other) and with FIFO ports; share: (TAFE - FIFO ports) / (TAFE - 1), the "
            "part of TAFE's loss to D2TCP that serving a class's flows one after the other accounts for; "
            f"'-' where TAFE loses less than {MIN_LOSS:.0%}.)", "",
            f"By size, seed 1, {COMBINED_FLOWS} flows per task (the `by_size` runs):", "",
            "| workload | tasks by size | packet: TAFE / D2TCP | TAFE, FIFO ports / D2TCP | one-by-one's share | "
            "timeouts (lost / spurious) per task: TAFE; FIFO ports |", "|---|---|---|---|---|---|"]
    for sizes in SIZE_NAME:
        for g in SIZE_GROUPS:
            h = bs[(bs["sizes"] == sizes) & (bs["flows"] == COMBINED_FLOWS) & (bs["group"] == g)].set_index("scheme")
            t, f, d = h.loc["tafe"], h.loc[FIFO_PORTS], h.loc["d2tcp"]
            rt, rf = t["packet"] / d["packet"], f["packet"] / d["packet"]
            out.append(f"| {SIZE_NAME[sizes]}, whole | {g} ({int(t['tasks'])} tasks) | {rt:.2f} | {rf:.2f} | "
                       f"{_pct(_share(rt, rf))} | {_split(t)}; {_split(f)} |")
    out += ["", SERVICE_NOTE.format(**service_numbers(rows, bs)), ""]
    return "\n".join(out)


def verdict_rows(fig: pd.DataFrame, cz: pd.DataFrame, sv: pd.DataFrame) -> pd.DataFrame:
    """Per headline of Figs. 7-9 (each setting, workload and claim): the paper's TAFE / D2TCP (P),
    ours at flow level (F), at packet level with FIFO ports (Q) and as TAFE's ports are (K), and the
    gap K / P split into three measured factors, F / P (the flow-level model), Q / F (what packets
    cost TAFE against D2TCP, ports aside) and K / Q (the one-by-one ports), with their shares of
    log(K / P). Deadlines change only D2TCP's runs, so TAFE's with FIFO ports are the base's."""
    base = fig[fig["scheme"].isin(["tafe", "d2tcp"])].assign(setting="base")
    sv = pd.concat([sv, sv[sv["setting"] == "base"].assign(setting="deadlines")], ignore_index=True)
    both = pd.concat([base, cz, sv], ignore_index=True)
    rows = []
    for setting, slice_, sizes, h in _by_headline(both):
        for stat, paper, fig_name in SLICE_CLAIMS[slice_]:
            f = ratio(h, slice_, sizes, "d2tcp", stat, "flow")
            k = ratio(h, slice_, sizes, "d2tcp", stat, "packet", "tafe")
            q = (ratio(h, slice_, sizes, "d2tcp", stat, "packet", FIFO_PORTS)
                 if (h["scheme"] == FIFO_PORTS).any() else np.nan)
            gap = np.log(k / paper)
            rows.append({"setting": setting, "slice": slice_, "sizes": sizes, "stat": stat, "fig": fig_name,
                         "paper": paper, "flow": f, "fifo": q, "packet": k, "within": k <= 1.5 * paper,
                         "s_model": np.log(f / paper) / gap, "s_packets": np.log(q / f) / gap,
                         "s_ports": np.log(k / q) / gap})
    return pd.DataFrame(rows)


def render_verdict(fig: pd.DataFrame, cz: pd.DataFrame, sv: pd.DataFrame) -> str:
    """The verdict: every headline of Figs. 7-9 within 1.5x, or its gap split into measured causes."""
    v = verdict_rows(fig, cz, sv)
    out = ["### Verdict: every headline of Figs. 7-9, and what its gap is made of (issue 34)", "", VERDICT_INTRO, "",
           "| setting | workload | claim | paper | flow | packet, FIFO ports | packet | gap | shares: flow model; "
           "packets; one-by-one |", "|---|---|---|---|---|---|---|---|---|"]
    for _, r in v.iterrows():
        gap = r["packet"] / r["paper"]
        if r["within"]:
            shares = "within 1.5x"
        else:
            shares = "; ".join(_pct(r[k]) for k in ("s_model", "s_packets", "s_ports"))
        fifo = "-" if np.isnan(r["fifo"]) else f"{r['fifo']:.2f}"
        out.append(f"{_claim_cells(r)} {r['flow']:.2f} | {fifo} | {r['packet']:.2f} | {gap:.2f}x | {shares} |")
    out += ["", VERDICT_NOTE.format(**verdict_numbers(v)), ""]
    return "\n".join(out)


def combined_numbers(both: pd.DataFrame) -> dict[str, Any]:
    """The numbers of `COMBINED_NOTE`: per claim on the whole distributions, the packet and flow
    ratios with (b) alone and with (b) and (c) together, and which claims end within 1.5x."""
    g = both[both["setting"] == COMBINED]
    alone = both[both["setting"] == "full"]
    within, out, cells, ks = [], [], [], []
    for sizes in SIZE_NAME:
        per = []
        for stat, paper, fig_name in SLICE_CLAIMS["full"]:
            k = ratio(g, "full", sizes, "d2tcp", stat, "packet")
            f = ratio(g, "full", sizes, "d2tcp", stat, "flow")
            a = ratio(alone, "full", sizes, "d2tcp", stat, "packet")
            fig_ = fig_name.removesuffix("'s")
            claim = f"{fig_} {stat} on {SIZE_NAME[sizes]} ({k:.2f}, paper {paper:.2f})"
            (within if k <= 1.5 * paper else out).append(claim)
            ks.append(k)
            per.append(f"{stat} {k:.2f} ({f:.2f}; {a:.2f} with two flows)")
        cells.append(f"on {SIZE_NAME[sizes]} {', '.join(per)}")
        h = g[(g["sizes"] == sizes) & (g["level"] == "packet")].groupby("scheme")[["drops", "timeouts"]].mean()
        cells[-1] += (f"; D2TCP drops {h.loc['d2tcp', 'drops']:.1f} packets and times out "
                      f"{h.loc['d2tcp', 'timeouts']:.2f} times per task, TAFE {h.loc['tafe', 'drops']:.1f} and "
                      f"{h.loc['tafe', 'timeouts']:.2f}")
    n = len(within) + len(out)
    if not out:
        verdict = f"all {n} of them"
    elif within:
        verdict = f"{len(within)} of the {n} ({', '.join(within)})"
    else:
        verdict = f"none of the {n}"
    return {"flows": COMBINED_FLOWS, "tafe_full": TAFE_FULL, "cells": "; ".join(cells), "verdict": verdict,
            "out": ", ".join(out) or "none", "lo": min(ks), "hi": max(ks),
            "seeds": ", ".join(map(str, SLICE_SEEDS["small"]))}


def combined_status(cz: pd.DataFrame) -> str:
    """One sentence for the status above: whether (b) and (c) together bring Figs. 7-9 within 1.5x."""
    c = combined_numbers(cz)
    return (f"The two that move it, together (the whole distributions and {c['flows']} flows per task), "
            f"bring {c['verdict']} claims of Figs. 7-9 within 1.5x at packet level (TAFE over D2TCP "
            f"{c['lo']:.2f}-{c['hi']:.2f}).")


def _causes_numbers(both: pd.DataFrame) -> dict[str, Any]:
    def r(setting: str, slice_: str, sizes: str, stat: str, level: str = "packet") -> float:
        return ratio(both[both["setting"] == setting], slice_, sizes, "d2tcp", stat, level)

    def cost(scheme: str, sizes: str, setting: str = "full", slice_: str = "full") -> float:
        g = both[(both["setting"] == setting) & (both["slice"] == slice_) & (both["sizes"] == sizes)
                 & (both["scheme"] == scheme)]
        m = g.groupby("level")["mean"].mean()
        return float(m["packet"] / m["flow"])

    def loss(setting: str, slice_: str, sizes: str, scheme: str, what: str) -> float:
        g = both[(both["setting"] == setting) & (both["slice"] == slice_) & (both["sizes"] == sizes)
                 & (both["scheme"] == scheme) & (both["level"] == "packet")]
        return float(g[what].mean())

    many = f"{FLOWS_PER_TASK[-1]} flows"
    moved = max(abs(r("deadlines", sl, z, st) - r("base", sl, z, st))
                for sl in SLICES for z in SIZE_NAME for st, _p, _f in SLICE_CLAIMS[sl])
    return {
        "dl_verdict": (f"do not move it (no claim's ratio by more than {moved:.2f})" if moved < 0.05
                       else f"move it by up to {moved:.2f}"),
        "d2_cost_dm": cost("d2tcp", "datamining"), "tafe_cost_dm": cost("tafe", "datamining"),
        "d2_cost_ws": cost("d2tcp", "websearch"), "tafe_cost_ws": cost("tafe", "websearch"),
        "d2_to_dm": loss("full", "full", "datamining", "d2tcp", "timeouts"),
        "m_ws_l_max": r(many, "large", "websearch", "max"),
        "m_cost_d": cost("d2tcp", "websearch", many, "large"), "m_cost_t": cost("tafe", "websearch", many, "large"),
        "m_drops_l": loss(many, "large", "websearch", "d2tcp", "drops"),
        "m_to_l": loss(many, "large", "websearch", "d2tcp", "timeouts"),
        "m_drops_l_t": loss(many, "large", "websearch", "tafe", "drops"),
        "m_to_l_t": loss(many, "large", "websearch", "tafe", "timeouts"),
        "dl_ws_s": r("deadlines", "small", "websearch", "p99"), "b_ws_s": r("base", "small", "websearch", "p99"),
        "dl_dm_s": r("deadlines", "small", "datamining", "p99"), "b_dm_s": r("base", "small", "datamining", "p99"),
        "dl_ws_l": r("deadlines", "large", "websearch", "mean"), "b_ws_l": r("base", "large", "websearch", "mean"),
        "dl_dm_l": r("deadlines", "large", "datamining", "mean"), "b_dm_l": r("base", "large", "datamining", "mean"),
        "full_ws": r("full", "full", "websearch", "mean"), "full_dm": r("full", "full", "datamining", "mean"),
        "full_ws_p99": r("full", "full", "websearch", "p99"), "full_dm_p99": r("full", "full", "datamining", "p99"),
        "full_ws_flow": r("full", "full", "websearch", "mean", "flow"),
        "full_dm_flow": r("full", "full", "datamining", "mean", "flow"),
        "many": many,
        "m_ws_s": r(many, "small", "websearch", "p99"), "m_dm_s": r(many, "small", "datamining", "p99"),
        "m_ws_l": r(many, "large", "websearch", "mean"),
        "m_ws_s_flow": r(many, "small", "websearch", "p99", "flow"),
        "m_dm_s_flow": r(many, "small", "datamining", "p99", "flow"),
    }


def service_numbers(rows: pd.DataFrame, bs: pd.DataFrame) -> dict[str, Any]:
    """The numbers of `SERVICE_NOTE`."""

    def b(sizes: str, n_flows: int, g: str, scheme: str, what: str) -> float:
        h = bs[(bs["sizes"] == sizes) & (bs["flows"] == n_flows) & (bs["group"] == g) & (bs["scheme"] == scheme)]
        return float(h[what].iloc[0])

    def group_share(sizes: str, g: str) -> float:
        d = b(sizes, COMBINED_FLOWS, g, "d2tcp", "packet")
        return _share(b(sizes, COMBINED_FLOWS, g, "tafe", "packet") / d,
                      b(sizes, COMBINED_FLOWS, g, FIFO_PORTS, "packet") / d)

    def spurious(n_flows: int, scheme: str) -> float:
        h = bs[(bs["flows"] == n_flows) & (bs["scheme"] == scheme)]
        w = h["tasks"]
        return float((h["spurious"] * w).sum() / (h["timeouts"] * w).sum())

    base = rows[rows["setting"] == "base"]
    many = rows[rows["setting"] == f"{FLOWS_PER_TASK[-1]} flows"]
    comb = rows[rows["setting"] == COMBINED]
    shares = base["share"].dropna()
    worst = base.loc[(base["fifo"] - base["tafe"]).idxmax()]
    if (shares <= MIN_LOSS).all():
        base_said = (f"where TAFE loses, FIFO ports make it lose as much or more (the rule's share of its loss "
                     f"{shares.min():.0%} to {shares.max():.0%}; {worst['fig']} {worst['stat']} on "
                     f"{SIZE_NAME[worst['sizes']]} {SLICE_WHAT[worst['slice']]} {worst['tafe']:.2f} with TAFE's "
                     f"ports, {worst['fifo']:.2f} with FIFO ones): there the one-by-one rule narrows the gap.")
    else:
        base_said = f"the rule's share of TAFE's loss there is {shares.min():.0%} to {shares.max():.0%}."
    small, mid, big = SIZE_GROUPS
    n = COMBINED_FLOWS
    return {
        "base_said": base_said, "many": f"{FLOWS_PER_TASK[-1]} flows",
        "many_move": float((many["tafe"] - many["fifo"]).abs().max()), "n": n,
        "comb_lo": comb["share"].min(), "comb_hi": comb["share"].max(), "c_lo": comb["tafe"].min(),
        "c_hi": comb["tafe"].max(), "cf_lo": comb["fifo"].min(), "cf_hi": comb["fifo"].max(),
        **{f"{z[:2]}_{k}": group_share(z, g)
           for z in SIZE_NAME for k, g in (("small", small), ("mid", mid), ("big", big))},
        "ws_small_t": b("websearch", n, small, "tafe", "packet") * 1e3,
        "ws_small_f": b("websearch", n, small, FIFO_PORTS, "packet") * 1e3,
        "ws_small_d": b("websearch", n, small, "d2tcp", "packet") * 1e3,
        "dm_mid_t": b("datamining", n, mid, "tafe", "packet") * 1e3,
        "dm_mid_f": b("datamining", n, mid, FIFO_PORTS, "packet") * 1e3,
        "dm_mid_d": b("datamining", n, mid, "d2tcp", "packet") * 1e3,
        "dm_big_r": b("datamining", n, big, FIFO_PORTS, "packet") / b("datamining", n, big, "d2tcp", "packet"),
        "dm_big_flow": b("datamining", n, big, "tafe", "flow") / b("datamining", n, big, "d2tcp", "flow"),
        "sp_t2": spurious(2, "tafe"), "sp_d2": spurious(2, "d2tcp"),
        "sp_tn": spurious(n, "tafe"), "sp_dn": spurious(n, "d2tcp"), "sp_fn": spurious(n, FIFO_PORTS),
        "ws_big_sp": b("websearch", n, big, "tafe", "spurious"),
        "ws_big_to": b("websearch", n, big, "tafe", "timeouts"),
        "ws_big_sp_f": b("websearch", n, big, FIFO_PORTS, "spurious"),
        "ws_big_to_f": b("websearch", n, big, FIFO_PORTS, "timeouts"),
        "dm_big_sp": b("datamining", n, big, "tafe", "spurious"),
        "dm_big_to": b("datamining", n, big, "tafe", "timeouts"),
        "dm_big_sp_f": b("datamining", n, big, FIFO_PORTS, "spurious"),
        "dm_big_to_f": b("datamining", n, big, FIFO_PORTS, "timeouts"),
    }


def verdict_numbers(v: pd.DataFrame) -> dict[str, Any]:
    """The numbers of `VERDICT_NOTE`."""
    out = v[~v["within"]]
    lead = out[["s_model", "s_packets", "s_ports"]].idxmax(axis=1)

    def named(rows: pd.DataFrame) -> str:
        return "; ".join(f"{r['setting']}: {SIZE_NAME[r['sizes']]} {SLICE_WHAT[r['slice']]}, "
                         f"{r['fig'].removesuffix(chr(39) + 's')} {r['stat']}" for _, r in rows.iterrows()) or "none"

    paper = out[out["setting"].isin(["base", "deadlines"])]
    comb = out[out["setting"] == COMBINED]
    return {"n": len(v), "n_in": int(v["within"].sum()), "n_out": len(out), "within": named(v[v["within"]]),
            "by_model": int((lead == "s_model").sum()), "by_packets": int((lead == "s_packets").sum()),
            "packets_rows": named(out[lead == "s_packets"]), "by_ports": int((lead == "s_ports").sum()),
            "ports_rows": named(out[lead == "s_ports"]),
            "b_lo": paper["s_model"].min(), "b_hi": paper["s_model"].max(),
            "b_other": float(paper[["s_packets", "s_ports"]].abs().max().max()),
            "c_lo": comb["s_ports"].min(), "c_hi": comb["s_ports"].max(),
            "cm_lo": comb["s_model"].min(), "cm_hi": comb["s_model"].max(),
            "m_lo": out["s_model"].min(), "m_hi": out["s_model"].max()}


# -- the page's section ---------------------------------------------------------------------------

#: The claims of V-C and V-D: (figure, slice, baseline, statistic, the paper's TAFE / baseline).
CLAIMS = [
    ("V-C, Fig. 6: TAFE vs FIFO, p99 TCT, 1-100 KB", "small", "fifo", "p99", 0.66),
    ("V-D, Fig. 7: TAFE vs D2TCP, p99 TCT, 1-100 KB", "small", "d2tcp", "p99", 0.64),
    ("V-D, Fig. 8: TAFE vs D2TCP, mean TCT, from 10 MB", "large", "d2tcp", "mean", 0.55),
    ("V-D, Fig. 9: TAFE vs D2TCP, max TCT, from 10 MB", "large", "d2tcp", "max", 4 / 6),
    ("III at scale: TAFE vs FIFO-LM, mean TCT, 1-100 KB", "small", "fifo-lm", "mean", 0.8),
]


def ratio(fig: pd.DataFrame, slice_: str, sizes: str, base: str, stat: str, level: str,
          scheme: str = "tafe") -> float:
    """TAFE's (or ``scheme``'s) statistic over the baseline's, per seed, averaged."""
    g = fig[(fig["slice"] == slice_) & (fig["sizes"] == sizes) & (fig["level"] == level)]
    t = g[g["scheme"] == scheme].set_index("seed")[stat]
    b = g[g["scheme"] == base].set_index("seed")[stat]
    return float((t / b).mean())


def render(fig2: pd.DataFrame, fig: pd.DataFrame, demoted: pd.DataFrame, seconds: float,
           cz: pd.DataFrame, bs: pd.DataFrame, sv: pd.DataFrame) -> str:
    """The page's packet-level section."""
    out = ["## At packet level (issue 34)", "",
           "The packet engine (docs/packet-engine.md) models the network only, so each server's CPU is "
           "a link of its own here: a compute stage of `w` units on host `h` is a flow of `w` bytes from an "
           "added host to another added host, in the task and before its transfer "
           "(`examples/reproductions/tafe_packet.py`, `cpu_as_links`). At flow level that is the same model "
           "exactly (the table below checks it on Fig. 2); at packet level the CPU stage is sent as "
           "packets by the scheduler's transport. TAFE's task bytes are the whole task's at both levels "
           "(at packet level summed over the task's senders, CPU hosts included, and told to each of them, "
           "as Algorithm 1's switches add up a task's flows), and a `tafe` run's ports serve the flows of "
           "a class first come, first served, one after the other (Algorithm 1's time-stamped queues; "
           "docs/packet-engine.md). "
           "Schedulers at packet level: `tafe` and `fifo-lm` by their host policies (TAFE's "
           "switches mark by task bytes, `sched::host::tafe`, docs/packet-engine.md), `fifo` through the "
           f"coordinator every {COORDINATOR_INTERVAL}, `d2tcp` and `fair` as the D2TCP and DCTCP transports "
           "(no deadlines: D2TCP is DCTCP), with the engine's defaults (unbounded host NIC queues, 170 KB "
           "switch buffers, ECN at 20 packets). Generated with the rest by `make repro-tafe` "
           f"({seconds:.0f} s of the run); `python examples/reproductions/tafe_packet.py` alone prints the "
           "tables.", "",
           "### Fig. 2 at packet level", "",
           "Task completion times (t = 1 ms): flow level with a CPU, flow level with the CPU as a link, "
           "packet level.", "",
           "| scheme | flow, CPU | flow, CPU as a link | packet | paper |", "|---|---|---|---|---|"]
    paper = {"per-flow fair sharing": "8, 8", "FIFO-LM (Baraat)": "4, 6", "TAFE, no demotion (one queue)": "3, 5"}

    def pair(v) -> str:
        return f"{v[0]:.2f}, {v[1]:.2f}"

    for _, r in fig2.iterrows():
        out.append(f"| {r['scheme']} | {pair(r['cpu'])} | {pair(r['links'])} | {pair(r['packet'])} | "
                   f"{paper.get(r['scheme'], '-')} |")
    out += ["", FIG2_NOTE.format(**_fig2_numbers(fig2)), ""]
    n_small, n_large = len(SLICE_SEEDS["small"]), len(SLICE_SEEDS["large"])
    out += ["### Figs. 6-9 at packet level", "",
            f"{N_TASKS} tasks as `tafe.toml` and `tafe-large.toml` draw them (CPUs as links), seeds "
            f"{', '.join(map(str, SLICE_SEEDS['small']))} for 1-100 KB and {', '.join(map(str, SLICE_SEEDS['large']))} "
            f"for tasks from 10 MB (means over them; the tables above use 5 seeds of their own). TAFE's "
            "TCT over the baseline's (below 1: TAFE faster), paper, flow level, packet level:", "",
            "| claim | workload | paper | flow | packet | flow vs packet |", "|---|---|---|---|---|---|"]
    for what, slice_, base, stat, paper_r in CLAIMS:
        for sizes in ("websearch", "datamining"):
            f = ratio(fig, slice_, sizes, base, stat, "flow")
            k = ratio(fig, slice_, sizes, base, stat, "packet")
            d = max(f, k) / min(f, k)
            out.append(f"| {what} | {SIZE_NAME[sizes]} | {paper_r:.2f} | {f:.2f} | {k:.2f} | "
                       f"{d:.2f}x{' *' if d > 1.25 else ''} |")
    out += ["", "Mean / p99 TCT (ms) per scheduler, flow / packet:", "",
            "| scheduler | " + " | ".join(f"{SIZE_NAME[z]}, {r}" for r in ("1-100 KB", "from 10 MB")
                                       for z in ("websearch", "datamining")) + " |",
            "|---|" + "---|" * 4]
    for label in SCHEMES:
        cells = []
        for slice_ in SLICES:
            for sizes in ("websearch", "datamining"):
                g = fig[(fig["slice"] == slice_) & (fig["sizes"] == sizes) & (fig["scheme"] == label)]
                m = g.groupby("level")[["mean", "p99"]].mean() * 1e3
                cells.append(f"{_ms(m.loc['flow', 'mean'])} / {_ms(m.loc['flow', 'p99'])} ; "
                             f"{_ms(m.loc['packet', 'mean'])} / {_ms(m.loc['packet', 'p99'])}")
        out.append(f"| {label} | " + " | ".join(cells) + " |")
    out += ["", "(each cell: flow mean / p99 ; packet mean / p99)", "",
            FIGS_NOTE.format(**_figs_numbers(fig, demoted), combined=combined_status(cz)), ""]
    out += [render_causes(fig, cz, bs), render_service(fig, cz, sv, bs), render_verdict(fig, cz, sv)]
    return "\n".join(out) + "\n"


def _ms(v: float) -> str:
    return f"{v:.3g}" if v < 100 else f"{v:.0f}"


def _fig2_numbers(fig2: pd.DataFrame) -> dict[str, str]:
    g = fig2.set_index("scheme")

    def two(scheme: str) -> str:
        return ", ".join(f"{v:.2f}" for v in g.loc[scheme, "packet"])

    return {"fair": two("per-flow fair sharing"), "fifo_class": two(FIFO_BY_CLASS),
            "fifo_lm": two("FIFO-LM (Baraat)"), "tafe1": two("TAFE, no demotion (one queue)"),
            "tafe": two("TAFE, default thresholds")}


def _figs_numbers(fig: pd.DataFrame, demoted: pd.DataFrame) -> dict[str, float]:
    def mean_p99(slice_: str, sizes: str, scheme: str, level: str) -> tuple[float, float]:
        g = fig[(fig["slice"] == slice_) & (fig["sizes"] == sizes) & (fig["scheme"] == scheme) & (fig["level"] == level)]
        return float(g["mean"].mean() * 1e3), float(g["p99"].mean() * 1e3)

    d = demoted.set_index(["slice", "sizes"])
    return {
        "f6_ws_flow": ratio(fig, "small", "websearch", "fifo", "p99", "flow"),
        "f6_ws_pkt": ratio(fig, "small", "websearch", "fifo", "p99", "packet"),
        "f6_dm_pkt": ratio(fig, "small", "datamining", "fifo", "p99", "packet"),
        "f9_ws_flow": ratio(fig, "large", "websearch", "d2tcp", "max", "flow"),
        "f9_ws_pkt": ratio(fig, "large", "websearch", "d2tcp", "max", "packet"),
        "lvl0_small": float(d.loc[("small", "websearch"), "level0"]),
        "lvl0_small_dm": float(d.loc[("small", "datamining"), "level0"]),
        "lvl0_large": float(d.loc[("large", "websearch"), "level0"]),
        "fifo_p99_flow": mean_p99("small", "websearch", "fifo", "flow")[1],
        "fifo_p99_pkt": mean_p99("small", "websearch", "fifo", "packet")[1],
        "tafe_p99_flow": mean_p99("small", "websearch", "tafe", "flow")[1],
        "tafe_p99_pkt": mean_p99("small", "websearch", "tafe", "packet")[1],
        "d2tcp_p99_pkt": mean_p99("small", "websearch", "d2tcp", "packet")[1],
        **{f"f79_{lv}_{end}": agg(ratio(fig, sl, z, "d2tcp", st, level)
                                  for _, sl, base, st, _p in CLAIMS if base == "d2tcp"
                                  for z in ("websearch", "datamining"))
           for lv, level in (("pkt", "packet"), ("flow", "flow")) for end, agg in (("lo", min), ("hi", max))},
    }
