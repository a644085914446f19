//! Setting up a run: the ports of the fabric (each link's sending end,
//! with the queue kind, buffer and ECN threshold the knobs give it), each
//! flow's paths and end point state, and the knobs every sender and RCP
//! port share. [`Engine::new`] puts the parts together.

use super::{ps, queued, Engine, Flow, Route};
use crate::config::{BufferKind, HostQueue, Limit, PacketConfig};
use crate::pacing::Pacer;
use crate::port::{Port, Queue};
use crate::queue::pfabric::PfabricQueue;
use crate::queue::shared::SharedPool;
use crate::queue::strict::StrictQueues;
use crate::queue::QueueKind;
use crate::rcp::RcpParams;
use crate::sack::SackStore;
use crate::transport::SenderParams;
use crate::{FlowPacketStats, PacketError};
use coflowkit_model::{Fabric, FlowKey, FlowKind, LinkId, LinkKind, Time, ValidWorkload};
use coflowkit_sched::reserve_huge;
use coflowkit_sim::release::Releases;

impl<'a> Engine<'a> {
    /// Sets up ports and paths (`paths`: a pinned path index per flow, see
    /// [`crate::simulate`]); refuses what the packet level cannot run.
    pub fn new(
        fabric: &'a Fabric,
        workload: &'a ValidWorkload,
        classes: &[u8],
        paths: &[Option<u32>],
        cfg: &'a PacketConfig,
    ) -> Result<Engine<'a>, PacketError> {
        cfg.check()?;
        let (ports, pools) = build_ports(fabric, cfg)?;
        let n_ports = ports.len();
        let (hops, flows, routes, first_flow) = build_flows(fabric, workload, classes, paths, cfg)?;
        // Only the flows' paths carry data (control channels join later).
        let n_slots = hops.len();
        let coflows = workload.coflows();
        Ok(Engine {
            cfg,
            fabric,
            workload,
            heap: super::events::Events::new(),
            seq: 0,
            now: 0,
            ports,
            pools,
            hops,
            flows,
            routes,
            first_flow,
            rel: Releases::new(coflows),
            next_coflow: 0,
            done_coflows: 0,
            segs: vec![],
            released: vec![],
            completing: vec![],
            trace: vec![],
            events: 0,
            params: sender_params(cfg),
            hosts: None,
            tafe: None,
            task_bytes: vec![],
            spc: None,
            coord: None,
            in_transit: Default::default(),
            sacks: SackStore::default(),
            queued: queued::QueuedData::new(n_slots),
            last_free: if cfg.direct_last_hop {
                vec![0; n_ports]
            } else {
                vec![]
            },
            rcp: vec![],
            rcp_params: rcp_params(cfg),
        })
    }
}

