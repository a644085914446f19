//! The `dag` generator: multi-stage jobs as DAGs of coflows, with Aalo's
//! Starts-After and Finishes-Before dependencies and job/stage ids.
//!
//! Source: Aalo (Chowdhury and Stoica, SIGCOMM 2015) 5.1 and Pseudocode 2:
//! a coflow `C_F` depends on `C_E` when `C_E`'s consumer stage produces
//! `C_F`; Starts-After (`C_F` cannot start until `C_E` has finished, with
//! barriers) or Finishes-Before (`C_F` may run alongside `C_E` but not
//! finish before it, with pipelining); a coflow id has an external part
//! (the job, [`JobStage::job`]) and an internal part, `1 + max` of the
//! parents' internal parts and 0 for a root ([`JobStage::stage`]). 7.4 runs
//! TPC-DS query DAGs; their plans are not public data, so this generator
//! draws DAGs of configurable depth and width instead.
//!
//! A job is drawn from the main stream in this order: its number of levels
//! `L`, uniform in `1..=max_depth`; then for each level its width, uniform
//! in `1..=max_width`, and for each coflow of the level its shape (as the
//! `coflow-benchmark` generator draws one: bin, width, hosts, sizes; see
//! [`crate::synth`]) and, below the first level, its parents: `k` uniform in
//! `1..=min(max_parents, width of the level above)` distinct coflows of the
//! level above, each edge Starts-After with probability
//! `starts_after_fraction`, else Finishes-Before. So a coflow's stage is its
//! level, and coflows in different branches may be unrelated. Coflow ids
//! are 1, 2, ... over the whole workload, jobs in order and levels in order
//! within a job; job ids are 1, 2, ...
//!
//! All coflows of a job arrive with the job (the engine holds a child until
//! its Starts-After parents finish). Jobs arrive Poisson at the D-CAS load
//! (`total bits / (n_hosts * capacity * span)`, as for `coflow-benchmark`),
//! exact over the span of arrivals. Optional coflow deadlines as in
//! [`crate::arrivals::DeadlineSpec`].
//!
//! With `barriers`, the same jobs (same draws) with every Finishes-Before
//! edge made Starts-After ([`crate::transform::pipelines_as_barriers`]):
//! the DAGs as Varys must run them, since it needs a coflow's flows and
//! sizes before the coflow starts, so a pipelined child waits for its
//! parent (Aalo 7.4: Aalo's gain over Varys on DAGs comes from not
//! introducing "artificial barriers").

use crate::arrivals::{
    check_at_least, check_fraction, main_stream, poisson_arrivals, substream, tags,
};
use crate::error::ConfigError;
use crate::synth::{draw_coflow, SynthConfig};
use coflowkit_model::{CoflowId, CoflowSpec, DepKind, Dependency, JobStage, Workload};
use rand::RngExt;

/// What to generate; see the module doc.
#[derive(Debug, Clone, PartialEq)]
pub struct DagConfig {
    /// Jobs.
    pub n_jobs: usize,
    /// Most levels in a job.
    pub max_depth: u32,
    /// Most coflows in a level.
    pub max_width: u32,
    /// Most parents of a coflow.
    pub max_parents: u32,
    /// Share of Starts-After edges (the rest are Finishes-Before).
    pub starts_after_fraction: f64,
    /// Every Finishes-Before edge drawn made Starts-After (a barrier), the
    /// draws unchanged.
    pub barriers: bool,
    /// Hosts, load, capacity, seed, deadlines and each coflow's shape (its
    /// `n_coflows` is unused).
    pub coflows: SynthConfig,
}

impl Default for DagConfig {
    /// 100 jobs of up to 3 levels of up to 3 coflows, up to 2 parents each,
    /// half the edges Starts-After (no barriers added), coflows shaped like
    /// the `aalo` preset's on 50 hosts at load 0.8.
    fn default() -> DagConfig {
        DagConfig {
            n_jobs: 100,
            max_depth: 3,
            max_width: 3,
            max_parents: 2,
            starts_after_fraction: 0.5,
            barriers: false,
            coflows: SynthConfig::aalo(),
        }
    }
}

