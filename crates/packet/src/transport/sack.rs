//! SACK-based loss recovery, RFC 6675 (with `sack` on; see `crate::sack`
//! for the scoreboard and our readings of the RFC and of ns-3).
//!
//! * An ACK is a duplicate when its blocks SACK bytes not SACKed before
//!   (§2); DupThresh of them, or IsLost(una), outside a recovery and a
//!   timeout's episode, enter the recovery (§5 steps 1-2): the head marked
//!   lost if it is not, RecoveryPoint = the highest byte sent, ssthresh =
//!   cwnd = max(pipe/2, 2 SMSS) (step 4.2, pipe as ns-3 measures
//!   FlightSize there), the head resent whatever the window says (4.3),
//!   the timer restarted (as in NewReno's path).
//! * Every ACK then sends while cwnd − pipe allows a segment (step C):
//!   NextSeg's lost holes, new data, then (in recovery) holes not yet
//!   deemed lost; a hole is resent once per recovery. Outside a recovery
//!   SACKed bytes leave pipe, which plays limited transmit's part.
//! * A cumulative ACK at or past RecoveryPoint ends it, cwnd = ssthresh
//!   (§5 (A)); partial ACKs restart the timer only the first time, as
//!   NewReno's path ("Impatient").
//! * A timeout (§5.1): ssthresh from pipe (kept when the timer had already
//!   resent the head), cwnd one segment, every byte not SACKed lost, the
//!   SACKs kept; sending resumes from the holes, not from `una` onward;
//!   duplicates are not counted until the episode's RecoveryPoint is
//!   acknowledged (ns-3's CA_LOSS).

use super::{Segment, Sender, Undo};
use crate::config::values::parse_on_off;
use crate::config::{bad, Knob};

impl Sender {
    /// Bytes SACKed and not yet cumulatively acknowledged.
    pub fn sacked_bytes(&self) -> u64 {
        self.board.sacked_bytes()
    }

    /// NextSeg (RFC 6675 §4) within cwnd − pipe; a forced retransmission
    /// (a paced sender's, from `rtx`) goes first, outside the window.
    /// (Never inlined, here and below: NewReno's hot paths stay as small
    /// as they were without SACK.)
    #[inline(never)]
    pub(super) fn next_segment_sack(&mut self, now: u64) -> Option<Segment> {
        let mss = self.p.mss as u64;
        if let Some(seq) = self.rtx.take() {
            if seq >= self.una && seq < self.max_sent {
                let len = self.board.len_at(seq).unwrap_or(mss);
                return Some(self.segment_of(now, seq, len));
            }
        }
        let pipe = self.board.pipe();
        let fits = |len: u64, cwnd: f64, rate_based: bool| {
            rate_based || pipe == 0 || (pipe + len) as f64 <= cwnd + 1e-6
        };
        if let Some((seq, len)) = self.board.next_hole(false) {
            if !fits(len, self.cwnd, self.p.rate_based) {
                return None;
            }
            return Some(self.segment_of(now, seq, len));
        }
        let end = self.size.min(self.limit_end);
        if self.max_sent < end {
            let len = (end - self.max_sent).min(mss);
            if !fits(len, self.cwnd, self.p.rate_based) {
                return None;
            }
            let s = self.segment_of(now, self.max_sent, len);
            self.max_sent += len;
            self.nxt = self.max_sent;
            return Some(s);
        }
        if self.in_recovery {
            if let Some((seq, len)) = self.board.next_hole(true) {
                if fits(len, self.cwnd, self.p.rate_based) {
                    return Some(self.segment_of(now, seq, len));
                }
            }
        }
        None
    }

    /// Resends `una` outside the window: now, or at a paced sender's next
    /// slot.
    fn force_head(&mut self, now: u64, out: &mut Vec<Segment>) {
        if self.p.paced {
            self.rtx = Some(self.una);
        } else {
            let len = self.board.len_at(self.una).unwrap_or(self.p.mss as u64);
            let s = self.segment_of(now, self.una, len);
            out.push(s);
        }
    }

