//! Helpers shared by the engine's integration tests (each test file is its
//! own crate and includes this module with `mod common;`).
#![allow(dead_code)]

use coflowkit_model::{BitsPerSec, CoflowId, CoflowSpec, DepKind, Dependency, Fabric, Workload};
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
