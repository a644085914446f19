"""The testbed report's page (sim_vs_testbed.py): the runs saved in OUT directories combined into one
(``--page-from``), the figure of each coflow's testbed CCT against its simulated one, the rankings and
their pairs, and the page written from what the runs saved. Apart from the runs because none of it needs
the testbed: ``--page-from`` writes the page from OUT directories alone."""

from __future__ import annotations

import json
import math
import os
from pathlib import Path
from typing import Any

import pandas as pd
from matplotlib.figure import Figure
from sim_vs_testbed_explanations import EXPLANATIONS
from sim_vs_testbed_policies import CONTROLS, GAP, PAGES, SIM_CLOSE, SIMULATED


def accept_cell(w: dict[str, Any]) -> str:
    """The accept wait of one replay for the page."""
    if w.get("accept_p99") is None:
        return "not measured"
    return f"{w['accept_p99'] * 1e3:.0f} ms / {w['accept_max']:.2f} s"


def draw(csvs: dict[str, Path], figure: Path) -> None:
    """The figure: per policy, each coflow's testbed CCT against its simulated one (from OUT/P-coflows.csv)."""
    figure.parent.mkdir(parents=True, exist_ok=True)
    tables = {p: pd.read_csv(csv) for p, csv in csvs.items()}
    # One scale for every panel (so that panels compare), at most 5 panels a row.
    lo = max(1e-5, min(min(m["cct_s_sim"].min(), m["cct_s_testbed"].min()) for m in tables.values()))
    hi = max(max(m["cct_s_sim"].max(), m["cct_s_testbed"].max()) for m in tables.values())
    cols = min(5, len(tables))
    rows = math.ceil(len(tables) / cols)
    fig = Figure(figsize=(2.6 * cols, 2.6 * rows))
    axes = fig.subplots(rows, cols, squeeze=False, sharex=True, sharey=True).ravel()
    for ax, (p, m) in zip(axes, tables.items(), strict=False):
        ax.loglog(m["cct_s_sim"], m["cct_s_testbed"], ".", ms=2, alpha=0.5)
        ax.plot([lo, hi], [lo, hi], "k--", lw=0.8)
        ax.set_xlim(lo, hi * 1.5)
        ax.set_ylim(lo, hi * 1.5)
        ax.set_title(f"{p} (sim.: {SIMULATED.get(p, 'the same policy')})", fontsize=8)
    for ax in axes[len(tables) :]:
        ax.set_visible(False)
    for ax in axes[(rows - 1) * cols :]:
        ax.set_xlabel("simulated CCT (s)")
    for ax in axes[::cols]:
        ax.set_ylabel("testbed CCT (s)")
    fig.tight_layout()
    fig.savefig(figure, dpi=150)


#: When a policy's replay last changed in a way that moves its numbers, and how: a run made before then
#: still gives the policy's row if no later run replays it, but is not pooled with the runs after.
REPLAY_CHANGED = {
    p: (
        "2026-11-24 10:29 UTC",
        "the sender counted a subcoflow's bytes left and its service at the socket, not on the wire, and sent "
        "a datagram per control message (commit dbc6990, docs/testbed.md)",
    )
    for p in ("dcas", "dcas-local")
}


