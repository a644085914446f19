//! What a run produces: one row per coflow (and optionally per flow), jobs,
//! summaries of coflow completion time (CCT) overall and per bin, flow and
//! job metrics, and (optionally) link utilization over time.
//!
//! Definitions (all instants exact integer ns, reported in seconds):
//! * coflow: *release* as the release rules say (arrival unless Starts-After
//!   parents held it), *completion* (`finish`) = max(last flow's finish,
//!   Finishes-Before parents' completions), CCT = completion - release;
//!   a deadline (relative to arrival) is met when completion <= arrival +
//!   deadline;
//! * flow: FCT = finish - start; slowdown = FCT / ideal, where ideal =
//!   bytes * 8 / (the least capacity on its path), the time it takes alone on
//!   an idle network (a zero-byte flow's slowdown is 1); a deadline
//!   (relative to its start) is met when finish <= start + deadline;
//! * job: the coflows sharing a `job.job` id (a coflow without a job is its
//!   own job); job completion time = last coflow completion - first coflow
//!   arrival.

use coflowkit_model::stats::percentile_sorted;
use coflowkit_model::{Bin, Dur, FlowKind, JobStage, Time};
use std::collections::HashMap;

/// One coflow's outcome.
#[derive(Debug, Clone, PartialEq)]
pub struct CoflowResult {
    /// Coflow id.
    pub id: u64,
    /// Its job and stage, if any.
    pub job: Option<JobStage>,
    /// Arrival.
    pub arrival: Time,
    /// Release: arrival, or later when Starts-After parents held it.
    pub release: Time,
    /// Completion: its last flow's finish, or a Finishes-Before parent's
    /// completion if later.
    pub finish: Time,
    /// Its deadline relative to its arrival, if any.
    pub deadline: Option<Dur>,
    /// Number of flows.
    pub width: u32,
    /// Largest flow, bytes.
    pub length: u64,
    /// Total bytes.
    pub total_bytes: u64,
    /// Bin (SN/LN/SW/LW).
    pub bin: Bin,
}

impl CoflowResult {
    /// Completion time (completion - release).
    pub fn cct(&self) -> Dur {
        self.finish - self.release
    }
    /// Completion time, seconds.
    pub fn cct_s(&self) -> f64 {
        self.cct().as_secs_f64()
    }
    /// Whether it met its deadline; `None` without one.
    pub fn deadline_met(&self) -> Option<bool> {
        self.deadline.map(|d| self.finish <= self.arrival + d)
    }
}

/// One flow's outcome.
#[derive(Debug, Clone, PartialEq)]
pub struct FlowResult {
    /// Its coflow's id.
    pub coflow_id: u64,
    /// Sender (the host, for a compute stage).
    pub src: u32,
    /// Receiver (the host, for a compute stage).
    pub dst: u32,
    /// Size, bytes (work units for a compute stage).
    pub bytes: u64,
    /// Network transfer or compute stage.
    pub kind: FlowKind,
    /// Its barrier group in its coflow.
    pub group: u32,
    /// Karuna's type: 1 with a deadline, 2 with a known size, 3 otherwise.
    pub karuna_type: u8,
    /// Its coflow's arrival.
    pub arrival: Time,
    /// When it started.
    pub start: Time,
    /// When it finished.
    pub finish: Time,
    /// Its deadline relative to its start, if any.
    pub deadline: Option<Dur>,
    /// Removed unfinished at its deadline ([`crate::Missed::Drop`]): then
    /// `finish` is its deadline instant and the deadline counts as missed.
    pub dropped: bool,
    /// FCT / the time it would take alone on an idle network.
    pub slowdown: f64,
}

impl FlowResult {
    /// Flow completion time (finish - start).
    pub fn fct(&self) -> Dur {
        self.finish - self.start
    }
    /// Whether it met its deadline; `None` without one. A dropped flow
    /// missed it.
    pub fn deadline_met(&self) -> Option<bool> {
        self.deadline
            .map(|d| !self.dropped && self.finish <= self.start + d)
    }
}

