//! D-CAS at a host (Luo et al., ICC 2015, IV: Pseudocode 1 and 2), with
//! no coordinator: the sender-receiver negotiation as real [`Control`]
//! messages between hosts' policies. [`crate::dcas`] is the flow-level
//! model; the rule that picks a subcoflow's case
//! ([`crate::dcas::pseudocode1`]), the combinations Ψ and Φ
//! ([`Combine`]) and the parameters are shared with it.
//!
//! # Sender (Pseudocode 1)
//! Every `delta` (on the grid `k * delta` of the run's origin) and when a
//! subcoflow (a coflow's flows from this host) appears, with `rem` its
//! bytes left here:
//! 1. `rem < threshold`: `<0, arrival order>`, carried as FIFO by age on
//!    classes 0-3 ([`age_class`], the host's `age` quantum: every host
//!    agrees on the order without talking);
//! 2. else, unserved for longer than `T` (`t`): `<1, 0>`, class 4;
//! 3. else announce the desired priority `d` to the receivers of the
//!    subcoflow ([`ControlKind::Announce`], with the round's `number`),
//!    and set `<1, Φ(replies)>` once every receiver replied, or when the
//!    `wait` after the announcement is over with the replies that came
//!    (`<1, d>` if none came: all lost). Meanwhile the subcoflow keeps its
//!    class (a new one takes `<1, d>`). A new round drops one still open.
//!
//! `<1, P>` is carried on classes 4-7: `4 + #{b in bands : P >= b}`, the
//! bands `desired=bands:B1/B2/B3` or by default `threshold` times 4, 16
//! and 64. `d` is `rem` in bytes (the paper's `rem / NIC rate` when every
//! NIC is alike; Ψ and Φ commute with that scaling, the mean up to its
//! rounding), or the constant of `desired=N`.
//!
//! `rem` and "served" are counted on the wire (`count=wire`, the default):
//! `rem` includes the bytes handed to the transport and not yet
//! acknowledged ([`HostView::unacked`]), and a subcoflow is served when
//! its acknowledged bytes grew since the last tick. `count=written` (a
//! diagnostic) counts the bytes written to the socket instead.
//!
//! # Receiver (Pseudocode 2)
//! On an announcement: cache the value per (coflow, sender), drop entries
//! older than `expiry`, reply Ψ of the coflow's cached values
//! ([`ControlKind::Reply`], echoing the number). Every tick also forgets
//! what expired.
//!
//! Without negotiation (`loss=1`: every message lost, as the flow-level
//! `dcas:loss=1`) a sender keeps its own `<1, d>` and sends nothing; any
//! other `loss` negotiates (the network loses what it loses). `keep_own=yes`
//! (a diagnostic) negotiates but sets `<1, d>` whatever the replies say.
//!
//! Correctness properties: a reply applies only to the open round of its
//! coflow with its number, once per receiver ([`DcasHost::receive`]); every
//! flow of a subcoflow has the subcoflow's class (one field per
//! subcoflow); every open round ends by its deadline, which
//! [`HostPolicy::wake_at`] names.

use crate::dcas::{pseudocode1, Combine, DcasConfig, Desired, Rule};
use crate::descriptor::{Kind, Param, Params};
use crate::host::{
    age_class, age_quantum, whole_bytes, Control, ControlKind, Effects, HostContext, HostFlow,
    HostPolicy, HostView, Marking,
};
use crate::spec::{SchedulerError, WorkloadHints};
use coflowkit_model::{Dur, Time};
use std::collections::{BTreeMap, HashMap};

/// The host keys of `dcas` beyond the flow-level ones (and
/// [`crate::host::AGE_PARAM`]).
pub const HOST_PARAMS: [Param; 3] = [
    Param {
        key: "wait",
        kind: Kind::Duration,
        default: "2 x msg_delay",
        unit: "",
        help: "host policy: how long a sender waits for replies (below delta)",
    },
    Param {
        key: "count",
        kind: Kind::Choice(&["wire", "written"]),
        default: "wire",
        unit: "",
        help: "host policy: bytes left and service counted on the wire or at the socket",
    },
    Param {
        key: "keep_own",
        kind: Kind::Choice(&["no", "yes"]),
        default: "no",
        unit: "",
        help: "host policy diagnostic: negotiate but keep the sender's own <1, d>",
    },
];

