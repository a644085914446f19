//! `baraat`: Baraat's Smart Priority Class (B. Dogar, T. Karagiannis,
//! H. Ballani, A. Rowstron, "Decentralized Task-Aware Scheduling for Data
//! Center Networks", SIGCOMM 2014, 4.1 and 4.3), simulated round by round.
//!
//! Every task (coflow) has a task id (4.1, [`crate::tasks`]); a lower id is
//! a higher priority. There is no central scheduler: each link (a switch
//! port, or a host's CPU for a compute stage) decides from what crosses it,
//! and each sender sets its demand from the feedback of its path.
//!
//! # One round (one RTT)
//!
//! Time is cut into rounds at the instants `k · rtt` (integer ns, `rtt`
//! default 100 us). At the start of round `k`:
//!
//! 1. **Sender, Algorithm 2.** Every active flow computes its demand
//!    `D = min(NIC rate, buffered / rtt)`, where the NIC rate is the
//!    capacity of the first link of its path and `buffered` its bytes left;
//!    if the flow was already set up (it had feedback in round `k - 1`) and
//!    the least NR of that feedback is below its previous demand, it is
//!    bottlenecked elsewhere and `D = min(D, min NR + delta)`.
//! 2. **Classifier, 4.3.1, per link.** The link keeps, per task, a count
//!    of the task's size there ([the task's size](#the-tasks-size-at-a-link),
//!    below). A task is *heavy on this link* when
//!    that reaches `threshold` (within 1e-6 relative, as `fifo-lm`). The
//!    tasks with a flow on the link, in task-id order, form classes: a class
//!    is a maximal run in which every member but the last is heavy (a heavy
//!    task shares its class with the task after it; several heavy tasks in a
//!    row raise the multiplexing further). So a task can be heavy on one
//!    link and light on another (footnote 3). Classes are fixed for the round
//!    from the counters before it.
//! 3. **Switch, Algorithm 1, per link.** The link handles its flows' requests
//!    in priority order (task id, then flow index). For flow `f` of class `k`
//!    with demand `D`, after its previous demand and allocation are returned
//!    (line 1): `ClassAvlBW = max(0, C - sum of the demands of classes
//!    before k)`, `AvailShare = max(0, ClassAvlBW - D_k)` with `D_k` the
//!    demands of the other flows of class `k`; `NR = D` if `AvailShare > D`,
//!    else `NR = ClassAvlBW / F_k` (`F_k` flows in class `k`, `f` included);
//!    `AR = min(NR, C - A)` with `A` the allocations of the other flows on
//!    the link. Then `f`'s demand and AR replace its old ones in the counters
//!    (line 12). The counters hold, for a flow already handled this round,
//!    its new values, for one not yet handled its values of the previous
//!    round, and nothing for a flow in its first round (so a new
//!    high-priority flow is held to what lower ones left until they are
//!    handled again: preemption takes a round, as in the paper).
//! 4. **Rates.** A flow sends during the round at the least AR of its path;
//!    its least NR is kept for step 1 of the next round.
//!
//! Comparisons of rates (`AvailShare > D`, `MinNR < Demand`) treat values
//! within [`RATE_TIE`] (1e-9 relative) as equal. `AvailShare > D` is
//! relative to the larger of `D` and the link's capacity `C`: `AvailShare`
//! is `C` less sums of demands, so its float noise is on the scale of `C`
//! even when it and `D` are small (a flow's last bytes against what a
//! class leaves).
//!
//! A flow that starts between rounds sends nothing until the next round
//! (its first request); a flow that finishes returns its allocation at the
//! next round (its FIN), so the bandwidth it leaves idles until then, as it
//! would on a real network. Rates are constant within a round, so the engine
//! stays exact; the sum of ARs on a link never exceeds its capacity
//! (`AR <= C - A`), so every allocation is feasible (with virtual
//! capacity, below, the rates are clipped to keep it so).
//!
//! Work conservation in multi-hop settings (4.3.2-4.3.3) comes from the
//! demand: a high-priority flow bottlenecked downstream lowers its demand to
//! that bottleneck's NR + delta, and an upstream link gives the rest to
//! lower classes (`ClassAvlBW` subtracts demands, not capacities). Two
//! details follow Algorithm 1 literally: within a class the share is
//! `ClassAvlBW / F_k`, not a water level over the flows' demands (so a
//! class whose flows are partly bottlenecked elsewhere may leave some of
//! its share to the next class only), and a flow whose demand fits is given
//! exactly its demand.
//!
//! # The task's size at a link
//!
//! The paper (4.3.1): "We maintain a counter that keeps track of the total
//! bytes reserved by flows of a task, which we use as proxy for the
//! task's size. If the task size exceeds a pre-determined threshold, the
//! task is marked as heavy"; and the threshold is one "in terms of task
//! size" taken from the task-size distribution (3.3, `threshold=p80`). So
//! the counter stands for bytes of the task, and a reservation counts as
//! far as the flow uses it: a flow sends at the least AR of its path, so
//! what a link grants above that (the NR + delta a flow bottlenecked
//! elsewhere asks, Algorithm 2; a new flow's NIC rate) and what a virtual
//! capacity above `C` overcommits are no bytes of the task and would turn
//! it heavy early. By default (`task_size=sent`) a link counts, per round,
//! the bytes each flow of the task sends through it: its final rate (the
//! least AR of its path, clipped to the real capacities) times `rtt`, at
//! most the bytes it has left. The packet level counts the same thing,
//! the payload of the task's data packets that arrive at the port
//! (`coflowkit_packet::spc`). `task_size=granted` counts the ARs the link
//! granted, times `rtt`, whether the flows used them or not.
//!
//! # Virtual capacity (footnote 5), `vc_gain > 0`
//!
//! Demands overstate what flows send (NR + delta, a new flow's NIC rate),
//! so `ClassAvlBW` withholds capacity from lower classes. The paper's fix
//! is a virtual capacity raised while the link is under-used and lowered
//! when it is over-used, as in RCP; it gives no formula. Ours
//! ([`virtual_capacity`], the one rule of both levels): after round
//! `k`, per link, `Cv <- clamp(Cv + vc_gain * (C - y), C, vc_max * C)` with
//! `y` the rate offered to the link (the least AR of each of its flows'
//! paths, summed), `|C - y|` within [`RATE_TIE`] counting as 0. Round
//! `k + 1` uses `Cv` for `C` in Algorithm 1 (`ClassAvlBW` and `AR <= Cv -
//! A`). A link offered `y > C` (possible only while `Cv > C`) passes
//! less than offered (a fluid stand-in for the queue, which has no place
//! in this simulator): the flows that send their last bytes in the round
//! (their least AR carries all they have left in one RTT,
//! [`sends_its_last`]) in full, the others scaled to what is left
//! ([`clip`]); a flow sends at its least AR times the least factor of its
//! path. Scaling a flow's last round instead would leave a sliver, scaled
//! again the next round, and so on: its end would slide to within
//! nanoseconds of a tick, where float noise decides whether it is still
//! there for the next round's classes. Invariant: the rates handed to the engine never sum
//! above `C` on any link. With `Cv = C` nothing changes from the above. A
//! link with no flow at some round (its last flow gone before the tick,
//! no new one by then) starts again from `C`: a link's credit is for the
//! flows that left it room, not for idle time (a packet port with no task
//! resets the same way). A round computed
//! twice at one instant (a flow ending on the tick) restarts from the rate
//! state before the first (demands, least NRs, ARs, virtual capacities).
//!
//! # Speed: rounds that change nothing are skipped
//!
//! Each round is computed in full, but a round whose outcome equals the
//! previous one (every demand, every AR and every least NR the same within
//! [`RATE_TIE`], no flow set up for the first time) is a fixed point: the
//! next round has the same inputs unless a sender's buffered bytes fall
//! below its demand times `rtt`, or a light task's reserved bytes on some
//! link reach the threshold. Both are linear in time, so the scheduler
//! computes the first round where either can happen and sleeps until the
//! round before it (one early, so float noise can only wake it sooner);
//! skipped rounds' reservations are added when it wakes (or when a flow
//! starts or finishes, which wakes it at the next round anyway). Sums
//! taken in a different order can make an AR flip by one ulp from round
//! to round forever; within [`RATE_TIE`] that is no change, so skipping
//! moves rates by at most 1e-9 relative from what computing every round
//! gives (checked against a reference that computes every round).
//!
//! # Cost, and refusing a workload too large for it
//!
//! A computed round costs about [`NS_PER_FLOW_ROUND`] per active flow,
//! and a flow is active for at least its bytes at its NIC rate, so a
//! workload costs at least `sum over flows of (bits / NIC rate / rtt)`
//! flow-rounds ([`least_flow_rounds`]): on FB2010 (706,397 flows, an hour
//! of arrivals) that is about 3 G flow-rounds at 100 us, 6 minutes or more
//! (its first 200 coflows alone ran over 25 minutes without finishing),
//! where `fifo-lm` (its idealized stand-in) takes seconds. Drivers that
//! know the fabric check the estimate before they run ([`check_budget`];
//! `simulate` does, and the CLI leaves a refused `baraat` out of its
//! default list): above `budget` (`300s` by default, `inf` for no limit)
//! the run is refused up front with the estimate in one line; a coarser
//! round (`rtt=`) divides the estimate.
//!
//! What it knows: `Knows = KnowsSizes`, only for each sender's own buffered
//! bytes (Algorithm 2, line 2). Nothing else reads a size: heavy tasks are
//! found from the bytes counted at each link. Allocation classes are left at 0 (classes are
//! per link here, not per flow).

