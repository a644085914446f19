//! The exact, event-driven coflow simulator.
//!
//! Rates are constant between events; an event is a coflow arrival, a flow
//! completion, a delayed flow start or a scheduler timer. At each event the
//! engine finishes the flows due now, releases and starts what the release
//! rules allow (see [`release`]), asks the scheduler for new rates, and
//! computes each flow's completion instant as `now + ceil(remaining /
//! rate)` in integer nanoseconds. Nothing is found by stepping time, and
//! progress is lazy (see `coflowkit_sched::state`).
//!
//! Order and determinism: everything that happens at one instant is one
//! event, handled in this fixed order:
//! 1. flows due now finish, in flow order; each may complete its barrier
//!    group (releasing the flows that wait for it) and its coflow, which may
//!    release Starts-After children and complete Finishes-Before children
//!    at once (a cascade, handled depth-first in the order of the children
//!    lists, which are sorted by child);
//! 2. coflows arriving now, in (arrival, id) order, are added, and released
//!    if no Starts-After parent holds them;
//! 3. flows whose start is due now (released now with no delay, or released
//!    earlier with a delay ending now) start, in flow order; a zero-byte
//!    flow finishes at its start, which may release more flows and complete
//!    coflows at this same instant, so step 3 repeats until nothing more
//!    starts;
//! 4. a scheduler timer due now fires; the scheduler is called once with
//!    everything that changed.
//!
//! With [`Missed::Drop`], flows whose deadline is now and that did not
//! finish in step 1 are removed just after it (their coflow may complete,
//! as in step 1). Neither the deadline of a flow that finished nor the
//! completion instant of a dropped flow is an event.
//!
//! All state is owned by one [`Simulation`], so any number run side by
//! side; the same workload and scheduler give the same output bit for bit.
//!
//! A flow's completion instant is fixed when its rate is set and kept while
//! the rate stays the same, so float error never accumulates into time.

pub mod release;
mod results;

pub use results::{
    CoflowResult, DeadlineStats, FlowMetrics, FlowResult, JobResult, LinkUtil, Metrics, Outcome,
    SimResult, Stats, Summary, SummaryRow, SHORT_FLOW_BYTES,
};

mod meter;
mod pending;

use coflowkit_model::{CoflowSpec, DagId, Dur, Fabric, Time, ValidWorkload};
use coflowkit_sched::{
    Allocation, AnyScheduler, ApplyHooks, Changes, CoflowIdx, FlowIdx, NetState, Timer,
};
use meter::LinkMeter;
use pending::Pending;
use release::{Cascade, Releases, StartQueue};
use std::cmp::Reverse;
use std::collections::BinaryHeap;
use thiserror::Error;

/// Flows due within this many nanoseconds of an event finish at it: the
/// engine's resolution (see the model's [`coflowkit_model::SNAP_NS`]).
pub use coflowkit_model::SNAP_NS;

/// Why a simulation could not finish.
#[derive(Debug, Error, PartialEq, Eq)]
pub enum SimError {
    /// Flows are left that the scheduler gives no rate (or coflows that
    /// cannot complete), and nothing else will happen.
    #[error("scheduler '{scheduler}' stalled at {at}: {n_flows} flows have rate 0 and no event is pending")]
    Stalled {
        /// The scheduler.
        scheduler: String,
        /// When.
        at: Time,
        /// How many flows were left.
        n_flows: usize,
    },
}

/// How far a run has come, for progress bars.
#[derive(Debug, Clone, Copy)]
pub struct Progress {
    /// Simulated time.
    pub now: Time,
    /// Coflows finished.
    pub coflows_done: usize,
    /// Coflows in the workload.
    pub n_coflows: usize,
}

impl Progress {
    /// A progress callback for command-line runs: about every `every` of
    /// wall time it prints `label`, the wall time since it was made, the
    /// simulated time and the coflows done to stderr.
    pub fn printer(label: &str, every: std::time::Duration) -> impl FnMut(Progress) + '_ {
        let start = std::time::Instant::now();
        let mut last = start;
        move |p: Progress| {
            if last.elapsed() >= every {
                last = std::time::Instant::now();
                eprintln!(
                    "{label}: {:.0} s, simulated {:.3} s, {} of {} coflows done",
                    start.elapsed().as_secs_f64(),
                    p.now.0 as f64 / 1e9,
                    p.coflows_done,
                    p.n_coflows
                );
            }
        }
    }
}

