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
//! flows change or a grant moves beyond what keeps the solve's result:
//! the grant of a port that bound nobody may move to anything above what
//! the coflow takes from it, with the same result bit for bit
//! ([`WeightedBipartite::keeps`]), so the solve and the coflow's re-rating
//! are skipped; a debug check solves again and compares bit for bit; on
//! FB2010's first 200 coflows about 17,300 of the 22,000-24,000 solves
//! that only moved grants asked for are so kept, small ones mostly: a big
//! coflow's moved grants fall on some bound port), the excess one
//! weighted solve over a matrix
//! of every active flow's queue weight; a flow's rate is then `min(row
//! level, column level)` of its coflow plus its weight times `min(sender,
//! receiver)` of the excess levels, and flows for which both minima fall on
//! their row (or both on their column) share that row's (column's) rate
//! group of the [`Allocation`], so a level that moves is one group rate.
//! A flow whose pass-1 minimum falls on its row and excess minimum on its
//! column (rate `row level + weight * column's excess level`) is in its
//! column's *level group* of that row level and weight (`Co::level_groups`),
//! so that when only excess levels move, as after most events, its rate
//! moves as the group's (on FB2010's first 200 coflows, 4 in 5 of the
//! flows re-rated alone were re-rated so); a level group lives while a
//! slot is in it. When a solve moves the row levels of a level group's
//! slots (rows tied at one level move together), the group takes the new
//! level most of them move to, if more move to it than keep the old one
//! (`relabel_level_groups`, which counts its movers per group and level as
//! `rated` tags them, with no sort): those flows stay in it and only its
//! rate moves, and they leave the list before any slot is read; the
//! others move. On FB2010 66% of the slots re-rated were
//! moved so from one level group to another; on its first 200 coflows
//! this cuts the slots re-rated from 3.25 M to 1.83 M. Mirrored, a flow
//! whose pass-1 minimum falls on its column and excess minimum on its row
//! (rate `column level + weight * sender's excess level`, `lc < lr`, `up <
//! d`) is in its row's level group of that column level and the row's
//! weight (`Co::row_level_groups`), so that a sender's excess level moving
//! within `(0, d)` re-rates none of its flows (these were 74% of the
//! slots still re-rated alone on FB2010). A flow in a group finishes when
//! the group's clock says, not by its own bytes: the same instant up to
//! rounding (on FB2010, 29 of 526 CCTs moved, by at most 24 ns; with the
//! mirrored groups 28 of 526 against main's, by at most 106 ns).
//! `aalo-local` (no refreshes, `delta=inf`) takes the same groups: there
//! each sender's crossings follow its own flows' finishes, so a finish
//! rounded to another nanosecond moves later crossings too, and its shifts
//! are larger (on FB2010, 54 of 526 CCTs moved against main's sending
//! them alone, by at most 471 ns; on its first 200 coflows 3 of 200, by
//! at most 109 ns), within the 1 us asked of it, for less than half the CPU (docs/lab/benchmarks-history.md, row 76).
//! Only rows and columns whose levels moved are looked at, cell by cell
//! in the matrix's order against a dense copy of the rate and group each
//! cell's slot was last given (`Co::cell_rate`, `Co::cell_group`), so that
//! only slots whose rate or group moves are read; a coflow none of whose
//! inputs moved (cells, solves, levels, queues) is skipped whole, its
//! group and sender rates included. Of a moved row or column only the
//! cells the move can reach are looked at: a cell sees an excess level `d`
//! of its receiver only through `min(up, d)` against 0 and `up` against
//! `d` (and `d` itself when it sends alone below its sender's `up`), so a
//! level that moved within `(up, inf]`, or with level groups and one solve
//! within `(0, up)`, leaves it as it was (the same for a sender's level
//! against `d`, within `(0, d)` with level groups, mirrored ones taking
//! the flows at `lc < lr`); and its rate follows its row's pass-1 level only where
//! `lr <= lc`, its column's only where `lc < lr`. Of the columns whose
//! excess level moved, a row whose own level stayed at `up` finds those it
//! sees by the lower of each column's two levels, kept sorted
//! (`RatedScratch::cols_moved_span`), not by a test per column (a debug
//! check compares the two, row by row); they depend on `up` alone, so a
//! row whose sender is at the level of an earlier row of the call takes
//! that row's list (up to four levels kept; on FB2010 `aalo-local` 1.04x
//! for the row before's, 1.02-1.03x more for four). On FB2010 this cuts the
//! cells looked at from 9.4 G to 2.4 G (the slots re-rated, 218 M, are
//! the same). Group rates are set only for rows and columns whose levels
//! moved (or when a group id was taken in the call), and of those only
//! the ones whose rate moves: each group's rate as last set is kept beside
//! it (`Co::row_group_bits`, `LevelGroup::bits`; NaN for an id just
//! taken), as the driver has it (on FB2010, 7 in 10 of the rates so
//! walked stay, mostly of groups no flow is in; a debug check compares
//! them with the driver's). A slot listed whose group stays (its level
//! group took its new level, `relabel_level_groups`: on FB2010 at least 7
//! in 10 of the slots listed) is not read. Each sender's share
//! of the excess (the sum over its flows of their ends' lower excess
//! level) is kept while the coflow's flows stay (`Co::excess_rows`), and
//! summed again only for the rows a moved excess level reaches: a
//! sender's level that moved (unless it stays above every receiver's of
//! the coflow, before and now), or a receiver's level that moved on a
//! cell of the row with flows (unless it stays above the sender's, before
//! and now, and above 0), as `PortServer::excess_of_moved_rows` proves;
//! a debug check sums every row anew. A row's cells with flows are kept
//! as a bit set of their receivers (`Co::row_dsts`), so a sum walks only
//! the cells that add (its receivers and those with room: on FB2010 ~25
//! of the ~70 columns with room a summed row had), in receiver order, and
//! a cell of one flow adds its level without a look at its count (a
//! debug check sums over every column, bit for bit). The two paths
//! compute the same allocation; the differential tests run both.
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
//! scheduler (`update_queues`, `crossing`). A crossing within `SNAP_NS` of
//! another coflow's decision (its crossing, a completion) may fall on
//! either side of it after a few rounded events: the reference suite does
//! not compare such cases;
//! senders' bytes are exact as above (`set_flow_rate`, `switch_flow`,
//! `finish_flow`, `apply_ports`); every active flow gets a rate every call
//! (`Server::allocate`, `PortServer::rated`).
//!
//! Cost: the allocation is recomputed at every event, and D-CLAS's rates
//! are more varied than per-flow fairness's (per-port weighted grants, the
//! excess on top), so flows of one coflow finish at more distinct instants:
//! on FB2010 `aalo` has about 5 times `fair`'s events, each costlier (see
//! docs/benchmarks.md).
//!
//! # Where things are
//!
//! This file holds the parameters, the scheduler and its `schedule` step;
//! `books` keeps what each sender and coflow has sent and each flow's slot
//! and rate, `queues` the queues, refreshes and demotion timers,
//! `link_server` computes the rates on any fabric (`Server`) and
//! `port_server` on the big switch without CPUs (`PortServer`, with the
//! rate groups it applies).
//!
//! [`MaxMin`]: coflowkit_alloc::MaxMin
//! [`WeightedBipartite`]: coflowkit_alloc::WeightedBipartite

