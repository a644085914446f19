//! Strict-priority queues: up to 8 FIFO queues in front of a link, a
//! drop-tail buffer over all of them, and ECN marking at an instantaneous
//! threshold K on arrival (DCTCP §3.1: "mark the CE codepoint if the queue
//! occupancy is greater than K upon its arrival"). The knobs add: a buffer
//! per queue instead (`buffer_per=queue`), K compared with the packet's own
//! queue (`ecn_per_queue`), a guaranteed rate per class (`class_min`, HTB
//! leaves under strict priority), every class in one FIFO (a NIC without
//! priority queues, `host_prio=fifo`), and TAFE's first-come-first-served
//! order of flows inside a class ([`StrictQueues::set_task_fifo`]).

use super::{Admit, QueueDisc};
use crate::config::values::{host_queue_both, off, parse_limit, parse_u32};
use crate::config::{bad, HostQueue, Knob, Limit};
use crate::packet::{Kind, Packed, Packer, Packet, N_QUEUES};
use std::collections::{BTreeMap, VecDeque};

/// A port's strict-priority queues; class 0 is served first.
///
/// Laid out by use (`repr(C)`, cache-line aligned): the knobs every
/// admission and dequeue reads come first, in one cache line, the whole of
/// what a packet that finds the port idle reads ([`StrictQueues::pass`]);
/// then the port's counts beside class 0's packets and counts, in the
/// second line, and each other class's packets beside its counts; the
/// guaranteed rate's clocks last. A packet queued at a port then touches
/// two lines of its queues (class 0) and one passing it, not the eight or
/// so the fields spread over when the compiler ordered them: on a fabric
/// of thousands of ports, whose queues do not stay in the core's caches,
/// the lines touched per hop are what a packet costs (issue 69).
#[derive(Debug)]
#[repr(C, align(64))]
pub struct StrictQueues {
    /// The drop-tail limit over all queues; `None` for lossless.
    pub buffer: Option<Limit>,
    /// The ECN threshold, if it marks.
    pub ecn_k: Option<Limit>,
    /// Each queue's guaranteed rate, bits/s (`class_min`), as an HTB leaf's
    /// `rate` under strict `prio` borrowing; `None`: strict priority only.
    pub class_min_bps: Option<f64>,
    /// With flows first come, first served inside a class (TAFE): the
    /// classes' packets by flow order instead of `classes`.
    by_order: Option<Box<ByOrder>>,
    /// Bit `q` is set while queue `q` holds a packet: a dequeue finds the
    /// highest-priority non-empty queue without reading every count.
    nonempty: u8,
    /// Every class in one FIFO (queue 0): a NIC without priority queues
    /// (`host_prio=fifo`). The packets keep their class for the next hop.
    pub one_fifo: bool,
    /// Whether K is compared with the packet's own queue (else the port).
    pub ecn_per_queue: bool,
    /// `buffer` limits each strict-priority queue on its own instead of
    /// all of them together (`buffer_per=queue`).
    pub buffer_per_queue: bool,
    bytes: u64,
    packets: u64,
    classes: [Class; N_QUEUES],
    /// With `class_min_bps`: when each queue is next within its guarantee
    /// (ps); before then it sends only by borrowing.
    pub(crate) next_green: [u64; N_QUEUES],
    /// Keeps whole the queued packets that do not fit a [`Packed`].
    packer: Packer,
}

/// One strict-priority queue: its packets, 32 bytes each ([`Packed`];
/// with `by_order`, its count only) and their bytes and number, side by
/// side.
#[derive(Debug, Default)]
struct Class {
    packets: VecDeque<Packed>,
    bytes: u64,
    count: u64,
}

