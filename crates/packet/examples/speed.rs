//! The packet engine's speed on a fixed leaf-spine workload: 32 hosts at
//! 10 Gbit/s, 400 flows of 10 KB to 2 MB starting over 2 ms, every host
//! sending to a pseudo-random other host. Prints the best wall time of
//! three runs, per-hop transmissions per wall-second, and the run's mean
//! FCTs, timeouts and retransmissions.
//!
//! `cargo run --release -p coflowkit-packet --example speed -- [packet options]`
//! (e.g. `transport=tcp` or `transport=pfabric`).

use coflowkit_model::{flow, BitsPerSec, CoflowSpec, Dur, Fabric, LeafSpineSpec, Time, Workload};
use coflowkit_packet::{simulate, PacketConfig};
use std::time::Instant;

fn main() {
    let opts = std::env::args().nth(1).unwrap_or_default();
    let mut cfg = PacketConfig::default();
    if let Err(e) = cfg.set_all(&opts) {
        eprintln!("{e}");
        std::process::exit(2);
    }
    let fabric = Fabric::leaf_spine(&LeafSpineSpec {
        leaves: 4,
        spines: 2,
        hosts_per_leaf: 8,
        host_rate: BitsPerSec(10e9),
        spine_rate: Some(BitsPerSec(40e9)),
    })
    .expect("a leaf-spine");
    let n = fabric.n_hosts();
    // A fixed linear congruential sequence: the same flows every run.
    let mut x: u64 = 12345;
    let mut next = move || {
        x = x
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        x >> 33
    };
    let flows = (0..400)
        .map(|_| {
            let src = (next() % n as u64) as u32;
            let dst = (src + 1 + (next() % (n as u64 - 1)) as u32) % n;
            let bytes = 10_000 + next() % 2_000_000;
            flow(src, dst, bytes).delayed(Dur(next() % 2_000_000))
        })
        .collect();
    let w = Workload {
        n_hosts: n,
        coflows: vec![CoflowSpec::new(0, Time(0), flows)],
    }
    .validate(&fabric)
    .expect("a valid workload");
    let mut best = f64::INFINITY;
    let mut last = None;
    for _ in 0..3 {
        let t = Instant::now();
        let r = simulate(&fabric, &w, &[], &[], &cfg, &mut |_| {}).expect("a run");
        best = best.min(t.elapsed().as_secs_f64());
        last = Some(r);
    }
    let r = last.expect("three runs");
    let flows = r.sim.flows.as_ref().expect("per-flow rows");
    let mean_fct_us = |small: bool| {
        let f: Vec<f64> = flows
            .iter()
            .filter(|f| (f.bytes < 100_000) == small)
            .map(|f| (f.finish - f.start).0 as f64 / 1e3)
            .collect();
        f.iter().sum::<f64>() / f.len().max(1) as f64
    };
    let timeouts: u64 = r.flow_stats.iter().map(|s| s.timeouts).sum();
    let retransmits: u64 = r.flow_stats.iter().map(|s| s.retransmits).sum();
    println!(
        "{opts:?}: {} packets, best of 3 {best:.3} s, {:.2} M packets/s; \
         mean FCT {:.1} us under 100 KB, {:.1} us above; {timeouts} timeouts, \
         {retransmits} retransmits",
        r.packets,
        r.packets as f64 / best / 1e6,
        mean_fct_us(true),
        mean_fct_us(false),
    );
}
