//! `fair`: per-flow max-min over all active flows, as the module doc of
//! `coflowkit_sched::fair` defines it (the incremental solver computes the
//! same allocation).

use crate::case::Case;
use crate::policy::ReferencePolicy;
use crate::sim::RefSim;

/// Per-flow max-min over all active flows.
pub struct Fair;

/// `fair` and `fair:solver=incremental`.
pub fn policy(spec: &str, _case: &Case) -> Box<dyn ReferencePolicy> {
    match spec {
        "fair" | "fair:solver=incremental" => Box::new(Fair),
        other => panic!("no reference policy for '{other}'"),
    }
}

impl ReferencePolicy for Fair {
    fn allocate(&mut self, sim: &RefSim) -> Vec<f64> {
        let mut rate = vec![0.0; sim.flows.len()];
        let all: Vec<usize> = sim.active_coflows();
        sim.serve_classes(&[all], &mut rate);
        rate
    }
}
