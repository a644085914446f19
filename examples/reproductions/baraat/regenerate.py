"""Regenerates the Baraat reproduction: docs/reproductions/baraat.md and its figures.

Runs every experiment file beside this script into ``results/<name>`` (a
re-run resumes: finished points are kept), draws the figures into
``docs/reproductions/baraat/`` and writes the page, with the paper's numbers
beside ours::

    make repro-baraat                     # release build, then this script
    python examples/reproductions/baraat/regenerate.py [--workers N] [--results DIR] [--no-run] [--packet-only]

The packet-level section (Figs. 7-9 at packet level, issue 34) is ``packet.py``'s; with
``--packet-only`` only it is run and put in place in the page as it stands, the flow-level
sections left as they were generated.

The paper's numbers are from its text and Table 4 (5.2.1-5.2.3).
"""

from __future__ import annotations

import sys

import packet
import pandas as pd
from measures import FIGURES, HERE, MISSING, ROOT
from page import render, splice

from coflowkit import load_experiment
from coflowkit.experiments.runner import reproduction_parser, run_reproduction

DOC = ROOT / "docs" / "reproductions" / "baraat.md"
FILES = ["table4", "bing-heavy", "partition-aggregate", "storage", "threshold", "dcas-mix", "fb2010", "compute",
         "data-parallel-baraat", "data-parallel", "table4-two-stage", "scale"]
EMPTY_COLUMNS = ["label", "replicate", "point", "scheduler", "status", "elapsed_s"] + [
    f"workload.{k}" for k in ["sizes", "load", "compute_mean", "n_tasks", "dp_stages", "bing_heavy"]]


def main() -> int:
    ap = reproduction_parser(__doc__, ROOT / "results")
    ap.add_argument("--only", nargs="*", default=None, help="run only these files (stems); the page uses every store there is")
    ap.add_argument("--packet-only", action="store_true",
                    help="run only the packet-level section and replace it in the page as it stands")
    args = ap.parse_args()
    pk = packet.run_all(args.results, args.no_run)
    section = packet.render(pk["figs"], pk["fig7"], pk["three"], pk["control"], pk["seconds"], pk["split"],
                            pk["fig7_split"], pk["settings"], pk["agreement"], alone=args.packet_only)
    if args.packet_only:
        DOC.write_text(splice(DOC.read_text(encoding="utf-8"), section), encoding="utf-8")
        print(f"wrote the packet-level section of {DOC}", file=sys.stderr)
        return 0
    exps = {key: load_experiment(HERE / f"{key}.toml") for key in FILES}
    runs = ((exp, args.results / exp.name) for key, exp in exps.items() if args.only is None or key in args.only)
    if not args.no_run and not run_reproduction(runs, args.workers):
        return 1
    data = {}
    for key, exp in exps.items():
        store = args.results / exp.name
        if not (store / "points.parquet").exists():
            # Not run (yet): the page says so and shows n/a there.
            MISSING.append(f"`{key}.toml`")
            data[key] = (pd.DataFrame(columns=EMPTY_COLUMNS), pd.DataFrame(columns=["point", "cct_s"]))
            continue
        pts = pd.read_parquet(store / "points.parquet")
        pts = pts[pts["status"] == "done"].copy()
        cof = pd.read_parquet(store / "coflows.parquet", columns=["point", "cct_s"])
        data[key] = (pts, cof)
    FIGURES.mkdir(parents=True, exist_ok=True)
    DOC.write_text(render(data, section), encoding="utf-8")
    print(f"wrote {DOC} and figures in {FIGURES}/", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
