//! TAFE at a host (Zhang, Xu, Wang and Shen, IEEE; seed
//! `003_c7c0a2e74d6d7471.txt`).
//!
//! Task-awareness (IV-A, Algorithm 1): a task (coflow) is at level `k` once
//! the bytes it has sent reach `U_k` of the threshold vector; "the
//! following flows from this task will enter Queue k+1 directly". The
//! bytes are the task's, from all its senders: Algorithm 1 adds up "the
//! length of flows from one task" where they arrive, the switches (IV-A2:
//! they mark "if the bytes of one task is greater than Υ", and the marks
//! "notify end-host to demote its priority"). A host learns them through
//! [`HostPolicy::task_sent`], which the packet engine's TAFE switches call
//! (the switch where a task's flows meet sees all of its bytes; the engine
//! tells every host of the task at once, as the flow-level model demotes a
//! task everywhere at once). A driver without such switches (the testbed)
//! never calls it, and each host counts what it sent itself. Either count
//! goes in [`TaskTag::bytes`] for the switches' marking. The 8 classes
//! are cut into one band per level (level 0 the highest, the first band
//! the widest: 3 levels give classes 0-3, 4-5 and 6-7), and inside a band
//! tasks are FIFO by age ([`age_class`]), Algorithm 1's FIFO among the
//! tasks of a queue as far as a band's classes can tell them apart (the
//! packet engine's TAFE ports also serve the flows of one class first come,
//! first served; a driver with plain FIFO queues, the testbed, does not).
//!
//! Flow-awareness (IV-B, Algorithm 2): on a marked window a flow backs off
//! by `alpha * Sc / Smax`, `Sc` its remaining bytes; the host gives each
//! flow [`Cc::Tafe`] with the penalty `Sc / Smax` in millionths, `Smax` the
//! largest remaining of its task's flows here (what the host knows; the
//! paper's upper bound on flow sizes would only scale every penalty). A
//! driver without that transport (the testbed's kernel TCP) lets the flows
//! of a task share by its default congestion control.
//!
//! The keys are the `tafe` scheduler's `thresholds` (and `queues`; its
//! fractions and percentiles need the workload's coflow sizes) and the
//! host's `age` quantum ([`crate::host::AGE_PARAM`]); at most 7 thresholds
//! (8 levels) fit 8 classes.

use crate::descriptor::Params;
use crate::host::tasks::{Task, Tasks};
use crate::host::{
    age_class, age_quantum, demotion_class, next_age_step, to_next_threshold, whole_bytes, Cc,
    Effects, HostContext, HostFlow, HostPolicy, HostView, Marking, TaskTag, N_CLASSES,
};
use crate::spec::{SchedulerError, WorkloadHints};
use crate::tafe::TafeConfig;
use coflowkit_model::{Dur, Time};
use std::collections::HashMap;

/// TAFE's per-host marking; see the module doc.
#[derive(Debug, Clone)]
pub struct TafeHost {
    rules: Rules,
    tasks: Tasks,
    /// Per active flow: (size, bytes sent).
    flows: HashMap<u64, (u64, u64)>,
}

/// What decides a task's class: the thresholds, the bands, the quantum.
#[derive(Debug, Clone)]
struct Rules {
    thresholds: Vec<u64>,
    /// Per level: its band's first class and width.
    bands: Vec<(u8, u8)>,
    quantum: Dur,
}

impl Rules {
    /// A task's band: by the thresholds its bytes reached.
    fn band(&self, task: &Task) -> (u8, u8) {
        self.bands[usize::from(self.level(task))]
    }

    /// A task's level: how many thresholds its bytes reached.
    fn level(&self, task: &Task) -> u8 {
        demotion_class(task.counted(), &self.thresholds)
    }

    /// Counts bytes of `task` (`add`: its own or all its hosts'); at a new
    /// level every flow of the task goes to its band (Algorithm 1).
    fn count(&self, task: &mut Task, now: Time, out: &mut Effects, add: impl FnOnce(&mut Task)) {
        let before = self.level(task);
        add(task);
        if self.level(task) != before {
            let k = self.class(task, now);
            Tasks::set_class(task, k, out);
        }
    }

    /// A task's class at `now`.
    fn class(&self, task: &Task, now: Time) -> u8 {
        let (first, n) = self.band(task);
        age_class(first, n, now - task.arrival, self.quantum)
    }
}

