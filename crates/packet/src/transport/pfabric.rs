//! pFabric's end points (Alizadeh et al., SIGCOMM 2013):
//!
//! * pFabric's rate control, Alizadeh et al., SIGCOMM 2013, §4.2: the
//!   window starts at the path's BDP (line rate; the engine computes it,
//!   [`bdp_segments`]) with the slow-start threshold there
//!   too, so it grows by additive increase per ACK "as in standard TCP";
//!   loss is detected by a fixed timeout only (no fast retransmit, no
//!   reaction to duplicate ACKs, no ECN, no back-off); on a timeout the
//!   flow goes back to slow start with ssthresh at half the window before
//!   it; after `probe_after` consecutive timeouts (§4.2: 5) it enters
//!   probe mode, sending only a 1-byte segment per timeout, and returns to
//!   slow start at the first ACK. pFabric's receivers send SACKs; these
//!   are cumulative, so after a timeout the sender resends from the first
//!   hole and the first ACK jumps over what had arrived.
//!
//! The numbers (§4.2, §5):
//! a flow starts with one BDP of its path in flight (line rate; §5 uses 12
//! packets for an unloaded round trip of 14.6 µs at 10 Gbit/s) and times
//! out after about 3 such round trips (§5: 45 µs), which there is also one
//! round trip plus the time a full 36 KB buffer drains; the default keeps
//! both ([`auto_rto_ps`]), so that on shorter links it does not fire while
//! packets wait in a full queue. [`base_rtt_ps`] and [`bdp_segments`] give
//! the path's numbers. The switch side is `crate::queue::pfabric`; the sources
//! and what could be checked are in its module doc.

use super::{Ecn, Rules, Segment, Sender, SenderParams, TransportKind};
use crate::config::values::{auto, parse_dur, parse_u32};
use crate::config::Knob;
use crate::config::{Limit, PacketConfig};
use crate::port::Port;
use crate::queue::QueueKind;

/// pFabric: its own ACK and timeout rules, a fixed timeout, no ECN, no
/// SACK recovery, a first window from its path that is also its
/// slow-start threshold.
pub const RULES: Rules = Rules {
    name: "pfabric",
    option: true,
    ecn: Ecn::Off,
    starts_in_avoidance: true,
    samples_rtt: false,
    sack: false,
    on_ack: Some(Sender::on_ack_pfabric),
    on_timeout: Some(Sender::on_timeout_pfabric),
    deadline_law: None,
    policy_deadline: false,
    flow_deadline: false,
    rate_based: false,
    small_queues: false,
    window: false,
    window_from_path: true,
    queue: Some(QueueKind::Pfabric),
};

impl TransportKind {
    /// pFabric's minimal rate control; each packet carries the flow's
    /// remaining bytes as its priority for pFabric's switch queues
    /// (`crate::queue::pfabric`).
    #[allow(non_upper_case_globals)]
    pub const Pfabric: TransportKind = TransportKind(&RULES);
}