pub mod host;

use crate::descriptor::{
    Kind, Needs, Param, Params, Parts, SchedulerDescriptor, Switch, TASK_ID_PARAMS,
};
use crate::fifo_lm::THRESHOLD_PARAM;
use crate::spec::Hint;
use crate::tasks::{TaskIdConfig, TaskIds};
use crate::AnyScheduler;
use crate::{Allocation, Changes, Clairvoyant, CoflowIdx, FlowIdx, KnowsSizes, Scheduler};
use coflowkit_model::{Dur, Time};

/// `baraat`: Smart Priority Classes per link, explicit feedback every RTT.
pub const BARAAT: SchedulerDescriptor = SchedulerDescriptor {
    cost: 1000.0,
    parts: Parts {
        host: Some(crate::baraat::host::build),
        switch: Switch::SmartPriorityClasses,
        preflight: Some(check_budget),
        ..Parts::NONE
    },
    name: "baraat",
    description: "Baraat's Smart Priority Classes per link, explicit feedback every RTT",
    paper: "Baraat (SIGCOMM 2014) 4.1, 4.3 (classifier 4.3.1, Algorithms 1-2)",
    params: &[
        THRESHOLD_PARAM,
        Param {
            key: "rtt",
            kind: Kind::Duration,
            default: "100us",
            unit: "",
            help: "round length (the paper's RTT), above 0",
        },
        Param {
            key: "delta",
            kind: Kind::Rate,
            default: "10Mbps",
            unit: "",
            help: "Algorithm 2's delta",
        },
        Param {
            key: "share",
            kind: Kind::Choice(&["equal", "fill"]),
            default: "equal",
            unit: "",
            help: "equal: Algorithm 1 as written; fill: also what a class leaves unused",
        },
        Param {
            key: "vc",
            kind: Kind::Number,
            default: "0",
            unit: "",
            help: "virtual capacity gain per round (0: none)",
        },
        Param {
            key: "vc_max",
            kind: Kind::Number,
            default: "10",
            unit: "x C",
            help: "upper bound of the virtual capacity, 1 or more",
        },
        Param {
            key: "task_size",
            kind: Kind::Choice(&["sent", "granted"]),
            default: "sent",
            unit: "",
            help: "a task's size at a link, for the threshold: sent: bytes its flows sent through it; granted: its ARs times the RTT",
        },
        TASK_ID_PARAMS[0],
        TASK_ID_PARAMS[1],
        BUDGET_PARAM,
    ],
    needs: Needs {
        hints: &[Hint::CoflowSizes],
        ..Needs::SIZES
    },
    build: |p, hints| {
        let config = BaraatConfig::of_params(p, hints)?;
        Ok(AnyScheduler::Clairvoyant(Box::new(Baraat::new(config))))
    },
};

/// `budget`: the estimated CPU time above which drivers refuse the run
/// ([`check_budget`]).
const BUDGET_PARAM: Param = Param {
    key: "budget",
    kind: Kind::Duration,
    default: "300s",
    unit: "",
    help: "refuse a workload estimated to take longer than this (inf: never refuse)",
};

/// CPU nanoseconds one active flow costs in one computed round, measured
/// on FB2010's first 30 coflows (docs/lab/benchmarks-history.md): the
/// unit of [`check_budget`]'s estimate. The cost grows with contention
/// (flows that wait are active too), so on a loaded trace the estimate is
/// a lower bound.
pub const NS_PER_FLOW_ROUND: f64 = 120.0;

