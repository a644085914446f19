//! Per-flow pacing at the host: a paced flow's packets leave its host no
//! faster than its pacing rate.
//!
//! The model is a time slot per flow, kept exact in integer picoseconds:
//! after a flow's packet of `w` wire bytes leaves at slot `t`, its next may
//! leave at `anchor + ceil(8·(bytes since anchor)·10^12 / rate)`; the
//! anchor moves to the current instant when the flow was idle past its slot
//! (no credit for idle time, so no burst after it), and to the last
//! packet's slot when the rate rises: the gap after the last packet is
//! timed again at the new rate, so a flow whose rate jumps from 1 Mbit/s to
//! 1 Gbit/s does not wait out the 12 ms the old rate gave its last packet
//! (RCP's rates move by orders of magnitude); when the rate falls, the
//! packet sent keeps its slot and the next one anchors afresh
//! ([`Pacer::set_rate`]). Rounding never accumulates: the thousandth
//! 1500-byte packet at 1 Gbit/s leaves exactly 12 ms after the first. A
//! timer event (one per flow, cancelled lazily) releases the next segment
//! when its slot comes (the engine's `Ev::Pace`).
//!
//! Where the rate comes from ([`Pacing`], per flow, settable by whoever
//! owns the flow):
//!
//! * a fixed rate (`pacing=5Gbps`);
//! * Linux's rule (`pacing=cwnd`): `rate = ratio · cwnd / srtt`, with the
//!   ratio 200% while cwnd < ssthresh/2 and 120% after
//!   (`tcp_update_pacing_rate` in net/ipv4/tcp_input.c; the ratios are the
//!   sysctls `tcp_pacing_ss_ratio` and `tcp_pacing_ca_ratio`,
//!   Documentation/networking/ip-sysctl.rst: "current_rate = cwnd * mss /
//!   srtt ... If TCP is in slow start, tcp_pacing_ss_ratio is applied to let
//!   TCP probe for bigger speeds, assuming cwnd can be doubled every other
//!   RTT", default 200, and 120 in congestion avoidance; Linux commit
//!   43e122b014c9 "tcp: refine pacing rate determination" chose the slow-
//!   start ratio while cwnd < ssthresh/2). No rate before the first RTT
//!   sample: the flow is unpaced until then, as in Linux, whose pacing rate
//!   starts unlimited;
//! * the network (RCP: the rate echoed by each ACK, `crate::rcp`).
//!
//! Linux applies the rate to the MSS; here it applies to the bytes on the
//! wire (headers included), the quantity a NIC serializes.

use coflowkit_model::parse;

/// How a flow's pacing rate is set.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Pacing {
    /// No pacing: segments leave as the window allows.
    Off,
    /// Linux's rate, 2 or 1.2 times cwnd/srtt (see the module doc).
    Cwnd,
    /// A fixed rate, bits/s.
    Rate(u64),
}

impl Pacing {
    /// Parses `off`, `cwnd` or a rate (`5Gbps`, `500 Mbit/s`, `1e9`).
    pub fn parse(v: &str) -> Result<Pacing, String> {
        let t = v.trim().to_ascii_lowercase();
        match t.as_str() {
            "off" | "none" | "no" | "false" => return Ok(Pacing::Off),
            "cwnd" => return Ok(Pacing::Cwnd),
            _ => {}
        }
        let r = parse::rate(v)
            .map_err(|e| format!("{e}; or off, or cwnd"))?
            .0;
        if !(r >= 1.0 && r < u64::MAX as f64) {
            return Err(format!(
                "'{}': a pacing rate must be 1 bit/s or more",
                v.trim()
            ));
        }
        Ok(Pacing::Rate(r.round() as u64))
    }

    /// Its name in options.
    pub fn describe(self) -> String {
        match self {
            Pacing::Off => "off".to_string(),
            Pacing::Cwnd => "cwnd".to_string(),
            Pacing::Rate(r) => format!("{r}"),
        }
    }
}

