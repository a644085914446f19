//! The `baraat` generator: tasks of the workflows Baraat evaluates
//! (partition-aggregate, storage retrieval, data-parallel), with its three
//! task-size workloads, on a three-level tree. One task is one coflow.
//!
//! Source: Baraat (Dogar et al., SIGCOMM 2014) 2.1 (task sizes: Bing's
//! query-response tasks, "most tasks have the same size, approximately 15%
//! of the tasks are significantly heavier"; data analytics heavy-tailed),
//! 5.1 (storage retrieval: a client reads from three servers in parallel;
//! Memcached tasks of 800 KB), 5.2 (a 36,000-server tree of 30 pods x 30
//! racks x 40 hosts at 1 Gbit/s, 2:1 oversubscription at the ToR; uniform
//! flow sizes in [2 KB, 50 KB]; single-stage tasks of 40 flows; two-stage
//! tasks where a top-level aggregator, in a separate rack, one per pod,
//! queries 30 mid-level aggregators in separate racks that query 40 workers
//! each, with a selectivity of 3%; 10,000 tasks at 80% load, "the average
//! load of bottlenecked network links"), 5.2.2 (batches of data-parallel
//! jobs, single- and multi-stage) and 5.2.3 (worker computation as an
//! exponentially distributed wait).
//!
//! # The tree and the load
//!
//! The tree tasks are placed on and how the load of a workload is defined over its classes of
//! links: `baraat/tree.rs` (`Tree`, `LinkClass`, `ClassLoad`, `Split`).
//!
//! # Workflows (one task = one coflow)
//!
//! - **single-stage**: an aggregator, uniform over all hosts, queries
//!   `workers` (default 40) workers: the other hosts of its rack, and when
//!   the rack has too few (40 hosts have 39 others) the rest from the next
//!   racks of its pod in order (cyclically), a random subset of the last
//!   one. So a default task is 39 intra-rack flows and one from the next
//!   rack: Baraat's "queries all other nodes in the rack, so each task
//!   comprises 40 flows" with 40-host racks. Flows worker -> aggregator, group 0.
//!   Which hosts aggregate, the paper does not say: with `aggregators = any`
//!   (the default) every host may, so a worker's uplink carries flows of the
//!   tasks of every host of its rack; with `aggregators = rack` one host per
//!   rack does (its first; the task's rack uniform), so each rack's tasks
//!   queue at one downlink and a worker serves only its rack's aggregator.
//! - **two-stage**: a pod uniform at random; the top aggregator uniform in
//!   that pod's top rack; `mids` (30) mid aggregators in distinct racks drawn
//!   uniformly from all non-top racks of the tree (30 cannot fit in the 29
//!   other racks of one pod), each uniform in its rack, each querying
//!   `workers` workers as in single-stage (spilling past top racks). Mid `m`
//!   (0-based) has its worker flows in group `m + 1` and one flow to the top
//!   aggregator in group 0, `after(m + 1)`, of `max(1, round(selectivity *
//!   bytes mid m received))` bytes. Default: 30 x 40 + 30 = 1,230 flows.
//! - **storage**: a client uniform over all hosts reads from
//!   `storage_servers` (3) distinct servers uniform over the other hosts;
//!   flows server -> client.
//! - **data-parallel**: a job of `dp_stages` shuffle stages; stage 0's
//!   senders are `dp_senders` distinct random hosts, every stage's receivers
//!   `dp_receivers` distinct random hosts, and stage `s > 0`'s senders the
//!   receivers of stage `s - 1`; one flow per (sender, receiver), stage `s`
//!   in group `s`, `after(s - 1)` for `s > 0`. All jobs arrive at time 0 (a
//!   batch, Baraat 5.2.2); `load` does not apply.
//!
//! Worker flows (all flows of single-stage and storage tasks, worker flows
//! of two-stage ones, stage 0 of data-parallel jobs) wait an exponential
//! `delay` of mean `compute_mean` (default 0: none), drawn from its own
//! stream so the flows are the same with or without it.
//!
//! # Sizes
//!
//! - **uniform** (Baraat 5.2, "homogeneous"): every flow uniform in
//!   `[uniform_min, uniform_max]` = [2 KB, 50 KB] (decimal), mean 26 KB.
//! - **bing** (2.1, Fig. 2 left): bimodal. A task is heavy with probability
//!   `bing_heavy_fraction` (0.15, "approximately 15%"); its worker flows
//!   all have one size, `bing_light` (20 KB) or `bing_heavy` (200 KB) times
//!   a factor uniform in `[1 - bing_spread, 1 + bing_spread]` (±10%). Why
//!   these: a light single-stage task is then 40 x 20 KB = 800 KB, the task
//!   size Baraat's own Memcached experiment uses (5.1); heavy tasks are an
//!   order of magnitude heavier ("significantly heavier", due to "the
//!   number of the responses or iterations", so a multiple of the light
//!   size); the spread models "most tasks have the same size" without exact
//!   ties.
//! - **analytics** (2.1, Fig. 2 right; 5.2.3 "Pareto or Lognormal"):
//!   heavy-tailed. A task's worker flows all have one size drawn from a
//!   Pareto law of shape `pareto_shape` (1.2) or a lognormal law of
//!   log-spread `lognormal_sigma` (2), either with mean `tail_mean` (26 KB,
//!   the uniform workload's mean, so the three workloads offer comparable
//!   bytes per flow), capped at `tail_max` (1 GiB).
//!
//! A task's size is the sum of its flows; for bing and analytics it is the
//! number of worker flows times the drawn per-flow size (plus the mid ->
//! top flows), so the task-size distribution has the drawn law's shape.
//! How a task's bytes split over its flows the paper does not say (its
//! Fig. 2 gives task sizes only). With `flow_spread = s > 0` each flow of a
//! bing or analytics task is the task's per-flow size times a factor
//! uniform in `[1 - s, 1 + s]` (mean 1, so the task-size law keeps its
//! mean), drawn from a stream of its own so that every other draw, and the
//! workload at `s = 0`, stay as they are. The choice matters to per-flow
//! schemes: with one size per task, shortest-flow-first orders whole tasks
//! (it is task-aware by accident); with spread sizes it finishes the small
//! flows of many tasks first. `uniform` flows are drawn one by one already
//! (`flow_spread` does not apply).