/// The least number of flow-rounds of `rtt` a workload whose network flows
/// carry `flow_bytes` takes part in on NICs of `nic_bps`: each flow is
/// active at least its bits over its NIC rate.
pub fn least_flow_rounds(flow_bytes: &[f64], nic_bps: f64, rtt: Dur) -> f64 {
    let rtt_s = rtt.0.max(1) as f64 * 1e-9;
    flow_bytes.iter().map(|b| b * 8.0 / nic_bps).sum::<f64>() / rtt_s
}

/// Baraat's preflight ([`Parts::preflight`]): refuses a `baraat` run with
/// parameters `p` on a workload with `hints` over `fabric` when its
/// estimated CPU time (the least flow-rounds times [`NS_PER_FLOW_ROUND`])
/// is above its `budget`; the error says the estimate and what to do
/// instead, in one line.
pub fn check_budget(
    p: &Params<'_>,
    hints: &crate::WorkloadHints,
    fabric: &coflowkit_model::Fabric,
) -> Result<(), crate::SchedulerError> {
    let budget = match p.given("budget") {
        Some("inf") => return Ok(()),
        _ => p.dur("budget")?.unwrap_or(Dur::from_millis(300_000)),
    };
    let rtt = p
        .positive_dur("rtt", "an RTT must be above 0")?
        .unwrap_or(BaraatConfig::default().rtt);
    let nic = fabric
        .links()
        .iter()
        .map(|l| l.capacity.0)
        .fold(0.0, f64::max);
    if nic <= 0.0 {
        return Ok(());
    }
    let rounds = least_flow_rounds(&hints.flow_sizes, nic, rtt);
    let secs = rounds * NS_PER_FLOW_ROUND * 1e-9;
    if secs <= budget.0 as f64 * 1e-9 {
        return Ok(());
    }
    Err(p.bad(
        "budget",
        format!(
            "refused: on this workload baraat computes at least {:.2e} flow-rounds of {} us \
             (estimated {:.0} min or more of CPU, over its budget of {} s); use fifo-lm, its \
             idealized stand-in, a coarser round (rtt=), or budget=inf",
            rounds,
            rtt.0 as f64 * 1e-3,
            secs / 60.0,
            budget.0 as f64 * 1e-9
        ),
    ))
}

/// Rates within this much (relative) of each other are equal in Algorithm
/// 1's `AvailShare > D` (relative to the larger of `D` and `C`, the scale
/// `AvailShare` is computed at) and Algorithm 2's `MinNR < Demand`:
/// demands and shares are computed from progress and sums in different
/// orders, and exact ties (a demand that is exactly what the class leaves)
/// are common on regular workloads, so float noise must not decide them.
pub const RATE_TIE: f64 = 1e-9;

/// A flow's nominal rate when its demand does not fit beside its class.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Share {
    /// Algorithm 1 line 8 as written: `ClassAvlBW / F_k`.
    Equal,
    /// The larger of that and `AvailShare` (what the other flows of the
    /// class leave by their demands): a flow bottlenecked elsewhere lowers
    /// its demand and the others may take the rest, so the class converges
    /// to max-min (our variant, `share=fill`).
    Fill,
}

/// `baraat`'s parameters.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct BaraatConfig {
    /// Heavy threshold on a task's size at a link ([`TaskSize`], bytes).
    pub threshold: f64,
    /// Round length, one RTT (ns).
    pub rtt: Dur,
    /// Algorithm 2's delta added to the least NR of a bottlenecked flow
    /// (bits/s).
    pub delta: f64,
    /// How tasks get ids.
    pub tasks: TaskIdConfig,
    /// The nominal rate of a flow whose demand does not fit.
    pub share: Share,
    /// Virtual capacity gain (footnote 5, RCP's rule): after each round a
    /// link's virtual capacity moves by `vc_gain · (C - y)`, `y` the rate
    /// offered to it. 0 (the default) keeps it at `C`.
    pub vc_gain: f64,
    /// Upper bound of the virtual capacity, as a multiple of `C`.
    pub vc_max: f64,
    /// What the classifier counts as a task's size at a link.
    pub task_size: TaskSize,
}

/// What the classifier (4.3.1) counts as a task's size at a link, the
/// counter it compares with the heavy threshold.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TaskSize {
    /// The bytes its flows sent through the link: each flow's rate (the
    /// least AR of its path, within the link's real capacity) times the
    /// round, never more than it had left (`task_size=sent`, the default).
    Sent,
    /// The ARs the link granted the task's flows, times the round, what
    /// they sent or not (`task_size=granted`).
    Granted,
}

impl Default for BaraatConfig {
    fn default() -> BaraatConfig {
        BaraatConfig {
            threshold: f64::INFINITY,
            rtt: Dur::from_micros(100),
            delta: 10e6,
            tasks: TaskIdConfig::default(),
            share: Share::Equal,
            vc_gain: 0.0,
            vc_max: 10.0,
            task_size: TaskSize::Sent,
        }
    }
}

impl BaraatConfig {
    /// The configuration of a `baraat` spec's checked parameters (the
    /// packet engine's switches and hosts read the same keys).
    pub fn of_params(
        p: &crate::descriptor::Params<'_>,
        hints: &crate::WorkloadHints,
    ) -> Result<BaraatConfig, crate::SchedulerError> {
        let mut config = BaraatConfig {
            tasks: TaskIdConfig::of_params(p)?,
            ..BaraatConfig::default()
        };
        if let Some(rtt) = p.positive_dur("rtt", "an RTT must be above 0")? {
            config.rtt = rtt;
        }
        if let Some(delta) = p.rate("delta")? {
            if !(delta.is_finite() && delta >= 0.0) {
                let v = p.value("delta");
                return Err(p.bad("delta", format!("'{v}' is not a rate of 0 or more")));
            }
            config.delta = delta;
        }
        config.share = match p.choice("share")? {
            "fill" => Share::Fill,
            _ => Share::Equal,
        };
        config.task_size = match p.choice("task_size")? {
            "granted" => TaskSize::Granted,
            _ => TaskSize::Sent,
        };
        for (key, slot, min) in [
            ("vc", &mut config.vc_gain, 0.0),
            ("vc_max", &mut config.vc_max, 1.0),
        ] {
            let expected = format!("a number of {min} or more");
            if let Some(x) = p.number(key, |x| x.is_finite() && x >= min, &expected)? {
                *slot = x;
            }
        }
        // Checked here, used by drivers (`check_budget`).
        if p.given("budget") != Some("inf") {
            p.dur("budget")?;
        }
        // Last: a percentile needs the workload (see fifo-lm).
        config.threshold = p.percentile_or_bytes("threshold", hints)?;
        Ok(config)
    }
}

