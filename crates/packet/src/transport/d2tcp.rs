//! D2TCP, the deadline-aware DCTCP:
//!
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

use super::{Ecn, Rules, Sender, TransportKind};
use crate::config::{bad, Knob};

/// D2TCP: DCTCP's α and marks with a cut by the deadline's imminence; the
/// deadline is a host policy's, else the flow's own.
pub const RULES: Rules = Rules {
    name: "d2tcp",
    option: true,
    ecn: Ecn::Alpha,
    policy_deadline: true,
    flow_deadline: true,
    ..super::newreno::RULES
};

impl TransportKind {
    /// D2TCP: DCTCP's α with a cut by the flow's deadline imminence.
    #[allow(non_upper_case_globals)]
    pub const D2tcp: TransportKind = TransportKind(&RULES);
}

/// What D2TCP does with a flow whose deadline has passed (the imminence
/// d = Tc/D has no meaning once D ≤ 0).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LateRule {
    /// d stays at the top of its range, 2: the flow keeps the most
    /// aggressive back-off it had just before the deadline.
    Max,
    /// d = 1: the flow backs off like DCTCP, as a flow without a deadline.
    Dctcp,
}

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

impl Sender {
    /// The fraction of the window a marked window takes away at `now`:
    /// DCTCP's α/2 (Eq. 2), D2TCP's α^d/2 (§3.1), or TAFE's α·s
    /// (Algorithm 2, line 11: cwnd × (1 − p), p = α/(S_max/S_c)).
    pub fn window_cut(&self, now: u64) -> f64 {
        match self.tafe_share {
            Some(share) => (self.alpha * share).min(1.0),
            None => penalty(self.alpha, self.imminence(now)) / 2.0,
        }
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
}

/// D2TCP's rule past a deadline.
pub const KNOBS: &[Knob] = &[Knob {
    name: "d2tcp_late",
    default: "max",
    unit: "choice",
    help: "D2TCP after a missed deadline: max (d = 2) or dctcp (d = 1) (max)",
    set: |c, key, v| {
        c.d2tcp_late = match v.trim().to_ascii_lowercase().as_str() {
            "max" => LateRule::Max,
            "dctcp" => LateRule::Dctcp,
            _ => return Err(bad(key, format!("'{v}': max or dctcp"))),
        };
        Ok(())
    },
}];
