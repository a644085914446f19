//! The TCP family's end points, written from their specifications:
//!
//! * slow start and congestion avoidance, RFC 5681 §3.1, with appropriate
//!   byte counting (RFC 3465, L = 2 SMSS) in slow start;
//! * fast retransmit and NewReno fast recovery, RFC 6582 §3.2 (partial
//!   acknowledgements retransmit the next hole and deflate the window; only
//!   the first partial acknowledgement restarts the retransmission timer,
//!   step 4, the "Impatient" variant of §4, so a recovery with many holes
//!   ends in a timeout instead of one hole per round trip);
//! * limited transmit, RFC 3042 §2 (RFC 5681 §3.2): each of the first two
//!   duplicate ACKs lets one segment of new data out, the window unchanged
//!   (at most cwnd + 2 segments outstanding), and those segments are left
//!   out of the FlightSize that sets ssthresh at the third (RFC 5681 §3.2
//!   step 2);
//! * the retransmission timer, RFC 6298 §2 (SRTT, RTTVAR with α = 1/8,
//!   β = 1/4, RTO = SRTT + 4·RTTVAR floored at the minimum RTO, doubled on
//!   each expiry, §5.5), with RTT samples from a timestamp echoed by each
//!   ACK (RFC 7323 §4), so retransmitted segments give samples too; or,
//!   timestamps off, Karn's algorithm (RFC 6298 §3): a send time per
//!   segment sent once, the sample from the oldest one an ACK covers,
//!   none from a retransmitted one (and none across a timeout, after
//!   which everything outstanding may be resent), the backed-off RTO kept
//!   until the next sample (RFC 6298 §5, note after step 5.7);
//! * DCTCP, Alizadeh et al., SIGCOMM 2010, §3.1-3.2: the receiver echoes
//!   each packet's CE mark in its ACK; the sender keeps
//!   α ← (1 − g)·α + g·F once per window of data (F the fraction of bytes
//!   acknowledged with ECE, Eq. 1) and, on marks, cuts the window once per
//!   window: cwnd ← cwnd·(1 − α/2) (Eq. 2);
//! * a paced sender (`crate::pacing`) leaves the timing to the engine: an
//!   ACK or a timeout only updates its state (a retransmission waits as
//!   pending), and the engine takes one segment per pacing slot
//!   ([`Sender::send_up_to`]); a rate-based sender (RCP) has no window,
//!   only the recovery machinery above;
//! * D2TCP, Vamanan, Hasan and Vijaykumar, SIGCOMM 2012, §3.1: DCTCP's α
//!   and marks, and the cut cwnd ← cwnd·(1 − p/2) with the penalty
//!   p = α^d (the "gamma correction", [`penalty`]); d is the flow's
//!   deadline imminence Tc/D ([`imminence`]): Tc the time the remaining
//!   bytes need at the current rate, taken as ¾ of the window per RTT
//!   (the mean of DCTCP's sawtooth), D the time left to the deadline; d is
//!   held to [0.5, 2] (§3.1.2). A near-deadline flow (d > 1) backs off
//!   less than DCTCP, a far one (d < 1) more. A flow without a deadline
//!   has d = 1 and is plain DCTCP; after a missed deadline d follows
//!   [`LateRule`]. Sources checked (2026-11-25): p = α^d, with d the
//!   "deadline imminence factor" and "larger d implies a closer deadline",
//!   is the paper's Eq. as TAFE quotes it (seed paper
//!   003_c7c0a2e74d6d7471, §IV-B, Eq. 2); the paper's own text could not be
//!   read here, so Tc = B/(¾·W per RTT), the range [0.5, 2] and the cut
//!   W·(1 − p/2) are not checked against it. A third-party ns-3 D2TCP
//!   (FujiZ/ns-3, `d2tcp-socket.cc`) uses the same Tc, range and cut, with
//!   B the bytes not yet sent (here not yet acknowledged) and d = 0.5 once
//!   the deadline has passed (here [`LateRule`], 2 by default).
//! * pFabric's rate control, Alizadeh et al., SIGCOMM 2013, §4.2: the
//!   window starts at the path's BDP (line rate; the engine computes it,
//!   [`pfabric::bdp_segments`]) with the slow-start threshold there
//!   too, so it grows by additive increase per ACK "as in standard TCP";
//!   loss is detected by a fixed timeout only (no fast retransmit, no
//!   reaction to duplicate ACKs, no ECN, no back-off); on a timeout the
//!   flow goes back to slow start with ssthresh at half the window before
//!   it; after `probe_after` consecutive timeouts (§4.2: 5) it enters
//!   probe mode, sending only a 1-byte segment per timeout, and returns to
//!   slow start at the first ACK. pFabric's receivers send SACKs; these
//!   are cumulative, so after a timeout the sender resends from the first
//!   hole and the first ACK jumps over what had arrived.
//! * MCP, Karuna's window for deadline flows (Chen, Chen, Bai and
//!   Alizadeh, "Scheduling Mix-flows in Commodity Datacenters with
//!   Karuna", SIGCOMM 2016, §4). Text (seed 002, §1 and §3): MCP "takes
//!   the minimum bandwidth needed to complete deadline flows barely before
//!   their deadlines", from the highest priority queue, and leaves the
//!   rest to the non-deadline flows below it. The paper's §4 (its window
//!   law, derived by Lyapunov optimization) could not be read here: the
//!   seed stops at §3 and no public copy of §4 was found. What is built is
//!   our reading of the authors' public kernel prototype (Wei Bai's
//!   `baiwei0427/PIAS`, `backup/mixedflow/MCP/main.c`, read 2026-11-25):
//!   once per smoothed RTT the target window becomes
//!   W* = (⌊R·SRTT/(D·MSS)⌋ + 1)·MSS, at least [`MCP_MIN_SEGMENTS`]
//!   segments ([`mcp_window`]; R the bytes not yet acknowledged, D the time
//!   left to the deadline), so W*/SRTT is R/D, the least rate that meets
//!   the deadline, rounded up to the next segment per RTT; each new ACK
//!   outside fast recovery moves the window one segment toward W*, never
//!   past it; past the deadline W* is the floor. Before the first RTT
//!   sample the window stays at its initial value. MCP's packets are not
//!   ECN-capable (the prototype clears its flows' marks) and a flow with
//!   a deadline never grows by slow start or congestion avoidance; loss
//!   still cuts as NewReno does (the prototype sets the receive window
//!   over the host's own TCP, whose loss recovery stays), after which the
//!   per-ACK steps climb back. Differences from the prototype: its window
//!   is min(TCP's cwnd, MCP's), so after a loss it climbs at TCP's pace;
//!   its first target uses a configured RTT before any sample. Against
//!   the text: the abstract of MCP's first version (Chen et al., HotNets
//!   2013) says ECN approximates its optimal window update, so the
//!   paper's law reacts to marks. **The ECN term** (`mcp_ecn=on`; off by
//!   default; our reading, as the law is not in any text we could read):
//!   MCP's packets are ECN-capable, the sender keeps DCTCP's α (Eq. 1, from
//!   0: no mark seen yet) and each per-RTT target becomes
//!   W*·(1 − α/2), DCTCP's back-off applied to the window the deadline
//!   needs, at least the floor ([`mcp_ecn_window`]). A flow held back by
//!   marks falls behind, and the next R/D, recomputed from what is left,
//!   asks for more: R/D over the shrinking time left plays the deadline's
//!   virtual queue of a Lyapunov drift-plus-penalty law, α the path's
//!   queues. There is no separate per-window cut. `mcp_ecn=off` is the
//!   prototype (no ECT, marks ignored). Without a deadline MCP grows as
//!   NewReno.
//!
//! Each sender holds its own transport ([`SenderParams::transport`]), so
//! flows of one run may use different ones.
//!
//! Sequence numbers are byte offsets from 0; the flow's size is known to
//! the sender (it has that many bytes to send), never to the network.

pub mod pfabric;

use crate::config::LateRule;
use crate::config::TransportKind;
use crate::sack::{SackList, Scoreboard};
use std::collections::{BTreeMap, VecDeque};

/// The range D2TCP holds the deadline imminence d to (§3.1.2).
pub const D_RANGE: (f64, f64) = (0.5, 2.0);

/// D2TCP's penalty p = α^d (§3.1, the gamma correction): d = 1 gives
/// DCTCP's α, d > 1 a smaller penalty (α ≤ 1), d < 1 a larger one.
pub fn penalty(alpha: f64, d: f64) -> f64 {
    alpha.powf(d)
}

/// D2TCP's deadline imminence d = Tc/D, held to [`D_RANGE`] (§3.1.2):
/// Tc = `remaining` bytes at ¾·`cwnd` bytes per `srtt_ps`; D = `left_ps`,
/// the time to the deadline. A deadline already passed (`left_ps` ≤ 0)
/// gives `late`'s d.
pub fn imminence(remaining: u64, cwnd: f64, srtt_ps: f64, left_ps: i128, late: LateRule) -> f64 {
    if left_ps <= 0 {
        return match late {
            LateRule::Max => D_RANGE.1,
            LateRule::Dctcp => 1.0,
        };
    }
    let tc = remaining as f64 * srtt_ps / (0.75 * cwnd);
    (tc / left_ps as f64).clamp(D_RANGE.0, D_RANGE.1)
}

/// MCP's least window, segments (the authors' prototype's floor; Karuna's
/// host policy paces at no less than this per base RTT, `karuna.rs`).
pub const MCP_MIN_SEGMENTS: u32 = 2;

/// MCP's target window, bytes (see the module doc): the window that sends
/// `remaining` bytes in the `left_ps` to the deadline at one window per
/// `srtt_ps`, rounded down to whole `mss` segments plus one, at least
/// [`MCP_MIN_SEGMENTS`]; a deadline already passed (`left_ps` ≤ 0) gives
/// the floor.
pub fn mcp_window(remaining: u64, srtt_ps: f64, left_ps: i128, mss: u32) -> f64 {
    let mss = mss as f64;
    let floor = MCP_MIN_SEGMENTS as f64 * mss;
    if left_ps <= 0 {
        return floor;
    }
    let need = remaining as f64 * srtt_ps / left_ps as f64;
    (((need / mss).floor() + 1.0) * mss).max(floor)
}

