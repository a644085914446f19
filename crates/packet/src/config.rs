//! The packet engine's knobs: one [`PacketConfig`], set key by key from a
//! command line (`key=value`) or a scenario file through the same parser
//! ([`PacketConfig::set`]), so that both say the same thing about a bad
//! value. Each knob is declared as a [`Knob`] (name, default, unit, help,
//! how a value sets it) by the part of the engine that reads it, in that
//! part's `KNOBS` table; `crate::knobs` lists the tables. This file holds
//! the configuration's fields and defaults, the checks between knobs, and
//! the knobs of the run as a whole.
//!
//! Defaults follow the DCTCP paper's testbed (Alizadeh et al., SIGCOMM
//! 2010): a shallow-buffer switch (Broadcom Scorpion: 4 MB shared by 24 10
//! Gbit/s ports, §2.3.3, so 170 KB per port), K = 20 packets at 1 Gbit/s and
//! 65 at 10 Gbit/s (§3.4, §4), RTO_min 10 ms (§4.2.1); an initial window of
//! 10 segments (RFC 6928) and 1500-byte frames with 40 bytes of IP and TCP
//! headers. pFabric's follow its paper (Alizadeh et al., SIGCOMM 2013, §5):
//! 36 KB per switch port, a first window of one BDP and a timeout of about
//! 3 round trips (computed from each flow's path unless set), probe mode
//! after 5 consecutive timeouts (§4.2); §5's text itself could not be read,
//! these are checked against the pFabric ns-2 scripts
//! (`crate::queue::pfabric`). RCP's α and β and D2TCP's range of d: see
//! `crate::rcp` and `crate::transport::d2tcp` for what was and was not
//! found.

pub(crate) mod values;

use crate::pacing::Pacing;
use crate::queue::QueueKind;
use crate::transport::{LateRule, TransportKind};
use coflowkit_model::Dur;
use std::fmt;
use thiserror::Error;
use values::{auto, by_name, off, parse_dur, parse_u32};

/// A bad knob: which key, what value, and why.
#[derive(Debug, Error, PartialEq, Eq)]
#[error("packet option '{key}': {message}")]
pub struct ConfigError {
    /// The key.
    pub key: String,
    /// What is wrong with its value.
    pub message: String,
}

/// The error for `key`: `message`.
pub(crate) fn bad(key: &str, message: impl Into<String>) -> ConfigError {
    ConfigError {
        key: key.to_string(),
        message: message.into(),
    }
}

/// A queue size: bytes or whole packets.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Limit {
    /// At most this many bytes on the wire.
    Bytes(u64),
    /// At most this many packets.
    Packets(u64),
}

impl Limit {
    /// Whether a queue holding `bytes` in `packets` has reached this.
    pub fn reached(self, bytes: u64, packets: u64) -> bool {
        match self {
            Limit::Bytes(b) => bytes >= b,
            Limit::Packets(p) => packets >= p,
        }
    }
    /// Whether one more packet of `wire` bytes would overflow a queue of
    /// `bytes` in `packets`.
    pub fn overflows(self, bytes: u64, packets: u64, wire: u64) -> bool {
        match self {
            Limit::Bytes(b) => bytes + wire > b,
            Limit::Packets(p) => packets + 1 > p,
        }
    }
}

impl fmt::Display for Limit {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Limit::Bytes(b) => write!(f, "{b}B"),
            Limit::Packets(p) => write!(f, "{p}p"),
        }
    }
}

/// The host NIC's queue (the first hop of every packet a host sends).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HostQueue {
    /// Lossless and unbounded: the sender's window is the only limit.
    Unbounded,
    /// Drop-tail at this many packets.
    DropTail(u64),
    /// Unbounded, marking ECN-capable packets at this many queued packets.
    Ecn(u64),
    /// A switch port's kind: drop-tail at `packets` and marking
    /// ECN-capable packets at `k` queued packets (`k` < `packets`), as a
    /// DCTCP port whose buffer and K are both in packets.
    DropTailEcn {
        /// The bound: a packet arriving to this many queued is dropped.
        packets: u64,
        /// The marking threshold, packets.
        k: u64,
    },
}

