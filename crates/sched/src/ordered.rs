//! Coflow-ordered schedulers: strict priority between coflows in some order,
//! per-flow max-min among the flows of one priority class, work-conserving
//! (each class is served max-min on what the classes before it left).
//!
//! * `fifo`: order by release (Orchestra's policy, Baraat's without
//!   multiplexing): a coflow's arrival, unless Starts-After parents held it
//!   back. Needs no sizes.
//! * `scf`: smallest coflow first, by the size of its largest flow (length).
//! * `ncf`: narrowest coflow first, by number of flows (width).
//! * `lcf`: lightest coflow first, by total bytes.
//! * `stf`: smallest total size first, on remaining bytes (re-sorted at
//!   every event; amounts within `BYTES_TIE` count as equal, so float noise
//!   cannot decide). A wide coflow's bytes left are read per rate group of
//!   its grid, not per flow (`Clairvoyant::coflow_remaining_by_groups`),
//!   each within a bound of the per-flow value; where the bounds leave a
//!   decision of the sort open (a near-tie, or the edge of a run of
//!   near-ties), those coflows are read flow by flow, so the order is the
//!   per-flow values' to the bit (`uncertain`; debug builds check it).
//!
//! Ties go to the earlier release, then the earlier arrival, then the
//! smaller coflow id. These are the heuristics of Varys (SIGCOMM 2014, 5.1)
//! and CoflowSim, with the allocation rule of `fifo` for all of them.
//!
//! Sizes, lengths and widths count started flows only: a later wave or
//! stage of a coflow is not known before it starts. A released coflow none
//! of whose flows is sending keeps its place in the order and gets nothing.
//!
//! `backfill=off` (every order here) drops work conservation: a coflow is
//! served only where it comes first in the order on every link its active
//! flows use, whether or not the coflows ahead of it on those links are
//! served themselves (each served coflow then has its links to itself and
//! shares them max-min among its own flows; [`Serialized`]). Baraat 3.1's
//! "task serialization ... where an entire task is scheduled before moving
//! to the next", read strictly, as a centralized scheduler that does not
//! backfill a link a waiting coflow will use; Baraat 4.2 names what it
//! loses: "work conservation ensures that a lower priority task is
//! scheduled if the highest priority task is unable to saturate the
//! network".

use crate::class_cache::ClassCache;
use crate::class_server::{ClassServer, ClassedFlows};
use crate::descriptor::{Kind, Needs, Param, Parts, SchedulerDescriptor, SOLVER_PARAM};
use crate::AnyScheduler;
use crate::{
    Allocation, Changes, Clairvoyant, CoflowIdx, KnowsSent, KnowsSizes, Observed, Scheduler,
};
use coflowkit_model::stats::{sort_with_ties, BYTES_TIE};
use coflowkit_model::Time;

/// The `backfill` parameter of the coflow orders (`fifo`, `scf`, `ncf`,
/// `lcf`, `stf`): `off` serves a coflow only where it comes first on every
/// link it uses ([`Serialized`]).
pub const BACKFILL_PARAM: Param = Param {
    key: "backfill",
    kind: Kind::Choice(&["on", "off"]),
    default: "on",
    unit: "",
    help: "off: a coflow is served only if no coflow ahead of it in the order has an active flow on a link it \
           uses (not work-conserving)",
};

/// Whether `p` asks for `backfill=off`.
fn serialized(p: &crate::Params<'_>) -> Result<bool, crate::SchedulerError> {
    Ok(p.choice("backfill")? == "off")
}

/// `fifo`: coflows in arrival order, strict priority.
pub const FIFO: SchedulerDescriptor = SchedulerDescriptor {
    cost: 3.3,
    parts: Parts::NONE,
    name: "fifo",
    description: "coflows in arrival order, strict priority (Orchestra)",
    paper: "Orchestra (SIGCOMM 2011); Baraat 3.2 (FIFO without multiplexing)",
    params: &[SOLVER_PARAM, BACKFILL_PARAM],
    needs: Needs::NOTHING,
    build: |p, _| {
        let mut fifo = match p.choice("solver")? {
            "incremental" => Fifo::incremental(),
            _ => Fifo::new(),
        };
        if serialized(p)? {
            fifo.serialized = Some(Serialized::default());
        }
        Ok(AnyScheduler::NonClairvoyant(Box::new(fifo)))
    },
};

