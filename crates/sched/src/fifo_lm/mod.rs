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
//! # Computing it
//!
//! On the big switch every call walks the classes in order and re-solves
//! only those its changes reach ([`ClassCache::serve_classes`]: a class
//! whose members, flows and links' residuals are those of its last turn
//! keeps its rates), a wide class (FB2010's have thousands of flows) on
//! port counts kept as its flows start and finish (the ports' max-min
//! levels, to float rounding, restarted from the first port a change
//! reaches), so that an event costs the classes it reaches, not every
//! class. The rates are those of re-serving every class with
//! [`ClassServer::on_grid`] (what it did before), flow for flow
//! ([`ClassCache::exact`]: solo rates, a class on the grid only while it
//! is wide); FB2010's per-coflow CCTs are the same to the ns
//! (docs/lab/benchmarks-history.md, command 60). `mux=last` still re-serves every
//! class ([`ClassServer`]). On other fabrics (or with `solver=incremental`), for
//! the paper's rule (`mux=next`, per coflow), the flows are demands of an
//! [`IncrementalMaxMin`](coflowkit_alloc::IncrementalMaxMin) whose class is
//! their run's key, the task id of the run's first coflow, so that keys
//! stay in task-id order while runs merge and coflows leave. A coflow's key
//! is its predecessor's if that one is heavy, else its own task id; an
//! arrival, a completion or a coflow turning heavy recomputes the keys
//! from there on until one comes out unchanged, and only the flows of
//! coflows whose key moved change class. The instants
//! at which light coflows turn heavy wait in a heap, each re-keyed only when
//! its coflow's rate changes (kept as a running sum of its flows' rates). An
//! event then costs the links it reaches, as for `fifo`, instead of every
//! class: on Baraat's 36,000-host tree that is minutes instead of hours. The
//! same allocation; the reference tests run both paths.
//!
//! `mux=last` is the variant that 8 priority queues can carry (the testbed's
//! `fifo-lm` sender policy, docs/testbed.md): light coflows in task-id order,
//! one class each, and every heavy coflow in one class below them all (heavy
//! coflows multiplexed with each other, not each with the coflow after it).
//! `per=sender` (with `mux=last`) judges heaviness per sender, as a host that
//! sees only its own uplink does: the flows of coflow `c` from host `s` are
//! heavy once they have sent the threshold together (flows that finished
//! included); a coflow can then be light from one host and heavy from another.
//!
//! # Per link (`mux=link`)
//!
//! `mux=next` pairs a heavy coflow with the next coflow in the one global
//! task order, wherever that coflow sends. Baraat's switches do not: each
//! switch's classifier maps the tasks whose flows it sees to its priority
//! classes, and "the heavy task and the task immediately next in priority
//! to the heavy task share the same class" (Baraat 4.3.1, Figure 6a) is
//! decided there, so at a link a heavy task shares its class with the next
//! task *at that link*. `mux=link` is that rule: at each link, the
//! coflows with an active flow there, in task order, form classes, a class
//! a maximal run in which every member but the last is heavy; strict
//! priority between a link's classes, max-min inside one
//! (Algorithm 1: the highest class gets the link, any leftover the next).
//! A coflow with no active flow at a link (all its flows there finished, or
//! its next stage not started) holds no place there, unlike `mux=next`'s
//! global order, in which it holds its place until it completes.
//!
//! Heavy is, as for `mux=next`, all the coflow has sent. The paper's
//! counter is per switch, not per port ("the total bytes reserved by flows
//! of a task", 4.3.1; footnote 3: a task heavy at one switch may not be at
//! another): on the big switch, one switch, that is all the task sent; on a
//! tree it is what crossed that switch, which this rule over-counts at a
//! switch that sees only part of a task (a named gap, not modelled).
//!
//! Every link's class order follows the one global task order (a coflow
//! never has strictly higher priority than an earlier one anywhere), so the
//! allocation is defined by priority progressive filling: all unfrozen
//! flows rise together, but a flow rises only while no flow of a strictly
//! higher class at any of its links is unfrozen (it waits at rate 0); a
//! link that fills freezes every unfrozen flow on it. The flows of the
//! earliest coflow with an unfrozen flow always rise, so it ends. Where a
//! flow starts rising late (a higher class at one of its other links froze
//! late) it gets less than a flow of its class that rose from the start at
//! a link they share: the filling is not max-min inside a class then. With
//! every coflow on one aggregator's downlink (Baraat's single-stage tasks on
//! the big switch) the classes there are `mux=next`'s and no flow starts
//! late, so it is `mux=next` (`exact.rs`,
//! `fifo_lm_mux_link_is_mux_next_when_every_coflow_shares_one_aggregator`).
//!
//! [`LinkFill`] computes it afresh at each call: the (link, coflow, flow)
//! entries sorted, each link's classes as ranges of them, and the filling
//! as events in link fill-level order (each link's residual settled
//! lazily at the level it last changed), a flow counting the links at
//! which it waits so that a class emptying at a link starts exactly the
//! flows that waited only there. The next link to fill is the root of a
//! tournament tree over the links ([`FillLevels`]: one leaf per link, set
//! in place when its level moves), in (level, link) order, the order of
//! the lazy binary heap it replaced, whose stale entries were 40% of the
//! time; so the filling, float operation for float operation, is the
//! same. Links that fill at one level all fill, whichever comes first: a
//! link whose last rising flow another one froze just as its residual ran
//! out fills then too, freezing the flows waiting on it (it used to drop
//! out, full, and they waited, holding the classes behind them at their
//! other links, until a later fill: test
//! `fifo_lm_mux_link_regression_fresh_seed_links_full_at_one_level`). A
//! call at which no flow started or finished, no coflow arrived or
//! completed, and every coflow that turned heavy since the last solve
//! is the last at each of its links (its class ends at it, as before),
//! keeps the last solve's rates and classes without a solve
//! ([`LinkFill::unchanged`]; on cut80 at most 36 of 375 calls, those with
//! the last call's entries). What the counts say is not skipped: on
//! Table 4's Bing run (2,000 tasks on the 320-host tree) a call has
//! 16,000 active flows on average, of which 600 change rate and 9,700 are
//! frozen at 0 as at the call before (queued tasks), but such a flow's
//! freezing level decides when the class behind it at its other links
//! starts, so they are not left out; docs/lab/benchmarks-history.md, command 123.
//! Correctness properties: every active flow ends frozen (`LinkFill::fill`,
//! debug builds); a call kept without a solve has a fresh solve's rates and
//! classes, to the bit (`LinkFill::check_unchanged`, debug builds); the
//! rates are the slow step-by-step filling's (`crates/sim/tests/reference`,
//! `FifoLmLink`, on random cases on the big switch and on multi-hop
//! fabrics).