/// A switch's buffer: one drop-tail limit per output port, or one pool per
/// switch shared by its output ports with dynamic thresholds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BufferKind {
    /// Each switch output port has its own drop-tail buffer (`None`: unbounded).
    PerPort(Option<Limit>),
    /// All output ports of one switch share a pool of this many bytes, each
    /// port's queue admitted only below α·(free bytes of the pool)
    /// (Choudhury and Hahne, IEEE/ACM ToN 1998, §II).
    Shared(u64),
}

/// Every knob of the packet engine.
#[derive(Debug, Clone, PartialEq)]
pub struct PacketConfig {
    /// Bytes on the wire of a full data packet (headers included).
    pub mtu: u32,
    /// Bytes of headers in every packet; an ACK or SYN is this long.
    pub header_bytes: u32,
    /// The transport.
    pub transport: TransportKind,
    /// One-way propagation delay of a host's links.
    pub host_link_delay: Dur,
    /// One-way propagation delay of a link between switches.
    pub fabric_link_delay: Dur,
    /// Each switch output port's drop-tail buffer (all its queues
    /// together); `None` for unbounded. Unused with a shared buffer.
    pub switch_buffer: Option<Limit>,
    /// `switch_buffer` is each strict-priority queue's own limit (a port
    /// then holds up to 8 of them, as the testbed's 8 HTB leaves each with
    /// its own bfifo, docs/testbed.md) instead of the port's, all its queues
    /// together. Neither pFabric's ports nor a shared pool use it.
    pub buffer_per_queue: bool,
    /// Each strict-priority queue of a port (switch or NIC) is guaranteed
    /// this fraction of the link, served first while within it: the
    /// testbed's HTB leaves' `rate` (1/1000 of the link) under strict
    /// `prio` borrowing. `None`: strict priority only.
    pub class_min: Option<f64>,
    /// A pool of this many bytes per switch, shared by its output ports with
    /// dynamic thresholds, instead of `switch_buffer`; `None` for per-port
    /// buffers.
    pub shared_buffer: Option<u64>,
    /// The dynamic threshold's α: a queue may grow while it holds less than
    /// α times the pool's free bytes.
    pub dt_alpha: f64,
    /// What D2TCP does after a flow's deadline has passed.
    pub d2tcp_late: LateRule,
    /// MCP's ECN term: its packets are ECN-capable and its target window
    /// is scaled by (1 − α/2), α its own EWMA of marked bytes (`crate::transport::mcp`,
    /// MCP); off: the authors' prototype, which clears its flows' marks.
    pub mcp_ecn: bool,
    /// ECN marking threshold on a switch port's instantaneous queue; `None`
    /// for the DCTCP paper's K (20 packets up to 1 Gbit/s, 65 above).
    pub ecn_k: Option<Limit>,
    /// Whether K applies to each priority queue's length (true) or to the
    /// port's (false).
    pub ecn_per_queue: bool,
    /// The host NIC's queue.
    pub host_queue: HostQueue,
    /// Whether the host NIC serves its packets in one FIFO whatever their
    /// class (`host_prio=fifo`: a NIC without priority queues, as ns-3's
    /// default device queue), instead of the 8 strict-priority queues.
    pub host_fifo: bool,
    /// TCP Small Queues (Linux `tcp_limit_output_bytes`): a window flow
    /// sends only while its data in its host's NIC (queued or on the wire)
    /// is under this many bytes; the rest waits in the sender, unsent and
    /// untimed. `None`: no limit.
    pub tsq: Option<u64>,
    /// The retransmission timer's floor.
    pub min_rto: Dur,
    /// The retransmission timer before any RTT sample (RFC 6298 says 1 s;
    /// datacenter stacks use the floor).
    pub initial_rto: Dur,
    /// The longest a backed-off timer (data or SYN) waits: RFC 6298 §2.5's
    /// 60 s by default; Linux's `tcp_rto_max_ms` (the testbed sets 1 s).
    pub max_rto: Dur,
    /// The initial congestion window, in full segments.
    pub init_cwnd: u32,
    /// Delayed ACKs (every second full segment, or this timeout); `None`
    /// acknowledges every segment.
    pub delayed_ack: Option<Dur>,
    /// ACKs and SYN-ACKs reach their senders after their reverse path's
    /// propagation and serialization, queued at no port (and in no port's
    /// counts), in the order they were sent: exact where the reverse
    /// direction carries nothing else and ACKs do not queue behind each
    /// other, as in the decomposed engine's link simulations, and a third
    /// fewer per-hop packets.
    pub direct_acks: bool,
    /// A packet from a flow's sender to its receiver crosses the switch
    /// port to the receiver's host with no event of its own: first come, first served at that port's rate,
    /// with no buffer limit, marks or priorities: exact where that port
    /// never holds two packets at once (the decomposed engine's links to
    /// destinations, ten times faster than what feeds them).
    pub direct_last_hop: bool,
    /// A SYN/SYN-ACK handshake before data, counted in the FCT, with this
    /// connection timeout (SYN retransmission); `None` starts with data.
    pub handshake: Option<Dur>,
    /// DCTCP's gain g.
    pub dctcp_g: f64,
    /// Limited transmit (RFC 3042, RFC 5681 §3.2 "SHOULD"): the first two
    /// duplicate ACKs each let one new segment out beyond the window.
    pub limited_transmit: bool,
    /// RTT samples from a timestamp echoed by every ACK (RFC 7323 §4), the
    /// retransmitted segments' included; off: Karn's algorithm (RFC 6298
    /// §3), samples only from segments sent once, and a backed-off timer
    /// kept until the next sample (RFC 6298 §5, after step 5.7).
    pub timestamps: bool,
    /// A backed-off retransmission timer falls back at every new ACK
    /// (ns-3's `TcpSocketBase::NewAck`, RTO recomputed from SRTT and
    /// RTTVAR), not only at the next RTT sample (RFC 6298 §5). Matters
    /// only with `timestamps` off: with them every new ACK is a sample.
    pub rto_reset_on_ack: bool,
    /// Selective acknowledgements (RFC 2018) and SACK-based loss recovery
    /// (RFC 6675) for the TCP family (`crate::sack`); off: NewReno (RFC
    /// 6582). pFabric keeps its own recovery.
    pub sack: bool,
    /// With `sack` and `timestamps`: a retransmission timeout that an
    /// echoed timestamp shows spurious (RFC 3522) is undone, window and
    /// threshold restored (RFC 4015; Linux's `tcp_try_undo_loss`).
    pub rto_undo: bool,
    /// A retransmission of a segment whose earlier copy still waits in its
    /// own host's NIC queue is not sent (`host_rtx=skip`; Linux's
    /// `skb_still_in_host_queue`); `false`: it is (the default).
    pub host_rtx_skip: bool,
    /// With `sack` and `timestamps`: Linux's response to reordering
    /// (`reordering=adaptive`): DupThresh rises to the reordering seen (up
    /// to 300 segments, `tp->reordering`), and a fast recovery that an
    /// echoed timestamp shows spurious is undone (`tcp_try_undo_partial`);
    /// off (`fixed`): DupThresh 3 and no undo (RFC 6675, ns-3).
    pub reorder_adaptive: bool,
    /// A host policy's control messages of one call to one host share a
    /// packet (the testbed's datagram: a 10-byte head and 20 bytes a
    /// message, at most 64); off: a packet per message.
    pub control_batch: bool,
    /// Sample every port's queue occupancy at this interval.
    pub queue_trace: Option<Dur>,
    /// Every flow's pacing at its host (each flow keeps its own; RCP flows
    /// always pace at the rate the network gives them).
    pub pacing: Pacing,
    /// RCP's α (weight of spare capacity).
    pub rcp_alpha: f64,
    /// RCP's β (weight of the queue).
    pub rcp_beta: f64,
    /// RCP's control interval; `None` for T = d0.
    pub rcp_interval: Option<Dur>,
    /// RCP's average RTT d0 before any packet carried one.
    pub rcp_d0: Dur,
    /// The switch ports' queue discipline; `None` follows the transport
    /// (pFabric's queues under `transport=pfabric`, else strict).
    pub queues: Option<QueueKind>,
    /// Each pFabric switch port's buffer (pFabric §5: 36 KB, 2 BDP).
    pub pfabric_buffer: Limit,
    /// pFabric's fixed retransmission timeout; `None` for 3 round trips of
    /// the flow's path, unloaded (pFabric §4.2, §5: 45 µs for 14.6 µs),
    /// at least one plus a full buffer's drain (`transport::pfabric::auto_rto_ps`).
    pub pfabric_rto: Option<Dur>,
    /// pFabric's initial window, segments; `None` for one BDP of the
    /// flow's path (pFabric §4.2, §5: 12 packets).
    pub pfabric_init_cwnd: Option<u32>,
    /// Consecutive timeouts after which a pFabric flow probes (pFabric
    /// §4.2: 5).
    pub pfabric_probe_after: u32,
    /// The longest a Baraat flow held with no nominal share (least AR and
    /// NR 0) waits between its requests (`crate::engine`'s Baraat: the
    /// wait doubles from one interval with each answer that holds it, up
    /// to this, and is never below one interval).
    pub spc_probe_max: Dur,
    /// A sending Baraat flow's requests ride on its data packets and the
    /// answers on their ACKs (true); false: every request and answer
    /// travels alone, as a held flow's do.
    pub spc_on_data: bool,
    /// Baraat's own control bytes (requests and echoes that travel alone,
    /// the header on a data packet or an ACK) take the wire (true); false:
    /// they cross it in no time and add no bytes (`spc_control=free`, a
    /// knob that measures what they cost; ACKs and headers of data packets
    /// are `header_bytes`').
    pub spc_control_wire: bool,
    /// How often a coordinator-driven scheduler (`aalo`, `varys`, `fair`:
    /// `crate::coordinator`) runs on the bytes the engine observed.
    pub coordinator_interval: Dur,
    /// How long a coordinator's decision takes to reach the hosts.
    pub coordinator_delay: Dur,
    /// Every registry scheduler runs through the coordinator, those with a
    /// host policy too (`via=coordinator`): as the runtime runs them, a
    /// central decision every `coordinator_interval` enforced as rates and
    /// classes, against the host policy's decisions at the hosts at once.
    pub via_coordinator: bool,
    /// TAFE's ports serve the flows of a class first come, first served,
    /// one after the other (true: Algorithm 1's time-stamped flows,
    /// `Port::set_task_fifo`); false: each class is a FIFO packet queue,
    /// the flows' packets interleaved as they arrive (a knob that measures
    /// what the one-by-one rule does). Only `tafe` runs read it.
    pub tafe_one_by_one: bool,
}