/// A size-ordered scheduler's descriptor: `name` orders coflows by `key`.
const fn size_ordered(
    name: &'static str,
    description: &'static str,
    paper: &'static str,
    cost: f64,
    build: crate::descriptor::Build,
) -> SchedulerDescriptor {
    SchedulerDescriptor {
        cost,
        parts: Parts::NONE,
        name,
        description,
        paper,
        params: &[BACKFILL_PARAM],
        needs: Needs::SIZES,
        build,
    }
}

/// A size-ordered scheduler by `key`, serialized if `p` says `backfill=off`.
fn build_size_ordered(
    p: &crate::Params<'_>,
    key: SizeKey,
) -> Result<AnyScheduler, crate::SchedulerError> {
    let mut s = SizeOrdered::new(key);
    if serialized(p)? {
        s.serialized = Some(Serialized::default());
    }
    Ok(AnyScheduler::Clairvoyant(Box::new(s)))
}

/// `scf`: smallest coflow first, by largest flow.
pub const SCF: SchedulerDescriptor = size_ordered(
    "scf",
    "smallest coflow first, by largest flow",
    "Varys (SIGCOMM 2014) 5.1; CoflowSim's SCF",
    3.1,
    |p, _| build_size_ordered(p, SizeKey::Length),
);

/// `ncf`: narrowest coflow first.
pub const NCF: SchedulerDescriptor = size_ordered(
    "ncf",
    "narrowest coflow first, by number of flows",
    "Varys 5.1; CoflowSim's NCF (by flows, not min(mappers, reducers))",
    4.5,
    |p, _| build_size_ordered(p, SizeKey::Width),
);

/// `lcf`: lightest coflow first.
pub const LCF: SchedulerDescriptor = size_ordered(
    "lcf",
    "lightest coflow first, by total bytes",
    "Varys 5.1; CoflowSim's LCF",
    3.8,
    |p, _| build_size_ordered(p, SizeKey::Total),
);

/// `stf`: smallest total size first, on remaining bytes.
pub const STF: SchedulerDescriptor = size_ordered(
    "stf",
    "smallest total size first, on remaining bytes",
    "Baraat 5.2 \"STF\"; D-CAS Fig. 1 \"smallest-coflow-first\"",
    4.7,
    |p, _| build_size_ordered(p, SizeKey::Remaining),
);

/// `backfill=off`: coflows served in a given order, each only where it
/// comes first on every link its active flows use (see the module doc).
///
/// Walking the order, a coflow claims the links of its active flows
/// whether or not it is served; one that finds any of them claimed by a
/// coflow ahead of it waits (its flows get rate 0). The coflows served
/// thus use disjoint links, and each is served max-min among its own flows
/// on the links' full capacity (one [`ClassServer`] class each, its class
/// its place in the order).
///
/// # Correctness properties
/// - A coflow's links are those of its active flows now: the list kept per
///   coflow is dropped whenever one of its flows starts or finishes
///   ([`Serialized::note`]), and debug builds check each list used against
///   its flows' paths (`Serialized::links_of`).
/// - No two coflows served share a link (debug builds check it in
///   [`Serialized::serve`]); the reference suite's `backfill=off` policy
///   (crates/sim/tests/reference/ordered.rs) decides by pairs of coflows.
#[derive(Debug, Default)]
pub struct Serialized {
    server: ClassServer,
    // Per coflow: the sorted, distinct links of its active flows (None:
    // not known since one of its flows started or finished).
    links: Vec<Option<Vec<u32>>>,
    // Per link: the round in which a coflow walked so far claimed it.
    claimed: Vec<u32>,
    round: u32,
    served: Vec<(u32, CoflowIdx)>,
}