/// Options of a run.
#[derive(Debug, Clone, Default)]
pub struct SimOptions {
    /// Keep one row per flow in the result.
    pub per_flow: bool,
    /// Measure each link's utilization in bins of this length (off when
    /// `None`; then it costs nothing).
    pub link_util_bin: Option<Dur>,
    /// What happens to a flow still unfinished at its deadline.
    pub missed: Missed,
}

/// What happens to a flow with a deadline (Karuna type 1) that has not
/// finished by it. Either way it counts as missed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Missed {
    /// It keeps its place and finishes whenever the scheduler lets it (the
    /// default; what the scheduler does with it is the scheduler's rule,
    /// e.g. `karuna` drops it to its floor rate).
    #[default]
    Finish,
    /// The application gives it up: the flow is removed at its deadline
    /// instant (after the flows that finish at that instant), its remaining
    /// bytes are never sent, and it is reported with `finish` = its deadline
    /// and `dropped` (Karuna 2.1: "the application would drop it").
    Drop,
}

impl Missed {
    /// Reads `finish` or `drop`.
    pub fn parse(s: &str) -> Result<Missed, String> {
        match s {
            "finish" => Ok(Missed::Finish),
            "drop" => Ok(Missed::Drop),
            _ => Err(format!("'{s}' is not finish or drop")),
        }
    }
    /// Its name (`finish`, `drop`).
    pub fn name(self) -> &'static str {
        match self {
            Missed::Finish => "finish",
            Missed::Drop => "drop",
        }
    }
}

/// One simulation: a fabric, a workload and a scheduler.
pub struct Simulation<'w> {
    workload: &'w ValidWorkload,
    state: NetState,
    scheduler: AnyScheduler,
    options: SimOptions,
}

