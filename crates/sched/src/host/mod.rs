//! Host policies: what one host decides for its own flows from what it sees
//! locally, one implementation per policy for every driver that runs hosts.
//!
//! The flow-level schedulers of this crate ([`crate::Scheduler`]) allocate
//! rates from a view of the whole network: the fluid limit of a system. The
//! systems of the seed papers are, in the end, per-host rules: PIAS and
//! Karuna mark a flow's priority class from the bytes it has sent (PIAS 3.1,
//! Karuna 4), FIFO-LM and TAFE from their task's identity and bytes (Baraat
//! 3.2-3.3, TAFE Algorithm 1), D-CAS from a negotiation between senders and
//! receivers (D-CAS Pseudocode 1-2). A [`HostPolicy`] is that rule, written
//! once, and run by:
//! - the packet engine (`coflowkit-packet`), one instance per host, whose
//!   packets carry the class, pacing rate and congestion-control variant the
//!   policy gives each flow, and whose control messages travel as packets;
//! - the testbed's replay workers (`coflowkit.testbed.replay.worker`,
//!   through the binding), one per host, which set the DSCP, the socket's
//!   pacing rate and the congestion control with the kernel's own tools.
//!
//! # The contract
//! A driver tells the policy what happens to the host's own flows, in time
//! order, with integer nanoseconds since the run's common origin (the
//! testbed's `t0`, the simulation's zero):
//! - [`HostPolicy::start`] before a flow's first byte;
//! - [`HostPolicy::sent`] as bytes are handed to the transport, at most
//!   [`HostPolicy::limit`] bytes at a time, so that a threshold is crossed
//!   exactly at the byte it names;
//! - [`HostPolicy::finish`] once its receiver has every byte;
//! - [`HostPolicy::receive`] for a control message from another host's
//!   policy;
//! - [`HostPolicy::task_sent`] with a task's bytes from every host, where
//!   the switches count them (TAFE's, in the packet engine);
//! - [`HostPolicy::wake`] at the instant [`HostPolicy::wake_at`] asked for
//!   (a period, a negotiation's end), or later: a driver that wakes late
//!   (the testbed's event loop) is still correct, only later.
//! - [`HostPolicy::feedback`] when the rates the switches granted a flow
//!   come back, for policies whose flows ask switches for rates
//!   ([`HostPolicy::demand`] is `Some`: Baraat's Smart Priority Classes);
//!   the driver then sends the flow's next request with the policy's
//!   `demand`. Only a driver whose switches answer requests (the packet
//!   engine) calls it; elsewhere such a policy's flows wait.
//!
//! Each call may change flows' [`Marking`]s and ask for control messages to
//! be sent; it reports both in an [`Effects`]. The driver then reads the
//! changed flows' markings with [`HostPolicy::marking`] and enforces them;
//! a marking never changes between calls. A driver reads a flow's marking
//! after its `start` whatever `start` reports. Two values move with every
//! byte and are not reported as changes: [`TaskTag::bytes`] and the penalty
//! of [`Cc::Tafe`]; a driver that uses them reads them when it needs them
//! (a packet's header, a window's update).
//!
//! Markings that follow a coflow's age (FIFO by age, [`age_class`]) move at
//! the instants [`HostPolicy::wake_at`] names, exactly on the quantum's
//! grid from the coflow's arrival, and a flow that starts takes the class
//! of its coflow's age at its start. What the policy needs of the host
//! beyond what it was told (the bytes written to a socket and not yet
//! acknowledged, D-CAS's "bytes left") it asks of a [`HostView`].
//!
//! # Correctness properties
//! - Deterministic: the same calls in the same order give the same effects
//!   and markings (no clock, no randomness, no global state inside).
//! - A flow's marking is defined from its `start` to its `finish`; outside,
//!   [`HostPolicy::marking`] returns [`Marking::BEST_EFFORT`].
//! - Every flow id in [`Effects::changed`] is a flow started and not
//!   finished, listed once per call.

use crate::params::{Kind, Param, Params};
use crate::spec::{SchedulerError, WorkloadHints};
use coflowkit_model::{Dur, Time};
use std::any::Any;