/// MCP's target with its ECN term (`mcp_ecn`, see the module doc): the
/// window the deadline needs, `need` bytes, scaled by DCTCP's back-off
/// 1 − α/2 (α the flow's EWMA of marked bytes, Eq. 1 of DCTCP), never
/// below [`MCP_MIN_SEGMENTS`] segments.
pub fn mcp_ecn_window(need: f64, alpha: f64, mss: u32) -> f64 {
    let floor = MCP_MIN_SEGMENTS as f64 * mss as f64;
    (need * (1.0 - alpha.clamp(0.0, 1.0) / 2.0)).max(floor)
}

/// What a sender needs from the configuration.
#[derive(Debug, Clone, Copy)]
pub struct SenderParams {
    /// Payload bytes of a full segment.
    pub mss: u32,
    /// Initial window, segments.
    pub init_cwnd: u32,
    /// Retransmission timer floor, ps.
    pub min_rto_ps: u64,
    /// Retransmission timer before the first sample, ps.
    pub initial_rto_ps: u64,
    /// The longest a backed-off retransmission timer waits, ps (`max_rto`).
    pub max_rto_ps: u64,
    /// The flow's transport.
    pub transport: TransportKind,
    /// DCTCP's g.
    pub g: f64,
    /// The engine releases its segments one per pacing slot: ACKs and
    /// timeouts send nothing by themselves.
    pub paced: bool,
    /// No congestion window (RCP): the pacing rate alone limits it.
    pub rate_based: bool,
    /// D2TCP and MCP: the flow's deadline, an instant (ps); `None` for
    /// DCTCP (d = 1). Read by D2TCP's cut and MCP's target.
    pub deadline_ps: Option<u64>,
    /// D2TCP's d after a missed deadline.
    pub late: LateRule,
    /// MCP's ECN term (`mcp_ecn`): MCP's packets are ECN-capable, it keeps
    /// DCTCP's α, and its target is scaled by (1 − α/2).
    pub mcp_ecn: bool,
    /// Limited transmit (RFC 3042).
    pub limited_transmit: bool,
    /// pFabric: consecutive timeouts before probe mode.
    pub probe_after: u32,
    /// RTT samples from echoed timestamps (RFC 7323); else Karn's
    /// algorithm (RFC 6298 §3).
    pub timestamps: bool,
    /// Every new ACK recomputes the RTO from SRTT and RTTVAR, undoing a
    /// backoff (ns-3); else only a new sample does (RFC 6298 §5).
    pub rto_reset_on_ack: bool,
    /// SACK-based loss recovery (RFC 6675, `crate::sack`) instead of
    /// NewReno's; pFabric keeps its own.
    pub sack: bool,
    /// With `sack` and `timestamps`: a timeout found spurious by the
    /// echoed timestamp (RFC 3522) is undone (RFC 4015, as Linux's
    /// `tcp_try_undo_loss`; see [`Sender::on_timeout`]).
    pub rto_undo: bool,
    /// With `sack` and `timestamps`: Linux's reordering response
    /// (`reordering=adaptive`, [`Sender::on_ack_sacks`]): DupThresh follows
    /// the reordering seen, and a fast recovery that an echoed timestamp
    /// shows spurious is undone.
    pub reorder_adaptive: bool,
}

/// What a timeout changed, kept to undo it if it proves spurious.
#[derive(Debug, Clone, Copy)]
struct Undo {
    /// The window before the timeout, bytes.
    cwnd: f64,
    /// The slow-start threshold before it.
    ssthresh: f64,
    /// When the timer first fired in this episode (ps): an ACK echoing an
    /// earlier timestamp answers a segment sent before it.
    at: u64,
}

/// A segment's first transmission, timed for Karn's algorithm.
#[derive(Debug, Clone, Copy)]
struct Timed {
    /// First byte.
    seq: u64,
    /// One past its last byte.
    end: u64,
    /// When it was sent, ps.
    at: u64,
    /// Sent again since: its ACK is ambiguous (RFC 6298 §3).
    retx: bool,
}

/// A segment to put on the wire.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Segment {
    /// First byte.
    pub seq: u64,
    /// Payload bytes.
    pub len: u32,
    /// Whether these bytes were sent before.
    pub retransmit: bool,
}

/// A sending end point.
#[derive(Debug, Clone)]
pub struct Sender {
    p: SenderParams,
    size: u64,
    /// Every byte before this is acknowledged.
    pub una: u64,
    /// The next byte to send.
    pub nxt: u64,
    /// One past the highest byte ever sent.
    pub max_sent: u64,
    /// Congestion window, bytes.
    pub cwnd: f64,
    /// Slow-start threshold, bytes.
    pub ssthresh: f64,
    dupacks: u32,
    /// Bytes sent by limited transmit since the last new ACK.
    limited: u64,
    recover: u64,
    in_recovery: bool,
    /// A timeout's go-back-N is under way (`una` < `recover` since it).
    timer_loss: bool,
    /// No partial acknowledgement has arrived in this recovery yet.
    first_partial: bool,
    srtt: f64,
    rttvar: f64,
    has_rtt: bool,
    /// Current retransmission timeout, ps.
    pub rto: u64,
    /// When the retransmission timer expires, if armed (ps).
    pub rto_at: Option<u64>,
    /// DCTCP's α.
    pub alpha: f64,
    win_end: u64,
    acked_in_win: u64,
    marked_in_win: u64,
    cwr_end: u64,
    /// Segments sent again.
    pub retransmits: u64,
    /// Retransmission timer expiries.
    pub timeouts: u64,
    /// A paced sender's retransmission waiting for its slot.
    rtx: Option<u64>,
    /// pFabric: timeouts since the last new ACK.
    timeouts_in_row: u32,
    /// pFabric: in probe mode (§4.2).
    pub probing: bool,
    /// Timestamps off: the segments in flight, oldest first.
    timed: VecDeque<Timed>,
    /// New data stops here until the engine moves it (a host policy's
    /// next threshold: `crate::host`); `u64::MAX` without a policy.
    pub limit_end: u64,
    /// TAFE's window rule (TAFE Algorithm 2, lines 8-11): on a marked
    /// window cwnd ← cwnd·(1 − α·s), `s` the flow's share S_c/S_max; `None`
    /// for DCTCP's and D2TCP's cut.
    tafe_share: Option<f64>,
    /// MCP's target window (bytes) and when it is next recomputed (ps):
    /// at the first ACK at or after that instant, once per SRTT.
    pub mcp_target: Option<f64>,
    mcp_due: u64,
    /// With `sack`: the segments outstanding and what the SACKs said of
    /// them (empty otherwise).
    board: Box<Scoreboard>,
    /// With `rto_undo`: the timeout episode under way, to undo.
    undo: Option<Undo>,
    /// Timeouts undone as spurious.
    pub undone: u64,
    /// With `reordering=adaptive`: the fast recovery under way, to undo
    /// (`at` its first retransmission).
    fr_undo: Option<Undo>,
    /// Fast recoveries undone as spurious.
    pub fast_undone: u64,
    /// Entries into fast recovery.
    pub fast_retransmits: u64,
}

impl SenderParams {
    /// Whether the flow's data packets are ECN-capable and it keeps
    /// DCTCP's α: DCTCP, D2TCP, and MCP with its ECN term.
    pub fn ecn_capable(&self) -> bool {
        self.transport.uses_alpha() || (self.transport == TransportKind::Mcp && self.mcp_ecn)
    }
}

impl Sender {
    /// A sender of `size` bytes.
    pub fn new(p: SenderParams, size: u64) -> Sender {
        let cwnd = (p.init_cwnd as u64 * p.mss as u64) as f64;
        let pfabric = p.transport == TransportKind::Pfabric;
        Sender {
            p,
            size,
            una: 0,
            nxt: 0,
            max_sent: 0,
            cwnd,
            // pFabric starts at line rate and grows additively (§4.2).
            ssthresh: if pfabric { cwnd } else { f64::INFINITY },
            dupacks: 0,
            limited: 0,
            recover: 0,
            in_recovery: false,
            timer_loss: false,
            first_partial: false,
            srtt: 0.0,
            rttvar: 0.0,
            has_rtt: false,
            rto: p.initial_rto_ps,
            rto_at: None,
            // DCTCP starts at α = 1; MCP's ECN term starts unscaled, as no
            // mark has been seen.
            alpha: if p.transport == TransportKind::Mcp && p.mcp_ecn {
                0.0
            } else {
                1.0
            },
            win_end: 0,
            acked_in_win: 0,
            marked_in_win: 0,
            cwr_end: 0,
            retransmits: 0,
            timeouts: 0,
            rtx: None,
            timeouts_in_row: 0,
            probing: false,
            timed: VecDeque::new(),
            limit_end: u64::MAX,
            tafe_share: None,
            mcp_target: None,
            mcp_due: 0,
            board: Box::default(),
            undo: None,
            undone: 0,
            fast_retransmits: 0,
            fr_undo: None,
            fast_undone: 0,
        }
    }

    /// Changes its congestion control mid-flow (a host policy's marking):
    /// the transport, D2TCP's deadline, TAFE's share (see
    /// [`Sender::window_cut`]). Only between the window transports (TCP,
    /// DCTCP, D2TCP, MCP): a window sender does not become rate-based.
    /// MCP's target is recomputed at the next ACK.
    pub fn set_cc(
        &mut self,
        transport: TransportKind,
        deadline_ps: Option<u64>,
        tafe: Option<f64>,
    ) {
        if (transport, deadline_ps) != (self.p.transport, self.p.deadline_ps) {
            self.mcp_target = None;
            self.mcp_due = 0;
        }
        self.p.transport = transport;
        self.p.deadline_ps = deadline_ps;
        self.tafe_share = tafe;
    }

    /// Starts or stops the engine's pacing of its segments (a host
    /// policy's pacing rate came or went).
    pub fn set_paced(&mut self, paced: bool) {
        self.p.paced = paced;
    }

