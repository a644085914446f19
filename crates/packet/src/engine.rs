//! The event loop: packets through ports, end points reacting, and the
//! release rules of the workload (shared with the flow-level engine:
//! `coflowkit_sim::release`).
//!
//! Time is integer picoseconds (a 1500-byte frame takes 1.2 ns·1000 at 10
//! Gbit/s, exactly); events at one instant are handled in the order they
//! were scheduled (a sequence number breaks ties), so a run is a pure
//! function of its inputs.
//!
//! This file holds the loop, the release rules and a packet's way through
//! the ports; each other part schedules and handles its own events, in a
//! file of its own:
//!
//! * `build`: the ports, the flows' paths and the shared knobs
//!   ([`Engine::new`]);
//! * `events`: the events to come, small keys in a heap over a slab;
//! * `endpoints`: a flow's start, its data and ACKs, its timers
//!   (retransmission, delayed ACK, SYN) and kicks;
//! * `pacing`: a paced flow's slots ([`Pacing`], with its slot in a
//!   [`Pacer`]): a paced flow sends one segment per slot, released by its
//!   `Pace` event; an unpaced one takes the path it always took, at no
//!   extra cost;
//! * `rcp`: RCP's per-port state and control-interval events, which exist
//!   only once an RCP flow starts (`crate::rcp`);
//! * `sample`: the queue trace;
//! * `hosts` and `tafe`: host policies and TAFE's switches;
//! * `coordinator`: a coordinator-run scheduler's ticks and decisions;
//! * `baraat`: Baraat's Smart Priority Classes;
//! * `queued`: the index of each flow's data queued at each hop.
//!
//! Each flow has its own transport (the configuration's by default,
//! `crate::transport`) and its own pacing.

use crate::config::PacketConfig;
use crate::coordinator::{Coordinator, Decision};
use crate::host::Hosts;
use crate::pacing::{Pacer, Pacing};
use crate::packet::{Kind, Packet};
use crate::port::{Port, PortStats};
use crate::queue::shared::SharedPool;
use crate::queue::Admit;
use crate::rcp::{RcpParams, RcpPort};
use crate::sack::SackStore;
use crate::transport::{Receiver, Segment, Sender, SenderParams, TransportKind};
use crate::{FlowPacketStats, PacketError, PacketResult, QueueSample};
use coflowkit_model::{Fabric, LinkId, LinkKind, Time, ValidWorkload};
use coflowkit_sim::release::{self, Cascade, Releases};
use coflowkit_sim::{Outcome, Progress, SimResult};

mod baraat;
mod build;
mod coordinator;
mod endpoints;
mod events;
mod hosts;
pub(crate) mod pacing;
mod queued;
mod rcp;
mod sample;
mod tafe;
use baraat::SpcEv;
pub use baraat::{SpcRunStats, SPC_HEADER_BYTES};
use build::switch_of;
use coordinator::CoordEv;
use endpoints::FlowEv;
use pacing::rate_of;

const PS_PER_NS: u64 = 1000;

/// An event, by the part of the engine that schedules and handles it.
#[derive(Debug, Clone, Copy)]
enum Ev {
    /// Coflow arrivals due (the release rules).
    Arrival,
    /// A flow starts.
    Start(u32),
    /// A port finished serializing its packet, carried here (not in a
    /// table by port: one cache line less per hop).
    TxDone(u32, Packet),
    /// A packet reaches the far end of the link it crossed.
    Arrive(u32, Packet),
    /// A flow's timers and kicks (`endpoints`).
    Flow(FlowEv),
    /// A paced flow's next slot may have come (`pacing`).
    Pace(u32),
    /// An RCP port's control interval ended (`rcp`).
    RcpTick(u32),
    /// Sample every port's queue (`sample`).
    Sample,
    /// A host's policy asked to be woken (`hosts`).
    Wake(u32),
    /// The coordinator's tick and decisions (`coordinator`).
    Coord(CoordEv),
    /// Baraat's port intervals and requests (`baraat`).
    Spc(SpcEv),
}

