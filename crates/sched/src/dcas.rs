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
//! `fifo-lm`, here kept by [`IncrementalMaxMin`] with one demand per flow in
//! the class of its subcoflow's priority, on the big switch and on
//! multi-hop fabrics alike.
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
//! The protocol runs on timed events inside the scheduler: a queue ordered
//! by (instant, phase, sequence), whose head is the timer the scheduler asks
//! the driver for. At one instant, in this order:
//! 1. flows that finished leave their subcoflows (a subcoflow with no flow
//!    left is forgotten by its sender; receivers keep its entries until they
//!    expire); flows that started join theirs, and a subcoflow that appears
//!    (its first flow at this host starts) runs Pseudocode 1 at once
//!    (before that it has no priority; an announcement at once gets it the
//!    interim priority `<1, d>` until its negotiation ends);
//! 2. protocol events due now, phase by phase: announcements reach
//!    receivers; receivers reply (after every announcement due now at that
//!    instant has updated the caches, so simultaneous announcements see each
//!    other, as in the paper's Fig. 2); feedback reaches senders; senders
//!    whose negotiation ends now decide; the periodic tick runs Pseudocode 1
//!    for every subcoflow of every host (one that already ran at this
//!    instant does not run twice);
//! 3. rates are solved; a subcoflow is *served* while any of its flows has a
//!    rate above `EPS` × its sender's uplink capacity, and "no service
//!    during the last T" means it has been unserved since an instant more
//!    than `T` before the tick (a new subcoflow counts as unserved from its
//!    appearance until it gets a rate).
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
//! Correctness properties: every active flow's class is its subcoflow's
//! current priority ([`Dcas::set_priority`], and flows are declared with it
//! when they start); a subcoflow's `n_served` counts its flows with a rate
//! above the floor (updated from the solver's changed demands and at
//! finishes); a decision applies only to the round that announced
//! (`round` and `instance` checks in [`Dcas::handle`]). The slow reference
//! in `crates/sim/tests/reference.rs` implements the same rules plainly and
//! the engine is checked against it on random instances.

use crate::{Allocation, Changes, Clairvoyant, CoflowIdx, FlowIdx, KnowsSizes, Scheduler};
use coflowkit_alloc::{IncrementalMaxMin, EPS};
use coflowkit_model::fabric::mix;
use coflowkit_model::stats::BYTES_TIE;
use coflowkit_model::{CoflowId, Dur, HostId, Time};
use rustc_hash::FxHashMap;
use std::collections::BinaryHeap;
use std::fmt;
use std::sync::{Arc, Mutex};

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
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Desired {
    /// Remaining bytes at the sender / its NIC rate, in quanta (the paper).
    RemainingTime,
    /// Always this value (`desired=1`: per-flow fair sharing with
    /// `threshold=0`).
    Constant(u64),
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
        }
    }
}

/// The spec keys of [`DcasConfig`], as the registry takes them.
pub const KEYS: &[&str] = &[
    "delta",
    "threshold",
    "t",
    "expiry",
    "msg_delay",
    "loss",
    "seed",
    "psi",
    "phi",
    "desired",
    "quantum",
];

