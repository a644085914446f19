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

pub mod host;

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
    cost: 40.0,
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

/// `flows=srpt`: each task's active flows in order of remaining bytes (as
/// `sort_with_ties` orders them), kept from one call to the next and cut
/// into chunks, so that an event costs what it moves and what the turns
/// can serve, not the size of the tasks.
///
/// *What moves.* A flow whose rate was 0 in the last two rounds sent
/// nothing, so its remaining bytes, and its place, stay what they were, to
/// the bit (the argument of [`crate::greedy`]). Only the flows that had a
/// rate, started or finished are taken out and put back, each by a binary
/// search over the task's chunks and one within a chunk; one whose new key
/// keeps it between its neighbours is given it in place instead
/// ([`rekey_in_place`]), found first where it was last served or put in,
/// and one whose new place is inside its chunk moves there
/// ([`move_in_chunk`]).
///
/// *Chunks.* A task's order is a list of chunks of about [`CHUNK`] flows,
/// cut only where the keys are further apart than a near-tie run reaches
/// ([`gap`]), so that no run crosses a chunk's end and each chunk is
/// walked alone; a run of exact ties longer than that is one chunk. Each
/// chunk keeps the classes of the first and of the last links of its
/// flows' paths ([`Ends`], by link class as [`crate::greedy`] keeps its
/// clusters'), a superset of them between re-counts (a flow that leaves
/// leaves its links in), which only makes a chunk passed over less often.
/// A chunk of more than [`SEG_MIN`] flows is also cut into stretches from
/// one first link ([`Seg`]), kept through the flows that leave and come in
/// (built when such a chunk is first walked without them).
///
/// *Turns.* In a task's turn each flow in order that meets no full link is
/// served alone ([`ClassServer::serve_one`]: the least residual on its path)
/// with the class of its place in the task's order; a chunk whose first
/// links or whose last links are all full would give each of its flows 0,
/// so the turn passes it over whole. A full link stays full for the rest
/// of a round, so a flow passed over would never get a rate in it.
///
/// Correctness properties: after [`TaskOrders::update`] each active task's
/// chunks, read end to end, are its active flows in (remaining, index)
/// order with every key read now, chunk ends are gaps and each chunk's
/// [`Ends`] hold its flows', whether a flow was re-keyed in place or moved
/// (debug builds check all of it against a fresh sort; the reference suite
/// holds `tafe` against a slow reference that sorts and walks every flow at
/// every call); a chunk is passed over only
/// if each of its flows crosses a full link (checked flow by flow in debug
/// builds); a chunk's stretches, if it has them, cover its flows in order,
/// each flow starting at its stretch's first link and its last link's
/// class in its stretch's (checked in debug builds), and a stretch is
/// passed over only if each of its flows crosses a full link (the same);
/// a chunk's blocked tail, when kept, holds flows that each cross a link of
/// its `tail_full` (checked in debug builds at each walk, with each flow of
/// the tail passed over crossing a full link), so a stretch of it passed
/// because it misses the links of `tail_full` open now crosses a full link
/// (checked flow by flow in debug builds, as any stretch passed), and so
/// does each flow of it a walk passes by its ends (the same); a flow
/// that leaves is taken from where it was last served only if it stands
/// there (debug builds compare the place with a search).
#[derive(Debug, Default)]
struct TaskOrders {
    // Per task: its order.
    tasks: Vec<Order>,
    // Per flow: the key it is kept under, NaN if it is not kept.
    key_of: Vec<f64>,
    // Per flow: handled in this update.
    seen: Vec<bool>,
    // Flows that leave their task's order, and flows (re-)keyed, in this
    // update, each with its task.
    gone: Vec<(CoflowIdx, Kept)>,
    batch: Vec<(CoflowIdx, Kept)>,
    // Flows with a rate in the round before the last.
    positive_before: Vec<FlowIdx>,
    // This round: per link, the round it was counted full in; per link
    // class, its links not full; the classes whose links are all full.
    full_in: Vec<u32>,
    // Per link, 1 if it is full this round, and a 0 past the last (for
    // `u32::MAX`, no link): read with no branch ([`next_open_flow`]).
    full_link: Vec<u8>,
    open: Vec<u32>,
    full: Classes,
    round: u32,
    // Whether each link has a class of its own (blocked tails are kept).
    memo: bool,
    // Whether a flow with a path of more than two links was kept (a tail
    // whose links opened is then not sorted by its flows' ends).
    long_paths: bool,
    run: Vec<Kept>,
    ready: bool,
    scratch: Scratch,
    // Flows given their new key where they stood, or moved inside their
    // chunk, in this update.
    in_place: Vec<FlowIdx>,
    // Per flow: its chunk and place in it when it was last served, or put
    // in by an update (where its next update, and the next fill's
    // classes, look for it first, and gallop from: few flows move it).
    served_at: Vec<[u32; 2]>,
    // For [`TaskOrders::place_classes`], per task: its first class (the
    // place of its first flow in the whole order), the call its chunks'
    // starts were last counted in, and its first chunk's in `starts`; per
    // chunk of those tasks: the place of its first flow in its task.
    first_class: Vec<u32>,
    counted: Vec<u32>,
    call: u32,
    base: Vec<u32>,
    starts: Vec<u32>,
}

/// Space [`apply`] reuses from one call to the next: positions of the
/// flows that leave or come into a chunk, and its stretches before.
#[derive(Debug, Default)]
struct Scratch {
    at: Vec<usize>,
    segs: Vec<Seg>,
}

/// Flows per chunk of a task's order, about (a chunk is split when it
/// holds more than twice this, where its keys leave a gap).
const CHUNK: usize = 64;

/// A flow in a task's order: its key (remaining bytes), index and path,
/// with its path's first and last links (`u32::MAX` for an empty path).
#[derive(Debug, Clone, Copy)]
struct Kept {
    key: f64,
    f: FlowIdx,
    p: PathIdx,
    ends: [u32; 2],
}

/// [`crate::greedy::by_key`] on kept flows: key, then flow index.
fn kept_by_key(a: &Kept, b: &Kept) -> Ordering {
    a.key.total_cmp(&b.key).then(a.f.cmp(&b.f))
}

/// A chunk's flows in key order: `buf[head..]`. Flows that leave nearer
/// its front than its back move the flows before them one way (`head`
/// grows) instead of all those after them the other, and flows put in
/// nearer its front move those before them into the room `head` leaves:
/// FB2010's tasks have runs of thousands of exact ties, one chunk each,
/// whose front flows are served and leave, one or two an event, and each
/// moved the whole run. Read as a slice (`Deref`); the room at the front
/// changes no flow's place in it.
#[derive(Debug, Default)]
struct Flows {
    buf: Vec<Kept>,
    head: usize,
}

impl std::ops::Deref for Flows {
    type Target = [Kept];
    #[inline(always)]
    fn deref(&self) -> &[Kept] {
        &self.buf[self.head..]
    }
}

impl std::ops::DerefMut for Flows {
    #[inline(always)]
    fn deref_mut(&mut self) -> &mut [Kept] {
        &mut self.buf[self.head..]
    }
}

impl<'a> IntoIterator for &'a Flows {
    type Item = &'a Kept;
    type IntoIter = std::slice::Iter<'a, Kept>;
    fn into_iter(self) -> Self::IntoIter {
        self.iter()
    }
}

impl Flows {
    /// `flows` (in key order), with no room at the front.
    fn of(flows: Vec<Kept>) -> Flows {
        Flows {
            buf: flows,
            head: 0,
        }
    }

    /// Appends `flows` (all after the last).
    fn extend_from_slice(&mut self, flows: &[Kept]) {
        self.buf.extend_from_slice(flows);
    }

    /// Splits off the flows from place `at` on.
    fn split_off(&mut self, at: usize) -> Vec<Kept> {
        self.buf.split_off(self.head + at)
    }