def combine(outs: list[Path]) -> tuple[dict[str, Any], dict[str, Path]]:
    """The runs saved in ``outs`` as one (rows in first-seen order, a later run's row replacing an earlier
    one's of the same policy), and each row's per-coflow file. A policy's runs made before its replay last
    changed (:data:`REPLAY_CHANGED`) count only if no run since replays it. Refuses runs of different
    workloads or topologies, which one page cannot compare."""
    runs = []
    for out in outs:
        f = out / "page.json"
        if not f.is_file():
            raise SystemExit(f"--page-from {out}: no page.json there (not the OUT of a sim_vs_testbed run)")
        # Runs saved before the D-CAS mix had a page of its own replayed FB2010.
        runs.append({"workload": "fb2010", **json.loads(f.read_text())})
    first = runs[0]
    for out, r in zip(outs[1:], runs[1:], strict=True):
        for k in ("workload", "source", "n_coflows", "n_flows", "topology", "buffer", "rto_max_ms"):
            if r.get(k) != first.get(k):
                raise SystemExit(f"--page-from {out}: its {k} {r.get(k)!r} is not the first run's {first.get(k)!r}")
    rows: dict[str, list[Any]] = {}
    csvs: dict[str, Path] = {}
    why: dict[str, dict[str, float]] = {}
    # Every run's testbed mean CCT of each policy, in the order of the runs: the runs since its replay last
    # changed (REPLAY_CHANGED) if there are any, the others apart.
    def since(r: dict[str, Any], p: str) -> bool:
        return bool(r["date"] >= REPLAY_CHANGED.get(p, ("",))[0])

    fresh = {row[0] for r in runs for row in r["rows"] if since(r, row[0])}
    repeats: dict[str, list[float]] = {}
    before: dict[str, list[str]] = {}
    for out, r in zip(outs, runs, strict=True):
        for row in r["rows"]:
            p = row[0]
            if p in fresh and not since(r, p):
                before.setdefault(p, []).append(r["date"])
                continue
            rows[p] = row
            csvs[p] = out / f"{p}-coflows.csv"
            why[p] = r["why"][p]
            repeats.setdefault(p, []).append(row[2])
    order = dict.fromkeys(row[0] for r in runs for row in r["rows"])
    later = [{"command": r["command"], "date": r["date"], "policies": [row[0] for row in r["rows"]]} for r in runs[1:]]
    # Runs simulated again (--resimulate): when, each; None for a run as it was made.
    again = [r.get("resimulated") for r in runs]
    saved = dict(
        first, rows=[rows[p] for p in order], why=why, sim_s=max(r["sim_s"] for r in runs), later=later, repeats=repeats,
        resimulated=max((d for d in again if d), default=None), resimulated_all=all(again),
        not_pooled={p: {"runs": d, "since": REPLAY_CHANGED[p][0], "why": REPLAY_CHANGED[p][1]} for p, d in before.items()},
    )  # fmt: skip
    return saved, csvs


def pairs_of(names: list[str]) -> list[tuple[str, str]]:
    """Every pair of ``names``, each once, in their order."""
    return [(a, b) for i, a in enumerate(names) for b in names[i + 1 :]]


def alike(a: str, b: str, tb: dict[str, float], sim: dict[str, float]) -> bool:
    """Whether the testbed orders schedulers ``a`` and ``b`` as the simulator does (by mean CCT)."""
    return (tb[a] < tb[b]) == (sim[a] < sim[b])


def close_pairs(pairs: list[tuple[str, str]], tb: dict[str, float], sim: dict[str, float]) -> str:
    """The ranking's pairs counted apart: those the simulator separates by at least ``SIM_CLOSE`` and how
    many of them the testbed orders alike, then the closer ones, each with how far apart the simulator
    puts them and whether the testbed ordered them alike."""
    far = [(a, b) for a, b in pairs if abs(sim[a] - sim[b]) >= SIM_CLOSE * min(sim[a], sim[b])]
    near = [q for q in pairs if q not in far]
    against = [f"{a}/{b}" for a, b in far if not alike(a, b, tb, sim)]
    text = (
        f"Of the {len(far)} pairs the simulator separates by {SIM_CLOSE:.0%} or more, "
        f"{len(far) - len(against)} in the same order" + (f" (against it: {', '.join(against)})" if against else "")
    )
    if near:
        text += f"; closer than {SIM_CLOSE:.0%} in the simulator, within what the testbed resolves: " + ", ".join(
            f"{a}/{b} ({abs(sim[a] - sim[b]) / min(sim[a], sim[b]):.1%} apart, "
            f"{'alike' if alike(a, b, tb, sim) else 'reversed'} on the testbed)"
            for a, b in near
        )
    return text + "."


