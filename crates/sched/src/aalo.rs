//! `aalo` and `aalo-local`: Discretized Coflow-Aware Least-Attained Service
//! (D-CLAS), Aalo's non-clairvoyant coflow scheduler (Chowdhury and Stoica,
//! "Efficient Coflow Scheduling Without Prior Knowledge", SIGCOMM 2015:
//! 4.2-4.4 and Pseudocode 1; coordination 3.2 and 6.2; DAGs and waves 5.1,
//! 5.2 and Pseudocode 2).
//!
//! # Queues (4.2, 4.4)
//!
//! K queues `Q1..QK` with exponentially spaced thresholds: `Qi` holds the
//! coflows whose size so far (bytes sent, across the whole cluster) is in
//! `[Qi_lo, Qi_hi)`, with `Q1_lo = 0`, `Qi_hi = E^(i-1) * Q1_hi` and
//! `QK_hi = infinity`. A coflow enters `Q1` at its release and is demoted
//! the instant its size reaches the upper threshold of its queue (several
//! queues at once if a coordination refresh reveals that much). Demotion is
//! exact: the scheduler asks the driver for a timer at the instant the size
//! reaches the threshold at the current rates (rounded up to the next
//! nanosecond), so no step of time is involved. Defaults as the paper's
//! (7.1): K = 10, E = 10, `Q1_hi` = 10 MiB (the paper's "10 MB"; the
//! authors' simulator and implementation both use 10 * 2^20 bytes).
//!
//! The scheduler is non-clairvoyant by construction: `Knows = KnowsSent`, so
//! its view ([`Observed`]) has no sizes, widths or end times. A coflow's size
//! is what its flows have sent, so every wave, restarted or speculative task
//! that adds flows to a running coflow adds to the same growing size (5.2).
//!
//! # Order inside a queue (4.4, 5.1, Pseudocode 2)
//!
//! FIFO by Aalo's CoflowId: by the external part (the DAG), then the
//! internal part (the place in the DAG). The external part is the order in
//! which DAGs register: a DAG takes the next number when the first of its
//! coflows is released (coflows released at one instant by arrival, then
//! id), like Pseudocode 2's `NextCoflowID++`; the internal part is
//! [`coflowkit_model::DagId::stage`] (the job's stage, or `1 + max` over the
//! parents'). Remaining ties go to the earlier release, arrival, then id. So
//! a DAG's coflows stay together behind the DAGs before it, and within a
//! DAG a coflow never goes ahead of one it depends on (Starts-After parents
//! are complete before their children are released, so this matters for
//! Finishes-Before children, which run alongside their parents). A coflow
//! with neither job nor parents is a DAG of its own, so on such workloads
//! the order is `fifo`'s: release, arrival, id.
//!
//! # Sharing between queues (Pseudocode 1)
//!
//! Inside a queue, coflows are served in order with strict priority, and
//! the flows of one coflow share max-min fairly (flows of a coflow on one
//! path get one rate). Between queues, `queues=weighted` (the default) uses
//! weighted sharing, with weight `K - i + 1` for `Qi` unless `weights=` says
//! otherwise; `queues=strict` serves `Q1` first, then `Q2` on what is left,
//! and so on (the variant of the authors' simulator).
//!
//! Weighted sharing is defined per link, on any fabric, in two passes that
//! follow Pseudocode 1:
//!
//! 1. *Shares* (lines 11-13): each link's capacity is split between the
//!    queues that have an active flow crossing it, in proportion to their
//!    weights: queue `q` is granted `capacity(l) * w_q / (sum of w_p over
//!    the queues p present on l)`. A queue absent from a link is granted
//!    nothing there, so nothing is held back for it. Each queue then serves
//!    its coflows in order on its own grants: each coflow's flows get
//!    max-min rates on what the queue's earlier coflows left of the queue's
//!    grants (lines 3-7).
//! 2. *Excess* (lines 8 and 14: "excess share of any queue is divided among
//!    unsaturated queues in proportion to their weights using max-min
//!    fairness"): what pass 1 left on each link (a queue's grant its flows
//!    could not use, because they are held on another link) goes to the
//!    flows that can still grow (every link of their path has some left),
//!    by weighted max-min in which each flow carries its queue's weight. The
//!    result is added to pass 1's rates.
//!
//! The allocation is work-conserving: after pass 2 every flow crosses a
//! saturated link. Where every queue present on a link can use its grant,
//! each gets exactly its weight's fraction of the link. The big switch is
//! no special case: a flow's links are its sender's uplink and its
//! receiver's downlink (its host's CPU for a compute stage). With one queue
//! (K = 1), or with strict queues, this is strict priority in the order
//! above with max-min inside a coflow: `fifo`'s rule.
//!
//! Why two passes and not Pseudocode 1's loop "while the fabric is not
//! saturated" taken literally (split what is left by weight again, serve
//! again, repeat): a queue whose later coflow keeps a link's grant while
//! its earlier coflow eats the queue's grant elsewhere makes the leftovers
//! shrink only geometrically, round after round, so the loop has no exact
//! end (the differential tests found such cases). The excess pass replaces
//! the loop by the one computation line 14 names, weighted max-min, which
//! ends exactly.
//!
//! # Coordination (3.2, 6.2)
//!
//! The schedule is made per sending host (Aalo's daemons sit with the
//! senders): a flow is served in the queue its sender puts its coflow in,
//! by the sender's estimate of the coflow's size. The coordinator refreshes
//! the global view every Δ (`delta=10ms`, the paper's default), at the
//! instants `0, Δ, 2Δ, ...`: each sender's estimate of a coflow is then its
//! size across the cluster at the last refresh (0 for a coflow released
//! since, which so starts in `Q1` everywhere) plus what the sender itself
//! has sent of it since. Between refreshes, senders of one coflow may thus
//! hold it in different queues; its flows are served with the other flows
//! of their queue. A refresh that moves no coflow to another queue at any
//! sender changes nothing, and costs no event. `delta=0` refreshes
//! instantly: every sender always knows the true size, and a coflow is in
//! one queue. `aalo-local` never refreshes: each sender ranks coflows by
//! the bytes it has sent itself (Aalo 7.2.1's "without coordination",
//! Theorem A.1).
//!
//! `local=first` changes where a coflow no refresh has counted yet is
//! served (Aalo 6.2: "only tiny coflows are handled by local decisions"):
//! its flows that their senders hold in `Q1` go ahead of every queue, in
//! the order above, on the whole capacity (max-min inside each coflow, as
//! in a queue), and the queues share what they leave by their weights
//! (pass 1 splits each link's remaining capacity; pass 2 gives them none of
//! the excess, as they cross a link they fill). The refresh after its
//! release moves it into the queues (the scheduler wakes for it). This is
//! what the runtime's agents do (docs/runtime.md): a flow of a coflow the
//! coordinator has not scheduled sends in the switches' top class before
//! the coordinator's first schedule reaches it, so it is ahead of every
//! scheduled flow where they meet; `local=q1` (the default) is D-CLAS as
//! Pseudocode 1 has it. With `delta=0` every coflow is counted at once and
//! `local=first` changes nothing; `delta=inf` refuses it (no coflow would
//! ever be counted). Both backends serve it: the tier is one more "queue"
//! `K` of a piece (`Piece::tier`), served first on the whole capacity,
//! with no weight and no share of the excess.
//!
//! # Computing it
//!
//! Every call recomputes the allocation from the coflows' active flows,
//! grouped per coflow by path (*slots*: flows of a coflow on one path
//! always share a rate). On most fabrics (`Server`) each coflow is a
//! [`MaxMin`] over its slots on its queue's grants, and the excess one
//! weighted `MaxMin` over every slot that can grow. On the big switch
//! without CPUs (`PortServer`) a coflow is a matrix of senders by receivers
//! solved by [`WeightedBipartite`] (and kept, with its inputs, until its
//! flows or its grants change), the excess one weighted solve over a matrix
//! of every active flow's queue weight; a flow's rate is then `min(row
//! level, column level)` of its coflow plus its weight times `min(sender,
//! receiver)` of the excess levels, and flows for which both minima fall on
//! their row (or both on their column) share that row's (column's) rate
//! group of the [`Allocation`], so a level that moves is one group rate.
//! Only rows and columns whose levels moved are looked at, cell by cell
//! in the matrix's order against a dense copy of the rate and group each
//! cell's slot was last given (`Co::cell_rate`, `Co::cell_group`), so that
//! only slots whose rate or group moves are read; a coflow none of whose
//! inputs moved (cells, solves, levels, queues) is skipped whole, its
//! group and sender rates included. The two paths compute the same
//! allocation; the differential tests run both.
//!
//! Each sender's bytes per coflow are kept as a running sum at the rate its
//! flows are given (on the big switch, the row totals of the solves), so
//! the crossing instant of a threshold is a division. A flow's bytes are
//! credited the same way as the driver advances them (its solo rate since
//! it last changed, or its rate group's clock since it joined; the
//! scheduler keeps a copy of each group's clock), and when the flow
//! completes the credit is corrected to the bytes the state says it sent,
//! so rounding of completion instants to the nanosecond never accumulates.
//!
//! Correctness properties: a queue never decreases (sizes only grow), and a
//! sender's estimate is never above the true size (`update_queues`); a
//! threshold counts as reached when the estimate would reach it within a
//! nanosecond at the rate it grew at (progress is advanced in whole
//! nanoseconds), so a demotion happens within a nanosecond of the instant
//! the bytes cross: at that instant rounded up when the timer wakes the
//! scheduler (`update_queues`, `crossing`);
//! senders' bytes are exact as above (`set_flow_rate`, `switch_flow`,
//! `finish_flow`, `apply_ports`); every active flow gets a rate every call
//! (`Server::allocate`, `PortServer::rated`).
//!
//! Cost: the allocation is recomputed at every event, and D-CLAS's rates
//! are more varied than per-flow fairness's (per-port weighted grants, the
//! excess on top), so flows of one coflow finish at more distinct instants:
//! on FB2010 `aalo` has about 5 times `fair`'s events, each costlier (see
//! docs/benchmarks.md).

use crate::descriptor::{Kind, Needs, Param, Params, SchedulerDescriptor};
use crate::registry::{SchedulerError, SchedulerSpec};
use crate::{Allocation, AnyScheduler, Changes, CoflowIdx, FlowIdx, KnowsSent, Observed, PathIdx, Scheduler};
use coflowkit_alloc::{MaxMin, WeightedBipartite};
use coflowkit_model::{ceil_ns_time, DagKey, Dur, HostId, Time};
use rustc_hash::FxHashMap;