use crate::dag_order::DagOrder;
use crate::descriptor::{Kind, Needs, Param, Params, Parts, SchedulerDescriptor};
use crate::spec::{SchedulerError, SchedulerSpec};
use crate::{Allocation, AnyScheduler, Changes, CoflowIdx, KnowsSent, Observed, Scheduler};
use coflowkit_model::{Dur, HostId, Time};

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
            .take_while(|&&t| reached(size, t, slack))
            .count() as u32
    }

    /// `queue_within(size, slack).max(queue)`, looking first at the one
    /// threshold that can move it: below `queue`'s upper threshold the
    /// count stops at or before `queue`.
    fn queue_from(&self, queue: u32, size: f64, slack: f64) -> u32 {
        match self.thresholds.get(queue as usize) {
            Some(&t) if reached(size, t, slack) => self.queue_within(size, slack).max(queue),
            _ => queue,
        }
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
    cost: 52.0,
    parts: Parts {
        // A coordinator that gathers sizes every round runs D-CLAS on
        // what the round saw: no extra delay of its own (the module doc).
        coordinated: &[("delta", "0")],
        local_thresholds: Some(|p| Ok(AaloConfig::of_params(p)?.thresholds)),
        ..Parts::NONE
    },
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
    cost: 87.0,
    parts: Parts {
        local_thresholds: Some(|p| Ok(AaloConfig::of_params(p)?.thresholds)),
        ..Parts::NONE
    },
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
                    .map(|x| {
                        x.trim()
                            .parse::<f64>()
                            .ok()
                            .filter(|w| w.is_finite() && *w > 0.0)
                    })
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

/// Whether `size` bytes reach `threshold`, within `slack` bytes and float
/// noise.
fn reached(size: f64, threshold: f64, slack: f64) -> bool {
    size >= threshold - slack - float_slack(threshold)
}

/// Float noise in a count of bytes near `threshold`.
fn float_slack(threshold: f64) -> f64 {
    1e-12 * threshold.abs() + 1e-9
}

mod books;
mod link_server;
mod port_excess;
mod port_groups;
mod port_server;
mod queues;

use books::{Co, FlowBook, GroupClock, NONE};
use link_server::Server;
use port_server::{PortServer, RatedScratch, Rerate};

/// D-CLAS; see the module doc.
#[derive(Debug)]
pub struct Aalo {
    name: &'static str,
    cfg: AaloConfig,
    co: Vec<Co>,
    /// Active coflows by key.
    order: Vec<CoflowIdx>,
    /// DAGs by when they were first released (the external part of
    /// Aalo's CoflowId).
    dags: DagOrder,
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
    /// Rate group ids taken so far (`new_group`).
    n_groups_taken: u64,
    group_sets: Vec<port_groups::GroupSet>,
    /// Scratch of `relabel_level_groups`: the level groups slots move out
    /// of, their (new level's bits, count, next) lists, and per group id
    /// its place in the first (`NONE` if none); per column, whether one of
    /// its level groups took a new level.
    relabel_movers: Vec<port_groups::Movers>,
    relabel_levels: Vec<(u64, u32, u32)>,
    relabel_at: Vec<u32>,
    relabeled: Vec<bool>,
    /// The columns marked in `relabeled`, in the order marked; scratch of
    /// `apply_ports`: those and the moved columns, by column.
    relabeled_cols: Vec<u32>,
    level_cols: Vec<u32>,
    /// The coflows whose started flows wait for their matrix to grow
    /// (`Co::pending`).
    laid_out: Vec<u32>,
    /// Scratch of `relabel_level_groups`: per slot of a coflow, whether it
    /// is listed to move.
    in_todo: Vec<bool>,
    /// Scratch of `next_wake`: coflows by the bound on their crossings.
    wake_order: Vec<(Time, CoflowIdx)>,
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
            dags: DagOrder::default(),
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
            n_groups_taken: 0,
            group_sets: vec![],
            relabel_movers: vec![],
            relabel_levels: vec![],
            relabel_at: vec![],
            relabeled: vec![],
            relabeled_cols: vec![],
            level_cols: vec![],
            laid_out: vec![],
            in_todo: vec![],
            wake_order: vec![],
        }
    }

    /// The configuration.
    pub fn config(&self) -> &AaloConfig {
        &self.cfg
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
        self.lay_out_started();
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
                    .filter(|&g| g != NONE)
                    .chain(co.level_groups.iter().flatten().map(|g| g.group))
                    .chain(co.row_level_groups.iter().flatten().map(|g| g.group)),
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
                if !dirty && crate::rate_stands(rate, next) {
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

    fn dag_order(&self) -> Option<&DagOrder> {
        Some(&self.dags)
    }

    fn dag_order_mut(&mut self) -> Option<&mut DagOrder> {
        Some(&mut self.dags)
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
