//! `dcas`, D-CAS written plainly from the module doc of
//! `coflowkit_sched::dcas`. D-CAS keeps state between events (priorities,
//! caches, messages in flight, when a subcoflow was last found served), so
//! its reference also keeps it: subcoflows as lists, protocol events in one
//! list searched for the least (instant, phase, sequence), receivers'
//! replies as events of their own (the engine batches them), the tick at
//! multiples of δ, rates by strict priority over subcoflows with max-min
//! among equal priorities. It shares with the engine only the definition of
//! a lost message ([`loss_draw`]). Its events are extra exact instants of
//! the reference's loop.
//!
//! A decision within rounding of a boundary (a desired priority within 200
//! ns of half a quantum, bytes left within 8 bytes of the threshold, a wait
//! within 1 µs of T, a cache entry within 1 µs of its expiry, a protocol
//! event within 1 µs of a flow completion, service lasting under 1 µs) may
//! go the other way in the engine, whose instants are whole nanoseconds:
//! such a case is *ambiguous* and not compared (about 6% of the generated
//! cases; every rule of Pseudocode 1 and cache expiry occur in most of the
//! others).
//!
//! The degenerate settings the D-CAS paper names (IV) have the references
//! of other schedulers: desired priority 1 and no FIFO class is per-flow
//! fair sharing; every subcoflow in the FIFO class is coflow FIFO.

use crate::case::Case;
use crate::fair::Fair;
use crate::ordered::{Key, Ordered};
use crate::policy::ReferencePolicy;
use crate::sim::RefSim;
use coflowkit_alloc::EPS;
use coflowkit_model::stats::BYTES_TIE;
use coflowkit_model::{CoflowId, HostId};
use coflowkit_sched::dcas::{loss_draw, MessageKind};
use std::collections::HashMap;

/// How values are combined (Ψ, Φ).
#[derive(Debug, Clone, Copy, PartialEq)]
enum Agg {
    Max,
    Min,
    Mean,
}

/// `v` combined by `a`; `None` if empty.
fn agg(a: Agg, v: &[u64]) -> Option<u64> {
    if v.is_empty() {
        return None;
    }
    Some(match a {
        Agg::Max => *v.iter().max().unwrap(),
        Agg::Min => *v.iter().min().unwrap(),
        // Rounded to the nearest whole value, halves up.
        Agg::Mean => {
            let n = v.len() as u128;
            let sum: u128 = v.iter().map(|&x| x as u128).sum();
            ((sum + n / 2) / n) as u64
        }
    })
}

/// D-CAS's parameters, times in ns.
#[derive(Debug, Clone, Copy, PartialEq)]
struct DcasParams {
    delta: f64,
    t: f64,
    expiry: f64,
    msg_delay: f64,
    threshold: f64,
    quantum: f64,
    loss: f64,
    seed: u64,
    psi: Agg,
    phi: Agg,
    /// `desired=bands:..`: the desired priority is how many of these bytes
    /// the remaining bytes reach, not the remaining time in quanta (three
    /// bands, as the testbed's queues 4-7).
    bands: Option<[f64; 3]>,
}

