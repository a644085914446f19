//! pFabric's switch queue (Alizadeh et al., "pFabric: Minimal
//! Near-Optimal Datacenter Transport", SIGCOMM 2013).
//!
//! §3-§4: every packet carries one number, its priority; pFabric sets it
//! to the flow's remaining size when the packet is sent, so that the
//! network approximates shortest-remaining-processing-time first. Here the
//! number is the flow's unacknowledged bytes (size − the cumulative ACK
//! point) when the packet left its sender; ACKs, SYNs and SYN-ACKs carry 0,
//! the most urgent (a 32-bit number: remaining sizes of 4 GiB and more
//! tie). A lower number is more urgent; a packet's strict
//! priority class (0 highest) comes before its number, so without classes
//! (all 0) the order is pFabric's alone.
//!
//! The switch port (§4.1) keeps a small buffer and two rules:
//!
//! * **Priority scheduling.** When the link frees, find the most urgent
//!   packet in the buffer and send the *earliest-arrived* packet of that
//!   packet's flow ("starvation prevention", §4.1: a flow's later packets
//!   carry smaller remaining sizes, and sending them first would reorder
//!   the flow and leave its early packets behind). Ties in urgency go to
//!   the earliest arrival.
//! * **Priority dropping.** A packet arriving at a full buffer is dropped
//!   if it is no more urgent than the least urgent packet queued;
//!   otherwise the least urgent queued packet (the latest arrival among
//!   equals) is dropped to make room, again until the packet fits.
//!
//! The buffer is small, so both rules scan it (§4.1 argues a switch can do
//! the same with a comparator tree over ~2 BDP of packets): O(n) per
//! packet. pFabric's ports do not mark ECN. The default buffer is §5's 36
//! KB (2 BDP of its 10 Gbit/s fabric, 24 full packets), knob
//! `pfabric_buffer`.
//!
//! The end points' path numbers (§4.2, §5: the first window of one BDP,
//! the fixed timeout) are the transport's: `crate::transport::pfabric`.
//!
//! **Sources, checked (2026-11-25).** Of the paper's own text only the
//! abstract could be read from this project's search corpora (the stored
//! transcriptions stop in §1): "packets carry a single priority number set
//! independently by each flow; switches have very small buffers and
//! implement a very simple priority-based scheduling/dropping mechanism.
//! Rate control is also correspondingly simpler; flows start at line rate
//! and throttle back only under high and persistent packet loss". §4.1's
//! two rules are as a reading-group summary of the paper states them
//! (dequeue "the earliest packet from the flow that has the highest
//! priority packet"; an arrival at a full buffer "with priority less than
//! or equal to the lowest priority packet in the buffer" is dropped, else
//! the lowest-priority packet is). §5's numbers (36 KB, 12 packets,
//! 14.6 µs, 45 µs) could **not** be read in the paper; they are checked
//! against the pFabric ns-2 simulation scripts as later projects reuse
//! them (public code, e.g. the PIAS scripts): buffer 2·BDP
//! (`queueSize [expr 2*$bdp]`), first window one BDP (`windowInit_ $bdp`),
//! timeout 3 round trips (`minrto_ [expr 3*$rttp/1000]`), probe mode after
//! 5 consecutive timeouts (`prob_cap_ 5`), duplicate ACKs ignored, SACK
//! receivers; 2·BDP of 14.6 µs at 10 Gbit/s is 36.5 KB, 24 full packets.
//! One rule of those scripts is not modelled here: the window is capped
//! (`maxcwnd_` 2·BDP − 1 packets, or the buffer less one), where this
//! sender's grows by additive increase without a cap.
//!
//! Correctness properties: a port's byte and packet counts equal the sums
//! over its buffer after every admit and pop (checked by the port tests);
//! the packet sent is always its flow's earliest queued packet
//! (`PfabricQueue::pop_urgent`); a queued packet is dropped only for a
//! strictly more urgent arrival (`PfabricQueue`'s `admit`).

