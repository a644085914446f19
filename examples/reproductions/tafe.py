"""Regenerates the TAFE reproduction: docs/reproductions/tafe.md and its figures.

Runs the three experiment files beside this script (``tafe.toml``: tasks of
1 KB to 100 KB; ``tafe-large.toml``: tasks from 10 MB; both on the web-search
and data-mining distributions with 20, 50, 100 and 500 tasks;
``tafe-full.toml``: the whole distributions and quantile thresholds, a
sensitivity check) into
``results/<name>`` (a re-run resumes: finished points are kept), simulates
the motivating example (III, Fig. 2), draws the figures into
``docs/reproductions/tafe/`` and writes the page, with the paper's numbers
beside ours::

    make repro-tafe                       # build, then this script
    python examples/reproductions/tafe.py [--workers N] [--results DIR] [--no-run]

The paper's numbers are from its text (III, V-C, V-D); its figures carry no
other numbers we could read.
"""

from __future__ import annotations

import math
import sys
from pathlib import Path

import numpy as np
import pandas as pd
from matplotlib.figure import Figure

import coflowkit
import tafe_packet
import tafe_packet_page
from coflowkit import __version__, load_experiment
from coflowkit.experiments.runner import reproduction_parser, run_reproduction

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
DOC = ROOT / "docs" / "reproductions" / "tafe.md"
FIGURES = ROOT / "docs" / "reproductions" / "tafe"
EXPERIMENTS = {"small": HERE / "tafe.toml", "large": HERE / "tafe-large.toml", "full": HERE / "tafe-full.toml"}
SIZES = ("websearch", "datamining")
SIZE_NAME = {"websearch": "web search", "datamining": "data mining"}
#: A gap worth explaining: ours and the paper's differ by more than this factor.
GAP = 1.5
#: Labels of the experiment files.
TAFE, FIFO, FIFO_LM, FAIR, D2TCP = "tafe", "fifo", "fifo-lm", "fair", "d2tcp"
THRESHOLDS = {TAFE: "0.5 / 0.75 of the largest (paper)", "tafe mean/0.75max": "mean / 0.75 of the largest",
              "tafe thirds": "1/3 / 2/3 of the largest"}
ABLATION = "tafe flows=fair"


def main() -> int:
    ap = reproduction_parser(__doc__, ROOT / "results")
    args = ap.parse_args()
    exps = {key: load_experiment(path) for key, path in EXPERIMENTS.items()}
    runs = ((exp, args.results / exp.name) for exp in exps.values())
    if not args.no_run and not run_reproduction(runs, args.workers):
        return 1
    points, coflows = {}, {}
    for key, exp in exps.items():
        store = args.results / exp.name
        pts = pd.read_parquet(store / "points.parquet")
        pts = pts[pts["status"] == "done"].copy()
        pts["queues"] = pts["scheduler"].map(_queues)
        points[key] = pts
        coflows[key] = pd.read_parquet(store / "coflows.parquet", columns=["point", "cct_s"])
    FIGURES.mkdir(parents=True, exist_ok=True)
    fig2 = motivating()
    figures = draw(points, coflows)
    pk = tafe_packet.run_all(args.results, args.no_run)
    section = tafe_packet_page.render(pk["fig2"], pk["figs"], pk["demotion"], pk["seconds"] + pk["causes_seconds"],
                                      pk["causes"], pk["by_size"], pk["service"])
    DOC.write_text(render(points, coflows, fig2, figures, section), encoding="utf-8")
    print(f"wrote {DOC} and {len(figures)} figures in {FIGURES}/", file=sys.stderr)
    return 0


def _queues(spec: str) -> int:
    """tau of a tafe spec (3 unless it says otherwise); 0 for other schedulers."""
    if not spec.startswith("tafe"):
        return 0
    for kv in spec.partition(":")[2].split(";"):
        if kv.startswith("queues="):
            return int(kv.split("=")[1])
    return 3


