//! The event loop: packets through ports, end points reacting, and the
//! release rules of the workload (shared with the flow-level engine:
//! `coflowkit_sim::release`).
//!
//! Time is integer picoseconds (a 1500-byte frame takes 1.2 ns·1000 at 10
//! Gbit/s, exactly); events at one instant are handled in the order they
//! were scheduled (a sequence number breaks ties), so a run is a pure
//! function of its inputs.
//!
//! Each flow has its own transport (the configuration's by default) and
//! its own pacing ([`Pacing`], with its slot in a [`Pacer`]): a paced flow
//! sends one segment per slot, released by its `Pace` event; an unpaced
//! one takes the path it always took, at no extra cost. RCP's per-port
//! state and control-interval events exist only once an RCP flow starts
//! (`crate::rcp`).

use crate::config::{BufferKind, HostQueue, Limit, PacketConfig, QueueKind};
use crate::coordinator::{Coordinator, Decision};
use crate::host::{Channel, EngineView, Held, Hosts, Settings, CONTROL_PAYLOAD};
use crate::host::{CONTROL_BATCH_HEAD, CONTROL_BATCH_MAX};
use crate::pacing::{cwnd_rate, Pacer, Pacing};
use crate::packet::{Kind, Packet};
use crate::port::{Admit, Port, PortStats, SharedPool};
use crate::rcp::{RcpParams, RcpPort};
use crate::sack::{max_blocks, option_bytes, SackStore};
use crate::transport::pfabric::{base_rtt_ps, path_params};
use crate::transport::{Receiver, Segment, Sender, SenderParams, TransportKind};
use crate::{FlowPacketStats, PacketError, PacketResult, QueueSample};
use coflowkit_model::{Fabric, FlowKey, FlowKind, LinkId, LinkKind, Time, ValidWorkload};
use coflowkit_sched::host::{Control, HostFlow};
use coflowkit_sim::release::{self, Cascade, Releases};
use coflowkit_sim::{Outcome, Progress, SimResult};
use std::cmp::Ordering;
use std::collections::BinaryHeap;

mod baraat;
mod queued;
pub use baraat::{SpcRunStats, SPC_HEADER_BYTES};

const PS_PER_NS: u64 = 1000;

#[derive(Debug, Clone, Copy)]
enum Ev {
    /// A flow starts.
    Start(u32),
    /// A port finished serializing its packet.
    TxDone(u32),
    /// A packet reaches the far end of the link it crossed.
    Arrive(Packet),
    /// A flow's retransmission timer may be due.
    Rto(u32),
    /// A flow's delayed ACK is due.
    DelAck(u32),
    /// A SYN's connection timer.
    SynTimeout(u32),
    /// A paced flow's next slot may have come.
    Pace(u32),
    /// An RCP port's control interval ended.
    RcpTick(u32),
    /// Sample every port's queue.
    Sample,
    /// Coflow arrivals due.
    Arrival,
    /// A host's policy asked to be woken (`crate::host`).
    Wake(u32),
    /// A flow may send again (its policy moved its limit or its pacing).
    Kick(u32),
    /// The coordinator's tick (`crate::coordinator`).
    CoordTick,
    /// The oldest batch of the coordinator's decisions reaches the hosts.
    CoordApply,
    /// A Baraat port's interval ended (`baraat`).
    SpcTick(u32),
    /// A flow's next Baraat request may be due (`baraat`).
    SpcRequest(u32),
}

struct Entry {
    at: u64,
    seq: u64,
    ev: Ev,
}

impl PartialEq for Entry {
    fn eq(&self, o: &Self) -> bool {
        (self.at, self.seq) == (o.at, o.seq)
    }
}
impl Eq for Entry {}
impl PartialOrd for Entry {
    fn partial_cmp(&self, o: &Self) -> Option<Ordering> {
        Some(self.cmp(o))
    }
}
impl Ord for Entry {
    fn cmp(&self, o: &Self) -> Ordering {
        // A min-heap on (instant, sequence).
        (o.at, o.seq).cmp(&(self.at, self.seq))
    }
}

/// One flow's static facts and end points.
struct Flow {
    coflow: u32,
    /// Its hosts.
    src: u32,
    dst: u32,
    /// New bytes its sender has put on the wire (a host policy's count).
    host_sent: u64,
    /// Its task tag, from its host policy's marking (TAFE's switches read
    /// its bytes as the packet's header would carry them).
    task: Option<coflowkit_sched::host::TaskTag>,
    /// A host policy's D2TCP deadline (ps) and TAFE share.
    cc_deadline_ps: Option<u64>,
    tafe_share: Option<f64>,
    group: u32,
    bytes: u64,
    class: u8,
    /// Its transport (the configuration's unless set otherwise).
    transport: TransportKind,
    /// How its pacing rate is set (the configuration's unless set
    /// otherwise).
    pacing: Pacing,
    /// Its pacing slot.
    pacer: Pacer,
    /// When its pending `Pace` event is due, if one is.
    pace_at: Option<u64>,
    /// With `tsq`: bytes of its data in its host's NIC, queued or on the
    /// wire.
    nic_bytes: u64,
    /// RCP: the rate field its receiver echoes next.
    echo_rate: f32,
    /// Its deadline, relative to its start (D2TCP reads it).
    deadline: Option<coflowkit_model::Dur>,
    /// Forward and reverse paths: ranges into `Engine::hops`.
    fwd: (u32, u32),
    rev: (u32, u32),
    start: u64,
    finish: Option<u64>,
    sender: Option<Sender>,
    receiver: Option<Receiver>,
    established: bool,
    /// When the `Rto` event the flow waits for is due (an earlier timer
    /// gets an event of its own; a later one re-arms when this fires).
    rto_event_at: Option<u64>,
    delack_at: Option<u64>,
    /// The timestamp a delayed ACK echoes: its first unacknowledged
    /// segment's (RFC 7323 §4.3).
    delack_ts: u64,
    syn_tries: u32,
    stats: FlowPacketStats,
    /// Retransmission timeouts not yet told lost from spurious: the byte
    /// at `una` when the timer fired, and when (ps). A timeout leaves the
    /// list at the first arrival of a copy of that byte (`split_timeouts`).
    open_timeouts: Vec<(u64, u64)>,
    /// Fast retransmits not yet told spurious or not, as `open_timeouts`.
    open_fast: Vec<(u64, u64)>,
    /// The latest send time of its data packets that reached its receiver.
    max_rx_ts: u64,
    /// When its sender last heard an ACK (or, before, first sent).
    last_ack_at: u64,
}

/// The packet-level simulation of one workload on one fabric.
pub struct Engine<'a> {
    cfg: &'a PacketConfig,
    fabric: &'a Fabric,
    workload: &'a ValidWorkload,
    heap: BinaryHeap<Entry>,
    seq: u64,
    now: u64,
    ports: Vec<Port>,
    /// Each switch's shared buffer (`buffer=shared:B`), by switch id;
    /// empty with per-port buffers.
    pools: Vec<SharedPool>,
    /// The packet each busy port is serializing.
    on_wire: Vec<Option<Packet>>,
    hops: Vec<u32>,
    flows: Vec<Flow>,
    first_flow: Vec<u32>,
    rel: Releases,
    next_coflow: usize,
    done_coflows: usize,
    segs: Vec<Segment>,
    released: Vec<u32>,
    completing: Vec<u32>,
    trace: Vec<QueueSample>,
    events: u64,
    /// What every sender shares; each flow's transport and deadline are
    /// set at its start.
    params: SenderParams,
    /// RCP's state per port (indexed like `ports`); empty until an RCP
    /// flow starts.
    rcp: Vec<RcpPort>,
    rcp_params: RcpParams,
    /// The hosts' policies, with a scheduler (`crate::host`).
    hosts: Option<Box<Hosts>>,
    /// TAFE's marking by task bytes at switch ports (`crate::tafe`).
    tafe: Option<crate::tafe::TafeMarking>,
    /// TAFE: each task's bytes sent from all its hosts, by coflow (Algorithm
    /// 1's `length(T_i)`, as the switch where the task's flows meet adds
    /// them up); told to every host of the task (`share_task_bytes`).
    task_bytes: Vec<u64>,
    /// Baraat's Smart Priority Classes at every port (`baraat`).
    spc: Option<Box<baraat::Spc>>,
    /// The coordinator, with a scheduler that has no host policy.
    coord: Option<Box<Coordinator>>,
    /// Its decisions on their way to the hosts, oldest first.
    in_transit: std::collections::VecDeque<Vec<Decision>>,
    /// The SACK blocks of the ACKs in flight (`sack`).
    sacks: SackStore,
    /// Each flow's data packets queued at each hop of its path, by the
    /// bytes they carry (slots indexed like `hops`; `queued`).
    queued: queued::QueuedData,
}