/// One job's outcome.
#[derive(Debug, Clone, PartialEq)]
pub struct JobResult {
    /// The job id, or `None` for a coflow without a job (its own job).
    pub job: Option<u64>,
    /// The id of its first coflow (by arrival, then id).
    pub first_coflow: u64,
    /// Number of coflows.
    pub n_coflows: u32,
    /// Arrival of its first coflow.
    pub arrival: Time,
    /// Completion of its last coflow.
    pub completion: Time,
}

impl JobResult {
    /// Job completion time (last completion - first arrival).
    pub fn jct(&self) -> Dur {
        self.completion - self.arrival
    }
}

/// Link utilization per link and time bin.
#[derive(Debug, Clone, PartialEq)]
pub struct LinkUtil {
    /// Length of a bin.
    pub bin: Dur,
    /// Number of bins (the last one holds the end of the run).
    pub n_bins: usize,
    /// Each link's name, indexed by link.
    pub link_names: Vec<String>,
    /// Utilization (bytes carried * 8 / (capacity * bin)), link-major:
    /// link `l`, bin `b` at `l * n_bins + b`.
    pub utilization: Vec<f64>,
}

impl LinkUtil {
    /// Utilization of link `l` in bin `b`.
    pub fn get(&self, l: usize, b: usize) -> f64 {
        self.utilization[l * self.n_bins + b]
    }
}

/// Mean and tail of one quantity.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Stats {
    /// Number of values.
    pub count: usize,
    /// Mean (NaN without values).
    pub mean: f64,
    /// Median, nearest rank.
    pub median: f64,
    /// 95th percentile, nearest rank.
    pub p95: f64,
    /// 99th percentile, nearest rank.
    pub p99: f64,
    /// Largest value.
    pub max: f64,
}

impl Stats {
    /// The statistics of `values` (sorted in place).
    pub fn of(values: &mut [f64]) -> Stats {
        // `total_cmp` is a total order, so the unstable sort gives the same
        // sequence as a stable one, in place and faster.
        values.sort_unstable_by(f64::total_cmp);
        if values.is_empty() {
            return Stats {
                count: 0,
                mean: f64::NAN,
                median: f64::NAN,
                p95: f64::NAN,
                p99: f64::NAN,
                max: f64::NAN,
            };
        }
        Stats {
            count: values.len(),
            mean: values.iter().sum::<f64>() / values.len() as f64,
            median: percentile_sorted(values, 50.0),
            p95: percentile_sorted(values, 95.0),
            p99: percentile_sorted(values, 99.0),
            max: values[values.len() - 1],
        }
    }
}

/// Deadline outcomes of the items that have a deadline.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct DeadlineStats {
    /// Items with a deadline.
    pub with_deadline: usize,
    /// Of those, items that missed it.
    pub missed: usize,
}

impl DeadlineStats {
    /// missed / with_deadline (NaN when none has a deadline).
    pub fn miss_rate(&self) -> f64 {
        if self.with_deadline == 0 {
            f64::NAN
        } else {
            self.missed as f64 / self.with_deadline as f64
        }
    }
    fn count(&mut self, met: Option<bool>) {
        if let Some(met) = met {
            self.with_deadline += 1;
            self.missed += usize::from(!met);
        }
    }
}

/// Flow metrics of a run, over every flow (kept even without per-flow rows).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct FlowMetrics {
    /// FCT, seconds.
    pub fct: Stats,
    /// Slowdown.
    pub slowdown: Stats,
    /// Flow deadlines (type 1's miss rate, Karuna 2.1).
    pub deadlines: DeadlineStats,
    /// Flows dropped at their deadline ([`crate::Missed::Drop`]).
    pub dropped: usize,
    /// FCT (s) of the network flows without a deadline (Karuna types 2 and
    /// 3), all of them.
    pub fct_no_deadline: Stats,
    /// FCT (s) of those under [`SHORT_FLOW_BYTES`] (Karuna's short flows).
    pub fct_no_deadline_short: Stats,
}

/// Karuna's short flows (2.2, Figs. 2, 13): under 100 KB, taken as
/// 100,000 bytes.
pub const SHORT_FLOW_BYTES: u64 = 100_000;

/// Metrics of a run beyond the CCT summary.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Metrics {
    /// CCT over all coflows, seconds.
    pub cct: Stats,
    /// Coflow deadlines.
    pub coflow_deadlines: DeadlineStats,
    /// Flows.
    pub flows: FlowMetrics,
    /// Job completion time, seconds.
    pub jct: Stats,
}

