//! An output port: a queue kind in front of a link (`crate::queue`: the
//! strict-priority queues with drop-tail and ECN marking, or pFabric's
//! queue), optionally behind its switch's shared buffer
//! ([`SharedPool`]). The kind decides what waits and what goes next; the
//! port serializes onto the link, at its rate and delay, and counts.

use crate::config::Limit;
use crate::packet::{Kind, Packet, N_QUEUES};
use crate::queue::pfabric::PfabricQueue;
use crate::queue::shared::SharedPool;
use crate::queue::strict::StrictQueues;
use crate::queue::{Admit, QueueDisc};

/// A port's counters, those every packet moves first (`Port`'s layout).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[repr(C)]
pub struct PortStats {
    /// Packets that left (per-hop transmissions).
    pub tx_packets: u64,
    /// Bytes that left.
    pub tx_bytes: u64,
    /// The most bytes ever queued.
    pub max_bytes: u64,
    /// Payload bytes of data that left, by strict-priority class (what a
    /// host policy's demotion put in each queue).
    pub class_payload: [u64; N_QUEUES],
    /// Packets dropped on arrival.
    pub drops: u64,
    /// Packets marked CE on arrival.
    pub marks: u64,
}

/// An output port.
///
/// Laid out by use (`repr(C)`): what every packet through the port reads
/// or counts, class 0's payload among it, in its first cache line; drops,
/// marks and pFabric's evictions after; the queue kind last, in lines of
/// its own (its hot fields first, `StrictQueues`). A packet through a
/// strict-priority port touches three lines of it (issue 69).
#[derive(Debug)]
#[repr(C)]
pub struct Port {
    /// Link rate, bits/s.
    pub rate: f64,
    /// Propagation delay, ps.
    pub delay_ps: u64,
    /// The switch's shared pool (an index into the engine's pools) when
    /// the port has no buffer of its own.
    pub pool: Option<u32>,
    /// A packet is being serialized.
    pub busy: bool,
    /// Counters.
    pub stats: PortStats,
    /// Queued packets dropped to make room for more urgent ones (pFabric),
    /// for the caller to count against their flows
    /// ([`Port::has_evicted`]).
    pub evicted: Vec<Packet>,
    /// Its queue kind.
    queue: Queue,
}

impl Port {
    /// An idle port with strict-priority queues ([`StrictQueues::new`]).
    pub fn new(
        rate: f64,
        delay_ps: u64,
        buffer: Option<Limit>,
        ecn_k: Option<Limit>,
        ecn_per_queue: bool,
    ) -> Port {
        Port::with_queue(
            rate,
            delay_ps,
            StrictQueues::new(buffer, ecn_k, ecn_per_queue),
        )
    }

    /// An idle port with queue kind `queue`.
    pub fn with_queue(rate: f64, delay_ps: u64, queue: impl Into<Queue>) -> Port {
        Port {
            rate,
            delay_ps,
            queue: queue.into(),
            pool: None,
            busy: false,
            stats: PortStats::default(),
            evicted: vec![],
        }
    }

    /// Makes the port serve the flows of a class first come, first served
    /// (TAFE; [`StrictQueues::set_task_fifo`]). An empty port only.
    pub fn set_task_fifo(&mut self, order_of: fn(&Packet) -> u32) {
        self.queue.serve_by_order(order_of);
    }

    /// Asks the processor to fetch the lines a packet through the port
    /// reads first, without reading any (which kind its queue is would be
    /// a read that waits): its own first line, and its queue's first two
    /// (a strict-priority queue's counts, then its first class's).
    #[inline(always)]
    pub fn prefetch(&self) {
        let queue = std::mem::offset_of!(Port, queue);
        coflowkit_sched::prefetch_at(self, 0);
        coflowkit_sched::prefetch_at(self, queue);
        coflowkit_sched::prefetch_at(self, queue + 64);
    }

    /// Bytes queued (not counting the packet being serialized).
    pub fn queued_bytes(&self) -> u64 {
        self.queue.bytes()
    }

    /// Serialization time of `wire` bytes, ps (rounded up).
    pub fn tx_ps(&self, wire: u32) -> u64 {
        (wire as f64 * 8e12 / self.rate).ceil() as u64
    }

