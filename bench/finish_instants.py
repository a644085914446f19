"""How many distinct instants the flows of a trace's wide coflows finish at,
per scheduler: a property of the allocation, which bounds the events any
exact simulator of it must stop at (docs/benchmarks.md, `aalo`, "The bound").

    .venv/bin/python bench/finish_instants.py ../shared/data/FB2010-1Hr-150-0.txt \
        fair aalo aalo:queues=strict

For the coflows of at least `--min-width` flows it prints their flows, the
distinct instants at which they finish (all of them together: instants an
exact simulator must stop at), and the mean number of distinct instants per
(coflow, receiver): flows into one receiver of one coflow have equal sizes in
a coflow-benchmark trace, so under per-flow max-min they tend to finish
together.
"""

from __future__ import annotations

import argparse

import coflowkit


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("trace", help="a coflow-benchmark trace")
    ap.add_argument("schedulers", nargs="+", help="scheduler specs")
    ap.add_argument("--min-width", type=int, default=1000, help="flows of a coflow to count it as wide (default 1000)")
    args = ap.parse_args()
    if args.min_width < 1:
        ap.error(f"--min-width: must be at least 1, got {args.min_width}")
    results = coflowkit.simulate(args.trace, args.schedulers, per_flow=True, progress=False)
    print("| scheduler | flows in wide coflows | distinct finish instants | per (coflow, receiver) |")
    print("|---|---|---|---|")
    for s in args.schedulers:
        f = results.flows(s)
        width = f.groupby("coflow_id").size()
        wide = f[f.coflow_id.isin(width[width >= args.min_width].index)]
        instants = wide["finish_s"].nunique()
        per_receiver = wide.groupby(["coflow_id", "dst"])["finish_s"].nunique()
        mean = per_receiver.mean() if len(per_receiver) else 0.0
        print(f"| `{s}` | {len(wide):,} | {instants:,} | {mean:.1f} over {len(per_receiver):,} |")


if __name__ == "__main__":
    main()
