//! The network state a scheduler reads, and the two views of it.
//!
//! [`NetState`] holds every flow and coflow the driver (the simulator's
//! engine, or the runtime's coordinator) has seen, in flat arrays indexed by
//! [`FlowIdx`] and [`CoflowIdx`]. The driver mutates it; schedulers only read
//! it through a view:
//!
//! * [`Observed`]: what a non-clairvoyant scheduler may know: the fabric,
//!   which flows and coflows are active, their endpoints, paths and arrival,
//!   and the bytes each has sent so far. No sizes, widths or end times: the
//!   type has no method that returns them.
//! * [`Clairvoyant`]: everything in `Observed` plus sizes and remaining bytes.
//!
//! Correctness properties (enforced by the mutators here): `sent <= size`
//! for every flow; a coflow's `sent` is the sum of its flows'; `active` holds
//! exactly the flows that arrived and have not finished, in arrival order
//! up to swap-removal (its order is deterministic).

use coflowkit_model::{BitsPerSec, CoflowId, CoflowSpec, Fabric, HostId, JobStage, LinkId, Time};
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
    job: Option<JobStage>,
    first_flow: u32,
    n_flows: u32,
    n_active: u32,
    size: f64,
    sent: f64,
    length: f64,
}

/// Every flow and coflow seen so far; see the module doc.
#[derive(Debug, Clone)]
pub struct NetState {
    capacity: Vec<f64>,
    fabric: Fabric,
    // Flows.
    coflow: Vec<CoflowIdx>,
    src: Vec<HostId>,
    dst: Vec<HostId>,
    path: Vec<PathIdx>,
    size: Vec<f64>,
    sent: Vec<f64>,
    active_pos: Vec<u32>,
    active: Vec<FlowIdx>,
    // Interned paths.
    path_start: Vec<u32>,
    path_links: Vec<LinkId>,
    path_index: HashMap<(HostId, HostId), PathIdx>,
    // Coflows.
    coflows: Vec<CoflowInfo>,
    active_coflows: Vec<CoflowIdx>,
}

const INACTIVE: u32 = u32::MAX;

impl NetState {
    /// An empty state over `fabric`.
    pub fn new(fabric: Fabric) -> NetState {
        NetState {
            capacity: fabric.links().iter().map(|l| l.capacity.0).collect(),
            fabric,
            coflow: vec![],
            src: vec![],
            dst: vec![],
            path: vec![],
            size: vec![],
            sent: vec![],
            active_pos: vec![],
            active: vec![],
            path_start: vec![],
            path_links: vec![],
            path_index: HashMap::new(),
            coflows: vec![],
            active_coflows: vec![],
        }
    }

    /// Reserves room for `n_flows` flows and `n_coflows` coflows.
    pub fn reserve(&mut self, n_flows: usize, n_coflows: usize) {
        self.coflow.reserve(n_flows);
        self.src.reserve(n_flows);
        self.dst.reserve(n_flows);
        self.path.reserve(n_flows);
        self.size.reserve(n_flows);
        self.sent.reserve(n_flows);
        self.active_pos.reserve(n_flows);
        self.coflows.reserve(n_coflows);
    }

    /// The fabric.
    pub fn fabric(&self) -> &Fabric {
        &self.fabric
    }

    fn intern_path(&mut self, src: HostId, dst: HostId) -> PathIdx {
        if let Some(&p) = self.path_index.get(&(src, dst)) {
            return p;
        }
        let p = self.path_start.len() as PathIdx;
        self.path_start.push(self.path_links.len() as u32);
        self.fabric.path_into(src, dst, &mut self.path_links);
        self.path_index.insert((src, dst), p);
        p
    }

    /// Adds a coflow whose flows all arrive now; returns its index.
    /// Zero-byte flows are added already finished.
    pub fn add_coflow(&mut self, spec: &CoflowSpec) -> CoflowIdx {
        let c = self.coflows.len() as CoflowIdx;
        let first = self.coflow.len() as u32;
        let mut n_active = 0;
        let mut size = 0.0;
        let mut length: f64 = 0.0;
        for f in &spec.flows {
            let idx = self.coflow.len() as FlowIdx;
            let p = self.intern_path(f.src, f.dst);
            self.coflow.push(c);
            self.src.push(f.src);
            self.dst.push(f.dst);
            self.path.push(p);
            let b = f.bytes.0 as f64;
            size += b;
            length = length.max(b);
            self.size.push(b);
            self.sent.push(0.0);
            if f.bytes.0 > 0 {
                self.active_pos.push(self.active.len() as u32);
                self.active.push(idx);
                n_active += 1;
            } else {
                self.active_pos.push(INACTIVE);
            }
        }
        self.coflows.push(CoflowInfo {
            id: spec.id,
            arrival: spec.arrival,
            job: spec.job,
            first_flow: first,
            n_flows: spec.flows.len() as u32,
            n_active,
            size,
            sent: 0.0,
            length,
        });
        if n_active > 0 {
            self.active_coflows.push(c);
        }
        c
    }

