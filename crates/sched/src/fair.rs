//! `fair`: per-flow max-min fair sharing, recomputed at every arrival and
//! completion: the ideal that TCP, DCTCP and RCP approximate.
//!
//! Flows with the same path always get the same max-min rate, so the solver
//! runs over paths with a flow count each (see [`coflowkit_alloc::MaxMin`]),
//! not over flows: on the FB2010 trace that is at most 22,500 demands instead
//! of up to 100,000 flows.

use crate::{Allocation, Changes, KnowsSent, Observed, PathIdx, Scheduler};
use coflowkit_alloc::MaxMin;
use coflowkit_model::Time;

/// Per-flow max-min fair sharing; see the module doc.
#[derive(Debug, Default)]
pub struct Fair {
    count: Vec<u32>,
    pos: Vec<u32>,
    paths: Vec<PathIdx>,
    solver: MaxMin,
    residual: Vec<f64>,
    path_rate: Vec<f64>,
}

const NONE: u32 = u32::MAX;

impl Fair {
    /// A fair-sharing scheduler.
    pub fn new() -> Fair {
        Fair::default()
    }

    fn add(&mut self, p: PathIdx) {
        let pi = p as usize;
        if self.count.len() <= pi {
            self.count.resize(pi + 1, 0);
            self.pos.resize(pi + 1, NONE);
        }
        if self.count[pi] == 0 {
            self.pos[pi] = self.paths.len() as u32;
            self.paths.push(p);
        }
        self.count[pi] += 1;
    }

    fn remove(&mut self, p: PathIdx) {
        let pi = p as usize;
        self.count[pi] -= 1;
        if self.count[pi] == 0 {
            let at = self.pos[pi] as usize;
            let last = self.paths.pop().expect("path is listed");
            if last != p {
                self.paths[at] = last;
                self.pos[last as usize] = at as u32;
            }
            self.pos[pi] = NONE;
        }
    }
}

impl Scheduler for Fair {
    type Knows = KnowsSent;

    fn name(&self) -> &str {
        "fair"
    }

    fn schedule(&mut self, _now: Time, view: Observed<'_>, changes: &Changes, out: &mut Allocation) -> Option<Time> {
        for &c in &changes.arrived {
            for f in view.active_flows_of(c) {
                self.add(view.path_idx(f));
            }
        }
        for &f in &changes.finished {
            self.remove(view.path_idx(f));
        }
        self.solver.clear();
        for &p in &self.paths {
            self.solver.push(view.path_links(p).iter().copied(), 1.0, self.count[p as usize], f64::INFINITY);
        }
        self.residual.clear();
        self.residual.extend_from_slice(view.capacities());
        let rates = self.solver.solve(&mut self.residual);
        self.path_rate.resize(view.n_paths(), 0.0);
        for (&p, &r) in self.paths.iter().zip(rates) {
            self.path_rate[p as usize] = r;
        }
        for &f in view.active_flows() {
            out.rate[f as usize] = self.path_rate[view.path_idx(f) as usize];
        }
        None
    }
}