/// Linux's pacing ratio, percent, in slow start (`tcp_pacing_ss_ratio`).
pub const SS_RATIO: f64 = 2.0;
/// Linux's pacing ratio in congestion avoidance (`tcp_pacing_ca_ratio`).
pub const CA_RATIO: f64 = 1.2;

/// Linux's pacing rate, bits/s, of a window of `cwnd` bytes over a smoothed
/// RTT of `srtt_ps` (`ssthresh` picks the ratio); `None` before a sample.
pub fn cwnd_rate(cwnd: f64, ssthresh: f64, srtt_ps: Option<f64>) -> Option<u64> {
    let srtt = srtt_ps.filter(|&s| s > 0.0)?;
    let ratio = if cwnd < ssthresh / 2.0 {
        SS_RATIO
    } else {
        CA_RATIO
    };
    let r = ratio * cwnd * 8e12 / srtt;
    Some(r.clamp(1.0, u64::MAX as f64 / 2.0) as u64)
}

/// One flow's pacing slot.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Pacer {
    /// The rate, bits/s; 0 for none (every slot is now).
    pub rate_bps: u64,
    anchor_ps: u64,
    bits: u64,
    /// When its last packet left (ps) and its bits on the wire.
    last_ps: u64,
    last_bits: u64,
    /// The earliest instant its next packet may leave (ps).
    pub next_ps: u64,
}

impl Pacer {
    /// A pacer at `rate_bps` (0: unpaced).
    pub fn new(rate_bps: u64) -> Pacer {
        Pacer {
            rate_bps,
            ..Pacer::default()
        }
    }

    /// Whether a packet may leave at `now`.
    pub fn ready(&self, now: u64) -> bool {
        self.rate_bps == 0 || now >= self.next_ps
    }

    /// Changes the rate: the gap after the last packet is timed again at
    /// the new rate if that ends it sooner (a flow whose rate jumps from 1
    /// Mbit/s to 1 Gbit/s does not wait out the 12 ms the old rate gave its
    /// last packet). Otherwise the packet already sent keeps the slot it
    /// left with (none, if it left unpaced) and the new rate paces the
    /// packets from the next on, as a qdisc that stamps each packet's
    /// departure by the rate of its time (Linux's `fq`) does. Re-timing a
    /// lower rate too held a Baraat flow's last 118 bytes 1.3 ms behind its
    /// previous 1,500-byte packet (their demand, 118 bytes per 100 us
    /// interval, is 9.4 Mbit/s), and 150 ms with 1-byte headers.
    pub fn set_rate(&mut self, rate_bps: u64) {
        if rate_bps == self.rate_bps {
            return;
        }
        self.rate_bps = rate_bps;
        if self.last_bits == 0 {
            return;
        }
        let anchor = self.anchor_ps;
        self.anchor_ps = self.last_ps;
        self.bits = self.last_bits;
        let retimed = self.slot();
        if retimed <= self.next_ps {
            self.next_ps = retimed;
        } else {
            // The next packet leaves at the slot it has and anchors afresh.
            self.anchor_ps = anchor;
            self.bits = 0;
        }
    }

    fn slot(&self) -> u64 {
        if self.rate_bps == 0 {
            return self.last_ps;
        }
        let gap = (self.bits as u128 * 1_000_000_000_000).div_ceil(self.rate_bps as u128);
        self.anchor_ps + gap.min(u64::MAX as u128 / 2) as u64
    }

