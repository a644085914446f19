//! The `tafe` generator: tasks whose flows are CPU work then network,
//! sent by a few clients, and TAFE's two-task motivating example.
//!
//! Source: TAFE, III (the motivating example: "2 tasks each has two steps
//! that are separated by a barrier ... There are two flows in each task,
//! and each flow has two stages. The CPU processing stage need 2 unit of
//! CPU time and the network processing stage consumes 2 unit of link time.
//! Further, network processing stage can not begin until CPU processing
//! stage finishes") and V-B/V-C (three clients sending tasks persistently;
//! 100 tasks of 1 KB to 100 KB).
//!
//! A flow's two stages are two flows of the model: a compute stage on the
//! server's CPU (`compute(server, work)`, group `j + 1` for the task's
//! `j`-th flow) and the network transfer server -> client in group 0,
//! `after(j + 1)`, so each transfer waits for its own CPU stage only.
//! Simulating these needs a fabric with CPU resources
//! (`Fabric::with_cpus`); work units count like bytes (a stage of `w`
//! units alone on a CPU of capacity `c` bit/s takes `8 w / c` s).
//!
//! **Default.** Hosts `0..n_clients` are clients, the next `n_servers` hosts
//! servers. Tasks arrive Poisson; each picks a client uniformly (so each
//! client's tasks are Poisson too), a size in `[min_task, max_task]` bytes
//! (`sizes=uniform`, the default: uniform; `sizes=websearch` or
//! `datamining`: the DCTCP web-search or VL2 data-mining CDF of
//! [`crate::dist`] conditioned on that range, drawn by inverting the CDF
//! between its values at the two ends, as TAFE V-A takes task sizes from
//! those distributions and V-C/V-D restrict them to "1 KB to 100 KB" or
//! "10 MB to infinity"), split as evenly as possible over `flows_per_task` flows from
//! distinct uniform servers; a flow's CPU work is `cpu_per_byte` times its
//! bytes (at least 1). Load: on the clients' downlinks, which carry every
//! byte: `total network bits / (n_clients * capacity * span)`, exact over
//! the span of arrivals. With CPU capacity equal to the link capacity, the
//! servers' CPUs then run at `cpu_per_byte * n_clients / n_servers` times
//! that load on average.
//!
//! **Motivating example** ([`TafeConfig::motivating`]): two tasks (coflows 1
//! and 2, both at time 0), two flows each, every flow `compute(0, 2u)` then
//! `flow(0, 1, 2u)`, with `u = unit` bytes: one CPU (host 0's) and one link
//! (host 0 -> host 1) shared by all. With CPU and link capacity `c`, the
//! paper's time unit is `t = 16 u / c` (2 units take `t` alone: the cluster
//! serves 2 units per `t`); the default `u` = 62,500 B makes `t` = 1 ms at
//! 1 Gbit/s. The paper's task completion times: fair sharing 8t and 8t;
//! task-aware FIFO 4t and 6t (average 5t); TAFE 3t and 5t (average 4t).

use crate::arrivals::{
    check_at_least, check_positive, main_stream, poisson_arrivals, substream, tags, DeadlineSpec,
};
use crate::dist::EmpiricalCdf;
use crate::empirical::SizeCdf;
use crate::error::ConfigError;
use crate::params::Choice;
use coflowkit_model::{compute, flow, BitsPerSec, Bytes, CoflowSpec, Time, Workload};
use rand::RngExt;

/// How task sizes are drawn in `[min_task, max_task]`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TaskSizes {
    /// Uniform.
    Uniform,
    /// An empirical CDF conditioned on the range.
    Empirical(SizeCdf),
}

impl Choice for TaskSizes {
    const CHOICES: &'static [(&'static str, TaskSizes)] = &[
        ("uniform", TaskSizes::Uniform),
        ("websearch", TaskSizes::Empirical(SizeCdf::WebSearch)),
        ("datamining", TaskSizes::Empirical(SizeCdf::DataMining)),
    ];
}

/// A size from `cdf` conditioned on `[lo, hi]` bytes: `u` uniform between
/// the CDF's values at `lo` and `hi`, inverted, rounded, kept in range.
fn conditioned(cdf: &EmpiricalCdf, lo: u64, hi: u64, u: f64) -> u64 {
    let (a, b) = (cdf.cdf_bytes(lo as f64), cdf.cdf_bytes(hi as f64));
    let x = cdf.quantile_bytes(a + (b - a) * u).round();
    (x as u64).clamp(lo, hi)
}