/// How often the global view of coflow sizes is refreshed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Coordination {
    /// Instantly (Δ = 0): every sender knows every coflow's true size.
    Instant,
    /// Every Δ, at the instants `0, Δ, 2Δ, ...` (`aalo`).
    Every(Dur),
    /// Never: each sender knows only what it has sent (`aalo-local`).
    Never,
}

/// D-CLAS's parameters; see the module doc.
#[derive(Debug, Clone, PartialEq)]
pub struct AaloConfig {
    /// The upper thresholds of `Q1..Q(K-1)`, bytes, increasing.
    pub thresholds: Vec<f64>,
    /// The weight of each queue, `Q1` first (K of them, positive).
    pub weights: Vec<f64>,
    /// Strict priority between queues instead of weighted sharing.
    pub strict: bool,
    /// How the global view of sizes is refreshed.
    pub coordination: Coordination,
    /// Where a coflow the coordinator has not seen yet is served: `false`
    /// (`local=q1`, the default) in `Q1` with the other queues by weight;
    /// `true` (`local=first`) ahead of every queue (see the module doc).
    pub local_first: bool,
}

impl AaloConfig {
    /// K queues with thresholds `q1 * e^i`, weights `K - i + 1`, weighted
    /// sharing, refreshed every 10 ms.
    pub fn exponential(k: usize, e: f64, q1: f64) -> AaloConfig {
        AaloConfig {
            thresholds: (0..k.saturating_sub(1))
                .map(|i| q1 * e.powi(i as i32))
                .collect(),
            weights: (0..k).map(|i| (k - i) as f64).collect(),
            strict: false,
            coordination: Coordination::Every(Dur::from_millis(10)),
            local_first: false,
        }
    }

    /// The paper's defaults (7.1): K = 10, E = 10, `Q1_hi` = 10 MiB.
    pub fn paper() -> AaloConfig {
        AaloConfig::exponential(10, 10.0, (10u64 << 20) as f64)
    }

    /// Number of queues.
    pub fn n_queues(&self) -> usize {
        self.thresholds.len() + 1
    }

    /// The tier `local=first` serves ahead of every queue (`Piece::tier`):
    /// `K`, one past the last queue.
    fn ahead(&self) -> u32 {
        self.n_queues() as u32
    }

    /// The queue (0 for `Q1`) of a coflow of `size` bytes: the number of
    /// thresholds it has reached (up to float noise).
    pub fn queue_of(&self, size: f64) -> u32 {
        self.queue_within(size, 0.0)
    }

    /// As [`AaloConfig::queue_of`], a threshold within `slack` bytes
    /// counting as reached.
    fn queue_within(&self, size: f64, slack: f64) -> u32 {
        self.thresholds
            .iter()
            .take_while(|&&t| size >= t - slack - float_slack(t))
            .count() as u32
    }
}

/// D-CLAS's queue parameters, shared by `aalo` and `aalo-local`.
const QUEUE_PARAMS: [Param; 5] = [
    Param {
        key: "k",
        kind: Kind::Count,
        default: "10",
        unit: "",
        help: "number of queues K, 1 to 64",
    },
    Param {
        key: "e",
        kind: Kind::Number,
        default: "10",
        unit: "",
        help: "E, the ratio of one queue's threshold to the one before (above 1)",
    },
    Param {
        key: "q1",
        kind: Kind::Bytes,
        default: "10MiB",
        unit: "",
        help: "Q1hi, the first queue's threshold (above 0)",
    },
    Param {
        key: "weights",
        kind: Kind::List,
        default: "linear",
        unit: "",
        help: "queue weights: linear (K, K-1, .., 1), equal, or W1/W2/.. (one per queue)",
    },
    Param {
        key: "queues",
        kind: Kind::Choice(&["weighted", "strict"]),
        default: "weighted",
        unit: "",
        help: "share between queues by weight, or serve them in strict priority",
    },
];

/// `aalo`: D-CLAS, coflows demoted through K queues by bytes sent.
pub const AALO: SchedulerDescriptor = SchedulerDescriptor {
    name: "aalo",
    description: "D-CLAS, coflows demoted through K queues by bytes sent (Aalo)",
    paper: "Aalo (SIGCOMM 2015) 4-5, D-CLAS",
    params: &[
        QUEUE_PARAMS[0],
        QUEUE_PARAMS[1],
        QUEUE_PARAMS[2],
        QUEUE_PARAMS[3],
        QUEUE_PARAMS[4],
        Param {
            key: "delta",
            kind: Kind::Duration,
            default: "10ms",
            unit: "",
            help: "coordination interval (0: instant; inf: never; the runtime's default is 0)",
        },
        Param {
            key: "local",
            kind: Kind::Choice(&["q1", "first"]),
            default: "q1",
            unit: "",
            help: "a coflow the coordinator has not seen yet starts in Q1, or goes first",
        },
    ],
    needs: Needs::NOTHING,
    build: |p, _| {
        Ok(AnyScheduler::NonClairvoyant(Box::new(Aalo::new(
            "aalo",
            AaloConfig::of_params(p)?,
        ))))
    },
};

/// `aalo-local`: D-CLAS without coordination.
pub const AALO_LOCAL: SchedulerDescriptor = SchedulerDescriptor {
    name: "aalo-local",
    description: "D-CLAS without coordination: each sender ranks coflows by what it sent",
    paper: "Aalo (SIGCOMM 2015) 7.2.1",
    params: &QUEUE_PARAMS,
    needs: Needs::NOTHING,
    build: |p, _| {
        Ok(AnyScheduler::NonClairvoyant(Box::new(Aalo::new(
            "aalo-local",
            AaloConfig::of_params(p)?,
        ))))
    },
};

impl AaloConfig {
    /// D-CLAS's configuration of an `aalo` or `aalo-local` spec (`Ok(None)`
    /// for any other scheduler): what the registry builds it with, for
    /// drivers that need its queues too (the runtime's agents).
    pub fn of_spec(spec: &SchedulerSpec) -> Result<Option<AaloConfig>, SchedulerError> {
        let d = match spec.name.as_str() {
            "aalo" => &AALO,
            "aalo-local" => &AALO_LOCAL,
            _ => return Ok(None),
        };
        AaloConfig::of_params(&Params::new(&spec.name, &spec.params, d.params)).map(Some)
    }

    /// D-CLAS's configuration from an `aalo` or `aalo-local` spec's
    /// parameters.
    pub fn of_params(p: &Params<'_>) -> Result<AaloConfig, SchedulerError> {
        let k = p.count("k", 1, 64, "queues")?.map_or(10, |k| k as usize);
        let e = p
            .number("e", |e| e.is_finite() && e > 1.0, "a number above 1")?
            .unwrap_or(10.0);
        let q1 = match p.bytes("q1")? {
            None => (10u64 << 20) as f64,
            Some(b) if b > 0.0 => b,
            Some(_) => return Err(p.bad("q1", "the first threshold must be above 0")),
        };
        let mut cfg = AaloConfig::exponential(k, e, q1);
        match p.value("weights") {
            "linear" => {}
            "equal" => cfg.weights = vec![1.0; k],
            list => {
                let w: Vec<f64> = list
                    .split('/')
                    .map(|x| x.trim().parse::<f64>().ok().filter(|w| w.is_finite() && *w > 0.0))
                    .collect::<Option<_>>()
                    .ok_or_else(|| {
                        p.bad(
                            "weights",
                            format!(
                                "'{list}' is not linear, equal or positive numbers W1/W2/.. \
                                 (one per queue)"
                            ),
                        )
                    })?;
                if w.len() != k {
                    return Err(p.bad("weights", format!("{} weights for {k} queues", w.len())));
                }
                cfg.weights = w;
            }
        }
        cfg.strict = p.choice("queues")? == "strict";
        if p.name() == "aalo-local" {
            cfg.coordination = Coordination::Never;
            return Ok(cfg);
        }
        cfg.coordination = match p.given("delta") {
            None => Coordination::Every(Dur::from_millis(10)),
            Some("inf") => Coordination::Never,
            Some(_) => match p.dur("delta")? {
                Some(d) if d.0 == 0 => Coordination::Instant,
                Some(d) => Coordination::Every(d),
                None => Coordination::Every(Dur::from_millis(10)),
            },
        };
        cfg.local_first = match p.choice("local")? {
            "first" if cfg.coordination == Coordination::Never => {
                return Err(p.bad(
                    "local",
                    "'first' needs a coordinator: with delta=inf no coflow is ever seen, so \
                     every coflow would go first (fifo)",
                ))
            }
            "first" => true,
            _ => false,
        };
        Ok(cfg)
    }
}

/// Float noise in a count of bytes near `threshold`.
fn float_slack(threshold: f64) -> f64 {
    1e-12 * threshold.abs() + 1e-9
}

/// Sent bytes growing linearly: `value` at `at`, `rate` bytes per ns since.
#[derive(Debug, Clone, Copy, Default)]
struct Acc {
    value: f64,
    at: Time,
    rate: f64,
}

impl Acc {
    fn value_at(&self, t: Time) -> f64 {
        self.value + self.rate * (t.0 as f64 - self.at.0 as f64)
    }
    /// Settles at `t`, adds `extra` bytes and `extra_rate` bytes per ns.
    fn bump(&mut self, t: Time, extra: f64, extra_rate: f64) {
        self.value = self.value_at(t) + extra;
        self.at = t;
        self.rate += extra_rate;
    }
}

/// The ordering key inside a queue: (DAG rank, stage, release, arrival, id).
type Key = (u64, u32, Time, Time, u64);

/// What a sending host knows of one coflow, and where it queues it.
#[derive(Debug, Clone, Default)]
struct Piece {
    /// Bytes this sender has sent of the coflow.
    sent: Acc,
    /// `sent` at the last refresh (0 if the piece began after it).
    at_sync: f64,
    queue: u32,
    /// Where its flows are served: `queue`, or `K` (ahead of every queue)
    /// with `local=first` while its coflow is uncounted and it is in `Q1`
    /// ([`tier_of`]).
    tier: u32,
    n_active: u32,
    host: u32,
    /// Bytes per ns its estimate grew at until this call.
    rate_before: f64,
}

/// The flows of a slot: the first in place (most slots hold one), the
/// others in a vector.
#[derive(Debug, Clone, Default)]
struct Flows {
    first: FlowIdx,
    n: u32,
    rest: Vec<FlowIdx>,
}