impl DcasParams {
    /// The parameters of a spec written with times in `ns`.
    fn parse(spec: &str) -> DcasParams {
        let mut p = DcasParams {
            delta: 0.0,
            t: 0.0,
            expiry: 0.0,
            msg_delay: 0.0,
            threshold: 0.0,
            quantum: 0.0,
            loss: 0.0,
            seed: 0,
            psi: Agg::Max,
            phi: Agg::Max,
            bands: None,
        };
        let ns = |v: &str| v.strip_suffix("ns").unwrap().parse::<f64>().unwrap();
        let agg = |v: &str| match v {
            "max" => Agg::Max,
            "min" => Agg::Min,
            "mean" => Agg::Mean,
            _ => panic!("{v}"),
        };
        for kv in spec.strip_prefix("dcas:").unwrap().split(';') {
            let (k, v) = kv.split_once('=').unwrap();
            match k {
                "delta" => p.delta = ns(v),
                "t" => p.t = ns(v),
                "expiry" => p.expiry = ns(v),
                "msg_delay" => p.msg_delay = ns(v),
                "quantum" => p.quantum = ns(v),
                "threshold" => p.threshold = v.parse().unwrap(),
                "loss" => p.loss = v.parse().unwrap(),
                "seed" => p.seed = v.parse().unwrap(),
                "psi" => p.psi = agg(v),
                "phi" => p.phi = agg(v),
                "desired" => {
                    let list = v.strip_prefix("bands:").expect("desired=bands:.. only");
                    let b: Vec<f64> = list.split('/').map(|b| b.parse().unwrap()).collect();
                    p.bands = Some(b.try_into().expect("three bands"));
                }
                "solver" => {}
                _ => panic!("no reference for dcas key {k}"),
            }
        }
        p
    }
}

/// A subcoflow: the active flows of one coflow at one sender.
#[derive(Debug, Clone)]
struct RefSub {
    coflow: usize,
    host: u32,
    instance: u64,
    flows: Vec<usize>,
    prio: Option<(u8, u64)>,
    /// Whether the rates of the last event serve it.
    served: bool,
    /// When that service began.
    served_from: f64,
    /// Whether any event since its last run of Pseudocode 1 gave it service.
    served_since_run: bool,
    /// The last run that found it served, or its appearance: its sender's
    /// tick clock (the host policy's).
    served_run: f64,
    last_run: f64,
    round: u32,
    pending: Option<u64>,
    feedback: Vec<u64>,
}

/// A protocol event; phases order events at one instant.
#[derive(Debug, Clone, Copy)]
enum RefEv {
    /// Phase 0: an announcement reaches a receiver.
    Announce {
        to: u32,
        from: u32,
        coflow: usize,
        instance: u64,
        round: u32,
        value: u64,
    },
    /// Phase 1: the receiver replies.
    Reply {
        at: u32,
        to: u32,
        coflow: usize,
        instance: u64,
        round: u32,
    },
    /// Phase 2: feedback reaches the sender.
    Feedback {
        coflow: usize,
        host: u32,
        instance: u64,
        round: u32,
        value: u64,
    },
    /// Phase 3: the sender's negotiation ends.
    Decide {
        coflow: usize,
        host: u32,
        instance: u64,
        round: u32,
    },
}

impl RefEv {
    fn phase(&self) -> u8 {
        match self {
            RefEv::Announce { .. } => 0,
            RefEv::Reply { .. } => 1,
            RefEv::Feedback { .. } => 2,
            RefEv::Decide { .. } => 3,
        }
    }
}

/// A receiver's cached desired priority: (sender, value, cached at).
type CacheEntry = (u32, u64, f64);

/// The hosts' D-CAS state, all in one place (the reference does not model
/// who knows what; the engine's scheduler does).
#[derive(Debug)]
pub struct Dcas {
    p: DcasParams,
    subs: Vec<RefSub>,
    n_instances: u64,
    /// Per (receiver, coflow): (sender, value, cached at).
    cache: HashMap<(u32, usize), Vec<CacheEntry>>,
    /// (instant, phase, sequence, event), handled in that order.
    events: Vec<(f64, u8, u64, RefEv)>,
    seq: u64,
    last_tick: f64,
}

/// `dcas:threshold=0;desired=1` (fair), `dcas:threshold=inf` (fifo), and
/// `dcas:..` with times in `ns`.
pub fn policy(spec: &str, _case: &Case) -> Box<dyn ReferencePolicy> {
    match spec {
        "dcas:threshold=0;desired=1" => Box::new(Fair),
        "dcas:threshold=inf" => Box::new(Ordered(Key::Fifo, false)),
        other if other.starts_with("dcas:") => Box::new(Dcas::new(DcasParams::parse(other))),
        other => panic!("no reference policy for '{other}'"),
    }
}

