//! The packet engine's knobs: one [`PacketConfig`], set key by key from a
//! command line (`key=value`) or a scenario file through the same parser
//! ([`PacketConfig::set`]), so that both say the same thing about a bad
//! value.
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
//! these are checked against the pFabric ns-2 scripts (`crate::queue::pfabric`).
//! RCP's α and β and D2TCP's range of d: see `crate::rcp` and `crate::transport::d2tcp`
//! for what was and was not found.

mod values;

use crate::pacing::Pacing;
use crate::transport::{LateRule, TransportKind};
use coflowkit_model::Dur;
use std::fmt;
use thiserror::Error;
use values::{
    auto, by_name, host_queue_both, off, parse_dur, parse_gain, parse_limit, parse_on_off,
    parse_u32,
};

/// A bad knob: which key, what value, and why.
#[derive(Debug, Error, PartialEq, Eq)]
#[error("packet option '{key}': {message}")]
pub struct ConfigError {
    /// The key.
    pub key: String,
    /// What is wrong with its value.
    pub message: String,
}

fn bad(key: &str, message: impl Into<String>) -> ConfigError {
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

/// The queue discipline of every switch port.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum QueueKind {
    /// 8 strict-priority FIFO queues, drop-tail, ECN at K ([`crate::port`]).
    Strict,
    /// pFabric's priority queue (Alizadeh et al. 2013, §4.1): serve the
    /// flow of the most urgent packet, earliest packet first; on overflow
    /// drop the least urgent packet ([`crate::queue::pfabric`]).
    Pfabric,
}

impl QueueKind {
    /// Its name in options.
    pub fn name(self) -> &'static str {
        match self {
            QueueKind::Strict => "strict",
            QueueKind::Pfabric => "pfabric",
        }
    }
    /// Every discipline, in listing order.
    pub const ALL: [QueueKind; 2] = [QueueKind::Strict, QueueKind::Pfabric];
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
    /// TAFE's ports serve the flows of a class first come, first served,
    /// one after the other (true: Algorithm 1's time-stamped flows,
    /// `Port::set_task_fifo`); false: each class is a FIFO packet queue,
    /// the flows' packets interleaved as they arrive (a knob that measures
    /// what the one-by-one rule does). Only `tafe` runs read it.
    pub tafe_one_by_one: bool,
}

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
            coordinator_delay: Dur::ZERO,
            tafe_one_by_one: true,
        }
    }
}

