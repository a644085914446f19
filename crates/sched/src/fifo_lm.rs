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
//!
//! `mux=last` is the variant that 8 priority queues can carry (the testbed's
//! `fifo-lm` sender policy, docs/testbed.md): light coflows in task-id order,
//! one class each, and every heavy coflow in one class below them all (heavy
//! coflows multiplexed with each other, not each with the coflow after it).
//! `per=sender` (with `mux=last`) judges heaviness per sender, as a host that
//! sees only its own uplink does: the flows of coflow `c` from host `s` are
//! heavy once they have sent the threshold together (flows that finished
//! included); a coflow can then be light from one host and heavy from another.

use crate::ordered::ClassServer;
use crate::tasks::{TaskIdConfig, TaskIds};
use crate::{Allocation, Changes, CoflowIdx, KnowsSent, Observed, Scheduler};
use coflowkit_model::{ceil_ns_time, HostId, Time};

/// Whom a heavy coflow shares its class with.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Mux {
    /// The coflow after it in task-id order (Baraat 3.3).
    #[default]
    Next,
    /// Every other heavy coflow, in one class below every light one.
    Last,
}

/// Where heaviness is judged (`per=sender` needs [`Mux::Last`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Per {
    /// By all the coflow has sent.
    #[default]
    Coflow,
    /// By what the coflow has sent from each host, separately.
    Sender,
}

/// FIFO with limited multiplexing; see the module doc.
#[derive(Debug)]
pub struct FifoLm {
    threshold: f64,
    mux: Mux,
    per: Per,
    order: Vec<CoflowIdx>,
    class: Vec<CoflowIdx>,
    server: ClassServer,
    tasks: TaskIds,
    // `per=sender`: the flows of each coflow that have started (by coflow
    // index), to sum what each host has sent of it.
    started: Vec<Vec<crate::FlowIdx>>,
    // Scratch: (host, bytes sent, rate) of one coflow's senders; heavy flows.
    senders: Vec<(HostId, f64, f64)>,
    heavy: Vec<crate::FlowIdx>,
}

impl FifoLm {
    /// A FIFO-LM scheduler with the heavy threshold in bytes.
    pub fn new(threshold_bytes: f64) -> FifoLm {
        FifoLm::with_task_ids(threshold_bytes, TaskIdConfig::default())
    }

    /// A FIFO-LM scheduler whose coflows take task ids by `tasks`.
    pub fn with_task_ids(threshold_bytes: f64, tasks: TaskIdConfig) -> FifoLm {
        FifoLm::with_mux(threshold_bytes, tasks, Mux::Next, Per::Coflow)
    }

    /// A FIFO-LM scheduler with the given multiplexing and heaviness
    /// (`per=sender` only with `mux=last`).
    pub fn with_mux(threshold_bytes: f64, tasks: TaskIdConfig, mux: Mux, per: Per) -> FifoLm {
        assert!(
            per == Per::Coflow || mux == Mux::Last,
            "fifo-lm: per=sender needs mux=last"
        );
        FifoLm {
            threshold: threshold_bytes,
            mux,
            per,
            order: vec![],
            class: vec![],
            server: ClassServer::default(),
            tasks: TaskIds::new(tasks),
            started: vec![],
            senders: vec![],
            heavy: vec![],
        }
    }

    fn is_heavy(&self, sent: f64) -> bool {
        is_heavy(self.threshold, sent)
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
        if self.mux == Mux::Last {
            return self.schedule_last(now, &view, changes, out);
        }
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

impl FifoLm {
    /// `mux=last`: light coflows (or a coflow's light senders) in task-id
    /// order, one class each; every heavy flow in one last class.
    fn schedule_last(
        &mut self,
        now: Time,
        view: &Observed<'_>,
        changes: &Changes,
        out: &mut Allocation,
    ) -> Option<Time> {
        if self.per == Per::Sender {
            for &f in &changes.started {
                let c = view.coflow_of(f) as usize;
                if self.started.len() <= c {
                    self.started.resize(c + 1, vec![]);
                }
                self.started[c].push(f);
            }
            for &c in &changes.finished_coflows {
                if let Some(v) = self.started.get_mut(c as usize) {
                    *v = vec![];
                }
            }
        }
        self.server.begin(view);
        self.heavy.clear();
        let mut class_no = 0;
        let order = std::mem::take(&mut self.order);
        for &c in &order {
            match self.per {
                Per::Coflow => {
                    if self.is_heavy(view.coflow_sent(c)) {
                        self.heavy.extend(view.active_flows_of(c));
                    } else {
                        self.server.serve(view, &[c], class_no, out);
                        class_no += 1;
                    }
                }
                Per::Sender => {
                    self.sum_senders(view, c);
                    let (senders, threshold) = (&self.senders, self.threshold);
                    let heavy_from = |f: crate::FlowIdx| {
                        let i = senders
                            .binary_search_by_key(&view.src(f), |s| s.0)
                            .expect("an active flow has started");
                        is_heavy(threshold, senders[i].1)
                    };
                    let light: Vec<_> = view
                        .active_flows_of(c)
                        .filter(|&f| !heavy_from(f))
                        .collect();
                    self.heavy
                        .extend(view.active_flows_of(c).filter(|&f| heavy_from(f)));
                    if !light.is_empty() {
                        self.server.serve_flows(view, light, class_no, out);
                        class_no += 1;
                    }
                }
            }
        }
        let heavy = std::mem::take(&mut self.heavy);
        if !heavy.is_empty() {
            self.server
                .serve_flows(view, heavy.iter().copied(), class_no, out);
        }
        self.heavy = heavy;
        self.server.end(view, out);
        // Wake when the first light coflow (or sender) turns heavy at its current rate.
        let mut wake = Time::NEVER;
        for &c in &order {
            match self.per {
                Per::Coflow => {
                    let sent = view.coflow_sent(c);
                    if !self.is_heavy(sent) {
                        let rate: f64 = view.active_flows_of(c).map(|f| out.rate(f)).sum();
                        if let Some(t) = ceil_ns_time(now, self.threshold - sent, rate / 8e9) {
                            wake = wake.min(t);
                        }
                    }
                }
                Per::Sender => {
                    self.sum_senders(view, c);
                    for f in view.active_flows_of(c) {
                        let i = self.senders.binary_search_by_key(&view.src(f), |s| s.0);
                        self.senders[i.expect("started")].2 += out.rate(f);
                    }
                    for &(_, sent, rate) in &self.senders {
                        if !is_heavy(self.threshold, sent) {
                            if let Some(t) = ceil_ns_time(now, self.threshold - sent, rate / 8e9) {
                                wake = wake.min(t);
                            }
                        }
                    }
                }
            }
        }
        self.order = order;
        (wake != Time::NEVER).then_some(wake)
    }

    /// Fills `senders` with (host, bytes sent, 0) for every host that has
    /// started a flow of coflow `c`, sorted by host.
    fn sum_senders(&mut self, view: &Observed<'_>, c: CoflowIdx) {
        self.senders.clear();
        for &f in self.started.get(c as usize).map_or(&[][..], |v| &v[..]) {
            self.senders.push((view.src(f), view.sent(f), 0.0));
        }
        self.senders.sort_by_key(|s| s.0);
        self.senders.dedup_by(|b, a| {
            if a.0 == b.0 {
                a.1 += b.1;
                true
            } else {
                false
            }
        });
    }
}

fn is_heavy(threshold: f64, sent: f64) -> bool {
    sent >= threshold - 1e-6 * threshold.max(1.0)
}