    /// Offers `p` to the queue kind, counting what it dropped (the packet,
    /// or queued ones it evicted for it) and marked.
    pub fn admit(&mut self, p: Packet) -> Admit {
        let admit = match &mut self.queue {
            // Strict priority never evicts: its admission reads no count
            // of evictions (another cache line).
            Queue::Strict(q) => q.admit(p, &mut self.evicted),
            q => {
                let before = self.evicted.len();
                let admit = q.admit(p, &mut self.evicted);
                self.stats.drops += (self.evicted.len() - before) as u64;
                admit
            }
        };
        match admit {
            Admit::Dropped => {
                self.stats.drops += 1;
                return admit;
            }
            Admit::Marked => self.stats.marks += 1,
            Admit::Queued => {}
        }
        self.stats.max_bytes = self.stats.max_bytes.max(self.queue.bytes());
        admit
    }

    /// Whether queued packets were dropped for more urgent ones and wait
    /// in `evicted` to be counted (pFabric; never with strict priority,
    /// whose ports this does not read `evicted` for).
    #[inline]
    pub fn has_evicted(&self) -> bool {
        !matches!(self.queue, Queue::Strict(_)) && !self.evicted.is_empty()
    }

    /// Offers `p` to the queues of a port in `pool`: dropped unless the
    /// pool's dynamic threshold lets this port's queue grow ([`SharedPool::admits`]),
    /// else as [`Port::admit`], its bytes taken from the pool.
    pub fn admit_shared(&mut self, p: Packet, pool: &mut SharedPool) -> Admit {
        if !p.lossless() && !pool.admits(self.queue.bytes(), p.wire as u64) {
            self.stats.drops += 1;
            return Admit::Dropped;
        }
        let admit = self.admit(p);
        if admit != Admit::Dropped {
            pool.take(p.wire as u64);
        }
        admit
    }

    /// The next packet to send, taken out ([`Port::pop_at`] at 0).
    pub fn pop(&mut self) -> Option<Packet> {
        self.pop_at(0)
    }

    /// The next packet to send at `now` (ps), as the queue kind chooses,
    /// counted out of the buffer and onto the link.
    pub fn pop_at(&mut self, now: u64) -> Option<Packet> {
        let p = self.queue.pop(now)?;
        self.stats.tx_packets += 1;
        self.stats.tx_bytes += p.wire as u64;
        if p.kind == Kind::Data {
            self.stats.class_payload[p.class as usize % N_QUEUES] += p.len as u64;
        }
        Some(p)
    }

    /// `p` offered to this idle port's empty queue and taken straight back
    /// out to be sent, counted as [`Port::admit`] then [`Port::pop_at`]
    /// at `now` count it, where the queue kind can pass it without
    /// queueing it (strict priority: [`StrictQueues::pass`]); `None` where
    /// it cannot, `p` not offered. Returns the admission and the packet
    /// as it leaves (as it came when dropped).
    #[inline]
    pub fn pass_at(&mut self, p: Packet, now: u64) -> Option<(Admit, Packet)> {
        let Queue::Strict(q) = &mut self.queue else {
            return None;
        };
        let (admit, p) = q.pass(p, now)?;
        match admit {
            Admit::Dropped => {
                self.stats.drops += 1;
                return Some((admit, p));
            }
            Admit::Marked => self.stats.marks += 1,
            Admit::Queued => {}
        }
        // `admit` counts the queue it left behind: this packet alone.
        self.stats.max_bytes = self.stats.max_bytes.max(p.wire as u64);
        self.stats.tx_packets += 1;
        self.stats.tx_bytes += p.wire as u64;
        if p.kind == Kind::Data {
            self.stats.class_payload[p.class as usize % N_QUEUES] += p.len as u64;
        }
        Some((admit, p))
    }

