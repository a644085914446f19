//! Helpers shared by the engine's integration tests (each test file is its
//! own crate and includes this module with `mod common;`).
#![allow(dead_code)]

use coflowkit_model::{
    compute, flow, BitsPerSec, CoflowId, CoflowSpec, DepKind, Dependency, Fabric, Time, Workload,
};
use coflowkit_sched::{build, SchedulerSpec, WorkloadHints};
use coflowkit_sim::{SimOptions, SimResult, Simulation};

/// Runs `sched` on `coflows` over `fabric`, with per-flow results.
pub fn run_on(fabric: Fabric, sched: &str, coflows: Vec<CoflowSpec>) -> SimResult {
    let w = Workload {
        n_hosts: fabric.n_hosts(),
        coflows,
    }
    .validate(&fabric)
    .unwrap();
    let s = build(
        &SchedulerSpec::parse(sched).unwrap(),
        &WorkloadHints::of(&w),
    )
    .unwrap();
    Simulation::new(
        fabric,
        &w,
        s,
        SimOptions {
            per_flow: true,
            ..SimOptions::default()
        },
    )
    .run(&mut |_| {})
    .unwrap()
}

/// [`run_on`] a big switch of `n_hosts` ports at 1 Gbit/s.
pub fn run(n_hosts: u32, sched: &str, coflows: Vec<CoflowSpec>) -> SimResult {
    run_on(
        Fabric::big_switch(n_hosts, BitsPerSec::GBPS).unwrap(),
        sched,
        coflows,
    )
}

/// `c` with these parents (coflow ids) and kinds of dependency.
pub fn with_parents(mut c: CoflowSpec, parents: &[(u64, DepKind)]) -> CoflowSpec {
    c.parents = parents
        .iter()
        .map(|&(p, kind)| Dependency {
            parent: CoflowId(p),
            kind,
        })
        .collect();
    c
}

/// Each coflow's CCT (s), in the order of the results.
pub fn ccts(r: &SimResult) -> Vec<f64> {
    r.coflows.iter().map(|c| c.cct_s()).collect()
}

/// TAFE's motivating example (III, Fig. 2), 1 unit = 1 MB, t = 1 s: two
/// tasks, each two flows of "2 units of CPU, then 2 units of network", on
/// one CPU and one link of 2 units per t. Each coflow's CCT (s).
pub fn tafe_fig2(sched: &str) -> Vec<f64> {
    const MB: u64 = 1_000_000;
    let task = |id: u64| {
        // Flow k: CPU stage in group k, then its network stage after it.
        CoflowSpec::new(
            id,
            Time(0),
            vec![
                compute(0, 2 * MB).in_group(1),
                flow(0, 1, 2 * MB).after(1),
                compute(0, 2 * MB).in_group(2),
                flow(0, 1, 2 * MB).after(2),
            ],
        )
    };
    let fabric = Fabric::big_switch(2, BitsPerSec(16e6))
        .unwrap()
        .with_cpus(BitsPerSec(16e6))
        .unwrap();
    ccts(&run_on(fabric, sched, vec![task(1), task(2)]))
}
