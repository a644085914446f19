//! coflowkit's packet-level engine: the same workloads, fabrics and result
//! tables as the flow-level engine (`coflowkit_sim`), with packets instead
//! of fluid rates. Every link is an output port at its sending end (a host
//! NIC or a switch port) with 8 strict-priority queues, a drop-tail buffer
//! and ECN marking at an instantaneous threshold, or pFabric's
//! priority queue with priority dropping ([`port`], [`queue`]); flows run TCP
//! NewReno, DCTCP, D2TCP, pFabric or (per flow, from a host policy) Karuna's
//! MCP end points or RCP ([`transport`]),
//! each flow with its own transport and its own host pacing ([`pacing`]);
//! the big switch is a non-blocking
//! output-queued switch (a packet queues only at its source's NIC and at
//! its destination's port), and multi-tier fabrics route each flow on one
//! path chosen by the fabric's per-flow ECMP hash (ACKs take the reverse
//! direction's own hash), or on the path the caller pins it to (`paths`;
//! its ACKs then take the same index back, on a leaf-spine the same
//! spine).
//!
//! A registry scheduler with a host policy runs as one policy per host
//! ([`host`], [`simulate_scheduled`]): its markings set each flow's class,
//! pacing and congestion control, its control messages travel as packets;
//! the seed systems' switch mechanisms run with them (TAFE's marking by
//! task bytes, [`tafe`]; Baraat's Smart Priority Classes at every port,
//! [`spc`], whose header rides on data packets and ACKs, or alone for a
//! held flow). A compute stage
//! is refused with a one-line error.
//!
//! Time is integer picoseconds; a run is a pure function of its inputs
//! (events at one instant are handled in the order they were scheduled).

pub mod config;
pub mod coordinator;
mod engine;
pub mod host;
pub mod knobs;
pub mod pacing;
pub mod packet;
pub mod port;
pub mod queue;
pub mod rcp;
pub mod sack;
mod slots;
pub mod spc;
pub mod tafe;
pub mod transport;
pub mod transports;

pub use config::{BufferKind, ConfigError, HostQueue, Knob, Limit, PacketConfig};
pub use coordinator::CoordinatorStats;
pub use engine::{SpcRunStats, SPC_HEADER_BYTES};
pub use host::HostStats;
pub use knobs::KEYS;
pub use pacing::Pacing;
pub use port::PortStats;
pub use queue::QueueKind;
pub use transport::{LateRule, TransportKind};

use coflowkit_model::{Dur, Fabric, LinkKind, Time, ValidWorkload};
use coflowkit_sched::host::{HostContext, HostPolicy};
use coflowkit_sched::{build_host, Switch};
use coflowkit_sched::{SchedulerSpec, WorkloadHints};
use coflowkit_sim::{Progress, SimResult};
use thiserror::Error;

