//! The network state a scheduler reads, and the two views of it.
//!
//! [`NetState`] holds every flow and coflow the driver (the simulator's
//! engine, or the runtime's coordinator) has seen, in flat arrays indexed by
//! [`FlowIdx`] and [`CoflowIdx`]. The driver mutates it; schedulers only read
//! it through a view:
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

use crate::radix::RadixQueue;
use coflowkit_model::{
    ceil_ns_time, BitsPerSec, CoflowId, CoflowSpec, DagId, Dur, Fabric, FlowKey, FlowKind,
    FlowSpec, HostId, JobStage, LinkId, Time,
};
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
    members: std::collections::BinaryHeap<std::cmp::Reverse<(MarkKey, FlowIdx)>>,
}

impl Default for Group {
    fn default() -> Group {
        Group {
            head: f64::INFINITY,
            clock: 0.0,
            clock_time: Time::ZERO,
            rate: 0.0,
            n_members: 0,
            members: Default::default(),
        }
    }
}

/// An `f64` mark ordered by `total_cmp`.
#[derive(Debug, Clone, Copy, PartialEq)]
struct MarkKey(f64);
impl Eq for MarkKey {}
impl PartialOrd for MarkKey {
    fn partial_cmp(&self, o: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(o))
    }
}
impl Ord for MarkKey {
    fn cmp(&self, o: &Self) -> std::cmp::Ordering {
        self.0.total_cmp(&o.0)
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
    // Flows.
    coflow: Vec<CoflowIdx>,
    src: Vec<HostId>,
    dst: Vec<HostId>,
    path: Vec<PathIdx>,
    size: Vec<f64>,
    // Lazy progress: solo flows sent `base + rate (now - base_time)`;
    // grouped flows finish when their group's clock reaches `base` (mark).
    base: Vec<f64>,
    base_time: Vec<Time>,
    rate: Vec<f64>,
    group: Vec<u32>,
    groups: Vec<Group>,
    // When each group's next member finishes, and a lazy monotone queue of
    // (instant, group): an entry is live while it equals `group_finish_at`.
    group_finish_at: Vec<Time>,
    // Used only while many groups are active (a scan is faster below).
    group_heap: RadixQueue,
    group_heap_on: bool,
    active_groups: Vec<u32>,
    group_pos: Vec<u32>,
    pgroups: Vec<PGroup>,
    active_pgroups: Vec<u32>,
    now: Time,
    active_pos: Vec<u32>,
    active: Vec<FlowIdx>,
    // Per flow: `DONE`, `COMPUTE`, `SIZE_UNKNOWN`, `HAS_DEADLINE` bits; the
    // start instant (`Time::NEVER` while waiting); and, for the few flows
    // that have one, the deadline relative to the start (sorted by flow).
    flags: Vec<u8>,
    start: Vec<Time>,
    deadlines: Vec<(FlowIdx, Dur)>,
    // Interned paths, by (src, dst) for ECMP choice 0 (every path of a
    // fabric without path diversity: the big switch's fast path) and by
    // (src, dst, choice) for the others: flows of one route share one.
    path_start: Vec<u32>,
    path_links: Vec<LinkId>,
    path_index: HashMap<(HostId, HostId), PathIdx>,
    ecmp_index: HashMap<(HostId, HostId, u32), PathIdx>,
    // The one-link path of each host's CPU, once a compute stage used it.
    cpu_path: Vec<PathIdx>,
    // Coflows.
    coflows: Vec<CoflowInfo>,
    active_coflows: Vec<CoflowIdx>,
}

const INACTIVE: u32 = u32::MAX;

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
            coflow: vec![],
            src: vec![],
            dst: vec![],
            path: vec![],
            size: vec![],
            base: vec![],
            base_time: vec![],
            rate: vec![],
            group: vec![],
            groups: vec![],
            group_finish_at: vec![],
            group_heap: Default::default(),
            group_heap_on: false,
            active_groups: vec![],
            group_pos: vec![],
            pgroups: vec![],
            active_pgroups: vec![],
            now: Time::ZERO,
            active_pos: vec![],
            active: vec![],
            flags: vec![],
            start: vec![],
            deadlines: vec![],
            path_start: vec![],
            path_links: vec![],
            path_index: HashMap::new(),
            ecmp_index: HashMap::new(),
            cpu_path: vec![],
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
        self.base.reserve(n_flows);
        self.base_time.reserve(n_flows);
        self.rate.reserve(n_flows);
        self.group.reserve(n_flows);
        self.active_pos.reserve(n_flows);
        self.flags.reserve(n_flows);
        self.start.reserve(n_flows);
        self.coflows.reserve(n_coflows);
    }

    /// The fabric.
    pub fn fabric(&self) -> &Fabric {
        &self.fabric
    }

    /// The interned path of a flow from `src` to `dst` with identity `key`:
    /// the route its ECMP choice picks (always choice 0 on fabrics without
    /// path diversity, where no hash is computed).
    fn intern_path(&mut self, src: HostId, dst: HostId, key: FlowKey) -> PathIdx {
        let choice = self.fabric.path_choice(src, dst, key);
        let known = if choice == 0 {
            self.path_index.get(&(src, dst))
        } else {
            self.ecmp_index.get(&(src, dst, choice))
        };
        if let Some(&p) = known {
            return p;
        }
        let p = self.path_start.len() as PathIdx;
        self.path_start.push(self.path_links.len() as u32);
        let out = &mut self.path_links;
        self.fabric.path_into(src, dst, choice, out);
        if choice == 0 {
            self.path_index.insert((src, dst), p);
        } else {
            self.ecmp_index.insert((src, dst, choice), p);
        }
        p
    }

    /// The one-link path of host `h`'s CPU. The fabric must have CPUs
    /// (validated workloads guarantee it for their compute stages).
    fn intern_cpu_path(&mut self, h: HostId) -> PathIdx {
        let hi = h.0 as usize;
        if self.cpu_path.len() <= hi {
            self.cpu_path.resize(hi + 1, INACTIVE);
        }
        if self.cpu_path[hi] != INACTIVE {
            return self.cpu_path[hi];
        }
        let p = self.path_start.len() as PathIdx;
        self.path_start.push(self.path_links.len() as u32);
        let has_cpu = self.fabric.cpu_path_into(h, &mut self.path_links);
        assert!(has_cpu, "a compute stage on {h}, which has no CPU resource");
        self.cpu_path[hi] = p;
        p
    }

    /// Adds a coflow that arrives now, with all its flows waiting; returns
    /// its index. The coflow is not active until [`NetState::release_coflow`].
    pub fn add_coflow(&mut self, spec: &CoflowSpec) -> CoflowIdx {
        let c = self.coflows.len() as CoflowIdx;
        let first = self.coflow.len() as u32;
        for (i, f) in spec.flows.iter().enumerate() {
            self.push_flow(c, spec.id, i as u32, f);
        }
        self.coflows.push(CoflowInfo {
            id: spec.id,
            arrival: spec.arrival,
            release: Time::NEVER,
            job: spec.job,
            dag: DagId::of(spec),
            deadline: spec.deadline,
            first_flow: first,
            n_flows: spec.flows.len() as u32,
            n_active: 0,
            n_started: 0,
            size: 0.0,
            length: 0.0,
            base_sent: 0.0,
            base_time: self.now,
            solo_rate: 0.0,
            n_grouped: 0,
            later: vec![],
        });
        c
    }

    /// Appends flow `f`, the `index`-th of coflow `c` (id `id`), waiting.
    fn push_flow(&mut self, c: CoflowIdx, id: CoflowId, index: u32, f: &FlowSpec) -> FlowIdx {
        let idx = self.coflow.len() as FlowIdx;
        let key = FlowKey {
            coflow: id.0,
            index,
        };
        let (p, mut flags) = match f.kind {
            FlowKind::Net => (self.intern_path(f.src, f.dst, key), 0),
            FlowKind::Compute => (self.intern_cpu_path(f.src), COMPUTE),
        };
        if !f.size_known {
            flags |= SIZE_UNKNOWN;
        }
        if let Some(d) = f.deadline {
            flags |= HAS_DEADLINE;
            self.deadlines.push((idx, d));
        }
        self.coflow.push(c);
        self.src.push(f.src);
        self.dst.push(f.dst);
        self.path.push(p);
        self.size.push(f.bytes.0 as f64);
        self.base.push(0.0);
        self.base_time.push(self.now);
        self.rate.push(0.0);
        self.group.push(SOLO);
        self.active_pos.push(INACTIVE);
        self.flags.push(flags);
        self.start.push(Time::NEVER);
        idx
    }

    /// Adds one more flow to coflow `c`, waiting (start it with
    /// [`NetState::start_flow`]); returns its index. For drivers that learn
    /// a coflow's flows as they open (the runtime): such flows are not in
    /// [`NetState::flows_of`], which keeps the flows the coflow was added
    /// with, but are everywhere else (the views' `active_flows_of`, the
    /// coflow's bytes sent).
    pub fn add_flow(&mut self, c: CoflowIdx, f: &FlowSpec) -> FlowIdx {
        let ci = &self.coflows[c as usize];
        let (id, index) = (ci.id, ci.n_flows + ci.later.len() as u32);
        let idx = self.push_flow(c, id, index, f);
        self.coflows[c as usize].later.push(idx);
        idx
    }

    /// Replaces what flows have sent, `(flow, bytes)`, by measured bytes
    /// (clamped to each flow's size) rather than bytes advanced at their
    /// rates: the runtime's coordinator calls this every Δ with what agents
    /// report, for every active flow. Each flow keeps its solo rate or its
    /// group (rejoined with the bytes it has left now); a proportional group
    /// all of whose members are listed starts afresh, paused until its
    /// deadline is set again (the scheduler is told through
    /// [`crate::Changes::resynced`]). Flows that are not active are skipped.
    pub fn resync_sent(&mut self, reports: &[(FlowIdx, f64)]) {
        let mut back = Vec::with_capacity(reports.len());
        // First every listed flow leaves its group, so that groups left
        // empty start afresh when their members rejoin.
        for &(f, bytes) in reports {
            let fi = f as usize;
            if self.active_pos[fi] == INACTIVE {
                continue;
            }
            back.push((f, self.group[fi], self.rate[fi]));
            // Solo at rate 0, with the modelled bytes settled into `base`.
            self.set_solo_rate(f, 0.0);
            let bytes = bytes.clamp(0.0, self.size[fi]);
            let c = self.coflow[fi] as usize;
            self.coflows[c].base_sent += bytes - self.base[fi];
            self.base[fi] = bytes;
        }
        for (f, g, rate) in back {
            if g == SOLO {
                self.set_solo_rate(f, rate);
            } else if let Some(pg) = proportional(g) {
                self.join_pgroup(f, pg);
            } else {
                self.join_group(f, g);
            }
        }
    }

    /// Finishes active flow `f` having sent `bytes` in all, measured: its
    /// size becomes `bytes` (the runtime learns a flow's size when its
    /// writer closes; until then it is a hint or a placeholder).
    pub fn finish_flow_measured(&mut self, f: FlowIdx, bytes: f64) {
        let fi = f as usize;
        if self.active_pos[fi] == INACTIVE {
            return;
        }
        // Solo at rate 0, with the modelled bytes settled into `base`.
        self.set_solo_rate(f, 0.0);
        let bytes = bytes.max(0.0);
        let ci = &mut self.coflows[self.coflow[fi] as usize];
        ci.base_sent += bytes - self.base[fi];
        ci.size += bytes - self.size[fi];
        self.size[fi] = bytes;
        self.base[fi] = bytes;
        self.finish_flow(f);
    }

    /// Sets coflow `c`'s Aalo CoflowId (the driver's, from the whole
    /// workload: [`coflowkit_model::ValidWorkload::dag_ids`]); until then it
    /// is [`DagId::of`] its spec.
    pub fn set_dag(&mut self, c: CoflowIdx, dag: DagId) {
        self.coflows[c as usize].dag = dag;
    }

    /// Makes coflow `c` active now: schedulers see it (in release order)
    /// until [`NetState::complete_coflow`], whether or not its flows send.
    pub fn release_coflow(&mut self, c: CoflowIdx) {
        let ci = &mut self.coflows[c as usize];
        debug_assert!(ci.release == Time::NEVER, "coflow released twice");
        ci.release = self.now;
        ci.base_time = self.now;
        self.active_coflows.push(c);
    }

    /// Starts waiting flow `f` now. Returns false for a zero-byte flow,
    /// which is done at its start and never active.
    pub fn start_flow(&mut self, f: FlowIdx) -> bool {
        let fi = f as usize;
        debug_assert!(self.is_waiting(f), "flow {f} started twice");
        self.start[fi] = self.now;
        self.base_time[fi] = self.now;
        let b = self.size[fi];
        let ci = &mut self.coflows[self.coflow[fi] as usize];
        ci.n_started += 1;
        ci.size += b;
        ci.length = ci.length.max(b);
        if b <= 0.0 {
            self.flags[fi] |= DONE;
            return false;
        }
        ci.n_active += 1;
        self.active_pos[fi] = self.active.len() as u32;
        self.active.push(f);
        true
    }

    /// Takes coflow `c` out of the active coflows (the driver calls this
    /// when the coflow is complete).
    pub fn complete_coflow(&mut self, c: CoflowIdx) {
        self.settle_coflow(c as usize);
        self.coflows[c as usize].solo_rate = 0.0;
        self.active_coflows.retain(|&x| x != c);
    }

    /// The current instant.
    pub fn now(&self) -> Time {
        self.now
    }

    /// Moves time on to `t` (never back). Progress is lazy: nothing else changes.
    pub fn set_now(&mut self, t: Time) {
        debug_assert!(t >= self.now);
        self.now = t;
    }

    fn elapsed(&self, since: Time) -> f64 {
        (self.now.0 - since.0) as f64
    }

    fn group_clock(&self, g: u32) -> f64 {
        let gr = &self.groups[g as usize];
        gr.clock + gr.rate * self.elapsed(gr.clock_time)
    }

    fn flow_sent(&self, f: usize) -> f64 {
        let g = self.group[f];
        let sent = if self.active_pos[f] == INACTIVE {
            if self.flags[f] & DONE != 0 {
                self.size[f]
            } else {
                0.0
            }
        } else if g == SOLO {
            self.base[f] + self.rate[f] * self.elapsed(self.base_time[f])
        } else if let Some(pg) = proportional(g) {
            self.size[f] - self.base[f] * self.pgroup_phi(pg)
        } else {
            self.size[f] - (self.base[f] - self.group_clock(g)).max(0.0)
        };
        sent.min(self.size[f])
    }

    fn coflow_sent_now(&self, c: usize) -> f64 {
        let i = &self.coflows[c];
        let mut s = i.base_sent + i.solo_rate * self.elapsed(i.base_time);
        if i.n_grouped > 0 {
            for f in (i.first_flow..i.first_flow + i.n_flows).chain(i.later.iter().copied()) {
                let f = f as usize;
                if self.active_pos[f] != INACTIVE && self.group[f] != SOLO {
                    s += self.flow_sent(f);
                }
            }
        }
        s.min(i.size)
    }

    fn settle_coflow(&mut self, c: usize) {
        let now = self.now;
        let i = &mut self.coflows[c];
        i.base_sent += i.solo_rate * ((now.0 - i.base_time.0) as f64);
        i.base_time = now;
    }

    fn settle_solo(&mut self, f: usize) {
        self.base[f] =
            (self.base[f] + self.rate[f] * self.elapsed(self.base_time[f])).min(self.size[f]);
        self.base_time[f] = self.now;
    }

    fn settle_group(&mut self, g: u32) {
        let clock = self.group_clock(g);
        let gr = &mut self.groups[g as usize];
        gr.clock = clock;
        gr.clock_time = self.now;
    }

    /// Takes flow `f` out of its group (if any) and makes it solo at rate 0,
    /// keeping what it has sent.
    fn make_solo(&mut self, f: usize) {
        let g = self.group[f];
        if g == SOLO {
            return;
        }
        let sent = self.flow_sent(f);
        // A proportional group gives up the flow's weights before the
        // coflow settles; a rate group refreshes its next finish after.
        let pgroup = proportional(g);
        if let Some(pg) = pgroup {
            self.leave_pgroup(f, pg);
        }
        let c = self.coflow[f] as usize;
        self.settle_coflow(c);
        let ci = &mut self.coflows[c];
        ci.n_grouped -= 1;
        ci.base_sent += sent;
        self.group[f] = SOLO;
        self.base[f] = sent;
        self.base_time[f] = self.now;
        self.rate[f] = 0.0;
        if pgroup.is_none() {
            self.leave_group(g);
        }
    }

    fn ensure_group(&mut self, g: u32) {
        let gi = g as usize;
        if self.groups.len() <= gi {
            self.groups.resize_with(gi + 1, Group::default);
            self.group_finish_at.resize(gi + 1, Time::NEVER);
            self.group_pos.resize(gi + 1, INACTIVE);
        }
    }

    fn leave_group(&mut self, g: u32) {
        let gi = g as usize;
        self.groups[gi].n_members -= 1;
        if self.groups[gi].n_members == 0 {
            let at = self.group_pos[gi] as usize;
            let last = self.active_groups.pop().expect("group is listed");
            if last != g {
                self.active_groups[at] = last;
                self.group_pos[last as usize] = at as u32;
            }
            self.group_pos[gi] = INACTIVE;
            self.groups[gi].members.clear();
            self.groups[gi].head = f64::INFINITY;
            self.group_finish_at[gi] = Time::NEVER;
        } else {
            self.recompute_head(g);
            self.refresh_group(g);
        }
    }

    /// Sets the rate of solo flow `f` (bytes per ns), taking it out of its
    /// group first. Returns the instant it will finish at this rate.
    pub fn set_solo_rate(&mut self, f: FlowIdx, bytes_per_ns: f64) -> Time {
        let fi = f as usize;
        self.make_solo(fi);
        let c = self.coflow[fi] as usize;
        self.settle_coflow(c);
        self.settle_solo(fi);
        self.coflows[c].solo_rate += bytes_per_ns - self.rate[fi];
        self.rate[fi] = bytes_per_ns;
        self.solo_finish(fi)
    }

    fn solo_finish(&self, f: usize) -> Time {
        let left = self.size[f] - self.base[f];
        if left <= 0.0 {
            return self.now;
        }
        ceil_ns_time(self.now, left, self.rate[f]).unwrap_or(Time::NEVER)
    }

    /// Puts flow `f` in shared group `g` (creating groups up to `g`).
    pub fn join_group(&mut self, f: FlowIdx, g: u32) {
        let fi = f as usize;
        if self.group[fi] == g {
            return;
        }
        self.set_solo_rate(f, 0.0);
        let c = self.coflow[fi] as usize;
        let sent = self.base[fi];
        {
            let ci = &mut self.coflows[c];
            ci.base_sent -= sent;
            ci.n_grouped += 1;
        }
        self.ensure_group(g);
        self.settle_group(g);
        let gr = &mut self.groups[g as usize];
        let mark = gr.clock + (self.size[fi] - sent);
        gr.members.push(std::cmp::Reverse((MarkKey(mark), f)));
        gr.head = gr.head.min(mark);
        gr.n_members += 1;
        if gr.n_members == 1 {
            self.group_pos[g as usize] = self.active_groups.len() as u32;
            self.active_groups.push(g);
        }
        self.group[fi] = g;
        self.base[fi] = mark;
        self.refresh_group(g);
    }

    /// The scale `phi` of proportional group `g` now.
    pub fn pgroup_phi(&self, g: u32) -> f64 {
        match self.pgroups.get(g as usize) {
            None => 1.0,
            Some(p) if p.deadline == Time::NEVER => p.phi,
            Some(p) => {
                if self.now >= p.deadline {
                    return 0.0;
                }
                p.phi * ((p.deadline.0 - self.now.0) as f64)
                    / ((p.deadline.0 - p.phi_time.0) as f64)
            }
        }
    }

    fn settle_pgroup(&mut self, g: u32) {
        let phi = self.pgroup_phi(g);
        let p = &mut self.pgroups[g as usize];
        p.phi = phi;
        p.phi_time = self.now;
    }

    /// The scale `phi` of proportional group `g` now and its members' `w`
    /// summed per link (bytes left on link `l` = `phi * w[l]`); `w` is empty
    /// for a group that never had members.
    pub fn pgroup_link_weights(&self, g: u32) -> (f64, &[f64]) {
        match self.pgroups.get(g as usize) {
            Some(p) => (self.pgroup_phi(g), &p.link_w),
            None => (1.0, &[]),
        }
    }

    /// Puts flow `f` in proportional group `g`: from now on it progresses in
    /// proportion to what it has left, finishing at the group's deadline.
    pub fn join_pgroup(&mut self, f: FlowIdx, g: u32) {
        let fi = f as usize;
        if self.group[fi] == PROPORTIONAL | g {
            return;
        }
        self.set_solo_rate(f, 0.0);
        if self.pgroups.len() <= g as usize {
            self.pgroups.resize_with(g as usize + 1, PGroup::default);
        }
        let n_links = self.capacity.len();
        let now = self.now;
        if self.pgroups[g as usize].n_members == 0 {
            let p = &mut self.pgroups[g as usize];
            *p = PGroup {
                phi: 1.0,
                phi_time: now,
                deadline: Time::NEVER,
                n_members: 0,
                members: std::mem::take(&mut p.members),
                link_w: std::mem::take(&mut p.link_w),
            };
            p.members.clear();
            p.link_w.clear();
            p.link_w.resize(n_links, 0.0);
            self.active_pgroups.push(g);
        }
        self.settle_pgroup(g);
        if self.pgroups[g as usize].phi < 1e-6 {
            self.renormalize_pgroup(g);
        }
        let sent = self.base[fi];
        let c = self.coflow[fi] as usize;
        {
            let ci = &mut self.coflows[c];
            ci.base_sent -= sent;
            ci.n_grouped += 1;
        }
        let path = self.path[fi];
        let (ps, pe) = self.path_range(path);
        let p = &mut self.pgroups[g as usize];
        let w = (self.size[fi] - sent) / p.phi;
        for &l in &self.path_links[ps..pe] {
            p.link_w[l.0 as usize] += w;
        }
        p.members.push(f);
        p.n_members += 1;
        self.group[fi] = PROPORTIONAL | g;
        self.base[fi] = w;
    }

    fn path_range(&self, p: PathIdx) -> (usize, usize) {
        let s = self.path_start[p as usize] as usize;
        let e = self
            .path_start
            .get(p as usize + 1)
            .map_or(self.path_links.len(), |&x| x as usize);
        (s, e)
    }

    fn renormalize_pgroup(&mut self, g: u32) {
        let p = &mut self.pgroups[g as usize];
        let phi = p.phi;
        for &f in &p.members {
            if self.group[f as usize] == PROPORTIONAL | g {
                self.base[f as usize] *= phi;
            }
        }
        for w in &mut p.link_w {
            *w *= phi;
        }
        p.phi = 1.0;
    }

    fn leave_pgroup(&mut self, f: usize, g: u32) {
        let (ps, pe) = self.path_range(self.path[f]);
        let w = self.base[f];
        let p = &mut self.pgroups[g as usize];
        for &l in &self.path_links[ps..pe] {
            p.link_w[l.0 as usize] -= w;
        }
        p.n_members -= 1;
        if p.n_members == 0 {
            p.deadline = Time::NEVER;
            p.members.clear();
            self.active_pgroups.retain(|&x| x != g);
        }
    }

    /// Sets the instant all members of proportional group `g` finish
    /// (`Time::NEVER` pauses the group).
    pub fn set_pgroup_deadline(&mut self, g: u32, deadline: Time) {
        if self.pgroups.len() <= g as usize {
            self.pgroups.resize_with(g as usize + 1, PGroup::default);
        }
        self.settle_pgroup(g);
        let p = &mut self.pgroups[g as usize];
        p.deadline = if p.n_members == 0 {
            Time::NEVER
        } else {
            deadline.max(self.now)
        };
    }

    /// Sets the per-member rate of group `g` (bytes per ns).
    pub fn set_group_rate(&mut self, g: u32, bytes_per_ns: f64) {
        self.ensure_group(g);
        self.settle_group(g);
        self.groups[g as usize].rate = bytes_per_ns;
        self.refresh_group(g);
    }

    fn refresh_group(&mut self, g: u32) {
        let t = self.group_finish(g);
        if self.group_finish_at[g as usize] != t {
            self.group_finish_at[g as usize] = t;
            if self.group_heap_on && t != Time::NEVER {
                self.group_heap.push(t.0, g);
            }
        }
    }

    /// Switches between scanning the active groups for the next finish and
    /// keeping them in a lazy queue, by how many there are (with
    /// hysteresis), and rebuilds the queue when stale entries dominate it.
    fn tune_group_heap(&mut self) {
        const HEAP_ABOVE: usize = 1 << 16;
        const SCAN_BELOW: usize = 1 << 14;
        let n = self.active_groups.len();
        let rebuild = if self.group_heap_on {
            if n < SCAN_BELOW {
                self.group_heap_on = false;
                self.group_heap = Default::default();
                false
            } else {
                self.group_heap.len() > 4 * n + 1024
            }
        } else if n > HEAP_ABOVE {
            self.group_heap_on = true;
            true
        } else {
            false
        };
        if rebuild {
            let at = &self.group_finish_at;
            self.group_heap.rebuild(
                self.active_groups
                    .iter()
                    .map(|&g| (at[g as usize].0, g))
                    .filter(|e| e.0 != Time::NEVER.0),
            );
        }
    }

    /// The earliest instant a grouped flow finishes.
    pub fn next_group_finish(&mut self) -> Time {
        self.tune_group_heap();
        let mut t = Time::NEVER;
        if self.group_heap_on {
            let at = &self.group_finish_at;
            t = self
                .group_heap
                .peek_min(|t, g| at[g as usize].0 == t)
                .map_or(Time::NEVER, Time);
        } else {
            for &g in &self.active_groups {
                t = t.min(self.group_finish_at[g as usize]);
            }
        }
        for &g in &self.active_pgroups {
            t = t.min(self.pgroups[g as usize].deadline);
        }
        t
    }

    /// Pushes to `due` the grouped flows that finish at or before `now`.
    pub fn due_grouped(&mut self, now: Time, due: &mut Vec<FlowIdx>) {
        if !self.group_heap_on {
            for i in 0..self.active_groups.len() {
                let g = self.active_groups[i];
                if self.group_finish_at[g as usize] <= now {
                    self.due_members(g, due);
                }
            }
        }
        while self.group_heap_on {
            let at = &self.group_finish_at;
            match self.group_heap.pop_min(now.0, |t, g| at[g as usize].0 == t) {
                Some((_, g)) => {
                    // Its due members finish now; leaving the group then
                    // refreshes (and re-lists) its next finish.
                    self.group_finish_at[g as usize] = Time::NEVER;
                    self.due_members(g, due);
                }
                None => break,
            }
        }
        for &g in &self.active_pgroups {
            let p = &self.pgroups[g as usize];
            if p.deadline <= now {
                due.extend(p.members.iter().copied().filter(|&f| {
                    self.active_pos[f as usize] != INACTIVE
                        && self.group[f as usize] == PROPORTIONAL | g
                }));
            }
        }
    }

    /// Whether the entry `(mark, f)` of group `g`'s members is live: `f` is
    /// active, in `g`, and joined with this mark. A flow that left the group
    /// and joined it again has a stale entry from its first stay, with
    /// another mark (for a grouped flow `base` is its mark).
    fn is_member(&self, f: usize, g: u32, mark: f64) -> bool {
        self.active_pos[f] != INACTIVE && self.group[f] == g && self.base[f] == mark
    }

    /// Drops members that left or finished from the top of `members` and
    /// caches the lowest live mark.
    fn recompute_head(&mut self, g: u32) {
        let gi = g as usize;
        let mut head = f64::INFINITY;
        while let Some(&std::cmp::Reverse((MarkKey(mark), f))) = self.groups[gi].members.peek() {
            let fi = f as usize;
            if self.is_member(fi, g, mark) {
                head = mark;
                break;
            }
            self.groups[gi].members.pop();
        }
        self.groups[gi].head = head;
    }

    /// The instant group `g`'s next member finishes at its current rate.
    fn group_finish(&self, g: u32) -> Time {
        let gr = &self.groups[g as usize];
        if gr.head == f64::INFINITY {
            return Time::NEVER;
        }
        let left = gr.head - (gr.clock + gr.rate * self.elapsed(gr.clock_time));
        if left <= 0.0 {
            return self.now;
        }
        ceil_ns_time(self.now, left, gr.rate).unwrap_or(Time::NEVER)
    }

    /// Pushes to `due` the members of group `g` that finish now: the head
    /// (whose finish instant was computed when the rate was set) and every
    /// member whose mark equals it up to float noise.
    fn due_members(&mut self, g: u32, due: &mut Vec<FlowIdx>) {
        let gi = g as usize;
        let mut head: Option<f64> = None;
        let clock = self.group_clock(g);
        while let Some(&std::cmp::Reverse((MarkKey(mark), f))) = self.groups[gi].members.peek() {
            let fi = f as usize;
            if !self.is_member(fi, g, mark) {
                self.groups[gi].members.pop();
                continue;
            }
            let limit = head.unwrap_or(mark).max(clock);
            if head.is_none() || mark <= limit + 1e-9 * limit.abs().max(1.0) {
                head.get_or_insert(mark);
                due.push(f);
                self.groups[gi].members.pop();
            } else {
                break;
            }
        }
        self.recompute_head(g);
    }

    /// Marks active flow `f` finished (all its bytes sent); does nothing to
    /// a flow that is not active. The coflow stays active until
    /// [`NetState::complete_coflow`].
    pub fn finish_flow(&mut self, f: FlowIdx) {
        let fi = f as usize;
        let pos = self.active_pos[fi];
        if pos == INACTIVE {
            return;
        }
        let c = self.coflow[fi] as usize;
        self.settle_coflow(c);
        let g = self.group[fi];
        if g == SOLO {
            self.settle_solo(fi);
            let ci = &mut self.coflows[c];
            ci.solo_rate -= self.rate[fi];
            ci.base_sent += self.size[fi] - self.base[fi];
        } else if let Some(pg) = proportional(g) {
            self.leave_pgroup(fi, pg);
            let ci = &mut self.coflows[c];
            ci.n_grouped -= 1;
            ci.base_sent += self.size[fi];
            self.group[fi] = SOLO;
        } else {
            let ci = &mut self.coflows[c];
            ci.n_grouped -= 1;
            ci.base_sent += self.size[fi];
            self.group[fi] = SOLO;
            self.leave_group(g);
        }
        self.base[fi] = self.size[fi];
        self.rate[fi] = 0.0;
        let last = self.active.pop().expect("active flow list holds f");
        if last != f {
            self.active[pos as usize] = last;
            self.active_pos[last as usize] = pos;
        }
        self.active_pos[fi] = INACTIVE;
        self.flags[fi] |= DONE;
        self.coflows[c].n_active -= 1;
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

    /// Bytes left of flow `f` now (for the driver).
    pub fn remaining(&self, f: FlowIdx) -> f64 {
        self.size[f as usize] - self.flow_sent(f as usize)
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
        self.active_pos[f as usize] == INACTIVE && self.flags[f as usize] & DONE == 0
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
        self.group[f as usize]
    }

    /// The rate of solo flow `f`, bytes per ns (for the driver).
    pub fn solo_rate(&self, f: FlowIdx) -> f64 {
        self.rate[f as usize]
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
        if self.flags[f] & HAS_DEADLINE == 0 {
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
            self.s.active_pos[f as usize] != INACTIVE
        }
        /// Number of flows seen so far (waiting, active or done).
        #[inline]
        pub fn n_flows(&self) -> usize {
            self.s.coflow.len()
        }
        /// Whether flow `f` is a network transfer or a compute stage.
        #[inline]
        pub fn kind(&self, f: FlowIdx) -> FlowKind {
            if self.s.flags[f as usize] & COMPUTE != 0 {
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
            self.s.flags[f as usize] & SIZE_UNKNOWN == 0
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
                .filter(move |&f| s.active_pos[f as usize] != INACTIVE)
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
        self.s.size[f as usize]
    }
    /// The bytes started flow `f` has left to send.
    #[inline]
    pub fn remaining(&self, f: FlowIdx) -> f64 {
        debug_assert!(!self.s.is_waiting(f), "size of flow {f}, not started");
        self.s.size[f as usize] - self.s.flow_sent(f as usize)
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

#[cfg(test)]
mod tests {
    use super::*;
    use coflowkit_model::{compute, flow, Dur};

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