impl StrictQueues {
    /// Empty queues with drop-tail `buffer` and ECN threshold `ecn_k`
    /// (compared with the packet's own queue if `ecn_per_queue`).
    pub fn new(buffer: Option<Limit>, ecn_k: Option<Limit>, ecn_per_queue: bool) -> StrictQueues {
        StrictQueues {
            buffer,
            ecn_k,
            class_min_bps: None,
            by_order: None,
            nonempty: 0,
            one_fifo: false,
            ecn_per_queue,
            buffer_per_queue: false,
            bytes: 0,
            packets: 0,
            classes: Default::default(),
            next_green: [0; N_QUEUES],
            packer: Packer::default(),
        }
    }

    /// Takes queue `q`'s FIFO's `i`-th packet out (its first: a dequeue).
    #[inline]
    fn remove(&mut self, q: usize, i: usize) -> Option<Packet> {
        let ring = &mut self.classes[q].packets;
        let k = if i == 0 {
            ring.pop_front()
        } else {
            ring.remove(i)
        }?;
        Some(self.packer.take(&k))
    }

    /// Each queue's packets (the counts a dequeue's `nonempty` bits
    /// follow).
    #[cfg(test)]
    pub(crate) fn queue_packets(&self) -> [u64; N_QUEUES] {
        std::array::from_fn(|q| self.classes[q].count)
    }

    /// Counts `p` out of queue `q`, clearing its `nonempty` bit when it
    /// empties; an emptied queue starts again at the front of its buffer,
    /// so that a port whose queue is mostly empty keeps reusing one cache
    /// line of it instead of cycling through the whole ring.
    #[inline]
    fn took(&mut self, q: usize, p: &Packet) {
        let c = &mut self.classes[q];
        c.bytes -= p.wire as u64;
        c.count -= 1;
        if c.count == 0 {
            self.nonempty &= !(1 << q);
            c.packets.clear();
        }
        self.bytes -= p.wire as u64;
        self.packets -= 1;
    }

    /// Makes the queues serve the flows of a class first come, first
    /// served, one after the other (TAFE, a `tafe` run's ports): `pop`
    /// takes, in the highest-priority non-empty queue, the earliest-queued
    /// packet of the least `order_of` (the engine gives a flow's index,
    /// which follows task release order; Algorithm 1 time-stamps each flow
    /// as it arrives and "the first flow in the highest non-empty priority
    /// queue is served", IV-A2). A queue of one flow is FIFO. Each class
    /// keeps its packets by `order_of`, so a dequeue costs O(log flows)
    /// where a scan of the queue (`StrictQueues::pop_task_fifo`, the slow
    /// reference) costs O(packets). Empty queues only.
    pub fn set_task_fifo(&mut self, order_of: fn(&Packet) -> u32) {
        debug_assert_eq!(self.packets, 0, "a port turns task-FIFO while empty");
        self.by_order = Some(Box::new(ByOrder {
            order_of,
            classes: Default::default(),
            spare: vec![],
        }));
    }

    /// `p` offered to the empty queues and taken straight back out, as
    /// [`QueueDisc::admit`] then [`QueueDisc::pop`] at `now` would (the
    /// same drop, mark and guaranteed-rate accounting), without writing
    /// the class's packets or counts: a packet that finds its port idle
    /// leaves at once, and at a port of a large fabric the class's line
    /// and its ring are two cache misses (issue 69). Returns the packet as
    /// it leaves, or as it came when dropped; `None` with task-FIFO
    /// queues (their sub-queues keep spare buffers), `p` not offered.
    #[inline]
    pub fn pass(&mut self, mut p: Packet, now: u64) -> Option<(Admit, Packet)> {
        debug_assert_eq!(self.packets, 0, "a packet passes empty queues only");
        if self.by_order.is_some() {
            return None;
        }
        let q = if self.one_fifo { 0 } else { p.class as usize };
        if let (Some(b), false) = (self.buffer, p.lossless()) {
            if b.overflows(0, 0, p.wire as u64) {
                return Some((Admit::Dropped, p));
            }
        }
        let mut admit = Admit::Queued;
        if let (true, Some(k)) = (p.ect, self.ecn_k) {
            if k.reached(0, 0) {
                p.ce = true;
                admit = Admit::Marked;
            }
        }
        if let Some(r) = self.class_min_bps {
            // `pop` takes queue `q`, the only non-empty one, within its
            // guarantee or not.
            let at_min = (p.wire as f64 * 8e12 / r).ceil() as u64;
            self.next_green[q] = self.next_green[q].max(now).saturating_add(at_min);
        }
        Some((admit, p))
    }