/// Why a packet-level run could not be made.
#[derive(Debug, Error, PartialEq, Eq)]
pub enum PacketError {
    /// A knob is wrong.
    #[error(transparent)]
    Config(#[from] ConfigError),
    /// The workload or fabric has something the packet engine cannot run.
    #[error("packet engine: {0}")]
    Input(String),
    /// Nothing is left to happen but flows are unfinished (a bug: the
    /// retransmission timer always moves a flow on).
    #[error("packet engine stalled at {at}: {n_flows} flows unfinished and no event pending")]
    Stalled {
        /// When.
        at: Time,
        /// How many flows.
        n_flows: usize,
    },
}

/// One flow's packet-level counters.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct FlowPacketStats {
    /// Its packets (data and ACKs) dropped by full queues.
    pub drops: u64,
    /// Its packets marked CE.
    pub ecn_marks: u64,
    /// Segments its sender sent again.
    pub retransmits: u64,
    /// Retransmission (and SYN) timer expiries.
    pub timeouts: u64,
    /// Retransmission timeouts whose segment had been dropped: no copy of
    /// the byte at `una` sent before the timer fired ever arrived.
    pub timeouts_lost: u64,
    /// Retransmission timeouts whose segment had not been dropped: a copy
    /// sent before the timer fired arrived, before it (its ACK was on its
    /// way) or after (it was waiting in a queue longer than the RTO).
    /// `timeouts - timeouts_lost - timeouts_spurious` are SYN timeouts and
    /// those of segments that never arrived (a flow left unfinished).
    pub timeouts_spurious: u64,
    /// Retransmission timeouts that fired while the segment at `una` was
    /// still waiting in its own host's NIC queue (Linux does not resend
    /// such a segment, `skb_still_in_host_queue`; the engine does).
    pub timeouts_host_queued: u64,
    /// Retransmission timeouts that fired while that segment was waiting
    /// in a switch port's queue.
    pub timeouts_switch_queued: u64,
    /// Changes of its class by its host policy after it started.
    pub class_changes: u64,
    /// Of those, moves to a higher class (a lower number): its later
    /// packets may overtake its earlier ones still queued below.
    pub promotions: u64,
    /// Data packets that reached its receiver after one sent later had
    /// (their send times out of order): reordering in the network.
    pub reordered: u64,
    /// Fast retransmits (entries into fast recovery), each a window cut.
    pub fast_retransmits: u64,
    /// Fast retransmits whose segment had not been dropped: a copy sent
    /// before the retransmission arrived (the network reordered it).
    pub fast_retransmits_spurious: u64,
    /// Time (ps) spent waiting for an ACK with data outstanding, counted
    /// in the waits longer than [`STALL_PS`] only.
    pub stalled_ps: u64,
    /// Payload bytes it sent (new and again) in each class, 0 first.
    pub bytes_by_class: [u64; 8],
}

/// A wait for an ACK longer than this (50 ms: two full 64 KiB queues at
/// 25 Mbit/s and more) counts in [`FlowPacketStats::stalled_ps`].
pub const STALL_PS: u64 = 50_000_000_000;

/// One sample of a port's queue.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct QueueSample {
    /// The port (its link's id).
    pub port: u32,
    /// When.
    pub at: Time,
    /// Bytes queued (the packet being serialized not counted).
    pub bytes: u64,
}

/// A finished packet-level run.
#[derive(Debug, Clone)]
pub struct PacketResult {
    /// The flow-level engine's tables: coflows, flows, metrics.
    pub sim: SimResult,
    /// Per flow, in the workload's flow order.
    pub flow_stats: Vec<FlowPacketStats>,
    /// Per network port: its link's name and counters.
    pub ports: Vec<(String, PortStats)>,
    /// Queue samples (`queue_trace`), port by port at each instant.
    pub queue_trace: Vec<QueueSample>,
    /// Per-hop transmissions: every time a packet left a port.
    pub packets: u64,
    /// Events handled.
    pub events: u64,
    /// What the host policies did (runs with a host-policy scheduler).
    pub hosts: Option<HostStats>,
    /// D-CAS's negotiation summed over the hosts (runs of `dcas` host
    /// policies; [`host::negotiation`]).
    pub negotiation: Option<Vec<(&'static str, u64)>>,
    /// What the coordinator did (runs with a coordinator-run scheduler).
    pub coordinator: Option<CoordinatorStats>,
    /// What Baraat's requests and ports did (host-policy runs of `baraat`).
    pub spc: Option<SpcRunStats>,
}

/// Runs `workload` on `fabric` at packet level; `classes` gives each flow's
/// strict-priority class (0 highest; missing ones are 0); `paths` each
/// flow's path, an index into the fabric's equal-cost paths between its
/// hosts (`Fabric::path`; on a leaf-spine the spine), `None` (or missing)
/// for the ECMP hash's. Flows are in the workload's order.
pub fn simulate(
    fabric: &Fabric,
    workload: &ValidWorkload,
    classes: &[u8],
    paths: &[Option<u32>],
    cfg: &PacketConfig,
    progress: &mut dyn FnMut(Progress),
) -> Result<PacketResult, PacketError> {
    engine::Engine::new(fabric, workload, classes, paths, cfg)?.run(progress)
}

/// Runs `workload` as [`simulate`] does, with the registry scheduler `spec`
/// on every host: one host policy per host (`coflowkit_sched::host`), whose
/// markings override `classes`. A scheduler without a host policy, or a
/// bad spec, is refused with a one-line error naming it.
pub fn simulate_scheduled(
    fabric: &Fabric,
    workload: &ValidWorkload,
    spec: &SchedulerSpec,
    paths: &[Option<u32>],
    cfg: &PacketConfig,
    progress: &mut dyn FnMut(Progress),
) -> Result<PacketResult, PacketError> {
    let via = match how_run(&spec.name) {
        Some(Via::HostPolicy) if cfg.via_coordinator => Some(Via::Coordinator),
        via => via,
    };
    let mut r = match via {
        Some(Via::HostPolicy) => {
            let hosted = Hosted {
                policies: host_policies(fabric, workload, spec, cfg)?,
                tafe: tafe_marking(workload, spec)?,
                spc: spc_params(workload, spec)?,
            };
            simulate_hosts(fabric, workload, hosted, paths, cfg, progress)?
        }
        Some(Via::Coordinator) => {
            let coord = coordinator::Coordinator::new(fabric, workload, spec)
                .map_err(|e| PacketError::Input(format!("scheduler '{}': {e}", spec.name)))?;
            engine::Engine::new(fabric, workload, &[], paths, cfg)?
                .with_coordinator(coord)
                .run(progress)?
        }
        None => return Err(cannot_run(&spec.name)),
    };
    r.sim.scheduler = spec.name.clone();
    Ok(r)
}

/// How the packet engine runs a registry scheduler.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Via {
    /// One host policy per host ([`host`]).
    HostPolicy,
    /// A coordinator running the flow-level scheduler ([`coordinator`]).
    Coordinator,
}

