//! Baraat in the engine: Smart Priority Classes at every port of a
//! host-policy run of `baraat` (`crate::spc`), and the requests that carry
//! each flow's SPC header between its host policy
//! (`coflowkit_sched::baraat::host`) and the ports of its path.
//!
//! - **Ports.** One [`SpcPort`] per network port: every switch output
//!   port and every host NIC (the flow-level model runs Algorithm 1 on
//!   every link of a path, the NIC included, so that a host's flows of
//!   different tasks are ordered at its NIC too and their ARs never sum
//!   above it). A packet arriving at a port is counted (`on_arrival`, any
//!   packet); a data packet with a task tag is queued in its task's class
//!   there in one first-come-first-served queue ([`DATA_QUEUE`]); a
//!   request is answered (`on_request`). The port's interval timer
//!   (`SpcEv::Tick`, the spec's `rtt`) starts with its first packet and
//!   stops when `tick` says it is idle.
//! - **Requests.** The header rides in a per-flow slot ([`Slot`]): one
//!   request per flow is in flight at a time, so the packets that carry it
//!   only point to it (`Packet::spc`, and [`SPC_HEADER_BYTES`] more on the
//!   wire). A flow's first request leaves as it starts, on a packet of its
//!   own ([`Kind::Request`], as a SYN: its policy's first demand, its tag's
//!   task id and heavy flag); its data waits for the first feedback. The
//!   receiver echoes the stamped header; at the sender the policy hears the
//!   path's least AR and NR (`HostPolicy::feedback`), paces at the AR and
//!   sets its next demand. One interval after a request left (or when its
//!   answer is back, if that took longer) the next is due:
//!   - a flow its path lets send (least AR above 0) puts it on its next
//!     data packet (Baraat 4.3, Fig. 6a: the task id and demand "are
//!     passed to the next-hop switch in a packet header", and "the receiver
//!     piggybacks the consolidated feedback on the acknowledgment
//!     packets"): that packet is stamped at every port as a request is, its
//!     receiver acknowledges it at once, and its ACK carries the answer
//!     back. If no data packet leaves within an interval of the request
//!     falling due (a slow pace, a host limit), it goes alone;
//!   - a flow its path holds (least AR 0) has no data to carry it, and asks
//!     alone ([`Kind::Request`] forward, [`Kind::Echo`] back, in class 0).
//!     If its least NR is above 0 (it has a nominal share, which flows the
//!     ports are preempting still hold: "the switch might have already
//!     assigned bandwidth to a lower priority flow which needs to be
//!     preempted before NR is available", 4.3.2) it asks again after an
//!     interval. If its least NR is 0 too (the classes above it take every
//!     port's capacity: it waits for their tasks to finish), the k-th
//!     answer in a row that says so makes it wait `min(2^(k-1),
//!     probe_max)` intervals (`probe_max`: `spc_probe_max`, 1 ms by default,
//!     over the interval, at least 1): the paper says only that
//!     the exchange "is repeated once every round trip time, until the
//!     sender has no more data to send", which for the tasks queued at an
//!     aggregator is most of its port (docs/reproductions/baraat.md). Such
//!     a flow learns within `probe_max` intervals that its turn has come;
//!     the ports drop a task as stale only after `probe_max + 2` intervals
//!     without a request, and not before the retransmission timer's floor
//!     (a request on a data packet may wait behind data).
//!
//!   With `spc_header=alone` every request travels alone, as a held flow's
//!   (the engine's first wiring, kept to measure what the data packets
//!   save). With `spc_control=free` the requests and echoes that travel
//!   alone take no wire (0 bytes: they cross a port behind the packet on
//!   the wire, in no time) and a header on a data packet or an ACK adds no
//!   bytes: a knob that measures what Baraat's control bytes cost
//!   (docs/reproductions/baraat.md).
//!
//!   A request on a data packet can be lost with it (a full buffer): the
//!   ports before the loss hold the new demand and AR, those after the old
//!   ones, and the next request returns to each what it holds
//!   (`SpcHeader::next`); the next request is then due an interval later.
//!   Once the sender has sent its last new byte, its next request is the
//!   FIN, alone, which returns its rates (at once, behind that byte, if no
//!   request is in flight; at each port in the queue of the flow's data,
//!   so that it does not overtake it): the ports free them as the flow's last data
//!   passes, not an RTT later with its last ACK (the paper does not say
//!   when; a TCP FIN rides on the last segment). If the answer to a
//!   request in flight then holds the flow (AR 0), it keeps asking, and the
//!   FIN leaves with the first request its path grants (or once its
//!   receiver has every byte): a lost packet may still be due, and a flow
//!   that had returned its rates while held would wait for it forever. A
//!   retransmission after the FIN goes at the flow's last pace, which is
//!   then above 0.
//! - **Control traffic.** Requests, echoes, ACKs and the header on data
//!   packets cross ports without an AR: each interval, a port's `vcap` (the capacity Algorithm 1 shares)
//!   is its capacity (or the virtual capacity's rule) less the rate at
//!   which such packets arrived there in the interval before (at most half
//!   of it). Without it the flows' ARs fill the link and these packets
//!   overfill it: a host receiving 8 flows at their full share while it
//!   sends as much got the ACKs and echoes of what it sends on top (about
//!   6%), and 7 held flows' requests (5.3 Mbit/s each at 100 us) another
//!   4%; the queue reached 1 MB, dropped, and a shuffle took 30% longer.
//!   The paper's virtual capacity (footnote 5) is "decreased depending on
//!   ... queuing"; the unit's rule keeps it at or above `C`.
//! - **Sending.** A Baraat flow is rate-based (no congestion window: its
//!   AR is what the switches reserved for it, as RCP's flows here) and
//!   paced; while its least AR is 0 it sends no data (a driver's hold:
//!   the policy's pace 0).
//!
//! Our readings beyond the unit's (`crate::spc`, "Our readings"): requests
//! and echoes that travel alone are never dropped by a full buffer
//! (`Packet::lossless`: a first request lost part way would leave the
//! ports after the loss without the flow in their counts, and a FIN lost
//! part way would leave them holding its rates). Only a pFabric queue
//! (which evicts by priority) can still lose one: it is then sent again
//! one interval later as a refresh of the header as far as it was stamped,
//! and a lost FIN is not sent again (the ports drop the task once none of
//! its flows asks for `stale_intervals` intervals).