# -- the motivating example -----------------------------------------------------------------------


def motivating() -> dict[str, list[float]]:
    """Task completion times (in the paper's t) of Fig. 2 under each scheme."""
    w = coflowkit.generate("tafe", preset="motivating")
    specs = {"fair": "per-flow fair sharing", "d2tcp": "D2TCP-like", "fifo-lm": "FIFO-LM (Baraat)",
             "tafe:queues=1": "TAFE, no demotion (one queue)", "tafe": "TAFE, default thresholds (0.5, 0.75 of the largest)"}
    res = coflowkit.simulate(w, list(specs), topology="bigswitch:hosts=2,rate=1Gbps,cpu_rate=1Gbps")
    # unit 62,500 B at 1 Gbit/s: t = 16 u / c = 1 ms.
    return {specs[s]: [round(v * 1e3, 6) for v in res.coflows(s).sort_values("coflow_id")["cct_s"]] for s in specs}


# -- numbers --------------------------------------------------------------------------------------


def stat(pts: pd.DataFrame, label: str, sizes: str, n: int, col: str, queues: int | None = None) -> pd.Series:
    """``col`` of ``label`` per replicate, at (sizes, n_tasks)."""
    sel = (pts["label"] == label) & (pts["workload.sizes"] == sizes) & (pts["workload.n_tasks"] == n)
    if queues is not None:
        sel &= pts["queues"] == queues
    return pts[sel].set_index("replicate")[col].astype(float).sort_index()


def ratio(pts: pd.DataFrame, label: str, base: str, sizes: str, n: int, col: str) -> tuple[float, float, float]:
    """label's statistic over base's, paired per replicate: mean, min, max."""
    r = stat(pts, label, sizes, n, col) / stat(pts, base, sizes, n, col)
    return float(r.mean()), float(r.min()), float(r.max())


def pct(r: tuple[float, float, float]) -> str:
    """A completion-time ratio as a reduction: '34% (28–40%)'."""
    m, lo, hi = r
    return f"{(1 - m) * 100:.0f}% ({(1 - hi) * 100:.0f} to {(1 - lo) * 100:.0f}%)"


def gap(ours_ratio: float, paper_ratio: float) -> str:
    """Improvement factors (baseline / TAFE) compared, flagged beyond GAP either way."""
    g = (1 / ours_ratio) / (1 / paper_ratio)
    flag = " **gap**" if g > GAP or g < 1 / GAP else ""
    return f"{1 / ours_ratio:.2f}x vs {1 / paper_ratio:.2f}x ({g:.2f}{flag})"


# -- figures --------------------------------------------------------------------------------------


