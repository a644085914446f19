//! `varys`, as the module doc of `coflowkit_sched::varys` defines it:
//! smallest Γ first (Γ within `NANOS_TIE` tie, ties by (release, arrival,
//! id)), MADD on what the coflows before left, then backfill in the same
//! order (inside a coflow by (first link, last link, flow index));
//! recomputed at every event (`recompute=flow`, the default) or only at
//! coflow events: releases, completions, flow starts, and a coflow's last
//! active flow finishing (`recompute=coflow`).

use crate::case::Case;
use crate::policy::ReferencePolicy;
use crate::sim::{RefSim, FULL};
use coflowkit_model::stats::NANOS_TIE;

/// Varys, recomputed at every event (`per_flow`) or at coflow events.
pub struct Varys {
    per_flow: bool,
}

/// `varys`, `varys:recompute=flow`, `varys:recompute=coflow`.
pub fn policy(spec: &str, _case: &Case) -> Box<dyn ReferencePolicy> {
    let per_flow = match spec {
        "varys" | "varys:recompute=flow" => true,
        "varys:recompute=coflow" => false,
        other => panic!("no reference policy for '{other}'"),
    };
    Box::new(Varys { per_flow })
}

/// Γ of coflow `c` over `capacity`: the largest (remaining bits through
/// a link) / (its capacity); infinite when a link it uses is full.
fn gamma(sim: &RefSim, c: usize, capacity: &[f64]) -> f64 {
    let mut load = vec![0.0; capacity.len()];
    for f in sim.active_flows_of(c) {
        for &l in &sim.flows[f].path {
            load[l as usize] += sim.flows[f].rem * 8.0;
        }
    }
    let mut g: f64 = 0.0;
    for l in 0..capacity.len() {
        if load[l] > 0.0 {
            g = g.max(if capacity[l] <= FULL {
                f64::INFINITY
            } else {
                load[l] / capacity[l]
            });
        }
    }
    g
}

impl ReferencePolicy for Varys {
    fn reallocates(&self, _t: f64, coflow_event: bool) -> bool {
        // With `recompute=coflow` rates stay fixed between coflow events;
        // finished flows dropped out when they finished.
        self.per_flow || coflow_event
    }

    fn allocate(&mut self, sim: &RefSim) -> Vec<f64> {
        let mut rate = vec![0.0; sim.flows.len()];
        let order = sim.coflows_by(|c| gamma(sim, c, &sim.caps) * 1e9, true, NANOS_TIE);
        let mut residual = sim.caps.clone();
        // MADD on what the coflows before left.
        for &c in &order {
            let g = gamma(sim, c, &residual);
            if !g.is_finite() {
                continue;
            }
            for f in sim.active_flows_of(c) {
                let r = sim.flows[f].rem * 8.0 / g;
                rate[f] = r;
                for &l in &sim.flows[f].path {
                    residual[l as usize] = (residual[l as usize] - r).max(0.0);
                }
            }
        }
        // Backfill in the same order; inside a coflow, flows by
        // (first link, last link, flow index) as the module doc says.
        for &c in &order {
            let mut flows = sim.active_flows_of(c);
            let ends = |f: usize| {
                let p = &sim.flows[f].path;
                (p[0], p[p.len() - 1], f)
            };
            flows.sort_by_key(|&f| ends(f));
            sim.greedy(flows, &mut residual, &mut rate);
        }
        rate
    }
}
