//! What the examples share: a fabric, the packet engine's knobs and a
//! generated workload from the command line
//! (`TOPOLOGY SIZES LOAD FLOWS [PACKET_OPTIONS]`), and the decomposition's
//! options from `DECOMPOSE` (e.g. `cluster=2000,combine=max`).
//!
//! `SIZES` is `websearch` or `datamining`; `LOAD` is a fraction of each
//! host's NIC rate, or of `LOAD_BPS` per host when set (an oversubscribed
//! fabric's share per host of its rack's uplinks, say).

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