    /// Takes out the flows at places `at` (ascending, not empty), moving
    /// the flows before the last of them toward the back if they are
    /// fewer than those after the first, else those after toward the
    /// front. Each flow left keeps its place among the others.
    fn remove(&mut self, at: &[usize]) {
        let (n, h, m) = (self.len(), self.head, at.len());
        let (first, last) = (at[0], at[m - 1]);
        debug_assert!(at.windows(2).all(|w| w[0] < w[1]) && last < n);
        if last < n - 1 - first {
            // From the last taken back to the front: the flows between the
            // (k-1)-th and the k-th move m - k places toward the back.
            let mut w = h + last + 1;
            for k in (0..m).rev() {
                let lo = if k > 0 { at[k - 1] + 1 } else { 0 };
                let len = at[k] - lo;
                self.buf.copy_within(h + lo..h + at[k], w - len);
                w -= len;
            }
            debug_assert_eq!(w, h + m);
            self.head = w;
        } else {
            let mut w = h + first;
            for k in 0..m {
                let hi = if k + 1 < m { at[k + 1] } else { n };
                self.buf.copy_within(h + at[k] + 1..h + hi, w);
                w += hi - at[k] - 1;
            }
            self.buf.truncate(w);
        }
    }

    /// Puts `items` (in key order, none in the chunk) in at their places,
    /// and leaves in `at` the place each went to (ascending). The flows
    /// before the last one's place move into the room at the front if
    /// there is room and they are fewer than those after the first's,
    /// else those after move toward the back.
    fn insert(&mut self, items: &[Kept], at: &mut Vec<usize>) {
        let (n, h, m) = (self.len(), self.head, items.len());
        // Each item's place among the flows now (ascending, as the items).
        at.clear();
        let mut p = 0;
        for b in items {
            p += self[p..].partition_point(|e| before(e, b));
            at.push(p);
        }
        let (first, last) = (at[0], at[m - 1]);
        if h >= m && last < n - first {
            let nh = h - m;
            let mut prev = 0;
            for (j, b) in items.iter().enumerate() {
                let p = at[j];
                self.buf.copy_within(h + prev..h + p, nh + prev + j);
                self.buf[nh + p + j] = *b;
                at[j] = p + j;
                prev = p;
            }
            self.head = nh;
        } else {
            let mut end = n;
            self.buf.resize(h + n + m, items[0]);
            for (j, b) in items.iter().enumerate().rev() {
                let p = at[j];
                self.buf.copy_within(h + p..h + end, h + p + j + 1);
                self.buf[h + p + j] = *b;
                at[j] = p + j;
                end = p;
            }
        }
    }
}

/// A stretch of a task's order, with the link classes of its flows' ends.
#[derive(Debug, Default)]
struct Chunk {
    flows: Flows,
    ends: Ends,
    // Its flows cut into stretches from one first link ([`Seg`]).
    segs: Vec<Seg>,
    // Flows that left since `ends` was counted.
    left: usize,
    // Flows came in since the last look for a place to split it.
    grew: bool,
    // Its stretches were too short to be worth keeping (till a re-count).
    segs_off: bool,
    // Its last `tail` flows each cross a link of `tail_full` (one class per
    // link): a walk that finds those links all full passes them at once.
    tail: usize,
    tail_full: Classes,
}

impl Chunk {
    /// A chunk of `flows`, its [`Ends`] counted.
    fn of(flows: Vec<Kept>) -> Chunk {
        let mut chunk = Chunk {
            flows: Flows::of(flows),
            ends: Ends::default(),
            segs: vec![],
            left: 0,
            grew: true,
            segs_off: false,
            tail: 0,
            tail_full: [0; WORDS],
        };
        chunk.recount();
        chunk
    }

    /// Counts [`Ends`] anew from the flows in the chunk.
    fn recount(&mut self) {
        self.ends = Ends::default();
        for e in &self.flows {
            add_class(&mut self.ends.first, e.ends[0]);
            add_class(&mut self.ends.last, e.ends[1]);
        }
        self.left = 0;
        self.segs.clear();
        self.segs_off = false;
        self.cut();
    }

    /// Cuts a long chunk without stretches into them, unless they come
    /// out shorter than [`SEG_FLOWS`] flows on average (a chunk of many
    /// senders: passing a stretch would save little and keeping them cost).
    fn cut(&mut self) {
        if self.segs.is_empty() && !self.segs_off && self.flows.len() > SEG_MIN {
            for e in &self.flows {
                push_seg(&mut self.segs, Seg::of(e));
            }
            if self.segs.len() * SEG_FLOWS > self.flows.len() {
                self.segs.clear();
                self.segs_off = true;
            }
        }
    }
}

/// Chunks longer than this are walked by stretches ([`Seg`]), shorter
/// ones flow by flow (keeping the stretches of a short chunk costs more
/// than they save). Debug builds cut chunks of a few flows already, so
/// that the reference suite's small cases walk stretches, checked.
const SEG_MIN: usize = if cfg!(debug_assertions) { 2 } else { 2 * CHUNK };

/// The fewest flows a chunk's stretches must hold on average to be kept
/// (1 in debug builds: the reference suite then walks stretches always).
const SEG_FLOWS: usize = if cfg!(debug_assertions) { 1 } else { 4 };

/// A stretch of a chunk's flows, consecutive in its order, whose paths
/// all start at link `first`, with the classes of their last links (a
/// superset of them: a flow that leaves leaves its class in). A walk
/// passes over a stretch whose first link is full, or whose last links
/// all are, with one look, not one per flow (FB2010's runs of ties list a
/// sender's flows together, most of them blocked at one end).
#[derive(Debug, Clone, Copy)]
struct Seg {
    n: u32,
    first: u32,
    last: Classes,
}

impl Seg {
    /// The stretch of flow `e` alone.
    fn of(e: &Kept) -> Seg {
        let mut last = [0; WORDS];
        add_class(&mut last, e.ends[1]);
        Seg {
            n: 1,
            first: e.ends[0],
            last,
        }
    }
}

/// Appends stretch `s` to `segs`, joined with the last one if that starts
/// at the same link (so no two neighbours share a first link).
fn push_seg(segs: &mut Vec<Seg>, s: Seg) {
    if let Some(p) = segs.last_mut() {
        if p.first == s.first {
            p.n += s.n;
            for w in 0..WORDS {
                p.last[w] |= s.last[w];
            }
            return;
        }
    }
    segs.push(s);
}

/// Takes the flows at positions `removed` (ascending, before the removal)
/// out of the stretches `segs`, in place. The stretches before the first
/// flow taken out, and after the last if none emptied, are not written
/// (no two neighbours share a first link, so none of them joins another).
fn remove_from_segs(segs: &mut Vec<Seg>, removed: &[usize]) {
    let Some(&first) = removed.first() else {
        return;
    };
    let (mut start, mut k0) = (0, 0);
    while k0 < segs.len() && start + segs[k0].n as usize <= first {
        start += segs[k0].n as usize;
        k0 += 1;
    }
    let (mut r, mut w) = (0, k0);
    for k in k0..segs.len() {
        if r == removed.len() && w == k {
            return;
        }
        let mut s = segs[k];
        let end = start + s.n as usize;
        let r0 = r;
        while r < removed.len() && removed[r] < end {
            r += 1;
        }
        start = end;
        s.n -= (r - r0) as u32;
        if s.n == 0 {
            continue;
        }
        if w > 0 && segs[w - 1].first == s.first {
            segs[w - 1].n += s.n;
            for x in 0..WORDS {
                segs[w - 1].last[x] |= s.last[x];
            }
        } else {
            segs[w] = s;
            w += 1;
        }
    }
    segs.truncate(w);
}

/// The stretches of `flows` once the flows at positions `put` (ascending,
/// in `flows`, which holds them) came into a chunk cut into `segs`.
/// `old` is scratch space (it ends holding the stretches before).
fn insert_into_segs(segs: &mut Vec<Seg>, old: &mut Vec<Seg>, flows: &[Kept], put: &[usize]) {
    std::mem::swap(segs, old);
    segs.clear();
    let mut old = old.iter().copied();
    let mut cur: Option<Seg> = None;
    let mut pos = 0;
    let mut take_old = |segs: &mut Vec<Seg>, upto: usize, pos: &mut usize| {
        while *pos < upto {
            let s = cur.get_or_insert_with(|| old.next().expect("stretches cover the chunk"));
            let n = (s.n as usize).min(upto - *pos);
            push_seg(segs, Seg { n: n as u32, ..*s });
            s.n -= n as u32;
            *pos += n;
            if s.n == 0 {
                cur = None;
            }
        }
    };
    for &q in put {
        take_old(segs, q, &mut pos);
        push_seg(segs, Seg::of(&flows[q]));
        pos += 1;
    }
    take_old(segs, flows.len(), &mut pos);
}

