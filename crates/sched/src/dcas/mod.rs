//! `dcas`: D-CAS, decentralized coflow-aware scheduling by sender-receiver
//! negotiation (Luo, Yu, Zhao, Wu, Wang, Li, "Minimizing Average Coflow
//! Completion Time with Decentralized Scheduling", ICC 2015).
//!
//! # The policy (paper III-IV)
//!
//! A *subcoflow* is the flows of one coflow that leave one source host
//! (III-A). Every subcoflow has a priority tuple `<T, P>`, lower is higher
//! (`T` first, then `P`), carried by all its flows. Every port serves
//! strictly by priority, pFabric-like and work-conserving: a flow of lower
//! priority uses what higher ones leave, and flows of equal priority share
//! max-min (III-B). The network part is thus strict priority between classes
//! with per-flow max-min inside a class, the allocation rule of `fifo` and
//! `fifo-lm`, with the same machinery: on the big switch the classes (runs
//! of subcoflows with equal priority, in priority order) are walked in
//! order by [`ClassServer`], leaving out flows that meet a full link (they
//! would get nothing and take nothing); on multi-hop fabrics, or with
//! `solver=incremental`, every flow is a demand of [`IncrementalMaxMin`] in
//! the class [`Priority::class`] of its subcoflow.
//!
//! On the big switch an event costs what it changes, in two steps. An event
//! that changes no priority and no flow (a receiver's announcement, the
//! feedback, most ticks) keeps every rate: the allocation reads nothing
//! else. And in the walk a class gets what it got at its last turn, without
//! a solve, when its subcoflows and their flows are the same and the links
//! it read show, bit for bit, the residual capacity they showed then (the
//! idea of `fifo`'s `ClassCache`): max-min inside the class reads nothing
//! else. A subcoflow blocked behind full links reads only the links that
//! showed it blocked (its uplink, most often), so a class of many waiting
//! subcoflows lists few links. The turn is remembered by the class's first subcoflow, not
//! its priority, so that a big coflow, whose subcoflows all negotiate the
//! same `<1, P>` (Ψ = Φ = max) with a `P` that moves every tick, keeps its
//! turn while the classes before it leave it the same capacity.
//!
//! A class that is solved costs one pass over its subcoflows' flows to
//! list its links and members (a subcoflow's one uplink open, the flows
//! whose downlink is open; each subcoflow keeps its flows' downlinks in a
//! row beside them) and one `PairSolver` solve: every path on the
//! big switch is two links, so the solve does [`ClassServer::serve_flows`]'s
//! progressive filling step for step on the same values (rates and
//! residuals to the bit, which debug builds check against
//! [`coflowkit_alloc::MaxMin`]) with no path lists, and keeps each link's
//! level between steps, computing it again only when its residual or
//! weight moved, so a step reads levels without dividing; the picked
//! link's residual, which each of its demands takes from in turn, is held
//! in a register through the step (the same subtractions in the same
//! order), and its weight, not read again, is only zeroed. Each member's
//! rate, as the allocation holds it after it is set, is written in a row
//! beside the solve, and the service recount reads that row (debug builds
//! compare it with the allocation), so a member's entries in the
//! allocation are visited once per solve. Most solves on
//! FB2010 come of residuals that moved under a class whose subcoflows did
//! not change: its lists stay from its last turn when every link they
//! hold is full or open as it was then (the members would come out the
//! same; debug builds list anew and compare), so such a solve reads no
//! flow but its members. When its subcoflows did change (a flow of one
//! finished, most often) and every listed link is full or open as then,
//! each subcoflow of the last turn with the same flows takes its run of
//! members from the kept lists and only the others read their flows (the
//! lists come out as a listing makes them, in its order: debug builds
//! list anew and compare). The listing writes each member's two links in a
//! row beside it, and the solve's demands (each demand's links and count,
//! each link's demands and weight, the links in index order) are made from
//! that row once and kept with the lists: a solve on kept lists only sets
//! levels from the residuals and fills (debug builds make the demands anew
//! and compare). When no two members share a path (each open
//! subcoflow's flows go to distinct downlinks and no two share an uplink:
//! one flow per path, as FB2010's coflows are) each member is its own
//! demand, found without looking its path up.
//!
//! The protocol costs one pass over each negotiating subcoflow's flows per
//! tick, and, most ticks, not one step per message: bytes left are summed
//! again only after a flow of the subcoflow had a rate; an announcement is
//! one queued entry for all its receivers (their list shared with the
//! subcoflow). With no loss a coflow's batch of announcements (at one
//! instant, by sender) is kept as its [`Board`]; when the next batch has
//! the same senders with the same receiver lists (94% of FB2010's messages
//! on its first 200 coflows: the same senders announce every tick, and a
//! list is made anew only after a join or leave), a receiver whose cache
//! held exactly that batch's entries (a *follower*) would update it wholly
//! in place, so its cache stays the board's values and its reply is Ψ of
//! them, once per group of followers with the same senders; a sender's
//! feedback with Φ = max is the largest reply of the groups it reached.
//! The other coflows' copies are laid out by receiver, each a (coflow,
//! sender, value) in a row, and receivers update their caches per
//! (receiver, coflow) in place while the same senders announce, merging
//! only the rest, and reply through a table of Ψ per (coflow, receiver),
//! which each sender reads in its receivers' order; a board goes (its
//! followers' caches written back) when its coflow's batch differs, and the
//! batch makes the next. Debug builds read every held board's batch afresh
//! by the copying path (each receiver's full cache: reply and cache after)
//! and compare. With Ψ = max a cache updated wholly in place replies the
//! largest value it was set to (no second pass), and with Φ = max (and no
//! decision log) a round's feedback is kept as its largest value alone.
//!
//! Priorities are set by the hosts, with no controller (IV):
//!
//! * **Sender, Pseudocode 1.** Every `delta` (δ, default 100 ms) each
//!   sender runs, for each of its subcoflows `S` of coflow `c`, with `rem`
//!   the bytes `S` has left at this sender and `d` its desired priority:
//!   1. `rem < threshold` (default 1 MiB): `<0, cp>`, `cp` the coflow's
//!      arrival order (FIFO, like Baraat's task id);
//!   2. else, if `S` got no service during the last `T` (default 1 s):
//!      `<1, 0>` (starvation freedom: every starving subcoflow shares at
//!      the top of the large class);
//!   3. else: announce `d` to the receivers of `S` (the destinations of its
//!      flows), wait for the negotiation (two message delays: there and
//!      back) and set `<1, Φ(M)>` with `M` the feedback values received for
//!      this announcement, or `<1, d>` when none came (all lost).
//! * **Receiver, Pseudocode 2.** A receiver caches the latest desired
//!   priority per (coflow, sender); on an announcement it updates the entry,
//!   drops entries older than `expiry` (default 2 s) and replies
//!   `Ψ(cached values of that coflow)` to the announcer.
//! * `Ψ = Φ = max` by default (IV, "Design of Ψ and Φ"); `min` and `mean`
//!   can be chosen. The desired priority is `rem / NIC rate` (IV, "About
//!   getDesiredPriority"), the time `S` would take alone on its sender's
//!   uplink, in whole `quantum`s (default 1 µs; rounded to the nearest), or
//!   a constant: `desired=1` with `threshold=0` is per-flow fair sharing, as
//!   the paper notes (every subcoflow is `<1, 1>`).
//! * Control messages arrive `msg_delay` (default 100 µs) after they are
//!   sent and are lost with probability `loss` (default 0). A message's
//!   fate is a seeded hash (splitmix64, [`coflowkit_model::fabric::mix`]) of
//!   the seed, the message kind, the coflow id, sender, receiver and the
//!   sender's announcement number for that subcoflow: the same in every
//!   run, and independent of the order events are handled in.
//!
//! # What a host knows
//!
//! D-CAS reads the bytes a subcoflow has left at its sender
//! (`getLocalRemSize`), so the scheduler is clairvoyant: its `Knows` is
//! [`KnowsSizes`]. It is clairvoyant only about a sender's *own* flows, as a
//! host is about the data its application hands it, so the state lives per
//! host as in the real system: a sender reads sizes through [`Local`], a
//! view bound to its host (it refuses another host's flows), and keeps only
//! its own subcoflows and the feedback it received; a receiver keeps only
//! its cache and learns only what announcements tell it. Two things are
//! global on purpose: the coflow's arrival order `cp` (Baraat's task id,
//! handed out in arrival order by the framework) and the tick grid (every
//! host ticks at the multiples of δ).
//!
//! # Timing (integer nanoseconds, the driver's timer)
//!
//! The protocol runs on timed events inside the scheduler, the earliest of
//! which is the timer the scheduler asks the driver for. Every message takes
//! the same delay and every negotiation the same time, so each kind of
//! event comes due in the order it was made: one FIFO queue per kind
//! (announcements, one entry per run of Pseudocode 1 for all its receivers,
//! and decisions) and the next tick, merged by (instant, phase). Feedback
//! needs no queue: a reply arrives at the instant its negotiation ends,
//! before the decision, so it goes into its round's feedback when the
//! receiver replies (a later run of Pseudocode 1 drops it, as it would drop
//! a reply still in flight). At one instant, in this order:
//! 1. flows that finished leave their subcoflows (a subcoflow with no flow
//!    left is forgotten by its sender; receivers keep its entries until they
//!    expire); flows that started join theirs, and a subcoflow that appears
//!    (its first flow at this host starts) runs Pseudocode 1 at once
//!    (before that it has no priority; an announcement at once gets it the
//!    interim priority `<1, d>` until its negotiation ends);
//! 2. protocol events due now, phase by phase: announcements reach
//!    receivers; receivers reply (after every announcement due now at that
//!    instant has updated the caches, so simultaneous announcements see each
//!    other, as in the paper's Fig. 2: one Ψ per receiver and coflow);
//!    feedback reaches senders (in the order receivers replied); senders
//!    whose negotiation ends now decide; the periodic tick runs Pseudocode 1
//!    for every subcoflow of every host (one that already ran at this
//!    instant does not run twice);
//! 3. rates are solved; a subcoflow is *served* while any of its flows has a
//!    rate above `EPS` × its sender's uplink capacity. "No service during
//!    the last T" is read by its sender's tick clock, as the host policy
//!    ([`crate::dcas::host`]) reads it from its acknowledged bytes: a run of
//!    Pseudocode 1 finds the subcoflow served if it had service at any time
//!    since its previous run (the previous tick, or its appearance), and
//!    it has then waited 0; else it has waited since the last run that
//!    found it served, or since its appearance, and it is starving when
//!    that is more than `T`. So a subcoflow served until just past a tick
//!    and not after waits from the next tick, not from the instant its
//!    service stopped (`Subcoflow::waited`). Service that ended no more
//!    than [`SNAP_NS`] after it began does not count: it is below the
//!    engine's resolution, most often one instant of exact arithmetic split
//!    in two (a start reached through rounded completions a nanosecond
//!    after an arrival), where a flow's rate for that nanosecond must not
//!    spare another subcoflow the starvation rule.
//!
//! Each run of Pseudocode 1 starts a new round: a negotiation still open
//! from an earlier round is dropped. `2 · msg_delay < delta` is required, so
//! a negotiation started at a tick ends before the next tick.
//!
//! Ties and tolerances: bytes left within [`BYTES_TIE`] of the threshold
//! count as not below it (the engine's integer-nanosecond rounding moves
//! bytes sent by fractions of a byte). Desired priorities are whole quanta,
//! so subcoflows whose remaining times round to the same quantum share
//! max-min.
//!
//! Messages name the sender's subcoflow by its slot and instance (a handle
//! the receiver echoes back, like a cookie), so a reply to a subcoflow
//! that is gone, or to an earlier round, is dropped in O(1).
//!
//! Correctness properties: every active flow's class is its subcoflow's
//! current priority (`Dcas::set_priority`, and new flows take it when they
//! join, after their subcoflow ran); a subcoflow's `n_served` counts its
//! flows with a rate above the floor (`solve_incremental` from the solver's
//! changed demands and at finishes; `solve_class` recounts a class's
//! subcoflows when it serves the class, and a class that keeps its turn
//! keeps its rates, hence their service); a class keeps its turn only when
//! its subcoflows, their change stamps (`changed_at`, moved by every join
//! and leave) and the residuals of the links it read are those of the turn
//! (`serve_classes`; `list_class` lists every link a member's path or a
//! blocked test reads); a class solved on the lists of its last turn has
//! the members a listing would give (`serve_class`: the same subcoflows
//! and every listed link full or open as then; checked against a listing
//! in debug builds); a class whose subcoflows changed, spliced from its
//! last turn's runs, has a listing's lists (`list_class` with the old
//! lists, checked against a listing in debug builds); a solve on kept
//! lists uses the demands a making would give (`PairSolver::serve`, against `PairSolver::make_setup` in
//! debug builds); a solved class's rates and residuals are
//! [`ClassServer::serve_flows`]'s to the bit (`PairSolver::serve`, checked
//! against [`coflowkit_alloc::MaxMin`] in debug builds, also where each
//! member is taken as its own demand, which checks that no path repeats;
//! the members' classes are their subcoflows' already, checked there too);
//! a solved class's service is counted from its members' rates as the
//! allocation holds them (`solve_class` reads them in a row from the solve,
//! checked against `Allocation::rate` in debug builds);
//! every flow with
//! a rate is a member of one current turn (members of a turn served again or gone are zeroed unless a class
//! gave them a rate in this round, `dropped`); a decision or feedback
//! applies only to the round that announced (`instance` and `round` checks
//! in `Dcas::live`, at decisions and when a receiver replies); a
//! subcoflow's cached bytes left are its flows' sum whenever none of them
//! had a rate since (`rem`, dropped at joins and leaves; `moved`, set
//! from the rates its class gives in `solve_class`). The
//! slow reference in `crates/sim/tests/reference/dcas.rs` implements the same
//! rules plainly and the engine is checked against it on random instances
//! (`crates/sim/tests/dcas.rs` checks each rule on cases computed by hand).

