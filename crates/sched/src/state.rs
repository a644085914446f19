//! The network state a scheduler reads, and the two views of it.
//!
//! [`NetState`] holds every flow and coflow the driver (the simulator's
//! engine, or the runtime's coordinator) has seen, in flat arrays indexed by
//! [`FlowIdx`] and [`CoflowIdx`]; what a rate change reads and writes of a
//! flow (its progress, rate, size, group, coflow, place among the active
//! flows, flags) is one 48-byte record, so that a re-rate touches one or two
//! cache lines of the flow, not one per field (and the engine fetches it
//! ahead: `apply`). A driver that knows how many flows will come reserves
//! the per-flow arrays at once ([`NetState::reserve`]), in huge pages where
//! they are large ([`reserve_huge`]: on FB2010 a re-rate otherwise missed
//! the TLB as well as the cache). The driver mutates it; schedulers only read it through a
//! view:
//!
//! * [`Observed`]: what a non-clairvoyant scheduler may know: the fabric,
//!   which flows and coflows are active, their endpoints, paths, kinds,
//!   arrival, release and start instants, deadlines, and the bytes each has
//!   sent so far. No sizes, widths or end times: the type has no method that
//!   returns them.
//! * [`Clairvoyant`]: everything in `Observed` plus the sizes and remaining
//!   bytes of *started* flows. Flows that have not started (a later wave or
//!   stage of a coflow, a coflow not yet released) are not known in advance:
//!   a coflow's size, length and width count its started flows only.
//!
//! Life of a flow: the driver adds a coflow's flows when the coflow arrives,
//! all *waiting*; [`NetState::release_coflow`] makes the coflow active (it
//! stays active until [`NetState::complete_coflow`], even while none of its
//! flows is sending); [`NetState::start_flow`] makes a waiting flow active
//! (a zero-byte flow is done at once); [`NetState::finish_flow`] makes it
//! done. The driver decides when (the simulator's release rules are in
//! `coflowkit-sim`); flow indices stay contiguous per coflow
//! ([`NetState::flows_of`]).
//!
//! Progress is kept lazily, so that an event costs in proportion to what
//! changed, not to the number of flows: a flow sending alone at rate `r`
//! since instant `t0` with `b0` bytes sent then has sent `b0 + r (now - t0)`.
//! Flows that always share one rate (per-flow fair sharing over one path)
//! can be put in a shared *rate group*: the group keeps a virtual clock, the
//! bytes each member has been served, and a member finishes when the clock
//! reaches its mark (clock at joining + bytes left then); one rate change then
//! updates the whole group at once.
//!
//! Correctness properties (enforced by the mutators here): `sent <= size`
//! for every flow (`sent` clamps); a coflow's sent bytes are the sum of its
//! flows'; `active` holds exactly the flows that started and have not
//! finished, in a deterministic order (swap-removal) (`start_flow`,
//! `finish_flow`); a waiting flow has sent nothing and a done flow all its
//! bytes (`flow_sent`); `active_coflows` holds exactly the coflows released
//! and not completed, in release order (`release_coflow`, `complete_coflow`).
//!
//! # Where things are
//!
//! This file holds the state's layout and its clock; the rest is split by
//! what it does: `lifecycle` (paths, adding, releasing, starting and
//! finishing flows and coflows), `progress` (lazy progress: solo flows, rate
//! groups, proportional groups), `completions` (the engine's queue of group
//! completions), `sums` (a rate group's bytes sent as one running sum, for
//! `stf`'s bytes left), `resync` (the runtime's measured bytes), `apply`
//! ([`NetState::apply_allocation`]: a scheduler's [`crate::Allocation`]
//! applied, the one step the engine and the coordinator share) and `views`
//! ([`Observed`], [`Clairvoyant`], the driver's accessors, [`FlowReport`]).

mod apply;
mod completions;
mod lifecycle;
mod progress;
mod resync;
mod sums;
mod views;

pub use apply::ApplyHooks;
pub use views::{Clairvoyant, FlowReport, Observed};

use crate::radix::RadixQueue;
use coflowkit_model::{CoflowId, DagId, Dur, Fabric, HostId, JobStage, LinkId, Time};
use std::collections::HashMap;

/// Index of a flow in a [`NetState`].
pub type FlowIdx = u32;
/// Index of a coflow in a [`NetState`].
pub type CoflowIdx = u32;
/// Index of an interned path in a [`NetState`].
pub type PathIdx = u32;

