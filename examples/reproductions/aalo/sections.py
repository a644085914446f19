"""Sections 1-5 of the Aalo page (regenerate.py), a function each: FB2010 on the big switch (Figs. 8
and 9), sensitivity to K, Q1hi, E and Δ (Figs. 12 and 14b), light-tailed coflow sizes (Fig. 13), DAG
workloads (Fig. 11) and multi-wave coflows (Fig. 10). Each reads its experiment's store, draws its
figure, adds its text and tables to the page and returns the numbers that the summary and section 6
(discussion.py) quote."""

from __future__ import annotations

from typing import Any

import matplotlib
import numpy as np
import pandas as pd
from helpers import (
    BINS,
    Page,
    _text,
    bar_groups,
    fmt,
    fmt_x,
    one,
    paired_ratio,
    point_of,
    ratio_axis,
    rng_text,
    save,
    stat_col,
    table,
    top_legend,
    tri,
    tri_text,
)
from matplotlib.figure import Figure

from coflowkit.experiments.analysis import StoreData
from coflowkit.experiments.plots import _COLORS, _MARKERS, _STYLE, SIZE


def fb2010(page: Page, data: StoreData) -> dict[str, float]:
    """Figs. 8 and 9 and the text around them (7.2.1)."""
    p = lambda label, **a: point_of(data, label, **a)  # noqa: E731
    fair, varys, aalo = p("fair"), p("varys"), p("aalo")
    ends = p("fair-ends")
    strict, local = p("aalo (strict queues)"), p("aalo-local")
    varys_c = p("varys (coflow events)")
    baraat, baraat_1s = p("baraat (rtt 300 ms)"), p("baraat (rtt 1 s)")
    lm = {t: p("fifo-lm", scheduler__threshold=t) for t in ["p20", "p40", "p60", "p70", "p80", "p90"]}
    r = lambda a, b, stat="mean", bn="All": one(a, stat_col(stat, bn)) / one(b, stat_col(stat, bn))  # noqa: E731
    n = {
        "fair_mean": r(fair, aalo), "fair_p95": r(fair, aalo, "p95"),
        "ends_mean": r(ends, aalo), "ends_p95": r(ends, aalo, "p95"),
        "ends_fair": r(ends, fair),
        "strict_fair_mean": r(fair, strict), "strict_fair_p95": r(fair, strict, "p95"),
        "varys_mean": r(aalo, varys), "varys_p95": r(aalo, varys, "p95"),
        "strict_varys_mean": r(strict, varys),
        "local_mean": r(local, aalo), "local_p95": r(local, aalo, "p95"),
        "lm80_mean": r(lm["p80"], aalo), "lm80_p95": r(lm["p80"], aalo, "p95"),
        "baraat_mean": r(baraat, aalo), "baraat_p95": r(baraat, aalo, "p95"),
        "baraat1s_mean": r(baraat_1s, aalo), "baraat_lm80": r(baraat, lm["p80"]),
        "baraat_s": one(baraat, "cct_mean_s"), "baraat1s_s": one(baraat_1s, "cct_mean_s"),
        "varys_fair_mean": r(fair, varys), "varysc_fair_mean": r(fair, varys_c),
        "varysc_mean": r(aalo, varys_c),
        "fair_LN": one(fair, stat_col("mean", "LN")), "aalo_LN": one(aalo, stat_col("mean", "LN")),
        "lw_share": one(fair, "LW_n_coflows") * one(fair, stat_col("mean", "LW"))
        / (one(fair, "n_coflows") * one(fair, "cct_mean_s")),
    }
    for b in BINS[:-1]:
        n[f"bin_{b}"] = r(fair, aalo, "mean", b)
    best = min(lm, key=lambda t: one(lm[t], "cct_mean_s"))
    n["lm_best"], n["lm_best_mean"] = best, r(lm[best], aalo)
    # Varys against Aalo for the long coflows (the paper: longer than 10 s).
    cof = data.store.coflows().to_pandas()
    key = {lab: p(lab)["point"].iloc[0] for lab in ["aalo", "varys", "fair"]}
    by = {lab: cof[cof["point"] == k].set_index("coflow_id")["cct_s"] for lab, k in key.items()}
    long_ids = by["aalo"][by["aalo"] > 10.0].index
    n["long_n"] = len(long_ids)
    n["long_varys"] = float(by["aalo"][long_ids].mean() / by["varys"][long_ids].mean())

    page.add("""
## 1. FB2010 on the big switch (Figs. 8 and 9, 7.2.1)

The Facebook 2010 coflow-benchmark trace (526 coflows, 706,397 flows), every
coflow at its arrival time, on a non-blocking big switch of 150 ports at
1 Gbit/s (`examples/reproductions/aalo/fb2010.toml`). Improvement = the other
scheme's CCT statistic / Aalo's (above 1: Aalo faster), as the paper's
Fig. 8 normalizes to Aalo; against `fair` it is fair's CCT / Aalo's.
""")
    rows = [
        ["`aalo` over `fair-ends` (CoflowSim's per-flow fairness), mean CCT", "2.7x", fmt_x(n["ends_mean"]),
         fmt_x(n["ends_mean"] * n["strict_fair_mean"] / n["fair_mean"])],
        ["`aalo` over `fair-ends` (CoflowSim's per-flow fairness), p95 CCT", "2.18x", fmt_x(n["ends_p95"]),
         fmt_x(n["ends_p95"] * n["strict_fair_p95"] / n["fair_p95"])],
        ["`aalo` over `fair` (exact max-min), mean CCT", "2.7x", fmt_x(n["fair_mean"]), f"{fmt_x(n['strict_fair_mean'])}"],
        ["`aalo` over `fair` (exact max-min), p95 CCT", "2.18x", fmt_x(n["fair_p95"]), f"{fmt_x(n['strict_fair_p95'])}"],
        ["`varys` over `aalo`, mean CCT", "within about 12% (EC2); Varys 1.25x better for coflows > 10 s (simulation)",
         f"{fmt_x(n['varys_mean'])} (p95 {fmt_x(n['varys_p95'])}); {fmt_x(n['long_varys'])} on the "
         f"{n['long_n']} coflows longer than 10 s under Aalo",
         fmt_x(n["strict_varys_mean"])],
        ["`aalo` over `aalo-local`, mean CCT", "15.8x", f"{fmt_x(n['local_mean'])} (p95 {fmt_x(n['local_p95'])})", ""],
        ["`aalo` over `fifo-lm` (p80, decided for the fabric), mean CCT", "18.6x",
         f"{fmt_x(n['lm80_mean'])} (p95 {fmt_x(n['lm80_p95'])})", ""],
        ["`aalo` over `baraat` (p80, decided at each link; rtt 300 ms), mean CCT", "18.6x",
         f"{fmt_x(n['baraat_mean'])} (p95 {fmt_x(n['baraat_p95'])}); rtt 1 s: {fmt_x(n['baraat1s_mean'])}", ""],
    ]
    page.add(table(["comparison", "paper", "ours (`aalo`, weighted queues)", "ours, `aalo:queues=strict`"], rows))

    # Per bin (Fig. 8).
    others = [("fair", "per-flow fairness"), ("varys", "Varys"), ("aalo-local", "Aalo without coordination"),
              ("fifo-lm", "FIFO-LM (p80)")]
    body = []
    for stat in ("mean", "p95"):
        for lab, name in others:
            df = lm["p80"] if lab == "fifo-lm" else p(lab)
            body.append([f"{name} / Aalo, {stat}"] + [fmt_x(r(df, aalo, stat, b)) for b in BINS])
    counts = [str(int(one(aalo, f"{b}_n_coflows"))) for b in BINS[:-1]] + [str(int(one(aalo, "n_coflows")))]
    page.add("Per bin (SN/LN/SW/LW: short/long, narrow/wide as in the paper's Table 3; "
             "coflows per bin: " + ", ".join(f"{b} {c}" for b, c in zip(BINS, counts, strict=True)) + "):")
    page.add(table(["normalized CCT (x = scheme / Aalo)", *BINS], body))

    with matplotlib.rc_context(_STYLE):
        fig = Figure(figsize=(SIZE[0] * 2, SIZE[1]))
        axs = fig.subplots(1, 2, sharey=True)
        for ax, stat in zip(axs, ("mean", "p95"), strict=True):
            series = {}
            for lab, name in others:
                df = lm["p80"] if lab == "fifo-lm" else p(lab)
                v = [r(df, aalo, stat, b) for b in BINS]
                series[name] = [(x, x, x) for x in v]
            bar_groups(ax, BINS, series)
            ratio_axis(ax, log=True)
            ax.set_ylim(bottom=0.1)
            ax.set_title("Mean CCT" if stat == "mean" else "95th percentile CCT")
        axs[0].set_ylabel("CCT normalized to Aalo (×)")
        top_legend(fig, axs[0])
        fig8 = save(fig, "fig8-fb2010-bins")
        fig = Figure(figsize=SIZE)
        ax = fig.subplots()
        for i, (lab, name) in enumerate([("fair", "per-flow fairness"), ("varys", "Varys"), ("aalo", "Aalo"),
                                         ("aalo-local", "Aalo without coordination"), ("fifo-lm", "FIFO-LM (p80)")]):
            k = lm["p80"]["point"].iloc[0] if lab == "fifo-lm" else p(lab)["point"].iloc[0]
            x = np.sort(cof.loc[cof["point"] == k, "cct_s"].to_numpy())
            ax.step(x, np.arange(1, len(x) + 1) / len(x), where="post", label=name,
                    color="black" if lab == "fair" else _COLORS[i % len(_COLORS)],
                    linestyle=["--", "-", "-", "-.", ":"][i], linewidth=1.1)
        ax.set_xscale("log")
        ax.set_xlabel("Coflow completion time (s)")
        ax.set_ylabel("Fraction of coflows")
        ax.legend(loc="lower right", fontsize=6)
        fig9 = save(fig, "fig9-fb2010-cdf")
    page.add(f"![Fig. 8: CCT normalized to Aalo, per bin]({fig8})\n\n"
             f"*Fig. 8 (ours): each scheme's mean (left) and 95th-percentile (right) CCT over `aalo`'s, per bin, "
             f"FB2010 on 150 ports; log scale, above 1 Aalo is faster.*")
    page.add(f"![Fig. 9: CCT distributions]({fig9})\n\n*Fig. 9 (ours): CDF of CCTs on FB2010.*")

    # FIFO-LM thresholds.
    rows = [[t, fmt_x(r(df, aalo)), fmt_x(r(df, aalo, "p95")), fmt(one(df, "cct_mean_s"), 1)] for t, df in lm.items()]
    page.add("FIFO-LM's heavy threshold (the paper picked p80, others were worse):")
    header = ["threshold (percentile of coflow size)", "mean CCT / Aalo's", "p95 / Aalo's", "mean CCT (s)"]
    page.add(table(header, rows))

    rows = []
    for lab in ["fair", "varys", "varys (coflow events)", "aalo", "aalo (strict queues)", "aalo-local",
                "baraat (rtt 300 ms)", "baraat (rtt 1 s)"]:
        df = p(lab)
        rows.append([f"`{df['scheduler'].iloc[0]}`", fmt(one(df, "cct_mean_s"), 2),
                     fmt(one(df, "cct_p95_s"), 2), fmt(one(df, "elapsed_s"), 0)])
    page.add("Absolute CCTs (seconds) and the simulation's wall time on this 2-core machine (shared with other jobs):")
    page.add(table(["scheduler", "mean CCT (s)", "p95 CCT (s)", "wall (s)"], rows))
    return n


