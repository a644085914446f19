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

/// When a coflow (or sender) that has sent `sent` bytes reaches `threshold`
/// at `rate_bps` from `now`, rounded up to the nanosecond (`None` at rate 0).
fn crossing(threshold: f64, now: Time, sent: f64, rate_bps: f64) -> Option<Time> {
    ceil_ns_time(now, threshold - sent, rate_bps / 8e9)
}

fn is_heavy(threshold: f64, sent: f64) -> bool {
    sent >= threshold - 1e-6 * threshold.max(1.0)
}

/// No coflow (a link's last entry where it has none).
const NO_COFLOW: CoflowIdx = CoflowIdx::MAX;

/// `mux=link`'s allocation, computed afresh at each call by priority
/// progressive filling (module doc, "Per link"). Flows are numbered in
/// the order of their coflows (`order`), then of `active_flows_of`.
#[derive(Debug, Default)]
struct LinkFill {
    // Per flow (local number): its index, where its entries' positions
    // start in `at`, the level it began rising at, its
    // rate, how many of its links hold an unfrozen flow of a higher
    // class, whether it rises, whether it is frozen.
    flows: Vec<FlowIdx>,
    at_start: Vec<u32>,
    start: Vec<f64>,
    rate: Vec<f64>,
    blocked: Vec<u32>,
    rising: Vec<bool>,
    frozen: Vec<bool>,
    // (link, coflow position, flow) for every link of every flow, sorted:
    // a link's entries in task order; their class at that link; and per
    // flow, the positions of its entries (`at[at_start[i]..at_start[i+1]]`).
    entries: Vec<(u32, u32, u32)>,
    class: Vec<u32>,
    // Scratch of the sort by link.
    sorted: Vec<(u32, u32, u32)>,
    bucket: Vec<u32>,
    at: Vec<u32>,
    // Per link: its entries' range, where its classes begin (in `classes`,
    // each the position of its first entry, with one past the last),
    // its top class (the first with an unfrozen flow), the level `lam` at
    // which its residual `res` was last settled, and its rising flows.
    link_entries: Vec<(u32, u32)>,
    link_classes: Vec<(u32, u32)>,
    classes: Vec<u32>,
    unfrozen: Vec<u32>,
    top: Vec<u32>,
    lam: Vec<f64>,
    res: Vec<f64>,
    n_rising: Vec<u32>,
    dirty: Vec<u32>,
    is_dirty: Vec<bool>,
    // The level at which each link with a rising flow fills.
    fills: FillLevels,
    // As of the last solve: per coflow, whether it was heavy; per link,
    // the coflow of its last entry (`NO_COFLOW` for none).
    solved: bool,
    was_heavy: Vec<bool>,
    last_at: Vec<CoflowIdx>,
}

impl LinkFill {
    /// Rates and classes for every active flow of the coflows of `order`
    /// (task order; `heavy` says which have sent the threshold).
    fn solve(
        &mut self,
        view: &Observed<'_>,
        order: &[CoflowIdx],
        heavy: impl Fn(CoflowIdx) -> bool,
        out: &mut Allocation,
    ) {
        self.build(view, order, &heavy);
        self.fill(view);
        self.solved = true;
        self.note_heavy(order, &heavy);
        self.last_at.clear();
        self.last_at.resize(view.capacities().len(), NO_COFLOW);
        for (l, &(b, e)) in self.link_entries.iter().enumerate() {
            if e > b {
                self.last_at[l] = order[self.entries[e as usize - 1].1 as usize];
            }
        }
        for i in 0..self.flows.len() {
            let f = self.flows[i];
            out.set_rate(f, self.rate[i]);
            // A flow's class for drivers with queues: its class at the
            // first link of its path, as the task position of its first
            // member.
            let e = self.at[self.at_start[i] as usize] as usize;
            let (cs, _) = self.link_classes[self.entries[e].0 as usize];
            let head = self.classes[(cs + self.class[e]) as usize];
            out.set_class(f, self.entries[head as usize].1);
        }
    }

    /// Notes which coflows of `order` are heavy now, for the next call's
    /// [`LinkFill::unchanged`].
    fn note_heavy(&mut self, order: &[CoflowIdx], heavy: &impl Fn(CoflowIdx) -> bool) {
        for &c in order {
            let ci = c as usize;
            if self.was_heavy.len() <= ci {
                self.was_heavy.resize(ci + 1, false);
            }
            self.was_heavy[ci] = heavy(c);
        }
    }

