//! Selective acknowledgements: the receiver's SACK blocks (RFC 2018 §4)
//! and the sender's scoreboard for SACK-based loss recovery (RFC 6675).
//!
//! **The receiver** ([`SackList`]) keeps the blocks it reported most
//! recently, newest first, as RFC 2018 §4 asks: the first block of an ACK
//! holds the segment that triggered it (unless that segment moved the
//! cumulative ACK), the others repeat the most recently reported blocks
//! that it does not cover, and a block leaves the list once the cumulative
//! ACK passes it. A new block absorbs the older ones it touches or
//! overlaps. An ACK carries at most [`max_blocks`]: 4 in TCP's 40 option
//! bytes, 3 beside the timestamp option (RFC 2018 §3).
//!
//! **The sender** ([`Scoreboard`]) keeps one entry per segment sent and not
//! yet cumulatively acknowledged, as RFC 6675 §3 builds its scoreboard
//! and as ns-3's `TcpTxBuffer` does (read 2026-11-26, ns-3.44): each
//! entry is SACKed, lost, retransmitted, or none of these. Our readings:
//!
//! * a block marks the entries that lie wholly inside it (a block that
//!   covers part of a segment marks nothing; segments here never split);
//! * IsLost (§4): an entry not SACKed with at least DupThresh = 3 SACKed
//!   entries at or above it is lost, and stays so until SACKed or
//!   acknowledged (ns-3 counts SACKed segments; RFC 6675 says DupThresh
//!   discontiguous blocks or more than (DupThresh − 1)·SMSS bytes: the same
//!   for full segments); the head is also marked lost when the third
//!   duplicate ACK enters recovery without it (§5 step 4, as ns-3);
//! * pipe (§4, SetPipe): over the entries not SACKed, one for an entry not
//!   lost and one more for a retransmitted one (HighRxt is the
//!   retransmitted flag: a hole is resent at most once per recovery);
//! * NextSeg (§4): (1) the first lost entry below the highest SACKed byte
//!   not yet retransmitted; (2) new data (the sender's); (3) in recovery,
//!   the first entry below the highest SACKed byte neither SACKed nor
//!   retransmitted; rule (4), the rescue retransmission, is left out, as
//!   ns-3 does ([`Scoreboard::next_hole`]);
//! * on a timeout every entry not SACKed becomes lost and the
//!   retransmitted flags are cleared, the SACK information kept (RFC 6675
//!   §5.1 with its erratum 1610, as ns-3 with SACK on:
//!   `SetSentListLost(false)`), so the timer's go-back resends only holes.

use std::collections::VecDeque;

/// The most SACK blocks one ACK carries: 3 beside the timestamp option,
/// 4 without (RFC 2018 §3: 40 option bytes, 8 per block plus 2).
pub fn max_blocks(timestamps: bool) -> usize {
    if timestamps {
        3
    } else {
        4
    }
}

/// The bytes a SACK option of `n` blocks adds to an ACK: kind, length and
/// 8 per block, padded to 4 bytes (two NOPs, as Linux sends it and as ns-3
/// pads its header).
pub fn option_bytes(n: usize) -> u32 {
    if n == 0 {
        0
    } else {
        (2 + 8 * n as u32).div_ceil(4) * 4
    }
}

/// Up to four SACK blocks, `[start, end)` byte ranges, first block first.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Blocks {
    /// The blocks; only the first `n` are meaningful.
    pub b: [(u64, u64); 4],
    /// How many.
    pub n: u8,
}

impl Blocks {
    /// The blocks in order.
    pub fn as_slice(&self) -> &[(u64, u64)] {
        &self.b[..self.n as usize]
    }
}

/// The blocks of the ACKs in flight, one slot per ACK: a packet carries
/// only its slot's number (0 for none), so packets keep their size with
/// SACK off. A slot is freed when its ACK arrives or is dropped.
#[derive(Debug, Clone, Default)]
pub struct SackStore {
    slots: Vec<Blocks>,
    free: Vec<u32>,
}

impl SackStore {
    /// Stores `b`; its slot's number, from 1.
    pub fn put(&mut self, b: Blocks) -> u32 {
        match self.free.pop() {
            Some(i) => {
                self.slots[i as usize - 1] = b;
                i
            }
            None => {
                self.slots.push(b);
                self.slots.len() as u32
            }
        }
    }

