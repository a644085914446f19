//! Schedulers: one trait for the simulator and the runtime, the views a
//! scheduler may read, and the classic coflow and flow schedulers.
//!
//! A driver (the simulator's engine or the runtime's coordinator) owns a
//! [`NetState`]. At every event it calls [`Scheduler::schedule`] with the view
//! the scheduler is entitled to ([`Observed`] or [`Clairvoyant`], chosen by
//! the scheduler's [`Scheduler::Knows`] type), the [`Changes`] since the last
//! call, and an [`Allocation`] to fill: a rate for every active (started and
//! unfinished) flow and,
//! for drivers that enforce priorities, a priority class. The scheduler may
//! ask to be called again at a time of its choosing (a timer). It keeps any
//! state it likes (per link, per host, per coflow) in itself: no global
//! state, so many schedulers run side by side.
//!
//! Schedulers are built by name through [`registry`].

pub mod aalo;
pub mod baraat;
pub mod class_cache;
pub mod class_server;
pub mod d2tcp;
pub mod dag_order;
pub mod dcas;
pub mod descriptor;
pub mod driver;
pub mod fair;
pub mod fair_ends;
pub mod fifo_lm;
pub(crate) mod greedy;
pub mod grid;
pub mod host;
pub mod karuna;
pub mod karuna_thresholds;
pub mod ordered;
pub mod params;
pub mod radix;
pub mod registry;
pub mod spec;
pub mod srpt;
pub mod state;
pub mod tafe;
pub mod tasks;
pub mod varys;

pub use dag_order::DagOrder;
pub use dcas::dcas_config;
pub use descriptor::{Needs, Parts, SchedulerDescriptor, Switch};
pub use driver::Timer;
pub use params::Params;
pub use registry::{
    build, build_host, coordinator_spec, cost_rank, costliest_first, host_names, local_thresholds,
    preflight, NAMES, SCHEDULERS,
};
pub use spec::{Hint, SchedulerError, SchedulerSpec, WorkloadHints};
pub use state::{
    prefetch, prefetch_at, reserve_huge, ApplyHooks, Clairvoyant, CoflowIdx, FlowIdx, FlowReport,
    NetState, Observed, PathIdx,
};

use coflowkit_model::Time;

/// What a scheduler may know, as a type: the view it receives.
pub trait Knowledge {
    /// The view handed to the scheduler.
    type View<'a>: Copy;
    /// Makes the view from the driver's state.
    fn view(state: &NetState) -> Self::View<'_>;
}

/// Knows sizes (Varys, SRPT, SCF, ...).
pub struct KnowsSizes;
/// Knows only what has been sent (Aalo, fair sharing, FIFO, ...).
pub struct KnowsSent;

impl Knowledge for KnowsSizes {
    type View<'a> = Clairvoyant<'a>;
    fn view(state: &NetState) -> Clairvoyant<'_> {
        state.clairvoyant()
    }
}

impl Knowledge for KnowsSent {
    type View<'a> = Observed<'a>;
    fn view(state: &NetState) -> Observed<'_> {
        state.observed()
    }
}

/// What happened since the previous call to [`Scheduler::schedule`].
///
/// Schedulers only ever see started flows: a flow is in `started` once,
/// when it becomes active (with its coflow's release or later: a later wave
/// or stage of an already active coflow), and in `finished` once, when it
/// finishes. Zero-byte flows finish at their start and appear in neither.
#[derive(Debug, Default, Clone)]
pub struct Changes {
    /// Coflows released now: active from now until complete, though their
    /// first flows may start later (in release order).
    pub arrived: Vec<CoflowIdx>,
    /// Flows that started now, in index order.
    pub started: Vec<FlowIdx>,
    /// Flows that finished, in index order.
    pub finished: Vec<FlowIdx>,
    /// Coflows that completed (no longer active).
    pub finished_coflows: Vec<CoflowIdx>,
    /// Whether a timer the scheduler asked for fired.
    pub timer: bool,
    /// Whether the driver replaced the bytes every active flow has sent by
    /// measured ones ([`NetState::resync_sent`]; the runtime's coordinator,
    /// every Δ), so that a scheduler keeping its own account of progress
    /// re-reads it, and one that set proportional groups' deadlines sets them
    /// again (the groups restart paused). The simulator never sets it: its
    /// progress is exactly the rates'.
    pub resynced: bool,
}