/// Every key [`PacketConfig::set`] takes, with what it sets (for help and
/// for the error naming an unknown key).
pub const KEYS: &[(&str, &str)] = &[
    ("transport", "tcp, dctcp, rcp, d2tcp or pfabric (default dctcp)"),
    (
        "mtu",
        "bytes on the wire of a full data packet, headers included (1500)",
    ),
    (
        "header_bytes",
        "bytes of headers per packet; ACKs and SYNs are this long (40)",
    ),
    ("host_link_delay", "one-way delay of host links (1us)"),
    (
        "fabric_link_delay",
        "one-way delay of links between switches (1us)",
    ),
    ("link_delay", "both delays at once"),
    (
        "buffer",
        "switch port buffer: bytes (170KB) or packets (100p), or inf; or shared:BYTES, one pool per switch with dynamic thresholds",
    ),
    (
        "buffer_per",
        "port or queue: buffer is each switch port's, its 8 queues together, or each queue's own (port)",
    ),
    (
        "class_min",
        "off, or each strict-priority queue's guaranteed fraction of its link, served first while within it (HTB's leaf rate; the testbed 0.001) (off)",
    ),
    (
        "dt_alpha",
        "dynamic threshold's alpha of a shared buffer: a queue grows while below alpha x free pool bytes (1)",
    ),
    (
        "d2tcp_late",
        "D2TCP after a missed deadline: max (d = 2) or dctcp (d = 1) (max)",
    ),
    (
        "mcp_ecn",
        "on or off: Karuna's MCP reacts to ECN marks, its target scaled by 1 - alpha/2 (off: the authors' prototype)",
    ),
    (
        "ecn_k",
        "ECN threshold K: bytes or packets (default 20p up to 1 Gbit/s, 65p above), or off",
    ),
    ("ecn_per", "port or queue: what K is compared with (port)"),
    (
        "host_queue",
        "unbounded, droptail:N (packets), ecn:K (packets, unbounded) or droptail:N+ecn:K (both, as a switch port) (unbounded)",
    ),
    (
        "host_prio",
        "strict (the NIC's 8 strict-priority queues) or fifo (one FIFO for every class; the switches keep theirs) (strict)",
    ),
    (
        "tsq",
        "off, or TCP Small Queues' bytes: a flow sends while it has less in its host's NIC (Linux 32KB) (off)",
    ),
    ("min_rto", "retransmission timer floor (10ms)"),
    (
        "max_rto",
        "the longest a backed-off timer waits, data or SYN (60s; Linux tcp_rto_max_ms)",
    ),
    (
        "initial_rto",
        "retransmission timer before an RTT sample (10ms)",
    ),
    ("init_cwnd", "initial window, segments (10)"),
    (
        "delayed_ack",
        "off, or the delayed-ACK timeout, e.g. 200us (off)",
    ),
    ("handshake", "off, or the SYN timeout, e.g. 1s (off)"),
    ("dctcp_g", "DCTCP's gain g (0.0625)"),
    (
        "limited_transmit",
        "on or off: a new segment on each of the first two duplicate ACKs, RFC 3042 (on)",
    ),
    (
        "timestamps",
        "on: RTT samples from timestamps on every ACK, RFC 7323; off: Karn's algorithm, RFC 6298 §3 (on)",
    ),
    (
        "rto_reset",
        "when a backed-off RTO falls back: sample (the next RTT sample, RFC 6298 §5) or ack (every new ACK, as ns-3) (sample)",
    ),
    (
        "sack",
        "on: SACK blocks (RFC 2018) and SACK-based loss recovery (RFC 6675); off: NewReno, RFC 6582 (off)",
    ),
    (
        "rto_undo",
        "on: with sack and timestamps, a timeout the echoed timestamp shows spurious is undone (RFC 3522/4015, Linux) (off)",
    ),
    (
        "host_rtx",
        "resend or skip: a retransmission of a segment still in its own host's NIC queue is sent or not (Linux: skip) (resend)",
    ),
    (
        "reordering",
        "fixed: DupThresh 3 (RFC 6675); adaptive: with sack and timestamps, DupThresh follows the reordering seen and a fast recovery the echoed timestamp shows spurious is undone (Linux) (fixed)",
    ),
    (
        "control_batch",
        "on: a host policy's messages of one call to one host share a packet, 10 + 20 bytes each, at most 64 (the testbed's datagram); off: a packet per message (off)",
    ),
    (
        "queue_trace",
        "off, or the interval at which every port's queue is sampled, e.g. 100us",
    ),
    (
        "pacing",
        "per-flow pacing at the host: off, cwnd (Linux: 2 or 1.2 x cwnd/srtt) or a rate, e.g. 5Gbps (off)",
    ),
    ("rcp_alpha", "RCP's alpha, weight of spare capacity (0.1)"),
    ("rcp_beta", "RCP's beta, weight of the queue (1)"),
    (
        "rcp_interval",
        "RCP's control interval T, or rtt for T = d0 (rtt)",
    ),
    (
        "rcp_d0",
        "RCP's average RTT d0 before packets carry one (20us)",
    ),
    (
        "queues",
        "switch queues: strict, pfabric, or auto: pfabric under transport=pfabric, else strict (auto)",
    ),
    (
        "pfabric_buffer",
        "each pfabric switch port's buffer: bytes or packets (36KB)",
    ),
    (
        "pfabric_rto",
        "pfabric's fixed timeout, or auto: 3 unloaded round trips of the path, at least one plus a full pfabric buffer's drain (auto)",
    ),
    (
        "pfabric_init_cwnd",
        "pfabric's initial window in segments, or auto: the path's BDP (auto)",
    ),
    (
        "pfabric_probe_after",
        "consecutive timeouts before a pfabric flow probes (5)",
    ),
    (
        "spc_probe_max",
        "baraat: the longest a flow held with no nominal share (AR and NR 0) waits between requests; the wait doubles from one interval (rtt) while held (1ms)",
    ),
    (
        "spc_header",
        "baraat: data (a sending flow's requests ride on its data packets, the answers on ACKs) or alone (on packets of their own) (data)",
    ),
    (
        "spc_control",
        "baraat: wire (its requests, echoes and the header on data packets and ACKs take the wire) or free (no bytes: a knob to measure their cost) (wire)",
    ),
    (
        "coordinator_interval",
        "how often a coordinator-run scheduler (aalo, varys, fair, ...) decides on the observed bytes (10ms)",
    ),
    (
        "coordinator_delay",
        "how long a coordinator's decision takes to reach the hosts (0)",
    ),
    (
        "tafe_service",
        "tafe's ports inside a class: flows (first come, first served, one flow after the other, Algorithm 1) or fifo (packets in arrival order, flows interleaved) (flows)",
    ),
];

