//! Coflow-ordered schedulers: strict priority between coflows in some order,
//! per-flow max-min among the flows of one priority class, work-conserving
//! (each class is served max-min on what the classes before it left).
//!
//! * `fifo`: order by arrival (Orchestra's policy, Baraat's without
//!   multiplexing). Needs no sizes.
//! * `scf`: smallest coflow first, by the size of its largest flow (length).
//! * `ncf`: narrowest coflow first, by number of flows (width).
//! * `lcf`: lightest coflow first, by total bytes.
//! * `stf`: smallest total size first, on remaining bytes (re-sorted at
//!   every event).
//!
//! Ties go to the earlier arrival, then the smaller coflow id. These are
//! the heuristics of Varys (SIGCOMM 2014, 5.1) and CoflowSim, with the
//! allocation rule of `fifo` for all of them.

use crate::{Allocation, Changes, Clairvoyant, CoflowIdx, KnowsSent, KnowsSizes, Observed, PathIdx, Scheduler};
use coflowkit_alloc::MaxMin;
use coflowkit_model::Time;

/// Serves priority classes of coflows in order: the flows of one class share
/// max-min (flows with one path grouped into one demand) on the capacity the
/// classes before it left. Reused by every strict-priority coflow scheduler.
#[derive(Debug, Default)]
pub struct ClassServer {
    solver: MaxMin,
    residual: Vec<f64>,
    stamp: Vec<u32>,
    demand: Vec<u32>,
    epoch: u32,
    members: Vec<(crate::FlowIdx, u32)>,
    counts: Vec<u32>,
    paths: Vec<PathIdx>,
}

impl ClassServer {
    /// Starts a round: every link back to full capacity.
    pub fn begin(&mut self, view: &Observed<'_>) {
        self.residual.clear();
        self.residual.extend_from_slice(view.capacities());
        if self.stamp.len() < view.n_paths() {
            self.stamp.resize(view.n_paths(), 0);
            self.demand.resize(view.n_paths(), 0);
        }
    }

    /// Serves one class made of `coflows`, writing the rates of their active
    /// flows and `class` into `out`.
    pub fn serve(&mut self, view: &Observed<'_>, coflows: &[CoflowIdx], class: u32, out: &mut Allocation) {
        self.epoch = self.epoch.wrapping_add(1);
        if self.epoch == 0 {
            self.stamp.iter_mut().for_each(|s| *s = u32::MAX);
            self.epoch = 1;
        }
        self.solver.clear();
        self.members.clear();
        // One demand per distinct path in the class; counts via a second pass.
        let (mut counts, mut paths) = (std::mem::take(&mut self.counts), std::mem::take(&mut self.paths));
        counts.clear();
        paths.clear();
        for &c in coflows {
            for f in view.active_flows_of(c) {
                let p = view.path_idx(f) as usize;
                if self.stamp[p] != self.epoch {
                    self.stamp[p] = self.epoch;
                    self.demand[p] = counts.len() as u32;
                    counts.push(0);
                    paths.push(p as PathIdx);
                }
                let d = self.demand[p];
                counts[d as usize] += 1;
                self.members.push((f, d));
            }
        }
        for (&p, &n) in paths.iter().zip(&counts) {
            self.solver.push(view.path_links(p).iter().copied(), 1.0, n, f64::INFINITY);
        }
        let rates = self.solver.solve(&mut self.residual);
        for &(f, d) in &self.members {
            out.rate[f as usize] = rates[d as usize];
            out.class[f as usize] = class;
        }
        self.counts = counts;
        self.paths = paths;
    }
}

/// `fifo`: coflows in arrival order; see the module doc.
#[derive(Debug, Default)]
pub struct Fifo {
    order: Vec<CoflowIdx>,
    server: ClassServer,
}

impl Fifo {
    /// A coflow-FIFO scheduler.
    pub fn new() -> Fifo {
        Fifo::default()
    }
}

impl Scheduler for Fifo {
    type Knows = KnowsSent;
    fn name(&self) -> &str {
        "fifo"
    }
    fn schedule(&mut self, _now: Time, view: Observed<'_>, _changes: &Changes, out: &mut Allocation) -> Option<Time> {
        self.order.clear();
        self.order.extend_from_slice(view.active_coflows());
        self.order.sort_by_key(|&c| (view.arrival(c), view.coflow_id(c)));
        self.server.begin(&view);
        for (i, &c) in self.order.iter().enumerate() {
            self.server.serve(&view, &[c], i as u32, out);
        }
        None
    }
}

/// The size-based orders of [`SizeOrdered`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SizeKey {
    /// `scf`: largest flow's size.
    Length,
    /// `ncf`: number of flows.
    Width,
    /// `lcf`: total bytes.
    Total,
    /// `stf`: remaining bytes.
    Remaining,
}

/// `scf`, `ncf`, `lcf` and `stf`; see the module doc.
#[derive(Debug)]
pub struct SizeOrdered {
    key: SizeKey,
    order: Vec<(f64, Time, u64, CoflowIdx)>,
    server: ClassServer,
}

impl SizeOrdered {
    /// A scheduler ordering coflows by `key`.
    pub fn new(key: SizeKey) -> SizeOrdered {
        SizeOrdered { key, order: vec![], server: ClassServer::default() }
    }
}

impl Scheduler for SizeOrdered {
    type Knows = KnowsSizes;
    fn name(&self) -> &str {
        match self.key {
            SizeKey::Length => "scf",
            SizeKey::Width => "ncf",
            SizeKey::Total => "lcf",
            SizeKey::Remaining => "stf",
        }
    }
    fn schedule(&mut self, _now: Time, view: Clairvoyant<'_>, _changes: &Changes, out: &mut Allocation) -> Option<Time> {
        self.order.clear();
        for &c in view.active_coflows() {
            let k = match self.key {
                SizeKey::Length => view.length(c),
                SizeKey::Width => view.width(c) as f64,
                SizeKey::Total => view.coflow_size(c),
                SizeKey::Remaining => view.coflow_remaining(c),
            };
            self.order.push((k, view.arrival(c), view.coflow_id(c).0, c));
        }
        self.order.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)).then(a.2.cmp(&b.2)));
        let obs = view.observed();
        self.server.begin(&obs);
        for (i, &(_, _, _, c)) in self.order.iter().enumerate() {
            self.server.serve(&obs, &[c], i as u32, out);
        }
        None
    }
}