/// The counters Algorithm 1 reads for one flow at one link, and its demand.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct FeedbackInput {
    /// Link capacity `C`, bits/s.
    pub capacity: f64,
    /// Sum of the demands of the classes before the flow's, bits/s.
    pub higher_demand: f64,
    /// `D_k`: the demands of the other flows of the flow's class, bits/s.
    pub class_demand: f64,
    /// `F_k`: flows in the flow's class, the flow included.
    pub class_flows: u32,
    /// `A`: the allocations (ARs) of the other flows on the link, bits/s.
    pub allocated: f64,
    /// The flow's demand `D`, bits/s.
    pub demand: f64,
}

/// Algorithm 1, lines 3-10: the actual rate AR and nominal rate NR for one
/// flow at one link (bits/s).
pub fn feedback(i: FeedbackInput, share: Share) -> (f64, f64) {
    let class_avl = (i.capacity - i.higher_demand).max(0.0);
    let avail_share = (class_avl - i.class_demand).max(0.0);
    let equal = class_avl / i.class_flows.max(1) as f64;
    // `AvailShare` is `C` less sums: its noise is relative to `C`, not to a
    // small `D` (found by the differential tests: a flow's last bytes, 2.4
    // Mbit/s, against what a 500 Mbit/s class left, equal in exact
    // arithmetic, 0.04 bit/s apart in floats).
    let tie = RATE_TIE * i.demand.max(i.capacity).max(1.0);
    let nr = if avail_share - i.demand > tie {
        i.demand
    } else if share == Share::Fill {
        equal.max(avail_share)
    } else {
        equal
    };
    let ar = nr.min((i.capacity - i.allocated).max(0.0));
    (ar, nr)
}

/// Algorithm 2: a sender's demand for the next round (bits/s), from its NIC
/// rate, its buffered bytes per round (as bits/s), and, once the flow is
/// set up, its previous demand and the least NR of the previous feedback.
pub fn demand(nic: f64, buffered_rate: f64, previous: Option<(f64, f64)>, delta: f64) -> f64 {
    let d = nic.min(buffered_rate);
    match previous {
        Some((prev_demand, min_nr)) if min_nr < prev_demand - RATE_TIE * prev_demand.max(1.0) => {
            d.min(min_nr + delta)
        }
        _ => d,
    }
}

/// Whether a flow offering `rate` (bits/s) sends its last bytes in a round
/// of `rtt_s` seconds: it has at most `rate · rtt` left (within
/// [`RATE_TIE`]), so it would end on the next tick.
pub fn sends_its_last(rate: f64, remaining_bytes: f64, rtt_s: f64) -> bool {
    let buffered = remaining_bytes.max(0.0) * 8.0 / rtt_s;
    rate > 0.0 && rate >= buffered - RATE_TIE * buffered.max(1.0)
}

/// Footnote 5's virtual capacity after one interval (a round here, an
/// `SpcPort` interval at packet level: both levels call this): a link
/// that carries flows (`offered`, the rate offered to it in the interval,
/// bits/s) moves from `vcap` by `gain · (C - offered)`, `|C - offered|`
/// within [`RATE_TIE`] of `C` counting as 0, and stays within `[C, vc_max
/// · C]`; a link with none (`None`) is back at `C`, so an idle link keeps
/// no credit from its idle time. `gain = 0`: always `C`.
pub fn virtual_capacity(
    vcap: f64,
    capacity: f64,
    offered: Option<f64>,
    gain: f64,
    vc_max: f64,
) -> f64 {
    match offered {
        Some(y) if gain > 0.0 => {
            let err = if (capacity - y).abs() > RATE_TIE * capacity {
                capacity - y
            } else {
                0.0
            };
            (vcap + gain * err).clamp(capacity, capacity * vc_max.max(1.0))
        }
        _ => capacity,
    }
}

/// With virtual capacity, what a link of real capacity `c` passes of the
/// flows offered to it, `y` bits/s in all, of which `y_last` from flows
/// sending their last bytes ([`sends_its_last`]): `(factor of those,
/// factor of the others)`. Within `c`, everything. Above, the last bytes
/// pass in full and the others share what is left, `(c - y_last) / (y -
/// y_last)`; if the last bytes alone exceed `c`, they get `c / y_last` and
/// the others nothing. Both factors move continuously with the rates.
///
/// Why the last bytes first: scaling a flow in its last round by `1 - e`
/// leaves `e` of its bytes, which it sends the next round at a rate
/// scaled again, and so on: its end slides to a few nanoseconds after a
/// tick, where float noise decides whether the flow is still there for the
/// next round's classes (a discontinuity). Passed in full, it ends on the
/// tick, as without virtual capacity.
pub fn clip(c: f64, y_last: f64, y: f64) -> (f64, f64) {
    if y <= c {
        (1.0, 1.0)
    } else if y_last <= c {
        let rest = y - y_last;
        (1.0, if rest > 0.0 { (c - y_last) / rest } else { 1.0 })
    } else {
        (c / y_last, 0.0)
    }
}

/// Whether a rate moved by more than float noise ([`RATE_TIE`]) from one
/// round to the next.
fn moved(new: f64, old: f64) -> bool {
    if new == old {
        false
    } else if !new.is_finite() || !old.is_finite() {
        true
    } else {
        (new - old).abs() > RATE_TIE * new.abs().max(old.abs()).max(1.0)
    }
}

#[derive(Debug, Clone, Default)]
struct FlowState {
    task: u64,
    setup: bool,
    demand: f64,
    min_nr: f64,
    /// AR granted by each link of the path, in path order.
    ar: Vec<f64>,
    new_demand: f64,
    new_min_nr: f64,
    /// The round that last wrote `setup`, `demand`, `min_nr` and `ar`, and
    /// their values before it: a round computed again at the same instant
    /// (a flow ending on the tick) starts from the same state.
    round: Option<i64>,
    before: (bool, f64, f64),
    ar_before: Vec<f64>,
}

#[derive(Debug, Clone)]
struct LinkTask {
    task: u64,
    n_flows: u32,
    reserved: f64,
    /// Bytes counted per round ([`TaskSize`]) at the last computed round.
    grant: f64,
    heavy: bool,
}