impl DcasConfig {
    /// Sets the parameter `key` (one of [`KEYS`]) from its spec text; the
    /// error says what is wrong with the value.
    pub fn set(&mut self, key: &str, value: &str) -> Result<(), String> {
        use coflowkit_model::parse;
        let combine =
            |v: &str| Combine::parse(v).ok_or_else(|| format!("'{v}' is not max, min or mean"));
        match key {
            "delta" => self.delta = parse::dur(value)?,
            "t" => self.starvation = parse::dur(value)?,
            "expiry" => self.expiry = parse::dur(value)?,
            "msg_delay" => self.msg_delay = parse::dur(value)?,
            "quantum" => self.quantum = parse::dur(value)?,
            "threshold" => {
                self.threshold = if value == "inf" {
                    f64::INFINITY
                } else {
                    parse::bytes(value)?.0 as f64
                }
            }
            "loss" => self.loss = parse::nonneg_real(value)?,
            "seed" => self.seed = parse::uint(value)?,
            "psi" => self.psi = combine(value)?,
            "phi" => self.phi = combine(value)?,
            "desired" => {
                self.desired =
                    if value == "bytes" {
                        Desired::RemainingTime
                    } else {
                        Desired::Constant(parse::uint(value).map_err(|_| {
                            format!("'{value}' is neither 'bytes' nor a whole number")
                        })?)
                    }
            }
            _ => return Err(format!("unknown key (known: {})", KEYS.join(", "))),
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
        match self.desired {
            Desired::Constant(k) => k,
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
    fn own(&self, f: FlowIdx) {
        assert_eq!(
            self.view.src(f),
            self.host,
            "host {} read flow {f} of another host",
            self.host
        );
    }
    /// Bytes flow `f` (of this host) has left.
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

/// A subcoflow, as its sender keeps it.
#[derive(Debug, Clone)]
struct Subcoflow {
    coflow: CoflowIdx,
    host: HostId,
    // Unique per subcoflow ever made (events name it).
    instance: u32,
    flows: Vec<FlowIdx>,
    priority: Option<Priority>,
    n_served: u32,
    unserved_since: Option<Time>,
    last_run: Time,
    // Runs of Pseudocode 1 so far; the open negotiation's desired priority.
    round: u32,
    pending: Option<u64>,
    feedback: Vec<u64>,
}

/// A receiver's cached desired priority.
#[derive(Debug, Clone, Copy)]
struct CacheEntry {
    sender: HostId,
    value: u64,
    at: Time,
}

/// Per host: its sender's subcoflows, its receiver's cache.
#[derive(Debug, Default)]
struct Host {
    subcoflows: Vec<u32>,
    cache: FxHashMap<CoflowIdx, Vec<CacheEntry>>,
    nic_bps: f64,
}

/// A protocol event.
#[derive(Debug, Clone, Copy)]
enum Event {
    /// An announcement reaches receiver `to`.
    Announce {
        to: HostId,
        from: HostId,
        coflow: CoflowIdx,
        instance: u32,
        round: u32,
        value: u64,
    },
    /// Receiver `at` replies to `to`'s announcement.
    Reply {
        at: HostId,
        to: HostId,
        coflow: CoflowIdx,
        instance: u32,
        round: u32,
    },
    /// Feedback reaches sender `to`.
    Feedback {
        to: HostId,
        coflow: CoflowIdx,
        instance: u32,
        round: u32,
        value: u64,
    },
    /// Sender `host`'s negotiation for `coflow` ends.
    Decide {
        host: HostId,
        coflow: CoflowIdx,
        instance: u32,
        round: u32,
    },
    /// Every sender runs Pseudocode 1.
    Tick,
}

impl Event {
    fn phase(&self) -> u8 {
        match self {
            Event::Announce { .. } => 0,
            Event::Reply { .. } => 1,
            Event::Feedback { .. } => 2,
            Event::Decide { .. } => 3,
            Event::Tick => 4,
        }
    }
}

/// An event in the queue, ordered by (instant, phase, sequence), earliest
/// first.
#[derive(Debug)]
struct Queued {
    at: Time,
    phase: u8,
    seq: u64,
    event: Event,
}

impl PartialEq for Queued {
    fn eq(&self, o: &Self) -> bool {
        self.key() == o.key()
    }
}
impl Eq for Queued {}
impl PartialOrd for Queued {
    fn partial_cmp(&self, o: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(o))
    }
}
impl Ord for Queued {
    fn cmp(&self, o: &Self) -> std::cmp::Ordering {
        o.key().cmp(&self.key())
    }
}
impl Queued {
    fn key(&self) -> (Time, u8, u64) {
        (self.at, self.phase, self.seq)
    }
}

/// Message kinds, for the loss hash.
const ANNOUNCE: u64 = 1;
const FEEDBACK: u64 = 2;

const NO_SUB: u32 = u32::MAX;

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
    // Per flow: its subcoflow and whether it is served.
    flow_sub: Vec<u32>,
    flow_served: Vec<bool>,
    // Per coflow: its arrival order, whether complete, receivers caching it.
    rank: Vec<u64>,
    n_ranked: u64,
    complete: Vec<bool>,
    cached_at: FxHashMap<CoflowIdx, Vec<HostId>>,
    queue: BinaryHeap<Queued>,
    seq: u64,
    tick_pending: bool,
    inc: Option<IncrementalMaxMin>,
    stats: DcasStats,
    // Scratch.
    released: Vec<CoflowIdx>,
    new_subs: Vec<u32>,
    new_flows: Vec<FlowIdx>,
    changed: Vec<u32>,
    receivers: Vec<HostId>,
}

impl Dcas {
    /// A D-CAS scheduler; `config` must be valid ([`DcasConfig::validate`]).
    pub fn new(config: DcasConfig) -> Dcas {
        Dcas {
            config,
            log: None,
            hosts: vec![],
            subs: vec![],
            free_subs: vec![],
            sub_of: FxHashMap::default(),
            n_subs: 0,
            n_instances: 0,
            flow_sub: vec![],
            flow_served: vec![],
            rank: vec![],
            n_ranked: 0,
            complete: vec![],
            cached_at: FxHashMap::default(),
            queue: BinaryHeap::new(),
            seq: 0,
            tick_pending: false,
            inc: None,
            stats: DcasStats::default(),
            released: vec![],
            new_subs: vec![],
            new_flows: vec![],
            changed: vec![],
            receivers: vec![],
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

    fn push(&mut self, at: Time, event: Event) {
        self.seq += 1;
        self.queue.push(Queued {
            at,
            phase: event.phase(),
            seq: self.seq,
            event,
        });
    }

    /// Whether the message of `kind` for `coflow` from `from` to `to` in the
    /// sender's round `round` is lost.
    fn lost(&mut self, kind: u64, coflow: CoflowId, from: HostId, to: HostId, round: u32) -> bool {
        if self.config.loss <= 0.0 {
            return false;
        }
        let lost = loss_draw(self.config.seed, kind, coflow, from, to, round) < self.config.loss;
        self.stats.lost += u64::from(lost);
        lost
    }

    /// The subcoflow named by an event, if it still exists.
    fn find(&self, c: CoflowIdx, h: HostId, instance: u32) -> Option<u32> {
        self.sub_of
            .get(&(c, h))
            .copied()
            .filter(|&s| self.subs[s as usize].instance == instance)
    }

    /// Gives subcoflow `s` priority `p` (its flows move to `p`'s class).
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
        let inc = self.inc.as_mut().expect("solver made at the first call");
        for &f in &sub.flows {
            if inc.is_declared(f) {
                inc.set_class(f, p.class());
            }
            out.set_class(f, p.queue_class());
        }
    }

    /// Pseudocode 1 for subcoflow `s`, now.
    fn run_sender(&mut self, s: u32, now: Time, view: &Clairvoyant<'_>, out: &mut Allocation) {
        let (threshold, starvation) = (self.config.threshold, self.config.starvation);
        let sub = &mut self.subs[s as usize];
        sub.last_run = now;
        sub.round += 1;
        sub.pending = None;
        sub.feedback.clear();
        let (c, h) = (sub.coflow, sub.host);
        let local = Local::new(*view, h);
        let rem: f64 = sub.flows.iter().map(|&f| local.remaining(f)).sum();
        let d = self
            .config
            .desired_of(rem, self.hosts[h.0 as usize].nic_bps);
        let waited = sub.unserved_since.map_or(Dur::ZERO, |u| now - u);
        if rem + BYTES_TIE < threshold {
            let p = Priority::fifo(self.rank[c as usize]);
            self.set_priority(s, p, Rule::Fifo, d, now, view, out);
        } else if waited > starvation {
            self.set_priority(s, Priority::STARVING, Rule::Starving, d, now, view, out);
        } else {
            let (instance, round) = (sub.instance, sub.round);
            sub.pending = Some(d);
            let mut receivers = std::mem::take(&mut self.receivers);
            receivers.clear();
            receivers.extend(sub.flows.iter().map(|&f| local.dst(f)));
            receivers.sort_unstable();
            receivers.dedup();
            let delay = self.config.msg_delay;
            let id = view.coflow_id(c);
            for &r in &receivers {
                self.stats.announcements += 1;
                if !self.lost(ANNOUNCE, id, h, r, round) {
                    let event = Event::Announce {
                        to: r,
                        from: h,
                        coflow: c,
                        instance,
                        round,
                        value: d,
                    };
                    self.push(now + delay, event);
                }
            }
            self.receivers = receivers;
            let event = Event::Decide {
                host: h,
                coflow: c,
                instance,
                round,
            };
            self.push(now + Dur(2 * delay.0), event);
            if self.subs[s as usize].priority.is_none() {
                self.set_priority(s, Priority::large(d), Rule::Interim, d, now, view, out);
            }
        }
    }

    /// Handles one protocol event due now.
    fn handle(&mut self, now: Time, event: Event, view: &Clairvoyant<'_>, out: &mut Allocation) {
        match event {
            Event::Announce {
                to,
                from,
                coflow,
                instance,
                round,
                value,
            } => {
                if self.complete[coflow as usize] {
                    return; // nothing of it will ever be read
                }
                let expiry = self.config.expiry;
                let cache = self.hosts[to.0 as usize].cache.entry(coflow).or_default();
                if cache.is_empty() {
                    self.cached_at.entry(coflow).or_default().push(to);
                }
                cache.retain(|e| e.at + expiry > now);
                match cache.iter_mut().find(|e| e.sender == from) {
                    Some(e) => {
                        e.value = value;
                        e.at = now;
                    }
                    None => cache.push(CacheEntry {
                        sender: from,
                        value,
                        at: now,
                    }),
                }
                let reply = Event::Reply {
                    at: to,
                    to: from,
                    coflow,
                    instance,
                    round,
                };
                self.push(now, reply);
            }
            Event::Reply {
                at,
                to,
                coflow,
                instance,
                round,
            } => {
                let expiry = self.config.expiry;
                let Some(cache) = self.hosts[at.0 as usize].cache.get(&coflow) else {
                    return;
                };
                let live = cache
                    .iter()
                    .filter(|e| e.at + expiry > now)
                    .map(|e| e.value);
                let Some(value) = self.config.psi.apply(live) else {
                    return;
                };
                self.stats.feedbacks += 1;
                if !self.lost(FEEDBACK, view.coflow_id(coflow), at, to, round) {
                    let event = Event::Feedback {
                        to,
                        coflow,
                        instance,
                        round,
                        value,
                    };
                    self.push(now + self.config.msg_delay, event);
                }
            }
            Event::Feedback {
                to,
                coflow,
                instance,
                round,
                value,
            } => {
                if let Some(s) = self.find(coflow, to, instance) {
                    let sub = &mut self.subs[s as usize];
                    if sub.round == round && sub.pending.is_some() {
                        sub.feedback.push(value);
                    }
                }
            }
            Event::Decide {
                host,
                coflow,
                instance,
                round,
            } => {
                let Some(s) = self.find(coflow, host, instance) else {
                    return;
                };
                let sub = &mut self.subs[s as usize];
                let Some(d) = sub.pending.filter(|_| sub.round == round) else {
                    return;
                };
                sub.pending = None;
                let (p, rule) = match self.config.phi.apply(sub.feedback.iter().copied()) {
                    Some(m) => (Priority::large(m), Rule::Negotiated),
                    None => {
                        self.stats.fallbacks += 1;
                        (Priority::large(d), Rule::Fallback)
                    }
                };
                self.set_priority(s, p, rule, d, now, view, out);
            }
            Event::Tick => {
                for h in 0..self.hosts.len() {
                    for i in 0..self.hosts[h].subcoflows.len() {
                        let s = self.hosts[h].subcoflows[i];
                        if self.subs[s as usize].last_run != now {
                            self.run_sender(s, now, view, out);
                        }
                    }
                }
                if self.n_subs > 0 {
                    self.push(now + self.config.delta, Event::Tick);
                } else {
                    self.tick_pending = false;
                }
            }
        }
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
                    priority: None,
                    n_served: 0,
                    unserved_since: Some(now),
                    last_run: Time::NEVER,
                    round: 0,
                    pending: None,
                    feedback: vec![],
                };
                self.n_instances = self.n_instances.wrapping_add(1);
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
        self.subs[s as usize].flows.push(f);
        self.flow_sub[f as usize] = s;
    }

    /// Finished flow `f` leaves its subcoflow (forgotten when empty).
    fn leave(&mut self, f: FlowIdx, now: Time) {
        let s = std::mem::replace(&mut self.flow_sub[f as usize], NO_SUB);
        let sub = &mut self.subs[s as usize];
        let at = sub.flows.iter().position(|&x| x == f).expect("flow listed");
        sub.flows.swap_remove(at);
        if std::mem::take(&mut self.flow_served[f as usize]) {
            sub.n_served -= 1;
            if sub.n_served == 0 {
                sub.unserved_since = Some(now);
            }
        }
        if sub.flows.is_empty() {
            let (c, h) = (sub.coflow, sub.host);
            self.sub_of.remove(&(c, h));
            let list = &mut self.hosts[h.0 as usize].subcoflows;
            let at = list.iter().position(|&x| x == s).expect("subcoflow listed");
            list.swap_remove(at);
            self.free_subs.push(s);
            self.n_subs -= 1;
        }
    }
}

/// The loss draw of a message, uniform in [0, 1): splitmix64 chained over
/// the seed, the kind, the coflow id, `(sender << 32) | receiver` and the
/// sender's round (the module doc).
pub fn loss_draw(
    seed: u64,
    kind: u64,
    coflow: CoflowId,
    from: HostId,
    to: HostId,
    round: u32,
) -> f64 {
    let mut h = mix(seed);
    h = mix(h ^ kind);
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
        if self.inc.is_none() {
            self.inc = Some(IncrementalMaxMin::new(view.capacities().to_vec()));
            let fabric = view.fabric();
            self.hosts = (0..fabric.n_hosts())
                .map(|h| Host {
                    nic_bps: view.capacity(fabric.uplink(HostId(h))).0,
                    ..Host::default()
                })
                .collect();
        }
        let n = view.n_flows();
        if self.flow_sub.len() < n {
            self.flow_sub.resize(n, NO_SUB);
            self.flow_served.resize(n, false);
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
            self.inc.as_mut().expect("made").set_count(f, 0);
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
            let inc = self.inc.as_mut().expect("made");
            inc.declare_in(f, view.path(f).iter().copied(), 1.0, p.class());
            inc.set_count(f, 1);
            out.set_class(f, p.queue_class());
        }
        for &c in &changes.finished_coflows {
            self.complete[c as usize] = true;
            for r in self.cached_at.remove(&c).unwrap_or_default() {
                self.hosts[r.0 as usize].cache.remove(&c);
            }
        }
        if self.n_subs > 0 && !self.tick_pending {
            let d = self.config.delta.0;
            self.tick_pending = true;
            self.push(Time((now.0 / d + 1) * d), Event::Tick);
        }
        // 2. Protocol events due now.
        while self.queue.peek().is_some_and(|q| q.at <= now) {
            let q = self.queue.pop().expect("peeked");
            self.handle(now, q.event, &view, out);
        }
        // 3. Rates, and who is served.
        let mut changed = std::mem::take(&mut self.changed);
        changed.clear();
        self.inc.as_mut().expect("made").solve(&mut changed);
        for &f in &changed {
            if !view.is_active(f) {
                continue;
            }
            let r = self.inc.as_ref().expect("made").rate(f);
            out.set_rate(f, r);
            let sub = &mut self.subs[self.flow_sub[f as usize] as usize];
            let served = r > EPS * self.hosts[sub.host.0 as usize].nic_bps;
            if served != self.flow_served[f as usize] {
                self.flow_served[f as usize] = served;
                if served {
                    sub.n_served += 1;
                    sub.unserved_since = None;
                } else {
                    sub.n_served -= 1;
                    if sub.n_served == 0 {
                        sub.unserved_since = Some(now);
                    }
                }
            }
        }
        self.changed = changed;
        self.queue.peek().map(|q| q.at)
    }
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
    }

    #[test]
    fn loss_draws_are_uniform_enough_and_fixed() {
        let n = 20_000;
        let lost = (0..n)
            .filter(|&i| loss_draw(7, ANNOUNCE, CoflowId(i), HostId(1), HostId(2), 3) < 0.25)
            .count();
        assert!((lost as f64 / n as f64 - 0.25).abs() < 0.02, "{lost}");
        assert_eq!(
            loss_draw(7, ANNOUNCE, CoflowId(1), HostId(1), HostId(2), 3),
            loss_draw(7, ANNOUNCE, CoflowId(1), HostId(1), HostId(2), 3)
        );
    }
}
