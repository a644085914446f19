//! `d2tcp`, as the module doc of `coflowkit_sched::d2tcp` defines it:
//! per-flow weighted max-min, weight `alpha^(1 - d)` with D2TCP's deadline
//! imminence `d` (1 without a deadline): `Tc` (the remaining bits over the
//! least `capacity / active flows` on the flow's path) over the time left
//! to the deadline, clamped to [0.5, 2], 2 once the deadline passed.

use crate::case::Case;
use crate::policy::ReferencePolicy;
use crate::sim::RefSim;
use coflowkit_alloc::reference::max_min;

/// Per-flow weighted max-min by deadline imminence.
pub struct D2tcp {
    alpha: f64,
}

/// `d2tcp` (alpha 0.5) and `d2tcp:alpha=0.2`.
pub fn policy(spec: &str, _case: &Case) -> Box<dyn ReferencePolicy> {
    let alpha = match spec {
        "d2tcp" => 0.5,
        "d2tcp:alpha=0.2" => 0.2,
        other => panic!("no reference policy for '{other}'"),
    };
    Box::new(D2tcp { alpha })
}

impl ReferencePolicy for D2tcp {
    fn allocate(&mut self, sim: &RefSim) -> Vec<f64> {
        let mut rate = vec![0.0; sim.flows.len()];
        let active = sim.active_flows();
        let mut n_on = vec![0.0; sim.caps.len()];
        for &f in &active {
            for &l in &sim.flows[f].path {
                n_on[l as usize] += 1.0;
            }
        }
        let demands: Vec<(Vec<u32>, f64, f64)> = active
            .iter()
            .map(|&f| {
                let fl = &sim.flows[f];
                let w = match fl.deadline {
                    None => 1.0,
                    Some(d) => {
                        let share = fl
                            .path
                            .iter()
                            .map(|&l| sim.caps[l as usize] / n_on[l as usize])
                            .fold(f64::INFINITY, f64::min);
                        let tc = fl.rem * 8.0 / share;
                        let left = (fl.start_at + d - sim.now) * 1e-9;
                        let imminence = if left <= 0.0 {
                            2.0
                        } else {
                            (tc / left).clamp(0.5, 2.0)
                        };
                        self.alpha.powf(1.0 - imminence)
                    }
                };
                (fl.path.clone(), w, f64::INFINITY)
            })
            .collect();
        let mut residual = sim.caps.clone();
        let r = max_min(&demands, &mut residual);
        for (&f, &x) in active.iter().zip(&r) {
            rate[f] = x;
        }
        rate
    }
}