/// A task's order: its chunks, and the key and index of each one's last
/// flow (apart, so that finding a chunk reads one short array), and how
/// many flows it holds.
#[derive(Debug, Default)]
struct Order {
    chunks: Vec<Chunk>,
    lasts: Vec<(f64, FlowIdx)>,
    n_flows: usize,
}

/// The key and index of chunk `ch`'s last flow (it has one).
fn last_of(ch: &Chunk) -> (f64, FlowIdx) {
    let e = ch.flows.last().expect("no empty chunk");
    (e.key, e.f)
}

/// The chunk (by the `lasts` of chunks, none empty) that holds `probe`'s
/// place: the first whose last flow is not before it, or the last.
fn locate(lasts: &[(f64, FlowIdx)], probe: &Kept) -> usize {
    let at = lasts
        .partition_point(|&(k, f)| k.total_cmp(&probe.key).then(f.cmp(&probe.f)) == Ordering::Less);
    at.min(lasts.len().saturating_sub(1))
}

/// Where to split `flows` (sorted): the gap nearest the middle, if any.
fn split_point(flows: &[Kept], tol: f64) -> Option<usize> {
    // Keys within a run's reach of the first leave no gap anywhere (keys
    // are not negative, so the reach only grows along the order): a long
    // run of ties is not searched flow by flow at each event it grew.
    let (first, last) = (flows.first()?.key, flows.last()?.key);
    if first >= 0.0 && last - first <= tie_reach(first, tol) {
        debug_assert!((1..flows.len()).all(|j| !gap(flows[j - 1].key, flows[j].key, tol)));
        return None;
    }
    let mid = flows.len() / 2;
    let is_gap = |j: usize| gap(flows[j - 1].key, flows[j].key, tol);
    (0..mid).find_map(|d| {
        let up = mid + d;
        let down = mid - d;
        if up < flows.len() && is_gap(up) {
            Some(up)
        } else if down >= 1 && is_gap(down) {
            Some(down)
        } else {
            None
        }
    })
}

/// Where a flow put in a task's order goes: into chunk `i`, or into a new
/// chunk at `i`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Place {
    Into(usize),
    New(usize),
}

/// Where flow `b` goes in `chunks` (not empty). A flow in the gap between
/// two chunks (keys further apart on both sides than a run reaches) goes
/// to the end of the chunk before it, or the front of the one after, if
/// that one is short, else into a chunk of its own: a served flow leaves
/// a long run of exact ties for such a gap, and put at the run's front it
/// would move the whole run, and have it looked at and split again, at
/// each event. Elsewhere it goes to the chunk that holds its place
/// ([`locate`]). Where it goes changes no flow's place in the order.
fn place(chunks: &[Chunk], lasts: &[(f64, FlowIdx)], b: &Kept, tol: f64) -> Place {
    let i = locate(lasts, b);
    let short = |j: usize| chunks[j].flows.len() <= 2 * CHUNK;
    let first = &chunks[i].flows[0];
    if before(b, first) {
        if !gap(b.key, first.key, tol) {
            return Place::Into(i);
        }
        // After chunk `i - 1`'s last flow (`locate`).
        if i > 0 && (!gap(lasts[i - 1].0, b.key, tol) || short(i - 1)) {
            return Place::Into(i - 1);
        }
        return if short(i) {
            Place::Into(i)
        } else {
            Place::New(i)
        };
    }
    let (last_key, _) = lasts[i];
    if i + 1 == chunks.len() && b.key > last_key && gap(last_key, b.key, tol) && !short(i) {
        return Place::New(i + 1);
    }
    Place::Into(i)
}

/// The place (chunk, and place in it) in a task's `chunks` (not empty) of
/// `probe` (the key and index of a flow kept there): at `hint` if the flow
/// stands there, else by galloping from `hint`'s place if `hint`'s chunk
/// holds it (the flows that left or came in before it since the note
/// moved it a few places), else by a binary search.
fn find(
    chunks: &[Chunk],
    lasts: &[(f64, FlowIdx)],
    probe: &Kept,
    hint: [u32; 2],
) -> (usize, usize) {
    let [hc, hk] = hint.map(|x| x as usize);
    if let Some(ch) = chunks.get(hc) {
        let flows = &ch.flows;
        if flows.get(hk).is_some_and(|x| x.f == probe.f) {
            return (hc, hk);
        }
        if !before(probe, &flows[0]) && !before(&flows[flows.len() - 1], probe) {
            return (hc, gallop_from(flows, hk.min(flows.len() - 1), probe));
        }
    }
    let i = locate(lasts, probe);
    (i, chunks[i].flows.partition_point(|x| before(x, probe)))
}

/// `flows.partition_point(|x| before(x, probe))` (`flows` in key order,
/// not empty), galloping from place `h` forwards or backwards.
fn gallop_from(flows: &[Kept], h: usize, probe: &Kept) -> usize {
    let lt = |e: &Kept| before(e, probe);
    if lt(&flows[h]) {
        let at = h + 1 + gallop(&flows[h + 1..], lt);
        debug_assert_eq!(at, flows.partition_point(lt));
        return at;
    }
    // `flows[hi]` is not before `probe`; `flows[lo]` is, or `lo` is 0.
    let (mut hi, mut step) = (h, 1);
    while hi >= step && !lt(&flows[hi - step]) {
        hi -= step;
        step *= 2;
    }
    let lo = hi.saturating_sub(step);
    let at = lo + flows[lo..hi].partition_point(lt);
    debug_assert_eq!(at, flows.partition_point(lt));
    at
}

/// Whether kept flow `a` comes before `b` ([`kept_by_key`]).
fn before(a: &Kept, b: &Kept) -> bool {
    kept_by_key(a, b) == Ordering::Less
}

/// Gives kept flow `e`, kept under key `old` in `order`, its new key where
/// it stands (at `hint`, chunk and place, if it is there, else found from
/// there, [`find`]), if the order stays sorted and its chunk ends at gaps there
/// (the flows before and after it, in its chunk or the neighbours', stay
/// before and after it; a chunk end it sits at stays a gap). Its links
/// are the same, so its chunk's [`Ends`] and stretches are. If it does not
/// fit there, returns the flow as kept (its path and links: they need not
/// be read again) and its place (chunk, place in it), if the task has it.
fn rekey_in_place(
    order: &mut Order,
    old: f64,
    e: &Kept,
    hint: [u32; 2],
    tol: f64,
) -> Result<(), Option<(Kept, [u32; 2])>> {
    let Order { chunks, lasts, .. } = order;
    if chunks.is_empty() {
        return Err(None);
    }
    let (i, at) = find(chunks, lasts, &Kept { key: old, ..*e }, hint);
    let flows = &chunks[i].flows;
    debug_assert_eq!(flows[at].f, e.f, "kept place of {}", e.f);
    debug_assert_eq!(
        flows[at].key.to_bits(),
        old.to_bits(),
        "kept key of {}",
        e.f
    );
    debug_assert_eq!(flows[at].p, e.p, "path of {}", e.f);
    let (first, last) = (at == 0, at + 1 == flows.len());
    let prev = if !first {
        Some(&flows[at - 1])
    } else {
        i.checked_sub(1).and_then(|h| chunks[h].flows.last())
    };
    let next = if !last {
        Some(&flows[at + 1])
    } else {
        chunks.get(i + 1).map(|ch| &ch.flows[0])
    };
    let fits = prev.is_none_or(|a| before(a, e)) && next.is_none_or(|b| before(e, b));
    let ends_gap = |a: Option<&Kept>, b: Option<&Kept>| match (a, b) {
        (Some(a), Some(b)) => gap(a.key, b.key, tol),
        _ => true,
    };
    let gaps = (!first || ends_gap(prev, Some(e))) && (!last || ends_gap(Some(e), next));
    if !(fits && gaps) {
        return Err(Some((flows[at], [i as u32, at as u32])));
    }
    chunks[i].flows[at].key = e.key;
    if last {
        lasts[i] = (e.key, e.f);
    }
    Ok(())
}