#[derive(Debug, Clone, Default)]
struct LinkState {
    /// (task id, flow, position of the link in the flow's path), sorted.
    members: Vec<(u64, FlowIdx, u32)>,
    /// Per task seen on the link, sorted by task id.
    tasks: Vec<LinkTask>,
    busy: bool,
    /// Virtual capacity (bits/s), 0 until the link first carries a flow.
    vcap: f64,
    /// The round that last updated `vcap`, and its value before: a round
    /// computed again at the same instant (a flow ending on the tick)
    /// starts from the same virtual capacity.
    vcap_round: i64,
    vcap_before: f64,
    /// When the link's last flow left (ns), while it has none.
    idle_from: Option<u64>,
}

/// Baraat with Smart Priority Classes; see the module doc.
#[derive(Debug)]
pub struct Baraat {
    config: BaraatConfig,
    tasks: TaskIds,
    flows: Vec<FlowState>,
    links: Vec<LinkState>,
    busy: Vec<u32>,
    /// Links each coflow has counters on.
    coflow_links: Vec<Vec<u32>>,
    /// Reservations of rounds up to this one are in the counters.
    credited: i64,
    /// The round the scheduler sleeps until.
    planned: Option<i64>,
    scratch_class: Vec<u32>,
    scratch_old: Vec<(f64, u32)>,
    /// Per link: rate offered in the current round, then the clip factor;
    /// the same for the flows that send their last bytes in the round.
    scratch_y: Vec<f64>,
    scratch_last: Vec<f64>,
    rounds: u64,
}

impl Baraat {
    /// A `baraat` scheduler.
    pub fn new(config: BaraatConfig) -> Baraat {
        Baraat {
            tasks: TaskIds::new(config.tasks),
            config,
            flows: vec![],
            links: vec![],
            busy: vec![],
            coflow_links: vec![],
            credited: -1,
            planned: None,
            scratch_class: vec![],
            scratch_old: vec![],
            scratch_y: vec![],
            scratch_last: vec![],
            rounds: 0,
        }
    }

    /// How many rounds were computed (the others were skipped as fixed
    /// points).
    pub fn rounds_computed(&self) -> u64 {
        self.rounds
    }

    fn rtt(&self) -> u64 {
        self.config.rtt.0.max(1)
    }

    fn is_heavy(&self, reserved: f64) -> bool {
        let t = self.config.threshold;
        t.is_finite() && reserved >= t - 1e-6 * t.max(1.0)
    }

    /// Adds the reservations of rounds `credited + 1 ..= k` at the grants of
    /// the last computed round.
    fn credit_through(&mut self, k: i64) {
        if k <= self.credited {
            return;
        }
        let n = (k - self.credited) as f64;
        for &l in &self.busy {
            for t in &mut self.links[l as usize].tasks {
                if t.grant > 0.0 {
                    t.reserved += n * t.grant;
                }
            }
        }
        self.credited = k;
    }

    fn zero_grants(&mut self) {
        for &l in &self.busy {
            for t in &mut self.links[l as usize].tasks {
                t.grant = 0.0;
            }
        }
    }

    fn link_task(&mut self, l: u32, task: u64, coflow: CoflowIdx) -> &mut LinkTask {
        let link = &mut self.links[l as usize];
        let i = match link.tasks.binary_search_by_key(&task, |t| t.task) {
            Ok(i) => i,
            Err(i) => {
                link.tasks.insert(
                    i,
                    LinkTask {
                        task,
                        n_flows: 0,
                        reserved: 0.0,
                        grant: 0.0,
                        heavy: false,
                    },
                );
                let cl = &mut self.coflow_links[coflow as usize];
                cl.push(l);
                i
            }
        };
        if !link.busy {
            link.busy = true;
            self.busy.push(l);
        }
        &mut link.tasks[i]
    }

    fn start(&mut self, now: Time, view: &Clairvoyant<'_>, f: FlowIdx) {
        let c = view.coflow_of(f);
        let task = self.tasks.get(c).0;
        if self.flows.len() <= f as usize {
            self.flows.resize(f as usize + 1, FlowState::default());
        }
        if self.coflow_links.len() <= c as usize {
            self.coflow_links.resize(c as usize + 1, vec![]);
        }
        let path = view.path(f);
        self.flows[f as usize] = FlowState {
            task,
            setup: false,
            demand: 0.0,
            min_nr: f64::INFINITY,
            ar: vec![0.0; path.len()],
            new_demand: 0.0,
            new_min_nr: f64::INFINITY,
            round: None,
            before: (false, 0.0, f64::INFINITY),
            ar_before: vec![],
        };
        let rtt = self.rtt();
        for (pos, l) in path.iter().enumerate() {
            self.link_task(l.0, task, c).n_flows += 1;
            let link = &mut self.links[l.0 as usize];
            // A link that had no flow at some round since its last one left
            // starts again from its capacity.
            if let Some(idle) = link.idle_from.take() {
                if idle.div_ceil(rtt) * rtt < now.0 {
                    let c = view.capacities()[l.0 as usize];
                    link.vcap = virtual_capacity(link.vcap, c, None, 0.0, 1.0);
                }
            }
            let members = &mut link.members;
            let key = (task, f, pos as u32);
            let i = members.partition_point(|m| *m < key);
            members.insert(i, key);
        }
    }

    fn finish(&mut self, now: Time, view: &Clairvoyant<'_>, f: FlowIdx) {
        let task = self.flows[f as usize].task;
        for l in view.path(f) {
            let link = &mut self.links[l.0 as usize];
            if let Ok(i) = link
                .members
                .binary_search_by_key(&(task, f), |m| (m.0, m.1))
            {
                link.members.remove(i);
                if link.members.is_empty() {
                    link.idle_from = Some(now.0);
                }
            }
            if let Ok(i) = link.tasks.binary_search_by_key(&task, |t| t.task) {
                link.tasks[i].n_flows -= 1;
            }
        }
        self.flows[f as usize].ar = vec![];
    }

    fn drop_coflow(&mut self, c: CoflowIdx) {
        let Some(links) = self.coflow_links.get_mut(c as usize) else {
            return;
        };
        let links = std::mem::take(links);
        let task = self.tasks.get(c).0;
        for l in links {
            let link = &mut self.links[l as usize];
            if let Ok(i) = link.tasks.binary_search_by_key(&task, |t| t.task) {
                link.tasks.remove(i);
            }
        }
    }