/// One flow's static facts and end points.
/// A flow's forward and reverse paths: ranges into `Engine::hops`.
#[derive(Debug, Clone, Copy)]
struct Route {
    fwd: (u32, u32),
    rev: (u32, u32),
}

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
    /// With `acks=direct`: when its last ACK sent reaches its sender (ps),
    /// so that a later one never arrives before it.
    ack_due: u64,
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
    heap: events::Events<Ev>,
    seq: u64,
    now: u64,
    ports: Vec<Port>,
    /// Each switch's shared buffer (`buffer=shared:B`), by switch id;
    /// empty with per-port buffers.
    pools: Vec<SharedPool>,
    hops: Vec<u32>,
    flows: Vec<Flow>,
    /// Each flow's paths, apart from its record (a kilobyte): every hop of
    /// every packet reads one, and 16 bytes a flow stay in cache where a
    /// record's line per hop would not.
    routes: Vec<Route>,
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
    /// With `last_hop=direct`, per port, when it is free again (ps).
    last_free: Vec<u64>,
}

fn ps(t: Time) -> u64 {
    t.0.saturating_mul(PS_PER_NS)
}

fn ns_ceil(ps: u64) -> Time {
    Time(ps.div_ceil(PS_PER_NS))
}

impl<'a> Engine<'a> {
    /// Schedules `ev` at `at`; a packet's event carries the port its
    /// handling reads first as its hint ([`events::Events::pop`]).
    fn push(&mut self, at: u64, ev: Ev) {
        self.seq += 1;
        let hint = match ev {
            Ev::TxDone(port, _) | Ev::Arrive(port, _) => port,
            _ => events::NO_HINT,
        };
        self.heap.push(at, self.seq, ev, hint);
    }