    /// Takes slot `i`'s blocks and frees it (none for 0).
    pub fn take(&mut self, i: u32) -> Blocks {
        if i == 0 {
            return Blocks::default();
        }
        self.free.push(i);
        self.slots[i as usize - 1]
    }

    /// Slots in use (a test's leak check).
    pub fn in_use(&self) -> usize {
        self.slots.len() - self.free.len()
    }
}

/// The receiver's recently reported blocks, newest first (RFC 2018 §4).
#[derive(Debug, Clone, Default)]
pub struct SackList {
    /// Newest first, at most 4, disjoint and not touching.
    blocks: Vec<(u64, u64)>,
}

impl SackList {
    /// Bytes `seq..end` arrived above the cumulative ACK and were stored:
    /// their block, merged with the blocks it touches, goes first.
    pub fn arrived(&mut self, seq: u64, end: u64) {
        let (mut s, mut e) = (seq, end);
        self.blocks.retain(|&(bs, be)| {
            if bs <= e && be >= s {
                s = s.min(bs);
                e = e.max(be);
                false
            } else {
                true
            }
        });
        self.blocks.insert(0, (s, e));
        self.blocks.truncate(4);
    }

    /// The cumulative ACK moved to `nxt`: the blocks below it go.
    pub fn acked(&mut self, nxt: u64) {
        self.blocks.retain(|&(_, e)| e > nxt);
    }

    /// The first `max` blocks, for an ACK.
    pub fn report(&self, max: usize) -> Blocks {
        let mut out = Blocks::default();
        for (i, &b) in self.blocks.iter().take(max.min(4)).enumerate() {
            out.b[i] = b;
            out.n = i as u8 + 1;
        }
        out
    }
}

/// DupThresh (RFC 6675 §2, RFC 5681 §3.2).
pub const DUP_THRESH: u32 = 3;

/// The most segments `reordering=adaptive` raises DupThresh to (Linux's
/// `net.ipv4.tcp_max_reordering`, 300).
pub const MAX_REORDERING: u32 = 300;

/// One segment sent and not cumulatively acknowledged.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Entry {
    seq: u64,
    end: u64,
    sacked: bool,
    lost: bool,
    retx: bool,
}

impl Entry {
    fn len(&self) -> u64 {
        self.end - self.seq
    }
}

/// The sender's scoreboard (see the module doc).
#[derive(Debug, Clone, Default)]
pub struct Scoreboard {
    /// Oldest first, contiguous from the cumulative ACK.
    entries: VecDeque<Entry>,
    /// Bytes of the entries SACKed.
    sacked: u64,
    /// Bytes of the entries lost and not SACKed.
    lost: u64,
    /// Bytes of the entries retransmitted and not SACKed.
    retx: u64,
    /// Bytes of all entries.
    total: u64,
    /// One past the highest SACKed byte; 0 when nothing is SACKed.
    high_sacked: u64,
    /// DupThresh raised by the reordering seen (`reordering=adaptive`),
    /// segments; 0 (and anything below [`DUP_THRESH`]) for the fixed 3.
    reordering: u32,
    /// The farthest reordering seen since the sender last asked, bytes: a
    /// segment sent once and never SACKed arrived (SACKed or cumulatively
    /// acknowledged) below the highest SACKed byte, this far below it.
    reordered: u64,
}

impl Scoreboard {
    /// Bytes `seq..end` went out; `retransmit` when sent before (an entry
    /// resent whole, as [`Scoreboard::next_hole`] gives them).
    #[inline(never)]
    pub fn sent(&mut self, seq: u64, end: u64, retransmit: bool) {
        let tail = self.entries.back().map_or(0, |e| e.end);
        if !retransmit || self.entries.is_empty() || seq >= tail {
            self.entries.push_back(Entry {
                seq,
                end,
                sacked: false,
                lost: false,
                retx: false,
            });
            self.total += end - seq;
            return;
        }
        if let Some(e) = self.find_mut(seq) {
            if !e.retx && !e.sacked {
                e.retx = true;
                let len = e.len();
                self.retx += len;
            }
        }
    }

