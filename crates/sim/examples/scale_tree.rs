//! The scale benchmark of issue 3: Baraat's three-level tree (default 30 pods
//! x 30 racks x 40 hosts = 36,000 servers, 2:1 at the ToR) with two-stage
//! partition-aggregate tasks (1,230 flows each) at 80% load, under the
//! schedulers named on the command line. Prints the time to generate,
//! validate and simulate, events and task completion statistics; run it under
//! `/usr/bin/time -v` for peak memory (docs/benchmarks.md). About every 10 s
//! of wall time a progress line goes to stderr.
//!
//! Usage: scale_tree N_TASKS [PODS RACKS_PER_POD HOSTS_PER_RACK] -- SCHEDULER...
use coflowkit_model::{percentile, BitsPerSec, Fabric, TreeSpec};
use coflowkit_sched::{build, SchedulerSpec, WorkloadHints};
use coflowkit_sim::{Progress, SimOptions, Simulation};
use coflowkit_workload::baraat::{generate, BaraatConfig, Tree, Workflow};
use std::time::{Duration, Instant};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let usage = "usage: scale_tree N_TASKS [PODS RACKS_PER_POD HOSTS_PER_RACK] -- SCHEDULER...";
    let sep = args.iter().position(|a| a == "--").ok_or(usage)?;
    let (sizes, scheds) = (&args[..sep], &args[sep + 1..]);
    let num = |i: usize, default: u32| -> Result<u32, String> {
        sizes.get(i).map_or(Ok(default), |s| {
            s.parse()
                .map_err(|_| format!("{usage}: '{s}' is not a number"))
        })
    };
    let n_tasks = num(0, 10_000)? as usize;
    let (pods, racks, hosts) = (num(1, 30)?, num(2, 30)?, num(3, 40)?);
    let t0 = Instant::now();
    let tree = Tree {
        pods,
        racks_per_pod: racks,
        hosts_per_rack: hosts,
        ..Tree::default()
    };
    let cfg = BaraatConfig {
        workflow: Workflow::TwoStage,
        n_tasks,
        load: 0.8,
        seed: 1,
        tree,
        ..BaraatConfig::default()
    };
    let w = generate(&cfg);
    let t_gen = t0.elapsed().as_secs_f64();
    let spec = TreeSpec {
        pods,
        racks_per_pod: racks,
        hosts_per_rack: hosts,
        host_rate: BitsPerSec::GBPS,
        ..TreeSpec::default()
    };
    let fabric = Fabric::tree(&spec)?;
    let t1 = Instant::now();
    let w = w.validate(&fabric)?;
    let hints = WorkloadHints::of(&w);
    println!(
        "{} hosts, {} links, {} tasks, {} flows; generated in {:.2} s, validated in {:.2} s",
        fabric.n_hosts(),
        fabric.n_links(),
        w.coflows().len(),
        w.n_flows(),
        t_gen,
        t1.elapsed().as_secs_f64()
    );
    for s in scheds {
        let t = Instant::now();
        let sched = build(&SchedulerSpec::parse(s)?, &hints)?;
        let mut report = Progress::printer(s, Duration::from_secs(10));
        let r =
            Simulation::new(fabric.clone(), &w, sched, SimOptions::default()).run(&mut report)?;
        let tct: Vec<f64> = r.coflows.iter().map(|c| c.cct_s()).collect();
        let mean = tct.iter().sum::<f64>() / tct.len() as f64;
        let p = |q: f64| percentile(&tct, q * 100.0).unwrap_or(f64::NAN);
        // Every task's completion instant, folded (FNV-1a over the ns):
        // equal sums mean bit-identical completions (to compare binaries).
        let check = r.coflows.iter().fold(0xcbf2_9ce4_8422_2325u64, |h, c| {
            (h ^ c.finish.0).wrapping_mul(0x100_0000_01b3)
        });
        println!(
            "{s}: {:.1} s wall, {} events, task completion mean {:.2} ms, p50 {:.2} ms, p95 {:.2} ms, p99 {:.2} ms, completions {check:016x}",
            t.elapsed().as_secs_f64(),
            r.n_events,
            mean * 1e3,
            p(0.5) * 1e3,
            p(0.95) * 1e3,
            p(0.99) * 1e3
        );
    }
    Ok(())
}