impl Via {
    /// How `coflowkit schedulers --engine packet` says it.
    pub fn describe(self) -> &'static str {
        match self {
            Via::HostPolicy => "host policy",
            Via::Coordinator => "via coordinator",
        }
    }
}

/// How the packet engine runs scheduler `name`, if it does: by its host
/// policy when it has one, else by a coordinator.
pub fn how_run(name: &str) -> Option<Via> {
    if coflowkit_sched::host_names().any(|n| n == name) {
        Some(Via::HostPolicy)
    } else if coflowkit_sched::NAMES.iter().any(|(n, _)| *n == name) {
        Some(Via::Coordinator)
    } else {
        None
    }
}

/// Every scheduler the packet engine runs, in the registry's order, and how.
pub fn packet_schedulers() -> Vec<(&'static str, Via)> {
    coflowkit_sched::NAMES
        .iter()
        .filter_map(|(n, _)| how_run(n).map(|v| (*n, v)))
        .collect()
}

fn cannot_run(name: &str) -> PacketError {
    let known: Vec<&str> = packet_schedulers().iter().map(|(n, _)| *n).collect();
    PacketError::Input(format!(
        "scheduler '{name}' is not one the packet engine runs (it runs {}; or name a transport: {})",
        known.join(", "),
        crate::transports::options()
            .map(|t| t.name())
            .collect::<Vec<_>>()
            .join(", ")
    ))
}

/// What runs on the hosts and switches of a host-policy run.
pub struct Hosted {
    /// One policy per host, in host order.
    pub policies: Vec<Box<dyn HostPolicy>>,
    /// TAFE's marking by task bytes at every switch port ([`tafe`]), if on.
    pub tafe: Option<tafe::TafeMarking>,
    /// Baraat's Smart Priority Classes at every port ([`spc`]), if on:
    /// flows whose policy has a demand ask them for rates.
    pub spc: Option<spc::SpcParams>,
}

/// Runs `workload` as [`simulate`] does with `hosted` (a driver's own
/// policies; [`simulate_scheduled`] builds the registry's).
pub fn simulate_hosts(
    fabric: &Fabric,
    workload: &ValidWorkload,
    hosted: Hosted,
    paths: &[Option<u32>],
    cfg: &PacketConfig,
    progress: &mut dyn FnMut(Progress),
) -> Result<PacketResult, PacketError> {
    if hosted.policies.len() != fabric.n_hosts() as usize {
        return Err(PacketError::Input(format!(
            "{} host policies for {} hosts",
            hosted.policies.len(),
            fabric.n_hosts()
        )));
    }
    engine::Engine::new(fabric, workload, &[], paths, cfg)?
        .with_hosts(hosted.policies)
        .with_tafe(hosted.tafe)
        .with_spc(hosted.spc)
        .run(progress)
}