    /// Whether the engine's index of each flow's queued data follows this
    /// port's queue: a kind the index can follow ([`QueueDisc::indexed`];
    /// not pFabric's) with no limit on what it holds (a host's NIC queue,
    /// [`QueueDisc::bounded`], and no switch pool). The question "does byte
    /// `b` of flow `f` wait here?" comes only at a retransmission timeout;
    /// a bounded queue answers it by a scan of at most its buffer's
    /// packets ([`Port::holds`]), which costs less over a run than
    /// indexing every data packet through it. An unbounded queue can grow
    /// without end and is indexed.
    #[inline]
    pub fn indexed(&self) -> bool {
        self.pool.is_none() && !self.queue.bounded() && self.queue.indexed()
    }

    /// Whether a data packet of `flow` carrying byte `byte` waits in this
    /// port's queue ([`QueueDisc::holds`]; pFabric's is not looked at): a
    /// scan of every queued packet, the slow reference for the engine's
    /// index of each flow's queued data (`engine::queued`).
    pub fn holds(&self, flow: u32, byte: u64) -> bool {
        self.queue.holds(flow, byte)
    }
}

/// A port's queue kind, dispatched by a `match` so that the kinds every
/// run uses are called directly (and the strict-priority path inlined, as
/// fast as a port of one kind); any other [`QueueDisc`] runs as `Other`.
// The strict kind is held inline, not boxed: it is the hot path, and a
// port's size does not matter (one per link).
#[allow(clippy::large_enum_variant)]
#[derive(Debug)]
pub enum Queue {
    /// Strict priority ([`StrictQueues`]).
    Strict(StrictQueues),
    /// pFabric ([`PfabricQueue`]).
    Pfabric(PfabricQueue),
    /// Any other kind, called through the trait object.
    Other(Box<dyn QueueDisc>),
}

/// `$body` with `$q` bound to the queue kind inside `$queue`.
macro_rules! each_kind {
    ($queue:expr, $q:ident => $body:expr) => {
        match $queue {
            Queue::Strict($q) => $body,
            Queue::Pfabric($q) => $body,
            Queue::Other($q) => $body,
        }
    };
}

impl QueueDisc for Queue {
    #[inline]
    fn admit(&mut self, p: Packet, evicted: &mut Vec<Packet>) -> Admit {
        each_kind!(self, q => q.admit(p, evicted))
    }

    #[inline]
    fn pop(&mut self, now: u64) -> Option<Packet> {
        each_kind!(self, q => q.pop(now))
    }

    #[inline]
    fn bytes(&self) -> u64 {
        each_kind!(self, q => q.bytes())
    }

    fn holds(&self, flow: u32, byte: u64) -> bool {
        each_kind!(self, q => q.holds(flow, byte))
    }

    #[inline]
    fn indexed(&self) -> bool {
        each_kind!(self, q => q.indexed())
    }

    #[inline]
    fn bounded(&self) -> bool {
        each_kind!(self, q => q.bounded())
    }

    fn serve_by_order(&mut self, order_of: fn(&Packet) -> u32) {
        each_kind!(self, q => q.serve_by_order(order_of))
    }
}

impl From<StrictQueues> for Queue {
    fn from(q: StrictQueues) -> Queue {
        Queue::Strict(q)
    }
}

impl From<PfabricQueue> for Queue {
    fn from(q: PfabricQueue) -> Queue {
        Queue::Pfabric(q)
    }
}

