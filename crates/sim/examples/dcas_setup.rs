//! D-CAS's default setup (paper V-A): 80 hosts on a 1 Gbit/s big switch,
//! 400 coflows of the `coflow-benchmark` generator's `dcas` preset at load 1,
//! under the schedulers named on the command line (default: fair, varys,
//! dcas). Prints wall time, events, and average and p95 CCT per D-CAS bin
//! (short below 10 MiB, narrow up to 50 flows) and overall, with the
//! improvement over the first scheduler (the paper's factor of improvement:
//! baseline CCT / scheduler CCT). Also the average CCT of the coflows
//! whose largest subcoflow (bytes leaving one sender, what D-CAS's
//! negotiated priority measures) is smaller than the bytes entering their
//! busiest receiver ("receiver-bound"), and of the others.
//!
//! Usage: dcas_setup [--seed N] [--aalo] [SCHEDULER...] (`--aalo`: the
//! generator's default preset, the embedded workload, instead).
use coflowkit_model::{percentile, Bytes, Fabric};
use coflowkit_sched::{build, SchedulerSpec, WorkloadHints};
use coflowkit_sim::{SimOptions, Simulation};
use coflowkit_workload::{generate, SynthConfig};
use std::time::Instant;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args: Vec<String> = std::env::args().skip(1).collect();
    let mut config = SynthConfig::dcas();
    if let Some(i) = args.iter().position(|a| a == "--aalo") {
        config = SynthConfig::aalo();
        args.remove(i);
    }
    if let Some(i) = args.iter().position(|a| a == "--seed") {
        let seed = args.get(i + 1).ok_or("--seed needs a value")?.parse()?;
        config.seed = seed;
        args.drain(i..i + 2);
    }
    if args.is_empty() {
        args = vec!["fair".into(), "varys".into(), "dcas".into()];
    }
    let w = generate(&config);
    let fabric = Fabric::big_switch(w.n_hosts, config.capacity_bps)?;
    let w = w.validate(&fabric)?;
    let hints = WorkloadHints::of(&w);
    // Bins by D-CAS's thresholds (the results' bins are Aalo's, at 5 MiB).
    let bins: Vec<usize> = w
        .coflows()
        .iter()
        .map(|c| {
            let length = c.flows.iter().map(|f| f.bytes.0).max().unwrap_or(0);
            config.bin_of(Bytes(length), c.flows.len()) as usize
        })
        .collect();
    // Receiver-bound: more bytes into one receiver than out of any sender.
    let receiver_bound: Vec<bool> = w
        .coflows()
        .iter()
        .map(|c| {
            let (mut out, mut into) = (
                vec![0u64; w.n_hosts() as usize],
                vec![0u64; w.n_hosts() as usize],
            );
            for f in &c.flows {
                out[f.src.0 as usize] += f.bytes.0;
                into[f.dst.0 as usize] += f.bytes.0;
            }
            into.iter().max() > out.iter().max()
        })
        .collect();
    let names = ["SN", "LN", "SW", "LW", "all"];
    println!(
        "seed {}: {} coflows, {} flows",
        config.seed,
        w.coflows().len(),
        w.coflows().iter().map(|c| c.flows.len()).sum::<usize>()
    );
    let mut base: Option<Vec<(f64, f64)>> = None;
    for s in &args {
        let t0 = Instant::now();
        let sched = build(&SchedulerSpec::parse(s)?, &hints)?;
        let r =
            Simulation::new(fabric.clone(), &w, sched, SimOptions::default()).run(&mut |_| {})?;
        let wall = t0.elapsed().as_secs_f64();
        let mut by_bin: Vec<Vec<f64>> = vec![vec![]; 5];
        for (i, c) in r.coflows.iter().enumerate() {
            by_bin[bins[i]].push(c.cct_s());
            by_bin[4].push(c.cct_s());
        }
        let stats: Vec<(f64, f64)> = by_bin
            .iter()
            .map(|v| {
                let mean = v.iter().sum::<f64>() / v.len().max(1) as f64;
                (mean, percentile(v, 95.0).unwrap_or(0.0))
            })
            .collect();
        println!("{s}: {wall:.1} s wall, {} events", r.n_events);
        for (b, name) in names.iter().enumerate() {
            let (mean, p95) = stats[b];
            let x = base
                .as_ref()
                .map(|bs| {
                    format!(
                        "  x_mean {:6.3}  x_p95 {:6.3}",
                        bs[b].0 / mean,
                        bs[b].1 / p95
                    )
                })
                .unwrap_or_default();
            println!(
                "  {name:>3} n={:>3}  mean {mean:9.3} s  p95 {p95:9.3} s{x}",
                by_bin[b].len()
            );
        }
        for (bound, name) in [(false, "sender-bound"), (true, "receiver-bound")] {
            let v: Vec<f64> = r
                .coflows
                .iter()
                .zip(&receiver_bound)
                .filter(|(_, &b)| b == bound)
                .map(|(c, _)| c.cct_s())
                .collect();
            println!(
                "  {name:>14} n={:>3}  mean {:9.3} s",
                v.len(),
                v.iter().sum::<f64>() / v.len().max(1) as f64
            );
        }
        base.get_or_insert(stats);
    }
    Ok(())
}