impl Flows {
    fn len(&self) -> usize {
        self.n as usize
    }
    fn is_empty(&self) -> bool {
        self.n == 0
    }
    fn get(&self, i: usize) -> FlowIdx {
        if i == 0 {
            self.first
        } else {
            self.rest[i - 1]
        }
    }
    fn set(&mut self, i: usize, f: FlowIdx) {
        if i == 0 {
            self.first = f;
        } else {
            self.rest[i - 1] = f;
        }
    }
    fn push(&mut self, f: FlowIdx) {
        if self.n == 0 {
            self.first = f;
        } else {
            self.rest.push(f);
        }
        self.n += 1;
    }
    /// Removes and returns the last flow (there is one).
    fn pop(&mut self) -> FlowIdx {
        self.n -= 1;
        if self.n == 0 {
            self.first
        } else {
            self.rest.pop().expect("more than one flow")
        }
    }
}

/// The active flows of a coflow over one path (they always share a rate).
#[derive(Debug, Clone, Default)]
struct Slot {
    path: PathIdx,
    /// Its sender's piece (on the big switch, its row of the coflow's
    /// matrix) and, on the big switch, its receiver's column.
    piece: u32,
    col: u32,
    flows: Flows,
    /// The per-flow rate applied (bits/s) and (on other fabrics than the
    /// big switch) the one being computed.
    rate: f64,
    next: f64,
    /// On the big switch: the rate group its flows are in (`NONE`: each
    /// sends alone).
    group: u32,
    /// Its flows need their rates and classes set whatever `next` is.
    dirty: bool,
    live_pos: u32,
}

/// One active coflow.
#[derive(Debug, Clone, Default)]
struct Co {
    key: Key,
    slots: Vec<Slot>,
    slot_of: FxHashMap<PathIdx, u32>,
    /// Slots with active flows.
    live: Vec<u32>,
    pieces: Vec<Piece>,
    piece_of: FxHashMap<u32, u32>,
    /// Bytes sent by the whole coflow, and its rate until this call.
    total: Acc,
    rate_before: f64,
    /// Its size at the last refresh (0 if released after it).
    global: f64,
    /// Whether a refresh has counted it (always, with `delta=0`): until
    /// then, with `local=first`, its flows in `Q1` go ahead of every queue.
    seen: bool,
    /// On the big switch: its receivers (the columns of its matrix; the
    /// rows are its pieces), its active flows by (row, column), bumped
    /// `version` at every change, and its latest max-min per queue.
    cols: Vec<u32>,
    col_of: FxHashMap<u32, u32>,
    matrix: WeightedBipartite,
    version: u64,
    solves: Vec<Pass1>,
    /// The slot of each (row, column), `NONE` if none (`rows * cols`).
    cell: Vec<u32>,
    /// Rows and columns whose rates may have changed since they were last
    /// applied, or every slot.
    row_dirty: Vec<bool>,
    col_dirty: Vec<bool>,
    all_dirty: bool,
    /// A pass-1 solve of it ran again since its rates were last applied.
    resolved: bool,
    /// The rate groups of each row and column (`NONE` until used): without
    /// and with the excess.
    row_group: Vec<[u32; 2]>,
    col_group: Vec<[u32; 2]>,
    /// On the big switch, per (row, column) like `cell`: the rate applied
    /// to the cell's slot and its group ([`DIRTY`] when its flows need
    /// their rates and classes set whatever the rate is), so that
    /// `PortServer::rated` finds the slots whose rate moves without a look
    /// at the slots.
    cell_rate: Vec<f64>,
    cell_group: Vec<u32>,
}

impl Co {
    /// Lays out `cell` again for the current rows and columns.
    fn layout_cells(&mut self) {
        let n_cols = self.cols.len();
        let n_cells = self.pieces.len() * n_cols;
        self.cell.clear();
        self.cell.resize(n_cells, NONE);
        self.cell_rate.clear();
        self.cell_rate.resize(n_cells, 0.0);
        self.cell_group.clear();
        self.cell_group.resize(n_cells, NONE);
        for (s, slot) in self.slots.iter().enumerate() {
            let at = slot.piece as usize * n_cols + slot.col as usize;
            self.cell[at] = s as u32;
            self.cell_rate[at] = slot.rate;
            self.cell_group[at] = if slot.dirty { DIRTY } else { slot.group };
        }
        self.row_dirty.resize(self.pieces.len(), false);
        self.col_dirty.resize(n_cols, false);
        self.row_group.resize(self.pieces.len(), [NONE; 2]);
        self.col_group.resize(n_cols, [NONE; 2]);
    }
}

/// One coflow's max-min in one queue on the big switch (pass 1), kept with
/// its inputs so that an unchanged coflow is not solved again.
#[derive(Debug, Clone, Default)]
struct Pass1 {
    queue: u32,
    version: u64,
    row_cap: Vec<f64>,
    col_cap: Vec<f64>,
    row_level: Vec<f64>,
    col_level: Vec<f64>,
    row_used: Vec<f64>,
    col_used: Vec<f64>,
    /// Whether it was used this call (others are dropped).
    seen: bool,
}

/// Per flow: its slot and place in it, and the rate the driver applies
/// (bytes per ns) since `at`, when it had sent `sent`.
#[derive(Debug, Clone, Copy, Default)]
struct FlowBook {
    slot: u32,
    pos: u32,
    sent: f64,
    at: Time,
    rate: f64,
    /// The rate group it is in (`NONE` when it sends alone) and the
    /// group's clock when it had sent `sent`.
    group: u32,
    mark: f64,
}

/// How a slot's flows get their rate (big switch): alone.
const SOLO_RATE: u8 = 0;
/// In its row's group 0 (rate: the row's level; no excess) or 1 (the
/// row's level plus its weighted excess level).
const ROW_GROUP: u8 = 1;
const ROW_EXCESS_GROUP: u8 = 2;
/// In its column's group 0 or 1, the same by its column.
const COL_GROUP: u8 = 3;
const COL_EXCESS_GROUP: u8 = 4;

/// The scheduler's copy of a rate group's clock: bytes a member has sent
/// since `clock` was 0, as the driver advances it.
#[derive(Debug, Clone, Copy, Default)]
struct GroupClock {
    clock: f64,
    at: Time,
    /// Bytes per ns, as the driver applies it.
    rate: f64,
}

impl GroupClock {
    fn at(&self, t: Time) -> f64 {
        self.clock + self.rate * (t.0 - self.at.0) as f64
    }
}

const NONE: u32 = u32::MAX;
/// In `Co::cell_group`: the slot's flows need their rates and classes set.
const DIRTY: u32 = u32::MAX - 1;

/// Scratch of `PortServer::rated`: per row of a coflow, whether it moved,
/// its solve, excess level and weight; per column, whether it moved and its
/// excess level.
#[derive(Debug, Default)]
struct RatedScratch {
    row_solve: Vec<u32>,
    row_up: Vec<f64>,
    row_w: Vec<f64>,
    col_down: Vec<f64>,
    /// Columns whose pass-1 level moved; the others with an excess level
    /// above 0 now or before; the others whose excess level moved.
    cols_dirty: Vec<u32>,
    cols_room: Vec<u32>,
    cols_moved: Vec<u32>,
    col_room: Vec<bool>,
}

/// A slot whose rate or way of getting it moves (big switch): its new
/// per-flow rate (bits/s) and mode ([`SOLO_RATE`], [`ROW_GROUP`], ...).
#[derive(Debug, Clone, Copy)]
struct Rerate {
    slot: u32,
    rate: f64,
    mode: u8,
}

/// D-CLAS; see the module doc.
#[derive(Debug)]
pub struct Aalo {
    name: &'static str,
    cfg: AaloConfig,
    co: Vec<Co>,
    /// Active coflows by key.
    order: Vec<CoflowIdx>,
    dag_rank: FxHashMap<DagKey, u64>,
    n_ranks: u64,
    books: Vec<FlowBook>,
    /// The index of the last refresh applied (`Every` only).
    n_syncs: u64,
    batch: Vec<CoflowIdx>,
    server: Server,
    /// The big switch's per-port backend (`None` on other fabrics and on
    /// big switches with CPUs, which take the general one, `server`).
    ports: Option<PortServer>,
    started: bool,
    todo: Vec<u32>,
    /// Scratch of `apply_ports` and `PortServer::rated`.
    rerates: Vec<Rerate>,
    rated_scratch: RatedScratch,
    /// Scratch of `update_queues`: (piece, old queue, new queue), and each
    /// piece's (old, new) queue (`NONE` if it stays).
    moved: Vec<(u32, u32, u32)>,
    new_queue: Vec<(u32, u32)>,
    /// Rate groups (big switch): their clocks, and the ids free for reuse.
    clocks: Vec<GroupClock>,
    free_groups: Vec<u32>,
    group_sets: Vec<(u32, f64)>,
    excess_cols: Vec<(u32, f64)>,
    excess_rows: Vec<f64>,
}

impl Aalo {
    /// A D-CLAS scheduler named `name` (`aalo` or `aalo-local`).
    pub fn new(name: &'static str, cfg: AaloConfig) -> Aalo {
        assert_eq!(cfg.weights.len(), cfg.n_queues(), "one weight per queue");
        Aalo {
            name,
            cfg,
            co: vec![],
            order: vec![],
            dag_rank: FxHashMap::default(),
            n_ranks: 0,
            books: vec![],
            n_syncs: 0,
            batch: vec![],
            server: Server::default(),
            ports: None,
            started: false,
            todo: vec![],
            rerates: vec![],
            rated_scratch: RatedScratch::default(),
            moved: vec![],
            new_queue: vec![],
            clocks: vec![],
            free_groups: vec![],
            group_sets: vec![],
            excess_cols: vec![],
            excess_rows: vec![],
        }
    }

    /// The configuration.
    pub fn config(&self) -> &AaloConfig {
        &self.cfg
    }

    /// A sender's estimate of its coflow's size at `t`.
    fn estimate(&self, co: &Co, p: &Piece, t: Time) -> f64 {
        match self.cfg.coordination {
            Coordination::Instant => co.total.value_at(t),
            Coordination::Every(_) => co.global + p.sent.value_at(t) - p.at_sync,
            Coordination::Never => p.sent.value_at(t),
        }
    }

