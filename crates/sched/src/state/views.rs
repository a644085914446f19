//! What schedulers and drivers read of a [`NetState`]: the non-clairvoyant
//! [`Observed`] and the clairvoyant [`Clairvoyant`] views, the driver's own
//! accessors, and the [`FlowReport`] kept after a run.

use super::{CoflowIdx, FlowIdx, NetState, PathIdx};
use super::{COMPUTE, DONE, HAS_DEADLINE, INACTIVE, SIZE_UNKNOWN};
use coflowkit_model::{
    BitsPerSec, CoflowId, DagId, Dur, Fabric, FlowKind, HostId, JobStage, LinkId, Time,
};

impl NetState {
    /// The non-clairvoyant view.
    pub fn observed(&self) -> Observed<'_> {
        Observed { s: self }
    }

    /// The clairvoyant view.
    pub fn clairvoyant(&self) -> Clairvoyant<'_> {
        Clairvoyant { s: self }
    }

    /// Number of flows seen.
    pub fn n_flows(&self) -> usize {
        self.fl.len()
    }

    /// Whether flow `f` is active.
    pub fn is_active(&self, f: FlowIdx) -> bool {
        self.fl[f as usize].active_pos != INACTIVE
    }

    /// Bytes left of flow `f` now (for the driver).
    pub fn remaining(&self, f: FlowIdx) -> f64 {
        self.fl[f as usize].size - self.flow_sent(f as usize)
    }

    /// Active flows (for the driver).
    pub fn active(&self) -> &[FlowIdx] {
        &self.active
    }

    /// The coflow of flow `f` (for the driver).
    pub fn coflow_of(&self, f: FlowIdx) -> CoflowIdx {
        self.fl[f as usize].coflow
    }

    /// Flows of coflow `c`, as an index range (for the driver).
    pub fn flows_of(&self, c: CoflowIdx) -> std::ops::Range<FlowIdx> {
        let i = &self.coflows[c as usize];
        i.first_flow..i.first_flow + i.n_flows
    }

    /// What a driver reports per flow once a run is over, keeping only
    /// that (the rest of the state is freed): each flow's start instant, and
    /// the least capacity (bits/s) on its path.
    pub fn into_flow_report(self) -> FlowReport {
        let bottleneck = (0..self.path_start.len() as PathIdx)
            .map(|p| {
                let (s, e) = self.path_range(p);
                self.path_links[s..e]
                    .iter()
                    .map(|l| self.capacity[l.0 as usize])
                    .fold(f64::INFINITY, f64::min)
            })
            .collect();
        FlowReport {
            start: self.start,
            path: self.path,
            path_bottleneck: bottleneck,
        }
    }

    /// Whether flow `f` has not started yet.
    pub fn is_waiting(&self, f: FlowIdx) -> bool {
        self.fl[f as usize].active_pos == INACTIVE && self.fl[f as usize].flags & DONE == 0
    }

    /// The links flow `f` crosses (for the driver).
    pub fn path_of(&self, f: FlowIdx) -> &[LinkId] {
        let (s, e) = self.path_range(self.path[f as usize]);
        &self.path_links[s..e]
    }

    /// Capacity of each link, bits/s (for the driver).
    pub fn capacities(&self) -> &[f64] {
        &self.capacity
    }

    /// The group of flow `f` as the state applies it: [`SOLO`], a shared
    /// group id, or `PROPORTIONAL | g` (for the driver).
    pub fn flow_group(&self, f: FlowIdx) -> u32 {
        self.fl[f as usize].group
    }

    /// The rate of solo flow `f`, bytes per ns (for the driver).
    pub fn solo_rate(&self, f: FlowIdx) -> f64 {
        self.fl[f as usize].rate
    }

    /// The instant every member of proportional group `g` finishes
    /// (`Time::NEVER` while paused or empty).
    pub fn pgroup_deadline(&self, g: u32) -> Time {
        self.pgroups
            .get(g as usize)
            .map_or(Time::NEVER, |p| p.deadline)
    }

    /// The deadline of flow `f` relative to its start, if it has one.
    fn flow_deadline(&self, f: usize) -> Option<Dur> {
        if self.fl[f].flags & HAS_DEADLINE == 0 {
            return None;
        }
        self.deadlines
            .binary_search_by_key(&(f as FlowIdx), |&(g, _)| g)
            .ok()
            .map(|i| self.deadlines[i].1)
    }
}