pub mod host;

use crate::class_server::ClassServer;
use crate::descriptor::{Kind, Needs, Param, Params, Parts, SchedulerDescriptor, SOLVER_PARAM};
use crate::spec::SchedulerError;
use crate::AnyScheduler;
use crate::{Allocation, Changes, Clairvoyant, CoflowIdx, FlowIdx, KnowsSizes, Scheduler};
use coflowkit_alloc::{IncrementalMaxMin, EPS};
use coflowkit_model::fabric::mix;
use coflowkit_model::parse;
use coflowkit_model::stats::BYTES_TIE;
use coflowkit_model::{CoflowId, Dur, HostId, Time, SNAP_NS};
use rustc_hash::FxHashMap;
use std::collections::VecDeque;
use std::fmt;
use std::sync::{Arc, Mutex};

/// `dcas`: senders negotiate subcoflow priorities with receivers.
pub const DCAS: SchedulerDescriptor = SchedulerDescriptor {
    cost: 55.0,
    parts: Parts {
        host: Some(crate::dcas::host::build),
        ..Parts::NONE
    },
    name: "dcas",
    description: "decentralized: senders negotiate subcoflow priorities with receivers (D-CAS)",
    paper: "Luo et al., ICC 2015, III-IV (Pseudocode 1 and 2), V-A for the defaults",
    params: &[
        dur_param("delta", "100ms", "how often senders run Pseudocode 1"),
        Param {
            key: "threshold",
            kind: Kind::Bytes,
            default: "1MiB",
            unit: "",
            help: "thresholdVolume: subcoflows with fewer bytes left are FIFO (0: none; inf: all)",
        },
        dur_param("t", "1s", "T: a subcoflow unserved for longer gets <1, 0>"),
        dur_param(
            "expiry",
            "2s",
            "how long a receiver keeps a desired priority",
        ),
        dur_param(
            "msg_delay",
            "100us",
            "one-way delay of a control message; 2 x msg_delay < delta",
        ),
        Param {
            key: "loss",
            kind: Kind::Number,
            default: "0",
            unit: "",
            help: "probability that a control message is lost",
        },
        Param {
            key: "seed",
            kind: Kind::Count,
            default: "0",
            unit: "",
            help: "seed of the loss draws",
        },
        Param {
            key: "psi",
            kind: Kind::Choice(COMBINE),
            default: "max",
            unit: "",
            help: "Psi, how receivers combine desired priorities",
        },
        Param {
            key: "phi",
            kind: Kind::Choice(COMBINE),
            default: "max",
            unit: "",
            help: "Phi, how senders combine granted priorities",
        },
        Param {
            key: "desired",
            kind: Kind::List,
            default: "bytes",
            unit: "",
            help: "bytes: bytes left / NIC rate; N: that constant; bands:B1/B2/..: bands reached",
        },
        dur_param(
            "quantum",
            "1us",
            "unit of desired priorities (rounded to the nearest)",
        ),
        SOLVER_PARAM,
        crate::host::AGE_PARAM,
        crate::dcas::host::HOST_PARAMS[0],
        crate::dcas::host::HOST_PARAMS[1],
        crate::dcas::host::HOST_PARAMS[2],
    ],
    needs: Needs::SIZES,
    build: |p, _| {
        let mut config = DcasConfig::default();
        config.apply(p)?;
        config
            .validate()
            .map_err(|(key, message)| p.bad(key, message))?;
        Ok(AnyScheduler::Clairvoyant(Box::new(Dcas::new(config))))
    },
};

/// The words of [`Combine`].
const COMBINE: &[&str] = &["max", "min", "mean"];

/// A duration parameter of D-CAS.
const fn dur_param(key: &'static str, default: &'static str, help: &'static str) -> Param {
    Param {
        key,
        kind: Kind::Duration,
        default,
        unit: "",
        help,
    }
}

/// How a receiver (Ψ) or a sender (Φ) combines priority values.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Combine {
    /// The largest (lowest priority): the paper's choice.
    Max,
    /// The smallest.
    Min,
    /// The mean, rounded to the nearest whole value (halves up).
    Mean,
}

impl Combine {
    /// The combination named `max`, `min` or `mean`.
    pub fn parse(s: &str) -> Option<Combine> {
        match s {
            "max" => Some(Combine::Max),
            "min" => Some(Combine::Min),
            "mean" => Some(Combine::Mean),
            _ => None,
        }
    }

    /// Combines `values`; `None` when there are none.
    pub fn apply(self, values: impl IntoIterator<Item = u64>) -> Option<u64> {
        let mut it = values.into_iter();
        match self {
            Combine::Max => it.max(),
            Combine::Min => it.min(),
            Combine::Mean => {
                let (mut sum, mut n) = (0u128, 0u128);
                for v in it.by_ref() {
                    sum += u128::from(v);
                    n += 1;
                }
                (n > 0).then(|| ((sum + n / 2) / n) as u64)
            }
        }
    }
}

/// A subcoflow's desired priority (`getDesiredPriority`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Desired {
    /// Remaining bytes at the sender / its NIC rate, in quanta (the paper).
    RemainingTime,
    /// Always this value (`desired=1`: per-flow fair sharing with
    /// `threshold=0`).
    Constant(u64),
    /// How many of these ascending byte counts the remaining bytes reach:
    /// the paper's priority cut into a few classes, as a switch's queues
    /// carry it (`desired=bands:B1/B2/B3`; the testbed's queues 4-7).
    Bands(Vec<u64>),
}

/// D-CAS's parameters (paper V-A, item 4, for the defaults).
#[derive(Debug, Clone, PartialEq)]
pub struct DcasConfig {
    /// δ: how often each sender runs Pseudocode 1.
    pub delta: Dur,
    /// `thresholdVolume`, bytes: subcoflows with less left are FIFO.
    pub threshold: f64,
    /// `T`: a subcoflow unserved for longer gets `<1, 0>`.
    pub starvation: Dur,
    /// How long a receiver keeps a desired priority.
    pub expiry: Dur,
    /// How long a control message takes.
    pub msg_delay: Dur,
    /// Probability that a control message is lost.
    pub loss: f64,
    /// Seed of the loss draws.
    pub seed: u64,
    /// Ψ, the receivers' combination.
    pub psi: Combine,
    /// Φ, the senders' combination.
    pub phi: Combine,
    /// The desired priority.
    pub desired: Desired,
    /// The unit of desired priorities (a time).
    pub quantum: Dur,
    /// Allocate with [`IncrementalMaxMin`] also on the big switch (not a
    /// D-CAS parameter: `solver=incremental`, to test one allocation against
    /// the other).
    pub incremental: bool,
}

impl Default for DcasConfig {
    /// δ = 100 ms, threshold 1 MiB ("1 MB", read as MiB as the workloads
    /// read the papers' MB), T = 1 s, expiry 2 s, messages 100 µs, no loss,
    /// Ψ = Φ = max, desired = remaining time in µs.
    fn default() -> DcasConfig {
        DcasConfig {
            delta: Dur::from_millis(100),
            threshold: (1u64 << 20) as f64,
            starvation: Dur::from_millis(1000),
            expiry: Dur::from_millis(2000),
            msg_delay: Dur::from_micros(100),
            loss: 0.0,
            seed: 0,
            psi: Combine::Max,
            phi: Combine::Max,
            desired: Desired::RemainingTime,
            quantum: Dur::from_micros(1),
            incremental: false,
        }
    }
}

impl Desired {
    /// A `desired=` value: `bytes`, `bands:B1/B2/..` (ascending byte
    /// counts) or a whole number.
    pub fn parse(value: &str) -> Result<Desired, String> {
        if value == "bytes" {
            Ok(Desired::RemainingTime)
        } else if let Some(list) = value.strip_prefix("bands:") {
            let bounds = list
                .split('/')
                .map(|b| parse::bytes(b).map(|x| x.0))
                .collect::<Result<Vec<u64>, String>>()
                .map_err(|e| format!("bands '{list}': {e}"))?;
            if bounds.is_empty() || bounds.windows(2).any(|w| w[0] >= w[1]) {
                return Err(format!(
                    "bands '{list}': give ascending byte counts, '/'-separated"
                ));
            }
            Ok(Desired::Bands(bounds))
        } else {
            Ok(Desired::Constant(parse::uint(value).map_err(|_| {
                format!("'{value}' is neither 'bytes', 'bands:B1/B2/..' nor a whole number")
            })?))
        }
    }
}

impl DcasConfig {
    /// Sets the parameter `key` (one of [`DCAS`]'s) from its spec text; the
    /// error says what is wrong with the value.
    pub fn set(&mut self, key: &str, value: &str) -> Result<(), String> {
        if !DCAS.params.iter().any(|p| p.key == key) {
            let known: Vec<&str> = DCAS.params.iter().map(|p| p.key).collect();
            return Err(format!("unknown key (known: {})", known.join(", ")));
        }
        let given = [(key.to_string(), value.to_string())];
        self.apply(&Params::new("dcas", &given, DCAS.params))
            .map_err(|e| match e {
                SchedulerError::BadParam { message, .. } => message,
                e => e.to_string(),
            })
    }

    /// Sets every parameter given in `p`.
    pub fn apply(&mut self, p: &Params<'_>) -> Result<(), SchedulerError> {
        for (key, slot) in [
            ("delta", &mut self.delta),
            ("t", &mut self.starvation),
            ("expiry", &mut self.expiry),
            ("msg_delay", &mut self.msg_delay),
            ("quantum", &mut self.quantum),
        ] {
            if let Some(d) = p.dur(key)? {
                *slot = d;
            }
        }
        if let Some(v) = p.given("threshold") {
            self.threshold = if v == "inf" {
                f64::INFINITY
            } else {
                p.bytes("threshold")?.unwrap_or(self.threshold)
            };
        }
        if let Some(loss) = p.parsed("loss", parse::nonneg_real)? {
            self.loss = loss;
        }
        if let Some(seed) = p.parsed("seed", parse::uint)? {
            self.seed = seed;
        }
        if p.given("psi").is_some() {
            self.psi = Combine::parse(p.choice("psi")?).unwrap_or(self.psi);
        }
        if p.given("phi").is_some() {
            self.phi = Combine::parse(p.choice("phi")?).unwrap_or(self.phi);
        }
        if p.given("solver").is_some() {
            self.incremental = p.choice("solver")? == "incremental";
        }
        if let Some(desired) = p.parsed("desired", Desired::parse)? {
            self.desired = desired;
        }
        Ok(())
    }

    /// Checks the parameters together; the error names the key at fault.
    pub fn validate(&self) -> Result<(), (&'static str, String)> {
        if self.delta == Dur::ZERO {
            return Err(("delta", "must be positive".into()));
        }
        if self.expiry == Dur::ZERO {
            return Err(("expiry", "must be positive".into()));
        }
        if self.quantum == Dur::ZERO {
            return Err(("quantum", "must be positive".into()));
        }
        if !(0.0..=1.0).contains(&self.loss) {
            return Err((
                "loss",
                format!("{} is not a probability in [0, 1]", self.loss),
            ));
        }
        if self.msg_delay.0.saturating_mul(2) >= self.delta.0 {
            return Err((
                "msg_delay",
                format!(
                    "a negotiation (2 x msg_delay = {} ns) must end before the next tick (delta = {} ns)",
                    self.msg_delay.0.saturating_mul(2),
                    self.delta.0
                ),
            ));
        }
        Ok(())
    }

    /// The desired priority of a subcoflow with `rem` bytes left at a sender
    /// whose NIC sends `nic_bps` bits/s.
    pub fn desired_of(&self, rem: f64, nic_bps: f64) -> u64 {
        match &self.desired {
            Desired::Constant(k) => *k,
            Desired::Bands(bounds) => bounds
                .iter()
                .filter(|&&b| rem + BYTES_TIE >= b as f64)
                .count() as u64,
            Desired::RemainingTime => {
                let ns = rem.max(0.0) * 8e9 / nic_bps;
                (ns / self.quantum.0 as f64).round() as u64
            }
        }
    }
}

/// A priority tuple `<T, P>`: lower is higher, `T` first (paper III-A).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Priority {
    /// `T`: 0 for small (FIFO) subcoflows, 1 for large ones.
    pub main: u8,
    /// `P`: the coflow's arrival order (`T = 0`), 0 when starving, or the
    /// negotiated priority in quanta.
    pub secondary: u64,
}

impl Priority {
    /// `<1, 0>`: a starving large subcoflow.
    pub const STARVING: Priority = Priority {
        main: 1,
        secondary: 0,
    };

    /// `<0, rank>`: a small subcoflow, by its coflow's arrival order.
    pub fn fifo(rank: u64) -> Priority {
        Priority {
            main: 0,
            secondary: rank,
        }
    }

    /// `<1, p>`: a large subcoflow.
    pub fn large(p: u64) -> Priority {
        Priority {
            main: 1,
            secondary: p,
        }
    }

    /// The class the allocation serves it in: the order of priorities as
    /// one `u64` (`T` in the top bit; `P` saturates at 2^63 - 1).
    pub fn class(self) -> u64 {
        (u64::from(self.main) << 63) | self.secondary.min(u64::MAX >> 1)
    }

    /// The class for drivers with priority queues, squeezed into 32 bits
    /// (`P` saturates at 2^31 - 1); the simulator serves [`Priority::class`].
    pub fn queue_class(self) -> u32 {
        (u32::from(self.main) << 31) | self.secondary.min((1 << 31) - 1) as u32
    }
}