    /// Computes round `k`; returns whether its outcome differs from the
    /// previous round's.
    fn round(&mut self, k: i64, view: &Clairvoyant<'_>, out: &mut Allocation) -> bool {
        self.rounds += 1;
        self.credit_through(k - 1);
        let rtt_s = self.rtt() as f64 * 1e-9;
        let delta = self.config.delta;
        let mut changed = false;
        // 1. Senders (Algorithm 2).
        for &f in view.active_flows() {
            let st = &mut self.flows[f as usize];
            if st.round == Some(k) {
                (st.setup, st.demand, st.min_nr) = st.before;
                st.ar.clone_from(&st.ar_before);
            } else {
                st.round = Some(k);
                st.before = (st.setup, st.demand, st.min_nr);
                st.ar_before.clone_from(&st.ar);
            }
            let nic = view.capacities()[view.path(f)[0].0 as usize];
            let buffered = view.remaining(f).max(0.0) * 8.0 / rtt_s;
            let prev = st.setup.then_some((st.demand, st.min_nr));
            st.new_demand = demand(nic, buffered, prev, delta);
            st.new_min_nr = f64::INFINITY;
            changed |= !st.setup || moved(st.new_demand, st.demand);
        }
        // 2-3. Links: classify, then Algorithm 1 in priority order.
        let busy = std::mem::take(&mut self.busy);
        let mut still_busy = Vec::with_capacity(busy.len());
        for &l in &busy {
            let real_cap = view.capacities()[l as usize];
            let mut link = std::mem::take(&mut self.links[l as usize]);
            if link.vcap_round == k {
                link.vcap = link.vcap_before;
            }
            if link.members.is_empty() || link.vcap <= 0.0 {
                // No flow (or none yet): back at `C`.
                link.vcap = virtual_capacity(link.vcap, real_cap, None, 0.0, 1.0);
            }
            let cap = link.vcap;
            link.vcap_round = i64::MIN;
            for t in &mut link.tasks {
                t.grant = 0.0;
                t.heavy = self.is_heavy(t.reserved);
            }
            if link.members.is_empty() {
                link.busy = !link.tasks.is_empty();
                if link.busy {
                    still_busy.push(l);
                }
                self.links[l as usize] = link;
                continue;
            }
            // Classes: runs of tasks (with flows here) where all but the last
            // are heavy. Old per-class demand sums and set-up flow counts.
            let classes = &mut self.scratch_class;
            let old = &mut self.scratch_old;
            classes.clear();
            old.clear();
            let mut class = 0u32;
            let mut ti = 0;
            let mut cur_task = None;
            let mut a_old_rest = 0.0;
            for m in &link.members {
                if cur_task != Some(m.0) {
                    // The task before this one (at `ti`) closes its class if light.
                    if cur_task.is_some() && !link.tasks[ti].heavy {
                        class += 1;
                    }
                    while link.tasks[ti].task != m.0 {
                        ti += 1;
                    }
                    cur_task = Some(m.0);
                }
                classes.push(class);
                if old.len() <= class as usize {
                    old.push((0.0, 0));
                }
                let st = &self.flows[m.1 as usize];
                if st.setup {
                    old[class as usize].0 += st.demand;
                    old[class as usize].1 += 1;
                }
                a_old_rest += st.ar[m.2 as usize];
            }
            // Algorithm 1 for each flow in order.
            let mut higher = 0.0; // new demands of earlier classes
            let mut cur = u32::MAX;
            let (mut new_sum, mut old_rest, mut new_count, mut old_count) = (0.0, 0.0, 0u32, 0u32);
            let mut a_new = 0.0;
            ti = 0;
            for (i, m) in link.members.iter().enumerate() {
                let k = classes[i];
                if k != cur {
                    higher += new_sum;
                    cur = k;
                    new_sum = 0.0;
                    new_count = 0;
                    old_rest = old[k as usize].0;
                    old_count = old[k as usize].1;
                }
                let st = &mut self.flows[m.1 as usize];
                let pos = m.2 as usize;
                let (own_old_d, own_old_ar) = if st.setup {
                    (st.demand, st.ar[pos])
                } else {
                    (0.0, 0.0)
                };
                if !st.setup {
                    new_count += 1;
                }
                let (ar, nr) = feedback(
                    FeedbackInput {
                        capacity: cap,
                        higher_demand: higher,
                        class_demand: new_sum + (old_rest - own_old_d).max(0.0),
                        class_flows: old_count + new_count,
                        allocated: a_new + (a_old_rest - own_old_ar).max(0.0),
                        demand: st.new_demand,
                    },
                    self.config.share,
                );
                new_sum += st.new_demand;
                old_rest -= own_old_d;
                a_old_rest -= st.ar[pos];
                a_new += ar;
                changed |= moved(ar, st.ar[pos]);
                st.ar[pos] = ar;
                st.new_min_nr = st.new_min_nr.min(nr);
                while link.tasks[ti].task != m.0 {
                    ti += 1;
                }
                if self.config.task_size == TaskSize::Granted {
                    link.tasks[ti].grant += ar * rtt_s / 8.0;
                }
            }
            link.busy = true;
            still_busy.push(l);
            self.links[l as usize] = link;
        }
        self.busy = still_busy;
        // 4. Rates: the least AR of the path is what the flow offers.
        let caps = view.capacities();
        let y = &mut self.scratch_y;
        let y_last = &mut self.scratch_last;
        if y.len() < caps.len() {
            y.resize(caps.len(), 0.0);
            y_last.resize(caps.len(), 0.0);
        }
        let vc = self.config.vc_gain > 0.0;
        for &f in view.active_flows() {
            let st = &mut self.flows[f as usize];
            changed |= moved(st.new_min_nr, st.min_nr);
            st.setup = true;
            st.demand = st.new_demand;
            st.min_nr = st.new_min_nr;
            let rate = st.ar.iter().copied().fold(f64::INFINITY, f64::min);
            let rate = if rate.is_finite() { rate } else { 0.0 };
            let last = vc && sends_its_last(rate, view.remaining(f), rtt_s);
            for l in view.path(f) {
                y[l.0 as usize] += rate;
                if last {
                    y_last[l.0 as usize] += rate;
                }
            }
            out.set_rate(f, rate);
        }
        if vc {
            // Virtual capacity: a link whose offered load `y` exceeds `C`
            // (possible only when its virtual capacity is above `C`) passes
            // the flows that send their last bytes in full and scales the
            // rest to what is left ([`clip`]); a flow sends at the least of
            // its factors over its path times what it offers, so what
            // crosses every link stays within its real capacity.
            for &l in &self.busy {
                let link = &mut self.links[l as usize];
                let (c, yl) = (caps[l as usize], y[l as usize]);
                if !link.members.is_empty() {
                    let (gain, vc_max) = (self.config.vc_gain, self.config.vc_max);
                    let v = virtual_capacity(link.vcap, c, Some(yl), gain, vc_max);
                    changed |= moved(v, link.vcap);
                    link.vcap_round = k;
                    link.vcap_before = link.vcap;
                    link.vcap = v;
                }
                (y_last[l as usize], y[l as usize]) = clip(c, y_last[l as usize], yl);
            }
            for &f in view.active_flows() {
                let rate = out.rate(f);
                let factor = if sends_its_last(rate, view.remaining(f), rtt_s) {
                    &*y_last
                } else {
                    &*y
                };
                let s = view
                    .path(f)
                    .iter()
                    .map(|l| factor[l.0 as usize])
                    .fold(1.0, f64::min);
                if s < 1.0 {
                    out.set_rate(f, rate * s);
                }
            }
        }
        for &l in &self.busy {
            y[l as usize] = 0.0;
            y_last[l as usize] = 0.0;
        }
        if self.config.task_size == TaskSize::Sent {
            // A task's size at a link: what its flows send through it this
            // round (their final rates), never more than they have left.
            for &f in view.active_flows() {
                let bytes = (out.rate(f) * rtt_s / 8.0).min(view.remaining(f).max(0.0));
                let task = self.flows[f as usize].task;
                for l in view.path(f) {
                    let tasks = &mut self.links[l.0 as usize].tasks;
                    if let Ok(i) = tasks.binary_search_by_key(&task, |t| t.task) {
                        tasks[i].grant += bytes;
                    }
                }
            }
        }
        for &l in &self.busy {
            for t in &mut self.links[l as usize].tasks {
                t.reserved += t.grant;
            }
        }
        self.credited = k;
        changed
    }