use crate::arrivals::{
    check_at_least, check_fraction, check_positive, exp_dur, main_stream, poisson_arrivals,
    substream, tags, DeadlineSpec,
};
use crate::dist::{lognormal_mu_for_mean, pareto_scale_for_mean};
use crate::error::ConfigError;
use crate::params::Choice;
use coflowkit_model::{flow, Bytes, CoflowSpec, Dur, FlowSpec, Time, Workload};
use rand::RngExt;
use rand_distr::{LogNormal, Pareto};
use rand_pcg::Pcg64;

mod tree;

pub use tree::{ClassLoad, LinkClass, Racks, Split, Tree};

/// A task's communication pattern.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Workflow {
    /// An aggregator queries the workers of its rack.
    SingleStage,
    /// A top aggregator queries mid aggregators that query workers.
    TwoStage,
    /// A client reads from servers in parallel.
    Storage,
    /// A batch of shuffle jobs.
    DataParallel,
}

impl Choice for Workflow {
    const CHOICES: &'static [(&'static str, Workflow)] = &[
        ("single-stage", Workflow::SingleStage),
        ("two-stage", Workflow::TwoStage),
        ("storage", Workflow::Storage),
        ("data-parallel", Workflow::DataParallel),
    ];
}

/// A task-size workload.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SizeModel {
    /// Flows uniform in `[uniform_min, uniform_max]`.
    Uniform,
    /// Bimodal tasks (Bing).
    Bing,
    /// Heavy-tailed tasks (data analytics).
    Analytics,
}