SWEEPS = [("aalo, K", "k", "K (number of queues)", "Fig. 12a: largest jump at K = 2, then diminishing returns"),
          ("aalo, Q1hi", "q1", "Q1hi (first queue's size)", "Fig. 12b: steady up to 100 MB, then steadily worse"),
          ("aalo, E", "e", "E (threshold factor)", "Fig. 12c: steady over a wide range of E"),
          ("aalo, delta", "delta", "Δ (coordination period)",
           "Fig. 14b (EC2): 1.93x at 10 ms, 1.78x at 1 s, dropping faster above 1 s, plummeting above 10 s")]


#: The paper's defaults (7.1), and every value any sweep uses, in order.
DEFAULTS = {"k": 10, "q1": "10MiB", "e": 10, "delta": "10ms"}
ORDER = {"k": [1, 2, 3, 4, 6, 8, 10, 15], "e": [2, 4, 5, 6, 8, 10, 15, 20],
         "q1": ["1MiB", "10MiB", "100MiB", "1GiB", "10GiB"], "delta": ["10ms", "100ms", "1s", "10s", "100s"]}


def sweep_values(data: StoreData) -> dict[tuple[str, str], list[tuple[Any, tuple[float, float, float]]]]:
    """Per (parameter, statistic): [(value, (mean, min, max) of fair / aalo over replicates)], in
    value order; a store with a point labelled ``aalo`` (the defaults) has it added to every sweep."""
    fair = point_of(data, "fair")
    order = {a["name"]: a["values"] for a in data.axes}
    default = point_of(data, "aalo")
    out = {}
    for label, param, _, _ in SWEEPS:
        for stat in ("mean", "p95"):
            ys = []
            for v in order.get(f"scheduler.{param}", []):
                df = point_of(data, label, **{f"scheduler__{param}": v})
                ys.append((v, tri(paired_ratio(fair, df, stat_col(stat, "All")))))
            if len(default) and all(_text(v) != _text(DEFAULTS[param]) for v, _ in ys):
                ys.append((DEFAULTS[param], tri(paired_ratio(fair, default, stat_col(stat, "All")))))
            rank = [_text(v) for v in ORDER[param]]
            ys.sort(key=lambda y: rank.index(_text(y[0])) if _text(y[0]) in rank else len(rank))
            out[(param, stat)] = ys
    return out