/// Moves kept flow `e` (its new key), kept under key `old` in `order`,
/// to its new place if that is inside the chunk it stands in (with a flow
/// of the chunk before it and one after it, so the chunk's ends and its
/// [`Ends`] stay): only the flows between its old and new places shift,
/// where taking it out and putting it back would shift the rest of the
/// chunk twice. Its blocked tail and stretches follow, as [`apply`]'s.
/// Returns its new place (chunk, place in it) if it moved.
fn move_in_chunk(
    order: &mut Order,
    old: f64,
    e: &Kept,
    hint: [u32; 2],
    old_segs: &mut Vec<Seg>,
) -> Option<[u32; 2]> {
    let Order { chunks, lasts, .. } = order;
    if chunks.is_empty() {
        return None;
    }
    let (i, a) = find(chunks, lasts, &Kept { key: old, ..*e }, hint);
    let ch = &mut chunks[i];
    let n = ch.flows.len();
    debug_assert_eq!(ch.flows[a].f, e.f, "kept place of {}", e.f);
    debug_assert_eq!(ch.flows[a].p, e.p, "path of {}", e.f);
    // Its place once it is out and back: the chunk's flows before it.
    let t = if a > 0 && before(e, &ch.flows[a - 1]) {
        gallop_from(&ch.flows[..a], a - 1, e)
    } else {
        a + gallop(&ch.flows[a + 1..], |x| before(x, e))
    };
    if t == 0 || t + 1 >= n {
        return None;
    }
    if t < a {
        ch.flows.copy_within(t..a, t + 1);
    } else {
        ch.flows.copy_within(a + 1..t + 1, a);
    }
    ch.flows[t] = *e;
    if a >= n - ch.tail {
        ch.tail -= 1;
    }
    ch.tail = ch.tail.min(n - 1 - t);
    if !ch.segs.is_empty() {
        remove_from_segs(&mut ch.segs, &[a]);
        insert_into_segs(&mut ch.segs, old_segs, &ch.flows, &[t]);
    }
    ch.grew = true;
    lasts[i] = last_of(ch);
    Some([i as u32, t as u32])
}

/// Takes the flows `gone` out of a task's `chunks` and puts the flows
/// `batch` in (both in [`kept_by_key`] order), then restores the chunks'
/// rules: no chunk empty, chunk ends at gaps, long chunks split at one.
///
/// A chunk's flows leave, and come in, all at once: the flows between
/// them and the chunk's nearer end move once, not once per flow (FB2010's
/// tasks have runs of thousands of exact ties, one chunk each, and the
/// flows served in a turn sit near a chunk's front; [`Flows`]).
fn apply(
    order: &mut Order,
    (gone, served_at): (&[Kept], &mut [[u32; 2]]),
    batch: &[Kept],
    tol: f64,
    scratch: &mut Scratch,
) {
    let Order {
        chunks,
        lasts,
        n_flows,
    } = order;
    *n_flows = *n_flows + batch.len() - gone.len();
    let Scratch { at: at_list, segs } = scratch;
    let mut k = 0;
    while k < gone.len() {
        // The flows of `gone` in chunk `i` (in key order, so consecutive),
        // found in turn (each search reads from after the one before),
        // then taken out in one pass ([`Flows::remove`]).
        let i = locate(lasts, &gone[k]);
        let ch = &mut chunks[i];
        let n = ch.flows.len();
        let last = ch.flows[n - 1];
        let mut r = 0;
        let start = k;
        at_list.clear();
        while k < gone.len() && (k == start || !before(&last, &gone[k])) {
            let g = &gone[k];
            // Where it was last noted (served or put in), if it stands
            // there still, else found galloping from there (nothing before
            // `r` is read).
            let [hc, hk] = served_at[g.f as usize].map(|x| x as usize);
            let at = if hc == i && hk >= r && hk < n {
                r + gallop_from(&ch.flows[r..n], hk - r, g)
            } else {
                r + ch.flows[r..].partition_point(|e| before(e, g))
            };
            debug_assert_eq!(ch.flows[at].f, g.f, "kept place of {}", g.f);
            at_list.push(at);
            r = at + 1;
            k += 1;
        }
        ch.flows.remove(at_list);
        ch.left += k - start;
        // Flows that leave the blocked tail shorten it.
        let tail_start = n - ch.tail;
        ch.tail -= at_list.iter().filter(|&&a| a >= tail_start).count();
        if !ch.segs.is_empty() {
            remove_from_segs(&mut ch.segs, at_list);
        }
        // A chunk that empties leaves a gap between its neighbours: keys
        // grow along the order, so the two are further apart than either
        // was from it.
        if ch.flows.is_empty() {
            chunks.remove(i);
            lasts.remove(i);
        } else {
            lasts[i] = last_of(ch);
        }
    }
    let mut k = 0;
    while k < batch.len() {
        if chunks.is_empty() {
            served_at[batch[k].f as usize] = [0, 0];
            chunks.push(Chunk::of(vec![batch[k]]));
            lasts.push((batch[k].key, batch[k].f));
            k += 1;
            continue;
        }
        // The flows of `batch` that go to chunk `i` (or to a new chunk
        // there), put in at once ([`Flows::insert`]).
        let to = place(chunks, lasts, &batch[k], tol);
        let start = k;
        k += 1;
        while k < batch.len() && place(chunks, lasts, &batch[k], tol) == to {
            k += 1;
        }
        let items = &batch[start..k];
        let i = match to {
            Place::Into(i) => i,
            Place::New(i) => {
                for (j, b) in items.iter().enumerate() {
                    served_at[b.f as usize] = [i as u32, j as u32];
                }
                chunks.insert(i, Chunk::of(items.to_vec()));
                lasts.insert(i, last_of(&chunks[i]));
                continue;
            }
        };
        let ch = &mut chunks[i];
        for b in items {
            add_class(&mut ch.ends.first, b.ends[0]);
            add_class(&mut ch.ends.last, b.ends[1]);
        }
        ch.flows.insert(items, at_list);
        for (b, &p) in items.iter().zip(at_list.iter()) {
            served_at[b.f as usize] = [i as u32, p as u32];
        }
        // The blocked tail is what stands after the last flow put in.
        let put_last = at_list[at_list.len() - 1];
        ch.tail = ch.tail.min(ch.flows.len() - 1 - put_last);
        if !ch.segs.is_empty() {
            insert_into_segs(&mut ch.segs, segs, &ch.flows, at_list);
        }
        ch.grew = true;
        lasts[i] = last_of(ch);
    }
    if batch.is_empty() && gone.is_empty() {
        return;
    }
    // A flow put in at a chunk's end may close the gap to its neighbour.
    let mut i = 1;
    while i < chunks.len() {
        let a = chunks[i - 1].flows.last().expect("no empty chunk").key;
        if gap(a, chunks[i].flows[0].key, tol) {
            i += 1;
            continue;
        }
        let next = chunks.remove(i);
        lasts.remove(i);
        let prev = &mut chunks[i - 1];
        prev.flows.extend_from_slice(&next.flows);
        if prev.segs.is_empty() || next.segs.is_empty() {
            prev.segs.clear();
            prev.segs_off = false;
        } else {
            for s in next.segs {
                push_seg(&mut prev.segs, s);
            }
        }
        prev.left += next.left;
        prev.grew = true;
        prev.tail = next.tail;
        prev.tail_full = next.tail_full;
        for set in 0..WORDS {
            prev.ends.first[set] |= next.ends.first[set];
            prev.ends.last[set] |= next.ends.last[set];
        }
        lasts[i - 1] = last_of(prev);
    }
    let mut i = 0;
    while i < chunks.len() {
        let ch = &mut chunks[i];
        if ch.grew && ch.flows.len() > 2 * CHUNK {
            ch.grew = false;
            if let Some(j) = split_point(&ch.flows, tol) {
                let rest = ch.flows.split_off(j);
                ch.recount();
                lasts[i] = last_of(ch);
                lasts.insert(i + 1, (rest[rest.len() - 1].key, rest[rest.len() - 1].f));
                let (tail, tail_full) = (ch.tail, ch.tail_full);
                ch.tail = tail.saturating_sub(rest.len());
                let mut rest = Chunk::of(rest);
                rest.tail = tail.min(rest.flows.len());
                rest.tail_full = tail_full;
                chunks.insert(i + 1, rest);
                continue;
            }
        }
        if ch.left > ch.flows.len() / 2 {
            ch.recount();
        }
        i += 1;
    }
}

