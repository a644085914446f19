//! `varys`: smallest-effective-bottleneck-first with MADD rates and
//! work-conserving backfill (Varys, SIGCOMM 2014, 5.1-5.3, Pseudocode 1).
//!
//! At every flow start and completion (`recompute=flow`, the default; with
//! `recompute=coflow` only at coflow events, as Varys's coordinator and
//! CoflowSim do: a coflow released or completed, flows started (a coflow
//! changed), or a coflow's last sending flow finished (it has nothing left
//! to send, though a later stage or a Finishes-Before parent may keep it
//! from completing); so a flow that finishes early leaves its share idle
//! until the next coflow event):
//! 1. Order: each active coflow's effective bottleneck Γ on its remaining
//!    bytes over the full link capacities (the time it would take alone),
//!    values within `NANOS_TIE` (1 µs, plus float noise) counting as equal;
//!    smallest first, ties by release, then arrival, then id. A run of ties is anchored at
//!    its smallest Γ (`sort_with_ties`): in a chain of near-ties a Γ more
//!    than 1 µs above the smallest starts the next run. Only started flows
//!    count: a later wave or stage is not known in advance (coflows with no
//!    flow sending are left out).
//! 2. MADD: in that order, each coflow is given the rates that finish all its
//!    flows together after Γ', its bottleneck on the capacity the coflows
//!    before it left (rounded up to a whole nanosecond, float noise aside:
//!    `ceil_ns`); a coflow that meets
//!    a full link waits.
//! 3. Backfill (work conservation): in the same order, each flow is given
//!    the least residual capacity along its path on top of its MADD rate, as
//!    Varys's "distribute unused bandwidth" step and CoflowSim do. Inside a
//!    coflow, flows are visited in order of (first link, last link, flow
//!    index), i.e. (source, destination) on the big switch.
//!
//! Classes: every flow of the coflow in place `i` of the order has priority
//! class `i` (0 first), in its proportional group or backfilled, as a
//! varys built afresh on the same state gives it: when a coflow moves in
//! the order, all its flows take their new class (the only walk over a
//! coflow's flows that is not backfill's, and only for coflows that moved).
//!
//! How it stays cheap on coflows of 20,000 flows: the flows of a coflow form
//! one proportional group of the [`Allocation`] (they progress in proportion
//! to what each has left and finish together at the group's deadline), so
//! MADD is one deadline per coflow; the state keeps each group's bytes left
//! per link, so Γ and Γ' cost one pass over the coflow's links; backfill
//! walks only (first link, last link) pairs whose links both have room, and
//! a backfilled flow leaves the group for that round.
//!
//! Why an event is not cheaper still: with `recompute=flow` most events are
//! one backfilled flow finishing (FB2010: 518,507 events, `fair` 43,978),
//! and although MADD's deadlines almost never move (2,122 changes in
//! 887,979 on FB2010), every loaded link's bytes left, Γ, the residual
//! capacities and so each backfilled flow's rate move with time: the
//! results are kept bit for bit, so each event redoes that arithmetic, in
//! the same order. What is kept cheap is the memory it walks (a backfill
//! visit costs cache misses, not arithmetic): each first link's flows are
//! one flat list of (last link, flow), a last link's place in it found by
//! rank in a bit set (`FirstEntry::place`); while every path is (first
//! link, last link), as on the big switch, no path is read; the solo flows
//! carry their two links; Γ on one capacity is the largest load divided
//! once (`x * 8e9 / bps` is monotone in floats); the first coflow's Γ' is
//! its Γ. Debug builds check each shortcut against the plain computation
//! (`bottleneck_ns` per link, a binary search for the place, the path).
//!
//! What backfill does follow what changed: its walk over a coflow decides
//! by which of the coflow's links are full and nothing else, so a coflow
//! with the same flows takes the same flows again up to the first pair
//! (first link, last link) in visiting order with a link whose room at its
//! turn differs from last time (`first_moved`; its other links' room is
//! never read), or up to the first flow it took that has left since (a
//! flow it passed leaving changes nothing). Those are replayed (`replay`:
//! the same arithmetic in the same order, so the same bits), checking that
//! each leaves the same links full as last time; the walk resumes after the
//! first that does not, else at that pair or past that flow (`walk`'s
//! `from`). Replayed flows reuse the bytes left `loads` read at the same
//! instant, and their allocated rates are kept beside them: most stand
//! (within `Allocation::set_rate`'s 1e-12) and are not written. FB2010: 62%
//! of coflow visits replay whole, the others in part (all but 974 of
//! 876,289), and 66% of the flows backfilled are replayed; 94% of
//! backfilled rates stand. Debug builds walk each coflow in full too
//! and compare flows, room and residual capacities bit for bit
//! (`check_walk`), and the kept bytes and rates against the state.