    /// Its transport now.
    pub fn transport(&self) -> TransportKind {
        self.p.transport
    }

    /// The fraction of the window a marked window takes away at `now`:
    /// DCTCP's α/2 (Eq. 2), D2TCP's α^d/2 (§3.1), or TAFE's α·s
    /// (Algorithm 2, line 11: cwnd × (1 − p), p = α/(S_max/S_c)).
    pub fn window_cut(&self, now: u64) -> f64 {
        match self.tafe_share {
            Some(share) => (self.alpha * share).min(1.0),
            None => penalty(self.alpha, self.imminence(now)) / 2.0,
        }
    }

    /// Whether the engine paces it (see [`SenderParams::paced`]).
    pub fn is_paced(&self) -> bool {
        self.p.paced
    }

    /// Bytes not yet acknowledged: pFabric's priority for the next packet
    /// (§3, the flow's remaining size).
    pub fn remaining(&self) -> u64 {
        self.size - self.una.min(self.size)
    }

    /// The smoothed RTT (ps), once there is a sample.
    pub fn srtt_ps(&self) -> Option<f64> {
        self.has_rtt.then_some(self.srtt)
    }

    /// Whether every byte is acknowledged.
    pub fn done(&self) -> bool {
        self.una >= self.size
    }

    fn flight(&self) -> u64 {
        self.max_sent.max(self.nxt) - self.una
    }

    fn segment_at(&mut self, now: u64, seq: u64) -> Segment {
        let len = (self.size - seq).min(self.p.mss as u64);
        self.segment_of(now, seq, len)
    }

    fn segment_of(&mut self, now: u64, seq: u64, len: u64) -> Segment {
        let len = len as u32;
        let retransmit = seq < self.max_sent;
        if retransmit {
            self.retransmits += 1;
        }
        if !self.p.timestamps {
            self.time_segment(now, seq, seq + len as u64, retransmit);
        }
        if self.sack_on() {
            self.board.sent(seq, seq + len as u64, retransmit);
        }
        Segment {
            seq,
            len,
            retransmit,
        }
    }

    /// Karn's algorithm (RFC 6298 §3): records a first transmission's
    /// time, or marks the timed segments a retransmission overlaps.
    fn time_segment(&mut self, now: u64, seq: u64, end: u64, retransmit: bool) {
        if !retransmit {
            self.timed.push_back(Timed {
                seq,
                end,
                at: now,
                retx: false,
            });
            return;
        }
        for t in self.timed.iter_mut() {
            if t.seq >= end {
                break;
            }
            if t.end > seq {
                t.retx = true;
            }
        }
    }

    /// Karn's sample for an ACK of every byte before `ack` at `now`: the
    /// oldest timed segment it covers, if that was sent once; the covered
    /// segments leave the record.
    fn karn_sample(&mut self, now: u64, ack: u64) -> Option<f64> {
        let first = *self.timed.front().filter(|t| t.end <= ack)?;
        while self.timed.front().is_some_and(|t| t.end <= ack) {
            self.timed.pop_front();
        }
        (!first.retx).then(|| now.saturating_sub(first.at) as f64)
    }

    /// Sends what the window allows from `nxt` (at least one segment when
    /// nothing is in flight) and arms the timer if data is outstanding.
    pub fn send(&mut self, now: u64, out: &mut Vec<Segment>) {
        self.send_up_to(now, usize::MAX, out);
    }

    /// The next segment: a pending retransmission, else new data if the
    /// window allows.
    fn next_segment(&mut self, now: u64) -> Option<Segment> {
        if self.probing {
            // pFabric §4.2: only probes, sent by the timer.
            return None;
        }
        if self.sack_on() {
            return self.next_segment_sack(now);
        }
        if let Some(seq) = self.rtx.take() {
            if seq >= self.una && seq < self.size {
                return Some(self.segment_at(now, seq));
            }
        }
        if self.nxt >= self.size.min(self.limit_end) {
            return None;
        }
        let in_flight = self.nxt - self.una;
        let len = (self.size.min(self.limit_end) - self.nxt).min(self.p.mss as u64);
        if !self.p.rate_based && in_flight > 0 && (in_flight + len) as f64 > self.cwnd + 1e-6 {
            // RFC 3042: new data only, within cwnd + the duplicates' allowance.
            if self.nxt < self.max_sent || self.limited + len > self.limited_allowance() {
                return None;
            }
            self.limited += len;
        }
        let s = self.segment_of(now, self.nxt, len);
        self.nxt += s.len as u64;
        self.max_sent = self.max_sent.max(self.nxt);
        Some(s)
    }

    /// Sends at most `n` segments as [`Sender::send`] does.
    pub fn send_up_to(&mut self, now: u64, n: usize, out: &mut Vec<Segment>) {
        for _ in 0..n {
            match self.next_segment(now) {
                Some(s) => out.push(s),
                None => break,
            }
        }
        if self.rto_at.is_none() && self.una < self.max_sent {
            self.rto_at = Some(now + self.rto);
        }
    }

    /// Retransmits `una` now, or when its slot comes if paced.
    fn retransmit_una(&mut self, now: u64, out: &mut Vec<Segment>) {
        if self.p.paced {
            self.rtx = Some(self.una);
        } else {
            let s = self.segment_at(now, self.una);
            out.push(s);
        }
    }

    /// Bytes limited transmit may send beyond the window now: one segment
    /// for each of the first two duplicate ACKs (RFC 3042 §2).
    fn limited_allowance(&self) -> u64 {
        if !self.p.limited_transmit || self.in_recovery || self.una < self.recover {
            return 0;
        }
        self.dupacks.min(2) as u64 * self.p.mss as u64
    }

    fn sample_rtt(&mut self, r: f64) {
        if self.p.transport == TransportKind::Pfabric {
            // A fixed timeout (pFabric §4.2).
            return;
        }
        // RFC 6298 §2.2-2.3.
        if self.has_rtt {
            self.rttvar = 0.75 * self.rttvar + 0.25 * (self.srtt - r).abs();
            self.srtt = 0.875 * self.srtt + 0.125 * r;
        } else {
            self.srtt = r;
            self.rttvar = r / 2.0;
            self.has_rtt = true;
        }
        self.reset_rto();
    }

    /// RTO = SRTT + 4·RTTVAR within [min_rto, max_rto] (RFC 6298 §2.2-2.5);
    /// the initial RTO before any sample.
    fn reset_rto(&mut self) {
        self.rto = if self.has_rtt {
            let rto = (self.srtt + 4.0 * self.rttvar).ceil() as u64;
            rto.max(self.p.min_rto_ps).min(self.p.max_rto_ps)
        } else {
            self.p.initial_rto_ps
        };
    }

    /// A new ACK of every byte before `ack` (> `una`) at `now`, echoing
    /// `ts` and `ece`: the RTT sample (timestamps or Karn's), DCTCP's
    /// counts of acknowledged and marked bytes, `una`. Returns the bytes it
    /// acknowledged. Both loss recoveries (NewReno's, SACK's) start so.
    #[inline]
    fn take_new_ack(&mut self, now: u64, ack: u64, ece: bool, ts: u64, dctcp: bool) -> u64 {
        let sample = if self.p.timestamps {
            Some(now.saturating_sub(ts) as f64)
        } else {
            self.karn_sample(now, ack)
        };
        match sample {
            Some(r) => self.sample_rtt(r),
            None if self.p.rto_reset_on_ack => self.reset_rto(),
            None => {}
        }
        let acked = ack - self.una;
        if dctcp {
            self.acked_in_win += acked;
            if ece {
                self.marked_in_win += acked;
            }
        }
        self.una = ack;
        acked
    }

    /// After a new ACK's window update: DCTCP's α (Eq. 1, once per window
    /// of data), then the timer: stopped when nothing is outstanding, else
    /// restarted if `restart`.
    #[inline]
    fn after_new_ack(&mut self, now: u64, dctcp: bool, restart: bool) {
        if dctcp && self.una >= self.win_end {
            if self.acked_in_win > 0 {
                let f = self.marked_in_win as f64 / self.acked_in_win as f64;
                self.alpha = (1.0 - self.p.g) * self.alpha + self.p.g * f;
            }
            self.acked_in_win = 0;
            self.marked_in_win = 0;
            self.win_end = self.nxt.max(self.una + 1);
        }
        if self.una >= self.max_sent {
            self.rto_at = None;
        } else if restart {
            self.rto_at = Some(now + self.rto);
        }
    }

    /// The end of every ACK: an ECN echo cuts the window (Eq. 2; D2TCP
    /// §3.1 with p = α^d), at most once per window and outside a recovery,
    /// never below 2 segments (Linux's floor: a window under 2 segments
    /// with delayed ACKs waits for the timer); then what the window allows
    /// is sent.
    #[inline]
    fn ecn_cut_then_send(&mut self, now: u64, dctcp: bool, ece: bool, out: &mut Vec<Segment>) {
        if dctcp && ece && !self.in_recovery && self.una > self.cwr_end && !self.mcp_on() {
            let mss = self.p.mss as f64;
            let cut = self.window_cut(now);
            self.cwnd = (self.cwnd * (1.0 - cut)).max(2.0 * mss);
            self.ssthresh = self.cwnd;
            self.cwr_end = self.max_sent;
        }
        if !self.done() && !self.p.paced {
            self.send(now, out);
        }
    }

    /// An ACK of every byte before `ack` arrived at `now`, echoing the
    /// timestamp `ts` and ECN-echo `ece`; appends what to send.
    pub fn on_ack(&mut self, now: u64, ack: u64, ece: bool, ts: u64, out: &mut Vec<Segment>) {
        self.on_ack_sacks(now, ack, ece, ts, &[], out);
    }

