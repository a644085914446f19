//! FIFO-LM at a host (Baraat, SIGCOMM 2014, 3.2-3.3): the host tags every
//! packet of a task with the task's id and its heavy flag (3.2, "the task
//! identifier ... and a flag"), and marks it into one of 8 strict-priority
//! classes that carry FIFO-LM as far as 8 queues can:
//!
//! - a light task's class follows its age, FIFO by age ([`age_class`] on
//!   classes 0-6: a task enters class 6 and climbs one class per `age`
//!   quantum to class 0), so every host agrees on the order of tasks
//!   without talking, as Baraat's task ids from one counter (4.1);
//! - a task this host has sent `threshold` bytes of is heavy (Baraat's
//!   per-link classification, on this host's uplink, 3.3): the heavy tasks
//!   share class 7, below every light one, multiplexed with each other
//!   instead of blocking the line. This is the flow-level
//!   `fifo-lm:mux=last,per=sender` ([`crate::fifo_lm`]), which 8 queues
//!   can carry; Baraat's own `mux=next` (a heavy task shares the next
//!   task's class) needs the switches' Smart Priority Classes and reads
//!   the [`TaskTag`] this policy writes.
//!
//! The keys are the `fifo-lm` scheduler's: `threshold` (a percentile of the
//! workload's coflow sizes, a size, or `inf`) and the host's `age` quantum
//! ([`crate::host::AGE_PARAM`]). The testbed's `FifoLm` class (before the policies
//! moved here) re-marked ages only at ticks a quarter quantum apart and
//! marked a flow that started between ticks by the last tick's age; here an
//! age moves exactly on its quantum's grid ([`HostPolicy::wake_at`]).

use crate::descriptor::Params;
use crate::host::tasks::{Task, Tasks};
use crate::host::{
    age_class, age_quantum, next_age_step, whole_bytes, Effects, HostContext, HostFlow, HostPolicy,
    HostView, Marking, TaskTag,
};
use crate::spec::{SchedulerError, WorkloadHints};
use coflowkit_model::{Dur, Time};

/// The class of heavy tasks (the lowest).
const HEAVY_CLASS: u8 = 7;
/// The classes light tasks climb by age: 0 to 6.
const LIGHT_CLASSES: u8 = 7;

/// FIFO-LM's per-host marking; see the module doc.
#[derive(Debug, Clone)]
pub struct FifoLmHost {
    heavy: u64,
    quantum: Dur,
    tasks: Tasks,
}

impl FifoLmHost {
    /// The policy: tasks heavy from `heavy` bytes sent here, one class per
    /// `quantum` of age.
    pub fn new(heavy: u64, quantum: Dur) -> FifoLmHost {
        FifoLmHost {
            heavy,
            quantum,
            tasks: Tasks::default(),
        }
    }

    fn is_heavy(&self, task: &Task) -> bool {
        task.bytes >= self.heavy
    }
}

/// A task's class at `now`: heavy from `heavy` bytes, else by its age.
fn class(heavy: u64, quantum: Dur, task: &Task, now: Time) -> u8 {
    if task.bytes >= heavy {
        HEAVY_CLASS
    } else {
        age_class(0, LIGHT_CLASSES, now - task.arrival, quantum)
    }
}

impl HostPolicy for FifoLmHost {
    fn name(&self) -> &str {
        "fifo-lm"
    }
    fn start(&mut self, now: Time, flow: &HostFlow, _out: &mut Effects) {
        let (heavy, quantum) = (self.heavy, self.quantum);
        self.tasks.join(flow, |t| class(heavy, quantum, t, now));
    }
    fn sent(&mut self, _now: Time, flow: u64, bytes: u64, out: &mut Effects) {
        let heavy = self.heavy;
        let Some(task) = self.tasks.of_mut(flow) else {
            return;
        };
        let before = task.bytes;
        task.bytes = before.saturating_add(bytes);
        if before < heavy && task.bytes >= heavy {
            // The heavy flag is part of every flow's tag: all change.
            task.class = HEAVY_CLASS;
            out.changed.extend_from_slice(&task.flows);
        }
    }
    fn finish(&mut self, _now: Time, flow: u64, _out: &mut Effects) {
        self.tasks.leave(flow);
    }
    fn wake_at(&self) -> Option<Time> {
        self.tasks.earliest(|t| {
            if self.is_heavy(t) {
                None
            } else {
                next_age_step(0, LIGHT_CLASSES, t.class, t.arrival, self.quantum)
            }
        })
    }
    fn wake(&mut self, now: Time, _view: &dyn HostView, out: &mut Effects) {
        let (heavy, quantum) = (self.heavy, self.quantum);
        self.tasks.reclass(|t| class(heavy, quantum, t, now), out);
    }
    fn marking(&self, flow: u64) -> Marking {
        match self.tasks.of(flow) {
            Some((c, task)) => Marking {
                task: Some(TaskTag {
                    id: u64::from(c),
                    heavy: self.is_heavy(task),
                    bytes: task.bytes,
                }),
                ..Marking::class(task.class)
            },
            None => Marking::BEST_EFFORT,
        }
    }
    fn limit(&self, flow: u64) -> u64 {
        self.tasks.to_heavy(flow, self.heavy)
    }
    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
}