use crate::descriptor::{Kind, Needs, Param, Parts, SchedulerDescriptor};
use crate::AnyScheduler;
use crate::{Allocation, Changes, Clairvoyant, CoflowIdx, FlowIdx, KnowsSizes, Scheduler};
use coflowkit_alloc::EPS;
use coflowkit_model::stats::{sort_with_ties, NANOS_TIE};
use coflowkit_model::{ceil_ns, Time};

/// `varys`: smallest effective bottleneck first with MADD and backfill.
pub const VARYS: SchedulerDescriptor = SchedulerDescriptor {
    cost: 4.5,
    parts: Parts::NONE,
    name: "varys",
    description: "smallest effective bottleneck first with MADD and backfill (Varys)",
    paper: "Varys (SIGCOMM 2014) 5.1-5.3, Pseudocode 1",
    params: &[Param {
        key: "recompute",
        kind: Kind::Choice(&["coflow", "flow"]),
        default: "flow",
        unit: "",
        help: "recompute the schedule at coflow events only, or also at every flow's",
    }],
    needs: Needs::SIZES,
    build: |p, _| {
        let per_flow = p.choice("recompute")? == "flow";
        Ok(AnyScheduler::Clairvoyant(Box::new(Varys::new(per_flow))))
    },
};

/// Per-coflow bookkeeping.
#[derive(Debug, Default, Clone)]
struct CoflowMemo {
    // Active flows per link; and by first link of their paths (sorted by
    // link), then last link.
    links: Vec<(u32, u32)>,
    first: Vec<FirstEntry>,
    // Flows made solo by backfill in the last round, in the order backfill
    // visited them, with their first and last links.
    solo: Vec<(FlowIdx, u32, u32)>,
    // Active flows whose paths are not (first link, last link), as on the
    // big switch: while there are none, backfill needs no path look-ups.
    n_long: u32,
    // Bytes left per link (aligned with `links`) and the ordering key, valid
    // unless `stale` (the coflow changed or progressed since).
    load: Vec<f64>,
    gamma_key: f64,
    stale: bool,
    // The tie-break: (release, arrival, id), set at release.
    tie: (Time, Time, u64),
    // Whether flows joined since the last backfill walk (or the driver
    // resynced).
    changed: bool,
    // The first of the last walk's flows to have left since, as (first
    // link, last link, flow): the walk is the same up to it (a flow it
    // passed leaving changes nothing).
    cut: Option<(u32, u32, FlowIdx)>,
    // The links with active flows, as a bit set (those of `links`), and
    // per link its place in `links` (`u32::MAX`: none).
    mask: Vec<u64>,
    link_at: Vec<u32>,
    // The last walk: the links with room when it began, and per flow of
    // `solo` which of its links it left full (bit 0 first, bit 1 last).
    walk_free: Vec<u64>,
    walk_fills: Vec<u8>,
    // What each flow of `solo` has left, as `loads` read it this round
    // (the coflow had flows in `solo`, so it was stale).
    solo_rem: Vec<f64>,
    // The place in the order whose class the flows of `solo` have.
    class_at: u32,
    // The rate each flow of `solo` has in the allocation (solo since the
    // walk that took it; only this scheduler sets it).
    solo_rate: Vec<f64>,
}

/// The active flows of a coflow that leave through one first link.
#[derive(Debug, Default, Clone)]
struct FirstEntry {
    link: u32,
    // Bit set over the last links of these flows, and per word of it the
    // number of flows with last links in the words before.
    bits: Vec<u64>,
    below: Vec<u32>,
    // Last links with more than one flow: while there are none, a last
    // link's place in `dests` is `below` plus the set bits under it.
    n_multi: u32,
    // (last link, flow), sorted: by last link, then in flow order. Flat, so
    // that a visit reads the flow next to its last link.
    dests: Vec<(u32, FlowIdx)>,
}

impl FirstEntry {
    /// Where the flows with last link `d` (in the entry, in word `w` of
    /// `bits`) start in `dests`.
    #[inline]
    fn place(&self, w: usize, d: u32) -> usize {
        let before = self.below[w] as usize;
        let at = if self.n_multi == 0 {
            before + (self.bits[w] & ((1u64 << (d % 64)) - 1)).count_ones() as usize
        } else {
            before + self.dests[before..].partition_point(|x| x.0 < d)
        };
        debug_assert_eq!(at, self.dests.partition_point(|x| x.0 < d));
        at
    }
}

