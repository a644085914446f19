//! DCTCP, the window transport that reacts to ECN marks by their extent:
//!
//! * DCTCP, Alizadeh et al., SIGCOMM 2010, §3.1-3.2: the receiver echoes
//!   each packet's CE mark in its ACK; the sender keeps
//!   α ← (1 − g)·α + g·F once per window of data (F the fraction of bytes
//!   acknowledged with ECE, Eq. 1) and, on marks, cuts the window once per
//!   window: cwnd ← cwnd·(1 − α/2) (Eq. 2);
//!
//! The same α and cut serve D2TCP (with its penalty, `super::d2tcp`), MCP
//! with its ECN term (`super::mcp`) and TAFE's cut (a host policy's share).

use super::{Ecn, Rules, Sender, TransportKind};
use crate::config::{bad, Knob};

/// DCTCP: ECN-capable, α from 1, NewReno's recovery otherwise.
pub const RULES: Rules = Rules {
    name: "dctcp",
    option: true,
    ecn: Ecn::Alpha,
    ..super::newreno::RULES
};

impl TransportKind {
    /// DCTCP: TCP with ECN, the window cut by α/2 once per window of marks.
    #[allow(non_upper_case_globals)]
    pub const Dctcp: TransportKind = TransportKind(&RULES);
}

impl Sender {
    /// Eq. 1, once per window of data: α ← (1 − g)·α + g·F, F the
    /// fraction of the window's bytes acknowledged with ECE; the next
    /// window starts.
    #[inline]
    pub(super) fn update_alpha(&mut self) {
        if self.acked_in_win > 0 {
            let f = self.marked_in_win as f64 / self.acked_in_win as f64;
            self.alpha = (1.0 - self.p.g) * self.alpha + self.p.g * f;
        }
        self.acked_in_win = 0;
        self.marked_in_win = 0;
        self.win_end = self.nxt.max(self.una + 1);
    }

    /// Eq. 2 on an echoed mark: cwnd ← cwnd·(1 − cut) with
    /// [`Sender::window_cut`]'s cut (DCTCP's α/2 is D2TCP's with d = 1,
    /// `super::d2tcp`), never below 2 segments; once per window (until
    /// `cwr_end` is acknowledged).
    #[inline]
    pub(super) fn ecn_cut(&mut self, now: u64) {
        let mss = self.p.mss as f64;
        let cut = self.window_cut(now);
        self.cwnd = (self.cwnd * (1.0 - cut)).max(2.0 * mss);
        self.ssthresh = self.cwnd;
        self.cwr_end = self.max_sent;
    }
}

/// DCTCP's gain.
pub const KNOBS: &[Knob] = &[Knob {
    name: "dctcp_g",
    default: "0.0625",
    unit: "number",
    help: "DCTCP's gain g (0.0625)",
    set: |c, key, v| {
        let g: f64 = v
            .trim()
            .parse()
            .map_err(|_| bad(key, format!("'{v}' is not a number")))?;
        if !(g > 0.0 && g <= 1.0) {
            return Err(bad(key, format!("{g} is not in (0, 1]")));
        }
        c.dctcp_g = g;
        Ok(())
    },
}];