    /// Whether the last solve's rates and classes stand: no flow started
    /// or finished and no coflow arrived or completed since (the debug
    /// check caught a completion without a flow's: the same rates, but
    /// the classes, named by places in `order`, moved), and every coflow
    /// that turned heavy since is the
    /// last at each of its links (a class then ends at it as before). The
    /// engine's events that change nothing else (a crossing by a coflow
    /// with none behind it anywhere) then cost no solve.
    fn unchanged(
        &mut self,
        view: &Observed<'_>,
        changes: &Changes,
        order: &[CoflowIdx],
        heavy: &impl Fn(CoflowIdx) -> bool,
    ) -> bool {
        // An arrival or a completion moves coflows' places in `order`,
        // which name the classes, even when no flow starts or finishes.
        if !self.solved
            || !changes.started.is_empty()
            || !changes.finished.is_empty()
            || !changes.arrived.is_empty()
            || !changes.finished_coflows.is_empty()
        {
            return false;
        }
        for &c in order {
            let ci = c as usize;
            let was = self.was_heavy.get(ci).copied().unwrap_or(false);
            if heavy(c) == was {
                continue;
            }
            // A coflow with no active flow (one arrived since) has no entry.
            let last_everywhere = view
                .active_flows_of(c)
                .all(|f| view.path(f).iter().all(|l| self.last_at[l.0 as usize] == c));
            if !last_everywhere {
                return false;
            }
        }
        self.note_heavy(order, heavy);
        true
    }

    /// Debug builds: the rates a call found [`unchanged`](Self::unchanged)
    /// keeps are a fresh solve's, to the bit.
    #[cfg(debug_assertions)]
    fn check_unchanged(
        &mut self,
        view: &Observed<'_>,
        order: &[CoflowIdx],
        heavy: &impl Fn(CoflowIdx) -> bool,
        out: &mut Allocation,
    ) {
        let rates = |fill: &LinkFill| -> Vec<(FlowIdx, u64)> {
            fill.flows
                .iter()
                .zip(&fill.rate)
                .map(|(&f, r)| (f, r.to_bits()))
                .collect()
        };
        let kept = rates(self);
        let classes: Vec<u32> = self.flows.iter().map(|&f| out.class(f)).collect();
        self.solve(view, order, heavy, out);
        let fresh = rates(self);
        assert_eq!(
            kept, fresh,
            "fifo-lm:mux=link: an unchanged call's rates moved"
        );
        let now: Vec<u32> = self.flows.iter().map(|&f| out.class(f)).collect();
        assert_eq!(
            classes, now,
            "fifo-lm:mux=link: an unchanged call's classes moved"
        );
    }