/// A finished run.
#[derive(Debug, Clone, PartialEq)]
pub struct SimResult {
    /// The scheduler's name.
    pub scheduler: String,
    /// One row per coflow, in (arrival, id) order.
    pub coflows: Vec<CoflowResult>,
    /// One row per flow, if asked for, coflow by coflow in that order.
    pub flows: Option<Vec<FlowResult>>,
    /// Flow metrics over every flow.
    pub flow_metrics: FlowMetrics,
    /// Link utilization, if asked for.
    pub link_util: Option<LinkUtil>,
    /// Number of events the engine processed.
    pub n_events: u64,
}

/// What an engine hands to [`SimResult::collect`] (the flow-level engine and
/// the packet-level one write the same tables through it).
pub struct Outcome<'a> {
    /// The scheduler's name.
    pub scheduler: &'a str,
    /// The workload run.
    pub workload: &'a coflowkit_model::ValidWorkload,
    /// Each coflow's release.
    pub release: &'a [Time],
    /// Each coflow's completion.
    pub completion: &'a [Time],
    /// Each flow's start.
    pub flow_start: &'a dyn Fn(usize) -> Time,
    /// Each flow's finish.
    pub flow_finish: &'a [Time],
    /// Flows dropped at their deadline.
    pub flow_dropped: &'a [u32],
    /// The least capacity (bits/s) on each flow's path.
    pub flow_bottleneck: &'a dyn Fn(usize) -> f64,
    /// Whether to keep one row per flow.
    pub per_flow: bool,
    /// Link utilization, if measured.
    pub link_util: Option<LinkUtil>,
    /// Events processed.
    pub n_events: u64,
}

impl SimResult {
    /// The result tables of a finished run.
    pub fn collect(o: Outcome<'_>) -> SimResult {
        let coflows = o
            .workload
            .coflows()
            .iter()
            .enumerate()
            .map(|(i, c)| CoflowResult {
                id: c.id.0,
                job: c.job,
                arrival: c.arrival,
                release: o.release[i],
                finish: o.completion[i],
                deadline: c.deadline,
                width: c.width() as u32,
                length: c.length().0,
                total_bytes: c.total_bytes().0,
                bin: c.bin(),
            })
            .collect();
        let n_flows = o.flow_finish.len();
        let slowdown_of = |i: usize, bytes: u64| {
            if bytes == 0 {
                return 1.0;
            }
            let took = o.flow_finish[i] - (o.flow_start)(i);
            took.0 as f64 * (o.flow_bottleneck)(i) / (bytes as f64 * 8e9)
        };
        let mut rows = o.per_flow.then(|| Vec::with_capacity(n_flows));
        // One buffer for the FCTs, then for the slowdowns.
        let mut values = Vec::with_capacity(n_flows);
        let mut deadlines = DeadlineStats::default();
        let mut dropped = vec![false; n_flows];
        for &f in o.flow_dropped {
            dropped[f as usize] = true;
        }
        let (mut no_deadline, mut no_deadline_short) = (vec![], vec![]);
        let mut i = 0;
        for c in o.workload.coflows() {
            for f in &c.flows {
                let (start, finish) = ((o.flow_start)(i), o.flow_finish[i]);
                values.push((finish - start).as_secs_f64());
                let row = FlowResult {
                    coflow_id: c.id.0,
                    src: f.src.0,
                    dst: f.dst.0,
                    bytes: f.bytes.0,
                    kind: f.kind,
                    group: f.group,
                    karuna_type: f.karuna_type(),
                    arrival: c.arrival,
                    start,
                    finish,
                    deadline: f.deadline,
                    dropped: dropped[i],
                    slowdown: f64::NAN,
                };
                deadlines.count(row.deadline_met());
                if f.deadline.is_none() && f.kind == FlowKind::Net {
                    let fct = (finish - start).as_secs_f64();
                    no_deadline.push(fct);
                    if f.bytes.0 < SHORT_FLOW_BYTES {
                        no_deadline_short.push(fct);
                    }
                }
                if let Some(rows) = &mut rows {
                    rows.push(FlowResult {
                        slowdown: slowdown_of(i, f.bytes.0),
                        ..row
                    });
                }
                i += 1;
            }
        }
        let fct = Stats::of(&mut values);
        values.clear();
        let mut i = 0;
        for c in o.workload.coflows() {
            for f in &c.flows {
                values.push(slowdown_of(i, f.bytes.0));
                i += 1;
            }
        }
        let slowdown = Stats::of(&mut values);
        SimResult {
            scheduler: o.scheduler.to_string(),
            coflows,
            flows: rows,
            flow_metrics: FlowMetrics {
                fct,
                slowdown,
                deadlines,
                dropped: o.flow_dropped.len(),
                fct_no_deadline: Stats::of(&mut no_deadline),
                fct_no_deadline_short: Stats::of(&mut no_deadline_short),
            },
            link_util: o.link_util,
            n_events: o.n_events,
        }
    }