/// Baraat's ports for a scheduler whose switches run Smart Priority
/// Classes (its `rtt`, `threshold`, `share`, `vc`, `vc_max`), else none.
fn spc_params(
    workload: &ValidWorkload,
    spec: &SchedulerSpec,
) -> Result<Option<spc::SpcParams>, PacketError> {
    if switch_of(spec)? != Switch::SmartPriorityClasses {
        return Ok(None);
    }
    let bad = |e: String| PacketError::Input(format!("scheduler '{}': {e}", spec.name));
    let (_, params) = spec.params().map_err(|e| bad(e.to_string()))?;
    let c = coflowkit_sched::baraat::BaraatConfig::of_params(&params, &WorkloadHints::of(workload))
        .map_err(|e| bad(e.to_string()))?;
    Ok(Some(spc::SpcParams::of_baraat(&c)))
}

/// What the switches of `spec`'s scheduler do ([`Switch`], its descriptor's).
fn switch_of(spec: &SchedulerSpec) -> Result<Switch, PacketError> {
    coflowkit_sched::registry::descriptor(&spec.name)
        .map(|d| d.parts.switch)
        .map_err(|e| PacketError::Input(e.to_string()))
}

/// TAFE's switches for a scheduler whose switches mark tasks (its
/// threshold vector), else none.
fn tafe_marking(
    workload: &ValidWorkload,
    spec: &SchedulerSpec,
) -> Result<Option<tafe::TafeMarking>, PacketError> {
    if switch_of(spec)? != Switch::TaskMarking {
        return Ok(None);
    }
    let bad = |e: String| PacketError::Input(format!("scheduler '{}': {e}", spec.name));
    let (_, params) = spec.params().map_err(|e| bad(e.to_string()))?;
    let c = coflowkit_sched::tafe::TafeConfig::of_params(&params, &WorkloadHints::of(workload))
        .map_err(|e| bad(e.to_string()))?;
    tafe::TafeMarking::of_tafe(&c)
        .map(Some)
        .map_err(|e| bad(e.to_string()))
}

/// One policy per host for `spec`, or the error naming what is wrong.
fn host_policies(
    fabric: &Fabric,
    workload: &ValidWorkload,
    spec: &SchedulerSpec,
    cfg: &PacketConfig,
) -> Result<Vec<Box<dyn HostPolicy>>, PacketError> {
    let hints = WorkloadHints::of(workload);
    let rtt = base_rtt_ns(fabric, cfg);
    (0..fabric.n_hosts())
        .map(|h| {
            let nic_bps = fabric.links()[fabric.uplink(coflowkit_model::HostId(h)).0 as usize]
                .capacity
                .0;
            let ctx = HostContext {
                host: h,
                n_hosts: fabric.n_hosts(),
                nic_bps,
                rtt,
            };
            build_host(spec, &hints, &ctx)
                .map_err(|e| PacketError::Input(format!("scheduler '{}': {e}", spec.name)))
        })
        .collect()
}

/// The fabric's base round trip between its first and last host: every
/// link's delay both ways plus one full packet's serialization out and a
/// header's back (the hosts' `HostContext::rtt`).
fn base_rtt_ns(fabric: &Fabric, cfg: &PacketConfig) -> Dur {
    let n = fabric.n_hosts();
    if n < 2 {
        return Dur(0);
    }
    let (a, b) = (coflowkit_model::HostId(0), coflowkit_model::HostId(n - 1));
    let mut path = vec![];
    fabric.path_into(a, b, 0, &mut path);
    let one_way = |bytes: u32| -> f64 {
        path.iter()
            .map(|l| {
                let link = &fabric.links()[l.0 as usize];
                let delay = fabric
                    .link_delay(*l)
                    .map(|d| d.0)
                    .unwrap_or(match link.kind {
                        LinkKind::Uplink(_) | LinkKind::Downlink(_) => cfg.host_link_delay.0,
                        _ => cfg.fabric_link_delay.0,
                    });
                delay as f64 + f64::from(bytes) * 8e9 / link.capacity.0
            })
            .sum()
    };
    Dur((one_way(cfg.mtu) + one_way(cfg.header_bytes)).ceil() as u64)
}
