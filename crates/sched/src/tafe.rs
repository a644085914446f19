//! `tafe`: task-aware and flow-aware scheduling (Zhang, Xu, Wang and Shen,
//! "Towards Shorter Task Completion Time in Datacenter Networks", IEEE:
//! IV-A, IV-B, Algorithms 1 and 2; seed `003_c7c0a2e74d6d7471.txt`).
//!
//! # Task-awareness (IV-A, Algorithm 1)
//!
//! Every port has `tau` priority queues and a threshold vector
//! `U1 < U2 < ... < U(tau-1)` (bytes). A task (coflow) starts in the
//! highest queue, `Q1`; the instant the bytes it has sent reach `Uk` it is
//! demoted to `Q(k+1)`, and every flow of it with it (flows that start
//! later enter the task's current queue: "the following flows from this
//! task will enter Queue k+1 directly"). Sizes are never read for this:
//! only bytes sent, so a task is ranked without knowing its size. Between
//! queues the priority is strict; inside a queue tasks are served first in,
//! first out (Algorithm 1's `EnQueue` in arrival order; ties by release,
//! arrival, then id, as `fifo`).
//!
//! *Our readings.* "The accumulated bytes of one task" are all it has sent
//! across the fabric, compute stages included (a CPU stage is a flow over
//! its host's CPU in the model; counting it keeps thresholds and the
//! workload hints, which are coflow totals, in one unit). The demotion is
//! global and instant (every port sees the task in the same queue): the
//! paper tags the task id at the end host, which knows what its task sent.
//! Algorithm 1 could also be read as adding each flow's *length* when it
//! arrives; we follow the text's "according to the bytes they have sent"
//! and the wording instead, which needs no sizes.
//!
//! Demotion is exact: the scheduler asks to be woken at the instant the
//! first task in a non-last queue reaches its next threshold at its current
//! rate (rounded up to the nanosecond), as `fifo-lm` does for its heavy
//! threshold. A threshold counts as reached within 1e-6 relative (a byte
//! per megabyte), so float noise never leaves a task a hair short of it.
//!
//! # Flow-awareness (IV-B, Algorithm 2), at flow level
//!
//! TAFE's window rule: on congestion a flow backs off by
//! `p = alpha * Sc / Smax` (`Sc` its remaining bytes, `Smax` an upper bound
//! on flow sizes), `W <- W (1 - p)`, and grows by one segment otherwise.
//! Flows on one bottleneck see the same marks, so the same `alpha`; in the
//! AIMD fixed point each flow's decrease equals the common increase,
//! `W_i p_i = const`, so its share is proportional to `1 / p_i`, i.e. to
//! `Smax / (alpha Sc_i)`: inversely to its remaining size. The favoured
//! (shorter) flow drains fastest, so its weight only grows: the rule's
//! trajectory tends to serving the shortest remaining flow first. At flow
//! level we take that limit (`flows=srpt`, the default), which is also the
//! paper's own schedule of Fig. 2 ("make the cluster serve flows one by
//! one"): inside a task, flows are taken in order of remaining bytes
//! (amounts within `BYTES_TIE` tie, ties by flow index, i.e. start order),
//! each given the least residual capacity along its path, as `srpt` does
//! for all flows. `flows=fair` turns flow-awareness off (max-min among a
//! task's flows, as `fifo`): the task-awareness ablation. `flows=weighted`
//! is the fixed point itself, held between events: inside a task, weighted
//! max-min with each flow's weight `Smax / Sc` (so `1 / Sc`: `Smax` is
//! common and cancels), `Sc` its remaining bytes when the scheduler is
//! called; the weights are recomputed at every event and fixed between
//! events (where the rule would shift them continuously), so this variant
//! depends on how often events occur, as a once-per-RTT window update
//! depends on the RTT. Rates and the order are recomputed at every event
//! (arrival, start, completion, demotion); on a multi-hop fabric a flow served while a shorter one of its
//! task is blocked elsewhere may overtake it between events, and is
//! re-ranked at the next one, as in `srpt`.
//!
//! A packet-level model of the window rule itself is a later issue; this
//! flow-level version is its limit under sustained congestion and should be
//! compared with it on the same workloads.
//!
//! # What it knows
//!
//! `Knows = KnowsSizes`: the flow rule reads each started flow's remaining
//! bytes (the end host knows `Sc` of its own flows, as Algorithm 2
//! assumes). Task sizes are never read: the queue is from bytes sent.
//!
//! # Special cases
//!
//! `tau = 1` (`queues=1`) is per-task FIFO (with `flows=fair` it is `fifo`
//! exactly); thresholds beyond every task's size give the same.
//!
//! Correctness properties: a task's queue never rises (bytes sent only
//! grow; `Tafe::update_queues`); every active flow gets a rate every call
//! (served, or zeroed by `ClassServer::end`); the timer is the earliest
//! threshold crossing at the rates just given, and is always returned
//! (`Time::NEVER` for none) so that no stale timer calls the scheduler at an
//! instant that is no event (`Tafe::next_crossing`, `schedule`).