def draw(points: dict[str, pd.DataFrame], coflows: dict[str, pd.DataFrame]) -> dict[str, str]:
    figs = {}
    small = points["small"]
    ns = sorted(int(n) for n in small["workload.n_tasks"].unique())
    # Fig. 4: threshold vectors, mean TCT against the number of tasks.
    fig = Figure(figsize=(8, 3.2))
    for ax, sizes in zip(fig.subplots(1, 2), SIZES):
        for label, name in THRESHOLDS.items():
            ax.plot(ns, [stat(small, label, sizes, n, "cct_mean_s").mean() * 1e3 for n in ns], marker="o", label=name)
        ax.set_xscale("log")
        ax.set_xticks(ns, [str(n) for n in ns])
        ax.set_title(f"{SIZE_NAME[sizes]}, 1-100 KB")
        ax.set_xlabel("tasks")
        ax.set_ylabel("mean TCT (ms)")
    fig.axes[0].legend(fontsize=7)
    figs["fig4"] = _save(fig, "fig4-thresholds.png")
    # Fig. 5: number of queues.
    fig = Figure(figsize=(8, 3.2))
    for ax, sizes in zip(fig.subplots(1, 2), SIZES):
        for q in (2, 3, 4, 8):
            label = "tafe thirds" if q == 3 else "tafe even"
            ax.plot(ns, [stat(small, label, sizes, n, "cct_mean_s", q).mean() * 1e3 for n in ns], marker="o",
                    label=f"{q} queues")
        ax.set_xscale("log")
        ax.set_xticks(ns, [str(n) for n in ns])
        ax.set_title(f"{SIZE_NAME[sizes]}, 1-100 KB")
        ax.set_xlabel("tasks")
        ax.set_ylabel("mean TCT (ms)")
    fig.axes[0].legend(fontsize=7)
    figs["fig5"] = _save(fig, "fig5-queues.png")
    # Figs. 6-12: CDFs of TCT, TAFE against FIFO and D2TCP, 100 and 500 tasks.
    for key, rng in (("small", "1-100 KB"), ("large", "from 10 MB")):
        pts, cf = points[key], coflows[key]
        fig = Figure(figsize=(8, 6))
        axes = fig.subplots(2, 2)
        for row, n in enumerate((100, 500)):
            for col, sizes in enumerate(SIZES):
                ax = axes[row][col]
                for label in (TAFE, FIFO, FIFO_LM, D2TCP):
                    sel = (pts["label"] == label) & (pts["workload.sizes"] == sizes) & (pts["workload.n_tasks"] == n)
                    v = np.sort(cf[cf["point"].isin(pts[sel]["point"])]["cct_s"].to_numpy()) * 1e3
                    ax.plot(v, np.arange(1, len(v) + 1) / len(v), label=label)
                ax.set_xscale("log")
                ax.set_title(f"{n} tasks, {SIZE_NAME[sizes]}, {rng}", fontsize=9)
                ax.set_xlabel("TCT (ms)")
                ax.set_ylabel("CDF")
        axes[0][0].legend(fontsize=7)
        fig.tight_layout()
        figs[f"cdf-{key}"] = _save(fig, f"cdf-{key}.png")
    return figs


def _save(fig: Figure, name: str) -> str:
    fig.tight_layout()
    fig.savefig(FIGURES / name, dpi=110)
    return f"tafe/{name}"


# -- the page -------------------------------------------------------------------------------------