use super::{Admit, QueueDisc};
use crate::config::values::parse_limit;
use crate::config::Knob;
use crate::config::Limit;
use crate::packet::Packet;
use std::collections::VecDeque;

/// A packet's urgency in a pFabric queue: its class, then its remaining
/// bytes; lower is more urgent.
pub fn urgency(p: &Packet) -> (u8, u32) {
    (p.class, p.prio)
}

fn same_flow(a: &Packet, b: &Packet) -> bool {
    a.flow == b.flow && a.reverse() == b.reverse()
}

/// One port's buffer in arrival order, served by pFabric's rules.
#[derive(Debug, Default)]
pub struct PfabricQueue {
    pkts: VecDeque<Packet>,
    /// Its limit; `None` for lossless.
    buffer: Option<Limit>,
    bytes: u64,
}

impl PfabricQueue {
    /// An empty buffer of `buffer` (`None`: lossless).
    pub fn new(buffer: Option<Limit>) -> PfabricQueue {
        PfabricQueue {
            buffer,
            ..PfabricQueue::default()
        }
    }

    /// Packets queued.
    pub fn len(&self) -> usize {
        self.pkts.len()
    }

    /// Whether nothing is queued.
    pub fn is_empty(&self) -> bool {
        self.pkts.is_empty()
    }

    /// Appends an arrival (whatever the buffer).
    pub fn push(&mut self, p: Packet) {
        self.bytes += p.wire as u64;
        self.pkts.push_back(p);
    }

    /// The least urgent queued packet (the latest arrival among equals).
    pub fn least_urgent(&self) -> Option<&Packet> {
        self.least_urgent_at().map(|i| &self.pkts[i])
    }

    fn least_urgent_at(&self) -> Option<usize> {
        let mut best: Option<(usize, (u8, u32))> = None;
        for (i, p) in self.pkts.iter().enumerate() {
            let u = urgency(p);
            if best.is_none_or(|(_, b)| u >= b) {
                best = Some((i, u));
            }
        }
        best.map(|(i, _)| i)
    }

    /// Takes out the least urgent queued packet (to make room).
    pub fn evict(&mut self) -> Option<Packet> {
        let i = self.least_urgent_at()?;
        let v = self.pkts.remove(i)?;
        self.bytes -= v.wire as u64;
        Some(v)
    }

    /// Takes out the earliest packet of the flow whose packet is the most
    /// urgent (pFabric §4.1's dequeue with starvation prevention).
    pub fn pop_urgent(&mut self) -> Option<Packet> {
        let mut best: Option<(usize, (u8, u32))> = None;
        for (i, p) in self.pkts.iter().enumerate() {
            let u = urgency(p);
            if best.is_none_or(|(_, b)| u < b) {
                best = Some((i, u));
            }
        }
        let (i, _) = best?;
        let urgent = self.pkts[i];
        let first = self.pkts.iter().position(|p| same_flow(p, &urgent))?;
        let p = self.pkts.remove(first)?;
        self.bytes -= p.wire as u64;
        Some(p)
    }
}

impl QueueDisc for PfabricQueue {
    /// pFabric §4.1's admission: while `p` does not fit, drop the least
    /// urgent queued packet (into `evicted`) if `p` is more urgent, else
    /// drop `p`. Never marks ECN. Kept out of line so the strict-priority
    /// path stays as small as it was.
    #[inline(never)]
    fn admit(&mut self, p: Packet, evicted: &mut Vec<Packet>) -> Admit {
        if let Some(b) = self.buffer {
            while b.overflows(self.bytes, self.pkts.len() as u64, p.wire as u64) {
                match self.least_urgent() {
                    Some(v) if urgency(v) > urgency(&p) => {
                        let v = self.evict().expect("a queued packet");
                        evicted.push(v);
                    }
                    _ => return Admit::Dropped,
                }
            }
        }
        self.push(p);
        Admit::Queued
    }