/// The number of strict-priority classes a host may mark (queue 0 the
/// highest): the 8 of commodity switches and of the packet engine's ports.
pub const N_CLASSES: u8 = 8;

/// A flow as its sending host knows it at its start. Only what the host is
/// entitled to: its size is given to every policy (the testbed's sender
/// writes it), and policies that model unknown sizes (PIAS, Karuna's type
/// 3) do not read it unless `size_known`.
#[derive(Debug, Clone, PartialEq)]
pub struct HostFlow {
    /// The driver's id of the flow (the testbed plan's, the engine's index).
    pub id: u64,
    /// Its coflow (task), as a rank that every host agrees on: release order.
    pub coflow: u32,
    /// When its coflow arrived (ns since the origin): every host agrees on it.
    pub coflow_arrival: Time,
    /// The receiving host.
    pub dst: u32,
    /// Bytes.
    pub size: u64,
    /// Whether the application told the size (Karuna's types 1-2 against 3).
    pub size_known: bool,
    /// Its deadline after its start, if it has one (Karuna's type 1).
    pub deadline: Option<Dur>,
}

/// The congestion-control variant or parameter a policy gives a flow.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub enum Cc {
    /// The driver's default transport (DCTCP in the packet engine, the
    /// kernel's default in the testbed).
    #[default]
    Default,
    /// Karuna's MCP for a deadline flow (Karuna §4; the packet engine's
    /// window is read from the authors' prototype, `coflowkit_packet::transport`):
    /// a window that aims at `bytes left / time left`, `deadline` the
    /// flow's absolute deadline.
    Mcp {
        /// The flow's absolute deadline (ns since the origin).
        deadline: Time,
    },
    /// D2TCP's deadline-aware window (D2TCP 3.2), `deadline` absolute.
    D2tcp {
        /// The flow's absolute deadline (ns since the origin).
        deadline: Time,
    },
    /// TAFE's window rule (TAFE IV-B, Eq. 5 and Algorithm 2, lines 8-11): on
    /// a marked window the window becomes `cwnd * (1 - alpha * penalty)`,
    /// `penalty` = S_c / S_max, the flow's remaining bytes over the largest
    /// remaining of its task's flows here (our reading of the paper's "upper
    /// bound of flow size"), in millionths (so that a marking compares
    /// exactly).
    Tafe {
        /// The penalty, in millionths (0 ..= 1,000,000).
        penalty_ppm: u32,
    },
}

/// How a flow is treated now: what the driver enforces.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Marking {
    /// Its strict-priority class, 0 (highest) to 7 (the DSCP the testbed
    /// sets, the queue the packet engine's ports use).
    pub class: u8,
    /// Its pacing rate, bytes per second (None: not paced).
    pub pace: Option<u64>,
    /// Its congestion control.
    pub cc: Cc,
    /// Its task tag, for switches that schedule by task (Baraat's Smart
    /// Priority Classes, TAFE's marking by task bytes); None: untagged.
    pub task: Option<TaskTag>,
}

/// What a host writes in a packet's header about its task (Baraat 3.2: the
/// task id and the heavy flag; TAFE 4.1: the bytes its task has sent).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TaskTag {
    /// The task's priority number: lower is served first (Baraat's task id,
    /// from a counter every host agrees on; the coflow's rank here).
    pub id: u64,
    /// Whether the task is heavy (Baraat's FIFO-LM: multiplexed, 3.3).
    pub heavy: bool,
    /// Bytes of the task sent so far: by this host, or by all its hosts
    /// where the driver tells them ([`HostPolicy::task_sent`], TAFE).
    pub bytes: u64,
}

impl Marking {
    /// The lowest class, unpaced, default transport: a flow no policy marks.
    pub const BEST_EFFORT: Marking = Marking {
        class: N_CLASSES - 1,
        pace: None,
        cc: Cc::Default,
        task: None,
    };

    /// Class `class`, unpaced, default transport.
    pub fn class(class: u8) -> Marking {
        Marking {
            class,
            ..Marking::BEST_EFFORT
        }
    }
}