use crate::descriptor::{percentile_key, Hint, Kind, Needs, Param, Params, SchedulerDescriptor};
use crate::greedy::{by_key, cut_runs, merge_into, Entry};
use crate::ordered::ClassServer;
use crate::registry::{SchedulerError, WorkloadHints};
use crate::AnyScheduler;
use crate::{Allocation, Changes, Clairvoyant, CoflowIdx, FlowIdx, KnowsSizes, PathIdx, Scheduler};
use coflowkit_model::percentile;
use coflowkit_model::stats::BYTES_TIE;
use coflowkit_model::{ceil_ns_time, Time};

/// `tafe`: task-aware and flow-aware scheduling.
pub const TAFE: SchedulerDescriptor = SchedulerDescriptor {
    name: "tafe",
    description: "tasks demoted through tau strict queues by bytes sent, FIFO per queue, \
                  shortest remaining flow first in a task (TAFE)",
    paper: "Zhang, Xu, Wang, Shen (IEEE), IV-A, IV-B, Algorithms 1-2",
    params: &[
        Param {
            key: "queues",
            kind: Kind::Count,
            default: "3",
            unit: "",
            help: "tau, 1 to 64 (default: one more than the thresholds listed)",
        },
        Param {
            key: "thresholds",
            kind: Kind::List,
            default: "0.5max/0.75max",
            unit: "",
            help: "U1/U2/..: sizes, pQ, mean or Fmax of task sizes (a hint); or quantiles, even",
        },
        Param {
            key: "flows",
            kind: Kind::Choice(&["srpt", "fair", "weighted"]),
            default: "srpt",
            unit: "",
            help: "the flow rule inside a task",
        },
        crate::host::AGE_PARAM,
    ],
    needs: Needs {
        hints: &[Hint::CoflowSizes],
        ..Needs::SIZES
    },
    build: |p, hints| {
        Ok(AnyScheduler::Clairvoyant(Box::new(Tafe::new(
            TafeConfig::of_params(p, hints)?,
        ))))
    },
};