    /// Runs to the end; `progress` hears now and then how far it is.
    pub fn run(mut self, progress: &mut dyn FnMut(Progress)) -> Result<PacketResult, PacketError> {
        let n_coflows = self.workload.coflows().len();
        if let Some(c) = self.workload.coflows().first() {
            self.push(ps(c.arrival), Ev::Arrival);
            if self.coord.is_some() {
                self.push(ps(c.arrival), Ev::Coord(CoordEv::Tick));
            }
        }
        if self.cfg.queue_trace.is_some() {
            self.push(0, Ev::Sample);
        }
        while let Some((at, ev, next_port)) = self.heap.pop() {
            if self.done_coflows == n_coflows {
                break;
            }
            // On a large fabric a port's lines are rarely in cache: the
            // next event's port is fetched while this one is handled.
            if let Some(p) = self.ports.get(next_port as usize) {
                p.prefetch();
            }
            self.now = at;
            self.events += 1;
            match ev {
                Ev::Arrival => self.arrivals(),
                Ev::Start(f) => self.start(f),
                Ev::TxDone(p, pkt) => self.tx_done(p, pkt),
                Ev::Arrive(port, pkt) => self.arrive(port, pkt),
                Ev::Flow(e) => self.on_flow_event(e),
                Ev::Pace(f) => self.pace(f),
                Ev::RcpTick(p) => self.rcp_tick(p),
                Ev::Sample => self.sample(),
                Ev::Wake(h) => self.wake(h),
                Ev::Coord(e) => self.on_coord_event(e),
                Ev::Spc(e) => self.on_spc_event(e),
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
            .routes
            .iter()
            .map(|r| {
                self.hops[r.fwd.0 as usize..r.fwd.1 as usize]
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
        let fwd = self.routes[f as usize].fwd;
        self.queued.release(fwd.0, fwd.1);
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

    // ---- the network ----

    fn path(&self, pkt: &Packet) -> &[u32] {
        if pkt.kind == Kind::Control {
            let c = &self.hosts.as_ref().expect("hosts").channels[pkt.flow as usize];
            return &self.hops[c.hops.0 as usize..c.hops.1 as usize];
        }
        let r = &self.routes[pkt.flow as usize];
        let (a, b) = if pkt.reverse() { r.rev } else { r.fwd };
        &self.hops[a as usize..b as usize]
    }

    /// A host puts `pkt` on its NIC.
    fn send(&mut self, mut pkt: Packet) {
        pkt.hop = 0;
        if self.cfg.direct_acks && matches!(pkt.kind, Kind::Ack | Kind::SynAck) {
            self.send_direct(pkt);
        } else {
            self.enqueue(pkt);
        }
    }

    /// `acks=direct`: `pkt` arrives after each hop of its path's
    /// serialization and propagation, and not before the flow's ACK sent
    /// before it.
    fn send_direct(&mut self, pkt: Packet) {
        let took: u64 = self
            .path(&pkt)
            .iter()
            .map(|&port| {
                let p = &self.ports[port as usize];
                p.tx_ps(pkt.wire) + p.delay_ps
            })
            .sum();
        let fl = &mut self.flows[pkt.flow as usize];
        let at = (self.now + took).max(fl.ack_due);
        fl.ack_due = at;
        self.push(at, Ev::Arrive(events::NO_HINT, pkt));
    }

    fn enqueue(&mut self, pkt: Packet) {
        let port = self.path(&pkt)[pkt.hop as usize];
        self.enqueue_at(port, pkt);
    }

    /// `pkt` offered to `port`, its path's `pkt.hop`-th.
    fn enqueue_at(&mut self, port: u32, mut pkt: Packet) {
        debug_assert_eq!(port, self.path(&pkt)[pkt.hop as usize]);
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
        if !p.busy && p.pool.is_none() {
            // An idle port's queue is empty (`start_tx` found it so): the
            // packet goes straight onto the link, as queued and popped at
            // once, its queue's packets and the queued-data index untouched.
            if let Some((admit, out)) = p.pass_at(pkt, self.now) {
                if !self.admitted(admit, &pkt) {
                    return;
                }
                if pkt.hop == 0 && pkt.kind == Kind::Data && self.cfg.tsq.is_some() {
                    self.flows[pkt.flow as usize].nic_bytes += pkt.wire as u64;
                }
                self.serialize(port, out);
                return;
            }
        }
        let admit = match p.pool {
            Some(k) => p.admit_shared(pkt, &mut self.pools[k as usize]),
            None => p.admit(pkt),
        };
        // Packets a pFabric port dropped to make room count for their flows.
        if p.has_evicted() {
            let mut evicted = std::mem::take(&mut p.evicted);
            for v in evicted.drain(..) {
                self.dropped(&v);
            }
            self.ports[port as usize].evicted = evicted;
        }
        if !self.admitted(admit, &pkt) {
            return;
        }
        if pkt.kind == Kind::Data && self.ports[port as usize].indexed() {
            let slot = self.routes[pkt.flow as usize].fwd.0 + pkt.hop as u32;
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

    /// What a port's queue did with `pkt`, counted for its flow: false if
    /// it was dropped (and counted as such), true if it is on its way.
    #[inline]
    fn admitted(&mut self, admit: Admit, pkt: &Packet) -> bool {
        match admit {
            Admit::Dropped => {
                self.dropped(pkt);
                false
            }
            Admit::Marked if pkt.kind != Kind::Control => {
                self.flows[pkt.flow as usize].stats.ecn_marks += 1;
                true
            }
            Admit::Marked | Admit::Queued => true,
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
            if pkt.kind == Kind::Data && p.indexed() {
                let slot = self.routes[pkt.flow as usize].fwd.0 + pkt.hop as u32;
                self.queued.left(slot, pkt.seq, pkt.len);
            }
            self.serialize(port, pkt);
        } else {
            p.busy = false;
        }
    }

    /// The idle `port` starts to serialize `pkt`, taken from its queue.
    fn serialize(&mut self, port: u32, pkt: Packet) {
        let p = &mut self.ports[port as usize];
        p.busy = true;
        let at = self.now + p.tx_ps(pkt.wire);
        self.push(at, Ev::TxDone(port, pkt));
    }

    fn tx_done(&mut self, port: u32, mut pkt: Packet) {
        let left_nic = pkt.hop == 0 && pkt.kind == Kind::Data && self.cfg.tsq.is_some();
        pkt.hop += 1;
        let mut at = self.now + self.ports[port as usize].delay_ps;
        let path = self.path(&pkt);
        let mut next = path
            .get(pkt.hop as usize)
            .copied()
            .unwrap_or(events::NO_HINT);
        if self.cfg.direct_last_hop
            && pkt.hop as usize + 1 == path.len()
            && pkt.kind != Kind::Control
            && !pkt.reverse()
        {
            // `last_hop=direct`: across the port to the destination now,
            // after whatever it took before.
            let p = &self.ports[next as usize];
            let free = &mut self.last_free[next as usize];
            *free = at.max(*free) + p.tx_ps(pkt.wire);
            at = *free + p.delay_ps;
            pkt.hop += 1;
            next = events::NO_HINT;
        }
        self.push(at, Ev::Arrive(next, pkt));
        self.start_tx(port);
        if left_nic {
            // TSQ (Linux's `tcp_tsq_handler`): room in the NIC lets the
            // flow send again.
            self.flows[pkt.flow as usize].nic_bytes -= pkt.wire as u64;
            self.pump(pkt.flow);
        }
    }

    /// `pkt` arrives at `port` ([`events::NO_HINT`]: at its destination).
    fn arrive(&mut self, port: u32, pkt: Packet) {
        if port == events::NO_HINT {
            self.deliver(pkt);
        } else {
            self.enqueue_at(port, pkt);
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