/// What to generate; see the module doc.
#[derive(Debug, Clone, PartialEq)]
pub struct TafeConfig {
    /// How task sizes are drawn.
    pub sizes: TaskSizes,
    /// Generate the two-task motivating example instead (only `unit` applies).
    pub motivating: bool,
    /// The motivating example's unit of work and of transfer.
    pub unit: Bytes,
    /// Clients (hosts `0..n_clients`).
    pub n_clients: u32,
    /// Servers (the next hosts).
    pub n_servers: u32,
    /// Tasks.
    pub n_tasks: usize,
    /// Flows per task, from distinct servers.
    pub flows_per_task: u32,
    /// Smallest task (network bytes).
    pub min_task: Bytes,
    /// Largest task.
    pub max_task: Bytes,
    /// CPU work units per network byte of a flow.
    pub cpu_per_byte: f64,
    /// Target load on the clients' downlinks.
    pub load: f64,
    /// Link capacity the load refers to, bit/s.
    pub capacity_bps: BitsPerSec,
    /// Seed.
    pub seed: u64,
    /// Which tasks get a deadline (none by default).
    pub deadlines: DeadlineSpec,
}

impl Default for TafeConfig {
    /// TAFE V-C: 3 clients, 100 tasks of 1 KB to 100 KB; 2 flows per task
    /// (as in III), 12 servers, as much CPU work as bytes, load 0.8 on
    /// 1 Gbit/s links.
    fn default() -> TafeConfig {
        TafeConfig {
            sizes: TaskSizes::Uniform,
            motivating: false,
            unit: Bytes(62_500),
            n_clients: 3,
            n_servers: 12,
            n_tasks: 100,
            flows_per_task: 2,
            min_task: Bytes(1_000),
            max_task: Bytes(100_000),
            cpu_per_byte: 1.0,
            load: 0.8,
            capacity_bps: BitsPerSec::GBPS,
            seed: 1,
            deadlines: DeadlineSpec::default(),
        }
    }
}

impl TafeConfig {
    /// TAFE III's two-task example.
    pub fn motivating() -> TafeConfig {
        TafeConfig {
            motivating: true,
            ..TafeConfig::default()
        }
    }

    /// Checks the configuration; the error names the field.
    pub fn validate(&self) -> Result<(), ConfigError> {
        check_at_least("unit", self.unit.0, 1)?;
        if self.motivating {
            return Ok(());
        }
        check_at_least("n_clients", u64::from(self.n_clients), 1)?;
        check_at_least("flows_per_task", u64::from(self.flows_per_task), 1)?;
        if self.n_servers < self.flows_per_task {
            return Err(ConfigError {
                field: "n_servers",
                message: format!(
                    "must be at least flows_per_task ({}), got {}",
                    self.flows_per_task, self.n_servers
                ),
            });
        }
        if u64::from(self.n_clients) + u64::from(self.n_servers) > u64::from(u32::MAX) {
            return Err(ConfigError {
                field: "n_servers",
                message: "too many hosts".into(),
            });
        }
        check_at_least("min_task", self.min_task.0, u64::from(self.flows_per_task))?;
        if self.max_task < self.min_task {
            return Err(ConfigError {
                field: "max_task",
                message: format!(
                    "must be at least min_task ({}), got {}",
                    self.min_task.0, self.max_task.0
                ),
            });
        }
        check_positive("cpu_per_byte", self.cpu_per_byte)?;
        check_positive("load", self.load)?;
        check_positive("capacity_bps", self.capacity_bps.0)?;
        self.deadlines.validate("deadline_fraction")
    }
}