impl DagConfig {
    /// Checks the configuration; the error names the field.
    pub fn validate(&self) -> Result<(), ConfigError> {
        check_at_least("max_depth", u64::from(self.max_depth), 1)?;
        check_at_least("max_width", u64::from(self.max_width), 1)?;
        check_at_least("max_parents", u64::from(self.max_parents), 1)?;
        check_fraction("starts_after_fraction", self.starts_after_fraction)?;
        self.coflows.validate()
    }
}

/// Generates the workload `config` describes.
///
/// # Panics
/// If `config.validate()` fails.
pub fn generate(config: &DagConfig) -> Workload {
    if let Err(e) = config.validate() {
        panic!("invalid dag configuration: {e}");
    }
    let shape = &config.coflows;
    let mut rng = main_stream(shape.seed);
    let mut coflows: Vec<CoflowSpec> = Vec::new();
    let mut job_of: Vec<usize> = Vec::new();
    let mut next_id = 1u64;
    for job in 1..=config.n_jobs as u64 {
        let levels = rng.random_range(1..=config.max_depth);
        let mut above: Vec<CoflowId> = Vec::new();
        for stage in 0..levels {
            let width = rng.random_range(1..=config.max_width);
            let mut level = Vec::with_capacity(width as usize);
            for _ in 0..width {
                let (_, mut c) = draw_coflow(&mut rng, shape, next_id);
                next_id += 1;
                c.job = Some(JobStage { job, stage });
                if !above.is_empty() {
                    let most = config.max_parents.min(above.len() as u32);
                    let k = rng.random_range(1..=most);
                    let picked = rand::seq::index::sample(&mut rng, above.len(), k as usize);
                    for p in picked {
                        let kind = if rng.random::<f64>() < config.starts_after_fraction {
                            DepKind::StartsAfter
                        } else {
                            DepKind::FinishesBefore
                        };
                        c.parents.push(Dependency {
                            parent: above[p],
                            kind,
                        });
                    }
                }
                level.push(c.id);
                coflows.push(c);
                job_of.push(job as usize - 1);
            }
            above = level;
        }
    }

    let bits: f64 = coflows
        .iter()
        .flat_map(|c| &c.flows)
        .map(|f| f.bytes.bits_f64())
        .sum();
    let span = crate::arrivals::span_for_load(
        bits,
        f64::from(shape.n_hosts) * shape.capacity_bps.0,
        shape.load,
    );
    let mut gaps = substream(shape.seed, tags::ARRIVALS);
    let arrivals = poisson_arrivals(&mut gaps, config.n_jobs, span);
    for (c, &j) in coflows.iter_mut().zip(&job_of) {
        c.arrival = arrivals[j];
    }
    shape.deadlines.apply_to_coflows(&mut coflows, shape.seed);
    let mut w = Workload {
        n_hosts: shape.n_hosts,
        coflows,
    };
    if config.barriers {
        crate::transform::pipelines_as_barriers(&mut w);
    }
    w
}

