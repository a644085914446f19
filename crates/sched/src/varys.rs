//! `varys`: smallest-effective-bottleneck-first with MADD rates and
//! work-conserving backfill (Varys, SIGCOMM 2014, 5.1-5.3, Pseudocode 1).
//!
//! At every coflow arrival and coflow completion, as Varys's coordinator
//! (5.3) and CoflowSim do (`recompute=flow` recomputes at every flow
//! completion too; a flow that finishes early leaves its share idle until
//! then otherwise):
//! 1. Order: each active coflow's effective bottleneck Γ on its remaining
//!    bytes over the full link capacities (the time it would take alone);
//!    smallest first, ties by arrival then id.
//! 2. MADD: in that order, each coflow gets `remaining / Γ'` per flow, where
//!    Γ' is its bottleneck on the capacity the coflows before it left; a
//!    coflow that meets a full link waits.
//! 3. Backfill (work conservation): in the same order, each flow is given
//!    the least residual capacity along its path on top of its MADD rate, as
//!    Varys's "distribute unused bandwidth" step and CoflowSim do.

use crate::{Allocation, Changes, Clairvoyant, CoflowIdx, FlowIdx, KnowsSizes, Scheduler};
use coflowkit_alloc::{effective_bottleneck, madd, LinkLoad, EPS};
use coflowkit_model::{LinkId, Time};

/// Varys; see the module doc.
#[derive(Debug, Default)]
pub struct Varys {
    per_flow: bool,
    order: Vec<(f64, Time, u64, CoflowIdx)>,
    residual: Vec<f64>,
    scratch: LinkLoad,
    flows: Vec<FlowIdx>,
    rates: Vec<f64>,
}

impl Varys {
    /// A Varys scheduler recomputing at coflow arrivals and completions, and
    /// also at flow completions if `per_flow`.
    pub fn new(per_flow: bool) -> Varys {
        Varys { per_flow, ..Varys::default() }
    }
}

impl Scheduler for Varys {
    type Knows = KnowsSizes;
    fn name(&self) -> &str {
        "varys"
    }
    fn schedule(&mut self, _now: Time, view: Clairvoyant<'_>, changes: &Changes, out: &mut Allocation) -> Option<Time> {
        if !self.per_flow && changes.arrived.is_empty() && changes.finished_coflows.is_empty() {
            return None;
        }
        let caps = view.capacities();
        self.order.clear();
        for &c in view.active_coflows() {
            let g = effective_bottleneck(
                view.active_flows_of(c).map(|f| (view.path(f), view.remaining(f))),
                caps,
                &mut self.scratch,
            );
            self.order.push((g, view.arrival(c), view.coflow_id(c).0, c));
        }
        self.order.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)).then(a.2.cmp(&b.2)));
        self.residual.clear();
        self.residual.extend_from_slice(caps);
        for (i, &(_, _, _, c)) in self.order.iter().enumerate() {
            self.flows.clear();
            self.flows.extend(view.active_flows_of(c));
            let flows = &self.flows;
            madd(
                flows.iter().map(|&f| (view.path(f), view.remaining(f))),
                &mut self.residual,
                &mut self.scratch,
                &mut self.rates,
            );
            for (&f, &r) in flows.iter().zip(&self.rates) {
                out.set_rate(f, r);
                out.set_class(f, i as u32);
            }
        }
        for &(_, _, _, c) in &self.order {
            for f in view.active_flows_of(c) {
                let path: &[LinkId] = view.path(f);
                let extra = path.iter().map(|l| self.residual[l.0 as usize]).fold(f64::INFINITY, f64::min);
                if extra > EPS * 1e9 {
                    out.set_rate(f, out.rate(f) + extra);
                    for l in path {
                        self.residual[l.0 as usize] -= extra;
                    }
                }
            }
        }
        None
    }
}
