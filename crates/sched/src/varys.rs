//! `varys`: smallest-effective-bottleneck-first with MADD rates and
//! work-conserving backfill (Varys, SIGCOMM 2014, 5.1-5.3, Pseudocode 1).
//!
//! At every arrival and completion (`recompute=flow`, the default; with
//! `recompute=coflow` only at coflow arrivals and completions, as Varys's
//! coordinator and CoflowSim do, so a flow that finishes early leaves its
//! share idle until the next coflow event):
//! 1. Order: each active coflow's effective bottleneck Γ on its remaining
//!    bytes over the full link capacities (the time it would take alone);
//!    smallest first, ties by arrival then id.
//! 2. MADD: in that order, each coflow gets `remaining / Γ'` per flow, where
//!    Γ' is its bottleneck on the capacity the coflows before it left; a
//!    coflow that meets a full link waits.
//! 3. Backfill (work conservation): in the same order, each flow is given
//!    the least residual capacity along its path on top of its MADD rate, as
//!    Varys's "distribute unused bandwidth" step and CoflowSim do.
//!
//! Work saved without changing the result: a coflow's Γ is recomputed only
//! when it has sent something since; a coflow that crosses a full link
//! (known from per-coflow link counts) is skipped by MADD without a look at
//! its flows, and by backfill when all its first or all its last links are
//! full.

use crate::{Allocation, Changes, Clairvoyant, CoflowIdx, FlowIdx, KnowsSizes, Scheduler};
use coflowkit_alloc::{effective_bottleneck, madd, LinkLoad, EPS};
use coflowkit_model::{LinkId, Time};

/// Per-coflow bookkeeping.
#[derive(Debug, Default, Clone)]
struct CoflowMemo {
    // Γ over full capacities, valid while the coflow's sent bytes equal `sent`.
    gamma: f64,
    sent: f64,
    // Active flows per link (all, first and last links of paths).
    links: Vec<(u32, u32)>,
    first: Vec<(u32, u32)>,
    last: Vec<(u32, u32)>,
    // Whether any of its flows has a positive rate.
    has_rate: bool,
}

fn bump(list: &mut Vec<(u32, u32)>, l: u32, up: bool) {
    match list.iter_mut().find(|(x, _)| *x == l) {
        Some((_, n)) if up => *n += 1,
        Some((_, n)) => *n -= 1,
        None if up => list.push((l, 1)),
        None => {}
    }
}

/// Varys; see the module doc.
#[derive(Debug, Default)]
pub struct Varys {
    per_flow: bool,
    memo: Vec<CoflowMemo>,
    order: Vec<(f64, Time, u64, CoflowIdx)>,
    residual: Vec<f64>,
    scratch: LinkLoad,
    flows: Vec<FlowIdx>,
    rates: Vec<f64>,
}

impl Varys {
    /// A Varys scheduler recomputing at every flow completion if `per_flow`,
    /// else only at coflow arrivals and completions.
    pub fn new(per_flow: bool) -> Varys {
        Varys { per_flow, ..Varys::default() }
    }

    fn track(&mut self, view: &Clairvoyant<'_>, f: FlowIdx, up: bool) {
        let c = view.coflow_of(f) as usize;
        if self.memo.len() <= c {
            self.memo.resize(c + 1, CoflowMemo { gamma: f64::NAN, ..CoflowMemo::default() });
        }
        let m = &mut self.memo[c];
        let path = view.path(f);
        for l in path {
            bump(&mut m.links, l.0, up);
        }
        bump(&mut m.first, path[0].0, up);
        bump(&mut m.last, path[path.len() - 1].0, up);
    }
}

fn any_full(list: &[(u32, u32)], residual: &[f64]) -> bool {
    list.iter().any(|&(l, n)| n > 0 && residual[l as usize] <= EPS * 1e9)
}

fn all_full(list: &[(u32, u32)], residual: &[f64]) -> bool {
    list.iter().all(|&(l, n)| n == 0 || residual[l as usize] <= EPS * 1e9)
}

impl Scheduler for Varys {
    type Knows = KnowsSizes;
    fn name(&self) -> &str {
        "varys"
    }
    fn schedule(&mut self, _now: Time, view: Clairvoyant<'_>, changes: &Changes, out: &mut Allocation) -> Option<Time> {
        for &c in &changes.arrived {
            for f in view.active_flows_of(c) {
                self.track(&view, f, true);
            }
        }
        for &f in &changes.finished {
            self.track(&view, f, false);
        }
        if !self.per_flow && changes.arrived.is_empty() && changes.finished_coflows.is_empty() {
            return None;
        }
        let caps = view.capacities();
        self.order.clear();
        for &c in view.active_coflows() {
            let sent = view.coflow_sent(c);
            let m = &mut self.memo[c as usize];
            if m.gamma.is_nan() || m.sent != sent {
                m.gamma = effective_bottleneck(
                    view.active_flows_of(c).map(|f| (view.path(f), view.remaining(f))),
                    caps,
                    &mut self.scratch,
                );
                m.sent = sent;
            }
            self.order.push((m.gamma, view.arrival(c), view.coflow_id(c).0, c));
        }
        self.order.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)).then(a.2.cmp(&b.2)));
        self.residual.clear();
        self.residual.extend_from_slice(caps);
        for (i, &(_, _, _, c)) in self.order.iter().enumerate() {
            let m = &mut self.memo[c as usize];
            if any_full(&m.links, &self.residual) {
                // Γ' is infinite: MADD gives nothing (backfill may).
                if m.has_rate {
                    for f in view.active_flows_of(c) {
                        out.set_rate(f, 0.0);
                    }
                    m.has_rate = false;
                }
                continue;
            }
            self.flows.clear();
            self.flows.extend(view.active_flows_of(c));
            let flows = &self.flows;
            madd(
                flows.iter().map(|&f| (view.path(f), view.remaining(f))),
                &mut self.residual,
                &mut self.scratch,
                &mut self.rates,
            );
            let mut any = false;
            for (&f, &r) in flows.iter().zip(&self.rates) {
                out.set_rate(f, r);
                out.set_class(f, i as u32);
                any |= r > 0.0;
            }
            m.has_rate = any;
        }
        for &(_, _, _, c) in &self.order {
            let m = &mut self.memo[c as usize];
            if all_full(&m.first, &self.residual) || all_full(&m.last, &self.residual) {
                continue;
            }
            for f in view.active_flows_of(c) {
                let path: &[LinkId] = view.path(f);
                let extra = path.iter().map(|l| self.residual[l.0 as usize]).fold(f64::INFINITY, f64::min);
                if extra > EPS * 1e9 {
                    out.set_rate(f, out.rate(f) + extra);
                    m.has_rate = true;
                    for l in path {
                        self.residual[l.0 as usize] -= extra;
                    }
                }
            }
        }
        None
    }
}