    /// Applies the latest refresh at or before `now`, if it is new: every
    /// coflow's global size and every sender's bytes as of that instant
    /// (rates have not changed since the previous call, so the values there
    /// are exact).
    fn refresh(&mut self, now: Time) {
        let Coordination::Every(delta) = self.cfg.coordination else {
            return;
        };
        let k = now.0 / delta.0.max(1);
        if k <= self.n_syncs {
            return;
        }
        self.n_syncs = k;
        let t = Time(k * delta.0);
        let first = self.cfg.ahead();
        let mut moves = std::mem::take(&mut self.new_queue);
        for &c in &self.order {
            let co = &mut self.co[c as usize];
            co.global = co.total.value_at(t);
            co.seen = true;
            moves.clear();
            let mut moved = false;
            for p in &mut co.pieces {
                p.at_sync = p.sent.value_at(t);
                if p.tier == first {
                    // Served ahead of the queues until now: into `Q1`.
                    moves.push((first, p.queue));
                    p.tier = p.queue;
                    moved = true;
                } else {
                    moves.push((NONE, NONE));
                }
            }
            if moved {
                retier(co, self.ports.as_mut(), &self.cfg, &moves);
            }
        }
        self.new_queue = moves;
    }

    fn release(&mut self, view: &Observed<'_>, changes: &Changes, now: Time) {
        self.batch.clear();
        self.batch.extend_from_slice(&changes.arrived);
        self.batch
            .sort_by_key(|&c| (view.arrival(c), view.coflow_id(c)));
        for i in 0..self.batch.len() {
            let c = self.batch[i];
            let dag = view.dag(c);
            let rank = *self.dag_rank.entry(dag.dag).or_insert_with(|| {
                self.n_ranks += 1;
                self.n_ranks
            });
            if self.co.len() <= c as usize {
                self.co.resize_with(c as usize + 1, Co::default);
            }
            let co = &mut self.co[c as usize];
            *co = Co {
                key: (
                    rank,
                    dag.stage,
                    view.release(c),
                    view.arrival(c),
                    view.coflow_id(c).0,
                ),
                seen: self.cfg.coordination == Coordination::Instant,
                ..Co::default()
            };
            co.total.at = now;
            let key = co.key;
            let at = self
                .order
                .partition_point(|&x| self.co[x as usize].key < key);
            self.order.insert(at, c);
        }
    }

    fn start_flow(&mut self, view: &Observed<'_>, f: FlowIdx, now: Time) {
        let c = view.coflow_of(f) as usize;
        if self.books.len() <= f as usize {
            self.books.resize(view.n_flows(), FlowBook::default());
        }
        let host = view.src(f).0;
        let path = view.path_idx(f);
        let n_pieces = self.co[c].pieces.len() as u32;
        let piece = *self.co[c].piece_of.entry(host).or_insert(n_pieces);
        if piece == n_pieces {
            let mut p = Piece {
                sent: Acc {
                    at: now,
                    ..Acc::default()
                },
                host,
                ..Piece::default()
            };
            p.queue = self.cfg.queue_of(self.estimate(&self.co[c], &p, now));
            p.tier = tier_of(&self.cfg, self.co[c].seen, p.queue);
            self.co[c].pieces.push(p);
        }
        let co = &mut self.co[c];
        co.pieces[piece as usize].n_active += 1;
        let n_slots = co.slots.len() as u32;
        let s = *co.slot_of.entry(path).or_insert(n_slots);
        if s == n_slots {
            let mut col = NONE;
            if self.ports.is_some() {
                let dst = view.dst(f).0;
                let n_cols = co.cols.len() as u32;
                col = *co.col_of.entry(dst).or_insert(n_cols);
                if col == n_cols {
                    co.cols.push(dst);
                }
                co.matrix.grow(co.pieces.len(), co.cols.len());
            }
            co.slots.push(Slot {
                path,
                piece,
                col,
                live_pos: NONE,
                group: NONE,
                ..Slot::default()
            });
        }
        if let Some(ports) = &mut self.ports {
            let col = co.slots[s as usize].col;
            if co.cell.len() != co.pieces.len() * co.cols.len() {
                co.layout_cells();
            } else {
                co.cell[piece as usize * co.cols.len() + col as usize] = s;
            }
            co.all_dirty = true;
            co.cell_group[piece as usize * co.cols.len() + col as usize] = DIRTY;
            let q = co.pieces[piece as usize].tier;
            co.matrix.add(piece as usize, col as usize, 1, 1.0);
            co.version += 1;
            ports.add(q, &self.cfg, host, co.cols[col as usize], 1);
        }
        let slot = &mut co.slots[s as usize];
        if slot.flows.is_empty() {
            slot.live_pos = co.live.len() as u32;
            co.live.push(s);
        }
        slot.dirty = true;
        self.books[f as usize] = FlowBook {
            slot: s,
            pos: slot.flows.len() as u32,
            sent: 0.0,
            at: now,
            rate: 0.0,
            group: NONE,
            mark: 0.0,
        };
        slot.flows.push(f);
    }

    fn finish_flow(&mut self, view: &Observed<'_>, f: FlowIdx, now: Time) {
        let c = view.coflow_of(f) as usize;
        let b = self.books[f as usize];
        // The flow sent exactly its bytes; what the linear model credited it
        // with may differ by the rounding of its completion instant.
        let (counted, rate) = self.counted(&b, now);
        let extra = view.sent(f) - counted;
        let co = &mut self.co[c];
        let slot = &mut co.slots[b.slot as usize];
        let piece = slot.piece as usize;
        let last = slot.flows.pop();
        if last != f {
            slot.flows.set(b.pos as usize, last);
            self.books[last as usize].pos = b.pos;
        }
        if slot.flows.is_empty() {
            let at = slot.live_pos as usize;
            slot.live_pos = NONE;
            let moved = co.live.pop().expect("a live slot");
            if moved != b.slot {
                co.live[at] = moved;
                co.slots[moved as usize].live_pos = at as u32;
            }
        }
        let p = &mut co.pieces[piece];
        p.n_active -= 1;
        p.sent.bump(now, extra, -rate);
        co.total.bump(now, extra, -rate);
        if let Some(ports) = &mut self.ports {
            let col = co.slots[b.slot as usize].col as usize;
            co.matrix.add(piece, col, -1, -1.0);
            co.version += 1;
            let (q, host) = (co.pieces[piece].tier, co.pieces[piece].host);
            ports.add(q, &self.cfg, host, co.cols[col], -1);
        }
    }

    /// Takes the bytes the driver measured for every active flow (the
    /// runtime's reports, [`Changes::resynced`]) in place of what the books
    /// credited them with at their rates: the difference goes to the flow,
    /// its sender and its coflow, as a completion's does.
    fn resync(&mut self, view: &Observed<'_>, now: Time) {
        for i in 0..self.order.len() {
            let c = self.order[i] as usize;
            for li in 0..self.co[c].live.len() {
                let s = self.co[c].live[li] as usize;
                let piece = self.co[c].slots[s].piece as usize;
                for k in 0..self.co[c].slots[s].flows.len() {
                    let f = self.co[c].slots[s].flows.get(k);
                    let (counted, _) = self.counted(&self.books[f as usize], now);
                    let extra = view.sent(f) - counted;
                    if extra == 0.0 {
                        continue;
                    }
                    self.books[f as usize].sent += extra;
                    let co = &mut self.co[c];
                    co.pieces[piece].sent.bump(now, extra, 0.0);
                    co.total.bump(now, extra, 0.0);
                }
            }
        }
    }

    /// Moves every sender's coflows to the queues their estimates reach.
    fn update_queues(&mut self, now: Time) {
        let mut moved = std::mem::take(&mut self.moved);
        for i in 0..self.order.len() {
            let c = self.order[i] as usize;
            moved.clear();
            let co = &self.co[c];
            for (k, p) in co.pieces.iter().enumerate() {
                if p.n_active == 0 && self.cfg.coordination != Coordination::Instant {
                    continue;
                }
                // Sizes come from progress the engine advances in whole
                // nanoseconds: a threshold the estimate would reach within
                // a nanosecond at the rate it grew at counts as reached.
                let slack = co.rate_before.max(p.rate_before);
                let q = self
                    .cfg
                    .queue_within(self.estimate(co, p, now), slack)
                    .max(p.queue);
                if q != p.queue {
                    moved.push((k as u32, p.queue, q));
                }
            }
            if moved.is_empty() {
                continue;
            }
            // Pieces hold few distinct moves: one pass over the live slots.
            let co = &mut self.co[c];
            let mut new_queue = std::mem::take(&mut self.new_queue);
            new_queue.clear();
            new_queue.resize(co.pieces.len(), (NONE, NONE));
            for &(k, _, q) in &moved {
                let p = &mut co.pieces[k as usize];
                let old = p.tier;
                p.queue = q;
                p.tier = tier_of(&self.cfg, co.seen, q);
                new_queue[k as usize] = (old, p.tier);
            }
            retier(co, self.ports.as_mut(), &self.cfg, &new_queue);
            self.new_queue = new_queue;
        }
        self.moved = moved;
    }

    /// What the books credit flow `f` with at `now`, and the rate (bytes
    /// per ns) it sends at.
    fn counted(&self, b: &FlowBook, now: Time) -> (f64, f64) {
        if b.group == NONE {
            (b.sent + b.rate * (now.0 - b.at.0) as f64, b.rate)
        } else {
            let g = &self.clocks[b.group as usize];
            (b.sent + g.at(now) - b.mark, g.rate)
        }
    }

    /// A rate group id nobody uses.
    fn new_group(&mut self) -> u32 {
        self.free_groups.pop().unwrap_or_else(|| {
            self.clocks.push(GroupClock::default());
            (self.clocks.len() - 1) as u32
        })
    }

    /// Sets rate group `g`'s rate (bits/s) from `now`.
    fn set_group_rate(&mut self, g: u32, bits: f64, out: &mut Allocation, now: Time) {
        out.set_group_rate(g, bits);
        let r = out.group_rate(g).max(0.0) / 8e9;
        let clock = &mut self.clocks[g as usize];
        if clock.rate != r {
            *clock = GroupClock {
                clock: clock.at(now),
                at: now,
                rate: r,
            };
        }
    }

    /// Moves flow `f` into rate group `g`, or, with `g == NONE`, makes it
    /// send alone at `bits`; its books keep what it has been credited.
    fn switch_flow(&mut self, f: FlowIdx, g: u32, bits: f64, out: &mut Allocation, now: Time) {
        let (sent, _) = self.counted(&self.books[f as usize], now);
        let b = &mut self.books[f as usize];
        b.sent = sent;
        b.at = now;
        b.group = g;
        if g == NONE {
            out.set_rate(f, bits);
            b.rate = out.rate(f).max(0.0) / 8e9;
        } else {
            out.join_group(f, g);
            b.mark = self.clocks[g as usize].at(now);
        }
    }