fn ps(t: Time) -> u64 {
    t.0.saturating_mul(PS_PER_NS)
}

/// A flow's pinned path index, checked against the equal-cost paths from
/// `src` to `dst`.
fn pinned_path(
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
fn switch_of(fabric: &Fabric, kind: LinkKind) -> Option<coflowkit_model::SwitchId> {
    match kind {
        LinkKind::Downlink(h) => Some(fabric.downlink_switch(h)),
        LinkKind::Switch { from, .. } => Some(from),
        LinkKind::Uplink(_) | LinkKind::Cpu(_) => None,
    }
}

fn ns_ceil(ps: u64) -> Time {
    Time(ps.div_ceil(PS_PER_NS))
}

/// A pacing rate from an RCP rate field (an unstamped, infinite field
/// leaves the flow unpaced).
fn rate_of(field: f32) -> u64 {
    if field.is_finite() {
        (field as f64).round().max(1.0) as u64
    } else {
        0
    }
}

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
            if pfabric {
                let buffer = Some(cfg.pfabric_buffer);
                Port::new(rate, ps(Time(delay)), buffer, None, false).into_pfabric()
            } else {
                let mut port = Port::new(
                    rate,
                    ps(Time(delay)),
                    switch_buffer,
                    cfg.k_for(rate),
                    cfg.ecn_per_queue,
                );
                port.buffer_per_queue = cfg.buffer_per_queue;
                port.class_min_bps = cfg.class_min.map(|f| f * rate);
                port
            }
        };
        let mut ports = Vec::with_capacity(fabric.n_links());
        for (i, link) in fabric.links().iter().enumerate() {
            let rate = link.capacity.0;
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
                    let mut nic =
                        Port::new(rate, ps(Time(cfg.host_link_delay.0)), buffer, k, false);
                    nic.class_min_bps = cfg.class_min.map(|f| f * rate);
                    nic.one_fifo = cfg.host_fifo;
                    // pFabric's hosts serve their NIC by priority too
                    // (§4.1), within the NIC's own limit.
                    if pfabric {
                        nic.into_pfabric()
                    } else {
                        nic
                    }
                }
                LinkKind::Downlink(_) => switch_port(rate, cfg.host_link_delay.0),
                LinkKind::Switch { .. } => switch_port(rate, cfg.fabric_link_delay.0),
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
        let mut hops = vec![];
        let mut flows = vec![];
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
                if class as usize >= crate::port::N_QUEUES {
                    return Err(PacketError::Input(format!(
                        "{at}: priority class {class} is not 0 to 7"
                    )));
                }
                let key = FlowKey {
                    coflow: c.id.0,
                    index: k as u32,
                };
                let pinned =
                    pinned_path(fabric, f.src, f.dst, paths.get(i).copied().flatten(), &at)?;
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
                    fwd,
                    rev,
                    start: 0,
                    finish: None,
                    sender: None,
                    receiver: None,
                    established: false,
                    rto_event_at: None,
                    delack_at: None,
                    delack_ts: 0,
                    syn_tries: 0,
                    stats: FlowPacketStats::default(),
                    open_timeouts: vec![],
                    open_fast: vec![],
                    max_rx_ts: 0,
                    last_ack_at: 0,
                });
            }
        }
        let n_ports = ports.len();
        // Only the flows' paths carry data (control channels join later).
        let n_slots = hops.len();
        let coflows = workload.coflows();
        Ok(Engine {
            cfg,
            fabric,
            workload,
            heap: BinaryHeap::new(),
            seq: 0,
            now: 0,
            ports,
            pools,
            on_wire: vec![None; n_ports],
            hops,
            flows,
            first_flow,
            rel: Releases::new(coflows),
            next_coflow: 0,
            done_coflows: 0,
            segs: vec![],
            released: vec![],
            completing: vec![],
            trace: vec![],
            events: 0,
            params: SenderParams {
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
            },
            hosts: None,
            tafe: None,
            task_bytes: vec![],
            spc: None,
            coord: None,
            in_transit: Default::default(),
            sacks: SackStore::default(),
            queued: queued::QueuedData::new(n_slots),
            rcp: vec![],
            rcp_params: RcpParams {
                alpha: cfg.rcp_alpha,
                beta: cfg.rcp_beta,
                interval_ps: cfg.rcp_interval.map(|d| ps(Time(d.0))),
                d0_ps: ps(Time(cfg.rcp_d0.0)),
            },
        })
    }

    fn push(&mut self, at: u64, ev: Ev) {
        self.seq += 1;
        self.heap.push(Entry {
            at,
            seq: self.seq,
            ev,
        });
    }

    /// Runs to the end; `progress` hears now and then how far it is.
    pub fn run(mut self, progress: &mut dyn FnMut(Progress)) -> Result<PacketResult, PacketError> {
        let n_coflows = self.workload.coflows().len();
        if let Some(c) = self.workload.coflows().first() {
            self.push(ps(c.arrival), Ev::Arrival);
            if self.coord.is_some() {
                self.push(ps(c.arrival), Ev::CoordTick);
            }
        }
        if self.cfg.queue_trace.is_some() {
            self.push(0, Ev::Sample);
        }
        while let Some(e) = self.heap.pop() {
            if self.done_coflows == n_coflows {
                break;
            }
            self.now = e.at;
            self.events += 1;
            match e.ev {
                Ev::Arrival => self.arrivals(),
                Ev::Start(f) => self.start(f),
                Ev::TxDone(p) => self.tx_done(p),
                Ev::Arrive(pkt) => self.arrive(pkt),
                Ev::Rto(f) => self.rto(f),
                Ev::DelAck(f) => self.delack(f),
                Ev::SynTimeout(f) => self.syn_timeout(f),
                Ev::Pace(f) => self.pace(f),
                Ev::RcpTick(p) => self.rcp_tick(p),
                Ev::Sample => self.sample(),
                Ev::Wake(h) => self.wake(h),
                Ev::Kick(f) => self.kick(f),
                Ev::CoordTick => self.coord_tick(),
                Ev::CoordApply => self.coord_apply(),
                Ev::SpcTick(p) => self.spc_tick(p),
                Ev::SpcRequest(f) => self.spc_due(f),
            }
            if self.events & 0xffff == 0 {
                progress(Progress {
                    now: ns_ceil(self.now),
                    coflows_done: self.done_coflows,
                    n_coflows,
                });
            }
        }
        if self.done_coflows < n_coflows {
            let left = self.flows.iter().filter(|f| f.finish.is_none()).count();
            return Err(PacketError::Stalled {
                at: ns_ceil(self.now),
                n_flows: left,
            });
        }
        progress(Progress {
            now: ns_ceil(self.now),
            coflows_done: self.done_coflows,
            n_coflows,
        });
        Ok(self.finish_result())
    }

    fn finish_result(self) -> PacketResult {
        let spc = self.spc_stats();
        let flow_start: Vec<Time> = self.flows.iter().map(|f| ns_ceil(f.start)).collect();
        let flow_finish: Vec<Time> = self
            .flows
            .iter()
            .map(|f| f.finish.map_or(Time::NEVER, ns_ceil))
            .collect();
        let bottleneck: Vec<f64> = self
            .flows
            .iter()
            .map(|f| {
                self.hops[f.fwd.0 as usize..f.fwd.1 as usize]
                    .iter()
                    .map(|&l| self.ports[l as usize].rate)
                    .fold(f64::INFINITY, f64::min)
            })
            .collect();
        let sim = SimResult::collect(Outcome {
            scheduler: self.cfg.transport.name(),
            workload: self.workload,
            release: self.rel.releases(),
            completion: self.rel.completions(),
            flow_start: &|i| flow_start[i],
            flow_finish: &flow_finish,
            flow_dropped: &[],
            flow_bottleneck: &|i| bottleneck[i],
            per_flow: true,
            link_util: None,
            n_events: self.events,
        });
        let ports: Vec<(String, PortStats)> = self
            .ports
            .iter()
            .enumerate()
            .filter(|(i, _)| !matches!(self.fabric.links()[*i].kind, LinkKind::Cpu(_)))
            .map(|(i, p)| (self.fabric.link_name(LinkId(i as u32)), p.stats))
            .collect();
        let packets = ports.iter().map(|(_, s)| s.tx_packets).sum();
        PacketResult {
            sim,
            flow_stats: self.flows.iter().map(|f| f.stats).collect(),
            ports,
            queue_trace: self.trace,
            packets,
            events: self.events,
            hosts: self.hosts.as_ref().map(|h| h.stats),
            negotiation: self
                .hosts
                .as_ref()
                .and_then(|h| crate::host::negotiation(&h.policies)),
            coordinator: self.coord.as_ref().map(|c| c.stats),
            spc,
        }
    }

    // ---- the workload's release rules ----

    fn arrivals(&mut self) {
        let coflows = self.workload.coflows();
        while self.next_coflow < coflows.len() && ps(coflows[self.next_coflow].arrival) <= self.now
        {
            let c = self.next_coflow;
            self.next_coflow += 1;
            if self.rel.arrive(c as u32, &coflows[c], self.first_flow[c]) {
                self.release_coflow(c as u32);
            }
        }
        if let Some(c) = coflows.get(self.next_coflow) {
            self.push(ps(c.arrival), Ev::Arrival);
        }
    }

    fn release_coflow(&mut self, c: u32) {
        if let Some(k) = self.coord.as_mut() {
            k.arrived.push(c);
        }
        let now = ns_ceil(self.now);
        self.rel.mark_released(c, now);
        let spec = &self.workload.coflows()[c as usize];
        let first = self.first_flow[c as usize];
        let empty = spec.flows.is_empty();
        for (i, f) in spec.flows.iter().enumerate() {
            if f.after.is_none() {
                self.push(self.now + ps(Time(f.delay.0)), Ev::Start(first + i as u32));
            }
        }
        if empty {
            self.complete_cascade(c);
        }
    }

    fn flow_done(&mut self, f: u32) {
        if self.hosts.is_some() && self.flows[f as usize].bytes > 0 {
            let src = self.flows[f as usize].src;
            let now = self.now_ns();
            self.host_call(src, |p, out| p.finish(now, f as u64, out));
        }
        if let (Some(k), true) = (self.coord.as_mut(), self.flows[f as usize].bytes > 0) {
            k.finished.push(f);
        }
        let fl = &mut self.flows[f as usize];
        fl.finish = Some(self.now);
        let (c, group) = (fl.coflow, fl.group);
        self.queued.release(fl.fwd.0, fl.fwd.1);
        let mut released = std::mem::take(&mut self.released);
        let all = self.rel.flow_done(c, group, &mut released);
        for &w in &released {
            let k = (w - self.first_flow[c as usize]) as usize;
            let delay = self.workload.coflows()[c as usize].flows[k].delay;
            self.push(self.now + ps(Time(delay.0)), Ev::Start(w));
        }
        released.clear();
        self.released = released;
        if all {
            self.complete_cascade(c);
        }
    }

    fn complete_cascade(&mut self, c: u32) {
        let now = ns_ceil(self.now);
        release::complete_cascade(self, c, now);
    }

    // ---- end points ----

    fn start(&mut self, f: u32) {
        let now = self.now;
        if let Some(k) = self.coord.as_mut() {
            k.started.push(f);
        }
        let fl = &mut self.flows[f as usize];
        fl.start = now;
        if fl.bytes == 0 {
            self.flow_done(f);
            return;
        }
        fl.receiver = Some(if self.cfg.sack {
            Receiver::with_sack(fl.bytes)
        } else {
            Receiver::new(fl.bytes)
        });
        if self.hosts.is_some() {
            self.host_start(f);
        }
        // Baraat's flows send at their reserved rate, without a window.
        let spc = self.spc.is_some() && self.spc_asks(f);
        let fl = &mut self.flows[f as usize];
        let rcp = fl.transport.rules().rate_based;
        // TCP Small Queues: the engine releases its segments while its
        // NIC holds less than the limit, as it does a paced flow's.
        let tsq = self.cfg.tsq.is_some() && fl.transport.rules().small_queues;
        let paced = rcp || spc || tsq || fl.pacing != Pacing::Off;
        let params = SenderParams {
            deadline_ps: fl.transport.deadline_ps(fl.cc_deadline_ps, || {
                fl.deadline.map(|d| now + ps(Time(d.0)))
            }),
            paced,
            rate_based: rcp || spc,
            ..self.sender_params(f)
        };
        let fl = &mut self.flows[f as usize];
        let mut sender = Sender::new(params, fl.bytes);
        if let Some(h) = &self.hosts {
            let policy = &h.policies[fl.src as usize];
            sender.limit_end = policy.limit(f as u64).max(1);
            sender.set_cc(params.transport, params.deadline_ps, fl.tafe_share);
        }
        fl.sender = Some(sender);
        fl.pacer = Pacer::new(match fl.pacing {
            Pacing::Rate(r) => r,
            Pacing::Off | Pacing::Cwnd => 0,
        });
        if rcp && self.rcp.is_empty() {
            self.rcp = self
                .ports
                .iter()
                .map(|p| RcpPort::new(p.rate, &self.rcp_params))
                .collect();
        }
        if spc {
            self.spc_start(f);
        }
        // RCP learns its first rate from the SYN (`crate::rcp`).
        if self.cfg.handshake.is_some() || rcp {
            self.send_syn(f);
        } else {
            let fl = &mut self.flows[f as usize];
            fl.established = true;
            fl.last_ack_at = self.now;
            self.send_data(f);
        }
    }

    /// The run's sender parameters for flow `f`'s own transport; a
    /// transport that takes its window and timeout from its path (pFabric)
    /// gets its path's round trip and bottleneck.
    fn sender_params(&self, f: u32) -> SenderParams {
        let fl = &self.flows[f as usize];
        let mut p = SenderParams {
            transport: fl.transport,
            ..self.params
        };
        if fl.transport.rules().window_from_path {
            let hops = |(a, b): (u32, u32)| {
                self.hops[a as usize..b as usize]
                    .iter()
                    .map(|&l| &self.ports[l as usize])
            };
            let rtt = base_rtt_ps(
                hops(fl.fwd),
                hops(fl.rev),
                self.cfg.mtu,
                self.cfg.header_bytes,
            );
            let rate = hops(fl.fwd).map(|p| p.rate).fold(f64::INFINITY, f64::min);
            path_params(&mut p, rtt, rate, self.cfg);
        }
        p
    }

    fn send_syn(&mut self, f: u32) {
        let fl = &mut self.flows[f as usize];
        fl.syn_tries += 1;
        if fl.syn_tries > 1 {
            fl.stats.timeouts += 1;
        }
        let first = self.cfg.handshake.unwrap_or(self.cfg.initial_rto).0;
        let timeout = (first << (fl.syn_tries - 1).min(16)).min(first.max(self.cfg.max_rto.0));
        let pkt = self.packet(f, Kind::Syn, 0, 0);
        self.send(pkt);
        self.push(self.now + ps(Time(timeout)), Ev::SynTimeout(f));
    }

    fn syn_timeout(&mut self, f: u32) {
        if !self.flows[f as usize].established {
            self.send_syn(f);
        }
    }

    fn packet(&self, f: u32, kind: Kind, seq: u64, len: u32) -> Packet {
        let fl = &self.flows[f as usize];
        let rtt_ns = match (fl.transport.rules().rate_based, &fl.sender) {
            (true, Some(s)) => s
                .srtt_ps()
                .map_or(0, |r| (r / PS_PER_NS as f64).min(u32::MAX as f64) as u32),
            _ => 0,
        };
        Packet {
            flow: f,
            seq,
            len,
            wire: len + self.cfg.header_bytes,
            kind,
            hop: 0,
            class: fl.class,
            ect: kind == Kind::Data
                && SenderParams {
                    transport: fl.transport,
                    ..self.params
                }
                .ecn_capable(),
            ce: false,
            ece: false,
            ts: self.now,
            rate: f32::INFINITY,
            rtt_ns,
            // pFabric §3: the remaining size; control packets first.
            prio: match (kind, &fl.sender) {
                (Kind::Data, Some(s)) => s.remaining().min(u32::MAX as u64) as u32,
                _ => 0,
            },
            spc: false,
        }
    }

    fn send_data(&mut self, f: u32) {
        if self.flows[f as usize]
            .sender
            .as_ref()
            .is_some_and(|s| s.is_paced())
        {
            self.pump(f);
            return;
        }
        let mut segs = std::mem::take(&mut self.segs);
        segs.clear();
        let now = self.now;
        let s = self.flows[f as usize].sender.as_mut().expect("a sender");
        s.send(now, &mut segs);
        self.transmit(f, &segs);
        self.segs = segs;
    }

    fn transmit(&mut self, f: u32, segs: &[Segment]) {
        let mut kick = false;
        for s in segs {
            if s.retransmit && self.cfg.host_rtx_skip && self.in_host_queue(f, s.seq) {
                // Its earlier copy is still in the NIC: Linux sends nothing.
                continue;
            }
            if s.retransmit {
                self.flows[f as usize].stats.retransmits += 1;
            }
            let mut pkt = self.packet(f, Kind::Data, s.seq, s.len);
            let fl = &mut self.flows[f as usize];
            fl.stats.bytes_by_class[pkt.class.min(7) as usize] += s.len as u64;
            if self.spc.is_some() {
                self.spc_carry(f, &mut pkt);
            }
            self.send(pkt);
            if self.hosts.is_some() {
                kick |= self.host_sent(f, s);
            }
        }
        if self.spc.is_some() && self.flows[f as usize].host_sent >= self.flows[f as usize].bytes {
            self.spc_sender_done(f);
        }
        self.arm_rto(f);
        if kick {
            self.push(self.now, Ev::Kick(f));
        }
    }

    /// Whether a packet of flow `f` carrying byte `seq` still waits in its
    /// host's NIC queue (the first port of its path).
    fn in_host_queue(&self, f: u32, seq: u64) -> bool {
        let (from, to) = self.flows[f as usize].fwd;
        let held = from < to && self.queued.holds(from, seq);
        debug_assert_eq!(
            held,
            from < to && self.ports[self.hops[from as usize] as usize].holds(f, seq),
            "flow {f}: the queued-data index against the NIC's scan"
        );
        held
    }

    /// A paced flow sends what its slots and window allow now, and asks
    /// for a `Pace` event at its next slot.
    fn pump(&mut self, f: u32) {
        if self.spc.is_some() && self.spc_holds(f) {
            return;
        }
        let now = self.now;
        let header = self.cfg.header_bytes;
        let tsq = self.cfg.tsq;
        let mut segs = std::mem::take(&mut self.segs);
        loop {
            let fl = &mut self.flows[f as usize];
            if tsq.is_some_and(|limit| fl.nic_bytes >= limit) {
                // Its NIC is full for it: the next packet to leave it
                // pumps again (`tx_done`).
                break;
            }
            if !fl.pacer.ready(now) {
                let at = fl.pacer.next_ps;
                if fl.pace_at != Some(at) {
                    fl.pace_at = Some(at);
                    self.push(at, Ev::Pace(f));
                }
                break;
            }
            let Some(s) = fl.sender.as_mut() else { break };
            segs.clear();
            s.send_up_to(now, 1, &mut segs);
            let Some(seg) = segs.first() else { break };
            fl.pacer.sent(now, seg.len + header);
            self.transmit(f, &segs);
        }
        self.segs = segs;
    }

    fn pace(&mut self, f: u32) {
        let fl = &mut self.flows[f as usize];
        if fl.pace_at == Some(self.now) {
            fl.pace_at = None;
            self.pump(f);
        }
    }

    /// A paced flow's rate after an ACK echoing `field`: RCP's from the
    /// network, Linux's from the window, else unchanged.
    fn repace(&mut self, f: u32, field: f32) {
        let fl = &mut self.flows[f as usize];
        let rate = match (fl.transport.rules().rate_based, fl.pacing, &fl.sender) {
            (true, _, _) => Some(rate_of(field)),
            (_, Pacing::Cwnd, Some(s)) => cwnd_rate(s.cwnd, s.ssthresh, s.srtt_ps()),
            _ => None,
        };
        if let Some(r) = rate {
            fl.pacer.set_rate(r);
        }
    }

    /// Makes sure an `Rto` event is due no later than the sender's timer
    /// (RFC 6298 §5.3: a restarted timer expires RTO after the restart,
    /// also when that is earlier than the event already waiting, as after
    /// a backed-off RTO falls back).
    fn arm_rto(&mut self, f: u32) {
        let fl = &mut self.flows[f as usize];
        let Some(at) = fl.sender.as_ref().and_then(|s| s.rto_at) else {
            return;
        };
        if !matches!(fl.rto_event_at, Some(due) if due <= at) {
            fl.rto_event_at = Some(at);
            self.push(at, Ev::Rto(f));
        }
    }

    fn rto(&mut self, f: u32) {
        let now = self.now;
        let fl = &mut self.flows[f as usize];
        if fl.rto_event_at != Some(now) {
            // Superseded by an earlier event, which has handled the timer.
            return;
        }
        fl.rto_event_at = None;
        let Some(s) = fl.sender.as_mut() else { return };
        match s.rto_at {
            None => {}
            Some(at) if at > now => {
                fl.rto_event_at = Some(at);
                self.push(at, Ev::Rto(f));
            }
            Some(at) => {
                debug_assert_eq!(at, now, "flow {f}: the retransmission timer fired late");
                fl.stats.timeouts += 1;
                let una = s.una;
                let (from, to) = fl.fwd;
                let at = (from..to).position(|slot| self.queued.holds(slot, una));
                debug_assert_eq!(
                    at,
                    self.hops[from as usize..to as usize]
                        .iter()
                        .position(|&l| self.ports[l as usize].holds(f, una)),
                    "flow {f}: the queued-data index against the ports' scan"
                );
                match at {
                    Some(0) => fl.stats.timeouts_host_queued += 1,
                    Some(_) => fl.stats.timeouts_switch_queued += 1,
                    None => {}
                }
                if fl.receiver.as_ref().is_some_and(|r| r.has(una)) {
                    // The segment had arrived; its ACK was on its way.
                    fl.stats.timeouts_spurious += 1;
                } else {
                    fl.open_timeouts.push((una, now));
                }
                let mut segs = std::mem::take(&mut self.segs);
                segs.clear();
                s.on_timeout(now, &mut segs);
                let paced = s.is_paced();
                self.transmit(f, &segs);
                self.segs = segs;
                if paced {
                    self.pump(f);
                }
            }
        }
    }

    fn delack(&mut self, f: u32) {
        let fl = &mut self.flows[f as usize];
        if fl.delack_at == Some(self.now) {
            let ts = fl.delack_ts;
            let ce = fl.receiver.as_ref().is_some_and(|r| r.last_ce);
            self.send_ack(f, ce, ts, false);
        }
    }

    /// The receiver acknowledges what it has, echoing `ece` and the
    /// timestamp `ts`, and with `spc` the answer to the Baraat request the
    /// data packet it acknowledges carried.
    fn send_ack(&mut self, f: u32, ece: bool, ts: u64, spc: bool) {
        let fl = &mut self.flows[f as usize];
        let r = fl.receiver.as_mut().expect("a receiver");
        r.pending = 0;
        let nxt = r.nxt;
        let blocks = self
            .cfg
            .sack
            .then(|| r.sack_blocks(max_blocks(self.cfg.timestamps)))
            .filter(|b| b.n > 0);
        fl.delack_at = None;
        let echo = fl.echo_rate;
        let mut pkt = self.packet(f, Kind::Ack, nxt, 0);
        pkt.ece = ece;
        pkt.ts = ts;
        pkt.rate = echo;
        if let Some(b) = blocks {
            // RFC 2018 §3: the option rides on the ACK's bytes.
            pkt.wire += option_bytes(b.n as usize);
            pkt.len = self.sacks.put(b);
        }
        if spc {
            pkt.spc = true;
            pkt.wire += self.spc_header_wire();
        }
        self.send(pkt);
    }

    /// A packet reached the end of its path.
    fn deliver(&mut self, pkt: Packet) {
        let f = pkt.flow;
        match pkt.kind {
            Kind::Control => self.receive_control(&pkt),
            Kind::Syn => {
                let reply = Packet {
                    ts: pkt.ts,
                    rate: pkt.rate,
                    ..self.packet(f, Kind::SynAck, 0, 0)
                };
                self.send(reply);
            }
            Kind::SynAck => {
                let fl = &mut self.flows[f as usize];
                if !fl.established {
                    fl.established = true;
                    fl.last_ack_at = self.now;
                    if fl.transport.rules().rate_based {
                        fl.pacer.set_rate(rate_of(pkt.rate));
                    }
                    self.send_data(f);
                }
            }
            Kind::Data => self.on_data(pkt),
            Kind::Request => self.spc_echo(f),
            Kind::Echo => self.spc_feedback(f),
            Kind::Ack => {
                self.on_ack(&pkt);
                if pkt.spc {
                    self.spc_feedback(f);
                }
            }
        }
    }

    fn on_ack(&mut self, pkt: &Packet) {
        let slot = pkt.sack_slot();
        let blocks = (slot != 0).then(|| self.sacks.take(slot));
        let (f, now) = (pkt.flow, self.now);
        let fl = &mut self.flows[f as usize];
        let Some(s) = fl.sender.as_mut() else { return };
        if s.done() {
            return;
        }
        if s.una < s.max_sent && now - fl.last_ack_at > crate::STALL_PS {
            fl.stats.stalled_ps += now - fl.last_ack_at;
        }
        fl.last_ack_at = now;
        let mut segs = std::mem::take(&mut self.segs);
        segs.clear();
        let sacked = blocks.as_ref().map_or(&[][..], |b| b.as_slice());
        let fast = s.fast_retransmits;
        s.on_ack_sacks(now, pkt.seq, pkt.ece, pkt.ts, sacked, &mut segs);
        if s.fast_retransmits > fast {
            fl.stats.fast_retransmits += 1;
            let una = s.una;
            if fl.receiver.as_ref().is_some_and(|r| r.has(una)) {
                fl.stats.fast_retransmits_spurious += 1;
            } else {
                fl.open_fast.push((una, now));
            }
        }
        if s.done() {
            s.rto_at = None;
        }
        let paced = s.is_paced();
        self.transmit(f, &segs);
        self.segs = segs;
        if paced {
            self.repace(f, pkt.rate);
            self.pump(f);
        }
    }

    fn on_data(&mut self, pkt: Packet) {
        let f = pkt.flow;
        let mss = self.params.mss;
        let delack = self.cfg.delayed_ack;
        let fl = &mut self.flows[f as usize];
        let Some(r) = fl.receiver.as_mut() else {
            return;
        };
        fl.echo_rate = pkt.rate;
        if !fl.open_timeouts.is_empty() {
            split_timeouts(&mut fl.open_timeouts, &mut fl.stats, &pkt);
        }
        if !fl.open_fast.is_empty() {
            let (from, to) = (pkt.seq, pkt.seq + pkt.len as u64);
            let st = &mut fl.stats;
            fl.open_fast.retain(|&(byte, at)| {
                if byte < from || byte >= to {
                    return true;
                }
                st.fast_retransmits_spurious += u64::from(pkt.ts < at);
                false
            });
        }
        if pkt.ts < fl.max_rx_ts {
            fl.stats.reordered += 1;
        }
        fl.max_rx_ts = fl.max_rx_ts.max(pkt.ts);
        let was_complete = r.complete();
        let (in_order, ce_changed) = r.on_data(pkt.seq, pkt.len, pkt.ce);
        // A short segment counts as two: it is acknowledged at once.
        r.pending += if pkt.len >= mss { 1 } else { 2 };
        let complete = r.complete();
        // A Baraat request is answered at once.
        let ack_now = match delack {
            None => true,
            Some(_) => !in_order || ce_changed || r.pending >= 2 || complete || pkt.spc,
        };
        if ack_now {
            // The ACK echoes this packet's timestamp and CE mark.
            self.send_ack(f, pkt.ce, pkt.ts, pkt.spc);
        } else if fl.delack_at.is_none() {
            let at = self.now + ps(Time(delack.expect("delayed ACKs").0));
            fl.delack_at = Some(at);
            fl.delack_ts = pkt.ts;
            self.push(at, Ev::DelAck(f));
        }
        if complete && !was_complete {
            self.flow_done(f);
        }
    }

    // ---- the network ----

    fn path(&self, pkt: &Packet) -> &[u32] {
        if pkt.kind == Kind::Control {
            let c = &self.hosts.as_ref().expect("hosts").channels[pkt.flow as usize];
            return &self.hops[c.hops.0 as usize..c.hops.1 as usize];
        }
        let fl = &self.flows[pkt.flow as usize];
        let (a, b) = if pkt.reverse() { fl.rev } else { fl.fwd };
        &self.hops[a as usize..b as usize]
    }

    /// A host puts `pkt` on its NIC.
    fn send(&mut self, mut pkt: Packet) {
        pkt.hop = 0;
        self.enqueue(pkt);
    }

    fn enqueue(&mut self, mut pkt: Packet) {
        let port = self.path(&pkt)[pkt.hop as usize];
        if !self.rcp.is_empty() {
            self.rcp_arrival(port, &mut pkt);
        }
        if self.tafe.is_some() && pkt.kind == Kind::Data {
            self.tafe_mark(port, &mut pkt);
        }
        if self.spc.is_some() {
            self.spc_arrival(port, &mut pkt);
        }
        let p = &mut self.ports[port as usize];
        let admit = match p.pool {
            Some(k) => p.admit_shared(pkt, &mut self.pools[k as usize]),
            None => p.admit(pkt),
        };
        // Packets a pFabric port dropped to make room count for their flows.
        if !p.evicted.is_empty() {
            let mut evicted = std::mem::take(&mut p.evicted);
            for v in evicted.drain(..) {
                self.dropped(&v);
            }
            self.ports[port as usize].evicted = evicted;
        }
        match admit {
            Admit::Dropped => {
                self.dropped(&pkt);
                return;
            }
            Admit::Marked if pkt.kind != Kind::Control => {
                self.flows[pkt.flow as usize].stats.ecn_marks += 1
            }
            Admit::Marked | Admit::Queued => {}
        }
        if pkt.kind == Kind::Data && !self.ports[port as usize].is_pfabric() {
            let slot = self.flows[pkt.flow as usize].fwd.0 + pkt.hop as u32;
            self.queued.joined(slot, pkt.seq, pkt.len);
        }
        if pkt.hop == 0 && pkt.kind == Kind::Data && self.cfg.tsq.is_some() {
            self.flows[pkt.flow as usize].nic_bytes += pkt.wire as u64;
        }
        let p = &self.ports[port as usize];
        if !p.busy {
            self.start_tx(port);
        }
    }

    /// TAFE's marking by task bytes at a switch port (`crate::tafe`): CE on
    /// a packet whose task has sent more than its queue's threshold. The
    /// task bytes are its flow's tag now (the host's latest count), not a
    /// copy taken when it left: a packet carries no tag of its own yet.
    fn tafe_mark(&mut self, port: u32, pkt: &mut Packet) {
        if switch_of(self.fabric, self.fabric.links()[port as usize].kind).is_none() {
            return;
        }
        let fl = &mut self.flows[pkt.flow as usize];
        let (Some(m), Some(tag)) = (&self.tafe, fl.task) else {
            return;
        };
        if !pkt.ce && m.mark(pkt, tag.bytes) {
            fl.stats.ecn_marks += 1;
            self.ports[port as usize].stats.marks += 1;
        }
    }

    /// A queue dropped `pkt`: its flow counts it, or its control message
    /// is lost.
    fn dropped(&mut self, pkt: &Packet) {
        if pkt.kind == Kind::Control {
            let h = self.hosts.as_mut().expect("hosts");
            let n = h.take(pkt.seq as u32).map_or(1, |m| m.len());
            h.stats.control_dropped += n as u64;
        } else if matches!(pkt.kind, Kind::Request | Kind::Echo) {
            self.spc_lost(pkt.flow);
        } else {
            self.flows[pkt.flow as usize].stats.drops += 1;
            self.sacks.take(pkt.sack_slot());
            if pkt.spc {
                self.spc_lost(pkt.flow);
            }
        }
    }

    fn start_tx(&mut self, port: u32) {
        let p = &mut self.ports[port as usize];
        if let Some(pkt) = p.pop_at(self.now) {
            if let Some(k) = p.pool {
                self.pools[k as usize].give(pkt.wire as u64);
            }
            if pkt.kind == Kind::Data && !p.is_pfabric() {
                let slot = self.flows[pkt.flow as usize].fwd.0 + pkt.hop as u32;
                self.queued.left(slot, pkt.seq, pkt.len);
            }
            p.busy = true;
            let at = self.now + p.tx_ps(pkt.wire);
            self.on_wire[port as usize] = Some(pkt);
            self.push(at, Ev::TxDone(port));
        } else {
            p.busy = false;
        }
    }

    fn tx_done(&mut self, port: u32) {
        let mut pkt = self.on_wire[port as usize]
            .take()
            .expect("a busy port has a packet");
        let left_nic = pkt.hop == 0 && pkt.kind == Kind::Data && self.cfg.tsq.is_some();
        pkt.hop += 1;
        let at = self.now + self.ports[port as usize].delay_ps;
        self.push(at, Ev::Arrive(pkt));
        self.start_tx(port);
        if left_nic {
            // TSQ (Linux's `tcp_tsq_handler`): room in the NIC lets the
            // flow send again.
            self.flows[pkt.flow as usize].nic_bytes -= pkt.wire as u64;
            self.pump(pkt.flow);
        }
    }

    fn arrive(&mut self, pkt: Packet) {
        if pkt.hop as usize == self.path(&pkt).len() {
            self.deliver(pkt);
        } else {
            self.enqueue(pkt);
        }
    }

    /// RCP at a port: count the arrival, average the RTT it carries, stamp
    /// an RCP packet's rate field on its way out, and run the control
    /// interval while RCP packets come.
    fn rcp_arrival(&mut self, port: u32, pkt: &mut Packet) {
        let rcp_flow =
            pkt.kind != Kind::Control && self.flows[pkt.flow as usize].transport.rules().rate_based;
        let now = self.now;
        let ctl = &mut self.rcp[port as usize];
        if rcp_flow && !ctl.running {
            ctl.running = true;
            ctl.bytes_in = 0;
            ctl.last_ps = now;
            let at = now + ctl.interval_ps(&self.rcp_params);
            self.push(at, Ev::RcpTick(port));
        }
        let ctl = &mut self.rcp[port as usize];
        let rtt_ps = pkt.rtt_ns as u64 * PS_PER_NS;
        let queued = self.ports[port as usize].queued_bytes();
        let stamped = ctl.on_arrival(pkt.wire, queued, rtt_ps, pkt.rate);
        if rcp_flow && !pkt.reverse() {
            pkt.rate = stamped;
        }
    }

    fn rcp_tick(&mut self, port: u32) {
        let queued = self.ports[port as usize].queued_bytes();
        let ctl = &mut self.rcp[port as usize];
        let t = self.now - ctl.last_ps;
        ctl.last_ps = self.now;
        if ctl.update(t, queued, &self.rcp_params) {
            ctl.running = false;
        } else {
            let at = self.now + ctl.interval_ps(&self.rcp_params);
            self.push(at, Ev::RcpTick(port));
        }
    }

    fn sample(&mut self) {
        let t = ns_ceil(self.now);
        for (i, p) in self.ports.iter().enumerate() {
            if matches!(self.fabric.links()[i].kind, LinkKind::Cpu(_)) {
                continue;
            }
            self.trace.push(QueueSample {
                port: i as u32,
                at: t,
                bytes: p.queued_bytes(),
            });
        }
        // Only while something else is pending: samples alone never keep
        // a stalled run going.
        if let (Some(q), false) = (self.cfg.queue_trace, self.heap.is_empty()) {
            self.push(self.now + ps(Time(q.0)), Ev::Sample);
        }
    }
}