impl TaskOrders {
    /// Brings every active task's order up to date; `positive` are the
    /// flows with a rate after the last round.
    fn update(&mut self, view: &Clairvoyant<'_>, changes: &Changes, positive: &[FlowIdx]) {
        let obs = view.observed();
        if self.seen.len() < view.n_flows() {
            self.seen.resize(view.n_flows(), false);
            self.key_of.resize(view.n_flows(), f64::NAN);
            self.served_at.resize(view.n_flows(), [u32::MAX; 2]);
        }
        self.gone.clear();
        self.batch.clear();
        let kept = |f: FlowIdx| {
            let p = view.path_idx(f);
            let path = obs.path_links(p);
            let ends = match (path.first(), path.last()) {
                (Some(a), Some(b)) => [a.0, b.0],
                _ => [u32::MAX; 2],
            };
            let key = view.remaining(f);
            (obs.coflow_of(f), Kept { key, f, p, ends })
        };
        let before = std::mem::take(&mut self.positive_before);
        if !self.ready || changes.resynced {
            self.ready = true;
            for order in &mut self.tasks {
                order.lasts.clear();
                order.n_flows = 0;
                for ch in order.chunks.drain(..) {
                    for e in &ch.flows {
                        self.key_of[e.f as usize] = f64::NAN;
                    }
                }
            }
            self.batch
                .extend(view.active_flows().iter().map(|&f| kept(f)));
            for &(_, e) in &self.batch {
                self.long_paths |= obs.path_links(e.p).len() > 2;
            }
        } else {
            let key_of = &mut self.key_of;
            let gone = &mut self.gone;
            let leave = |key_of: &mut [f64], gone: &mut Vec<_>, c: CoflowIdx, f: FlowIdx| {
                let key = std::mem::replace(&mut key_of[f as usize], f64::NAN);
                if !key.is_nan() {
                    let ends = [0; 2];
                    gone.push((c, Kept { key, f, p: 0, ends }));
                }
            };
            for &f in &changes.finished {
                leave(key_of, gone, obs.coflow_of(f), f);
            }
            self.in_place.clear();
            for &f in positive.iter().chain(&before).chain(&changes.started) {
                let fi = f as usize;
                if self.seen[fi] || !view.is_active(f) {
                    continue;
                }
                self.seen[fi] = true;
                let c = obs.coflow_of(f);
                let old = key_of[fi];
                // The flow as kept, with its new key, and its place, if it
                // does not fit where it stands.
                let mut stored = None;
                if !old.is_nan() {
                    // Re-keyed where it stands, its path is not read (its
                    // links are the same); debug builds check its path.
                    let probe = Kept {
                        key: view.remaining(f),
                        f,
                        p: if cfg!(debug_assertions) {
                            view.path_idx(f)
                        } else {
                            0
                        },
                        ends: [0; 2],
                    };
                    let order = self.tasks.get_mut(c as usize);
                    let hint = self.served_at[fi];
                    match order.map(|o| rekey_in_place(o, old, &probe, hint, BYTES_TIE)) {
                        Some(Ok(())) => {
                            key_of[fi] = probe.key;
                            self.in_place.push(f);
                            continue;
                        }
                        Some(Err(Some((x, at)))) => {
                            stored = Some((
                                Kept {
                                    key: probe.key,
                                    ..x
                                },
                                at,
                            ));
                        }
                        _ => {}
                    }
                }
                // Its path and links as kept, if it was found (not read
                // again; debug builds check them), else read.
                let (c, e) = match stored {
                    Some((e, at)) => {
                        debug_assert_eq!(kept(f).1.ends, e.ends, "links of {f}");
                        self.served_at[fi] = at;
                        (c, e)
                    }
                    None => {
                        let (c, e) = kept(f);
                        self.long_paths |= obs.path_links(e.p).len() > 2;
                        (c, e)
                    }
                };
                if !old.is_nan() {
                    let hint = self.served_at[fi];
                    let order = self.tasks.get_mut(c as usize);
                    let segs = &mut self.scratch.segs;
                    if let Some(at) = order.and_then(|o| move_in_chunk(o, old, &e, hint, segs)) {
                        key_of[fi] = e.key;
                        self.served_at[fi] = at;
                        self.in_place.push(f);
                        continue;
                    }
                }
                leave(key_of, gone, c, f);
                self.batch.push((c, e));
            }
            for &(_, e) in &self.batch {
                self.seen[e.f as usize] = false;
            }
            for &f in &self.in_place {
                self.seen[f as usize] = false;
            }
        }
        // (A flow's path was looked at for `long_paths` when it was read.)
        for &(_, e) in &self.batch {
            self.key_of[e.f as usize] = e.key;
        }
        let by_task = |a: &(CoflowIdx, Kept), b: &(CoflowIdx, Kept)| {
            a.0.cmp(&b.0).then(kept_by_key(&a.1, &b.1))
        };
        self.gone.sort_unstable_by(by_task);
        self.batch.sort_unstable_by(by_task);
        let (mut g, mut b) = (0, 0);
        let mut gone = vec![];
        let mut batch = vec![];
        while g < self.gone.len() || b < self.batch.len() {
            let task = |x: Option<&(CoflowIdx, Kept)>| x.map_or(CoflowIdx::MAX, |x| x.0);
            let c = task(self.gone.get(g)).min(task(self.batch.get(b)));
            gone.clear();
            while g < self.gone.len() && self.gone[g].0 == c {
                gone.push(self.gone[g].1);
                g += 1;
            }
            batch.clear();
            while b < self.batch.len() && self.batch[b].0 == c {
                batch.push(self.batch[b].1);
                b += 1;
            }
            let ci = c as usize;
            if self.tasks.len() <= ci {
                self.tasks.resize_with(ci + 1, Order::default);
            }
            apply(
                &mut self.tasks[ci],
                (&gone, &mut self.served_at),
                &batch,
                BYTES_TIE,
                &mut self.scratch,
            );
        }
        self.positive_before = before;
        self.positive_before.clear();
        self.positive_before.extend_from_slice(positive);
        #[cfg(debug_assertions)]
        self.check(view);
    }

    /// Gives each of `flows` (kept, in the tasks of `order`) its class as
    /// the walk would serve it: its place in the whole order (the flows of
    /// the tasks before it, of its task's chunks before its own, and its
    /// place in its chunk's runs, a run out of index order walked by
    /// index), and notes where it stands for the next update. Only the
    /// chunks of the tasks that hold one of `flows` are counted (FB2010:
    /// the blocked tasks at the order's back hold most chunks).
    fn place_classes(
        &mut self,
        obs: &crate::Observed<'_>,
        order: &[(u32, (Time, Time, u64), CoflowIdx)],
        flows: &[FlowIdx],
        out: &mut Allocation,
    ) {
        let mut at = 0u32;
        self.starts.clear();
        self.call = self.call.wrapping_add(1);
        for &(_, _, c) in order {
            let ci = c as usize;
            if self.first_class.len() <= ci {
                self.first_class.resize(ci + 1, 0);
                self.counted.resize(ci + 1, 0);
                self.base.resize(ci + 1, 0);
            }
            self.first_class[ci] = at;
            at += self.tasks.get(ci).map_or(0, |o| o.n_flows as u32);
        }
        for &f in flows {
            let c = obs.coflow_of(f) as usize;
            let o = &self.tasks[c];
            if self.counted[c] != self.call {
                self.counted[c] = self.call;
                self.base[c] = self.starts.len() as u32;
                let mut start = self.first_class[c];
                for ch in &o.chunks {
                    self.starts.push(start);
                    start += ch.flows.len() as u32;
                }
            }
            // Where it was last noted (served, or put in by the update),
            // or found galloping from there ([`find`]).
            let probe = Kept {
                key: self.key_of[f as usize],
                f,
                p: 0,
                ends: [0; 2],
            };
            let (i, k) = find(&o.chunks, &o.lasts, &probe, self.served_at[f as usize]);
            let kept = &o.chunks[i].flows;
            debug_assert_eq!(kept[k].f, f, "place of {f}");
            let place = run_place(kept, k);
            self.served_at[f as usize] = [i as u32, k as u32];
            let start = self.starts[self.base[c] as usize + i];
            out.set_class(f, start + place as u32);
        }
    }