impl fmt::Display for Priority {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "<{}, {}>", self.main, self.secondary)
    }
}

/// Which rule of Pseudocode 1 set a priority.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Rule {
    /// Below the threshold: `<0, cp>` (line 7).
    Fifo,
    /// No service during the last T: `<1, 0>` (line 9).
    Starving,
    /// A new subcoflow announced and waits for feedback: `<1, d>` meanwhile.
    Interim,
    /// Feedback came: `<1, Φ(M)>` (line 15).
    Negotiated,
    /// No feedback came: `<1, d>` (line 17).
    Fallback,
}

/// Pseudocode 1's case for a subcoflow with `rem` bytes left at its sender,
/// unserved for `waited`: [`Rule::Fifo`] below the threshold (lines 6-7;
/// within [`BYTES_TIE`] of it counts as not below), else
/// [`Rule::Starving`] if unserved for longer than `starvation` (lines
/// 8-9), else [`Rule::Interim`]: announce and negotiate (lines 10-17).
/// The flow-level model and the host policy ([`crate::dcas::host`]) both
/// decide by it.
pub fn pseudocode1(rem: f64, threshold: f64, waited: Dur, starvation: Dur) -> Rule {
    if rem + BYTES_TIE < threshold {
        Rule::Fifo
    } else if waited > starvation {
        Rule::Starving
    } else {
        Rule::Interim
    }
}

/// One priority decision, for tests and traces ([`Dcas::with_log`]).
#[derive(Debug, Clone, PartialEq)]
pub struct Decision {
    /// When.
    pub at: Time,
    /// The subcoflow's coflow.
    pub coflow: CoflowId,
    /// The subcoflow's sender.
    pub host: HostId,
    /// The rule that decided.
    pub rule: Rule,
    /// The priority set.
    pub priority: Priority,
    /// The desired priority (computed when the round started).
    pub desired: u64,
    /// The feedback values received (for `Negotiated`), in arrival order.
    pub feedback: Vec<u64>,
}

/// Where a [`Dcas`] writes its decisions.
pub type DecisionLog = Arc<Mutex<Vec<Decision>>>;

/// What one sender may read: the bytes its own flows have left, and where
/// they go. Bound to its host; another host's flow is refused.
#[derive(Clone, Copy)]
pub struct Local<'a> {
    view: Clairvoyant<'a>,
    host: HostId,
}

impl<'a> Local<'a> {
    /// Host `host`'s view.
    pub fn new(view: Clairvoyant<'a>, host: HostId) -> Local<'a> {
        Local { view, host }
    }
    #[inline]
    fn own(&self, f: FlowIdx) {
        if self.view.src(f) != self.host {
            refused(self.host, f);
        }
    }
    /// Bytes flow `f` (of this host) has left.
    #[inline]
    pub fn remaining(&self, f: FlowIdx) -> f64 {
        self.own(f);
        self.view.remaining(f)
    }
    /// Where flow `f` (of this host) goes.
    pub fn dst(&self, f: FlowIdx) -> HostId {
        self.own(f);
        self.view.dst(f)
    }
}

/// A host read another host's flow: a bug, out of the hot path.
#[cold]
#[inline(never)]
fn refused(host: HostId, f: FlowIdx) -> ! {
    panic!("host {host} read flow {f} of another host")
}

/// A subcoflow, as its sender keeps it.
#[derive(Debug, Clone)]
struct Subcoflow {
    coflow: CoflowIdx,
    host: HostId,
    // Unique per subcoflow ever made (messages name a slot and this), or
    // `GONE` once forgotten.
    instance: u32,
    flows: Vec<FlowIdx>,
    // Each flow's last link, in the order of `flows` (big switch: its
    // downlink), read in a row where the walk lists a class.
    lasts: Vec<u32>,
    priority: Option<Priority>,
    n_served: u32,
    // Its service as its sender's tick clock reads it (`Subcoflow::waited`):
    // the last run of Pseudocode 1 that found it served, or its appearance;
    // when its current service began (None while unserved); when its last
    // service that counts (longer than `SNAP_NS`) ended.
    served_at: Time,
    served_from: Option<Time>,
    served_until: Option<Time>,
    // Its last run of Pseudocode 1 (a tick, or its appearance).
    last_run: Time,
    // Runs of Pseudocode 1 so far; the open negotiation's desired priority.
    round: u32,
    pending: Option<u64>,
    feedback: Vec<u64>,
    // The distinct receivers of its flows (recomputed after flows join or
    // leave; shared with its announcements in flight), and the distinct
    // first and last links of their paths (big switch: to skip it when
    // either side is full; recomputed after joins).
    receivers: Option<Arc<[HostId]>>,
    ends: Option<(Vec<u32>, Vec<u32>)>,
    // Whether no two of its flows share a last link (so, with one first
    // link, no two share a path): found with `ends`; a leave keeps it true.
    distinct: bool,
    // When its flows last changed (`Dcas::n_changes` then): a class whose
    // subcoflows all show the stamps of its last turn has the same flows.
    changed_at: u64,
    // The bytes its flows had left when Pseudocode 1 last summed them (None
    // after a join or leave); whether a flow of it may have sent since
    // (`moved`: then they are summed again), and whether one had a positive
    // rate at its class's last serve (`sending`; big switch).
    rem: Option<f64>,
    moved: bool,
    sending: bool,
}

impl Subcoflow {
    /// It is served at `now` (a flow of it has a rate above the floor).
    fn served(&mut self, now: Time) {
        self.served_from.get_or_insert(now);
    }

    /// It is not served from `now`, having been. Service that lasted no
    /// more than `SNAP_NS` does not count: in exact arithmetic it is an
    /// instant's split (two events of one instant, one reached through
    /// rounded completions, stand a few nanoseconds apart) or too short for
    /// the engine to time.
    fn unserved(&mut self, now: Time) {
        if let Some(from) = self.served_from.take() {
            if now.0 - from.0 > SNAP_NS {
                self.served_until = Some(now);
            }
        }
    }

    /// How long it has gone unserved, read at a run of Pseudocode 1 at
    /// `now` (before `last_run` moves to `now`) by its sender's tick clock,
    /// as the host policy reads it ([`crate::dcas::host`]): served at this
    /// run if it had service at any time since its previous run (it is
    /// served now, or its last service ended after that run), and then it
    /// waited 0; else it waited since the last run that found it served,
    /// or since its appearance.
    fn waited(&mut self, now: Time) -> Dur {
        if self.served_from.is_some() || self.served_until.is_some_and(|u| u > self.last_run) {
            self.served_at = now;
        }
        now - self.served_at
    }
}

/// One class's last turn on the big switch: its subcoflows (slot and
/// change stamp, in order), the links its flows cross (each once, in the
/// order first met) with their residual before and after it, and the flows
/// it gave a rate.
#[derive(Debug, Default)]
struct ClassTurn {
    subs: Vec<(u32, u64)>,
    links: Vec<u32>,
    before: Vec<f64>,
    after: Vec<f64>,
    members: Vec<FlowIdx>,
    // Each member's path's two links, in a row with `members`.
    ends: Vec<(u32, u32)>,
    round: u64,
    // Which of `links` were full when listed; where each subcoflow's
    // members end in `members`; whether no two members share a path;
    // whether the lists were made (a turn made anew has none).
    full: Vec<bool>,
    member_ends: Vec<u32>,
    distinct: bool,
    listed: bool,
    // The demands [`PairSolver`] made of `members` (kept with the lists).
    setup: PairSetup,
}

/// The demands of a class's members as [`PairSolver`] makes them, kept
/// with the class's lists (the same members make the same demands): each
/// demand's two links and count, each member's demand, the solve's links
/// in index order with their demands (`adj[first..end]`, in demand order)
/// and weight. `valid` is false until made and after the lists change.
#[derive(Debug, Default)]
struct PairSetup {
    ends: Vec<(u32, u32)>,
    count: Vec<u32>,
    member_demand: Vec<u32>,
    live: Vec<u32>,
    first: Vec<u32>,
    end: Vec<u32>,
    weight: Vec<f64>,
    adj: Vec<u32>,
    valid: bool,
}

/// A class's lists, as [`Dcas::list_class`] makes them.
#[derive(Debug, Default)]
struct ClassLists {
    links: Vec<u32>,
    members: Vec<FlowIdx>,
    ends: Vec<(u32, u32)>,
    member_ends: Vec<u32>,
}

/// The links of a class's solve beyond which [`coflowkit_alloc::MaxMin`] fills with a heap
/// rather than by scans (its scan limit): [`PairSolver`] repeats the
/// scans' arithmetic, so a class touching more links goes to
/// [`ClassServer::serve_flows`].
const SCAN_LINKS: usize = 512;

/// Max-min of one class on the big switch, every flow's path two links
/// (its uplink and downlink): the rates and residuals of
/// [`ClassServer::serve_flows`] to the bit, without its generic solve.
///
/// [`ClassServer::serve_flows`] makes one demand per distinct path (in the
/// order the members first show it, `count` flows each, weight 1, no cap)
/// and [`coflowkit_alloc::MaxMin`] fills them by scans: each step picks the live link of the
/// least `(residual.max(0) / weight, index)`, freezes its unfrozen demands
/// at that level (in demand order) and takes `rate * count` from both links
/// of each. This does the same steps on the same values, with each link's
/// level kept between steps and computed again only when its residual or
/// weight moved (a step then reads the levels, with no division), and no
/// path lists (a demand is its two links). Debug builds solve the class
/// with [`coflowkit_alloc::MaxMin`] too and compare rates and residuals bit for bit.
#[derive(Debug, Default)]
struct PairSolver {
    // Per path: the demand it is this solve (valid when `path_stamp` is
    // `epoch`).
    path_stamp: Vec<u32>,
    path_demand: Vec<u32>,
    epoch: u32,
    // Per demand: its rate and whether it is frozen.
    rate: Vec<f64>,
    frozen: Vec<bool>,
    // Per link: unfrozen weight, level, and its demands (`adj[first..end]`
    // of the class's [`PairSetup`]); valid for the links in `live` (the
    // solve's links not yet left).
    link_stamp: Vec<u32>,
    weight: Vec<f64>,
    level: Vec<f64>,
    first: Vec<u32>,
    end: Vec<u32>,
    live: Vec<u32>,
}

impl PairSolver {
    /// Adds a demand on the links `a` and `b` to `setup` (its `ends`),
    /// counting it on each and putting a link this listing has not seen
    /// yet in `setup.live`.
    #[inline(always)]
    fn push_demand(&mut self, setup: &mut PairSetup, (a, b): (u32, u32), epoch: u32) {
        setup.ends.push((a, b));
        for l in [a, b] {
            let li = l as usize;
            if self.link_stamp[li] != epoch {
                self.link_stamp[li] = epoch;
                self.first[li] = 0;
                setup.live.push(l);
            }
            self.first[li] += 1;
        }
    }

    /// Makes `setup` the demands of the class's `members` (each on the
    /// path `ends` gives, in a row with them): one per distinct path in
    /// the order members first show it (with `distinct`, no two members
    /// share a path: one per member, found without looking paths up),
    /// and the links they cross in index order, each with its demands in
    /// demand order and its weight.
    fn make_setup(
        &mut self,
        obs: &crate::Observed<'_>,
        members: &[FlowIdx],
        ends: &[(u32, u32)],
        distinct: bool,
        setup: &mut PairSetup,
    ) {
        self.epoch = self.epoch.wrapping_add(1);
        if self.epoch == 0 {
            self.path_stamp.iter_mut().for_each(|s| *s = u32::MAX);
            self.link_stamp.iter_mut().for_each(|s| *s = u32::MAX);
            self.epoch = 1;
        }
        let epoch = self.epoch;
        setup.ends.clear();
        setup.count.clear();
        setup.member_demand.clear();
        setup.live.clear();
        if distinct {
            for &e in ends {
                self.push_demand(setup, e, epoch);
            }
            setup.count.resize(members.len(), 1);
            setup.member_demand.extend(0..members.len() as u32);
        } else {
            for (&f, &e) in members.iter().zip(ends) {
                let p = obs.path_idx(f) as usize;
                if self.path_stamp[p] != epoch {
                    self.path_stamp[p] = epoch;
                    self.path_demand[p] = setup.ends.len() as u32;
                    self.push_demand(setup, e, epoch);
                    setup.count.push(0);
                }
                let d = self.path_demand[p];
                setup.count[d as usize] += 1;
                setup.member_demand.push(d);
            }
        }
        // Links in index order (ties between levels go to the lower
        // index); `first` becomes each link's start in `adj`.
        setup.live.sort_unstable();
        let mut off = 0u32;
        for &l in &setup.live {
            let li = l as usize;
            let n = self.first[li];
            self.first[li] = off;
            self.end[li] = off;
            self.weight[li] = 0.0;
            off += n;
        }
        setup.adj.clear();
        setup.adj.resize(off as usize, 0);
        for (d, &(a, b)) in setup.ends.iter().enumerate() {
            let wc = 1.0 * f64::from(setup.count[d]);
            for l in [a as usize, b as usize] {
                setup.adj[self.end[l] as usize] = d as u32;
                self.end[l] += 1;
                self.weight[l] += wc;
            }
        }
        setup.first.clear();
        setup.end.clear();
        setup.weight.clear();
        for &l in &setup.live {
            let li = l as usize;
            setup.first.push(self.first[li]);
            setup.end.push(self.end[li]);
            setup.weight.push(self.weight[li]);
        }
        setup.valid = true;
    }