impl Choice for SizeModel {
    const CHOICES: &'static [(&'static str, SizeModel)] = &[
        ("uniform", SizeModel::Uniform),
        ("bing", SizeModel::Bing),
        ("analytics", SizeModel::Analytics),
    ];
}

/// Which hosts aggregate single-stage tasks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Aggregators {
    /// Any host: a task's aggregator is uniform over all hosts.
    Any,
    /// One per rack, its first host: a task's aggregator is the first host
    /// of a uniform rack.
    Rack,
}

impl Choice for Aggregators {
    const CHOICES: &'static [(&'static str, Aggregators)] =
        &[("any", Aggregators::Any), ("rack", Aggregators::Rack)];
}

/// The heavy-tailed law of the analytics workload.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tail {
    /// Pareto of shape `pareto_shape`.
    Pareto,
    /// Lognormal of log-spread `lognormal_sigma`.
    Lognormal,
}

impl Choice for Tail {
    const CHOICES: &'static [(&'static str, Tail)] =
        &[("pareto", Tail::Pareto), ("lognormal", Tail::Lognormal)];
}

/// What to generate; see the module doc. The default is 10,000 two-stage
/// tasks with uniform flow sizes at load 0.8 on Baraat's tree.
#[derive(Debug, Clone, PartialEq)]
pub struct BaraatConfig {
    /// The tree the hosts are placed on.
    pub tree: Tree,
    /// The tasks' communication pattern.
    pub workflow: Workflow,
    /// The task-size workload.
    pub sizes: SizeModel,
    /// Tasks (coflows).
    pub n_tasks: usize,
    /// Target load of the most loaded class of links (see the module doc).
    pub load: f64,
    /// Seed.
    pub seed: u64,
    /// Workers per aggregator (single-stage) or per mid aggregator (two-stage).
    pub workers: u32,
    /// Which hosts aggregate single-stage tasks.
    pub aggregators: Aggregators,
    /// Relative spread of a task's flow sizes around its per-flow size
    /// (bing and analytics; 0: every flow of a task has one size).
    pub flow_spread: f64,
    /// Mid aggregators per two-stage task.
    pub mids: u32,
    /// Bytes a mid aggregator sends up per byte it received.
    pub selectivity: f64,
    /// Servers a storage client reads from.
    pub storage_servers: u32,
    /// Senders of a data-parallel job's first stage.
    pub dp_senders: u32,
    /// Receivers of every data-parallel stage.
    pub dp_receivers: u32,
    /// Stages of a data-parallel job.
    pub dp_stages: u32,
    /// Mean of the exponential wait before a worker flow starts (0: none).
    pub compute_mean: Dur,
    /// Smallest uniform flow.
    pub uniform_min: Bytes,
    /// Largest uniform flow.
    pub uniform_max: Bytes,
    /// A light Bing task's per-flow size.
    pub bing_light: Bytes,
    /// A heavy Bing task's per-flow size.
    pub bing_heavy: Bytes,
    /// Share of heavy Bing tasks.
    pub bing_heavy_fraction: f64,
    /// Relative spread of Bing sizes around their mode.
    pub bing_spread: f64,
    /// The analytics tail law.
    pub tail: Tail,
    /// Mean per-flow size of analytics tasks (before the cap).
    pub tail_mean: Bytes,
    /// Cap on an analytics per-flow size.
    pub tail_max: Bytes,
    /// Pareto shape (> 1).
    pub pareto_shape: f64,
    /// Lognormal log-spread.
    pub lognormal_sigma: f64,
    /// Which tasks get a deadline (none by default).
    pub deadlines: DeadlineSpec,
}

