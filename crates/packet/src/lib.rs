//! coflowkit's packet-level engine: the same workloads, fabrics and result
//! tables as the flow-level engine (`coflowkit_sim`), with packets instead
//! of fluid rates. Every link is an output port at its sending end (a host
//! NIC or a switch port) with 8 strict-priority queues, a drop-tail buffer
//! and ECN marking at an instantaneous threshold ([`port`]), or pFabric's
//! priority queue with priority dropping ([`pfabric`]); flows run TCP
//! NewReno, DCTCP, D2TCP or pFabric end points ([`tcp`]) or RCP ([`rcp`]),
//! each flow with its own transport and its own host pacing ([`pacing`]);
//! the big switch is a non-blocking
//! output-queued switch (a packet queues only at its source's NIC and at
//! its destination's port), and multi-tier fabrics route each flow on one
//! path chosen by the fabric's per-flow ECMP hash (ACKs take the reverse
//! direction's own hash), or on the path the caller pins it to (`paths`;
//! its ACKs then take the same index back, on a leaf-spine the same
//! spine).
//!
//! What it does not model (yet): the seed systems' own mechanisms (issue
//! 34); a compute stage is refused with a one-line error.
//!
//! Time is integer picoseconds; a run is a pure function of its inputs
//! (events at one instant are handled in the order they were scheduled).

pub mod config;
mod engine;
pub mod pacing;
pub mod pfabric;
pub mod port;
pub mod rcp;
pub mod spc;
pub mod tafe;
pub mod tcp;

pub use config::{
    BufferKind, ConfigError, HostQueue, LateRule, Limit, PacketConfig, QueueKind, TransportKind,
    KEYS,
};
pub use pacing::Pacing;
pub use port::PortStats;

use coflowkit_model::{Fabric, Time, ValidWorkload};
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
}

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