def sensitivity(page: Page, synth: StoreData | None, trace: StoreData | None) -> dict[str, Any]:
    """Fig. 12 (a)-(c) and Fig. 14b: on the synthetic workload (weighted queues) and on FB2010 (strict)."""
    sets = []
    if synth is not None:
        sets.append(("coflow-benchmark, 300 coflows (`aalo`, weighted queues)", synth, sweep_values(synth)))
    if trace is not None:
        sets.append(("FB2010 (`aalo:queues=strict`)", trace, sweep_values(trace)))
    varys = None
    if synth is not None:
        varys = {s: paired_ratio(point_of(synth, "fair"), point_of(synth, "varys"), stat_col(s, "All"))
                 for s in ("mean", "p95")}
    with matplotlib.rc_context(_STYLE):
        fig = Figure(figsize=(SIZE[0] * 2, SIZE[1] * 2))
        axs = fig.subplots(2, 2).ravel()
        for ax, (_, param, xlabel, _) in zip(axs, SWEEPS, strict=True):
            k = 0
            union = [v for v in ORDER[param] if any(_text(v) == _text(y[0]) for _, _, vals in sets
                                                    for y in vals[(param, "mean")])]
            pos = {_text(v): i for i, v in enumerate(union)}
            for name, _, vals in sets:
                for stat in ("mean", "p95"):
                    ys = vals[(param, stat)]
                    x = np.array([pos[_text(y[0])] for y in ys])
                    m = np.array([y[1][0] for y in ys])
                    err = [m - np.array([y[1][1] for y in ys]), np.array([y[1][2] for y in ys]) - m]
                    short = "FB2010, strict" if "FB2010" in name else "synthetic"
                    ax.errorbar(x, m, yerr=err, label=f"{short}, {stat}", color=_COLORS[k % len(_COLORS)],
                                marker=_MARKERS[k % len(_MARKERS)], capsize=1.5,
                                linestyle="-" if stat == "mean" else ":")
                    k += 1
            ax.set_xticks(np.arange(len(union)), [str(v) for v in union])
            ax.set_xlabel(xlabel)
            ax.axhline(1.0, color="black", linewidth=0.7, linestyle="--")
            ratio_axis(ax, log=True)
        axs[0].set_ylabel("Improvement over fair (×)")
        axs[2].set_ylabel("Improvement over fair (×)")
        top_legend(fig, axs[0], ncols=4)
        fig.tight_layout()
        path = save(fig, "fig12-sensitivity")

    page.add("""
## 2. Sensitivity to K, Q1hi, E and Δ (Fig. 12 a-c, Fig. 14b)

One parameter moves at a time, the others at the paper's defaults (K = 10,
E = 10, Q1hi = 10 MiB, Δ = 10 ms), on two workloads: 300 coflows of the
`coflow-benchmark` generator's `aalo` preset (the FB2010 bin mix, 50 hosts
at 1 Gbit/s, load 0.8; two workloads; `examples/reproductions/aalo/sensitivity.toml`)
with the default weighted queues, and FB2010 itself with strict priority
between the queues, as the authors' simulator serves them (the default
weighted sharing takes minutes per run on the trace;
`examples/reproductions/aalo/sensitivity-fb2010.toml`). A value is fair's CCT
statistic over Aalo's on the same workload (for the synthetic one the mean
over two workloads, with their range).
""")
    for label, param, xlabel, paper in SWEEPS:
        header = [param]
        cols = []
        for name, _, vals in sets:
            for stat in ("mean", "p95"):
                header.append(f"{name.split(' (')[0]}: {stat}")
                cols.append(vals[(param, stat)])
        rows = []
        for v in ORDER[param]:
            cells = [dict((_text(x), y) for x, y in c).get(_text(v)) for c in cols]
            if all(c is None for c in cells):
                continue
            row = [str(v)]
            for y in cells:
                if y is None:
                    row.append("")
                else:
                    row.append(fmt_x(y[0]) if y[1] == y[2] else f"{fmt(y[0])}x ({fmt(y[1])}-{fmt(y[2])})")
            rows.append(row)
        page.add(f"**{xlabel}.** Paper: {paper}.")
        page.add(table(header, rows))
    if synth is not None:
        fair = point_of(synth, "fair")
        dflt = point_of(synth, "aalo, K", scheduler__k=10)
        per_bin = ", ".join(f"{b} {rng_text(paired_ratio(fair, dflt, stat_col('mean', b)))}" for b in BINS)
        page.add(f"On the synthetic workloads at the defaults, fair's mean CCT over Aalo's per bin: {per_bin}.")
    if varys is not None:
        page.add(f"Varys on the synthetic workloads: {rng_text(varys['mean'])} (mean), {rng_text(varys['p95'])} (p95).")
    page.add(f"![Fig. 12: sensitivity]({path})\n\n*Fig. 12 and 14b (ours): improvement of `aalo` over `fair` "
             f"in mean and p95 CCT as K, Q1hi, E and Δ move (log scale; bars: range over the two synthetic workloads).*")
    return {name: vals for name, _, vals in sets}


