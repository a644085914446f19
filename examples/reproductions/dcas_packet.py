"""D-CAS at packet level (issue 34): the packet-level section of docs/reproductions/dcas.md, run by
``dcas.py`` (``make repro-dcas``).

The paper's setup (80 hosts at 1 Gbit/s, 400 coflows of up to 500 MB flows) is about 22 million packets a
scheduler, ten minutes each here, so this section takes D-CAS's mix at the scale of the emulated testbed
(docs/lab/testbed-vs-simulation-dcas.md): the same generator, 200 coflows for 16 hosts at 25 Mbit/s, sizes and
times x0.01, fitted as the testbed replays it (flows folded onto their own host dropped), and each policy's
spec as the testbed's replay builds it (``sim_vs_testbed.py``'s workload and ``replay.policy_spec``). Each
scheduler runs on the flow-level engine and twice on the packet engine (docs/packet-engine.md): with its
defaults (DCTCP, the engine's switch queues) and with the testbed's TCP, queues and resends
(``TESTBED_PACKET``, as ``examples/testbed/starvation_guard.py``). At packet level `dcas` negotiates with
real control packets between hosts, every δ; `dcas-local` keeps each sender's own desired priority (no
messages); `varys` and `aalo` are decided by a coordinator every ``COORDINATOR_INTERVAL`` on acknowledged
bytes, as the testbed's runtime decides every 10 ms. The testbed's means are read from its page.

Run alone (prints the section)::

    python examples/reproductions/dcas_packet.py
"""

from __future__ import annotations

import math
import pickle
import re
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

import coflowkit
from coflowkit.testbed import replay as rp

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
sys.path.insert(0, str(ROOT / "examples" / "testbed"))
import sim_vs_testbed as svt  # noqa: E402  (the testbed's workload and specs, one definition)
import starvation_guard  # noqa: E402  (the packet engine at the testbed's settings, one definition)

TOPOLOGY = "bigswitch:hosts=16,rate=25Mbps"
SCALE = 0.01
N_COFLOWS = 200
SEED = 1
COORDINATOR_INTERVAL = "10ms"
#: The packet engine with the testbed's queues, hosts and resends (docs/lab/testbed-vs-simulation.md).
TESTBED_PACKET = starvation_guard.PACKET
#: The testbed's policies in its page's order; `plain` is per-flow fairness (`fair`).
POLICIES = ("plain", "pias", "fifo-lm", "tafe", "karuna", "dcas-local", "dcas", "aalo", "varys")
#: Columns of the per-class table: the paper's three schedulers (Baraat as FIFO-LM).
CLASS_POLICIES = ("dcas", "varys", "fifo-lm")
#: D-CAS's classes (Varys's): short if its longest flow is below 10 MB (scaled), narrow up to 50 flows.
SHORT_BYTES = 10 * 2**20
NARROW_FLOWS = 50
CLASSES = ("SN", "LN", "SW", "LW")
TESTBED_PAGE = ROOT / "docs" / "lab" / "testbed-vs-simulation-dcas.md"
LEVELS = ("flow", "packet", "packet, testbed's TCP")
#: One change each from the testbed's TCP (`TESTBED_PACKET`), run for `KNOB_POLICIES`: label -> option.
KNOBS = {
    "timer floor 10 ms (the testbed's `rto_min`)": "min_rto=10ms",
    "no loss (`buffer=inf`)": "buffer=inf",
}
KNOB_POLICIES = ("plain", "pias", "dcas-local", "dcas")


def setup() -> tuple[coflowkit.Workload, dict[str, str], pd.Series]:
    """The testbed's D-CAS mix, each policy's spec (as its replay and the testbed page simulate it) and
    each coflow's class."""
    fitted, mix = svt.dcas_workload(TOPOLOGY, "svd", N_COFLOWS, 1.0, SEED, SCALE, SCALE)
    fw = fitted.workload
    specs = {}
    for p in POLICIES:
        if p.startswith("dcas"):
            specs[p] = rp.policy_spec("dcas", fw, negotiate=p == "dcas", **mix)["spec"]
        elif p in svt.HOST_POLICIES:
            specs[p] = rp.policy_spec(p, fw)["spec"]
        else:
            s = svt.SIMULATED[p]
            if s.split(":")[0] == "aalo":
                # The runtime coordinator's period (sim_vs_testbed.py's --delta-ms).
                s += (";" if ":" in s else ":") + "delta=10ms"
            specs[p] = s
    c = pd.DataFrame({k: fw.columns()[k] for k in ("coflow_id", "bytes")})
    g = c.groupby("coflow_id")["bytes"]
    short = g.max() < SHORT_BYTES * SCALE
    narrow = g.size() <= NARROW_FLOWS
    cls = pd.Series(np.where(short, "S", "L"), index=short.index) + np.where(narrow, "N", "W")
    return fw, specs, cls