/// A coflow as the driver tracks it.
#[derive(Debug, Clone)]
struct CoflowInfo {
    id: CoflowId,
    arrival: Time,
    release: Time,
    job: Option<JobStage>,
    dag: DagId,
    deadline: Option<Dur>,
    first_flow: u32,
    n_flows: u32,
    n_active: u32,
    // Started flows: their number, total size and largest size.
    n_started: u32,
    size: f64,
    length: f64,
    // Lazy sum over solo (ungrouped) flows plus finished flows.
    base_sent: f64,
    base_time: Time,
    solo_rate: f64,
    n_grouped: u32,
    // Flows added after the coflow (`add_flow`), in index order.
    later: Vec<FlowIdx>,
}

/// The fields of a flow that lazy progress and a rate change use.
#[derive(Debug, Clone, Copy)]
struct FlowRec {
    // Lazy progress: a solo flow sent `base + rate (now - base_time)`; a
    // grouped flow finishes when its group's clock reaches `base` (its
    // mark); a proportional one has `base * phi` bytes left.
    base: f64,
    rate: f64,
    size: f64,
    base_time: Time,
    coflow: CoflowIdx,
    group: u32,
    // Its place in `active` (`INACTIVE` when not active), and its `DONE`,
    // `COMPUTE`, `SIZE_UNKNOWN`, `HAS_DEADLINE` bits.
    active_pos: u32,
    flags: u8,
}

/// A shared rate group: members all get the group's rate.
#[derive(Debug, Clone)]
struct Group {
    // The lowest live mark (infinity when none), kept so that a rate change
    // needs no look into `members`.
    head: f64,
    clock: f64,
    clock_time: Time,
    rate: f64,
    n_members: u32,
    // Listed in `NetState::group_dirty`: its next finish is to be computed
    // again before time moves or a finish is read.
    dirty: bool,
    members: std::collections::BinaryHeap<std::cmp::Reverse<(MarkKey, FlowIdx)>>,
    // Its members' marks less their sizes, summed ([`sums`]).
    sum: sums::MarkSum,
}

impl Default for Group {
    fn default() -> Group {
        Group {
            head: f64::INFINITY,
            clock: 0.0,
            clock_time: Time::ZERO,
            rate: 0.0,
            n_members: 0,
            dirty: false,
            members: Default::default(),
            sum: Default::default(),
        }
    }
}

/// An `f64` mark as an integer key in `total_cmp`'s order (the sign bit
/// set on non-negatives, every bit flipped on negatives), so that a group's
/// member heap compares two integers rather than two `total_cmp`s (its pops
/// were ~250 instructions each under `fair`); [`MarkKey::mark`] gives the
/// `f64` back bit for bit.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
struct MarkKey(u64);

impl MarkKey {
    #[inline(always)]
    fn of(mark: f64) -> MarkKey {
        let b = mark.to_bits();
        MarkKey(if b >> 63 == 1 { !b } else { b | 1 << 63 })
    }
    #[inline(always)]
    fn mark(self) -> f64 {
        let k = self.0;
        f64::from_bits(if k >> 63 == 1 { k & !(1 << 63) } else { !k })
    }
}

/// A flow's group when it sends alone.
pub const SOLO: u32 = u32::MAX;
/// The bit that marks a group id as a proportional group (see [`NetState`]).
pub const PROPORTIONAL: u32 = 1 << 31;

/// The proportional group in a flow's group id, if it names one.
#[inline]
pub fn proportional(g: u32) -> Option<u32> {
    (g != SOLO && g & PROPORTIONAL != 0).then_some(g & !PROPORTIONAL)
}

/// A proportional group: members progress in proportion to what each has
/// left, all finishing together at the group's deadline (Varys's MADD). A
/// member with `w` has `w * phi(now)` bytes left, where `phi` falls linearly
/// to 0 at the deadline (or stays put while the group is paused).
#[derive(Debug, Clone)]
struct PGroup {
    phi: f64,
    phi_time: Time,
    deadline: Time,
    n_members: u32,
    members: Vec<FlowIdx>,
    // Sum of members' `w` per link (dense over links, empty while unused).
    link_w: Vec<f64>,
}

impl Default for PGroup {
    fn default() -> PGroup {
        PGroup {
            phi: 1.0,
            phi_time: Time::ZERO,
            deadline: Time::NEVER,
            n_members: 0,
            members: vec![],
            link_w: vec![],
        }
    }
}