impl<'w> Simulation<'w> {
    /// A simulation of `workload` (validated against `fabric`) under `scheduler`.
    pub fn new(
        fabric: Fabric,
        workload: &'w ValidWorkload,
        scheduler: AnyScheduler,
        options: SimOptions,
    ) -> Simulation<'w> {
        let mut state = NetState::new(fabric);
        state.reserve(workload.n_flows(), workload.coflows().len());
        Simulation {
            workload,
            state,
            scheduler,
            options,
        }
    }

    /// Runs to the end, calling `progress` now and then.
    pub fn run(self, progress: &mut dyn FnMut(Progress)) -> Result<SimResult, SimError> {
        let workload = self.workload;
        let coflows = workload.coflows();
        let n_flows = workload.n_flows();
        let mut alloc = Allocation::default();
        alloc.resize(n_flows);
        let meter = self
            .options
            .link_util_bin
            .map(|bin| LinkMeter::new(self.state.capacities(), bin));
        let mut e = Engine {
            coflows,
            dag_ids: workload.dag_ids(),
            state: self.state,
            changes: Changes::default(),
            rel: Releases::new(coflows),
            starts: StartQueue::default(),
            flow_finish: vec![Time::NEVER; n_flows],
            dropped: vec![],
            missed: self.options.missed,
            deadlines: BinaryHeap::new(),
            to_start: vec![],
            released: vec![],
            completing: vec![],
            meter,
            alloc,
            now: Time::ZERO,
            done: 0,
        };
        let mut scheduler = self.scheduler;
        let mut pending = Pending::new(n_flows);
        let mut due: Vec<FlowIdx> = vec![];
        let mut next = 0usize;
        let mut timer = Timer::default();
        let mut n_events: u64 = 0;
        loop {
            // The deadline of a flow that already finished is no event: left
            // in the heap, it would wake the scheduler at an instant where
            // nothing changed, and a scheduler that re-sorts whenever called
            // (pfabric-edf by remaining size) would then reorder flows there.
            while let Some(&Reverse((_, f))) = e.deadlines.peek() {
                if e.state.is_active(f) {
                    break;
                }
                e.deadlines.pop();
            }
            let t_arrival = coflows.get(next).map_or(Time::NEVER, |c| c.arrival);
            let t = t_arrival
                .min(pending.peek())
                .min(e.state.next_group_finish())
                .min(e.starts.peek())
                .min(e.deadlines.peek().map_or(Time::NEVER, |x| x.0 .0))
                .min(timer.wake());
            if t == Time::NEVER {
                if !e.state.active().is_empty() || e.done < coflows.len() {
                    return Err(SimError::Stalled {
                        scheduler: scheduler.name().to_string(),
                        at: e.now,
                        n_flows: e.flow_finish.iter().filter(|&&t| t == Time::NEVER).count(),
                    });
                }
                break;
            }
            n_events += 1;
            e.now = t;
            e.state.set_now(t);
            // 1. Completions due now, finished in flow order.
            due.clear();
            // A flow due within SNAP_NS finishes now: completion instants are
            // rounded up to whole nanoseconds, so a flow can be left with a
            // fraction of a byte at an event just before its own, and must
            // not wait behind other work for it.
            let horizon = Time(t.0 + SNAP_NS);
            pending.pop_due(horizon, &mut due);
            e.state.due_grouped(horizon, &mut due);
            due.sort_unstable();
            due.dedup();
            for &f in &due {
                if e.state.is_active(f) {
                    e.finish(f);
                }
            }
            // 1b. Deadlines due now: what did not finish is dropped.
            while let Some(&Reverse((at, f))) = e.deadlines.peek() {
                if at > t {
                    break;
                }
                e.deadlines.pop();
                if e.state.is_active(f) {
                    // Its pending completion goes too: left live, it would
                    // be an event (a scheduler call) at an instant where
                    // nothing happens.
                    pending.set_flow(f, Time::NEVER);
                    e.dropped.push(f);
                    e.finish(f);
                }
            }
            // 2. Arrivals now.
            while next < coflows.len() && coflows[next].arrival == t {
                e.arrive(&coflows[next]);
                next += 1;
            }
            // 3. Starts due now, until no zero-byte flow releases more.
            e.start_due();
            // 4. The timer; new rates; apply what changed.
            timer.call(&mut scheduler, t, &e.state, &mut e.changes, &mut e.alloc);
            e.apply(&mut pending);
            if n_events & 1023 == 0 {
                progress(Progress {
                    now: t,
                    coflows_done: e.done,
                    n_coflows: coflows.len(),
                });
            }
        }
        progress(Progress {
            now: e.now,
            coflows_done: e.done,
            n_coflows: coflows.len(),
        });
        let link_util = e.meter.take().map(|m| {
            let (bin, n_bins, bytes) = m.into_bytes(e.now);
            let caps = e.state.capacities();
            let mut utilization = Vec::with_capacity(caps.len() * n_bins);
            for (l, b) in bytes.iter().enumerate() {
                let full = caps[l] / 8e9 * bin.0 as f64;
                utilization.extend(b.iter().map(|&x| x / full));
            }
            LinkUtil {
                bin,
                n_bins,
                link_names: e
                    .state
                    .fabric()
                    .links()
                    .iter()
                    .map(|l| link_name(l.kind))
                    .collect(),
                utilization,
            }
        });
        // Only the start instants and path bottlenecks outlive the run.
        drop(pending);
        drop(std::mem::take(&mut e.alloc));
        let flows = e.state.into_flow_report();
        Ok(SimResult::collect(Outcome {
            scheduler: scheduler.name(),
            workload,
            release: e.rel.releases(),
            completion: e.rel.completions(),
            flow_start: &|i| flows.start(i as FlowIdx),
            flow_finish: &e.flow_finish,
            flow_dropped: &e.dropped,
            flow_bottleneck: &|i| flows.bottleneck(i as FlowIdx),
            per_flow: self.options.per_flow,
            link_util,
            n_events,
        }))
    }
}

/// A link's name in reports.
pub fn link_name(kind: coflowkit_model::LinkKind) -> String {
    format!("{kind:?}")
}