impl Default for BaraatConfig {
    fn default() -> BaraatConfig {
        BaraatConfig {
            tree: Tree::default(),
            workflow: Workflow::TwoStage,
            sizes: SizeModel::Uniform,
            n_tasks: 10_000,
            load: 0.8,
            seed: 1,
            workers: 40,
            aggregators: Aggregators::Any,
            flow_spread: 0.0,
            mids: 30,
            selectivity: 0.03,
            storage_servers: 3,
            dp_senders: 8,
            dp_receivers: 5,
            dp_stages: 1,
            compute_mean: Dur::ZERO,
            uniform_min: Bytes(2_000),
            uniform_max: Bytes(50_000),
            bing_light: Bytes(20_000),
            bing_heavy: Bytes(200_000),
            bing_heavy_fraction: 0.15,
            bing_spread: 0.1,
            tail: Tail::Pareto,
            tail_mean: Bytes(26_000),
            tail_max: Bytes(1 << 30),
            pareto_shape: 1.2,
            lognormal_sigma: 2.0,
            deadlines: DeadlineSpec::default(),
        }
    }
}

impl BaraatConfig {
    /// Flows of one task (every task of a workflow has the same count).
    pub fn flows_per_task(&self) -> u64 {
        let w = u64::from(self.workers);
        match self.workflow {
            Workflow::SingleStage => w,
            Workflow::TwoStage => u64::from(self.mids) * (w + 1),
            Workflow::Storage => u64::from(self.storage_servers),
            Workflow::DataParallel => {
                let r = u64::from(self.dp_receivers);
                u64::from(self.dp_senders) * r + u64::from(self.dp_stages.saturating_sub(1)) * r * r
            }
        }
    }

    /// Checks the configuration; the error names the field.
    pub fn validate(&self) -> Result<(), ConfigError> {
        let t = &self.tree;
        t.validate()?;
        let bad = |field: &'static str, message: String| Err(ConfigError { field, message });
        check_positive("load", self.load)?;
        if self.aggregators == Aggregators::Rack && self.workflow != Workflow::SingleStage {
            return bad(
                "aggregators",
                "rack applies to single-stage tasks (two-stage tasks have their own aggregator racks)"
                    .into(),
            );
        }
        if !(0.0..1.0).contains(&self.flow_spread) {
            return bad(
                "flow_spread",
                format!("must be in [0, 1), got {}", self.flow_spread),
            );
        }
        let hosts = u64::from(t.n_hosts());
        let (h, r) = (u64::from(t.hosts_per_rack), u64::from(t.racks_per_pod));
        if self.workflow == Workflow::TwoStage && r < 2 {
            return bad(
                "racks_per_pod",
                "two-stage tasks need a top rack and at least one other rack per pod".into(),
            );
        }
        match self.workflow {
            Workflow::SingleStage | Workflow::TwoStage => {
                check_at_least("workers", u64::from(self.workers), 1)?;
                // Workers come from the aggregator's pod (its top rack excluded).
                let top = u64::from(self.workflow == Workflow::TwoStage);
                let room = (r - top) * h - 1;
                if u64::from(self.workers) > room {
                    return bad(
                        "workers",
                        format!(
                            "at most {room} fit in an aggregator's pod ({} racks of {h} hosts), got {}",
                            r - top,
                            self.workers
                        ),
                    );
                }
            }
            _ => {}
        }
        match self.workflow {
            Workflow::TwoStage => {
                check_at_least("mids", u64::from(self.mids), 1)?;
                let racks = u64::from(t.pods) * (r - 1);
                if u64::from(self.mids) > racks {
                    return bad(
                        "mids",
                        format!(
                            "at most {racks} (the racks that are not top racks), got {}",
                            self.mids
                        ),
                    );
                }
                if !(self.selectivity.is_finite() && self.selectivity >= 0.0) {
                    return bad(
                        "selectivity",
                        format!("must be a finite number >= 0, got {}", self.selectivity),
                    );
                }
            }
            Workflow::Storage => {
                check_at_least("storage_servers", u64::from(self.storage_servers), 1)?;
                if u64::from(self.storage_servers) >= hosts {
                    return bad(
                        "storage_servers",
                        format!(
                            "must be below the {hosts} hosts, got {}",
                            self.storage_servers
                        ),
                    );
                }
            }
            Workflow::DataParallel => {
                check_at_least("dp_senders", u64::from(self.dp_senders), 1)?;
                check_at_least("dp_receivers", u64::from(self.dp_receivers), 1)?;
                check_at_least("dp_stages", u64::from(self.dp_stages), 1)?;
                for (field, v) in [
                    ("dp_senders", self.dp_senders),
                    ("dp_receivers", self.dp_receivers),
                ] {
                    if u64::from(v) > hosts {
                        return bad(field, format!("must be at most the {hosts} hosts, got {v}"));
                    }
                }
            }
            Workflow::SingleStage => {}
        }
        match self.sizes {
            SizeModel::Uniform => {
                check_at_least("uniform_min", self.uniform_min.0, 1)?;
                if self.uniform_max < self.uniform_min {
                    return bad(
                        "uniform_max",
                        format!(
                            "must be at least uniform_min ({}), got {}",
                            self.uniform_min.0, self.uniform_max.0
                        ),
                    );
                }
            }
            SizeModel::Bing => {
                check_at_least("bing_light", self.bing_light.0, 1)?;
                check_at_least("bing_heavy", self.bing_heavy.0, 1)?;
                check_fraction("bing_heavy_fraction", self.bing_heavy_fraction)?;
                if !(0.0..1.0).contains(&self.bing_spread) {
                    return bad(
                        "bing_spread",
                        format!("must be in [0, 1), got {}", self.bing_spread),
                    );
                }
            }
            SizeModel::Analytics => {
                check_at_least("tail_mean", self.tail_mean.0, 1)?;
                check_at_least("tail_max", self.tail_max.0, 1)?;
                match self.tail {
                    Tail::Pareto if !(self.pareto_shape.is_finite() && self.pareto_shape > 1.0) => {
                        return bad(
                            "pareto_shape",
                            format!("must be above 1 (a finite mean), got {}", self.pareto_shape),
                        )
                    }
                    Tail::Lognormal => check_positive("lognormal_sigma", self.lognormal_sigma)?,
                    _ => {}
                }
            }
        }
        self.deadlines.validate("deadline_fraction")
    }
}

