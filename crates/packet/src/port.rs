//! An output port: up to 8 strict-priority FIFO queues in front of a link,
//! a drop-tail buffer over all of them, and ECN marking at an instantaneous
//! threshold K on arrival (DCTCP §3.1: "mark the CE codepoint if the queue
//! occupancy is greater than K upon its arrival"); or, as a switch port
//! with `queues=pfabric`, pFabric's one priority queue with priority
//! dropping ([`crate::pfabric`]).
//!
//! A switch may instead hold one buffer for all its output ports, a
//! [`SharedPool`] with dynamic thresholds (Choudhury and Hahne, "Dynamic
//! queue length thresholds for shared-memory packet switches", IEEE/ACM
//! ToN 6(2), 1998, §II): a packet joins a port's queue only while that
//! queue holds less than T = α·(B − Q), B the pool's bytes and Q the bytes
//! in use in the whole pool. With S ports overloaded at once, each settles
//! where q = α(B − S·q), at q = αB/(1 + Sα), which keeps B/(1 + Sα) of
//! the pool free for a port that becomes busy (§III).

use crate::config::Limit;
use crate::packet::{Kind, Packet};
use crate::pfabric::{urgency, PfabricQueue};
use std::collections::{BTreeMap, VecDeque};

/// Number of strict-priority queues per port; class 0 is served first.
pub const N_QUEUES: usize = 8;

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
    /// Payload bytes of data that left, by strict-priority class (what a
    /// host policy's demotion put in each queue).
    pub class_payload: [u64; N_QUEUES],
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
    /// `buffer` limits each strict-priority queue on its own instead of
    /// all of them together (`buffer_per=queue`).
    pub buffer_per_queue: bool,
    /// Each queue's guaranteed rate, bits/s (`class_min`), as an HTB leaf's
    /// `rate` under strict `prio` borrowing; `None`: strict priority only.
    pub class_min_bps: Option<f64>,
    /// With `class_min_bps`: when each queue is next within its guarantee
    /// (ps); before then it sends only by borrowing.
    next_green: [u64; N_QUEUES],
    /// The ECN threshold, if it marks.
    pub ecn_k: Option<Limit>,
    /// Whether K is compared with the packet's own queue (else the port).
    pub ecn_per_queue: bool,
    /// Every class in one FIFO (queue 0): a NIC without priority queues
    /// (`host_prio=fifo`). The packets keep their class for the next hop.
    pub one_fifo: bool,
    queues: [VecDeque<Packet>; N_QUEUES],
    queue_bytes: [u64; N_QUEUES],
    queue_packets: [u64; N_QUEUES],
    /// With flows first come, first served inside a class (TAFE): the
    /// classes' packets by flow order instead of `queues`.
    by_order: Option<Box<ByOrder>>,
    bytes: u64,
    packets: u64,
    /// The switch's shared pool (an index into the engine's pools) when
    /// the port has no buffer of its own.
    pub pool: Option<u32>,
    /// A packet is being serialized.
    pub busy: bool,
    /// Counters.
    pub stats: PortStats,
    /// pFabric's queue, which then replaces the strict-priority queues.
    pfabric: Option<PfabricQueue>,
    /// Queued packets dropped to make room for more urgent ones (pFabric),
    /// for the caller to count against their flows.
    pub evicted: Vec<Packet>,
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
            buffer_per_queue: false,
            class_min_bps: None,
            next_green: [0; N_QUEUES],
            ecn_k,
            ecn_per_queue,
            one_fifo: false,
            queues: Default::default(),
            queue_bytes: [0; N_QUEUES],
            queue_packets: [0; N_QUEUES],
            by_order: None,
            bytes: 0,
            packets: 0,
            pool: None,
            busy: false,
            stats: PortStats::default(),
            pfabric: None,
            evicted: vec![],
        }
    }

    /// The same port with pFabric's queue (§4.1) instead of the
    /// strict-priority ones; it never marks ECN.
    pub fn into_pfabric(mut self) -> Port {
        self.pfabric = Some(PfabricQueue::new());
        self.ecn_k = None;
        self
    }

    /// Makes the port serve the flows of a class first come, first
    /// served, one after the other (TAFE, a `tafe` run's ports): [`Port::pop`]
    /// takes, in the highest-priority non-empty queue, the earliest-queued
    /// packet of the least `order_of` (the engine gives a flow's index,
    /// which follows task release order; Algorithm 1 time-stamps each flow
    /// as it arrives and "the first flow in the highest non-empty priority
    /// queue is served", IV-A2). A queue of one flow is FIFO. Each class
    /// keeps its packets by `order_of`, so a dequeue costs O(log flows)
    /// where a scan of the queue ([`Port::pop_task_fifo`], the slow
    /// reference) costs O(packets). An empty port only.
    pub fn set_task_fifo(&mut self, order_of: fn(&Packet) -> u32) {
        debug_assert_eq!(self.packets, 0, "a port turns task-FIFO while empty");
        self.by_order = Some(Box::new(ByOrder {
            order_of,
            classes: Default::default(),
            spare: vec![],
        }));
    }

    /// Bytes queued (not counting the packet being serialized).
    pub fn queued_bytes(&self) -> u64 {
        self.bytes
    }

    /// Serialization time of `wire` bytes, ps (rounded up).
    pub fn tx_ps(&self, wire: u32) -> u64 {
        (wire as f64 * 8e12 / self.rate).ceil() as u64
    }

    /// Offers `p` to the queues: dropped if the buffer (the port's, or
    /// with `buffer_per_queue` its own queue's) cannot take it, marked if
    /// ECN-capable and the queue it is compared with holds K or more.
    pub fn admit(&mut self, mut p: Packet) -> Admit {
        if self.pfabric.is_some() {
            return self.admit_pfabric(p);
        }
        let q = if self.one_fifo { 0 } else { p.class as usize };
        if let (Some(b), false) = (self.buffer, p.lossless()) {
            let (bytes, packets) = if self.buffer_per_queue {
                (self.queue_bytes[q], self.queue_packets[q])
            } else {
                (self.bytes, self.packets)
            };
            if b.overflows(bytes, packets, p.wire as u64) {
                self.stats.drops += 1;
                return Admit::Dropped;
            }
        }
        let mut admit = Admit::Queued;
        if let (true, Some(k)) = (p.ect, self.ecn_k) {
            let over = if self.ecn_per_queue {
                k.reached(self.queue_bytes[q], self.queue_packets[q])
            } else {
                k.reached(self.bytes, self.packets)
            };
            if over {
                p.ce = true;
                self.stats.marks += 1;
                admit = Admit::Marked;
            }
        }
        match &mut self.by_order {
            Some(b) => b.push(q, p),
            None => self.queues[q].push_back(p),
        }
        self.queue_bytes[q] += p.wire as u64;
        self.queue_packets[q] += 1;
        self.bytes += p.wire as u64;
        self.packets += 1;
        self.stats.max_bytes = self.stats.max_bytes.max(self.bytes);
        admit
    }

    /// Offers `p` to the queues of a port in `pool`: dropped unless the
    /// pool's dynamic threshold lets this port's queue grow ([`SharedPool::admits`]),
    /// else as [`Port::admit`], its bytes taken from the pool.
    pub fn admit_shared(&mut self, p: Packet, pool: &mut SharedPool) -> Admit {
        if !p.lossless() && !pool.admits(self.bytes, p.wire as u64) {
            self.stats.drops += 1;
            return Admit::Dropped;
        }
        let admit = self.admit(p);
        if admit != Admit::Dropped {
            pool.take(p.wire as u64);
        }
        admit
    }

    /// pFabric §4.1's admission: while `p` does not fit, drop the least
    /// urgent queued packet if `p` is more urgent, else drop `p`. Kept out
    /// of line so the strict-priority path stays as small as it was.
    #[inline(never)]
    fn admit_pfabric(&mut self, p: Packet) -> Admit {
        let q = self.pfabric.as_mut().expect("a pFabric port");
        if let Some(b) = self.buffer {
            while b.overflows(self.bytes, self.packets, p.wire as u64) {
                self.stats.drops += 1;
                match q.least_urgent() {
                    Some(v) if urgency(v) > urgency(&p) => {
                        let v = q.evict().expect("a queued packet");
                        self.bytes -= v.wire as u64;
                        self.packets -= 1;
                        self.evicted.push(v);
                    }
                    _ => return Admit::Dropped,
                }
            }
        }
        q.push(p);
        self.bytes += p.wire as u64;
        self.packets += 1;
        self.stats.max_bytes = self.stats.max_bytes.max(self.bytes);
        Admit::Queued
    }

    /// The next packet to send, taken out: the head of the highest-priority
    /// non-empty queue, or pFabric's choice, or with [`Port::set_task_fifo`]
    /// the earliest-queued packet of the first flow of that queue.
    pub fn pop(&mut self) -> Option<Packet> {
        self.pop_at(0)
    }

    /// [`Port::pop`] at `now` (ps): with `class_min_bps`, first the
    /// highest-priority non-empty queue within its guaranteed rate (HTB
    /// serves a leaf under its `rate` before any leaf that borrows), else
    /// strict priority; every packet a queue sends is counted against its
    /// guarantee, which keeps no credit for time it did not use.
    pub fn pop_at(&mut self, now: u64) -> Option<Packet> {
        if self.pfabric.is_some() {
            return self.pop_pfabric();
        }
        let strict = self.queue_packets.iter().position(|&n| n > 0)?;
        let q = match (self.class_min_bps, &self.by_order) {
            (Some(_), None) => (0..N_QUEUES)
                .find(|&q| self.queue_packets[q] > 0 && now >= self.next_green[q])
                .unwrap_or(strict),
            _ => strict,
        };
        let p = match &mut self.by_order {
            Some(b) => b.pop(q),
            None => self.queues[q].pop_front(),
        }?;
        self.queue_bytes[q] -= p.wire as u64;
        self.queue_packets[q] -= 1;
        if let Some(r) = self.class_min_bps {
            let at_min = (p.wire as f64 * 8e12 / r).ceil() as u64;
            self.next_green[q] = self.next_green[q].max(now).saturating_add(at_min);
        }
        self.left(p);
        Some(p)
    }

    /// The slow reference for [`Port::set_task_fifo`]'s dequeue, on a port
    /// with plain FIFO queues: scans the highest-priority non-empty queue
    /// for the earliest-queued packet of the least `order_of`.
    #[cfg(test)]
    pub fn pop_task_fifo(&mut self, order_of: impl Fn(&Packet) -> u32) -> Option<Packet> {
        assert!(self.by_order.is_none() && self.pfabric.is_none());
        let q = self.queues.iter().position(|q| !q.is_empty())?;
        let queue = &mut self.queues[q];
        let mut best = (u32::MAX, 0);
        for (i, p) in queue.iter().enumerate() {
            let k = order_of(p);
            if k < best.0 {
                best = (k, i);
            }
        }
        let p = queue.remove(best.1)?;
        self.queue_bytes[q] -= p.wire as u64;
        self.queue_packets[q] -= 1;
        self.left(p);
        Some(p)
    }

    /// pFabric §4.1's dequeue, out of line like its admission.
    #[inline(never)]
    fn pop_pfabric(&mut self) -> Option<Packet> {
        let p = self.pfabric.as_mut()?.pop()?;
        self.left(p);
        Some(p)
    }

    /// Whether the port queues with pFabric's queue ([`Port::into_pfabric`]).
    pub fn is_pfabric(&self) -> bool {
        self.pfabric.is_some()
    }

    /// Whether a data packet of `flow` carrying byte `byte` waits in this
    /// port's strict-priority queues (pFabric's queue is not looked at): a
    /// scan of every queued packet, the slow reference for the engine's
    /// index of each flow's queued data (`engine::queued`), which a debug
    /// build checks against it at every retransmission timeout.
    pub fn holds(&self, flow: u32, byte: u64) -> bool {
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
            None => self.queues.iter().flatten().any(carries),
        }
    }

    /// Counts `p` out of the buffer and onto the link.
    fn left(&mut self, p: Packet) {
        self.bytes -= p.wire as u64;
        self.packets -= 1;
        self.stats.tx_packets += 1;
        self.stats.tx_bytes += p.wire as u64;
        if p.kind == Kind::Data {
            self.stats.class_payload[p.class as usize % N_QUEUES] += p.len as u64;
        }
    }
}