    /// CCT statistics overall (first row, bin `None`) and per bin.
    pub fn summary(&self) -> Summary {
        let mut rows = vec![SummaryRow::of(None, self.coflows.iter())];
        for b in Bin::ALL {
            rows.push(SummaryRow::of(
                Some(b),
                self.coflows.iter().filter(|c| c.bin == b),
            ));
        }
        Summary {
            scheduler: self.scheduler.clone(),
            rows,
        }
    }

    /// Jobs, in order of their first coflow (by arrival, then id).
    pub fn jobs(&self) -> Vec<JobResult> {
        let mut jobs: Vec<JobResult> = vec![];
        let mut index: HashMap<u64, usize> = HashMap::new();
        for c in &self.coflows {
            let at = match c.job {
                Some(js) => *index.entry(js.job).or_insert_with(|| {
                    jobs.push(JobResult {
                        job: Some(js.job),
                        first_coflow: c.id,
                        n_coflows: 0,
                        arrival: c.arrival,
                        completion: Time::ZERO,
                    });
                    jobs.len() - 1
                }),
                None => {
                    jobs.push(JobResult {
                        job: None,
                        first_coflow: c.id,
                        n_coflows: 0,
                        arrival: c.arrival,
                        completion: Time::ZERO,
                    });
                    jobs.len() - 1
                }
            };
            let j = &mut jobs[at];
            j.n_coflows += 1;
            j.completion = j.completion.max(c.finish);
        }
        jobs
    }

    /// Metrics beyond the CCT summary: flows, deadlines, jobs.
    pub fn metrics(&self) -> Metrics {
        let mut cct: Vec<f64> = self.coflows.iter().map(|c| c.cct_s()).collect();
        let mut coflow_deadlines = DeadlineStats::default();
        for c in &self.coflows {
            coflow_deadlines.count(c.deadline_met());
        }
        let mut jct: Vec<f64> = self.jobs().iter().map(|j| j.jct().as_secs_f64()).collect();
        Metrics {
            cct: Stats::of(&mut cct),
            coflow_deadlines,
            flows: self.flow_metrics,
            jct: Stats::of(&mut jct),
        }
    }
}

/// CCT statistics of one group of coflows, seconds.
#[derive(Debug, Clone, PartialEq)]
pub struct SummaryRow {
    /// The bin, or `None` for all coflows.
    pub bin: Option<Bin>,
    /// Number of coflows.
    pub count: usize,
    /// Mean CCT.
    pub mean: f64,
    /// Median CCT (nearest rank).
    pub median: f64,
    /// 95th percentile CCT (nearest rank).
    pub p95: f64,
    /// 99th percentile CCT (nearest rank).
    pub p99: f64,
    /// Largest CCT.
    pub max: f64,
}

impl SummaryRow {
    fn of<'a>(bin: Option<Bin>, coflows: impl Iterator<Item = &'a CoflowResult>) -> SummaryRow {
        let mut v: Vec<f64> = coflows.map(|c| c.cct_s()).collect();
        let s = Stats::of(&mut v);
        SummaryRow {
            bin,
            count: s.count,
            mean: s.mean,
            median: s.median,
            p95: s.p95,
            p99: s.p99,
            max: s.max,
        }
    }
}

/// CCT statistics of one run.
#[derive(Debug, Clone, PartialEq)]
pub struct Summary {
    /// The scheduler.
    pub scheduler: String,
    /// Overall first, then SN, LN, SW, LW.
    pub rows: Vec<SummaryRow>,
}
