//! What the examples share: a fabric, the packet engine's knobs and a
//! generated workload from the command line
//! (`TOPOLOGY SIZES LOAD FLOWS [PACKET_OPTIONS]`), and the decomposition's
//! options from `DECOMPOSE` (e.g. `cluster=2000,combine=max`).
//!
//! `SIZES` is `websearch` or `datamining`; `LOAD` is a fraction of each
//! host's NIC rate, or of `LOAD_BPS` per host when set (an oversubscribed
//! fabric's share per host of its rack's uplinks, say). The size bins and
//! percentiles every example prints are here too.

// Each example is its own crate and uses a part of this module.
#![allow(dead_code)]

use coflowkit_decomposed::Options;
use coflowkit_model::{BitsPerSec, Fabric, HostId, ValidWorkload};
use coflowkit_packet::PacketConfig;
use coflowkit_workload::empirical::{generate, EmpiricalConfig, SizeCdf};

pub struct Case {
    pub fabric: Fabric,
    pub cfg: PacketConfig,
    pub workload: ValidWorkload,
}

/// The case `args` (after the program's name) describe.
pub fn case(args: &[String]) -> Case {
    if args.len() < 4 {
        eprintln!("arguments: TOPOLOGY SIZES LOAD FLOWS [PACKET_OPTIONS] ...");
        std::process::exit(2);
    }
    let fabric = coflowkit_topology_config::resolve(&args[0])
        .expect("a topology spec")
        .build(None)
        .expect("a fabric");
    let mut cfg = PacketConfig::default();
    cfg.set_all(args.get(4).map_or("", |s| s.as_str()))
        .expect("packet options");
    let nic = fabric.links()[fabric.uplink(HostId(0)).0 as usize]
        .capacity
        .0;
    let per_host = std::env::var("LOAD_BPS")
        .ok()
        .map_or(nic, |b| b.parse().expect("LOAD_BPS: bits per second"));
    let workload = generate(&EmpiricalConfig {
        sizes: match args[1].as_str() {
            "datamining" => SizeCdf::DataMining,
            "websearch" => SizeCdf::WebSearch,
            s => panic!("SIZES: websearch or datamining, not {s}"),
        },
        n_hosts: fabric.n_hosts(),
        n_flows: args[3].parse().expect("FLOWS: a count"),
        load: args[2].parse().expect("LOAD: a fraction"),
        capacity_bps: BitsPerSec(per_host),
        ..EmpiricalConfig::websearch()
    })
    .validate(&fabric)
    .expect("a valid workload");
    Case {
        fabric,
        cfg,
        workload,
    }
}

/// The decomposition's options: `DECOMPOSE` over the defaults.
pub fn options() -> Options {
    let mut o = Options::default();
    o.set(&std::env::var("DECOMPOSE").unwrap_or_default())
        .expect("DECOMPOSE: decomposed options");
    o
}

/// Size bins (bytes): (0, 100 KB], (100 KB, 1 MB], (1 MB, ∞).
pub const BINS: [(u64, u64, &str); 3] = [
    (0, 100_000, "<=100KB"),
    (100_000, 1_000_000, "100KB-1MB"),
    (1_000_000, u64::MAX, ">1MB"),
];

/// The slowdowns of the flows (bytes, slowdown) whose size is in
/// `(lo, hi]`, sorted.
pub fn slowdowns(rows: impl Iterator<Item = (u64, f64)>, lo: u64, hi: u64) -> Vec<f64> {
    let mut v: Vec<f64> = rows
        .filter(|&(bytes, _)| bytes > lo && bytes <= hi)
        .map(|(_, slowdown)| slowdown)
        .collect();
    v.sort_by(f64::total_cmp);
    v
}

/// The `q`-th percentile (0-100, nearest rank) of sorted `v`; NaN if empty.
pub fn pct(v: &[f64], q: f64) -> f64 {
    if v.is_empty() {
        return f64::NAN;
    }
    let k = ((q / 100.0) * v.len() as f64).ceil() as usize;
    v[k.clamp(1, v.len()) - 1]
}