mod link_fill;

use link_fill::*;

pub mod host;

use crate::class_cache::ClassCache;
use crate::class_server::{ClassServer, ClassedFlows};
use crate::descriptor::{
    Kind, Needs, Param, Parts, SchedulerDescriptor, SOLVER_PARAM, TASK_ID_PARAMS,
};
use crate::spec::Hint;
use crate::tasks::{TaskIdConfig, TaskIds};
use crate::AnyScheduler;
use crate::{Allocation, Changes, CoflowIdx, FlowIdx, KnowsSent, Observed, Scheduler};
use coflowkit_model::{ceil_ns_time, HostId, Time};
use std::cmp::Reverse;
use std::collections::{BTreeSet, BinaryHeap};
use std::ops::Bound::{Excluded, Unbounded};

/// The heavy threshold of `fifo-lm` and `baraat`.
pub const THRESHOLD_PARAM: Param = Param {
    key: "threshold",
    kind: Kind::PercentileOrBytes,
    default: "p80",
    unit: "",
    help: "heavy threshold: a percentile of the workload's coflow sizes (a hint), a size, or inf",
};

/// `fifo-lm`: FIFO with limited multiplexing of heavy coflows.
pub const FIFO_LM: SchedulerDescriptor = SchedulerDescriptor {
    cost: 3.7,
    parts: Parts {
        host: Some(crate::fifo_lm::host::build),
        ..Parts::NONE
    },
    name: "fifo-lm",
    description: "FIFO with limited multiplexing of heavy coflows (Baraat idealized)",
    paper: "Baraat (SIGCOMM 2014) 3.3 and 4.1, idealized: one global decision per coflow (mux=link: per link, 4.3.1)",
    params: &[
        THRESHOLD_PARAM,
        TASK_ID_PARAMS[0],
        TASK_ID_PARAMS[1],
        Param {
            key: "mux",
            kind: Kind::Choice(&["next", "last", "link"]),
            default: "next",
            unit: "",
            help: "a heavy coflow shares its class with the next coflow (next), the next one at each link (link), or every heavy one, last (last)",
        },
        Param {
            key: "per",
            kind: Kind::Choice(&["coflow", "sender"]),
            default: "coflow",
            unit: "",
            help: "heavy by all a coflow has sent, or per sender (needs mux=last)",
        },
        SOLVER_PARAM,
        crate::host::AGE_PARAM,
    ],
    needs: Needs {
        hints: &[Hint::CoflowSizes],
        ..Needs::NOTHING
    },
    build: |p, hints| {
        let tasks = TaskIdConfig::of_params(p)?;
        let mux = match p.choice("mux")? {
            "last" => Mux::Last,
            "link" => Mux::Link,
            _ => Mux::Next,
        };
        let per = match p.choice("per")? {
            "sender" if mux == Mux::Last => Per::Sender,
            "sender" => return Err(p.bad("per", "per=sender needs mux=last")),
            _ => Per::Coflow,
        };
        let incremental = match p.choice("solver")? {
            "incremental" if mux == Mux::Next => true,
            "incremental" => return Err(p.bad("solver", "solver=incremental needs mux=next")),
            _ => false,
        };
        // Last: a percentile needs the workload, and every other key is
        // checked without it.
        let threshold = p.percentile_or_bytes("threshold", hints)?;
        let lm = FifoLm::with_mux(threshold, tasks, mux, per);
        Ok(AnyScheduler::NonClairvoyant(Box::new(if incremental {
            lm.incremental()
        } else {
            lm
        })))
    },
};