/// Draws per-task and per-flow sizes.
enum Sizer {
    Uniform(u64, u64),
    Bing {
        light: f64,
        heavy: f64,
        p_heavy: f64,
        spread: f64,
    },
    Pareto(Pareto<f64>, u64),
    Lognormal(LogNormal<f64>, u64),
}

impl Sizer {
    fn new(c: &BaraatConfig) -> Sizer {
        match c.sizes {
            SizeModel::Uniform => Sizer::Uniform(c.uniform_min.0, c.uniform_max.0),
            SizeModel::Bing => Sizer::Bing {
                light: c.bing_light.0 as f64,
                heavy: c.bing_heavy.0 as f64,
                p_heavy: c.bing_heavy_fraction,
                spread: c.bing_spread,
            },
            SizeModel::Analytics => match c.tail {
                Tail::Pareto => {
                    let scale = pareto_scale_for_mean(c.tail_mean.0 as f64, c.pareto_shape);
                    Sizer::Pareto(
                        Pareto::new(scale, c.pareto_shape).expect("validated Pareto"),
                        c.tail_max.0,
                    )
                }
                Tail::Lognormal => {
                    let mu = lognormal_mu_for_mean(c.tail_mean.0 as f64, c.lognormal_sigma);
                    Sizer::Lognormal(
                        LogNormal::new(mu, c.lognormal_sigma).expect("validated lognormal"),
                        c.tail_max.0,
                    )
                }
            },
        }
    }

    /// The per-flow size of a task's flows, or `None` when each flow draws
    /// its own (uniform).
    fn task(&self, rng: &mut Pcg64) -> Option<u64> {
        let whole = |x: f64, max: u64| (x.round() as u64).clamp(1, max);
        match *self {
            Sizer::Uniform(..) => None,
            Sizer::Bing {
                light,
                heavy,
                p_heavy,
                spread,
            } => {
                let mode = if rng.random::<f64>() < p_heavy {
                    heavy
                } else {
                    light
                };
                let factor = 1.0 + spread * (2.0 * rng.random::<f64>() - 1.0);
                Some(whole(mode * factor, u64::MAX))
            }
            Sizer::Pareto(d, max) => Some(whole(rng.sample(d), max)),
            Sizer::Lognormal(d, max) => Some(whole(rng.sample(d), max)),
        }
    }