impl PacketConfig {
    /// Sets `key` to `value` (see [`KEYS`]); on an error nothing changes.
    pub fn set(&mut self, key: &str, value: &str) -> Result<(), ConfigError> {
        let mut next = self.clone();
        next.apply(key, value)?;
        next.check()?;
        *self = next;
        Ok(())
    }

    fn apply(&mut self, key: &str, value: &str) -> Result<(), ConfigError> {
        let v = value;
        match key {
            "transport" => {
                self.transport =
                    by_name(&TransportKind::ALL, TransportKind::name, v).ok_or_else(|| {
                        let names: Vec<_> = TransportKind::ALL.iter().map(|t| t.name()).collect();
                        bad(
                            key,
                            format!("unknown transport '{v}': one of {}", names.join(", ")),
                        )
                    })?
            }
            "mtu" => self.mtu = parse_u32(key, v, 1)?,
            "header_bytes" => self.header_bytes = parse_u32(key, v, 1)?,
            "host_link_delay" => self.host_link_delay = parse_dur(key, v)?,
            "fabric_link_delay" => self.fabric_link_delay = parse_dur(key, v)?,
            "link_delay" => {
                self.host_link_delay = parse_dur(key, v)?;
                self.fabric_link_delay = self.host_link_delay;
            }
            "buffer" => {
                let t = v.trim().to_ascii_lowercase();
                self.shared_buffer = None;
                if let Some(pool) = t.strip_prefix("shared:") {
                    match parse_limit(key, pool)? {
                        Limit::Bytes(b) => self.shared_buffer = Some(b),
                        Limit::Packets(_) => {
                            return Err(bad(
                                key,
                                format!("'{v}': a shared pool is sized in bytes (shared:4MB)"),
                            ))
                        }
                    }
                } else {
                    self.switch_buffer = match t.as_str() {
                        "inf" | "unbounded" => None,
                        _ => Some(parse_limit(key, v)?),
                    }
                }
            }
            "class_min" => {
                self.class_min = if off(v) {
                    None
                } else {
                    let f: f64 = v
                        .trim()
                        .parse()
                        .map_err(|_| bad(key, format!("'{v}' is not a number")))?;
                    if !(f > 0.0 && f <= 1.0) {
                        return Err(bad(key, format!("{f} is not in (0, 1]")));
                    }
                    Some(f)
                }
            }
            "buffer_per" => {
                self.buffer_per_queue = match v.trim() {
                    "port" => false,
                    "queue" => true,
                    _ => return Err(bad(key, format!("'{v}': port or queue"))),
                }
            }
            "dt_alpha" => {
                let a: f64 = v
                    .trim()
                    .parse()
                    .map_err(|_| bad(key, format!("'{v}' is not a number")))?;
                if !(a > 0.0 && a.is_finite()) {
                    return Err(bad(key, format!("{a} is not above 0")));
                }
                self.dt_alpha = a;
            }
            "d2tcp_late" => {
                self.d2tcp_late = match v.trim().to_ascii_lowercase().as_str() {
                    "max" => LateRule::Max,
                    "dctcp" => LateRule::Dctcp,
                    _ => return Err(bad(key, format!("'{v}': max or dctcp"))),
                }
            }
            "ecn_k" => {
                self.ecn_k = if off(v) {
                    Some(Limit::Packets(u64::MAX))
                } else {
                    Some(parse_limit(key, v)?)
                }
            }
            "ecn_per" => {
                self.ecn_per_queue = match v.trim() {
                    "port" => false,
                    "queue" => true,
                    _ => return Err(bad(key, format!("'{v}': port or queue"))),
                }
            }
            "host_prio" => {
                self.host_fifo = match v.trim().to_ascii_lowercase().as_str() {
                    "strict" => false,
                    "fifo" => true,
                    _ => return Err(bad(key, format!("'{v}': strict or fifo"))),
                }
            }
            "host_queue" => {
                let s = v.trim().to_ascii_lowercase();
                self.host_queue = if s == "unbounded" || s == "lossless" {
                    HostQueue::Unbounded
                } else if let Some((a, b)) = s.split_once('+') {
                    host_queue_both(key, v, a.trim(), b.trim())?
                } else if let Some(n) = s.strip_prefix("droptail:") {
                    HostQueue::DropTail(parse_u32(key, n, 1)? as u64)
                } else if let Some(n) = s.strip_prefix("ecn:") {
                    HostQueue::Ecn(parse_u32(key, n, 1)? as u64)
                } else {
                    return Err(bad(
                        key,
                        format!(
                            "'{v}': unbounded, droptail:N, ecn:K or droptail:N+ecn:K (packets)"
                        ),
                    ));
                }
            }
            "tsq" => {
                self.tsq = if off(v) {
                    None
                } else {
                    match parse_limit(key, v)? {
                        Limit::Bytes(b) => Some(b),
                        Limit::Packets(_) => {
                            return Err(bad(key, format!("'{v}': bytes (32KB), or off")))
                        }
                    }
                }
            }
            "min_rto" => self.min_rto = parse_dur(key, v)?,
            "initial_rto" => self.initial_rto = parse_dur(key, v)?,
            "max_rto" => self.max_rto = parse_dur(key, v)?,
            "init_cwnd" => self.init_cwnd = parse_u32(key, v, 1)?,
            "delayed_ack" => {
                self.delayed_ack = if off(v) {
                    None
                } else {
                    Some(parse_dur(key, v)?)
                }
            }
            "handshake" => {
                self.handshake = if off(v) {
                    None
                } else {
                    Some(parse_dur(key, v)?)
                }
            }
            "dctcp_g" => {
                let g: f64 = v
                    .trim()
                    .parse()
                    .map_err(|_| bad(key, format!("'{v}' is not a number")))?;
                if !(g > 0.0 && g <= 1.0) {
                    return Err(bad(key, format!("{g} is not in (0, 1]")));
                }
                self.dctcp_g = g;
            }
            "pacing" => self.pacing = Pacing::parse(v).map_err(|e| bad(key, e))?,
            "rcp_alpha" => self.rcp_alpha = parse_gain(key, v)?,
            "rcp_beta" => self.rcp_beta = parse_gain(key, v)?,
            "rcp_interval" => {
                self.rcp_interval = match v.trim().to_ascii_lowercase().as_str() {
                    "rtt" | "d0" => None,
                    _ => Some(parse_dur(key, v)?),
                }
            }
            "rcp_d0" => self.rcp_d0 = parse_dur(key, v)?,
            "coordinator_interval" => self.coordinator_interval = parse_dur(key, v)?,
            "coordinator_delay" => self.coordinator_delay = parse_dur(key, v)?,
            "limited_transmit" => self.limited_transmit = parse_on_off(key, v)?,
            "timestamps" => self.timestamps = parse_on_off(key, v)?,
            "sack" => self.sack = parse_on_off(key, v)?,
            "rto_undo" => self.rto_undo = parse_on_off(key, v)?,
            "host_rtx" => {
                self.host_rtx_skip = match v.trim().to_ascii_lowercase().as_str() {
                    "resend" => false,
                    "skip" => true,
                    _ => return Err(bad(key, format!("'{v}': resend or skip"))),
                }
            }
            "control_batch" => self.control_batch = parse_on_off(key, v)?,
            "reordering" => {
                self.reorder_adaptive = match v.trim().to_ascii_lowercase().as_str() {
                    "fixed" => false,
                    "adaptive" => true,
                    _ => return Err(bad(key, format!("'{v}': fixed or adaptive"))),
                }
            }
            "mcp_ecn" => self.mcp_ecn = parse_on_off(key, v)?,
            "rto_reset" => {
                self.rto_reset_on_ack = match v.trim().to_ascii_lowercase().as_str() {
                    "sample" => false,
                    "ack" => true,
                    _ => return Err(bad(key, format!("'{v}': sample or ack"))),
                }
            }
            "queues" => {
                self.queues = if auto(v) {
                    None
                } else {
                    Some(
                        by_name(&QueueKind::ALL, QueueKind::name, v)
                            .ok_or_else(|| bad(key, format!("'{v}': strict, pfabric or auto")))?,
                    )
                }
            }
            "pfabric_buffer" => self.pfabric_buffer = parse_limit(key, v)?,
            "pfabric_rto" => {
                self.pfabric_rto = if auto(v) {
                    None
                } else {
                    Some(parse_dur(key, v)?)
                }
            }
            "pfabric_init_cwnd" => {
                self.pfabric_init_cwnd = if auto(v) {
                    None
                } else {
                    Some(parse_u32(key, v, 1)?)
                }
            }
            "pfabric_probe_after" => self.pfabric_probe_after = parse_u32(key, v, 1)?,
            "spc_probe_max" => self.spc_probe_max = parse_dur(key, v)?,
            "spc_header" => {
                self.spc_on_data = match v.trim().to_ascii_lowercase().as_str() {
                    "data" => true,
                    "alone" => false,
                    _ => return Err(bad(key, format!("'{v}': data or alone"))),
                }
            }
            "spc_control" => {
                self.spc_control_wire = match v.trim().to_ascii_lowercase().as_str() {
                    "wire" => true,
                    "free" => false,
                    _ => return Err(bad(key, format!("'{v}': wire or free"))),
                }
            }
            "tafe_service" => {
                self.tafe_one_by_one = match v.trim().to_ascii_lowercase().as_str() {
                    "flows" => true,
                    "fifo" => false,
                    _ => return Err(bad(key, format!("'{v}': flows or fifo"))),
                }
            }
            "queue_trace" => {
                self.queue_trace = if off(v) {
                    None
                } else {
                    Some(parse_dur(key, v)?)
                }
            }
            _ => {
                let keys: Vec<_> = KEYS.iter().map(|k| k.0).collect();
                return Err(bad(
                    key,
                    format!("unknown option; valid: {}", keys.join(", ")),
                ));
            }
        }
        Ok(())
    }

    /// Sets every `key=value` of a comma- or semicolon-separated list.
    pub fn set_all(&mut self, spec: &str) -> Result<(), ConfigError> {
        for kv in spec.split([',', ';']).filter(|s| !s.trim().is_empty()) {
            let (k, v) = kv
                .split_once('=')
                .ok_or_else(|| bad(kv.trim(), "expected key=value"))?;
            self.set(k.trim(), v)?;
        }
        Ok(())
    }

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
        self.queues.unwrap_or(match self.transport {
            TransportKind::Pfabric => QueueKind::Pfabric,
            _ => QueueKind::Strict,
        })
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