/// A packet's place in a TAFE port's class: its flow's index (task release
/// order, then the task's own), control packets before every flow.
fn tafe_order(p: &Packet) -> u32 {
    match p.kind {
        Kind::Data | Kind::Ack | Kind::Syn | Kind::SynAck => p.flow.saturating_add(1),
        _ => 0,
    }
}

/// Tells the open retransmission timeouts of a flow whose data packet
/// `pkt` arrived at its receiver lost from spurious: a timeout for a byte
/// `pkt` carries is spurious if `pkt` left the sender before the timer
/// fired (the segment was only waiting, in a queue, longer than the RTO),
/// lost if it left at or after (the first copy to arrive is a
/// retransmission, so every earlier copy was dropped: a flow's packets
/// keep their order on its path). Timeouts whose byte never arrives stay
/// open (a flow the run did not finish), in neither count.
pub(crate) fn split_timeouts(open: &mut Vec<(u64, u64)>, st: &mut FlowPacketStats, pkt: &Packet) {
    let (from, to) = (pkt.seq, pkt.seq + pkt.len as u64);
    open.retain(|&(byte, fired)| {
        if byte < from || byte >= to {
            return true;
        }
        if pkt.ts < fired {
            st.timeouts_spurious += 1;
        } else {
            st.timeouts_lost += 1;
        }
        false
    });
}

