//! What a run produces: one row per coflow (and optionally per flow), and
//! summaries of coflow completion time (CCT) overall and per bin.

use coflowkit_model::stats::percentile_sorted;
use coflowkit_model::{Bin, Time, ValidWorkload};

/// One coflow's outcome.
#[derive(Debug, Clone, PartialEq)]
pub struct CoflowResult {
    /// Coflow id.
    pub id: u64,
    /// Arrival.
    pub arrival: Time,
    /// When its last flow finished.
    pub finish: Time,
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
    /// Completion time, seconds.
    pub fn cct_s(&self) -> f64 {
        (self.finish - self.arrival).as_secs_f64()
    }
}

/// One flow's outcome.
#[derive(Debug, Clone, PartialEq)]
pub struct FlowResult {
    /// Its coflow's id.
    pub coflow_id: u64,
    /// Sender.
    pub src: u32,
    /// Receiver.
    pub dst: u32,
    /// Size, bytes.
    pub bytes: u64,
    /// Arrival.
    pub arrival: Time,
    /// Finish.
    pub finish: Time,
}

/// A finished run.
#[derive(Debug, Clone, PartialEq)]
pub struct SimResult {
    /// The scheduler's name.
    pub scheduler: String,
    /// One row per coflow, in (arrival, id) order.
    pub coflows: Vec<CoflowResult>,
    /// One row per flow, if asked for.
    pub flows: Option<Vec<FlowResult>>,
    /// Number of events the engine processed.
    pub n_events: u64,
}

impl SimResult {
    pub(crate) fn collect(
        scheduler: &str,
        workload: &ValidWorkload,
        coflow_finish: &[Time],
        flow_finish: &[Time],
        per_flow: bool,
        n_events: u64,
    ) -> SimResult {
        let coflows = workload
            .coflows()
            .iter()
            .zip(coflow_finish)
            .map(|(c, &finish)| CoflowResult {
                id: c.id.0,
                arrival: c.arrival,
                finish,
                width: c.width() as u32,
                length: c.length().0,
                total_bytes: c.total_bytes().0,
                bin: c.bin(),
            })
            .collect();
        let flows = per_flow.then(|| {
            let mut out = Vec::with_capacity(flow_finish.len());
            let mut i = 0;
            for c in workload.coflows() {
                for f in &c.flows {
                    out.push(FlowResult {
                        coflow_id: c.id.0,
                        src: f.src.0,
                        dst: f.dst.0,
                        bytes: f.bytes.0,
                        arrival: c.arrival,
                        finish: flow_finish[i],
                    });
                    i += 1;
                }
            }
            out
        });
        SimResult {
            scheduler: scheduler.to_string(),
            coflows,
            flows,
            n_events,
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
        v.sort_by(f64::total_cmp);
        if v.is_empty() {
            return SummaryRow {
                bin,
                count: 0,
                mean: f64::NAN,
                median: f64::NAN,
                p95: f64::NAN,
                p99: f64::NAN,
                max: f64::NAN,
            };
        }
        SummaryRow {
            bin,
            count: v.len(),
            mean: v.iter().sum::<f64>() / v.len() as f64,
            median: percentile_sorted(&v, 50.0),
            p95: percentile_sorted(&v, 95.0),
            p99: percentile_sorted(&v, 99.0),
            max: v[v.len() - 1],
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