/// Every link's output port (indexed by link id) and, with a shared
/// buffer, each switch's pool: the host NICs by `host_queue`, the switch
/// ports by `buffer`, `ecn_k` and the queue kind; a CPU link gets an idle
/// port (never on a packet's path).
fn build_ports(
    fabric: &Fabric,
    cfg: &PacketConfig,
) -> Result<(Vec<Port>, Vec<SharedPool>), PacketError> {
    let pfabric = cfg.queue_kind() == QueueKind::Pfabric;
    let (switch_buffer, pools) = match cfg.buffer_kind() {
        // pFabric's ports keep their own small buffers (`pfabric_buffer`).
        _ if pfabric => (None, vec![]),
        BufferKind::PerPort(b) => (b, vec![]),
        BufferKind::Shared(b) => (
            None,
            vec![SharedPool::new(b, cfg.dt_alpha); fabric.n_switches()],
        ),
    };
    let switch_port = |rate: f64, delay| {
        let queue: Queue = if pfabric {
            PfabricQueue::new(Some(cfg.pfabric_buffer)).into()
        } else {
            let mut q = StrictQueues::new(switch_buffer, cfg.k_for(rate), cfg.ecn_per_queue);
            q.buffer_per_queue = cfg.buffer_per_queue;
            q.class_min_bps = cfg.class_min.map(|f| f * rate);
            q.into()
        };
        Port::with_queue(rate, ps(Time(delay)), queue)
    };
    // Every hop of every packet reads its port (768 bytes each, 4.7 MB on
    // a 1,024-host fat-tree): in huge pages where Linux gives them, so that
    // those reads do not miss the TLB as well as the cache (issue 69).
    let mut ports = Vec::new();
    reserve_huge(&mut ports, fabric.n_links());
    for (i, link) in fabric.links().iter().enumerate() {
        let rate = link.capacity.0;
        let own = fabric.link_delay(LinkId(i as u32)).map(|d| d.0);
        let host_delay = own.unwrap_or(cfg.host_link_delay.0);
        let mut port = match link.kind {
            LinkKind::Uplink(_) => {
                let (buffer, k) = match cfg.host_queue {
                    HostQueue::Unbounded => (None, None),
                    HostQueue::DropTail(n) => (Some(Limit::Packets(n)), None),
                    HostQueue::Ecn(k) => (None, Some(Limit::Packets(k))),
                    HostQueue::DropTailEcn { packets, k } => {
                        (Some(Limit::Packets(packets)), Some(Limit::Packets(k)))
                    }
                };
                // pFabric's hosts serve their NIC by priority too
                // (§4.1), within the NIC's own limit.
                let queue: Queue = if pfabric {
                    PfabricQueue::new(buffer).into()
                } else {
                    let mut q = StrictQueues::new(buffer, k, false);
                    q.class_min_bps = cfg.class_min.map(|f| f * rate);
                    q.one_fifo = cfg.host_fifo;
                    q.into()
                };
                Port::with_queue(rate, ps(Time(host_delay)), queue)
            }
            LinkKind::Downlink(_) => switch_port(rate, host_delay),
            LinkKind::Switch { .. } => switch_port(rate, own.unwrap_or(cfg.fabric_link_delay.0)),
            // A CPU is no network resource: never on a packet's path.
            LinkKind::Cpu(_) => Port::new(1.0, 0, None, None, false),
        };
        if !pools.is_empty() {
            port.pool = switch_of(fabric, link.kind).map(|s| s.0);
        }
        if rate <= 0.0 {
            return Err(PacketError::Input(format!(
                "link {} has no capacity",
                fabric.link_name(LinkId(i as u32))
            )));
        }
        ports.push(port);
    }
    Ok((ports, pools))
}

/// Each flow's forward and reverse paths (ranges into the returned hops),
/// its end point state before it starts, and each coflow's first flow;
/// refuses a compute stage, a class above 7, a pinned path out of range
/// and a path over 255 hops.
#[allow(clippy::type_complexity)]
fn build_flows(
    fabric: &Fabric,
    workload: &ValidWorkload,
    classes: &[u8],
    paths: &[Option<u32>],
    cfg: &PacketConfig,
) -> Result<(Vec<u32>, Vec<Flow>, Vec<Route>, Vec<u32>), PacketError> {
    let mut hops = vec![];
    // A flow's record (a kilobyte) is read by each of its packets' hops
    // and end points: in huge pages too ([`build_ports`]).
    let mut flows = vec![];
    reserve_huge(
        &mut flows,
        workload.coflows().iter().map(|c| c.flows.len()).sum(),
    );
    let mut routes = vec![];
    let mut first_flow = vec![];
    let mut path = vec![];
    for (ci, c) in workload.coflows().iter().enumerate() {
        first_flow.push(flows.len() as u32);
        for (k, f) in c.flows.iter().enumerate() {
            let at = format!("coflow {} flow {k}", c.id.0);
            if f.kind == FlowKind::Compute {
                return Err(PacketError::Input(format!(
                    "{at} is a compute stage; the packet engine models the network only \
                     (run it with --engine flow)"
                )));
            }
            let i = flows.len();
            let class = classes.get(i).copied().unwrap_or(0);
            if class as usize >= crate::packet::N_QUEUES {
                return Err(PacketError::Input(format!(
                    "{at}: priority class {class} is not 0 to 7"
                )));
            }
            let key = FlowKey {
                coflow: c.id.0,
                index: k as u32,
            };
            let pinned = pinned_path(fabric, f.src, f.dst, paths.get(i).copied().flatten(), &at)?;
            let mut route = |a, b| {
                path.clear();
                let choice = pinned.unwrap_or_else(|| fabric.path_choice(a, b, key));
                fabric.path_into(a, b, choice, &mut path);
                let from = hops.len() as u32;
                hops.extend(path.iter().map(|l: &LinkId| l.0));
                (from, hops.len() as u32)
            };
            let fwd = route(f.src, f.dst);
            let rev = route(f.dst, f.src);
            if fwd.1 - fwd.0 > u8::MAX as u32 || rev.1 - rev.0 > u8::MAX as u32 {
                return Err(PacketError::Input(format!(
                    "{at}: path longer than 255 hops"
                )));
            }
            routes.push(Route { fwd, rev });
            flows.push(Flow {
                coflow: ci as u32,
                src: f.src.0,
                dst: f.dst.0,
                host_sent: 0,
                task: None,
                cc_deadline_ps: None,
                tafe_share: None,
                group: f.group,
                bytes: f.bytes.0,
                class,
                transport: cfg.transport,
                pacing: cfg.pacing,
                pacer: Pacer::default(),
                pace_at: None,
                nic_bytes: 0,
                echo_rate: f32::INFINITY,
                deadline: f.deadline,
                start: 0,
                finish: None,
                sender: None,
                receiver: None,
                established: false,
                rto_event_at: None,
                delack_at: None,
                delack_ts: 0,
                syn_tries: 0,
                ack_due: 0,
                stats: FlowPacketStats::default(),
                open_timeouts: vec![],
                open_fast: vec![],
                max_rx_ts: 0,
                last_ack_at: 0,
            });
        }
    }
    Ok((hops, flows, routes, first_flow))
}