def sizes(page: Page, uni: StoreData, fixed: StoreData, narrow: StoreData | None) -> dict[str, Any]:
    """Fig. 13 (a) uniform and (b) fixed coflow sizes."""
    out: dict[str, Any] = {}
    with matplotlib.rc_context(_STYLE):
        fig = Figure(figsize=(SIZE[0] * 2, SIZE[1]))
        axs = fig.subplots(1, 2, sharey=True)
        for ax, data, kind in zip(axs, (uni, fixed), ("uniform", "fixed"), strict=True):
            values = next(a["values"] for a in data.axes if a["name"] == "workload.coflow_size")
            aalo_by = {v: point_of(data, "aalo", workload__coflow_size=v) for v in values}
            series = {}
            for lab, name in [("fair", "per-flow fairness / Aalo"), ("fifo", "FIFO / Aalo")]:
                vals = []
                for v in values:
                    other = point_of(data, lab, workload__coflow_size=v)
                    vals.append(tri(paired_ratio(other, aalo_by[v], "cct_mean_s")))
                series[name] = vals
                out[(kind, lab)] = list(zip(values, vals, strict=True))
            groups = [str(v) if kind == "uniform" else _pm(v) for v in values]
            bar_groups(ax, groups, series)
            ratio_axis(ax, log=False)
            ax.set_xlabel("Largest coflow size x, sizes U(0, x]" if kind == "uniform" else "Coflow size")
            ax.set_title("(a) Uniform coflow sizes" if kind == "uniform" else "(b) Fixed-size coflows")
            ax.tick_params(axis="x", labelsize=6)
        axs[0].set_ylabel("Mean CCT normalized\nto Aalo (×)")
        top_legend(fig, axs[0])
        path = save(fig, "fig13-sizes")
    page.add("""
## 3. Light-tailed coflow sizes (Fig. 13)

100 coflows with the FB2010 width mix (Table 3) on 50 hosts at load 0.8,
ten workloads per size, as the paper (`examples/reproductions/aalo/uniform.toml`,
`fixed.toml`). The `coflow-benchmark` generator draws each coflow as usual
and then scales its flows to a total drawn from U(0, x] (`size_law =
uniform`, `coflow_size = x`) or fixed (`size_law = fixed`); sizes at 0.9x
and 1.1x of D-CLAS's thresholds (10 MiB, 1,000 MiB, 100,000 MiB) stand for
the paper's "slightly smaller and bigger". Non-preemptive FIFO is `fifo`:
coflows in arrival order, each with strict priority over later ones
(a coflow's flows all arrive with it, so a later coflow never takes
bandwidth an earlier one can use: FIFO without preemption), work-conserving.
Values are the other scheme's mean CCT over Aalo's (mean over the ten
workloads, range in brackets); the paper: "in both cases, Aalo matched or
outperformed the competition".
""")
    for kind, title in (("uniform", "Uniform U(0, x]"), ("fixed", "Fixed size")):
        rows = []
        for (v, yf), (_, yq) in zip(out[(kind, "fair")], out[(kind, "fifo")], strict=True):
            name = str(v) if kind == "uniform" else f"{v} ({_pm(v)})"
            rows.append([name, tri_text(yf), tri_text(yq)])
        page.add(f"**{title}.**")
        first = "coflow size" if kind == "fixed" else "x"
        page.add(table([first, "fair / aalo (mean CCT)", "fifo / aalo (mean CCT)"], rows))
    if narrow is not None:
        values = next(a["values"] for a in narrow.axes if a["name"] == "workload.coflow_size")
        rows = []
        for v in values:
            a = point_of(narrow, "aalo", workload__coflow_size=v)
            cells = [str(v)]
            for lab in ("fair", "fifo"):
                y = tri(paired_ratio(point_of(narrow, lab, workload__coflow_size=v), a, "cct_mean_s"))
                out[("narrow", lab, v)] = y
                cells.append(f"{fmt(y[0])}x ({fmt(y[1])}-{fmt(y[2])})")
            rows.append(cells)
        page.add("**Uniform U(0, x], narrow coflows only** (`examples/reproductions/aalo/uniform-narrow.toml`: the "
                 "same workloads with the SN and LN shares of Table 3 only):")
        page.add(table(["x", "fair / aalo (mean CCT)", "fifo / aalo (mean CCT)"], rows))
    page.add(f"![Fig. 13: uniform and fixed sizes]({path})\n\n*Fig. 13 (ours): mean CCT of per-flow fairness and "
             f"FIFO over Aalo's (above 1 Aalo is faster; bars: range over ten workloads).*")
    return out


