//! `fair`: per-flow max-min fair sharing, recomputed at every arrival and
//! completion: the ideal that TCP, DCTCP and RCP approximate.
//!
//! Flows with the same path always get the same max-min rate, so the solver
//! runs over paths with a flow count each (see [`coflowkit_alloc::MaxMin`]),
//! not over flows. On the big switch the solver is [`BipartiteMaxMin`],
//! whose cost does not grow with the number of paths at all. On any other
//! fabric it is [`IncrementalMaxMin`], which re-solves only the links an
//! event can reach (a flow that finishes in one rack of a 36,000-host tree
//! costs that rack), and the flows of a path form one shared rate group of
//! the [`Allocation`] (group id = path index).
//!
//! On the big switch a path's rate is the lower of its two ports' levels,
//! so the rate groups are ports, not paths: the flows of a path are members
//! of the group of its *bottleneck* port (the sending port when the two
//! levels tie), whose rate is that port's level. An event then re-rates
//! only the ports whose level moved, and moves to the other port's group
//! the flows of the paths whose bottleneck side flipped. On FB2010 an event
//! moves 35 port levels and flips 5 paths (7 flows), where a group per path
//! re-rated 3,100 paths: the engine's per-event work follows what changed (docs/benchmarks-history.md, issue 35, branch
//! fair35). Which paths flipped is found by a look at the paths of the ports
//! that moved, a comparison each. The flows' progress is the same integral
//! of the same rates, summed per port instead of per path: completion
//! instants can differ from the path-group sums by float rounding, a few
//! nanoseconds at most (the reference suite holds both to 1 µs).
//!
//! On the big switch, compute stages there run on their host's CPU, a link
//! no network flow crosses, so they share it equally (the CPU of host `h`
//! is "port" `n + h` of the level arrays, so one lookup serves both kinds
//! of path; its group is the sending side's).
//!
//! Flows join the allocation when they start (`Changes::started`), which for
//! a later wave or stage may be long after their coflow's release.

use crate::descriptor::{Needs, Parts, SchedulerDescriptor, SOLVER_PARAM};
use crate::AnyScheduler;
use crate::{Allocation, Changes, FlowIdx, KnowsSent, Observed, PathIdx, Scheduler};
use coflowkit_alloc::{BipartiteMaxMin, IncrementalMaxMin};
use coflowkit_model::{FlowKind, HostId, Time};

/// `fair`: per-flow max-min fair sharing.
pub const FAIR: SchedulerDescriptor = SchedulerDescriptor {
    cost: 1.0,
    parts: Parts::NONE,
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
    by_up: Vec<Vec<Listed>>,
    by_down: Vec<Vec<Listed>>,
    at: Vec<(u32, u32)>,
    // Paths that became active in this call.
    fresh: Vec<PathIdx>,
    // Per path: the side whose port group its flows are in (`UP`, `DOWN`,
    // or `UNSET` while inactive), and its active flows; per flow, its place
    // in its path's list.
    side: Vec<u8>,
    flows: Vec<Vec<FlowIdx>>,
    flow_at: Vec<u32>,
}

/// An active path as its port lists it: the path, the port at its other
/// end, and a copy of the path's `side`, so that the look at the paths of a
/// port whose level moved reads one list from end to end (on FB2010 about
/// 3,500 paths an event, 5 of which flip).
#[derive(Debug, Clone, Copy)]
struct Listed {
    path: PathIdx,
    other: u32,
    side: u8,
}

/// A path's flows are in its sending port's group.
const UP: u8 = 0;
/// A path's flows are in its receiving port's group.
const DOWN: u8 = 1;
/// A path with no active flows.
const UNSET: u8 = 2;

impl Ports {
    /// Lists active path `p` at its two ports.
    fn list(&mut self, p: PathIdx) {
        let (s, d) = self.ends[p as usize];
        if self.at.len() <= p as usize {
            self.at.resize(p as usize + 1, (NONE, NONE));
        }
        let (up, down) = (&mut self.by_up[s as usize], &mut self.by_down[d as usize]);
        self.at[p as usize] = (up.len() as u32, down.len() as u32);
        up.push(Listed {
            path: p,
            other: d,
            side: UNSET,
        });
        down.push(Listed {
            path: p,
            other: s,
            side: UNSET,
        });
        self.fresh.push(p);
    }

    /// Takes path `p` (no longer active) off its ports' lists.
    fn unlist(&mut self, p: PathIdx) {
        let (s, d) = self.ends[p as usize];
        let (i, j) = self.at[p as usize];
        let up = &mut self.by_up[s as usize];
        up.swap_remove(i as usize);
        if let Some(q) = up.get(i as usize) {
            self.at[q.path as usize].0 = i;
        }
        let down = &mut self.by_down[d as usize];
        down.swap_remove(j as usize);
        if let Some(q) = down.get(j as usize) {
            self.at[q.path as usize].1 = j;
        }
        self.at[p as usize] = (NONE, NONE);
        self.side[p as usize] = UNSET;
    }

