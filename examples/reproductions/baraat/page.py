"""The Baraat page (regenerate.py): its figures (Figs. 8-9, 10 and 12), then the page itself, section
by section, from the stores' numbers (measures.py) and the text around them (prose.py), with the
packet-level section (packet.py's) put in place."""

from __future__ import annotations

import numpy as np
import pandas as pd
from matplotlib.figure import Figure
from measures import (
    FIGURES,
    MISSING,
    POLICY,
    SIZES,
    STATS,
    TABLE4,
    ccts,
    fx,
    gap,
    max_red,
    ms_stats,
    pc,
    ratio,
    reduction,
    table,
    wall,
)
from prose import (
    COMPUTE_TEXT,
    FB_TEXT,
    GAPS_TABLE4,
    HEADER,
    LEFT,
    PA_TEXT,
    PROTOCOL_TEXT,
    SCALE_TEXT,
    TABLE4_TEXT,
    THRESHOLD_AFTER,
    THRESHOLD_TEXT,
    WORKFLOW_TEXT,
)

from coflowkit import __version__

# -- figures --------------------------------------------------------------------------------------


def fig_table4(data) -> str:
    fig = Figure(figsize=(10, 3.4))
    axes = fig.subplots(1, 3, sharey=True)
    others = list(TABLE4)
    x = np.arange(len(others))
    for ax, sizes in zip(axes, SIZES):
        paper = [TABLE4[o][sizes][1] for o in others]
        ours = [reduction(data, "table4", "baraat", o, "p95", sizes=sizes) for o in others]
        ideal = [reduction(data, "table4", "fifo-lm", o, "p95", sizes=sizes) for o in others]
        ax.bar(x - 0.27, paper, 0.27, label="paper")
        ax.bar(x, ours, 0.27, label="baraat:vc=0.5")
        ax.bar(x + 0.27, ideal, 0.27, label="fifo-lm")
        ax.set_xticks(x, ["RCP", "pFabric", "STF", "Orchestra"])
        ax.axhline(0, color="k", lw=0.6)
        ax.set_title(SIZES[sizes])
    axes[0].set_ylabel("p95 TCT reduction (%)")
    axes[0].legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(FIGURES / "fig8-9-p95.png", dpi=110)
    return "baraat/fig8-9-p95.png"


def fig_pa(data) -> str:
    fig = Figure(figsize=(5, 3.2))
    ax = fig.subplots()
    loads = sorted(data["partition-aggregate"][0]["workload.load"].astype(float).unique())
    for lab in ["baraat", "fifo-lm"]:
        for s, ls in [("mean", "-"), ("p95", "--")]:
            ax.plot(loads, [reduction(data, "partition-aggregate", lab, "fair", s, load=ld) for ld in loads],
                    ls, marker="o", label=f"{lab} {s}")
    ax.scatter([0.8, 0.8], [60, 61], marker="x", color="k", label="paper at 0.8 (mean, p95)")
    ax.axhline(0, color="k", lw=0.6)
    ax.set_xlabel("load")
    ax.set_ylabel("TCT reduction vs fair (%)")
    ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(FIGURES / "fig10-partition-aggregate.png", dpi=110)
    return "baraat/fig10-partition-aggregate.png"


def fig_threshold(data) -> str:
    pts, _ = data["threshold"]
    fig = Figure(figsize=(5, 3.2))
    ax = fig.subplots()
    for lab in ["fifo-lm", "baraat"]:
        ths = thresholds(pts, lab)
        xs = np.arange(len(ths))
        ax.plot(xs, [ratio(data, "threshold", f"{lab}@{t}", "fair", "p95") for t in ths], marker="o", label=f"{lab} p95 / fair")
        if lab == "fifo-lm":
            ax.set_xticks(xs, ths)
    ax.axhline(1, color="k", lw=0.6)
    ax.axhline(ratio(data, "threshold", "fifo", "fair", "p95"), color="gray", ls=":", label="fifo p95 / fair")
    ax.set_xlabel("heavy threshold (percentile of task size)")
    ax.set_ylabel("p95 TCT over fair's")
    ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(FIGURES / "fig12-threshold.png", dpi=110)
    return "baraat/fig12-threshold.png"


def thresholds(pts: pd.DataFrame, label: str) -> list[str]:
    order = ["0", "p50", "p70", "p80", "p90", "p95", "p99", "inf"]
    have = {s.split("threshold=")[1].split(";")[0] for s in pts[pts["label"].str.startswith(label + "@")]["scheduler"]}
    return [t for t in order if t in have]


