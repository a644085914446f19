//! A coordinator for the schedulers that decide from a view of the whole
//! network (`aalo`, `varys`, `fair`, and every registry scheduler without a
//! host policy): the flow-level [`coflowkit_sched::Scheduler`] runs, as in
//! the runtime's coordinator (`coflowkit_runtime::coordinator`, the model
//! of Aalo 3 and 6 and of Varys's master), every `coordinator_interval` on
//! the bytes the engine observed, and its decisions reach the hosts
//! `coordinator_delay` later.
//!
//! Each tick, in the runtime's order, so that the scheduler sees a flow
//! start before it finishes and a coflow arrive before it completes:
//! 1. flows that finished since, if an earlier tick saw them start;
//! 2. coflows that completed since, if an earlier tick saw them arrive and
//!    saw every flow of theirs finish;
//! 3. coflows released since arrive;
//! 4. flows started since start;
//! 5. every active flow's bytes sent become the bytes its receiver has
//!    acknowledged (`NetState::resync_sent`), the scheduler is called (with
//!    its timer if due) and its allocation applied to the state;
//! 6. each active flow's decision: its rate (solo, its group's, or what it
//!    has left over the time to its proportional group's deadline) and its
//!    class. Those that changed travel to the hosts as one batch.
//!
//! At the hosts ([`Decision`]): a flow with a rate is paced at it in the
//! scheduler's class; a flow the scheduler gives no rate sends unpaced in
//! the lowest class (7), so the fabric stays work-conserving (Varys's
//! backfilling, Aalo's lower queues) and no flow waits forever for a
//! decision. Flows run unpaced in class 0 until their first decision.
//!
//! The scheduler is built with its descriptor's coordinator defaults, as in
//! the runtime (`aalo`: `delta=0` unless the spec sets `delta`): the
//! coordinator's interval is the coordination.

use crate::config::values::parse_dur;
use crate::config::{bad, Knob};
use coflowkit_model::{Fabric, Time, ValidWorkload};
use coflowkit_sched::{
    build, Allocation, AnyScheduler, Changes, FlowIdx, NetState, SchedulerError, SchedulerSpec,
    Timer, WorkloadHints,
};

/// What a coordinator tells a flow's host.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Decision {
    /// The flow (workload order).
    pub flow: u32,
    /// Its rate, bits/s (0: none: backfill in the lowest class).
    pub rate_bps: f64,
    /// Its class, 0 highest.
    pub class: u8,
}

impl Decision {
    /// The pacing rate (bits/s, 0 for unpaced) and class the host applies.
    pub fn enforced(&self) -> (u64, u8) {
        if self.rate_bps >= 1.0 && self.rate_bps.is_finite() {
            (self.rate_bps.round() as u64, self.class.min(7))
        } else {
            (0, 7)
        }
    }
}

/// What the coordinator did in a run.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CoordinatorStats {
    /// Ticks run.
    pub ticks: u64,
    /// Decisions sent to hosts (changed rates or classes).
    pub decisions: u64,
}

/// The coordinator's state; the engine feeds it what happens.
pub(crate) struct Coordinator {
    sched: AnyScheduler,
    state: NetState,
    changes: Changes,
    alloc: Allocation,
    /// Happened since the last tick.
    pub arrived: Vec<u32>,
    pub started: Vec<u32>,
    pub finished: Vec<u32>,
    pub completed: Vec<u32>,
    /// Per flow: an earlier tick saw it start; per coflow: arrive.
    seen_start: Vec<bool>,
    seen_arrival: Vec<bool>,
    /// Flows of each coflow not yet finished in the state.
    open: Vec<u32>,
    coflow_of: Vec<u32>,
    /// The scheduler's timer.
    timer: Timer,
    /// The last decision sent per flow.
    last: Vec<Option<(u64, u8)>>,
    reports: Vec<(FlowIdx, f64)>,
    pub stats: CoordinatorStats,
}

impl Coordinator {
    /// A coordinator running `spec` for `workload` on `fabric`.
    pub fn new(
        fabric: &Fabric,
        workload: &ValidWorkload,
        spec: &SchedulerSpec,
    ) -> Result<Coordinator, SchedulerError> {
        let sched = build(
            &coflowkit_sched::coordinator_spec(spec)?,
            &WorkloadHints::of(workload),
        )?;
        let mut state = NetState::new(fabric.clone());
        let n_flows = workload.n_flows();
        state.reserve(n_flows, workload.coflows().len());
        let dags = workload.dag_ids();
        let mut coflow_of = Vec::with_capacity(n_flows);
        let mut open = vec![];
        for (i, c) in workload.coflows().iter().enumerate() {
            let ci = state.add_coflow(c);
            state.set_dag(ci, dags[i]);
            coflow_of.extend(std::iter::repeat_n(i as u32, c.flows.len()));
            open.push(c.flows.len() as u32);
        }
        let mut alloc = Allocation::default();
        alloc.resize(n_flows);
        Ok(Coordinator {
            sched,
            state,
            changes: Changes::default(),
            alloc,
            arrived: vec![],
            started: vec![],
            finished: vec![],
            completed: vec![],
            seen_start: vec![false; n_flows],
            seen_arrival: vec![false; workload.coflows().len()],
            open,
            coflow_of,
            timer: Timer::default(),
            last: vec![None; n_flows],
            reports: vec![],
            stats: CoordinatorStats::default(),
        })
    }