/// One knob, declared by the part of the engine that reads it (ns-3's
/// `TypeId` attributes): its name in options and scenario files, its
/// default as written there, its unit, one line of help, and how a value
/// sets it. `crate::knobs` assembles every part's table into the one list
/// that parsing ([`PacketConfig::set`]), `KEYS` (`--packet help`) and the
/// docs read.
#[derive(Debug)]
pub struct Knob {
    /// Its name.
    pub name: &'static str,
    /// Its default, as an option would write it ("" where the help says
    /// more than one value can).
    pub default: &'static str,
    /// What kind of value it takes: duration, size (bytes or packets),
    /// count, number, on/off, or choice (the help lists them).
    pub unit: &'static str,
    /// One line of help, its default in parentheses last.
    pub help: &'static str,
    /// Sets it in a configuration from `value` (the key, for errors).
    pub set: fn(&mut PacketConfig, &str, &str) -> Result<(), ConfigError>,
}

/// `queued` (false) or `direct` (true): whether packets cross a kind of
/// port with no event of their own (`acks`, `last_hop`).
fn direct(key: &str, v: &str) -> Result<bool, ConfigError> {
    match v.trim().to_ascii_lowercase().as_str() {
        "queued" => Ok(false),
        "direct" => Ok(true),
        _ => Err(bad(key, format!("'{v}': queued or direct"))),
    }
}