def run(results: Path) -> dict[str, Any]:
    """Every policy at the three levels (cached in ``results/dcas-packet.pkl`` by spec and options): per
    level, policy -> the coflows' CCTs (s) by coflow id, and each run's seconds."""
    fw, specs, cls = setup()
    cache_file = results / "dcas-packet.pkl"
    cache: dict[tuple[str, str, str], Any] = pickle.loads(cache_file.read_bytes()) if cache_file.exists() else {}
    labels = [*LEVELS, *KNOBS]
    out: dict[str, Any] = {"cct": {lv: {} for lv in labels}, "seconds": {lv: {} for lv in labels},
                           "timeouts": {lv: {} for lv in labels}, "starving": {lv: {} for lv in labels},
                           "classes": cls,
                           "specs": specs, "n_coflows": fw.n_coflows, "n_flows": fw.n_flows}  # fmt: skip
    runs = [(lv, POLICIES, lv, "") for lv in LEVELS]
    runs += [(label, KNOB_POLICIES, LEVELS[2], opt) for label, opt in KNOBS.items()]
    for label, policies, level, extra in runs:
        for p in policies:
            spec, opts = specs[p], ""
            if level != "flow":
                opts = ",".join(o for o in (TESTBED_PACKET if level == LEVELS[2] else "", extra) if o)
                if p == "plain":
                    # Plain TCP is the bare transport at packet level (per-flow fairness is its ideal);
                    # the options then name no transport: the spec does.
                    spec = "tcp" if level == LEVELS[2] else "dctcp"
                    opts = ",".join(o for o in opts.split(",") if o and not o.startswith("transport="))
                elif p in svt.RUNTIME:
                    opts = ",".join(o for o in (opts, f"coordinator_interval={COORDINATOR_INTERVAL}") if o)
            key = (level, spec, opts)
            if key not in cache:
                t = time.time()
                kw: dict[str, Any] = {"topology": TOPOLOGY, "progress": False}
                if level != "flow":
                    kw.update(engine="packet", packet=opts or None)
                res = coflowkit.simulate(fw, spec, **kw)
                co = res.coflows(spec)
                timeouts = int(res.flows(spec)["timeouts"].sum()) if level != "flow" else 0
                # D-CAS's host policy counts its decisions (the packet engine's scheduler_stats).
                st = res.scheduler_stats(spec) if level != "flow" and p.startswith("dcas") else {}
                starving = (st["dcas_decided_starving"], st["dcas_decided_large"]) if st else None
                cache[key] = (pd.Series(co["cct_s"].to_numpy(), index=co["coflow_id"].to_numpy()), time.time() - t,
                              timeouts, starving)  # fmt: skip
                results.mkdir(parents=True, exist_ok=True)
                cache_file.write_bytes(pickle.dumps(cache))
                print(f"dcas packet: {label}, {p}: mean CCT {cache[key][0].mean():.4f} s ({cache[key][1]:.0f} s)",
                      flush=True)  # fmt: skip
            out["cct"][label][p], out["seconds"][label][p], out["timeouts"][label][p], st = cache[key]
            if st:
                out["starving"][label][p] = st
    return out


def testbed_means(page: Path = TESTBED_PAGE) -> tuple[dict[str, float], str]:
    """The testbed's mean CCT per policy from its page's first table, and the run's date. ValueError
    naming the page if it has no such table."""
    text = page.read_text()
    date = re.search(r"` on (\d{4}-\d\d-\d\d \d\d:\d\d UTC)", text)
    means = {m[1]: float(m[2]) for m in re.finditer(r"^\| ([a-z-]+) \| `[^`]+` \| ([0-9.]+) s \|", text, re.M)}
    if not date or "plain" not in means:
        raise ValueError(f"{page}: no table of testbed mean CCTs with `plain` (the page sim_vs_testbed.py writes)")
    return means, date[1]


def x(v: float) -> str:
    """A factor: 38.5x, 3.04x, 0.61x (dcas.py's tables too)."""
    if not math.isfinite(v):
        return "-"
    return f"{v:.1f}x" if v >= 10 else f"{v:.2f}x"