/// How many of the negotiated decisions that moved a value are logged.
pub const RAISED_LOG: usize = 1000;

/// The counters of one host's negotiation, in their report order: the
/// negotiation's, then its sender's clock (counted only, never read by a
/// decision): `ticks` run, `ticks_late_ns` (summed, past the grid point
/// each was due at), `grid_missed` (grid points passed with no tick: a
/// timer that woke over `delta` late), `sub_ticks` (Pseudocode 1's runs at
/// ticks, one per subcoflow), the gaps between a subcoflow's consecutive
/// ticks in multiples of `delta` (`gaps_1` up to 1.5, `gaps_2` up to 2.5,
/// `gaps_3` up to 3.5, `gaps_4plus` beyond; `gap_ns` their sum), and over
/// the ended subcoflows decided large at least once (`large_subs`): their
/// lives here summed (`large_life_ns`, first flow's start to last flow's
/// end), their ticks, the ticks that found them starving and their rounds
/// (`large_life_ticks`, `large_life_starving`, `large_life_rounds`) and
/// the gaps between their ticks (`large_life_gap_ns`).
pub const COUNTERS: [&str; 25] = [
    "announcements",
    "replies_received",
    "replies_missing",
    "replies_late",
    "replies_sent",
    "negotiated",
    "fallback",
    "raised_value",
    "changed_queue",
    "dropped_rounds",
    "ticks",
    "ticks_late_ns",
    "grid_missed",
    "sub_ticks",
    "gaps_1",
    "gaps_2",
    "gaps_3",
    "gaps_4plus",
    "gap_ns",
    "large_subs",
    "large_life_ns",
    "large_life_ticks",
    "large_life_starving",
    "large_life_rounds",
    "large_life_gap_ns",
];

/// A negotiation in progress.
#[derive(Debug, Clone)]
struct Round {
    number: u32,
    d: u64,
    receivers: Vec<u32>,
    at: Time,
    deadline: Time,
    /// (receiver, value), in arrival order.
    replies: Vec<(u32, u64)>,
}

/// A subcoflow at this host.
#[derive(Debug, Clone)]
struct Sub {
    arrival: Time,
    /// Its active flows, in start order.
    flows: Vec<u64>,
    /// Bytes of its started flows not yet handed to the transport.
    left: u64,
    /// Bytes of its flows started here.
    total: u64,
    /// When it was last served.
    served: Time,
    /// Bytes acknowledged at the last tick (`count=wire`).
    acked: u64,
    class: u8,
    open: Option<Round>,
    /// What its life here counted (the sender's clock; no decision reads it).
    life: Life,
}

/// One subcoflow's life as its sender's clock saw it: counters only.
#[derive(Debug, Clone, Copy)]
struct Life {
    /// When its first flow started here.
    start: Time,
    /// Its last tick.
    last_tick: Option<Time>,
    /// Whether Pseudocode 1 found it large (or starving) once.
    large: bool,
    ticks: u64,
    starving: u64,
    rounds: u64,
    /// The gaps between its consecutive ticks, summed.
    gap: u64,
}

/// One negotiated decision that moved the value: when, the coflow, `d`,
/// Φ(replies) and the class it gave.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Raised {
    /// When it was decided.
    pub at: Time,
    /// The coflow.
    pub coflow: u32,
    /// The sender's desired value.
    pub d: u64,
    /// Φ of the replies.
    pub p: u64,
    /// The class `<1, p>` gave.
    pub class: u8,
}

/// D-CAS's per-host policy; see the module doc.
#[derive(Debug, Clone)]
pub struct DcasHost {
    threshold: u64,
    delta: Dur,
    starvation: Dur,
    expiry: Dur,
    wait: Dur,
    quantum: Dur,
    psi: Combine,
    phi: Combine,
    constant: Option<u64>,
    bands: [u64; 3],
    negotiate: bool,
    keep_own: bool,
    wire: bool,
    next_tick: Time,
    /// Flow id -> (coflow, receiver, size, bytes sent).
    flows: HashMap<u64, (u32, u32, u64, u64)>,
    subs: BTreeMap<u32, Sub>,
    /// The sender's round number per coflow (kept after a subcoflow ends).
    numbers: HashMap<u32, u32>,
    /// Receiver: coflow -> sender -> (latest value, when it came).
    cache: BTreeMap<u32, BTreeMap<u32, (u64, Time)>>,
    counts: [u64; COUNTERS.len()],
    runs: BTreeMap<u32, [u64; 2]>,
    rtts: Vec<Dur>,
    rounds: Vec<Dur>,
    raised: Vec<Raised>,
}