crate::params! { DagConfig {
    deadlines("coflows") => coflows.deadlines;
    "n_jobs" => n_jobs: "jobs (DAGs of coflows)",
    "n_hosts" => coflows.n_hosts: "hosts (ports of the big switch)",
    "load" => coflows.load: "offered load: total bits / (n_hosts * capacity * span), jobs arrive Poisson",
    "capacity_bps" => coflows.capacity_bps: "host NIC capacity the load refers to, bit/s",
    "seed" => coflows.seed: "random seed",
    "max_depth" => max_depth: "most levels (stages) in a job; each job draws 1..=max_depth",
    "max_width" => max_width: "most coflows in a level; each level draws 1..=max_width",
    "max_parents" => max_parents: "most parents of a coflow (from the level above)",
    "starts_after_fraction" => starts_after_fraction: "share of Starts-After edges; the rest are Finishes-Before",
    "barriers" => barriers: "true: every Finishes-Before edge made Starts-After, same draws (Aalo 7.4: Varys needs a coflow's sizes before it starts, so it cannot pipeline)",
    "mix" => coflows.mix: "shares of SN,LN,SW,LW coflows by count",
    "short_below" => coflows.short_below: "a coflow is short when its longest flow is below this",
    "narrow_up_to" => coflows.narrow_up_to: "a coflow is narrow with at most this many flows",
    "max_flow" => coflows.max_flow: "largest flow",
}}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stats::TraceStats;
    use coflowkit_model::{BitsPerSec, Fabric};
    use std::collections::HashMap;

    #[test]
    fn golden_first_coflows_for_seed_1() {
        let w = generate(&DagConfig::default());
        let got: Vec<_> = w.coflows[..4]
            .iter()
            .map(|c| {
                (
                    c.id.0,
                    c.arrival.0,
                    c.job,
                    c.width(),
                    c.total_bytes().0,
                    crate::native::format_parents(&c.parents),
                )
            })
            .collect();
        let js = |job, stage| Some(JobStage { job, stage });
        let want = vec![
            (1, 0, js(1, 0), 31, 56088, String::new()),
            (2, 0, js(1, 0), 7, 5838355, String::new()),
            (3, 7809718234, js(2, 0), 1872, 69085305063, String::new()),
            (4, 7809718234, js(2, 0), 315, 6680527813, String::new()),
        ];
        assert_eq!(got, want);
        // The first child and its parents, pinned too.
        let child = w.coflows.iter().find(|c| !c.parents.is_empty()).unwrap();
        assert_eq!(
            (
                child.id.0,
                child.job,
                crate::native::format_parents(&child.parents)
            ),
            (6, js(2, 1), "3:sa;4:sa".to_string())
        );
    }

    #[test]
    fn barriers_keep_the_jobs_and_make_every_edge_starts_after() {
        let config = DagConfig {
            n_jobs: 200,
            ..DagConfig::default()
        };
        let plain = generate(&config);
        let held = generate(&DagConfig {
            barriers: true,
            ..config
        });
        assert_eq!(plain.coflows.len(), held.coflows.len());
        let mut n_pipelined = 0;
        for (p, h) in plain.coflows.iter().zip(&held.coflows) {
            assert_eq!(
                (p.id, p.arrival, p.job, &p.flows, p.deadline),
                (h.id, h.arrival, h.job, &h.flows, h.deadline)
            );
            let parents = |c: &CoflowSpec| c.parents.iter().map(|d| d.parent).collect::<Vec<_>>();
            assert_eq!(parents(p), parents(h));
            assert!(h.parents.iter().all(|d| d.kind == DepKind::StartsAfter));
            n_pipelined += p
                .parents
                .iter()
                .filter(|d| d.kind == DepKind::FinishesBefore)
                .count();
        }
        assert!(n_pipelined > 50, "{n_pipelined} pipelined edges");
    }

    #[test]
    fn jobs_are_valid_dags_with_aalo_ids() {
        // 1,000 jobs: every parent is in the same job, one level up, and a
        // coflow's stage is 1 + its parents' largest (Pseudocode 2); the
        // workload validates (no cycles) on a big switch of 50 ports; the
        // Starts-After share is 0.5 +- 0.03; the load is exact.
        let config = DagConfig {
            n_jobs: 1000,
            ..DagConfig::default()
        };
        let w = generate(&config);
        let by_id: HashMap<u64, &CoflowSpec> = w.coflows.iter().map(|c| (c.id.0, c)).collect();
        let (mut sa, mut edges) = (0, 0);
        let mut depth = [0usize; 3];
        for c in &w.coflows {
            let js = c.job.unwrap();
            depth[js.stage as usize] += 1;
            if js.stage == 0 {
                assert!(c.parents.is_empty());
            } else {
                assert!(!c.parents.is_empty() && c.parents.len() <= 2);
            }
            let mut top = None;
            for d in &c.parents {
                let p = by_id[&d.parent.0];
                assert_eq!(p.job.unwrap().job, js.job);
                assert_eq!(p.arrival, c.arrival);
                top = top.max(Some(p.job.unwrap().stage));
                edges += 1;
                sa += usize::from(d.kind == DepKind::StartsAfter);
            }
            assert_eq!(js.stage, top.map_or(0, |s| s + 1));
        }
        let share = sa as f64 / edges as f64;
        assert!((share - 0.5).abs() < 0.03, "starts-after share {share}");
        assert!(depth.iter().all(|&n| n > 0));
        let fabric = Fabric::big_switch(50, BitsPerSec::GBPS).unwrap();
        assert!(w.clone().validate(&fabric).is_ok());
        let load = TraceStats::new(&w, BitsPerSec::GBPS).offered_load.unwrap();
        assert!((load - 0.8).abs() < 1e-6);
    }
}
