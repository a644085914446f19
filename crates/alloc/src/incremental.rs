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
//! The certificate is kept between solves: every demand records a link that
//! is its bottleneck, every link the demands recorded there and a level no
//! demand on it exceeds. After a change, the *free* demands are first the
//! changed ones and those recorded on a link that changed; every other demand
//! keeps its rate. The free demands are filled progressively over the
//! capacity the fixed demands leave (on the *boundary*: the links free
//! demands cross). Then the boundary is checked:
//!
//! * a boundary link where fixed demands are recorded must still be
//!   saturated with no demand above their level, or they have lost their
//!   bottleneck and are freed for the next round (a fixed demand recorded
//!   elsewhere keeps it: that link is untouched or checked too);
//! * a free demand must have a bottleneck; where it has none because fixed
//!   demands on a saturated boundary link have a higher normalized rate (or,
//!   with classes, belong to a later class), those demands are freed.
//!
//! Only the demands that must move are freed, not every demand on the link:
//! a ToR or host link carries hundreds, most of them bottlenecked elsewhere
//! and untouched by the change. Any free set gives the exact result once the
//! checks pass, so the choice only decides how many rounds and how much
//! work a solve takes. When a check fails and no fixed demand is found to
//! free (rounding at the tolerance), the link joins the *region* R, whose
//! every demand is free and whose capacity is filled whole.
//!
//! With one class both checks read only a link's kept load and level, so a
//! solve costs time in proportion to the free demands, not to the demands of
//! the links they cross.
//!
//! After a violation the free set grows and the fill is redone; when nothing
//! is violated the certificate holds for every demand (free ones by the
//! checks, fixed ones because their bottleneck is untouched or checked), so
//! the allocation is the unique max-min fair one. The free set only grows,
//! so a solve ends; in the worst case every demand is free and the result is
//! a full solve. Tolerances are relative, [`crate::EPS`].
//!
//! Priority classes. A demand may carry a class (lower is served first):
//! classes are served in strict priority, each max-min fair on what the
//! classes before it left (the allocation rule of FIFO and Baraat). The
//! certificate generalizes: a demand's bottleneck is a link saturated by its
//! own and higher classes where no demand of its class has a higher
//! normalized rate; the fill serves the free demands class by class.
//!
//! Correctness properties, checked against the slow reference in
//! `tests/differential.rs` after every change of random sequences: rates equal
//! a from-scratch weighted max-min of the active demands.

use crate::maxmin::MaxMin;
use crate::EPS;
use coflowkit_model::LinkId;

/// Relative change below which a rate or level counts as unchanged.
const TOL: f64 = 1e-9;

const NONE: u32 = u32::MAX;

/// What the solver keeps per demand (see `IncrementalMaxMin::dem`).
#[derive(Debug, Clone, Copy)]
#[repr(align(64))]
struct Demand {
    rate: f64,
    // This round's rate, while the demand is free.
    new_rate: f64,
    weight: f64,
    class: u64,
    path_start: u32,
    count: u32,
    // The link recorded as its bottleneck (NONE if none), and its place in
    // that link's `rec`.
    bn: u32,
    rec_at: u32,
    // Stamp: free in the round of this epoch.
    mark: u32,
    path_len: u8,
}

impl Default for Demand {
    fn default() -> Demand {
        Demand {
            rate: 0.0,
            new_rate: 0.0,
            weight: 0.0,
            class: 0,
            path_start: 0,
            count: 0,
            bn: NONE,
            rec_at: 0,
            mark: 0,
            path_len: 0,
        }
    }
}

