//! The end points: one [`Sender`] and one [`Receiver`] per flow, and the
//! transports that run them, each in its own file with its rules and the
//! paper or RFC it follows:
//!
//! * [`newreno`]: TCP NewReno, the loss recovery every window transport
//!   starts from (RFC 5681, RFC 6582, RFC 3042);
//! * [`sack`]: RFC 6675's SACK-based recovery in place of NewReno's
//!   (`sack=on`; the scoreboard is `crate::sack`);
//! * [`dctcp`]: DCTCP's α and its cut on marks;
//! * [`d2tcp`]: D2TCP's deadline-aware cut;
//! * [`mcp`]: Karuna's MCP window for deadline flows;
//! * [`pfabric`]: pFabric's minimal rate control and its path numbers;
//! * [`rcp`]: RCP's rate-based sender (the switch side is `crate::rcp`).
//!
//! What every sender shares is here, with the state and the send loop:
//!
//! * the retransmission timer, RFC 6298 §2 (SRTT, RTTVAR with α = 1/8,
//!   β = 1/4, RTO = SRTT + 4·RTTVAR floored at the minimum RTO, doubled on
//!   each expiry, §5.5), with RTT samples from a timestamp echoed by each
//!   ACK (RFC 7323 §4), so retransmitted segments give samples too; or,
//!   timestamps off, Karn's algorithm (RFC 6298 §3): a send time per
//!   segment sent once, the sample from the oldest one an ACK covers,
//!   none from a retransmitted one (and none across a timeout, after
//!   which everything outstanding may be resent), the backed-off RTO kept
//!   until the next sample (RFC 6298 §5, note after step 5.7);
//! * a paced sender (`crate::pacing`) leaves the timing to the engine: an
//!   ACK or a timeout only updates its state (a retransmission waits as
//!   pending), and the engine takes one segment per pacing slot
//!   ([`Sender::send_up_to`]); a rate-based sender (RCP) has no window,
//!   only the recovery machinery.
//!
//! Each transport declares its [`Rules`] (a `RULES` constant in its file)
//! and its [`TransportKind`] (named after it, in the same file);
//! `crate::transports::ALL` lists each with its knobs (the `transport` option
//! takes those whose rules say `option`). The sender and the engine read a
//! transport's differences from its rules, not from tests of its name.
//! Adding a transport: its file here (rules, kind, knobs, its behaviour as
//! hooks of [`Rules`]), its `pub mod` line below and its line in
//! `crate::transports::ALL`. Each sender holds its own transport
//! ([`SenderParams::transport`]), so flows of one run may use different
//! ones.
//!
//! Sequence numbers are byte offsets from 0; the flow's size is known to
//! the sender (it has that many bytes to send), never to the network.

pub mod d2tcp;
pub mod dctcp;
pub mod mcp;
pub mod newreno;
pub mod pfabric;
pub mod rcp;
mod receiver;
pub mod sack;
#[cfg(test)]
mod tests;

pub use d2tcp::{imminence, penalty, LateRule, D_RANGE};
pub use mcp::{mcp_ecn_window, mcp_window, MCP_MIN_SEGMENTS};
pub use receiver::Receiver;

use crate::queue::QueueKind;
use crate::sack::Scoreboard;
use std::collections::VecDeque;
use std::fmt;

/// The transport a flow runs: its [`Rules`], which its own file declares
/// with its name here (`TransportKind::Dctcp` in `dctcp.rs`, and so on).
/// Two are the same transport when their names are.
#[derive(Clone, Copy)]
pub struct TransportKind(&'static Rules);

impl PartialEq for TransportKind {
    fn eq(&self, other: &TransportKind) -> bool {
        self.0.name == other.0.name
    }
}

impl Eq for TransportKind {}

impl fmt::Debug for TransportKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.0.name)
    }
}

/// How a transport uses ECN.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ecn {
    /// Its packets are not ECN-capable and it ignores marks.
    Off,
    /// Its data packets are ECN-capable and it keeps DCTCP's α (from 1).
    Alpha,
    /// As `Alpha` with `mcp_ecn=on` (α from 0: no mark seen yet), else as
    /// `Off`.
    Knob,
}

/// An ACK rule that replaces NewReno's and SACK's: (sender, now, the
/// cumulative ACK, what to send).
pub type AckRule = fn(&mut Sender, u64, u64, &mut Vec<Segment>);
/// A timeout rule that replaces NewReno's and SACK's: (sender, now, what
/// to send).
pub type TimeoutRule = fn(&mut Sender, u64, &mut Vec<Segment>);
/// A window law for a flow with a deadline, run on each new ACK outside
/// a recovery instead of slow start and congestion avoidance: (sender,
/// now).
pub type DeadlineLaw = fn(&mut Sender, u64);