    /// Credits every active flow with `rate[f]` (bytes per ns) for `dt_ns`.
    /// Does not finish flows: the driver decides completions.
    pub fn advance(&mut self, rate_bytes_per_ns: &[f64], dt_ns: f64) {
        if dt_ns <= 0.0 {
            return;
        }
        for &f in &self.active {
            let f = f as usize;
            let r = rate_bytes_per_ns[f];
            if r > 0.0 {
                let d = (r * dt_ns).min(self.size[f] - self.sent[f]);
                self.sent[f] += d;
                self.coflows[self.coflow[f] as usize].sent += d;
            }
        }
    }

    /// Marks flow `f` finished (all its bytes sent). Returns true when this
    /// was its coflow's last active flow.
    pub fn finish_flow(&mut self, f: FlowIdx) -> bool {
        let fi = f as usize;
        let pos = self.active_pos[fi];
        if pos == INACTIVE {
            return false;
        }
        let c = self.coflow[fi] as usize;
        let d = self.size[fi] - self.sent[fi];
        self.sent[fi] = self.size[fi];
        self.coflows[c].sent += d;
        let last = self.active.pop().expect("active flow list holds f");
        if last != f {
            self.active[pos as usize] = last;
            self.active_pos[last as usize] = pos;
        }
        self.active_pos[fi] = INACTIVE;
        self.coflows[c].n_active -= 1;
        if self.coflows[c].n_active == 0 {
            let ci = c as CoflowIdx;
            self.active_coflows.retain(|&x| x != ci);
            true
        } else {
            false
        }
    }

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
        self.coflow.len()
    }

    /// Whether flow `f` is active.
    pub fn is_active(&self, f: FlowIdx) -> bool {
        self.active_pos[f as usize] != INACTIVE
    }

    /// Bytes left of flow `f` (for the driver).
    pub fn remaining(&self, f: FlowIdx) -> f64 {
        self.size[f as usize] - self.sent[f as usize]
    }

    /// Active flows (for the driver).
    pub fn active(&self) -> &[FlowIdx] {
        &self.active
    }

    /// The coflow of flow `f` (for the driver).
    pub fn coflow_of(&self, f: FlowIdx) -> CoflowIdx {
        self.coflow[f as usize]
    }

    /// Flows of coflow `c`, as an index range (for the driver).
    pub fn flows_of(&self, c: CoflowIdx) -> std::ops::Range<FlowIdx> {
        let i = &self.coflows[c as usize];
        i.first_flow..i.first_flow + i.n_flows
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
        /// Active coflows, in arrival order.
        #[inline]
        pub fn active_coflows(&self) -> &'a [CoflowIdx] {
            &self.s.active_coflows
        }
        /// Whether flow `f` is active.
        #[inline]
        pub fn is_active(&self, f: FlowIdx) -> bool {
            self.s.active_pos[f as usize] != INACTIVE
        }
        /// Number of flows seen so far (active or not).
        #[inline]
        pub fn n_flows(&self) -> usize {
            self.s.coflow.len()
        }
        /// The coflow flow `f` belongs to.
        #[inline]
        pub fn coflow_of(&self, f: FlowIdx) -> CoflowIdx {
            self.s.coflow[f as usize]
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
            let e = self.s.path_start.get(p as usize + 1).map_or(self.s.path_links.len(), |&x| x as usize);
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
            self.s.sent[f as usize]
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
        /// The job and stage of coflow `c`, if any.
        #[inline]
        pub fn job(&self, c: CoflowIdx) -> Option<JobStage> {
            self.s.coflows[c as usize].job
        }
        /// Bytes coflow `c` has sent so far, over all its flows.
        #[inline]
        pub fn coflow_sent(&self, c: CoflowIdx) -> f64 {
            self.s.coflows[c as usize].sent
        }
        /// The flows of coflow `c` that are still active.
        #[inline]
        pub fn active_flows_of(&self, c: CoflowIdx) -> impl Iterator<Item = FlowIdx> + 'a {
            let s = self.s;
            let i = &s.coflows[c as usize];
            (i.first_flow..i.first_flow + i.n_flows).filter(move |&f| s.active_pos[f as usize] != INACTIVE)
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
    /// The size of flow `f`, bytes.
    #[inline]
    pub fn size(&self, f: FlowIdx) -> f64 {
        self.s.size[f as usize]
    }
    /// The bytes flow `f` has left to send.
    #[inline]
    pub fn remaining(&self, f: FlowIdx) -> f64 {
        self.s.size[f as usize] - self.s.sent[f as usize]
    }
    /// The total size of coflow `c`, bytes.
    #[inline]
    pub fn coflow_size(&self, c: CoflowIdx) -> f64 {
        self.s.coflows[c as usize].size
    }
    /// The bytes coflow `c` has left to send.
    #[inline]
    pub fn coflow_remaining(&self, c: CoflowIdx) -> f64 {
        let i = &self.s.coflows[c as usize];
        i.size - i.sent
    }
    /// The number of flows of coflow `c` (its width).
    #[inline]
    pub fn width(&self, c: CoflowIdx) -> u32 {
        self.s.coflows[c as usize].n_flows
    }
    /// The size of the largest flow of coflow `c` (its length).
    #[inline]
    pub fn length(&self, c: CoflowIdx) -> f64 {
        self.s.coflows[c as usize].length
    }
}
