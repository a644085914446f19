"""Why `pias` missed fewer deadlines than `karuna` on a small web-search run
(docs/schedulers.md, "Deadline misses"): the deadline flows' misses split
into those infeasible even alone at line rate and the rest, with missed
flows finished or dropped. Under a minute:

    .venv/bin/python examples/reproductions/karuna/misses.py
"""

import coflowkit

w = coflowkit.generate("websearch", n_hosts=16, n_flows=2000, type1_fraction=0.3, type3_fraction=0.3)
specs = ["karuna", "pias", "fair", "pfabric-edf"]
print("missed  scheduler     type-1 missed  infeasible alone  feasible missed  types 2+3 p95 FCT")
for missed in ("finish", "drop"):
    res = coflowkit.simulate(w, specs, progress=False, per_flow=True, missed=missed)
    metrics = res.metrics().set_index("scheduler")
    for s in specs:
        f = res.flows(s)
        t1 = f[f.karuna_type == 1]
        feasible = t1.bytes * 8 / 1e9 <= t1.deadline_s
        miss = ~t1.deadline_met.astype(bool)
        p95 = metrics.loc[s].fct_no_deadline_p95_s * 1e3
        print(
            f"{missed:7s} {s:13s} {miss.sum():4d}/{len(t1)}      {(~feasible).sum():4d}"
            f"              {(miss & feasible).sum():4d}             {p95:6.1f} ms"
        )