    /// Lists the flows and their entries, and the classes at each link.
    fn build(
        &mut self,
        view: &Observed<'_>,
        order: &[CoflowIdx],
        heavy: &impl Fn(CoflowIdx) -> bool,
    ) {
        let n_links = view.capacities().len();
        self.flows.clear();
        self.at_start.clear();
        self.entries.clear();
        for (r, &c) in order.iter().enumerate() {
            for f in view.active_flows_of(c) {
                let i = self.flows.len() as u32;
                self.at_start.push(self.entries.len() as u32);
                self.flows.push(f);
                for l in view.path(f) {
                    self.entries.push((l.0, r as u32, i));
                }
            }
        }
        self.at_start.push(self.entries.len() as u32);
        // By link, stably: pushed in (coflow position, flow) order, so this
        // is the sort by (link, position, flow), in linear time (a sort was
        // a third of FB2010's time).
        self.bucket.clear();
        self.bucket.resize(n_links + 1, 0);
        for &(l, _, _) in &self.entries {
            self.bucket[l as usize + 1] += 1;
        }
        for l in 0..n_links {
            self.bucket[l + 1] += self.bucket[l];
        }
        self.sorted.clear();
        self.sorted.resize(self.entries.len(), (0, 0, 0));
        for &x in &self.entries {
            let k = &mut self.bucket[x.0 as usize];
            self.sorted[*k as usize] = x;
            *k += 1;
        }
        std::mem::swap(&mut self.entries, &mut self.sorted);
        let n = self.flows.len();
        self.at.clear();
        self.at.resize(self.entries.len(), 0);
        // Per flow, a cursor into its slots of `at` (reusing `blocked`).
        self.blocked.clear();
        self.blocked.resize(n, 0);
        for (e, &(_, _, i)) in self.entries.iter().enumerate() {
            let k = self.at_start[i as usize] + self.blocked[i as usize];
            self.at[k as usize] = e as u32;
            self.blocked[i as usize] += 1;
        }
        self.blocked.iter_mut().for_each(|b| *b = 0);
        self.link_entries.clear();
        self.link_entries.resize(n_links, (0, 0));
        self.link_classes.clear();
        self.link_classes.resize(n_links, (0, 0));
        self.classes.clear();
        self.unfrozen.clear();
        self.class.clear();
        self.class.resize(self.entries.len(), 0);
        let mut e = 0;
        while e < self.entries.len() {
            let l = self.entries[e].0;
            let begin = e;
            let cs = self.classes.len() as u32;
            let mut k = 0u32;
            self.classes.push(e as u32);
            self.unfrozen.push(0);
            while e < self.entries.len() && self.entries[e].0 == l {
                let r = self.entries[e].1;
                // A new class begins after a light coflow's last entry.
                if e > begin
                    && self.entries[e - 1].1 != r
                    && !heavy(order[self.entries[e - 1].1 as usize])
                {
                    k += 1;
                    self.classes.push(e as u32);
                    self.unfrozen.push(0);
                }
                self.class[e] = k;
                *self.unfrozen.last_mut().expect("a class") += 1;
                if k > 0 {
                    self.blocked[self.entries[e].2 as usize] += 1;
                }
                e += 1;
            }
            self.classes.push(e as u32);
            self.unfrozen.push(0);
            self.link_entries[l as usize] = (begin as u32, e as u32);
            self.link_classes[l as usize] = (cs, k + 1);
        }
    }

    /// Priority progressive filling over the entries `build` listed.
    fn fill(&mut self, view: &Observed<'_>) {
        let n = self.flows.len();
        let caps = view.capacities();
        let n_links = caps.len();
        self.start.clear();
        self.start.resize(n, 0.0);
        self.rate.clear();
        self.rate.resize(n, 0.0);
        self.rising.clear();
        self.rising.resize(n, false);
        self.frozen.clear();
        self.frozen.resize(n, false);
        self.top.clear();
        self.top.resize(n_links, 0);
        self.lam.clear();
        self.lam.resize(n_links, 0.0);
        self.res.clear();
        self.res.extend_from_slice(caps);
        self.n_rising.clear();
        self.n_rising.resize(n_links, 0);
        if self.is_dirty.len() < n_links {
            self.is_dirty.resize(n_links, false);
        }
        self.fills.reset(n_links);
        self.dirty.clear();
        for i in 0..n {
            if self.blocked[i] == 0 {
                self.begin_rising(i, 0.0);
            }
        }
        self.push_dirty(caps);
        while let Some((level, l)) = self.fills.lowest() {
            let li = l as usize;
            let (b, e) = self.link_entries[li];
            for x in b..e {
                let i = self.entries[x as usize].2 as usize;
                if !self.frozen[i] {
                    self.freeze(i, level);
                }
            }
            self.res[li] = 0.0;
            // Its entry goes (it had no rising flow left when another link
            // filling at this level froze its last: `push_dirty`).
            self.mark(li);
            self.push_dirty(caps);
        }
        debug_assert!(
            self.frozen.iter().all(|&x| x),
            "fifo-lm:mux=link: a flow left unfrozen"
        );
    }

    /// Brings link `l`'s residual to `level`.
    fn settle(&mut self, l: usize, level: f64) {
        let used = f64::from(self.n_rising[l]) * (level - self.lam[l]);
        self.res[l] = (self.res[l] - used).max(0.0);
        self.lam[l] = level;
    }

    fn begin_rising(&mut self, i: usize, level: f64) {
        self.rising[i] = true;
        self.start[i] = level;
        for k in self.at_start[i]..self.at_start[i + 1] {
            let l = self.entries[self.at[k as usize] as usize].0 as usize;
            self.settle(l, level);
            self.n_rising[l] += 1;
            self.mark(l);
        }
    }