/// What a control message says (D-CAS's two kinds; a coordinator's decision).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ControlKind {
    /// A sender's desired priority for a coflow (D-CAS Pseudocode 1).
    Announce,
    /// A receiver's combined priority for it (D-CAS Pseudocode 2).
    Reply,
}

/// One control message between two hosts' policies: small, carried by the
/// driver (a datagram in the testbed, a control packet in the packet
/// engine), and possibly lost: a policy must work on when one is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Control {
    /// What it is.
    pub kind: ControlKind,
    /// The sender's round for this coflow, echoed by the reply.
    pub number: u32,
    /// The coflow it is about (its rank).
    pub coflow: u32,
    /// The value (bytes, for D-CAS).
    pub value: u64,
}

/// What one call did: flows whose marking changed, messages to send.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Effects {
    /// Flows whose [`Marking`] changed (each once per call).
    pub changed: Vec<u64>,
    /// Control messages to send: (destination host, message).
    pub send: Vec<(u32, Control)>,
}

impl Effects {
    /// Empties both lists (a driver reuses one `Effects` for every call).
    pub fn clear(&mut self) {
        self.changed.clear();
        self.send.clear();
    }
}

/// What the switches on a flow's path granted it, bits/s (Baraat 4.3.2:
/// the least of each rate over the switches that wrote one; `u64::MAX`:
/// none did).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PathRates {
    /// The least actual rate (AR): what the flow may send at until the
    /// next feedback.
    pub min_ar: u64,
    /// The least nominal rate (NR): its share by priority, Algorithm 2's
    /// `MinNR`.
    pub min_nr: u64,
}

/// What a driver can tell a policy about the host beyond the calls.
pub trait HostView {
    /// Bytes of `flow` handed to the transport and not yet acknowledged by
    /// its receiver (the testbed's `SIOCOUTQ`, the packet engine's sender's
    /// bytes outstanding and buffered).
    fn unacked(&self, flow: u64) -> u64;
}

/// A view for drivers (and tests) that have nothing to add: every flow's
/// bytes are acknowledged as soon as they are sent.
#[derive(Debug, Clone, Copy, Default)]
pub struct NoView;

impl HostView for NoView {
    fn unacked(&self, _flow: u64) -> u64 {
        0
    }
}

/// Where a policy runs: the host and what it knows of the network.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct HostContext {
    /// This host.
    pub host: u32,
    /// How many hosts the run has (control messages go to `0..n_hosts`).
    pub n_hosts: u32,
    /// The host's NIC rate, bits per second.
    pub nic_bps: f64,
    /// The fabric's base round-trip time (Karuna's pacing floor, two
    /// segments per RTT).
    pub rtt: Dur,
}