    /// A flow's size: the task's (times a factor uniform in `[1 - spread,
    /// 1 + spread]` drawn from `spread_rng` when `spread > 0`), or a
    /// uniform draw.
    fn flow(&self, rng: &mut Pcg64, task: Option<u64>, spread: f64, spread_rng: &mut Pcg64) -> u64 {
        match (task, self) {
            (Some(b), _) if spread > 0.0 => {
                let factor = 1.0 + spread * (2.0 * spread_rng.random::<f64>() - 1.0);
                ((b as f64 * factor).round() as u64).max(1)
            }
            (Some(b), _) => b,
            (None, &Sizer::Uniform(lo, hi)) => rng.random_range(lo..=hi),
            (None, _) => 1,
        }
    }
}

/// Draws tasks.
struct TaskMaker<'a> {
    c: &'a BaraatConfig,
    t: Tree,
    sizer: Sizer,
    rng: Pcg64,
    compute: Pcg64,
    spread: Pcg64,
}

impl TaskMaker<'_> {
    /// The worker wait.
    fn delay(&mut self) -> Dur {
        exp_dur(&mut self.compute, self.c.compute_mean)
    }

    /// A flow's size in a task of per-flow size `task` (`Sizer::flow`).
    fn bytes(&mut self, task: Option<u64>) -> u64 {
        self.sizer
            .flow(&mut self.rng, task, self.c.flow_spread, &mut self.spread)
    }

    /// `n` distinct hosts of rack `r`, other than `except` (in host order
    /// when all of them are taken, else a random subset).
    fn rack_hosts(&mut self, r: u32, n: u32, except: Option<u32>, out: &mut Vec<u32>) {
        let h = self.t.hosts_per_rack;
        let first = self.t.host(r, 0);
        let skip = except
            .filter(|&e| self.t.rack_of(e) == r)
            .map(|e| e - first);
        let avail = h - u32::from(skip.is_some());
        let map = |k: u32| {
            first
                + if skip.is_some_and(|s| k >= s) {
                    k + 1
                } else {
                    k
                }
        };
        if n >= avail {
            out.extend((0..avail).map(map));
        } else {
            let picked = rand::seq::index::sample(&mut self.rng, avail as usize, n as usize);
            out.extend(picked.into_iter().map(|k| map(k as u32)));
        }
    }

    /// The workers of an aggregator at `agg`: the other hosts of its rack,
    /// then the next racks of its pod (skipping `skip_rack`).
    fn workers(&mut self, agg: u32, skip_rack: Option<u32>, out: &mut Vec<u32>) {
        out.clear();
        let need = self.c.workers;
        let rack = self.t.rack_of(agg);
        self.rack_hosts(rack, need, Some(agg), out);
        let rp = self.t.racks_per_pod;
        let pod_first = self.t.pod_of_rack(rack) * rp;
        let local = rack - pod_first;
        let mut step = 1;
        while (out.len() as u32) < need && step < rp {
            let r = pod_first + (local + step) % rp;
            step += 1;
            if Some(r) == skip_rack {
                continue;
            }
            let left = need - out.len() as u32;
            self.rack_hosts(r, left, None, out);
        }
    }

    /// A uniform host.
    fn any_host(&mut self) -> u32 {
        self.rng.random_range(0..self.t.n_hosts())
    }

    /// `n` distinct uniform hosts, none equal to `except`.
    fn distinct_hosts(&mut self, n: u32, except: Option<u32>) -> Vec<u32> {
        let total = self.t.n_hosts() - u32::from(except.is_some());
        rand::seq::index::sample(&mut self.rng, total as usize, n as usize)
            .into_iter()
            .map(|k| {
                let k = k as u32;
                match except {
                    Some(e) if k >= e => k + 1,
                    _ => k,
                }
            })
            .collect()
    }

    /// The flows of one task.
    fn task(&mut self, scratch: &mut Vec<u32>) -> Vec<FlowSpec> {
        let mut flows = Vec::with_capacity(self.c.flows_per_task() as usize);
        match self.c.workflow {
            Workflow::SingleStage => {
                let b = self.sizer.task(&mut self.rng);
                let agg = match self.c.aggregators {
                    Aggregators::Any => self.any_host(),
                    Aggregators::Rack => {
                        let r = self.rng.random_range(0..self.t.n_racks());
                        self.t.host(r, 0)
                    }
                };
                self.workers(agg, None, scratch);
                for &w in scratch.iter() {
                    let bytes = self.bytes(b);
                    let d = self.delay();
                    flows.push(flow(w, agg, bytes).delayed(d));
                }
            }
            Workflow::TwoStage => {
                let b = self.sizer.task(&mut self.rng);
                let t = self.t;
                let pod = self.rng.random_range(0..t.pods);
                let top = t.host(t.top_rack(pod), self.rng.random_range(0..t.hosts_per_rack));
                let per_pod = t.racks_per_pod - 1;
                let racks = rand::seq::index::sample(
                    &mut self.rng,
                    (t.pods * per_pod) as usize,
                    self.c.mids as usize,
                );
                for (m, i) in racks.into_iter().enumerate() {
                    let i = i as u32;
                    let (p, local) = (i / per_pod, 1 + i % per_pod);
                    let rack = p * t.racks_per_pod + local;
                    let mid = t.host(rack, self.rng.random_range(0..t.hosts_per_rack));
                    self.workers(mid, Some(t.top_rack(p)), scratch);
                    let group = m as u32 + 1;
                    let mut received = 0u64;
                    for &w in scratch.iter() {
                        let bytes = self.bytes(b);
                        received += bytes;
                        let d = self.delay();
                        flows.push(flow(w, mid, bytes).in_group(group).delayed(d));
                    }
                    let up = ((received as f64 * self.c.selectivity).round() as u64).max(1);
                    flows.push(flow(mid, top, up).after(group));
                }
            }
            Workflow::Storage => {
                let b = self.sizer.task(&mut self.rng);
                let client = self.any_host();
                for s in self.distinct_hosts(self.c.storage_servers, Some(client)) {
                    let bytes = self.bytes(b);
                    let d = self.delay();
                    flows.push(flow(s, client, bytes).delayed(d));
                }
            }
            Workflow::DataParallel => {
                let b = self.sizer.task(&mut self.rng);
                let mut senders = self.distinct_hosts(self.c.dp_senders, None);
                for stage in 0..self.c.dp_stages {
                    let receivers = self.distinct_hosts(self.c.dp_receivers, None);
                    for &s in &senders {
                        for &r in &receivers {
                            let bytes = self.bytes(b);
                            let f = flow(s, r, bytes).in_group(stage);
                            flows.push(if stage == 0 {
                                let d = self.delay();
                                f.delayed(d)
                            } else {
                                f.after(stage - 1)
                            });
                        }
                    }
                    senders = receivers;
                }
            }
        }
        flows
    }
}