/// Coflow `c`'s arrival order: how many coflows were released before it
/// (by release, then (arrival, id), the order of `sim.coflows`).
fn rank(sim: &RefSim, c: usize) -> u64 {
    let key = |x: usize| (sim.coflows[x].release, x);
    (0..sim.coflows.len())
        .filter(|&x| sim.coflows[x].released && key(x) < key(c))
        .count() as u64
}

impl Dcas {
    fn new(p: DcasParams) -> Dcas {
        Dcas {
            p,
            subs: vec![],
            n_instances: 0,
            cache: HashMap::new(),
            events: vec![],
            seq: 0,
            last_tick: f64::NEG_INFINITY,
        }
    }

    fn push(&mut self, at: f64, ev: RefEv) {
        self.seq += 1;
        self.events.push((at, ev.phase(), self.seq, ev));
    }

    fn find(&self, coflow: usize, host: u32, instance: u64) -> Option<usize> {
        self.subs
            .iter()
            .position(|s| s.coflow == coflow && s.host == host && s.instance == instance)
    }

    /// Flows that finished leave their subcoflows (empty ones are
    /// forgotten); started ones join theirs; new subcoflows run
    /// Pseudocode 1.
    fn members(&mut self, sim: &mut RefSim, t: f64) {
        for s in &mut self.subs {
            s.flows.retain(|&f| sim.is_active(f));
        }
        self.subs.retain(|s| !s.flows.is_empty());
        let mut new = vec![];
        for f in 0..sim.flows.len() {
            if !sim.is_active(f) || self.subs.iter().any(|s| s.flows.contains(&f)) {
                continue;
            }
            let (c, h) = (sim.flows[f].coflow, sim.flows[f].src);
            match self.subs.iter().position(|s| s.coflow == c && s.host == h) {
                Some(i) => self.subs[i].flows.push(f),
                None => {
                    self.n_instances += 1;
                    self.subs.push(RefSub {
                        coflow: c,
                        host: h,
                        instance: self.n_instances,
                        flows: vec![f],
                        prio: None,
                        served: false,
                        served_from: f64::NAN,
                        served_since_run: false,
                        served_run: t,
                        last_run: f64::NAN,
                        round: 0,
                        pending: None,
                        feedback: vec![],
                    });
                    new.push(self.n_instances);
                }
            }
        }
        for inst in new {
            let i = self.subs.iter().position(|s| s.instance == inst).unwrap();
            self.pseudocode_1(sim, i, t);
        }
    }

    /// Pseudocode 1 for subcoflow `i` at `t`.
    fn pseudocode_1(&mut self, sim: &mut RefSim, i: usize, t: f64) {
        let p = self.p;
        let s = &mut self.subs[i];
        // Served at this run if served at any time since the last one; the
        // wait counts from the last run that found it served.
        if s.served_since_run {
            s.served_run = t;
        }
        s.served_since_run = false;
        let waited = t - s.served_run;
        s.last_run = t;
        s.round += 1;
        s.pending = None;
        s.feedback.clear();
        let rem: f64 = s.flows.iter().map(|&f| sim.flows[f].rem).sum();
        let nic = sim.caps[2 * s.host as usize];
        let x = rem * 8e9 / nic / p.quantum;
        let progressed = s
            .flows
            .iter()
            .any(|&f| sim.flows[f].rem != sim.flows[f].size);
        if p.bands.is_none() && progressed && ((x - x.floor()) - 0.5).abs() * p.quantum < 200.0 {
            sim.ambiguous = true; // rounds either way
        }
        let desired = match &p.bands {
            None => x.round() as u64,
            Some(bands) => {
                if progressed && bands.iter().any(|&b| (rem + BYTES_TIE - b).abs() < 8.0) {
                    sim.ambiguous = true; // counts either way
                }
                bands.iter().filter(|&&b| rem + BYTES_TIE >= b).count() as u64
            }
        };
        if (rem - (p.threshold - BYTES_TIE)).abs() < 8.0 {
            sim.ambiguous = true;
        }
        if (waited - p.t).abs() < 1_000.0 {
            sim.ambiguous = true;
        }
        if rem + BYTES_TIE < p.threshold {
            let r = rank(sim, s.coflow);
            self.subs[i].prio = Some((0, r));
        } else if waited > p.t {
            s.prio = Some((1, 0));
        } else {
            s.pending = Some(desired);
            if s.prio.is_none() {
                s.prio = Some((1, desired));
            }
            let mut receivers: Vec<u32> = s.flows.iter().map(|&f| sim.flows[f].dst).collect();
            receivers.sort_unstable();
            receivers.dedup();
            let (c, h, instance, round) = (s.coflow, s.host, s.instance, s.round);
            let id = CoflowId(sim.coflows[c].id);
            for r in receivers {
                let draw = loss_draw(
                    p.seed,
                    MessageKind::Announce,
                    id,
                    HostId(h),
                    HostId(r),
                    round,
                );
                if draw >= p.loss {
                    let ev = RefEv::Announce {
                        to: r,
                        from: h,
                        coflow: c,
                        instance,
                        round,
                        value: desired,
                    };
                    self.push(t + p.msg_delay, ev);
                }
            }
            let ev = RefEv::Decide {
                coflow: c,
                host: h,
                instance,
                round,
            };
            self.push(t + 2.0 * p.msg_delay, ev);
        }
    }