/// Adds (`up`) or removes flow `f` with first link `s` and last link `d`.
fn file_flow(first: &mut Vec<FirstEntry>, s: u32, d: u32, f: FlowIdx, up: bool, n_links: usize) {
    let i = match first.binary_search_by_key(&s, |e| e.link) {
        Ok(i) => i,
        Err(i) if up => {
            first.insert(
                i,
                FirstEntry {
                    link: s,
                    bits: vec![0; n_links.div_ceil(64)],
                    below: vec![0; n_links.div_ceil(64)],
                    n_multi: 0,
                    dests: vec![],
                },
            );
            i
        }
        Err(_) => return,
    };
    let e = &mut first[i];
    let lo = e.dests.partition_point(|x| x.0 < d);
    let hi = lo + e.dests[lo..].partition_point(|x| x.0 == d);
    let (w, bit) = (d as usize / 64, 1u64 << (d % 64));
    if up {
        // In flow order, also for flows that start after others.
        let k = lo + e.dests[lo..hi].partition_point(|x| x.1 < f);
        e.dests.insert(k, (d, f));
        match hi - lo {
            0 => e.bits[w] |= bit,
            1 => e.n_multi += 1,
            _ => {}
        }
        for b in &mut e.below[w + 1..] {
            *b += 1;
        }
    } else if let Some(j) = e.dests[lo..hi].iter().position(|x| x.1 == f) {
        e.dests.remove(lo + j);
        match hi - lo {
            1 => e.bits[w] &= !bit,
            2 => e.n_multi -= 1,
            _ => {}
        }
        for b in &mut e.below[w + 1..] {
            *b -= 1;
        }
        if e.dests.is_empty() {
            first.remove(i);
        }
    }
}

/// Counts one flow more (`up`) or less on link `l` of coflow `m`; links
/// with no flows left are dropped from its list (the last one takes the
/// place) and from its mask.
fn bump(m: &mut CoflowMemo, l: u32, up: bool) {
    let (list, at) = (&mut m.links, &mut m.link_at);
    let bit = 1u64 << (l % 64);
    let i = at[l as usize];
    debug_assert_eq!(
        list.iter().position(|(x, _)| *x == l),
        (i != u32::MAX).then_some(i as usize)
    );
    match i {
        u32::MAX if up => {
            at[l as usize] = list.len() as u32;
            list.push((l, 1));
            m.mask[l as usize / 64] |= bit;
        }
        u32::MAX => {}
        i if up => list[i as usize].1 += 1,
        i => {
            let i = i as usize;
            list[i].1 -= 1;
            if list[i].1 == 0 {
                list.swap_remove(i);
                at[l as usize] = u32::MAX;
                if let Some(&(moved, _)) = list.get(i) {
                    at[moved as usize] = i as u32;
                }
                m.mask[l as usize / 64] &= !bit;
            }
        }
    }
}

fn full(residual: &[f64], l: u32) -> bool {
    residual[l as usize] <= EPS * 1e9
}

/// Takes `extra` from link `l`'s residual capacity, and the link out of
/// `free_bits` once it is full.
#[inline(always)]
fn take(residual: &mut [f64], free_bits: &mut [u64], l: u32, extra: f64) {
    let li = l as usize;
    residual[li] -= extra;
    if residual[li] <= EPS * 1e9 {
        free_bits[li / 64] &= !(1 << (li % 64));
    }
}

/// Varys; see the module doc.
#[derive(Debug, Default)]
pub struct Varys {
    per_flow: bool,
    memo: Vec<CoflowMemo>,
    // (Γ, coflow), sorted; ties by the coflow's `CoflowMemo::tie`.
    order: Vec<(f64, CoflowIdx)>,
    residual: Vec<f64>,
    solo_next: Vec<(FlowIdx, u32, u32)>,
    free_bits: Vec<u64>,
    // Backfill's scratch: which links each flow walked left full; the room
    // each flow taken gets.
    fills_next: Vec<u8>,
    rates_next: Vec<f64>,
    extras: Vec<f64>,
    // The number of links, and the capacity every link has if all have the
    // same (the big switch); set at the first call.
    n_links: usize,
    uniform_cap: Option<f64>,
    // Each ordered coflow's MADD deadline this round.
    deadlines: Vec<Time>,
}

impl Varys {
    /// A Varys scheduler recomputing at every flow completion if `per_flow`,
    /// else only at coflow arrivals and completions.
    pub fn new(per_flow: bool) -> Varys {
        Varys {
            per_flow,
            ..Varys::default()
        }
    }

    fn track(&mut self, view: &Clairvoyant<'_>, f: FlowIdx, up: bool) {
        let c = view.coflow_of(f) as usize;
        if self.memo.len() <= c {
            self.memo.resize(c + 1, CoflowMemo::default());
        }
        let m = &mut self.memo[c];
        m.stale = true;
        m.changed |= up;
        if m.link_at.len() != view.n_links() {
            m.mask.resize(view.n_links().div_ceil(64), 0);
            m.link_at.resize(view.n_links(), u32::MAX);
        }
        let path = view.path(f);
        for l in path {
            bump(m, l.0, up);
        }
        if path.len() != 2 {
            if up {
                m.n_long += 1;
            } else {
                m.n_long -= 1;
            }
        }
        file_flow(
            &mut m.first,
            path[0].0,
            path[path.len() - 1].0,
            f,
            up,
            view.n_links(),
        );
        if !up {
            if let Some(k) = m.solo.iter().position(|x| x.0 == f) {
                let (_, s, d) = m.solo.remove(k);
                if k < m.walk_fills.len() {
                    m.walk_fills.remove(k);
                }
                if k < m.solo_rate.len() {
                    m.solo_rate.remove(k);
                }
                if m.cut.is_none_or(|x| (s, d, f) < x) {
                    m.cut = Some((s, d, f));
                }
            }
        }
    }

