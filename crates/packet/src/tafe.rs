//! TAFE's switch: ECN marking by task bytes (Zhang, Xu, Wang and Shen,
//! "Towards Shorter Task Completion Time in Datacenter Networks", IEEE,
//! IV-A2, IV-A3 and Algorithm 1; seed `003_c7c0a2e74d6d7471.txt`). The
//! flow-level model of TAFE is `coflowkit_sched::tafe`; its spec's threshold
//! vector is this unit's input ([`TafeMarking::of_tafe`]).
//!
//! * **The threshold vector** (IV-A3): `tau` strict-priority queues and
//!   thresholds `U1 <= U2 <= ... <= U(tau-1)` (bytes), "`Ui` is the
//!   threshold of priority queue `i`". The paper's default (V-B) is
//!   `U1 = 0.5 max`, `U2 = 0.75 max` of the task sizes, three queues: the
//!   `tafe` spec's `thresholds=0.5max/0.75max`.
//! * **The marking** (IV-A2): "If the bytes of one task is greater than
//!   Υ, the flows of this task is marked with CE, and not marked
//!   otherwise. This ECN marking can notify end-host to demote its
//!   priority." With the vector (IV-A3): "When the accumulated bytes of one
//!   task is greater than Υi, the flows of this task will be marked with
//!   ECN, and this task should be demoted to the lower priority queue." So
//!   a packet in queue `i` (0-based here: the paper's queue `i + 1`) whose
//!   task has sent more than `U(i+1)` is marked; a packet in the last queue
//!   never is, by task bytes ([`TafeMarking::marks`]).
//! * **The queue a task belongs in** (Algorithm 1, lines 4-13: a new task
//!   enters queue 1, "if length(T_i) > Υ_k then Degrade(T_i)"): the number
//!   of thresholds its bytes exceed ([`TafeMarking::queue_for`]). A host
//!   that demotes on the marks reaches it one mark per threshold; the
//!   engine may also use it to check a host's class.
//! * The congestion marking of Algorithm 2 (line 2, "if Congestion occurs
//!   then Tag(ECN)") is the port's own ECN at K ([`crate::port`]), which
//!   stays on beside this one.
//!
//! # The interface the engine calls
//!
//! One [`TafeMarking`] for the run (every port of the paper's switches uses
//! the same vector). Per packet that arrives at a port, before
//! [`crate::port::Port::admit`]: [`TafeMarking::mark`] with the packet and
//! the task bytes of its `TaskTag`, which sets CE when the rule above says
//! so and returns whether it did (for the flow's and the port's counters).
//!
//! # Our readings
//!
//! - "The accumulated bytes of one task" are the bytes the packet's tag
//!   carries (`TaskTag::bytes`): what its task has sent from all its hosts.
//!   Algorithm 1 adds up "the length of flows from one task" where they
//!   arrive; the engine keeps that sum per task (what the switch where a
//!   task's flows meet counts) and tells every host of the task
//!   (`HostPolicy::task_sent`), whose tag then carries it. A port keeps no
//!   per-task state of its own.
//! - Inside a class, flows are served first come, first served, one after
//!   the other: the engine takes from a port's highest non-empty queue the
//!   earliest-queued packet of the flow that came first (its index: task
//!   release order, then the task's own order; `Port::set_task_fifo`).
//!   Algorithm 1 time-stamps each arriving flow, and "the first flow in the
//!   highest non-empty priority queue is served" (IV-A2); III serves Fig.
//!   2's flows "one by one". A FIFO packet queue would interleave them.
//! - "Greater than" is strict, on integer bytes: a fractional threshold
//!   from the spec (`0.5max` of an odd size) is rounded down, so `bytes >
//!   U` holds exactly when it does for the real number. The flow-level
//!   model demotes at `bytes >= U` (within 1e-6); on integer bytes the two
//!   differ by the one byte at which the threshold is met exactly.
//! - Only ECN-capable packets are marked (ECN's rule; TAFE's hosts run an
//!   ECN transport, IV-B).
//! - The ports have 8 queues, so `tau` is at most 8 (the spec allows 64).
//!
//! Correctness properties: [`TafeMarking::queue_for`] never decreases as
//! bytes grow (the thresholds do not decrease; checked in `of_thresholds`);
//! a packet in the queue its bytes belong in is never marked by task bytes
//! (`marks` and `queue_for` use one comparison).