/// Generates the workload `config` describes.
///
/// # Panics
/// If `config.validate()` fails.
pub fn generate(config: &TafeConfig) -> Workload {
    if let Err(e) = config.validate() {
        panic!("invalid tafe configuration: {e}");
    }
    if config.motivating {
        let u = config.unit.0;
        let task = |id| {
            let flows = (1..=2u32)
                .flat_map(|k| [compute(0, 2 * u).in_group(k), flow(0, 1, 2 * u).after(k)])
                .collect();
            CoflowSpec::new(id, Time::ZERO, flows)
        };
        return Workload {
            n_hosts: 2,
            coflows: vec![task(1), task(2)],
        };
    }
    let mut rng = main_stream(config.seed);
    let k = config.flows_per_task;
    let mut coflows: Vec<CoflowSpec> = (0..config.n_tasks)
        .map(|i| {
            let client = rng.random_range(0..config.n_clients);
            let (lo, hi) = (config.min_task.0, config.max_task.0);
            let size = match config.sizes {
                TaskSizes::Uniform => rng.random_range(lo..=hi),
                TaskSizes::Empirical(cdf) => conditioned(cdf.cdf(), lo, hi, rng.random()),
            };
            let servers = rand::seq::index::sample(&mut rng, config.n_servers as usize, k as usize);
            let mut flows = Vec::with_capacity(2 * k as usize);
            for (j, s) in servers.into_iter().enumerate() {
                let server = config.n_clients + s as u32;
                let bytes = size / u64::from(k) + u64::from((j as u64) < size % u64::from(k));
                let work = ((bytes as f64 * config.cpu_per_byte).round() as u64).max(1);
                let g = j as u32 + 1;
                flows.push(compute(server, work).in_group(g));
                flows.push(flow(server, client, bytes).after(g));
            }
            CoflowSpec::new(i as u64 + 1, Time::ZERO, flows)
        })
        .collect();
    let bits: f64 = coflows
        .iter()
        .flat_map(|c| &c.flows)
        .filter(|f| f.kind == coflowkit_model::FlowKind::Net)
        .map(|f| f.bytes.bits_f64())
        .sum();
    let span = crate::arrivals::span_for_load(
        bits,
        f64::from(config.n_clients) * config.capacity_bps.0,
        config.load,
    );
    let mut gaps = substream(config.seed, tags::ARRIVALS);
    for (c, a) in coflows
        .iter_mut()
        .zip(poisson_arrivals(&mut gaps, config.n_tasks, span))
    {
        c.arrival = a;
    }
    config.deadlines.apply_to_coflows(&mut coflows, config.seed);
    Workload {
        n_hosts: config.n_clients + config.n_servers,
        coflows,
    }
}

crate::params! { TafeConfig {
    deadlines("tasks") => deadlines;
    "sizes" => sizes: "task sizes in [min_task, max_task]: uniform, or websearch/datamining conditioned on that range",
    "n_clients" => n_clients: "clients (hosts 0..n_clients) that receive the tasks' results",
    "n_servers" => n_servers: "servers (the next hosts) that compute and send",
    "n_tasks" => n_tasks: "tasks (coflows)",
    "flows_per_task" => flows_per_task: "flows per task, each CPU work on a server then server->client",
    "min_task" => min_task: "smallest task (network bytes)",
    "max_task" => max_task: "largest task",
    "cpu_per_byte" => cpu_per_byte: "CPU work units per network byte",
    "load" => load: "load on the clients' downlinks: total bits / (n_clients * capacity * span)",
    "capacity_bps" => capacity_bps: "link capacity the load refers to, bit/s",
    "seed" => seed: "random seed",
    "motivating" => motivating: "true: TAFE III's 2-task example instead (only unit applies)",
    "unit" => unit: "the motivating example's unit (2 units of CPU, then 2 of network)",
}}

#[cfg(test)]
mod tests {
    use super::*;
    use coflowkit_model::{BitsPerSec, Fabric, FlowKind};

    /// Each task's network bytes (its flows, not its CPU stages).
    fn net_bytes_per_task(w: &Workload) -> Vec<u64> {
        w.coflows
            .iter()
            .map(|c| {
                c.flows
                    .iter()
                    .filter(|f| f.kind == FlowKind::Net)
                    .map(|f| f.bytes.0)
                    .sum()
            })
            .collect()
    }

    #[test]
    fn the_motivating_example_is_exact() {
        let w = generate(&TafeConfig::motivating());
        assert_eq!(w.n_hosts, 2);
        let want = vec![
            compute(0, 125_000).in_group(1),
            flow(0, 1, 125_000).after(1),
            compute(0, 125_000).in_group(2),
            flow(0, 1, 125_000).after(2),
        ];
        assert_eq!(w.coflows.len(), 2);
        for (c, id) in w.coflows.iter().zip([1, 2]) {
            assert_eq!((c.id.0, c.arrival, &c.flows), (id, Time::ZERO, &want));
        }
        let fabric = Fabric::big_switch(2, BitsPerSec::GBPS)
            .unwrap()
            .with_cpus(BitsPerSec::GBPS)
            .unwrap();
        assert!(w.clone().validate(&fabric).is_ok());
        // Without CPUs the compute stages have nowhere to run.
        assert!(w
            .validate(&Fabric::big_switch(2, BitsPerSec::GBPS).unwrap())
            .is_err());
    }