/// Weighted max-min rates over a fixed set of links, updated incrementally as
/// demands (each standing for `count` identical flows over one path) change.
#[derive(Debug, Clone, Default)]
pub struct IncrementalMaxMin {
    capacity: Vec<f64>,
    // Per demand (caller-chosen dense ids), all in one record: a round
    // reads most fields of each free demand, and the demands are scattered
    // over millions of ids, so one cache line per demand instead of one per
    // field is most of a solve's memory traffic.
    dem: Vec<Demand>,
    // Paths, and for each path position the demand's index in that link's list.
    paths: Vec<u32>,
    slot: Vec<u32>,
    // Per link: the demands with count > 0 crossing it.
    adj: Vec<Vec<u32>>,
    // Links whose demand set changed since the last solve.
    dirty: Vec<u32>,
    // Demands whose count or class changed since the last solve, and
    // demands the last solve left without a bottleneck (rounding at the
    // tolerance): with the demands recorded at dirty links they are the
    // first free demands of the next solve.
    seeds: Vec<u32>,
    // Per link: what its demands use (sum of count x rate), kept up to date
    // by every count and rate change, so that a link's use and saturation
    // never need a pass over its demands (a core link carries thousands).
    load: Vec<f64>,
    // Scratch per link, stamped by epoch: the old and new use of the free
    // demands crossing it this round.
    free_use_stamp: Vec<u32>,
    free_old_use: Vec<f64>,
    free_new_use: Vec<f64>,
    // The certificate, kept: per demand, the link found to be its
    // bottleneck (NONE if none); per link, how many demands have it as
    // theirs, and a level no demand on it exceeds (beyond TOL), which is the
    // level of those demands when there are any. A fixed demand keeps its
    // certificate unless its own bottleneck changes, so only links with
    // fixed demands recorded there need checking after a fill.
    rec: Vec<Vec<u32>>,
    lvl: Vec<f64>,
    // Scratch per link (stamped like the uses): free demands recorded
    // there, the highest new level of a free demand on it, and whether
    // every demand on it is free this round.
    free_bn: Vec<u32>,
    free_max: Vec<f64>,
    all_free: Vec<u32>,
    // Per free demand (by position), the bottleneck found this round.
    new_bn: Vec<u32>,
    // Whether any demand ever had a class other than 0: with one class a
    // link's state is its load and level, and the checks need no pass over
    // its demands.
    multi_class: bool,
    // Scratch, stamped by epoch.
    epoch: u32,
    link_mark: Vec<u32>,
    in_region: Vec<u32>,
    region: Vec<u32>,
    first_free: Vec<u32>,
    boundary: Vec<u32>,
    free: Vec<u32>,
    residual: Vec<f64>,
    solver: MaxMin,
    // Scratch for the certificate on one link: (class, level, use) of its demands.
    on_link: Vec<(u64, f64, f64)>,
    // New-rate summaries of this round, computed once per link: an arena
    // and, per link, its range there (valid when the stamp is this round's).
    summaries: Vec<(u64, f64, f64)>,
    summary_at: Vec<(u32, u32)>,
    summary_stamp: Vec<u32>,
    rates: Vec<f64>,
    blocking: Vec<u32>,
    // Per link, stamped by round: the lowest (class, level) of a free demand
    // blocked there, and the links so stamped.
    block_stamp: Vec<u32>,
    block_key: Vec<(u64, f64)>,
    blocked: Vec<u32>,
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
            load: vec![0.0; n],
            free_use_stamp: vec![0; n],
            free_old_use: vec![0.0; n],
            free_new_use: vec![0.0; n],
            rec: vec![Vec::new(); n],
            lvl: vec![0.0; n],
            free_bn: vec![0; n],
            free_max: vec![0.0; n],
            all_free: vec![0; n],
            summary_at: vec![(0, 0); n],
            summary_stamp: vec![0; n],
            block_stamp: vec![0; n],
            block_key: vec![(0, 0.0); n],
            solver: MaxMin::new(n),
            capacity,
            ..IncrementalMaxMin::default()
        }
    }

    /// Declares demand `d` with its path and weight (> 0), in class 0, with
    /// no flows yet. A demand's path and weight are fixed once declared.
    pub fn declare(&mut self, d: u32, path: impl IntoIterator<Item = LinkId>, weight: f64) {
        self.declare_in(d, path, weight, 0);
    }

    /// Declares demand `d` in priority class `class` (lower is served first).
    pub fn declare_in(
        &mut self,
        d: u32,
        path: impl IntoIterator<Item = LinkId>,
        weight: f64,
        class: u64,
    ) {
        let di = d as usize;
        if self.dem.len() <= di {
            self.dem.resize(di + 1, Demand::default());
        }
        debug_assert!(self.dem[di].weight == 0.0, "demand {d} declared twice");
        self.dem[di].path_start = self.paths.len() as u32;
        let before = self.paths.len();
        self.paths.extend(path.into_iter().map(|l| l.0));
        self.dem[di].path_len = (self.paths.len() - before) as u8;
        self.slot.resize(self.paths.len(), u32::MAX);
        self.dem[di].weight = weight;
        self.dem[di].class = class;
        self.multi_class |= class != 0;
    }

    /// Moves demand `d` to priority class `class`.
    pub fn set_class(&mut self, d: u32, class: u64) {
        let di = d as usize;
        if self.dem[di].class == class {
            return;
        }
        self.dem[di].class = class;
        self.multi_class |= class != 0;
        if self.dem[di].count > 0 {
            self.seeds.push(d);
            for k in self.path_range(di) {
                self.dirty.push(self.paths[k]);
            }
        }
    }

    /// Whether demand `d` was declared.
    pub fn is_declared(&self, d: u32) -> bool {
        self.dem.get(d as usize).is_some_and(|x| x.weight > 0.0)
    }

    fn path_range(&self, d: usize) -> std::ops::Range<usize> {
        let s = self.dem[d].path_start as usize;
        s..s + self.dem[d].path_len as usize
    }

    /// Sets how many flows demand `d` stands for (0 removes it).
    pub fn set_count(&mut self, d: u32, count: u32) {
        let di = d as usize;
        let old = self.dem[di].count;
        if old == count {
            return;
        }
        self.dem[di].count = count;
        let range = self.path_range(di);
        let delta = (count as f64 - old as f64) * self.dem[di].rate;
        for k in range.clone() {
            self.load[self.paths[k] as usize] += delta;
        }
        if old == 0 {
            for k in range.clone() {
                let l = self.paths[k] as usize;
                self.slot[k] = self.adj[l].len() as u32;
                self.adj[l].push(d);
            }
        } else if count == 0 {
            self.record(di, NONE);
            // The rate is kept: a driver that still holds it for the demand
            // sees a change reported only if the demand comes back at
            // another rate.
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
        self.seeds.push(d);
        for k in range {
            self.dirty.push(self.paths[k]);
        }
    }

    /// How many flows demand `d` stands for.
    pub fn count(&self, d: u32) -> u32 {
        self.dem.get(d as usize).map_or(0, |x| x.count)
    }

    /// The per-flow rate of demand `d` (bits/s) after the last solve.
    pub fn rate(&self, d: u32) -> f64 {
        self.dem[d as usize].rate
    }

    /// What the demands crossing link `l` use (bits/s, the sum of count x
    /// rate) after the last solve: `l` is saturated when this reaches its
    /// capacity.
    pub fn load(&self, l: LinkId) -> f64 {
        self.load[l.0 as usize]
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
            self.summary_stamp.iter_mut().for_each(|m| *m = 0);
            self.block_stamp.iter_mut().for_each(|m| *m = 0);
            self.free_use_stamp.iter_mut().for_each(|m| *m = 0);
            self.dem.iter_mut().for_each(|x| x.mark = 0);
            self.epoch = 1;
        }
        self.epoch
    }

    /// Brings every rate up to date with the changes since the last solve and
    /// appends to `changed` the demands whose rate changed.
    pub fn solve(&mut self, changed: &mut Vec<u32>) {
        if self.dirty.is_empty() && self.seeds.is_empty() {
            return;
        }
        self.n_solves += 1;
        // The region keeps its own stamp for the whole solve; it starts
        // empty, and the first free demands are the changed ones and those
        // with their bottleneck on a link that changed: every other demand
        // keeps its bottleneck unless a fill moves it, which the checks see.
        let region_stamp = self.next_epoch();
        self.region.clear();
        let mut seeds = std::mem::take(&mut self.seeds);
        for i in 0..self.dirty.len() {
            let l = self.dirty[i] as usize;
            if self.link_mark[l] != region_stamp {
                self.link_mark[l] = region_stamp;
                seeds.extend_from_slice(&self.rec[l]);
            }
        }
        let dem = &self.dem;
        seeds.retain(|&d| dem[d as usize].count > 0);
        self.first_free = seeds;
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
            let r = self.rates[i];
            let old = self.dem[d].rate;
            if (r - old).abs() > TOL * old.abs().max(r.abs()) {
                changed.push(d as u32);
            }
            if r != old {
                let delta = self.dem[d].count as f64 * (r - old);
                for k in self.path_range(d) {
                    self.load[self.paths[k] as usize] += delta;
                }
            }
            self.dem[d].rate = r;
        }
        // The certificate the last round found, and the links' levels.
        for k in 0..self.free.len() {
            let d = self.free[k] as usize;
            let new = self.new_bn[k];
            if self.dem[d].bn != new {
                self.record(d, new);
            }
            if new == NONE {
                self.seeds.push(d as u32);
            }
            for p in self.path_range(d) {
                let l = self.paths[p] as usize;
                self.lvl[l] = if self.in_region[l] == region_stamp {
                    self.free_max[l]
                } else {
                    self.lvl[l].max(self.free_max[l])
                };
            }
        }
        // Region links carry only free demands: their use is recomputed
        // exactly, so rounding in the running sums cannot build up where
        // changes happen.
        for i in 0..self.region.len() {
            let l = self.region[i] as usize;
            self.load[l] = self.adj[l]
                .iter()
                .map(|&d| self.dem[d as usize].count as f64 * self.dem[d as usize].rate)
                .sum();
        }
    }

    /// One fill over the current region; returns whether the region grew.
    fn fill_round(&mut self, region_stamp: u32) -> bool {
        let ep = self.next_epoch();
        // Free demands: the first ones and every demand crossing the
        // region, by (class, id).
        self.free.clear();
        for &d in &self.first_free {
            if self.dem[d as usize].mark != ep {
                self.dem[d as usize].mark = ep;
                self.free.push(d);
            }
        }
        for &l in &self.region {
            for &d in &self.adj[l as usize] {
                if self.dem[d as usize].mark != ep {
                    self.dem[d as usize].mark = ep;
                    self.free.push(d);
                }
            }
        }
        if self.multi_class {
            let dem = &self.dem;
            self.free
                .sort_unstable_by_key(|&d| (dem[d as usize].class, d));
        } else {
            self.free.sort_unstable();
        }
        for &l in &self.region {
            self.all_free[l as usize] = ep;
        }
        // Boundary links; what the fixed demands use there.
        self.boundary.clear();
        for &d in &self.free {
            for k in self.path_range(d as usize) {
                let l = self.paths[k];
                let li = l as usize;
                if self.in_region[li] != region_stamp && self.link_mark[li] != ep {
                    self.link_mark[li] = ep;
                    self.boundary.push(l);
                }
            }
        }
        // What the free demands use of each link they cross, at old rates:
        // the fixed demands use the rest of the link's load.
        for &d in &self.free {
            let di = d as usize;
            let old = self.dem[di].count as f64 * self.dem[di].rate;
            for k in self.path_range(di) {
                let li = self.paths[k] as usize;
                if self.free_use_stamp[li] != ep {
                    self.free_use_stamp[li] = ep;
                    self.free_old_use[li] = 0.0;
                    self.free_new_use[li] = 0.0;
                    self.free_bn[li] = 0;
                    self.free_max[li] = 0.0;
                }
                self.free_old_use[li] += old;
                self.free_bn[li] += (self.dem[di].bn == li as u32) as u32;
            }
        }
        for &l in &self.boundary {
            let li = l as usize;
            let fixed = self.load[li] - self.free_old_use[li];
            self.residual[li] = (self.capacity[li] - fixed).max(0.0);
        }
        for &l in &self.region {
            self.residual[l as usize] = self.capacity[l as usize];
        }
        // Fill the free demands class by class.
        self.rates.clear();
        let mut i = 0;
        while i < self.free.len() {
            let c = self.dem[self.free[i] as usize].class;
            let mut j = i;
            self.solver.clear();
            while j < self.free.len() && self.dem[self.free[j] as usize].class == c {
                let d = self.free[j] as usize;
                let r = self.path_range(d);
                self.solver.push(
                    self.paths[r].iter().map(|&l| LinkId(l)),
                    self.dem[d].weight,
                    self.dem[d].count,
                    f64::INFINITY,
                );
                j += 1;
            }
            let rates = self.solver.solve(&mut self.residual);
            self.rates.extend_from_slice(rates);
            i = j;
        }
        // Free demands' new rates, by demand id, for the certificate.
        for (k, &d) in self.free.iter().enumerate() {
            let di = d as usize;
            self.dem[di].new_rate = self.rates[k];
            let new = self.dem[di].count as f64 * self.rates[k];
            let level = self.rates[k] / self.dem[di].weight;
            for p in self.path_range(di) {
                let l = self.paths[p] as usize;
                self.free_new_use[l] += new;
                self.free_max[l] = self.free_max[l].max(level);
            }
        }
        let mut grew = false;
        self.summaries.clear();
        // Fixed demands on the boundary must keep their bottleneck.
        for b in 0..self.boundary.len() {
            let l = self.boundary[b] as usize;
            // Only a link where fixed demands have their bottleneck matters;
            // they are at its level (`lvl`), the highest on it.
            if self.in_region[l] == region_stamp || self.rec[l].len() as u32 == self.free_bn[l] {
                continue;
            }
            if !self.multi_class {
                if !self.full(self.new_use(l), l) || self.free_max[l] > self.lvl[l] * (1.0 + TOL) {
                    // Only the fixed demands recorded here relied on it:
                    // they are freed, the link stays on the boundary.
                    let before = self.first_free.len();
                    for &e in &self.rec[l] {
                        if self.dem[e as usize].mark != ep {
                            self.first_free.push(e);
                        }
                    }
                    if self.first_free.len() == before {
                        self.in_region[l] = region_stamp;
                        self.region.push(l as u32);
                    }
                    grew = true;
                }
                continue;
            }
            // New first: computing it reuses `on_link`, which then takes the old.
            let new = self.new_summary(l, ep);
            self.summarize(l, ep, false);
            let (old, new) = (&self.on_link, &self.summaries[new]);
            // The fixed demands that had their bottleneck here and lost it
            // are freed; the link stays on the boundary.
            let before = self.first_free.len();
            for &e in &self.adj[l] {
                let ei = e as usize;
                if self.dem[ei].mark != ep && {
                    let level = self.dem[ei].rate / self.dem[ei].weight;
                    valid(old, self.capacity[l], self.dem[ei].class, level)
                        && !valid(new, self.capacity[l], self.dem[ei].class, level)
                } {
                    self.first_free.push(e);
                }
            }
            if self.first_free.len() > before {
                grew = true;
            }
        }
        // Free demands must have a bottleneck; where they have none, the
        // saturated boundary links on their path join the region.
        self.new_bn.clear();
        self.new_bn.resize(self.free.len(), NONE);
        for k in 0..self.free.len() {
            let d = self.free[k] as usize;
            let level = self.rates[k] / self.dem[d].weight;
            let mut has = false;
            let mut blocking = std::mem::take(&mut self.blocking);
            blocking.clear();
            for p in self.path_range(d) {
                let l = self.paths[p] as usize;
                // Only a full link can be a bottleneck or block.
                if !self.full(self.new_use(l), l) {
                    continue;
                }
                if self.bottleneck_of(l, self.dem[d].class, level, ep) {
                    self.new_bn[k] = l as u32;
                    has = true;
                    break;
                }
                // With one class, a link where no fixed demand can be above
                // (they are at most at `lvl`) blocks only through free
                // demands, which freeing more cannot move.
                if self.in_region[l] != region_stamp
                    && (self.multi_class || self.lvl[l] * (1.0 - TOL) > level)
                {
                    blocking.push(l as u32);
                }
            }
            if !has {
                // Each saturated link on its path holds a fixed demand above
                // it (or, with classes, one of a later class using it):
                // those are freed, once per link and round, for the lowest
                // (class, level) blocked there.
                let key = (self.dem[d].class, level);
                for &l in &blocking {
                    let li = l as usize;
                    if self.block_stamp[li] != ep {
                        self.block_stamp[li] = ep;
                        self.block_key[li] = key;
                        self.blocked.push(l);
                    } else if key < self.block_key[li] {
                        self.block_key[li] = key;
                    }
                }
            }
            self.blocking = blocking;
        }
        for b in 0..self.blocked.len() {
            let l = self.blocked[b] as usize;
            if self.in_region[l] == region_stamp {
                continue;
            }
            let (class, level) = self.block_key[l];
            let before = self.first_free.len();
            for &e in &self.adj[l] {
                let x = &self.dem[e as usize];
                if x.mark != ep
                    && ((x.class == class && (x.rate / x.weight) * (1.0 - TOL) > level)
                        || (x.class > class && x.rate > 0.0))
                {
                    self.first_free.push(e);
                }
            }
            if self.first_free.len() == before {
                // Nothing found above (rounding at the tolerance): the whole
                // link joins the region, as a full solve there would.
                self.in_region[l] = region_stamp;
                self.region.push(l as u32);
            }
            grew = true;
        }
        self.blocked.clear();
        grew
    }

    /// Whether full link `l` is a bottleneck, at the new rates, for a free
    /// demand of `class` at normalized `level`.
    fn bottleneck_of(&mut self, l: usize, class: u64, level: f64, ep: u32) -> bool {
        if !self.multi_class {
            if self.all_free[l] == ep {
                return level >= self.free_max[l] * (1.0 - TOL);
            }
            // Fixed demands are at most at `lvl`, and exactly there when
            // some have their bottleneck here.
            let bound = self.lvl[l].max(self.free_max[l]);
            if level >= bound * (1.0 - TOL) {
                return true;
            }
            if self.rec[l].len() as u32 > self.free_bn[l] {
                return false;
            }
        }
        let range = self.new_summary(l, ep);
        let summary = &self.summaries[range];
        let ok = valid(summary, self.capacity[l], class, level);
        if ok && !self.multi_class {
            // The exact highest level, for those recorded here: `lvl` was
            // only a bound, stale since the demands at it left or slowed.
            self.lvl[l] = summary[0].1;
        }
        ok
    }

    /// Records link `l` (or NONE) as demand `d`'s bottleneck.
    fn record(&mut self, d: usize, l: u32) {
        let old = self.dem[d].bn;
        if old != NONE {
            let list = &mut self.rec[old as usize];
            let at = self.dem[d].rec_at as usize;
            list.swap_remove(at);
            if let Some(&moved) = list.get(at) {
                self.dem[moved as usize].rec_at = at as u32;
            }
        }
        if l != NONE {
            self.dem[d].rec_at = self.rec[l as usize].len() as u32;
            self.rec[l as usize].push(d as u32);
        }
        self.dem[d].bn = l;
    }

    /// Whether use `u` fills link `l` (within [`EPS`]).
    fn full(&self, u: f64, l: usize) -> bool {
        u >= self.capacity[l] * (1.0 - EPS)
    }

    /// What link `l` (crossed by a free demand) carries at the new rates.
    /// (On a region link every demand is free and the first two cancel.)
    fn new_use(&self, l: usize) -> f64 {
        self.load[l] - self.free_old_use[l] + self.free_new_use[l]
    }

    /// The range in `summaries` of link `l`'s summary at the new rates,
    /// computed the first time this round asks.
    fn new_summary(&mut self, l: usize, ep: u32) -> std::ops::Range<usize> {
        if self.summary_stamp[l] != ep {
            self.summarize(l, ep, true);
            let start = self.summaries.len();
            self.summaries.extend_from_slice(&self.on_link);
            self.summary_at[l] = (start as u32, self.on_link.len() as u32);
            self.summary_stamp[l] = ep;
        }
        let (start, len) = self.summary_at[l];
        start as usize..(start + len) as usize
    }

    /// Fills `on_link` with link `l`'s (class, highest level in the class,
    /// use of this and higher classes), by class, from old or new rates.
    fn summarize(&mut self, l: usize, ep: u32, new: bool) {
        self.on_link.clear();
        for &d in &self.adj[l] {
            let d = d as usize;
            let r = if new && self.dem[d].mark == ep {
                self.dem[d].new_rate
            } else {
                self.dem[d].rate
            };
            self.on_link.push((
                self.dem[d].class,
                r / self.dem[d].weight,
                self.dem[d].count as f64 * r,
            ));
        }
        if self.on_link.iter().any(|s| s.0 != self.on_link[0].0) {
            self.on_link.sort_unstable_by_key(|a| a.0);
        }
        // Merge by class: max level, then cumulative use.
        let mut w = 0;
        for i in 0..self.on_link.len() {
            let (c, v, u) = self.on_link[i];
            if w > 0 && self.on_link[w - 1].0 == c {
                let s = &mut self.on_link[w - 1];
                s.1 = s.1.max(v);
                s.2 += u;
            } else {
                self.on_link[w] = (c, v, u);
                w += 1;
            }
        }
        self.on_link.truncate(w);
        let mut cum = 0.0;
        for s in &mut self.on_link {
            cum += s.2;
            s.2 = cum;
        }
    }
}

/// Whether a demand of `class` at normalized `level` has its bottleneck on a
/// link of `capacity` summarized as (class, highest level, cumulative use):
/// its own and higher classes fill the link and no demand of its class is
/// higher.
fn valid(summary: &[(u64, f64, f64)], capacity: f64, class: u64, level: f64) -> bool {
    match summary.binary_search_by(|s| s.0.cmp(&class)) {
        Ok(i) => summary[i].2 >= capacity * (1.0 - EPS) && level >= summary[i].1 * (1.0 - TOL),
        Err(_) => false,
    }
}
