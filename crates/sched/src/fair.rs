//! `fair`: per-flow max-min fair sharing, recomputed at every arrival and
//! completion: the ideal that TCP, DCTCP and RCP approximate.
//!
//! Flows with the same path always get the same max-min rate, so the solver
//! runs over paths with a flow count each (see [`coflowkit_alloc::MaxMin`]),
//! not over flows, and the flows of a path form one shared rate group of the
//! [`Allocation`] (group id = path index): on the FB2010 trace an event costs
//! at most 22,500 path updates instead of up to 100,000 flow updates. On the
//! big switch the solver is [`BipartiteMaxMin`], whose cost does not grow
//! with the number of paths at all. On any other fabric it is
//! [`IncrementalMaxMin`], which re-solves only the links an event can reach
//! (a flow that finishes in one rack of a 36,000-host tree costs that rack).

use crate::{Allocation, Changes, KnowsSent, Observed, PathIdx, Scheduler};
use coflowkit_alloc::{BipartiteMaxMin, IncrementalMaxMin};
use coflowkit_model::Time;

/// Per-flow max-min fair sharing; see the module doc.
#[derive(Debug, Default)]
pub struct Fair {
    count: Vec<u32>,
    pos: Vec<u32>,
    paths: Vec<PathIdx>,
    ports: Option<Ports>,
    incremental: Option<IncrementalMaxMin>,
    changed: Vec<u32>,
    never_ports: bool,
}

/// The big-switch solver and per-path endpoints.
#[derive(Debug)]
struct Ports {
    solver: BipartiteMaxMin,
    ends: Vec<(u32, u32)>,
    up_cap: Vec<f64>,
    down_cap: Vec<f64>,
    up_level: Vec<f64>,
    down_level: Vec<f64>,
}

const NONE: u32 = u32::MAX;

impl Fair {
    /// A fair-sharing scheduler.
    pub fn new() -> Fair {
        Fair::default()
    }

    /// Fair sharing that uses [`IncrementalMaxMin`] on every fabric, also on
    /// the big switch (`fair:solver=incremental`, to test one solver against
    /// the other).
    pub fn incremental() -> Fair {
        Fair {
            never_ports: true,
            ..Fair::default()
        }
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

    fn schedule(
        &mut self,
        _now: Time,
        view: Observed<'_>,
        changes: &Changes,
        out: &mut Allocation,
    ) -> Option<Time> {
        let fabric = view.fabric();
        if self.ports.is_none() && !self.never_ports && fabric.is_big_switch() {
            let n = fabric.n_hosts() as usize;
            let caps = view.capacities();
            self.ports = Some(Ports {
                solver: BipartiteMaxMin::new(n, n),
                ends: vec![],
                up_cap: (0..n).map(|h| caps[2 * h]).collect(),
                down_cap: (0..n).map(|h| caps[2 * h + 1]).collect(),
                up_level: vec![],
                down_level: vec![],
            });
        }
        for &c in &changes.arrived {
            for f in view.active_flows_of(c) {
                let p = view.path_idx(f);
                self.add(p);
                out.join_group(f, p);
                if let Some(ports) = &mut self.ports {
                    let (s, d) = (view.src(f).0, view.dst(f).0);
                    if ports.ends.len() <= p as usize {
                        ports.ends.resize(p as usize + 1, (0, 0));
                    }
                    ports.ends[p as usize] = (s, d);
                    ports.solver.add(s as usize, d as usize);
                }
            }
        }
        for &f in &changes.finished {
            self.remove(view.path_idx(f));
            if let Some(ports) = &mut self.ports {
                ports
                    .solver
                    .remove(view.src(f).0 as usize, view.dst(f).0 as usize);
            }
        }
        if let Some(ports) = &mut self.ports {
            ports.solver.solve(
                &ports.up_cap,
                &ports.down_cap,
                &mut ports.up_level,
                &mut ports.down_level,
            );
            for &p in &self.paths {
                let (s, d) = ports.ends[p as usize];
                out.set_group_rate(
                    p,
                    ports.up_level[s as usize].min(ports.down_level[d as usize]),
                );
            }
            return None;
        }
        let inc = self
            .incremental
            .get_or_insert_with(|| IncrementalMaxMin::new(view.capacities().to_vec()));
        for &f in &changes.finished {
            let p = view.path_idx(f);
            inc.set_count(p, self.count[p as usize]);
        }
        for &c in &changes.arrived {
            for f in view.active_flows_of(c) {
                let p = view.path_idx(f);
                if !inc.is_declared(p) {
                    inc.declare(p, view.path_links(p).iter().copied(), 1.0);
                }
                inc.set_count(p, self.count[p as usize]);
            }
        }
        self.changed.clear();
        inc.solve(&mut self.changed);
        for &p in &self.changed {
            out.set_group_rate(p, inc.rate(p));
        }
        None
    }
}
