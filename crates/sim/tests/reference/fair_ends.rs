//! `fair-ends`, as the module doc of `coflowkit_sched::fair_ends` defines
//! it: each active flow gets the least, over the links of its path, of the
//! link's capacity over the active flows crossing it; nothing else is
//! handed out.

use crate::case::Case;
use crate::policy::ReferencePolicy;
use crate::sim::RefSim;

/// The least equal share along each flow's path.
pub struct FairEnds;

/// `fair-ends`.
pub fn policy(spec: &str, _case: &Case) -> Box<dyn ReferencePolicy> {
    match spec {
        "fair-ends" => Box::new(FairEnds),
        other => panic!("no reference policy for '{other}'"),
    }
}

impl ReferencePolicy for FairEnds {
    fn allocate(&mut self, sim: &RefSim) -> Vec<f64> {
        let mut rate = vec![0.0; sim.flows.len()];
        let active = sim.active_flows();
        let mut n_on = vec![0u32; sim.caps.len()];
        for &f in &active {
            for &l in &sim.flows[f].path {
                n_on[l as usize] += 1;
            }
        }
        for &f in &active {
            rate[f] = sim.flows[f]
                .path
                .iter()
                .map(|&l| sim.caps[l as usize] / f64::from(n_on[l as usize]))
                .fold(f64::INFINITY, f64::min);
        }
        rate
    }
}
