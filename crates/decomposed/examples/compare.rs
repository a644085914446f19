//! The decomposed engine against the full packet engine on one fabric and
//! workload: p50 and p99 FCT slowdown per size bin from each, their
//! errors, and each engine's wall time.
//!
//! `cargo run --release -p coflowkit-decomposed --example compare -- TOPOLOGY SIZES LOAD FLOWS [PACKET_OPTIONS] [SCHEDULER]`
//! e.g. `leaf-spine:leaves=4,spines=2,hosts=8,rate=10Gbps,spine_rate=40Gbps websearch 0.5 2000`.
//!
//! Environment: `DECOMPOSE` (the decomposition's options, e.g.
//! `cluster=2000,combine=max`), `LOAD_BPS` (what LOAD is a fraction of, per
//! host; default its NIC's rate), `FULL=FILE` (the full packet engine's rows: read from FILE when it
//! exists, else run and written there, so several decomposed settings
//! compare against one full run).

use coflowkit_decomposed::{simulate as decomposed, Options, Run};
use coflowkit_sched::SchedulerSpec;
use coflowkit_sim::FlowResult;
use std::time::Instant;

/// What the comparison needs of a flow's row.
struct Row {
    bytes: u64,
    slowdown: f64,
    fct: u64,
}

impl Row {
    fn of(f: &FlowResult) -> Row {
        Row {
            bytes: f.bytes,
            slowdown: f.slowdown,
            fct: (f.finish - f.start).0,
        }
    }
}

mod common;

fn main() {
    let a: Vec<String> = std::env::args().skip(1).collect();
    let common::Case {
        fabric,
        cfg,
        workload: w,
    } = common::case(&a);
    let spec = a
        .get(5)
        .map(|s| SchedulerSpec::parse(s).expect("a scheduler spec"));
    let t = Instant::now();
    let cache = std::env::var("FULL").ok();
    let (fr, t_full, full_packets) = match cache
        .as_deref()
        .and_then(|f| std::fs::read_to_string(f).ok())
    {
        Some(text) => {
            let mut lines = text.lines();
            let head: Vec<f64> = lines
                .next()
                .expect("a header")
                .split(' ')
                .map(|x| x.parse().expect("a number"))
                .collect();
            let rows = lines
                .map(|l| {
                    let v: Vec<&str> = l.split(' ').collect();
                    Row {
                        bytes: v[0].parse().expect("bytes"),
                        slowdown: v[1].parse().expect("slowdown"),
                        fct: v[2].parse().expect("fct"),
                    }
                })
                .collect::<Vec<_>>();
            (rows, head[0], head[1] as u64)
        }
        None => {
            let full = match &spec {
                None => coflowkit_packet::simulate(&fabric, &w, &[], &[], &cfg, &mut |_| {}),
                Some(s) => {
                    coflowkit_packet::simulate_scheduled(&fabric, &w, s, &[], &cfg, &mut |_| {})
                }
            }
            .expect("a packet run");
            let t_full = t.elapsed().as_secs_f64();
            let rows: Vec<Row> = full.sim.flows.unwrap().iter().map(Row::of).collect();
            if let Some(f) = &cache {
                let mut text = format!("{t_full} {}\n", full.packets);
                for r in &rows {
                    text += &format!("{} {} {}\n", r.bytes, r.slowdown, r.fct);
                }
                std::fs::write(f, text).expect("the FULL file written");
            }
            (rows, t_full, full.packets)
        }
    };
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
            ..common::options()
        },
        &mut |_, _| {},
    )
    .expect("a decomposed run");
    let t_dec = t.elapsed().as_secs_f64();
    let dr: Vec<Row> = d.sim.flows.unwrap().iter().map(Row::of).collect();
    println!(
        "{} hosts, {} flows: packet {:.2} s ({} per-hop packets), decomposed {:.2} s ({} of {} links simulated in {} clusters, {} per-hop packets, {} alone paths): {:.1}x",
        fabric.n_hosts(), fr.len(), t_full, full_packets, t_dec, d.link_sims, d.links_used, d.clusters, d.packets, d.alone_paths, t_full / t_dec
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
    for (lo, hi, name) in common::BINS {
        let bin =
            |rows: &[Row]| common::slowdowns(rows.iter().map(|r| (r.bytes, r.slowdown)), lo, hi);
        let (p, q) = (bin(&fr), bin(&dr));
        let e = |x: f64, y: f64| 100.0 * (y - x) / x;
        println!(
            "{:<10} {:>6} {:>9.2} {:>9.2} {:>6.1}% {:>9.2} {:>9.2} {:>6.1}%",
            name,
            p.len(),
            common::pct(&p, 50.0),
            common::pct(&q, 50.0),
            e(common::pct(&p, 50.0), common::pct(&q, 50.0)),
            common::pct(&p, 99.0),
            common::pct(&q, 99.0),
            e(common::pct(&p, 99.0), common::pct(&q, 99.0))
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
            fr[i].fct as f64 / 1e3,
            dr[i].fct as f64 / 1e3,
            parts.join(", ")
        );
    }
}