/// One host's policy. See the module doc for the contract.
pub trait HostPolicy: Send {
    /// The policy's name (the registry's).
    fn name(&self) -> &str;
    /// `flow` starts at `now` (before its first byte).
    fn start(&mut self, now: Time, flow: &HostFlow, out: &mut Effects);
    /// `bytes` more of `flow` were handed to the transport at `now`.
    fn sent(&mut self, now: Time, flow: u64, bytes: u64, out: &mut Effects);
    /// `flow` finished at `now` (its receiver has every byte).
    fn finish(&mut self, now: Time, flow: u64, out: &mut Effects);
    /// `msg` from host `from`'s policy arrived at `now`.
    fn receive(&mut self, _now: Time, _from: u32, _msg: &Control, _out: &mut Effects) {}
    /// Task `coflow` has sent `bytes` in all, from every host (TAFE's
    /// switches add up a task's bytes, Algorithm 1's `length(T_i)`, and a
    /// host learns of them; the packet engine's TAFE switches tell every
    /// host with an active flow of the task, at each byte and at a flow's
    /// start). Only a driver with such switches calls it; elsewhere a
    /// policy counts what it sent itself.
    fn task_sent(&mut self, _now: Time, _coflow: u32, _bytes: u64, _out: &mut Effects) {}
    /// When the policy wants [`HostPolicy::wake`] next (None: never).
    fn wake_at(&self) -> Option<Time> {
        None
    }
    /// The instant [`HostPolicy::wake_at`] named came (or passed): `now`.
    fn wake(&mut self, _now: Time, _view: &dyn HostView, _out: &mut Effects) {}
    /// The switches on `flow`'s path answered its rate request (Baraat's
    /// SPC header, echoed by the receiver, 4.3.3): their least AR and NR.
    /// Only policies that ask ([`HostPolicy::demand`]) hear it.
    fn feedback(
        &mut self,
        _now: Time,
        _flow: u64,
        _rates: PathRates,
        _view: &dyn HostView,
        _out: &mut Effects,
    ) {
    }
    /// The rate `flow` asks of the switches on its path for the next
    /// interval, bits/s (Baraat's demand, Algorithm 2); None: the policy
    /// asks no switch for rates.
    fn demand(&self, _flow: u64) -> Option<u64> {
        None
    }
    /// `flow`'s marking now ([`Marking::BEST_EFFORT`] if it is not active).
    fn marking(&self, flow: u64) -> Marking;
    /// How many more bytes `flow` may send before its marking may change
    /// (`u64::MAX`: it will not change by bytes sent).
    fn limit(&self, _flow: u64) -> u64 {
        u64::MAX
    }
    /// What the policy counted so far, named (D-CAS: its negotiation's
    /// announcements, rounds and decisions); empty for a policy that counts
    /// nothing. A driver sums them over its hosts and reports them, not
    /// knowing which policy counts what.
    fn counters(&self) -> Vec<(&'static str, u64)> {
        Vec::new()
    }
    /// The policy as [`Any`], so that a caller that knows one policy (the
    /// binding's D-CAS report) can read what only that policy keeps.
    fn as_any(&self) -> &dyn Any;
}

/// A policy that marks nothing: every flow best effort, as a host without
/// a coflow scheduler (the testbed's `plain`).
#[derive(Debug, Clone, Default)]
pub struct Plain;

impl HostPolicy for Plain {
    fn name(&self) -> &str {
        "plain"
    }
    fn start(&mut self, _now: Time, _flow: &HostFlow, _out: &mut Effects) {}
    fn sent(&mut self, _now: Time, _flow: u64, _bytes: u64, _out: &mut Effects) {}
    fn finish(&mut self, _now: Time, _flow: u64, _out: &mut Effects) {}
    fn marking(&self, _flow: u64) -> Marking {
        Marking::BEST_EFFORT
    }
    fn as_any(&self) -> &dyn Any {
        self
    }
}

/// The class of `sent` bytes against ascending `thresholds`: how many of
/// them it reached (PIAS 3.1's demotion; Karuna's sieve, TAFE's levels).
pub fn demotion_class(sent: u64, thresholds: &[u64]) -> u8 {
    thresholds.partition_point(|&t| t <= sent) as u8
}

/// Bytes until `sent` reaches the next of ascending `thresholds`
/// (`u64::MAX` past the last).
pub fn to_next_threshold(sent: u64, thresholds: &[u64]) -> u64 {
    match thresholds.iter().find(|&&t| t > sent) {
        Some(&t) => t - sent,
        None => u64::MAX,
    }
}

/// FIFO by age on the `n` classes `first ..= first + n - 1` (Baraat's task
/// ids as far as `n` classes can tell them apart, without talking): a
/// coflow `age` old enters the band's lowest class and climbs one class per
/// `quantum`, to the band's top.
pub fn age_class(first: u8, n: u8, age: Dur, quantum: Dur) -> u8 {
    let steps = age.0 / quantum.0.max(1);
    first + (n.saturating_sub(1) as u64).saturating_sub(steps) as u8
}

/// When a coflow that arrived at `arrival` and is in `class` of the band
/// `first ..= first + n - 1` by [`age_class`] climbs to the next class
/// (None: at the band's top).
pub fn next_age_step(first: u8, n: u8, class: u8, arrival: Time, quantum: Dur) -> Option<Time> {
    let steps = u64::from((first + n.saturating_sub(1)).saturating_sub(class));
    (class > first).then(|| arrival + Dur((steps + 1) * quantum.0.max(1)))
}

