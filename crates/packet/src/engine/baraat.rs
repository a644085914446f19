//! Baraat in the engine: Smart Priority Classes at every port of a
//! host-policy run of `baraat` (`crate::spc`), and the requests that carry
//! each flow's SPC header between its host policy
//! (`coflowkit_sched::host::baraat`) and the ports of its path.
//!
//! - **Ports.** One [`SpcPort`] per network port: every switch output
//!   port and every host NIC (the flow-level model runs Algorithm 1 on
//!   every link of a path, the NIC included, so that a host's flows of
//!   different tasks are ordered at its NIC too and their ARs never sum
//!   above it). A packet arriving at a port is counted (`on_arrival`, any
//!   packet); a data packet with a task tag is queued in its task's class
//!   there (`queue_of`, capped at 7; a task the port does not hold goes to
//!   7); a request is answered (`on_request`). The port's interval timer
//!   (`Ev::SpcTick`, the spec's `rtt`) starts with its first packet and
//!   stops when `tick` says it is idle.
//! - **Requests.** The header rides in a per-flow slot ([`Slot`]): one
//!   request per flow is in flight at a time, so the packets that carry it
//!   ([`Kind::Request`] forward, [`Kind::Echo`] back, each
//!   [`SPC_HEADER_BYTES`] of payload plus headers, in class 0) only point
//!   to it. A flow's first request leaves as it starts (with its policy's
//!   first demand, its tag's task id and heavy flag); its data waits for
//!   the first feedback. The receiver echoes the stamped header; at the
//!   sender the policy hears the path's least AR and NR
//!   (`HostPolicy::feedback`), paces at the AR and sets its next demand,
//!   and the next request leaves one interval after the previous one left
//!   (or at once, if the echo took longer): one request per flow per RTT.
//!   Once the sender has sent its last new byte, its next request is the
//!   FIN, which returns its rates (at once, behind that byte, if no request
//!   is in flight): the ports free them as the flow's last data passes,
//!   not an RTT later with its last ACK (the paper does not say when; a
//!   TCP FIN rides on the last segment). If the echo of a request in
//!   flight then holds the flow (AR 0), it keeps asking, and the FIN
//!   leaves with the first request its path grants (or once its receiver
//!   has every byte): a lost packet may still be due, and a flow that had
//!   returned its rates while held would wait for it forever. A
//!   retransmission after the FIN goes at the flow's last pace, which is
//!   then above 0.
//! - **Control traffic.** Requests, echoes and ACKs cross ports without an
//!   AR: each interval, a port's `vcap` (the capacity Algorithm 1 shares)
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
//! and echoes are never dropped by a full buffer (`Packet::lossless`; a
//! request lost part way would leave the ports behind it holding a demand
//! and an AR that the next request cannot return, the header carrying one
//! previous demand for every switch, and their leaked ARs can starve the
//! very flows that hold them). Only a pFabric queue (which evicts by
//! priority) can still lose one: it is then sent again one interval later
//! as a refresh of the header as far as it was stamped, and a lost FIN is
//! not sent again (the ports drop the task once none of its flows asks for
//! [`crate::spc::STALE_INTERVALS`] intervals).

use super::{Engine, Ev};
use crate::port::{Kind, Packet, N_QUEUES};
use crate::spc::{Request, SpcHeader, SpcParams, SpcPort};
use coflowkit_model::LinkKind;
use coflowkit_sched::host::{HostView, PathRates};

/// Payload bytes of a request or an echo: the SPC header (Baraat 4.4).
pub const SPC_HEADER_BYTES: u32 = 26;

/// The queue of a data packet whose task is in queue `q` by
/// `SpcPort::queue_of` (None: the port does not hold its task): one below,
/// so that queue 0 is left to requests, echoes and ACKs, which must not wait
/// behind data (a request late by more than an interval would let the
/// ports drop its task as stale); the classes from 6 on share queue 7, as
/// a task the port does not hold.
fn data_queue(q: Option<u8>) -> u8 {
    let last = N_QUEUES as u8 - 1;
    q.map_or(last, |q| (q + 1).min(last))
}

/// What Baraat's requests and ports did in a run.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SpcRunStats {
    /// Requests sent (FINs included).
    pub requests: u64,
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
}