/// The knobs of the run as a whole: the transport, the switch ports' queue
/// kind, packet sizes, link delays and the queue trace.
pub const KNOBS: &[Knob] = &[
    Knob {
        name: "mtu",
        default: "1500",
        unit: "bytes",
        help: "bytes on the wire of a full data packet, headers included (1500)",
        set: |c, key, v| {
            c.mtu = parse_u32(key, v, 1)?;
            Ok(())
        },
    },
    Knob {
        name: "header_bytes",
        default: "40",
        unit: "bytes",
        help: "bytes of headers per packet; ACKs and SYNs are this long (40)",
        set: |c, key, v| {
            c.header_bytes = parse_u32(key, v, 1)?;
            Ok(())
        },
    },
    Knob {
        name: "host_link_delay",
        default: "1us",
        unit: "duration",
        help: "one-way delay of host links (1us)",
        set: |c, key, v| {
            c.host_link_delay = parse_dur(key, v)?;
            Ok(())
        },
    },
    Knob {
        name: "fabric_link_delay",
        default: "1us",
        unit: "duration",
        help: "one-way delay of links between switches (1us)",
        set: |c, key, v| {
            c.fabric_link_delay = parse_dur(key, v)?;
            Ok(())
        },
    },
    Knob {
        name: "link_delay",
        default: "",
        unit: "duration",
        help: "both delays at once",
        set: |c, key, v| {
            c.host_link_delay = parse_dur(key, v)?;
            c.fabric_link_delay = c.host_link_delay;
            Ok(())
        },
    },
    Knob {
        name: "acks",
        default: "queued",
        unit: "choice",
        help: "queued: ACKs cross the reverse path's ports; direct: they arrive after its delays and serializations, queued nowhere (exact where nothing else goes that way) (queued)",
        set: |c, key, v| {
            c.direct_acks = direct(key, v)?;
            Ok(())
        },
    },
    Knob {
        name: "last_hop",
        default: "queued",
        unit: "choice",
        help: "queued: a packet to a flow's receiver is queued at the switch port to its host as at any port; direct: it crosses that port first come first served, with no buffer, marks or priorities (exact where that port never holds two packets) (queued)",
        set: |c, key, v| {
            c.direct_last_hop = direct(key, v)?;
            Ok(())
        },
    },
    Knob {
        name: "queue_trace",
        default: "off",
        unit: "duration or off",
        help: "off, or the interval at which every port's queue is sampled, e.g. 100us",
        set: |c, key, v| {
            c.queue_trace = if off(v) {
                None
            } else {
                Some(parse_dur(key, v)?)
            };
            Ok(())
        },
    },
    Knob {
        name: "queues",
        default: "auto",
        unit: "choice",
        help: "switch queues: strict, pfabric, or auto: pfabric under transport=pfabric, else strict (auto)",
        set: |c, key, v| {
            c.queues = if auto(v) {
                None
            } else {
                Some(
                    by_name(&QueueKind::ALL, QueueKind::name, v)
                    .ok_or_else(|| bad(key, format!("'{v}': strict, pfabric or auto")))?,
                )
            };
            Ok(())
        },
    },
];