    /// [`Sender::on_ack`] for an ACK that carries SACK `blocks` (read only
    /// with `sack` on).
    pub fn on_ack_sacks(
        &mut self,
        now: u64,
        ack: u64,
        ece: bool,
        ts: u64,
        blocks: &[(u64, u64)],
        out: &mut Vec<Segment>,
    ) {
        if self.p.transport == TransportKind::Pfabric {
            self.on_ack_pfabric(now, ack, out);
            return;
        }
        if self.sack_on() {
            self.on_ack_sack(now, ack, ece, ts, blocks, out);
            return;
        }
        let dctcp = self.p.ecn_capable();
        let mss = self.p.mss as f64;
        if ack > self.una {
            let acked = self.take_new_ack(now, ack, ece, ts, dctcp);
            if ack >= self.recover {
                self.timer_loss = false;
            }
            if self.nxt < self.una {
                self.nxt = self.una;
            }
            // RFC 6298 §5.3: a new acknowledgement restarts the timer;
            // RFC 6582 step 4: within a recovery, only the first partial one.
            let restart = !self.in_recovery || ack >= self.recover || self.first_partial;
            if self.in_recovery {
                if ack >= self.recover {
                    // RFC 6582 §3.2 step 3: full acknowledgement.
                    self.in_recovery = false;
                    self.cwnd = self.ssthresh;
                } else {
                    // Step 4: partial acknowledgement.
                    self.first_partial = false;
                    self.retransmit_una(now, out);
                    self.cwnd = (self.cwnd - acked as f64 + mss).max(mss);
                }
            } else if self.mcp_on() {
                self.mcp_step(now);
            } else {
                self.grow(acked);
            }
            self.dupacks = 0;
            self.limited = 0;
            self.after_new_ack(now, dctcp, restart);
        } else if ack == self.una && self.una < self.max_sent {
            self.dupacks += 1;
            if self.dupacks == 3 && !self.in_recovery && self.una >= self.recover {
                // RFC 6582 §3.2 steps 1-2 (RFC 5681 Eq. 4 for ssthresh,
                // without what limited transmit sent).
                let flight = self.flight() - self.limited;
                self.ssthresh = (flight as f64 / 2.0).max(2.0 * mss);
                self.recover = self.max_sent;
                self.in_recovery = true;
                self.first_partial = true;
                self.fast_retransmits += 1;
                self.retransmit_una(now, out);
                self.cwnd = self.ssthresh + 3.0 * mss;
                self.rto_at = Some(now + self.rto);
            } else if self.in_recovery {
                self.cwnd += mss;
            }
        }
        self.ecn_cut_then_send(now, dctcp, ece, out);
    }

    /// D2TCP's d at `now`: 1 without a deadline (or before an RTT sample,
    /// when Tc is unknown).
    pub fn imminence(&self, now: u64) -> f64 {
        match self.p.deadline_ps {
            Some(at) if self.has_rtt => imminence(
                self.size - self.una.min(self.size),
                self.cwnd,
                self.srtt,
                at as i128 - now as i128,
                self.p.late,
            ),
            _ => 1.0,
        }
    }

    /// Whether MCP runs this flow's window (MCP with a deadline).
    fn mcp_on(&self) -> bool {
        self.p.transport == TransportKind::Mcp && self.p.deadline_ps.is_some()
    }

    /// MCP on a new ACK at `now` (see the module doc): the target window
    /// once per SRTT (with the ECN term, scaled by 1 − α/2 and held to the
    /// floor), then one segment toward it. Nothing before the first RTT
    /// sample.
    fn mcp_step(&mut self, now: u64) {
        let Some(at) = self.p.deadline_ps.filter(|_| self.has_rtt) else {
            return;
        };
        if self.mcp_target.is_none() || now >= self.mcp_due {
            let need = mcp_window(
                self.remaining(),
                self.srtt,
                at as i128 - now as i128,
                self.p.mss,
            );
            self.mcp_target = Some(if self.p.mcp_ecn {
                mcp_ecn_window(need, self.alpha, self.p.mss)
            } else {
                need
            });
            self.mcp_due = now + self.srtt.ceil() as u64;
        }
        let target = self.mcp_target.unwrap_or(self.cwnd);
        let mss = self.p.mss as f64;
        self.cwnd = if self.cwnd < target {
            (self.cwnd + mss).min(target)
        } else {
            (self.cwnd - mss).max(target)
        };
    }

    /// Slow start (RFC 5681 §3.1 with RFC 3465's L = 2 SMSS) below
    /// ssthresh, else congestion avoidance: `acked` new bytes.
    fn grow(&mut self, acked: u64) {
        let mss = self.p.mss as f64;
        if self.cwnd < self.ssthresh {
            self.cwnd += (acked as f64).min(2.0 * mss);
        } else {
            self.cwnd += mss * acked as f64 / self.cwnd;
        }
    }

    /// pFabric §4.2 on an ACK: any ACK ends probe mode (back to slow start
    /// from one segment); new data acknowledged grows the window; duplicate
    /// ACKs and ECN echoes change nothing.
    fn on_ack_pfabric(&mut self, now: u64, ack: u64, out: &mut Vec<Segment>) {
        if self.probing {
            self.probing = false;
            self.cwnd = self.p.mss as f64;
        }
        if ack > self.una {
            let acked = ack - self.una;
            self.una = ack;
            self.nxt = self.nxt.max(self.una);
            self.timeouts_in_row = 0;
            self.grow(acked);
            self.rto_at = (self.una < self.max_sent).then_some(now + self.rto);
        }
        if !self.done() && !self.p.paced {
            self.send(now, out);
        }
    }

    /// pFabric §4.2 on a timeout: slow start from one segment with
    /// ssthresh at half the window, or, from the `probe_after`-th
    /// consecutive timeout on, one 1-byte probe at `una`. The timeout is
    /// fixed (no back-off).
    fn on_timeout_pfabric(&mut self, now: u64, out: &mut Vec<Segment>) {
        let mss = self.p.mss as f64;
        self.timeouts_in_row += 1;
        self.nxt = self.una;
        if self.timeouts_in_row >= self.p.probe_after {
            self.probing = true;
            let retransmit = self.una < self.max_sent;
            self.retransmits += retransmit as u64;
            out.push(Segment {
                seq: self.una,
                len: 1,
                retransmit,
            });
            self.rto_at = Some(now + self.rto);
            return;
        }
        self.ssthresh = (self.cwnd / 2.0).max(mss);
        self.cwnd = mss;
        self.rtx = None;
        if !self.p.paced {
            self.send(now, out);
        }
    }

    /// The retransmission timer expired at `now` (RFC 6298 §5.4-5.6, RFC
    /// 5681 Eq. 4): one segment from `una`, the timer backed off; ssthresh
    /// is left alone when the timer already resent that segment (RFC 5681
    /// §3.1).
    pub fn on_timeout(&mut self, now: u64, out: &mut Vec<Segment>) {
        self.rto_at = None;
        if self.done() {
            return;
        }
        self.timeouts += 1;
        if self.p.transport == TransportKind::Pfabric {
            self.on_timeout_pfabric(now, out);
            return;
        }
        let mss = self.p.mss as f64;
        if self.sack_on() {
            self.on_timeout_sack(now, out);
            return;
        }
        // RFC 5681 §3.1: only when the segment at una "has not yet been
        // resent by way of the retransmission timer".
        if !(self.timer_loss && self.una < self.nxt) {
            self.ssthresh = (self.flight() as f64 / 2.0).max(2.0 * mss);
        }
        self.timer_loss = true;
        self.cwnd = mss;
        self.nxt = self.una;
        self.in_recovery = false;
        self.dupacks = 0;
        self.limited = 0;
        self.recover = self.max_sent;
        self.cwr_end = self.max_sent;
        self.rto = (self.rto.saturating_mul(2)).min(self.p.max_rto_ps);
        self.rtx = None;
        // Go-back-N may resend any of them: no sample from those in flight.
        self.timed.clear();
        if !self.p.paced {
            self.send(now, out);
        }
    }
}

/// SACK-based loss recovery, RFC 6675 (with `sack` on; see `crate::sack`
/// for the scoreboard and our readings of the RFC and of ns-3).
///
/// * An ACK is a duplicate when its blocks SACK bytes not SACKed before
///   (§2); DupThresh of them, or IsLost(una), outside a recovery and a
///   timeout's episode, enter the recovery (§5 steps 1-2): the head marked
///   lost if it is not, RecoveryPoint = the highest byte sent, ssthresh =
///   cwnd = max(pipe/2, 2 SMSS) (step 4.2, pipe as ns-3 measures
///   FlightSize there), the head resent whatever the window says (4.3),
///   the timer restarted (as in NewReno's path).
/// * Every ACK then sends while cwnd − pipe allows a segment (step C):
///   NextSeg's lost holes, new data, then (in recovery) holes not yet
///   deemed lost; a hole is resent once per recovery. Outside a recovery
///   SACKed bytes leave pipe, which plays limited transmit's part.
/// * A cumulative ACK at or past RecoveryPoint ends it, cwnd = ssthresh
///   (§5 (A)); partial ACKs restart the timer only the first time, as
///   NewReno's path ("Impatient").
/// * A timeout (§5.1): ssthresh from pipe (kept when the timer had already
///   resent the head), cwnd one segment, every byte not SACKed lost, the
///   SACKs kept; sending resumes from the holes, not from `una` onward;
///   duplicates are not counted until the episode's RecoveryPoint is
///   acknowledged (ns-3's CA_LOSS).
impl Sender {
    /// Whether this flow recovers by SACK.
    fn sack_on(&self) -> bool {
        self.p.sack && self.p.transport != TransportKind::Pfabric
    }

    /// Bytes SACKed and not yet cumulatively acknowledged.
    pub fn sacked_bytes(&self) -> u64 {
        self.board.sacked_bytes()
    }