    /// Debug builds: every active task's chunks against a fresh sort.
    #[cfg(debug_assertions)]
    fn check(&self, view: &Clairvoyant<'_>) {
        for &c in view.active_coflows() {
            let order = self.tasks.get(c as usize);
            let chunks = order.map_or(&[][..], |o| &o.chunks[..]);
            if let Some(o) = order {
                let lasts: Vec<(f64, FlowIdx)> = o.chunks.iter().map(last_of).collect();
                assert!(lasts
                    .iter()
                    .zip(&o.lasts)
                    .all(|(a, b)| a.0.to_bits() == b.0.to_bits() && a.1 == b.1));
                assert_eq!(lasts.len(), o.lasts.len(), "chunk lasts of task {c}");
                let n: usize = o.chunks.iter().map(|ch| ch.flows.len()).sum();
                assert_eq!(n, o.n_flows, "flows of task {c}");
            }
            let mut want: Vec<crate::greedy::Entry> = view
                .active_flows_of(c)
                .map(|f| (view.remaining(f), f, view.path_idx(f)))
                .collect();
            want.sort_unstable_by(crate::greedy::by_key);
            let got: Vec<crate::greedy::Entry> = chunks
                .iter()
                .flat_map(|ch| ch.flows.iter().map(|e| (e.key, e.f, e.p)))
                .collect();
            assert_eq!(got.len(), want.len(), "flows of task {c}");
            for (g, w) in got.iter().zip(&want) {
                assert_eq!((g.0.to_bits(), g.1), (w.0.to_bits(), w.1), "task {c}");
            }
            for w in chunks.windows(2) {
                let a = w[0].flows.last().expect("no empty chunk").key;
                assert!(gap(a, w[1].flows[0].key, BYTES_TIE), "chunk end in a run");
            }
            for ch in chunks {
                let exact = Chunk::of(ch.flows.to_vec()).ends;
                let within = |a: &Classes, b: &Classes| a.iter().zip(b).all(|(a, b)| a & !b == 0);
                assert!(within(&exact.first, &ch.ends.first) && within(&exact.last, &ch.ends.last));
                let n: usize = ch.segs.iter().map(|s| s.n as usize).sum();
                assert!(
                    ch.segs.is_empty() || n == ch.flows.len(),
                    "stretches of task {c}"
                );
                let mut at = 0;
                for s in &ch.segs {
                    assert!(s.n > 0, "empty stretch");
                    for e in &ch.flows[at..at + s.n as usize] {
                        assert_eq!(e.ends[0], s.first, "first link of {}", e.f);
                        assert!(within(&Seg::of(e).last, &s.last), "last link of {}", e.f);
                    }
                    at += s.n as usize;
                }
            }
        }
    }

    /// Starts a round: counts the links that are full from the start.
    fn begin(&mut self, obs: &crate::Observed<'_>, server: &ClassServer) {
        self.round = self.round.wrapping_add(1);
        self.memo = obs.n_links() <= CLASSES;
        if self.full_in.len() < obs.n_links() {
            self.full_in.resize(obs.n_links(), 0);
        }
        self.open.clear();
        self.open.resize(CLASSES, 0);
        self.full = [0; WORDS];
        self.full_link.clear();
        self.full_link.resize(obs.n_links() + 1, 0);
        for l in 0..obs.n_links() {
            if server.is_full(l as u32) {
                self.full_in[l] = self.round;
                self.full_link[l] = 1;
            } else {
                self.open[l % CLASSES] += 1;
            }
        }
        for (c, &n) in self.open.iter().enumerate() {
            if n == 0 {
                self.full[c / 64] |= 1 << (c % 64);
            }
        }
    }

    /// Notes the links of `path` that the flow just served filled.
    fn filled(&mut self, path: &[coflowkit_model::LinkId], server: &ClassServer) {
        for l in path {
            let li = l.0 as usize;
            if self.full_in[li] != self.round && server.is_full(l.0) {
                self.full_in[li] = self.round;
                self.full_link[li] = 1;
                let c = li % CLASSES;
                self.open[c] -= 1;
                if self.open[c] == 0 {
                    self.full[c / 64] |= 1 << (c % 64);
                }
            }
        }
    }

    /// Whether every flow of a chunk with these [`Ends`] crosses a full
    /// link: its first links or its last links are all full.
    fn all_blocked(&self, ends: &Ends) -> bool {
        self.all_full(&ends.first) || self.all_full(&ends.last)
    }

    /// Whether stretch `seg`'s flows, each crossing a link of
    /// `tail_full` (one class per link) that was full, still cross a full
    /// one: neither its first link nor any of its last links is a link of
    /// `tail_full` open now (paths of at most two links: their ends).
    fn still_blocked(&self, seg: &Seg, tail_full: &Classes) -> bool {
        let f = seg.first as usize;
        let mut first = [0; WORDS];
        first[f / 64] = 1 << (f % 64);
        (0..WORDS).all(|w| (first[w] | seg.last[w]) & tail_full[w] & !self.full[w] == 0)
    }

    /// Whether every link of the classes `set` is full.
    fn all_full(&self, set: &Classes) -> bool {
        set.iter().zip(&self.full).all(|(s, f)| s & !f == 0)
    }

    /// Task `c`'s turn from class `class` on: each flow in order that meets
    /// no full link is served alone, and every flow takes a class (its
    /// place in the order). Returns the next class. A task is passed over
    /// whole when its paths' first or last links are all full, and a chunk
    /// when its flows' are.
    fn serve(
        &mut self,
        obs: &crate::Observed<'_>,
        server: &mut ClassServer,
        c: CoflowIdx,
        class: u32,
        out: &mut Allocation,
    ) -> u32 {
        let ci = c as usize;
        let Some(mut chunks) = self
            .tasks
            .get_mut(ci)
            .map(|o| std::mem::take(&mut o.chunks))
        else {
            return class;
        };
        let len: usize = chunks.iter().map(|ch| ch.flows.len()).sum();
        if !server.blocked(obs, c) {
            let mut at = class;
            for (ci, ch) in chunks.iter_mut().enumerate() {
                if self.all_blocked(&ch.ends) {
                    #[cfg(debug_assertions)]
                    for e in &ch.flows {
                        let path = obs.path_links(e.p);
                        assert!(path.iter().any(|l| server.is_full(l.0)), "{} passed", e.f);
                    }
                } else {
                    ch.cut();
                    if let Some((tail, full)) = self.walk(obs, server, (ch, ci), at, out) {
                        (ch.tail, ch.tail_full) = (tail, full);
                    }
                }
                at += ch.flows.len() as u32;
            }
        }
        self.tasks[ci].chunks = chunks;
        class + len as u32
    }