/// Per-flow facts a driver reports after a run ([`NetState::into_flow_report`]).
#[derive(Debug, Clone)]
pub struct FlowReport {
    start: Vec<Time>,
    path: Vec<PathIdx>,
    path_bottleneck: Vec<f64>,
}

impl FlowReport {
    /// When flow `f` started (`Time::NEVER` if it never did).
    pub fn start(&self, f: FlowIdx) -> Time {
        self.start[f as usize]
    }
    /// The least capacity (bits/s) on flow `f`'s path.
    pub fn bottleneck(&self, f: FlowIdx) -> f64 {
        self.path_bottleneck[self.path[f as usize] as usize]
    }
}

/// What a non-clairvoyant scheduler may read; see the module doc.
#[derive(Clone, Copy)]
pub struct Observed<'a> {
    s: &'a NetState,
}

macro_rules! observed_methods {
    () => {
        /// Number of links in the fabric.
        #[inline]
        pub fn n_links(&self) -> usize {
            self.s.capacity.len()
        }
        /// Capacity of each link, bits/s, indexed by link.
        #[inline]
        pub fn capacities(&self) -> &'a [f64] {
            &self.s.capacity
        }
        /// Capacity of link `l`.
        #[inline]
        pub fn capacity(&self, l: LinkId) -> BitsPerSec {
            BitsPerSec(self.s.capacity[l.0 as usize])
        }
        /// The fabric.
        #[inline]
        pub fn fabric(&self) -> &'a Fabric {
            &self.s.fabric
        }
        /// Active flows, in a deterministic order.
        #[inline]
        pub fn active_flows(&self) -> &'a [FlowIdx] {
            &self.s.active
        }
        /// Active coflows (released and not complete, whether or not any of
        /// their flows is sending), in release order.
        #[inline]
        pub fn active_coflows(&self) -> &'a [CoflowIdx] {
            &self.s.active_coflows
        }
        /// Whether flow `f` is active (started and not finished).
        #[inline]
        pub fn is_active(&self, f: FlowIdx) -> bool {
            self.s.fl[f as usize].active_pos != INACTIVE
        }
        /// Number of flows seen so far (waiting, active or done).
        #[inline]
        pub fn n_flows(&self) -> usize {
            self.s.fl.len()
        }
        /// Whether flow `f` is a network transfer or a compute stage.
        #[inline]
        pub fn kind(&self, f: FlowIdx) -> FlowKind {
            if self.s.fl[f as usize].flags & COMPUTE != 0 {
                FlowKind::Compute
            } else {
                FlowKind::Net
            }
        }
        /// When flow `f` started (`Time::NEVER` if it has not).
        #[inline]
        pub fn start(&self, f: FlowIdx) -> Time {
            self.s.start[f as usize]
        }
        /// The instant by which flow `f` should finish (its start plus its
        /// deadline; Karuna type 1), if it has a deadline and has started.
        #[inline]
        pub fn deadline(&self, f: FlowIdx) -> Option<Time> {
            let start = self.s.start[f as usize];
            if start == Time::NEVER {
                return None;
            }
            self.s.flow_deadline(f as usize).map(|d| start + d)
        }
        /// Whether a scheduler may use flow `f`'s size (false: Karuna type
        /// 3). Only [`Clairvoyant`] has sizes; a scheduler that honours
        /// Karuna's flow types checks this before reading one.
        #[inline]
        pub fn size_known(&self, f: FlowIdx) -> bool {
            self.s.fl[f as usize].flags & SIZE_UNKNOWN == 0
        }
        /// The coflow flow `f` belongs to.
        #[inline]
        pub fn coflow_of(&self, f: FlowIdx) -> CoflowIdx {
            self.s.fl[f as usize].coflow
        }
        /// The sending host of flow `f`.
        #[inline]
        pub fn src(&self, f: FlowIdx) -> HostId {
            self.s.src[f as usize]
        }
        /// The receiving host of flow `f`.
        #[inline]
        pub fn dst(&self, f: FlowIdx) -> HostId {
            self.s.dst[f as usize]
        }
        /// The interned path of flow `f`: flows with equal paths share it.
        #[inline]
        pub fn path_idx(&self, f: FlowIdx) -> PathIdx {
            self.s.path[f as usize]
        }
        /// Number of interned paths.
        #[inline]
        pub fn n_paths(&self) -> usize {
            self.s.path_start.len()
        }
        /// The links of interned path `p`.
        #[inline]
        pub fn path_links(&self, p: PathIdx) -> &'a [LinkId] {
            let s = self.s.path_start[p as usize] as usize;
            let e = self
                .s
                .path_start
                .get(p as usize + 1)
                .map_or(self.s.path_links.len(), |&x| x as usize);
            &self.s.path_links[s..e]
        }
        /// The links flow `f` crosses.
        #[inline]
        pub fn path(&self, f: FlowIdx) -> &'a [LinkId] {
            self.path_links(self.s.path[f as usize])
        }
        /// Bytes flow `f` has sent so far.
        #[inline]
        pub fn sent(&self, f: FlowIdx) -> f64 {
            self.s.flow_sent(f as usize)
        }
        /// The current instant.
        #[inline]
        pub fn now(&self) -> Time {
            self.s.now
        }
        /// The id of coflow `c`.
        #[inline]
        pub fn coflow_id(&self, c: CoflowIdx) -> CoflowId {
            self.s.coflows[c as usize].id
        }
        /// When coflow `c` arrived.
        #[inline]
        pub fn arrival(&self, c: CoflowIdx) -> Time {
            self.s.coflows[c as usize].arrival
        }
        /// When coflow `c` was released (its arrival, or later when
        /// Starts-After parents held it; `Time::NEVER` before).
        #[inline]
        pub fn release(&self, c: CoflowIdx) -> Time {
            self.s.coflows[c as usize].release
        }
        /// The instant by which coflow `c` should complete (its arrival plus
        /// its deadline), if it has one.
        #[inline]
        pub fn coflow_deadline(&self, c: CoflowIdx) -> Option<Time> {
            let ci = &self.s.coflows[c as usize];
            ci.deadline.map(|d| ci.arrival + d)
        }
        /// The job and stage of coflow `c`, if any.
        #[inline]
        pub fn job(&self, c: CoflowIdx) -> Option<JobStage> {
            self.s.coflows[c as usize].job
        }
        /// Coflow `c`'s Aalo CoflowId: its DAG and its place in it (Aalo
        /// 5.1, Pseudocode 2; see [`coflowkit_model::DagId`]).
        #[inline]
        pub fn dag(&self, c: CoflowIdx) -> DagId {
            self.s.coflows[c as usize].dag
        }
        /// Bytes coflow `c` has sent so far, over all its flows.
        #[inline]
        pub fn coflow_sent(&self, c: CoflowIdx) -> f64 {
            self.s.coflow_sent_now(c as usize)
        }
        /// The flows of coflow `c` that are still active.
        #[inline]
        pub fn active_flows_of(&self, c: CoflowIdx) -> impl Iterator<Item = FlowIdx> + 'a {
            let s = self.s;
            let i = &s.coflows[c as usize];
            (i.first_flow..i.first_flow + i.n_flows)
                .chain(i.later.iter().copied())
                .filter(move |&f| s.fl[f as usize].active_pos != INACTIVE)
        }
    };
}