use super::{ps, Engine, Ev, FlowEv};
use crate::packet::{Kind, Packet};
use crate::spc::{Request, SpcHeader, SpcParams, SpcPort};
use coflowkit_model::{LinkKind, Time};
use coflowkit_sched::host::{HostView, PathRates};

/// Baraat's events.
#[derive(Debug, Clone, Copy)]
pub(super) enum SpcEv {
    /// A port's interval ended.
    Tick(u32),
    /// A flow's next request may be due.
    Request(u32),
}

impl Engine<'_> {
    /// Handles one of Baraat's events.
    pub(super) fn on_spc_event(&mut self, ev: SpcEv) {
        match ev {
            SpcEv::Tick(p) => self.spc_tick(p),
            SpcEv::Request(f) => self.spc_due(f),
        }
    }
}

/// Payload bytes of a request or an echo: the SPC header (Baraat 4.4).
pub const SPC_HEADER_BYTES: u32 = 26;

/// The queue of a data packet (and of a FIN, behind its flow's data): one
/// queue, first come first served, below the control's, so that queue 0 is
/// left to requests, echoes and ACKs, which must not wait behind data (a
/// request late by more than an interval would let the ports drop its task
/// as stale). Baraat's classes are logical, enforced by the rates (4.3.2:
/// the feedback is "the rate that the flow would get with standard priority
/// queues"; the paper's switch has no queue per class), so the queue holds
/// only what the rates let pile up. A queue per class, chosen when the
/// packet arrived, inverted priorities as classes moved: a packet queued
/// while its task was 8th at a port stayed in the last queue when the tasks
/// before it finished, behind newer tasks that then took the queues above
/// it (on the analytics run of Figs. 8-9 without loss, 13 of a task's 40
/// flows waited 150 ms so). Served by task id instead, a port's backlog
/// fell on the newest task alone, whose flows then timed out spuriously
/// (361 timers against 53, and 0 first come first served).
pub(crate) const DATA_QUEUE: u8 = 1;