// ---- host policies (`crate::host`) ----
impl Engine<'_> {
    /// Marks by task bytes at every switch port (TAFE), if `m` is given.
    pub fn with_tafe(mut self, m: Option<crate::tafe::TafeMarking>) -> Self {
        self.task_bytes = match m {
            Some(_) => vec![0; self.workload.coflows().len()],
            None => vec![],
        };
        if m.is_some() && self.cfg.tafe_one_by_one {
            // TAFE: flows first come, first served inside a class, in task
            // release order (flow indices follow it); control packets first.
            // `tafe_service=fifo` keeps FIFO packet queues instead.
            for p in &mut self.ports {
                p.set_task_fifo(tafe_order);
            }
        }
        self.tafe = m;
        self
    }

    /// Runs `policies` (one per host, in host order) on the hosts.
    pub fn with_hosts(mut self, policies: Vec<Box<dyn coflowkit_sched::host::HostPolicy>>) -> Self {
        self.hosts = Some(Box::new(Hosts::new(policies)));
        self
    }

    fn now_ns(&self) -> Time {
        Time(self.now / PS_PER_NS)
    }

    /// Calls host `h`'s policy with `call`, then applies what it did.
    fn host_call(
        &mut self,
        h: u32,
        call: impl FnOnce(
            &mut dyn coflowkit_sched::host::HostPolicy,
            &mut coflowkit_sched::host::Effects,
        ),
    ) {
        let hosts = self.hosts.as_mut().expect("hosts");
        let mut out = std::mem::take(&mut hosts.out);
        out.clear();
        call(hosts.policies[h as usize].as_mut(), &mut out);
        self.apply_effects(h, out);
    }

    /// Enforces what host `h`'s policy did: changed markings, messages.
    fn apply_effects(&mut self, h: u32, out: coflowkit_sched::host::Effects) {
        for &g in &out.changed {
            self.apply_marking(g as u32);
        }
        if self.cfg.control_batch {
            self.send_batches(h, &out.send);
        } else {
            for &(to, msg) in &out.send {
                self.send_control(h, to, Held::One(msg), CONTROL_PAYLOAD);
            }
        }
        self.schedule_wake(h);
        self.hosts.as_mut().expect("hosts").out = out;
    }

    /// Flow `f` starts: its policy hears of it and marks it.
    fn host_start(&mut self, f: u32) {
        let fl = &self.flows[f as usize];
        let c = &self.workload.coflows()[fl.coflow as usize];
        let spec = &c.flows[(f - self.first_flow[fl.coflow as usize]) as usize];
        let flow = HostFlow {
            id: f as u64,
            coflow: fl.coflow,
            coflow_arrival: c.arrival,
            dst: fl.dst,
            size: fl.bytes,
            size_known: spec.size_known,
            deadline: fl.deadline,
        };
        let (src, now, c) = (fl.src, self.now_ns(), fl.coflow);
        self.host_call(src, |p, out| p.start(now, &flow, out));
        if let Some(&total) = self.task_bytes.get(c as usize).filter(|&&b| b > 0) {
            self.host_call(src, |p, out| p.task_sent(now, c, total, out));
            self.move_limit(f);
        }
        self.apply_marking(f);
    }

    /// TAFE: `new` bytes of flow `f`'s task went out; every host with an
    /// active flow of the task hears the task's total (`task_sent`), and
    /// its flows of the task get their limits and tags again. Whether a
    /// flow other than `f` may now send (its limit moved past it).
    fn share_task_bytes(&mut self, f: u32, new: u64) {
        let c = self.flows[f as usize].coflow as usize;
        let Some(total) = self.task_bytes.get_mut(c) else {
            return;
        };
        *total += new;
        let (total, now) = (*total, self.now_ns());
        let first = self.first_flow[c];
        let n = self.workload.coflows()[c].flows.len() as u32;
        let active = |fl: &Flow| fl.sender.is_some() && fl.finish.is_none();
        let mut hosts: Vec<u32> = vec![];
        for g in first..first + n {
            let fl = &self.flows[g as usize];
            if active(fl) && !hosts.contains(&fl.src) {
                hosts.push(fl.src);
            }
        }
        for h in hosts {
            self.host_call(h, |p, out| p.task_sent(now, c as u32, total, out));
        }
        for g in first..first + n {
            let fl = &self.flows[g as usize];
            if !active(fl) {
                continue;
            }
            let stopped = fl.sender.as_ref().is_some_and(|s| s.nxt >= s.limit_end);
            self.move_limit(g);
            let fl = &mut self.flows[g as usize];
            if let Some(h) = &self.hosts {
                fl.task = h.policies[fl.src as usize].marking(g as u64).task;
            }
            if g != f && stopped && fl.sender.as_ref().is_some_and(|s| s.nxt < s.limit_end) {
                self.push(self.now, Ev::Kick(g));
            }
        }
    }

    /// New bytes of `s` went out: the policy counts them and the sender's
    /// limit moves. Whether the sender stopped at its old limit and may now
    /// go on.
    fn host_sent(&mut self, f: u32, seg: &Segment) -> bool {
        let fl = &mut self.flows[f as usize];
        let end = seg.seq + seg.len as u64;
        if end <= fl.host_sent {
            return false;
        }
        let new = end - fl.host_sent;
        fl.host_sent = end;
        let stopped = fl.sender.as_ref().is_some_and(|s| s.nxt >= s.limit_end);
        let (src, now) = (fl.src, self.now_ns());
        self.host_call(src, |p, out| p.sent(now, f as u64, new, out));
        if self.tafe.is_some() {
            self.share_task_bytes(f, new);
        }
        self.move_limit(f);
        let fl = &self.flows[f as usize];
        stopped && fl.sender.as_ref().is_some_and(|s| s.nxt < s.limit_end)
    }

    /// Sets `f`'s sender's limit from its policy: bytes sent + `limit`.
    fn move_limit(&mut self, f: u32) {
        let Some(h) = &self.hosts else { return };
        let fl = &mut self.flows[f as usize];
        let limit = h.policies[fl.src as usize].limit(f as u64).max(1);
        if let Some(s) = fl.sender.as_mut() {
            s.limit_end = fl.host_sent.saturating_add(limit);
        }
    }

    /// Applies `f`'s marking: class, transport, pacing.
    fn apply_marking(&mut self, f: u32) {
        let Some(h) = &self.hosts else { return };
        let fl = &mut self.flows[f as usize];
        if fl.finish.is_some() || fl.receiver.is_none() {
            return;
        }
        let m = h.policies[fl.src as usize].marking(f as u64);
        fl.task = m.task;
        let new = Settings::of(&m, self.cfg.transport, self.cfg.pacing);
        let old = Settings {
            class: fl.class,
            transport: fl.transport,
            deadline_ps: fl.cc_deadline_ps,
            tafe_share: fl.tafe_share,
            pacing: fl.pacing,
        };
        if new == old {
            return;
        }
        self.hosts.as_mut().expect("hosts").stats.marking_changes += 1;
        let fl = &mut self.flows[f as usize];
        if new.class != fl.class && fl.sender.is_some() {
            fl.stats.class_changes += 1;
            fl.stats.promotions += u64::from(new.class < fl.class);
        }
        fl.class = new.class;
        let Some(s) = fl.sender.as_mut() else {
            // Before its sender: `start` builds it from these.
            fl.transport = new.transport;
            fl.cc_deadline_ps = new.deadline_ps;
            fl.tafe_share = new.tafe_share;
            fl.pacing = new.pacing;
            return;
        };
        if fl.transport.switchable_to(new.transport) {
            let deadline = new.transport.deadline_ps(new.deadline_ps, || {
                fl.deadline.map(|d| fl.start + ps(Time(d.0)))
            });
            s.set_cc(new.transport, deadline, new.tafe_share);
            fl.transport = new.transport;
            fl.cc_deadline_ps = new.deadline_ps;
            fl.tafe_share = new.tafe_share;
        }
        if new.pacing != fl.pacing && !fl.transport.rules().rate_based {
            fl.pacing = new.pacing;
            fl.pacer.set_rate(match new.pacing {
                Pacing::Rate(r) => r,
                Pacing::Off | Pacing::Cwnd => 0,
            });
            s.set_paced(new.pacing != Pacing::Off || self.cfg.tsq.is_some());
            self.push(self.now, Ev::Kick(f));
        }
    }

    /// Flow `f` may send: its limit or its pacing moved.
    fn kick(&mut self, f: u32) {
        let fl = &self.flows[f as usize];
        if fl.established && fl.finish.is_none() && fl.sender.as_ref().is_some_and(|s| !s.done()) {
            self.send_data(f);
        }
    }

    /// Arms host `h`'s wake-up at what its policy asks (lazily: an old
    /// event finds it not due).
    fn schedule_wake(&mut self, h: u32) {
        let hosts = self.hosts.as_mut().expect("hosts");
        let at = hosts.policies[h as usize]
            .wake_at()
            .map(|t| ps(t).max(self.now));
        if at != hosts.wake_due[h as usize] {
            hosts.wake_due[h as usize] = at;
            if let Some(at) = at {
                self.push(at, Ev::Wake(h));
            }
        }
    }

    fn wake(&mut self, h: u32) {
        let hosts = self.hosts.as_mut().expect("hosts");
        if hosts.wake_due[h as usize] != Some(self.now) {
            return;
        }
        hosts.wake_due[h as usize] = None;
        hosts.stats.wakes += 1;
        let now = self.now_ns();
        let flows = &self.flows;
        let unacked = |g: u64| {
            flows
                .get(g as usize)
                .and_then(|fl| fl.sender.as_ref())
                .map_or(0, |s| s.remaining())
        };
        let view = EngineView { unacked: &unacked };
        let hosts = self.hosts.as_mut().expect("hosts");
        let mut out = std::mem::take(&mut hosts.out);
        out.clear();
        hosts.policies[h as usize].wake(now, &view, &mut out);
        self.apply_effects(h, out);
    }

    /// The channel from host `from` to host `to` (made on first use).
    fn channel(&mut self, from: u32, to: u32) -> u32 {
        let hosts = self.hosts.as_mut().expect("hosts");
        if let Some(&c) = hosts.channel_of.get(&(from, to)) {
            return c;
        }
        let (a, b) = (coflowkit_model::HostId(from), coflowkit_model::HostId(to));
        let key = FlowKey {
            coflow: u64::MAX,
            index: from,
        };
        let mut path = vec![];
        if from != to {
            self.fabric
                .path_into(a, b, self.fabric.path_choice(a, b, key), &mut path);
        }
        let start = self.hops.len() as u32;
        self.hops.extend(path.iter().map(|l| l.0));
        let hosts = self.hosts.as_mut().expect("hosts");
        hosts.channels.push(Channel {
            from,
            to,
            hops: (start, self.hops.len() as u32),
        });
        let c = (hosts.channels.len() - 1) as u32;
        hosts.channel_of.insert((from, to), c);
        c
    }

    /// `control_batch=on`: host `from`'s messages of one call, one packet
    /// per destination (in the order each first appears) of at most
    /// [`CONTROL_BATCH_MAX`], as the testbed's datagrams.
    fn send_batches(&mut self, from: u32, send: &[(u32, Control)]) {
        let mut done: Vec<u32> = vec![];
        for &(to, _) in send {
            if done.contains(&to) {
                continue;
            }
            done.push(to);
            let msgs: Vec<Control> = send.iter().filter(|m| m.0 == to).map(|m| m.1).collect();
            for chunk in msgs.chunks(CONTROL_BATCH_MAX) {
                let len = CONTROL_BATCH_HEAD + CONTROL_PAYLOAD * chunk.len() as u32;
                self.send_control(from, to, Held::Many(chunk.to_vec()), len);
            }
        }
    }

    /// Host `from`'s policy sends `msg` to host `to`'s: a class-0 packet
    /// of `len` payload bytes.
    fn send_control(&mut self, from: u32, to: u32, msg: Held, len: u32) {
        if to as usize >= self.hosts.as_ref().expect("hosts").policies.len() {
            return;
        }
        let c = self.channel(from, to);
        let hosts = self.hosts.as_mut().expect("hosts");
        hosts.stats.control_sent += msg.len() as u64;
        let slot = hosts.hold(msg);
        let pkt = Packet {
            flow: c,
            seq: slot as u64,
            len,
            wire: len + self.cfg.header_bytes,
            kind: Kind::Control,
            hop: 0,
            class: 0,
            ect: false,
            ce: false,
            ece: false,
            ts: self.now,
            rate: f32::INFINITY,
            rtt_ns: 0,
            prio: 0,
            spc: false,
        };
        if from == to {
            self.push(self.now, Ev::Arrive(pkt));
        } else {
            self.send(pkt);
        }
    }

    fn receive_control(&mut self, pkt: &Packet) {
        let hosts = self.hosts.as_mut().expect("hosts");
        let ch = hosts.channels[pkt.flow as usize];
        let Some(held) = hosts.take(pkt.seq as u32) else {
            return;
        };
        hosts.stats.control_delivered += held.len() as u64;
        let now = self.now_ns();
        // A packet's messages in one call: its replies share packets too.
        self.host_call(ch.to, |p, out| {
            for msg in held.as_slice() {
                p.receive(now, ch.from, msg, out);
            }
        });
    }
}