impl Serialized {
    /// Forgets the links of the coflows whose flows started or finished
    /// (call this at every schedule, before [`Serialized::serve`]).
    pub fn note(&mut self, changes: &Changes, view: &Observed<'_>) {
        self.server.note(changes, view);
        for &f in changes.started.iter().chain(&changes.finished) {
            if let Some(l) = self.links.get_mut(view.coflow_of(f) as usize) {
                *l = None;
            }
        }
    }

    /// The sorted, distinct links of coflow `c`'s active flows, kept in
    /// `links`.
    fn links_of<'s>(
        links: &'s mut Vec<Option<Vec<u32>>>,
        view: &Observed<'_>,
        c: CoflowIdx,
    ) -> &'s [u32] {
        let ci = c as usize;
        if links.len() <= ci {
            links.resize(ci + 1, None);
        }
        let fresh = || {
            let mut ls: Vec<u32> = view
                .active_flows_of(c)
                .flat_map(|f| view.path(f).iter().map(|l| l.0))
                .collect();
            ls.sort_unstable();
            ls.dedup();
            ls
        };
        #[cfg(debug_assertions)]
        if let Some(kept) = &links[ci] {
            assert_eq!(*kept, fresh(), "coflow {c}'s links are stale");
        }
        links[ci].get_or_insert_with(fresh)
    }

    /// Serves the coflows of `order` (highest priority first) that come
    /// first on every link they use, writing rates and classes into `out`;
    /// the flows of the others get rate 0.
    pub fn serve(
        &mut self,
        view: &Observed<'_>,
        order: impl IntoIterator<Item = CoflowIdx>,
        out: &mut Allocation,
    ) {
        self.round = self.round.wrapping_add(1);
        if self.round == 0 {
            self.claimed.iter_mut().for_each(|r| *r = u32::MAX);
            self.round = 1;
        }
        if self.claimed.len() < view.n_links() {
            self.claimed.resize(view.n_links(), 0);
        }
        let mut served = std::mem::take(&mut self.served);
        served.clear();
        let round = self.round;
        for (rank, c) in order.into_iter().enumerate() {
            let links = Self::links_of(&mut self.links, view, c);
            let first = links.iter().all(|&l| self.claimed[l as usize] != round);
            for &l in links {
                self.claimed[l as usize] = round;
            }
            if first && !links.is_empty() {
                served.push((rank as u32, c));
            }
        }
        #[cfg(debug_assertions)]
        {
            let mut all: Vec<u32> = vec![];
            for &(_, c) in &served {
                all.extend_from_slice(Self::links_of(&mut self.links, view, c));
            }
            let n = all.len();
            all.sort_unstable();
            all.dedup();
            assert_eq!(n, all.len(), "two coflows served share a link");
        }
        self.server.begin(view);
        for &(rank, c) in &served {
            self.server.serve(view, &[c], rank, out);
        }
        self.server.end(view, out);
        self.served = served;
    }
}

/// `fifo`: coflows in arrival order; see the module doc.
///
/// On the big switch every event walks the classes in order, re-solving
/// only those its changes reach ([`ClassCache`]). On other
/// fabrics (or with `solver=incremental`) the flows are demands of an
/// [`IncrementalMaxMin`] in the class of their coflow's arrival rank, so an
/// event re-solves only the links it reaches: on a 36,000-host tree a flow
/// that finishes in one rack costs that rack, not every active task.
#[derive(Debug, Default)]
pub struct Fifo {
    order: Vec<CoflowIdx>,
    cache: ClassCache,
    incremental: Option<ClassedFlows>,
    always_incremental: bool,
    // Per coflow, its rank in (release, arrival, id) order.
    rank: Vec<u64>,
    n_ranked: u64,
    released: Vec<CoflowIdx>,
    // `backfill=off`.
    serialized: Option<Serialized>,
}

impl Fifo {
    /// A coflow-FIFO scheduler.
    pub fn new() -> Fifo {
        Fifo::default()
    }

    /// FIFO with the incremental solver on every fabric (`fifo:solver=incremental`).
    pub fn incremental() -> Fifo {
        Fifo {
            always_incremental: true,
            ..Fifo::default()
        }
    }