    /// Takes note of what changed (new and finished flows, released
    /// coflows); returns whether to recompute the allocation. Kept out of
    /// `schedule` so that its hot loops compile on their own.
    #[inline(never)]
    fn note(&mut self, view: &Clairvoyant<'_>, changes: &Changes, out: &mut Allocation) -> bool {
        if self.n_links != view.n_links() {
            self.n_links = view.n_links();
            let caps = view.capacities();
            self.uniform_cap = caps
                .first()
                .copied()
                .filter(|&c| c > EPS * 1e9 && caps.iter().all(|&x| x == c));
        }
        for &c in &changes.arrived {
            if self.memo.len() <= c as usize {
                self.memo.resize(c as usize + 1, CoflowMemo::default());
            }
            self.memo[c as usize].tie = (view.release(c), view.arrival(c), view.coflow_id(c).0);
        }
        for &f in &changes.started {
            self.track(view, f, true);
            out.join_proportional(f, view.coflow_of(f));
        }
        // Whether a coflow sent its last started byte (it may not be
        // complete yet: a later stage, or a Finishes-Before parent).
        let mut drained = false;
        for &f in &changes.finished {
            self.track(view, f, false);
            drained |= self.memo[view.coflow_of(f) as usize].links.is_empty();
        }
        if changes.resynced {
            // Measured progress replaced the modelled one, and the driver
            // restarted the proportional groups paused: new loads and
            // deadlines for all.
            for &c in view.active_coflows() {
                if let Some(m) = self.memo.get_mut(c as usize) {
                    m.stale = true;
                    m.changed = true;
                }
            }
        }
        let recompute = self.per_flow
            || changes.resynced
            || !changes.arrived.is_empty()
            || !changes.started.is_empty()
            || !changes.finished_coflows.is_empty()
            || drained;
        if !recompute {
            return false;
        }
        // Members joining this round are not yet in the state's groups: count
        // them as solo for the loads.
        for &f in &changes.started {
            let path = view.path(f);
            let ends = (f, path[0].0, path[path.len() - 1].0);
            self.memo[view.coflow_of(f) as usize].solo.push(ends);
        }
        true
    }

    /// Bytes coflow `c` has left on each of its links, into its memo;
    /// returns its Γ over `cap` in ns (as [`Varys::bottleneck_ns`]).
    fn loads(&mut self, view: &Clairvoyant<'_>, c: CoflowIdx, cap: &[f64]) -> f64 {
        let m = &mut self.memo[c as usize];
        let (phi, w) = view.pgroup_link_weights(c);
        // Each link's load in its place in `links` (`link_at`): the group's
        // share, then the solo flows' bytes in their order.
        m.load.clear();
        m.load.extend(
            m.links
                .iter()
                .map(|&(l, _)| w.get(l as usize).map_or(0.0, |w| w * phi)),
        );
        m.solo_rem.clear();
        for &(f, s, d) in &m.solo {
            let rem = view.remaining(f);
            m.solo_rem.push(rem);
            if m.n_long == 0 {
                // The path is [s, d]: the loop below, without reading it.
                m.load[m.link_at[s as usize] as usize] += rem;
                m.load[m.link_at[d as usize] as usize] += rem;
            } else {
                for l in view.path(f) {
                    m.load[m.link_at[l.0 as usize] as usize] += rem;
                }
            }
        }
        if let Some(bps) = self.uniform_cap {
            // One capacity: `x * 8e9 / bps` is monotone in floats too, so
            // the largest load gives the largest quotient, bit for bit.
            let most = m.load.iter().fold(0.0, |a: f64, &x| a.max(x));
            let g = if most > 0.0 { most * 8e9 / bps } else { 0.0 };
            debug_assert_eq!(g.to_bits(), self.bottleneck_ns(c, cap).to_bits());
            return g;
        }
        let mut g: f64 = 0.0;
        for (&(l, _), &load) in m.links.iter().zip(&m.load) {
            if load > 0.0 {
                let bps = cap[l as usize];
                g = g.max(if bps <= EPS * 1e9 {
                    f64::INFINITY
                } else {
                    load * 8e9 / bps
                });
            }
        }
        g
    }

    /// max over the coflow's links of load / capacity, in ns (loads from
    /// its memo); infinite when a loaded link has no capacity.
    fn bottleneck_ns(&self, c: CoflowIdx, cap: &[f64]) -> f64 {
        let mut g: f64 = 0.0;
        let m = &self.memo[c as usize];
        for (&(l, n), &load) in m.links.iter().zip(&m.load) {
            if n == 0 || load <= 0.0 {
                continue;
            }
            let bps = cap[l as usize];
            if bps <= EPS * 1e9 {
                return f64::INFINITY;
            }
            g = g.max(load * 8e9 / bps);
        }
        g
    }