/// What Baraat's requests and ports did in a run.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SpcRunStats {
    /// Requests sent (FINs included).
    pub requests: u64,
    /// Of them, carried on data packets (the rest went alone).
    pub carried: u64,
    /// Echoes that reached their sender.
    pub echoes: u64,
    /// Requests and echoes dropped by full queues.
    pub lost: u64,
    /// Task-port pairs where a task turned heavy.
    pub heavy: u64,
    /// Tasks the ports dropped as stale.
    pub expired: u64,
}

/// One flow's request slot.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Slot {
    /// Its latest request's header, stamped by the ports it crossed.
    header: Option<SpcHeader>,
    /// A request or its echo is on its way.
    in_flight: bool,
    /// When the latest request left (ps).
    sent_ps: u64,
    /// When its pending `SpcRequest` event is due.
    due: Option<u64>,
    /// Its least AR is above 0: its data may go.
    open: bool,
    /// Its sender has sent its last new byte.
    done: bool,
    /// Its FIN has left.
    fin_sent: bool,
    /// A request is due and waits for a data packet to carry it (until
    /// `due`, when it goes alone).
    carry: bool,
    /// The answers in a row that held it with no nominal share (least AR
    /// and least NR 0).
    held: u32,
}

/// The engine's Baraat state.
pub(crate) struct Spc {
    params: SpcParams,
    /// A sending flow's requests ride on its data (`spc_header=data`).
    on_data: bool,
    /// Bytes the SPC header adds to a packet that carries it, and a
    /// request's or echo's payload ([`SPC_HEADER_BYTES`]; 0 with
    /// `spc_control=free`, whose requests and echoes take no wire either).
    header_wire: u32,
    /// The most intervals a held flow waits between requests
    /// (`spc_probe_max` over the interval, at least 1).
    probe_max: u32,
    /// By link; `None` for a CPU.
    ports: Vec<Option<SpcPort>>,
    running: Vec<bool>,
    last_ps: Vec<u64>,
    /// Per port, bytes of packets no AR covers (requests, echoes, ACKs,
    /// handshakes) that arrived this interval.
    uncovered: Vec<u64>,
    flows: Vec<Slot>,
    stats: SpcRunStats,
}

/// A view that knows one number: the flow's unacknowledged bytes.
struct Unacked(u64);

impl HostView for Unacked {
    fn unacked(&self, _flow: u64) -> u64 {
        self.0
    }
}

