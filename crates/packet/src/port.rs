//! An output port: up to 8 strict-priority FIFO queues in front of a link,
//! a drop-tail buffer over all of them, and ECN marking at an instantaneous
//! threshold K on arrival (DCTCP §3.1: "mark the CE codepoint if the queue
//! occupancy is greater than K upon its arrival").

use crate::config::Limit;
use std::collections::VecDeque;

/// Number of strict-priority queues per port; class 0 is served first.
pub const N_QUEUES: usize = 8;

/// What a packet is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// Payload bytes `seq..seq + len`.
    Data,
    /// A cumulative acknowledgement of every byte before `seq`.
    Ack,
    /// A connection request.
    Syn,
    /// Its answer.
    SynAck,
}

/// One packet in flight or in a queue.
#[derive(Debug, Clone, Copy)]
pub struct Packet {
    /// The flow (index in the workload's flow order).
    pub flow: u32,
    /// Data: the first byte; ACK: the next byte expected.
    pub seq: u64,
    /// Payload bytes.
    pub len: u32,
    /// Bytes on the wire.
    pub wire: u32,
    /// What it is.
    pub kind: Kind,
    /// The next link of its path to cross (index into the path).
    pub hop: u8,
    /// Its strict-priority class, 0 highest.
    pub class: u8,
    /// ECN-capable transport.
    pub ect: bool,
    /// Congestion experienced (marked by a queue).
    pub ce: bool,
    /// ECN echo, on ACKs.
    pub ece: bool,
    /// The sender's clock when it left (ps), echoed by the ACK (a
    /// timestamp option: RTT samples need no Karn rule).
    pub ts: u64,
    /// RCP's rate field Rp, bits/s: the least rate offered on the path so
    /// far (data, SYN), or the one echoed back (ACK, SYN-ACK); infinite
    /// when unset.
    pub rate: f32,
    /// RCP: the sender's RTT estimate, ns (0 before it has one).
    pub rtt_ns: u32,
}

impl Packet {
    /// Whether it travels from the flow's receiver to its sender.
    pub fn reverse(&self) -> bool {
        matches!(self.kind, Kind::Ack | Kind::SynAck)
    }
}

/// What happened to a packet offered to a port.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Admit {
    /// Queued as it came.
    Queued,
    /// Queued with its CE bit set.
    Marked,
    /// Dropped: the buffer is full.
    Dropped,
}

/// A port's counters.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct PortStats {
    /// Packets that left (per-hop transmissions).
    pub tx_packets: u64,
    /// Bytes that left.
    pub tx_bytes: u64,
    /// Packets dropped on arrival.
    pub drops: u64,
    /// Packets marked CE on arrival.
    pub marks: u64,
    /// The most bytes ever queued.
    pub max_bytes: u64,
}

/// An output port.
#[derive(Debug)]
pub struct Port {
    /// Link rate, bits/s.
    pub rate: f64,
    /// Propagation delay, ps.
    pub delay_ps: u64,
    /// The drop-tail limit over all queues; `None` for lossless.
    pub buffer: Option<Limit>,
    /// The ECN threshold, if it marks.
    pub ecn_k: Option<Limit>,
    /// Whether K is compared with the packet's own queue (else the port).
    pub ecn_per_queue: bool,
    queues: [VecDeque<Packet>; N_QUEUES],
    queue_bytes: [u64; N_QUEUES],
    bytes: u64,
    packets: u64,
    /// A packet is being serialized.
    pub busy: bool,
    /// Counters.
    pub stats: PortStats,
}

impl Port {
    /// An idle port.
    pub fn new(
        rate: f64,
        delay_ps: u64,
        buffer: Option<Limit>,
        ecn_k: Option<Limit>,
        ecn_per_queue: bool,
    ) -> Port {
        Port {
            rate,
            delay_ps,
            buffer,
            ecn_k,
            ecn_per_queue,
            queues: Default::default(),
            queue_bytes: [0; N_QUEUES],
            bytes: 0,
            packets: 0,
            busy: false,
            stats: PortStats::default(),
        }
    }

