//! The exact, event-driven coflow simulator.
//!
//! Rates are constant between events; an event is a coflow arrival, a flow
//! completion or a scheduler timer. At each event the engine credits every
//! active flow with what it sent since the previous event, finishes the flows
//! due now, admits the coflows arriving now, asks the scheduler for new rates,
//! and computes each flow's completion instant as `now + ceil(remaining /
//! rate)` in integer nanoseconds. Nothing is found by stepping time.
//!
//! Order and determinism: simultaneous happenings are handled in one event in
//! a fixed order (completions, then arrivals in (arrival, id) order, then the
//! timer); all state is owned by one [`Simulation`], so any number run side
//! by side; the same workload and scheduler give the same output bit for bit.
//!
//! A flow's completion instant is fixed when its rate is set and kept while
//! the rate stays the same, so float error never accumulates into time.

mod results;

pub use results::{CoflowResult, FlowResult, SimResult, Summary, SummaryRow};

mod pending;

use coflowkit_model::{Fabric, Time, ValidWorkload};
use coflowkit_sched::{
    proportional, Allocation, AnyScheduler, Change, Changes, FlowIdx, NetState, SOLO,
};
use pending::Pending;
use thiserror::Error;

/// Flows due within this many nanoseconds of an event finish at it: the
/// engine's resolution (completion instants are rounded up to whole
/// nanoseconds, and a few roundings can add up). Results are exact to this.
pub const SNAP_NS: u64 = 16;

/// Why a simulation could not finish.
#[derive(Debug, Error, PartialEq, Eq)]
pub enum SimError {
    /// Flows are left that the scheduler gives no rate, and nothing else
    /// will happen.
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

/// Options of a run.
#[derive(Debug, Clone, Default)]
pub struct SimOptions {
    /// Keep one row per flow in the result.
    pub per_flow: bool,
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
    pub fn run(mut self, progress: &mut dyn FnMut(Progress)) -> Result<SimResult, SimError> {
        let coflows = self.workload.coflows();
        let n_flows = self.workload.n_flows();
        let mut alloc = Allocation::default();
        alloc.resize(n_flows);
        let mut flow_finish = vec![Time::NEVER; n_flows];
        let mut coflow_finish = vec![Time::NEVER; coflows.len()];
        let mut pending = Pending::new(n_flows);
        let mut changes = Changes::default();
        let mut due: Vec<FlowIdx> = vec![];
        let mut next = 0usize;
        let mut now = Time::ZERO;
        let mut wake = Time::NEVER;
        let mut n_events: u64 = 0;
        let mut done = 0usize;
        loop {
            let t_arrival = coflows.get(next).map_or(Time::NEVER, |c| c.arrival);
            let t = t_arrival
                .min(pending.peek())
                .min(self.state.next_group_finish())
                .min(wake);
            if t == Time::NEVER {
                if !self.state.active().is_empty() {
                    return Err(SimError::Stalled {
                        scheduler: self.scheduler.name().to_string(),
                        at: now,
                        n_flows: self.state.active().len(),
                    });
                }
                break;
            }
            n_events += 1;
            now = t;
            self.state.set_now(now);
            // Completions due now, finished in flow order.
            due.clear();
            // A flow due within SNAP_NS finishes now: completion instants are
            // rounded up to whole nanoseconds, so a flow can be left with a
            // fraction of a byte at an event just before its own, and must
            // not wait behind other work for it.
            let horizon = Time(now.0 + SNAP_NS);
            pending.pop_due(horizon, &mut due);
            self.state.due_grouped(horizon, &mut due);
            due.sort_unstable();
            due.dedup();
            for &f in &due {
                if !self.state.is_active(f) {
                    continue;
                }
                flow_finish[f as usize] = now;
                alloc.forget(f);
                changes.finished.push(f);
                if self.state.finish_flow(f) {
                    let c = self.state.coflow_of(f);
                    coflow_finish[c as usize] = now;
                    changes.finished_coflows.push(c);
                    done += 1;
                }
            }
            // Arrivals now.
            while next < coflows.len() && coflows[next].arrival == now {
                let c = self.state.add_coflow(&coflows[next]);
                for f in self.state.flows_of(c) {
                    if !self.state.is_active(f) {
                        flow_finish[f as usize] = now;
                    }
                }
                if self.state.flows_of(c).all(|f| !self.state.is_active(f)) {
                    coflow_finish[c as usize] = now;
                    done += 1;
                }
                changes.arrived.push(c);
                next += 1;
            }
            if wake <= now {
                changes.timer = true;
                wake = Time::NEVER;
            }
            // New rates; apply what changed.
            if let Some(w) = self
                .scheduler
                .schedule(now, &self.state, &changes, &mut alloc)
            {
                wake = w.max(Time(now.0 + 1));
            }
            changes.clear();
            let state = &mut self.state;
            alloc.drain_changes(|a, ch| match ch {
                Change::Flow(f) => {
                    if !state.is_active(f) {
                        return;
                    }
                    let g = a.group(f);
                    if g == SOLO {
                        let t = state.set_solo_rate(f, a.rate(f).max(0.0) / 8e9);
                        pending.set_flow(f, t);
                    } else if let Some(pg) = proportional(g) {
                        state.join_pgroup(f, pg);
                        pending.set_flow(f, Time::NEVER);
                    } else {
                        state.join_group(f, g);
                        pending.set_flow(f, Time::NEVER);
                    }
                }
                Change::Group(g) => state.set_group_rate(g, a.group_rate(g).max(0.0) / 8e9),
                Change::Deadline(g) => state.set_pgroup_deadline(g, a.deadline(g)),
            });
            if n_events % 1024 == 0 {
                progress(Progress {
                    now,
                    coflows_done: done,
                    n_coflows: coflows.len(),
                });
            }
        }
        progress(Progress {
            now,
            coflows_done: done,
            n_coflows: coflows.len(),
        });
        Ok(SimResult::collect(
            self.scheduler.name(),
            self.workload,
            &coflow_finish,
            &flow_finish,
            self.options.per_flow,
            n_events,
        ))
    }
}