impl Default for PacketConfig {
    fn default() -> PacketConfig {
        PacketConfig {
            mtu: 1500,
            header_bytes: 40,
            transport: TransportKind::Dctcp,
            host_link_delay: Dur(1_000),
            fabric_link_delay: Dur(1_000),
            switch_buffer: Some(Limit::Bytes(170_000)),
            buffer_per_queue: false,
            class_min: None,
            shared_buffer: None,
            dt_alpha: 1.0,
            d2tcp_late: LateRule::Max,
            mcp_ecn: false,
            ecn_k: None,
            ecn_per_queue: false,
            host_queue: HostQueue::Unbounded,
            host_fifo: false,
            tsq: None,
            min_rto: Dur(10_000_000),
            initial_rto: Dur(10_000_000),
            max_rto: Dur(60_000_000_000),
            init_cwnd: 10,
            delayed_ack: None,
            direct_acks: false,
            direct_last_hop: false,
            handshake: None,
            dctcp_g: 1.0 / 16.0,
            limited_transmit: true,
            timestamps: true,
            rto_reset_on_ack: false,
            sack: false,
            rto_undo: false,
            host_rtx_skip: false,
            reorder_adaptive: false,
            control_batch: false,
            queue_trace: None,
            pacing: Pacing::Off,
            rcp_alpha: 0.1,
            rcp_beta: 1.0,
            rcp_interval: None,
            rcp_d0: Dur(20_000),
            queues: None,
            pfabric_buffer: Limit::Bytes(36_000),
            pfabric_rto: None,
            pfabric_init_cwnd: None,
            pfabric_probe_after: 5,
            spc_probe_max: Dur(1_000_000),
            spc_on_data: true,
            spc_control_wire: true,
            coordinator_interval: Dur(10_000_000),
            via_coordinator: false,
            coordinator_delay: Dur::ZERO,
            tafe_one_by_one: true,
        }
    }
}

