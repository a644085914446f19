//! `fifo-lm`: FIFO with limited multiplexing, Baraat's policy idealized
//! (Baraat, SIGCOMM 2014, 3.3).
//!
//! Coflows (tasks) are served in task-id order (Baraat 4.1; `tasks.rs`:
//! by default one counter, so release order with ties by arrival, then id;
//! `counters=N` interleaves N entry points, `background=ID` puts coflows
//! with ids from ID in the background range after every online task),
//! strict priority between classes,
//! per-flow max-min inside a class. A coflow that has sent at least the heavy
//! threshold shares its priority class with the coflow after it, so small
//! coflows behind a heavy one progress while the heavy one is not starved;
//! several heavy coflows in a row raise the degree of multiplexing further
//! (a class is a maximal run of coflows in which every member but the last
//! is heavy). The scheduler needs no sizes: "heavy" is bytes sent so far.
//! A coflow holds its place from its release until it completes, also while
//! none of its flows sends (a later stage not started yet, or every flow
//! done and a Finishes-Before parent not): it is heavy or light by what it
//! has sent, like any other.
//!
//! Crossing the threshold is an event: the scheduler asks to be woken at the
//! instant the first light coflow at its current rate will cross it, so the
//! class change happens exactly then (rounded up to the nanosecond).
//! With an infinite threshold it is `fifo`; with threshold 0 every coflow is
//! heavy from the start and it is per-flow fair sharing.

use crate::ordered::ClassServer;
use crate::tasks::{TaskIdConfig, TaskIds};
use crate::{Allocation, Changes, CoflowIdx, KnowsSent, Observed, Scheduler};
use coflowkit_model::{ceil_ns_time, Time};

/// FIFO with limited multiplexing; see the module doc.
#[derive(Debug)]
pub struct FifoLm {
    threshold: f64,
    order: Vec<CoflowIdx>,
    class: Vec<CoflowIdx>,
    server: ClassServer,
    tasks: TaskIds,
}

impl FifoLm {
    /// A FIFO-LM scheduler with the heavy threshold in bytes.
    pub fn new(threshold_bytes: f64) -> FifoLm {
        FifoLm::with_task_ids(threshold_bytes, TaskIdConfig::default())
    }

    /// A FIFO-LM scheduler whose coflows take task ids by `tasks`.
    pub fn with_task_ids(threshold_bytes: f64, tasks: TaskIdConfig) -> FifoLm {
        FifoLm {
            threshold: threshold_bytes,
            order: vec![],
            class: vec![],
            server: ClassServer::default(),
            tasks: TaskIds::new(tasks),
        }
    }

    fn is_heavy(&self, sent: f64) -> bool {
        sent >= self.threshold - 1e-6 * self.threshold.max(1.0)
    }
}

impl Scheduler for FifoLm {
    type Knows = KnowsSent;
    fn name(&self) -> &str {
        "fifo-lm"
    }
    fn schedule(
        &mut self,
        now: Time,
        view: Observed<'_>,
        changes: &Changes,
        out: &mut Allocation,
    ) -> Option<Time> {
        self.server.note(changes, &view);
        self.tasks.assign(&view, &changes.arrived);
        self.order.clear();
        self.order.extend_from_slice(view.active_coflows());
        let tasks = &self.tasks;
        self.order.sort_by_key(|&c| tasks.get(c));
        self.server.begin(&view);
        let mut class_no = 0;
        self.class.clear();
        for i in 0..self.order.len() {
            let c = self.order[i];
            self.class.push(c);
            if !self.is_heavy(view.coflow_sent(c)) || i + 1 == self.order.len() {
                let class = std::mem::take(&mut self.class);
                self.server.serve(&view, &class, class_no, out);
                self.class = class;
                self.class.clear();
                class_no += 1;
            }
        }
        self.server.end(&view, out);
        // Wake when the first light coflow turns heavy at its current rate.
        let mut wake = Time::NEVER;
        for &c in &self.order {
            let sent = view.coflow_sent(c);
            if self.is_heavy(sent) {
                continue;
            }
            let rate: f64 = view.active_flows_of(c).map(|f| out.rate(f)).sum();
            if let Some(t) = ceil_ns_time(now, self.threshold - sent, rate / 8e9) {
                wake = wake.min(t);
            }
        }
        (wake != Time::NEVER).then_some(wake)
    }
}