/// What [`DcasHost::new`] takes beyond the flow-level configuration.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct DcasHostConfig {
    /// How long a sender waits for replies.
    pub wait: Dur,
    /// One class per this much age among small subcoflows.
    pub quantum: Dur,
    /// The three byte counts that cut `<1, P>` into classes 4-7.
    pub bands: [u64; 3],
    /// Negotiate (else keep `<1, d>`, send nothing).
    pub negotiate: bool,
    /// Negotiate but keep `<1, d>`.
    pub keep_own: bool,
    /// Count bytes left and service on the wire (else at the socket).
    pub wire: bool,
}

impl DcasHost {
    /// The policy of `config` (the flow-level one) with the host's `host`.
    pub fn new(config: &DcasConfig, host: &DcasHostConfig) -> DcasHost {
        DcasHost {
            threshold: whole_bytes(config.threshold),
            delta: Dur(config.delta.0.max(1)),
            starvation: config.starvation,
            expiry: config.expiry,
            wait: host.wait,
            quantum: host.quantum,
            psi: config.psi,
            phi: config.phi,
            constant: match config.desired {
                Desired::Constant(k) => Some(k),
                _ => None,
            },
            bands: host.bands,
            negotiate: host.negotiate,
            keep_own: host.keep_own,
            wire: host.wire,
            next_tick: Time(config.delta.0.max(1)),
            flows: HashMap::new(),
            subs: BTreeMap::new(),
            numbers: HashMap::new(),
            cache: BTreeMap::new(),
            counts: [0; COUNTERS.len()],
            runs: BTreeMap::new(),
            rtts: vec![],
            rounds: vec![],
            raised: vec![],
        }
    }

    /// Whether this host negotiates (sends and answers control messages).
    pub fn negotiates(&self) -> bool {
        self.negotiate
    }