    fn find_mut(&mut self, seq: u64) -> Option<&mut Entry> {
        let i = self.entries.partition_point(|e| e.end <= seq);
        self.entries.get_mut(i).filter(|e| e.seq <= seq)
    }

    /// Every byte before `ack` arrived: those entries leave (an entry
    /// acknowledged in part keeps its rest).
    pub fn ack(&mut self, ack: u64) {
        while let Some(e) = self.entries.front().copied() {
            if e.seq >= ack {
                break;
            }
            if !e.sacked && !e.retx && e.seq < self.high_sacked {
                self.reordered = self.reordered.max(self.high_sacked - e.seq);
            }
            let gone = e.end.min(ack) - e.seq;
            self.forget(&e, gone);
            if e.end <= ack {
                self.entries.pop_front();
            } else if let Some(f) = self.entries.front_mut() {
                f.seq = ack;
            }
        }
        if self.high_sacked <= ack {
            self.high_sacked = 0;
        }
    }

    fn forget(&mut self, e: &Entry, bytes: u64) {
        self.total -= bytes;
        if e.sacked {
            self.sacked -= bytes;
        } else {
            if e.lost {
                self.lost -= bytes;
            }
            if e.retx {
                self.retx -= bytes;
            }
        }
    }

    /// An ACK's SACK blocks (RFC 6675 §5, Update()): marks the entries
    /// inside them and then the lost ones; returns the bytes newly SACKed
    /// (above zero: the ACK is a duplicate in RFC 6675's sense, §2).
    pub fn update(&mut self, blocks: &[(u64, u64)]) -> u64 {
        let mut newly = 0;
        for &(s, e) in blocks {
            let mut i = self.entries.partition_point(|x| x.seq < s);
            while let Some(x) = self.entries.get_mut(i) {
                if x.end > e {
                    break;
                }
                if !x.sacked {
                    let len = x.len();
                    if !x.retx && x.end < self.high_sacked {
                        self.reordered = self.reordered.max(self.high_sacked - x.seq);
                    }
                    if x.lost {
                        self.lost -= len;
                    }
                    if x.retx {
                        self.retx -= len;
                    }
                    x.sacked = true;
                    x.lost = false;
                    self.sacked += len;
                    newly += len;
                    self.high_sacked = self.high_sacked.max(x.end);
                }
                i += 1;
            }
        }
        if newly > 0 {
            self.mark_lost();
        }
        newly
    }

    /// IsLost from the SACKed entries (ns-3's `UpdateLostCount`): every
    /// entry not SACKed below the DupThresh-th highest SACKed entry.
    fn mark_lost(&mut self) {
        let mut seen = 0;
        let mut cut = None;
        let thresh = self.dup_thresh();
        for (i, e) in self.entries.iter().enumerate().rev() {
            if e.sacked {
                seen += 1;
                if seen == thresh {
                    cut = Some(i);
                    break;
                }
            }
        }
        let Some(cut) = cut else { return };
        let mut added = 0;
        for e in self.entries.iter_mut().take(cut) {
            if !e.sacked && !e.lost {
                e.lost = true;
                added += e.len();
            }
        }
        self.lost += added;
    }

    /// Whether the entry holding byte `seq` is lost (IsLost, RFC 6675 §4).
    pub fn is_lost(&self, seq: u64) -> bool {
        if seq >= self.high_sacked {
            return false;
        }
        let i = self.entries.partition_point(|e| e.end <= seq);
        self.entries.get(i).is_some_and(|e| e.seq <= seq && e.lost)
    }

    /// Marks the first entry lost, not SACKed and not retransmitted (RFC
    /// 6675 §5 step 4 when the third duplicate ACK finds it not lost).
    pub fn mark_head_lost(&mut self) {
        let Some(h) = self.entries.front().copied() else {
            return;
        };
        let len = h.len();
        if h.sacked {
            self.sacked -= len;
        } else if h.retx {
            self.retx -= len;
        }
        if h.sacked || !h.lost {
            self.lost += len;
        }
        if let Some(f) = self.entries.front_mut() {
            f.sacked = false;
            f.retx = false;
            f.lost = true;
        }
    }