use crate::config::{bad, Knob};
use crate::packet::{Packet, N_QUEUES};
use coflowkit_sched::tafe::TafeConfig;
use thiserror::Error;

/// Why a threshold vector cannot drive the ports.
#[derive(Debug, Error, PartialEq, Eq)]
pub enum TafeError {
    /// More thresholds than the ports have queues, less one.
    #[error("tafe thresholds: {0} thresholds need {n} queues; the ports have 8", n = .0 + 1)]
    TooMany(usize),
    /// A threshold below the one before it.
    #[error("tafe thresholds: U{at} = {value} is below U{} = {before}; thresholds must not decrease", .at - 1)]
    Decreasing {
        /// Its index, the paper's (1 for `U1`).
        at: usize,
        /// Its bytes.
        value: u64,
        /// The bytes of the one before.
        before: u64,
    },
}

/// The threshold vector of TAFE's switches; see the module doc.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TafeMarking {
    /// `U1 .. U(tau-1)`, bytes, not decreasing.
    thresholds: Vec<u64>,
}

impl TafeMarking {
    /// The switch's vector from the `tafe` spec's (bytes, rounded down).
    pub fn of_tafe(c: &TafeConfig) -> Result<TafeMarking, TafeError> {
        let t = c.thresholds.iter().map(|&u| {
            if u.is_finite() {
                u.max(0.0).floor().min(u64::MAX as f64) as u64
            } else {
                u64::MAX
            }
        });
        TafeMarking::of_thresholds(t.collect())
    }

    /// The switch's vector from thresholds in bytes: at most 7 (8
    /// queues), not decreasing.
    pub fn of_thresholds(thresholds: Vec<u64>) -> Result<TafeMarking, TafeError> {
        if thresholds.len() >= N_QUEUES {
            return Err(TafeError::TooMany(thresholds.len()));
        }
        if let Some(i) = (1..thresholds.len()).find(|&i| thresholds[i] < thresholds[i - 1]) {
            return Err(TafeError::Decreasing {
                at: i + 1,
                value: thresholds[i],
                before: thresholds[i - 1],
            });
        }
        Ok(TafeMarking { thresholds })
    }

    /// The thresholds, bytes.
    pub fn thresholds(&self) -> &[u64] {
        &self.thresholds
    }

    /// `tau`, the queues the vector uses.
    pub fn n_queues(&self) -> usize {
        self.thresholds.len() + 1
    }

    /// Algorithm 1's queue for a task that has sent `task_bytes`: how many
    /// thresholds it exceeds (0 the highest).
    pub fn queue_for(&self, task_bytes: u64) -> u8 {
        self.thresholds.partition_point(|&u| task_bytes > u) as u8
    }

    /// Whether a packet in queue `queue` of a task that has sent
    /// `task_bytes` is marked: its bytes exceed that queue's threshold.
    pub fn marks(&self, queue: u8, task_bytes: u64) -> bool {
        self.thresholds
            .get(queue as usize)
            .is_some_and(|&u| task_bytes > u)
    }

    /// Marks `p` CE if it is ECN-capable and [`TafeMarking::marks`] its
    /// class with `task_bytes`; returns whether it did.
    pub fn mark(&self, p: &mut Packet, task_bytes: u64) -> bool {
        let marked = p.ect && self.marks(p.class, task_bytes);
        if marked {
            p.ce = true;
        }
        marked
    }
}

/// TAFE's service order at the ports.
pub const KNOBS: &[Knob] = &[
    Knob {
        name: "tafe_service",
        default: "flows",
        unit: "choice",
        help: "tafe's ports inside a class: flows (first come, first served, one flow after the other, Algorithm 1) or fifo (packets in arrival order, flows interleaved) (flows)",
        set: |c, key, v| {
            c.tafe_one_by_one = match v.trim().to_ascii_lowercase().as_str() {
                "flows" => true,
                "fifo" => false,
                _ => return Err(bad(key, format!("'{v}': flows or fifo"))),
            };
            Ok(())
        },
    },
];

#[cfg(test)]
mod tests {
    use super::*;
    use coflowkit_sched::tafe::FlowOrder;
    use proptest::prelude::Rng;
    use proptest::test_runner::{RngAlgorithm, TestRng};

