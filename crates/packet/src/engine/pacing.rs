//! A paced flow in the loop (`crate::pacing`): one segment per slot of
//! its [`crate::pacing::Pacer`], released by its own `Pace` event, and the
//! rate it paces at after each ACK (RCP's from the network, Linux's from
//! the window). An unpaced flow never comes here.

use super::{Engine, Ev};
use crate::config::values::{off, parse_limit};
use crate::config::{bad, Knob, Limit};
use crate::pacing::{cwnd_rate, Pacing};

impl Engine<'_> {
    /// A paced flow sends what its slots and window allow now, and asks
    /// for a `Pace` event at its next slot.
    pub(super) fn pump(&mut self, f: u32) {
        if self.spc.is_some() && self.spc_holds(f) {
            return;
        }
        let now = self.now;
        let header = self.cfg.header_bytes;
        let tsq = self.cfg.tsq;
        let mut segs = std::mem::take(&mut self.segs);
        loop {
            let fl = &mut self.flows[f as usize];
            if tsq.is_some_and(|limit| fl.nic_bytes >= limit) {
                // Its NIC is full for it: the next packet to leave it
                // pumps again (`tx_done`).
                break;
            }
            if !fl.pacer.ready(now) {
                let at = fl.pacer.next_ps;
                if fl.pace_at != Some(at) {
                    fl.pace_at = Some(at);
                    self.push(at, Ev::Pace(f));
                }
                break;
            }
            let Some(s) = fl.sender.as_mut() else { break };
            segs.clear();
            s.send_up_to(now, 1, &mut segs);
            let Some(seg) = segs.first() else { break };
            fl.pacer.sent(now, seg.len + header);
            self.transmit(f, &segs);
        }
        self.segs = segs;
    }

    pub(super) fn pace(&mut self, f: u32) {
        let fl = &mut self.flows[f as usize];
        if fl.pace_at == Some(self.now) {
            fl.pace_at = None;
            self.pump(f);
        }
    }

    /// A paced flow's rate after an ACK echoing `field`: RCP's from the
    /// network, Linux's from the window, else unchanged.
    pub(super) fn repace(&mut self, f: u32, field: f32) {
        let fl = &mut self.flows[f as usize];
        let rate = match (fl.transport.rules().rate_based, fl.pacing, &fl.sender) {
            (true, _, _) => Some(rate_of(field)),
            (_, Pacing::Cwnd, Some(s)) => cwnd_rate(s.cwnd, s.ssthresh, s.srtt_ps()),
            _ => None,
        };
        if let Some(r) = rate {
            fl.pacer.set_rate(r);
        }
    }
}

/// A pacing rate from an RCP rate field (an unstamped, infinite field
/// leaves the flow unpaced).
pub(super) fn rate_of(field: f32) -> u64 {
    if field.is_finite() {
        (field as f64).round().max(1.0) as u64
    } else {
        0
    }
}

/// Host pacing and TCP Small Queues.
pub const KNOBS: &[Knob] = &[
    Knob {
        name: "pacing",
        default: "off",
        unit: "choice or rate",
        help: "per-flow pacing at the host: off, cwnd (Linux: 2 or 1.2 x cwnd/srtt) or a rate, e.g. 5Gbps (off)",
        set: |c, key, v| {
            c.pacing = Pacing::parse(v).map_err(|e| bad(key, e))?;
            Ok(())
        },
    },
    Knob {
        name: "tsq",
        default: "off",
        unit: "bytes",
        help: "off, or TCP Small Queues' bytes: a flow sends while it has less in its host's NIC (Linux 32KB) (off)",
        set: |c, key, v| {
            c.tsq = if off(v) {
                None
            } else {
                match parse_limit(key, v)? {
                    Limit::Bytes(b) => Some(b),
                    Limit::Packets(_) => {
                        return Err(bad(key, format!("'{v}': bytes (32KB), or off")))
                    }
                }
            };
            Ok(())
        },
    },
];