    /// The protocol's events due by `t`, by (instant, phase, sequence), the
    /// tick last at its instant.
    fn protocol(&mut self, sim: &mut RefSim, t: f64) {
        let p = self.p;
        loop {
            let next = (0..self.events.len())
                .filter(|&k| self.events[k].0 <= t)
                .min_by(|&a, &b| {
                    let (x, y) = (&self.events[a], &self.events[b]);
                    x.0.total_cmp(&y.0).then((x.1, x.2).cmp(&(y.1, y.2)))
                });
            let Some(k) = next else { break };
            let (at, _, _, ev) = self.events.remove(k);
            match ev {
                RefEv::Announce {
                    to,
                    from,
                    coflow,
                    instance,
                    round,
                    value,
                } => {
                    let entries = self.cache.entry((to, coflow)).or_default();
                    for e in entries.iter() {
                        if (e.2 + p.expiry - at).abs() < 1_000.0 {
                            sim.ambiguous = true;
                        }
                    }
                    entries.retain(|e| e.2 + p.expiry > at);
                    match entries.iter_mut().find(|e| e.0 == from) {
                        Some(e) => *e = (from, value, at),
                        None => entries.push((from, value, at)),
                    }
                    let ev = RefEv::Reply {
                        at: to,
                        to: from,
                        coflow,
                        instance,
                        round,
                    };
                    self.push(at, ev);
                }
                RefEv::Reply {
                    at: host,
                    to,
                    coflow,
                    instance,
                    round,
                } => {
                    let live: Vec<u64> = self.cache[&(host, coflow)]
                        .iter()
                        .filter(|e| e.2 + p.expiry > at)
                        .map(|e| e.1)
                        .collect();
                    let value = agg(p.psi, &live).expect("the announcer's own entry");
                    let id = CoflowId(sim.coflows[coflow].id);
                    let draw = loss_draw(
                        p.seed,
                        MessageKind::Feedback,
                        id,
                        HostId(host),
                        HostId(to),
                        round,
                    );
                    if draw >= p.loss {
                        let ev = RefEv::Feedback {
                            coflow,
                            host: to,
                            instance,
                            round,
                            value,
                        };
                        self.push(at + p.msg_delay, ev);
                    }
                }
                RefEv::Feedback {
                    coflow,
                    host,
                    instance,
                    round,
                    value,
                } => {
                    if let Some(i) = self.find(coflow, host, instance) {
                        let s = &mut self.subs[i];
                        if s.round == round && s.pending.is_some() {
                            s.feedback.push(value);
                        }
                    }
                }
                RefEv::Decide {
                    coflow,
                    host,
                    instance,
                    round,
                } => {
                    if let Some(i) = self.find(coflow, host, instance) {
                        let s = &mut self.subs[i];
                        if let (true, Some(desired)) = (s.round == round, s.pending) {
                            s.pending = None;
                            let v = agg(p.phi, &s.feedback).unwrap_or(desired);
                            s.prio = Some((1, v));
                        }
                    }
                }
            }
        }
        // The tick: at every multiple of delta, every subcoflow that has not
        // run at this instant runs.
        let k = (t / p.delta).round();
        if k * p.delta == t && self.last_tick < t {
            self.last_tick = t;
            for i in 0..self.subs.len() {
                if self.subs[i].last_run != t {
                    self.pseudocode_1(sim, i, t);
                }
            }
        }
        // A tick at `t` sends messages due later only (msg_delay > 0), so
        // nothing more is due now.
        debug_assert!(self.events.iter().all(|e| e.0 > t));
    }

