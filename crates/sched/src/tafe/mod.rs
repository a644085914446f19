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
//! # What an event costs (`flows=srpt`)
//!
//! An event must not walk every task's flows: on FB2010 an event changes a
//! few hundred of hundreds of thousands. So the orders are kept from one
//! event to the next (`TaskOrders`), and only the flows that had a rate,
//! started or finished move:
//! - A task's order is cut into chunks at key gaps ([`place`],
//!   [`split_point`]), each with the classes of its flows' first and last
//!   links, so that a turn passes the chunks that cannot get anything and
//!   leaves a chunk once that holds; long runs of exact ties are one chunk,
//!   and a walk finds a run's end by a binary search. A chunk's flows sit
//!   in a buffer with room at its front ([`Flows`]).
//! - A long chunk (over [`SEG_MIN`] flows) keeps stretches of one first
//!   link with the classes of their last links ([`Seg`]), so a walk passes
//!   a stretch whose first link, or whose every last link, is full with one
//!   look.
//! - A chunk keeps its *blocked tail*, the flows after its last serve, with
//!   a set of links each of them crosses; while those links are full the
//!   walk passes the tail at once, and where some opened again it passes
//!   the stretches that still cross a full one
//!   ([`TaskOrders::still_blocked`]). Elsewhere a walk finds the next flow
//!   with both ends open eight flows at a time ([`next_open_flow`]).
//! - A flow is served by taking its path's least residual
//!   (`ClassServer::serve_one`), not by a max-min solve.
//! - A re-keyed flow whose new key still falls between its neighbours'
//!   keeps its place ([`rekey_in_place`]); one that moves inside its chunk
//!   shifts only the flows in between ([`move_in_chunk`]). Every search for
//!   a kept flow starts where it was last served and gallops from there
//!   ([`find`]).
//! - On a big switch of equal links with paths of one or two links (FB2010)
//!   every serve takes both its links whole, so a fill is the greedy
//!   matching in the order's priority: it is kept from one event to the
//!   next ([`crate::greedy::matching`], as `srpt` keeps it) under keys
//!   (task's queue and FIFO ticket, bytes left; [`Ranked`]), and dropped
//!   where the order changes otherwise (a demotion, a task ahead of a
//!   ticketed one) or where its chain cannot be sure of a near-tie; the
//!   flows with a rate then take their classes by a search in their task's
//!   chunks ([`TaskOrders::place_classes`]).
//!
//! Debug builds check every fill so decided against each task's flows
//! sorted from scratch and served in turn (rates and classes, to the bit),
//! the matching's lists, and that each flow a walk passed crosses a full
//! link. What each step bought on FB2010 is in
//! docs/lab/benchmarks-history.md.
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

mod chunks;
pub mod host;
mod orders;

use chunks::*;
use orders::*;

use crate::class_server::ClassServer;
use crate::descriptor::{
    percentile_key, Kind, Needs, Param, Params, Parts, SchedulerDescriptor, Switch,
};
use crate::greedy::matching::{Matching, Ranked};
use crate::greedy::{add_class, gallop, gap, tie_reach, Classes, Ends, CLASSES, WORDS};
use crate::spec::{Hint, SchedulerError, WorkloadHints};
use crate::AnyScheduler;
use crate::{Allocation, Changes, Clairvoyant, CoflowIdx, FlowIdx, KnowsSizes, PathIdx, Scheduler};
use coflowkit_model::percentile;
use coflowkit_model::stats::BYTES_TIE;
use coflowkit_model::{ceil_ns_time, Time};
use std::cmp::Ordering;