impl TafeConfig {
    /// TAFE's configuration from a spec's parameters: `queues` (tau, 1 to
    /// 64; default 3, or one more than the thresholds listed), `thresholds`
    /// (`/`-separated entries, each a size `100KB`, a percentile `p50` of
    /// the workload's task sizes, `mean`, or a fraction of the largest task
    /// `0.75max`; or `quantiles`, `Uk = p(100 k / tau)`; or `even`,
    /// `Uk = k / tau * max`), `flows` (`srpt`, `fair` or `weighted`). The default
    /// thresholds are the paper's (V-B): `0.5max/0.75max`.
    pub fn of_params(p: &Params<'_>, hints: &WorkloadHints) -> Result<TafeConfig, SchedulerError> {
        let flows = match p.choice("flows")? {
            "fair" => FlowOrder::Fair,
            "weighted" => FlowOrder::Weighted,
            _ => FlowOrder::Srpt,
        };
        let tau = p.count("queues", 1, 64, "queues")?.map(|k| k as usize);
        let bad = |message: String| p.bad("thresholds", message);
        let sizes = &hints.coflow_sizes;
        let need = |what: &str| {
            p.needs(
                "thresholds",
                Hint::CoflowSizes,
                format!("{what} needs the workload's task sizes"),
            )
        };
        let max = || {
            sizes
                .iter()
                .copied()
                .reduce(f64::max)
                .ok_or_else(|| need("a fraction of the largest task"))
        };
        let spec = match (p.given("thresholds"), tau) {
            (Some(t), _) => t,
            (None, Some(1)) => "",
            (None, Some(3) | None) => "0.5max/0.75max",
            (None, Some(_)) => "quantiles",
        };
        // Each threshold with whether it is a fixed size (not from the workload).
        let entries: Vec<(f64, bool)> = match spec {
            "" => vec![],
            "quantiles" | "even" => {
                let tau = tau.unwrap_or(3);
                (1..tau)
                    .map(|k| {
                        let q = 100.0 * k as f64 / tau as f64;
                        if spec == "even" {
                            max().map(|m| (m * k as f64 / tau as f64, false))
                        } else {
                            percentile(sizes, q)
                                .map(|u| (u, false))
                                .ok_or_else(|| need("a quantile"))
                        }
                    })
                    .collect::<Result<_, _>>()?
            }
            list => list
                .split('/')
                .map(|e| {
                    let e = e.trim();
                    if e == "mean" {
                        if sizes.is_empty() {
                            return Err(need("mean"));
                        }
                        Ok((sizes.iter().sum::<f64>() / sizes.len() as f64, false))
                    } else if let Some(f) = e.strip_suffix("max") {
                        let f: f64 = f
                            .parse()
                            .ok()
                            .filter(|f| *f > 0.0 && *f <= 1.0)
                            .ok_or_else(|| {
                                bad(format!("'{e}': the fraction of max must be in (0, 1]"))
                            })?;
                        Ok((f * max()?, false))
                    } else if let Some(q) = percentile_key(e) {
                        let q = q.map_err(bad)?;
                        percentile(sizes, q)
                            .map(|u| (u, false))
                            .ok_or_else(|| need("a percentile"))
                    } else {
                        coflowkit_model::parse::bytes(e)
                            .map(|b| (b.0 as f64, true))
                            .map_err(|m| bad(format!("'{e}': {m} (give a size, pQ, mean or Fmax)")))
                    }
                })
                .collect::<Result<_, _>>()?,
        };
        if let Some(tau) = tau {
            if entries.len() + 1 != tau {
                return Err(bad(format!(
                    "{} thresholds for {tau} queues (give queues - 1)",
                    entries.len()
                )));
            }
        }
        // Fixed sizes must not decrease. Thresholds from the workload are
        // raised to the one before where they would (`mean/0.75max` on a
        // workload whose mean is above 0.75 of its largest task): equal
        // thresholds leave the queues between them empty, a task reaching
        // one passes them all at once (as quantiles of repeated sizes do).
        let fixed: Vec<f64> = entries.iter().filter(|e| e.1).map(|e| e.0).collect();
        if let Some(w) = fixed.windows(2).find(|w| w[1] < w[0]) {
            return Err(bad(format!(
                "'{spec}' gives {} then {}: thresholds must not decrease",
                w[0], w[1]
            )));
        }
        let mut thresholds: Vec<f64> = Vec::with_capacity(entries.len());
        for &(u, _) in &entries {
            let floor = thresholds.last().copied().unwrap_or(0.0);
            thresholds.push(u.max(floor));
        }
        Ok(TafeConfig { thresholds, flows })
    }
}

/// How the flows of one task share what the earlier tasks left.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FlowOrder {
    /// Shortest remaining first (the window rule's limit; the default).
    Srpt,
    /// Max-min among the task's flows (flow-unaware).
    Fair,
    /// Weighted max-min among the task's flows, weight `1 / Sc` (the
    /// window rule's fixed-point shares), recomputed at every event.
    Weighted,
}

/// TAFE's parameters; see the module doc.
#[derive(Debug, Clone, PartialEq)]
pub struct TafeConfig {
    /// `U1 .. U(tau-1)`, bytes, not decreasing (empty: one queue; a task
    /// that reaches equal thresholds passes the queues between at once).
    pub thresholds: Vec<f64>,
    /// The flow rule inside a task.
    pub flows: FlowOrder,
}

impl TafeConfig {
    /// Number of queues, `tau`.
    pub fn n_queues(&self) -> usize {
        self.thresholds.len() + 1
    }
}

/// Whether `sent` bytes reach threshold `u` (within 1e-6 relative).
pub fn reached(sent: f64, u: f64) -> bool {
    sent >= u - 1e-6 * u.max(1.0)
}

