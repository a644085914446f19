//! Schedulers: one trait for the simulator and the runtime, the views a
//! scheduler may read, and the classic coflow and flow schedulers.
//!
//! A driver (the simulator's engine or the runtime's coordinator) owns a
//! [`NetState`]. At every event it calls [`Scheduler::schedule`] with the view
//! the scheduler is entitled to ([`Observed`] or [`Clairvoyant`], chosen by
//! the scheduler's [`Scheduler::Knows`] type), the [`Changes`] since the last
//! call, and an [`Allocation`] to fill: a rate for every active flow and,
//! for drivers that enforce priorities, a priority class. The scheduler may
//! ask to be called again at a time of its choosing (a timer). It keeps any
//! state it likes (per link, per host, per coflow) in itself: no global
//! state, so many schedulers run side by side.
//!
//! Schedulers are built by name through [`registry`].

pub mod fair;
pub mod fifo_lm;
pub mod ordered;
pub mod registry;
pub mod srpt;
pub mod state;
pub mod varys;

pub use registry::{build, SchedulerError, SchedulerSpec, WorkloadHints, NAMES};
pub use state::{Clairvoyant, CoflowIdx, FlowIdx, NetState, Observed, PathIdx};

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
#[derive(Debug, Default, Clone)]
pub struct Changes {
    /// Coflows that arrived.
    pub arrived: Vec<CoflowIdx>,
    /// Flows that finished.
    pub finished: Vec<FlowIdx>,
    /// Coflows whose last flow finished.
    pub finished_coflows: Vec<CoflowIdx>,
    /// Whether a timer the scheduler asked for fired.
    pub timer: bool,
}

impl Changes {
    /// Forgets everything (the driver calls this after each schedule).
    pub fn clear(&mut self) {
        self.arrived.clear();
        self.finished.clear();
        self.finished_coflows.clear();
        self.timer = false;
    }
}

/// A scheduler's decision, indexed by [`FlowIdx`]; only active flows count.
#[derive(Debug, Default, Clone)]
pub struct Allocation {
    /// Rate of each flow, bits/s.
    pub rate: Vec<f64>,
    /// Priority class of each flow, 0 highest, for drivers that enforce
    /// priorities with queues rather than rates.
    pub class: Vec<u32>,
}

impl Allocation {
    /// Makes room for `n_flows` flows (new flows start at rate 0, class 0).
    pub fn resize(&mut self, n_flows: usize) {
        self.rate.resize(n_flows, 0.0);
        self.class.resize(n_flows, 0);
    }
}

/// The one scheduler interface, shared by the simulator and the runtime.
pub trait Scheduler: Send {
    /// What the scheduler may know.
    type Knows: Knowledge;
    /// The CLI name of the scheduler.
    fn name(&self) -> &str;
    /// Sets the rate (and class) of every active flow of `view` in `out`,
    /// given what changed. Returns when to be called again even if nothing
    /// happens (a timer), if ever.
    fn schedule(
        &mut self,
        now: Time,
        view: <Self::Knows as Knowledge>::View<'_>,
        changes: &Changes,
        out: &mut Allocation,
    ) -> Option<Time>;
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
    pub fn schedule(&mut self, now: Time, state: &NetState, changes: &Changes, out: &mut Allocation) -> Option<Time> {
        match self {
            AnyScheduler::Clairvoyant(s) => s.schedule(now, state.clairvoyant(), changes, out),
            AnyScheduler::NonClairvoyant(s) => s.schedule(now, state.observed(), changes, out),
        }
    }
}