    /// Applies the big switch's rates: each slot's flows go to their row's
    /// or column's rate group when their rate is that row's or column's
    /// level (so a level that moves is one group rate), else send alone;
    /// then each sender's and coflow's rate is set from the row totals.
    fn apply_ports(&mut self, out: &mut Allocation, now: Time) {
        let ports = self.ports.take().expect("the big switch's backend");
        let mut todo = std::mem::take(&mut self.rerates);
        let mut sc = std::mem::take(&mut self.rated_scratch);
        for i in 0..self.order.len() {
            let c = self.order[i] as usize;
            todo.clear();
            if !ports.rated(&self.cfg, &mut self.co[c], &mut sc, &mut todo) {
                continue;
            }
            let n_cols = self.co[c].cols.len();
            // Read each slot and its first flow's book once in a pass whose
            // loads do not wait on each other, so that their cache misses
            // overlap; the loop below, whose every step depends on the one
            // before, then finds them in cache.
            let mut touched = 0u32;
            for rr in &todo {
                let slot = &self.co[c].slots[rr.slot as usize];
                touched ^= self.books[slot.flows.first as usize].group;
            }
            std::hint::black_box(touched);
            for &Rerate {
                slot: s,
                rate: next,
                mode,
            } in &todo
            {
                let s = s as usize;
                let slot = &self.co[c].slots[s];
                let (r, j) = (slot.piece as usize, slot.col as usize);
                let target = match mode {
                    ROW_GROUP | ROW_EXCESS_GROUP => {
                        let k = (mode == ROW_EXCESS_GROUP) as usize;
                        if self.co[c].row_group[r][k] == NONE {
                            self.co[c].row_group[r][k] = self.new_group();
                        }
                        self.co[c].row_group[r][k]
                    }
                    COL_GROUP | COL_EXCESS_GROUP => {
                        let k = (mode == COL_EXCESS_GROUP) as usize;
                        if self.co[c].col_group[j][k] == NONE {
                            self.co[c].col_group[j][k] = self.new_group();
                        }
                        self.co[c].col_group[j][k]
                    }
                    _ => NONE,
                };
                let slot = &self.co[c].slots[s];
                let (rate, dirty, group) = (slot.rate, slot.dirty, slot.group);
                let same_rate = next == rate || (next - rate).abs() <= 1e-12 * rate.abs();
                let class = self.co[c].pieces[r].queue;
                for k in 0..self.co[c].slots[s].flows.len() {
                    let f = self.co[c].slots[s].flows.get(k);
                    let b = &self.books[f as usize];
                    if b.group != target || (target == NONE && (dirty || !same_rate)) {
                        self.switch_flow(f, target, next, out, now);
                    }
                    if dirty || target != group {
                        out.set_class(f, class);
                    }
                }
                let co = &mut self.co[c];
                let slot = &mut co.slots[s];
                slot.rate = next;
                slot.group = target;
                slot.dirty = false;
                co.cell_rate[r * n_cols + j] = next;
                co.cell_group[r * n_cols + j] = target;
            }
            // Group rates: each row's and column's level, without and with
            // its weighted excess level.
            let co = &self.co[c];
            let single = co.solves.len() == 1;
            let mut sets: Vec<(u32, f64)> = std::mem::take(&mut self.group_sets);
            sets.clear();
            let finite = |x: f64| if x.is_finite() { x } else { 0.0 };
            for (r, gs) in co.row_group.iter().enumerate() {
                if gs == &[NONE; 2] {
                    continue;
                }
                let q = co.pieces[r].tier;
                let level = co
                    .solves
                    .iter()
                    .find(|p| p.queue == q)
                    .map_or(0.0, |p| p.row_level[r]);
                let excess = ports.excess_level(&self.cfg, true, co.pieces[r].host, q);
                for (k, &g) in gs.iter().enumerate() {
                    if g != NONE {
                        sets.push((g, finite(if k == 0 { level } else { level + excess })));
                    }
                }
            }
            for (j, gs) in co.col_group.iter().enumerate() {
                if gs == &[NONE; 2] {
                    continue;
                }
                let (level, excess) = if single {
                    let q = co.solves[0].queue;
                    (
                        co.solves[0].col_level[j],
                        ports.excess_level(&self.cfg, false, co.cols[j], q),
                    )
                } else {
                    (0.0, 0.0)
                };
                for (k, &g) in gs.iter().enumerate() {
                    if g != NONE {
                        sets.push((g, finite(if k == 0 { level } else { level + excess })));
                    }
                }
            }
            for &(g, bits) in &sets {
                self.set_group_rate(g, bits, out, now);
            }
            self.group_sets = sets;
            // Each sender's rate: its row's max-min total plus its flows'
            // share of the excess; the coflow's, their sum.
            let co = &mut self.co[c];
            if !self.cfg.strict {
                ports.excess_of_rows(co, &mut self.excess_cols, &mut self.excess_rows);
            }
            let mut total = 0.0;
            for r in 0..co.pieces.len() {
                let piece = &co.pieces[r];
                let mut bits = 0.0;
                if piece.n_active > 0 {
                    let q = piece.tier;
                    if let Some(p) = co.solves.iter().find(|p| p.queue == q) {
                        bits = p.row_used[r];
                    }
                    // (No excess ahead of the queues.)
                    if !self.cfg.strict && q != self.cfg.ahead() {
                        bits += self.cfg.weights[q as usize] * self.excess_rows[r];
                    }
                }
                let rate = bits / 8e9;
                debug_assert!(
                    rate.is_finite(),
                    "sender {r} of coflow {c} at {bits} bits/s"
                );
                let p = &mut co.pieces[r];
                if p.sent.rate != rate {
                    p.sent.bump(now, 0.0, rate - p.sent.rate);
                }
                total += rate;
            }
            if co.total.rate != total {
                co.total.bump(now, 0.0, total - co.total.rate);
            }
        }
        self.rerates = todo;
        self.rated_scratch = sc;
        self.ports = Some(ports);
    }

    /// Gives flow `f` the rate `bits` and keeps the books of its sender
    /// and coflow exact.
    fn set_flow_rate(&mut self, c: usize, f: FlowIdx, bits: f64, out: &mut Allocation, now: Time) {
        out.set_rate(f, bits);
        let r1 = out.rate(f).max(0.0) / 8e9;
        let b = &mut self.books[f as usize];
        if r1 == b.rate {
            return;
        }
        // The state advances the flow the same way (its bytes sent grow at
        // its rate), so what it has sent now needs no look; completions
        // correct the rounding (`finish_flow`).
        let sent = b.sent + b.rate * (now.0 - b.at.0) as f64;
        let dr = r1 - b.rate;
        *b = FlowBook {
            sent,
            at: now,
            rate: r1,
            ..*b
        };
        let co = &mut self.co[c];
        let piece = co.slots[b.slot as usize].piece as usize;
        co.pieces[piece].sent.bump(now, 0.0, dr);
        co.total.bump(now, 0.0, dr);
    }

    /// The first instant a sender's estimate reaches its queue's upper
    /// threshold at the current rates, refreshes included.
    fn crossing(&self, co: &Co, p: &Piece, now: Time) -> Time {
        let Some(&theta) = self.cfg.thresholds.get(p.queue as usize) else {
            return Time::NEVER;
        };
        let e = self.estimate(co, p, now);
        let at = |rate: f64, from: Time, left: f64| {
            ceil_ns_time(from, left.max(0.0), rate).unwrap_or(Time::NEVER)
        };
        match self.cfg.coordination {
            Coordination::Instant => at(co.total.rate, now, theta - e),
            Coordination::Never => at(p.sent.rate, now, theta - e),
            Coordination::Every(delta) => {
                let d = delta.0.max(1);
                let next_sync = Time((now.0 / d + 1) * d);
                let local = at(p.sent.rate, now, theta - e);
                if local < next_sync {
                    return local;
                }
                // At each refresh the estimate jumps to the global size; the
                // first refresh at or after the global size reaches theta
                // sees it, unless the sender's own bytes get there first
                // in the interval before.
                let s = co.total.value_at(now);
                let tau = if s >= theta - float_slack(theta) {
                    now
                } else {
                    at(co.total.rate, now, theta - s)
                };
                if tau == Time::NEVER {
                    return Time::NEVER;
                }
                if tau <= next_sync {
                    return next_sync;
                }
                let t_k = Time(tau.0 / d * d);
                let s_k = co.total.value_at(t_k);
                if s_k >= theta - float_slack(theta) {
                    return t_k;
                }
                at(p.sent.rate, t_k, theta - s_k).min(Time(t_k.0 + d))
            }
        }
    }

    fn next_wake(&self, now: Time) -> Option<Time> {
        let mut wake = Time::NEVER;
        if let (true, Coordination::Every(delta)) = (self.cfg.local_first, self.cfg.coordination) {
            // The refresh that sees a coflow served ahead of the queues
            // moves it into them.
            let ahead = self.cfg.ahead();
            if self.order.iter().any(|&c| {
                let co = &self.co[c as usize];
                co.pieces.iter().any(|p| p.n_active > 0 && p.tier == ahead)
            }) {
                let d = delta.0.max(1);
                wake = Time((now.0 / d + 1) * d);
            }
        }
        for &c in &self.order {
            let co = &self.co[c as usize];
            let active = co.pieces.iter().filter(|p| p.n_active > 0);
            let Some(first) = active.clone().min_by_key(|p| p.queue) else {
                continue;
            };
            let Some(&theta) = self.cfg.thresholds.get(first.queue as usize) else {
                continue;
            };
            // No sender's estimate is above the coflow's size: none crosses
            // before the size reaches the lowest threshold ahead.
            let s = co.total.value_at(now);
            if s < theta - float_slack(theta) {
                let bound = ceil_ns_time(now, theta - s, co.total.rate).unwrap_or(Time::NEVER);
                if bound >= wake {
                    continue;
                }
            }
            if self.cfg.coordination == Coordination::Instant {
                // Every sender has the coflow's size and queue.
                wake = wake.min(self.crossing(co, first, now));
                continue;
            }
            for p in active {
                wake = wake.min(self.crossing(co, p, now));
            }
        }
        (wake != Time::NEVER).then_some(wake)
    }
}

impl Scheduler for Aalo {
    type Knows = KnowsSent;

    fn name(&self) -> &str {
        self.name
    }