#: Fixed sizes as the paper labels them: just below (-) or above (+) a queue threshold.
_THRESHOLD_SIDE = {"9MiB": "10MB-", "11MiB": "10MB+", "900MiB": "1GB-", "1100MiB": "1GB+",
                   "90000MiB": "100GB-", "110000MiB": "100GB+"}


def _pm(v: str) -> str:
    return _THRESHOLD_SIDE.get(str(v), str(v))


def jobs_of(data: StoreData, point: str, cof: pd.DataFrame) -> pd.DataFrame:
    """Per job of one point: completion time (last finish - first arrival), levels, bin of the first part."""
    c = cof[cof["point"] == point]
    own = -1 - c["coflow_id"].astype("int64")
    job = c["job_id"].astype("Int64").fillna(own).astype("int64")
    g = c.assign(job=job).groupby("job")
    return pd.DataFrame({
        "jct": g["finish_s"].max() - g["arrival_s"].min(),
        "levels": g["stage_id"].max().fillna(0).astype(int) + 1 if "stage_id" in c else 1,
        "first": g["coflow_id"].min(),
    })


def _is_true(col: pd.Series) -> pd.Series:
    """A boolean axis column (bools or their text) as bools."""
    return col.astype(str).str.lower() == "true"


#: The label of Varys recomputing only at coflow events (CoflowSim's and its coordinator's rule).
VARYS_C = "varys (coflow events)"
#: DAG runs compared with Aalo without barriers: (label, barriers, key in the results, name).
DAG_CASES = [("fair", False, "fair", "fair / aalo"), ("varys", False, "varys", "varys / aalo"),
             ("varys", True, "varys-barriers", "varys with barriers / aalo"),
             ("aalo", True, "aalo-barriers", "aalo with barriers / aalo"),
             (VARYS_C, False, "varysc", "varys (coflow events) / aalo"),
             (VARYS_C, True, "varysc-barriers", "varys (coflow events) with barriers / aalo")]