/// TAFE; see the module doc.
#[derive(Debug)]
pub struct Tafe {
    config: TafeConfig,
    /// Per coflow, its queue (0 = `Q1`).
    queue: Vec<u32>,
    order: Vec<(u32, (Time, Time, u64), CoflowIdx)>,
    by_remaining: TaskOrders,
    server: ClassServer,
    // Per task: the last call in which one of its flows had a rate, and
    // the sum of its flows' rates then; that call's flows with a rate.
    sending: Vec<(u32, f64)>,
    sending_flows: Vec<(CoflowIdx, FlowIdx)>,
    round: u32,
}

/// `flows=srpt`: each task's active flows in order of remaining bytes (as
/// `sort_with_ties` orders them), kept from one call to the next. A flow
/// whose rate was 0 in the last two rounds sent nothing, so its remaining
/// bytes, and its place, stay what they were, to the bit (the argument of
/// [`crate::greedy`]); a task's order is merged anew only where a flow of
/// it started, finished or had a rate, and only those flows are re-read.
///
/// Correctness properties: after [`TaskOrders::update`] each active task's
/// order is `sort_with_ties` of its active flows by remaining bytes read
/// now (debug builds check every cached key against a fresh read; the
/// reference suite holds `tafe` against a slow reference that sorts at
/// every call, and a unit test holds the merge against a full sort).
#[derive(Debug, Default)]
struct TaskOrders {
    // Per task: its flows by (remaining, index), and that cut into runs.
    sorted: Vec<Vec<Entry>>,
    order: Vec<Vec<(FlowIdx, PathIdx)>>,
    // Per task: whether its order is merged anew in this call.
    dirty: Vec<bool>,
    dirty_tasks: Vec<CoflowIdx>,
    // Per flow: leaves its task's `sorted` in this call.
    leaves: Vec<bool>,
    // Flows re-read in this call, by (task, remaining, index).
    batch: Vec<(CoflowIdx, Entry)>,
    merged: Vec<Entry>,
    entries: Vec<Entry>,
    // Flows with a rate in the round before the last.
    positive_before: Vec<FlowIdx>,
    // Per task: when its last turn served no flow and no flow of it has
    // started since, a full link on each of its flows' paths (deduplicated
    // through `link_seen`); while all of them are full it is served nothing.
    witness: Vec<Option<Vec<u32>>>,
    link_seen: Vec<u32>,
    turn: u32,
    ready: bool,
}

impl TaskOrders {
    /// Brings every active task's order up to date; `positive` are the
    /// flows with a rate after the last round.
    fn update(&mut self, view: &Clairvoyant<'_>, changes: &Changes, positive: &[FlowIdx]) {
        let obs = view.observed();
        if self.leaves.len() < view.n_flows() {
            self.leaves.resize(view.n_flows(), false);
        }
        self.batch.clear();
        self.dirty_tasks.clear();
        let fresh = !self.ready || changes.resynced;
        self.ready = true;
        if fresh {
            self.sorted.iter_mut().for_each(Vec::clear);
            self.order.iter_mut().for_each(Vec::clear);
            self.witness.iter_mut().for_each(|w| *w = None);
        } else {
            for &f in &changes.finished {
                self.leaves[f as usize] = true;
                self.mark(obs.coflow_of(f));
            }
        }
        let all: &[FlowIdx] = if fresh { view.active_flows() } else { &[] };
        let before = std::mem::take(&mut self.positive_before);
        for &f in positive
            .iter()
            .chain(&before)
            .chain(&changes.started)
            .chain(all)
        {
            let fi = f as usize;
            if self.leaves[fi] || !view.is_active(f) {
                continue;
            }
            self.leaves[fi] = true;
            let c = obs.coflow_of(f);
            self.mark(c);
            self.witness[c as usize] = None;
            self.batch
                .push((c, (view.remaining(f), f, view.path_idx(f))));
        }
        self.batch
            .sort_unstable_by(|a, b| a.0.cmp(&b.0).then(by_key(&a.1, &b.1)));
        self.dirty_tasks.sort_unstable();
        let mut next = 0;
        for &c in &self.dirty_tasks {
            let ci = c as usize;
            self.dirty[ci] = false;
            let start = next;
            while next < self.batch.len() && self.batch[next].0 == c {
                next += 1;
            }
            self.entries.clear();
            self.entries
                .extend(self.batch[start..next].iter().map(|x| x.1));
            let leaves = &self.leaves;
            merge_into(
                &self.sorted[ci],
                &self.entries,
                |f| leaves[f as usize],
                &mut self.merged,
            );
            std::mem::swap(&mut self.sorted[ci], &mut self.merged);
            cut_runs(&self.sorted[ci], BYTES_TIE, &mut self.order[ci]);
        }
        for &f in &changes.finished {
            self.leaves[f as usize] = false;
        }
        for &(_, (_, f, _)) in &self.batch {
            self.leaves[f as usize] = false;
        }
        self.positive_before = before;
        self.positive_before.clear();
        self.positive_before.extend_from_slice(positive);
        #[cfg(debug_assertions)]
        for &c in view.active_coflows() {
            let n = view.active_flows_of(c).count();
            let sorted = self.sorted.get(c as usize).map_or(&[][..], Vec::as_slice);
            debug_assert_eq!(sorted.len(), n, "flows of task {c}");
            for &(k, f, _) in sorted {
                debug_assert_eq!(view.remaining(f).to_bits(), k.to_bits(), "key of {f}");
            }
        }
    }