impl Engine<'_> {
    /// Runs Baraat's Smart Priority Classes with `params` at every port,
    /// if given (a host-policy run of `baraat`).
    pub fn with_spc(mut self, params: Option<SpcParams>) -> Self {
        let Some(mut params) = params else {
            return self;
        };
        let interval = params.interval_ps.max(1);
        let probe_max =
            (ps(Time(self.cfg.spc_probe_max.0)) / interval).clamp(1, u64::from(u32::MAX)) as u32;
        // A live flow asks at least every `probe_max` intervals (held), and
        // a request on a data packet may wait behind data on its way: its
        // task is not stale at a port before two intervals more, nor before
        // the retransmission timer's floor.
        let rto = ps(Time(self.cfg.min_rto.0)).div_ceil(interval);
        params.stale_intervals = params
            .stale_intervals
            .max(u64::from(probe_max) + 2)
            .max(rto);
        let ports: Vec<Option<SpcPort>> = self
            .fabric
            .links()
            .iter()
            .map(|l| match l.kind {
                LinkKind::Cpu(_) => None,
                _ => Some(SpcPort::new(l.capacity.0.round() as u64)),
            })
            .collect();
        let n = ports.len();
        self.spc = Some(Box::new(Spc {
            params,
            on_data: self.cfg.spc_on_data,
            header_wire: if self.cfg.spc_control_wire {
                SPC_HEADER_BYTES
            } else {
                0
            },
            probe_max,
            ports,
            running: vec![false; n],
            uncovered: vec![0; n],
            last_ps: vec![0; n],
            flows: vec![Slot::default(); self.flows.len()],
            stats: SpcRunStats::default(),
        }));
        self
    }

    /// Whether flow `f` asks the switches for rates (its policy has a
    /// demand for it, in a run with Smart Priority Classes).
    pub(super) fn spc_asks(&self, f: u32) -> bool {
        let (Some(_), Some(h)) = (&self.spc, &self.hosts) else {
            return false;
        };
        let fl = &self.flows[f as usize];
        h.policies[fl.src as usize].demand(f as u64).is_some()
    }

    /// Whether flow `f`'s data waits for a grant (its least AR is 0).
    pub(super) fn spc_holds(&self, f: u32) -> bool {
        self.spc.as_ref().is_some_and(|s| {
            let slot = &s.flows[f as usize];
            slot.header.is_some() && !slot.open
        })
    }

    /// Flow `f` starts: its first request leaves.
    pub(super) fn spc_start(&mut self, f: u32) {
        let fl = &self.flows[f as usize];
        let Some(h) = &self.hosts else { return };
        let Some(demand) = h.policies[fl.src as usize].demand(f as u64) else {
            return;
        };
        let (task, heavy) = fl.task.map_or((u64::MAX, false), |t| (t.id, t.heavy));
        self.spc_send(f, SpcHeader::first(task, heavy, demand));
    }

    /// Sends `header` as flow `f`'s request.
    fn spc_send(&mut self, f: u32, header: SpcHeader) {
        let now = self.now;
        let spc = self.spc.as_mut().expect("spc");
        let slot = &mut spc.flows[f as usize];
        slot.header = Some(header);
        slot.in_flight = true;
        slot.sent_ps = now;
        slot.fin_sent |= header.request == Request::Fin;
        spc.stats.requests += 1;
        let pkt = self.spc_packet(f, Kind::Request);
        self.send(pkt);
    }

    /// A packet arrives at `port`: counted; a request answered; a data
    /// packet of a task (and its flow's FIN) put in the data queue.
    pub(super) fn spc_arrival(&mut self, port: u32, pkt: &mut Packet) {
        let now = self.now;
        let task = self.flows[pkt.flow as usize].task.map(|t| t.id);
        let spc = self.spc.as_mut().expect("spc");
        let Some(sp) = spc.ports[port as usize].as_mut() else {
            return;
        };
        // A FIN queues behind its flow's data: in queue 0 it overtook the
        // last data packets still queued, the next port returned the
        // flow's rates and dropped its task, and those packets then waited
        // behind every other task's data until the retransmission timer
        // fired (`a_fin_does_not_overtake_its_flows_last_data`).
        let fin = pkt.kind == Kind::Request
            && spc.flows[pkt.flow as usize]
                .header
                .is_some_and(|h| h.request == Request::Fin);
        if let (true, Some(_)) = (fin, task) {
            pkt.class = DATA_QUEUE;
        }
        sp.on_arrival(pkt.wire);
        spc.uncovered[port as usize] += match pkt.kind {
            Kind::Data if pkt.spc => u64::from(spc.header_wire),
            Kind::Data => 0,
            _ => u64::from(pkt.wire),
        };
        if pkt.kind == Kind::Request || (pkt.kind == Kind::Data && pkt.spc) {
            if let Some(h) = spc.flows[pkt.flow as usize].header.as_mut() {
                sp.on_request(h, &spc.params);
            }
        }
        if let (Kind::Data, Some(t)) = (pkt.kind, task) {
            sp.on_data(t, pkt.len, &spc.params);
            pkt.class = DATA_QUEUE;
        }
        if !spc.running[port as usize] {
            spc.running[port as usize] = true;
            spc.last_ps[port as usize] = now;
            let at = now + spc.params.interval_ps.max(1);
            self.push(at, Ev::Spc(SpcEv::Tick(port)));
        }
    }

    /// A port's interval ended.
    pub(super) fn spc_tick(&mut self, port: u32) {
        let now = self.now;
        let queued = self.ports[port as usize].queued_bytes();
        let spc = self.spc.as_mut().expect("spc");
        let p = port as usize;
        let t = now - spc.last_ps[p];
        spc.last_ps[p] = now;
        let Some(sp) = spc.ports[p].as_mut() else {
            return;
        };
        let idle = sp.tick(t, queued, &spc.params);
        // What no AR covers (requests, echoes, ACKs) comes off the
        // capacity Algorithm 1 shares, at last interval's rate: else the
        // flows' ARs fill the link and these packets overfill it.
        let bytes = std::mem::take(&mut spc.uncovered[p]);
        if !idle && t > 0 {
            let rate = (u128::from(bytes) * 8 * 1_000_000_000_000 / u128::from(t)) as u64;
            sp.reserve_control(rate);
        }
        if idle {
            spc.running[p] = false;
        } else {
            let at = now + spc.params.interval_ps.max(1);
            self.push(at, Ev::Spc(SpcEv::Tick(port)));
        }
    }

    /// A request reached its receiver: the header goes back.
    pub(super) fn spc_echo(&mut self, f: u32) {
        let pkt = self.spc_packet(f, Kind::Echo);
        self.send(pkt);
    }

    /// Flow `f`'s request or echo alone, in queue 0: the SPC header behind
    /// a packet header (no bytes at all with `spc_control=free`).
    fn spc_packet(&self, f: u32, kind: Kind) -> Packet {
        let header = self.spc.as_ref().expect("spc").header_wire;
        let pkt = self.packet(f, kind, 0, SPC_HEADER_BYTES);
        Packet {
            class: 0,
            wire: if header == 0 { 0 } else { pkt.wire },
            ..pkt
        }
    }

    /// Bytes the SPC header adds to a data packet or an ACK that carries it.
    pub(super) fn spc_header_wire(&self) -> u32 {
        self.spc
            .as_ref()
            .map_or(SPC_HEADER_BYTES, |s| s.header_wire)
    }

    /// An echo reached its sender: the policy hears the rates, the data
    /// may go, and the next request is due.
    pub(super) fn spc_feedback(&mut self, f: u32) {
        let spc = self.spc.as_mut().expect("spc");
        spc.stats.echoes += 1;
        let slot = &mut spc.flows[f as usize];
        slot.in_flight = false;
        let Some(h) = slot.header else { return };
        if h.request == Request::Fin {
            return;
        }
        let min_ar = h.min_ar();
        let open = min_ar > 0;
        let was_open = std::mem::replace(&mut slot.open, open);
        // Held with no nominal share (the classes above take every port
        // on the path), it waits for them to finish: it backs off.
        slot.held = if open || h.min_nr() > 0 {
            0
        } else {
            slot.held.saturating_add(1)
        };
        let fl = &self.flows[f as usize];
        let unacked = Unacked(fl.sender.as_ref().map_or(0, |s| s.remaining()));
        let rates = PathRates {
            min_ar,
            min_nr: h.min_nr(),
        };
        let (src, now) = (fl.src, self.now_ns());
        self.host_call(src, |p, out| {
            p.feedback(now, f as u64, rates, &unacked, out)
        });
        if open && !was_open {
            self.push(self.now, Ev::Flow(FlowEv::Kick(f)));
        }
        self.spc_next(f);
    }

    /// Flow `f`'s next request: now if its wait since the last one left
    /// has passed, else when it has. The wait is an interval, or, for a
    /// flow held with no nominal share `k` answers in a row,
    /// `min(2^(k-1), probe_max)` intervals.
    fn spc_next(&mut self, f: u32) {
        let now = self.now;
        let spc = self.spc.as_mut().expect("spc");
        let slot = &mut spc.flows[f as usize];
        let wait = match slot.held {
            0 => 1,
            k => (1u64 << (k - 1).min(31)).min(u64::from(spc.probe_max)),
        };
        let at = now.max(slot.sent_ps + spc.params.interval_ps.saturating_mul(wait));
        if at == now {
            slot.due = None;
            self.spc_request(f);
        } else if slot.due != Some(at) {
            slot.due = Some(at);
            self.push(at, Ev::Spc(SpcEv::Request(f)));
        }
    }

    /// Flow `f`'s `SpcRequest` event: its next request, if still due now.
    pub(super) fn spc_due(&mut self, f: u32) {
        let now = self.now;
        let slot = &mut self.spc.as_mut().expect("spc").flows[f as usize];
        if slot.due == Some(now) {
            slot.due = None;
            self.spc_request(f);
        }
    }

    /// Flow `f`'s next request is due: a flow that may send waits up to an
    /// interval for a data packet to carry it; otherwise (held, done, or
    /// that interval passed) it leaves alone, or as the FIN.
    fn spc_request(&mut self, f: u32) {
        let now = self.now;
        let spc = self.spc.as_mut().expect("spc");
        let interval = spc.params.interval_ps.max(1);
        let on_data = spc.on_data;
        let slot = &mut spc.flows[f as usize];
        let Some(h) = slot.header else { return };
        if slot.in_flight || slot.fin_sent {
            return;
        }
        let (done, open) = (slot.done, slot.open);
        // A flow whose sender has sent its last new byte returns its rates
        // once its path grants it again (or its receiver has every byte):
        // held, it still asks, as a retransmission may be due.
        if done && (open || self.flows[f as usize].finish.is_some()) {
            slot.carry = false;
            self.spc_send(f, h.fin());
            return;
        }
        if on_data && open && !done && !slot.carry {
            slot.carry = true;
            slot.due = Some(now + interval);
            self.push(now + interval, Ev::Spc(SpcEv::Request(f)));
            return;
        }
        slot.carry = false;
        let next = self.spc_next_header(f, &h);
        self.spc_send(f, next);
    }

    /// The request after `h` for flow `f`: its policy's demand now (a flow
    /// its policy has let go, its receiver having every byte and its last
    /// ACK on the way, asks its last demand again) and its tag's heavy flag.
    fn spc_next_header(&self, f: u32, h: &SpcHeader) -> SpcHeader {
        let fl = &self.flows[f as usize];
        let demand = self
            .hosts
            .as_ref()
            .and_then(|hosts| hosts.policies[fl.src as usize].demand(f as u64));
        let mut next = h.next(demand.unwrap_or(h.demand));
        next.heavy = fl.task.is_some_and(|t| t.heavy);
        next
    }

    /// Flow `f`'s data packet `pkt` is about to leave: it carries the
    /// flow's next request if one waits for it, unless it ends the flow's
    /// bytes (its FIN follows it at once instead).
    pub(super) fn spc_carry(&mut self, f: u32, pkt: &mut Packet) {
        let spc = self.spc.as_ref().expect("spc");
        let slot = &spc.flows[f as usize];
        let Some(h) = slot.header else { return };
        let last = pkt.seq + u64::from(pkt.len) >= self.flows[f as usize].bytes;
        if !slot.carry || slot.in_flight || slot.fin_sent || last {
            return;
        }
        let next = self.spc_next_header(f, &h);
        let now = self.now;
        let spc = self.spc.as_mut().expect("spc");
        let slot = &mut spc.flows[f as usize];
        slot.header = Some(next);
        slot.carry = false;
        slot.due = None;
        slot.in_flight = true;
        slot.sent_ps = now;
        spc.stats.requests += 1;
        spc.stats.carried += 1;
        pkt.spc = true;
        pkt.wire += spc.header_wire;
    }

    /// Flow `f`'s sender has sent its last new byte: its FIN leaves now
    /// (behind that byte), or, if a request is in flight or its path holds
    /// it, with the first request after that finds it granted.
    pub(super) fn spc_sender_done(&mut self, f: u32) {
        let spc = self.spc.as_mut().expect("spc");
        let slot = &mut spc.flows[f as usize];
        if slot.done {
            return;
        }
        slot.done = true;
        match slot.header {
            Some(h) if !slot.in_flight && !slot.fin_sent && slot.open => {
                slot.due = None;
                slot.carry = false;
                self.spc_send(f, h.fin());
            }
            _ => {}
        }
    }

    /// A queue dropped flow `f`'s request or its answer (alone, or on a
    /// data packet or an ACK): the next request is due one interval later
    /// (a FIN is not sent again).
    pub(super) fn spc_lost(&mut self, f: u32) {
        let now = self.now;
        let spc = self.spc.as_mut().expect("spc");
        spc.stats.lost += 1;
        let slot = &mut spc.flows[f as usize];
        slot.in_flight = false;
        if slot.fin_sent {
            return;
        }
        let at = now + spc.params.interval_ps.max(1);
        slot.due = Some(at);
        self.push(at, Ev::Spc(SpcEv::Request(f)));
    }

    /// The run's counters, the ports' summed in.
    pub(super) fn spc_stats(&self) -> Option<SpcRunStats> {
        let spc = self.spc.as_ref()?;
        let mut s = spc.stats;
        for p in spc.ports.iter().flatten() {
            s.heavy += p.stats.heavy;
            s.expired += p.stats.expired;
        }
        Some(s)
    }
}