    /// NextSeg (RFC 6675 §4) within cwnd − pipe; a forced retransmission
    /// (a paced sender's, from `rtx`) goes first, outside the window.
    /// (Never inlined, here and below: NewReno's hot paths stay as small
    /// as they were without SACK.)
    #[inline(never)]
    fn next_segment_sack(&mut self, now: u64) -> Option<Segment> {
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
    fn on_ack_sack(
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
                if self.mcp_on() {
                    self.mcp_step(now);
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
    fn on_timeout_sack(&mut self, now: u64, out: &mut Vec<Segment>) {
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

#[cfg(test)]
mod tests {
    use super::*;

    fn params(transport: TransportKind) -> SenderParams {
        SenderParams {
            mss: 1000,
            init_cwnd: 2,
            min_rto_ps: 1_000,
            initial_rto_ps: 10_000,
            max_rto_ps: 60_000_000_000_000,
            transport,
            g: 1.0 / 16.0,
            paced: false,
            rate_based: false,
            deadline_ps: None,
            late: LateRule::Max,
            mcp_ecn: false,
            limited_transmit: false,
            probe_after: 5,
            timestamps: true,
            rto_reset_on_ack: false,
            sack: false,
            rto_undo: false,
            reorder_adaptive: false,
        }
    }

    fn seqs(out: &[Segment]) -> Vec<u64> {
        out.iter().map(|x| x.seq).collect()
    }

    fn seq_lens(out: &[Segment]) -> Vec<(u64, u32)> {
        out.iter().map(|s| (s.seq, s.len)).collect()
    }

    #[test]
    fn pfabric_starts_at_its_window_and_ignores_dupacks_and_ecn() {
        // A window of 4 segments (the path's BDP), ssthresh there too.
        let mut s = Sender::new(
            SenderParams {
                init_cwnd: 4,
                min_rto_ps: 3_000,
                initial_rto_ps: 3_000,
                max_rto_ps: 60_000_000_000_000,
                ..params(TransportKind::Pfabric)
            },
            20_000,
        );
        let mut out = vec![];
        s.send(0, &mut out);
        assert_eq!(out.len(), 4);
        assert_eq!(s.remaining(), 20_000);
        assert_eq!(s.rto_at, Some(3_000));
        out.clear();
        // A new ACK of one segment: additive increase, 4000 + 1000²/4000.
        s.on_ack(10, 1000, true, 0, &mut out);
        assert!((s.cwnd - 4250.0).abs() < 1e-9, "{}", s.cwnd);
        assert_eq!(seq_lens(&out), vec![(4000, 1000)]);
        assert_eq!(s.remaining(), 19_000);
        // Ten duplicate ACKs with ECN echoes: no retransmission, no cut,
        // and the timer is not pushed back (RTT samples leave it fixed).
        out.clear();
        for t in 0..10 {
            s.on_ack(20 + t, 1000, true, 0, &mut out);
        }
        assert!(out.is_empty());
        assert!((s.cwnd - 4250.0).abs() < 1e-9);
        assert_eq!((s.rto, s.rto_at), (3_000, Some(3_010)));
    }

    #[test]
    fn pfabric_times_out_to_slow_start_then_probes() {
        let mut s = Sender::new(
            SenderParams {
                init_cwnd: 4,
                min_rto_ps: 3_000,
                initial_rto_ps: 3_000,
                max_rto_ps: 60_000_000_000_000,
                probe_after: 3,
                ..params(TransportKind::Pfabric)
            },
            20_000,
        );
        let mut out = vec![];
        s.send(0, &mut out);
        out.clear();
        // First timeout: ssthresh = 4000 / 2, one segment from una, the
        // same fixed timeout.
        s.on_timeout(3_000, &mut out);
        assert_eq!(seq_lens(&out), vec![(0, 1000)]);
        assert_eq!((s.cwnd, s.ssthresh), (1000.0, 2000.0));
        assert_eq!((s.rto, s.rto_at), (3_000, Some(6_000)));
        out.clear();
        s.on_timeout(6_000, &mut out);
        assert_eq!((s.cwnd, s.ssthresh), (1000.0, 1000.0));
        out.clear();
        // Third in a row: probe mode, a 1-byte segment, nothing else.
        s.on_timeout(9_000, &mut out);
        assert!(s.probing);
        assert_eq!(seq_lens(&out), vec![(0, 1)]);
        out.clear();
        s.send(9_500, &mut out);
        assert!(out.is_empty());
        s.on_timeout(12_000, &mut out);
        assert_eq!(seq_lens(&out), vec![(0, 1)]);
        assert_eq!(s.timeouts, 4);
        out.clear();
        // Any ACK, even a duplicate, ends probe mode: slow start from one
        // segment.
        s.on_ack(12_500, 0, false, 0, &mut out);
        assert!(!s.probing);
        assert_eq!(seq_lens(&out), vec![(0, 1000)]);
        out.clear();
        // A new ACK resets the run of timeouts and grows in slow start.
        s.on_ack(13_000, 1000, false, 0, &mut out);
        assert_eq!(s.cwnd, 2000.0);
        assert_eq!(seq_lens(&out), vec![(1000, 1000), (2000, 1000)]);
        out.clear();
        s.on_timeout(16_000, &mut out);
        assert!(!s.probing, "the run of timeouts restarted");
    }

    #[test]
    fn slow_start_then_fast_retransmit() {
        let mut s = Sender::new(params(TransportKind::Tcp), 20_000);
        let mut out = vec![];
        s.send(0, &mut out);
        assert_eq!(out.len(), 2);
        out.clear();
        s.on_ack(10, 1000, false, 0, &mut out);
        // cwnd 3000: two more segments.
        assert_eq!(seqs(&out), vec![2000, 3000]);
        out.clear();
        for _ in 0..3 {
            s.on_ack(20, 1000, false, 0, &mut out);
        }
        assert_eq!(
            out[0],
            Segment {
                seq: 1000,
                len: 1000,
                retransmit: true
            }
        );
        assert_eq!(s.retransmits, 1);
    }

    #[test]
    fn only_the_first_partial_ack_restarts_the_timer() {
        // RFC 6582 §3.2 step 4 (Impatient): segments 1000, 3000 and 5000
        // of a 10-segment window are lost.
        let p = SenderParams {
            init_cwnd: 10,
            ..params(TransportKind::Tcp)
        };
        let mut s = Sender::new(p, 100_000);
        let mut out = vec![];
        s.send(0, &mut out);
        assert_eq!(out.len(), 10);
        s.on_ack(10, 1000, false, 0, &mut out);
        // Segments 2000, 4000, 6000, 7000 arrive: three duplicates start
        // the recovery (and a fourth inflates the window).
        for t in 11..15 {
            s.on_ack(t, 1000, false, 0, &mut out);
        }
        assert!(s.in_recovery);
        let at_fast_retransmit = s.rto_at.expect("armed");
        assert_eq!(at_fast_retransmit, 13 + s.rto);
        // The first partial ACK restarts the timer...
        s.on_ack(100, 3000, false, 90, &mut out);
        let first = s.rto_at.expect("armed");
        assert_eq!(first, 100 + s.rto);
        // ...a second one does not.
        s.on_ack(200, 5000, false, 190, &mut out);
        assert!(s.in_recovery);
        assert_eq!(s.rto_at, Some(first));
        // The full acknowledgement ends the recovery and restarts it.
        let recover = s.recover;
        s.on_ack(300, recover, false, 290, &mut out);
        assert!(!s.in_recovery);
        assert_eq!(s.rto_at, Some(300 + s.rto));
    }

    #[test]
    fn limited_transmit_sends_one_new_segment_per_early_duplicate() {
        // RFC 3042 §2: 8 segments out, the first is lost.
        let p = SenderParams {
            init_cwnd: 8,
            limited_transmit: true,
            ..params(TransportKind::Tcp)
        };
        let mut s = Sender::new(p, 100_000);
        let mut out = vec![];
        s.send(0, &mut out);
        assert_eq!(out.len(), 8);
        let mut seqs = vec![];
        for t in 1..=2 {
            out.clear();
            s.on_ack(t, 0, false, 0, &mut out);
            seqs.extend(out.iter().map(|x| (x.seq, x.retransmit)));
        }
        // Two new segments, the window unchanged.
        assert_eq!(seqs, vec![(8000, false), (9000, false)]);
        assert_eq!(s.cwnd, 8000.0);
        out.clear();
        s.on_ack(3, 0, false, 0, &mut out);
        assert_eq!(out[0].seq, 0);
        assert!(out[0].retransmit);
        // ssthresh = FlightSize / 2 without the two limited-transmit
        // segments: (10 - 2) * 1000 / 2.
        assert_eq!(s.ssthresh, 4000.0);
        // Off: the duplicates send nothing.
        let mut s = Sender::new(params(TransportKind::Tcp), 100_000);
        s.send(0, &mut out);
        out.clear();
        s.on_ack(1, 0, false, 0, &mut out);
        assert!(out.is_empty());
    }

    #[test]
    fn karn_samples_only_segments_sent_once_and_keeps_the_backoff() {
        // RFC 6298 §3 and §5: timestamps off, mss 1000, init_cwnd 2.
        let p = SenderParams {
            timestamps: false,
            ..params(TransportKind::Tcp)
        };
        let mut s = Sender::new(p, 100_000);
        let mut out = vec![];
        s.send(0, &mut out); // 0 and 1000 at t = 0
                             // The echoed timestamp is ignored: the sample is 100 - 0.
        s.on_ack(100, 1000, false, 77, &mut out);
        assert_eq!(s.srtt_ps(), Some(100.0));
        // RTO = 100 + 4 * 50 = 300, floored at min_rto 1000.
        assert_eq!(s.rto, 1000);
        // Segments 2000 and 3000 go at t = 100; the timer expires at
        // 1100: go-back-N from 1000, the RTO doubled to 2000.
        out.clear();
        s.on_timeout(1100, &mut out);
        assert_eq!(seqs(&out), vec![1000]);
        assert_eq!(s.rto, 2000);
        // The ACK of the resent segment (and of 2000..4000, sent before)
        // is ambiguous: no sample, SRTT unchanged and the backed-off RTO
        // kept for what is sent next.
        out.clear();
        s.on_ack(1150, 4000, false, 1100, &mut out);
        assert_eq!(s.srtt_ps(), Some(100.0));
        assert_eq!(s.rto, 2000);
        assert_eq!(s.rto_at, Some(1150 + 2000));
        // Segments first sent at 1150 give the next sample, 1400 - 1150:
        // SRTT = 7/8 * 100 + 1/8 * 250, RTTVAR = 3/4 * 50 + 1/4 * 150.
        let first = out[0].seq;
        assert!(!out[0].retransmit);
        s.on_ack(1400, first + 1000, false, 0, &mut out);
        assert_eq!(s.srtt_ps(), Some(118.75));
        assert_eq!(s.rto, 1000, "collapsed by the new sample");
        // As ns-3 (rto_reset=ack): the ambiguous ACK gives no sample but
        // recomputes the RTO, 100 + 4 * 50 floored at 1000.
        let mut s = Sender::new(
            SenderParams {
                rto_reset_on_ack: true,
                ..p
            },
            100_000,
        );
        s.send(0, &mut out);
        s.on_ack(100, 1000, false, 0, &mut out);
        s.on_timeout(1100, &mut out);
        assert_eq!(s.rto, 2000);
        s.on_ack(1150, 4000, false, 1100, &mut out);
        assert_eq!(s.srtt_ps(), Some(100.0));
        assert_eq!(s.rto, 1000);
        // With timestamps on, the resent segment's ACK gives a sample.
        let mut s = Sender::new(params(TransportKind::Tcp), 100_000);
        s.send(0, &mut out);
        s.on_ack(100, 1000, false, 0, &mut out);
        s.on_timeout(1100, &mut out);
        s.on_ack(1150, 4000, false, 1100, &mut out);
        assert_eq!(s.srtt_ps(), Some(0.875 * 100.0 + 0.125 * 50.0));
        assert_eq!(s.rto, 1000);
    }

    #[test]
    fn karn_skips_a_fast_retransmitted_segment() {
        // Segment 0 of 4 is lost and fast-retransmitted at t = 30: the
        // full ACK at 60 covers it first, so it gives no sample.
        let p = SenderParams {
            init_cwnd: 4,
            timestamps: false,
            ..params(TransportKind::Tcp)
        };
        let mut s = Sender::new(p, 100_000);
        let mut out = vec![];
        s.send(0, &mut out);
        for t in [10, 20, 30] {
            s.on_ack(t, 0, false, 0, &mut out);
        }
        assert!(s.in_recovery);
        s.on_ack(60, 4000, false, 0, &mut out);
        assert_eq!(s.srtt_ps(), None);
        assert_eq!(s.rto, 10_000, "still the initial RTO");
    }

    #[test]
    fn timeout_goes_back_and_backs_off() {
        let mut s = Sender::new(params(TransportKind::Tcp), 5_000);
        let mut out = vec![];
        s.send(0, &mut out);
        assert_eq!(s.rto_at, Some(10_000));
        out.clear();
        s.on_timeout(10_000, &mut out);
        assert_eq!(
            out,
            vec![Segment {
                seq: 0,
                len: 1000,
                retransmit: true
            }]
        );
        assert_eq!((s.timeouts, s.rto, s.cwnd), (1, 20_000, 1000.0));
    }

    #[test]
    fn backoff_stops_at_max_rto() {
        // initial RTO 10,000, ceiling 35,000: 20,000, then 35,000, and it
        // stays there however often the segment is lost again.
        let p = SenderParams {
            max_rto_ps: 35_000,
            ..params(TransportKind::Tcp)
        };
        let mut s = Sender::new(p, 5_000);
        let mut out = vec![];
        s.send(0, &mut out);
        let mut now = 0;
        let mut seen = vec![];
        for _ in 0..4 {
            now = s.rto_at.unwrap();
            s.on_timeout(now, &mut out);
            seen.push(s.rto);
        }
        assert_eq!(seen, vec![20_000, 35_000, 35_000, 35_000]);
        assert_eq!(s.rto_at, Some(now + 35_000));
    }

    #[test]
    fn a_second_timeout_of_the_same_segment_keeps_ssthresh() {
        // RFC 5681 §3.1: 5 segments out (init_cwnd 5), all lost.
        let p = SenderParams {
            init_cwnd: 5,
            ..params(TransportKind::Tcp)
        };
        let mut s = Sender::new(p, 100_000);
        let mut out = vec![];
        s.send(0, &mut out);
        s.on_timeout(10_000, &mut out);
        // FlightSize 5000: ssthresh 2500.
        assert_eq!(s.ssthresh, 2500.0);
        // The resent segment is lost too: the second expiry keeps it
        // (Eq. 4 would give 5000 / 2 again, and after a partial ACK less).
        s.on_ack(15_000, 1000, false, 10_000, &mut out);
        s.on_timeout(40_000, &mut out);
        assert_eq!(s.ssthresh, 2500.0);
        assert_eq!(s.timeouts, 2);
        // Once the loss episode is over (una >= recover, 5000), a new
        // timeout computes it afresh from FlightSize.
        s.on_ack(50_000, 5000, false, 45_000, &mut out);
        let flight = s.max_sent - s.una;
        s.on_timeout(90_000, &mut out);
        assert_eq!(s.ssthresh, (flight as f64 / 2.0).max(2000.0));
    }

    #[test]
    fn dctcp_cuts_by_half_alpha_once_per_window() {
        let mut s = Sender::new(params(TransportKind::Dctcp), 1_000_000);
        let mut out = vec![];
        s.send(0, &mut out);
        let before = s.cwnd;
        s.on_ack(10, 1000, true, 0, &mut out);
        // alpha starts at 1 and the first window (1 segment) was all marked.
        assert!((s.alpha - 1.0).abs() < 1e-12);
        // Halved, but never below 2 segments.
        let want = ((before + 1000.0) * 0.5).max(2000.0);
        assert!((s.cwnd - want).abs() < 1e-9, "{}", s.cwnd);
        let after = s.cwnd;
        s.on_ack(11, 2000, true, 0, &mut out);
        assert!(s.cwnd >= after, "a second cut in the same window");
    }

    #[test]
    fn a_paced_sender_waits_for_its_slots() {
        let mut s = Sender::new(
            SenderParams {
                paced: true,
                ..params(TransportKind::Tcp)
            },
            20_000,
        );
        let mut out = vec![];
        s.send_up_to(0, 1, &mut out);
        assert_eq!(out.len(), 1);
        assert_eq!(s.rto_at, Some(10_000));
        s.send_up_to(5, 1, &mut out);
        out.clear();
        // An ACK sends nothing by itself.
        s.on_ack(10, 1000, false, 0, &mut out);
        assert!(out.is_empty());
        s.send_up_to(10, 1, &mut out);
        s.send_up_to(10, 1, &mut out);
        assert_eq!(seqs(&out), vec![2000, 3000]);
        out.clear();
        // Three duplicate ACKs: the retransmission waits for the next slot
        // and goes before new data.
        for _ in 0..3 {
            s.on_ack(20, 1000, false, 0, &mut out);
        }
        assert!(out.is_empty());
        s.send_up_to(21, 1, &mut out);
        assert_eq!(out[0].seq, 1000);
        assert!(out[0].retransmit);
    }

    #[test]
    fn a_rate_based_sender_has_no_window() {
        let mut s = Sender::new(
            SenderParams {
                paced: true,
                rate_based: true,
                ..params(TransportKind::Tcp)
            },
            20_000,
        );
        let mut out = vec![];
        // Far past the initial window of 2 segments, nothing acknowledged.
        s.send_up_to(0, 15, &mut out);
        assert_eq!(out.len(), 15);
        // A timeout goes back to una, one segment per slot, still unlimited.
        out.clear();
        s.on_timeout(10_000, &mut out);
        assert!(out.is_empty());
        s.send_up_to(10_000, 3, &mut out);
        assert_eq!(seqs(&out), vec![0, 1000, 2000]);
    }

    #[test]
    fn d2tcp_penalty_and_imminence_by_hand() {
        // p = α^d: α = 1/4 gives 1/16 at d = 2, 1/2 at d = 0.5, α at d = 1.
        assert_eq!(penalty(0.25, 2.0), 0.0625);
        assert_eq!(penalty(0.25, 0.5), 0.5);
        assert_eq!(penalty(0.25, 1.0), 0.25);
        // Tc = 300 KB at 3/4 of a 100 KB window per 100 us RTT = 400 us.
        let d = |left_us: i128| {
            imminence(
                300_000,
                100_000.0,
                100e6,
                left_us * 1_000_000,
                LateRule::Max,
            )
        };
        assert_eq!(d(800), 0.5);
        assert_eq!(d(400), 1.0);
        assert_eq!(d(320), 1.25);
        assert_eq!(d(100), 2.0, "held to 2");
        assert_eq!(d(1000), 0.5, "held to 0.5");
        assert_eq!(d(0), 2.0, "missed: max");
        assert_eq!(imminence(1, 1.0, 1.0, -5, LateRule::Dctcp), 1.0);
    }

    #[test]
    fn d2tcp_near_deadline_cuts_less_than_dctcp() {
        // 10 KB, 2-segment window; the first ACK (1000 bytes, marked) comes
        // at 10 ns for a packet sent at 0: SRTT 10,000 ps, cwnd 3000 after
        // slow start, α = (15/16)·1/4 + 1/16 = 0.296875 (F = 1).
        // Tc = 9000·10,000/(0.75·3000) = 40,000 ps; D = 30,000 − 10,000 =
        // 20,000 ps: d = 2, p = α² = 0.088134765625.
        let run = |deadline_ps| {
            let mut s = Sender::new(
                SenderParams {
                    deadline_ps,
                    ..params(TransportKind::D2tcp)
                },
                10_000,
            );
            let mut out = vec![];
            s.send(0, &mut out);
            s.alpha = 0.25;
            s.on_ack(10_000, 1000, true, 0, &mut out);
            assert_eq!(s.alpha, 0.296875);
            s.cwnd
        };
        let near = run(Some(30_000));
        assert!(
            (near - 3000.0 * (1.0 - 0.088134765625 / 2.0)).abs() < 1e-9,
            "{near}"
        );
        // Without a deadline: DCTCP's cut, 3000·(1 − α/2).
        let plain = run(None);
        assert!(
            (plain - 3000.0 * (1.0 - 0.296875 / 2.0)).abs() < 1e-9,
            "{plain}"
        );
        // Far (D = 1 s): d = 0.5, p = √α, a deeper cut than DCTCP's.
        let far = run(Some(1_000_000_000_000));
        assert!(
            (far - 3000.0 * (1.0 - 0.296875f64.sqrt() / 2.0)).abs() < 1e-9,
            "{far}"
        );
    }

    #[test]
    fn mcp_ecn_window_by_hand() {
        // No marks: the need itself; α = 1: half of it; never below 2 MSS.
        assert_eq!(mcp_ecn_window(8000.0, 0.0, 1000), 8000.0);
        assert_eq!(mcp_ecn_window(8000.0, 1.0, 1000), 4000.0);
        assert_eq!(mcp_ecn_window(8000.0, 0.5, 1000), 6000.0);
        assert_eq!(mcp_ecn_window(3000.0, 1.0, 1000), 2000.0);
    }

    #[test]
    fn mcp_window_by_hand() {
        // R = 300 KB, SRTT 100 us, D = 10 ms: R·SRTT/D = 3000 bytes, 3
        // segments of 1000, plus one: 4000. The rate 4000 B/100 us is
        // 40 MB/s against the 30 MB/s the deadline needs.
        let us = 1_000_000i128;
        assert_eq!(mcp_window(300_000, 100e6, 10_000 * us, 1000), 4000.0);
        // 2500 bytes per RTT: ⌊2.5⌋ + 1 = 3 segments.
        assert_eq!(mcp_window(250_000, 100e6, 10_000 * us, 1000), 3000.0);
        // The deadline term: the same bytes with half the time left need
        // twice the window (5000 bytes: 6 segments).
        assert_eq!(mcp_window(250_000, 100e6, 5_000 * us, 1000), 6000.0);
        // 100 bytes per RTT: one segment, held to the 2-segment floor.
        assert_eq!(mcp_window(10_000, 100e6, 10_000 * us, 1000), 2000.0);
        // Past (or at) the deadline: the floor, whatever is left.
        assert_eq!(mcp_window(300_000, 100e6, 0, 1000), 2000.0);
        assert_eq!(mcp_window(300_000, 100e6, -us, 1000), 2000.0);
    }

    fn mcp(deadline_ps: u64) -> Sender {
        Sender::new(
            SenderParams {
                deadline_ps: Some(deadline_ps),
                ..params(TransportKind::Mcp)
            },
            100_000,
        )
    }

    #[test]
    fn mcp_steps_one_segment_per_ack_toward_its_target_once_per_rtt() {
        // 100 KB, deadline at 210 ns. The first ACK (1000 bytes at 10 ns,
        // a packet sent at 0) gives SRTT 10,000 ps; R = 99,000, D =
        // 200,000 ps: R·SRTT/D = 4950 bytes, target 5000; the window moves
        // from 2000 to 3000, not by slow start's 2 segments.
        let mut s = mcp(210_000);
        let mut out = vec![];
        s.send(0, &mut out);
        s.on_ack(10_000, 1000, false, 0, &mut out);
        assert_eq!(s.mcp_target, Some(5000.0));
        assert_eq!(s.cwnd, 3000.0);
        // Within the RTT the target holds: one more segment.
        s.on_ack(12_000, 3000, false, 2_000, &mut out);
        assert_eq!(s.mcp_target, Some(5000.0));
        assert_eq!(s.cwnd, 4000.0);
        // One SRTT after the update (20 ns, SRTT still 10,000 ps): R =
        // 96,000, D = 190,000 ps: 5052.6 bytes, target 6000.
        s.on_ack(20_000, 4000, false, 10_000, &mut out);
        assert_eq!(s.mcp_target, Some(6000.0));
        assert_eq!(s.cwnd, 5000.0);
        // Above its target it comes down one segment per ACK, to it.
        s.cwnd = 7500.0;
        s.on_ack(21_000, 5000, false, 11_000, &mut out);
        assert_eq!(s.cwnd, 6500.0);
        s.on_ack(22_000, 6000, false, 12_000, &mut out);
        assert_eq!(s.cwnd, 6000.0);
        s.on_ack(23_000, 7000, false, 13_000, &mut out);
        assert_eq!(s.cwnd, 6000.0);
    }

    #[test]
    fn mcp_ignores_ecn_marks() {
        // A marked ACK neither cuts the window nor moves α.
        let mut s = mcp(210_000);
        let mut out = vec![];
        s.send(0, &mut out);
        s.on_ack(10_000, 1000, true, 0, &mut out);
        assert_eq!(s.cwnd, 3000.0);
        assert_eq!(s.alpha, 1.0);
        assert!(!TransportKind::Mcp.uses_alpha(), "its packets are not ECT");
    }

    #[test]
    fn mcp_ecn_term_scales_its_target_by_alpha() {
        let p = SenderParams {
            deadline_ps: Some(210_000),
            mcp_ecn: true,
            ..params(TransportKind::Mcp)
        };
        assert!(p.ecn_capable());
        let mut s = Sender::new(p, 100_000);
        assert_eq!(s.alpha, 0.0, "no mark seen yet");
        s.alpha = 0.5;
        let mut out = vec![];
        s.send(0, &mut out);
        // The need is 5000 bytes (as in the test above), times 1 - 0.5/2:
        // 3750. The window steps one segment toward it; the marked ACK
        // cuts nothing by itself, and moves α: (15/16)·0.5 + 1/16.
        s.on_ack(10_000, 1000, true, 0, &mut out);
        assert_eq!(s.mcp_target, Some(3750.0));
        assert_eq!(s.cwnd, 3000.0);
        assert!((s.alpha - 0.53125).abs() < 1e-12);
    }

    #[test]
    fn mcp_past_its_deadline_falls_to_the_floor() {
        // Deadline at 5 ns, before the first ACK: the target is the
        // 2-segment floor; a 6000-byte window comes down one segment per
        // ACK and stays there.
        let mut s = mcp(5_000);
        let mut out = vec![];
        s.send(0, &mut out);
        s.cwnd = 6000.0;
        let mut windows = vec![];
        for k in 1..=6u64 {
            s.on_ack(10_000 + k * 1000, k * 1000, false, k * 1000, &mut out);
            windows.push(s.cwnd);
        }
        assert_eq!(s.mcp_target, Some(2000.0));
        assert_eq!(windows, [5000.0, 4000.0, 3000.0, 2000.0, 2000.0, 2000.0]);
        // It keeps sending: the flow is not dropped.
        assert!(!out.is_empty());
    }

    #[test]
    fn mcp_without_a_deadline_grows_as_newreno() {
        let mut s = Sender::new(params(TransportKind::Mcp), 100_000);
        let mut out = vec![];
        s.send(0, &mut out);
        s.on_ack(10_000, 1000, false, 0, &mut out);
        assert_eq!(s.cwnd, 3000.0, "slow start");
        assert_eq!(s.mcp_target, None);
    }

    fn sack_sender(init_cwnd: u32) -> Sender {
        let p = SenderParams {
            init_cwnd,
            sack: true,
            ..params(TransportKind::Tcp)
        };
        Sender::new(p, 100_000)
    }

    /// An ACK of `ack` with `blocks` at `t`: what it sent, (seq, resent).
    fn sack_ack(s: &mut Sender, t: u64, ack: u64, blocks: &[(u64, u64)]) -> Vec<(u64, bool)> {
        let mut out = vec![];
        s.on_ack_sacks(t, ack, false, 0, blocks, &mut out);
        out.iter().map(|x| (x.seq, x.retransmit)).collect()
    }

    #[test]
    fn sack_recovers_one_lost_segment() {
        // 8 segments, the first lost. SACKed bytes leave pipe, so each of
        // the first two duplicates lets one new segment out (cwnd 8000).
        let mut s = sack_sender(8);
        let mut out = vec![];
        s.send(0, &mut out);
        assert_eq!(out.len(), 8);
        assert_eq!(sack_ack(&mut s, 1, 0, &[(1000, 2000)]), [(8000, false)]);
        assert_eq!(sack_ack(&mut s, 2, 0, &[(1000, 3000)]), [(9000, false)]);
        // Third SACKed segment: segment 0 is lost (3 SACKed above it);
        // pipe = 10 sent - 3 SACKed - 1 lost = 6000: ssthresh = cwnd =
        // 3000, the head resent at once, outside the window.
        assert_eq!(sack_ack(&mut s, 3, 0, &[(1000, 4000)]), [(0, true)]);
        assert!(s.in_recovery);
        assert_eq!((s.ssthresh, s.cwnd), (3000.0, 3000.0));
        // pipe: 4 unSACKed not lost + the resent one = 5000, then down.
        for (t, e) in [(4, 5000), (5, 6000), (6, 7000), (7, 8000)] {
            assert!(sack_ack(&mut s, t, 0, &[(1000, e)]).is_empty());
        }
        // pipe 2000 (segment 9 and the resent 0): one new segment.
        assert_eq!(sack_ack(&mut s, 8, 0, &[(1000, 9000)]), [(10_000, false)]);
        assert_eq!(sack_ack(&mut s, 9, 0, &[(1000, 10_000)]), [(11_000, false)]);
        // The resent segment arrives: RecoveryPoint (10,000) reached.
        assert_eq!(
            sack_ack(&mut s, 10, 10_000, &[]),
            [(12_000, false)],
            "cwnd 3000, pipe 2000"
        );
        assert!(!s.in_recovery);
        assert_eq!((s.cwnd, s.retransmits, s.timeouts), (3000.0, 1, 0));
    }

    #[test]
    fn sack_recovers_two_holes_in_one_round_trip() {
        // 10 segments, 0 and 5 lost: NewReno needs a partial ACK for the
        // second; SACK resends it as soon as 3 SACKed segments lie above.
        let mut s = sack_sender(10);
        let mut out = vec![];
        s.send(0, &mut out);
        let resent = std::cell::RefCell::new(vec![]);
        let t = std::cell::Cell::new(0);
        let ack = |s: &mut Sender, a: u64, b: &[(u64, u64)]| {
            t.set(t.get() + 1);
            for (seq, r) in sack_ack(s, t.get(), a, b) {
                if r {
                    resent.borrow_mut().push(seq);
                }
            }
        };
        ack(&mut s, 0, &[(1000, 2000)]);
        ack(&mut s, 0, &[(1000, 3000)]);
        ack(&mut s, 0, &[(1000, 4000)]);
        assert!(s.in_recovery);
        // 12 sent, 3 SACKed, 0 lost: pipe 8000, ssthresh 4000.
        assert_eq!(s.ssthresh, 4000.0);
        ack(&mut s, 0, &[(1000, 5000)]);
        ack(&mut s, 0, &[(6000, 7000), (1000, 5000)]);
        ack(&mut s, 0, &[(6000, 8000), (1000, 5000)]);
        assert_eq!(*resent.borrow(), [0], "5 not lost yet: 2 SACKed above it");
        ack(&mut s, 0, &[(6000, 9000), (1000, 5000)]);
        // 5 is lost now; pipe is 4000 = cwnd until segment 9 is SACKed.
        ack(&mut s, 0, &[(6000, 10_000), (1000, 5000)]);
        assert_eq!(*resent.borrow(), [0, 5000]);
        // The resent 0 arrives: a partial ACK, still in recovery; then 5.
        ack(&mut s, 5000, &[(6000, 12_000)]);
        assert!(s.in_recovery);
        ack(&mut s, 12_000, &[]);
        assert!(!s.in_recovery);
        assert_eq!((s.retransmits, s.timeouts, s.cwnd), (2, 0, 4000.0));
    }

    #[test]
    fn sack_a_hole_lost_twice_waits_for_the_timer() {
        let mut s = sack_sender(4);
        let mut out = vec![];
        s.send(0, &mut out);
        sack_ack(&mut s, 1, 0, &[(1000, 2000)]);
        sack_ack(&mut s, 2, 0, &[(1000, 3000)]);
        assert_eq!(sack_ack(&mut s, 3, 0, &[(1000, 4000)]), [(0, true)]);
        // The resent 0 is lost too: the SACKs of 4000 and 5000 never
        // resend it (once per recovery, RFC 6675 HighRxt).
        let later = [
            sack_ack(&mut s, 4, 0, &[(1000, 5000)]),
            sack_ack(&mut s, 5, 0, &[(1000, 6000)]),
        ];
        assert!(later.iter().flatten().all(|&(_, r)| !r), "{later:?}");
        let sent = s.max_sent;
        // The timer: every byte not SACKed is lost, the SACKs are kept,
        // and only the hole goes out (cwnd 1 segment).
        out.clear();
        let at = s.rto_at.expect("armed");
        s.on_timeout(at, &mut out);
        assert_eq!(seqs(&out), [0]);
        assert!(out[0].retransmit);
        assert_eq!(s.sacked_bytes(), 5000);
        assert_eq!((s.timeouts, s.cwnd), (1, 1000.0));
        // It arrives: everything up to what was sent is acknowledged.
        sack_ack(&mut s, at + 10, sent, &[]);
        assert_eq!(s.una, sent);
        assert_eq!(s.sacked_bytes(), 0);
    }

    #[test]
    fn sack_timeout_resends_holes_not_sacked_data() {
        // 5 segments; 0, 2 and 4 lost; 1 and 3 SACKed by two duplicates
        // (too few for a recovery); each duplicate let one new segment
        // out (5000, 6000: lost too).
        let mut s = sack_sender(5);
        let mut out = vec![];
        s.send(0, &mut out);
        assert_eq!(sack_ack(&mut s, 1, 0, &[(1000, 2000)]), [(5000, false)]);
        assert_eq!(
            sack_ack(&mut s, 2, 0, &[(3000, 4000), (1000, 2000)]),
            [(6000, false)]
        );
        assert!(!s.in_recovery);
        out.clear();
        s.on_timeout(10_000, &mut out);
        // pipe was 7 - 2 SACKed = 5000: ssthresh 2500.
        assert_eq!(s.ssthresh, 2500.0);
        assert_eq!(seqs(&out), [0]);
        // 0 arrives: ACK 2000. Slow start (cwnd 3000) resends the hole at
        // 2000, skips the SACKed 3000; 4000 up lie above the highest SACK,
        // so new data goes first (NextSeg rule 2, as ns-3 reads rule 1.b).
        assert_eq!(
            sack_ack(&mut s, 10_010, 2000, &[(3000, 4000)]),
            [(2000, true), (7000, false), (8000, false)]
        );
        // 2000 arrives: the ACK passes the highest SACK, and the bytes
        // lost at the timeout go out, lowest first.
        let got = sack_ack(&mut s, 10_020, 4000, &[]);
        assert_eq!(got[0], (4000, true));
        assert_eq!(s.retransmits, 3);
        assert_eq!(s.timeouts, 1);
    }

    #[test]
    fn rto_undo_restores_the_window_when_the_original_was_only_late() {
        // 4 segments at t = 0 (timestamp 0), the timer fires at 10_000:
        // cwnd one segment, ssthresh pipe/2 = 2000, the head resent, every
        // byte lost. Then ACK 1000 arrives at 10_010.
        let run = |undo: bool, echo: u64| {
            let p = SenderParams {
                init_cwnd: 4,
                sack: true,
                rto_undo: undo,
                ..params(TransportKind::Tcp)
            };
            let mut s = Sender::new(p, 100_000);
            let mut out = vec![];
            s.send(0, &mut out);
            out.clear();
            s.on_timeout(10_000, &mut out);
            assert_eq!((seqs(&out), s.cwnd, s.ssthresh), (vec![0], 1000.0, 2000.0));
            out.clear();
            s.on_ack_sacks(10_010, 1000, false, echo, &[], &mut out);
            let sent: Vec<_> = out.iter().map(|x| (x.seq, x.retransmit)).collect();
            (sent, s.cwnd, s.undone)
        };
        // Echoing 0, the ACK answers the original: the timeout was
        // spurious. Undone: cwnd 4000 again, 1000-3999 in flight (not
        // lost), so one new segment fills the window.
        assert_eq!(run(true, 0), (vec![(4000, false)], 4000.0, 1));
        // Echoing the retransmission's 10_000: a real loss, as without
        // the knob: slow start from one segment (2000) resends the holes.
        let lost = (vec![(1000, true), (2000, true)], 2000.0, 0);
        assert_eq!(run(true, 10_000), lost);
        assert_eq!(run(false, 0), lost);
    }

    #[test]
    fn reordering_adaptive_undoes_a_fast_recovery_the_original_ends() {
        // As `sack_recovers_one_lost_segment` up to the third SACK (t = 3):
        // recovery, cwnd 8000 cut to 3000, segment 0 resent at t = 3.
        // Then ACK 4000 at t = 4, echoing `echo`.
        let run = |adaptive: bool, echo: u64| {
            let p = SenderParams {
                init_cwnd: 8,
                sack: true,
                reorder_adaptive: adaptive,
                ..params(TransportKind::Tcp)
            };
            let mut s = Sender::new(p, 100_000);
            let mut out = vec![];
            s.send(0, &mut out);
            sack_ack(&mut s, 1, 0, &[(1000, 2000)]);
            sack_ack(&mut s, 2, 0, &[(1000, 3000)]);
            assert_eq!(sack_ack(&mut s, 3, 0, &[(1000, 4000)]), [(0, true)]);
            assert_eq!(s.cwnd, 3000.0);
            out.clear();
            s.on_ack_sacks(4, 4000, false, echo, &[], &mut out);
            let sent: Vec<_> = out.iter().map(|x| (x.seq, x.retransmit)).collect();
            (
                sent,
                s.cwnd,
                s.in_recovery,
                s.fast_undone,
                s.board.dup_thresh(),
            )
        };
        // Echoing 0: segment 0's original filled the hole, nothing was
        // lost. Undone: cwnd 8000 again, out of recovery; 4000-9999 in
        // flight (pipe 6000), so two new segments; the hole lay 4000 bytes
        // below the highest SACKed byte, so DupThresh becomes 4 segments.
        let undone = (vec![(10_000, false), (11_000, false)], 8000.0, false, 1, 4);
        assert_eq!(run(true, 0), undone);
        // Echoing the retransmission's 3: a real loss, as without the
        // knob: a partial ACK in recovery, pipe 6000 over cwnd 3000.
        let kept = (vec![], 3000.0, true, 0, 3);
        assert_eq!(run(true, 3), kept);
        assert_eq!(run(false, 0), kept);
    }

    #[test]
    fn receiver_reports_sack_blocks() {
        let mut r = Receiver::with_sack(10_000);
        r.on_data(0, 1000, false);
        assert_eq!(r.sack_blocks(3).n, 0, "nothing above the ACK");
        r.on_data(2000, 1000, false);
        r.on_data(4000, 1000, false);
        assert_eq!(r.sack_blocks(3).as_slice(), &[(4000, 5000), (2000, 3000)]);
        // A copy of held bytes changes nothing; the hole at 1000 filled
        // moves the ACK past the first block.
        r.on_data(2000, 1000, false);
        assert_eq!(r.sack_blocks(3).as_slice(), &[(4000, 5000), (2000, 3000)]);
        r.on_data(1000, 1000, false);
        assert_eq!(r.nxt, 3000);
        assert_eq!(r.sack_blocks(3).as_slice(), &[(4000, 5000)]);
        assert_eq!(Receiver::new(10).sack_blocks(3).n, 0);
    }

    #[test]
    fn receiver_reorders() {
        let mut r = Receiver::new(3000);
        assert_eq!(r.on_data(1000, 1000, false), (false, false));
        assert_eq!(r.nxt, 0);
        // Filling a hole is acknowledged at once (RFC 5681 §4.2): not "in order".
        assert_eq!(r.on_data(0, 1000, true), (false, true));
        assert_eq!(r.nxt, 2000);
        r.on_data(2000, 1000, true);
        assert!(r.complete());
    }
}