impl PacketConfig {
    /// Checks the knobs together: the headers fit in a packet, the buffer
    /// holds a full packet, timers are positive.
    pub fn check(&self) -> Result<(), ConfigError> {
        if self.header_bytes >= self.mtu {
            return Err(bad(
                "mtu",
                format!(
                    "{} bytes leave no payload after {} bytes of headers",
                    self.mtu, self.header_bytes
                ),
            ));
        }
        if let Some(Limit::Bytes(b)) = self.switch_buffer {
            if b < self.mtu as u64 {
                return Err(bad(
                    "buffer",
                    format!("{b} bytes cannot hold one {}-byte packet", self.mtu),
                ));
            }
        }
        if let Some(b) = self.shared_buffer {
            if b < self.mtu as u64 {
                return Err(bad(
                    "buffer",
                    format!(
                        "a pool of {b} bytes cannot hold one {}-byte packet",
                        self.mtu
                    ),
                ));
            }
        }
        if self.buffer_per_queue && self.shared_buffer.is_some() {
            return Err(bad(
                "buffer_per",
                "queue needs a port's own buffer, not a shared pool",
            ));
        }
        if self.min_rto == Dur::ZERO {
            return Err(bad("min_rto", "must be above 0"));
        }
        if self.initial_rto == Dur::ZERO {
            return Err(bad("initial_rto", "must be above 0"));
        }
        if self.max_rto < self.min_rto {
            return Err(bad(
                "max_rto",
                format!(
                    "{} ns is below min_rto ({} ns): the timer's ceiling must be at least its floor",
                    self.max_rto.0, self.min_rto.0
                ),
            ));
        }
        if self.queue_trace == Some(Dur::ZERO) {
            return Err(bad("queue_trace", "the interval must be above 0"));
        }
        if self.coordinator_interval == Dur::ZERO {
            return Err(bad("coordinator_interval", "the interval must be above 0"));
        }
        if self.rcp_interval == Some(Dur::ZERO) {
            return Err(bad("rcp_interval", "the interval must be above 0"));
        }
        if self.rcp_d0 == Dur::ZERO {
            return Err(bad("rcp_d0", "must be above 0"));
        }
        if self.handshake == Some(Dur::ZERO) {
            return Err(bad("handshake", "the SYN timeout must be above 0"));
        }
        if self.pfabric_rto == Some(Dur::ZERO) {
            return Err(bad("pfabric_rto", "must be above 0"));
        }
        if let Limit::Bytes(b) = self.pfabric_buffer {
            if b < self.mtu as u64 {
                return Err(bad(
                    "pfabric_buffer",
                    format!("{b} bytes cannot hold one {}-byte packet", self.mtu),
                ));
            }
        }
        Ok(())
    }

    /// The switches' buffer kind.
    pub fn buffer_kind(&self) -> BufferKind {
        match self.shared_buffer {
            Some(b) => BufferKind::Shared(b),
            None => BufferKind::PerPort(self.switch_buffer),
        }
    }

    /// The switch ports' discipline: `queues` if set, else the transport's.
    pub fn queue_kind(&self) -> QueueKind {
        self.queues
            .or(self.transport.rules().queue)
            .unwrap_or(QueueKind::Strict)
    }

    /// Payload bytes of a full data packet.
    pub fn mss(&self) -> u32 {
        self.mtu - self.header_bytes
    }

    /// The ECN threshold of a switch port of `rate` bits/s, if it marks.
    pub fn k_for(&self, rate: f64) -> Option<Limit> {
        match self.ecn_k {
            Some(Limit::Packets(u64::MAX)) => None,
            Some(k) => Some(k),
            None => Some(Limit::Packets(if rate <= 1e9 { 20 } else { 65 })),
        }
    }
}

#[cfg(test)]
mod tests;