    /// Step 1: the sending coflows in SEBF order, into `order` (Γ of the
    /// coflows that changed or sent since, from their loads).
    #[inline(never)]
    fn order_coflows(&mut self, view: &Clairvoyant<'_>) {
        let caps = view.capacities();
        self.order.clear();
        for &c in view.active_coflows() {
            if self.memo[c as usize].links.is_empty() {
                // Nothing of it is sending (not started yet, or waiting for
                // a Finishes-Before parent).
                continue;
            }
            if self.memo[c as usize].stale {
                let g = self.loads(view, c, caps);
                let m = &mut self.memo[c as usize];
                m.gamma_key = g;
                m.stale = false;
            }
            let g = self.memo[c as usize].gamma_key;
            self.order.push((g, c));
        }
        let memo = &self.memo;
        sort_with_ties(
            &mut self.order,
            |x| x.0,
            |x| memo[x.1 as usize].tie,
            NANOS_TIE,
        );
    }

    /// Step 2: MADD, one deadline per coflow in `order` (into
    /// `deadlines`), taking the capacity it uses out of `residual`.
    #[inline(never)]
    fn madd(&mut self, now: Time, caps: &[f64], out: &mut Allocation) {
        self.residual.clear();
        self.residual.extend_from_slice(caps);
        // MADD: one deadline per coflow; every flow back in its group.
        let mut deadlines = std::mem::take(&mut self.deadlines);
        deadlines.clear();
        for i in 0..self.order.len() {
            let c = self.order[i].1;
            // Infinite when a link it loads is full: it waits (backfill
            // aside). The first coflow sees the full capacities: its Γ'
            // is its Γ, the same expression over the same loads.
            let gamma = if i == 0 {
                debug_assert_eq!(
                    self.memo[c as usize].gamma_key.to_bits(),
                    self.bottleneck_ns(c, &self.residual).to_bits()
                );
                self.memo[c as usize].gamma_key
            } else {
                self.bottleneck_ns(c, &self.residual)
            };
            // Γ' rounded up to a whole nanosecond, tolerant of float noise
            // (`ceil_ns`): a plain ceil turned 6,001,000.000000001 ns into
            // 6,001,001, which slowed the coflow by a hair and could leave
            // its next Γ out of a tie it had in exact arithmetic.
            let deadline = match ceil_ns(gamma, 1.0) {
                Some(d) if gamma.is_finite() => Time(now.0 + d.0.max(1)),
                _ => Time::NEVER,
            };
            out.set_deadline(c, deadline);
            deadlines.push(deadline);
            if deadline != Time::NEVER {
                // Capacity is taken at the exact MADD rates (the deadline is
                // rounded up, so the flows use a hair less).
                let span = gamma.max(1.0);
                let m = &self.memo[c as usize];
                for (&(l, n), &load) in m.links.iter().zip(&m.load) {
                    if n > 0 {
                        let used = load * 8e9 / span;
                        self.residual[l as usize] = (self.residual[l as usize] - used).max(0.0);
                    }
                }
            }
        }
        self.deadlines = deadlines;
    }