    /// One tick at `now` (see the module doc); `acked(f)` the bytes flow
    /// `f`'s receiver has acknowledged. Appends the changed decisions.
    pub fn tick(&mut self, now: Time, acked: &dyn Fn(u32) -> u64, out: &mut Vec<Decision>) {
        self.stats.ticks += 1;
        let now = now.max(self.state.now());
        self.state.set_now(now);
        self.finish_seen();
        self.complete_seen();
        for c in std::mem::take(&mut self.arrived) {
            self.state.release_coflow(c);
            self.changes.arrived.push(c);
            self.seen_arrival[c as usize] = true;
        }
        let mut started = std::mem::take(&mut self.started);
        started.sort_unstable();
        for &f in &started {
            self.seen_start[f as usize] = true;
            if self.state.start_flow(f) {
                self.changes.started.push(f);
            } else {
                self.open[self.coflow_of[f as usize] as usize] -= 1;
            }
        }
        started.clear();
        self.started = started;
        self.reports.clear();
        for &f in self.state.active() {
            self.reports.push((f, acked(f) as f64));
        }
        self.state.resync_sent(&self.reports);
        self.changes.resynced = true;
        self.timer.call(
            &mut self.sched,
            now,
            &self.state,
            &mut self.changes,
            &mut self.alloc,
        );
        self.state.apply_allocation(&mut self.alloc, &mut ());
        self.decide(now, out);
    }

    /// Step 1: flows that finished, once a tick saw them start.
    fn finish_seen(&mut self) {
        let mut later = vec![];
        for f in std::mem::take(&mut self.finished) {
            if !self.seen_start[f as usize] {
                later.push(f);
                continue;
            }
            self.state.finish_flow(f);
            self.alloc.forget(f);
            self.changes.finished.push(f);
            self.open[self.coflow_of[f as usize] as usize] -= 1;
        }
        self.changes.finished.sort_unstable();
        self.finished = later;
    }

    /// Step 2: coflows complete once seen to arrive and every flow finished.
    fn complete_seen(&mut self) {
        let mut later = vec![];
        for c in std::mem::take(&mut self.completed) {
            if self.seen_arrival[c as usize] && self.open[c as usize] == 0 {
                self.state.complete_coflow(c);
                self.changes.finished_coflows.push(c);
            } else {
                later.push(c);
            }
        }
        self.completed = later;
    }

    /// Step 6: the decisions that changed.
    fn decide(&mut self, now: Time, out: &mut Vec<Decision>) {
        for &f in self.state.active() {
            let d = Decision {
                flow: f,
                rate_bps: self.rate_of(f, now),
                class: self.alloc.class(f).min(7) as u8,
            };
            let e = Some(d.enforced());
            if self.last[f as usize] != e {
                self.last[f as usize] = e;
                out.push(d);
                self.stats.decisions += 1;
            }
        }
    }

    /// The rate flow `f` is to send at now, bits/s (the runtime's rule).
    fn rate_of(&self, f: FlowIdx, now: Time) -> f64 {
        self.alloc.rate_now(&self.state, f, now)
    }
}

/// The coordinator's tick and delay.
pub const KNOBS: &[Knob] = &[
    Knob {
        name: "coordinator_interval",
        default: "10ms",
        unit: "duration",
        help: "how often a coordinator-run scheduler (aalo, varys, fair, ...) decides on the observed bytes (10ms)",
        set: |c, key, v| {
            c.coordinator_interval = parse_dur(key, v)?;
            Ok(())
        },
    },
    Knob {
        name: "via",
        default: "auto",
        unit: "auto|coordinator",
        help: "coordinator: a scheduler with a host policy runs through the coordinator instead, as the runtime runs it (auto)",
        set: |c, key, v| {
            c.via_coordinator = match v {
                "auto" => false,
                "coordinator" => true,
                _ => return Err(bad(key, format!("'{v}': auto or coordinator"))),
            };
            Ok(())
        },
    },
    Knob {
        name: "coordinator_delay",
        default: "0",
        unit: "duration",
        help: "how long a coordinator's decision takes to reach the hosts (0)",
        set: |c, key, v| {
            c.coordinator_delay = parse_dur(key, v)?;
            Ok(())
        },
    },
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_decision_without_a_rate_backfills_in_the_lowest_class() {
        let d = |rate_bps, class| Decision {
            flow: 0,
            rate_bps,
            class,
        };
        assert_eq!(d(5e8, 2).enforced(), (500_000_000, 2));
        assert_eq!(d(0.0, 0).enforced(), (0, 7));
        assert_eq!(d(0.4, 3).enforced(), (0, 7));
        assert_eq!(d(f64::INFINITY, 1).enforced(), (0, 7));
    }

    #[test]
    fn aalo_gets_delta_0_unless_set() {
        let s = coflowkit_sched::coordinator_spec(&SchedulerSpec::parse("aalo").unwrap()).unwrap();
        assert!(s.params.contains(&("delta".into(), "0".into())));
        let s = coflowkit_sched::coordinator_spec(&SchedulerSpec::parse("aalo:delta=5ms").unwrap())
            .unwrap();
        assert_eq!(s.params, vec![("delta".into(), "5ms".into())]);
        let s = coflowkit_sched::coordinator_spec(&SchedulerSpec::parse("varys").unwrap()).unwrap();
        assert!(s.params.is_empty());
    }
}
