//! The decomposed engine against the full packet engine on one fabric and
//! workload: p50 and p99 FCT slowdown per size bin from each, their
//! errors, and each engine's wall time.
//!
//! `cargo run --release -p coflowkit-decomposed --example compare -- TOPOLOGY SIZES LOAD FLOWS [PACKET_OPTIONS] [SCHEDULER]`
//! e.g. `leaf-spine:leaves=4,spines=2,hosts=8,rate=10Gbps,spine_rate=40Gbps websearch 0.5 2000`.

use coflowkit_decomposed::{simulate as decomposed, Options, Run};
use coflowkit_model::BitsPerSec;
use coflowkit_packet::PacketConfig;
use coflowkit_sched::SchedulerSpec;
use coflowkit_sim::FlowResult;
use coflowkit_workload::empirical::{generate, EmpiricalConfig, SizeCdf};
use std::time::Instant;

/// Size bins (bytes): (0, 100 KB], (100 KB, 1 MB], (1 MB, ∞).
const BINS: [(u64, u64, &str); 3] = [
    (0, 100_000, "<=100KB"),
    (100_000, 1_000_000, "100KB-1MB"),
    (1_000_000, u64::MAX, ">1MB"),
];

fn slowdowns(rows: &[FlowResult], lo: u64, hi: u64) -> Vec<f64> {
    let mut v: Vec<f64> = rows
        .iter()
        .filter(|f| f.bytes > lo && f.bytes <= hi)
        .map(|f| f.slowdown)
        .collect();
    v.sort_by(f64::total_cmp);
    v
}

fn pct(v: &[f64], q: f64) -> f64 {
    if v.is_empty() {
        return f64::NAN;
    }
    let k = ((q / 100.0) * v.len() as f64).ceil() as usize;
    v[k.clamp(1, v.len()) - 1]
}

fn main() {
    let a: Vec<String> = std::env::args().skip(1).collect();
    if a.len() < 4 {
        eprintln!("usage: compare TOPOLOGY SIZES LOAD FLOWS [PACKET_OPTIONS] [SCHEDULER]");
        std::process::exit(2);
    }
    let topo = coflowkit_topology_config::resolve(&a[0]).expect("a topology spec");
    let fabric = topo.build(None).expect("a fabric");
    let mut cfg = PacketConfig::default();
    cfg.set_all(a.get(4).map_or("", |s| s.as_str()))
        .expect("packet options");
    let rate = fabric.links()[fabric.uplink(coflowkit_model::HostId(0)).0 as usize].capacity;
    let w = generate(&EmpiricalConfig {
        sizes: if a[1] == "datamining" {
            SizeCdf::DataMining
        } else {
            SizeCdf::WebSearch
        },
        n_hosts: fabric.n_hosts(),
        n_flows: a[3].parse().expect("flows"),
        load: a[2].parse().expect("load"),
        capacity_bps: BitsPerSec(rate.0),
        ..EmpiricalConfig::websearch()
    })
    .validate(&fabric)
    .expect("a valid workload");
    let spec = a
        .get(5)
        .map(|s| SchedulerSpec::parse(s).expect("a scheduler spec"));
    let t = Instant::now();
    let full = match &spec {
        None => coflowkit_packet::simulate(&fabric, &w, &[], &[], &cfg, &mut |_| {}),
        Some(s) => coflowkit_packet::simulate_scheduled(&fabric, &w, s, &[], &cfg, &mut |_| {}),
    }
    .expect("a packet run");
    let t_full = t.elapsed().as_secs_f64();
    let run = match &spec {
        None => Run::Transport,
        Some(s) => Run::Hosts(s),
    };
    let t = Instant::now();
    let d = decomposed(
        &fabric,
        &w,
        &run,
        &[],
        &cfg,
        Options {
            keep_costs: true,
            combine: match std::env::var("COMBINE").as_deref() {
                Ok("max") => coflowkit_decomposed::Combine::Max,
                Ok("queues") => coflowkit_decomposed::Combine::Queues,
                _ => coflowkit_decomposed::Combine::Sum,
            },
            ..Options::default()
        },
        &mut |_, _| {},
    )
    .expect("a decomposed run");
    let t_dec = t.elapsed().as_secs_f64();
    let (fr, dr) = (full.sim.flows.unwrap(), d.sim.flows.unwrap());
    println!(
        "{} hosts, {} flows: packet {:.2} s ({} per-hop packets), decomposed {:.2} s ({} link sims, {} per-hop packets, {} alone paths): {:.1}x",
        fabric.n_hosts(), fr.len(), t_full, full.packets, t_dec, d.link_sims, d.packets, d.alone_paths, t_full / t_dec
    );
    let mut by_kind: std::collections::BTreeMap<String, (usize, f64, u64)> = Default::default();
    for r in &d.links {
        let kind = match fabric.links()[r.link.0 as usize].kind {
            coflowkit_model::LinkKind::Uplink(_) => "host uplinks".to_string(),
            coflowkit_model::LinkKind::Downlink(_) => "host downlinks".to_string(),
            _ => "switch links".to_string(),
        };
        let e = by_kind.entry(kind).or_default();
        e.0 += r.flows;
        e.1 += r.cost_ns;
        e.2 += r.packets;
    }
    for (k, (n, c, p)) in by_kind {
        println!(
            "{k:<15} mean cost per flow {:>9.1} us over {n} flow-crossings, {p} per-hop packets",
            c / n as f64 / 1e3
        );
    }
    println!(
        "{:<10} {:>6} {:>9} {:>9} {:>7} {:>9} {:>9} {:>7}",
        "bin", "flows", "p50 pkt", "p50 dec", "err", "p99 pkt", "p99 dec", "err"
    );
    for (lo, hi, name) in BINS {
        let (p, q) = (slowdowns(&fr, lo, hi), slowdowns(&dr, lo, hi));
        let e = |x: f64, y: f64| 100.0 * (y - x) / x;
        println!(
            "{:<10} {:>6} {:>9.2} {:>9.2} {:>6.1}% {:>9.2} {:>9.2} {:>6.1}%",
            name,
            p.len(),
            pct(&p, 50.0),
            pct(&q, 50.0),
            e(pct(&p, 50.0), pct(&q, 50.0)),
            pct(&p, 99.0),
            pct(&q, 99.0),
            e(pct(&p, 99.0), pct(&q, 99.0))
        );
    }
    // The small flows the decomposition is furthest above the packet engine on.
    let costs = d.costs.as_ref().expect("kept");
    let mut worst: Vec<usize> = (0..fr.len()).filter(|&i| fr[i].bytes <= 100_000).collect();
    worst.sort_by(|&a, &b| {
        (dr[b].slowdown - fr[b].slowdown).total_cmp(&(dr[a].slowdown - fr[a].slowdown))
    });
    for &i in worst.iter().take(8) {
        let parts: Vec<String> = costs[i]
            .iter()
            .map(|(l, c)| format!("{} {:.0}us", fabric.link_name(*l), c / 1e3))
            .collect();
        println!(
            "flow {i} {} B: packet {:.0} us, decomposed {:.0} us; {}",
            fr[i].bytes,
            (fr[i].finish - fr[i].start).0 as f64 / 1e3,
            (dr[i].finish - dr[i].start).0 as f64 / 1e3,
            parts.join(", ")
        );
    }
}