/// A task-FIFO port's queues ([`Port::set_task_fifo`]): per class, its
/// packets by their flow's order, each flow's in arrival order.
///
/// Correctness properties: every sub-queue in `classes` is non-empty
/// (`pop` removes one when it empties, keeping its buffer in `spare`); the
/// packets of a class are those `Port::queue_packets` counts (checked
/// against the scan in `task_fifo_matches_the_scan`).
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

/// One switch's buffer, shared by its output ports with dynamic thresholds
/// (Choudhury and Hahne 1998, §II). A packet leaves the pool when it
/// leaves its queue for the wire.
#[derive(Debug, Clone)]
pub struct SharedPool {
    /// The pool's bytes, B.
    pub capacity: u64,
    /// The threshold's α.
    pub alpha: f64,
    used: u64,
    /// The most bytes ever in use.
    pub max_used: u64,
}

impl SharedPool {
    /// An empty pool of `capacity` bytes with threshold factor `alpha`.
    pub fn new(capacity: u64, alpha: f64) -> SharedPool {
        SharedPool {
            capacity,
            alpha,
            used: 0,
            max_used: 0,
        }
    }

    /// Bytes in use in the whole pool, Q.
    pub fn used(&self) -> u64 {
        self.used
    }

    /// The dynamic threshold T = α·(B − Q), bytes.
    pub fn threshold(&self) -> f64 {
        self.alpha * (self.capacity - self.used) as f64
    }