    fn schedule_incremental(
        &mut self,
        view: &Observed<'_>,
        changes: &Changes,
        out: &mut Allocation,
    ) {
        let inc = self
            .incremental
            .get_or_insert_with(|| ClassedFlows::new(view));
        inc.finish(changes);
        // Coflows released now rank after every earlier one, among
        // themselves by (arrival, id).
        self.released.clear();
        self.released.extend_from_slice(&changes.arrived);
        self.released
            .sort_by_key(|&c| (view.arrival(c), view.coflow_id(c)));
        for &c in &self.released {
            if self.rank.len() <= c as usize {
                self.rank.resize(c as usize + 1, 0);
            }
            self.rank[c as usize] = self.n_ranked;
            self.n_ranked += 1;
        }
        for &f in &changes.started {
            inc.start(view, f, self.rank[view.coflow_of(f) as usize], out);
        }
        inc.solve(out, |_, _| {});
    }
}

impl Scheduler for Fifo {
    type Knows = KnowsSent;
    fn name(&self) -> &str {
        "fifo"
    }
    fn schedule(
        &mut self,
        _now: Time,
        view: Observed<'_>,
        changes: &Changes,
        out: &mut Allocation,
    ) -> Option<Time> {
        // `backfill=off` serves the whole order anew on any fabric.
        if self.serialized.is_none() {
            self.cache.note(changes, &view);
            if self.always_incremental || !view.fabric().is_big_switch() {
                self.schedule_incremental(&view, changes, out);
                return None;
            }
        }
        self.order.clear();
        self.order.extend_from_slice(view.active_coflows());
        self.order
            .sort_by_key(|&c| (view.release(c), view.arrival(c), view.coflow_id(c)));
        let order = self.order.iter().copied();
        match self.serialized.as_mut() {
            Some(ser) => {
                ser.note(changes, &view);
                ser.serve(&view, order, out);
            }
            None => self.cache.serve(&view, order, out),
        }
        None
    }
}

/// The size-based orders of [`SizeOrdered`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SizeKey {
    /// `scf`: largest started flow's size.
    Length,
    /// `ncf`: number of started flows.
    Width,
    /// `lcf`: total bytes of started flows.
    Total,
    /// `stf`: remaining bytes of started flows.
    Remaining,
}

/// `scf`, `ncf`, `lcf` and `stf`; see the module doc.
#[derive(Debug)]
pub struct SizeOrdered {
    key: SizeKey,
    order: Vec<(f64, (Time, Time, u64), CoflowIdx)>,
    // `stf`: each coflow's bytes left by groups and its bound.
    bounds: Vec<f64>,
    cache: ClassCache,
    // `backfill=off`.
    serialized: Option<Serialized>,
}

impl SizeOrdered {
    /// A scheduler ordering coflows by `key`.
    pub fn new(key: SizeKey) -> SizeOrdered {
        SizeOrdered {
            key,
            order: vec![],
            bounds: vec![],
            cache: ClassCache::default(),
            serialized: None,
        }
    }

    /// Serves the coflows in `self.order`'s order: through the class cache,
    /// or with `backfill=off` through [`Serialized`].
    fn serve_order(&mut self, view: &Observed<'_>, changes: &Changes, out: &mut Allocation) {
        let order = self.order.iter().map(|x| x.2);
        match self.serialized.as_mut() {
            Some(ser) => {
                ser.note(changes, view);
                ser.serve(view, order, out);
            }
            None => self.cache.serve(view, order, out),
        }
    }

