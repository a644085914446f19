//! The end points in the loop: a flow's start (its sender and receiver,
//! the handshake), its data and ACK packets, and the timers its transport
//! asks for: the retransmission timer (RFC 6298 §5), the delayed ACK, the
//! SYN's timer, and the kick that lets a flow send again after a host
//! policy or the coordinator changed it. These events are the end points'
//! own ([`FlowEv`]); the transports' rules are `crate::transport`.

use super::queued::QueuedData;
use super::{ps, Engine, Ev, PS_PER_NS};
use crate::pacing::{Pacer, Pacing};
use crate::packet::{Kind, Packet};
use crate::port::Port;
use crate::rcp::RcpPort;
use crate::sack::{max_blocks, option_bytes};
use crate::transport::pfabric::{base_rtt_ps, path_params};
use crate::transport::{Receiver, Segment, Sender, SenderParams};
use crate::FlowPacketStats;
use coflowkit_model::Time;

/// The end points' events, each for a flow.
#[derive(Debug, Clone, Copy)]
pub(super) enum FlowEv {
    /// Its retransmission timer may be due.
    Rto(u32),
    /// Its delayed ACK is due.
    DelAck(u32),
    /// Its SYN's connection timer.
    SynTimeout(u32),
    /// It may send again (its policy moved its limit or its pacing).
    Kick(u32),
}

impl Engine<'_> {
    /// Handles one of the end points' events.
    pub(super) fn on_flow_event(&mut self, ev: FlowEv) {
        match ev {
            FlowEv::Rto(f) => self.rto(f),
            FlowEv::DelAck(f) => self.delack(f),
            FlowEv::SynTimeout(f) => self.syn_timeout(f),
            FlowEv::Kick(f) => self.kick(f),
        }
    }

    pub(super) fn start(&mut self, f: u32) {
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
    pub(super) fn sender_params(&self, f: u32) -> SenderParams {
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
                hops(self.routes[f as usize].fwd),
                hops(self.routes[f as usize].rev),
                self.cfg.mtu,
                self.cfg.header_bytes,
            );
            let rate = hops(self.routes[f as usize].fwd)
                .map(|p| p.rate)
                .fold(f64::INFINITY, f64::min);
            path_params(&mut p, rtt, rate, self.cfg);
        }
        p
    }

    pub(super) fn send_syn(&mut self, f: u32) {
        let fl = &mut self.flows[f as usize];
        fl.syn_tries += 1;
        if fl.syn_tries > 1 {
            fl.stats.timeouts += 1;
        }
        let first = self.cfg.handshake.unwrap_or(self.cfg.initial_rto).0;
        let timeout = (first << (fl.syn_tries - 1).min(16)).min(first.max(self.cfg.max_rto.0));
        let pkt = self.packet(f, Kind::Syn, 0, 0);
        self.send(pkt);
        self.push(
            self.now + ps(Time(timeout)),
            Ev::Flow(FlowEv::SynTimeout(f)),
        );
    }

    pub(super) fn syn_timeout(&mut self, f: u32) {
        if !self.flows[f as usize].established {
            self.send_syn(f);
        }
    }

    pub(super) fn packet(&self, f: u32, kind: Kind, seq: u64, len: u32) -> Packet {
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

    pub(super) fn send_data(&mut self, f: u32) {
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

    pub(super) fn transmit(&mut self, f: u32, segs: &[Segment]) {
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
            self.push(self.now, Ev::Flow(FlowEv::Kick(f)));
        }
    }

    /// Whether a packet of flow `f` carrying byte `seq` still waits in its
    /// host's NIC queue (the first port of its path).
    pub(super) fn in_host_queue(&self, f: u32, seq: u64) -> bool {
        let (from, to) = self.routes[f as usize].fwd;
        let held = from < to && waits(&self.ports, &self.hops, &self.queued, f, from, seq);
        debug_assert_eq!(
            held,
            from < to && self.ports[self.hops[from as usize] as usize].holds(f, seq),
            "flow {f}: the queued-data index against the NIC's scan"
        );
        held
    }

    /// Makes sure an `Rto` event is due no later than the sender's timer
    /// (RFC 6298 §5.3: a restarted timer expires RTO after the restart,
    /// also when that is earlier than the event already waiting, as after
    /// a backed-off RTO falls back).
    pub(super) fn arm_rto(&mut self, f: u32) {
        let fl = &mut self.flows[f as usize];
        let Some(at) = fl.sender.as_ref().and_then(|s| s.rto_at) else {
            return;
        };
        if !matches!(fl.rto_event_at, Some(due) if due <= at) {
            fl.rto_event_at = Some(at);
            self.push(at, Ev::Flow(FlowEv::Rto(f)));
        }
    }

    pub(super) fn rto(&mut self, f: u32) {
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
                self.push(at, Ev::Flow(FlowEv::Rto(f)));
            }
            Some(at) => {
                debug_assert_eq!(at, now, "flow {f}: the retransmission timer fired late");
                fl.stats.timeouts += 1;
                let una = s.una;
                let (from, to) = self.routes[f as usize].fwd;
                let at = (from..to)
                    .position(|slot| waits(&self.ports, &self.hops, &self.queued, f, slot, una));
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

    pub(super) fn delack(&mut self, f: u32) {
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
    pub(super) fn send_ack(&mut self, f: u32, ece: bool, ts: u64, spc: bool) {
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

    pub(super) fn on_ack(&mut self, pkt: &Packet) {
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

    pub(super) fn on_data(&mut self, pkt: Packet) {
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
            self.push(at, Ev::Flow(FlowEv::DelAck(f)));
        }
        if complete && !was_complete {
            self.flow_done(f);
        }
    }

    /// Flow `f` may send: its limit or its pacing moved.
    pub(super) fn kick(&mut self, f: u32) {
        let fl = &self.flows[f as usize];
        if fl.established && fl.finish.is_none() && fl.sender.as_ref().is_some_and(|s| !s.done()) {
            self.send_data(f);
        }
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

/// Whether a data packet of flow `f` carrying byte `byte` waits at the port
/// of `slot` (an entry of its forward path in `hops`): the index of queued
/// data where the port is indexed ([`Port::indexed`]), else a scan of its
/// queue.
fn waits(ports: &[Port], hops: &[u32], queued: &QueuedData, f: u32, slot: u32, byte: u64) -> bool {
    let p = &ports[hops[slot as usize] as usize];
    if p.indexed() {
        queued.holds(slot, byte)
    } else {
        p.holds(f, byte)
    }
}