/// Builds it from the `fifo-lm` scheduler's spec: `threshold` (its
/// percentile needs the workload's coflow sizes) and `age`. The flow-level
/// keys that choose among global orders (`counters`, `background`, `mux`,
/// `per`, `solver`) have no meaning at one host and are ignored.
pub(crate) fn build(
    p: &Params<'_>,
    hints: &WorkloadHints,
    _ctx: &HostContext,
) -> Result<Box<dyn HostPolicy>, SchedulerError> {
    let quantum = age_quantum(p)?;
    let heavy = whole_bytes(p.percentile_or_bytes("threshold", hints)?);
    Ok(Box::new(FifoLmHost::new(heavy, quantum)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::host::NoView;

    fn flow(id: u64, coflow: u32, arrival_ms: u64) -> HostFlow {
        HostFlow {
            id,
            coflow,
            coflow_arrival: Time::from_millis(arrival_ms),
            dst: 1,
            size: 5000,
            size_known: true,
            deadline: None,
        }
    }

    /// The testbed's hand-derived case (tests/test_testbed.py, before the
    /// policies moved): quantum 100 ms, heavy at 1,000 bytes.
    #[test]
    fn a_light_task_climbs_by_age_and_a_heavy_one_drops_to_class_7() {
        let mut p = FifoLmHost::new(1000, Dur::from_millis(100));
        let mut out = Effects::default();
        p.start(Time::ZERO, &flow(1, 0, 0), &mut out);
        assert_eq!(p.marking(1).class, 6);
        // The next step: 100 ms after the arrival.
        assert_eq!(p.wake_at(), Some(Time::from_millis(100)));
        p.wake(Time::from_millis(250), &NoView, &mut out);
        assert_eq!((out.changed.clone(), p.marking(1).class), (vec![1], 4));
        assert_eq!(p.wake_at(), Some(Time::from_millis(300)));
        out.clear();
        p.start(Time::from_millis(250), &flow(2, 1, 250), &mut out);
        assert_eq!(p.marking(2).class, 6);
        p.wake(Time::from_millis(360), &NoView, &mut out);
        assert_eq!(out.changed, vec![1, 2]);
        assert_eq!((p.marking(1).class, p.marking(2).class), (3, 5));
        out.clear();
        assert_eq!(p.limit(1), 1000);
        p.sent(Time::from_millis(360), 1, 1000, &mut out);
        assert_eq!(out.changed, vec![1]);
        let m = p.marking(1);
        assert_eq!(m.class, 7);
        assert_eq!(
            m.task,
            Some(TaskTag {
                id: 0,
                heavy: true,
                bytes: 1000
            })
        );
        assert_eq!(p.limit(1), u64::MAX);
        out.clear();
        p.wake(Time::from_millis(1500), &NoView, &mut out);
        assert_eq!(out.changed, vec![2]);
        assert_eq!((p.marking(1).class, p.marking(2).class), (7, 0));
        assert_eq!(p.wake_at(), None);
        p.finish(Time::from_millis(1500), 1, &mut out);
        assert_eq!(p.marking(1), Marking::BEST_EFFORT);
    }

    #[test]
    fn the_wake_is_the_next_step_of_the_youngest_class_and_exact() {
        let mut p = FifoLmHost::new(u64::MAX, Dur(10));
        let mut out = Effects::default();
        p.start(Time(5), &flow(1, 0, 0), &mut out);
        let f2 = HostFlow {
            coflow_arrival: Time(3),
            ..flow(2, 1, 0)
        };
        p.start(Time(5), &f2, &mut out);
        assert_eq!(p.wake_at(), Some(Time(10)));
        p.wake(Time(10), &NoView, &mut out);
        assert_eq!(out.changed, vec![1]);
        assert_eq!(p.wake_at(), Some(Time(13)));
        out.clear();
        p.wake(Time(13), &NoView, &mut out);
        assert_eq!(out.changed, vec![2]);
        assert_eq!(p.wake_at(), Some(Time(20)));
    }
}