impl Changes {
    /// Forgets everything (the driver calls this after each schedule).
    pub fn clear(&mut self) {
        self.arrived.clear();
        self.started.clear();
        self.finished.clear();
        self.finished_coflows.clear();
        self.timer = false;
        self.resynced = false;
    }
}

/// Whether rate `new` stands for `old`: equal, or within float noise (1e-12
/// relative to `old`). [`Allocation::set_rate`] keeps such a rate as it is,
/// and schedulers that keep rates of their own skip it by the same rule.
#[inline]
pub(crate) fn rate_stands(old: f64, new: f64) -> bool {
    old == new || (old - new).abs() <= 1e-12 * old.abs()
}

/// A scheduler's decision, kept by the driver from one call to the next:
/// the scheduler changes what it wants and the driver applies only what
/// changed. A flow is either solo, with its own rate, or a member of a
/// shared rate group whose members all get the group's rate (per-flow fair
/// sharing puts the flows of one path in one group). Rates are bits/s.
#[derive(Debug, Default, Clone)]
pub struct Allocation {
    rate: Vec<f64>,
    group: Vec<u32>,
    group_rate: Vec<f64>,
    class: Vec<u32>,
    flow_dirty: Vec<bool>,
    dirty_flows: Vec<FlowIdx>,
    group_dirty: Vec<bool>,
    dirty_groups: Vec<u32>,
    deadline: Vec<Time>,
    deadline_dirty: Vec<bool>,
    dirty_deadlines: Vec<u32>,
}

pub use radix::RadixQueue;
pub use state::{proportional, PROPORTIONAL, SOLO};

impl Allocation {
    /// Makes room for `n_flows` flows (new flows are solo at rate 0, class 0).
    pub fn resize(&mut self, n_flows: usize) {
        // Read and written at random per changed flow: in huge pages
        // where there are many ([`reserve_huge`]).
        let more = n_flows.saturating_sub(self.rate.len());
        reserve_huge(&mut self.rate, more);
        reserve_huge(&mut self.group, more);
        reserve_huge(&mut self.class, more);
        reserve_huge(&mut self.flow_dirty, more);
        self.rate.resize(n_flows, 0.0);
        self.group.resize(n_flows, SOLO);
        self.class.resize(n_flows, 0);
        self.flow_dirty.resize(n_flows, false);
    }

    fn touch_flow(&mut self, f: FlowIdx) {
        if !self.flow_dirty[f as usize] {
            self.flow_dirty[f as usize] = true;
            self.dirty_flows.push(f);
        }
    }

    /// Makes flow `f` solo at `bits_per_sec`. A rate within float noise
    /// of the current one ([`rate_stands`]) counts as unchanged, so
    /// recomputing an allocation does not churn the driver.
    #[inline]
    pub fn set_rate(&mut self, f: FlowIdx, bits_per_sec: f64) {
        let fi = f as usize;
        if self.group[fi] != SOLO || !rate_stands(self.rate[fi], bits_per_sec) {
            self.group[fi] = SOLO;
            self.rate[fi] = bits_per_sec;
            self.touch_flow(f);
        }
    }

    /// Puts flow `f` in shared group `g`; it then gets the group's rate.
    #[inline]
    pub fn join_group(&mut self, f: FlowIdx, g: u32) {
        let fi = f as usize;
        if self.group[fi] != g {
            self.group[fi] = g;
            self.touch_flow(f);
        }
        if self.group_rate.len() <= g as usize {
            self.group_rate.resize(g as usize + 1, 0.0);
            self.group_dirty.resize(g as usize + 1, false);
        }
    }

    /// Sets the per-member rate of shared group `g`.
    #[inline]
    pub fn set_group_rate(&mut self, g: u32, bits_per_sec: f64) {
        let gi = g as usize;
        if self.group_rate.len() <= gi {
            self.group_rate.resize(gi + 1, 0.0);
            self.group_dirty.resize(gi + 1, false);
        }
        if self.group_rate[gi] != bits_per_sec {
            self.group_rate[gi] = bits_per_sec;
            if !self.group_dirty[gi] {
                self.group_dirty[gi] = true;
                self.dirty_groups.push(g);
            }
        }
    }

