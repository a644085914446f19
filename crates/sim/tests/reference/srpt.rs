//! `srpt`: per flow, shortest remaining first, greedy and preemptive, as
//! the module doc of `coflowkit_sched::srpt` defines it: flows by
//! (remaining bytes within `BYTES_TIE`, flow order), each the least
//! residual on its path.

use crate::case::Case;
use crate::policy::ReferencePolicy;
use crate::sim::{order_by, RefSim};
use coflowkit_model::stats::BYTES_TIE;

/// Flows by (remaining bytes, flow order), each the least residual on its path.
pub struct Srpt;

/// `srpt`.
pub fn policy(spec: &str, _case: &Case) -> Box<dyn ReferencePolicy> {
    match spec {
        "srpt" => Box::new(Srpt),
        other => panic!("no reference policy for '{other}'"),
    }
}

impl ReferencePolicy for Srpt {
    fn allocate(&mut self, sim: &RefSim) -> Vec<f64> {
        let mut rate = vec![0.0; sim.flows.len()];
        let order = order_by(sim.active_flows(), |f| sim.flows[f].rem, BYTES_TIE);
        sim.note_ties("flows", &order, |f| (f as u64, sim.flows[f].rem));
        let mut residual = sim.caps.clone();
        sim.greedy(order, &mut residual, &mut rate);
        rate
    }
}