    /// `stf`'s order: every coflow's bytes left summed over its grid's rate
    /// groups ([`Clairvoyant::coflow_remaining_by_groups`]), then the
    /// per-flow value for the coflows whose bounds leave some decision of
    /// [`sort_with_ties`] open ([`uncertain`]), until none does: the order
    /// the per-flow values give, to the bit (debug builds check it).
    fn order_by_remaining(&mut self, view: &Clairvoyant<'_>) {
        self.bounds.clear();
        for &c in view.active_coflows() {
            let (k, e) = view.coflow_remaining_by_groups(c, self.cache.grid_groups(c));
            let tie = (view.release(c), view.arrival(c), view.coflow_id(c).0);
            self.order.push((k, tie, c));
            self.bounds.push(e);
        }
        loop {
            let mut items: Vec<_> = (0..self.order.len()).collect();
            let key = |&i: &usize| self.order[i].0;
            items.sort_by(|&a, &b| {
                key(&a)
                    .total_cmp(&key(&b))
                    .then(self.order[a].1.cmp(&self.order[b].1))
            });
            let open = uncertain(
                &items,
                |i| self.order[i].0,
                |i| self.bounds[i],
                |i| self.order[i].1,
            );
            if open.is_empty() {
                break;
            }
            for i in open {
                self.order[i].0 = view.coflow_remaining(self.order[i].2);
                self.bounds[i] = 0.0;
            }
        }
        sort_with_ties(&mut self.order, |x| x.0, |x| x.1, BYTES_TIE);
        #[cfg(debug_assertions)]
        {
            let mut exact: Vec<_> = self
                .order
                .iter()
                .map(|&(_, tie, c)| (view.coflow_remaining(c), tie, c))
                .collect();
            sort_with_ties(&mut exact, |x| x.0, |x| x.1, BYTES_TIE);
            let same = exact.iter().zip(&self.order).all(|(a, b)| a.2 == b.2);
            assert!(same, "stf's order by groups differs from the per-flow one");
        }
    }
}

/// The items (positions, sorted by key then tie) whose keys, each known
/// only to within its bound, could change what [`sort_with_ties`] with
/// [`BYTES_TIE`] makes of them: which item starts a run of near-ties,
/// which items the run takes in, and, within a run, the order of items
/// with equal ties. Items with bound 0 are exact and compared as the sort
/// compares them; empty when the order is that of the exact keys.
fn uncertain<T: Ord>(
    sorted: &[usize],
    key: impl Fn(usize) -> f64,
    bound: impl Fn(usize) -> f64,
    tie: impl Fn(usize) -> T,
) -> Vec<usize> {
    let mut open = vec![];
    let worst = sorted.iter().map(|&i| bound(i)).fold(0.0, f64::max);
    let fuzz = |a: f64, b: f64| 8.0 * f64::EPSILON * (a.abs() + b.abs() + 1.0);
    let flag = |x: usize, y: usize, open: &mut Vec<usize>| {
        open.extend([x, y].into_iter().filter(|&i| bound(i) > 0.0));
    };
    let mut s = 0;
    while s < sorted.len() {
        let i0 = sorted[s];
        let (k0, e0) = (key(i0), bound(i0));
        let reach = BYTES_TIE + 1e-9 * k0.abs();
        // The run's first item is the least of all that follow.
        for &j in &sorted[s + 1..] {
            if key(j) > k0 + e0 + worst + fuzz(k0, key(j)) {
                break;
            }
            let m = e0 + bound(j);
            if m > 0.0 && key(j) - bound(j) - fuzz(k0, key(j)) <= k0 + e0 {
                flag(i0, j, &mut open);
            }
        }
        // Each item is in the run, or out of it, whatever its exact key.
        let mut t = s + 1;
        for &j in &sorted[s + 1..] {
            let d = key(j) - k0;
            if d > reach + e0 + worst + fuzz(k0, key(j)) + 1e-9 * e0 {
                break;
            }
            let m = e0 + bound(j);
            let m = if m > 0.0 {
                m + 1e-9 * e0 + fuzz(k0, key(j)) + fuzz(reach, d)
            } else {
                0.0
            };
            if d <= reach {
                if d + m > reach {
                    flag(i0, j, &mut open);
                }
                t += 1;
            } else if d - m <= reach {
                flag(i0, j, &mut open);
            }
        }
        // Equal ties in a run keep the order of their keys.
        if t - s > 1 {
            let mut run = sorted[s..t].to_vec();
            run.sort_by_key(|&x| tie(x));
            for w in run.windows(2) {
                if tie(w[0]) == tie(w[1]) && bound(w[0]) + bound(w[1]) > 0.0 {
                    flag(w[0], w[1], &mut open);
                }
            }
        }
        s = t;
    }
    open.sort_unstable();
    open.dedup();
    open
}