    /// Step 3: backfill, in the same order.
    #[inline(never)]
    fn backfill(&mut self, now: Time, view: &Clairvoyant<'_>, out: &mut Allocation) {
        // Backfill, in the same order. `free_bits`: links with room, as a
        // bit set kept current as backfill fills links.
        let words = view.n_links().div_ceil(64);
        self.free_bits.clear();
        self.free_bits.resize(words, 0);
        for (bits, room) in self.free_bits.iter_mut().zip(self.residual.chunks(64)) {
            for (b, &r) in room.iter().enumerate() {
                *bits |= ((r > EPS * 1e9) as u64) << b;
            }
        }
        for (i, &(_, c)) in self.order.iter().enumerate() {
            let deadline = self.deadlines[i];
            let m = &mut self.memo[c as usize];
            self.extras.clear();
            #[cfg(debug_assertions)]
            let start = self.residual.clone();
            // The walk's choices follow only which of the coflow's links are
            // full: with the same flows, it takes the flows it took last time
            // up to the first pair with a link whose room at its turn
            // differs, or just past the first taken flow that left since (a
            // flow it passed leaving changes nothing), as long as each leaves
            // the same links full (`replay` checks that as it goes); from
            // there on it is walked.
            let resumable =
                m.n_long == 0 && !m.changed && m.walk_free.len() == self.free_bits.len();
            let (kept, from) = if resumable {
                debug_assert_eq!(m.solo.len(), m.walk_fills.len());
                let at = match (first_moved(m, &self.free_bits), m.cut) {
                    (moved, None) => moved,
                    (moved, Some((s, d, f))) => {
                        let past = (s, d, f as u64 + 1);
                        Some(moved.map_or(past, |x| x.min(past)))
                    }
                };
                let k = at.map_or(m.solo.len(), |at| {
                    m.solo.partition_point(|&(f, s, d)| (s, d, f as u64) < at)
                });
                m.walk_free.clone_from(&self.free_bits);
                match replay(
                    &m.solo[..k],
                    &m.walk_fills[..k],
                    &mut self.residual,
                    &mut self.free_bits,
                    &mut self.extras,
                ) {
                    None => (k, at),
                    // Taken as the walk would, with other links left full:
                    // the walk goes on after it.
                    Some(j) => {
                        let (f, s, d) = m.solo[j];
                        (j + 1, Some((s, d, f as u64 + 1)))
                    }
                }
            } else {
                m.walk_free.clone_from(&self.free_bits);
                (0, Some((0, 0, 0)))
            };
            let whole = from.is_none();
            if let Some(from) = from {
                self.solo_next.clear();
                self.fills_next.clear();
                self.solo_next.extend_from_slice(&m.solo[..kept]);
                self.fills_next.extend_from_slice(&m.walk_fills[..kept]);
                if let Some(&(_, s, d)) = self.solo_next.last() {
                    // The last flow replayed may have left other links full.
                    self.fills_next[kept - 1] = fills(&self.residual, s, d);
                }
                walk(
                    m,
                    view,
                    from,
                    &mut self.residual,
                    &mut self.free_bits,
                    &mut self.solo_next,
                    &mut self.fills_next,
                    &mut self.extras,
                );
            }
            #[cfg(debug_assertions)]
            self.check_walk(c, view, start, whole);
            let m = &mut self.memo[c as usize];
            // A coflow that moved in the order: every one of its flows takes
            // its new place's class, the proportional group's members too
            // (backfill below sets the class only of the flows it takes or
            // hands back). Only the coflows that moved are walked.
            let moved = m.class_at != i as u32;
            if moved {
                for e in &m.first {
                    for &(_, f) in &e.dests {
                        out.set_class(f, i as u32);
                    }
                }
            }
            let taken = if whole { &m.solo } else { &self.solo_next };
            self.rates_next.clear();
            // The flows taken again in the same place have what they have
            // left from `loads`; their class stands if the coflow's place
            // does, and a coflow that moved has them all classed above.
            let known = kept;
            let classed = whole || moved;
            for (j, (&(f, _, _), &extra)) in taken.iter().zip(&self.extras).enumerate() {
                let madd = if deadline == Time::NEVER {
                    0.0
                } else {
                    let rem = if j < known {
                        m.solo_rem[j]
                    } else {
                        view.remaining(f)
                    };
                    debug_assert_eq!(rem.to_bits(), view.remaining(f).to_bits());
                    rem * 8e9 / ((deadline.0 - now.0) as f64)
                };
                let rate = madd + extra;
                if j < known {
                    // `set_rate` on a solo flow, without reading the
                    // allocation: mostly the rate stands (within 1e-12).
                    let old = m.solo_rate[j];
                    debug_assert!(out.group(f) == crate::SOLO);
                    debug_assert_eq!(out.rate(f).to_bits(), old.to_bits());
                    if !crate::rate_stands(old, rate) {
                        out.set_rate(f, rate);
                        m.solo_rate[j] = rate;
                    }
                } else {
                    out.set_rate(f, rate);
                }
                if !whole {
                    self.rates_next.push(if j < known {
                        m.solo_rate[j]
                    } else {
                        out.rate(f)
                    });
                }
                if !classed {
                    out.set_class(f, i as u32);
                }
            }
            let m = &mut self.memo[c as usize];
            if !whole {
                // Flows backfilled last round and not this one go back to
                // the group (those backfilled again stay solo with their new
                // rate). Both lists are mostly the same flows in the same
                // (visiting) order, (first link, last link, flow), so a walk
                // along both finds them (`solo` is out of order only where
                // flows joined: a search there; a mark per flow would cost
                // a cache miss each).
                let key = |x: &(FlowIdx, u32, u32)| (x.1, x.2, x.0);
                let next = &self.solo_next;
                let mut j = 0;
                for old in &m.solo {
                    if next.get(j).is_some_and(|x| x.0 == old.0) {
                        j += 1;
                        continue;
                    }
                    let k = key(old);
                    if j > 0 && key(&next[j - 1]) >= k {
                        j = next.partition_point(|x| key(x) < k);
                    } else {
                        while j < next.len() && key(&next[j]) < k {
                            j += 1;
                        }
                    }
                    if next.get(j).is_some_and(|x| x.0 == old.0) {
                        j += 1;
                    } else {
                        out.join_proportional(old.0, c);
                        out.set_class(old.0, i as u32);
                    }
                }
                std::mem::swap(&mut m.solo, &mut self.solo_next);
                std::mem::swap(&mut m.walk_fills, &mut self.fills_next);
                std::mem::swap(&mut m.solo_rate, &mut self.rates_next);
                m.changed = false;
                m.cut = None;
            }
            m.class_at = i as u32;
            // Every flow of the coflow has its place's class, as a varys
            // built afresh gives it.
            debug_assert!(m
                .first
                .iter()
                .all(|e| e.dests.iter().all(|&(_, f)| out.class(f) == i as u32)));
            // A coflow that sends now has different loads next time.
            m.stale |= deadline != Time::NEVER || !m.solo.is_empty();
        }
    }