    /// pFabric §4.1's dequeue, out of line like its admission.
    #[inline(never)]
    fn pop(&mut self, _now: u64) -> Option<Packet> {
        self.pop_urgent()
    }

    fn bytes(&self) -> u64 {
        self.bytes
    }

    /// pFabric's queue is not looked at: the engine does not index it.
    fn holds(&self, _flow: u32, _byte: u64) -> bool {
        false
    }

    /// It drops queued packets and serves a flow's later packets first.
    fn indexed(&self) -> bool {
        false
    }
}

/// pFabric's switch buffer.
pub const KNOBS: &[Knob] = &[Knob {
    name: "pfabric_buffer",
    default: "36KB",
    unit: "size",
    help: "each pfabric switch port's buffer: bytes or packets (36KB)",
    set: |c, key, v| {
        c.pfabric_buffer = parse_limit(key, v)?;
        Ok(())
    },
}];

#[cfg(test)]
mod tests {
    use super::*;
    use crate::packet::Kind;

    fn pkt(flow: u32, seq: u64, prio: u32) -> Packet {
        Packet {
            flow,
            seq,
            len: 1460,
            wire: 1500,
            kind: Kind::Data,
            hop: 0,
            class: 0,
            ect: false,
            ce: false,
            ece: false,
            ts: 0,
            rate: f32::INFINITY,
            rtt_ns: 0,
            prio,
            spc: false,
        }
    }

    fn order(q: &mut PfabricQueue) -> Vec<(u32, u64)> {
        std::iter::from_fn(|| q.pop_urgent())
            .map(|p| (p.flow, p.seq))
            .collect()
    }

    #[test]
    fn serves_the_most_urgent_flow_earliest_packet_first() {
        // Flow 1 (remaining 9000, then 7540) arrived before flow 2 (3000);
        // flow 3 ties with flow 2 but came later.
        let mut q = PfabricQueue::new(None);
        q.push(pkt(1, 0, 9000));
        q.push(pkt(2, 0, 3000));
        q.push(pkt(1, 1460, 7540));
        q.push(pkt(3, 0, 3000));
        q.push(pkt(2, 1460, 1540));
        assert_eq!(
            order(&mut q),
            vec![(2, 0), (2, 1460), (3, 0), (1, 0), (1, 1460)]
        );
    }

    #[test]
    fn starvation_prevention_sends_the_flows_earliest_packet() {
        // The flow's later packet is the most urgent (fewer bytes left
        // when it was sent), yet its earliest queued packet goes first.
        let mut q = PfabricQueue::new(None);
        q.push(pkt(1, 0, 5000));
        q.push(pkt(2, 0, 4000));
        q.push(pkt(1, 1460, 3540));
        assert_eq!(order(&mut q), vec![(1, 0), (1, 1460), (2, 0)]);
    }

    #[test]
    fn acks_go_first_and_a_flows_acks_are_not_its_data() {
        let mut q = PfabricQueue::new(None);
        q.push(pkt(1, 0, 100));
        let mut ack = pkt(1, 0, 0);
        ack.kind = Kind::Ack;
        q.push(ack);
        let first = q.pop_urgent().unwrap();
        assert_eq!(first.kind, Kind::Ack);
    }

    #[test]
    fn least_urgent_is_the_latest_of_the_largest() {
        let mut q = PfabricQueue::new(None);
        q.push(pkt(1, 0, 9000));
        q.push(pkt(2, 0, 3000));
        q.push(pkt(3, 0, 9000));
        assert_eq!(q.least_urgent().map(|p| p.flow), Some(3));
        assert_eq!(q.evict().map(|p| p.flow), Some(3));
        assert_eq!(q.evict().map(|p| p.flow), Some(1));
        assert_eq!(q.len(), 1);
    }
}