/// The bands of `levels` levels on the 8 classes: one per level, equal
/// widths, the first band the widest (it takes what does not divide).
pub fn bands(levels: usize) -> Vec<(u8, u8)> {
    let levels = levels.clamp(1, usize::from(N_CLASSES)) as u8;
    let width = N_CLASSES / levels;
    let first_width = width + N_CLASSES - width * levels;
    (0..levels)
        .map(|k| {
            if k == 0 {
                (0, first_width)
            } else {
                (first_width + (k - 1) * width, width)
            }
        })
        .collect()
}

impl TafeHost {
    /// The policy with `thresholds` (bytes; sorted, at most 7 kept) and one
    /// class per `quantum` of age inside a band.
    pub fn new(thresholds: &[u64], quantum: Dur) -> TafeHost {
        let mut t = thresholds.to_vec();
        t.sort_unstable();
        t.truncate(usize::from(N_CLASSES) - 1);
        TafeHost {
            rules: Rules {
                bands: bands(t.len() + 1),
                thresholds: t,
                quantum,
            },
            tasks: Tasks::default(),
            flows: HashMap::new(),
        }
    }

    /// The bands in use: (first class, width) per level.
    pub fn bands(&self) -> &[(u8, u8)] {
        &self.rules.bands
    }

    /// The penalty of `flow`: its remaining over the largest remaining of
    /// its task's flows here, in millionths.
    fn penalty_ppm(&self, flow: u64, task: &Task) -> u32 {
        let left = |f: &u64| self.flows.get(f).map_or(0, |&(s, b)| s.saturating_sub(b));
        let largest = task.flows.iter().map(left).max().unwrap_or(0);
        if largest == 0 {
            return 0;
        }
        (u128::from(left(&flow)) * 1_000_000 / u128::from(largest)) as u32
    }
}

impl HostPolicy for TafeHost {
    fn name(&self) -> &str {
        "tafe"
    }
    fn start(&mut self, now: Time, flow: &HostFlow, _out: &mut Effects) {
        self.flows.insert(flow.id, (flow.size, 0));
        let rules = &self.rules;
        self.tasks.join(flow, |t| rules.class(t, now));
    }
    fn sent(&mut self, now: Time, flow: u64, bytes: u64, out: &mut Effects) {
        if let Some(f) = self.flows.get_mut(&flow) {
            f.1 = f.1.saturating_add(bytes);
        }
        if let Some(task) = self.tasks.of_mut(flow) {
            self.rules
                .count(task, now, out, |t| t.bytes = t.bytes.saturating_add(bytes));
        }
    }
    fn task_sent(&mut self, now: Time, coflow: u32, bytes: u64, out: &mut Effects) {
        if let Some(task) = self.tasks.of_coflow_mut(coflow) {
            self.rules
                .count(task, now, out, |t| t.shared = t.shared.max(bytes));
        }
    }
    fn finish(&mut self, _now: Time, flow: u64, _out: &mut Effects) {
        self.tasks.leave(flow);
        self.flows.remove(&flow);
    }
    fn wake_at(&self) -> Option<Time> {
        self.tasks.earliest(|t| {
            let (first, n) = self.rules.band(t);
            next_age_step(first, n, t.class, t.arrival, self.rules.quantum)
        })
    }
    fn wake(&mut self, now: Time, _view: &dyn HostView, out: &mut Effects) {
        let rules = &self.rules;
        self.tasks.reclass(|t| rules.class(t, now), out);
    }
    fn marking(&self, flow: u64) -> Marking {
        match self.tasks.of(flow) {
            Some((c, task)) => Marking {
                cc: Cc::Tafe {
                    penalty_ppm: self.penalty_ppm(flow, task),
                },
                task: Some(TaskTag {
                    id: u64::from(c),
                    heavy: false,
                    bytes: task.counted(),
                }),
                ..Marking::class(task.class)
            },
            None => Marking::BEST_EFFORT,
        }
    }
    fn limit(&self, flow: u64) -> u64 {
        self.tasks.of(flow).map_or(u64::MAX, |(_, t)| {
            to_next_threshold(t.counted(), &self.rules.thresholds)
        })
    }
    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
}