/// Generates the workload `config` describes.
///
/// # Panics
/// If `config.validate()` fails.
pub fn generate(config: &BaraatConfig) -> Workload {
    if let Err(e) = config.validate() {
        panic!("invalid baraat configuration: {e}");
    }
    let mut maker = TaskMaker {
        c: config,
        t: config.tree,
        sizer: Sizer::new(config),
        rng: main_stream(config.seed),
        compute: substream(config.seed, tags::COMPUTE),
        spread: substream(config.seed, tags::FLOW_SPREAD),
    };
    let mut scratch = Vec::with_capacity(config.workers as usize);
    let mut coflows: Vec<CoflowSpec> = (0..config.n_tasks)
        .map(|i| CoflowSpec::new(i as u64 + 1, Time::ZERO, maker.task(&mut scratch)))
        .collect();

    if config.workflow != Workflow::DataParallel {
        // Spread arrivals so the most loaded class of links has the target load.
        let t = &config.tree;
        // Over one second the load is the span (s) that gives load 1.
        let worst = t
            .loads_over(&coflows, Split::of(config), 1.0)
            .iter()
            .filter_map(|c| c.load)
            .fold(0.0, f64::max);
        let span = worst / config.load * 1e9;
        let mut gaps = substream(config.seed, tags::ARRIVALS);
        for (c, a) in coflows
            .iter_mut()
            .zip(poisson_arrivals(&mut gaps, config.n_tasks, span))
        {
            c.arrival = a;
        }
    }
    config.deadlines.apply_to_coflows(&mut coflows, config.seed);
    Workload {
        n_hosts: config.tree.n_hosts(),
        coflows,
    }
}

