//! TCP NewReno, the window transport every other one here builds on:
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
//!
//! A flow without SACK recovers so (`Sender::on_ack_newreno`,
//! `Sender::on_timeout_newreno`); with `sack=on` RFC 6675's recovery
//! takes their place (`super::sack`).

use super::{Ecn, Rules, Segment, Sender, TransportKind};
use crate::config::values::{off, parse_dur, parse_on_off, parse_u32};
use crate::config::{bad, Knob};

/// TCP NewReno: not ECN-capable, RTT samples, SACK if asked, a window.
pub const RULES: Rules = Rules {
    name: "tcp",
    option: true,
    ecn: Ecn::Off,
    starts_in_avoidance: false,
    samples_rtt: true,
    sack: true,
    on_ack: None,
    on_timeout: None,
    deadline_law: None,
    policy_deadline: false,
    flow_deadline: false,
    rate_based: false,
    small_queues: true,
    window: true,
    window_from_path: false,
    queue: None,
};

impl TransportKind {
    /// TCP NewReno, not ECN-capable.
    #[allow(non_upper_case_globals)]
    pub const Tcp: TransportKind = TransportKind(&RULES);
}

impl Sender {
    /// Bytes limited transmit may send beyond the window now: one segment
    /// for each of the first two duplicate ACKs (RFC 3042 §2).
    pub(super) fn limited_allowance(&self) -> u64 {
        if !self.p.limited_transmit || self.in_recovery || self.una < self.recover {
            return 0;
        }
        self.dupacks.min(2) as u64 * self.p.mss as u64
    }

    /// An ACK of every byte before `ack` at `now` without SACK: a new ACK
    /// grows the window (or ends or continues a recovery), the third
    /// duplicate enters fast recovery (RFC 6582 §3.2).
    pub(super) fn on_ack_newreno(
        &mut self,
        now: u64,
        ack: u64,
        ece: bool,
        ts: u64,
        out: &mut Vec<Segment>,
    ) {
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
            } else if let Some(law) = self.deadline_law() {
                law(self, now);
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

    /// The retransmission timer expired at `now` without SACK: go back to
    /// `una` from one segment, the timer backed off.
    pub(super) fn on_timeout_newreno(&mut self, now: u64, out: &mut Vec<Segment>) {
        let mss = self.p.mss as f64;
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

/// The knobs every window transport reads: windows, timers, ACKs.
pub const KNOBS: &[Knob] = &[
    Knob {
        name: "min_rto",
        default: "10ms",
        unit: "duration",
        help: "retransmission timer floor (10ms)",
        set: |c, key, v| {
            c.min_rto = parse_dur(key, v)?;
            Ok(())
        },
    },
    Knob {
        name: "max_rto",
        default: "60s",
        unit: "duration",
        help: "the longest a backed-off timer waits, data or SYN (60s; Linux tcp_rto_max_ms)",
        set: |c, key, v| {
            c.max_rto = parse_dur(key, v)?;
            Ok(())
        },
    },
    Knob {
        name: "initial_rto",
        default: "10ms",
        unit: "duration",
        help: "retransmission timer before an RTT sample (10ms)",
        set: |c, key, v| {
            c.initial_rto = parse_dur(key, v)?;
            Ok(())
        },
    },
    Knob {
        name: "init_cwnd",
        default: "10",
        unit: "segments",
        help: "initial window, segments (10)",
        set: |c, key, v| {
            c.init_cwnd = parse_u32(key, v, 1)?;
            Ok(())
        },
    },
    Knob {
        name: "delayed_ack",
        default: "off",
        unit: "duration or off",
        help: "off, or the delayed-ACK timeout, e.g. 200us (off)",
        set: |c, key, v| {
            c.delayed_ack = if off(v) {
                None
            } else {
                Some(parse_dur(key, v)?)
            };
            Ok(())
        },
    },
    Knob {
        name: "handshake",
        default: "off",
        unit: "duration or off",
        help: "off, or the SYN timeout, e.g. 1s (off)",
        set: |c, key, v| {
            c.handshake = if off(v) {
                None
            } else {
                Some(parse_dur(key, v)?)
            };
            Ok(())
        },
    },
    Knob {
        name: "limited_transmit",
        default: "on",
        unit: "on/off",
        help: "on or off: a new segment on each of the first two duplicate ACKs, RFC 3042 (on)",
        set: |c, key, v| {
            c.limited_transmit = parse_on_off(key, v)?;
            Ok(())
        },
    },
    Knob {
        name: "timestamps",
        default: "on",
        unit: "on/off",
        help: "on: RTT samples from timestamps on every ACK, RFC 7323; off: Karn's algorithm, RFC 6298 §3 (on)",
        set: |c, key, v| {
            c.timestamps = parse_on_off(key, v)?;
            Ok(())
        },
    },
    Knob {
        name: "rto_reset",
        default: "sample",
        unit: "choice",
        help: "when a backed-off RTO falls back: sample (the next RTT sample, RFC 6298 §5) or ack (every new ACK, as ns-3) (sample)",
        set: |c, key, v| {
            c.rto_reset_on_ack = match v.trim().to_ascii_lowercase().as_str() {
                "sample" => false,
                "ack" => true,
                _ => return Err(bad(key, format!("'{v}': sample or ack"))),
            };
            Ok(())
        },
    },
    Knob {
        name: "host_rtx",
        default: "resend",
        unit: "choice",
        help: "resend or skip: a retransmission of a segment still in its own host's NIC queue is sent or not (Linux: skip) (resend)",
        set: |c, key, v| {
            c.host_rtx_skip = match v.trim().to_ascii_lowercase().as_str() {
                "resend" => false,
                "skip" => true,
                _ => return Err(bad(key, format!("'{v}': resend or skip"))),
            };
            Ok(())
        },
    },
];
