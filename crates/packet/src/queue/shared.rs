//! A switch's buffer shared by its output ports with dynamic thresholds
//! (Choudhury and Hahne, "Dynamic queue length thresholds for
//! shared-memory packet switches", IEEE/ACM ToN 6(2), 1998, §II): a packet
//! joins a port's queue only while that queue holds less than
//! T = α·(B − Q), B the pool's bytes and Q the bytes in use in the whole
//! pool. With S ports overloaded at once, each settles where
//! q = α(B − S·q), at q = αB/(1 + Sα), which keeps B/(1 + Sα) of the pool
//! free for a port that becomes busy (§III). An admission check in front
//! of a port's queue kind (`crate::port::Port::admit_shared`).

use crate::config::{bad, Knob};

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

/// The shared buffer's threshold factor (its size is `buffer=shared:B`).
pub const KNOBS: &[Knob] = &[
    Knob {
        name: "dt_alpha",
        default: "1",
        unit: "number",
        help: "dynamic threshold's alpha of a shared buffer: a queue grows while below alpha x free pool bytes (1)",
        set: |c, key, v| {
            let a: f64 = v
            .trim()
            .parse()
            .map_err(|_| bad(key, format!("'{v}' is not a number")))?;
            if !(a > 0.0 && a.is_finite()) {
                return Err(bad(key, format!("{a} is not above 0")));
            }
            c.dt_alpha = a;
            Ok(())
        },
    },
];

#[cfg(test)]
mod tests {
    use super::*;
    use crate::packet::tests::pkt;
    use crate::port::Port;
    use crate::queue::Admit;

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