    /// Debug builds: backfill's flows for coflow `c` (replayed, or
    /// walked in part or whole) against a whole walk from the residual
    /// capacities `start` it began with.
    #[cfg(debug_assertions)]
    fn check_walk(&self, c: CoflowIdx, view: &Clairvoyant<'_>, start: Vec<f64>, whole: bool) {
        let m = &self.memo[c as usize];
        let mut residual = start;
        let mut free_bits = m.walk_free.clone();
        let (mut picks, mut fills, mut extras) = (vec![], vec![], vec![]);
        walk(
            m,
            view,
            (0, 0, 0),
            &mut residual,
            &mut free_bits,
            &mut picks,
            &mut fills,
            &mut extras,
        );
        if whole {
            assert_eq!(picks, m.solo);
            assert_eq!(fills, m.walk_fills);
        } else {
            assert_eq!(picks, self.solo_next);
            assert_eq!(fills, self.fills_next);
        }
        let bits = |v: &[f64]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
        assert_eq!(bits(&extras), bits(&self.extras));
        assert_eq!(bits(&residual), bits(&self.residual));
        assert_eq!(free_bits, self.free_bits);
    }
}

/// Which of links `s` and `d` are full, as `walk_fills` keeps it.
#[inline(always)]
fn fills(residual: &[f64], s: u32, d: u32) -> u8 {
    full(residual, s) as u8 | (full(residual, d) as u8) << 1
}

/// A place in backfill's visiting order, (first link, last link, flow): a
/// walk resumes at the first flow at or after it.
type Place = (u32, u32, u64);

/// Backfill's walk over one coflow's flows: each flow whose links all have
/// room gets the least of it (into `extras`), taken from its links; the
/// flows in visiting order with their first and last links go to `picks`,
/// and which of those two each left full to `fills`. Only the flows from
/// `from` on in visiting order (`(0, 0, 0)`: all).
#[allow(clippy::too_many_arguments)]
fn walk(
    m: &CoflowMemo,
    view: &Clairvoyant<'_>,
    from: Place,
    residual: &mut [f64],
    free_bits: &mut [u64],
    picks: &mut Vec<(FlowIdx, u32, u32)>,
    fills_out: &mut Vec<u8>,
    extras: &mut Vec<f64>,
) {
    // Every path is (first link, last link): the pair is the path, and the
    // flows' paths (scattered in memory) are not read.
    let pairs = m.n_long == 0;
    // `first` is sorted by link, so this visits pairs in link order.
    let first = &m.first[m.first.partition_point(|e| e.link < from.0)..];
    for entry in first {
        let s = entry.link;
        if full(residual, s) {
            continue;
        }
        // Where to begin in this entry: from the first last link and
        // flow (0, 0: all of it).
        let (d0, f0) = if s == from.0 {
            (from.1, from.2)
        } else {
            (0, 0)
        };
        let w0 = d0 as usize / 64;
        // Last links with flows from `s` and room left, in link order.
        for w in w0..entry.bits.len() {
            let mut cand = entry.bits[w] & free_bits[w];
            if w == w0 {
                cand &= !0u64 << (d0 % 64);
            }
            if cand == 0 {
                continue;
            }
            while cand != 0 && !full(residual, s) {
                let d = (w * 64) as u32 + cand.trailing_zeros();
                cand &= cand - 1;
                if full(residual, d) {
                    continue;
                }
                let mut at = entry.place(w, d);
                if d == d0 && f0 > 0 {
                    at += entry.dests[at..].partition_point(|x| x.0 == d && (x.1 as u64) < f0);
                }
                for &(dd, f) in &entry.dests[at..] {
                    if dd != d {
                        break;
                    }
                    debug_assert!(!pairs || view.path(f).iter().map(|l| l.0).eq([s, d]));
                    let path = if pairs { &[][..] } else { view.path(f) };
                    let extra = if pairs {
                        // The fold below over [s, d], bit for bit.
                        residual[s as usize].min(residual[d as usize])
                    } else {
                        path.iter()
                            .map(|l| residual[l.0 as usize])
                            .fold(f64::INFINITY, f64::min)
                    };
                    if extra <= EPS * 1e9 {
                        continue;
                    }
                    if pairs {
                        take(residual, free_bits, s, extra);
                        take(residual, free_bits, d, extra);
                    }
                    for l in path {
                        take(residual, free_bits, l.0, extra);
                    }
                    picks.push((f, s, d));
                    fills_out.push(fills(residual, s, d));
                    extras.push(extra);
                }
            }
        }
    }
}