    /// The counters, named as [`COUNTERS`].
    pub fn counts(&self) -> impl Iterator<Item = (&'static str, u64)> + '_ {
        COUNTERS.iter().copied().zip(self.counts.iter().copied())
    }

    /// Per coflow: how often its subcoflow here was decided as large, and of
    /// those how often as starving (the flow-level decision log's counts).
    pub fn runs(&self) -> &BTreeMap<u32, [u64; 2]> {
        &self.runs
    }

    /// Round trips of the replies that came in time.
    pub fn rtts(&self) -> &[Dur] {
        &self.rtts
    }

    /// How long each decided round took from its announcement.
    pub fn rounds(&self) -> &[Dur] {
        &self.rounds
    }

    /// The first [`RAISED_LOG`] negotiated decisions that moved the value.
    pub fn raised(&self) -> &[Raised] {
        &self.raised
    }

    /// The class of `<1, value>`: 4 to 7 by the bands reached.
    pub fn large(&self, value: u64) -> u8 {
        4 + self.bands.iter().filter(|&&b| value >= b).count() as u8
    }

    fn count(&mut self, name: &str, by: u64) {
        if let Some(i) = COUNTERS.iter().position(|&n| n == name) {
            self.counts[i] += by;
        }
    }

    /// Drops `c`'s open round, if any.
    fn drop_round(&mut self, c: u32) {
        let Some(r) = self.subs.get_mut(&c).and_then(|s| s.open.take()) else {
            return;
        };
        self.count("dropped_rounds", 1);
        self.count(
            "replies_missing",
            (r.receivers.len() - r.replies.len()) as u64,
        );
    }

    /// Sets `c`'s class; its flows change if it moved.
    fn set_class(&mut self, c: u32, class: u8, out: &mut Effects) {
        if let Some(sub) = self.subs.get_mut(&c) {
            if sub.class != class {
                sub.class = class;
                out.changed.extend_from_slice(&sub.flows);
            }
        }
    }

    /// Pseudocode 1 for `c`'s subcoflow at `now` with `in_socket` bytes
    /// written and not acknowledged: its class (announcing, if it
    /// negotiates).
    fn decide(&mut self, c: u32, now: Time, in_socket: u64, out: &mut Effects) -> u8 {
        self.drop_round(c);
        let Some(sub) = self.subs.get(&c) else {
            return 7;
        };
        let rem = sub.left.saturating_add(in_socket);
        let waited = now - sub.served;
        let rule = pseudocode1(rem as f64, self.threshold as f64, waited, self.starvation);
        if rule == Rule::Fifo {
            return age_class(0, 4, now - sub.arrival, self.quantum);
        }
        let current = sub.class;
        let runs = self.runs.entry(c).or_default();
        runs[0] += 1;
        let starving = rule == Rule::Starving;
        if let Some(sub) = self.subs.get_mut(&c) {
            sub.life.large = true;
            sub.life.starving += u64::from(starving);
            sub.life.rounds += u64::from(!starving && self.negotiate);
        }
        if starving {
            runs[1] += 1;
            return self.large(0);
        }
        let d = self.constant.unwrap_or(rem);
        if !self.negotiate {
            return self.large(d);
        }
        let number = self.numbers.entry(c).or_default();
        *number = number.wrapping_add(1);
        let number = *number;
        let flows = &self.subs[&c].flows;
        let mut receivers: Vec<u32> = flows.iter().map(|f| self.flows[f].1).collect();
        receivers.sort_unstable();
        receivers.dedup();
        let interim = if self.keep_own {
            self.large(d)
        } else {
            current
        };
        for &r in &receivers {
            let msg = Control {
                kind: ControlKind::Announce,
                number,
                coflow: c,
                value: d,
            };
            out.send.push((r, msg));
        }
        self.count("announcements", receivers.len() as u64);
        if let Some(sub) = self.subs.get_mut(&c) {
            sub.open = Some(Round {
                number,
                d,
                receivers,
                at: now,
                deadline: now + self.wait,
                replies: vec![],
            });
        }
        interim
    }

    /// The end of `c`'s round at `now`: `<1, Φ(replies)>`, or `<1, d>`.
    fn close(&mut self, c: u32, now: Time, out: &mut Effects) {
        let Some(r) = self.subs.get_mut(&c).and_then(|s| s.open.take()) else {
            return;
        };
        self.rounds.push(now - r.at);
        self.count(
            "replies_missing",
            (r.receivers.len() - r.replies.len()) as u64,
        );
        let p = match self.phi.apply(r.replies.iter().map(|x| x.1)) {
            Some(p) => {
                self.count("negotiated", 1);
                let moved = self.large(p) != self.large(r.d);
                self.count("raised_value", u64::from(p != r.d));
                self.count("changed_queue", u64::from(moved));
                if p != r.d && self.raised.len() < RAISED_LOG {
                    let class = self.large(p);
                    self.raised.push(Raised {
                        at: now,
                        coflow: c,
                        d: r.d,
                        p,
                        class,
                    });
                }
                p
            }
            None => {
                self.count("fallback", 1);
                r.d
            }
        };
        let class = self.large(if self.keep_own { r.d } else { p });
        self.set_class(c, class, out);
    }

    /// Ends the rounds whose wait is over at `now`.
    fn settle(&mut self, now: Time, out: &mut Effects) {
        let due: Vec<u32> = self
            .subs
            .iter()
            .filter(|(_, s)| s.open.as_ref().is_some_and(|r| r.deadline <= now))
            .map(|(&c, _)| c)
            .collect();
        for c in due {
            self.close(c, now, out);
        }
    }

    /// The periodic run of Pseudocode 1 for every subcoflow, and the
    /// receiver's sweep of what expired.
    fn tick(&mut self, now: Time, view: &dyn HostView, out: &mut Effects) {
        let cs: Vec<u32> = self.subs.keys().copied().collect();
        self.count("sub_ticks", cs.len() as u64);
        let delta = self.delta.0;
        for &c in &cs {
            let Some(life) = self.subs.get_mut(&c).map(|s| &mut s.life) else {
                continue;
            };
            life.ticks += 1;
            let gap = life.last_tick.replace(now).map(|t| (now - t).0);
            if let Some(gap) = gap {
                life.gap += gap;
                let bucket = match (2 * gap + delta) / (2 * delta) {
                    0 | 1 => "gaps_1",
                    2 => "gaps_2",
                    3 => "gaps_3",
                    _ => "gaps_4plus",
                };
                self.count(bucket, 1);
                self.count("gap_ns", gap);
            }
        }
        for c in cs {
            let in_socket = if self.wire {
                let sub = &self.subs[&c];
                sub.flows.iter().map(|&f| view.unacked(f)).sum::<u64>()
            } else {
                0
            };
            if self.wire {
                let sub = self.subs.get_mut(&c).expect("listed");
                let acked = sub.total.saturating_sub(sub.left).saturating_sub(in_socket);
                if acked > sub.acked {
                    sub.served = now;
                }
                sub.acked = acked;
            }
            let class = self.decide(c, now, in_socket, out);
            self.set_class(c, class, out);
        }
        let expiry = self.expiry;
        self.cache.retain(|_, entries| {
            entries.retain(|_, (_, at)| *at + expiry > now);
            !entries.is_empty()
        });
    }
}

impl HostPolicy for DcasHost {
    fn name(&self) -> &str {
        "dcas"
    }
    /// Its counters ([`DcasHost::counts`]), then `decided_large` and
    /// `decided_starving`: Pseudocode 1's runs that found a subcoflow
    /// large, and of those the starving ones.
    fn counters(&self) -> Vec<(&'static str, u64)> {
        let runs = self
            .runs()
            .values()
            .fold([0u64; 2], |a, r| [a[0] + r[0], a[1] + r[1]]);
        self.counts()
            .chain([("decided_large", runs[0]), ("decided_starving", runs[1])])
            .collect()
    }
    fn start(&mut self, now: Time, flow: &HostFlow, out: &mut Effects) {
        let c = flow.coflow;
        self.flows.insert(flow.id, (c, flow.dst, flow.size, 0));
        let new = !self.subs.contains_key(&c);
        let sub = self.subs.entry(c).or_insert_with(|| Sub {
            arrival: flow.coflow_arrival,
            flows: vec![],
            left: 0,
            total: 0,
            served: now,
            acked: 0,
            class: 7,
            open: None,
            life: Life {
                start: now,
                last_tick: None,
                large: false,
                ticks: 0,
                starving: 0,
                rounds: 0,
                gap: 0,
            },
        });
        sub.flows.push(flow.id);
        sub.left = sub.left.saturating_add(flow.size);
        sub.total = sub.total.saturating_add(flow.size);
        if new {
            // Its first flow here: nothing written yet. A new subcoflow
            // waiting for its negotiation takes <1, d> meanwhile.
            let rem = flow.size;
            let d = self.constant.unwrap_or(rem);
            let interim = self.large(d);
            if let Some(s) = self.subs.get_mut(&c) {
                s.class = interim;
            }
            let class = self.decide(c, now, 0, out);
            if let Some(s) = self.subs.get_mut(&c) {
                s.class = class;
            }
        }
    }
    fn sent(&mut self, now: Time, flow: u64, bytes: u64, _out: &mut Effects) {
        let Some(f) = self.flows.get_mut(&flow) else {
            return;
        };
        f.3 = f.3.saturating_add(bytes);
        let c = f.0;
        if let Some(sub) = self.subs.get_mut(&c) {
            sub.left = sub.left.saturating_sub(bytes);
            if !self.wire {
                sub.served = now;
            }
        }
    }
    fn finish(&mut self, now: Time, flow: u64, _out: &mut Effects) {
        let Some((c, _, size, sent)) = self.flows.remove(&flow) else {
            return;
        };
        let Some(sub) = self.subs.get_mut(&c) else {
            return;
        };
        sub.left = sub.left.saturating_sub(size.saturating_sub(sent));
        sub.flows.retain(|&f| f != flow);
        if sub.flows.is_empty() {
            self.drop_round(c);
            if let Some(life) = self.subs.remove(&c).map(|s| s.life).filter(|l| l.large) {
                self.count("large_subs", 1);
                self.count("large_life_ns", (now - life.start).0);
                self.count("large_life_ticks", life.ticks);
                self.count("large_life_starving", life.starving);
                self.count("large_life_rounds", life.rounds);
                self.count("large_life_gap_ns", life.gap);
            }
        }
    }
    fn receive(&mut self, now: Time, from: u32, msg: &Control, out: &mut Effects) {
        let c = msg.coflow;
        match msg.kind {
            ControlKind::Announce => {
                let expiry = self.expiry;
                let entries = self.cache.entry(c).or_default();
                entries.insert(from, (msg.value, now));
                entries.retain(|_, (_, at)| *at + expiry > now);
                let psi = self.psi.apply(entries.values().map(|e| e.0)).unwrap_or(0);
                self.count("replies_sent", 1);
                let reply = Control {
                    kind: ControlKind::Reply,
                    value: psi,
                    ..*msg
                };
                out.send.push((from, reply));
            }
            ControlKind::Reply => {
                let fits = self
                    .subs
                    .get(&c)
                    .and_then(|s| s.open.as_ref())
                    .is_some_and(|r| {
                        r.number == msg.number
                            && r.receivers.contains(&from)
                            && !r.replies.iter().any(|x| x.0 == from)
                    });
                if !fits {
                    self.count("replies_late", 1);
                    return;
                }
                self.count("replies_received", 1);
                let Some(r) = self.subs.get_mut(&c).and_then(|s| s.open.as_mut()) else {
                    return;
                };
                r.replies.push((from, msg.value));
                let (at, all) = (r.at, r.replies.len() == r.receivers.len());
                self.rtts.push(now - at);
                if all {
                    self.close(c, now, out);
                }
            }
        }
    }
    fn wake_at(&self) -> Option<Time> {
        let rounds = self
            .subs
            .values()
            .filter_map(|s| s.open.as_ref().map(|r| r.deadline));
        rounds.chain([self.next_tick]).min()
    }
    fn wake(&mut self, now: Time, view: &dyn HostView, out: &mut Effects) {
        self.settle(now, out);
        if now >= self.next_tick {
            let late = (now - self.next_tick).0;
            self.count("ticks", 1);
            self.count("ticks_late_ns", late);
            self.count("grid_missed", late / self.delta.0);
            self.next_tick = Time((now.0 / self.delta.0 + 1) * self.delta.0);
            self.tick(now, view, out);
        }
        dedup(&mut out.changed);
    }
    fn marking(&self, flow: u64) -> Marking {
        self.flows
            .get(&flow)
            .and_then(|f| self.subs.get(&f.0))
            .map_or(Marking::BEST_EFFORT, |s| Marking::class(s.class))
    }
    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
}

/// Keeps the first of each id (a flow listed once per call).
fn dedup(ids: &mut Vec<u64>) {
    let mut seen = std::collections::HashSet::new();
    ids.retain(|id| seen.insert(*id));
}

/// Builds it from the `dcas` scheduler's spec: the flow-level keys
/// (`delta`, `threshold`, `t`, `expiry`, `psi`, `phi`, `desired`, `loss`
/// as the module doc says; `msg_delay` sets the default `wait`; `seed`,
/// `quantum` and `solver` are the flow-level model's) and the host keys
/// `age`, `wait`, `count` and `keep_own`.
pub(crate) fn build(
    p: &Params<'_>,
    _hints: &WorkloadHints,
    _ctx: &HostContext,
) -> Result<Box<dyn HostPolicy>, SchedulerError> {
    let mut config = DcasConfig::default();
    config.apply(p)?;
    config
        .validate()
        .map_err(|(key, message)| p.bad(key, message))?;
    let wait = p
        .positive_dur("wait", "must be above 0")?
        .unwrap_or(Dur(config.msg_delay.0.saturating_mul(2)));
    if wait >= config.delta {
        return Err(p.bad(
            "wait",
            format!(
                "{} ns: a round must end before the next tick (delta = {} ns)",
                wait.0, config.delta.0
            ),
        ));
    }
    let threshold = whole_bytes(config.threshold);
    let bands = match &config.desired {
        Desired::Bands(b) => <[u64; 3]>::try_from(b.as_slice()).map_err(|_| {
            p.bad(
                "desired",
                format!(
                    "{} bands: a host cuts <1, P> into classes 4-7, give 3",
                    b.len()
                ),
            )
        })?,
        _ => [4, 16, 64].map(|m| threshold.saturating_mul(m).max(1)),
    };
    let host = DcasHostConfig {
        wait,
        quantum: age_quantum(p)?,
        bands,
        negotiate: config.loss < 1.0,
        keep_own: p.choice("keep_own")? == "yes",
        wire: p.choice("count")? == "wire",
    };
    Ok(Box::new(DcasHost::new(&config, &host)))
}

#[cfg(test)]
mod tests;