/// Whom a heavy coflow shares its class with.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Mux {
    /// The coflow after it in task-id order (Baraat 3.3).
    #[default]
    Next,
    /// Every other heavy coflow, in one class below every light one.
    Last,
    /// At each link, the coflow after it among those with a flow there
    /// (Baraat 4.3.1 and footnote 3; see the module doc, "Per link").
    Link,
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
    // Where each class begins in `order` (and its end), for `cache`.
    bounds: Vec<usize>,
    server: ClassServer,
    cache: ClassCache,
    tasks: TaskIds,
    // `per=sender`: the flows of each coflow that have started (by coflow
    // index), to sum what each host has sent of it.
    started: Vec<Vec<crate::FlowIdx>>,
    // Scratch: (host, bytes sent, rate) of one coflow's senders; heavy flows.
    senders: Vec<(HostId, f64, f64)>,
    heavy: Vec<crate::FlowIdx>,
    // The incremental path (module doc, "Computing it"), made on first use.
    incremental: Option<Incremental>,
    always_incremental: bool,
    // `mux=link`: the progressive filling's state, reused between calls.
    fill: LinkFill,
}

/// What the incremental path keeps between calls.
#[derive(Debug)]
struct Incremental {
    solver: ClassedFlows,
    // Active coflows in task-id order: (task id, coflow).
    order: BTreeSet<(u64, CoflowIdx)>,
    // Per coflow: its run's key (None before it arrives), whether it is
    // heavy, its started flows, the sum of their rates, and the version of
    // its entry in `crossing`.
    key: Vec<Option<u64>>,
    heavy: Vec<bool>,
    flows: Vec<Vec<FlowIdx>>,
    rate_sum: Vec<f64>,
    version: Vec<u32>,
    // (instant a light coflow turns heavy at its rate, coflow, version).
    crossing: BinaryHeap<Reverse<(Time, CoflowIdx, u32)>>,
    touched: Vec<CoflowIdx>,
}

impl Incremental {
    fn new(view: &Observed<'_>) -> Incremental {
        Incremental {
            solver: ClassedFlows::new(view),
            order: BTreeSet::new(),
            key: vec![],
            heavy: vec![],
            flows: vec![],
            rate_sum: vec![],
            version: vec![],
            crossing: BinaryHeap::new(),
            touched: vec![],
        }
    }

    fn grow(&mut self, c: CoflowIdx) {
        let n = c as usize + 1;
        if self.key.len() < n {
            self.key.resize(n, None);
            self.heavy.resize(n, false);
            self.flows.resize(n, vec![]);
            self.rate_sum.resize(n, 0.0);
            self.version.resize(n, 0);
        }
    }