    fn mark(&mut self, c: CoflowIdx) {
        let ci = c as usize;
        if self.dirty.len() <= ci {
            self.dirty.resize(ci + 1, false);
            self.sorted.resize_with(ci + 1, Vec::new);
            self.order.resize_with(ci + 1, Vec::new);
            self.witness.resize_with(ci + 1, || None);
        }
        if !self.dirty[ci] {
            self.dirty[ci] = true;
            self.dirty_tasks.push(c);
        }
    }

    /// Task `c`'s turn from class `class` on: each flow in order that meets
    /// no full link is served alone, and every flow takes a class. Returns
    /// the next class. A task is passed over whole when its paths' first or
    /// last links are all full, or when the full links that blocked every
    /// flow at its last turn (which served none) are all still full: a
    /// full link stays full for the rest of a round, so its flows would be
    /// passed over one by one.
    fn serve(
        &mut self,
        obs: &crate::Observed<'_>,
        server: &mut ClassServer,
        c: CoflowIdx,
        class: u32,
        out: &mut Allocation,
    ) -> u32 {
        let ci = c as usize;
        let Some(order) = self.order.get(ci) else {
            return class;
        };
        let next = class + order.len() as u32;
        if server.blocked(obs, c) {
            return next;
        }
        if let Some(w) = &self.witness[ci] {
            if w.iter().all(|&l| server.is_full(l)) {
                return next;
            }
        }
        self.turn = self.turn.wrapping_add(1);
        if self.link_seen.len() < obs.n_links() {
            self.link_seen.resize(obs.n_links(), 0);
        }
        let mut witness = self.witness[ci].take().unwrap_or_default();
        witness.clear();
        let mut served = false;
        for (i, &(f, p)) in order.iter().enumerate() {
            let full = obs.path_links(p).iter().find(|l| server.is_full(l.0));
            match full {
                None => {
                    server.serve_flows(obs, [f], class + i as u32, out);
                    served = true;
                }
                Some(l) if !served && self.link_seen[l.0 as usize] != self.turn => {
                    self.link_seen[l.0 as usize] = self.turn;
                    witness.push(l.0);
                }
                Some(_) => {}
            }
        }
        self.witness[ci] = (!served).then_some(witness);
        next
    }
}

impl Tafe {
    /// A TAFE scheduler with `config`.
    pub fn new(config: TafeConfig) -> Tafe {
        Tafe {
            config,
            queue: vec![],
            order: vec![],
            by_remaining: TaskOrders::default(),
            server: ClassServer::default(),
            sending: vec![],
            sending_flows: vec![],
            round: 0,
        }
    }

