//! Runs a coflow-benchmark trace under the schedulers named on the command
//! line and prints wall time, events, and mean and 95th-percentile CCT: the
//! engine alone, without the Python front (the CLI benchmark in
//! docs/benchmarks.md times the whole process). Usage: trace_run TRACE
//! SCHEDULER... About every 10 s of wall time a progress line goes to
//! stderr. With `CCT_OUT=DIR` in the environment each scheduler's
//! per-coflow CCTs (one line per coflow, in release order: id and CCT in
//! ns) also go to `DIR/<scheduler>.txt`, so that two builds' CCTs can be
//! compared to the nanosecond (`diff`). `LINK_BPS=B` sets every port's
//! capacity to B bits/s (default 10^9; e.g. 1048576000 for CoflowSim's
//! 2^30 bits per 1024 of its time units, the units read as milliseconds).
use coflowkit_model::{BitsPerSec, Fabric};
use coflowkit_sched::{build, SchedulerSpec, WorkloadHints};
use coflowkit_sim::{Progress, SimOptions, Simulation};
use std::time::{Duration, Instant};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (trace, scheds) = args
        .split_first()
        .ok_or("usage: trace_run TRACE SCHEDULER...")?;
    let w = coflowkit_workload::read_benchmark_file(trace.as_ref())?;
    let bps = match std::env::var("LINK_BPS") {
        Ok(v) => BitsPerSec(
            v.parse::<f64>()
                .ok()
                .filter(|b| b.is_finite() && *b > 0.0)
                .ok_or_else(|| format!("LINK_BPS={v}: not a capacity in bits/s above 0"))?,
        ),
        Err(_) => BitsPerSec::GBPS,
    };
    let fabric = Fabric::big_switch(w.n_hosts, bps)?;
    let w = w.validate(&fabric)?;
    let hints = WorkloadHints::of(&w);
    let cct_out = std::env::var_os("CCT_OUT").map(std::path::PathBuf::from);
    for s in scheds {
        let t0 = Instant::now();
        let sched = build(&SchedulerSpec::parse(s)?, &hints)?;
        let mut report = Progress::printer(s, Duration::from_secs(10));
        let r =
            Simulation::new(fabric.clone(), &w, sched, SimOptions::default()).run(&mut report)?;
        if let Some(dir) = &cct_out {
            let lines: String = r
                .coflows
                .iter()
                .map(|c| format!("{} {}\n", c.id, c.cct().0))
                .collect();
            std::fs::write(dir.join(format!("{s}.txt")), lines)?;
        }
        let cct = r.metrics().cct;
        println!(
            "{s}: {:.3} s wall, {} events, mean CCT {:.3} s, p95 CCT {:.3} s",
            t0.elapsed().as_secs_f64(),
            r.n_events,
            cct.mean,
            cct.p95
        );
    }
    Ok(())
}