    fn next(&self, at: (u64, CoflowIdx)) -> Option<(u64, CoflowIdx)> {
        self.order.range((Excluded(at), Unbounded)).next().copied()
    }

    /// Recomputes the run keys from `from` on, until one comes out as it
    /// was (those after it depend only on it); `from` itself always.
    fn rekey(&mut self, from: (u64, CoflowIdx), out: &mut Allocation) {
        let mut at = Some(from);
        let mut first = true;
        while let Some((task, c)) = at {
            let want = match self.order.range(..(task, c)).next_back() {
                Some(&(_, p)) if self.heavy[p as usize] => self.key[p as usize],
                _ => Some(task),
            };
            let ci = c as usize;
            if self.key[ci] == want && !first {
                break;
            }
            first = false;
            if self.key[ci] != want {
                self.key[ci] = want;
                let k = want.expect("an ordered coflow has a key");
                for &f in &self.flows[ci] {
                    self.solver.set_class(f, k, out);
                }
            }
            at = self.next((task, c));
        }
    }
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
            bounds: vec![],
            server: ClassServer::on_grid(),
            cache: ClassCache::exact(),
            tasks: TaskIds::new(tasks),
            started: vec![],
            senders: vec![],
            heavy: vec![],
            incremental: None,
            always_incremental: false,
            fill: LinkFill::default(),
        }
    }

    /// The same scheduler with the incremental solver on every fabric
    /// (`solver=incremental`; `mux=next` and per coflow only).
    pub fn incremental(mut self) -> FifoLm {
        assert!(
            self.mux == Mux::Next && self.per == Per::Coflow,
            "fifo-lm: solver=incremental needs mux=next"
        );
        self.always_incremental = true;
        self
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
        self.tasks.assign(&view, &changes.arrived);
        if self.mux == Mux::Next && (self.always_incremental || !view.fabric().is_big_switch()) {
            return self.schedule_incremental(now, &view, changes, out);
        }
        match self.mux {
            Mux::Next => self.cache.note(changes, &view),
            Mux::Last => self.server.note(changes, &view),
            Mux::Link => {}
        }
        self.order.clear();
        self.order.extend_from_slice(view.active_coflows());
        let tasks = &self.tasks;
        self.order.sort_by_key(|&c| tasks.get(c));
        if self.mux == Mux::Last {
            return self.schedule_last(now, &view, changes, out);
        }
        if self.mux == Mux::Link {
            let (threshold, order) = (self.threshold, &self.order);
            let heavy = |c: CoflowIdx| is_heavy(threshold, view.coflow_sent(c));
            if self.fill.unchanged(&view, changes, order, &heavy) {
                #[cfg(debug_assertions)]
                self.fill.check_unchanged(&view, order, &heavy, out);
            } else {
                self.fill.solve(&view, order, heavy, out);
            }
            return self.wake_light(now, &view, out);
        }
        // A class ends at a light coflow or at the last one.
        self.bounds.clear();
        self.bounds.push(0);
        for (i, &c) in self.order.iter().enumerate() {
            if !self.is_heavy(view.coflow_sent(c)) || i + 1 == self.order.len() {
                self.bounds.push(i + 1);
            }
        }
        let (order, bounds) = (&self.order, &self.bounds);
        let classes = bounds.windows(2).map(|w| &order[w[0]..w[1]]);
        self.cache.serve_classes(&view, classes, out);
        self.wake_light(now, &view, out)
    }
}

impl FifoLm {
    /// When the first light coflow of `order` turns heavy at its rate now.
    fn wake_light(&self, now: Time, view: &Observed<'_>, out: &Allocation) -> Option<Time> {
        let mut wake = Time::NEVER;
        for &c in &self.order {
            let sent = view.coflow_sent(c);
            if self.is_heavy(sent) {
                continue;
            }
            let rate: f64 = view.active_flows_of(c).map(|f| out.rate(f)).sum();
            if let Some(t) = crossing(self.threshold, now, sent, rate) {
                wake = wake.min(t);
            }
        }
        (wake != Time::NEVER).then_some(wake)
    }