    /// Whether a queue of `queue_bytes` may take a packet of `wire` bytes:
    /// the queue is below the threshold and the packet fits in the pool.
    pub fn admits(&self, queue_bytes: u64, wire: u64) -> bool {
        (queue_bytes as f64) < self.threshold() && self.used + wire <= self.capacity
    }

    /// `wire` bytes joined a queue.
    pub fn take(&mut self, wire: u64) {
        self.used += wire;
        self.max_used = self.max_used.max(self.used);
    }

    /// `wire` bytes left a queue.
    pub fn give(&mut self, wire: u64) {
        self.used -= wire;
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use proptest::prelude::*;

    /// A data packet of `wire` bytes in class `class` (for other units'
    /// tests too).
    pub(crate) fn pkt(class: u8, wire: u32, ect: bool) -> Packet {
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
            prio: 0,
            spc: false,
        }
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
        let mut p = Port::new(1e9, 0, None, None, false);
        p.class_min_bps = Some(1e6);
        for class in [0, 0, 0, 7, 7] {
            p.admit(pkt(class, 1000, false));
        }
        let order: Vec<u8> = [0, 8_000_000, 16_000_000, 8_000_000_000, 8_000_008_000]
            .iter()
            .map(|&t| p.pop_at(t).unwrap().class)
            .collect();
        assert_eq!(order, vec![0, 7, 0, 0, 7]);
        assert_eq!(p.next_green[0], 24_000_000_000);
        assert_eq!(p.next_green[7], 16_008_000_000);
        // Without a guarantee: strict priority.
        let mut s = Port::new(1e9, 0, None, None, false);
        for class in [0, 7, 0] {
            s.admit(pkt(class, 1000, false));
        }
        let order: Vec<u8> = std::iter::from_fn(|| s.pop_at(5))
            .map(|x| x.class)
            .collect();
        assert_eq!(order, vec![0, 0, 7]);
    }