    /// The paper's V-B vector for a largest task of 100,001 bytes:
    /// 0.5 max = 50,000.5 and 0.75 max = 75,000.75, rounded down.
    fn paper() -> TafeMarking {
        TafeMarking::of_tafe(&TafeConfig {
            thresholds: vec![50_000.5, 75_000.75],
            flows: FlowOrder::Srpt,
        })
        .expect("a valid vector")
    }

    fn pkt(class: u8, ect: bool) -> Packet {
        crate::packet::tests::pkt(class, 1500, ect)
    }

    #[test]
    fn which_packets_are_marked_by_hand() {
        let m = paper();
        assert_eq!((m.thresholds(), m.n_queues()), (&[50_000, 75_000][..], 3));
        // Queue 0 (the paper's Q1, U1 = 50,000): 50,000 bytes is not
        // greater than U1; 50,001 is (the real U1 is 50,000.5).
        assert!(!m.marks(0, 40_000));
        assert!(!m.marks(0, 50_000));
        assert!(m.marks(0, 50_001));
        // Demoted to queue 1 (U2 = 75,000): unmarked until above 75,000.
        assert!(!m.marks(1, 50_001));
        assert!(!m.marks(1, 75_000));
        assert!(m.marks(1, 75_001));
        // A host that has not demoted yet is marked in queue 0 too.
        assert!(m.marks(0, 75_001));
        // The last queue has no threshold.
        assert!(!m.marks(2, u64::MAX));
        assert!(!m.marks(7, u64::MAX));
        // Algorithm 1's queue for those bytes.
        let q: Vec<u8> = [0, 50_000, 50_001, 75_000, 75_001]
            .iter()
            .map(|&b| m.queue_for(b))
            .collect();
        assert_eq!(q, [0, 0, 1, 1, 2]);
        // On packets: CE set only on an ECN-capable one over its threshold.
        let mut p = pkt(0, true);
        assert!(!m.mark(&mut p, 50_000) && !p.ce);
        assert!(m.mark(&mut p, 60_000) && p.ce);
        let mut p = pkt(0, false);
        assert!(!m.mark(&mut p, 60_000) && !p.ce);
        let mut p = pkt(1, true);
        assert!(!m.mark(&mut p, 60_000) && !p.ce);
    }

    #[test]
    fn one_queue_never_marks_and_bad_vectors_are_refused() {
        let m = TafeMarking::of_thresholds(vec![]).expect("tau = 1");
        assert_eq!((m.n_queues(), m.queue_for(u64::MAX)), (1, 0));
        assert!(!m.marks(0, u64::MAX));
        let e = TafeMarking::of_thresholds((1..=8).collect()).unwrap_err();
        assert_eq!(
            e.to_string(),
            "tafe thresholds: 8 thresholds need 9 queues; the ports have 8"
        );
        let e = TafeMarking::of_thresholds(vec![10, 30, 20]).unwrap_err();
        assert_eq!(
            e.to_string(),
            "tafe thresholds: U3 = 20 is below U2 = 30; thresholds must not decrease"
        );
        // Infinite thresholds never mark; equal ones pass a task through
        // the queues between them at once.
        let m = TafeMarking::of_tafe(&TafeConfig {
            thresholds: vec![100.0, 100.0, f64::INFINITY],
            flows: FlowOrder::Fair,
        })
        .expect("valid");
        assert_eq!((m.queue_for(100), m.queue_for(101)), (0, 2));
        assert!(!m.marks(2, u64::MAX));
    }

    #[test]
    fn queue_for_matches_a_linear_scan() {
        // The slow reference: start in queue 0, degrade while the bytes
        // exceed the current queue's threshold (Algorithm 1, lines 4-13).
        // proptest's deterministic generator: the same instances every run.
        let mut rng = TestRng::deterministic_rng(RngAlgorithm::ChaCha);
        let mut next = |n: u64| rng.next_u64() % n;
        for _ in 0..5_000 {
            let mut t: Vec<u64> = (0..next(8)).map(|_| next(1000)).collect();
            t.sort_unstable();
            let m = TafeMarking::of_thresholds(t.clone()).expect("sorted, at most 7");
            let b = next(1100);
            let mut q = 0;
            while q < t.len() && b > t[q] {
                q += 1;
            }
            assert_eq!(m.queue_for(b) as usize, q, "{t:?} {b}");
            // Never marked in its own queue; marked in every queue above.
            assert!(!m.marks(q as u8, b));
            assert!((0..q as u8).all(|k| m.marks(k, b)));
        }
    }
}