    /// Serves the class of active flows `members` (each on the path
    /// `ends` gives, in a row with them) max-min on `residual`, writing
    /// their rates into `out`, as [`ClassServer::serve_flows`] would (the
    /// members are in `class` already); false (and nothing done) when the
    /// class touches more than [`SCAN_LINKS`] links. With `distinct` (no
    /// two members share a path) each member is its own demand, found
    /// without looking up paths. The demands are `setup`'s when it is
    /// valid (made for these members: debug builds make them anew and
    /// compare), else they are made into it first.
    #[allow(clippy::too_many_arguments)]
    fn serve(
        &mut self,
        obs: &crate::Observed<'_>,
        members: &[FlowIdx],
        ends: &[(u32, u32)],
        distinct: bool,
        residual: &mut [f64],
        class: u32,
        out: &mut Allocation,
        setup: &mut PairSetup,
        (flow_round, round, got): (&mut [u64], u64, &mut Vec<f64>),
    ) -> bool {
        if self.path_stamp.len() < obs.n_paths() {
            self.path_stamp.resize(obs.n_paths(), 0);
            self.path_demand.resize(obs.n_paths(), 0);
        }
        if self.link_stamp.len() < residual.len() {
            let n = residual.len();
            self.link_stamp.resize(n, 0);
            self.weight.resize(n, 0.0);
            self.level.resize(n, 0.0);
            self.first.resize(n, 0);
            self.end.resize(n, 0);
        }
        #[cfg(debug_assertions)]
        if setup.valid {
            let mut fresh = PairSetup::default();
            self.make_setup(obs, members, ends, distinct, &mut fresh);
            assert_eq!(fresh.ends, setup.ends, "kept demands' links");
            assert_eq!(fresh.count, setup.count, "kept demands' counts");
            assert_eq!(
                fresh.member_demand, setup.member_demand,
                "kept members' demands"
            );
            assert_eq!(fresh.live, setup.live, "kept links");
            assert_eq!(
                (&fresh.first, &fresh.end),
                (&setup.first, &setup.end),
                "kept runs"
            );
            assert_eq!(fresh.adj, setup.adj, "kept links' demands");
            let same = fresh.weight.iter().zip(&setup.weight);
            assert!(
                same.into_iter().all(|(a, b)| a.to_bits() == b.to_bits()),
                "kept weights"
            );
        }
        if !setup.valid {
            self.make_setup(obs, members, ends, distinct, setup);
        }
        if setup.live.len() > SCAN_LINKS {
            return false;
        }
        #[cfg(debug_assertions)]
        let want = {
            // Demands by path in the order members first show them, each
            // with its members' count, as `ClassServer::serve_flows` makes
            // them; and each member's demand as found here.
            let mut solver = coflowkit_alloc::MaxMin::default();
            let mut demand_of = vec![u32::MAX; obs.n_paths()];
            let mut counts: Vec<u32> = vec![];
            for (&f, &(a, b)) in members.iter().zip(ends) {
                let p = obs.path_idx(f) as usize;
                let links: Vec<u32> = obs.path_links(p as u32).iter().map(|l| l.0).collect();
                assert_eq!(links, [a, b], "links of member {f}");
                if demand_of[p] == u32::MAX {
                    demand_of[p] = counts.len() as u32;
                    counts.push(0);
                }
                counts[demand_of[p] as usize] += 1;
            }
            for (&f, &d) in members.iter().zip(&setup.member_demand) {
                let p = obs.path_idx(f);
                assert_eq!(demand_of[p as usize], d, "demand of member {f}");
                if d as usize == solver.len() {
                    let links = obs.path_links(p).iter().copied();
                    assert_eq!(
                        setup.count[d as usize], counts[d as usize],
                        "count of demand {d}"
                    );
                    solver.push(links, 1.0, counts[d as usize], f64::INFINITY);
                }
            }
            let mut after = residual.to_vec();
            let rates = solver.solve(&mut after).to_vec();
            (rates, after)
        };
        // Each link's demands, weight and level.
        self.live.clear();
        self.live.extend_from_slice(&setup.live);
        for (i, &l) in setup.live.iter().enumerate() {
            let li = l as usize;
            self.first[li] = setup.first[i];
            self.end[li] = setup.end[i];
            self.weight[li] = setup.weight[i];
            self.level[li] = residual[li].max(0.0) / setup.weight[i];
        }
        let n = setup.ends.len();
        self.rate.clear();
        self.rate.resize(n, 0.0);
        self.frozen.clear();
        self.frozen.resize(n, false);
        let mut level: f64 = 0.0;
        let mut n_frozen = 0;
        while n_frozen < n {
            // The live link of the least (level, index); links with no
            // unfrozen weight leave.
            let (mut best, mut best_l) = (f64::INFINITY, NO_LINK);
            let mut k = 0;
            for i in 0..self.live.len() {
                let l = self.live[i];
                if self.weight[l as usize] <= 1e-12 {
                    continue;
                }
                self.live[k] = l;
                k += 1;
                let lv = self.level[l as usize];
                if lv < best {
                    (best, best_l) = (lv, l);
                }
            }
            self.live.truncate(k);
            if best_l == NO_LINK {
                break;
            }
            level = level.max(best);
            let l = best_l as usize;
            // `MaxMin`'s rate of a demand of weight 1 with no cap.
            #[allow(clippy::manual_clamp)]
            let r = (1.0 * level).min(f64::INFINITY).max(0.0);
            // The picked link's residual is taken from by each of its
            // demands in turn (the same steps, held in a register rather
            // than stored and loaded back per demand); its weight is not
            // read again (it leaves: 0 below).
            let mut residual_l = residual[l];
            for i in self.first[l] as usize..self.end[l] as usize {
                let d = setup.adj[i] as usize;
                if std::mem::replace(&mut self.frozen[d], true) {
                    continue;
                }
                n_frozen += 1;
                self.rate[d] = r;
                let count = f64::from(setup.count[d]);
                let (wc, use_) = (1.0 * count, r * count);
                residual_l -= use_;
                if residual_l < 0.0 {
                    residual_l = 0.0;
                }
                // Its other link: residual, weight and level (no path is
                // one link twice: `all_pairs`).
                let (a, b) = setup.ends[d];
                let m = if a as usize == l { b } else { a } as usize;
                residual[m] -= use_;
                if residual[m] < 0.0 {
                    residual[m] = 0.0;
                }
                self.weight[m] -= wc;
                if self.weight[m] > 1e-12 {
                    self.level[m] = residual[m].max(0.0) / self.weight[m];
                }
            }
            residual[l] = residual_l;
            self.weight[l] = 0.0;
        }
        // Each member's rate as `out` holds it (set now, or kept within
        // float noise) in a row in `got`, and marked given one in `round`,
        // while its entries are at hand.
        got.clear();
        for (&f, &d) in members.iter().zip(&setup.member_demand) {
            out.set_rate(f, self.rate[d as usize]);
            flow_round[f as usize] = round;
            got.push(out.rate(f));
            debug_assert_eq!(out.class(f), class, "class of member {f}");
        }
        #[cfg(debug_assertions)]
        {
            for (&f, &d) in members.iter().zip(&setup.member_demand) {
                let (got, exp) = (self.rate[d as usize], want.0[d as usize]);
                assert_eq!(got.to_bits(), exp.to_bits(), "rate of flow {f}");
            }
            let same = residual.iter().zip(&want.1);
            assert!(
                same.into_iter().all(|(a, b)| a.to_bits() == b.to_bits()),
                "residuals of the class's solve"
            );
        }
        true
    }
}

/// A receiver's cached desired priority.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct CacheEntry {
    sender: HostId,
    value: u64,
    at: Time,
}

/// Per host: its sender's subcoflows, its receiver's cache (per coflow,
/// entries sorted by sender).
#[derive(Debug, Default)]
struct Host {
    subcoflows: Vec<u32>,
    cache: FxHashMap<CoflowIdx, Vec<CacheEntry>>,
    nic_bps: f64,
}

/// One run of Pseudocode 1's announcement in flight: the same message to
/// every receiver in `to` (those whose copy is not lost; shared with the
/// subcoflow's receiver list when none is). `sub` and `instance` name the
/// sender's subcoflow (a handle the receiver echoes back, as a cookie).
#[derive(Debug, Clone)]
struct Announcement {
    at: Time,
    to: Arc<[HostId]>,
    from: HostId,
    coflow: CoflowIdx,
    sub: u32,
    instance: u32,
    round: u32,
    value: u64,
}

/// One receiver's copy of an announcement, as [`Dcas::receive`] groups
/// them: the batch's number of its coflow, its sender and value.
#[derive(Debug, Clone, Copy, Default)]
struct Received {
    no: u32,
    from: HostId,
    value: u64,
}

/// A coflow's last batch of announcements as its receivers read it, kept
/// while the same senders announce to the same receivers (the same lists,
/// shared with the subcoflows: a join or leave makes a new one), as they
/// do tick after tick. A receiver whose cache held exactly what the batch
/// told it (one entry per sender that announced to it, all set then) is a
/// *follower*: its cache is the board's values of its senders, not kept
/// in the host's cache until the board goes (`into_caches`), so a batch
/// that matches costs one Ψ per group of followers with the same senders
/// instead of a copy per receiver. Other receivers (a stale entry left by
/// a sender that no longer reaches them, most often) keep their caches
/// and read their groups as without a board.
#[derive(Debug, Default)]
struct Board {
    // The last batch, by sender: sender, its receivers, its value; when.
    from: Vec<HostId>,
    to: Vec<Arc<[HostId]>>,
    values: Vec<u64>,
    at: Time,
    // Groups: the senders (indices into `from`, in order) of group `g` are
    // `senders[starts[g]..starts[g + 1]]`; `own[g]` is the receiver of a
    // group that keeps its cache (NO_HOST for a group of followers);
    // `reply[g]` its last Ψ.
    starts: Vec<u32>,
    senders: Vec<u32>,
    own: Vec<u32>,
    reply: Vec<Option<u64>>,
    // The followers with their groups; each receiver's group by host id
    // (NO_GROUP: not a receiver); each announcement's groups, once each
    // (of announcement `i`: `touched[touch_starts[i]..touch_starts[i + 1]]`).
    followers: Vec<(HostId, u32)>,
    group_of: Vec<u32>,
    touch_starts: Vec<u32>,
    touched: Vec<u32>,
}

const NO_HOST: u32 = u32::MAX;
const NO_GROUP: u32 = u32::MAX;

impl Board {
    /// Whether announcements `run` (of one coflow, by sender) are the
    /// board's senders with the same receiver lists.
    fn matches(&self, batch: &[Announcement], run: &[u32]) -> bool {
        run.len() == self.from.len()
            && run
                .iter()
                .zip(self.from.iter().zip(&self.to))
                .all(|(&a, (&f, to))| {
                    let m = &batch[a as usize];
                    m.from == f && Arc::ptr_eq(&m.to, to)
                })
    }

    /// The senders of group `g`.
    fn group(&self, g: u32) -> &[u32] {
        &self.senders[self.starts[g as usize] as usize..self.starts[g as usize + 1] as usize]
    }

    /// Receiver `r`'s last reply.
    fn reply_to(&self, r: HostId) -> Option<u64> {
        self.reply[self.group_of[r.0 as usize] as usize]
    }

    /// Group `g`'s cache as the board holds it: one entry per sender.
    fn cache_of(&self, g: u32) -> impl Iterator<Item = CacheEntry> + '_ {
        self.group(g).iter().map(|&i| CacheEntry {
            sender: self.from[i as usize],
            value: self.values[i as usize],
            at: self.at,
        })
    }

    /// Group `g`'s messages at a batch that matches: its senders' values.
    fn messages_of(&self, g: u32) -> impl Iterator<Item = Received> + '_ {
        self.group(g).iter().map(|&i| Received {
            no: 0,
            from: self.from[i as usize],
            value: self.values[i as usize],
        })
    }

    /// The followers' caches written back to their hosts (the board goes).
    fn into_caches(self, c: CoflowIdx, hosts: &mut [Host]) {
        for &(r, g) in &self.followers {
            let cache = hosts[r.0 as usize].cache.entry(c).or_default();
            cache.clear();
            cache.extend(self.cache_of(g));
        }
    }

    /// The board of coflow `c`'s announcements `run` (by sender), read now
    /// by the receivers' caches in `hosts`; `lists` is scratch (a list per
    /// host, left empty).
    fn new(
        c: CoflowIdx,
        batch: &[Announcement],
        run: &[u32],
        now: Time,
        hosts: &[Host],
        lists: &mut [Vec<u32>],
    ) -> Board {
        let mut b = Board {
            at: now,
            starts: vec![0],
            group_of: vec![NO_GROUP; hosts.len()],
            ..Board::default()
        };
        let mut receivers = vec![];
        for (i, &a) in run.iter().enumerate() {
            let m = &batch[a as usize];
            b.from.push(m.from);
            b.to.push(m.to.clone());
            b.values.push(m.value);
            for r in m.to.iter() {
                let list = &mut lists[r.0 as usize];
                if list.is_empty() {
                    receivers.push(*r);
                }
                list.push(i as u32);
            }
        }
        let mut groups: FxHashMap<Vec<u32>, u32> = FxHashMap::default();
        for r in receivers {
            let list = std::mem::take(&mut lists[r.0 as usize]);
            let cache = hosts[r.0 as usize].cache.get(&c);
            let follows = cache.is_some_and(|e| e.len() == list.len());
            let n = b.own.len() as u32;
            let g = if follows {
                *groups.entry(list.clone()).or_insert(n)
            } else {
                n
            };
            if g == n {
                b.senders.extend_from_slice(&list);
                b.starts.push(b.senders.len() as u32);
                b.own.push(if follows { NO_HOST } else { r.0 });
                b.reply.push(None);
            }
            if follows {
                b.followers.push((r, g));
            }
            b.group_of[r.0 as usize] = g;
            lists[r.0 as usize] = list;
            lists[r.0 as usize].clear();
        }
        let mut seen = vec![u32::MAX; b.own.len()];
        b.touch_starts.push(0);
        for (i, to) in b.to.iter().enumerate() {
            for r in to.iter() {
                let g = b.group_of[r.0 as usize];
                if seen[g as usize] != i as u32 {
                    seen[g as usize] = i as u32;
                    b.touched.push(g);
                }
            }
            b.touch_starts.push(b.touched.len() as u32);
        }
        b
    }
}