    /// Puts flow `f` in proportional group `g`: it then progresses in
    /// proportion to what it has left and finishes at the group's deadline
    /// (Varys's MADD, where every flow of a coflow finishes together).
    #[inline]
    pub fn join_proportional(&mut self, f: FlowIdx, g: u32) {
        let fi = f as usize;
        if self.group[fi] != PROPORTIONAL | g {
            self.group[fi] = PROPORTIONAL | g;
            self.touch_flow(f);
        }
    }

    /// Sets the instant every member of proportional group `g` finishes
    /// (`Time::NEVER` pauses it).
    #[inline]
    pub fn set_deadline(&mut self, g: u32, t: Time) {
        let gi = g as usize;
        if self.deadline.len() <= gi {
            self.deadline.resize(gi + 1, Time::NEVER);
            self.deadline_dirty.resize(gi + 1, false);
        }
        if self.deadline[gi] != t || !self.deadline_dirty[gi] {
            self.deadline[gi] = t;
            if !self.deadline_dirty[gi] {
                self.deadline_dirty[gi] = true;
                self.dirty_deadlines.push(g);
            }
        }
    }

    /// The deadline of proportional group `g`.
    pub fn deadline(&self, g: u32) -> Time {
        self.deadline
            .get(g as usize)
            .copied()
            .unwrap_or(Time::NEVER)
    }

    /// The rate flow `f` gets now, bits/s (0 for a member of a proportional
    /// group, whose rate follows from its deadline).
    #[inline]
    pub fn rate(&self, f: FlowIdx) -> f64 {
        let g = self.group[f as usize];
        if g == SOLO {
            self.rate[f as usize]
        } else if proportional(g).is_some() {
            0.0
        } else {
            self.group_rate[g as usize]
        }
    }

    /// The group of flow `f`, or [`SOLO`].
    #[inline]
    pub fn group(&self, f: FlowIdx) -> u32 {
        self.group[f as usize]
    }

    /// Sets the priority class of flow `f` (0 highest), for drivers that
    /// enforce priorities with queues.
    #[inline]
    pub fn set_class(&mut self, f: FlowIdx, class: u32) {
        self.class[f as usize] = class;
    }

    /// The priority class of flow `f`.
    #[inline]
    pub fn class(&self, f: FlowIdx) -> u32 {
        self.class[f as usize]
    }

    /// For drivers: forgets a finished flow (solo, rate 0, not dirty).
    pub fn forget(&mut self, f: FlowIdx) {
        let fi = f as usize;
        self.rate[fi] = 0.0;
        self.group[fi] = SOLO;
    }

    /// For drivers: hands the flows and groups changed since the last call
    /// to `apply`, then clears the change lists. `apply` gets
    /// `Change::Flow(f)` for a flow whose rate or group changed and
    /// `Change::Group(g)` for a group whose rate changed; flows first.
    pub fn drain_changes(&mut self, mut apply: impl FnMut(&Allocation, Change)) {
        self.drain_changes_ahead(|a, ch, _| apply(a, ch));
    }

    /// [`Allocation::drain_changes`], handing with each changed flow the
    /// changed flows still to come after it, in order (empty with a group
    /// or a deadline), so that a driver can fetch their records from memory
    /// while it applies this one.
    pub(crate) fn drain_changes_ahead(
        &mut self,
        mut apply: impl FnMut(&Allocation, Change, &[FlowIdx]),
    ) {
        let flows = std::mem::take(&mut self.dirty_flows);
        for (i, &f) in flows.iter().enumerate() {
            self.flow_dirty[f as usize] = false;
            apply(self, Change::Flow(f), &flows[i + 1..]);
        }
        self.dirty_flows = flows;
        self.dirty_flows.clear();
        let groups = std::mem::take(&mut self.dirty_groups);
        for &g in &groups {
            self.group_dirty[g as usize] = false;
            apply(self, Change::Group(g), &[]);
        }
        self.dirty_groups = groups;
        self.dirty_groups.clear();
        let deadlines = std::mem::take(&mut self.dirty_deadlines);
        for &g in &deadlines {
            self.deadline_dirty[g as usize] = false;
            apply(self, Change::Deadline(g), &[]);
        }
        self.dirty_deadlines = deadlines;
        self.dirty_deadlines.clear();
    }

    /// The rate of shared group `g`, bits/s.
    pub fn group_rate(&self, g: u32) -> f64 {
        self.group_rate.get(g as usize).copied().unwrap_or(0.0)
    }