    /// Demotes every active task whose bytes sent reached its queue's
    /// threshold (several queues at once if need be), and orders the tasks
    /// by (queue, release, arrival, id).
    fn update_queues(&mut self, view: &Clairvoyant<'_>) {
        self.order.clear();
        for &c in view.active_coflows() {
            let ci = c as usize;
            if self.queue.len() <= ci {
                self.queue.resize(ci + 1, 0);
            }
            let sent = view.coflow_sent(c);
            let mut q = self.queue[ci] as usize;
            while q < self.config.thresholds.len() && reached(sent, self.config.thresholds[q]) {
                q += 1;
            }
            self.queue[ci] = q as u32;
            self.order.push((
                q as u32,
                (view.release(c), view.arrival(c), view.coflow_id(c).0),
                c,
            ));
        }
        self.order.sort_unstable_by_key(|&(q, k, _)| (q, k));
    }

    /// The earliest instant a task in a non-last queue reaches its next
    /// threshold at the rates in `out` (`Time::NEVER` if none will). A
    /// task's rate is the sum of its flows' rates in flow-index order (the
    /// order of `active_flows_of`); the flows with a rate after this round
    /// are the server's positive flows, and leaving out the zeros changes
    /// no bit of a sum, so only those are summed, and a task without one
    /// crosses nothing.
    fn next_crossing(&mut self, now: Time, view: &Clairvoyant<'_>, out: &Allocation) -> Time {
        let obs = view.observed();
        self.round = self.round.wrapping_add(1);
        self.sending_flows.clear();
        self.sending_flows.extend(
            self.server
                .positive_flows()
                .iter()
                .map(|&f| (obs.coflow_of(f), f)),
        );
        self.sending_flows.sort_unstable();
        for &(c, f) in &self.sending_flows {
            let ci = c as usize;
            if self.sending.len() <= ci {
                self.sending.resize(ci + 1, (0, 0.0));
            }
            let s = &mut self.sending[ci];
            if s.0 != self.round {
                *s = (self.round, -0.0);
            }
            s.1 += out.rate(f);
        }
        let mut wake = Time::NEVER;
        for &(q, _, c) in &self.order {
            let Some(&u) = self.config.thresholds.get(q as usize) else {
                continue;
            };
            let rate = match self.sending.get(c as usize) {
                Some(&(round, rate)) if round == self.round => rate,
                _ => continue,
            };
            #[cfg(debug_assertions)]
            {
                let full: f64 = view.active_flows_of(c).map(|f| out.rate(f)).sum();
                debug_assert_eq!(full.to_bits(), rate.to_bits(), "rate of task {c}");
            }
            if let Some(t) = ceil_ns_time(now, u - view.coflow_sent(c), rate / 8e9) {
                wake = wake.min(t);
            }
        }
        wake
    }
}

impl Scheduler for Tafe {
    type Knows = KnowsSizes;
    fn name(&self) -> &str {
        "tafe"
    }
    fn schedule(
        &mut self,
        now: Time,
        view: Clairvoyant<'_>,
        changes: &Changes,
        out: &mut Allocation,
    ) -> Option<Time> {
        let obs = view.observed();
        self.server.note(changes, &obs);
        self.update_queues(&view);
        if self.config.flows == FlowOrder::Srpt {
            let positive = self.server.positive_flows();
            self.by_remaining.update(&view, changes, positive);
        }
        self.server.begin(&obs);
        let mut class = 0u32;
        for i in 0..self.order.len() {
            let c = self.order[i].2;
            match self.config.flows {
                FlowOrder::Fair => {
                    self.server.serve(&obs, &[c], class, out);
                    class += 1;
                }
                FlowOrder::Weighted => {
                    let flows = view
                        .active_flows_of(c)
                        .map(|f| (f, 1.0 / view.remaining(f)));
                    self.server.serve_weighted(&obs, flows, class, out);
                    class += 1;
                }
                FlowOrder::Srpt => {
                    class = self
                        .by_remaining
                        .serve(&obs, &mut self.server, c, class, out);
                }
            }
        }
        self.server.end(&obs, out);
        // Always a timer, `Time::NEVER` for none: a driver keeps an earlier
        // timer until it is replaced, and a stale one would re-rank flows
        // at an instant that is no event of the model.
        Some(self.next_crossing(now, &view, out))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reached_is_within_a_millionth() {
        assert!(reached(1e6, 1e6));
        assert!(reached(1e6 - 0.5, 1e6));
        assert!(!reached(1e6 - 2.0, 1e6));
        assert!(reached(0.0, 0.0));
    }
}