    /// The slow reference for [`StrictQueues::set_task_fifo`]'s dequeue,
    /// on plain FIFO queues: scans the highest-priority non-empty queue for
    /// the earliest-queued packet of the least `order_of`.
    #[cfg(test)]
    pub fn pop_task_fifo(&mut self, order_of: impl Fn(&Packet) -> u32) -> Option<Packet> {
        assert!(self.by_order.is_none());
        let q = self.classes.iter().position(|c| !c.packets.is_empty())?;
        let mut best = (u32::MAX, 0);
        for (i, p) in self.classes[q].packets.iter().enumerate() {
            let k = order_of(&self.packer.peek(p));
            if k < best.0 {
                best = (k, i);
            }
        }
        let p = self.remove(q, best.1)?;
        self.took(q, &p);
        Some(p)
    }
}

impl QueueDisc for StrictQueues {
    /// Offers `p` to the queues: dropped if the buffer (the port's, or
    /// with `buffer_per_queue` its own queue's) cannot take it, marked if
    /// ECN-capable and the queue it is compared with holds K or more.
    #[inline]
    fn admit(&mut self, mut p: Packet, _evicted: &mut Vec<Packet>) -> Admit {
        let q = if self.one_fifo { 0 } else { p.class as usize };
        if let (Some(b), false) = (self.buffer, p.lossless()) {
            let (bytes, packets) = if self.buffer_per_queue {
                (self.classes[q].bytes, self.classes[q].count)
            } else {
                (self.bytes, self.packets)
            };
            if b.overflows(bytes, packets, p.wire as u64) {
                return Admit::Dropped;
            }
        }
        let mut admit = Admit::Queued;
        if let (true, Some(k)) = (p.ect, self.ecn_k) {
            let over = if self.ecn_per_queue {
                k.reached(self.classes[q].bytes, self.classes[q].count)
            } else {
                k.reached(self.bytes, self.packets)
            };
            if over {
                p.ce = true;
                admit = Admit::Marked;
            }
        }
        match &mut self.by_order {
            Some(b) => b.push(q, p),
            None => {
                let k = self.packer.pack(p);
                self.classes[q].packets.push_back(k);
            }
        }
        let c = &mut self.classes[q];
        c.bytes += p.wire as u64;
        c.count += 1;
        self.nonempty |= 1 << q;
        self.bytes += p.wire as u64;
        self.packets += 1;
        admit
    }

    /// At `now` (ps): with `class_min_bps`, first the highest-priority
    /// non-empty queue within its guaranteed rate (HTB serves a leaf under
    /// its `rate` before any leaf that borrows), else strict priority;
    /// every packet a queue sends is counted against its guarantee, which
    /// keeps no credit for time it did not use. With
    /// [`StrictQueues::set_task_fifo`], the earliest-queued packet of the
    /// first flow of that queue.
    #[inline]
    fn pop(&mut self, now: u64) -> Option<Packet> {
        debug_assert_eq!(
            self.nonempty,
            (0..N_QUEUES).fold(0, |m, q| m | (((self.classes[q].count > 0) as u8) << q)),
            "the nonempty bits follow the counts"
        );
        if self.nonempty == 0 {
            return None;
        }
        let strict = self.nonempty.trailing_zeros() as usize;
        let q = match (self.class_min_bps, &self.by_order) {
            (Some(_), None) => (0..N_QUEUES)
                .find(|&q| self.nonempty & (1 << q) != 0 && now >= self.next_green[q])
                .unwrap_or(strict),
            _ => strict,
        };
        let p = match &mut self.by_order {
            Some(b) => b.pop(q),
            None => self.remove(q, 0),
        }?;
        if let Some(r) = self.class_min_bps {
            let at_min = (p.wire as f64 * 8e12 / r).ceil() as u64;
            self.next_green[q] = self.next_green[q].max(now).saturating_add(at_min);
        }
        self.took(q, &p);
        Some(p)
    }

