//! Weighted max-min fairness kept up to date as demands come and go, re-solving
//! only the part of the network a change can reach.
//!
//! Progressive filling from scratch costs time in proportion to every active
//! demand; on a 36,000-host tree with a million flows that is hopeless at every
//! event. But a flow that finishes in one rack usually changes rates only in
//! that rack. [`IncrementalMaxMin`] exploits this and stays exact, by checking
//! the textbook certificate of max-min fairness (Bertsekas and Gallager, *Data
//! Networks*, 6.5.2): a feasible allocation is max-min fair if and only if every
//! demand has a *bottleneck*, a saturated link on its path where no demand has a
//! higher normalized rate (rate / weight).
//!
//! After a change, the *region* R starts as the links whose demands changed.
//! Every demand crossing R is *free*, every other demand keeps its rate. The
//! free demands are filled progressively over the capacity the fixed demands
//! leave (on R and on the *boundary*: the other links free demands cross).
//! Then the boundary is checked:
//!
//! * a boundary link that was saturated must still be saturated with the same
//!   highest normalized rate, or the fixed demands it bottlenecked have lost
//!   their bottleneck;
//! * a free demand must have a bottleneck; where it has none because a fixed
//!   demand on a saturated boundary link has a higher normalized rate, that
//!   link joins the region.
//!
//! Violating links join R and the fill is redone; when nothing is violated the
//! certificate holds for every demand (free ones by the checks, fixed ones
//! because their bottleneck is untouched or checked), so the allocation is the
//! unique max-min fair one. In the worst case R grows to the whole network
//! and the result is a full solve. Tolerances are relative, [`crate::EPS`].
//!
//! Correctness properties, checked against the slow reference in
//! `tests/differential.rs` after every change of random sequences: rates equal
//! a from-scratch weighted max-min of the active demands.

use crate::maxmin::MaxMin;
use crate::EPS;
use coflowkit_model::LinkId;

/// Relative change below which a rate or level counts as unchanged.
const TOL: f64 = 1e-9;

/// Weighted max-min rates over a fixed set of links, updated incrementally as
/// demands (each standing for `count` identical flows over one path) change.
#[derive(Debug, Clone, Default)]
pub struct IncrementalMaxMin {
    capacity: Vec<f64>,
    // Per demand (caller-chosen dense ids).
    path_start: Vec<u32>,
    path_len: Vec<u8>,
    weight: Vec<f64>,
    count: Vec<u32>,
    rate: Vec<f64>,
    // Paths, and for each path position the demand's index in that link's list.
    paths: Vec<u32>,
    slot: Vec<u32>,
    // Per link: the demands with count > 0 crossing it.
    adj: Vec<Vec<u32>>,
    // Links whose demand set changed since the last solve.
    dirty: Vec<u32>,
    // Scratch, stamped by epoch.
    epoch: u32,
    link_mark: Vec<u32>,
    in_region: Vec<u32>,
    demand_mark: Vec<u32>,
    region: Vec<u32>,
    boundary: Vec<u32>,
    free: Vec<u32>,
    residual: Vec<f64>,
    solver: MaxMin,
    // Per boundary link (indexed like `boundary`).
    old_sat: Vec<bool>,
    old_max: Vec<f64>,
    fixed_use: Vec<f64>,
    fixed_max: Vec<f64>,
    // Per link in region or boundary: new saturation and highest level.
    new_sat: Vec<bool>,
    new_max: Vec<f64>,
    new_use: Vec<f64>,
    n_solves: u64,
    n_rounds: u64,
}

impl IncrementalMaxMin {
    /// A solver over links with these capacities (bits/s).
    pub fn new(capacity: Vec<f64>) -> IncrementalMaxMin {
        let n = capacity.len();
        IncrementalMaxMin {
            adj: vec![Vec::new(); n],
            link_mark: vec![0; n],
            in_region: vec![0; n],
            residual: vec![0.0; n],
            new_sat: vec![false; n],
            new_max: vec![0.0; n],
            new_use: vec![0.0; n],
            solver: MaxMin::new(n),
            capacity,
            ..IncrementalMaxMin::default()
        }
    }