impl<'a> Observed<'a> {
    observed_methods!();
}

/// What a clairvoyant scheduler may read: all of [`Observed`] plus sizes.
#[derive(Clone, Copy)]
pub struct Clairvoyant<'a> {
    s: &'a NetState,
}

impl<'a> Clairvoyant<'a> {
    observed_methods!();

    /// The non-clairvoyant part of this view.
    pub fn observed(&self) -> Observed<'a> {
        Observed { s: self.s }
    }
    /// The size of started flow `f`, bytes (flows not started yet are not
    /// known; see the module doc).
    #[inline]
    pub fn size(&self, f: FlowIdx) -> f64 {
        debug_assert!(!self.s.is_waiting(f), "size of flow {f}, not started");
        self.s.fl[f as usize].size
    }
    /// The bytes started flow `f` has left to send.
    #[inline]
    pub fn remaining(&self, f: FlowIdx) -> f64 {
        debug_assert!(!self.s.is_waiting(f), "size of flow {f}, not started");
        self.s.fl[f as usize].size - self.s.flow_sent(f as usize)
    }
    /// The total size of coflow `c`'s started flows, bytes.
    #[inline]
    pub fn coflow_size(&self, c: CoflowIdx) -> f64 {
        self.s.coflows[c as usize].size
    }
    /// The bytes coflow `c`'s started flows have left to send.
    #[inline]
    pub fn coflow_remaining(&self, c: CoflowIdx) -> f64 {
        self.s.coflows[c as usize].size - self.s.coflow_sent_now(c as usize)
    }
    /// Coflow `c`'s bytes left as [`Clairvoyant::coflow_remaining`] gives
    /// them up to rounding, its grouped flows summed per rate group over
    /// `groups` (which must hold only flows of `c`), and a bound on how far
    /// from that value it is: the groups' costs, not the flows'. Where the
    /// groups cannot tell (see [`NetState`]'s `sums`), the per-flow value
    /// with bound 0; with no grouped flows, the same value, bound 0.
    pub fn coflow_remaining_by_groups(
        &self,
        c: CoflowIdx,
        groups: impl IntoIterator<Item = u32> + Clone,
    ) -> (f64, f64) {
        let size = self.s.coflows[c as usize].size;
        let Some((sent, err)) = self.s.coflow_sent_by_groups(c as usize, groups.clone()) else {
            return (self.coflow_remaining(c), 0.0);
        };
        let left = size - sent;
        if err == 0.0 {
            return (left, 0.0);
        }
        // The subtraction from the size, rounded here and there.
        let bound = err + f64::EPSILON * 2.0 * (size.abs() + left.abs());
        #[cfg(debug_assertions)]
        {
            let exact = self.coflow_remaining(c);
            assert!(
                (left - exact).abs() <= bound,
                "coflow {c}: {left} bytes left by groups, {exact} by flows, bound {bound}"
            );
            let mut groups = groups.into_iter();
            assert!(groups.all(|g| self.s.group_holds_only(g, c)));
        }
        (left, bound)
    }
    /// The scale of proportional group `g` and its per-link member weights:
    /// bytes left on link `l` = `scale * weights[l]` (see [`NetState`]).
    #[inline]
    pub fn pgroup_link_weights(&self, g: u32) -> (f64, &'a [f64]) {
        self.s.pgroup_link_weights(g)
    }
    /// The number of started flows of coflow `c` (its width so far).
    #[inline]
    pub fn width(&self, c: CoflowIdx) -> u32 {
        self.s.coflows[c as usize].n_started
    }
    /// The size of the largest started flow of coflow `c` (its length so far).
    #[inline]
    pub fn length(&self, c: CoflowIdx) -> f64 {
        self.s.coflows[c as usize].length
    }
}