/// Pseudocode 2 at one receiver for one coflow: the announcements due now
/// (`group`, by sender) update `cache` (live entries, one per sender, by
/// sender): expired entries go, announced ones are set or added: in place
/// while the group's senders are the cache's (the same senders announce
/// every tick), then by one merge of the rest (entries set in place are
/// what the merge would make). Returns the reply, `psi` of the cache's
/// values (with Ψ = max and every entry set in place, the largest value
/// set). `merged` is scratch.
fn read_group(
    cache: &mut Vec<CacheEntry>,
    group: &[Received],
    now: Time,
    expiry: Dur,
    psi: Combine,
    merged: &mut Vec<CacheEntry>,
) -> Option<u64> {
    let mut k = 0;
    let mut top = 0;
    for (m, e) in group.iter().zip(cache.iter_mut()) {
        if m.from != e.sender {
            break;
        }
        (e.value, e.at) = (m.value, now);
        top = top.max(m.value);
        k += 1;
    }
    let in_place = k == group.len() && k == cache.len();
    if !in_place {
        merged.clear();
        merged.extend_from_slice(&cache[..k]);
        let live = |e: &&CacheEntry| e.at + expiry > now;
        for m in &group[k..] {
            let passed = cache[k..].iter().take_while(|e| e.sender < m.from).count();
            merged.extend(cache[k..k + passed].iter().filter(live));
            k += passed;
            k += usize::from(cache.get(k).is_some_and(|e| e.sender == m.from));
            merged.push(CacheEntry {
                sender: m.from,
                value: m.value,
                at: now,
            });
        }
        merged.extend(cache[k..].iter().filter(live));
        std::mem::swap(cache, merged);
    }
    debug_assert!(
        cache.windows(2).all(|w| w[0].sender < w[1].sender)
            && cache.iter().all(|e| e.at + expiry > now),
        "a receiver's cache: live entries, one per sender, in order"
    );
    if in_place && psi == Combine::Max {
        debug_assert_eq!(Some(top), Combine::Max.apply(cache.iter().map(|e| e.value)));
        Some(top)
    } else {
        psi.apply(cache.iter().map(|e| e.value))
    }
}

/// Debug builds: what each receiver of a held board would read of
/// announcements `run` with its cache kept in full (the copying path):
/// each receiver's reply and cache after.
#[cfg(debug_assertions)]
#[allow(clippy::too_many_arguments)]
fn board_read_afresh(
    b: &Board,
    c: CoflowIdx,
    batch: &[Announcement],
    run: &[u32],
    now: Time,
    expiry: Dur,
    psi: Combine,
    hosts: &[Host],
) -> Vec<(HostId, Option<u64>, Vec<CacheEntry>)> {
    let mut out = vec![];
    let mut merged = vec![];
    for (r, &g) in b.group_of.iter().enumerate() {
        if g == NO_GROUP {
            continue;
        }
        let r = HostId(r as u32);
        let mut cache: Vec<CacheEntry> = if b.own[g as usize] == NO_HOST {
            b.cache_of(g).collect()
        } else {
            hosts[r.0 as usize].cache[&c].clone()
        };
        let group: Vec<Received> = run
            .iter()
            .map(|&a| &batch[a as usize])
            .filter(|m| m.to.contains(&r))
            .map(|m| Received {
                no: 0,
                from: m.from,
                value: m.value,
            })
            .collect();
        let reply = read_group(&mut cache, &group, now, expiry, psi, &mut merged);
        out.push((r, reply, cache));
    }
    out
}

/// The end of a negotiation: one round of one subcoflow.
#[derive(Debug, Clone, Copy)]
struct ForRound {
    at: Time,
    sub: u32,
    instance: u32,
    round: u32,
}

/// The two control messages, as the loss hash names them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MessageKind {
    /// A sender's desired priority, to a receiver.
    Announce = 1,
    /// A receiver's feedback priority, to a sender.
    Feedback = 2,
}

const NO_SUB: u32 = u32::MAX;
const NO_LINK: u32 = u32::MAX;
/// The instance of a forgotten subcoflow's slot.
const GONE: u32 = u32::MAX;

/// Control-plane counts of a run.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct DcasStats {
    /// Announcements sent.
    pub announcements: u64,
    /// Feedback messages sent.
    pub feedbacks: u64,
    /// Messages lost (of both kinds).
    pub lost: u64,
    /// Negotiations that fell back to the desired priority.
    pub fallbacks: u64,
}

/// D-CAS; see the module doc.
#[derive(Debug)]
pub struct Dcas {
    config: DcasConfig,
    log: Option<DecisionLog>,
    hosts: Vec<Host>,
    subs: Vec<Subcoflow>,
    free_subs: Vec<u32>,
    sub_of: FxHashMap<(CoflowIdx, HostId), u32>,
    n_subs: usize,
    n_instances: u32,
    // Per flow: its subcoflow, whether it is served (incremental mode), and
    // its path's first and last links (big switch).
    flow_sub: Vec<u32>,
    flow_served: Vec<bool>,
    flow_ends: Vec<(u32, u32)>,
    // Per coflow: its arrival order, whether complete, receivers caching it.
    rank: Vec<u64>,
    n_ranked: u64,
    complete: Vec<bool>,
    cached_at: FxHashMap<CoflowIdx, Vec<HostId>>,
    // Per coflow, its last batch of announcements while its receivers
    // read them the same (no loss): see [`Board`].
    boards: FxHashMap<CoflowIdx, Board>,
    // The protocol's events. Every message takes the same delay and every
    // negotiation the same time, so each kind arrives in the order it was
    // sent: one FIFO queue per kind, merged by (instant, phase) with the
    // phases announcement < decision < tick (feedback, due with its
    // decision, is delivered when the receiver replies: `receive`).
    announcements: VecDeque<Announcement>,
    decisions: VecDeque<ForRound>,
    next_tick: Option<Time>,
    // The allocation: on the big switch the classes are walked in order at
    // every event that changes a priority or a flow (`ClassServer`, as
    // `fifo` does; unchanged classes reuse their turn), elsewhere (or with
    // `solver=incremental`) every flow is a demand of `IncrementalMaxMin`
    // in its subcoflow's class.
    always_incremental: bool,
    inc: Option<IncrementalMaxMin>,
    server: ClassServer,
    // Class solves on the big switch while every flow's path is two links
    // (`all_pairs`; else `server` solves).
    pairs: PairSolver,
    all_pairs: bool,
    // The subcoflows by class, as (class, slot, the one first link of all
    // its flows or NO_LINK), re-sorted only when a priority changed or a
    // flow joined (`order_stale`), filtered when subcoflows were forgotten.
    order: Vec<(u64, u32, u32)>,
    order_stale: bool,
    order_gone: bool,
    // Per class, by its first subcoflow's slot: its last turn (big switch);
    // the round; per flow, the last
    // round a class gave it a rate; flows a class gave a rate before it
    // was served again (zeroed unless given one in this round).
    turns: FxHashMap<u32, ClassTurn>,
    round: u64,
    flow_round: Vec<u64>,
    dropped: Vec<FlowIdx>,
    // The rates of the members of the class just solved, in their order.
    got: Vec<f64>,
    // Per link, the last class serve that listed it in its turn's links,
    // and the last that found it the open uplink of a subcoflow (serves
    // numbered by `n_serves`).
    link_listed: Vec<u64>,
    link_opened: Vec<u64>,
    n_serves: u64,
    // A class's lists as they are spliced (the turn's lists become this
    // after: swapped, not allocated per solve).
    relist: ClassLists,
    n_changes: u64,
    stats: DcasStats,
    // Scratch.
    released: Vec<CoflowIdx>,
    new_subs: Vec<u32>,
    new_flows: Vec<FlowIdx>,
    changed: Vec<u32>,
    batch: Vec<Announcement>,
    batch_order: Vec<u32>,
    batch_msgs: Vec<Received>,
    batch_coflows: Vec<CoflowIdx>,
    batch_starts: Vec<u32>,
    batch_merged: Vec<CacheEntry>,
    batch_coflow_no: Vec<(u32, u32)>,
    batch_replies: Vec<Option<u64>>,
    batch_runs: Vec<u32>,
    batch_held: Vec<bool>,
    batch_group: Vec<Received>,
    host_lists: Vec<Vec<u32>>,
}

impl Dcas {
    /// A D-CAS scheduler; `config` must be valid ([`DcasConfig::validate`]).
    pub fn new(config: DcasConfig) -> Dcas {
        Dcas {
            log: None,
            hosts: vec![],
            subs: vec![],
            free_subs: vec![],
            sub_of: FxHashMap::default(),
            n_subs: 0,
            n_instances: 0,
            flow_sub: vec![],
            flow_served: vec![],
            flow_ends: vec![],
            rank: vec![],
            n_ranked: 0,
            complete: vec![],
            cached_at: FxHashMap::default(),
            boards: FxHashMap::default(),
            announcements: VecDeque::new(),
            decisions: VecDeque::new(),
            next_tick: None,
            always_incremental: config.incremental,
            inc: None,
            server: ClassServer::default(),
            pairs: PairSolver::default(),
            all_pairs: true,
            order: vec![],
            order_stale: false,
            order_gone: false,
            turns: FxHashMap::default(),
            round: 0,
            flow_round: vec![],
            dropped: vec![],
            got: vec![],
            link_listed: vec![],
            link_opened: vec![],
            n_serves: 0,
            relist: ClassLists::default(),
            n_changes: 0,
            stats: DcasStats::default(),
            config,
            released: vec![],
            new_subs: vec![],
            new_flows: vec![],
            changed: vec![],
            batch: vec![],
            batch_order: vec![],
            batch_msgs: vec![],
            batch_coflows: vec![],
            batch_merged: vec![],
            batch_coflow_no: vec![],
            batch_replies: vec![],
            batch_runs: vec![],
            batch_held: vec![],
            batch_group: vec![],
            host_lists: vec![],
            batch_starts: vec![],
        }
    }

    /// Also writes every decision to `log`.
    pub fn with_log(mut self, log: DecisionLog) -> Dcas {
        self.log = Some(log);
        self
    }

    /// The configuration.
    pub fn config(&self) -> &DcasConfig {
        &self.config
    }

    /// Control-plane counts so far.
    pub fn stats(&self) -> DcasStats {
        self.stats
    }

    /// The current priority of coflow `c`'s subcoflow at host `h`, if it
    /// has one.
    pub fn priority(&self, c: CoflowIdx, h: HostId) -> Option<Priority> {
        self.sub_of
            .get(&(c, h))
            .and_then(|&s| self.subs[s as usize].priority)
    }

    /// Whether the message of `kind` for `coflow` from `from` to `to` in the
    /// sender's round `round` is lost.
    fn lost(
        &mut self,
        kind: MessageKind,
        coflow: CoflowId,
        from: HostId,
        to: HostId,
        round: u32,
    ) -> bool {
        if self.config.loss <= 0.0 {
            return false;
        }
        let lost = loss_draw(self.config.seed, kind, coflow, from, to, round) < self.config.loss;
        self.stats.lost += u64::from(lost);
        lost
    }

    /// The subcoflow in slot `s` if it is still `instance` and in `round`.
    fn live(&self, s: u32, instance: u32, round: u32) -> Option<&Subcoflow> {
        let sub = &self.subs[s as usize];
        (sub.instance == instance && sub.round == round).then_some(sub)
    }

    /// Gives subcoflow `s` priority `p` (its flows move to `p`'s class).
    #[allow(clippy::too_many_arguments)]
    fn set_priority(
        &mut self,
        s: u32,
        p: Priority,
        rule: Rule,
        desired: u64,
        now: Time,
        view: &Clairvoyant<'_>,
        out: &mut Allocation,
    ) {
        let sub = &mut self.subs[s as usize];
        if let Some(log) = &self.log {
            log.lock().expect("decision log").push(Decision {
                at: now,
                coflow: view.coflow_id(sub.coflow),
                host: sub.host,
                rule,
                priority: p,
                desired,
                feedback: sub.feedback.clone(),
            });
        }
        if sub.priority == Some(p) {
            return;
        }
        sub.priority = Some(p);
        self.order_stale = true;
        for &f in &sub.flows {
            if let Some(inc) = self.inc.as_mut().filter(|inc| inc.is_declared(f)) {
                inc.set_class(f, p.class());
            }
            out.set_class(f, p.queue_class());
        }
    }