/// Every flow and coflow seen so far; see the module doc.
#[derive(Debug, Clone)]
pub struct NetState {
    capacity: Vec<f64>,
    fabric: Fabric,
    // Flows: what a rate change reads and writes, one record per flow (a
    // re-rate touches one cache line, not eight arrays), and the rest.
    fl: Vec<FlowRec>,
    src: Vec<HostId>,
    dst: Vec<HostId>,
    path: Vec<PathIdx>,
    groups: Vec<Group>,
    // When each group's next member finishes, and a lazy monotone queue of
    // (instant, group): an entry is live while it equals `group_finish_at`.
    group_finish_at: Vec<Time>,
    // Groups whose head, clock or rate changed at this instant: their next
    // finish is computed once, when time moves on or the engine asks for
    // the next finish (`completions`), not at every join, leave and rate.
    group_dirty: Vec<u32>,
    // Debug builds: each group's next finish computed at its last change
    // (the eager computation the deferral replaced), to check against.
    #[cfg(debug_assertions)]
    group_finish_eager: Vec<Time>,
    // Used only while many groups are active (a scan is faster below).
    group_heap: RadixQueue,
    group_heap_on: bool,
    active_groups: Vec<u32>,
    group_pos: Vec<u32>,
    pgroups: Vec<PGroup>,
    active_pgroups: Vec<u32>,
    now: Time,
    active: Vec<FlowIdx>,
    // Per flow: the start instant (`Time::NEVER` while waiting); and, for
    // the few flows that have one, the deadline relative to the start
    // (sorted by flow).
    start: Vec<Time>,
    deadlines: Vec<(FlowIdx, Dur)>,
    // Interned paths, by (src, dst) for ECMP choice 0 (every path of a
    // fabric without path diversity: the big switch's fast path) and by
    // (src, dst, choice) for the others: flows of one route share one.
    // Choice 0's index is dense (`src * n_hosts + dst`, the path plus one,
    // 0 for none yet) on fabrics of at most `DENSE_ROUTE_HOSTS` hosts: a
    // hash per flow added was ~3% of `fair`'s instructions on FB2010's
    // first 200 coflows; larger fabrics keep the map.
    path_start: Vec<u32>,
    path_links: Vec<LinkId>,
    path_dense: Vec<PathIdx>,
    path_index: HashMap<(HostId, HostId), PathIdx>,
    ecmp_index: HashMap<(HostId, HostId, u32), PathIdx>,
    // The one-link path of each host's CPU, once a compute stage used it.
    cpu_path: Vec<PathIdx>,
    // Coflows.
    coflows: Vec<CoflowInfo>,
    active_coflows: Vec<CoflowIdx>,
}

const INACTIVE: u32 = u32::MAX;

/// Fabrics with at most this many hosts index their choice-0 paths densely
/// (`n_hosts²` entries, allocated zeroed on first use: pages never touched
/// cost nothing).
const DENSE_ROUTE_HOSTS: u32 = 4096;

/// `ns as f64` for a span between two instants (always below 2^63 ns, 292
/// years: the same value), through `i64`: one instruction on baseline
/// x86-64, and lazy progress converts a span at every settle. (A branch to
/// `u64`'s conversion above 2^63 was folded by the compiler back into
/// `u64`'s five-instruction sequence; a span that large saturates here.)
#[inline(always)]
fn ns_f64(ns: u64) -> f64 {
    debug_assert!(ns < 1 << 63, "a span of {ns} ns");
    ns.min(i64::MAX as u64) as i64 as f64
}

