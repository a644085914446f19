//! Host policies in the packet engine: one [`HostPolicy`] per host, built
//! from a registry scheduler spec (`coflowkit_sched::build_host`),
//! told what the host's flows do as the engine's events happen, and obeyed
//! packet by packet.
//!
//! The contract is the policy's (`coflowkit_sched::host`, "The contract");
//! the engine keeps it so:
//! - `start` when a flow starts (before its sender exists), `finish` when
//!   its receiver has every byte (zero-byte flows are neither: they finish
//!   at their start, as in the flow-level engine);
//! - `sent` as the sender puts new bytes on the wire (retransmissions are
//!   not new): the sender stops at `limit_end` = bytes sent +
//!   [`HostPolicy::limit`] and cuts the segment there (`crate::transport`'s
//!   `Sender::limit_end`), so a threshold is crossed at exactly the byte it
//!   names, and every byte of a packet is sent under one marking;
//! - `wake` at `wake_at`, as an engine event (cancelled lazily: a later
//!   `wake_at` leaves the old event to find that it is not due);
//! - `receive` when a control message's packet reaches its destination
//!   host. Control messages travel as real packets of
//!   [`CONTROL_PAYLOAD`] bytes (plus headers) in class 0, on the fabric
//!   path between the two hosts (one ECMP choice per host pair), through
//!   the same queues as data: they can be dropped, and then are lost.
//!
//! A [`Marking`] becomes the flow's settings ([`Settings::of`]): its class
//! is the strict-priority queue of its packets (data and ACKs, as with the
//! `classes` argument); its pacing rate (bytes/s) the flow's [`Pacer`] rate
//! (`crate::pacing`; none: the configuration's pacing); its [`Cc`] the
//! flow's transport: `Default` the configured one, `D2tcp` D2TCP with the
//! policy's deadline, `Tafe` DCTCP's α with TAFE's cut (TAFE Algorithm 2,
//! `crate::transport`'s `Sender::window_cut`), `Mcp` Karuna's MCP window with the
//! policy's deadline (`crate::transport`'s module doc: our reading of the
//! authors' prototype, the paper's §4 law unread). A change of transport
//! mid-flow is applied between the window transports (TCP, DCTCP, D2TCP,
//! MCP) only. A marking's task tag is kept per flow ([`HostStats`] counts
//! changes); the switches read it in runs of `tafe` (its bytes) and
//! `baraat` (its task id and heavy flag, `crate::spc`). A policy that asks
//! switches for rates ([`HostPolicy::demand`]) hears their answer through
//! [`HostPolicy::feedback`] (the engine's `baraat` module).
//!
//! [`Pacer`]: crate::pacing::Pacer

use crate::config::values::parse_on_off;
use crate::config::Knob;
use crate::pacing::Pacing;
use crate::transport::TransportKind;
use coflowkit_sched::host::{Cc, Control, Effects, HostPolicy, HostView, Marking};

/// Payload bytes of a control packet (a [`Control`]: kind, number,
/// coflow, value), headers not counted.
pub const CONTROL_PAYLOAD: u32 = 20;

/// With `control_batch=on`: the head of a packet of messages (the
/// testbed's datagram: magic, version, kind, host and count,
/// docs/testbed.md), each message [`CONTROL_PAYLOAD`] bytes after it.
pub const CONTROL_BATCH_HEAD: u32 = 10;

/// With `control_batch=on`: the most messages one packet carries (the
/// testbed's datagram).
pub const CONTROL_BATCH_MAX: usize = 64;

/// What a control packet carries: one message, or (`control_batch=on`)
/// the messages of one policy call to one host.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Held {
    One(Control),
    Many(Vec<Control>),
}

impl Held {
    /// How many messages.
    pub fn len(&self) -> usize {
        match self {
            Held::One(_) => 1,
            Held::Many(v) => v.len(),
        }
    }

    /// The messages, in the order they were sent.
    pub fn as_slice(&self) -> &[Control] {
        match self {
            Held::One(m) => std::slice::from_ref(m),
            Held::Many(v) => v,
        }
    }
}