def section(r: dict[str, Any]) -> str:
    """The page's packet-level section."""
    cct, cls = r["cct"], r["classes"]
    tb, tb_date = testbed_means()
    base = {lv: cct[lv]["plain"] for lv in LEVELS}

    def factor(lv: str, p: str, which: str = "All") -> float:
        ids = cls.index if which == "All" else cls.index[cls == which]
        return float(base[lv].reindex(ids).mean() / cct[lv][p].reindex(ids).mean())

    counts = cls.value_counts()
    lines = [
        "## At packet level (issue 34)",
        "",
        "The paper's setup is about 22 million packets a scheduler (ten minutes each here), so this section "
        f"takes D-CAS's mix at the emulated testbed's scale: {N_COFLOWS} coflows of the same generator for 16 hosts "
        f"at 25 Mbit/s, sizes and times x{SCALE} ({r['n_coflows']} coflows, {r['n_flows']} flows once flows "
        "folded onto their own host are dropped), each policy's spec as the testbed's replay builds it "
        "([docs/lab/testbed-vs-simulation-dcas.md](../lab/testbed-vs-simulation-dcas.md)). Each runs on the flow-level "
        "engine and twice on the packet engine ([docs/packet-engine.md](../packet-engine.md)): with its defaults "
        "(DCTCP, the engine's switch queues) and with the testbed's TCP, queues and resends "
        f"(`{TESTBED_PACKET}`). At packet level `dcas` negotiates with real control packets between hosts every "
        "δ, `dcas-local` keeps each sender's own desired priority, and `varys` and `aalo` are decided by a "
        f"coordinator every {COORDINATOR_INTERVAL} on acknowledged bytes (the testbed's runtime: every 10 ms). "
        f"The testbed column is its page's run ({tb_date}, `sim_vs_testbed.py --workload dcas`); there `dcas` is "
        "simulated with the negotiation's "
        "delay and losses that replay measured, here with none. Made by "
        "[`examples/reproductions/dcas_packet.py`](../../examples/reproductions/dcas_packet.py) within "
        "`make repro-dcas`.",
        "",
        "Mean CCT, and its improvement over per-flow fairness (`fair`; on the testbed plain TCP):",
        "",
        "| scheduler | flow level | packet level | packet, testbed's TCP | testbed | improvement: flow / packet / "
        "testbed's TCP / testbed |",
        "|---|---|---|---|---|---|",
    ]
    for p in POLICIES:
        name = "`fair` (packet level: the bare transport)" if p == "plain" else f"`{p}`"
        t = tb.get(p)
        lines.append(
            f"| {name} | " + " | ".join(f"{cct[lv][p].mean():.4f} s" for lv in LEVELS)
            + (f" | {t:.4f} s" if t else " | -") + " | "
            + " / ".join(x(factor(lv, p)) for lv in LEVELS) + (f" / {x(tb['plain'] / t)}" if t else "") + " |"
        )  # fmt: skip
    lines += [
        "",
        "Per class (Fig. 3's view; short: longest flow below 10 MB x0.01, narrow: at most 50 flows; coflows per "
        "class: " + ", ".join(f"{c} {counts.get(c, 0)}" for c in CLASSES) + "), improvement of the mean CCT over "
        "`fair`, flow level / packet level / packet with the testbed's TCP:",
        "",
        "| class | " + " | ".join(f"`{p}`" for p in CLASS_POLICIES) + " |",
        "|---|" + "---|" * len(CLASS_POLICIES),
    ]
    for c in (*CLASSES, "All"):
        if c != "All" and not counts.get(c, 0):
            continue
        lines.append(f"| {c} | " + " | ".join(" / ".join(x(factor(lv, p, c)) for lv in LEVELS)
                                              for p in CLASS_POLICIES) + " |")  # fmt: skip
    lines += ["", *verdict(r, factor, tb), "", *knobs(r, tb), ""]
    secs = {lv: sum(r["seconds"][lv].values()) for lv in LEVELS}
    lines.append(
        "Run time of the section's "
        + ", ".join(f"{len(POLICIES)} {lv} runs {secs[lv]:.0f} s" for lv in LEVELS)
        + " (this machine, shared; cached in `results/dcas-packet.pkl` by spec and options)."
    )
    return "\n".join(lines) + "\n"