/// The last walk's flows (`solo`, with `fills`) taken again, their room
/// into `extras`, as long as each leaves the same links full as then: the
/// first that does not is taken (as the walk would) and its place in
/// `solo` returned. Only for coflows whose paths are all (first link, last
/// link).
fn replay(
    solo: &[(FlowIdx, u32, u32)],
    fills_then: &[u8],
    residual: &mut [f64],
    free_bits: &mut [u64],
    extras: &mut Vec<f64>,
) -> Option<usize> {
    for (j, (&(_, s, d), &k)) in solo.iter().zip(fills_then).enumerate() {
        debug_assert!(!full(residual, s) && !full(residual, d));
        let extra = residual[s as usize].min(residual[d as usize]);
        take(residual, free_bits, s, extra);
        take(residual, free_bits, d, extra);
        extras.push(extra);
        if fills(residual, s, d) != k {
            return Some(j);
        }
    }
    None
}

/// Where coflow `m`'s walk may first differ from its last one for the
/// links with room `now` (the last walk began with `walk_free`): the first
/// pair in visiting order with a link of the coflow whose room differs;
/// `None` if none does.
fn first_moved(m: &CoflowMemo, now: &[u64]) -> Option<Place> {
    debug_assert_eq!(m.mask.len(), now.len());
    let mut first: Option<Place> = None;
    let words = m.walk_free.iter().zip(now).zip(&m.mask);
    for (w, ((&then, &now), &mask)) in words.enumerate() {
        let mut moved = (then ^ now) & mask;
        while moved != 0 {
            let l = (w * 64) as u32 + moved.trailing_zeros();
            moved &= moved - 1;
            let mut at: Place = (u32::MAX, u32::MAX, u64::MAX);
            // As a first link: where its flows start.
            if m.first.binary_search_by_key(&l, |e| e.link).is_ok() {
                at = (l, 0, 0);
            }
            // As a last link: at the first first link with flows to it.
            for e in &m.first {
                if (e.link, l, 0) >= at {
                    break;
                }
                if e.bits[w] & (1 << (l % 64)) != 0 {
                    at = (e.link, l, 0);
                    break;
                }
            }
            if first.is_none_or(|x| at < x) {
                first = Some(at);
            }
        }
    }
    first
}

impl Scheduler for Varys {
    type Knows = KnowsSizes;
    fn name(&self) -> &str {
        "varys"
    }
    fn schedule(
        &mut self,
        now: Time,
        view: Clairvoyant<'_>,
        changes: &Changes,
        out: &mut Allocation,
    ) -> Option<Time> {
        if !self.note(&view, changes, out) {
            return None;
        }
        self.order_coflows(&view);
        self.madd(now, view.capacities(), out);
        self.backfill(now, &view, out);
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::Rng;
    use proptest::test_runner::{RngAlgorithm, TestRng};
    use std::collections::BTreeSet;

    /// Random flows filed and taken out again (many sharing a first and
    /// last link, last links across several words), against a plain
    /// ordered set of (first link, last link, flow): the entries hold the
    /// same flows in the same visiting order, and each last link's place
    /// found by rank is where a search finds it.
    #[test]
    fn first_link_lists_match_a_plain_set() {
        const N_LINKS: usize = 200;
        let mut first: Vec<FirstEntry> = vec![];
        let mut plain: BTreeSet<(u32, u32, FlowIdx)> = BTreeSet::new();
        // proptest's deterministic generator: the same instances every run.
        let mut rng = TestRng::deterministic_rng(RngAlgorithm::ChaCha);
        for round in 0..5_000 {
            let (s, d, f) = (
                rng.next_u32() % 8,
                8 + rng.next_u32() % (N_LINKS as u32 - 8),
                rng.next_u32() % 400,
            );
            // Mostly one flow per pair, at times several.
            let f = if round % 3 == 0 { f } else { f % 40 + d * 1000 };
            let up = rng.next_u32() % 5 < 3;
            let known = plain.iter().any(|&(_, _, g)| g == f);
            if up && !known {
                plain.insert((s, d, f));
                file_flow(&mut first, s, d, f, true, N_LINKS);
            } else if !up {
                if let Some(&(s0, d0, _)) = plain.iter().find(|&&(_, _, g)| g == f) {
                    plain.remove(&(s0, d0, f));
                    file_flow(&mut first, s0, d0, f, false, N_LINKS);
                }
            }
            let listed: Vec<(u32, u32, FlowIdx)> = first
                .iter()
                .flat_map(|e| e.dests.iter().map(move |&(d, f)| (e.link, d, f)))
                .collect();
            assert!(listed.iter().copied().eq(plain.iter().copied()));
            for e in &first {
                let mut distinct: Vec<u32> = e.dests.iter().map(|x| x.0).collect();
                distinct.dedup();
                let n_bits: u32 = e.bits.iter().map(|b| b.count_ones()).sum();
                assert_eq!(n_bits as usize, distinct.len());
                for &(d, _) in &e.dests {
                    let w = d as usize / 64;
                    assert_ne!(e.bits[w] & (1 << (d % 64)), 0);
                    let at = e.place(w, d);
                    assert_eq!(at, e.dests.iter().position(|x| x.0 == d).unwrap());
                }
            }
        }
    }
}