    /// Serves the flows of chunk `ch` from class `class` on: each run of
    /// near-ties by flow index, as `sort_with_ties` orders them, until the
    /// chunk's flows all cross a full link. A run already in index order
    /// (most are) is walked stretch by stretch ([`Seg`]): a stretch whose
    /// first link is full, or whose last links all are, is passed over
    /// with one look. The chunk's blocked tail (its last `tail` flows) is
    /// passed over at once while the links of its `tail_full` are all full
    /// (looked at on entry and after each serve: nothing fills between).
    /// A chunk without stretches goes from each place straight to the run
    /// of its next flow with both ends open ([`next_open_flow`]), or
    /// leaves if none is.
    /// Returns the chunk's new blocked tail (with one class per link): the
    /// flows after its last serve (after the end of its run if that run
    /// was walked out of order), with the chunk's first and last links
    /// full now and the links between that blocked a flow (`None` if
    /// classes hold several links).
    fn walk(
        &mut self,
        obs: &crate::Observed<'_>,
        server: &mut ClassServer,
        (ch, ci): (&Chunk, usize),
        class: u32,
        out: &mut Allocation,
    ) -> Option<(usize, Classes)> {
        let (flows, ends, segs) = (&ch.flows[..], &ch.ends, &ch.segs[..]);
        let n = flows.len();
        // Where the blocked tail starts if its links are all full now.
        let tail_at = |me: &Self| {
            if me.memo && ch.tail > 0 && me.all_full(&ch.tail_full) {
                n - ch.tail
            } else {
                n
            }
        };
        let mut limit = tail_at(self);
        // Where the kept tail starts when some of its links opened: each
        // flow from there on still crosses a link of `tail_full`, so one
        // whose links (its ends: no path is longer than two links) miss the
        // links of `tail_full` open now crosses a full one.
        let t0 = if self.memo && !self.long_paths && ch.tail > 0 {
            n - ch.tail
        } else {
            n
        };
        // The flows from `from` on were looked at since the last serve;
        // `blk` gets the links between their ends that blocked one.
        let (mut from, mut blk) = (0, [0; WORDS]);
        let at = |k: usize| [ci as u32, k as u32];
        let mut run = std::mem::take(&mut self.run);
        // The stretch that holds position `k` below, and where it starts.
        let (mut s, mut s_start) = (0, 0);
        let mut i = 0;
        // Debug builds walk a chunk with stretches by the scan below too,
        // every other round, so that the reference suite checks both walks.
        let segs = if cfg!(debug_assertions) && self.round.is_multiple_of(2) {
            &[][..]
        } else {
            segs
        };
        'runs: while i < limit {
            let j;
            if segs.is_empty() {
                // The first flow from `i` on with both ends open (or no
                // path), found with no branch a flow ([`next_open_flow`]):
                // those before it cross a full link (an end), whatever
                // their runs' order. The walk goes on from the run that
                // holds it, which starts at the last gap before it (a run
                // starts at a gap whatever came before), or at `i`, or
                // leaves if there is none.
                let Some(m) = next_open_flow(flows, i, limit, &self.full_link) else {
                    #[cfg(debug_assertions)]
                    for e in &flows[i..limit] {
                        let path = obs.path_links(e.p);
                        assert!(path.iter().any(|l| server.is_full(l.0)), "{} passed", e.f);
                    }
                    break 'runs;
                };
                #[cfg(debug_assertions)]
                for e in &flows[i..m] {
                    let path = obs.path_links(e.p);
                    assert!(path.iter().any(|l| server.is_full(l.0)), "{} passed", e.f);
                }
                let mut r = m;
                while r > i && !gap(flows[r - 1].key, flows[r].key, BYTES_TIE) {
                    r -= 1;
                }
                let mut end = run_end(flows, r, BYTES_TIE);
                while end <= m {
                    r = end;
                    end = run_end(flows, r, BYTES_TIE);
                }
                if in_order(&flows[r..end]) {
                    // The run in place: its flows with both ends open, in
                    // turn, each found as `m` was.
                    let mut q = Some(m);
                    while let Some(k) = q {
                        let e = &flows[k];
                        let served = (e, at(k));
                        let class = class + k as u32;
                        if let Some(done) =
                            self.try_serve(obs, server, served, class, out, (ends, &mut blk))
                        {
                            (from, blk, limit) = (k + 1, [0; WORDS], tail_at(self));
                            if done {
                                break 'runs;
                            }
                        }
                        let hi = end.min(limit);
                        q = next_open_flow(flows, k + 1, hi, &self.full_link);
                        #[cfg(debug_assertions)]
                        for e in &flows[k + 1..q.unwrap_or(hi).max(k + 1)] {
                            let path = obs.path_links(e.p);
                            assert!(path.iter().any(|l| server.is_full(l.0)), "{} passed", e.f);
                        }
                    }
                    i = end;
                    continue;
                }
                (i, j) = (r, end);
            } else {
                j = run_end(flows, i, BYTES_TIE);
                if in_order(&flows[i..j]) {
                    let mut k = i;
                    while k < j.min(limit) {
                        while s_start + segs[s].n as usize <= k {
                            s_start += segs[s].n as usize;
                            s += 1;
                        }
                        let seg = &segs[s];
                        let hi = (s_start + seg.n as usize).min(j);
                        if seg.first != u32::MAX
                            && (server.is_full(seg.first)
                                || self.all_full(&seg.last)
                                || (k >= t0 && self.still_blocked(seg, &ch.tail_full)))
                        {
                            #[cfg(debug_assertions)]
                            for e in &flows[k..hi] {
                                let path = obs.path_links(e.p);
                                assert!(path.iter().any(|l| server.is_full(l.0)), "{} passed", e.f);
                            }
                            k = hi;
                            continue;
                        }
                        while k < hi.min(limit) {
                            let e = &flows[k];
                            k += 1;
                            if e.ends[0] != u32::MAX {
                                if server.is_full(e.ends[0]) {
                                    // The rest of the stretch crosses it too.
                                    k = hi;
                                    break;
                                }
                                if server.is_full(e.ends[1]) {
                                    continue;
                                }
                            }
                            let served = (e, at(k - 1));
                            let class = class + (k - 1) as u32;
                            if let Some(done) =
                                self.try_serve(obs, server, served, class, out, (ends, &mut blk))
                            {
                                (from, blk, limit) = (k, [0; WORDS], tail_at(self));
                                if done {
                                    break 'runs;
                                }
                            }
                        }
                    }
                    i = j;
                    continue;
                }
            }
            // A run out of index order: walked sorted by index.
            run.clear();
            run.extend_from_slice(&flows[i..j]);
            run.sort_unstable_by_key(|e| e.f);
            for (k, e) in run.iter().enumerate() {
                if e.ends[0] != u32::MAX {
                    if server.is_full(e.ends[0]) {
                        continue;
                    }
                    if server.is_full(e.ends[1]) {
                        continue;
                    }
                }
                let served = (e, [u32::MAX; 2]);
                let class = class + (i + k) as u32;
                if let Some(done) =
                    self.try_serve(obs, server, served, class, out, (ends, &mut blk))
                {
                    // The run's flows before its end are not in the tail.
                    (from, blk, limit) = (j, [0; WORDS], tail_at(self));
                    if done {
                        break 'runs;
                    }
                }
            }
            i = j;
        }
        self.run = run;
        if !self.memo {
            return None;
        }
        // Each flow after the last serve crosses a full link: its first
        // or last (in the chunk's ends, full now), or one between (noted).
        for (w, b) in blk.iter_mut().enumerate() {
            *b |= (ends.first[w] | ends.last[w]) & self.full[w];
        }
        if limit < n {
            or_classes(&mut blk, &ch.tail_full);
        }
        #[cfg(debug_assertions)]
        for (k, e) in flows.iter().enumerate().skip(from.min(limit)) {
            let path = obs.path_links(e.p);
            let in_blk = |l: &coflowkit_model::LinkId| {
                let mut c = [0; WORDS];
                add_class(&mut c, l.0);
                server.is_full(l.0) && (0..WORDS).any(|w| c[w] & blk[w] != 0)
            };
            let full = |l: &coflowkit_model::LinkId| server.is_full(l.0);
            assert!(k < limit || path.iter().any(full), "{} passed", e.f);
            assert!(k < from || path.iter().any(in_blk), "{} in the tail", e.f);
        }
        Some((n.saturating_sub(from), blk))
    }

    /// Serves flow `e` as class `class` if its path meets no full link,
    /// and returns whether every flow of its chunk (with these `ends`) now
    /// crosses a full link; `None`, and the first full link it meets added
    /// to `blk` (a link between its ends: the walk looked at those), if it
    /// meets one.
    fn try_serve(
        &mut self,
        obs: &crate::Observed<'_>,
        server: &mut ClassServer,
        (e, at): (&Kept, [u32; 2]),
        class: u32,
        out: &mut Allocation,
        (ends, blk): (&Ends, &mut Classes),
    ) -> Option<bool> {
        let path = obs.path_links(e.p);
        if let Some(l) = path.iter().find(|l| server.is_full(l.0)) {
            note_link(blk, l.0);
            return None;
        }
        server.serve_one(obs, e.f, class, out);
        self.served_at[e.f as usize] = at;
        self.filled(path, server);
        Some(self.all_blocked(ends))
    }
}