    /// Freezes flow `i` at `level`; flows its freezing unblocks rise.
    fn freeze(&mut self, i: usize, level: f64) {
        self.frozen[i] = true;
        let was_rising = self.rising[i];
        if was_rising {
            self.rate[i] = (level - self.start[i]).max(0.0);
            self.rising[i] = false;
        }
        for k in self.at_start[i]..self.at_start[i + 1] {
            let e = self.at[k as usize] as usize;
            let l = self.entries[e].0 as usize;
            if was_rising {
                self.settle(l, level);
                self.n_rising[l] -= 1;
                self.mark(l);
            }
            let (cs, n_classes) = self.link_classes[l];
            let c = (cs + self.class[e]) as usize;
            self.unfrozen[c] -= 1;
            if self.class[e] != self.top[l] || self.unfrozen[c] > 0 {
                continue;
            }
            // The top class emptied: the next one with unfrozen flows rises.
            while self.top[l] < n_classes && self.unfrozen[(cs + self.top[l]) as usize] == 0 {
                self.top[l] += 1;
            }
            if self.top[l] == n_classes {
                continue;
            }
            let t = (cs + self.top[l]) as usize;
            for x in self.classes[t]..self.classes[t + 1] {
                let j = self.entries[x as usize].2 as usize;
                if !self.frozen[j] {
                    self.blocked[j] -= 1;
                    if self.blocked[j] == 0 {
                        self.begin_rising(j, level);
                    }
                }
            }
        }
    }

    /// Notes that link `l`'s fill level moved.
    fn mark(&mut self, l: usize) {
        if !self.is_dirty[l] {
            self.is_dirty[l] = true;
            self.dirty.push(l as u32);
        }
    }

    /// Sets the level at which each link touched since the last call
    /// fills (none once no flow rises on it). A link whose last rising
    /// flow froze (another link filling) just as its residual ran out
    /// (within 1e-12 of its capacity, as the reference's filling) fills
    /// too, at that level, if it holds an unfrozen flow: several links
    /// filling at one level all freeze their flows, whichever comes first
    /// (a flow waiting there behind the class that filled it gets nothing,
    /// and the classes behind it at its other links rise from then on).
    fn push_dirty(&mut self, caps: &[f64]) {
        let mut dirty = std::mem::take(&mut self.dirty);
        for &l in &dirty {
            let li = l as usize;
            self.is_dirty[li] = false;
            let level = if self.n_rising[li] > 0 {
                Some(self.lam[li] + self.res[li] / f64::from(self.n_rising[li]))
            } else {
                let (_, n_classes) = self.link_classes[li];
                (self.res[li] <= 1e-12 * caps[li] && self.top[li] < n_classes)
                    .then_some(self.lam[li])
            };
            self.fills.set(l, level);
        }
        dirty.clear();
        self.dirty = dirty;
    }
}

/// The links' fill levels in a tournament tree: the lowest (level, link)
/// at the root, one leaf per link updated in place. It replaced a binary
/// heap with lazy deletion, whose stale entries (one per change of a
/// link's level) were 40% of `mux=link`'s time on cut80; the order is the
/// heap's, level then link, so the filling is the same to the bit.
#[derive(Debug, Default)]
struct FillLevels {
    // Nodes of a complete binary tree over `n_leaves` leaves (node 1 the
    // root, leaf `l` at `n_leaves + l`): (level's bits, link), `EMPTY` for
    // a link that does not fill.
    nodes: Vec<(u64, u32)>,
    n_leaves: usize,
}

impl FillLevels {
    const EMPTY: (u64, u32) = (u64::MAX, u32::MAX);

    /// No link fills; room for `n_links`.
    fn reset(&mut self, n_links: usize) {
        self.n_leaves = n_links.next_power_of_two();
        self.nodes.clear();
        self.nodes.resize(2 * self.n_leaves, Self::EMPTY);
    }

    /// Link `l` fills at `level` (a level >= 0, so its bits order as it
    /// does), or not at all.
    fn set(&mut self, l: u32, level: Option<f64>) {
        let mut k = self.n_leaves + l as usize;
        self.nodes[k] = level.map_or(Self::EMPTY, |x| (x.to_bits(), l));
        while k > 1 {
            k /= 2;
            let m = self.nodes[2 * k].min(self.nodes[2 * k + 1]);
            if self.nodes[k] == m {
                break;
            }
            self.nodes[k] = m;
        }
    }

    /// The lowest fill level and its link.
    fn lowest(&self) -> Option<(f64, u32)> {
        let (bits, l) = self.nodes[1];
        (l != u32::MAX).then(|| (f64::from_bits(bits), l))
    }
}
