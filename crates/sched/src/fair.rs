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
//! On the big switch a path's rate is the lower of its two ports' levels,
//! so after a solve only the paths at a port whose level moved (and paths
//! that just became active) are re-rated: on FB2010 about 35 of 300 ports
//! move per event, and with them about 3,100 of 15,000 active paths.
//! On the big switch, compute stages there run on their
//! host's CPU, a link no network flow crosses, so they share it equally
//! (the CPU of host `h` is "port" `n + h` of the level arrays, so one
//! lookup serves both kinds of path).
//!
//! Flows join the allocation when they start (`Changes::started`), which for
//! a later wave or stage may be long after their coflow's release.

use crate::descriptor::{Needs, SchedulerDescriptor, SOLVER_PARAM};
use crate::AnyScheduler;
use crate::{Allocation, Changes, KnowsSent, Observed, PathIdx, Scheduler};
use coflowkit_alloc::{BipartiteMaxMin, IncrementalMaxMin};
use coflowkit_model::{FlowKind, HostId, Time};

/// `fair`: per-flow max-min fair sharing.
pub const FAIR: SchedulerDescriptor = SchedulerDescriptor {
    name: "fair",
    description: "per-flow max-min fair sharing (TCP/DCTCP/RCP ideal)",
    paper: "ideal; the baseline of every seed paper (Aalo 7, Varys 7, Baraat 5.2, D-CAS V)",
    params: &[SOLVER_PARAM],
    needs: Needs::NOTHING,
    build: |p, _| {
        Ok(AnyScheduler::NonClairvoyant(match p.choice("solver")? {
            "incremental" => Box::new(Fair::incremental()),
            _ => Box::new(Fair::new()),
        }))
    },
};

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
    // Per path: (sending port, receiving port), or (n + h, n + h) for the
    // CPU of host h.
    ends: Vec<(u32, u32)>,
    // Per host: its CPU's capacity and compute stages on it (empty when the
    // fabric has no CPUs).
    cpus: Vec<(f64, u32)>,
    up_cap: Vec<f64>,
    down_cap: Vec<f64>,
    up_level: Vec<f64>,
    down_level: Vec<f64>,
    // The levels of the previous solve, to find the ports that moved.
    prev_up: Vec<f64>,
    prev_down: Vec<f64>,
    // Per sending (receiving) port, its active paths; per path, its place
    // in each list.
    by_up: Vec<Vec<PathIdx>>,
    by_down: Vec<Vec<PathIdx>>,
    at: Vec<(u32, u32)>,
    // Paths that became active in this call.
    fresh: Vec<PathIdx>,
}

impl Ports {
    /// Lists active path `p` at its two ports.
    fn list(&mut self, p: PathIdx) {
        let (s, d) = self.ends[p as usize];
        if self.at.len() <= p as usize {
            self.at.resize(p as usize + 1, (NONE, NONE));
        }
        let (up, down) = (&mut self.by_up[s as usize], &mut self.by_down[d as usize]);
        self.at[p as usize] = (up.len() as u32, down.len() as u32);
        up.push(p);
        down.push(p);
        self.fresh.push(p);
    }

    /// Takes path `p` (no longer active) off its ports' lists.
    fn unlist(&mut self, p: PathIdx) {
        let (s, d) = self.ends[p as usize];
        let (i, j) = self.at[p as usize];
        let up = &mut self.by_up[s as usize];
        up.swap_remove(i as usize);
        if let Some(&q) = up.get(i as usize) {
            self.at[q as usize].0 = i;
        }
        let down = &mut self.by_down[d as usize];
        down.swap_remove(j as usize);
        if let Some(&q) = down.get(j as usize) {
            self.at[q as usize].1 = j;
        }
        self.at[p as usize] = (NONE, NONE);
    }

