//! Runs the embedded default workload (what `coflowkit simulate` runs without
//! `--trace`: the coflow-benchmark generator's defaults, on a big switch of
//! its hosts at 1 Gbit/s) under the schedulers named on the command line and
//! prints wall time, events, and mean and 95th-percentile CCT: the engine
//! alone. Usage: default_run [--n-coflows N] SCHEDULER... (N: the first N
//! coflows' worth of the generator, at the same load; default 200).
use coflowkit_model::{BitsPerSec, Fabric};
use coflowkit_sched::{build, SchedulerSpec, WorkloadHints};
use coflowkit_sim::{SimOptions, Simulation};
use coflowkit_workload::synth::{generate, SynthConfig};
use std::time::Instant;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut scheds: Vec<String> = std::env::args().skip(1).collect();
    let mut config = SynthConfig::default();
    if scheds.first().map(String::as_str) == Some("--n-coflows") {
        let n = scheds.get(1).ok_or("--n-coflows needs a number")?.parse()?;
        config.n_coflows = n;
        scheds.drain(..2);
    }
    let w = generate(&config);
    let fabric = Fabric::big_switch(w.n_hosts, BitsPerSec::GBPS)?;
    let w = w.validate(&fabric)?;
    let hints = WorkloadHints::of(&w);
    println!(
        "{} hosts, {} coflows, {} flows",
        w.n_hosts(),
        w.coflows().len(),
        w.n_flows()
    );
    for s in &scheds {
        let t0 = Instant::now();
        let sched = build(&SchedulerSpec::parse(s)?, &hints)?;
        let r =
            Simulation::new(fabric.clone(), &w, sched, SimOptions::default()).run(&mut |_| {})?;
        let cct = r.metrics().cct;
        println!(
            "{s}: {:.3} s wall, {} events, mean CCT {:.4} s, p95 CCT {:.4} s",
            t0.elapsed().as_secs_f64(),
            r.n_events,
            cct.mean,
            cct.p95
        );
    }
    Ok(())
}