    fn bytes(&self) -> u64 {
        self.bytes
    }

    fn bounded(&self) -> bool {
        self.buffer.is_some()
    }

    fn holds(&self, flow: u32, byte: u64) -> bool {
        let carries = |p: &Packet| {
            p.kind == Kind::Data && p.flow == flow && p.seq <= byte && byte < p.seq + p.len as u64
        };
        match &self.by_order {
            Some(b) => b
                .classes
                .iter()
                .flat_map(|c| c.values())
                .flatten()
                .any(carries),
            None => self
                .classes
                .iter()
                .flat_map(|c| &c.packets)
                .any(|k| carries(&self.packer.peek(k))),
        }
    }

    fn serve_by_order(&mut self, order_of: fn(&Packet) -> u32) {
        self.set_task_fifo(order_of);
    }
}

/// Task-FIFO queues ([`StrictQueues::set_task_fifo`]): per class, its
/// packets by their flow's order, each flow's in arrival order.
///
/// Correctness properties: every sub-queue in `classes` is non-empty
/// (`pop` removes one when it empties, keeping its buffer in `spare`); the
/// packets of a class are those `StrictQueues::queue_packets` counts
/// (checked against the scan in `task_fifo_matches_the_scan`).
#[derive(Debug)]
struct ByOrder {
    order_of: fn(&Packet) -> u32,
    classes: [BTreeMap<u32, VecDeque<Packet>>; N_QUEUES],
    /// Emptied sub-queues, reused so that a flow's packets do not allocate.
    spare: Vec<VecDeque<Packet>>,
}

impl ByOrder {
    fn push(&mut self, q: usize, p: Packet) {
        let spare = &mut self.spare;
        self.classes[q]
            .entry((self.order_of)(&p))
            .or_insert_with(|| spare.pop().unwrap_or_default())
            .push_back(p);
    }

    fn pop(&mut self, q: usize) -> Option<Packet> {
        let mut first = self.classes[q].first_entry()?;
        let p = first.get_mut().pop_front();
        if first.get().is_empty() {
            self.spare.push(first.remove());
        }
        p
    }
}