    /// After a round that changed nothing: the round before the first one
    /// whose inputs may differ (a buffer falling below a demand, a task
    /// turning heavy on a link), or `None` if none will.
    fn next_change(&self, k: i64, view: &Clairvoyant<'_>, out: &Allocation) -> Option<i64> {
        let rtt = self.rtt() as f64;
        let mut first = f64::INFINITY; // rounds after k
        for &f in view.active_flows() {
            let st = &self.flows[f as usize];
            let rate = out.rate(f);
            if rate <= 0.0 {
                continue;
            }
            // buffered(k + j) * 8 / rtt < demand, with buffered falling by
            // rate * rtt / 8 per round.
            let buffered = view.remaining(f) * 8e9 / rtt;
            first = first.min(((buffered - st.demand) / rate).floor() + 1.0);
        }
        if self.config.threshold.is_finite() {
            let t = self.config.threshold;
            let thr = t - 1e-6 * t.max(1.0);
            for &l in &self.busy {
                for lt in &self.links[l as usize].tasks {
                    if lt.n_flows > 0 && !lt.heavy && lt.grant > 0.0 {
                        // Round k + j classifies with reserved + (j - 1) * grant.
                        first = first.min(((thr - lt.reserved) / lt.grant).ceil().max(0.0) + 1.0);
                    }
                }
            }
        }
        first
            .is_finite()
            .then(|| k + (first - 1.0).clamp(1.0, 1e15) as i64)
    }
}