    /// A retransmission timeout (see the module doc): the entries not
    /// SACKed are lost, none is retransmitted; SACKs are kept.
    pub fn timeout(&mut self) {
        self.retx = 0;
        let mut lost = 0;
        for e in self.entries.iter_mut() {
            e.retx = false;
            if !e.sacked {
                e.lost = true;
                lost += e.len();
            }
        }
        self.lost = lost;
    }

    /// DupThresh now: [`DUP_THRESH`], or the reordering seen if larger
    /// (`reordering=adaptive`).
    pub fn dup_thresh(&self) -> u32 {
        self.reordering.max(DUP_THRESH)
    }

    /// The farthest reordering seen since the last call, bytes (0: none).
    pub fn take_reordered(&mut self) -> u64 {
        std::mem::take(&mut self.reordered)
    }

    /// Raises DupThresh to `segments` (at most [`MAX_REORDERING`]; never
    /// lowers it), as Linux raises `tp->reordering`.
    pub fn raise_reordering(&mut self, segments: u32) {
        self.reordering = self.reordering.max(segments.min(MAX_REORDERING));
    }

    /// One past the highest SACKed byte (0 when nothing is SACKed).
    pub fn high_sacked(&self) -> u64 {
        self.high_sacked
    }

    /// Bytes retransmitted and neither SACKed nor acknowledged.
    pub fn retx_bytes(&self) -> u64 {
        self.retx
    }

    /// A timeout undone as spurious (`rto_undo`): no entry lost but those
    /// the SACKs say are (IsLost), as before it.
    pub fn undo_timeout(&mut self) {
        for e in self.entries.iter_mut() {
            e.lost = false;
        }
        self.lost = 0;
        self.mark_lost();
    }

    /// pipe, the bytes deemed in the network (RFC 6675 §4, SetPipe).
    pub fn pipe(&self) -> u64 {
        self.total - self.sacked - self.lost + self.retx
    }

    /// Bytes SACKed.
    pub fn sacked_bytes(&self) -> u64 {
        self.sacked
    }

    /// NextSeg's rules (1) and, with `rule3`, (3) (RFC 6675 §4): the
    /// entry to retransmit, `(seq, len)`. Rule (1) comes first; the sender
    /// tries new data (rule 2) between them: `rule3` is false for the
    /// first call.
    pub fn next_hole(&self, rule3: bool) -> Option<(u64, u64)> {
        if !rule3 && self.lost == 0 {
            return None;
        }
        for e in &self.entries {
            if self.high_sacked > 0 && e.seq >= self.high_sacked {
                break;
            }
            if e.retx || e.sacked {
                continue;
            }
            if e.lost || rule3 {
                return Some((e.seq, e.len()));
            }
        }
        None
    }

    /// The length of the entry starting at `seq`, if one does.
    pub fn len_at(&self, seq: u64) -> Option<u64> {
        let i = self.entries.partition_point(|e| e.end <= seq);
        self.entries
            .get(i)
            .filter(|e| e.seq == seq)
            .map(|e| e.len())
    }

    /// Whether the first entry was retransmitted (ns-3's
    /// `IsHeadRetransmitted`).
    pub fn head_retransmitted(&self) -> bool {
        self.entries.front().is_some_and(|e| e.retx)
    }