/// The strict-priority queues' knobs: buffers, ECN thresholds, guaranteed
/// rates, and the host NIC's queue.
pub const KNOBS: &[Knob] = &[
    Knob {
        name: "buffer",
        default: "170KB",
        unit: "size, inf or shared:bytes",
        help: "switch port buffer: bytes (170KB) or packets (100p), or inf; or shared:BYTES, one pool per switch with dynamic thresholds",
        set: |c, key, v| {
            let t = v.trim().to_ascii_lowercase();
            c.shared_buffer = None;
            if let Some(pool) = t.strip_prefix("shared:") {
                match parse_limit(key, pool)? {
                    Limit::Bytes(b) => c.shared_buffer = Some(b),
                    Limit::Packets(_) => {
                        return Err(bad(
                            key,
                            format!("'{v}': a shared pool is sized in bytes (shared:4MB)"),
                        ))
                    }
                }
            } else {
                c.switch_buffer = match t.as_str() {
                    "inf" | "unbounded" => None,
                    _ => Some(parse_limit(key, v)?),
                }
            };
            Ok(())
        },
    },
    Knob {
        name: "buffer_per",
        default: "port",
        unit: "choice",
        help: "port or queue: buffer is each switch port's, its 8 queues together, or each queue's own (port)",
        set: |c, key, v| {
            c.buffer_per_queue = match v.trim() {
                "port" => false,
                "queue" => true,
                _ => return Err(bad(key, format!("'{v}': port or queue"))),
            };
            Ok(())
        },
    },
    Knob {
        name: "class_min",
        default: "off",
        unit: "fraction or off",
        help: "off, or each strict-priority queue's guaranteed fraction of its link, served first while within it (HTB's leaf rate; the testbed 0.001) (off)",
        set: |c, key, v| {
            c.class_min = if off(v) {
                None
            } else {
                let f: f64 = v
                .trim()
                .parse()
                .map_err(|_| bad(key, format!("'{v}' is not a number")))?;
                if !(f > 0.0 && f <= 1.0) {
                    return Err(bad(key, format!("{f} is not in (0, 1]")));
                }
                Some(f)
            };
            Ok(())
        },
    },
    Knob {
        name: "ecn_k",
        default: "",
        unit: "size or off",
        help: "ECN threshold K: bytes or packets (default 20p up to 1 Gbit/s, 65p above), or off",
        set: |c, key, v| {
            c.ecn_k = if off(v) {
                Some(Limit::Packets(u64::MAX))
            } else {
                Some(parse_limit(key, v)?)
            };
            Ok(())
        },
    },
    Knob {
        name: "ecn_per",
        default: "port",
        unit: "choice",
        help: "port or queue: what K is compared with (port)",
        set: |c, key, v| {
            c.ecn_per_queue = match v.trim() {
                "port" => false,
                "queue" => true,
                _ => return Err(bad(key, format!("'{v}': port or queue"))),
            };
            Ok(())
        },
    },
    Knob {
        name: "host_queue",
        default: "unbounded",
        unit: "choice",
        help: "unbounded, droptail:N (packets), ecn:K (packets, unbounded) or droptail:N+ecn:K (both, as a switch port) (unbounded)",
        set: |c, key, v| {
            let s = v.trim().to_ascii_lowercase();
            c.host_queue = if s == "unbounded" || s == "lossless" {
                HostQueue::Unbounded
            } else if let Some((a, b)) = s.split_once('+') {
                host_queue_both(key, v, a.trim(), b.trim())?
            } else if let Some(n) = s.strip_prefix("droptail:") {
                HostQueue::DropTail(parse_u32(key, n, 1)? as u64)
            } else if let Some(n) = s.strip_prefix("ecn:") {
                HostQueue::Ecn(parse_u32(key, n, 1)? as u64)
            } else {
                return Err(bad(
                    key,
                    format!(
                        "'{v}': unbounded, droptail:N, ecn:K or droptail:N+ecn:K (packets)"
                    ),
                ));
            };
            Ok(())
        },
    },
    Knob {
        name: "host_prio",
        default: "strict",
        unit: "choice",
        help: "strict (the NIC's 8 strict-priority queues) or fifo (one FIFO for every class; the switches keep theirs) (strict)",
        set: |c, key, v| {
            c.host_fifo = match v.trim().to_ascii_lowercase().as_str() {
                "strict" => false,
                "fifo" => true,
                _ => return Err(bad(key, format!("'{v}': strict or fifo"))),
            };
            Ok(())
        },
    },
];

#[cfg(test)]
mod tests {
    use super::*;
    use crate::packet::tests::pkt;