/// The mutable state of one run, with the release rules' steps as methods.
struct Engine<'w> {
    coflows: &'w [CoflowSpec],
    // Aalo's CoflowId of each coflow (by index), from the whole workload.
    dag_ids: Vec<DagId>,
    state: NetState,
    alloc: Allocation,
    changes: Changes,
    rel: Releases,
    starts: StartQueue,
    flow_finish: Vec<Time>,
    // Flows dropped at their deadline (Missed::Drop), in the order dropped;
    // the deadline instants of started flows with one, earliest first.
    dropped: Vec<FlowIdx>,
    missed: Missed,
    deadlines: BinaryHeap<Reverse<(Time, FlowIdx)>>,
    // Flows to start at this instant; flows released by a finished group;
    // coflows that may complete at this instant.
    to_start: Vec<FlowIdx>,
    released: Vec<FlowIdx>,
    completing: Vec<CoflowIdx>,
    meter: Option<LinkMeter>,
    now: Time,
    done: usize,
}

impl Engine<'_> {
    /// The spec of flow `f`.
    fn spec(&self, f: FlowIdx) -> coflowkit_model::FlowSpec {
        let c = self.state.coflow_of(f);
        let first = self.state.flows_of(c).start;
        self.coflows[c as usize].flows[(f - first) as usize]
    }

    /// Active flow `f` sent its last byte now.
    fn finish(&mut self, f: FlowIdx) {
        if let Some(m) = &mut self.meter {
            m.remove_flow(&self.state, f, self.now);
        }
        self.alloc.forget(f);
        self.changes.finished.push(f);
        self.state.finish_flow(f);
        self.flow_done(f);
    }

    /// Flow `f` is done (finished, or started with zero bytes).
    fn flow_done(&mut self, f: FlowIdx) {
        self.flow_finish[f as usize] = self.now;
        let c = self.state.coflow_of(f);
        // Only coflows with barriers need the flow's group (its spec is a
        // random access into the workload).
        let group = if self.rel.has_barriers(c) {
            self.spec(f).group
        } else {
            0
        };
        let mut released = std::mem::take(&mut self.released);
        let all_done = self.rel.flow_done(c, group, &mut released);
        for &w in &released {
            self.release_flow(w, self.spec(w).delay);
        }
        released.clear();
        self.released = released;
        if all_done {
            self.complete_cascade(c);
        }
    }

    /// Flow `f` is released now: it starts after its `delay`.
    fn release_flow(&mut self, f: FlowIdx, delay: Dur) {
        if delay == Dur::ZERO {
            self.to_start.push(f);
        } else {
            self.starts.push(self.now + delay, f);
        }
    }

    /// Coflow `c` is released now: its flows that wait for no group are.
    fn release_coflow(&mut self, c: CoflowIdx) {
        self.rel.mark_released(c, self.now);
        self.state.release_coflow(c);
        self.changes.arrived.push(c);
        let range = self.state.flows_of(c);
        let spec = &self.coflows[c as usize];
        for (i, f) in range.enumerate() {
            if spec.flows[i].after.is_none() {
                self.release_flow(f, spec.flows[i].delay);
            }
        }
    }

    /// Completes `c` if it may, and whatever that completes in turn.
    fn complete_cascade(&mut self, c: CoflowIdx) {
        let now = self.now;
        release::complete_cascade(self, c, now);
    }

    /// Coflow `spec` arrives now.
    fn arrive(&mut self, spec: &CoflowSpec) {
        let c = self.state.add_coflow(spec);
        self.state.set_dag(c, self.dag_ids[c as usize]);
        let first = self.state.flows_of(c).start;
        if self.rel.arrive(c, spec, first) {
            self.release_coflow(c);
        }
    }

    /// Starts every flow due now (step 3 of the event order).
    fn start_due(&mut self) {
        loop {
            let state = &self.state;
            self.starts
                .pop_due(self.now, &mut self.to_start, |f| state.is_waiting(f));
            if self.to_start.is_empty() {
                return;
            }
            let mut batch = std::mem::take(&mut self.to_start);
            batch.sort_unstable();
            for &f in &batch {
                if self.state.start_flow(f) {
                    self.changes.started.push(f);
                    if self.missed == Missed::Drop {
                        if let Some(d) = self.spec(f).deadline {
                            self.deadlines.push(Reverse((self.now + d, f)));
                        }
                    }
                } else {
                    self.flow_done(f);
                }
            }
            batch.clear();
            if self.to_start.is_empty() {
                self.to_start = batch;
            }
        }
    }

    /// Applies what the scheduler changed in the allocation.
    fn apply(&mut self, pending: &mut Pending) {
        // One instantiation per case, so that without a meter the hooks
        // compile to nothing (this runs once per changed rate).
        match self.meter.take() {
            None => self.apply_with(pending, &mut NoMeter),
            Some(mut m) => {
                self.apply_with(pending, &mut m);
                m.end_event(&self.state, self.now);
                self.meter = Some(m);
            }
        }
    }

    fn apply_with<M: RateHooks>(&mut self, pending: &mut Pending, meter: &mut M) {
        let mut hooks = EngineHooks {
            pending,
            meter,
            now: self.now,
        };
        self.state.apply_allocation(&mut self.alloc, &mut hooks);
    }
}