    /// The incremental path; see the module doc, "Computing it".
    fn schedule_incremental(
        &mut self,
        now: Time,
        view: &Observed<'_>,
        changes: &Changes,
        out: &mut Allocation,
    ) -> Option<Time> {
        let threshold = self.threshold;
        let tasks = &self.tasks;
        let inc = self
            .incremental
            .get_or_insert_with(|| Incremental::new(view));
        inc.touched.clear();
        // A finished flow's solver rate is its last until the solve.
        for &f in &changes.finished {
            let c = view.coflow_of(f);
            inc.rate_sum[c as usize] -= inc.solver.rate(f);
            inc.touched.push(c);
        }
        inc.solver.finish(changes);
        // Arrivals first: a coflow can arrive and complete in one call (a
        // coflow of empty flows).
        for &c in &changes.arrived {
            inc.grow(c);
            let at = (tasks.get(c).0, c);
            inc.heavy[c as usize] = is_heavy(threshold, view.coflow_sent(c));
            inc.order.insert(at);
            inc.rekey(at, out);
            inc.touched.push(c);
        }
        for &c in &changes.finished_coflows {
            let ci = c as usize;
            if ci < inc.key.len() && inc.key[ci].is_some() {
                let at = (tasks.get(c).0, c);
                let after = inc.next(at);
                inc.order.remove(&at);
                inc.key[ci] = None;
                inc.flows[ci] = vec![];
                inc.version[ci] = inc.version[ci].wrapping_add(1);
                if let Some(s) = after {
                    inc.rekey(s, out);
                }
            }
        }
        // Light coflows whose crossing instant has come turn heavy; their
        // successors' runs merge into theirs.
        while let Some(&Reverse((t, c, v))) = inc.crossing.peek() {
            if t > now {
                break;
            }
            inc.crossing.pop();
            let ci = c as usize;
            if v != inc.version[ci] || inc.key[ci].is_none() || inc.heavy[ci] {
                continue;
            }
            if is_heavy(threshold, view.coflow_sent(c)) {
                inc.heavy[ci] = true;
                if let Some(s) = inc.next((tasks.get(c).0, c)) {
                    inc.rekey(s, out);
                }
            } else {
                inc.touched.push(c);
            }
        }
        // A coflow whose flow finished may have sent the threshold without
        // its crossing instant coming: a completion is taken at an event up
        // to SNAP_NS before its instant, and the crossing, computed at the
        // same rate, is that instant rounded up. Its rate is now lower, so
        // no new crossing would come: it turns heavy now (fuzz seed
        // 8152820400528393682: it stayed light to the end).
        for i in 0..inc.touched.len() {
            let c = inc.touched[i];
            let ci = c as usize;
            if inc.key[ci].is_none() || inc.heavy[ci] {
                continue;
            }
            if is_heavy(threshold, view.coflow_sent(c)) {
                inc.heavy[ci] = true;
                if let Some(s) = inc.next((tasks.get(c).0, c)) {
                    inc.rekey(s, out);
                }
            }
        }
        for &f in &changes.started {
            let c = view.coflow_of(f);
            let key = inc.key[c as usize].expect("a started flow's coflow has arrived");
            inc.solver.start(view, f, key, out);
            inc.flows[c as usize].push(f);
        }
        let (rate_sum, touched) = (&mut inc.rate_sum, &mut inc.touched);
        inc.solver.solve(out, |f, delta| {
            let c = view.coflow_of(f);
            rate_sum[c as usize] += delta;
            touched.push(c);
        });
        // New crossing instants for the light coflows whose rate moved.
        inc.touched.sort_unstable();
        inc.touched.dedup();
        for &c in &inc.touched {
            let ci = c as usize;
            if inc.key[ci].is_none() || inc.heavy[ci] {
                continue;
            }
            inc.version[ci] = inc.version[ci].wrapping_add(1);
            let rate = inc.rate_sum[ci].max(0.0);
            if let Some(t) = crossing(threshold, now, view.coflow_sent(c), rate) {
                inc.crossing.push(Reverse((t, c, inc.version[ci])));
            }
        }
        while let Some(&Reverse((_, c, v))) = inc.crossing.peek() {
            let ci = c as usize;
            if v == inc.version[ci] && inc.key[ci].is_some() && !inc.heavy[ci] {
                break;
            }
            inc.crossing.pop();
        }
        inc.crossing.peek().map(|&Reverse((t, _, _))| t)
    }

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
                        if let Some(t) = crossing(self.threshold, now, sent, rate) {
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
                            if let Some(t) = crossing(self.threshold, now, sent, rate) {
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