    /// Pseudocode 1 for subcoflow `s`, now.
    fn run_sender(&mut self, s: u32, now: Time, view: &Clairvoyant<'_>, out: &mut Allocation) {
        let (threshold, starvation) = (self.config.threshold, self.config.starvation);
        let sub = &mut self.subs[s as usize];
        let waited = sub.waited(now);
        sub.last_run = now;
        sub.round += 1;
        sub.pending = None;
        sub.feedback.clear();
        let (c, h) = (sub.coflow, sub.host);
        let local = Local::new(*view, h);
        // Bytes left move only while a flow of it has a rate: otherwise the
        // sum of the last run is read again (the same sum, to the bit).
        let rem = match sub.rem.filter(|_| !sub.moved) {
            Some(rem) => {
                debug_assert_eq!(
                    rem.to_bits(),
                    sub.flows
                        .iter()
                        .map(|&f| local.remaining(f))
                        .sum::<f64>()
                        .to_bits(),
                    "cached bytes left of a subcoflow whose flows moved"
                );
                rem
            }
            None => {
                let rem: f64 = sub.flows.iter().map(|&f| local.remaining(f)).sum();
                sub.rem = Some(rem);
                rem
            }
        };
        sub.moved = sub.sending || self.inc.is_some();
        let d = self
            .config
            .desired_of(rem, self.hosts[h.0 as usize].nic_bps);
        let rule = pseudocode1(rem, threshold, waited, starvation);
        if rule == Rule::Fifo {
            let p = Priority::fifo(self.rank[c as usize]);
            self.set_priority(s, p, Rule::Fifo, d, now, view, out);
        } else if rule == Rule::Starving {
            self.set_priority(s, Priority::STARVING, Rule::Starving, d, now, view, out);
        } else {
            let (instance, round) = (sub.instance, sub.round);
            sub.pending = Some(d);
            let receivers = sub
                .receivers
                .get_or_insert_with(|| {
                    let mut r: Vec<HostId> = sub.flows.iter().map(|&f| local.dst(f)).collect();
                    r.sort_unstable();
                    r.dedup();
                    r.into()
                })
                .clone();
            let id = view.coflow_id(c);
            self.stats.announcements += receivers.len() as u64;
            let to = if self.config.loss > 0.0 {
                let kept: Vec<HostId> = receivers
                    .iter()
                    .copied()
                    .filter(|&r| !self.lost(MessageKind::Announce, id, h, r, round))
                    .collect();
                kept.into()
            } else {
                receivers
            };
            if !to.is_empty() {
                self.announcements.push_back(Announcement {
                    at: now + self.config.msg_delay,
                    to,
                    from: h,
                    coflow: c,
                    sub: s,
                    instance,
                    round,
                    value: d,
                });
            }
            self.decisions.push_back(ForRound {
                at: now + Dur(2 * self.config.msg_delay.0),
                sub: s,
                instance,
                round,
            });
            if self.subs[s as usize].priority.is_none() {
                self.set_priority(s, Priority::large(d), Rule::Interim, d, now, view, out);
            }
        }
    }

    /// Pseudocode 2 for every announcement due now (in `batch`): each
    /// receiver updates its cache with all of them first, then replies
    /// `Ψ(cached values of the coflow)` to each announcer (one value per
    /// receiver and coflow at one instant). A reply reaches its sender
    /// `msg_delay` later, the instant its negotiation ends, before the
    /// decision (phase order), and counts only for the round that
    /// announced, still open: nothing can end or replace that round in
    /// between but a run of Pseudocode 1, which drops the feedback it holds.
    /// So a reply goes into its round's feedback now, not into a queue.
    /// A coflow whose batch matches its [`Board`] is read by the board;
    /// the others by copies laid out per receiver, and make a board.
    fn receive(&mut self, now: Time, view: &Clairvoyant<'_>) {
        let batch = std::mem::take(&mut self.batch);
        // Messages grouped by (receiver, coflow), in (receiver, coflow,
        // sender) order: the announcements by (coflow, sender), one each at
        // an instant, then their messages counted out by receiver (a
        // receiver gets at most one message of each). A group's senders in
        // the cache's order update it in place or by one merge; the order
        // inside a group reaches no sender (each gets one reply per
        // receiver, by receiver).
        let mut order = std::mem::take(&mut self.batch_order);
        order.clear();
        order.extend(0..batch.len() as u32);
        order.sort_unstable_by_key(|&a| (batch[a as usize].coflow, batch[a as usize].from));
        // The coflows of the batch numbered in order, each with its run of
        // announcements in `order` and whether its board holds; each
        // announcement's coflow number and place in its run; each
        // receiver's reply for each (None: a complete coflow's
        // announcements are not read).
        let n_hosts = self.hosts.len();
        let mut coflow_no = std::mem::take(&mut self.batch_coflow_no);
        let mut coflows = std::mem::take(&mut self.batch_coflows);
        let mut runs = std::mem::take(&mut self.batch_runs);
        let mut held = std::mem::take(&mut self.batch_held);
        coflow_no.clear();
        coflow_no.resize(batch.len(), (0, 0));
        coflows.clear();
        runs.clear();
        for (at, &a) in order.iter().enumerate() {
            let c = batch[a as usize].coflow;
            if coflows.last() != Some(&c) {
                coflows.push(c);
                runs.push(at as u32);
            }
            let no = coflows.len() as u32 - 1;
            coflow_no[a as usize] = (no, at as u32 - runs[no as usize]);
        }
        runs.push(order.len() as u32);
        // Boards (with no loss: lists drawn per message never match).
        let boards = self.config.loss <= 0.0;
        held.clear();
        for (no, &c) in coflows.iter().enumerate() {
            let run = &order[runs[no] as usize..runs[no + 1] as usize];
            let holds = boards
                && !self.complete[c as usize]
                && self.boards.get(&c).is_some_and(|b| b.matches(&batch, run));
            if !holds {
                if let Some(b) = self.boards.remove(&c) {
                    b.into_caches(c, &mut self.hosts);
                }
            }
            held.push(holds);
        }
        // Each receiver's copies of the rest (what a group reads, in a row).
        let mut msgs = std::mem::take(&mut self.batch_msgs);
        let mut starts = std::mem::take(&mut self.batch_starts);
        starts.clear();
        starts.resize(self.hosts.len() + 1, 0);
        for (a, m) in batch.iter().enumerate() {
            if held[coflow_no[a].0 as usize] {
                continue;
            }
            for r in m.to.iter() {
                starts[r.0 as usize + 1] += 1;
            }
        }
        for h in 0..self.hosts.len() {
            starts[h + 1] += starts[h];
        }
        msgs.clear();
        msgs.resize(starts[self.hosts.len()] as usize, Received::default());
        for &a in &order {
            let (no, _) = coflow_no[a as usize];
            if held[no as usize] {
                continue;
            }
            let m = &batch[a as usize];
            let copy = Received {
                no,
                from: m.from,
                value: m.value,
            };
            for r in m.to.iter() {
                let at = &mut starts[r.0 as usize];
                msgs[*at as usize] = copy;
                *at += 1;
            }
        }
        // (Each start has moved to its bucket's end, the next one's start.)
        let mut replies = std::mem::take(&mut self.batch_replies);
        replies.clear();
        replies.resize(coflows.len().max(1) * n_hosts, None);
        let (expiry, psi) = (self.config.expiry, self.config.psi);
        let mut merged = std::mem::take(&mut self.batch_merged);
        let mut i = 0;
        for (to, &end) in starts[..self.hosts.len()].iter().enumerate() {
            let (to, end) = (HostId(to as u32), end as usize);
            while i < end {
                let no = msgs[i].no;
                let c = coflows[no as usize];
                let mut j = i + 1;
                while j < end && msgs[j].no == no {
                    j += 1;
                }
                let group = &msgs[i..j];
                i = j;
                if self.complete[c as usize] {
                    continue; // nothing of a complete coflow is read again
                }
                let cache = self.hosts[to.0 as usize].cache.entry(c).or_default();
                if cache.is_empty() {
                    self.cached_at.entry(c).or_default().push(to);
                }
                replies[no as usize * n_hosts + to.0 as usize] =
                    read_group(cache, group, now, expiry, psi, &mut merged);
            }
        }
        // The held boards read their batch: the values set, one Ψ per
        // group of followers, the others' groups read into their caches;
        // the other coflows (not complete) get a board of this batch.
        let mut group = std::mem::take(&mut self.batch_group);
        for (no, &c) in coflows.iter().enumerate() {
            let run = &order[runs[no] as usize..runs[no + 1] as usize];
            if !held[no] {
                if boards && !self.complete[c as usize] {
                    let b = Board::new(c, &batch, run, now, &self.hosts, &mut self.host_lists);
                    self.boards.insert(c, b);
                }
                continue;
            }
            let b = self.boards.get_mut(&c).expect("a held board");
            #[cfg(debug_assertions)]
            let expected = board_read_afresh(b, c, &batch, run, now, expiry, psi, &self.hosts);
            b.at = now;
            for (v, &a) in b.values.iter_mut().zip(run) {
                *v = batch[a as usize].value;
            }
            for g in 0..b.own.len() as u32 {
                let r = b.own[g as usize];
                b.reply[g as usize] = if r == NO_HOST {
                    psi.apply(b.group(g).iter().map(|&i| b.values[i as usize]))
                } else {
                    group.clear();
                    group.extend(b.messages_of(g));
                    let cache = self.hosts[r as usize].cache.entry(c).or_default();
                    read_group(cache, &group, now, expiry, psi, &mut merged)
                };
            }
            #[cfg(debug_assertions)]
            for (r, reply, cache) in expected {
                let g = b.group_of[r.0 as usize];
                assert_eq!(b.reply[g as usize], reply, "a board's reply, read afresh");
                if b.own[g as usize] == NO_HOST {
                    assert!(b.cache_of(g).eq(cache), "a follower's cache, read afresh");
                } else {
                    assert!(self.hosts[r.0 as usize].cache[&c].iter().copied().eq(cache));
                }
            }
        }
        self.batch_group = group;
        // The replies, each announcement's in its receivers' order: a
        // sender's feedback arrives by receiver (with no loss, straight
        // into it: none is lost and nothing else is drawn).
        // With Φ = max and no log to show them, a round's feedback is kept
        // as its largest value alone (what the decision reads of it): of a
        // held board, the largest reply of the groups it reached.
        let lossless = self.config.loss <= 0.0;
        let only_max = self.config.phi == Combine::Max && self.log.is_none();
        for (a, m) in batch.iter().enumerate() {
            let open = self
                .live(m.sub, m.instance, m.round)
                .is_some_and(|s| s.pending.is_some());
            let (no, at) = coflow_no[a];
            if held[no as usize] {
                let b = &self.boards[&m.coflow];
                let feedback = &mut self.subs[m.sub as usize].feedback;
                if open && only_max {
                    let at = at as usize;
                    let groups =
                        &b.touched[b.touch_starts[at] as usize..b.touch_starts[at + 1] as usize];
                    let top = groups.iter().map(|&g| b.reply[g as usize]).max().flatten();
                    debug_assert!(feedback.is_empty(), "one announcement per round");
                    debug_assert_eq!(top, m.to.iter().filter_map(|&r| b.reply_to(r)).max());
                    feedback.extend(top);
                } else if open {
                    feedback.extend(m.to.iter().filter_map(|&r| b.reply_to(r)));
                }
                debug_assert!(m.to.iter().all(|&r| b.reply_to(r).is_some()));
                self.stats.feedbacks += m.to.len() as u64;
                continue;
            }
            let row = &replies[no as usize * n_hosts..][..n_hosts];
            if lossless {
                let values = m.to.iter().filter_map(|r| row[r.0 as usize]);
                let n = if open && only_max {
                    let (mut n, mut top) = (0, None);
                    for v in values {
                        n += 1;
                        top = top.max(Some(v));
                    }
                    let feedback = &mut self.subs[m.sub as usize].feedback;
                    debug_assert!(feedback.is_empty(), "one announcement per round");
                    feedback.extend(top);
                    n
                } else if open {
                    let feedback = &mut self.subs[m.sub as usize].feedback;
                    let before = feedback.len();
                    feedback.extend(values);
                    feedback.len() - before
                } else {
                    values.count()
                };
                self.stats.feedbacks += n as u64;
                continue;
            }
            let id = view.coflow_id(m.coflow);
            for &r in m.to.iter() {
                let Some(value) = row[r.0 as usize] else {
                    continue;
                };
                self.stats.feedbacks += 1;
                if !self.lost(MessageKind::Feedback, id, r, m.from, m.round) && open {
                    self.subs[m.sub as usize].feedback.push(value);
                }
            }
        }
        self.batch = batch;
        self.batch.clear();
        self.batch_merged = merged;
        (self.batch_order, self.batch_msgs, self.batch_starts) = (order, msgs, starts);
        (self.batch_coflow_no, self.batch_replies) = (coflow_no, replies);
        (self.batch_coflows, self.batch_runs, self.batch_held) = (coflows, runs, held);
    }

    /// The end of a negotiation: `<1, Φ(M)>`, or `<1, d>` with no feedback.
    fn decide(&mut self, now: Time, e: ForRound, view: &Clairvoyant<'_>, out: &mut Allocation) {
        let Some(d) = self
            .live(e.sub, e.instance, e.round)
            .and_then(|s| s.pending)
        else {
            return;
        };
        let sub = &mut self.subs[e.sub as usize];
        sub.pending = None;
        let (p, rule) = match self.config.phi.apply(sub.feedback.iter().copied()) {
            Some(m) => (Priority::large(m), Rule::Negotiated),
            None => {
                self.stats.fallbacks += 1;
                (Priority::large(d), Rule::Fallback)
            }
        };
        self.set_priority(e.sub, p, rule, d, now, view, out);
    }

    /// Every sender runs Pseudocode 1 for each of its subcoflows (except
    /// those that already ran at this instant).
    fn tick(&mut self, now: Time, view: &Clairvoyant<'_>, out: &mut Allocation) {
        for h in 0..self.hosts.len() {
            for i in 0..self.hosts[h].subcoflows.len() {
                let s = self.hosts[h].subcoflows[i];
                if self.subs[s as usize].last_run != now {
                    self.run_sender(s, now, view, out);
                }
            }
        }
        self.next_tick = (self.n_subs > 0).then(|| now + self.config.delta);
    }