    /// The rate flow `f` of `state` is to send at `now`, bits/s, as a
    /// coordinator hands it to a host (the runtime's and the packet
    /// engine's): a solo flow's own rate, a proportional group's flow its
    /// bytes left over the time to the group's deadline (0 without one or
    /// past it), any other its group's rate; 0 for a rate that is not a
    /// finite number, never below 0.
    pub fn rate_now(&self, state: &NetState, f: FlowIdx, now: Time) -> f64 {
        let g = state.flow_group(f);
        let r = if g == SOLO {
            state.solo_rate(f) * 8e9
        } else if let Some(pg) = proportional(g) {
            let d = state.pgroup_deadline(pg);
            if d == Time::NEVER || d <= now {
                0.0
            } else {
                state.remaining(f) * 8e9 / (d.0 - now.0) as f64
            }
        } else {
            self.group_rate(g)
        };
        if r.is_finite() {
            r.max(0.0)
        } else {
            0.0
        }
    }
}

/// One change in an [`Allocation`], as handed to a driver.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Change {
    /// A flow's solo rate or its group changed.
    Flow(FlowIdx),
    /// A shared group's rate changed.
    Group(u32),
    /// A proportional group's deadline was set (applied even if unchanged:
    /// members that joined since need it).
    Deadline(u32),
}

/// The one scheduler interface, shared by the simulator and the runtime.
pub trait Scheduler: Send {
    /// What the scheduler may know.
    type Knows: Knowledge;
    /// The CLI name of the scheduler.
    fn name(&self) -> &str;
    /// Updates `out` (which holds the previous decision) for what changed:
    /// every active flow must end with the rate the scheduler wants for it.
    /// Returns when to be called again even if nothing happens (a timer).
    fn schedule(
        &mut self,
        now: Time,
        view: <Self::Knows as Knowledge>::View<'_>,
        changes: &Changes,
        out: &mut Allocation,
    ) -> Option<Time>;
    /// The order in which the scheduler first saw each DAG, if it ranks
    /// coflows by it (Aalo's CoflowIds; [`dag_order`]): what it remembers
    /// of coflows no longer active.
    fn dag_order(&self) -> Option<&DagOrder> {
        None
    }
    /// [`Scheduler::dag_order`], for a driver that rebuilds the scheduler
    /// for a state of only the active coflows (it moves the order to the
    /// new one) or knows that a DAG can get no coflow of its own again (it
    /// forgets the DAG).
    fn dag_order_mut(&mut self) -> Option<&mut DagOrder> {
        None
    }
}

/// A scheduler of either kind, as built by the registry.
pub enum AnyScheduler {
    /// Reads sizes.
    Clairvoyant(Box<dyn Scheduler<Knows = KnowsSizes>>),
    /// Reads only bytes sent.
    NonClairvoyant(Box<dyn Scheduler<Knows = KnowsSent>>),
}

impl AnyScheduler {
    /// The scheduler's CLI name.
    pub fn name(&self) -> &str {
        match self {
            AnyScheduler::Clairvoyant(s) => s.name(),
            AnyScheduler::NonClairvoyant(s) => s.name(),
        }
    }
    /// Calls the scheduler with the view it is entitled to.
    pub fn schedule(
        &mut self,
        now: Time,
        state: &NetState,
        changes: &Changes,
        out: &mut Allocation,
    ) -> Option<Time> {
        match self {
            AnyScheduler::Clairvoyant(s) => s.schedule(now, state.clairvoyant(), changes, out),
            AnyScheduler::NonClairvoyant(s) => s.schedule(now, state.observed(), changes, out),
        }
    }
    /// See [`Scheduler::dag_order`].
    pub fn dag_order(&self) -> Option<&DagOrder> {
        match self {
            AnyScheduler::Clairvoyant(s) => s.dag_order(),
            AnyScheduler::NonClairvoyant(s) => s.dag_order(),
        }
    }
    /// See [`Scheduler::dag_order_mut`].
    pub fn dag_order_mut(&mut self) -> Option<&mut DagOrder> {
        match self {
            AnyScheduler::Clairvoyant(s) => s.dag_order_mut(),
            AnyScheduler::NonClairvoyant(s) => s.dag_order_mut(),
        }
    }
}