    /// Declares demand `d` with its path and weight (> 0), with no flows yet.
    /// A demand's path and weight are fixed once declared.
    pub fn declare(&mut self, d: u32, path: impl IntoIterator<Item = LinkId>, weight: f64) {
        let di = d as usize;
        if self.weight.len() <= di {
            self.path_start.resize(di + 1, 0);
            self.path_len.resize(di + 1, 0);
            self.weight.resize(di + 1, 0.0);
            self.count.resize(di + 1, 0);
            self.rate.resize(di + 1, 0.0);
            self.demand_mark.resize(di + 1, 0);
        }
        debug_assert!(self.weight[di] == 0.0, "demand {d} declared twice");
        self.path_start[di] = self.paths.len() as u32;
        let before = self.paths.len();
        self.paths.extend(path.into_iter().map(|l| l.0));
        self.path_len[di] = (self.paths.len() - before) as u8;
        self.slot.resize(self.paths.len(), u32::MAX);
        self.weight[di] = weight;
    }

    /// Whether demand `d` was declared.
    pub fn is_declared(&self, d: u32) -> bool {
        self.weight.get(d as usize).is_some_and(|&w| w > 0.0)
    }

    fn path_range(&self, d: usize) -> std::ops::Range<usize> {
        let s = self.path_start[d] as usize;
        s..s + self.path_len[d] as usize
    }

    /// Sets how many flows demand `d` stands for (0 removes it).
    pub fn set_count(&mut self, d: u32, count: u32) {
        let di = d as usize;
        let old = self.count[di];
        if old == count {
            return;
        }
        self.count[di] = count;
        let range = self.path_range(di);
        if old == 0 {
            for k in range.clone() {
                let l = self.paths[k] as usize;
                self.slot[k] = self.adj[l].len() as u32;
                self.adj[l].push(d);
            }
        } else if count == 0 {
            self.rate[di] = 0.0;
            for k in range.clone() {
                let l = self.paths[k] as usize;
                let at = self.slot[k] as usize;
                self.adj[l].swap_remove(at);
                if let Some(&moved) = self.adj[l].get(at) {
                    let mr = self.path_range(moved as usize);
                    let mk = mr
                        .into_iter()
                        .find(|&j| self.paths[j] as usize == l)
                        .expect("moved demand crosses l");
                    self.slot[mk] = at as u32;
                }
                self.slot[k] = u32::MAX;
            }
        }
        for k in range {
            self.dirty.push(self.paths[k]);
        }
    }

    /// How many flows demand `d` stands for.
    pub fn count(&self, d: u32) -> u32 {
        self.count.get(d as usize).copied().unwrap_or(0)
    }

    /// The per-flow rate of demand `d` (bits/s) after the last solve.
    pub fn rate(&self, d: u32) -> f64 {
        self.rate[d as usize]
    }

    /// (solves, fill rounds) so far: rounds / solves is how often the region
    /// had to grow.
    pub fn stats(&self) -> (u64, u64) {
        (self.n_solves, self.n_rounds)
    }

    fn next_epoch(&mut self) -> u32 {
        self.epoch = self.epoch.wrapping_add(1);
        if self.epoch == 0 {
            self.link_mark.iter_mut().for_each(|m| *m = 0);
            self.in_region.iter_mut().for_each(|m| *m = 0);
            self.demand_mark.iter_mut().for_each(|m| *m = 0);
            self.epoch = 1;
        }
        self.epoch
    }

    /// Brings every rate up to date with the changes since the last solve and
    /// appends to `changed` the demands whose rate changed.
    pub fn solve(&mut self, changed: &mut Vec<u32>) {
        if self.dirty.is_empty() {
            return;
        }
        self.n_solves += 1;
        // The region keeps its own stamp for the whole solve.
        let region_stamp = self.next_epoch();
        self.region.clear();
        for i in 0..self.dirty.len() {
            let l = self.dirty[i];
            if self.in_region[l as usize] != region_stamp {
                self.in_region[l as usize] = region_stamp;
                self.region.push(l);
            }
        }
        self.dirty.clear();
        loop {
            self.n_rounds += 1;
            let grew = self.fill_round(region_stamp);
            if !grew {
                break;
            }
        }
        for i in 0..self.free.len() {
            let d = self.free[i] as usize;
            let r = self.solver.rates()[i];
            let old = self.rate[d];
            if (r - old).abs() > TOL * old.abs().max(r.abs()) {
                changed.push(d as u32);
            }
            self.rate[d] = r;
        }
    }