    #[inline(never)]
    pub(super) fn on_ack_sack(
        &mut self,
        now: u64,
        ack: u64,
        ece: bool,
        ts: u64,
        blocks: &[(u64, u64)],
        out: &mut Vec<Segment>,
    ) {
        let dctcp = self.p.ecn_capable();
        let mss = self.p.mss as f64;
        let old_una = self.una;
        // The highest SACKed byte before this ACK (what a fast recovery's
        // undo measures the reordering from).
        let fack = self.board.high_sacked();
        let mut acked = 0;
        if ack > self.una {
            acked = self.take_new_ack(now, ack, ece, ts, dctcp);
            self.board.ack(ack);
            self.nxt = self.nxt.max(self.una);
        }
        // Update() (§5): blocks of any ACK, even an old one, are news.
        let dup = self.board.update(blocks) > 0;
        if self.reorder_on() {
            self.adapt_reordering();
        }
        if ack > old_una {
            let restart = !self.in_recovery || ack >= self.recover || self.first_partial;
            let spurious = self.undo.filter(|u| ts < u.at);
            // Linux's `tcp_packet_delayed`: the ACK echoes a segment sent
            // before the recovery's first retransmission.
            let delayed = self.in_recovery && self.fr_undo.is_some_and(|u| ts < u.at);
            if let (true, Some(u)) = (self.timer_loss, spurious) {
                // RFC 3522: the ACK answers a segment sent before the timer
                // fired, so nothing was lost; RFC 4015's response as Linux
                // (`tcp_undo_cwnd_reduction`): the window and threshold
                // back, the timeout's lost marks gone.
                self.board.undo_timeout();
                self.cwnd = self.cwnd.max(u.cwnd);
                self.ssthresh = self.ssthresh.max(u.ssthresh);
                self.timer_loss = false;
                self.undo = None;
                self.undone += 1;
            } else if self.timer_loss {
                if ack >= self.recover {
                    self.timer_loss = false;
                    self.undo = None;
                }
                self.grow(acked);
            } else if delayed && self.board.retx_bytes() == 0 {
                self.undo_fast_recovery(fack.saturating_sub(old_una));
            } else if self.in_recovery {
                if ack >= self.recover {
                    // §5 (A): the recovery ends.
                    self.in_recovery = false;
                    self.fr_undo = None;
                    self.cwnd = self.ssthresh;
                    self.dupacks = 0;
                } else {
                    self.first_partial = false;
                }
            } else if !dup {
                self.dupacks = 0;
                if let Some(law) = self.deadline_law() {
                    law(self, now);
                } else {
                    self.grow(acked);
                }
            }
            self.after_new_ack(now, dctcp, restart);
        }
        if dup && !self.in_recovery && !self.timer_loss && self.una < self.max_sent {
            self.dupacks += 1;
            if self.dupacks >= self.board.dup_thresh() || self.board.is_lost(self.una) {
                // §5 steps 1-2 and 4.
                if !self.board.is_lost(self.una) {
                    self.board.mark_head_lost();
                }
                if self.reorder_on() {
                    self.fr_undo = Some(Undo {
                        cwnd: self.cwnd,
                        ssthresh: self.ssthresh,
                        at: now,
                    });
                }
                self.recover = self.max_sent;
                self.in_recovery = true;
                self.first_partial = true;
                self.fast_retransmits += 1;
                self.ssthresh = (self.board.pipe() as f64 / 2.0).max(2.0 * mss);
                self.cwnd = self.ssthresh;
                self.force_head(now, out);
                self.rto_at = Some(now + self.rto);
            }
        }
        self.ecn_cut_then_send(now, dctcp, ece, out);
    }

    fn reorder_on(&self) -> bool {
        self.p.reorder_adaptive && self.p.timestamps
    }