def render(points: dict[str, pd.DataFrame], coflows: dict[str, pd.DataFrame], fig2: dict[str, list[float]],
           figures: dict[str, str], packet_section: str) -> str:
    small, large = points["small"], points["large"]
    n_seeds = int(small["replicate"].nunique())
    out = [
        "# Reproducing TAFE",
        "",
        "Y. Zhang, K. Xu, H. Wang, M. Shen, *Towards Shorter Task Completion Time in Datacenter Networks*",
        "(IEEE; seed `003_c7c0a2e74d6d7471.txt`). Generated by `make repro-tafe`",
        f"(`examples/reproductions/tafe.py`, coflowkit {__version__}) from `examples/reproductions/tafe.toml`",
        "(tasks of 1-100 KB), `tafe-large.toml` (tasks from 10 MB) and `tafe-full.toml` (the whole",
        "distributions; a sensitivity check); do not edit by hand.",
        f"Every number is a mean over {n_seeds} workloads (seeds); ranges are the least and largest of",
        "the per-seed values, completion times paired per seed. The schedulers are described in",
        "`docs/schedulers.md` (`tafe`, `d2tcp`).",
        "",
        "## Setup, and what we assumed",
        "",
        "The paper states the workload only in outline (V-A, V-B). What we took, and what we had to choose:",
        "",
        "* **Tasks** (stated: three clients sending tasks persistently, Poisson arrivals, sizes from the",
        "  web-search and data-mining distributions, 1 KB to 100 KB or from 10 MB). *Assumed:* each task",
        "  is two flows, each \"CPU work, then network\" (III's shape) from two distinct servers of 12, as",
        "  much CPU work as bytes, the task's size split evenly; the distributions are conditioned on the",
        "  range (\"10 MB to infinity\" keeps the top 3% of web-search and 5% of data-mining sizes; the",
        "  largest are 29 MB and 973 MB; in 1-100 KB, 28% of web-search tasks are 8,760 B and 61% of",
        "  data-mining tasks 1,460 B, the CDFs' point masses); load 0.8",
        "  on the clients' 1 Gbit/s downlinks, which carry every byte. The paper's Google-trace server",
        "  heterogeneity (six CPU/memory configurations) is not modelled: every server has a CPU as fast",
        "  as its link.",
        "* **Fabric.** A 15-host big switch (1 Gbit/s ports) with a CPU per host; the paper's topology is",
        "  not stated.",
        "* **TAFE.** Three queues; thresholds at 0.5 and 0.75 of the largest task of the workload (our",
        "  reading of \"U1 the mean value of the largest task size, U2 three quarters of it\"); the",
        "  other reading (the mean task size) and thirds (Fig. 4's contrast) are run too. A task's bytes",
        "  include its CPU work. Inside a task, shortest remaining flow first: the limit of the",
        "  size-aware window rule (docs/schedulers.md). Fig. 5's queue counts use evenly spaced",
        "  thresholds (k / tau of the largest task); the paper does not say which.",
        "* **Baselines.** FIFO (V-C's task-aware baseline) and FIFO-LM (Baraat's policy, heavy threshold",
        "  at the 80th percentile of task sizes); the D2TCP-like baseline as docs/schedulers.md defines",
        "  it. The paper states no deadlines, so none are given: D2TCP's imminence factor is then 1 for",
        "  every flow and `d2tcp` is per-flow fair sharing (DCTCP's ideal). This is the biggest",
        "  assumption: with deadlines D2TCP would favour near-deadline flows, but which flows and how",
        "  near is not in the paper.",
        "* **Metrics.** Task completion time (TCT) = last flow's finish - task arrival. \"Tail\" is the",
        "  99th percentile (the paper does not say which); \"droptail completion time\" in V-C we read as",
        "  the tail as well and also show the mean.",
        "",
        "## The motivating example (III, Fig. 2)",
        "",
        "Two tasks, each two flows of 2 units of CPU then 2 units of network, one CPU and one link",
        "(`coflowkit generate tafe --preset motivating`, t = 1 ms). Also exact tests in",
        "`crates/sim/tests/tafe.rs`.",
        "",
        "| scheme | task 1 (t) | task 2 (t) | average | paper |",
        "|---|---|---|---|---|",
    ]
    paper_fig2 = {"per-flow fair sharing": "8, 8 (avg 8)", "FIFO-LM (Baraat)": "4, 6 (avg 5)",
                  "TAFE, no demotion (one queue)": "3, 5 (avg 4)"}
    for name, v in fig2.items():
        out.append(f"| {name} | {v[0]:g} | {v[1]:g} | {sum(v) / 2:g} | {paper_fig2.get(name, '-')} |")
    out += [
        "",
        "TAFE's 3 and 5 are the paper's schedule: no task is demoted in it. With the default thresholds",
        "(0.5 and 0.75 of the largest task, i.e. 4 and 6 units counting CPU work) task 1 crosses 4 units",
        "halfway through its second CPU stage and drops behind task 2, which costs it 1.5 t (hand-checked",
        "in the test): demotion is meant for many tasks of different sizes, not two equal ones.",
        "",
    ]
    # -- claims table
    claims = []

    def claim(what: str, paper: float, r: tuple[float, float, float], note: str) -> None:
        claims.append(f"| {what} | {(1 - paper) * 100:.0f}% lower | {pct(r)} | {gap(r[0], paper)} | {note} |")

    for sizes in SIZES:
        sz = SIZE_NAME[sizes]
        claim(f"V-C, Fig. 6: TAFE vs FIFO, 100 tasks of 1-100 KB, {sz}, p99 TCT", 0.66,
              ratio(small, TAFE, FIFO, sizes, 100, "cct_p99_s"), "\"about 34%\" (droptail)")
        claim(f"V-C: the same, mean TCT, {sz}", 0.66, ratio(small, TAFE, FIFO, sizes, 100, "cct_mean_s"),
              "the paper's 34% read as mean")
        claim(f"V-D, Fig. 7: TAFE vs D2TCP, 100 tasks of 1-100 KB, {sz}, p99 TCT", 0.64,
              ratio(small, TAFE, D2TCP, sizes, 100, "cct_p99_s"), "\"36% tail\"")
        claim(f"V-D, Fig. 8: TAFE vs D2TCP, 100 tasks from 10 MB, {sz}, mean TCT", 0.55,
              ratio(large, TAFE, D2TCP, sizes, 100, "cct_mean_s"), "\"45% average\"")
        claim(f"V-D, Fig. 9: TAFE vs D2TCP, all tasks done (max TCT), 100 tasks from 10 MB, {sz}", 4 / 6,
              ratio(large, TAFE, D2TCP, sizes, 100, "cct_max_s"), "\"about 4 vs more than 6\"")
        claim(f"III: TAFE vs FIFO-LM, 100 tasks of 1-100 KB, {sz}, mean TCT", 0.8,
              ratio(small, TAFE, FIFO_LM, sizes, 100, "cct_mean_s"), "Fig. 2's 20%, not claimed at scale")
    out += [
        "## The paper's numbers beside ours",
        "",
        "Reductions of TAFE's task completion time against each baseline (1 - TAFE / baseline, mean over",
        f"seeds, range in brackets); *factor* compares improvement factors (baseline / TAFE), ours vs the",
        f"paper's, with their ratio, flagged as a **gap** beyond {GAP}x either way.",
        "",
        "| claim | paper | ours | factor: ours vs paper (ratio) | note |",
        "|---|---|---|---|---|",
        *claims,
        "",
    ]
    # -- all schedulers at 100 and 500 tasks
    for key, rng, pts in (("small", "1-100 KB", small), ("large", "from 10 MB", large)):
        out += [f"### Every scheduler, tasks of {rng}: mean and p99 TCT (ms)", "",
                "| scheduler | " + " | ".join(f"{SIZE_NAME[s]}, {n} tasks" for n in (100, 500) for s in SIZES) + " |",
                "|---|" + "---|" * 4]
        labels = [lb for lb in pts["label"].unique()]
        for label in labels:
            qs = sorted(pts[pts["label"] == label]["queues"].unique())
            for q in qs:
                name = label if label != "tafe even" else f"tafe even, {q} queues"
                cells = []
                for n in (100, 500):
                    for s in SIZES:
                        m = stat(pts, label, s, n, "cct_mean_s", q).mean() * 1e3
                        p = stat(pts, label, s, n, "cct_p99_s", q).mean() * 1e3
                        cells.append(f"{_ms(m)} / {_ms(p)}")
                out.append(f"| {name} | " + " | ".join(cells) + " |")
        out.append("")
    # -- Fig. 4 and 5 numbers
    ns = sorted(int(n) for n in small["workload.n_tasks"].unique())
    out += ["## Threshold vectors (Fig. 4)", "", f"![Fig. 4]({figures['fig4']})", "",
            "Mean TCT (ms), tasks of 1-100 KB:", "",
            "| thresholds | " + " | ".join(f"{SIZE_NAME[s]}, {n}" for s in SIZES for n in ns) + " |",
            "|---|" + "---|" * (len(ns) * 2)]
    for label, name in THRESHOLDS.items():
        out.append(f"| {name} | " + " | ".join(_ms(stat(small, label, s, n, "cct_mean_s").mean() * 1e3)
                                            for s in SIZES for n in ns) + " |")
    out += ["", "## Number of queues (Fig. 5)", "", f"![Fig. 5]({figures['fig5']})", "",
            "Mean TCT (ms), tasks of 1-100 KB, thresholds k / tau of the largest task:", "",
            "| queues | " + " | ".join(f"{SIZE_NAME[s]}, {n}" for s in SIZES for n in ns) + " |",
            "|---|" + "---|" * (len(ns) * 2)]
    for q in (2, 3, 4, 8):
        label = "tafe thirds" if q == 3 else "tafe even"
        out.append(f"| {q} | " + " | ".join(_ms(stat(small, label, s, n, "cct_mean_s", q).mean() * 1e3)
                                           for s in SIZES for n in ns) + " |")
    out += ["", "## Distributions of task completion time (Figs. 6-12)", "",
            "TAFE, FIFO, FIFO-LM and the D2TCP-like baseline at 100 tasks (Figs. 6-9) and 500 tasks",
            "(Figs. 10-12), all seeds pooled.", "",
            f"![Tasks of 1-100 KB]({figures['cdf-small']})", "",
            f"![Tasks from 10 MB]({figures['cdf-large']})", ""]
    # -- sensitivity: whole distributions
    full = points["full"]
    out += ["## Sensitivity: the whole distributions, and quantile thresholds", "",
            "`tafe-full.toml`: task sizes from the whole web-search and data-mining distributions (1 KB up,",
            "heavy-tailed) instead of a 1-100 KB or 10 MB+ slice, and TAFE with thresholds at the 50th and",
            "90th percentiles of task sizes beside the paper's fractions of the largest task. STF",
            "(clairvoyant, remaining task bytes) is the order TAFE's demotion emulates without sizes.", "",
            "Mean / p99 TCT (ms), and TAFE's reduction against FIFO and the D2TCP-like baseline:", "",
            "| scheduler | " + " | ".join(f"{SIZE_NAME[s]}, {n} tasks" for n in (100, 500) for s in SIZES) + " |",
            "|---|" + "---|" * 4]
    for label in full["label"].unique():
        cells = [f"{_ms(stat(full, label, s, n, 'cct_mean_s').mean() * 1e3)} / "
                 f"{_ms(stat(full, label, s, n, 'cct_p99_s').mean() * 1e3)}" for n in (100, 500) for s in SIZES]
        out.append(f"| {label} | " + " | ".join(cells) + " |")
    for label in (TAFE, "tafe p50/p90"):
        for base in (FIFO, D2TCP):
            for col, what in (("cct_mean_s", "mean"), ("cct_p99_s", "p99")):
                cells = [pct(ratio(full, label, base, s, n, col)) for n in (100, 500) for s in SIZES]
                out.append(f"| {label} vs {base}, {what} | " + " | ".join(cells) + " |")
    out.append("")
    out.append(packet_section)
    out += GAPS_TEXT
    return "\n".join(out) + "\n"


