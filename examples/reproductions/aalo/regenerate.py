"""Regenerate the Aalo reproduction: run its experiments, draw its figures, write its page.

    make repro-aalo            # or: .venv/bin/python examples/reproductions/aalo/regenerate.py

Runs every experiment file beside this script with the experiments runner
(``coflowkit run``; a store that is already complete is only read, so a
second call redoes the figures and the page in seconds), then writes the
figures to ``docs/reproductions/aalo/`` and the page to
``docs/reproductions/aalo.md``, with the paper's numbers beside ours.

Options: ``--workers N`` (threads for the runner, default: the cores),
``--results DIR`` (where the stores go, default ``results/repro-aalo``),
``--only NAME`` (run only these experiments; the page needs all of them).

Source: M. Chowdhury and I. Stoica, "Efficient Coflow Scheduling Without
Prior Knowledge", SIGCOMM 2015 (the Aalo seed paper), sections 7.2-7.6.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path
from typing import Any

# The page's parts, in the modules beside this script.
from discussion import differences, summarize
from helpers import FIGS, HERE, ROOT, Page, fmt, table
from sections import dag, fb2010, sensitivity, sizes, waves

import coflowkit
from coflowkit.experiments.analysis import StoreData, load_store
from coflowkit.experiments.runner import PointsFailed, run_each

DOC = ROOT / "docs" / "reproductions" / "aalo.md"
#: The experiments, in the order the page shows them.
EXPERIMENTS = ["fb2010", "sensitivity", "sensitivity-fb2010", "uniform", "uniform-narrow", "fixed", "dag", "waves"]


# -- running ----------------------------------------------------------------------------------------


def run_all(results: Path, workers: int, only: list[str]) -> None:
    """Runs every experiment named in ``only`` into ``results/<name>`` (resuming)."""
    runs = [(coflowkit.load_experiment(HERE / f"{name}.toml"), results / name) for name in only]
    try:
        run_each(runs, workers=workers, progress=sys.stderr)
    except PointsFailed as e:
        raise SystemExit(str(e)) from None


# -- main -------------------------------------------------------------------------------------------


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--workers", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--results", type=Path, default=ROOT / "results" / "repro-aalo")
    ap.add_argument("--only", nargs="*", default=EXPERIMENTS, choices=EXPERIMENTS)
    ap.add_argument("--no-run", action="store_true", help="only read the stores (figures and page)")
    args = ap.parse_args(argv)
    t0 = time.perf_counter()
    if not args.no_run:
        run_all(args.results, args.workers, args.only)
    if args.no_run:
        # Draw what the stores hold so far (for working on the page).
        names = [n for n in EXPERIMENTS if (args.results / n / "points.parquet").exists()]
    elif set(args.only) != set(EXPERIMENTS):
        return 0
    else:
        names = EXPERIMENTS
    data = {name: load_store(args.results / name) for name in names}
    page = Page()
    intro(page, data)
    at = len(page.parts)
    got: dict[str, Any] = {}
    if "fb2010" in data:
        got["fb2010"] = fb2010(page, data["fb2010"])
    if "sensitivity" in data or "sensitivity-fb2010" in data:
        got["sensitivity"] = sensitivity(page, data.get("sensitivity"), data.get("sensitivity-fb2010"))
    if "uniform" in data and "fixed" in data:
        got["sizes"] = sizes(page, data["uniform"], data["fixed"], data.get("uniform-narrow"))
    if "dag" in data:
        got["dag"] = dag(page, data["dag"])
    if "waves" in data:
        got["waves"] = waves(page, data["waves"])
    differences(page, got)
    summary = Page()
    summarize(summary, got)
    page.parts[at:at] = summary.parts
    outro(page, data, time.perf_counter() - t0)
    DOC.parent.mkdir(parents=True, exist_ok=True)
    DOC.write_text(page.text())
    print(f"wrote {DOC.relative_to(ROOT)} and {len(list(FIGS.glob('*.png')))} figures in {FIGS.relative_to(ROOT)}")
    return 0


def intro(page: Page, data: dict[str, StoreData]) -> None:
    page.add("""
# Reproduction: Aalo (SIGCOMM 2015)

M. Chowdhury and I. Stoica, "Efficient Coflow Scheduling Without Prior
Knowledge", SIGCOMM 2015 (seed `001_70b7baa024da4212.txt`), section 7: its
simulation results (Figs. 8, 9, 12, 13) and the trends of its EC2 results
(Figs. 10, 11, 14b), with coflowkit's `aalo` (D-CLAS, coordinated every
Δ), `aalo-local` (no coordination), `fair`, `varys`, `fifo` and `fifo-lm`
(docs/schedulers.md). This page is generated: do not edit it by hand.

```sh
make repro-aalo      # runs examples/reproductions/aalo/*.toml, writes this page and docs/reproductions/aalo/*.png
```
""")


def outro(page: Page, data: dict[str, StoreData], wall: float) -> None:
    rows = []
    for name, d in data.items():
        pts = d.done
        rows.append([f"`examples/reproductions/aalo/{name}.toml`", str(len(pts)), fmt(float(pts["elapsed_s"].sum()) / 60, 1)])
    page.add("""
## How this page was made

Every number above comes from the result stores of these experiment files
(`results/repro-aalo/<name>/`; `coflowkit report results/repro-aalo/<name>`
gives each one's own tables). Simulation time is the sum over points of
one point's wall time on the 2-core development machine, shared with other
jobs while it ran:
""")
    page.add(table(["experiment", "points", "simulation time (min)"], rows))


if __name__ == "__main__":
    sys.exit(main())