    #[test]
    fn a_fifo_nic_serves_every_class_in_arrival_order() {
        // `host_prio=fifo`: classes 7, 0, 3 leave in the order they came,
        // keep their class for the next hop, and one ECN threshold of 2
        // packets counts them all (the third is marked).
        let mut p = Port::new(1e9, 0, None, Some(Limit::Packets(2)), false);
        p.one_fifo = true;
        let admits: Vec<Admit> = [7, 0, 3]
            .iter()
            .map(|&c| p.admit(pkt(c, 1000, true)))
            .collect();
        assert_eq!(admits, vec![Admit::Queued, Admit::Queued, Admit::Marked]);
        let order: Vec<(u8, bool)> = std::iter::from_fn(|| p.pop())
            .map(|x| (x.class, x.ce))
            .collect();
        assert_eq!(order, vec![(7, false), (0, false), (3, true)]);
        assert_eq!((p.queued_bytes(), p.stats.class_payload[7]), (0, 960));
    }

    #[test]
    fn a_buffer_per_queue_holds_each_class_apart() {
        // 3000 bytes, packets of 1000: the port's buffer takes three packets
        // of any classes, a buffer per queue three of each class.
        let offer = |per_queue: bool| {
            let mut p = Port::new(1e9, 0, Some(Limit::Bytes(3000)), None, false);
            p.buffer_per_queue = per_queue;
            [0, 0, 0, 0, 5, 5, 5, 5, 0]
                .map(|class| p.admit(pkt(class, 1000, false)) != Admit::Dropped)
        };
        let (t, f) = (true, false);
        assert_eq!(offer(false), [t, t, t, f, f, f, f, f, f]);
        assert_eq!(offer(true), [t, t, t, f, t, t, t, f, f]);
    }