/// What the engine hears while an allocation is applied: each changed
/// flow's solo finish goes to the pending completions, and every change to
/// the link meter.
impl Cascade for Engine<'_> {
    fn releases_mut(&mut self) -> &mut Releases {
        &mut self.rel
    }
    fn completing(&mut self) -> &mut Vec<CoflowIdx> {
        &mut self.completing
    }
    fn on_complete(&mut self, c: CoflowIdx) {
        self.state.complete_coflow(c);
        self.changes.finished_coflows.push(c);
        self.done += 1;
    }
    fn release(&mut self, c: CoflowIdx) {
        self.release_coflow(c);
    }
}

struct EngineHooks<'a, M> {
    pending: &'a mut Pending,
    meter: &'a mut M,
    now: Time,
}

impl<M: RateHooks> ApplyHooks for EngineHooks<'_, M> {
    #[inline(always)]
    fn ahead_flow(&mut self, f: FlowIdx) {
        self.pending.prefetch(f);
    }
    #[inline(always)]
    fn before_flow(&mut self, state: &NetState, f: FlowIdx) {
        self.meter.remove_flow(state, f, self.now);
    }
    #[inline(always)]
    fn after_flow(&mut self, state: &NetState, f: FlowIdx, finish: Time) {
        self.pending.set_flow(f, finish);
        self.meter.add_flow(state, f, self.now);
    }
    #[inline(always)]
    fn before_group_rate(&mut self, g: u32, bytes_per_ns: f64) {
        self.meter.set_group_rate(g, bytes_per_ns, self.now);
    }
    #[inline(always)]
    fn after_deadline(&mut self, state: &NetState, g: u32) {
        self.meter.deadline_set(state, g);
    }
}

/// What the engine tells a link meter about rate changes; [`NoMeter`] when
/// utilization is not measured.
trait RateHooks {
    fn remove_flow(&mut self, state: &NetState, f: FlowIdx, now: Time);
    fn add_flow(&mut self, state: &NetState, f: FlowIdx, now: Time);
    fn set_group_rate(&mut self, g: u32, bytes_per_ns: f64, now: Time);
    fn deadline_set(&mut self, state: &NetState, g: u32);
}

/// No meter: every hook does nothing.
struct NoMeter;

impl RateHooks for NoMeter {
    #[inline(always)]
    fn remove_flow(&mut self, _: &NetState, _: FlowIdx, _: Time) {}
    #[inline(always)]
    fn add_flow(&mut self, _: &NetState, _: FlowIdx, _: Time) {}
    #[inline(always)]
    fn set_group_rate(&mut self, _: u32, _: f64, _: Time) {}
    #[inline(always)]
    fn deadline_set(&mut self, _: &NetState, _: u32) {}
}

impl RateHooks for LinkMeter {
    fn remove_flow(&mut self, state: &NetState, f: FlowIdx, now: Time) {
        LinkMeter::remove_flow(self, state, f, now);
    }
    fn add_flow(&mut self, state: &NetState, f: FlowIdx, now: Time) {
        LinkMeter::add_flow(self, state, f, now);
    }
    fn set_group_rate(&mut self, g: u32, bytes_per_ns: f64, now: Time) {
        LinkMeter::set_group_rate(self, g, bytes_per_ns, now);
    }
    fn deadline_set(&mut self, state: &NetState, g: u32) {
        LinkMeter::deadline_set(self, state, g);
    }
}