    fn schedule(
        &mut self,
        now: Time,
        view: Observed<'_>,
        changes: &Changes,
        out: &mut Allocation,
    ) -> Option<Time> {
        if !self.started {
            self.started = true;
            let fabric = view.fabric();
            let n = fabric.n_hosts();
            if fabric.is_big_switch() && (0..n).all(|h| fabric.cpu(HostId(h)).is_none()) {
                self.ports = Some(PortServer::new(view.capacities(), n as usize, &self.cfg));
            }
        }
        // The refresh first: it reads sizes along the rates of the interval
        // that ends now, which the changes below end.
        self.refresh(now);
        for &c in &self.order {
            let co = &mut self.co[c as usize];
            co.rate_before = co.total.rate;
            for p in &mut co.pieces {
                p.rate_before = p.sent.rate;
            }
        }
        for &f in &changes.finished {
            self.finish_flow(&view, f, now);
        }
        self.release(&view, changes, now);
        for &f in &changes.started {
            self.start_flow(&view, f, now);
        }
        if changes.resynced {
            self.resync(&view, now);
        }
        // Last: a coflow may be released and complete at one instant.
        for &c in &changes.finished_coflows {
            if let Some(at) = self.order.iter().position(|&x| x == c) {
                self.order.remove(at);
            }
            let co = std::mem::take(&mut self.co[c as usize]);
            self.free_groups.extend(
                co.row_group
                    .iter()
                    .chain(&co.col_group)
                    .flatten()
                    .copied()
                    .filter(|&g| g != NONE),
            );
        }
        self.update_queues(now);
        match &mut self.ports {
            Some(ports) => ports.allocate(&self.cfg, &self.order, &mut self.co),
            None => self
                .server
                .allocate(&self.cfg, &view, &self.order, &mut self.co),
        }
        if self.ports.is_some() {
            self.apply_ports(out, now);
            return self.next_wake(now);
        }
        let mut todo = std::mem::take(&mut self.todo);
        for i in 0..self.order.len() {
            let c = self.order[i] as usize;
            todo.clear();
            todo.extend_from_slice(&self.co[c].live);
            for &s in &todo {
                let s = s as usize;
                let slot = &self.co[c].slots[s];
                let (next, rate, dirty) = (slot.next, slot.rate, slot.dirty);
                if !dirty && (next == rate || (next - rate).abs() <= 1e-12 * rate.abs()) {
                    continue;
                }
                let class = self.co[c].pieces[slot.piece as usize].queue;
                for k in 0..self.co[c].slots[s].flows.len() {
                    let f = self.co[c].slots[s].flows.get(k);
                    self.set_flow_rate(c, f, next, out, now);
                    out.set_class(f, class);
                }
                let slot = &mut self.co[c].slots[s];
                slot.rate = next;
                slot.dirty = false;
            }
        }
        self.todo = todo;
        self.next_wake(now)
    }
}

/// Computes D-CLAS's rates (see the module doc) into each live slot's
/// `next`.
#[derive(Debug, Default)]
struct Server {
    solver: MaxMin,
    residual: Vec<f64>,
    full: Vec<f64>,
    /// Per queue and link (`q * n_links + l`): the queue's grant this round.
    grant: Vec<f64>,
    /// Per link: the total weight of the queues present this round.
    weight_on: Vec<f64>,
    link_stamp: Vec<u32>,
    present: Vec<u32>,
    epoch: u32,
    /// (queue, link) pairs present this round.
    pairs: Vec<(u32, u32)>,
    /// Per queue: its (coflow, slot) pairs, in order.
    units: Vec<Vec<(CoflowIdx, u32)>>,
    demand_slot: Vec<u32>,
    demand_co: Vec<CoflowIdx>,
}

impl Server {
    fn next_epoch(&mut self) -> u32 {
        self.epoch = self.epoch.wrapping_add(1);
        if self.epoch == 0 {
            self.link_stamp.iter_mut().for_each(|s| *s = 0);
            self.present.iter_mut().for_each(|s| *s = 0);
            self.epoch = 1;
        }
        self.epoch
    }

    fn can_grow(&self, links: &[coflowkit_model::LinkId]) -> bool {
        links
            .iter()
            .all(|l| self.residual[l.0 as usize] > self.full[l.0 as usize])
    }

    fn allocate(
        &mut self,
        cfg: &AaloConfig,
        view: &Observed<'_>,
        order: &[CoflowIdx],
        co: &mut [Co],
    ) {
        let n_links = view.n_links();
        let k = cfg.n_queues();
        if self.full.len() != n_links {
            self.full = view.capacities().iter().map(|c| c * 1e-9).collect();
            self.link_stamp = vec![0; n_links];
            self.weight_on = vec![0.0; n_links];
            self.present = vec![0; n_links * k];
            self.grant = vec![0.0; n_links * k];
        }
        self.residual.clear();
        self.residual.extend_from_slice(view.capacities());
        for &c in order {
            let co = &mut co[c as usize];
            for &s in &co.live {
                co.slots[s as usize].next = 0.0;
            }
        }
        // With `local=first`, the tier ahead of the queues first (coflows
        // no refresh has counted yet, their flows in `Q1`), in order, on the
        // whole capacity; then, strict, queue by queue on what is left.
        let ahead = cfg.ahead();
        let first = cfg.local_first.then_some(ahead);
        if cfg.strict {
            for q in first.into_iter().chain(0..ahead) {
                self.serve_each(view, order, co, |cc, s| slot_tier(cc, s) == q);
            }
            return;
        }
        if let Some(q) = first {
            self.serve_each(view, order, co, |cc, s| slot_tier(cc, s) == q);
        }
        // Pass 1: each link's capacity split between the queues present on
        // it, by weight; each queue serves its coflows in order on its grants.
        self.units.resize_with(k, Vec::new);
        let epoch = self.next_epoch();
        self.pairs.clear();
        for u in &mut self.units {
            u.clear();
        }
        for &c in order {
            let cc = &co[c as usize];
            for &s in &cc.live {
                let q = slot_tier(cc, s);
                if q == ahead {
                    continue;
                }
                let slot = &cc.slots[s as usize];
                self.units[q as usize].push((c, s));
                for l in view.path_links(slot.path) {
                    let l = l.0 as usize;
                    if self.link_stamp[l] != epoch {
                        self.link_stamp[l] = epoch;
                        self.weight_on[l] = 0.0;
                    }
                    let at = q as usize * n_links + l;
                    if self.present[at] != epoch {
                        self.present[at] = epoch;
                        self.weight_on[l] += cfg.weights[q as usize];
                        self.pairs.push((q, l as u32));
                    }
                }
            }
        }
        for &(q, l) in &self.pairs {
            let l = l as usize;
            // (The whole capacity but for what `local=first` served.)
            self.grant[q as usize * n_links + l] =
                self.residual[l] * cfg.weights[q as usize] / self.weight_on[l];
        }
        for q in 0..k {
            let units = std::mem::take(&mut self.units[q]);
            let mut i = 0;
            while i < units.len() {
                let c = units[i].0;
                let mut j = i;
                while j < units.len() && units[j].0 == c {
                    j += 1;
                }
                let grant = &mut self.grant[q * n_links..(q + 1) * n_links];
                serve_coflow(
                    &mut self.solver,
                    &mut self.demand_slot,
                    view,
                    &mut co[c as usize],
                    units[i..j].iter().map(|u| u.1),
                    grant,
                    &self.full,
                    Some(&mut self.residual),
                );
                i = j;
            }
            self.units[q] = units;
        }
        // Pass 2: what the queues left, by weighted max-min between the
        // flows that can still grow, each with its queue's weight.
        self.solver.clear();
        self.demand_slot.clear();
        self.demand_co.clear();
        for &c in order {
            let cc = &co[c as usize];
            for &s in &cc.live {
                let slot = &cc.slots[s as usize];
                let links = view.path_links(slot.path);
                let q = slot_tier(cc, s);
                if q == ahead || !self.can_grow(links) {
                    continue;
                }
                self.solver.push(
                    links.iter().copied(),
                    cfg.weights[q as usize],
                    slot.flows.len() as u32,
                    f64::INFINITY,
                );
                self.demand_slot.push(s);
                self.demand_co.push(c);
            }
        }
        if self.demand_slot.is_empty() {
            return;
        }
        let rates = self.solver.solve(&mut self.residual);
        for ((&c, &s), &x) in self.demand_co.iter().zip(&self.demand_slot).zip(rates) {
            co[c as usize].slots[s as usize].next += x;
        }
    }

    /// Coflow by coflow in `order`, max-min for the live slots `pick`
    /// chooses, on the residual.
    fn serve_each(
        &mut self,
        view: &Observed<'_>,
        order: &[CoflowIdx],
        co: &mut [Co],
        pick: impl Fn(&Co, u32) -> bool,
    ) {
        for &c in order {
            let cc = &mut co[c as usize];
            let slots: Vec<u32> = cc.live.iter().copied().filter(|&s| pick(cc, s)).collect();
            if slots.is_empty() {
                continue;
            }
            serve_coflow(
                &mut self.solver,
                &mut self.demand_slot,
                view,
                cc,
                slots.into_iter(),
                &mut self.residual,
                &self.full,
                None,
            );
        }
    }
}

/// The tier slot `s` of `co` is served in ([`Piece::tier`]).
fn slot_tier(co: &Co, s: u32) -> u32 {
    co.pieces[co.slots[s as usize].piece as usize].tier
}

/// Marks the live slots of `co`'s pieces whose tier moved (`moves[k]`: the
/// old and new tier of piece `k`, `NONE` if it stays) to be rated and
/// classed again, and moves them in the per-port counts.
fn retier(co: &mut Co, mut ports: Option<&mut PortServer>, cfg: &AaloConfig, moves: &[(u32, u32)]) {
    co.all_dirty = true;
    for &s in &co.live {
        let slot = &mut co.slots[s as usize];
        let k = slot.piece as usize;
        let (old, q) = moves[k];
        if q == NONE {
            continue;
        }
        slot.dirty = true;
        if let Some(ports) = ports.as_deref_mut() {
            co.cell_group[k * co.cols.len() + slot.col as usize] = DIRTY;
            let n = slot.flows.len() as i64;
            let (host, dst) = (co.pieces[k].host, co.cols[slot.col as usize]);
            ports.add(old, cfg, host, dst, -n);
            ports.add(q, cfg, host, dst, n);
        }
    }
}

/// Where a piece in `queue` is served ([`Piece::tier`]): `K` (ahead of
/// every queue) for `local=first` while its coflow is uncounted and the
/// piece in `Q1`, else its queue.
fn tier_of(cfg: &AaloConfig, seen: bool, queue: u32) -> u32 {
    if cfg.local_first && !seen && queue == 0 {
        cfg.ahead()
    } else {
        queue
    }
}