impl Scheduler for Baraat {
    type Knows = KnowsSizes;
    fn name(&self) -> &str {
        "baraat"
    }
    fn schedule(
        &mut self,
        now: Time,
        view: Clairvoyant<'_>,
        changes: &Changes,
        out: &mut Allocation,
    ) -> Option<Time> {
        if self.links.len() < view.n_links() {
            self.links.resize(view.n_links(), LinkState::default());
        }
        let rtt = self.rtt();
        self.tasks.assign(&view.observed(), &changes.arrived);
        let flows_changed = !changes.started.is_empty() || !changes.finished.is_empty();
        if flows_changed {
            // Rounds before now had the old flows: credit them, then nothing
            // until the next computed round (the next tick).
            self.credit_through(now.0.div_ceil(rtt) as i64 - 1);
            self.zero_grants();
            self.planned = Some(now.0.div_ceil(rtt) as i64);
        }
        for &f in &changes.finished {
            self.finish(now, &view, f);
        }
        for &c in &changes.finished_coflows {
            self.drop_coflow(c);
        }
        for &f in &changes.started {
            self.start(now, &view, f);
        }
        if view.active_flows().is_empty() {
            self.planned = None;
            return None;
        }
        if (now.0 / rtt) * rtt == now.0 {
            let k = (now.0 / rtt) as i64;
            let due = match self.planned {
                None => true,
                Some(p) => p <= k,
            };
            if due || changes.timer {
                let changed = self.round(k, &view, out);
                self.planned = if changed {
                    Some(k + 1)
                } else {
                    self.next_change(k, &view, out)
                };
            }
        } else if self.planned.is_none() {
            self.planned = Some(now.0.div_ceil(rtt) as i64);
        }
        self.planned.map(|p| Time(p as u64 * rtt))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn check_budget_refuses_only_a_workload_over_it() {
        let fabric = coflowkit_model::Fabric::big_switch(4, coflowkit_model::BitsPerSec::GBPS)
            .expect("a big switch");
        let hints = |bytes: f64| crate::WorkloadHints {
            coflow_sizes: vec![bytes],
            flow_sizes: vec![bytes],
        };
        let check = |spec: &str, bytes: f64| {
            crate::registry::preflight(
                &crate::SchedulerSpec::parse(spec).unwrap(),
                &hints(bytes),
                &fabric,
            )
            .err()
            .map(|e| e.to_string())
        };
        // 1 GB at 1 Gbit/s: 8 s, 80,000 rounds of 100 us.
        assert_eq!(
            least_flow_rounds(&[1e9], 1e9, Dur::from_micros(100)),
            80_000.0
        );
        assert_eq!(check("baraat", 1e9), None);
        // 1 PB: 8e10 flow-rounds, about 160 min at 120 ns each.
        let refused = check("baraat", 1e15).expect("refused");
        assert!(refused.starts_with("scheduler 'baraat': parameter 'budget': refused"));
        assert!(
            refused.contains("8.00e10 flow-rounds of 100 us"),
            "{refused}"
        );
        assert!(!refused.contains('\n'));
        assert_eq!(check("baraat:budget=inf", 1e15), None);
        assert_eq!(check("baraat:rtt=1s", 1e15), None);
        assert_eq!(check("fifo-lm", 1e15), None);
        assert!(check("baraat:budget=soon", 1.0)
            .unwrap()
            .contains("'budget'"));
    }

    fn input(higher: f64, class: f64, n: u32, alloc: f64, d: f64) -> FeedbackInput {
        FeedbackInput {
            capacity: 10.0,
            higher_demand: higher,
            class_demand: class,
            class_flows: n,
            allocated: alloc,
            demand: d,
        }
    }

    #[test]
    fn algorithm_1_by_hand() {
        let feedback = |i| feedback(i, Share::Equal);
        // Alone on an idle link, demand 4 of 10: NR = AR = 4.
        assert_eq!(feedback(input(0.0, 0.0, 1, 0.0, 4.0)), (4.0, 4.0));
        // Higher classes ask for 7: ClassAvlBW = 3; another flow of the class
        // asks 1, AvailShare = 2 < 4: NR = 3 / 2; A = 9 leaves 1: AR = 1.
        assert_eq!(feedback(input(7.0, 1.0, 2, 9.0, 4.0)), (1.0, 1.5));
        // Higher classes ask for more than C: nothing.
        assert_eq!(feedback(input(12.0, 0.0, 1, 0.0, 4.0)), (0.0, 0.0));
        // AvailShare exactly D is not > D: the equal share (10 / 1).
        assert_eq!(feedback(input(0.0, 6.0, 1, 0.0, 4.0)), (10.0, 10.0));
        // Demand fits beside the class: NR = D, limited by what others hold.
        assert_eq!(feedback(input(2.0, 3.0, 2, 7.0, 4.0)), (3.0, 4.0));
    }

    #[test]
    fn fill_offers_what_the_class_leaves() {
        // C = 10, one other flow of the class asks 1 (bottlenecked
        // elsewhere), this one 12: Equal offers 10 / 2 = 5, Fill the 9
        // the other leaves.
        let i = input(0.0, 1.0, 2, 1.0, 12.0);
        assert_eq!(feedback(i, Share::Equal), (5.0, 5.0));
        assert_eq!(feedback(i, Share::Fill), (9.0, 9.0));
        // When the others ask more than the equal share, both offer it.
        let i = input(0.0, 8.0, 2, 0.0, 12.0);
        assert_eq!(feedback(i, Share::Fill), feedback(i, Share::Equal));
    }

    #[test]
    fn avail_share_ties_on_the_scale_of_c() {
        // C = 500 Mbit/s, the others of the class ask C - D and 0.04 bit/s
        // of float noise less: AvailShare = D + 0.04, a tie within 1e-9 of
        // C (0.5 bit/s), though not of D (0.0024 bit/s): not > D, so NR is
        // the class's share (Fill: the equal 100 Mbit/s, not D).
        let d = 2_383_684.08;
        let i = FeedbackInput {
            capacity: 5e8,
            higher_demand: 0.0,
            class_demand: 5e8 - d - 0.04,
            class_flows: 5,
            allocated: 0.0,
            demand: d,
        };
        assert_eq!(feedback(i, Share::Fill), (1e8, 1e8));
        // 1 bit/s is more than noise: D fits.
        let i = FeedbackInput {
            class_demand: 5e8 - d - 1.0,
            ..i
        };
        assert_eq!(feedback(i, Share::Fill), (d, d));
    }

    #[test]
    fn clip_passes_last_bytes_first() {
        // Within C: everything.
        assert_eq!(clip(10.0, 3.0, 9.0), (1.0, 1.0));
        // 12 offered, 4 of it last bytes: those pass, the 8 others share 6.
        assert_eq!(clip(10.0, 4.0, 12.0), (1.0, 0.75));
        // Last bytes alone over C: they share C, the others wait.
        assert_eq!(clip(10.0, 20.0, 25.0), (0.5, 0.0));
        // A flow sends its last bytes when its rate carries what it has
        // left in one round: 1250 bytes in 100 us is 100 Mbit/s.
        assert!(sends_its_last(100e6, 1250.0, 100e-6));
        assert!(sends_its_last(100e6 * (1.0 - 1e-12), 1250.0, 100e-6));
        assert!(!sends_its_last(99e6, 1250.0, 100e-6));
        assert!(!sends_its_last(0.0, 0.0, 100e-6));
    }

    #[test]
    fn virtual_capacity_by_hand() {
        let step = |v, y| virtual_capacity(v, 10.0, y, 0.5, 2.0);
        // Offered 6 of 10: up by 0.5 x 4; offered 16: down by 3.
        assert_eq!(step(10.0, Some(6.0)), 12.0);
        assert_eq!(step(12.0, Some(16.0)), 10.0);
        // Within [C, vc_max x C].
        assert_eq!(step(19.0, Some(0.0)), 20.0);
        assert_eq!(step(10.0, Some(30.0)), 10.0);
        // Offered C within float noise: no change.
        assert_eq!(step(15.0, Some(10.0 * (1.0 + 1e-12))), 15.0);
        // No flow: back at C, whatever it was; no gain: C.
        assert_eq!(step(20.0, None), 10.0);
        assert_eq!(virtual_capacity(15.0, 10.0, Some(0.0), 0.0, 2.0), 10.0);
    }

    #[test]
    fn algorithm_2_by_hand() {
        // New flow: min(NIC, buffered / RTT).
        assert_eq!(demand(1e9, 5e9, None, 1e7), 1e9);
        assert_eq!(demand(1e9, 2e8, None, 1e7), 2e8);
        // Bottlenecked elsewhere (least NR 3e8 < previous demand 1e9):
        // NR + delta.
        assert_eq!(demand(1e9, 5e9, Some((1e9, 3e8)), 1e7), 3.1e8);
        // Not bottlenecked (least NR = previous demand): back to the NIC rate.
        assert_eq!(demand(1e9, 5e9, Some((3.1e8, 3.1e8)), 1e7), 1e9);
        // The bottleneck freed a little (NR 3.05e8 < 3.1e8): still NR + delta.
        assert_eq!(demand(1e9, 5e9, Some((3.1e8, 3.05e8)), 1e7), 3.15e8);
        // Buffer below NR + delta wins.
        assert_eq!(demand(1e9, 1e8, Some((1e9, 3e8)), 1e7), 1e8);
    }
}