    /// Gives a rate to every path at a port whose level moved since the
    /// last call and to every path that just became active; the others
    /// keep theirs (a path's rate is the lower of its ports' levels).
    fn rate_moved(&mut self, out: &mut Allocation) {
        let (up, down) = (&self.up_level, &self.down_level);
        let rate = |p: PathIdx| {
            let (s, d) = self.ends[p as usize];
            up[s as usize].min(down[d as usize])
        };
        for (i, &l) in up.iter().enumerate() {
            if self.prev_up.get(i) != Some(&l) {
                self.by_up[i]
                    .iter()
                    .for_each(|&p| out.set_group_rate(p, rate(p)));
            }
        }
        for (i, &l) in down.iter().enumerate() {
            if self.prev_down.get(i) != Some(&l) {
                self.by_down[i]
                    .iter()
                    .for_each(|&p| out.set_group_rate(p, rate(p)));
            }
        }
        self.fresh
            .iter()
            .for_each(|&p| out.set_group_rate(p, rate(p)));
        self.fresh.clear();
        self.prev_up.clone_from(&self.up_level);
        self.prev_down.clone_from(&self.down_level);
    }
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
                cpus: (0..n as u32)
                    .filter_map(|h| fabric.cpu(HostId(h)))
                    .map(|l| (caps[l.0 as usize], 0))
                    .collect(),
                up_cap: (0..n).map(|h| caps[2 * h]).collect(),
                down_cap: (0..n).map(|h| caps[2 * h + 1]).collect(),
                up_level: vec![],
                down_level: vec![],
                prev_up: vec![],
                prev_down: vec![],
                by_up: vec![vec![]; 2 * n],
                by_down: vec![vec![]; 2 * n],
                at: vec![],
                fresh: vec![],
            });
        }
        for &f in &changes.started {
            let p = view.path_idx(f);
            self.add(p);
            out.join_group(f, p);
            if let Some(ports) = &mut self.ports {
                if ports.ends.len() <= p as usize {
                    ports.ends.resize(p as usize + 1, (0, 0));
                }
                let (s, d) = (view.src(f).0, view.dst(f).0);
                ports.ends[p as usize] = match view.kind(f) {
                    FlowKind::Net => {
                        ports.solver.add(s as usize, d as usize);
                        (s, d)
                    }
                    FlowKind::Compute => {
                        ports.cpus[s as usize].1 += 1;
                        let cpu = ports.up_cap.len() as u32 + s;
                        (cpu, cpu)
                    }
                };
                if self.count[p as usize] == 1 {
                    ports.list(p);
                }
            }
        }
        for &f in &changes.finished {
            self.remove(view.path_idx(f));
            if let Some(ports) = &mut self.ports {
                let (s, d) = ports.ends[view.path_idx(f) as usize];
                let n = ports.up_cap.len();
                if (s as usize) < n {
                    ports.solver.remove(s as usize, d as usize);
                } else {
                    ports.cpus[s as usize - n].1 -= 1;
                }
                if self.count[view.path_idx(f) as usize] == 0 {
                    ports.unlist(view.path_idx(f));
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
            for &(cap, count) in &ports.cpus {
                let share = cap / count.max(1) as f64;
                ports.up_level.push(share);
                ports.down_level.push(share);
            }
            ports.rate_moved(out);
            return None;
        }
        let inc = self
            .incremental
            .get_or_insert_with(|| IncrementalMaxMin::new(view.capacities().to_vec()));
        for &f in &changes.finished {
            let p = view.path_idx(f);
            inc.set_count(p, self.count[p as usize]);
        }
        for &f in &changes.started {
            let p = view.path_idx(f);
            if !inc.is_declared(p) {
                inc.declare(p, view.path_links(p).iter().copied(), 1.0);
            }
            inc.set_count(p, self.count[p as usize]);
        }
        self.changed.clear();
        inc.solve(&mut self.changed);
        for &p in &self.changed {
            out.set_group_rate(p, inc.rate(p));
        }
        None
    }
}