    /// The protocol's events due by `now`, in (instant, phase) order.
    fn run_protocol(&mut self, now: Time, view: &Clairvoyant<'_>, out: &mut Allocation) {
        loop {
            let heads = [
                self.announcements.front().map(|m| m.at),
                self.decisions.front().map(|m| m.at),
                self.next_tick,
            ];
            let Some((t, phase)) = heads
                .iter()
                .enumerate()
                .filter_map(|(k, t)| t.map(|t| (t, k)))
                .filter(|&(t, _)| t <= now)
                .min()
            else {
                return;
            };
            match phase {
                0 => {
                    while self.announcements.front().is_some_and(|m| m.at == t) {
                        let m = self.announcements.pop_front().expect("a head");
                        self.batch.push(m);
                    }
                    self.receive(t, view);
                }
                1 => {
                    while let Some(&e) = self.decisions.front().filter(|m| m.at == t) {
                        self.decisions.pop_front();
                        self.decide(t, e, view, out);
                    }
                }
                _ => self.tick(t, view, out),
            }
        }
    }

    /// When the protocol next needs the driver.
    fn next_event(&self) -> Option<Time> {
        [
            self.announcements.front().map(|m| m.at),
            self.decisions.front().map(|m| m.at),
            self.next_tick,
        ]
        .into_iter()
        .flatten()
        .min()
    }

    /// Flow `f` joins its subcoflow (made if new; listed in `new_subs`).
    fn join(&mut self, f: FlowIdx, now: Time, view: &Clairvoyant<'_>) {
        let (c, h) = (view.coflow_of(f), view.src(f));
        let s = match self.sub_of.get(&(c, h)) {
            Some(&s) => s,
            None => {
                let sub = Subcoflow {
                    coflow: c,
                    host: h,
                    instance: self.n_instances,
                    flows: vec![],
                    lasts: vec![],
                    priority: None,
                    n_served: 0,
                    served_at: now,
                    served_from: None,
                    served_until: None,
                    last_run: Time::NEVER,
                    round: 0,
                    pending: None,
                    feedback: vec![],
                    receivers: None,
                    ends: None,
                    distinct: false,
                    changed_at: 0,
                    rem: None,
                    moved: false,
                    sending: false,
                };
                self.n_instances = (self.n_instances + 1) % GONE;
                let s = match self.free_subs.pop() {
                    Some(s) => {
                        self.subs[s as usize] = sub;
                        s
                    }
                    None => {
                        self.subs.push(sub);
                        (self.subs.len() - 1) as u32
                    }
                };
                self.sub_of.insert((c, h), s);
                self.hosts[h.0 as usize].subcoflows.push(s);
                self.n_subs += 1;
                self.new_subs.push(s);
                s
            }
        };
        let p = view.path(f);
        let ends = (p[0].0, p[p.len() - 1].0);
        let sub = &mut self.subs[s as usize];
        sub.flows.push(f);
        sub.lasts.push(ends.1);
        sub.receivers = None;
        sub.ends = None;
        sub.rem = None;
        self.n_changes += 1;
        sub.changed_at = self.n_changes;
        self.order_stale = true;
        self.flow_sub[f as usize] = s;
        self.flow_ends[f as usize] = ends;
        self.all_pairs &= p.len() == 2 && p[0] != p[1];
    }

    /// Finished flow `f` leaves its subcoflow (forgotten when empty).
    fn leave(&mut self, f: FlowIdx, now: Time) {
        let s = std::mem::replace(&mut self.flow_sub[f as usize], NO_SUB);
        let sub = &mut self.subs[s as usize];
        let at = sub.flows.iter().position(|&x| x == f).expect("flow listed");
        sub.flows.swap_remove(at);
        sub.lasts.swap_remove(at);
        sub.receivers = None;
        sub.rem = None;
        self.n_changes += 1;
        sub.changed_at = self.n_changes;
        // (Incremental mode; on the big switch service is recounted at
        // every event.)
        if std::mem::take(&mut self.flow_served[f as usize]) {
            sub.n_served -= 1;
            if sub.n_served == 0 {
                sub.unserved(now);
            }
        }
        if sub.flows.is_empty() {
            let (c, h) = (sub.coflow, sub.host);
            sub.instance = GONE;
            self.sub_of.remove(&(c, h));
            let list = &mut self.hosts[h.0 as usize].subcoflows;
            let at = list.iter().position(|&x| x == s).expect("subcoflow listed");
            list.swap_remove(at);
            self.free_subs.push(s);
            self.n_subs -= 1;
            self.order_gone = true;
        }
    }
}

impl Dcas {
    /// Rates by [`IncrementalMaxMin`]; service from the demands it changed.
    fn solve_incremental(&mut self, now: Time, view: &Clairvoyant<'_>, out: &mut Allocation) {
        let mut changed = std::mem::take(&mut self.changed);
        changed.clear();
        let inc = self.inc.as_mut().expect("incremental mode");
        inc.solve(&mut changed);
        for &f in &changed {
            if !view.is_active(f) {
                continue;
            }
            let r = inc.rate(f);
            out.set_rate(f, r);
            let sub = &mut self.subs[self.flow_sub[f as usize] as usize];
            let served = r > EPS * self.hosts[sub.host.0 as usize].nic_bps;
            if served != self.flow_served[f as usize] {
                self.flow_served[f as usize] = served;
                if served {
                    sub.n_served += 1;
                    sub.served(now);
                } else {
                    sub.n_served -= 1;
                    if sub.n_served == 0 {
                        sub.unserved(now);
                    }
                }
            }
        }
        self.changed = changed;
    }

    /// Rates on the big switch: subcoflows by priority, each run of equal
    /// priorities one class served max-min on what the classes before it
    /// left ([`ClassServer`]); a class whose every subcoflow has its first
    /// or last links full is skipped. A class whose subcoflows did not
    /// change and whose links show, bit for bit, the residual of its last
    /// turn gets what it got then, without a solve ([`ClassTurn`]); the
    /// service of a class's subcoflows is recounted when it is served.
    fn serve_classes(&mut self, now: Time, view: &Clairvoyant<'_>, out: &mut Allocation) {
        let obs = view.observed();
        if self.order_stale {
            self.order.clear();
            for host in &self.hosts {
                for &s in &host.subcoflows {
                    let sub = &mut self.subs[s as usize];
                    if sub.ends.is_none() {
                        let (mut first, mut last) = (vec![], sub.lasts.clone());
                        for &f in &sub.flows {
                            first.push(self.flow_ends[f as usize].0);
                        }
                        first.sort_unstable();
                        first.dedup();
                        last.sort_unstable();
                        last.dedup();
                        sub.distinct = last.len() == sub.flows.len();
                        sub.ends = Some((first, last));
                    }
                    let ends = sub.ends.as_ref().expect("just made");
                    let first = if ends.0.len() == 1 {
                        ends.0[0]
                    } else {
                        NO_LINK
                    };
                    let p = sub.priority.expect("ran at once");
                    self.order.push((p.class(), s, first));
                }
            }
            self.order.sort_unstable();
        } else if self.order_gone {
            let subs = &self.subs;
            self.order
                .retain(|&(_, s, _)| subs[s as usize].instance != GONE);
        }
        (self.order_stale, self.order_gone) = (false, false);
        self.round += 1;
        let round = self.round;
        self.server.begin(&obs);
        let mut turns = std::mem::take(&mut self.turns);
        let mut i = 0;
        while i < self.order.len() {
            let class = self.order[i].0;
            let mut j = i;
            while j < self.order.len() && self.order[j].0 == class {
                j += 1;
            }
            let turn = turns.entry(self.order[i].1).or_default();
            let subs = &self.subs;
            let same_subs = turn.subs.len() == j - i
                && self.order[i..j]
                    .iter()
                    .zip(&turn.subs)
                    .all(|(&(_, s, _), &(t, at))| s == t && subs[s as usize].changed_at == at);
            if same_subs && self.server.residual_is(&turn.links, &turn.before) {
                self.server.set_residual(&turn.links, &turn.after);
                turn.round = round;
                i = j;
                continue;
            }
            self.serve_class(i..j, same_subs, turn, now, &obs, out);
            i = j;
        }
        // Classes no subcoflow is in any more.
        let dropped = &mut self.dropped;
        turns.retain(|_, t| {
            if t.round != round {
                dropped.append(&mut t.members);
            }
            t.round == round
        });
        self.turns = turns;
        // A flow a class gave a rate before and no class gave one now.
        for &f in &self.dropped {
            if self.flow_round[f as usize] != round && view.is_active(f) {
                out.set_rate(f, 0.0);
            }
        }
        self.dropped.clear();
    }

    /// Serves the class of the subcoflows `self.order[range]` into `turn`
    /// (`same_subs`: they are the subcoflows of its last turn, with the
    /// same flows): a subcoflow whose first or last links are all full is
    /// left out, and so is a flow that meets a full link (it would get
    /// nothing and take nothing: leaving it out changes no other rate).
    /// Then recounts the service of the class's subcoflows.
    ///
    /// The lists of the last turn stay when its subcoflows are the same and
    /// every link it listed is full or open as it was then: a flow is a
    /// member while its first and last links are open, and the links a
    /// turn lists decide that for each of its subcoflows, so a listing now
    /// would give the same members (debug builds list anew and compare).
    fn serve_class(
        &mut self,
        range: std::ops::Range<usize>,
        same_subs: bool,
        turn: &mut ClassTurn,
        now: Time,
        obs: &crate::Observed<'_>,
        out: &mut Allocation,
    ) {
        let server = &self.server;
        let links_as_then = turn.listed
            && (turn.links.iter())
                .zip(&turn.full)
                .all(|(&l, &full)| server.is_full(l) == full);
        let keep_lists = same_subs && links_as_then;
        #[cfg(debug_assertions)]
        if keep_lists {
            let mut lists = ClassLists::default();
            let distinct = self.list_class(range.clone(), &mut lists, None, obs);
            assert_eq!(
                lists.members, turn.members,
                "members of a class kept listed"
            );
            assert_eq!(lists.ends, turn.ends, "members' links kept listed");
            assert_eq!(lists.member_ends, turn.member_ends, "members' runs");
            assert!(distinct || !turn.distinct, "paths of a class kept listed");
        }
        if !keep_lists {
            // With every listed link full or open as then, a subcoflow of
            // the last turn with the same flows has the same members: its
            // run is spliced in and only the others are listed.
            let splice = links_as_then;
            let mut old = ClassLists {
                links: std::mem::take(&mut turn.links),
                members: std::mem::take(&mut turn.members),
                ends: std::mem::take(&mut turn.ends),
                member_ends: std::mem::take(&mut turn.member_ends),
            };
            let mut lists = std::mem::take(&mut self.relist);
            if splice {
                turn.distinct =
                    self.list_class(range.clone(), &mut lists, Some((&turn.subs[..], &old)), obs);
            } else {
                self.dropped.append(&mut old.members);
                turn.distinct = self.list_class(range.clone(), &mut lists, None, obs);
            }
            #[cfg(debug_assertions)]
            if splice {
                let mut anew = ClassLists::default();
                let distinct = self.list_class(range.clone(), &mut anew, None, obs);
                assert_eq!(anew.links, lists.links, "links of a spliced class");
                assert_eq!(anew.members, lists.members, "members of a spliced class");
                assert_eq!(anew.ends, lists.ends, "members' links spliced");
                assert_eq!(anew.member_ends, lists.member_ends, "spliced runs");
                assert_eq!(distinct, turn.distinct, "paths of a spliced class");
            }
            (turn.links, turn.members, turn.ends, turn.member_ends) =
                (lists.links, lists.members, lists.ends, lists.member_ends);
            self.relist = old;
            turn.subs.clear();
            let subs = &self.subs;
            turn.subs.extend(
                self.order[range.clone()]
                    .iter()
                    .map(|&(_, s, _)| (s, subs[s as usize].changed_at)),
            );
            turn.setup.valid = false;
            let server = &self.server;
            turn.full.clear();
            turn.full
                .extend(turn.links.iter().map(|&l| server.is_full(l)));
            turn.listed = true;
        }
        self.solve_class(range, turn, now, obs, out);
    }