    #[test]
    fn holds_finds_a_flow_s_queued_byte_until_it_leaves() {
        // Flow 3's bytes 0-959 in class 5 behind flow 1's in class 0.
        let mut p = Port::new(1e9, 0, None, None, false);
        p.admit(Packet {
            flow: 1,
            ..pkt(0, 1000, false)
        });
        p.admit(Packet {
            flow: 3,
            ..pkt(5, 1000, false)
        });
        assert!(p.holds(3, 0) && p.holds(3, 959));
        assert!(!p.holds(3, 960) && !p.holds(2, 0));
        p.pop();
        assert!(p.holds(3, 500));
        p.pop();
        assert!(!p.holds(3, 500) && !p.holds(1, 0));
    }

    #[test]
    fn task_fifo_serves_the_earliest_task_of_the_highest_class_first() {
        let mut p = Port::new(1e9, 0, None, None, false);
        let pk = |flow: u32, class: u8| Packet {
            flow,
            ..pkt(class, 100, false)
        };
        for (flow, class) in [(3, 1), (2, 1), (3, 1), (1, 2), (0, 1)] {
            assert_eq!(p.admit(pk(flow, class)), Admit::Queued);
        }
        // Task = flow / 2: flows 0-1 are task 0, 2-3 task 1.
        let order: Vec<u32> = std::iter::from_fn(|| p.pop_task_fifo(|q| q.flow / 2))
            .map(|q| q.flow)
            .collect();
        assert_eq!(order, vec![0, 3, 2, 3, 1]);
        assert_eq!(p.queued_bytes(), 0);
    }

    /// One step of `task_fifo_matches_the_scan`: a packet of (flow, class,
    /// wire bytes) offered to the port, or a dequeue.
    #[derive(Debug, Clone)]
    enum Step {
        Admit(u32, u8, u32),
        Pop,
    }