/// The `age` key of the policies that order coflows by age at a host (the
/// host side of `fifo-lm`, `tafe` and `dcas`); the flow-level schedulers
/// order by arrival exactly and ignore it.
pub const AGE_PARAM: Param = Param {
    key: "age",
    kind: Kind::Duration,
    default: "10ms",
    unit: "",
    help: "host policy: a coflow climbs one queue per this much age (FIFO by age)",
};

/// The `age` quantum of a spec (given or [`AGE_PARAM`]'s default), above 0.
pub(crate) fn age_quantum(p: &Params<'_>) -> Result<Dur, SchedulerError> {
    Ok(p.positive_dur("age", "must be above 0")?
        .unwrap_or(Dur::from_millis(10)))
}

/// A threshold in bytes as a host counts them: a fractional one rounded up
/// (a host reaches it at that whole byte), `inf` never reached.
pub(crate) fn whole_bytes(t: f64) -> u64 {
    if t.is_finite() {
        t.max(0.0).ceil() as u64
    } else {
        u64::MAX
    }
}

pub(crate) mod tasks;

/// One event of a host's trace, as a driver tells it to its policy.
#[derive(Debug, Clone, PartialEq)]
pub enum HostEvent {
    /// [`HostPolicy::start`].
    Start(Time, HostFlow),
    /// [`HostPolicy::sent`]: (flow, bytes).
    Sent(Time, u64, u64),
    /// [`HostPolicy::finish`].
    Finish(Time, u64),
    /// [`HostPolicy::receive`]: (from host, message).
    Receive(Time, u32, Control),
    /// [`HostPolicy::wake`], with each flow's unacknowledged bytes (flows
    /// not listed: 0).
    Wake(Time, Vec<(u64, u64)>),
    /// [`HostPolicy::feedback`]: (flow, the path's rates, each flow's
    /// unacknowledged bytes as in `Wake`).
    Feedback(Time, u64, PathRates, Vec<(u64, u64)>),
}

/// What a policy decided at one event: its effects, then every active
/// flow's marking and limit (in id order) and its next wake-up.
#[derive(Debug, Clone, PartialEq)]
pub struct HostStep {
    /// The call's effects.
    pub effects: Effects,
    /// (flow, marking, limit, demand) of every active flow after the call.
    pub flows: Vec<(u64, Marking, u64, Option<u64>)>,
    /// [`HostPolicy::wake_at`] after the call.
    pub wake_at: Option<Time>,
}

/// Unacknowledged bytes from a list (a trace's [`HostEvent::Wake`]).
struct Listed<'a>(&'a [(u64, u64)]);

impl HostView for Listed<'_> {
    fn unacked(&self, flow: u64) -> u64 {
        self.0.iter().find(|x| x.0 == flow).map_or(0, |x| x.1)
    }
}

/// Runs `events` through `policy` as a driver does, and what it decided at
/// each: the reference side of the differential test of the testbed's
/// binding (tests/test_host_policy.py drives `_core.HostPolicy` as the
/// replay worker does, and must decide the same).
pub fn replay(policy: &mut dyn HostPolicy, events: &[HostEvent]) -> Vec<HostStep> {
    let mut active = std::collections::BTreeSet::new();
    let mut steps = Vec::with_capacity(events.len());
    for e in events {
        let mut out = Effects::default();
        match e {
            HostEvent::Start(now, f) => {
                active.insert(f.id);
                policy.start(*now, f, &mut out);
            }
            HostEvent::Sent(now, f, n) => policy.sent(*now, *f, *n, &mut out),
            HostEvent::Finish(now, f) => {
                policy.finish(*now, *f, &mut out);
                active.remove(f);
            }
            HostEvent::Receive(now, from, msg) => policy.receive(*now, *from, msg, &mut out),
            HostEvent::Wake(now, unacked) => policy.wake(*now, &Listed(unacked), &mut out),
            HostEvent::Feedback(now, f, rates, unacked) => {
                policy.feedback(*now, *f, *rates, &Listed(unacked), &mut out);
            }
        }
        let flows = active
            .iter()
            .map(|&f| (f, policy.marking(f), policy.limit(f), policy.demand(f)))
            .collect();
        steps.push(HostStep {
            effects: out,
            flows,
            wake_at: policy.wake_at(),
        });
    }
    steps
}