/// `tafe`: task-aware and flow-aware scheduling.
pub const TAFE: SchedulerDescriptor = SchedulerDescriptor {
    cost: 9.8,
    parts: Parts {
        host: Some(crate::tafe::host::build),
        switch: Switch::TaskMarking,
        ..Parts::NONE
    },
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
    // (task, flow index) of each, as one integer (a sort of integers).
    sending_flows: Vec<u64>,
    round: u32,
    // `flows=srpt`: the fill kept as a greedy matching under keys (task's
    // queue and FIFO ticket, bytes left); see [`Tafe::chained`].
    matching: Matching<Ranked>,
    // Per coflow: its FIFO ticket (0: none yet). Tickets follow (release,
    // arrival, id) among the tasks that hold one; `last_fifo` is the
    // greatest ticketed, `next_ticket` the next ticket.
    ticket: Vec<u64>,
    next_ticket: u64,
    last_fifo: Option<(Time, Time, u64)>,
    // The flows the last fill gave a rate, and those this one gives.
    holders: Vec<FlowIdx>,
    positive: Vec<FlowIdx>,
}

/// Bits of a key's prefix below the queue: a task's FIFO ticket.
const TICKET_BITS: u32 = 40;

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
            matching: Matching::default(),
            ticket: vec![],
            next_ticket: 1,
            last_fifo: None,
            holders: vec![],
            positive: vec![],
        }
    }

    /// Demotes every active task whose bytes sent reached its queue's
    /// threshold (several queues at once if need be), and orders the tasks
    /// by (queue, release, arrival, id). Gives each new task its FIFO
    /// ticket. Returns whether a task's queue or ticket moved (a demotion,
    /// or a task that came in ahead of a ticketed one: all active tasks are
    /// then ticketed anew), which moves its flows' keys in the matching.
    fn update_queues(&mut self, view: &Clairvoyant<'_>) -> bool {
        self.order.clear();
        let mut moved = false;
        let mut fresh = false;
        for &c in view.active_coflows() {
            let ci = c as usize;
            if self.queue.len() <= ci {
                self.queue.resize(ci + 1, 0);
                self.ticket.resize(ci + 1, 0);
            }
            let sent = view.coflow_sent(c);
            let mut q = self.queue[ci] as usize;
            while q < self.config.thresholds.len() && reached(sent, self.config.thresholds[q]) {
                q += 1;
            }
            moved |= self.queue[ci] != q as u32;
            fresh |= self.ticket[ci] == 0;
            self.queue[ci] = q as u32;
            self.order.push((
                q as u32,
                (view.release(c), view.arrival(c), view.coflow_id(c).0),
                c,
            ));
        }
        self.order.sort_unstable_by_key(|&(q, k, _)| (q, k));
        if fresh {
            moved |= self.give_tickets();
        }
        moved
    }

    /// Tickets the active tasks that hold none, in FIFO order after every
    /// ticketed one; if one comes before the last ticketed, tickets every
    /// active task anew (the others lose theirs). Whether tickets moved.
    fn give_tickets(&mut self) -> bool {
        let mut new: Vec<((Time, Time, u64), CoflowIdx)> = self
            .order
            .iter()
            .filter(|x| self.ticket[x.2 as usize] == 0)
            .map(|x| (x.1, x.2))
            .collect();
        new.sort_unstable();
        let behind = self.last_fifo.is_none_or(|l| new[0].0 > l);
        if !behind {
            self.ticket.iter_mut().for_each(|t| *t = 0);
            new = self.order.iter().map(|x| (x.1, x.2)).collect();
            new.sort_unstable();
        }
        for &(fifo, c) in &new {
            self.ticket[c as usize] = self.next_ticket;
            self.next_ticket += 1;
            self.last_fifo = Some(fifo);
        }
        assert!(self.next_ticket < 1 << TICKET_BITS, "tickets run out");
        !behind
    }

    /// The key prefix of task `c`: its queue, then its FIFO ticket.
    fn prefix(queue: &[u32], ticket: &[u64], c: CoflowIdx) -> u64 {
        (u64::from(queue[c as usize]) << TICKET_BITS) | ticket[c as usize]
    }

    /// `flows=srpt`: decides the fill from the greedy matching kept since
    /// the last ([`Matching::fill`], keys (queue, ticket, bytes left)) and
    /// gives the flows with a rate their classes, if it can; false if the
    /// order is to be walked. A task's key prefix that moved (`moved`: a
    /// demotion, or tickets given anew) or a resync drops the matching,
    /// which the walk's fill then builds again.
    fn chained(
        &mut self,
        view: &Clairvoyant<'_>,
        changes: &Changes,
        moved: bool,
        out: &mut Allocation,
    ) -> bool {
        let obs = view.observed();
        let (queue, ticket) = (&self.queue, &self.ticket);
        let key_of = &self.by_remaining.key_of;
        let key = |f: FlowIdx| Ranked {
            prefix: Self::prefix(queue, ticket, obs.coflow_of(f)),
            bytes: kept_bytes(key_of, view, f),
        };
        if moved || changes.resynced {
            self.matching.reset();
        } else {
            for &f in &changes.finished {
                self.matching.finished(f);
            }
            for &f in &changes.started {
                if view.is_active(f) {
                    self.matching.started(key(f), f);
                }
            }
        }
        self.holders.clear();
        self.holders.extend_from_slice(self.server.positive_flows());
        self.positive.clear();
        #[cfg(debug_assertions)]
        let before = out.clone();
        let (holders, positive) = (&self.holders, &mut self.positive);
        if !self
            .matching
            .fill(view, false, key, holders, BYTES_TIE, out, positive)
        {
            return false;
        }
        let order = &self.order;
        self.by_remaining
            .place_classes(&obs, order, &self.positive, out);
        // In the order's order, as a walk serves them: the next update
        // re-keys them in this order, and finds more of them a place where
        // they stand (a neighbour served after a flow is re-keyed after it).
        // They come nearly so: the holders kept in the last fill's order
        // (their places seldom swap), then the few that took links; a
        // sort that merges runs (no two classes are equal, so stability
        // changes nothing) costs about one pass, a quicksort n log n.
        self.positive.sort_by_key(|&f| out.class(f));
        self.server.set_positive(&self.positive);
        #[cfg(debug_assertions)]
        {
            check_fill(view, &self.order, &before, out);
            let flows = keyed_flows(view.active_coflows(), &self.by_remaining.tasks, |c| {
                Self::prefix(queue, ticket, c)
            });
            self.matching.check(flows, &self.positive, BYTES_TIE);
        }
        true
    }

    /// `flows=srpt`, after a fill that walked the order: takes its
    /// matching ([`Matching::sync`]).
    fn sync(&mut self, view: &Clairvoyant<'_>, out: &Allocation) {
        let obs = view.observed();
        let (queue, ticket) = (&self.queue, &self.ticket);
        let key_of = &self.by_remaining.key_of;
        let key = |f: FlowIdx| Ranked {
            prefix: Self::prefix(queue, ticket, obs.coflow_of(f)),
            bytes: kept_bytes(key_of, view, f),
        };
        let prefix = |c: CoflowIdx| Self::prefix(queue, ticket, c);
        let flows = keyed_flows(view.active_coflows(), &self.by_remaining.tasks, prefix);
        let positive = self.server.positive_flows();
        self.matching.sync(
            view,
            false,
            key,
            flows,
            &self.holders,
            positive,
            BYTES_TIE,
            out,
        );
        #[cfg(debug_assertions)]
        {
            let flows = keyed_flows(view.active_coflows(), &self.by_remaining.tasks, prefix);
            self.matching.check(flows, positive, BYTES_TIE);
        }
    }

    /// The earliest instant a task in a non-last queue reaches its next
    /// threshold at the rates in `out` (`Time::NEVER` if none will). A
    /// task's rate is the sum of its flows' rates in flow-index order (the
    /// order of `active_flows_of`); the flows with a rate after this round
    /// are the server's positive flows, and leaving out the zeros changes
    /// no bit of a sum, so only those are summed, and a task without one
    /// crosses nothing. Where they all have one rate (to the bit: a fill
    /// the matching decided gives each its links whole) a task's sum is
    /// the same in any order, and they are not sorted.
    fn next_crossing(&mut self, now: Time, view: &Clairvoyant<'_>, out: &Allocation) -> Time {
        let obs = view.observed();
        self.round = self.round.wrapping_add(1);
        self.sending_flows.clear();
        let positive = self.server.positive_flows();
        let one = positive.first().map(|&f| out.rate(f).to_bits());
        let one_rate = positive.iter().all(|&f| Some(out.rate(f).to_bits()) == one);
        self.sending_flows.extend(
            positive
                .iter()
                .map(|&f| (u64::from(obs.coflow_of(f)) << 32) | u64::from(f)),
        );
        if !one_rate {
            self.sending_flows.sort_unstable();
        }
        for &cf in &self.sending_flows {
            let (c, f) = ((cf >> 32) as CoflowIdx, cf as FlowIdx);
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
        let moved = self.update_queues(&view);
        if self.config.flows == FlowOrder::Srpt {
            let positive = self.server.positive_flows();
            self.by_remaining.update(&view, changes, positive);
            if self.chained(&view, changes, moved, out) {
                return Some(self.next_crossing(now, &view, out));
            }
        }
        self.server.begin(&obs);
        if self.config.flows == FlowOrder::Srpt {
            self.by_remaining.begin(&obs, &self.server);
        }
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
        if self.config.flows == FlowOrder::Srpt {
            self.sync(&view, out);
        }
        // Always a timer, `Time::NEVER` for none: a driver keeps an earlier
        // timer until it is replaced, and a stale one would re-rank flows
        // at an instant that is no event of the model.
        Some(self.next_crossing(now, &view, out))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::Rng;
    use proptest::test_runner::{RngAlgorithm, TestRng};

    /// Random takings out and puttings in, near either end or anywhere,
    /// against a `Vec` taken out of and put into one flow at a time:
    /// [`Flows`] holds the same flows in the same order, and says where
    /// each flow put in went.
    #[test]
    fn flows_take_out_and_put_in_as_a_vec() {
        // proptest's deterministic generator: the same instances every run.
        let mut rng = TestRng::deterministic_rng(RngAlgorithm::ChaCha);
        let mut rnd = |m: usize| (rng.next_u64() % m as u64) as usize;
        let kept = |key: f64, f: FlowIdx| Kept {
            key,
            f,
            p: f,
            ends: [f, f + 1],
        };
        let mut flows = Flows::default();
        let mut want: Vec<Kept> = vec![];
        let mut next = 0;
        let mut at = vec![];
        for _ in 0..20_000 {
            let n = want.len();
            // Removals more likely the more flows: about 100-200 kept.
            if n > rnd(200) {
                // Up to 4 places, near the front, the back, or anywhere.
                let span = 1 + rnd(n.min(8));
                let from = match rnd(3) {
                    0 => 0,
                    1 => n - span,
                    _ => rnd(n - span + 1),
                };
                let mut places: Vec<usize> = (0..1 + rnd(4)).map(|_| from + rnd(span)).collect();
                places.sort_unstable();
                places.dedup();
                flows.remove(&places);
                for &p in places.iter().rev() {
                    want.remove(p);
                }
            } else {
                // Up to 4 new flows, keys (a few ties) anywhere among them.
                let mut items: Vec<Kept> = (0..1 + rnd(4))
                    .map(|_| {
                        next += 1;
                        kept(rnd(40) as f64, next)
                    })
                    .collect();
                items.sort_unstable_by(kept_by_key);
                if n == 0 {
                    flows = Flows::of(items.clone());
                    want = items;
                    continue;
                }
                flows.insert(&items, &mut at);
                for b in &items {
                    let p = want.partition_point(|e| before(e, b));
                    want.insert(p, *b);
                }
                for (b, &p) in items.iter().zip(&at) {
                    assert_eq!(want[p].f, b.f, "place of {}", b.f);
                }
            }
            assert_eq!(flows.len(), want.len());
            assert!(flows
                .iter()
                .zip(&want)
                .all(|(a, b)| a.f == b.f && a.key == b.key));
            assert_eq!(flows.buf.len(), flows.head + flows.len());
        }
        assert!(flows.head > 0, "the front was never used");
    }

    #[test]
    fn reached_is_within_a_millionth() {
        assert!(reached(1e6, 1e6));
        assert!(reached(1e6 - 0.5, 1e6));
        assert!(!reached(1e6 - 2.0, 1e6));
        assert!(reached(0.0, 0.0));
    }
}