    /// Adds started flow `f` to path `p`'s flows.
    fn add_flow(&mut self, p: PathIdx, f: FlowIdx) {
        let (pi, fi) = (p as usize, f as usize);
        if self.flows.len() <= pi {
            self.flows.resize_with(pi + 1, Vec::new);
            self.side.resize(pi + 1, UNSET);
        }
        if self.flow_at.len() <= fi {
            self.flow_at.resize(fi + 1, NONE);
        }
        self.flow_at[fi] = self.flows[pi].len() as u32;
        self.flows[pi].push(f);
    }

    /// Takes finished flow `f` off path `p`'s flows.
    fn remove_flow(&mut self, p: PathIdx, f: FlowIdx) {
        let list = &mut self.flows[p as usize];
        let at = self.flow_at[f as usize] as usize;
        list.swap_remove(at);
        if let Some(&g) = list.get(at) {
            self.flow_at[g as usize] = at as u32;
        }
        self.flow_at[f as usize] = NONE;
    }

    /// The rate group of `side`'s port of a path with ends `(s, d)`: the
    /// sending ports (and CPUs) first, then the receiving ports.
    fn group(&self, side: u8, (s, d): (u32, u32)) -> u32 {
        if side == UP {
            s
        } else {
            self.by_up.len() as u32 + d
        }
    }

    /// Puts path `p`'s flows in the group of its bottleneck port, if that
    /// is not where they are.
    fn place(&mut self, p: PathIdx, out: &mut Allocation) {
        let ends = self.ends[p as usize];
        let side = if self.up_level[ends.0 as usize] <= self.down_level[ends.1 as usize] {
            UP
        } else {
            DOWN
        };
        if self.side[p as usize] != side {
            self.move_to(p, side, out);
        }
    }

    /// Puts path `p`'s flows in the group of its `side` port, and says so
    /// in its ports' lists.
    fn move_to(&mut self, p: PathIdx, side: u8, out: &mut Allocation) {
        let ends = self.ends[p as usize];
        let (i, j) = self.at[p as usize];
        self.side[p as usize] = side;
        self.by_up[ends.0 as usize][i as usize].side = side;
        self.by_down[ends.1 as usize][j as usize].side = side;
        let g = self.group(side, ends);
        for &f in &self.flows[p as usize] {
            out.join_group(f, g);
        }
    }

    /// Gives each port whose level moved since the last call its new level
    /// as its group's rate, and puts the flows of every path at such a port
    /// (and of every path that just became active) in the group of its
    /// bottleneck port; the other paths' bottlenecks did not move.
    fn rate_moved(&mut self, out: &mut Allocation) {
        for i in 0..self.up_level.len() {
            let l = self.up_level[i];
            if self.prev_up.get(i) != Some(&l) {
                out.set_group_rate(i as u32, group_rate(l));
                for k in 0..self.by_up[i].len() {
                    let e = self.by_up[i][k];
                    let side = if l <= self.down_level[e.other as usize] {
                        UP
                    } else {
                        DOWN
                    };
                    if side != e.side {
                        self.move_to(e.path, side, out);
                    }
                }
            }
        }
        for i in 0..self.down_level.len() {
            let l = self.down_level[i];
            if self.prev_down.get(i) != Some(&l) {
                out.set_group_rate(self.group(DOWN, (0, i as u32)), group_rate(l));
                for k in 0..self.by_down[i].len() {
                    let e = self.by_down[i][k];
                    let side = if self.up_level[e.other as usize] <= l {
                        UP
                    } else {
                        DOWN
                    };
                    if side != e.side {
                        self.move_to(e.path, side, out);
                    }
                }
            }
        }
        for k in 0..self.fresh.len() {
            self.place(self.fresh[k], out);
        }
        self.fresh.clear();
        self.prev_up.clone_from(&self.up_level);
        self.prev_down.clone_from(&self.down_level);
    }
}

/// A port group's rate: the port's level, or 0 for a port that is nobody's
/// bottleneck (infinite level; no path's flows are in its group then).
fn group_rate(level: f64) -> f64 {
    if level.is_finite() {
        level
    } else {
        0.0
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
                side: vec![],
                flows: vec![],
                flow_at: vec![],
            });
        }
        for &f in &changes.started {
            let p = view.path_idx(f);
            self.add(p);
            if let Some(ports) = &mut self.ports {
                ports.add_flow(p, f);
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
            } else {
                out.join_group(f, p);
            }
        }
        for &f in &changes.finished {
            self.remove(view.path_idx(f));
            if let Some(ports) = &mut self.ports {
                ports.remove_flow(view.path_idx(f), f);
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
            // Flows started on a path whose bottleneck stayed where it was.
            for &f in &changes.started {
                let p = view.path_idx(f);
                let side = ports.side[p as usize];
                out.join_group(f, ports.group(side, ports.ends[p as usize]));
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