def repeated(rows: list[tuple[Any, ...]], repeats: dict[str, list[float]]) -> list[str]:
    """The page's lines on policies replayed more than once (``--page-from`` with several runs): each run's
    mean CCT, their mean and range, and the ranking by those means, counting apart the pairs whose runs'
    ranges overlap (which one more run could reorder)."""
    many = {p: v for p, v in repeats.items() if len(v) > 1}
    if not many:
        return []
    sim = {r[0]: r[3] for r in rows}
    lines = [
        "",
        "Policies replayed in more than one run (`--page-from` with every run's OUT; the table above shows the "
        "last run of each): testbed mean CCT per run, in the order of the runs, and their mean.",
        "",
        "| policy | runs | mean of the runs | range | simulated |",
        "|---|---|---|---|---|",
    ]
    for p, v in many.items():
        lines.append(
            f"| {p} | {', '.join(f'{x:.4f}' for x in v)} s | {sum(v) / len(v):.4f} s | {min(v):.4f}-{max(v):.4f} s "
            f"| {sim[p]:.4f} s |"
        )
    ranked = [p for p in many if p not in CONTROLS]
    mean = {p: sum(many[p]) / len(many[p]) for p in ranked}
    pairs = pairs_of(ranked)
    same = [(a, b) for a, b in pairs if alike(a, b, mean, sim)]
    apart = [(a, b) for a, b in pairs if max(many[a]) < min(many[b]) or max(many[b]) < min(many[a])]
    same_apart = [q for q in apart if q in same]
    differ_apart = [f"{a}/{b}" for a, b in apart if (a, b) not in same]
    lines += [
        "",
        f"Ranking by the mean of the runs: testbed {' < '.join(sorted(ranked, key=mean.__getitem__))}; "
        f"simulated {' < '.join(sorted(ranked, key=sim.__getitem__))}: {len(same)} of {len(pairs)} pairs in the "
        f"same order. In {len(apart)} pairs the runs' ranges do not overlap (every run ordered the two alike): "
        f"{len(same_apart)} of them in the simulator's order"
        + (f", against it {', '.join(differ_apart)}" if differ_apart else "")
        + f"; the other {len(pairs) - len(apart)} pairs are within what the runs moved. "
        + close_pairs(pairs, mean, sim),
    ]
    return lines


#: Each page's title after "Simulation against the emulated testbed".
TITLES = {"fb2010": "", "dcas": ": D-CAS's synthetic mix"}