/// What the host policies did in a run.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct HostStats {
    /// Markings applied that changed a flow's settings.
    pub marking_changes: u64,
    /// Control packets sent.
    pub control_sent: u64,
    /// Control packets delivered to their host's policy.
    pub control_delivered: u64,
    /// Control packets dropped by full queues.
    pub control_dropped: u64,
    /// Wake-ups handled.
    pub wakes: u64,
}

/// A flow's transport and pacing as a marking sets them.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Settings {
    /// Strict-priority class, 0 highest.
    pub class: u8,
    /// Its transport.
    pub transport: TransportKind,
    /// D2TCP's or MCP's deadline (ps) from the policy; `None`: the flow's
    /// own, if the transport is D2TCP.
    pub deadline_ps: Option<u64>,
    /// TAFE's share S_c/S_max (0 to 1), for TAFE's cut.
    pub tafe_share: Option<f64>,
    /// Its pacing.
    pub pacing: Pacing,
}

impl Settings {
    /// The settings of marking `m` over the configured `transport` and
    /// `pacing` (see the module doc).
    pub fn of(m: &Marking, transport: TransportKind, pacing: Pacing) -> Settings {
        let (transport, deadline_ps, tafe_share) = match m.cc {
            Cc::Default => (transport, None, None),
            Cc::D2tcp { deadline } => (
                TransportKind::D2tcp,
                Some(deadline.0.saturating_mul(1000)),
                None,
            ),
            Cc::Mcp { deadline } => (
                TransportKind::Mcp,
                Some(deadline.0.saturating_mul(1000)),
                None,
            ),
            Cc::Tafe { penalty_ppm } => (
                TransportKind::Dctcp,
                None,
                Some(f64::from(penalty_ppm.min(1_000_000)) / 1e6),
            ),
        };
        Settings {
            class: m.class.min(crate::packet::N_QUEUES as u8 - 1),
            transport,
            deadline_ps,
            tafe_share,
            pacing: m
                .pace
                .map_or(pacing, |b| Pacing::Rate(b.saturating_mul(8).max(1))),
        }
    }
}

/// A one-way channel for control packets from one host to another: its
/// path, a range of the engine's hops.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Channel {
    pub from: u32,
    pub to: u32,
    pub hops: (u32, u32),
}

/// The host policies' counters summed over the hosts
/// ([`HostPolicy::counters`]; `None` when no policy counts anything: only
/// D-CAS's negotiation does), so that a run's announcements and rounds can
/// be held against the testbed's reports, which sum the same policy's
/// counters over its workers.
pub fn negotiation(policies: &[Box<dyn HostPolicy>]) -> Option<Vec<(&'static str, u64)>> {
    let mut sum: Option<Vec<(&'static str, u64)>> = None;
    for host in policies.iter().map(|p| p.counters()) {
        if host.is_empty() {
            continue;
        }
        match sum.as_mut() {
            None => sum = Some(host),
            Some(s) => s.iter_mut().zip(host).for_each(|(a, (_, v))| a.1 += v),
        }
    }
    sum
}

/// The engine's host side: the policies and what travels between them.
pub(crate) struct Hosts {
    pub policies: Vec<Box<dyn HostPolicy>>,
    /// Each host's pending wake-up (ps), if any.
    pub wake_due: Vec<Option<u64>>,
    /// Reused for every call.
    pub out: Effects,
    pub channels: Vec<Channel>,
    /// Channel index by (from, to).
    pub channel_of: std::collections::HashMap<(u32, u32), u32>,
    /// Messages in flight by slot; `free` the empty slots.
    pub msgs: Vec<Option<Held>>,
    pub free: Vec<u32>,
    pub stats: HostStats,
}

impl Hosts {
    /// Hosts running `policies` (one per host, in host order).
    pub fn new(policies: Vec<Box<dyn HostPolicy>>) -> Hosts {
        let n = policies.len();
        Hosts {
            policies,
            wake_due: vec![None; n],
            out: Effects::default(),
            channels: vec![],
            channel_of: Default::default(),
            msgs: vec![],
            free: vec![],
            stats: HostStats::default(),
        }
    }

    /// Stores `msg` for its packet; its slot.
    pub fn hold(&mut self, msg: Held) -> u32 {
        match self.free.pop() {
            Some(k) => {
                self.msgs[k as usize] = Some(msg);
                k
            }
            None => {
                self.msgs.push(Some(msg));
                (self.msgs.len() - 1) as u32
            }
        }
    }

    /// Takes the message in `slot` (its packet arrived or was dropped).
    pub fn take(&mut self, slot: u32) -> Option<Held> {
        let m = self.msgs.get_mut(slot as usize)?.take();
        if m.is_some() {
            self.free.push(slot);
        }
        m
    }
}

/// What a policy may ask of the engine about its host's flows: bytes not
/// yet acknowledged (the engine's application writes a flow whole at its
/// start, so every unacknowledged byte is buffered or in flight).
pub(crate) struct EngineView<'a> {
    pub unacked: &'a dyn Fn(u64) -> u64,
}