/// Builds a host policy from its scheduler's checked parameters (the same
/// spec keys as the flow-level scheduler of that name), the workload's
/// hints and where it runs.
pub type HostBuild =
    fn(&Params<'_>, &WorkloadHints, &HostContext) -> Result<Box<dyn HostPolicy>, SchedulerError>;

#[cfg(test)]
mod tests {
    use super::*;

    /// The slow reference of [`demotion_class`]: count the thresholds reached.
    fn class_by_count(sent: u64, thresholds: &[u64]) -> u8 {
        thresholds.iter().filter(|&&t| sent >= t).count() as u8
    }

    #[test]
    fn demotion_class_counts_the_thresholds_reached() {
        let t = [100, 1_000, 10_000];
        for sent in [0, 99, 100, 101, 999, 1_000, 9_999, 10_000, u64::MAX] {
            assert_eq!(demotion_class(sent, &t), class_by_count(sent, &t), "{sent}");
        }
        assert_eq!(demotion_class(5, &[]), 0);
    }

    #[test]
    fn next_threshold_is_exactly_where_the_class_changes() {
        let t = [100, 1_000];
        assert_eq!(to_next_threshold(0, &t), 100);
        assert_eq!(to_next_threshold(99, &t), 1);
        assert_eq!(to_next_threshold(100, &t), 900);
        assert_eq!(to_next_threshold(1_000, &t), u64::MAX);
        for sent in [0u64, 57, 99, 100, 500] {
            let k = to_next_threshold(sent, &t);
            assert_eq!(demotion_class(sent + k - 1, &t), demotion_class(sent, &t));
            assert_eq!(demotion_class(sent + k, &t), demotion_class(sent, &t) + 1);
        }
    }

    fn ctx() -> HostContext {
        HostContext {
            host: 0,
            n_hosts: 2,
            nic_bps: 1e9,
            rtt: Dur(100_000),
        }
    }

    #[test]
    fn the_registry_builds_host_policies_by_scheduler_spec() {
        use crate::registry::{build_host, host_names};
        use crate::SchedulerSpec;
        let hints = WorkloadHints::default();
        let p = build_host(
            &SchedulerSpec::parse("pias:thresholds=1/2/3/4/5/6/7").unwrap(),
            &hints,
            &ctx(),
        );
        assert_eq!(p.unwrap().name(), "pias");
        let e = build_host(&SchedulerSpec::parse("varys").unwrap(), &hints, &ctx())
            .err()
            .unwrap();
        assert!(matches!(e, SchedulerError::NoHostPolicy { .. }), "{e}");
        assert!(e.to_string().contains("'varys' has no host policy"), "{e}");
        let e = build_host(
            &SchedulerSpec::parse("pias:nope=1").unwrap(),
            &hints,
            &ctx(),
        )
        .err()
        .unwrap();
        assert!(matches!(e, SchedulerError::UnknownParam { .. }), "{e}");
        for name in host_names() {
            assert!(
                crate::NAMES.iter().any(|(n, _)| *n == name),
                "{name} is not a scheduler"
            );
        }
    }

    #[test]
    fn plain_marks_every_flow_best_effort() {
        let mut p = Plain;
        let mut out = Effects::default();
        let f = HostFlow {
            id: 3,
            coflow: 0,
            coflow_arrival: Time::ZERO,
            dst: 1,
            size: 10,
            size_known: true,
            deadline: None,
        };
        p.start(Time::ZERO, &f, &mut out);
        p.sent(Time(5), 3, 10, &mut out);
        assert_eq!(out, Effects::default());
        assert_eq!(p.marking(3), Marking::BEST_EFFORT);
        assert_eq!(p.limit(3), u64::MAX);
        assert_eq!(p.wake_at(), None);
    }
}