/// The engine's Baraat state.
pub(crate) struct Spc {
    params: SpcParams,
    /// By link; `None` for a CPU.
    ports: Vec<Option<SpcPort>>,
    running: Vec<bool>,
    last_ps: Vec<u64>,
    /// Per port, bytes of packets no AR covers (requests, echoes, ACKs,
    /// handshakes) that arrived this interval.
    uncovered: Vec<u64>,
    /// Per port, the rate taken off its `vcap` for them last interval.
    reserve: Vec<u64>,
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
        let Some(params) = params else { return self };
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
            ports,
            running: vec![false; n],
            uncovered: vec![0; n],
            reserve: vec![0; n],
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
        let pkt = Packet {
            class: 0,
            ..self.packet(f, Kind::Request, 0, SPC_HEADER_BYTES)
        };
        self.send(pkt);
    }

    /// A packet arrives at `port`: counted; a request answered; a data
    /// packet queued by its task's class.
    pub(super) fn spc_arrival(&mut self, port: u32, pkt: &mut Packet) {
        let now = self.now;
        let task = match pkt.kind {
            Kind::Data => self.flows[pkt.flow as usize].task.map(|t| t.id),
            _ => None,
        };
        let spc = self.spc.as_mut().expect("spc");
        let Some(sp) = spc.ports[port as usize].as_mut() else {
            return;
        };
        sp.on_arrival(pkt.wire);
        if pkt.kind != Kind::Data {
            spc.uncovered[port as usize] += u64::from(pkt.wire);
        }
        if pkt.kind == Kind::Request {
            if let Some(h) = spc.flows[pkt.flow as usize].header.as_mut() {
                sp.on_request(h, &spc.params);
            }
        }
        if let Some(t) = task {
            pkt.class = data_queue(sp.queue_of(t));
        }
        if !spc.running[port as usize] {
            spc.running[port as usize] = true;
            spc.last_ps[port as usize] = now;
            let at = now + spc.params.interval_ps.max(1);
            self.push(at, Ev::SpcTick(port));
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
        // What no AR covers (requests, echoes, ACKs) comes off the
        // capacity Algorithm 1 shares, at last interval's rate: else the
        // flows' ARs fill the link and these packets overfill it.
        sp.vcap += std::mem::take(&mut spc.reserve[p]);
        let idle = sp.tick(t, queued, &spc.params);
        let bytes = std::mem::take(&mut spc.uncovered[p]);
        if !idle && t > 0 {
            let rate = (u128::from(bytes) * 8 * 1_000_000_000_000 / u128::from(t)) as u64;
            let r = rate.min(sp.vcap / 2);
            sp.vcap -= r;
            spc.reserve[p] = r;
        }
        if idle {
            spc.running[p] = false;
        } else {
            let at = now + spc.params.interval_ps.max(1);
            self.push(at, Ev::SpcTick(port));
        }
    }

    /// A request reached its receiver: the header goes back.
    pub(super) fn spc_echo(&mut self, f: u32) {
        let pkt = Packet {
            class: 0,
            ..self.packet(f, Kind::Echo, 0, SPC_HEADER_BYTES)
        };
        self.send(pkt);
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
            self.push(self.now, Ev::Kick(f));
        }
        self.spc_next(f);
    }

    /// Flow `f`'s next request: now if an interval has passed since the
    /// last one left, else when it has.
    fn spc_next(&mut self, f: u32) {
        let now = self.now;
        let spc = self.spc.as_mut().expect("spc");
        let slot = &mut spc.flows[f as usize];
        let at = now.max(slot.sent_ps + spc.params.interval_ps);
        if at == now {
            slot.due = None;
            self.spc_request(f);
        } else if slot.due != Some(at) {
            slot.due = Some(at);
            self.push(at, Ev::SpcRequest(f));
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

    /// Flow `f`'s next request leaves (or its FIN).
    fn spc_request(&mut self, f: u32) {
        let spc = self.spc.as_mut().expect("spc");
        let slot = &mut spc.flows[f as usize];
        let Some(h) = slot.header else { return };
        if slot.in_flight || slot.fin_sent {
            return;
        }
        let (done, open) = (slot.done, slot.open);
        let fl = &self.flows[f as usize];
        // A flow whose sender has sent its last new byte returns its rates
        // once its path grants it again (or its receiver has every byte):
        // held, it still asks, as a retransmission may be due.
        if done && (open || fl.finish.is_some()) {
            self.spc_send(f, h.fin());
            return;
        }
        // A flow its policy has let go (its receiver has every byte, its
        // last ACK is on the way) asks its last demand again; the heavy
        // flag is its tag's now.
        let demand = self
            .hosts
            .as_ref()
            .and_then(|hosts| hosts.policies[fl.src as usize].demand(f as u64));
        let mut next = h.next(demand.unwrap_or(h.demand));
        next.heavy = fl.task.is_some_and(|t| t.heavy);
        self.spc_send(f, next);
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
                self.spc_send(f, h.fin());
            }
            _ => {}
        }
    }

    /// A queue dropped flow `f`'s request or echo: the next request leaves
    /// one interval later (a FIN is not sent again).
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
        self.push(at, Ev::SpcRequest(f));
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