    /// Who is served at the rates `rate` chosen at `t` (until the next
    /// event): a subcoflow with a flow above EPS x its sender's uplink
    /// capacity.
    ///
    /// Service that lasts less than 1 us may not exist in the engine (whose
    /// events within nanoseconds of each other are one), and it counts
    /// here: such a case is ambiguous.
    fn service(&mut self, sim: &mut RefSim, t: f64, rate: &[f64]) {
        let caps = &sim.caps;
        for s in &mut self.subs {
            let floor = EPS * caps[2 * s.host as usize];
            let served = s.flows.iter().any(|&f| rate[f] > floor);
            if served && !s.served {
                s.served_from = t;
            }
            if !served && s.served && t - s.served_from < 1_000.0 {
                sim.ambiguous = true;
            }
            s.served = served;
            s.served_since_run |= served;
        }
    }

    /// The next protocol instant after `t` (an event, or the next tick while
    /// subcoflows exist).
    fn next(&self, t: f64) -> Option<f64> {
        let mut next = self
            .events
            .iter()
            .map(|e| e.0)
            .fold(f64::INFINITY, f64::min);
        if !self.subs.is_empty() {
            next = next.min(((t / self.p.delta).floor() + 1.0) * self.p.delta);
        }
        next.is_finite().then_some(next)
    }
}

impl ReferencePolicy for Dcas {
    fn prepare(&mut self, sim: &mut RefSim, t: f64) {
        self.members(sim, t);
        self.protocol(sim, t);
    }

    fn allocate(&mut self, sim: &RefSim) -> Vec<f64> {
        // Strict priority by <T, P>, max-min among equal priorities.
        let mut rate = vec![0.0; sim.flows.len()];
        let mut subs: Vec<&RefSub> = self.subs.iter().collect();
        subs.sort_by_key(|s| s.prio.expect("every subcoflow ran"));
        let mut classes: Vec<Vec<usize>> = vec![];
        for (i, s) in subs.iter().enumerate() {
            if i == 0 || subs[i - 1].prio != s.prio {
                classes.push(vec![]);
            }
            classes.last_mut().unwrap().extend(&s.flows);
        }
        sim.serve_flow_classes(&classes, &mut rate);
        rate
    }

    fn served(&mut self, sim: &mut RefSim, t: f64, rate: &[f64]) {
        self.service(sim, t, rate);
    }

    fn protocol_instant(
        &mut self,
        sim: &mut RefSim,
        t: f64,
        rate: &[f64],
        active: &[usize],
    ) -> Option<f64> {
        // Protocol events are exact instants; one within 1 us of a flow
        // completion may fall on either side of it in the engine
        // (nanosecond rounding, SNAP_NS).
        let p = self.next(t)?;
        let completion = active
            .iter()
            .filter(|&&f| rate[f] > 0.0)
            .map(|&f| t + sim.flows[f].rem / (rate[f] / 8e9))
            .fold(f64::INFINITY, f64::min);
        if (p - completion).abs() < 1_000.0 {
            sim.ambiguous = true;
        }
        Some(p)
    }
}