# -- the page -------------------------------------------------------------------------------------


def relabel(data) -> None:
    """Labels of swept schedulers become ``label@threshold``."""
    for key in ["threshold", "fb2010", "dcas-mix", "bing-heavy"]:
        pts, cof = data[key]
        swept = pts["scheduler"].str.contains("threshold=") & pts["label"].isin(["fifo-lm", "baraat"])
        pts.loc[swept, "label"] = pts.loc[swept, "label"] + "@" + pts.loc[swept, "scheduler"].str.extract(
            r"threshold=([^;]+)")[0]


def splice(page: str, section: str) -> str:
    """``page`` with its packet-level section replaced by ``section`` (or put before the tests'
    list if it has none)."""
    start = page.find(PACKET_HEADING)
    end = page.index(LEFT.lstrip("\n").split("\n", 1)[0])
    return page[: start if start >= 0 else end] + section + "\n" + page[end:]


#: The first line of the packet-level section (packet.render's).
PACKET_HEADING = "## At packet level (issue 34)"


def render(data, packet_section: str) -> str:
    relabel(data)
    figs = [fig_table4(data), fig_pa(data), fig_threshold(data)]
    out = [HEADER.format(version=__version__)]
    if MISSING:
        out.append("**Not run in this regeneration** (numbers n/a): " + ", ".join(MISSING) + ".\n")
    # Table 4
    rows, gaps = [], []
    for o in TABLE4:
        for sizes in SIZES:
            paper = TABLE4[o][sizes]
            ours = [reduction(data, "table4", "baraat", o, s, sizes=sizes) for s in STATS]
            ideal = [reduction(data, "table4", "fifo-lm", o, s, sizes=sizes) for s in STATS]
            link = [reduction(data, "table4", "fifo-lm link", o, s, sizes=sizes) for s in STATS]
            rows.append([POLICY[o], SIZES[sizes], " / ".join(f"{p}%" for p in paper),
                         " / ".join(pc(v) for v in ours), " / ".join(pc(v) for v in ideal),
                         " / ".join(pc(v) for v in link)])
            for s, p, v in zip(STATS, paper, ours):
                if gap(p, v):
                    gaps.append(f"{POLICY[o]}, {SIZES[sizes]}, {s}: paper {p}%, ours {pc(v)}")
    out.append("## 1. Table 4 and Figs. 8-9: Baraat against flow-based and centralized policies\n")
    out.append(TABLE4_TEXT)
    out.append(table(["relative to", "workload", "paper (median / p95 / p99)",
                      "`baraat:vc=0.5` (ours)", "`fifo-lm` p80 (ours)", "`fifo-lm:mux=link` p80 (ours)"], rows))
    out.append(f"\n![p95 reductions]({figs[0]})\n\n*Figs. 8-9 (ours): p95 TCT reduction with Baraat against each policy, the paper's beside ours.*\n")
    # absolute numbers
    rows = []
    for sizes in SIZES:
        for lab in ["fair", "srpt", "stf", "fifo", "fifo-lm", "fifo-lm link", "baraat", "baraat vc=0"]:
            rows.append([SIZES[sizes], f"`{lab}`"] + ms_stats(ccts(data, "table4", lab, sizes=sizes)))
    out.append("Task completion times (ms, both seeds pooled):\n")
    out.append(table(["workload", "scheduler", "mean", "median", "p95", "p99"], rows))
    # baraat vs fifo-lm
    rows = []
    for sizes in SIZES:
        rows.append([SIZES[sizes]] + [fx(ratio(data, 'table4', 'baraat', 'fifo-lm', s, sizes=sizes)) for s in ["mean", "median", "p95", "p99"]]
                    + [fx(ratio(data, 'table4', 'baraat vc=0', 'fifo-lm', s, sizes=sizes)) for s in ["mean", "p95"]])
    out.append("\n**The protocol against its idealized policy** (`baraat:vc=0.5` and `baraat` without virtual capacity, CCT statistic over `fifo-lm`'s, same tasks):\n")
    out.append(table(["workload", "vc=0.5 mean", "median", "p95", "p99", "vc=0 mean", "vc=0 p95"], rows))
    out.append(PROTOCOL_TEXT)
    # two-stage Table 4
    rows = []
    for o in ["fair", "stf", "fifo"]:
        for sizes in ["bing", "uniform"]:  # the file's sweep: analytics two-stage tasks take tens of minutes
            rows.append([POLICY[o], SIZES[sizes], " / ".join(f"{p}%" for p in TABLE4[o][sizes])]
                        + [" / ".join(pc(reduction(data, "table4-two-stage", lab, o, s, sizes=sizes))
                                      for s in STATS) for lab in ["fifo-lm", "fifo-lm link"]])
    out.append("\n**Table 4 with two-stage tasks** (`table4-two-stage.toml`: 300 partition-aggregate tasks of "
               "6 mids x 40 workers, one seed, idealized policies, Bing and uniform sizes (data-analytics two-stage "
               "tasks, whose Pareto tail makes tasks of many GB, take tens of minutes and are not run); "
               "median / p95 / p99):\n")
    out.append(table(["relative to", "workload", "paper (Baraat)", "`fifo-lm` p80", "`fifo-lm:mux=link` p80"], rows))
    # the paper's scale
    rows = [[POLICY[o], SIZES[sizes], " / ".join(f"{p}%" for p in TABLE4[o][sizes]),
             " / ".join(pc(reduction(data, "scale", "fifo-lm", o, s, sizes=sizes)) for s in STATS)]
            for o in ["fair", "fifo"] for sizes in ["bing", "uniform"]]
    out.append("\n**Table 4 at the paper's scale** (`scale.toml`: 10,000 two-stage tasks of 30 mids x 40 workers, "
               "12.3 M flows, on the 36,000-host tree of 30 pods x 30 racks x 40 hosts, load 0.8, one seed, "
               "idealized policies; median / p95 / p99):\n")
    out.append(table(["relative to", "workload", "paper (Baraat)", "`fifo-lm` p80"], rows))
    rows = [[SIZES[sizes], f"`{lab}`"] + ms_stats(ccts(data, "scale", lab, sizes=sizes))
            + [f"{wall(data, 'scale', lab, sizes=sizes):.0f} s"]
            for sizes in ["bing", "uniform"] for lab in ["fair", "fifo", "fifo-lm"]]
    out.append("\nTask completion times at that scale (ms) and each run's time (one core each):\n")
    out.append(table(["workload", "scheduler", "mean", "median", "p95", "p99", "run"], rows))
    out.append(SCALE_TEXT)
    # Bing sensitivity
    rows = []
    for heavy in ["200KB", "2MB"]:
        for o in ["fair", "stf", "fifo"]:
            rows.append([heavy, POLICY[o]] + [" / ".join(pc(reduction(data, "bing-heavy", f"fifo-lm@{t}", o, s, bing_heavy=heavy)) for s in STATS)
                                              for t in ["p80", "p90"]] + [" / ".join(f"{p}%" for p in TABLE4[o]["bing"])])
    out.append("\n**How heavy are Bing's heavy tasks?** (`bing-heavy.toml`: `fifo-lm` relative to each policy, median / p95 / p99, heavy worker flows 10x or 100x the light ones):\n")
    out.append(table(["heavy flow", "relative to", "fifo-lm p80", "fifo-lm p90", "paper (Baraat)"], rows))
    out.append("\n" + GAPS_TABLE4.format(n=len(gaps), gaps="\n".join(f"- {g}" for g in gaps) or "- none"))
    # workflows
    out.append("## 2. Workflows (5.2.2, Figs. 10-11)\n")
    pa = data["partition-aggregate"][0]
    loads = sorted(pa["workload.load"].astype(float).unique()) or [0.8]
    rows = []
    for ld in loads:
        rows.append([f"{ld:g}"] + [pc(reduction(data, "partition-aggregate", lab, "fair", s, load=ld))
                                    for lab in ["baraat", "fifo-lm"] for s in ["mean", "p95"]]
                    + [pc(max_red(data, "partition-aggregate", lab, load=ld)) for lab in ["baraat", "fifo-lm"]])
    out.append(PA_TEXT)
    out.append(table(["load", "baraat mean", "baraat p95", "fifo-lm mean", "fifo-lm p95", "baraat worst", "fifo-lm worst"], rows))
    out.append(f"\n![Fig. 10]({figs[1]})\n\n*Fig. 10 (ours): reduction in TCT against `fair` as the load grows; crosses: the paper at 80% load.*\n")
    rows = [[lab] + [pc(reduction(data, "storage", lab, "fair", s)) for s in ["mean", "p95"]] + [pc(max_red(data, "storage", lab))]
            for lab in ["baraat", "fifo-lm"]]
    out.append("**Storage retrieval** (3-server multi-gets, load 0.8). The paper: worst case -36%, p95 -35%, mean -16% against RCP.\n")
    out.append(table(["scheduler", "mean", "p95", "worst"], rows))
    rows = []
    for stages in [1, 3]:
        for n in [40, 400]:
            dpb = {"n_tasks": n, "dp_stages": stages} if n == 40 else None
            rows.append([f"{stages}", f"{n}"]
                        + [pc(reduction(data, "data-parallel-baraat", "baraat", "fair", "mean", dp_stages=stages)) if dpb else "not run"]
                        + [pc(reduction(data, "data-parallel", "fifo-lm", "fair", "mean", n_tasks=n, dp_stages=stages))]
                        + [pc(max_red(data, "data-parallel-baraat", "baraat", dp_stages=stages)) if dpb else "not run"]
                        + [pc(max_red(data, "data-parallel", "fifo-lm", n_tasks=n, dp_stages=stages))])
    out.append("\n**Data-parallel batches** (all jobs at time 0). The paper, 400 jobs: mean -44% single-stage, -63% multi-stage; worst case -32% multi-stage.\n")
    out.append(table(["stages", "jobs", "baraat mean", "fifo-lm mean", "baraat worst", "fifo-lm worst"], rows))
    out.append(WORKFLOW_TEXT)
    # threshold
    pts = data["threshold"][0]
    rows = []
    for lab in ["fifo-lm", "baraat"]:
        for t in thresholds(pts, lab):
            rows.append([f"`{lab}`", t] + [fx(ratio(data, "threshold", f"{lab}@{t}", "fair", s)) for s in ["mean", "p95", "p99"]]
                        + [fx(ratio(data, "threshold", f"{lab}@{t}", "fifo", "p95"))])
    out.append("## 3. Heavy-task threshold (5.2.3, Fig. 12)\n")
    out.append(THRESHOLD_TEXT)
    out.append(table(["scheduler", "threshold", "mean / fair", "p95 / fair", "p99 / fair", "p95 / fifo"], rows))
    out.append(f"\n![Fig. 12]({figs[2]})\n\n*Fig. 12 (ours): p95 TCT over fair sharing's against the threshold, data-analytics tasks.*\n")
    out.append(THRESHOLD_AFTER)
    # compute
    cm = data["compute"][0]
    rows = []
    for c in sorted(cm["workload.compute_mean"].unique(), key=lambda v: float(str(v).rstrip("ms") or 0)) or ["0ms"]:
        x = ccts(data, "compute", "fair", compute_mean=c)
        share = (float(str(c).rstrip("ms")) * 1e-3) / np.mean(x) if len(x) else float("nan")
        rows.append([str(c), f"{100 * share:.0f}%"] + [pc(reduction(data, "compute", "fifo-lm", "fair", s, compute_mean=c)) for s in ["mean", "p95"]]
                    + [pc(max_red(data, "compute", "fifo-lm", compute_mean=c))])
    out.append("## 4. Computation as an exponential wait (5.2.3)\n")
    out.append(COMPUTE_TEXT)
    out.append(table(["mean wait", "wait / fair's mean TCT", "fifo-lm mean", "fifo-lm p95", "fifo-lm worst"], rows))
    # FB2010 / D-CAS
    out.append("\n## 5. Where other papers report FIFO-LM doing badly: FB2010 and the D-CAS mix\n")
    for key, name in [("fb2010", "FB2010 trace (150-port big switch)"), ("dcas-mix", "D-CAS mix (coflow-benchmark preset `dcas`, one seed)")]:
        pts = data[key][0]
        labs = ["fifo"] + [f"fifo-lm@{t}" for t in ["p80", "p90"]]
        rows = [[f"`{lab}`"] + [fx(ratio(data, key, lab, 'fair', s)) for s in ["mean", "median", "p95"]] for lab in labs]
        out.append(f"**{name}**: CCT over `fair`'s (below 1: better than fair sharing).\n")
        out.append(table(["scheduler", "mean", "median", "p95"], rows) + "\n")
    out.append(FB_TEXT)
    out.append(packet_section)
    out.append(LEFT)
    return "\n".join(out) + "\n"