impl Sender {
    /// pFabric §4.2 on an ACK: any ACK ends probe mode (back to slow start
    /// from one segment); new data acknowledged grows the window; duplicate
    /// ACKs and ECN echoes change nothing.
    pub(super) fn on_ack_pfabric(&mut self, now: u64, ack: u64, out: &mut Vec<Segment>) {
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
    pub(super) fn on_timeout_pfabric(&mut self, now: u64, out: &mut Vec<Segment>) {
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
}

/// A pFabric flow's first window and timeout from its path (§4.2, §5),
/// unless set (`pfabric_init_cwnd`, `pfabric_rto`): `rtt_ps` its unloaded
/// round trip ([`base_rtt_ps`]), `rate` its bottleneck, bits/s.
pub fn path_params(p: &mut SenderParams, rtt_ps: u64, rate: f64, cfg: &PacketConfig) {
    p.init_cwnd = cfg
        .pfabric_init_cwnd
        .unwrap_or_else(|| bdp_segments(rate, rtt_ps, cfg.mtu));
    let rto = cfg.pfabric_rto.map_or_else(
        || auto_rto_ps(rtt_ps, rate, cfg.pfabric_buffer, cfg.mtu),
        |d| d.0.saturating_mul(1000),
    );
    p.min_rto_ps = rto.max(1);
    p.initial_rto_ps = rto.max(1);
}

/// The unloaded round trip of a path, ps: a full packet (`mtu` bytes)
/// across each forward port and a header-sized ACK across each reverse
/// one, each its serialization plus its link's propagation delay.
pub fn base_rtt_ps<'a>(
    fwd: impl Iterator<Item = &'a Port>,
    rev: impl Iterator<Item = &'a Port>,
    mtu: u32,
    header: u32,
) -> u64 {
    let hop = |p: &Port, bytes: u32| p.tx_ps(bytes) + p.delay_ps;
    fwd.map(|p| hop(p, mtu)).sum::<u64>() + rev.map(|p| hop(p, header)).sum::<u64>()
}

/// Full segments (of `mtu` wire bytes) that fill a path of bottleneck
/// `rate` bits/s and round trip `rtt_ps`: the window that sends at line
/// rate (pFabric §4.2), at least 1.
pub fn bdp_segments(rate: f64, rtt_ps: u64, mtu: u32) -> u32 {
    let bytes = rate * rtt_ps as f64 / 8e12;
    ((bytes / mtu as f64).ceil() as u32).max(1)
}

/// pFabric's fixed timeout for a path when none is set, ps: 3 unloaded
/// round trips (§5: 45 µs for 14.6 µs), but at least one round trip plus
/// the time one full pFabric buffer (`buffer`) takes to drain at the
/// bottleneck `rate`. §5's numbers satisfy both (14.6 + 28.8 µs for 36 KB
/// at 10 Gbit/s is 43.4 µs); on a fabric with shorter links 3 round trips
/// alone would fire while the flow's packets still wait in a full queue.
pub fn auto_rto_ps(rtt_ps: u64, rate: f64, buffer: Limit, mtu: u32) -> u64 {
    let bytes = match buffer {
        Limit::Bytes(b) => b,
        Limit::Packets(n) => n.saturating_mul(mtu as u64),
    };
    let drain = (bytes as f64 * 8e12 / rate).ceil() as u64;
    (3 * rtt_ps).max(rtt_ps + drain)
}

/// pFabric's end point numbers.
pub const KNOBS: &[Knob] = &[
    Knob {
        name: "pfabric_rto",
        default: "auto",
        unit: "duration or auto",
        help: "pfabric's fixed timeout, or auto: 3 unloaded round trips of the path, at least one plus a full pfabric buffer's drain (auto)",
        set: |c, key, v| {
            c.pfabric_rto = if auto(v) {
                None
            } else {
                Some(parse_dur(key, v)?)
            };
            Ok(())
        },
    },
    Knob {
        name: "pfabric_init_cwnd",
        default: "auto",
        unit: "segments",
        help: "pfabric's initial window in segments, or auto: the path's BDP (auto)",
        set: |c, key, v| {
            c.pfabric_init_cwnd = if auto(v) {
                None
            } else {
                Some(parse_u32(key, v, 1)?)
            };
            Ok(())
        },
    },
    Knob {
        name: "pfabric_probe_after",
        default: "5",
        unit: "timeouts",
        help: "consecutive timeouts before a pfabric flow probes (5)",
        set: |c, key, v| {
            c.pfabric_probe_after = parse_u32(key, v, 1)?;
            Ok(())
        },
    },
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn auto_rto_covers_three_round_trips_and_a_full_buffer() {
        // §5: 14.6 us round trip, 36 KB at 10 Gbit/s drains in 28.8 us:
        // 3 round trips (43.8 us) win over 14.6 + 28.8 = 43.4 us.
        assert_eq!(
            auto_rto_ps(14_600_000, 1e10, Limit::Bytes(36_000), 1500),
            43_800_000
        );
        // A 6 us round trip: the drain wins, 6 + 28.8 = 34.8 us.
        assert_eq!(
            auto_rto_ps(6_000_000, 1e10, Limit::Packets(24), 1500),
            34_800_000
        );
    }

    #[test]
    fn path_numbers_by_hand() {
        // Two hops of 10 Gbit/s and 1 us each way: 1500 B take 1.2 us,
        // 40 B 32 ns, so 2 x 2.2 us + 2 x 1.032 us = 6.464 us; its BDP is
        // 8080 bytes, 5.39 packets of 1500 B: 6 segments.
        let hops = [0, 1].map(|_| Port::new(10e9, 1_000_000, None, None, false));
        let rtt = base_rtt_ps(hops.iter(), hops.iter(), 1500, 40);
        assert_eq!(rtt, 6_464_000);
        assert_eq!(bdp_segments(10e9, rtt, 1500), 6);
        // pFabric §5: 14.6 us at 10 Gbit/s is 18,250 bytes, 12.2 packets.
        assert_eq!(bdp_segments(10e9, 14_600_000, 1500), 13);
    }
}