/// What one transport does differently, declared in its file.
#[derive(Debug)]
pub struct Rules {
    /// Its name in options and reports.
    pub name: &'static str,
    /// How it uses ECN.
    pub ecn: Ecn,
    /// Its first window is also its slow-start threshold: it grows by
    /// additive increase from the start.
    pub starts_in_avoidance: bool,
    /// It takes RTT samples (else its timeout is fixed).
    pub samples_rtt: bool,
    /// `sack=on` gives it RFC 6675's recovery ([`sack`]).
    pub sack: bool,
    /// Its own ACK rule instead of NewReno's and SACK's.
    pub on_ack: Option<AckRule>,
    /// Its own timeout rule instead of NewReno's and SACK's.
    pub on_timeout: Option<TimeoutRule>,
    /// Its window law for a flow with a deadline (no ECN cut then).
    pub deadline_law: Option<DeadlineLaw>,
    /// It reads a deadline a host policy gives it.
    pub policy_deadline: bool,
    /// Without one, it reads the flow's own deadline.
    pub flow_deadline: bool,
    /// Rate-based: no window, paced at the rate the network stamps on its
    /// packets, learned first from the handshake; its packets carry its
    /// RTT for the ports.
    pub rate_based: bool,
    /// TCP Small Queues (`tsq`) hold its segments back.
    pub small_queues: bool,
    /// A window transport: a host policy may move a flow between it and
    /// another one mid-flow.
    pub window: bool,
    /// Its first window and timeout come from its path
    /// ([`pfabric::path_params`]).
    pub window_from_path: bool,
    /// The switch ports' queue kind it implies under `queues=auto`
    /// (pFabric's); `None`: strict priority.
    pub queue: Option<QueueKind>,
    /// The `transport` option takes it (else a flow gets it another way:
    /// MCP by a host policy's `Cc::Mcp`, per flow).
    pub option: bool,
}

impl TransportKind {
    /// Its rules, declared in its file.
    #[inline]
    pub const fn rules(self) -> &'static Rules {
        self.0
    }

    /// Its name in options and reports.
    pub fn name(self) -> &'static str {
        self.rules().name
    }

    /// Whether its data packets are ECN-capable and its window follows
    /// DCTCP's α whatever the knobs.
    pub fn uses_alpha(self) -> bool {
        self.rules().ecn == Ecn::Alpha
    }

    /// The deadline (ps) its sender reads: a host policy's `policy`, else
    /// the flow's `own` (asked only then), as its rules take them.
    pub fn deadline_ps(
        self,
        policy: Option<u64>,
        own: impl FnOnce() -> Option<u64>,
    ) -> Option<u64> {
        let r = self.rules();
        match policy {
            Some(at) if r.policy_deadline => Some(at),
            None if r.flow_deadline => own(),
            _ => None,
        }
    }

    /// Whether a flow's sender may move from this transport to `b`
    /// mid-flow: to itself, or between window transports.
    pub fn switchable_to(self, b: TransportKind) -> bool {
        self == b || (self.rules().window && b.rules().window)
    }
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
        match self.transport.rules().ecn {
            Ecn::Off => false,
            Ecn::Alpha => true,
            Ecn::Knob => self.mcp_ecn,
        }
    }
}

impl Sender {
    /// A sender of `size` bytes.
    pub fn new(p: SenderParams, size: u64) -> Sender {
        let cwnd = (p.init_cwnd as u64 * p.mss as u64) as f64;
        let rules = p.transport.rules();
        Sender {
            p,
            size,
            una: 0,
            nxt: 0,
            max_sent: 0,
            cwnd,
            ssthresh: if rules.starts_in_avoidance {
                cwnd
            } else {
                f64::INFINITY
            },
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
            alpha: if rules.ecn == Ecn::Knob && p.mcp_ecn {
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

    fn sample_rtt(&mut self, r: f64) {
        if !self.p.transport.rules().samples_rtt {
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
            self.update_alpha();
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
        if dctcp
            && ece
            && !self.in_recovery
            && self.una > self.cwr_end
            && self.deadline_law().is_none()
        {
            self.ecn_cut(now);
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
        if let Some(rule) = self.p.transport.rules().on_ack {
            rule(self, now, ack, out);
            return;
        }
        if self.sack_on() {
            self.on_ack_sack(now, ack, ece, ts, blocks, out);
            return;
        }
        self.on_ack_newreno(now, ack, ece, ts, out);
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
        if let Some(rule) = self.p.transport.rules().on_timeout {
            rule(self, now, out);
            return;
        }
        if self.sack_on() {
            self.on_timeout_sack(now, out);
            return;
        }
        self.on_timeout_newreno(now, out);
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

    /// Its transport's window law for a deadline flow, if it runs one now
    /// (a transport with one, and a deadline).
    #[inline]
    fn deadline_law(&self) -> Option<DeadlineLaw> {
        self.p
            .transport
            .rules()
            .deadline_law
            .filter(|_| self.p.deadline_ps.is_some())
    }

    /// Whether this flow recovers by SACK.
    fn sack_on(&self) -> bool {
        self.p.sack && self.p.transport.rules().sack
    }
}