def verdict(r: dict[str, Any], factor: Any, tb: dict[str, float]) -> list[str]:
    """The section's findings in words, from the numbers: how the ranking and the paper's claims hold from
    level to level."""
    cct = r["cct"]
    ranked = [p for p in POLICIES]
    order = {lv: sorted(ranked, key=lambda p: cct[lv][p].mean()) for lv in LEVELS}
    tb_order = sorted([p for p in ranked if p in tb], key=tb.__getitem__)

    def agree(a: list[str], b: list[str]) -> tuple[int, int]:
        common = [p for p in a if p in b]
        pairs = [(u, v) for i, u in enumerate(common) for v in common[i + 1 :]]
        return sum((a.index(u) < a.index(v)) == (b.index(u) < b.index(v)) for u, v in pairs), len(pairs)

    def name(p: str) -> str:
        return "`fair`" if p == "plain" else f"`{p}`"

    out = []
    for lv in LEVELS[1:]:
        same, n = agree(order["flow"], order[lv])
        out.append(
            f"* Ranking by mean CCT, {lv}: {' < '.join(name(p) for p in order[lv])}; {same} of {n} pairs in the "
            "flow level's order."
        )
    for lv in LEVELS:
        same, n = agree(order[lv], tb_order)
        out.append(f"* Against the testbed's ranking ({' < '.join(name(p) for p in tb_order)}), {lv}: {same} of {n} pairs alike.")
    d, v = {lv: factor(lv, "dcas") for lv in LEVELS}, {lv: factor(lv, "varys") for lv in LEVELS}
    out.append(
        "* The paper's claims on its own setup (V-B): D-CAS within 15% of Varys in the mean, far ahead of "
        "per-flow fairness. Here `dcas` against `varys` (mean CCT, above 1: `dcas` behind): "
        + ", ".join(f"{lv} {cct[lv]['dcas'].mean() / cct[lv]['varys'].mean():.2f}" for lv in LEVELS)
        + "; `dcas` over `fair`: " + ", ".join(f"{lv} {x(d[lv])}" for lv in LEVELS)
        + "; `varys` over `fair`: " + ", ".join(f"{lv} {x(v[lv])}" for lv in LEVELS) + "."
    )
    far = [
        (lv, p) for lv in LEVELS[1:] for p in POLICIES[1:]
        if abs(cct[lv][p].mean() / cct["flow"][p].mean() - 1) > 0.25
    ]  # fmt: skip
    out.append(
        "* Mean CCT more than 25% from the flow level's: "
        + (", ".join(f"{name(p)} ({lv}, {cct[lv][p].mean() / cct['flow'][p].mean() - 1:+.0%})" for lv, p in far)
           if far else "none") + "."
    )  # fmt: skip
    return out


def knobs(r: dict[str, Any], tb: dict[str, float]) -> list[str]:
    """The one-change runs from the testbed's TCP: what moves the priority policies against plain TCP."""
    cct, to = r["cct"], r["timeouts"]
    rows = [(LEVELS[2] + " (as above)", LEVELS[2]), *((k, k) for k in KNOBS)]

    def name(p: str) -> str:
        return "plain TCP" if p == "plain" else f"`{p}`"

    lines = [
        "**Where the packet level parts from the testbed: one change at a time** from the testbed's TCP (mean "
        "CCT, in brackets the flows' retransmission timeouts):",
        "",
        "| change | " + " | ".join(name(p) for p in KNOB_POLICIES) + " |",
        "|---|" + "---|" * len(KNOB_POLICIES),
    ]
    for label, key in rows:
        lines.append(f"| {label} | " + " | ".join(f"{cct[key][p].mean():.4f} s ({to[key][p]:,})" for p in KNOB_POLICIES)
                     + " |")  # fmt: skip
    lines.append("| testbed | " + " | ".join(f"{tb[p]:.4f} s" if p in tb else "-" for p in KNOB_POLICIES) + " |")
    lines.append("")

    def ahead(key: str, p: str) -> str:
        v = cct[key]["plain"].mean() / cct[key][p].mean() - 1
        if abs(v) < 0.005:
            return f"{name(p)} level with plain TCP"
        return f"{name(p)} {abs(v):.0%} {'ahead of' if v >= 0 else 'behind'} plain TCP"

    prio = KNOB_POLICIES[1:]
    on_tb = [f"{name(p)} is {tb['plain'] / tb[p] - 1:.0%} ahead of plain TCP" for p in prio if p in tb]
    text = [f"On the testbed {', '.join(on_tb)}."]
    for label, key in rows:
        text.append(f"With {label}: {', '.join(ahead(key, p) for p in prio)}.")
    starving = []
    for key in (LEVELS[1], LEVELS[2], *KNOBS):
        for p in ("dcas-local", "dcas"):
            if p in r["starving"][key]:
                a, b = r["starving"][key][p]
                starving.append(f"{name(p)} {a / b:.0%} ({key})")
    text.append(
        "D-CAS's starvation rule (a large subcoflow with no byte acknowledged for T, lifted to the top large "
        "class) decided this share of the large decisions at packet level: " + ", ".join(starving) + "."
    )
    text.append(
        "The flow level has neither loss nor timers: a flow starved in a low class resumes the instant the "
        "classes above drain. At packet level a starved flow's timer fires (with no loss too: the timeouts of the "
        "no-loss row are all spurious), and the 64 KB queues drop; the two rows after the first measure each "
        "of those apart. Whatever of the gap they leave (above) is not split here; the same comparison on "
        "FB2010's fitted workload is in docs/packet-engine.md (\"At the testbed's setting\") and "
        "docs/lab/testbed-vs-simulation.md."
    )
    return lines + [" ".join(text)]


def main() -> int:
    print(section(run(ROOT / "results")))
    return 0


if __name__ == "__main__":
    sys.exit(main())