    /// One fill over the current region; returns whether the region grew.
    fn fill_round(&mut self, region_stamp: u32) -> bool {
        let ep = self.next_epoch();
        // Free demands: every demand crossing the region.
        self.free.clear();
        for &l in &self.region {
            for &d in &self.adj[l as usize] {
                if self.demand_mark[d as usize] != ep {
                    self.demand_mark[d as usize] = ep;
                    self.free.push(d);
                }
            }
        }
        self.free.sort_unstable();
        // Boundary links and what the fixed demands use there.
        self.boundary.clear();
        for &d in &self.free {
            let r = self.path_start[d as usize] as usize
                ..self.path_start[d as usize] as usize + self.path_len[d as usize] as usize;
            for &l in &self.paths[r] {
                let li = l as usize;
                if self.in_region[li] != region_stamp && self.link_mark[li] != ep {
                    self.link_mark[li] = ep;
                    self.boundary.push(l);
                }
            }
        }
        self.old_sat.clear();
        self.old_max.clear();
        self.fixed_use.clear();
        self.fixed_max.clear();
        for &l in &self.boundary {
            let li = l as usize;
            let (mut used, mut max, mut fixed_used, mut fixed_max) = (0.0, 0.0f64, 0.0, 0.0f64);
            for &d in &self.adj[li] {
                let di = d as usize;
                let u = self.count[di] as f64 * self.rate[di];
                let level = self.rate[di] / self.weight[di];
                used += u;
                max = max.max(level);
                if self.demand_mark[di] != ep {
                    fixed_used += u;
                    fixed_max = fixed_max.max(level);
                }
            }
            self.old_sat.push(used >= self.capacity[li] * (1.0 - EPS));
            self.old_max.push(max);
            self.fixed_use.push(fixed_used);
            self.fixed_max.push(fixed_max);
            self.residual[li] = (self.capacity[li] - fixed_used).max(0.0);
        }
        for &l in &self.region {
            self.residual[l as usize] = self.capacity[l as usize];
        }
        // Fill the free demands.
        self.solver.clear();
        for &d in &self.free {
            let di = d as usize;
            let r = self.path_start[di] as usize
                ..self.path_start[di] as usize + self.path_len[di] as usize;
            self.solver.push(
                self.paths[r].iter().map(|&l| LinkId(l)),
                self.weight[di],
                self.count[di],
                f64::INFINITY,
            );
        }
        self.solver.solve(&mut self.residual);
        // New use and highest level per region and boundary link.
        for &l in self.region.iter().chain(&self.boundary) {
            self.new_use[l as usize] = 0.0;
            self.new_max[l as usize] = 0.0;
        }
        for (i, &d) in self.free.iter().enumerate() {
            let di = d as usize;
            let r = self.solver.rates()[i];
            let level = r / self.weight[di];
            let u = self.count[di] as f64 * r;
            for k in self.path_start[di] as usize
                ..self.path_start[di] as usize + self.path_len[di] as usize
            {
                let li = self.paths[k] as usize;
                self.new_use[li] += u;
                self.new_max[li] = self.new_max[li].max(level);
            }
        }
        for (b, &l) in self.boundary.iter().enumerate() {
            let li = l as usize;
            self.new_use[li] += self.fixed_use[b];
            self.new_max[li] = self.new_max[li].max(self.fixed_max[b]);
        }
        for &l in self.region.iter().chain(&self.boundary) {
            let li = l as usize;
            self.new_sat[li] = self.new_use[li] >= self.capacity[li] * (1.0 - EPS);
        }
        // Check the certificate on the boundary.
        let before = self.region.len();
        for b in 0..self.boundary.len() {
            let l = self.boundary[b];
            let li = l as usize;
            let (old_max, new_max) = (self.old_max[b], self.new_max[li]);
            let lost = self.old_sat[b]
                && (!self.new_sat[li] || (new_max - old_max).abs() > TOL * old_max.max(new_max));
            if lost && self.in_region[li] != region_stamp {
                self.in_region[li] = region_stamp;
                self.region.push(l);
            }
        }
        for (i, &d) in self.free.iter().enumerate() {
            let di = d as usize;
            let level = self.solver.rates()[i] / self.weight[di];
            let r = self.path_start[di] as usize
                ..self.path_start[di] as usize + self.path_len[di] as usize;
            let has_bottleneck = self.paths[r.clone()].iter().any(|&l| {
                self.new_sat[l as usize] && level >= self.new_max[l as usize] * (1.0 - TOL)
            });
            if has_bottleneck {
                continue;
            }
            for k in r {
                let l = self.paths[k];
                let li = l as usize;
                if self.in_region[li] != region_stamp
                    && self.new_sat[li]
                    && self.new_max[li] > level * (1.0 + TOL)
                {
                    self.in_region[li] = region_stamp;
                    self.region.push(l);
                }
            }
        }
        self.region.len() > before
    }
}