def _ms(v: float) -> str:
    if not math.isfinite(v):
        return "-"
    return f"{v:.3g}" if v < 100 else f"{v:.0f}"


#: Written after reading the numbers above; the script flags the gaps, this says why.
GAPS_TEXT: list[str] = [
    "## Gaps, and why",
    "",
    "Every claim of V-C and V-D is a gap on the paper's stated setup as we read it (1-100 KB and",
    "10 MB+ tasks); III's example is exact. What the tables show about why:",
    "",
    "1. **The D2TCP-like baseline is per-flow fair sharing here** (no deadlines are stated, so every",
    "   imminence factor is 1). A FIFO-like order (TAFE serves the tasks of a queue first come, first",
    "   served) beats fair sharing in the mean only when task sizes are heavy-tailed. On the 1-100 KB",
    "   and 10 MB+ slices the sizes are nearly flat, so TAFE is within a few percent of fair sharing",
    "   in the mean and worse in the tail: the 36% tail and 45% mean claims, and Fig. 9's \"4 vs more",
    "   than 6\", are not reproduced there. On the whole web-search distribution with quantile",
    "   thresholds (sensitivity table) TAFE does beat fair sharing, by about 10% in both the mean",
    "   and the p99: the paper's direction at about a third of its size. On the whole data-mining",
    "   distribution it loses: its largest tasks (up to 1 GB) end in the last queue, served first come,",
    "   first served, one behind the other, where fair sharing lets the smaller of them through.",
    "   The paper's D2TCP may have had deadlines, or paid packet-level costs (incast, timeouts among",
    "   many competing flows) that a flow-level model does not have. The packet-level section measures",
    "   each, one change at a time (\"Why not: one change at a time\"): deadlines in proportion to flow",
    "   sizes do not move the ratio; on the whole distributions D2TCP's packets cost it far more than",
    "   TAFE's (queued behind large flows), which brings Fig. 8's mean on data mining within 1.5x at",
    "   packet level; more flows per task (incast) bring Fig. 7's p99 on data mining within 1.5x. On",
    "   the slices the paper states, with two flows per task, none of them is in play, and the gap stays.",
    "   The two together (the whole distributions and 40 flows per task) do not add up: at packet",
    "   level TAFE loses more on every claim than on the whole distributions alone, and on data mining",
    "   at flow level too (its last class serves the large tasks one behind the other, now on every",
    "   server). At packet level most of that loss is the wait of a task's flows behind the earlier",
    "   flows of their class at TAFE's one-by-one ports, measured apart with FIFO ports; its timeouts",
    "   there are incast's lost segments, not waits (\"The one-by-one ports, measured apart\"). The",
    "   packet section's verdict splits each headline's gap into the flow-level model, the packets'",
    "   own costs and the one-by-one ports.",
    "2. **Demotion helps where sizes have a heavy tail, and with thresholds that split them.** The",
    "   1-100 KB slice of web search is about a quarter one size (6 packets) and the rest spread",
    "   evenly up to 77 KB: a task's age predicts little about what it has left, so demoting old",
    "   tasks (least attained service) cannot beat FIFO, and the demoted large tasks wait behind every",
    "   new small one (the p99 rises 2-3x). Data mining's slice is more skewed, and there TAFE's mean",
    "   is about 30% below FIFO's, the paper's 34%. On the whole distributions TAFE's mean is 37-59%",
    "   below FIFO's with the paper's thresholds and 65-87% with quantile thresholds (p50/p90), which",
    "   split the bulk of the sizes where 0.5 and 0.75 of the largest task sit above almost all of",
    "   them. So the paper's 34% lies between what our model gives on flat and on heavy-tailed sizes;",
    "   which the paper had, its text does not let us tell.",
    "3. **Flow-awareness does not help in this workload**: `flows=fair` and `flows=weighted` are within",
    "   5% of `flows=srpt`, slightly better (a difference we have not traced further). Each task's two",
    "   flows come from two different servers (their CPU stages run in parallel) and go to one",
    "   client's downlink, where serving them one after the other or together ends the task at the",
    "   same instant. Fig. 2's 20% comes from two stages of one task",
    "   queueing on *one* CPU, which the paper's trace setup (tasks over many servers) does not say",
    "   it has; the exact test shows our TAFE gets Fig. 2's gain when the workload has it.",
    "4. **Unstated setup.** The paper's Google-trace server heterogeneity, topology, load, flows per",
    "   task and their CPU work are not given; each is an assumption above, and each can move the",
    "   numbers.",
    "",
    "Trends the paper reports without numbers. Fig. 4 (its incremental thresholds beat fixed ones,",
    "more so with more tasks): not what we see; the mean-based vector and thirds are as good as or",
    "better than 0.5 / 0.75 of the largest task. Fig. 5 (more queues help, with gains that level",
    "off): holds on data mining (each added queue gains less: 2 to 3 about 20%, then about 10% each",
    "for 4 and 8) and not on the web-search slice, where every queue count is within a few percent.",
    "Figs. 10-12 (500 tasks): the same picture as at 100 tasks.",
]


if __name__ == "__main__":
    raise SystemExit(main())