impl Scheduler for SizeOrdered {
    type Knows = KnowsSizes;
    fn name(&self) -> &str {
        match self.key {
            SizeKey::Length => "scf",
            SizeKey::Width => "ncf",
            SizeKey::Total => "lcf",
            SizeKey::Remaining => "stf",
        }
    }
    fn schedule(
        &mut self,
        _now: Time,
        view: Clairvoyant<'_>,
        changes: &Changes,
        out: &mut Allocation,
    ) -> Option<Time> {
        self.cache.note(changes, &view.observed());
        self.order.clear();
        if self.key == SizeKey::Remaining {
            self.order_by_remaining(&view);
            self.serve_order(&view.observed(), changes, out);
            return None;
        }
        for &c in view.active_coflows() {
            let k = match self.key {
                SizeKey::Length => view.length(c),
                SizeKey::Width => view.width(c) as f64,
                SizeKey::Total => view.coflow_size(c),
                SizeKey::Remaining => view.coflow_remaining(c),
            };
            self.order.push((
                k,
                (view.release(c), view.arrival(c), view.coflow_id(c).0),
                c,
            ));
        }
        sort_with_ties(&mut self.order, |x| x.0, |x| x.1, 0.0);
        self.serve_order(&view.observed(), changes, out);
        None
    }
}

#[cfg(test)]
mod tests {
    use super::uncertain;
    use crate::{build, Allocation, Changes, NetState, SchedulerSpec, WorkloadHints};
    use coflowkit_model::stats::{sort_with_ties, BYTES_TIE};
    use coflowkit_model::{flow, BitsPerSec, CoflowSpec, Fabric, Time};
    use proptest::prelude::Rng;
    use proptest::test_runner::{RngAlgorithm, TestRng};

    /// The rates (Gbit/s) `spec` gives at time 0 on a big switch of 5
    /// ports at 1 Gbit/s to `coflows`, all arrived and started.
    fn rates_at_start(spec: &str, coflows: &[CoflowSpec]) -> Vec<f64> {
        let mut st = NetState::new(Fabric::big_switch(5, BitsPerSec::GBPS).unwrap());
        let mut changes = Changes::default();
        for c in coflows {
            let c = st.add_coflow(c);
            st.release_coflow(c);
            changes.arrived.push(c);
            for f in st.flows_of(c) {
                assert!(st.start_flow(f));
                changes.started.push(f);
            }
        }
        let spec = SchedulerSpec::parse(spec).unwrap();
        let mut sched = build(&spec, &WorkloadHints::default()).unwrap();
        let mut out = Allocation::default();
        out.resize(st.n_flows());
        sched.schedule(Time::ZERO, &st, &changes, &mut out);
        (0..st.n_flows() as u32)
            .map(|f| out.rate(f) / 1e9)
            .collect()
    }