    /// Bytes queued (not counting the packet being serialized).
    pub fn queued_bytes(&self) -> u64 {
        self.bytes
    }

    /// Serialization time of `wire` bytes, ps (rounded up).
    pub fn tx_ps(&self, wire: u32) -> u64 {
        (wire as f64 * 8e12 / self.rate).ceil() as u64
    }

    /// Offers `p` to the queues: dropped if the buffer cannot take it,
    /// marked if ECN-capable and the queue it is compared with holds K or
    /// more.
    pub fn admit(&mut self, mut p: Packet) -> Admit {
        let q = p.class as usize;
        if let Some(b) = self.buffer {
            if b.overflows(self.bytes, self.packets, p.wire as u64) {
                self.stats.drops += 1;
                return Admit::Dropped;
            }
        }
        let mut admit = Admit::Queued;
        if let (true, Some(k)) = (p.ect, self.ecn_k) {
            let over = if self.ecn_per_queue {
                k.reached(self.queue_bytes[q], self.queues[q].len() as u64)
            } else {
                k.reached(self.bytes, self.packets)
            };
            if over {
                p.ce = true;
                self.stats.marks += 1;
                admit = Admit::Marked;
            }
        }
        self.queues[q].push_back(p);
        self.queue_bytes[q] += p.wire as u64;
        self.bytes += p.wire as u64;
        self.packets += 1;
        self.stats.max_bytes = self.stats.max_bytes.max(self.bytes);
        admit
    }

    /// The head of the highest-priority non-empty queue, taken out.
    pub fn pop(&mut self) -> Option<Packet> {
        let q = self.queues.iter().position(|q| !q.is_empty())?;
        let p = self.queues[q].pop_front()?;
        self.queue_bytes[q] -= p.wire as u64;
        self.bytes -= p.wire as u64;
        self.packets -= 1;
        self.stats.tx_packets += 1;
        self.stats.tx_bytes += p.wire as u64;
        Some(p)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pkt(class: u8, wire: u32, ect: bool) -> Packet {
        Packet {
            flow: 0,
            seq: 0,
            len: wire - 40,
            wire,
            kind: Kind::Data,
            hop: 0,
            class,
            ect,
            ce: false,
            ece: false,
            ts: 0,
            rate: f32::INFINITY,
            rtt_ns: 0,
        }
    }

    #[test]
    fn strict_priority_drop_tail_and_marking() {
        let mut p = Port::new(
            1e9,
            0,
            Some(Limit::Bytes(4500)),
            Some(Limit::Packets(1)),
            false,
        );
        assert_eq!(p.admit(pkt(3, 1500, true)), Admit::Queued);
        assert_eq!(p.admit(pkt(1, 1500, true)), Admit::Marked);
        assert_eq!(p.admit(pkt(2, 1500, false)), Admit::Queued);
        assert_eq!(p.admit(pkt(0, 100, true)), Admit::Dropped);
        let order: Vec<u8> = std::iter::from_fn(|| p.pop()).map(|x| x.class).collect();
        assert_eq!(order, vec![1, 2, 3]);
        assert_eq!(p.stats.drops, 1);
        assert_eq!(p.stats.marks, 1);
        assert_eq!(p.stats.tx_packets, 3);
        assert_eq!(p.tx_ps(1500), 12_000_000);
    }

    #[test]
    fn per_queue_k_looks_at_the_packets_own_queue() {
        let mut p = Port::new(1e10, 0, None, Some(Limit::Packets(1)), true);
        assert_eq!(p.admit(pkt(0, 1500, true)), Admit::Queued);
        assert_eq!(p.admit(pkt(1, 1500, true)), Admit::Queued);
        assert_eq!(p.admit(pkt(1, 1500, true)), Admit::Marked);
    }
}