    /// `reordering=adaptive`: DupThresh rises to the reordering the
    /// scoreboard saw, in segments rounded up (Linux's
    /// `tcp_check_sack_reordering`; never lowered within a flow).
    #[inline(never)]
    fn adapt_reordering(&mut self) {
        let bytes = self.board.take_reordered();
        if bytes > 0 {
            let mss = self.p.mss as u64;
            let segments = bytes.div_ceil(mss).min(u32::MAX as u64) as u32;
            self.board.raise_reordering(segments);
        }
    }

    /// `reordering=adaptive`: the hole that started the recovery was
    /// filled by its original (the ACK echoes a timestamp from before the
    /// retransmission) and no other retransmission is outstanding, so
    /// nothing was lost: window and threshold back, the recovery's lost
    /// marks gone (Linux's `tcp_try_undo_partial` and
    /// `tcp_try_undo_recovery` with `tcp_undo_cwnd_reduction`; RFC 3522's
    /// detection, RFC 4015's response).
    /// `reordered`: how far below the highest SACKed byte the hole was,
    /// the reordering this shows (Linux's `tcp_check_sack_reordering`).
    #[inline(never)]
    fn undo_fast_recovery(&mut self, reordered: u64) {
        let Some(u) = self.fr_undo.take() else { return };
        let mss = self.p.mss as u64;
        self.board
            .raise_reordering(reordered.div_ceil(mss).min(u32::MAX as u64) as u32);
        self.board.undo_timeout();
        self.cwnd = self.cwnd.max(u.cwnd);
        self.ssthresh = self.ssthresh.max(u.ssthresh);
        self.in_recovery = false;
        self.dupacks = 0;
        self.fast_undone += 1;
    }

    #[inline(never)]
    pub(super) fn on_timeout_sack(&mut self, now: u64, out: &mut Vec<Segment>) {
        let mss = self.p.mss as f64;
        self.fr_undo = None;
        if self.p.rto_undo && self.p.timestamps && !self.timer_loss {
            self.undo = Some(Undo {
                cwnd: self.cwnd,
                ssthresh: self.ssthresh,
                at: now,
            });
        }
        // RFC 5681 §3.1, as ns-3 tests it: the head not yet resent by the
        // timer.
        if !(self.timer_loss && self.board.head_retransmitted()) {
            self.ssthresh = (self.board.pipe() as f64 / 2.0).max(2.0 * mss);
        }
        self.board.timeout();
        self.timer_loss = true;
        self.cwnd = mss;
        self.in_recovery = false;
        self.dupacks = 0;
        self.recover = self.max_sent;
        self.cwr_end = self.max_sent;
        self.rto = (self.rto.saturating_mul(2)).min(self.p.max_rto_ps);
        self.rtx = None;
        self.timed.clear();
        if !self.p.paced {
            self.send(now, out);
        }
    }
}

/// SACK's recovery and its undo rules.
pub const KNOBS: &[Knob] = &[
    Knob {
        name: "sack",
        default: "off",
        unit: "on/off",
        help: "on: SACK blocks (RFC 2018) and SACK-based loss recovery (RFC 6675); off: NewReno, RFC 6582 (off)",
        set: |c, key, v| {
            c.sack = parse_on_off(key, v)?;
            Ok(())
        },
    },
    Knob {
        name: "rto_undo",
        default: "off",
        unit: "on/off",
        help: "on: with sack and timestamps, a timeout the echoed timestamp shows spurious is undone (RFC 3522/4015, Linux) (off)",
        set: |c, key, v| {
            c.rto_undo = parse_on_off(key, v)?;
            Ok(())
        },
    },
    Knob {
        name: "reordering",
        default: "fixed",
        unit: "choice",
        help: "fixed: DupThresh 3 (RFC 6675); adaptive: with sack and timestamps, DupThresh follows the reordering seen and a fast recovery the echoed timestamp shows spurious is undone (Linux) (fixed)",
        set: |c, key, v| {
            c.reorder_adaptive = match v.trim().to_ascii_lowercase().as_str() {
                "fixed" => false,
                "adaptive" => true,
                _ => return Err(bad(key, format!("'{v}': fixed or adaptive"))),
            };
            Ok(())
        },
    },
];