// ---- the coordinator (`crate::coordinator`) ----
impl Engine<'_> {
    /// Runs `coord` every `coordinator_interval`.
    pub(crate) fn with_coordinator(mut self, coord: Coordinator) -> Self {
        self.coord = Some(Box::new(coord));
        self
    }

    fn coord_tick(&mut self) {
        let mut coord = self.coord.take().expect("a coordinator");
        let flows = &self.flows;
        let acked = |f: u32| {
            flows[f as usize]
                .sender
                .as_ref()
                .map_or(0, |s| s.una.min(flows[f as usize].bytes))
        };
        let mut batch = vec![];
        coord.tick(self.now_ns(), &acked, &mut batch);
        self.coord = Some(coord);
        if !batch.is_empty() {
            let at = self.now + ps(Time(self.cfg.coordinator_delay.0));
            self.in_transit.push_back(batch);
            self.push(at, Ev::CoordApply);
        }
        let n = self.workload.coflows().len();
        if self.done_coflows < n {
            let next = self.now + ps(Time(self.cfg.coordinator_interval.0)).max(1);
            self.push(next, Ev::CoordTick);
        }
    }

    /// The oldest batch of decisions arrives: each flow's pacing and class.
    fn coord_apply(&mut self) {
        let Some(batch) = self.in_transit.pop_front() else {
            return;
        };
        for d in batch {
            let (rate, class) = d.enforced();
            let fl = &mut self.flows[d.flow as usize];
            let Some(s) = fl.sender.as_mut() else {
                continue;
            };
            if fl.finish.is_some() {
                continue;
            }
            fl.class = class;
            if fl.transport.rules().rate_based {
                continue;
            }
            let pacing = if rate > 0 {
                Pacing::Rate(rate)
            } else {
                Pacing::Off
            };
            if pacing != fl.pacing {
                fl.pacing = pacing;
                fl.pacer.set_rate(rate);
                s.set_paced(rate > 0);
                self.push(self.now, Ev::Kick(d.flow));
            }
        }
    }
}

impl Cascade for Engine<'_> {
    fn releases_mut(&mut self) -> &mut Releases {
        &mut self.rel
    }
    fn completing(&mut self) -> &mut Vec<u32> {
        &mut self.completing
    }
    fn on_complete(&mut self, c: u32) {
        if let Some(k) = self.coord.as_mut() {
            k.completed.push(c);
        }
        self.done_coflows += 1;
    }
    fn release(&mut self, c: u32) {
        self.release_coflow(c);
    }
}