def dag(page: Page, data: StoreData) -> dict[str, Any]:
    """Fig. 11: job-level communication time by DAG levels."""
    cof = data.store.coflows().to_pandas()
    done = data.done
    held = _is_true(done["workload.barriers"])
    out: dict[str, Any] = {}
    levels = [1, 2, 3, 4]

    def point(label: str, barriers: bool, rep: Any) -> str:
        d = done[(done["label"] == label) & (held == barriers) & (done["replicate"] == rep)]
        return str(d["point"].iloc[0])

    for lab, barriers, key, _ in DAG_CASES:
        for lv in [*levels, "All"]:
            ratios = []
            for rep in sorted(done["replicate"].unique()):
                ja, jo = jobs_of(data, point("aalo", False, rep), cof), jobs_of(data, point(lab, barriers, rep), cof)
                if lv != "All":
                    ja, jo = ja[ja["levels"] == lv], jo[jo["levels"] == lv]
                ratios.append(jo["jct"].mean() / ja["jct"].mean())
            out[(key, lv)] = tri(np.array(ratios))
    # Job counts per level (first replicate).
    ja = jobs_of(data, point("aalo", False, done["replicate"].min()), cof)
    counts = ja["levels"].value_counts().to_dict()
    with matplotlib.rc_context(_STYLE):
        fig = Figure(figsize=SIZE)
        ax = fig.subplots()
        groups = [str(lv) for lv in levels] + ["All"]
        shown = [("fair", "per-flow fairness / Aalo"), ("varys", "Varys / Aalo"),
                 ("varys-barriers", "Varys with barriers / Aalo"),
                 ("varysc-barriers", "Varys at coflow events, with barriers / Aalo")]
        bar_groups(ax, groups, {name: [out[(key, lv)] for lv in [*levels, "All"]] for key, name in shown})
        ax.set_xlabel("Levels in the DAG")
        ax.set_ylabel("Job communication time\nnormalized to Aalo (×)")
        top_legend(fig, ax, ncols=2)
        path = save(fig, "fig11-dag")
    page.add("""
## 4. DAG workloads (Fig. 11, 7.4)

The paper used 20 TPC-DS query plans on EC2; the plans are not public, so
the `dag` generator draws jobs of 1-4 levels, each level 1-3 coflows, each
coflow of the FB2010 mix with 1-2 parents in the level above, half of the
edges Starts-After (barrier) and half Finishes-Before (pipelined); 150 jobs
on 50 hosts at load 0.8, three workloads (`examples/reproductions/aalo/dag.toml`).
Aalo orders coflows of one DAG by its CoflowId (5.1, Pseudocode 2); `fair`
and `varys` see each coflow on its own, and the engine enforces the
dependencies for all three. Each scheduler also runs the same DAGs with
barriers (`barriers = true`: every Finishes-Before edge made Starts-After),
which is how Varys has to run them: it needs a coflow's flows and sizes
before the coflow starts, so a child fed by a pipeline waits for its parent
(7.4: "Aalo does not introduce artificial barriers"). The paper's
comparison is Varys with barriers against Aalo without. Varys runs twice:
exact (recomputing at every flow event) and recomputing only at coflow
events, as CoflowSim and Varys's coordinator do (`varys:recompute=coflow`,
section 6). The metric is the
job's communication time (last coflow done - job arrival), the other
scheme's mean over Aalo's (without barriers), per number of levels (mean
over the three workloads, range in brackets).
""")
    rows = []
    for lv in [*levels, "All"]:
        n_jobs = str(counts.get(lv, "")) if lv != "All" else str(sum(counts.values()))
        rows.append([str(lv), n_jobs, *[tri_text(out[(key, lv)]) for _, _, key, _ in DAG_CASES]])
    page.add(table(["levels", "jobs (first workload)", *[name for *_, name in DAG_CASES]], rows))
    page.add(f"![Fig. 11: DAGs]({path})\n\n*Fig. 11 (ours): mean job communication time of per-flow fairness, "
             f"Varys, and Varys (exact and at coflow events) with barriers over Aalo's, by levels in the DAG "
             f"(bars: range over three workloads). "
             f"The paper (EC2, TPC-DS): Aalo ahead of both for DAGs of more than one level; 1.7x over fairness and "
             f"3.7x over Varys on average.*")
    return out


