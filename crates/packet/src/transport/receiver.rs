//! The receiving end point every transport shares: cumulative ACKs over an
//! out-of-order store, CE echo state for DCTCP's delayed ACKs, and SACK
//! blocks when asked (RFC 2018).

use crate::sack::SackList;
use std::collections::BTreeMap;

/// A receiving end point: cumulative ACKs over an out-of-order store.
#[derive(Debug, Clone, Default)]
pub struct Receiver {
    /// Every byte before this has arrived.
    pub nxt: u64,
    size: u64,
    ooo: BTreeMap<u64, u64>,
    /// Full segments received since the last ACK (delayed ACKs).
    pub pending: u32,
    /// The CE mark of the last data packet.
    pub last_ce: bool,
    /// With SACK: the blocks it reported, newest first (RFC 2018 §4).
    sacks: Option<Box<SackList>>,
}

impl Receiver {
    /// A receiver of `size` bytes.
    pub fn new(size: u64) -> Receiver {
        Receiver {
            size,
            ..Receiver::default()
        }
    }

    /// A receiver of `size` bytes that reports SACK blocks.
    pub fn with_sack(size: u64) -> Receiver {
        Receiver {
            sacks: Some(Box::default()),
            ..Receiver::new(size)
        }
    }

    /// The SACK blocks its next ACK carries, at most `max` (none without
    /// SACK).
    pub fn sack_blocks(&self, max: usize) -> crate::sack::Blocks {
        self.sacks
            .as_ref()
            .map_or_else(Default::default, |l| l.report(max))
    }

    /// Whether every byte has arrived.
    pub fn complete(&self) -> bool {
        self.nxt >= self.size
    }

    /// Whether byte `at` has arrived.
    pub fn has(&self, at: u64) -> bool {
        at < self.nxt || self.ooo.range(..=at).any(|(_, &end)| end > at)
    }

    /// Bytes `seq..seq + len` arrived, marked `ce`. Returns whether they
    /// were in order and whether the CE state changed (which a delayed
    /// ACK must not hide, DCTCP §3.1).
    pub fn on_data(&mut self, seq: u64, len: u32, ce: bool) -> (bool, bool) {
        let end = seq + len as u64;
        let in_order = seq <= self.nxt && self.ooo.is_empty();
        if let Some(l) = self.sacks.as_mut() {
            // RFC 2018 §4: a block for bytes stored above the cumulative
            // ACK (a copy of what it holds already changes nothing).
            if seq > self.nxt && !(self.ooo.range(..=seq).any(|(_, &e)| e >= end)) {
                l.arrived(seq, end);
            }
        }
        if seq <= self.nxt {
            self.nxt = self.nxt.max(end);
            // Merge what now joins.
            while let Some((&s, &e)) = self.ooo.iter().next() {
                if s > self.nxt {
                    break;
                }
                self.ooo.remove(&s);
                self.nxt = self.nxt.max(e);
            }
        } else {
            let e = self.ooo.entry(seq).or_insert(end);
            *e = (*e).max(end);
        }
        if let Some(l) = self.sacks.as_mut() {
            l.acked(self.nxt);
        }
        let changed = ce != self.last_ce;
        self.last_ce = ce;
        (in_order, changed)
    }
}