/// Max-min rates for the given slots of one coflow on `capacity` (reduced
/// by what they use, as is `also`, if given), added to the slots' `next`.
/// Slots crossing a link with nothing left get nothing.
#[allow(clippy::too_many_arguments)]
fn serve_coflow(
    solver: &mut MaxMin,
    demand_slot: &mut Vec<u32>,
    view: &Observed<'_>,
    co: &mut Co,
    slots: impl Iterator<Item = u32>,
    capacity: &mut [f64],
    full: &[f64],
    mut also: Option<&mut Vec<f64>>,
) {
    solver.clear();
    demand_slot.clear();
    for s in slots {
        let slot = &co.slots[s as usize];
        let links = view.path_links(slot.path);
        if links
            .iter()
            .any(|l| capacity[l.0 as usize] <= full[l.0 as usize])
        {
            continue;
        }
        solver.push(
            links.iter().copied(),
            1.0,
            slot.flows.len() as u32,
            f64::INFINITY,
        );
        demand_slot.push(s);
    }
    if demand_slot.is_empty() {
        return;
    }
    let rates = solver.solve(capacity);
    for (&s, &x) in demand_slot.iter().zip(rates) {
        let slot = &mut co.slots[s as usize];
        slot.next += x;
        if let Some(residual) = also.as_deref_mut() {
            if x > 0.0 {
                let used = x * slot.flows.len() as f64;
                for l in view.path_links(slot.path) {
                    residual[l.0 as usize] -= used;
                }
            }
        }
    }
}

/// D-CLAS on the big switch, port by port: a coflow's flows are a matrix of
/// senders by receivers, solved by [`WeightedBipartite`] (pass 1, per coflow
/// and queue, kept while its inputs stay the same), and the excess by one
/// weighted solve over a matrix of every active flow's queue weight (pass
/// 2). The same rule as [`Server`], whose slots and paths it replaces by
/// ports.
#[derive(Debug)]
struct PortServer {
    n: usize,
    cap_up: Vec<f64>,
    cap_down: Vec<f64>,
    /// Per queue and host (`q * n + h`): its active flows out of and into
    /// the host.
    on_up: Vec<u32>,
    on_down: Vec<u32>,
    grant_up: Vec<f64>,
    grant_down: Vec<f64>,
    res_up: Vec<f64>,
    res_down: Vec<f64>,
    /// Every active flow's queue weight, by (sender, receiver).
    excess: WeightedBipartite,
    level_up: Vec<f64>,
    level_down: Vec<f64>,
    /// Ports whose excess level changed in this call, and those whose
    /// level is above 0 now or was before it (the others give no flow any
    /// excess, before or after).
    moved_up: Vec<bool>,
    moved_down: Vec<bool>,
    room_up: Vec<bool>,
    room_down: Vec<bool>,
    old_level: Vec<f64>,
    used_up: Vec<f64>,
    used_down: Vec<f64>,
    row_cap: Vec<f64>,
    col_cap: Vec<f64>,
    /// Per coflow of the order: the queues it has active flows in (bits;
    /// bit `K`: ahead of them).
    queues_of: Vec<u128>,
    /// Receivers with an excess level above 0.
    down_with_room: Vec<u32>,
}

impl PortServer {
    fn new(caps: &[f64], n: usize, cfg: &AaloConfig) -> PortServer {
        // The queues and, last, `local=first`'s tier ahead of them.
        let k = cfg.n_queues() + 1;
        PortServer {
            n,
            cap_up: (0..n).map(|h| caps[2 * h]).collect(),
            cap_down: (0..n).map(|h| caps[2 * h + 1]).collect(),
            on_up: vec![0; k * n],
            on_down: vec![0; k * n],
            grant_up: vec![0.0; k * n],
            grant_down: vec![0.0; k * n],
            res_up: vec![],
            res_down: vec![],
            excess: WeightedBipartite::new(n, n),
            level_up: vec![0.0; n],
            level_down: vec![0.0; n],
            moved_up: vec![false; n],
            moved_down: vec![false; n],
            room_up: vec![false; n],
            room_down: vec![false; n],
            old_level: vec![],
            used_up: vec![],
            used_down: vec![],
            row_cap: vec![],
            col_cap: vec![],
            queues_of: vec![],
            down_with_room: vec![],
        }
    }

    /// Lists in `todo` the live slots of `co` whose rate or way of getting
    /// it (alone, or in a row's or column's group) differs from what was
    /// last applied, with the new one, comparing with `Co::cell_rate` and
    /// `Co::cell_group` (the slots themselves are read only if they move).
    /// It looks at every cell if the coflow changed shape or queues, else
    /// at the cells a moved input reaches: a cell's rate is a function of
    /// its row's and column's pass-1 levels and of its ends' excess levels,
    /// and the excess levels count only when both are above 0 (the excess
    /// is their minimum). So a cell is looked at if its row's or column's
    /// pass-1 level moved, or one end's excess level moved while the other
    /// end has room (an excess level above 0 now or before).
    /// Returns false if nothing the coflow's rates depend on moved (its
    /// cells, solves, levels and queues are as when last applied): its
    /// groups' and senders' rates are then unchanged too.
    fn rated(
        &self,
        cfg: &AaloConfig,
        co: &mut Co,
        sc: &mut RatedScratch,
        todo: &mut Vec<Rerate>,
    ) -> bool {
        let (n_rows, n_cols) = (co.pieces.len(), co.cols.len());
        let strict = cfg.strict;
        let up_moved = |r: usize| !strict && self.moved_up[co.pieces[r].host as usize];
        let down_moved = |j: usize| !strict && self.moved_down[co.cols[j] as usize];
        let all = co.all_dirty;
        let moved = all
            || co.resolved
            || (0..n_rows).any(|r| co.row_dirty[r] || up_moved(r))
            || (0..n_cols).any(|j| co.col_dirty[j] || down_moved(j));
        if !moved || n_rows == 0 || n_cols == 0 {
            co.all_dirty = false;
            co.resolved = false;
            co.row_dirty.iter_mut().for_each(|d| *d = false);
            co.col_dirty.iter_mut().for_each(|d| *d = false);
            return moved;
        }
        // Per row: the solve of its queue (`NONE` if none: it has no live
        // cell), its excess level and weight; per column, its excess level.
        sc.row_solve.clear();
        sc.row_up.clear();
        sc.row_w.clear();
        for piece in &co.pieces {
            let si = if co.solves.len() == 1 {
                0
            } else {
                co.solves
                    .iter()
                    .position(|p| p.queue == piece.tier)
                    .map_or(NONE, |i| i as u32)
            };
            sc.row_solve.push(si);
            // Ahead of the queues (`local=first`): no excess, no weight.
            let ahead = piece.tier == cfg.ahead();
            sc.row_up.push(if strict || ahead {
                0.0
            } else {
                self.level_up[piece.host as usize]
            });
            sc.row_w.push(if ahead {
                0.0
            } else {
                cfg.weights[piece.tier as usize]
            });
        }
        sc.col_down.clear();
        sc.col_down.extend(co.cols.iter().map(|&h| {
            if strict {
                0.0
            } else {
                self.level_down[h as usize]
            }
        }));
        sc.cols_dirty.clear();
        sc.cols_room.clear();
        sc.cols_moved.clear();
        sc.col_room.clear();
        for j in 0..n_cols {
            let room = !strict && self.room_down[co.cols[j] as usize];
            sc.col_room.push(room);
            if co.col_dirty[j] {
                sc.cols_dirty.push(j as u32);
            } else {
                if room {
                    sc.cols_room.push(j as u32);
                }
                if down_moved(j) {
                    sc.cols_moved.push(j as u32);
                }
            }
        }
        let single = co.solves.len() == 1;
        let co_ref = &*co;
        let sc_ref = &*sc;
        let visit = |r: usize, j: usize, todo: &mut Vec<Rerate>| {
            let (co, sc) = (co_ref, sc_ref);
            if co.matrix.count(r, j) == 0 {
                return;
            }
            let p = &co.solves[sc.row_solve[r] as usize];
            let (lr, lc) = (p.row_level[r], p.col_level[j]);
            let (up, down, w) = (sc.row_up[r], sc.col_down[j], sc.row_w[r]);
            // A flow gets min(row, column) of its coflow's levels plus its
            // weight times min(sender, receiver) of the excess levels. When
            // both minima fall on its row (or both on its column), the rate
            // is the row's (column's), shared by all such flows: a group.
            let excess = up.min(down);
            let (x, mode) = if lr <= lc && excess == 0.0 {
                (lr, ROW_GROUP)
            } else if lr <= lc && up <= down {
                (lr + w * up, ROW_EXCESS_GROUP)
            } else if lc < lr && single && excess == 0.0 {
                (lc, COL_GROUP)
            } else if lc < lr && single && down <= up {
                (lc + w * down, COL_EXCESS_GROUP)
            } else {
                (lr.min(lc) + w * excess, SOLO_RATE)
            };
            let at = r * n_cols + j;
            let applied = co.cell_group[at];
            let same = match mode {
                SOLO_RATE => {
                    let rate = co.cell_rate[at];
                    applied == NONE && (x == rate || (x - rate).abs() <= 1e-12 * rate.abs())
                }
                ROW_GROUP | ROW_EXCESS_GROUP => {
                    let g = co.row_group[r][(mode == ROW_EXCESS_GROUP) as usize];
                    g != NONE && applied == g
                }
                _ => {
                    let g = co.col_group[j][(mode == COL_EXCESS_GROUP) as usize];
                    g != NONE && applied == g
                }
            };
            if !same {
                todo.push(Rerate {
                    slot: co.cell[at],
                    rate: x,
                    mode,
                });
            }
        };
        for r in 0..n_rows {
            if all || co_ref.row_dirty[r] {
                for j in 0..n_cols {
                    visit(r, j, todo);
                }
                continue;
            }
            for &j in &sc_ref.cols_dirty {
                visit(r, j as usize, todo);
            }
            let row_moved = up_moved(r);
            if row_moved {
                for &j in &sc_ref.cols_room {
                    visit(r, j as usize, todo);
                }
            }
            if !strict && self.room_up[co_ref.pieces[r].host as usize] {
                for &j in &sc_ref.cols_moved {
                    // (Those with room were just looked at.)
                    if !(row_moved && sc_ref.col_room[j as usize]) {
                        visit(r, j as usize, todo);
                    }
                }
            }
        }
        co.all_dirty = false;
        co.resolved = false;
        co.row_dirty.iter_mut().for_each(|d| *d = false);
        co.col_dirty.iter_mut().for_each(|d| *d = false);
        true
    }

