//! Karuna's MCP, the window for deadline flows:
//!
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

use super::{Ecn, Rules, Sender, TransportKind};
use crate::config::values::parse_on_off;
use crate::config::Knob;

/// MCP: ECN only with `mcp_ecn`, the policy's deadline, its own window law
/// for a flow that has one (NewReno's otherwise).
pub const RULES: Rules = Rules {
    name: "mcp",
    option: false,
    ecn: Ecn::Knob,
    deadline_law: Some(Sender::mcp_step),
    policy_deadline: true,
    ..super::newreno::RULES
};

impl TransportKind {
    /// Karuna's MCP for a deadline flow. Only a host policy's
    /// `Cc::Mcp` selects it (not a `transport` option: it needs each
    /// flow's deadline).
    #[allow(non_upper_case_globals)]
    pub const Mcp: TransportKind = TransportKind(&RULES);
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

impl Sender {
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
}

/// MCP's ECN term.
pub const KNOBS: &[Knob] = &[
    Knob {
        name: "mcp_ecn",
        default: "off",
        unit: "on/off",
        help: "on or off: Karuna's MCP reacts to ECN marks, its target scaled by 1 - alpha/2 (off: the authors' prototype)",
        set: |c, key, v| {
            c.mcp_ecn = parse_on_off(key, v)?;
            Ok(())
        },
    },
];