    /// Whether nothing is outstanding.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reordering_seen_raises_dupthresh() {
        // Six segments of 1000 bytes. Segment 3 is SACKed, then segment 1
        // (sent once, 2000 below the highest SACKed byte 4000): reordering
        // of 3000 bytes (from its first byte). The cumulative ACK of 3000
        // then covers segments 0 and 2, never SACKed nor resent: 4000.
        let mut b = Scoreboard::default();
        for i in 0..6 {
            b.sent(i * 1000, (i + 1) * 1000, false);
        }
        b.update(&[(3000, 4000)]);
        assert_eq!(b.take_reordered(), 0);
        b.update(&[(1000, 2000)]);
        assert_eq!(b.take_reordered(), 3000);
        b.ack(3000);
        assert_eq!(b.take_reordered(), 4000);
        assert_eq!(b.take_reordered(), 0, "taken");
        // DupThresh 3 until raised; raised to 4, three SACKed segments
        // above segment 3 no longer make it lost, four do.
        assert_eq!(b.dup_thresh(), DUP_THRESH);
        b.raise_reordering(2);
        assert_eq!(b.dup_thresh(), DUP_THRESH, "never below 3");
        b.raise_reordering(4);
        assert_eq!(b.dup_thresh(), 4);
        b.raise_reordering(1000);
        assert_eq!(b.dup_thresh(), MAX_REORDERING);
        let mut b = Scoreboard::default();
        for i in 0..8 {
            b.sent(i * 1000, (i + 1) * 1000, false);
        }
        b.raise_reordering(4);
        b.update(&[(1000, 4000)]);
        assert!(!b.is_lost(0));
        b.update(&[(1000, 5000)]);
        assert!(b.is_lost(0));
    }

    #[test]
    fn the_first_block_holds_the_newest_segment() {
        let mut l = SackList::default();
        l.arrived(2000, 3000);
        l.arrived(4000, 5000);
        l.arrived(6000, 7000);
        l.arrived(8000, 9000);
        l.arrived(10_000, 11_000);
        // Newest first; three beside timestamps.
        assert_eq!(
            l.report(3).as_slice(),
            &[(10_000, 11_000), (8000, 9000), (6000, 7000)]
        );
        // A segment that joins two blocks makes one, reported first.
        l.arrived(7000, 8000);
        assert_eq!(
            l.report(4).as_slice(),
            &[(6000, 9000), (10_000, 11_000), (4000, 5000)]
        );
        // The cumulative ACK passes the lower ones.
        l.acked(5000);
        assert_eq!(l.report(4).as_slice(), &[(6000, 9000), (10_000, 11_000)]);
        assert_eq!(option_bytes(0), 0);
        assert_eq!(option_bytes(1), 12);
        assert_eq!(option_bytes(3), 28);
        assert_eq!(option_bytes(4), 36);
    }

    fn board(n: u64) -> Scoreboard {
        let mut b = Scoreboard::default();
        for k in 0..n {
            b.sent(k * 1000, (k + 1) * 1000, false);
        }
        b
    }

    #[test]
    fn three_sacked_segments_above_make_a_hole_lost() {
        let mut b = board(6);
        assert_eq!(b.pipe(), 6000);
        // Segment 1 lost: 2 and 3 SACKed is not yet enough.
        assert_eq!(b.update(&[(2000, 4000)]), 2000);
        assert!(!b.is_lost(1000));
        assert_eq!(b.pipe(), 4000);
        assert_eq!(b.next_hole(false), None);
        assert_eq!(
            b.next_hole(true),
            Some((0, 1000)),
            "rule 3: the first not SACKed"
        );
        assert_eq!(b.update(&[(2000, 5000)]), 1000);
        assert!(b.is_lost(1000) && b.is_lost(0), "three above both");
        assert!(!b.is_lost(5000), "above the highest SACK");
        assert_eq!(b.pipe(), 1000);
        assert_eq!(b.next_hole(false), Some((0, 1000)));
        b.ack(1000);
        assert_eq!(b.next_hole(false), Some((1000, 1000)));
        b.sent(1000, 2000, true);
        assert_eq!(b.pipe(), 2000, "the resent hole and segment 5");
        assert_eq!(b.next_hole(false), None, "resent once per recovery");
        b.ack(5000);
        assert_eq!((b.pipe(), b.sacked_bytes()), (1000, 0));
    }

    #[test]
    fn a_timeout_keeps_sacks_and_resends_holes() {
        let mut b = board(5);
        b.update(&[(1000, 2000), (3000, 4000)]);
        b.sent(0, 1000, true);
        b.timeout();
        assert_eq!(b.pipe(), 0);
        assert_eq!(b.next_hole(false), Some((0, 1000)));
        b.sent(0, 1000, true);
        assert_eq!(
            b.next_hole(false),
            Some((2000, 1000)),
            "over the SACKed one"
        );
        b.sent(2000, 3000, true);
        // Segment 4 is above the highest SACK: not a hole by rule 1.
        assert_eq!(b.next_hole(false), None);
        b.mark_head_lost();
        assert_eq!(b.pipe(), 1000);
    }
}
