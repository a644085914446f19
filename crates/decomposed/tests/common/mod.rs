//! What the decomposed engine's tests share.

#![allow(dead_code)] // each test file uses its own share of these

use coflowkit_decomposed::{simulate, DecomposedResult, Options, Run};
use coflowkit_model::{BitsPerSec, Fabric, LeafSpineSpec, ValidWorkload};
use coflowkit_packet::PacketConfig;
use coflowkit_workload::empirical::{generate, EmpiricalConfig};

/// A leaf-spine of `leaves` racks of `hosts_per_leaf` hosts (10 Gbit/s,
/// two 20 Gbit/s spines) and `n_flows` web-search flows at `load`.
pub fn leaf_spine(
    leaves: u32,
    hosts_per_leaf: u32,
    n_flows: usize,
    load: f64,
) -> (Fabric, ValidWorkload) {
    let fabric = Fabric::leaf_spine(&LeafSpineSpec {
        leaves,
        spines: 2,
        hosts_per_leaf,
        host_rate: BitsPerSec(10e9),
        spine_rate: Some(BitsPerSec(20e9)),
    })
    .unwrap();
    let w = generate(&EmpiricalConfig {
        n_hosts: fabric.n_hosts(),
        n_flows,
        load,
        capacity_bps: BitsPerSec(10e9),
        ..EmpiricalConfig::websearch()
    })
    .validate(&fabric)
    .unwrap();
    (fabric, w)
}

/// A decomposed run of `w` on `fabric` with the default knobs and
/// transport, the decomposition's options `opts`, on `threads` threads.
pub fn run(fabric: &Fabric, w: &ValidWorkload, opts: &str, threads: usize) -> DecomposedResult {
    let mut o = Options {
        threads,
        ..Options::default()
    };
    o.set(opts).unwrap();
    simulate(
        fabric,
        w,
        &Run::Transport,
        &[],
        &PacketConfig::default(),
        o,
        &mut |_, _| {},
    )
    .unwrap()
}