#: Multi-wave runs compared with Aalo (one coflow per stage): (label, stage_as, name).
WAVE_CASES = [("varys", "waves", "Varys, each wave a coflow"), ("varys", "coflow", "Varys, the stage as one coflow"),
              ("varys", "barrier", "Varys, the stage behind a barrier"), ("fair", "coflow", "per-flow fairness"),
              ("aalo", "waves", "Aalo, each wave a coflow"), ("aalo", "barrier", "Aalo, the stage behind a barrier"),
              (VARYS_C, "waves", "Varys at coflow events, each wave a coflow"),
              (VARYS_C, "barrier", "Varys at coflow events, the stage behind a barrier")]


def waves(page: Page, data: StoreData) -> dict[str, Any]:
    """Fig. 10: multi-wave coflows, Aalo (one coflow per stage) against Varys (each wave a coflow, or behind a
    barrier)."""
    cof = data.store.coflows().to_pandas()
    out: dict[str, Any] = {}
    done = data.done
    values = next(a["values"] for a in data.axes if a["name"] == "workload.max_waves")
    stage_as = done["workload.stage_as"].astype(str)

    def pts(label: str, mw: Any, declared: str) -> pd.DataFrame:
        at_mw = done["workload.max_waves"].astype(str) == str(mw)
        d = done[(done["label"] == label) & at_mw & (stage_as == declared)]
        return d.sort_values("replicate")

    # Barrier tasks of no time put every wave at the arrival: the max_waves = 1 stage (same flows, common seeds).
    cases = [(lab, declared, declared) for lab, declared, _ in WAVE_CASES]
    one = str(values[0]) if _text(values[0]) == "1" else None
    if one is not None:
        cases.append(("varys", one, "barrier-at-arrival"))
    for mw in values:
        aalo = pts("aalo", mw, "coflow")
        # Bins of the original coflows (the whole-stage run of Aalo).
        bins = {}
        for _, row in aalo.iterrows():
            c = cof[cof["point"] == row["point"]].set_index("coflow_id")["bin"]
            bins[row["replicate"]] = c
        for lab, declared, key in cases:
            other = pts(lab, one, "coflow") if key == "barrier-at-arrival" else pts(lab, mw, declared)
            per_bin: dict[str, list[float]] = {b: [] for b in BINS}
            for (_, ra), (_, ro) in zip(aalo.iterrows(), other.iterrows(), strict=True):
                ja = jobs_of(data, ra["point"], cof)
                jo = jobs_of(data, ro["point"], cof)
                # A stage is its job; its bin is the original coflow's (the job id is the original id).
                b = bins[ra["replicate"]]
                ja = ja.assign(bin=ja["first"].map(b))
                jo = jo.assign(bin=jo["first"].map(b))
                for bn in BINS:
                    sa = ja if bn == "All" else ja[ja["bin"] == bn]
                    so = jo if bn == "All" else jo[jo["bin"] == bn]
                    if len(sa):
                        per_bin[bn].append(so["jct"].mean() / sa["jct"].mean())
            for bn in BINS:
                out[(mw, lab, key, bn)] = tri(np.array(per_bin[bn])) if per_bin[bn] else (np.nan,) * 3
    with matplotlib.rc_context(_STYLE):
        fig = Figure(figsize=SIZE)
        ax = fig.subplots()
        series = {f"max {mw} wave{'s' if int(mw) > 1 else ''}": [out[(mw, "varys", "waves", bn)] for bn in BINS]
                  for mw in values}
        bar_groups(ax, BINS, series)
        ratio_axis(ax, log=max(v[2] for vals in series.values() for v in vals) > 3)
        ax.set_ylabel("Stage completion time of Varys\n(waves as coflows) / Aalo's (×)")
        top_legend(fig, ax, ncols=3)
        path = save(fig, "fig10-waves")
    page.add("""
## 5. Multi-wave coflows (Fig. 10, 7.3)

200 coflows of the FB2010 mix on 50 hosts at load 0.8 whose senders start
in waves: at most `ceil(M / max_waves)` senders of a coflow run at once (M:
the most senders of any coflow), later waves start when the previous one
has finished (`multi-wave` generator; Table 4's 1, 2 and 4 waves). Aalo
sees each stage as one coflow whose size grows wave by wave (5.2). Varys
is run three times on the same flows: with each wave registered as a coflow
of its own when it becomes available (the paper's approach (i);
`stage_as = "waves"`: each wave is a coflow Starts-After the previous,
the waves of a stage one job), with the stage as one coflow that Varys
sizes from its started flows only (`stage_as = "coflow"`), and with the
stage as one coflow behind a barrier (approach (ii), "introducing barriers
to determine the bottleneck of the combined coflow"; `stage_as =
"barrier"`: no flow starts until the last wave exists, then all start
together, each wave taking the time its flows take alone on the idle
fabric; docs/workloads.md); the first two also with Varys recomputing
only at coflow events (`varys:recompute=coflow`, section 6). The paper does not say how long a wave's tasks
run behind a barrier; if they take no time the barrier is at the arrival
and the stage is the one-wave stage (the "barrier at arrival" column: Varys
at max waves 1 over Aalo at each max waves). The metric is the stage's
completion time (its last wave done - its arrival), the other scheme's mean
over Aalo's, three workloads (`examples/reproductions/aalo/waves.toml`). The
paper (EC2, per-wave Varys): from Varys ahead by 0.94x with one wave to Aalo
ahead by 1.21x and 7.91x as more coflows have more waves.
""")
    for declared, what in (("waves", "each wave a coflow"), ("barrier", "the stage behind a barrier")):
        rows = []
        for mw in values:
            rows.append([str(mw)] + [fmt_x(out[(mw, "varys", declared, bn)][0]) for bn in BINS])
        page.add(f"Varys with {what}: its mean stage completion time over Aalo's, per bin of the stage "
                 "(below 1: Varys faster):")
        page.add(table(["max waves", *BINS], rows))
    page.add("All stages, each scheme over Aalo (one coflow per stage):")
    names = [name for *_, name in WAVE_CASES] + (["Varys, barrier at arrival"] if one is not None else [])
    rows = []
    for mw in values:
        rows.append([str(mw)] + [fmt_x(out[(mw, lab, key, "All")][0]) for lab, _, key in cases])
    page.add(table(["max waves", *names], rows))
    page.add(f"![Fig. 10: multi-wave]({path})\n\n*Fig. 10 (ours): mean stage completion time of Varys scheduling "
             f"each wave as its own coflow, over Aalo's, per bin and by the most waves a coflow has "
             f"(bars: range over three workloads; below 1 Varys is faster).*")
    return out
