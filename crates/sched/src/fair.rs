//! `fair`: per-flow max-min fair sharing, recomputed at every arrival and
//! completion: the ideal that TCP, DCTCP and RCP approximate.
//!
//! Flows with the same path always get the same max-min rate, so the solver
//! runs over paths with a flow count each (see [`coflowkit_alloc::MaxMin`]),
//! not over flows, and the flows of a path form one shared rate group of the
//! [`Allocation`] (group id = path index): on the FB2010 trace an event costs
//! at most 22,500 path updates instead of up to 100,000 flow updates. On the
//! big switch the solver is [`BipartiteMaxMin`], whose cost does not grow
//! with the number of paths at all; compute stages there run on their
//! host's CPU, a link no network flow crosses, so they share it equally.
//!
//! Flows join the allocation when they start (`Changes::started`), which for
//! a later wave or stage may be long after their coflow's release.

use crate::{Allocation, Changes, KnowsSent, Observed, PathIdx, Scheduler};
use coflowkit_alloc::{BipartiteMaxMin, MaxMin};
use coflowkit_model::{FlowKind, Time};

/// Per-flow max-min fair sharing; see the module doc.
#[derive(Debug, Default)]
pub struct Fair {
    count: Vec<u32>,
    pos: Vec<u32>,
    paths: Vec<PathIdx>,
    solver: MaxMin,
    residual: Vec<f64>,
    ports: Option<Ports>,
}

/// The big-switch solver and per-path endpoints.
#[derive(Debug)]
struct Ports {
    solver: BipartiteMaxMin,
    ends: Vec<Ends>,
    // Compute stages per link (non-zero only on CPU links).
    cpu_count: Vec<u32>,
    up_cap: Vec<f64>,
    down_cap: Vec<f64>,
    up_level: Vec<f64>,
    down_level: Vec<f64>,
}

/// What a path crosses on the big switch.
#[derive(Debug, Clone, Copy)]
enum Ends {
    /// A network path: sending and receiving host.
    Ports(u32, u32),
    /// A compute stage's path: one CPU link, which only compute stages use,
    /// so they share it equally (max-min on one link).
    Cpu(u32),
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

    fn schedule(
        &mut self,
        _now: Time,
        view: Observed<'_>,
        changes: &Changes,
        out: &mut Allocation,
    ) -> Option<Time> {
        let fabric = view.fabric();
        if self.ports.is_none() && fabric.is_big_switch() {
            let n = fabric.n_hosts() as usize;
            let caps = view.capacities();
            self.ports = Some(Ports {
                solver: BipartiteMaxMin::new(n, n),
                ends: vec![],
                cpu_count: vec![0; view.n_links()],
                up_cap: (0..n).map(|h| caps[2 * h]).collect(),
                down_cap: (0..n).map(|h| caps[2 * h + 1]).collect(),
                up_level: vec![],
                down_level: vec![],
            });
        }
        for &f in &changes.started {
            let p = view.path_idx(f);
            self.add(p);
            out.join_group(f, p);
            if let Some(ports) = &mut self.ports {
                if ports.ends.len() <= p as usize {
                    ports.ends.resize(p as usize + 1, Ends::Ports(0, 0));
                }
                ports.ends[p as usize] = match view.kind(f) {
                    FlowKind::Net => {
                        let (s, d) = (view.src(f).0, view.dst(f).0);
                        ports.solver.add(s as usize, d as usize);
                        Ends::Ports(s, d)
                    }
                    FlowKind::Compute => {
                        let l = view.path(f)[0].0;
                        ports.cpu_count[l as usize] += 1;
                        Ends::Cpu(l)
                    }
                };
            }
        }
        for &f in &changes.finished {
            self.remove(view.path_idx(f));
            if let Some(ports) = &mut self.ports {
                match ports.ends[view.path_idx(f) as usize] {
                    Ends::Ports(s, d) => ports.solver.remove(s as usize, d as usize),
                    Ends::Cpu(l) => ports.cpu_count[l as usize] -= 1,
                }
            }
        }
        if let Some(ports) = &mut self.ports {
            ports.solver.solve(
                &ports.up_cap,
                &ports.down_cap,
                &mut ports.up_level,
                &mut ports.down_level,
            );
            let caps = view.capacities();
            for &p in &self.paths {
                let rate = match ports.ends[p as usize] {
                    Ends::Ports(s, d) => {
                        ports.up_level[s as usize].min(ports.down_level[d as usize])
                    }
                    Ends::Cpu(l) => caps[l as usize] / ports.cpu_count[l as usize] as f64,
                };
                out.set_group_rate(p, rate);
            }
            return None;
        }
        self.solver.clear();
        for &p in &self.paths {
            self.solver.push(
                view.path_links(p).iter().copied(),
                1.0,
                self.count[p as usize],
                f64::INFINITY,
            );
        }
        self.residual.clear();
        self.residual.extend_from_slice(view.capacities());
        let rates = self.solver.solve(&mut self.residual);
        for (&p, &r) in self.paths.iter().zip(rates) {
            out.set_group_rate(p, r);
        }
        None
    }
}