crate::params! { BaraatConfig {
    deadlines("tasks") => deadlines;
    "workflow" => workflow: "single-stage, two-stage, storage or data-parallel (a batch at time 0)",
    "sizes" => sizes: "uniform (per flow), bing (bimodal tasks) or analytics (heavy-tailed tasks)",
    "n_tasks" => n_tasks: "tasks (coflows)",
    "load" => load: "load of the most loaded class of tree links (host, ToR or pod, up or down; two-stage: top racks' and other racks' apart)",
    "seed" => seed: "random seed",
    "pods" => tree.pods: "pods of the tree",
    "racks_per_pod" => tree.racks_per_pod: "racks per pod (the first is the pod's top-aggregator rack)",
    "hosts_per_rack" => tree.hosts_per_rack: "hosts per rack",
    "host_rate_bps" => tree.host_rate_bps: "host NIC rate, bit/s",
    "tor_oversubscription" => tree.tor_oversubscription: "rack hosts' total rate over a ToR uplink's capacity",
    "pod_oversubscription" => tree.pod_oversubscription: "pod ToRs' total uplink capacity over a pod uplink's",
    "workers" => workers: "workers per (mid-level) aggregator",
    "aggregators" => aggregators: "single-stage aggregators: any (a uniform host) or rack (the first host of a uniform rack)",
    "flow_spread" => flow_spread: "a bing or analytics task's flow sizes vary uniformly by +- this share around its per-flow size (0: one size)",
    "mids" => mids: "mid-level aggregators per two-stage task",
    "selectivity" => selectivity: "mid->top bytes per byte a mid aggregator received",
    "storage_servers" => storage_servers: "servers a storage client reads from",
    "dp_senders" => dp_senders: "senders of a data-parallel job's first stage",
    "dp_receivers" => dp_receivers: "receivers of each data-parallel stage",
    "dp_stages" => dp_stages: "stages of a data-parallel job (1: single-stage)",
    "compute_mean" => compute_mean: "mean exponential worker computation before a worker flow (0: none)",
    "uniform_min" => uniform_min: "smallest uniform flow",
    "uniform_max" => uniform_max: "largest uniform flow",
    "bing_light" => bing_light: "per-flow size of a light Bing task",
    "bing_heavy" => bing_heavy: "per-flow size of a heavy Bing task",
    "bing_heavy_fraction" => bing_heavy_fraction: "share of heavy Bing tasks",
    "bing_spread" => bing_spread: "Bing sizes vary uniformly by +- this share",
    "tail" => tail: "analytics law: pareto or lognormal",
    "tail_mean" => tail_mean: "mean per-flow size of analytics tasks",
    "tail_max" => tail_max: "cap on an analytics per-flow size",
    "pareto_shape" => pareto_shape: "Pareto shape (> 1)",
    "lognormal_sigma" => lognormal_sigma: "lognormal log-spread",
}}

#[cfg(test)]
mod tests;
