//! The packet engine's cost per packet against fabric size (issue 69): a
//! web-search workload (`coflowkit generate websearch`: the workload
//! crate's generator, seed 1, 10 Gbit/s NICs) on a fabric the command
//! names, run by the packet engine once per repetition; prints per-hop
//! packets, events, the median wall time, per-hop packets per
//! wall-second, the peak resident memory and a checksum of every flow's
//! FCT (a faster run with another checksum is another computation).
//!
//! ```sh
//! cargo build --release -p coflowkit-packet --example scale
//! target/release/examples/scale leaf-spine 2000        # 32 hosts: 4 leaves x 8, 2 spines
//! target/release/examples/scale fat-tree:16 16000      # 1,024 hosts (k=16)
//! ```
//!
//! Arguments: `FABRIC FLOWS [LOAD] [RUNS] [packet options]`, FABRIC one of
//! `leaf-spine` (32 hosts at 10 Gbit/s, 40 Gbit/s spine links) or
//! `fat-tree:K` (K^3/4 hosts, every link 10 Gbit/s); LOAD 0.5 and RUNS 1 by
//! default. With `FCT_OUT=FILE` in the environment it writes each flow's
//! start and finish (ns), one flow a line, for `cmp` between two builds;
//! with `SCHED=SPEC` (a registry scheduler with a host policy, `pias` for
//! one) the hosts run it, as `simulate_scheduled` does.

use coflowkit_model::{BitsPerSec, Fabric, FatTreeSpec, LeafSpineSpec};
use coflowkit_packet::{simulate, simulate_scheduled, PacketConfig};
use coflowkit_sched::SchedulerSpec;
use coflowkit_workload::empirical::{generate, EmpiricalConfig};
use std::time::Instant;

fn fabric(name: &str) -> Fabric {
    let rate = BitsPerSec(10e9);
    if name == "leaf-spine" {
        return Fabric::leaf_spine(&LeafSpineSpec {
            leaves: 4,
            spines: 2,
            hosts_per_leaf: 8,
            host_rate: rate,
            spine_rate: Some(BitsPerSec(40e9)),
        })
        .expect("a leaf-spine");
    }
    let k = name
        .strip_prefix("fat-tree:")
        .and_then(|k| k.parse().ok())
        .unwrap_or_else(|| {
            eprintln!("FABRIC: leaf-spine or fat-tree:K, not {name:?}");
            std::process::exit(2)
        });
    Fabric::fat_tree(&FatTreeSpec { k, link_rate: rate }).expect("a fat-tree")
}

/// Peak resident memory (VmHWM), MiB.
fn peak_rss_mib() -> f64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmHWM:"))
                .and_then(|l| l.split_whitespace().nth(1)?.parse::<f64>().ok())
        })
        .map_or(f64::NAN, |kb| kb / 1024.0)
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let arg = |i: usize| args.get(i).map(String::as_str);
    let name = arg(0).unwrap_or("leaf-spine");
    let n_flows: usize = arg(1).map_or(2000, |s| s.parse().expect("FLOWS: a count"));
    let load: f64 = arg(2).map_or(0.5, |s| s.parse().expect("LOAD: a number"));
    let runs: usize = arg(3).map_or(1, |s| s.parse().expect("RUNS: a count"));
    let opts = arg(4).unwrap_or("");
    let mut cfg = PacketConfig::default();
    if let Err(e) = cfg.set_all(opts) {
        eprintln!("{e}");
        std::process::exit(2);
    }
    let sched = std::env::var("SCHED").ok().map(|s| {
        SchedulerSpec::parse(&s).unwrap_or_else(|e| {
            eprintln!("SCHED: {e}");
            std::process::exit(2)
        })
    });
    let fabric = fabric(name);
    let w = generate(&EmpiricalConfig {
        n_hosts: fabric.n_hosts(),
        n_flows,
        load,
        capacity_bps: BitsPerSec(10e9),
        ..EmpiricalConfig::websearch()
    })
    .validate(&fabric)
    .expect("a valid workload");
    let mut walls = vec![];
    let mut last = None;
    for _ in 0..runs.max(1) {
        let t = Instant::now();
        let r = match &sched {
            Some(spec) => simulate_scheduled(&fabric, &w, spec, &[], &cfg, &mut |_| {}),
            None => simulate(&fabric, &w, &[], &[], &cfg, &mut |_| {}),
        }
        .expect("a run");
        walls.push(t.elapsed().as_secs_f64());
        last = Some(r);
    }
    walls.sort_by(f64::total_cmp);
    let wall = walls[walls.len() / 2];
    let r = last.expect("a run");
    let flows = r.sim.flows.as_ref().expect("per-flow rows");
    // FNV-1a over every flow's start and finish.
    let mut sum: u64 = 0xcbf29ce484222325;
    let mut lines = String::new();
    for f in flows {
        for v in [f.start.0, f.finish.0] {
            for b in v.to_le_bytes() {
                sum = (sum ^ b as u64).wrapping_mul(0x100000001b3);
            }
        }
        lines.push_str(&format!("{} {}\n", f.start.0, f.finish.0));
    }
    if let Ok(path) = std::env::var("FCT_OUT") {
        std::fs::write(&path, lines).expect("FCT_OUT written");
    }
    println!(
        "{name} {} hosts, {n_flows} flows, load {load}: {} per-hop packets, {} events; \
         median of {} {wall:.3} s wall, {:.3} M packets/s; peak {:.0} MiB; fct checksum {sum:016x}",
        fabric.n_hosts(),
        r.packets,
        r.events,
        walls.len(),
        r.packets as f64 / wall / 1e6,
        peak_rss_mib(),
    );
}