    #[test]
    fn tasks_match_their_targets() {
        // 20,000 tasks: sizes uniform in [1 KB, 100 KB] (mean 50.5 KB within
        // 1%), clients uniform (each 1/3 +- 0.01), every transfer after its
        // own compute stage on the same server; the clients' load is exact.
        let config = TafeConfig {
            n_tasks: 20_000,
            ..TafeConfig::default()
        };
        let w = generate(&config);
        let mut per_client = [0usize; 3];
        let mut total = 0u64;
        for c in &w.coflows {
            assert_eq!(c.flows.len(), 4);
            let net: Vec<_> = c.flows.iter().filter(|f| f.kind == FlowKind::Net).collect();
            let client = net[0].dst.0;
            assert!(client < 3 && net.iter().all(|f| f.dst.0 == client));
            per_client[client as usize] += 1;
            let size: u64 = net.iter().map(|f| f.bytes.0).sum();
            assert!((1_000..=100_000).contains(&size));
            total += size;
            for pair in c.flows.chunks(2) {
                let (cpu, tx) = (&pair[0], &pair[1]);
                assert_eq!(cpu.kind, FlowKind::Compute);
                assert_eq!((cpu.src, cpu.dst), (tx.src, tx.src));
                assert!(tx.src.0 >= 3);
                assert_eq!(tx.after, Some(cpu.group));
                assert_eq!(cpu.bytes, tx.bytes);
            }
            assert_ne!(net[0].src, net[1].src);
        }
        let mean = total as f64 / 20_000.0;
        assert!((mean / 50_500.0 - 1.0).abs() < 0.01, "mean {mean}");
        for n in per_client {
            assert!((n as f64 / 20_000.0 - 1.0 / 3.0).abs() < 0.01);
        }
        let first = w.coflows[0].arrival;
        let last = w.coflows.last().unwrap().arrival;
        let load = total as f64 * 8.0 / (3.0 * 1e9 * (last - first).as_secs_f64());
        assert!((load - 0.8).abs() < 1e-6, "load {load}");
        let fabric = Fabric::big_switch(15, BitsPerSec::GBPS)
            .unwrap()
            .with_cpus(BitsPerSec::GBPS)
            .unwrap();
        assert!(w.validate(&fabric).is_ok());
    }

    #[test]
    fn empirical_task_sizes_follow_the_conditioned_cdf() {
        // Web search conditioned on [10 MB, 1 TB]: the upper part of the
        // CDF (from 10 MB, about 0.8, to 1), so every task at least 10 MB
        // and the median where the CDF is halfway between.
        let config = TafeConfig {
            n_tasks: 4000,
            sizes: TaskSizes::Empirical(SizeCdf::WebSearch),
            min_task: Bytes(10_000_000),
            max_task: Bytes(1_000_000_000_000),
            ..TafeConfig::default()
        };
        let w = generate(&config);
        let mut sizes = net_bytes_per_task(&w);
        sizes.sort_unstable();
        let cdf = SizeCdf::WebSearch.cdf();
        assert!(sizes[0] >= 10_000_000);
        assert!(*sizes.last().unwrap() as f64 <= cdf.quantile_bytes(1.0) + 1.0);
        let a = cdf.cdf_bytes(1e7);
        let median = cdf.quantile_bytes((a + 1.0) / 2.0);
        let got = sizes[sizes.len() / 2] as f64;
        assert!(
            (got / median - 1.0).abs() < 0.05,
            "median {got} vs {median}"
        );
        // Data mining in [1 KB, 100 KB]: inside the range; the conditioned
        // CDF at 10 KB matches within 0.03.
        let config = TafeConfig {
            n_tasks: 4000,
            sizes: TaskSizes::Empirical(SizeCdf::DataMining),
            ..TafeConfig::default()
        };
        let w = generate(&config);
        let sizes = net_bytes_per_task(&w);
        assert!(sizes.iter().all(|&b| (1_000..=100_000).contains(&b)));
        let cdf = SizeCdf::DataMining.cdf();
        let (a, b) = (cdf.cdf_bytes(1e3), cdf.cdf_bytes(1e5));
        let want = (cdf.cdf_bytes(1e4) - a) / (b - a);
        let got = sizes.iter().filter(|&&x| x <= 10_000).count() as f64 / sizes.len() as f64;
        assert!((got - want).abs() < 0.03, "{got} vs {want}");
    }

    #[test]
    fn golden_first_task_for_seed_1() {
        let w = generate(&TafeConfig::default());
        let c = &w.coflows[1];
        let got: Vec<_> = c
            .flows
            .iter()
            .map(|f| (f.src.0, f.dst.0, f.bytes.0, f.group, f.after))
            .collect();
        assert_eq!(
            (c.arrival.0, got),
            (
                764854,
                vec![
                    (12, 12, 24055, 1, None),
                    (12, 2, 24055, 0, Some(1)),
                    (7, 7, 24054, 2, None),
                    (7, 2, 24054, 0, Some(2)),
                ]
            )
        );
    }
}
