//! Runs the embedded default workload (what `coflowkit simulate` runs without
//! `--trace`: the coflow-benchmark generator's defaults, on a big switch of
//! its hosts at 1 Gbit/s) under the schedulers named on the command line and
//! prints wall time, events, and mean and 95th-percentile CCT: the engine
//! alone. Usage: default_run [--n-coflows N] [--tree PODS,RACKS,HOSTS]
//! SCHEDULER... (N coflows instead of 200, at the same load; `--tree`: on
//! Baraat's tree with that many pods, racks per pod and hosts per rack at
//! 1 Gbit/s, ToR oversubscription 2, with the generator's hosts set to the
//! tree's).
use coflowkit_model::{BitsPerSec, Fabric, TreeSpec};
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
    let mut tree = None;
    if scheds.first().map(String::as_str) == Some("--tree") {
        let dims: Vec<u32> = scheds
            .get(1)
            .ok_or("--tree needs PODS,RACKS,HOSTS")?
            .split(',')
            .map(str::parse)
            .collect::<Result<_, _>>()?;
        let [pods, racks, hosts] = dims[..] else {
            return Err("--tree needs PODS,RACKS,HOSTS".into());
        };
        tree = Some(TreeSpec {
            pods,
            racks_per_pod: racks,
            hosts_per_rack: hosts,
            host_rate: BitsPerSec::GBPS,
            ..TreeSpec::default()
        });
        config.n_hosts = pods * racks * hosts;
        scheds.drain(..2);
    }
    let w = generate(&config);
    let fabric = match &tree {
        Some(t) => Fabric::tree(t)?,
        None => Fabric::big_switch(w.n_hosts, BitsPerSec::GBPS)?,
    };
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