    /// A packet of `wire` bytes left at `now`: the next slot moves on.
    pub fn sent(&mut self, now: u64, wire: u32) {
        self.last_ps = now;
        self.last_bits = 8 * wire as u64;
        if self.rate_bps == 0 {
            self.next_ps = now;
            self.bits = 0;
            return;
        }
        if self.bits == 0 || now > self.next_ps {
            // A fresh anchor (first packet, new rate) or idle past its
            // slot: no credit for the idle time.
            self.anchor_ps = now.max(self.next_ps);
            self.bits = 0;
        }
        self.bits += self.last_bits;
        self.next_ps = self.slot();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slots_are_exact_and_idle_earns_no_credit() {
        let mut p = Pacer::new(1_000_000_000);
        assert!(p.ready(0));
        p.sent(0, 1500);
        // 12,000 bits at 1 Gbit/s: 12 us.
        assert_eq!(p.next_ps, 12_000_000);
        assert!(!p.ready(11_999_999) && p.ready(12_000_000));
        for k in 1..1000u64 {
            p.sent(k * 12_000_000, 1500);
        }
        assert_eq!(p.next_ps, 12_000_000_000);
        // A rate that does not divide the slot: each slot is rounded up
        // from the anchor, so rounding never accumulates.
        let mut q = Pacer::new(3_000_000_000);
        q.sent(0, 1);
        assert_eq!(q.next_ps, 2667); // 8/3 ns = 2666.67 ps, up
        q.sent(2667, 1);
        assert_eq!(q.next_ps, 5334); // 16/3 ns = 5333.33 ps, up
        q.sent(5334, 1);
        assert_eq!(q.next_ps, 8000); // 24/3 ns exactly: no drift
                                     // Idle for a while: the next slot counts from when it sends.
        q.sent(1_000_000, 1);
        assert_eq!(q.next_ps, 1_002_667);
    }

    #[test]
    fn a_new_rate_times_the_last_gap_again() {
        let mut p = Pacer::new(1_000_000_000);
        p.sent(0, 1500);
        p.sent(12_000_000, 1500);
        // Twice the rate: the gap after the packet at 12 us is 6 us.
        p.set_rate(2_000_000_000);
        assert_eq!(p.next_ps, 18_000_000);
        p.sent(18_000_000, 1500);
        assert_eq!(p.next_ps, 24_000_000);
        // A thousandth of it: the packet sent keeps its slot; the one after
        // the next is spaced at the new rate (6 ms for 1,500 bytes).
        p.set_rate(2_000_000);
        assert_eq!(p.next_ps, 24_000_000);
        p.sent(24_000_000, 1500);
        assert_eq!(p.next_ps, 24_000_000 + 6_000_000_000);
        // Back up: the gap after it is timed again at the higher rate.
        p.set_rate(2_000_000_000);
        assert_eq!(p.next_ps, 30_000_000);
        // Unpaced: always ready.
        p.set_rate(0);
        p.sent(30_000_000, 1500);
        assert!(p.ready(30_000_000));
    }

    #[test]
    fn linux_ratio_doubles_in_slow_start_and_is_1_2_after() {
        // cwnd 15,000 bytes over 10 us: 12 Gbit/s of window.
        let ss = cwnd_rate(15_000.0, f64::INFINITY, Some(10e6)).unwrap();
        assert_eq!(ss, 24_000_000_000);
        // cwnd >= ssthresh/2 takes the congestion-avoidance ratio.
        let ca = cwnd_rate(15_000.0, 30_000.0, Some(10e6)).unwrap();
        assert_eq!(ca, 14_400_000_000);
        assert_eq!(cwnd_rate(15_000.0, 30_000.0, None), None);
    }

    #[test]
    fn parses_off_cwnd_and_rates() {
        assert_eq!(Pacing::parse("off"), Ok(Pacing::Off));
        assert_eq!(Pacing::parse("CWND"), Ok(Pacing::Cwnd));
        assert_eq!(Pacing::parse("5Gbps"), Ok(Pacing::Rate(5_000_000_000)));
        assert_eq!(Pacing::parse("1e9"), Ok(Pacing::Rate(1_000_000_000)));
        assert!(Pacing::parse("5GB/s").unwrap_err().contains("not bytes"));
        assert!(Pacing::parse("0").unwrap_err().contains("1 bit/s or more"));
        assert!(Pacing::parse("fast").unwrap_err().contains("or cwnd"));
    }
}
