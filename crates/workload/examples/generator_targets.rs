//! Measures every generator against its documented targets, with the
//! configurations the tests use; docs/workloads.md quotes this output.
//!
//! ```text
//! cargo run --release -p coflowkit-workload --example generator_targets
//! ```

use coflowkit_model::{percentile, Bin, BitsPerSec, DepKind, FlowKind, Workload};
use coflowkit_workload::arrivals::DeadlineSpec;
use coflowkit_workload::baraat::{self, BaraatConfig, SizeModel, Tail, Tree, Workflow};
use coflowkit_workload::dag::{self, DagConfig};
use coflowkit_workload::dist::{lognormal_mu_for_mean, pareto_quantile, pareto_scale_for_mean};
use coflowkit_workload::empirical::{self, EmpiricalConfig};
use coflowkit_workload::synth::{self, SynthConfig};
use coflowkit_workload::tafe::{self, TafeConfig};
use coflowkit_workload::waves::{self, WavesConfig};
use coflowkit_workload::TraceStats;
use std::time::Instant;

fn mean(xs: &[f64]) -> f64 {
    xs.iter().sum::<f64>() / xs.len() as f64
}

fn bins(w: &Workload, c: &SynthConfig) -> String {
    let mut n = [0usize; 4];
    for cf in &w.coflows {
        let b = c.bin_of(cf.length(), cf.width());
        n[Bin::ALL.iter().position(|&x| x == b).unwrap()] += 1;
    }
    let total = w.coflows.len() as f64;
    Bin::ALL
        .iter()
        .zip(n)
        .map(|(b, k)| format!("{} {:.1}%", b.name(), 100.0 * k as f64 / total))
        .collect::<Vec<_>>()
        .join(", ")
}

fn class_loads(w: &Workload, t: &Tree, workflow: Workflow) -> String {
    t.class_loads(w, workflow)
        .iter()
        .map(|c| {
            format!(
                "{}{} {:.3}",
                c.racks.name(),
                c.class.name(),
                c.load.unwrap_or(0.0)
            )
        })
        .collect::<Vec<_>>()
        .join(", ")
}