    /// The weighted excess level (bits/s) of a sender (`up`) or receiver for
    /// a flow of queue `q` (0 with strict queues).
    fn excess_level(&self, cfg: &AaloConfig, up: bool, host: u32, q: u32) -> f64 {
        if cfg.strict || q == cfg.ahead() {
            return 0.0;
        }
        let level = if up {
            self.level_up[host as usize]
        } else {
            self.level_down[host as usize]
        };
        cfg.weights[q as usize] * level
    }

    /// The excess (per unit of weight, bits/s) each row of `co` gets: the
    /// sum over its flows of the lower of their ends' excess levels. Only
    /// ports with room after pass 1 have an excess level: few.
    fn excess_of_rows(&self, co: &Co, cols: &mut Vec<(u32, f64)>, out: &mut Vec<f64>) {
        out.clear();
        out.resize(co.pieces.len(), 0.0);
        cols.clear();
        for &h in &self.down_with_room {
            if let Some(&j) = co.col_of.get(&h) {
                cols.push((j, self.level_down[h as usize]));
            }
        }
        if cols.is_empty() {
            return;
        }
        for (r, piece) in co.pieces.iter().enumerate() {
            let up = self.level_up[piece.host as usize];
            if up > 0.0 {
                // (Levels are infinite on ports that bind nobody: only
                // cells with flows count.)
                for &(j, down) in cols.iter() {
                    let n = co.matrix.count(r, j as usize);
                    if n > 0 {
                        out[r] += n as f64 * up.min(down);
                    }
                }
            }
        }
    }

    /// `count` more (or fewer) active flows of queue `q` from `src` to `dst`.
    fn add(&mut self, q: u32, cfg: &AaloConfig, src: u32, dst: u32, count: i64) {
        let (q, src, dst) = (q as usize, src as usize, dst as usize);
        let bump = |x: &mut u32| *x = (*x as i64 + count) as u32;
        bump(&mut self.on_up[q * self.n + src]);
        bump(&mut self.on_down[q * self.n + dst]);
        // (Flows ahead of the queues take no excess.)
        if q != cfg.ahead() as usize {
            self.excess
                .add(src, dst, count, count as f64 * cfg.weights[q]);
        }
    }

    /// Each port's capacity left after the tier ahead of the queues (all of
    /// it without `local=first`) split between the queues present on it, by
    /// weight.
    fn grants(&mut self, cfg: &AaloConfig) {
        let (n, k) = (self.n, cfg.n_queues());
        for (on, grant, cap) in [
            (&self.on_up, &mut self.grant_up, &self.res_up),
            (&self.on_down, &mut self.grant_down, &self.res_down),
        ] {
            for h in 0..n {
                let w: f64 = (0..k)
                    .filter(|&q| on[q * n + h] > 0)
                    .map(|q| cfg.weights[q])
                    .sum();
                for q in 0..k {
                    grant[q * n + h] = if on[q * n + h] > 0 {
                        cap[h] * cfg.weights[q] / w
                    } else {
                        0.0
                    };
                }
            }
        }
    }

    fn allocate(&mut self, cfg: &AaloConfig, order: &[CoflowIdx], co: &mut [Co]) {
        let (n, k) = (self.n, cfg.n_queues());
        self.res_up.clone_from(&self.cap_up);
        self.res_down.clone_from(&self.cap_down);
        for &c in order {
            for p in &mut co[c as usize].solves {
                p.seen = false;
            }
        }
        // Pass 1, queue by queue, coflow by coflow; with `local=first`, the
        // tier ahead of the queues (`K`) first, on the whole capacity.
        self.queues_of.clear();
        self.queues_of.extend(order.iter().map(|&c| {
            co[c as usize]
                .pieces
                .iter()
                .filter(|p| p.n_active > 0)
                .fold(0u128, |m, p| m | 1 << p.tier)
        }));
        let first = cfg.local_first.then_some(cfg.ahead());
        for q in first.into_iter().chain(0..k as u32) {
            if q == 0 && !cfg.strict {
                self.grants(cfg);
            }
            for (i, &c) in order.iter().enumerate() {
                if self.queues_of[i] & 1 << q == 0 {
                    continue;
                }
                let cc = &mut co[c as usize];
                // Strict: the residual; weighted: the queue's grants, and
                // the residual too.
                type Pair<'a> = (&'a mut [f64], &'a mut [f64]);
                let (src, mut also): (Pair<'_>, Option<Pair<'_>>) =
                    if cfg.strict || q == cfg.ahead() {
                        ((&mut self.res_up[..], &mut self.res_down[..]), None)
                    } else {
                        let at = q as usize * n;
                        (
                            (
                                &mut self.grant_up[at..at + n],
                                &mut self.grant_down[at..at + n],
                            ),
                            Some((&mut self.res_up[..], &mut self.res_down[..])),
                        )
                    };
                let (src_up, src_down) = src;
                let clamp = |x: f64, cap: f64| if x <= 1e-9 * cap { 0.0 } else { x };
                self.row_cap.clear();
                self.row_cap.extend(cc.pieces.iter().map(|p| {
                    let h = p.host as usize;
                    if p.tier == q {
                        clamp(src_up[h], self.cap_up[h])
                    } else {
                        0.0
                    }
                }));
                self.col_cap.clear();
                self.col_cap.extend(
                    cc.cols
                        .iter()
                        .map(|&h| clamp(src_down[h as usize], self.cap_down[h as usize])),
                );
                let at = match cc.solves.iter().position(|p| p.queue == q) {
                    Some(i) => i,
                    None => {
                        cc.all_dirty = true;
                        cc.solves.push(Pass1 {
                            queue: q,
                            version: u64::MAX,
                            ..Pass1::default()
                        });
                        cc.solves.len() - 1
                    }
                };
                let p = &mut cc.solves[at];
                p.seen = true;
                if p.version != cc.version || p.row_cap != self.row_cap || p.col_cap != self.col_cap
                {
                    p.version = cc.version;
                    cc.resolved = true;
                    p.row_cap.clone_from(&self.row_cap);
                    p.col_cap.clone_from(&self.col_cap);
                    // Keep the old levels to mark the rows and columns whose
                    // rates move.
                    self.old_level.clear();
                    self.old_level.extend_from_slice(&p.row_level);
                    let n_old_rows = self.old_level.len();
                    self.old_level.extend_from_slice(&p.col_level);
                    cc.matrix.solve(
                        &self.row_cap,
                        &self.col_cap,
                        &mut p.row_level,
                        &mut p.col_level,
                        &mut p.row_used,
                        &mut p.col_used,
                    );
                    if n_old_rows != p.row_level.len()
                        || self.old_level.len() != n_old_rows + p.col_level.len()
                    {
                        cc.all_dirty = true;
                    } else {
                        for (r, &l) in p.row_level.iter().enumerate() {
                            if l != self.old_level[r] {
                                cc.row_dirty[r] = true;
                            }
                        }
                        for (j, &l) in p.col_level.iter().enumerate() {
                            if l != self.old_level[n_old_rows + j] {
                                cc.col_dirty[j] = true;
                            }
                        }
                    }
                }
                for (r, piece) in cc.pieces.iter().enumerate() {
                    let h = piece.host as usize;
                    src_up[h] -= p.row_used[r];
                    if let Some((up, _)) = &mut also {
                        up[h] -= p.row_used[r];
                    }
                }
                for (j, &h) in cc.cols.iter().enumerate() {
                    src_down[h as usize] -= p.col_used[j];
                    if let Some((_, down)) = &mut also {
                        down[h as usize] -= p.col_used[j];
                    }
                }
            }
        }
        for &c in order {
            let cc = &mut co[c as usize];
            let n = cc.solves.len();
            cc.solves.retain(|p| p.seen);
            cc.all_dirty |= cc.solves.len() != n;
        }
        // Pass 2: the excess, by weight.
        if !cfg.strict {
            for h in 0..n {
                if self.res_up[h] <= 1e-9 * self.cap_up[h] {
                    self.res_up[h] = 0.0;
                }
                if self.res_down[h] <= 1e-9 * self.cap_down[h] {
                    self.res_down[h] = 0.0;
                }
            }
            self.old_level.clear();
            self.old_level.extend_from_slice(&self.level_up);
            self.old_level.extend_from_slice(&self.level_down);
            self.excess.solve(
                &self.res_up,
                &self.res_down,
                &mut self.level_up,
                &mut self.level_down,
                &mut self.used_up,
                &mut self.used_down,
            );
            self.down_with_room.clear();
            for h in 0..n {
                self.moved_up[h] = self.level_up[h] != self.old_level[h];
                self.moved_down[h] = self.level_down[h] != self.old_level[n + h];
                self.room_up[h] = self.level_up[h] > 0.0 || self.old_level[h] > 0.0;
                self.room_down[h] = self.level_down[h] > 0.0 || self.old_level[n + h] > 0.0;
                if self.level_down[h] > 0.0 {
                    self.down_with_room.push(h as u32);
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Compiles only for a scheduler whose view has no sizes.
    fn knows_only_what_was_sent<S: Scheduler<Knows = KnowsSent>>(_: &S) {}

    #[test]
    fn aalo_cannot_read_sizes() {
        knows_only_what_was_sent(&Aalo::new("aalo", AaloConfig::paper()));
    }

    #[test]
    fn thresholds_are_exponential_and_queues_count_them() {
        let c = AaloConfig::paper();
        assert_eq!(c.n_queues(), 10);
        assert_eq!(c.thresholds[0], 10.0 * 1024.0 * 1024.0);
        assert_eq!(c.thresholds[8], 10.0 * 1024.0 * 1024.0 * 1e8);
        assert_eq!(c.weights, (1..=10).rev().map(f64::from).collect::<Vec<_>>());
        let c = AaloConfig::exponential(3, 2.0, 100.0);
        assert_eq!(c.thresholds, vec![100.0, 200.0]);
        let q: Vec<u32> = [0.0, 99.9, 100.0 - 1e-10, 100.0, 199.0, 200.0, 1e12]
            .iter()
            .map(|&b| c.queue_of(b))
            .collect();
        assert_eq!(q, vec![0, 0, 1, 1, 1, 2, 2]);
        assert_eq!(AaloConfig::exponential(1, 10.0, 1.0).queue_of(1e15), 0);
    }
}