    /// Baraat 4.2's case for work conservation, by hand, on a big switch:
    /// A (0 -> 3 and 1 -> 3) is first in every order and held to 1/2 a
    /// flow by host 3's downlink; B (0 -> 4) shares host 0's uplink with
    /// it, C (1 -> 2) host 1's, D (2 -> 4) host 4's downlink with B. With
    /// backfilling B and C take the 1/2 A leaves on those uplinks and D
    /// what B leaves on host 4's downlink; with `backfill=off` B and C wait
    /// although A leaves their uplinks half idle, and D waits on B, which
    /// claims host 4's downlink though it waits itself.
    #[test]
    fn without_backfill_a_coflow_waits_on_every_link_an_earlier_one_uses() {
        let unit = 125_000_000;
        // stf orders by bytes left: A (2 units) after B, C, D (1 unit
        // each) would put A last, so give A the least bytes: 2 x 0.4 unit.
        let a = CoflowSpec::new(
            1,
            Time::ZERO,
            vec![flow(0, 3, 2 * unit / 5), flow(1, 3, 2 * unit / 5)],
        );
        let b = CoflowSpec::new(2, Time::ZERO, vec![flow(0, 4, unit)]);
        let c = CoflowSpec::new(3, Time::ZERO, vec![flow(1, 2, 2 * unit)]);
        let d = CoflowSpec::new(4, Time::ZERO, vec![flow(2, 4, 3 * unit)]);
        let all = [a, b, c, d];
        for name in ["fifo", "fifo:solver=incremental", "stf", "lcf"] {
            // Work-conserving: A 1/2 + 1/2 (host 3's downlink); B the 1/2
            // left on host 0's uplink; C the 1/2 left on host 1's uplink;
            // D the 1/2 B leaves on host 4's downlink.
            assert_eq!(
                rates_at_start(name, &all),
                [0.5, 0.5, 0.5, 0.5, 0.5],
                "{name}"
            );
            // Serialized: A alone; B and C wait on A's uplinks, D on host
            // 4's downlink, which B (waiting) claims.
            let off = if name.contains(':') {
                format!("{name};backfill=off")
            } else {
                format!("{name}:backfill=off")
            };
            assert_eq!(
                rates_at_start(&off, &all),
                [0.5, 0.5, 0.0, 0.0, 0.0],
                "{off}"
            );
        }
        // Without A, B and C (disjoint) are both first: each alone on its
        // links at full rate; D still waits on B's downlink.
        let rest = &all[1..];
        assert_eq!(rates_at_start("stf:backfill=off", rest), [1.0, 1.0, 0.0]);
        assert_eq!(rates_at_start("stf", rest), [1.0, 1.0, 0.0]);
    }

    /// The order [`sort_with_ties`] gives `keys` (with ties `0..n`).
    fn order(keys: &[f64], ties: &[u32]) -> Vec<usize> {
        let mut items: Vec<_> = (0..keys.len()).map(|i| (keys[i], ties[i], i)).collect();
        sort_with_ties(&mut items, |x| x.0, |x| x.1, BYTES_TIE);
        items.into_iter().map(|x| x.2).collect()
    }

    /// Random near-ties (keys a few bytes apart, some at the edge of a run,
    /// some on equal ties) known to within random bounds: resolving what
    /// [`uncertain`] names until it names nothing gives the order of any
    /// exact keys within the bounds, the bounds' ends included.
    #[test]
    fn what_uncertain_leaves_is_the_order_of_every_key_within_bounds() {
        let mut rng = TestRng::deterministic_rng(RngAlgorithm::ChaCha);
        let mut rnd = |m: u64| rng.next_u64() % m;
        let mut decided_by_bounds = 0;
        for _ in 0..3_000 {
            let n = 1 + rnd(8) as usize;
            let base = [0.0, 1e6, 3e10][rnd(3) as usize];
            let exact: Vec<f64> = (0..n)
                .map(|_| base + rnd(12) as f64 * 0.5 + rnd(5) as f64 * 1e-3)
                .collect();
            let ties: Vec<u32> = (0..n).map(|_| rnd(4) as u32).collect();
            let mut bound: Vec<f64> = (0..n)
                .map(|_| [0.0, 1e-3, 0.3, 2.5][rnd(4) as usize])
                .collect();
            // A known key anywhere within its bound of the exact one.
            let mut key: Vec<f64> = (0..n)
                .map(|i| exact[i] + bound[i] * (rnd(5) as f64 - 2.0) / 2.0)
                .collect();
            loop {
                let mut sorted: Vec<usize> = (0..n).collect();
                sorted.sort_by(|&a, &b| key[a].total_cmp(&key[b]).then(ties[a].cmp(&ties[b])));
                let open = uncertain(&sorted, |i| key[i], |i| bound[i], |i| ties[i]);
                if open.is_empty() {
                    break;
                }
                for i in open {
                    (key[i], bound[i]) = (exact[i], 0.0);
                }
            }
            assert_eq!(
                order(&key, &ties),
                order(&exact, &ties),
                "{key:?} {bound:?}"
            );
            decided_by_bounds += usize::from(n > 1 && bound.iter().all(|&e| e > 0.0));
        }
        assert!(decided_by_bounds > 50, "{decided_by_bounds}");
    }
}