fn main() {
    println!("== coflow-benchmark");
    for (name, c) in [("aalo", SynthConfig::aalo()), ("dcas", SynthConfig::dcas())] {
        let c = SynthConfig {
            n_coflows: 4000,
            ..c
        };
        let w = synth::generate(&c);
        let load = TraceStats::new(&w, c.capacity_bps).offered_load.unwrap();
        let longest = w.coflows.iter().map(|x| x.length().0).max().unwrap();
        println!(
            "{name} x4000: {} | load {load:.6} | largest flow {longest} B",
            bins(&w, &c)
        );
    }

    println!("== baraat");
    let t0 = Instant::now();
    let w = baraat::generate(&BaraatConfig::default());
    let dt = t0.elapsed();
    let per: Vec<usize> = w.coflows.iter().map(|c| c.flows.len()).collect();
    let sizes: Vec<f64> = w
        .coflows
        .iter()
        .flat_map(|c| &c.flows)
        .filter(|f| f.after.is_none())
        .map(|f| f.bytes.0 as f64)
        .collect();
    println!(
        "two-stage x{}: {} flows in {:.2?}, flows/task min {} max {}, worker flow mean {:.0} B, p50 {:.0} B",
        w.coflows.len(),
        per.iter().sum::<usize>(),
        dt,
        per.iter().min().unwrap(),
        per.iter().max().unwrap(),
        mean(&sizes),
        percentile(&sizes, 50.0).unwrap()
    );
    println!(
        "  class loads: {}",
        class_loads(&w, &Tree::default(), Workflow::TwoStage)
    );
    drop(w);
    for wf in [Workflow::SingleStage, Workflow::Storage] {
        let w = baraat::generate(&BaraatConfig {
            workflow: wf,
            ..BaraatConfig::default()
        });
        println!(
            "{wf:?} x10000 class loads: {}",
            class_loads(&w, &Tree::default(), wf)
        );
    }
    let w = baraat::generate(&BaraatConfig {
        workflow: Workflow::Storage,
        sizes: SizeModel::Bing,
        n_tasks: 20_000,
        ..BaraatConfig::default()
    });
    let heavy = w
        .coflows
        .iter()
        .filter(|c| c.flows[0].bytes.0 > 100_000)
        .count() as f64
        / 20_000.0;
    let light: Vec<f64> = w
        .coflows
        .iter()
        .map(|c| c.flows[0].bytes.0 as f64)
        .filter(|&b| b < 1e5)
        .collect();
    let hv: Vec<f64> = w
        .coflows
        .iter()
        .map(|c| c.flows[0].bytes.0 as f64)
        .filter(|&b| b > 1e5)
        .collect();
    println!(
        "bing x20000: heavy share {heavy:.4}, light per-flow mean {:.0} B, heavy {:.0} B",
        mean(&light),
        mean(&hv)
    );
    for tail in [Tail::Pareto, Tail::Lognormal] {
        let w = baraat::generate(&BaraatConfig {
            workflow: Workflow::Storage,
            sizes: SizeModel::Analytics,
            tail,
            storage_servers: 1,
            n_tasks: 40_000,
            ..BaraatConfig::default()
        });
        let b: Vec<f64> = w
            .coflows
            .iter()
            .map(|c| c.flows[0].bytes.0 as f64)
            .collect();
        let (w50, w90) = match tail {
            Tail::Pareto => {
                let s = pareto_scale_for_mean(26_000.0, 1.2);
                (pareto_quantile(s, 1.2, 0.5), pareto_quantile(s, 1.2, 0.9))
            }
            Tail::Lognormal => {
                let mu = lognormal_mu_for_mean(26_000.0, 2.0);
                (mu.exp(), (mu + 2.0 * 1.281_551_565_5).exp())
            }
        };
        println!(
            "analytics {tail:?} x40000: p50 {:.0} (target {w50:.0}), p90 {:.0} (target {w90:.0}), mean {:.0} (target 26000 before the cap)",
            percentile(&b, 50.0).unwrap(),
            percentile(&b, 90.0).unwrap(),
            mean(&b)
        );
    }

    println!("== websearch / datamining");
    for base in [EmpiricalConfig::websearch(), EmpiricalConfig::datamining()] {
        let c = EmpiricalConfig {
            n_flows: 50_000,
            type1_fraction: 0.1,
            type3_fraction: 0.25,
            ..base
        };
        let w = empirical::generate(&c);
        let cdf = c.sizes.cdf();
        let s: Vec<f64> = w
            .coflows
            .iter()
            .map(|x| x.flows[0].bytes.0 as f64)
            .collect();
        let t = |k: u8| {
            w.coflows
                .iter()
                .filter(|x| x.flows[0].karuna_type() == k)
                .count() as f64
                / 50_000.0
        };
        let d: Vec<f64> = w
            .coflows
            .iter()
            .filter_map(|x| x.flows[0].deadline)
            .map(|d| d.0 as f64)
            .collect();
        let load = TraceStats::new(&w, c.capacity_bps).offered_load.unwrap();
        let mut sorted = s.clone();
        sorted.sort_by(f64::total_cmp);
        let dev = cdf
            .points
            .windows(2)
            .map(|p| {
                let x = (p[0].0 + p[1].0) / 2.0 * cdf.unit_bytes;
                let got = sorted.partition_point(|&v| v <= x) as f64 / sorted.len() as f64;
                (got - cdf.cdf_bytes(x)).abs()
            })
            .fold(0.0, f64::max);
        println!(
            "{}: max |sample CDF - CDF| at segment midpoints {dev:.4}",
            cdf.name
        );
        println!(
            "{} x50000: mean {:.0} B (CDF {:.0}), p50 {:.0} ({:.0}), p90 {:.0} ({:.0}), p99 {:.0} ({:.0}); types 1/2/3 {:.4}/{:.4}/{:.4}; deadline mean {:.3} ms; load {load:.6}",
            cdf.name,
            mean(&s), cdf.mean_bytes(),
            percentile(&s, 50.0).unwrap(), cdf.quantile_bytes(0.5),
            percentile(&s, 90.0).unwrap(), cdf.quantile_bytes(0.9),
            percentile(&s, 99.0).unwrap(), cdf.quantile_bytes(0.99),
            t(1), t(2), t(3),
            mean(&d) / 1e6
        );
    }

    println!("== dag");
    let c = DagConfig {
        n_jobs: 1000,
        ..DagConfig::default()
    };
    let w = dag::generate(&c);
    let mut stages = [0usize; 3];
    let (mut sa, mut edges) = (0, 0);
    for cf in &w.coflows {
        stages[cf.job.unwrap().stage as usize] += 1;
        for d in &cf.parents {
            edges += 1;
            sa += usize::from(d.kind == DepKind::StartsAfter);
        }
    }
    let load = TraceStats::new(&w, BitsPerSec::GBPS).offered_load.unwrap();
    println!("1000 jobs: {} coflows, by stage {stages:?}, {edges} edges, Starts-After {:.3}, load {load:.6}", w.coflows.len(), sa as f64 / edges as f64);

    println!("== multi-wave");
    for max_waves in [2, 4] {
        let c = WavesConfig {
            coflows: SynthConfig {
                n_coflows: 1000,
                ..SynthConfig::aalo()
            },
            max_waves,
            ..WavesConfig::default()
        };
        let w = waves::generate(&c);
        let mut hist = vec![0usize; max_waves as usize];
        for cf in &w.coflows {
            hist[cf.flows.iter().map(|f| f.group).max().unwrap() as usize] += 1;
        }
        let pct: Vec<String> = hist
            .iter()
            .map(|&n| format!("{:.1}%", n as f64 / 10.0))
            .collect();
        println!(
            "max_waves {max_waves}, 1000 coflows: coflows with 1..{max_waves} waves {}",
            pct.join(" / ")
        );
    }
    let c = WavesConfig {
        coflows: SynthConfig {
            n_coflows: 2000,
            ..SynthConfig::aalo()
        },
        extra_task_fraction: 0.2,
        ..WavesConfig::default()
    };
    let base = waves::generate(&WavesConfig {
        extra_task_fraction: 0.0,
        ..c.clone()
    });
    let w = waves::generate(&c);
    let with: Vec<f64> = w
        .coflows
        .iter()
        .zip(&base.coflows)
        .filter(|(a, b)| a.flows.len() > b.flows.len())
        .map(|(a, b)| a.flows[b.flows.len()].delay.0 as f64)
        .collect();
    println!(
        "extra tasks x2000 at 0.2: share {:.4}, delay mean {:.1} ms",
        with.len() as f64 / 2000.0,
        mean(&with) / 1e6
    );

    println!("== tafe");
    let c = TafeConfig {
        n_tasks: 20_000,
        ..TafeConfig::default()
    };
    let w = tafe::generate(&c);
    let sizes: Vec<f64> = w
        .coflows
        .iter()
        .map(|cf| {
            cf.flows
                .iter()
                .filter(|f| f.kind == FlowKind::Net)
                .map(|f| f.bytes.0 as f64)
                .sum()
        })
        .collect();
    let mut per_client = [0usize; 3];
    for cf in &w.coflows {
        per_client[cf.flows[1].dst.0 as usize] += 1;
    }
    println!(
        "20000 tasks: mean task {:.0} B (target 50500), per client {per_client:?}",
        mean(&sizes)
    );

    println!("== coflow deadlines (coflow-benchmark, fraction 0.25, mean 100 ms, 2000 coflows)");
    let c = SynthConfig {
        n_coflows: 2000,
        deadlines: DeadlineSpec {
            fraction: 0.25,
            mean: coflowkit_model::Dur::from_millis(100),
            ..DeadlineSpec::default()
        },
        ..SynthConfig::aalo()
    };
    let w = synth::generate(&c);
    let d: Vec<f64> = w
        .coflows
        .iter()
        .filter_map(|x| x.deadline)
        .map(|d| d.0 as f64)
        .collect();
    println!(
        "share {:.4}, mean {:.1} ms",
        d.len() as f64 / 2000.0,
        mean(&d) / 1e6
    );
}