/// What every sender of the run shares; each flow's transport and deadline
/// are set at its start.
fn sender_params(cfg: &PacketConfig) -> SenderParams {
    SenderParams {
        mss: cfg.mss(),
        init_cwnd: cfg.init_cwnd,
        min_rto_ps: ps(Time(cfg.min_rto.0)),
        initial_rto_ps: ps(Time(cfg.initial_rto.0)),
        max_rto_ps: ps(Time(cfg.max_rto.0)),
        transport: cfg.transport,
        g: cfg.dctcp_g,
        limited_transmit: cfg.limited_transmit,
        timestamps: cfg.timestamps,
        rto_reset_on_ack: cfg.rto_reset_on_ack,
        sack: cfg.sack,
        rto_undo: cfg.rto_undo,
        reorder_adaptive: cfg.reorder_adaptive,
        deadline_ps: None,
        late: cfg.d2tcp_late,
        mcp_ecn: cfg.mcp_ecn,
        paced: false,
        rate_based: false,
        probe_after: cfg.pfabric_probe_after,
    }
}

/// RCP's knobs for its ports.
fn rcp_params(cfg: &PacketConfig) -> RcpParams {
    RcpParams {
        alpha: cfg.rcp_alpha,
        beta: cfg.rcp_beta,
        interval_ps: cfg.rcp_interval.map(|d| ps(Time(d.0))),
        d0_ps: ps(Time(cfg.rcp_d0.0)),
    }
}

/// A flow's pinned path index, checked against the equal-cost paths from
/// `src` to `dst`.
pub(super) fn pinned_path(
    fabric: &Fabric,
    src: coflowkit_model::HostId,
    dst: coflowkit_model::HostId,
    choice: Option<u32>,
    at: &str,
) -> Result<Option<u32>, PacketError> {
    let Some(c) = choice else { return Ok(None) };
    let n = fabric.n_paths(src, dst);
    if c >= n {
        return Err(PacketError::Input(format!(
            "{at}: path {c} is out of range: host {} to host {} has {n} equal-cost path{} (0 to {})",
            src.0,
            dst.0,
            if n == 1 { "" } else { "s" },
            n - 1
        )));
    }
    Ok(Some(c))
}

/// The switch whose output port a link is (`None` for a host's NIC or CPU).
pub(super) fn switch_of(fabric: &Fabric, kind: LinkKind) -> Option<coflowkit_model::SwitchId> {
    match kind {
        LinkKind::Downlink(h) => Some(fabric.downlink_switch(h)),
        LinkKind::Switch { from, .. } => Some(from),
        LinkKind::Uplink(_) | LinkKind::Cpu(_) => None,
    }
}