/// Asks the processor to fetch the cache lines holding `x` (its first and,
/// for a record larger than its alignment, its last byte: a 48-byte record
/// can straddle two lines), so that a record to be read a few steps later
/// is in cache by then. A hint: it changes no value and cannot fault;
/// nothing on targets other than x86-64.
#[inline(always)]
pub fn prefetch<T>(x: &T) {
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
        let first = x as *const T as *const i8;
        // SAFETY: `_mm_prefetch` needs SSE, part of every x86-64 processor,
        // and only hints the cache: no address is read or written.
        unsafe { _mm_prefetch::<_MM_HINT_T0>(first) };
        if std::mem::size_of::<T>() > std::mem::align_of::<T>() {
            let last = first.wrapping_add(std::mem::size_of::<T>() - 1);
            // SAFETY: as above (`last` is within `x`).
            unsafe { _mm_prefetch::<_MM_HINT_T0>(last) };
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = x;
}

/// Asks the processor to fetch the cache line holding byte `at` of `x`
/// (nothing when `at` is past its end), without reading any of it: for a
/// large record whose hot lines are known by offset, where reading which
/// lines are hot would itself wait for memory. A hint, as [`prefetch`].
#[inline(always)]
pub fn prefetch_at<T>(x: &T, at: usize) {
    #[cfg(target_arch = "x86_64")]
    if at < std::mem::size_of::<T>() {
        use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
        let byte = (x as *const T as *const i8).wrapping_add(at);
        // SAFETY: as in `prefetch` (`byte` is within `x`).
        unsafe { _mm_prefetch::<_MM_HINT_T0>(byte) };
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = (x, at);
}

/// Reserves room for `additional` more elements in `v` and, for a room
/// of at least `HUGE_PAGE_BYTES`, asks Linux to back it with transparent
/// huge pages (`madvise(MADV_HUGEPAGE)`; the machine's default is often
/// "madvise": only regions that ask get them). The per-flow arrays a
/// re-rate or a scheduler's per-flow read touches at random (a flow's
/// record, its pending finish, its allocation) span tens of MB on FB2010
/// (706,397 flows): in 4 KB pages nearly every such touch missed the TLB
/// as well as the cache. A hint: no value changes, and where it is refused
/// or on other systems nothing happens. Call it before the room is first
/// written: pages already touched stay small.
///
/// It grows `v` as `Vec::reserve` does (amortized doubling), and asks for
/// huge pages only when the allocation moved or grew: a caller that adds
/// one flow at a time (the runtime's coordinator, `Allocation::resize` per
/// started flow) gets neither a reallocation per flow nor a system call
/// per flow.
pub fn reserve_huge<T>(v: &mut Vec<T>, additional: usize) {
    let before = (v.as_ptr(), v.capacity());
    v.reserve(additional);
    if (v.as_ptr(), v.capacity()) == before {
        return;
    }
    #[cfg(target_os = "linux")]
    {
        const PAGE: usize = 4096;
        let start = v.as_ptr() as usize + v.len() * std::mem::size_of::<T>();
        let end = v.as_ptr() as usize + v.capacity() * std::mem::size_of::<T>();
        let (a, b) = (start.next_multiple_of(PAGE), end / PAGE * PAGE);
        if b >= a + HUGE_PAGE_BYTES {
            // SAFETY: [a, b) lies within `v`'s allocation, page aligned;
            // MADV_HUGEPAGE changes how pages are backed, never their
            // contents, and its failure is harmless (ignored).
            unsafe {
                libc::madvise(a as *mut libc::c_void, b - a, libc::MADV_HUGEPAGE);
            }
        }
    }
}

/// The least room [`reserve_huge`] asks huge pages for (one huge page).
const HUGE_PAGE_BYTES: usize = 2 << 20;

// Per-flow flag bits.
const DONE: u8 = 1;
const COMPUTE: u8 = 2;
const SIZE_UNKNOWN: u8 = 4;
const HAS_DEADLINE: u8 = 8;

impl NetState {
    /// An empty state over `fabric`.
    pub fn new(fabric: Fabric) -> NetState {
        NetState {
            capacity: fabric.links().iter().map(|l| l.capacity.0).collect(),
            fabric,
            fl: vec![],
            src: vec![],
            dst: vec![],
            path: vec![],
            groups: vec![],
            group_finish_at: vec![],
            group_dirty: vec![],
            #[cfg(debug_assertions)]
            group_finish_eager: vec![],
            group_heap: Default::default(),
            group_heap_on: false,
            active_groups: vec![],
            group_pos: vec![],
            pgroups: vec![],
            active_pgroups: vec![],
            now: Time::ZERO,
            active: vec![],
            start: vec![],
            deadlines: vec![],
            path_start: vec![],
            path_links: vec![],
            path_dense: vec![],
            path_index: HashMap::new(),
            ecmp_index: HashMap::new(),
            cpu_path: vec![],
            coflows: vec![],
            active_coflows: vec![],
        }
    }

    /// Reserves room for `n_flows` flows and `n_coflows` coflows, the
    /// per-flow arrays in huge pages where they are large
    /// ([`reserve_huge`]).
    pub fn reserve(&mut self, n_flows: usize, n_coflows: usize) {
        reserve_huge(&mut self.fl, n_flows);
        reserve_huge(&mut self.src, n_flows);
        reserve_huge(&mut self.dst, n_flows);
        reserve_huge(&mut self.path, n_flows);
        reserve_huge(&mut self.start, n_flows);
        self.coflows.reserve(n_coflows);
    }

    /// The fabric.
    pub fn fabric(&self) -> &Fabric {
        &self.fabric
    }

    /// The current instant.
    pub fn now(&self) -> Time {
        self.now
    }

    /// Moves time on to `t` (never back). Progress is lazy: nothing else changes.
    pub fn set_now(&mut self, t: Time) {
        debug_assert!(t >= self.now);
        // Finishes are computed at the instant their groups changed.
        self.flush_groups();
        self.now = t;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use coflowkit_model::{compute, flow, Dur};
    use coflowkit_model::{BitsPerSec, CoflowSpec, FlowKind};

    #[test]
    fn reserve_huge_grows_one_at_a_time_in_amortized_steps() {
        // The coordinator adds flows one by one: room for one more each
        // time must not reallocate each time (as `reserve_exact` did).
        let mut v: Vec<f64> = Vec::new();
        let mut reallocations = 0;
        for n in 0..100_000 {
            let cap = v.capacity();
            reserve_huge(&mut v, 1);
            reallocations += usize::from(v.capacity() != cap);
            v.push(n as f64);
        }
        assert!(
            reallocations <= 20,
            "{reallocations} reallocations for 100,000 pushes"
        );
        assert!(v.iter().enumerate().all(|(i, &x)| x == i as f64));
        // A whole workload's room at once is exact, as before.
        let mut w: Vec<u32> = Vec::new();
        reserve_huge(&mut w, 706_397);
        assert!(w.capacity() >= 706_397 && w.capacity() < 2 * 706_397);
    }

    #[test]
    fn mark_keys_order_as_total_cmp_and_give_the_mark_back() {
        let v = [
            f64::NEG_INFINITY,
            -1e300,
            -2.5,
            -1e-310,
            -0.0,
            0.0,
            1e-310,
            1.0,
            1.0 + f64::EPSILON,
            3e9,
            f64::MAX,
            f64::INFINITY,
        ];
        for &a in &v {
            assert_eq!(MarkKey::of(a).mark().to_bits(), a.to_bits());
            for &b in &v {
                assert_eq!(MarkKey::of(a).cmp(&MarkKey::of(b)), a.total_cmp(&b));
            }
        }
    }

    #[test]
    fn flows_wait_start_finish_and_coflows_stay_active_until_completed() {
        let fabric = Fabric::big_switch(2, BitsPerSec::GBPS)
            .unwrap()
            .with_cpus(BitsPerSec::GBPS)
            .unwrap();
        let mut st = NetState::new(fabric);
        let mut spec = CoflowSpec::new(
            4,
            Time(10),
            vec![
                flow(0, 1, 100).with_deadline(Dur(50)),
                compute(1, 300).size_unknown(),
                flow(1, 0, 0),
            ],
        );
        spec.deadline = Some(Dur(1000));
        st.set_now(Time(10));
        let c = st.add_coflow(&spec);
        assert_eq!(st.flows_of(c), 0..3);
        assert!((0..3).all(|f| st.is_waiting(f)));
        assert!(st.observed().active_coflows().is_empty());
        st.set_now(Time(20));
        st.release_coflow(c);
        let v = st.clairvoyant();
        assert_eq!(v.active_coflows(), &[c]);
        assert_eq!((v.arrival(c), v.release(c)), (Time(10), Time(20)));
        assert_eq!(v.coflow_deadline(c), Some(Time(1010)));
        // Nothing started: nothing of the coflow is known yet.
        assert_eq!((v.width(c), v.coflow_size(c)), (0, 0.0));
        assert!(st.start_flow(0));
        assert!(!st.start_flow(2), "a zero-byte flow is done at its start");
        st.set_now(Time(30));
        assert!(st.start_flow(1));
        let v = st.clairvoyant();
        assert_eq!(v.active_flows(), &[0, 1]);
        assert_eq!(
            (v.width(c), v.coflow_size(c), v.length(c)),
            (3, 400.0, 300.0)
        );
        assert_eq!((v.start(0), v.start(1)), (Time(20), Time(30)));
        assert_eq!((v.deadline(0), v.deadline(1)), (Some(Time(70)), None));
        assert_eq!((v.size_known(0), v.size_known(1)), (true, false));
        assert_eq!((v.kind(0), v.kind(1)), (FlowKind::Net, FlowKind::Compute));
        assert_eq!(v.path(1), &[LinkId(5)], "host 1's CPU");
        assert_eq!((v.sent(2), v.remaining(0)), (0.0, 100.0));
        // 100 bytes at 1 byte/ns: done at 130.
        assert_eq!(st.set_solo_rate(0, 1.0), Time(130));
        st.set_now(Time(130));
        st.finish_flow(0);
        st.finish_flow(1);
        let v = st.observed();
        assert!(v.active_flows().is_empty());
        assert_eq!(
            v.active_coflows(),
            &[c],
            "active until the driver completes it"
        );
        assert_eq!(v.coflow_sent(c), 400.0);
        st.complete_coflow(c);
        assert!(st.observed().active_coflows().is_empty());
        let report = st.into_flow_report();
        assert_eq!((report.start(2), report.bottleneck(1)), (Time(20), 1e9));
    }

    #[test]
    fn a_flow_that_leaves_a_group_and_joins_it_again_keeps_its_progress() {
        // Flows 0 and 1 (1,000 bytes each) in group 7 at 1 byte/ns. At 100
        // flow 1 leaves (solo, paused), at 300 it joins again with 900
        // left: flow 0 is done at 1,000 and flow 1 at 1,200 (its first
        // stay's entry, which would end it at 1,000, is stale).
        let mut st = NetState::new(Fabric::big_switch(2, BitsPerSec::GBPS).unwrap());
        let c = st.add_coflow(&CoflowSpec::new(
            1,
            Time(0),
            vec![flow(0, 1, 1000), flow(0, 1, 1000)],
        ));
        st.release_coflow(c);
        assert!(st.start_flow(0) && st.start_flow(1));
        st.join_group(0, 7);
        st.join_group(1, 7);
        st.set_group_rate(7, 1.0);
        st.set_now(Time(100));
        st.set_solo_rate(1, 0.0);
        st.set_now(Time(300));
        st.join_group(1, 7);
        assert_eq!(st.next_group_finish(), Time(1000));
        st.set_now(Time(1000));
        let mut due = vec![];
        st.due_grouped(Time(1000), &mut due);
        assert_eq!(due, vec![0]);
        st.finish_flow(0);
        assert_eq!(st.next_group_finish(), Time(1200));
        assert_eq!(st.observed().sent(1), 800.0);
    }

    #[test]
    fn flows_added_later_and_measured_bytes_replace_the_modelled_ones() {
        // A coflow added with no flows gains two as they open (the
        // runtime); measured bytes replace what the rates would have sent,
        // in a shared group and in a proportional group alike.
        let mut st = NetState::new(Fabric::big_switch(3, BitsPerSec::GBPS).unwrap());
        let c = st.add_coflow(&CoflowSpec::new(9, Time(0), vec![]));
        st.release_coflow(c);
        let a = st.add_flow(c, &flow(0, 2, 1000));
        let b = st.add_flow(c, &flow(1, 2, 1000));
        assert_eq!(st.flows_of(c), 0..0, "only the flows it was added with");
        assert!(st.start_flow(a) && st.start_flow(b));
        assert_eq!(
            st.observed().active_flows_of(c).collect::<Vec<_>>(),
            vec![a, b]
        );
        st.join_group(a, 0);
        st.set_group_rate(0, 1.0);
        st.join_pgroup(b, 0);
        st.set_pgroup_deadline(0, Time(1000));
        st.set_now(Time(100));
        assert_eq!(
            (st.observed().sent(a), st.observed().sent(b)),
            (100.0, 100.0)
        );
        st.resync_sent(&[(a, 30.0), (b, 250.0)]);
        let v = st.observed();
        assert_eq!(
            (v.sent(a), v.sent(b), v.coflow_sent(c)),
            (30.0, 250.0, 280.0)
        );
        // `a` is still in its group at 1 byte/ns; `b`'s group restarted paused.
        assert_eq!((st.flow_group(a), st.pgroup_deadline(0)), (0, Time::NEVER));
        st.set_now(Time(200));
        assert_eq!(
            (st.observed().sent(a), st.observed().sent(b)),
            (130.0, 250.0)
        );
        // A flow's size is what it sent when it finishes.
        st.finish_flow_measured(b, 400.0);
        assert_eq!(st.observed().coflow_sent(c), 530.0);
        assert_eq!(st.clairvoyant().coflow_size(c), 1400.0);
    }
}
