//! The decomposed engine alone on one fabric and workload (no full packet
//! run beside it): its wall time, what it simulated, and p50 / p99 FCT
//! slowdown per size bin; for fabrics too large for the packet engine.
//!
//! `cargo run --release -p coflowkit-decomposed --example estimate -- TOPOLOGY SIZES LOAD FLOWS [PACKET_OPTIONS]`
//! with `DECOMPOSE` and `LOAD_BPS` as in `compare`.

use coflowkit_decomposed::{simulate, Run};
use std::time::Instant;

mod common;

fn main() {
    let a: Vec<String> = std::env::args().skip(1).collect();
    let t = Instant::now();
    let c = common::case(&a);
    let t_gen = t.elapsed().as_secs_f64();
    let span = c.workload.coflows().last().map_or(0, |x| x.arrival.0);
    let t = Instant::now();
    let mut last = 0;
    let d = simulate(
        &c.fabric,
        &c.workload,
        &Run::Transport,
        &[],
        &c.cfg,
        common::options(),
        &mut |done, total| {
            if done * 10 / total != last {
                last = done * 10 / total;
                eprintln!(
                    "{done} of {total} link simulations, {:.1} s",
                    t.elapsed().as_secs_f64()
                );
            }
        },
    )
    .expect("a decomposed run");
    let t_dec = t.elapsed().as_secs_f64();
    println!(
        "{} hosts, {} flows over {:.3} s of traffic (generated in {t_gen:.1} s): decomposed {t_dec:.1} s, \
         {} of {} links simulated in {} clusters, {} per-hop packets, {} alone paths",
        c.fabric.n_hosts(),
        c.workload.n_flows(),
        span as f64 / 1e9,
        d.link_sims,
        d.links_used,
        d.clusters,
        d.packets,
        d.alone_paths
    );
    let rows = d.sim.flows.expect("per-flow rows");
    for (lo, hi, name) in common::BINS {
        let v = common::slowdowns(rows.iter().map(|f| (f.bytes, f.slowdown)), lo, hi);
        let pct = |q: f64| common::pct(&v, q);
        println!(
            "{name:<10} {:>8} flows  p50 {:>8.2}  p99 {:>8.2}",
            v.len(),
            pct(50.0),
            pct(99.0)
        );
    }
}