    /// Lists the class of the subcoflows `self.order[range]` into `lists`
    /// (cleared first); true when no two of its members share a path.
    ///
    /// The lists hold the links the class reads before its solve, each
    /// once: a blocked subcoflow's are those that showed it blocked (its
    /// one first link, or all its first or all its last links; while they
    /// show the same residual it stays blocked, whatever its other links
    /// show), the others' are all their first and last links (the solve
    /// reads and takes from no other). Each subcoflow's members are a run
    /// of `lists.members`, ending at `lists.member_ends[k]` for its k-th one.
    ///
    /// With `old` (the subcoflows of the class's last turn, slot and change
    /// stamp, and its lists; every link listed then full or open as then),
    /// a subcoflow of that turn with the same stamp takes its run of
    /// members from there, reading its links but not its flows' (the same
    /// links decide the same members); the runs of the others go to
    /// `dropped`. The lists come out as a listing makes them.
    fn list_class(
        &mut self,
        range: std::ops::Range<usize>,
        lists: &mut ClassLists,
        old: Option<(&[(u32, u64)], &ClassLists)>,
        obs: &crate::Observed<'_>,
    ) -> bool {
        lists.links.clear();
        lists.members.clear();
        lists.ends.clear();
        lists.member_ends.clear();
        // Each link once, marked with this listing's number.
        self.n_serves += 1;
        let stamp = self.n_serves;
        let n_links = obs.capacities().len();
        if self.link_listed.len() < n_links {
            self.link_listed.resize(n_links, 0);
            self.link_opened.resize(n_links, 0);
        }
        let server = &self.server;
        let listed = &mut self.link_listed;
        // Whether no two members share a path: each open subcoflow's flows
        // go to distinct last links, and no two open ones share their uplink.
        let mut distinct = true;
        let opened = &mut self.link_opened;
        let links = &mut lists.links;
        let mut list = |ls: &[u32]| {
            for &l in ls {
                if std::mem::replace(&mut listed[l as usize], stamp) != stamp {
                    links.push(l);
                }
            }
        };
        let (members, member_links) = (&mut lists.members, &mut lists.ends);
        let (old_subs, old) = match old {
            Some((subs, lists)) => (subs, Some(lists)),
            None => (&[][..], None),
        };
        // The next subcoflow of the last turn, and where its run starts.
        let (mut k, mut run_start) = (0, 0);
        let dropped = &mut self.dropped;
        for &(_, s, first) in &self.order[range] {
            let sub = &self.subs[s as usize];
            let ends = sub.ends.as_ref().expect("made with the order");
            let full = |l: &u32| server.is_full(*l);
            // Its run in the last turn, when it was there with these flows
            // (both turns' subcoflows are in slot order).
            let mut run = None;
            if let Some(old) = old {
                while k < old_subs.len() && old_subs[k].0 <= s {
                    let run_end = old.member_ends[k] as usize;
                    if old_subs[k] == (s, sub.changed_at) {
                        run = Some(run_start..run_end);
                    } else {
                        dropped.extend_from_slice(&old.members[run_start..run_end]);
                    }
                    (k, run_start) = (k + 1, run_end);
                }
            }
            // Most subcoflows wait behind a full uplink: one look.
            if first != NO_LINK && server.is_full(first) {
                list(&[first]);
            } else if ends.0.iter().all(full) {
                list(&ends.0);
            } else if ends.1.iter().all(full) {
                list(&ends.1);
            } else if first != NO_LINK {
                // Its one uplink is open: one pass over its flows' last
                // links (downlinks) lists them and keeps as members the
                // flows whose downlink is open.
                list(&[first]);
                distinct &=
                    sub.distinct && std::mem::replace(&mut opened[first as usize], stamp) != stamp;
                if let (Some(run), Some(old)) = (run, old) {
                    list(&sub.lasts);
                    members.extend_from_slice(&old.members[run.clone()]);
                    member_links.extend_from_slice(&old.ends[run]);
                } else {
                    for (&f, &b) in sub.flows.iter().zip(&sub.lasts) {
                        list(&[b]);
                        if !server.is_full(b) {
                            members.push(f);
                            member_links.push((first, b));
                        }
                    }
                }
            } else if let (Some(run), Some(old)) = (run, old) {
                distinct = false;
                list(&ends.0);
                list(&ends.1);
                members.extend_from_slice(&old.members[run.clone()]);
                member_links.extend_from_slice(&old.ends[run]);
            } else {
                distinct = false;
                list(&ends.0);
                list(&ends.1);
                for &f in &sub.flows {
                    let (a, b) = self.flow_ends[f as usize];
                    if !server.is_full(a) && !server.is_full(b) {
                        members.push(f);
                        member_links.push((a, b));
                    }
                }
            }
            lists.member_ends.push(members.len() as u32);
        }
        // Subcoflows of the last turn after this one's.
        if let Some(old) = old {
            dropped.extend_from_slice(&old.members[run_start..]);
        }
        distinct
    }

    /// Solves the class of the subcoflows `self.order[range]` on the
    /// members `turn` lists, then recounts their service.
    fn solve_class(
        &mut self,
        range: std::ops::Range<usize>,
        turn: &mut ClassTurn,
        now: Time,
        obs: &crate::Observed<'_>,
        out: &mut Allocation,
    ) {
        let round = self.round;
        self.server.residual_of(&turn.links, &mut turn.before);
        if !turn.members.is_empty() {
            let p = self.subs[self.order[range.start].1 as usize]
                .priority
                .expect("ran");
            let solved = self.all_pairs
                && self.pairs.serve(
                    obs,
                    &turn.members,
                    &turn.ends,
                    turn.distinct,
                    self.server.residual_mut(),
                    p.queue_class(),
                    out,
                    &mut turn.setup,
                    (&mut self.flow_round, round, &mut self.got),
                );
            if !solved {
                self.server
                    .serve_flows(obs, turn.members.iter().copied(), p.queue_class(), out);
                self.got.clear();
                for &f in &turn.members {
                    self.flow_round[f as usize] = round;
                    self.got.push(out.rate(f));
                }
            }
        } else {
            self.got.clear();
        }
        self.server.residual_of(&turn.links, &mut turn.after);
        turn.round = round;
        // Service: a subcoflow is served while a flow of it has a rate
        // above the floor; one that was and is not any more is unserved
        // from now. Only members have a rate (and are marked given one in
        // this round); their rates are in a row in `got`.
        let mut start = 0;
        let got = &self.got;
        for (&(_, s, _), &end) in self.order[range].iter().zip(&turn.member_ends) {
            let sub = &mut self.subs[s as usize];
            let floor = EPS * self.hosts[sub.host.0 as usize].nic_bps;
            let was = sub.n_served > 0;
            let (mut n_served, mut sending) = (0, false);
            for (i, &r) in got[start..end as usize].iter().enumerate() {
                debug_assert_eq!(
                    r.to_bits(),
                    out.rate(turn.members[start + i]).to_bits(),
                    "a member's rate in a row"
                );
                n_served += u32::from(r > floor);
                sending |= r > 0.0;
            }
            start = end as usize;
            sub.n_served = n_served;
            sub.sending = sending;
            sub.moved |= sending;
            if sub.n_served > 0 {
                sub.served(now);
            } else if was {
                sub.unserved(now);
            }
        }
    }
}

/// The loss draw of a message, uniform in [0, 1) (lost when below `loss`):
/// splitmix64 chained over the seed, the kind, the coflow id, `(sender <<
/// 32) | receiver` and the sender's round for that subcoflow (1 for its
/// first run of Pseudocode 1, then one more per run). A feedback message's
/// sender is the receiver that replies, and its round the announcement's.
pub fn loss_draw(
    seed: u64,
    kind: MessageKind,
    coflow: CoflowId,
    from: HostId,
    to: HostId,
    round: u32,
) -> f64 {
    let mut h = mix(seed);
    h = mix(h ^ kind as u64);
    h = mix(h ^ coflow.0);
    h = mix(h ^ ((u64::from(from.0) << 32) | u64::from(to.0)));
    h = mix(h ^ u64::from(round));
    (h >> 11) as f64 / (1u64 << 53) as f64
}

impl Scheduler for Dcas {
    type Knows = KnowsSizes;

    fn name(&self) -> &str {
        "dcas"
    }

    fn schedule(
        &mut self,
        now: Time,
        view: Clairvoyant<'_>,
        changes: &Changes,
        out: &mut Allocation,
    ) -> Option<Time> {
        if self.hosts.is_empty() {
            let fabric = view.fabric();
            if self.always_incremental || !fabric.is_big_switch() {
                self.inc = Some(IncrementalMaxMin::new(view.capacities().to_vec()));
            }
            self.hosts = (0..fabric.n_hosts())
                .map(|h| Host {
                    nic_bps: view.capacity(fabric.uplink(HostId(h))).0,
                    ..Host::default()
                })
                .collect();
            self.host_lists = vec![vec![]; self.hosts.len()];
        }
        let n = view.n_flows();
        if self.flow_sub.len() < n {
            self.flow_sub.resize(n, NO_SUB);
            self.flow_served.resize(n, false);
            self.flow_ends.resize(n, (0, 0));
            self.flow_round.resize(n, 0);
        }
        // Arrival order: released now, after every earlier one, among
        // themselves by (arrival, id).
        self.released.clear();
        self.released.extend_from_slice(&changes.arrived);
        self.released
            .sort_by_key(|&c| (view.arrival(c), view.coflow_id(c)));
        for i in 0..self.released.len() {
            let c = self.released[i] as usize;
            if self.rank.len() <= c {
                self.rank.resize(c + 1, 0);
                self.complete.resize(c + 1, false);
            }
            self.rank[c] = self.n_ranked;
            self.n_ranked += 1;
        }
        // 1. Finished flows leave, started ones join; new subcoflows run
        // Pseudocode 1 at once; then the new flows enter the solver in
        // their subcoflow's class.
        for &f in &changes.finished {
            if let Some(inc) = &mut self.inc {
                inc.set_count(f, 0);
            }
            self.leave(f, now);
        }
        self.new_subs.clear();
        self.new_flows.clear();
        for &f in &changes.started {
            self.join(f, now, &view);
            self.new_flows.push(f);
        }
        for i in 0..self.new_subs.len() {
            let s = self.new_subs[i];
            self.run_sender(s, now, &view, out);
        }
        for i in 0..self.new_flows.len() {
            let f = self.new_flows[i];
            let p = self.subs[self.flow_sub[f as usize] as usize]
                .priority
                .expect("a subcoflow has a priority once it ran");
            if let Some(inc) = &mut self.inc {
                inc.declare_in(f, view.path(f).iter().copied(), 1.0, p.class());
                inc.set_count(f, 1);
            }
            out.set_class(f, p.queue_class());
        }
        for &c in &changes.finished_coflows {
            self.complete[c as usize] = true;
            for r in self.cached_at.remove(&c).unwrap_or_default() {
                self.hosts[r.0 as usize].cache.remove(&c);
            }
            self.boards.remove(&c);
        }
        if self.n_subs > 0 && self.next_tick.is_none() {
            let d = self.config.delta.0;
            self.next_tick = Some(Time((now.0 / d + 1) * d));
        }
        // 2. Protocol events due now.
        self.run_protocol(now, &view, out);
        // 3. Rates, and who is served.
        if self.inc.is_some() {
            self.solve_incremental(now, &view, out);
        } else if self.order_stale
            || self.order_gone
            || !changes.started.is_empty()
            || !changes.finished.is_empty()
        {
            self.serve_classes(now, &view, out);
        }
        self.next_event()
    }
}

/// The D-CAS configuration of a `dcas` spec's parameters, checked: for a
/// caller that needs the [`Dcas`] itself (its decision log,
/// say) rather than the scheduler `build` makes of it.
pub fn dcas_config(params: &[(String, String)]) -> Result<DcasConfig, SchedulerError> {
    let p = DCAS.params_of(params)?;
    let mut config = DcasConfig::default();
    config.apply(&p)?;
    config
        .validate()
        .map_err(|(key, message)| p.bad(key, message))?;
    Ok(config)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn priorities_order_as_tuples_and_classes_keep_the_order() {
        let ps = [
            Priority::fifo(0),
            Priority::fifo(7),
            Priority::STARVING,
            Priority::large(1),
            Priority::large(1 << 40),
        ];
        for w in ps.windows(2) {
            assert!(w[0] < w[1]);
            assert!(w[0].class() < w[1].class());
            assert!(w[0].queue_class() <= w[1].queue_class());
        }
        assert_eq!(Priority::large(4).to_string(), "<1, 4>");
    }

    #[test]
    fn combinations() {
        assert_eq!(Combine::Max.apply([4, 2, 1]), Some(4));
        assert_eq!(Combine::Min.apply([4, 2, 1]), Some(1));
        assert_eq!(Combine::Mean.apply([4, 2, 1]), Some(2));
        assert_eq!(Combine::Mean.apply([1, 2]), Some(2));
        assert_eq!(Combine::Max.apply([]), None);
    }

    #[test]
    fn config_keys_parse_and_validate() {
        let mut c = DcasConfig::default();
        c.set("delta", "10ms").unwrap();
        c.set("threshold", "1MB").unwrap();
        c.set("t", "1s").unwrap();
        c.set("desired", "1").unwrap();
        c.set("psi", "min").unwrap();
        assert_eq!(c.delta, Dur::from_millis(10));
        assert_eq!(c.threshold, 1e6);
        assert_eq!(c.desired, Desired::Constant(1));
        assert!(c.set("psi", "median").unwrap_err().contains("'median'"));
        assert!(c.set("delta", "10").unwrap_err().contains("unit"));
        assert!(c.set("desired", "x").unwrap_err().contains("'x'"));
        c.set("msg_delay", "5ms").unwrap();
        assert_eq!(c.validate().unwrap_err().0, "msg_delay");
        c.set("msg_delay", "1ms").unwrap();
        c.set("loss", "1.5").unwrap();
        assert_eq!(c.validate().unwrap_err().0, "loss");
        // Remaining time in quanta: 125,000 bytes at 1 Gbit/s is 1 ms.
        let d = DcasConfig::default();
        assert_eq!(d.desired_of(125_000.0, 1e9), 1000);
        // Bands: how many bounds the bytes left reach, whatever the NIC.
        let mut b = DcasConfig::default();
        b.set("desired", "bands:10KB/1MB/5MB").unwrap();
        assert_eq!(
            b.desired,
            Desired::Bands(vec![10_000, 1_000_000, 5_000_000])
        );
        let got: Vec<u64> = [9_000.0, 10_000.0, 999_000.0, 1e6, 5e6, 1e9]
            .iter()
            .map(|&r| b.desired_of(r, 1e9))
            .collect();
        assert_eq!(got, [0, 1, 1, 2, 3, 3]);
        for bad in ["bands:", "bands:5MB/1MB", "bands:1MB/1MB", "bands:x"] {
            assert!(
                b.set("desired", bad).unwrap_err().contains("bands"),
                "{bad}"
            );
        }
    }

    #[test]
    fn loss_draws_are_uniform_enough_and_fixed() {
        let n = 20_000;
        let lost = (0..n)
            .filter(|&i| {
                loss_draw(
                    7,
                    MessageKind::Announce,
                    CoflowId(i),
                    HostId(1),
                    HostId(2),
                    3,
                ) < 0.25
            })
            .count();
        assert!((lost as f64 / n as f64 - 0.25).abs() < 0.02, "{lost}");
        assert_eq!(
            loss_draw(
                7,
                MessageKind::Announce,
                CoflowId(1),
                HostId(1),
                HostId(2),
                3
            ),
            loss_draw(
                7,
                MessageKind::Announce,
                CoflowId(1),
                HostId(1),
                HostId(2),
                3
            )
        );
    }
}