/// Builds it from the `tafe` scheduler's spec (`queues`, `thresholds`,
/// `age`; `flows` is the flow rule of the flow-level model, here the
/// window rule's [`Cc::Tafe`], and is ignored).
pub(crate) fn build(
    p: &Params<'_>,
    hints: &WorkloadHints,
    _ctx: &HostContext,
) -> Result<Box<dyn HostPolicy>, SchedulerError> {
    let quantum = age_quantum(p)?;
    let config = TafeConfig::of_params(p, hints)?;
    if config.thresholds.len() >= usize::from(N_CLASSES) {
        return Err(p.bad(
            "thresholds",
            format!(
                "{} thresholds: a host marks 8 classes, give at most 7",
                config.thresholds.len()
            ),
        ));
    }
    let t: Vec<u64> = config.thresholds.iter().map(|&u| whole_bytes(u)).collect();
    Ok(Box::new(TafeHost::new(&t, quantum)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::host::NoView;

    /// A task's bytes from other hosts (TAFE's switches count them all)
    /// demote it here too; this host's own count never lowers it.
    #[test]
    fn the_task_bytes_of_every_host_demote_a_task() {
        let mut p = TafeHost::new(&[1000, 3000], Dur::from_millis(100));
        let mut out = Effects::default();
        p.start(Time::ZERO, &flow(1, 5000), &mut out);
        assert_eq!(p.marking(1).class, 3);
        assert_eq!(p.limit(1), 1000);
        p.sent(Time::ZERO, 1, 200, &mut out);
        out.clear();
        // Other hosts sent 900 more: 1100 in all, past U1.
        p.task_sent(Time::ZERO, 0, 1100, &mut out);
        assert_eq!(out.changed, vec![1]);
        assert_eq!(p.marking(1).class, 5);
        assert_eq!(p.marking(1).task.map(|t| t.bytes), Some(1100));
        assert_eq!(p.limit(1), 1900);
        // A task this host has no flow of is not kept.
        out.clear();
        p.task_sent(Time::ZERO, 7, 10_000, &mut out);
        assert!(out.changed.is_empty());
        // Its own bytes count on top only when they are more.
        p.sent(Time::ZERO, 1, 100, &mut out);
        assert_eq!(p.marking(1).task.map(|t| t.bytes), Some(1100));
    }

    fn flow(id: u64, size: u64) -> HostFlow {
        HostFlow {
            id,
            coflow: 0,
            coflow_arrival: Time::ZERO,
            dst: 1,
            size,
            size_known: true,
            deadline: None,
        }
    }

    #[test]
    fn bands_split_the_eight_classes_the_first_widest() {
        assert_eq!(bands(3), vec![(0, 4), (4, 2), (6, 2)]);
        assert_eq!(bands(1), vec![(0, 8)]);
        assert_eq!(bands(2), vec![(0, 4), (4, 4)]);
        assert_eq!(bands(8), (0..8).map(|k| (k, 1)).collect::<Vec<_>>());
    }

    /// The testbed's hand-derived case (tests/test_testbed.py, before the
    /// policies moved): thresholds 1,000 and 3,000, quantum 100 ms.
    #[test]
    fn a_task_is_demoted_through_bands_by_its_bytes_and_climbs_by_age() {
        let mut p = TafeHost::new(&[3000, 1000], Dur::from_millis(100));
        let mut out = Effects::default();
        p.start(Time::ZERO, &flow(1, 5000), &mut out);
        p.start(Time::ZERO, &flow(2, 5000), &mut out);
        assert_eq!((p.marking(1).class, p.marking(2).class), (3, 3));
        assert_eq!(p.limit(1), 1000);
        p.wake(Time::from_millis(150), &NoView, &mut out);
        assert_eq!(out.changed, vec![1, 2]);
        assert_eq!(p.marking(1).class, 2);
        out.clear();
        // The task's bytes from this host, both flows together.
        p.sent(Time::from_millis(150), 1, 600, &mut out);
        assert!(out.changed.is_empty());
        assert_eq!(p.limit(2), 400);
        p.sent(Time::from_millis(150), 2, 400, &mut out);
        assert_eq!(out.changed, vec![1, 2]);
        // Level 1: band 4-5, a quantum old: class 4.
        assert_eq!(p.marking(2).class, 4);
        out.clear();
        p.sent(Time::from_millis(150), 1, 2000, &mut out);
        assert_eq!(out.changed, vec![1, 2]);
        assert_eq!(p.marking(1).class, 6);
        assert_eq!(p.limit(1), u64::MAX);
        // Remaining: flow 1 has 5000 - 2600 = 2400, flow 2 4600.
        assert_eq!(
            p.marking(1).cc,
            Cc::Tafe {
                penalty_ppm: 521_739
            }
        );
        assert_eq!(
            p.marking(2).cc,
            Cc::Tafe {
                penalty_ppm: 1_000_000
            }
        );
        assert_eq!(p.marking(2).task.map(|t| t.bytes), Some(3000));
        // Level 2: band 6-7, a quantum old: its top, no step left.
        assert_eq!(p.wake_at(), None);
        p.finish(Time::from_millis(200), 1, &mut out);
        p.finish(Time::from_millis(200), 2, &mut out);
        assert_eq!(p.marking(1), Marking::BEST_EFFORT);
        assert!(p.tasks.tasks.is_empty());
    }
}
