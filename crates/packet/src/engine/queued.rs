//! Where a flow's data waits: for each hop of each flow's path whose port
//! is indexed ([`Port::indexed`]: a queue without a limit, as a host's NIC
//! queue), the byte ranges of its data packets queued there, kept as they
//! join and leave the port's strict-priority queues, so that a
//! retransmission timeout asks "is the packet carrying byte `una` still
//! queued, and where?" in O(log(the flow's packets at the hop)) instead of
//! scanning a queue that can grow without end ([`Port::holds`], the slow
//! reference, which a debug build compares on every question). A bounded
//! port is scanned instead: at most its buffer's packets, at a timeout
//! only, where indexing it would cost two updates per packet through it.
//!
//! A packet carrying byte `b` is identified by its range alone: any data
//! packet of the flow with `seq <= b < seq + len`, whatever its class, the
//! original or a copy sent again. A flow's copies of one byte may sit in
//! different classes and leave in any order (a class change reorders a
//! flow's packets), so a hop keeps its ranges sorted by `(seq, len)`, not
//! in arrival order: a packet joins at the back and leaves from the front
//! when the flow's packets go out in order, as they nearly always do.
//!
//! Correctness properties:
//! - a slot holds exactly the `(seq, len)` of the flow's data packets
//!   queued at that hop's port, not the one being serialized (the engine
//!   calls [`QueuedData::joined`] after a port admits one and
//!   [`QueuedData::left`] after it pops one; pFabric's ports are not
//!   indexed, as `holds` does not look at their queue);
//! - every `len` in a slot is at most `max_len` (`joined` raises it), so
//!   the search for `b` stops at the first range starting at or before
//!   `b - max_len`; checked against the scan by
//!   `answers_as_the_port_scan_does`, and in the engine by a debug
//!   assertion at every question.
//!
//! [`Port::holds`]: crate::port::Port::holds
//! [`Port::indexed`]: crate::port::Port::indexed

use std::collections::VecDeque;

/// Each flow's queued data packets by hop (a slot per entry of the
/// engine's `hops` of the flows' forward paths).
#[derive(Debug, Default)]
pub(super) struct QueuedData {
    slots: Vec<VecDeque<(u64, u32)>>,
    max_len: u32,
}

impl QueuedData {
    /// Nothing queued on `n_slots` hops.
    pub(super) fn new(n_slots: usize) -> QueuedData {
        // Each data packet's hops touch their slots: in huge pages where
        // there are many (`coflowkit_sched::reserve_huge`).
        let mut slots = Vec::new();
        coflowkit_sched::reserve_huge(&mut slots, n_slots);
        slots.extend((0..n_slots).map(|_| VecDeque::new()));
        QueuedData { slots, max_len: 0 }
    }

    /// A data packet of `len` bytes from `seq` joined the queue of `slot`.
    pub(super) fn joined(&mut self, slot: u32, seq: u64, len: u32) {
        self.max_len = self.max_len.max(len);
        let d = &mut self.slots[slot as usize];
        let key = (seq, len);
        match d.back() {
            Some(&b) if b > key => {
                let i = d.partition_point(|&e| e <= key);
                d.insert(i, key);
            }
            _ => d.push_back(key),
        }
    }

    /// A data packet of `len` bytes from `seq` left the queue of `slot`
    /// for its link.
    pub(super) fn left(&mut self, slot: u32, seq: u64, len: u32) {
        let d = &mut self.slots[slot as usize];
        let key = (seq, len);
        if d.front() == Some(&key) {
            d.pop_front();
        } else if d.back() == Some(&key) {
            d.pop_back();
        } else {
            let i = d.partition_point(|&e| e < key);
            debug_assert_eq!(d.get(i), Some(&key), "a packet leaves a queue it joined");
            d.remove(i);
        }
        if d.is_empty() {
            // Start again at the front of the buffer: a hop that holds a
            // packet or two at a time keeps reusing one cache line of it.
            d.clear();
        }
    }

    /// Gives back the buffers of the empty slots `from..to` (a finished
    /// flow's path), so that memory follows the flows in progress, not
    /// every flow that ever ran.
    pub(super) fn release(&mut self, from: u32, to: u32) {
        for d in &mut self.slots[from as usize..to as usize] {
            if d.is_empty() {
                *d = VecDeque::new();
            }
        }
    }

    /// Whether a data packet carrying byte `byte` waits in the queue of
    /// `slot`.
    pub(super) fn holds(&self, slot: u32, byte: u64) -> bool {
        let d = &self.slots[slot as usize];
        let after = d.partition_point(|&(seq, _)| seq <= byte);
        d.range(..after)
            .rev()
            .take_while(|&&(seq, _)| seq + self.max_len as u64 > byte)
            .any(|&(seq, len)| byte < seq + len as u64)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::packet::tests::pkt;
    use crate::packet::Packet;
    use crate::port::Port;
    use crate::queue::Admit;
    use proptest::prelude::*;

    #[test]
    fn a_copy_sent_again_is_found_under_a_shorter_later_range() {
        // [0, 1000) and [400, 450): byte 600 is in the first only.
        let mut q = QueuedData::new(1);
        q.joined(0, 400, 50);
        q.joined(0, 0, 1000);
        assert!(q.holds(0, 600) && q.holds(0, 420) && !q.holds(0, 1000));
        q.left(0, 0, 1000);
        assert!(!q.holds(0, 600) && q.holds(0, 449));
        q.left(0, 400, 50);
        assert!(!q.holds(0, 449));
        q.release(0, 1);
        assert_eq!(q.slots[0].capacity(), 0);
    }

    /// One step of `answers_as_the_port_scan_does`.
    #[derive(Debug, Clone)]
    enum Step {
        /// A data packet of (flow, class, seq, len) offered to the port.
        Admit(u32, u8, u64, u32),
        Pop,
        /// Does flow's byte wait?
        Ask(u32, u64),
    }

    fn step() -> impl Strategy<Value = Step> {
        prop_oneof![
            4 => (0u32..3, 0u8..3, 0u64..40, 1u32..12)
                .prop_map(|(f, c, s, l)| Step::Admit(f, c, s * 5, l * 5)),
            2 => Just(Step::Pop),
            3 => (0u32..3, 0u64..260).prop_map(|(f, b)| Step::Ask(f, b)),
        ]
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(300))]

        /// Three flows' overlapping ranges in three classes of a port with a
        /// buffer small enough to drop, plain and task-FIFO: the index kept
        /// on admission and dequeue answers every question as the scan.
        #[test]
        fn answers_as_the_port_scan_does(
            steps in proptest::collection::vec(step(), 1..200),
            task_fifo in any::<bool>(),
        ) {
            let mut port = Port::new(1e9, 0, Some(crate::config::Limit::Packets(8)), None, false);
            if task_fifo {
                port.set_task_fifo(|p| p.flow);
            }
            let mut q = QueuedData::new(3);
            for s in &steps {
                match *s {
                    Step::Admit(flow, class, seq, len) => {
                        let p = Packet { flow, seq, len, ..pkt(class, 100, false) };
                        if port.admit(p) != Admit::Dropped {
                            q.joined(flow, seq, len);
                        }
                    }
                    Step::Pop => {
                        if let Some(p) = port.pop() {
                            q.left(p.flow, p.seq, p.len);
                        }
                    }
                    Step::Ask(flow, byte) => {
                        prop_assert_eq!(q.holds(flow, byte), port.holds(flow, byte));
                    }
                }
            }
        }
    }
}