    #[test]
    fn what_a_passing_packet_reads_is_in_the_first_line() {
        // `pass` and `pop` read these on every packet (the type's layout).
        use std::mem::offset_of;
        let last = [
            offset_of!(StrictQueues, buffer) + size_of::<Option<Limit>>(),
            offset_of!(StrictQueues, ecn_k) + size_of::<Option<Limit>>(),
            offset_of!(StrictQueues, class_min_bps) + size_of::<Option<f64>>(),
            offset_of!(StrictQueues, by_order) + size_of::<Option<Box<ByOrder>>>(),
            offset_of!(StrictQueues, nonempty) + 1,
            offset_of!(StrictQueues, one_fifo) + 1,
            offset_of!(StrictQueues, ecn_per_queue) + 1,
            offset_of!(StrictQueues, buffer_per_queue) + 1,
        ];
        assert!(last.iter().all(|&end| end <= 64), "{last:?}");
        // The port's counts beside class 0's, in the second line.
        assert!(offset_of!(StrictQueues, bytes) >= 64);
        assert!(offset_of!(StrictQueues, classes) + size_of::<Class>() <= 128);
    }

    #[test]
    fn a_class_within_its_guaranteed_rate_goes_first() {
        // 1 Gbit/s, each queue guaranteed 1/1000 (1 Mbit/s): a 1000-byte
        // packet is 8 us on the link and 8 ms of a guarantee. At 0 every
        // queue is within its guarantee: class 0 first (green again at 8
        // ms). At 8 us class 7 is the one within it and goes ahead of class
        // 0 (green again at 8.008 ms); at 16 us class 0 borrows (green at
        // 16 ms). At 8 ms neither is green: strict priority, class 0; then
        // class 7 alone.
        let mut p = StrictQueues::new(None, None, false);
        p.class_min_bps = Some(1e6);
        for class in [0, 0, 0, 7, 7] {
            p.admit(pkt(class, 1000, false), &mut vec![]);
        }
        let order: Vec<u8> = [0, 8_000_000, 16_000_000, 8_000_000_000, 8_000_008_000]
            .iter()
            .map(|&t| p.pop(t).unwrap().class)
            .collect();
        assert_eq!(order, vec![0, 7, 0, 0, 7]);
        assert_eq!(p.next_green[0], 24_000_000_000);
        assert_eq!(p.next_green[7], 16_008_000_000);
        // Without a guarantee: strict priority.
        let mut s = StrictQueues::new(None, None, false);
        for class in [0, 7, 0] {
            s.admit(pkt(class, 1000, false), &mut vec![]);
        }
        let order: Vec<u8> = std::iter::from_fn(|| s.pop(5)).map(|x| x.class).collect();
        assert_eq!(order, vec![0, 0, 7]);
    }

    #[test]
    fn a_buffer_per_queue_holds_each_class_apart() {
        // 3000 bytes, packets of 1000: the port's buffer takes three packets
        // of any classes, a buffer per queue three of each class.
        let offer = |per_queue: bool| {
            let mut p = StrictQueues::new(Some(Limit::Bytes(3000)), None, false);
            p.buffer_per_queue = per_queue;
            [0, 0, 0, 0, 5, 5, 5, 5, 0]
                .map(|class| p.admit(pkt(class, 1000, false), &mut vec![]) != Admit::Dropped)
        };
        let (t, f) = (true, false);
        assert_eq!(offer(false), [t, t, t, f, f, f, f, f, f]);
        assert_eq!(offer(true), [t, t, t, f, t, t, t, f, f]);
    }

    #[test]
    fn task_fifo_serves_the_earliest_task_of_the_highest_class_first() {
        let mut p = StrictQueues::new(None, None, false);
        let pk = |flow: u32, class: u8| Packet {
            flow,
            ..pkt(class, 100, false)
        };
        for (flow, class) in [(3, 1), (2, 1), (3, 1), (1, 2), (0, 1)] {
            assert_eq!(p.admit(pk(flow, class), &mut vec![]), Admit::Queued);
        }
        // Task = flow / 2: flows 0-1 are task 0, 2-3 task 1.
        let order: Vec<u32> = std::iter::from_fn(|| p.pop_task_fifo(|q| q.flow / 2))
            .map(|q| q.flow)
            .collect();
        assert_eq!(order, vec![0, 3, 2, 3, 1]);
        assert_eq!(p.bytes(), 0);
    }
}