impl HostView for EngineView<'_> {
    fn unacked(&self, flow: u64) -> u64 {
        (self.unacked)(flow)
    }
}

/// How host policies' control messages travel.
pub const KNOBS: &[Knob] = &[
    Knob {
        name: "control_batch",
        default: "off",
        unit: "on/off",
        help: "on: a host policy's messages of one call to one host share a packet, 10 + 20 bytes each, at most 64 (the testbed's datagram); off: a packet per message (off)",
        set: |c, key, v| {
            c.control_batch = parse_on_off(key, v)?;
            Ok(())
        },
    },
];

#[cfg(test)]
mod tests {
    use super::*;
    use coflowkit_model::Time;
    use coflowkit_sched::host::{ControlKind, TaskTag};

    #[test]
    fn a_marking_sets_class_pacing_and_transport() {
        let m = Marking::class(3);
        let s = Settings::of(&m, TransportKind::Dctcp, Pacing::Off);
        assert_eq!(s.class, 3);
        assert_eq!(s.transport, TransportKind::Dctcp);
        assert_eq!((s.deadline_ps, s.tafe_share), (None, None));
        assert_eq!(s.pacing, Pacing::Off);
        // 125,000,000 bytes/s is 1 Gbit/s.
        let paced = Marking {
            pace: Some(125_000_000),
            cc: Cc::D2tcp {
                deadline: Time(5_000),
            },
            ..Marking::class(0)
        };
        let s = Settings::of(&paced, TransportKind::Tcp, Pacing::Cwnd);
        assert_eq!(s.pacing, Pacing::Rate(1_000_000_000));
        assert_eq!(s.transport, TransportKind::D2tcp);
        assert_eq!(s.deadline_ps, Some(5_000_000));
        let tafe = Marking {
            cc: Cc::Tafe {
                penalty_ppm: 250_000,
            },
            task: Some(TaskTag {
                id: 1,
                heavy: false,
                bytes: 10,
            }),
            ..Marking::class(9)
        };
        let s = Settings::of(&tafe, TransportKind::Tcp, Pacing::Cwnd);
        assert_eq!(s.class, 7, "held to the 8 queues");
        assert_eq!(s.transport, TransportKind::Dctcp);
        assert_eq!(s.tafe_share, Some(0.25));
        assert_eq!(s.pacing, Pacing::Cwnd, "no pace: the configuration's");
        let mcp = Marking {
            cc: Cc::Mcp {
                deadline: Time(7_000),
            },
            ..Marking::class(0)
        };
        let s = Settings::of(&mcp, TransportKind::Dctcp, Pacing::Off);
        assert_eq!(s.transport, TransportKind::Mcp);
        assert_eq!(s.deadline_ps, Some(7_000_000));
    }

    #[test]
    fn message_slots_are_reused_and_taken_once() {
        let mut h = Hosts::new(vec![]);
        let m = Control {
            kind: ControlKind::Announce,
            number: 1,
            coflow: 2,
            value: 3,
        };
        let a = h.hold(Held::One(m));
        let b = h.hold(Held::Many(vec![m, m]));
        assert_ne!(a, b);
        assert_eq!(h.take(a), Some(Held::One(m)));
        assert_eq!(h.take(a), None);
        assert_eq!(h.hold(Held::One(m)), a);
        let held = h.take(b).unwrap();
        assert_eq!((held.len(), held.as_slice()), (2, &[m, m][..]));
    }
}