/// Every kept flow of the active tasks `tasks_now` with its key in the
/// matching: its task's `prefix`, then the bytes left it is kept under.
fn keyed_flows<'a>(
    tasks_now: &'a [CoflowIdx],
    tasks: &'a [Order],
    prefix: impl Fn(CoflowIdx) -> u64 + 'a,
) -> impl Iterator<Item = (Ranked, FlowIdx)> + 'a {
    tasks_now.iter().flat_map(move |&c| {
        let p = prefix(c);
        let chunks = tasks.get(c as usize).map_or(&[][..], |o| &o.chunks[..]);
        chunks.iter().flat_map(|ch| &ch.flows).map(move |e| {
            let key = Ranked {
                prefix: p,
                bytes: e.key,
            };
            (key, e.f)
        })
    })
}

/// Debug builds: a fill the matching decided against a fresh one, each
/// task's flows sorted (`sort_with_ties`) and served in turn where no
/// link of theirs is full, as the walk serves them (its classes: places
/// in the whole order; a flow not served keeps its class and gets 0).
/// `before` is the allocation before the fill.
#[cfg(debug_assertions)]
fn check_fill(
    view: &Clairvoyant<'_>,
    order: &[(u32, (Time, Time, u64), CoflowIdx)],
    before: &Allocation,
    out: &Allocation,
) {
    let floor = coflowkit_alloc::EPS * 1e9;
    let mut want = before.clone();
    let mut residual = view.capacities().to_vec();
    let mut served = std::collections::HashSet::new();
    let mut class = 0;
    for &(_, _, c) in order {
        let mut flows: Vec<(f64, FlowIdx)> = view
            .active_flows_of(c)
            .map(|f| (view.remaining(f), f))
            .collect();
        coflowkit_model::stats::sort_with_ties(&mut flows, |x| x.0, |x| x.1, BYTES_TIE);
        for (i, &(_, f)) in flows.iter().enumerate() {
            let path = view.path_links(view.path_idx(f));
            if path.is_empty() || path.iter().any(|l| residual[l.0 as usize] <= floor) {
                continue;
            }
            let r = path
                .iter()
                .map(|l| residual[l.0 as usize].max(0.0))
                .fold(f64::INFINITY, f64::min);
            for l in path {
                let res = &mut residual[l.0 as usize];
                *res = (*res - r).max(0.0);
            }
            want.set_rate(f, r);
            want.set_class(f, class + i as u32);
            served.insert(f);
        }
        class += flows.len() as u32;
    }
    for &f in view.active_flows() {
        if !served.contains(&f) {
            want.set_rate(f, 0.0);
        }
        let (got, w) = (out.rate(f), want.rate(f));
        assert_eq!(got.to_bits(), w.to_bits(), "rate of {f}");
        assert_eq!(out.class(f), want.class(f), "class of {f}");
    }
}

/// Adds link `l` (a real link, below [`CLASSES`] when blocked tails are
/// kept; its class otherwise, unused) to `set`, without [`add_class`]'s
/// checks.
#[inline(always)]
fn note_link(set: &mut Classes, l: u32) {
    let c = (l as usize).min(CLASSES - 1);
    set[c / 64] |= 1 << (c % 64);
}

/// Adds the classes of `other` to `set`.
fn or_classes(set: &mut Classes, other: &Classes) {
    for w in 0..WORDS {
        set[w] |= other[w];
    }
}

/// Whether the flows of a near-tie run are in flow index order (the
/// order it is walked in): exact ties are (as kept), so a run whose
/// first and last keys are the same bits needs no look.
fn in_order(run: &[Kept]) -> bool {
    run[0].key.to_bits() == run[run.len() - 1].key.to_bits()
        || run.windows(2).all(|w| w[0].f < w[1].f)
}

/// The first of `flows[from..to]` whose path's two ends are open (or
/// that has no path), by `full_link` (1 for a full link, and a 0 past the
/// last for `u32::MAX`): eight flows at a time, with no branch a flow
/// (most flows looked at cross a full end, the one or the other, in no
/// order a branch could guess).
#[inline]
fn next_open_flow(flows: &[Kept], from: usize, to: usize, full_link: &[u8]) -> Option<usize> {
    let none = (full_link.len() - 1) as u32;
    let mut k = from;
    while k < to {
        let end = (k + 8).min(to);
        let mut open = 0u32;
        for (t, e) in flows[k..end].iter().enumerate() {
            let a = full_link[e.ends[0].min(none) as usize];
            let b = full_link[e.ends[1].min(none) as usize];
            open |= u32::from(a | b == 0) << t;
        }
        if open != 0 {
            return Some(k + open.trailing_zeros() as usize);
        }
        k = end;
    }
    None
}

/// Flow `flows[k]`'s place in `flows` (a chunk, in key order) as a walk
/// takes them, runs of near-ties by flow index (`k` if its run is in
/// index order). Its run starts at the last gap at or
/// before it (a run starts at a gap whatever came before), found by
/// blocks of equal keys (FB2010's runs of thousands of exact ties).
fn run_place(flows: &[Kept], k: usize) -> usize {
    // The first of the flows before `i` with its key, galloping back.
    let equal_from = |i: usize| {
        let key = flows[i].key.to_bits();
        let (mut lo, mut step) = (i, 1);
        while lo >= step && flows[lo - step].key.to_bits() == key {
            lo -= step;
            step *= 2;
        }
        let from = lo.saturating_sub(step);
        from + flows[from..lo].partition_point(|e| e.key.to_bits() != key)
    };
    let mut r = equal_from(k);
    while r > 0 && !gap(flows[r - 1].key, flows[r].key, BYTES_TIE) {
        r = equal_from(r - 1);
    }
    let mut end = run_end(flows, r, BYTES_TIE);
    while end <= k {
        r = end;
        end = run_end(flows, r, BYTES_TIE);
    }
    let run = &flows[r..end];
    if in_order(run) {
        k
    } else {
        let f = flows[k].f;
        r + run.iter().filter(|e| e.f < f).count()
    }
}

/// The end of the near-tie run of `flows` (in key order) that starts at
/// `i`: the first flow whose key is more than `tol` (plus 1e-9 of the
/// run's first key) above `flows[i]`'s, as `sort_with_ties` cuts runs.
/// Found by galloping, then a binary search (`key - k0` grows with the
/// key): most runs are a flow or two, but FB2010's tasks have runs of
/// thousands of exact ties, which a walk often leaves after a few flows.
fn run_end(flows: &[Kept], i: usize, tol: f64) -> usize {
    let k0 = flows[i].key;
    let reach = tie_reach(k0, tol);
    let within = |e: &Kept| e.key - k0 <= reach;
    let j = i + 1 + gallop(&flows[i + 1..], within);
    debug_assert_eq!(j, {
        let mut j = i + 1;
        while j < flows.len() && within(&flows[j]) {
            j += 1;
        }
        j
    });
    j
}

/// The bytes left of kept flow `f` (`flows=srpt`): the key the update
/// just kept it under, the same bits as `view.remaining(f)` (checked in
/// debug builds), which would read the flow's progress once more.
#[inline(always)]
fn kept_bytes(key_of: &[f64], view: &Clairvoyant<'_>, f: FlowIdx) -> f64 {
    let k = key_of[f as usize];
    debug_assert_eq!(k.to_bits(), view.remaining(f).to_bits(), "key of {f}");
    k
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