    fn step() -> impl Strategy<Value = Step> {
        prop_oneof![
            3 => (0u32..12, 0u8..3, 41u32..1500).prop_map(|(f, c, w)| Step::Admit(f, c, w)),
            2 => Just(Step::Pop),
        ]
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(300))]

        /// A task-FIFO port (its classes kept by flow order) gives every
        /// packet the scan of a plain port gives, in the same order, and the
        /// same counters; with a buffer small enough to drop and per-queue
        /// ECN, so admission reads the per-class counts too.
        #[test]
        fn task_fifo_matches_the_scan(steps in proptest::collection::vec(step(), 1..200)) {
            let order = |p: &Packet| p.flow / 3;
            let new = || Port::new(1e9, 0, Some(Limit::Bytes(6000)), Some(Limit::Packets(3)), true);
            let (mut slow, mut fast) = (new(), new());
            fast.set_task_fifo(order);
            for (seq, s) in steps.iter().enumerate() {
                match *s {
                    Step::Admit(flow, class, wire) => {
                        let p = Packet { flow, seq: seq as u64, ..pkt(class, wire, true) };
                        prop_assert_eq!(slow.admit(p), fast.admit(p));
                    }
                    Step::Pop => {
                        let key = |p: Option<Packet>| p.map(|p| (p.flow, p.seq, p.class, p.ce));
                        prop_assert_eq!(key(slow.pop_task_fifo(order)), key(fast.pop()));
                    }
                }
                prop_assert_eq!(slow.queued_bytes(), fast.queued_bytes());
                prop_assert_eq!(slow.queue_packets, fast.queue_packets);
            }
            let rest = |p: &mut Port, slow: bool| -> Vec<(u32, u64)> {
                std::iter::from_fn(|| if slow { p.pop_task_fifo(order) } else { p.pop() })
                    .map(|p| (p.flow, p.seq))
                    .collect()
            };
            prop_assert_eq!(rest(&mut slow, true), rest(&mut fast, false));
            prop_assert_eq!(slow.stats.tx_bytes, fast.stats.tx_bytes);
        }
    }

    fn data(flow: u32, prio: u32) -> Packet {
        Packet {
            flow,
            prio,
            ..pkt(0, 1500, true)
        }
    }

    #[test]
    fn pfabric_drops_the_least_urgent_and_never_marks() {
        // 3 packets of buffer holding remaining sizes 5000, 9000, 7000.
        let mut p = Port::new(
            1e10,
            0,
            Some(Limit::Packets(3)),
            Some(Limit::Packets(1)),
            false,
        )
        .into_pfabric();
        for (f, r) in [(1, 5000), (2, 9000), (3, 7000)] {
            assert_eq!(p.admit(data(f, r)), Admit::Queued);
        }
        // 8000 is more urgent than 9000: flow 2's packet goes.
        assert_eq!(p.admit(data(4, 8000)), Admit::Queued);
        assert_eq!(
            p.evicted.iter().map(|v| v.flow).collect::<Vec<_>>(),
            vec![2]
        );
        // 8000 against a queue whose least urgent is 8000: the arrival goes.
        assert_eq!(p.admit(data(5, 8000)), Admit::Dropped);
        // An ACK (0) pushes out flow 4 (8000).
        let mut ack = data(6, 0);
        ack.kind = Kind::Ack;
        ack.wire = 40;
        assert_eq!(p.admit(ack), Admit::Queued);
        assert_eq!(
            p.evicted.iter().map(|v| v.flow).collect::<Vec<_>>(),
            vec![2, 4]
        );
        assert_eq!((p.stats.drops, p.stats.marks), (3, 0));
        assert_eq!(p.queued_bytes(), 1500 + 1500 + 40);
        let order: Vec<u32> = std::iter::from_fn(|| p.pop()).map(|x| x.flow).collect();
        assert_eq!(order, vec![6, 1, 3]);
        assert_eq!(p.queued_bytes(), 0);
    }

    #[test]
    fn pfabric_byte_buffer_evicts_until_the_arrival_fits() {
        // 3000 bytes: two 1500-byte packets; a 1500-byte arrival that is
        // more urgent than both evicts one, the least urgent.
        let mut p = Port::new(1e10, 0, Some(Limit::Bytes(3000)), None, false).into_pfabric();
        p.admit(data(1, 4000));
        p.admit(data(2, 6000));
        assert_eq!(p.admit(data(3, 1000)), Admit::Queued);
        assert_eq!(
            p.evicted.iter().map(|v| v.flow).collect::<Vec<_>>(),
            vec![2]
        );
        assert_eq!(p.queued_bytes(), 3000);
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

    /// Offers 1500-byte packets to `ports` in turn until each has been
    /// refused once; returns each port's queue.
    fn fill(ports: usize, pool: &mut SharedPool) -> Vec<u64> {
        let mut ps: Vec<Port> = (0..ports)
            .map(|_| Port::new(1e9, 0, None, None, false))
            .collect();
        let mut full = vec![false; ports];
        while !full.iter().all(|&f| f) {
            for (i, p) in ps.iter_mut().enumerate() {
                if p.admit_shared(pkt(0, 1500, false), pool) == Admit::Dropped {
                    full[i] = true;
                }
            }
        }
        ps.iter().map(|p| p.queued_bytes()).collect()
    }

    #[test]
    fn dynamic_threshold_shares_of_the_pool() {
        // B = 150,000 bytes (100 packets), α = 1. One congested port: it
        // grows while q < B − q, to αB/(1 + α) = 75,000 exactly.
        let mut pool = SharedPool::new(150_000, 1.0);
        assert_eq!(fill(1, &mut pool), vec![75_000]);
        assert_eq!(pool.used(), 75_000);
        // Two: each to αB/(1 + 2α) = 50,000, within one packet (the one
        // served first takes the last one that fits: 51,000 and 49,500).
        let mut pool = SharedPool::new(150_000, 1.0);
        let q = fill(2, &mut pool);
        assert_eq!(q, vec![51_000, 49_500]);
        // α = 2, one port: 2B/3 = 100,000, reached by the packet admitted
        // at 99,000 < 2·(150,000 − 99,000) = 102,000: 100,500; two ports:
        // 2B/5 = 60,000.
        let mut pool = SharedPool::new(150_000, 2.0);
        assert_eq!(fill(1, &mut pool), vec![100_500]);
        let mut pool = SharedPool::new(150_000, 2.0);
        assert!(fill(2, &mut pool)
            .iter()
            .all(|&q| q.abs_diff(60_000) <= 1500));
        // Bytes leave the pool with their packet.
        let mut p = Port::new(1e9, 0, None, None, false);
        let mut pool = SharedPool::new(150_000, 1.0);
        p.admit_shared(pkt(0, 1500, false), &mut pool);
        let out = p.pop().unwrap();
        pool.give(out.wire as u64);
        assert_eq!((pool.used(), pool.max_used), (0, 1500));
    }
}