impl From<Box<dyn QueueDisc>> for Queue {
    fn from(q: Box<dyn QueueDisc>) -> Queue {
        Queue::Other(q)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::packet::tests::pkt;
    use proptest::prelude::*;

    #[test]
    fn a_fifo_nic_serves_every_class_in_arrival_order() {
        // `host_prio=fifo`: classes 7, 0, 3 leave in the order they came,
        // keep their class for the next hop, and one ECN threshold of 2
        // packets counts them all (the third is marked).
        let mut q = StrictQueues::new(None, Some(Limit::Packets(2)), false);
        q.one_fifo = true;
        let mut p = Port::with_queue(1e9, 0, q);
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
        let mut p = Port::with_queue(1e10, 0, PfabricQueue::new(Some(Limit::Packets(3))));
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
        let mut p = Port::with_queue(1e10, 0, PfabricQueue::new(Some(Limit::Bytes(3000))));
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

        /// Task-FIFO strict queues (classes kept by flow order,
        /// `StrictQueues::set_task_fifo`) give every packet the scan of
        /// plain ones gives, in the same order, and the
        /// same counters; with a buffer small enough to drop and per-queue
        /// ECN, so admission reads the per-class counts too.
        #[test]
        fn task_fifo_matches_the_scan(steps in proptest::collection::vec(step(), 1..200)) {
            let order = |p: &Packet| p.flow / 3;
            let new = || StrictQueues::new(Some(Limit::Bytes(6000)), Some(Limit::Packets(3)), true);
            let (mut slow, mut fast) = (new(), new());
            fast.set_task_fifo(order);
            for (seq, s) in steps.iter().enumerate() {
                match *s {
                    Step::Admit(flow, class, wire) => {
                        let p = Packet { flow, seq: seq as u64, ..pkt(class, wire, true) };
                        prop_assert_eq!(slow.admit(p, &mut vec![]), fast.admit(p, &mut vec![]));
                    }
                    Step::Pop => {
                        let key = |p: Option<Packet>| p.map(|p| (p.flow, p.seq, p.class, p.ce));
                        prop_assert_eq!(key(slow.pop_task_fifo(order)), key(fast.pop(0)));
                    }
                }
                prop_assert_eq!(slow.bytes(), fast.bytes());
                prop_assert_eq!(slow.queue_packets(), fast.queue_packets());
            }
            let rest = |p: &mut StrictQueues, slow: bool| -> Vec<(u32, u64, u32)> {
                std::iter::from_fn(|| if slow { p.pop_task_fifo(order) } else { p.pop(0) })
                    .map(|p| (p.flow, p.seq, p.wire))
                    .collect()
            };
            prop_assert_eq!(rest(&mut slow, true), rest(&mut fast, false));
        }
    }

    fn limit() -> impl Strategy<Value = Option<Limit>> {
        prop_oneof![
            Just(None),
            (0u64..3000).prop_map(|b| Some(Limit::Bytes(b))),
            (0u64..3).prop_map(|n| Some(Limit::Packets(n))),
        ]
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(300))]

        /// A packet passing an idle strict-priority port (`Port::pass_at`)
        /// is admitted, marked, dropped, counted and charged to its class's
        /// guaranteed rate as `admit` then `pop_at` do it, whatever the
        /// knobs; two packets one after the other, so that the second meets
        /// the first's guaranteed-rate clock.
        #[test]
        fn passing_an_idle_port_is_admit_then_pop(
            buffer in limit(),
            ecn_k in limit(),
            ecn_per_queue in any::<bool>(),
            buffer_per_queue in any::<bool>(),
            one_fifo in any::<bool>(),
            class_min in proptest::option::of(1e5f64..1e9),
            packets in proptest::collection::vec(
                (0u8..8, 41u32..1500, any::<bool>(), 0u8..4, 0u64..20_000_000), 2),
        ) {
            let new = || {
                let mut q = StrictQueues::new(buffer, ecn_k, ecn_per_queue);
                q.buffer_per_queue = buffer_per_queue;
                q.one_fifo = one_fifo;
                q.class_min_bps = class_min;
                Port::with_queue(1e9, 0, q)
            };
            let (mut slow, mut fast) = (new(), new());
            let mut now = 0;
            for &(class, wire, ect, kind, wait) in &packets {
                now += wait;
                let kind = [Kind::Data, Kind::Ack, Kind::Control, Kind::Request][kind as usize];
                let p = Packet { kind, ..pkt(class, wire, ect) };
                let admit = slow.admit(p);
                let out = if admit == Admit::Dropped { p } else { slow.pop_at(now).expect("queued") };
                let (fast_admit, fast_out) = fast.pass_at(p, now).expect("strict priority passes");
                let key = |p: Packet| (p.class, p.wire, p.kind, p.ce);
                prop_assert_eq!((admit, key(out)), (fast_admit, key(fast_out)));
                prop_assert_eq!(slow.stats, fast.stats);
                let green = |p: &Port| match &p.queue {
                    Queue::Strict(q) => q.next_green,
                    _ => unreachable!(),
                };
                prop_assert_eq!(green(&slow), green(&fast));
                prop_assert_eq!(slow.queued_bytes(), 0);
            }
        }
    }
}
