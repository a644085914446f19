//! Where D-CAS's subcoflows starve: per coflow, how often one of its
//! subcoflows was decided as large (at or above the threshold: the rounds
//! decided, negotiated or fallen back, and the starving decisions) and how
//! often of those as starving (`<1, 0>`: unserved for longer than T), from
//! the decision log. The testbed's replay reports the same count per coflow
//! (`dcas_runs` in a worker's result), so that the two can be set side by
//! side (docs/lab/testbed-vs-simulation-dcas.md). A round dropped before it was
//! decided (its subcoflow ended, or its next round began first) is not
//! counted.
//!
//! Usage: dcas_runs WORKLOAD.csv RATE_BPS SPEC... on a big switch whose ports
//! run at RATE_BPS (bits/s); each SPEC is `dcas:key=value;...` as the
//! simulator takes it. Prints, per SPEC, one line of totals and then
//! `coflow large starving` per coflow.
use coflowkit_model::{BitsPerSec, Fabric};
use coflowkit_sched::dcas::{Dcas, DecisionLog, Rule};
use coflowkit_sched::{dcas_config, AnyScheduler, SchedulerSpec};
use coflowkit_sim::{SimOptions, Simulation};
use std::collections::BTreeMap;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [trace, rate, specs @ ..] = args.as_slice() else {
        return Err("usage: dcas_runs WORKLOAD.csv RATE_BPS SPEC...".into());
    };
    let w = coflowkit_workload::read_native_csv(trace.as_ref())?;
    let rate: f64 = rate
        .parse()
        .map_err(|e| format!("RATE_BPS {rate:?}: {e}"))?;
    let fabric = Fabric::big_switch(w.n_hosts, BitsPerSec(rate))?;
    let w = w.validate(&fabric)?;
    for spec in specs {
        let parsed = SchedulerSpec::parse(spec)?;
        if parsed.name != "dcas" {
            return Err(format!("{spec:?}: not a dcas spec").into());
        }
        let config = dcas_config(&parsed.params)?;
        let log = DecisionLog::default();
        let sched = AnyScheduler::Clairvoyant(Box::new(Dcas::new(config).with_log(log.clone())));
        Simulation::new(fabric.clone(), &w, sched, SimOptions::default()).run(&mut |_| {})?;
        let mut per: BTreeMap<u64, [u64; 2]> = BTreeMap::new();
        for d in log.lock().expect("decision log").iter() {
            let n = per.entry(d.coflow.0).or_default();
            match d.rule {
                Rule::Starving => {
                    n[0] += 1;
                    n[1] += 1;
                }
                Rule::Negotiated | Rule::Fallback => n[0] += 1,
                Rule::Fifo | Rule::Interim => {}
            }
        }
        let (large, starving) = per.values().fold((0, 0), |(a, b), n| (a + n[0], b + n[1]));
        println!("{spec}: {large} large, {starving} starving");
        for (c, n) in &per {
            println!("{c} {} {}", n[0], n[1]);
        }
    }
    Ok(())
}