def write_page(saved: dict[str, Any]) -> None:
    """Writes the page from what a run saved (OUT/page.json; ``--page-from OUT`` rewrites it from there)."""
    rows = [tuple(r) for r in saved["rows"]]
    why: dict[str, dict[str, float]] = saved["why"]
    base = {r[0]: r for r in rows}.get("plain")
    lines = [
        "# Simulation against the emulated testbed" + TITLES[saved["workload"]],
        "",
        "Generated by `sudo .venv/bin/python examples/testbed/sim_vs_testbed.py "
        + saved["command"]
        + f"` on {saved['date']} (this machine: {os.cpu_count()} cores, "
        "shared with other jobs: the load is in the second table; it changes the testbed's numbers, not the "
        "simulator's)."
        + "".join(
            f" Then `sim_vs_testbed.py {r['command']}` on {r['date']}, whose rows of {', '.join(r['policies'])} "
            "replace or join the earlier runs' (`--page-from` with every run's OUT directory)."
            for r in saved.get("later", [])
        )
        + (
            f" The simulated columns {'' if saved.get('resimulated_all', True) else 'of some runs '}were simulated "
            f"again on {saved['resimulated']} with the code of then (`--page-from OUT --resimulate`): the testbed's "
            "measurements are the runs'."
            if saved.get("resimulated")
            else ""
        ),
        "",
        f"Workload: {saved['source']}: {saved['n_coflows']} coflows, {saved['n_flows']} flows "
        f"({saved['local_flows_dropped']} flows folded onto their own host dropped). Testbed and simulator: "
        f"`{saved['topology']}`, each switch queue "
        + (
            f"{saved['buffer']:,} bytes (`--buffer`)"
            if saved.get("buffer")
            else "the testbed's default buffer (2 ms at the port's rate, at least 64 KiB)"
        )
        + (
            f", TCP's timeout at most {saved['rto_max_ms']:,} ms (`--rto-max-ms`)"
            if saved.get("rto_max_ms")
            else ", TCP's timeout ceiling the kernel's (120 s)"
        )
        + " (see docs/testbed.md for the testbed and how each policy maps onto its 8 queues). "
        f"Simulating all schedulers took {saved['sim_s']:.1f} s. Every byte of every flow arrived (CRC-32 and "
        "byte count checked at both ends by the replay, which refuses a run otherwise), and `down` left nothing "
        "behind.",
        "",
        "| testbed policy | simulated | testbed mean CCT | simulated mean | gap | testbed p95 | simulated p95 "
        "| testbed: improvement over plain (mean / p95) | simulated: over fair (mean / p95) | replay wall |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for p, s, tm, sm, tp, sp, wall in rows:
        gap = tm / sm - 1
        imp = sim_imp = "-"
        if base is not None:
            imp = f"{base[2] / tm:.2f}x / {base[4] / tp:.2f}x"
            sim_imp = f"{base[3] / sm:.2f}x / {base[5] / sp:.2f}x"
        # The scheduler's name here, its whole spec below the table: a row stays within a screen.
        lines.append(
            f"| {p} | `{s.split(':', 1)[0]}` | {tm:.4f} s | {sm:.4f} s | {gap:+.0%} | {tp:.4f} s | {sp:.4f} s "
            f"| {imp} | {sim_imp} | {wall:.0f} s |"
        )
    specs = [(p, s) for p, s, *_ in rows if ":" in s]
    if specs:
        lines += ["", "The simulated specs in full:", ""]
        lines += [f"- {p}: `{s}`" for p, s in specs]
    # The runtime's diagnostic controls stand for a scheduler already in the ranking (fair-rt for fair).
    ranked = [r[0] for r in rows if r[0] not in CONTROLS]
    tb_mean, sim_mean = {r[0]: r[2] for r in rows}, {r[0]: r[3] for r in rows}
    tb_rank, sim_rank = sorted(ranked, key=tb_mean.__getitem__), sorted(ranked, key=sim_mean.__getitem__)
    agree = "agrees" if tb_rank == sim_rank else "does not agree"
    pairs = pairs_of(ranked)
    same = sum(alike(a, b, tb_mean, sim_mean) for a, b in pairs)
    controls = [r[0] for r in rows if r[0] in CONTROLS]
    lines += [
        "",
        f"Ranking by mean CCT: testbed {' < '.join(tb_rank)}; simulated {' < '.join(sim_rank)}: it {agree} "
        f"({same} of {len(pairs)} pairs of schedulers in the same order"
        + (f"; {', '.join(controls)} left out: a diagnostic control" if controls else "")
        + "). "
        + close_pairs(pairs, tb_mean, sim_mean),
        "",
        "Where the testbed's time went, per replay (counters summed over the 16 host namespaces, drops over "
        "every port's queues; sender lag: a flow's first byte against its scheduled start; *punctual* coflows: "
        "every flow started within 10 ms of its time; *accept wait*: how long a connection opened for a flow waited, "
        "handshake done, for its receiver to take it (p99 / longest; measured since 2026-11-24 05:20 UTC); "
        "*sent again*: flows whose connection failed, sent again from "
        "their first byte, docs/testbed.md; not counted in runs made before 2026-11-23 18:40 UTC):",
        "",
        "| policy | load (1 min) | lag mean / p99 | > 100 ms late | accept wait | TCP retrans. "
        "| RTOs | SYN retrans. | drops: hosts / switch | sent again | punctual coflows "
        "| their CCT: testbed / sim. (gap) |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for p, *_ in rows:
        w = why[p]
        lines.append(
            f"| {p} | {w['load']:.1f} | {w['lag_mean'] * 1e3:.0f} ms / {w['lag_p99']:.2f} s | {w['late']:.1%} "
            f"| {accept_cell(w)} | {w['retrans']:,} | {w['rtos']:,} | {w['syn']:,} | {w['host_drops']:,} / {w['switch_drops']:,} "
            f"| {w['resent'] if 'resent' in w else 'not counted'} | {w['punctual']:.0%} | {w['punctual_tb']:.4f} s / {w['punctual_sim']:.4f} s "
            f"({w['punctual_tb'] / w['punctual_sim'] - 1:+.0%}) |"
        )
    n_large = next(iter(why.values()))["n_large"]
    lines += [
        "",
        f"Each mean CCT as the sum of what the {n_large} large "
        "coflows (total bytes at or above the 80th percentile, FIFO-LM's heavy threshold) and the rest add to it "
        "(their CCTs summed over all coflows' count):",
        "",
        "| policy | small coflows: testbed / simulated | large coflows: testbed / simulated |",
        "|---|---|---|",
    ]
    for p, *_ in rows:
        w = why[p]
        lines.append(
            f"| {p} | {w['small_tb']:.4f} s / {w['small_sim']:.4f} s | {w['large_tb']:.4f} s / {w['large_sim']:.4f} s |"
        )
    lines += repeated(rows, saved.get("repeats", {}))
    for p, n in saved.get("not_pooled", {}).items():
        lines += [
            "",
            f"Not among {p}'s runs: its replays of {', '.join(n['runs'])}, before {n['since']}, when {n['why']}.",
        ]
    doc, figure = PAGES[saved["workload"]]
    lines += ["", f"![testbed against simulated CCT per coflow]({os.path.relpath(figure, doc.parent)})", ""]
    big = [r for r in rows if math.isfinite(r[2] / r[3]) and abs(r[2] / r[3] - 1) > GAP]
    if big:
        lines.append(f"Schedulers with a gap above {GAP:.0%}: {', '.join(r[0] for r in big)}.")
    lines += ["", EXPLANATIONS[saved["workload"]]]
    doc.write_text("\n".join(lines) + "\n")
    print(f"wrote {doc}")
