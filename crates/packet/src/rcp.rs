//! RCP, the Rate Control Protocol (Dukkipati and McKeown, "Processor
//! Sharing Flows in the Internet", IWQoS 2005, §2; "Why Flow-Completion
//! Time is the Right Metric for Congestion Control", CCR 36(1) 2006, §3):
//! every output port offers one rate to all the flows through it, and each
//! flow sends at the least rate offered along its path, which emulates
//! processor sharing.
//!
//! * **The port's rate** (IWQoS 2005 §2, the update equation): every
//!   control interval T the port sets
//!   `R ← R · (1 + (T/d0) · (α·(C − y) − β·q/d0) / C)`,
//!   C its capacity, y the input traffic rate over the last interval (every
//!   byte that arrived at the port, RCP's or not), q the bytes queued now,
//!   d0 the average RTT of the flows through it; α = 0.1 and β = 1
//!   (`rcp_alpha`, `rcp_beta`). T ≤ d0 in the paper
//!   ("approximately once per RTT"); here T is `rcp_interval`, or d0 itself
//!   (the default). R is kept within [C/100, C]: the equation can go
//!   negative when a burst of arrivals builds a queue of several d0·C, and
//!   a source learns a new rate only from its own packets' ACKs, so a rate
//!   far below the floor would leave it silent, deaf to the recovered R,
//!   for as long as its next packet's gap (the authors' ns-2 host sends
//!   rate-refresh packets instead; not modelled).
//! * **q** is the least queue a packet found on arrival during the
//!   interval (and the queue at its end), not the instantaneous queue at
//!   the update: at datacenter RTTs one queued packet alone is
//!   q/d0 ≈ C/6 at 10 Gbit/s and 7 µs, and packets from several hosts keep
//!   one queued at random instants, which held R at 60% of C/N in a test
//!   with the instantaneous q; the least queue (XCP's "persistent queue",
//!   Katabi et al. SIGCOMM 2002, §3.5) holds R within 3% of C/N.
//! * **d0** (CCR 2006 §3, step 2): every data packet carries its sender's
//!   RTT estimate, and each port keeps a moving average of them, here with
//!   a gain of 0.02 per packet; before any packet carried one, d0 is
//!   `rcp_d0`. The 0.02 is `RTT_GAIN` of the authors' ns-2 router
//!   (`rcp.cc`, "should be on the order of 1/(number of co-existing
//!   flows)"), but in the version of that file found (v4) its per-packet
//!   average is commented out: d0 moves once per interval, towards the
//!   byte-weighted mean RTT of the interval's packets. The per-packet
//!   average is this module's choice.
//! * **The header** (CCR 2006 §3, steps 2-3): a packet leaves its source
//!   with rate field Rp = ∞; every port on its path sets Rp ← min(Rp, R)
//!   when the packet arrives; the receiver copies Rp into its ACK; the
//!   source sends at the rate the ACK brings back (paced by
//!   `crate::pacing`).
//! * **The first RTT**: the flow opens with a SYN whose rate field the
//!   ports stamp like a data packet's; the SYN-ACK brings the path's rate
//!   back and the first data packet leaves at it (the handshake the RCP
//!   host in the authors' ns-2 implementation makes; CCR 2006 §3 counts
//!   it in the flow's completion time: "1.5 RTT + L/R" under processor
//!   sharing). An RCP flow therefore always handshakes, with or without
//!   `handshake` (whose timeout, or else `initial_rto`, retries the SYN).
//! * **Loss**: RCP has no window; its packets are recovered as TCP's
//!   (cumulative ACKs, three duplicate ACKs, the retransmission timer), and
//!   the rate alone governs how fast they go.
//!
//! **Sources, checked (2026-11-25).** The papers' own text could not be
//! read from this project's search corpora. Found instead: the algorithm
//! as Dukkipati and McKeown's technical report (TR04-HPNG-061604) gives
//! it, quoted by the GÉANT PERT knowledge base ("Rate Control Protocol"):
//! one rate R(t) per router, updated "approximately once every RTT"; Rp =
//! ∞ at the source, lowered to R(t) by each router; the destination copies
//! Rp into its ACKs; the header's RTT field feeds the router's moving
//! average d0, which is what the header and d0 rules above follow. The
//! update equation as the header comment of the authors' ns-2 router
//! states it, `R = R·{1 + (T/rtt)·[α·(C − input_tr/T) − β·Q/rtt]/C}` with
//! the input measured over T, the one above. α = 0.1 and β = 1 are the
//! values the RCP ns-2 run scripts pass (`$alpha = 0.1; $beta = 1;`),
//! not a quotation of the paper. That router clips R to [a minimum number
//! of packets per RTT, C] (here [C/100, C], see above) and takes
//! T = min(d0, a time slot).
//!
//! The control interval is an event per port that runs only while RCP
//! packets pass through it: it starts with the first RCP packet that
//! arrives at an idle port and stops once a whole interval brought nothing,
//! the queue is empty and R is back at C. Without RCP flows no port ever
//! has one.

use crate::config::values::{parse_dur, parse_gain};
use crate::config::Knob;

/// The least rate a port offers, as a fraction of its capacity.
pub const MIN_RATE_FRACTION: f64 = 1e-2;
/// The gain of a port's moving average of the RTTs packets carry.
pub const RTT_GAIN: f64 = 0.02;
/// The shortest control interval when T follows d0 (ps): a floor that
/// keeps a tiny d0 from flooding the event queue.
pub const MIN_INTERVAL_PS: u64 = 1_000_000;

/// The knobs every port shares.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RcpParams {
    /// α, the weight of spare capacity.
    pub alpha: f64,
    /// β, the weight of the queue.
    pub beta: f64,
    /// A fixed control interval (ps); `None` for T = d0.
    pub interval_ps: Option<u64>,
    /// d0 before any packet carried an RTT (ps).
    pub d0_ps: u64,
}

/// One port's RCP state.
#[derive(Debug, Clone, Copy)]
pub struct RcpPort {
    /// Capacity C, bits/s.
    pub capacity: f64,
    /// The rate R it offers, bits/s.
    pub rate: f64,
    /// d0, the average RTT of the packets through it (ps).
    pub d0_ps: f64,
    /// Bytes that arrived since the last update.
    pub bytes_in: u64,
    /// The least queue (bytes) a packet found on arrival since the last
    /// update.
    pub q_min: u64,
    /// Whether its control-interval event is pending.
    pub running: bool,
    /// When the current interval began (ps).
    pub last_ps: u64,
}

impl RcpPort {
    /// A port of `capacity` bits/s offering all of it.
    pub fn new(capacity: f64, p: &RcpParams) -> RcpPort {
        RcpPort {
            capacity,
            rate: capacity,
            d0_ps: p.d0_ps as f64,
            bytes_in: 0,
            q_min: u64::MAX,
            running: false,
            last_ps: 0,
        }
    }

    /// A packet of `wire` bytes arrived at a queue of `queued` bytes,
    /// carrying its sender's RTT estimate `rtt_ps` (0: none yet) and rate
    /// field `field`; returns the field it leaves with.
    pub fn on_arrival(&mut self, wire: u32, queued: u64, rtt_ps: u64, field: f32) -> f32 {
        self.bytes_in += wire as u64;
        self.q_min = self.q_min.min(queued);
        if rtt_ps > 0 {
            self.d0_ps += RTT_GAIN * (rtt_ps as f64 - self.d0_ps);
        }
        field.min(self.rate as f32)
    }

    /// The control interval to wait now (ps).
    pub fn interval_ps(&self, p: &RcpParams) -> u64 {
        p.interval_ps
            .unwrap_or_else(|| (self.d0_ps.round() as u64).max(MIN_INTERVAL_PS))
    }

    /// The update at the end of an interval of `t_ps` with `queued` bytes
    /// in the queue now; returns whether the port is idle (nothing
    /// arrived, nothing queued, R back at C), so its timer may stop.
    pub fn update(&mut self, t_ps: u64, queued: u64, p: &RcpParams) -> bool {
        let c = self.capacity;
        let t = t_ps as f64 * 1e-12;
        let d0 = self.d0_ps * 1e-12;
        let y = self.bytes_in as f64 * 8.0 / t;
        let q = self.q_min.min(queued) as f64 * 8.0;
        self.q_min = u64::MAX;
        let factor = 1.0 + (t / d0) * (p.alpha * (c - y) - p.beta * q / d0) / c;
        self.rate = (self.rate * factor).clamp(c * MIN_RATE_FRACTION, c);
        let idle = self.bytes_in == 0 && queued == 0 && self.rate >= c;
        self.bytes_in = 0;
        idle
    }
}

/// RCP's port law.
pub const KNOBS: &[Knob] = &[
    Knob {
        name: "rcp_alpha",
        default: "0.1",
        unit: "number",
        help: "RCP's alpha, weight of spare capacity (0.1)",
        set: |c, key, v| {
            c.rcp_alpha = parse_gain(key, v)?;
            Ok(())
        },
    },
    Knob {
        name: "rcp_beta",
        default: "1",
        unit: "number",
        help: "RCP's beta, weight of the queue (1)",
        set: |c, key, v| {
            c.rcp_beta = parse_gain(key, v)?;
            Ok(())
        },
    },
    Knob {
        name: "rcp_interval",
        default: "rtt",
        unit: "duration or rtt",
        help: "RCP's control interval T, or rtt for T = d0 (rtt)",
        set: |c, key, v| {
            c.rcp_interval = match v.trim().to_ascii_lowercase().as_str() {
                "rtt" | "d0" => None,
                _ => Some(parse_dur(key, v)?),
            };
            Ok(())
        },
    },
    Knob {
        name: "rcp_d0",
        default: "20us",
        unit: "duration",
        help: "RCP's average RTT d0 before packets carry one (20us)",
        set: |c, key, v| {
            c.rcp_d0 = parse_dur(key, v)?;
            Ok(())
        },
    },
];

#[cfg(test)]
mod tests {
    use super::*;

    fn params() -> RcpParams {
        RcpParams {
            alpha: 0.1,
            beta: 1.0,
            interval_ps: None,
            d0_ps: 10_000_000,
        }
    }

    #[test]
    fn one_step_of_the_rate_equation_by_hand() {
        // C = 10 Gbit/s, R = 5 Gbit/s, d0 = T = 10 us. In the interval
        // 15,000 bytes arrived (y = 120,000 bits / 10 us = 12 Gbit/s) and
        // 3,000 bytes are queued (q/d0 = 24,000 bits / 10 us = 2.4 Gbit/s):
        // factor = 1 + 1 * (0.1 * (10 - 12) - 1 * 2.4) / 10 = 1 - 0.26
        // = 0.74, so R = 3.7 Gbit/s.
        let p = params();
        let mut port = RcpPort::new(10e9, &p);
        port.rate = 5e9;
        port.bytes_in = 15_000;
        assert!(!port.update(10_000_000, 3_000, &p));
        assert!((port.rate - 3.7e9).abs() < 1.0, "{}", port.rate);
        assert_eq!(port.bytes_in, 0);
        // Half an interval (T/d0 = 1/2), 5,000 bytes in (y = 8 Gbit/s),
        // empty queue: factor = 1 + 0.5 * 0.1 * 2 / 10 = 1.01.
        port.bytes_in = 5_000;
        port.update(5_000_000, 0, &p);
        assert!((port.rate - 3.737e9).abs() < 1.0, "{}", port.rate);
    }

    #[test]
    fn rate_stays_in_range_and_idles_at_capacity() {
        let p = params();
        let mut port = RcpPort::new(1e9, &p);
        // A queue of 10 d0 at C: the factor is negative; R floors.
        port.update(10_000_000, 12_500, &p);
        assert_eq!(port.rate, 1e9 * MIN_RATE_FRACTION);
        // Idle intervals raise R by α·T/d0 each, up to C, then it stops.
        let mut steps = 0;
        while !port.update(10_000_000, 0, &p) {
            steps += 1;
        }
        // 1.1^n >= 100: n = 49, the 49th finding the port idle.
        assert_eq!(steps, 48);
        assert_eq!(port.rate, 1e9);
    }

    #[test]
    fn packets_take_the_least_rate_and_d0_follows_their_rtts() {
        let p = params();
        let mut port = RcpPort::new(10e9, &p);
        port.rate = 2e9;
        assert_eq!(port.on_arrival(1500, 3000, 0, f32::INFINITY), 2e9);
        assert_eq!(port.on_arrival(1500, 4500, 0, 1e9), 1e9);
        assert_eq!(port.d0_ps, 10e6);
        port.on_arrival(1500, 6000, 20_000_000, 1e9);
        assert_eq!(port.q_min, 3000);
        // d0 += 0.02 * (20 - 10) us.
        assert!((port.d0_ps - 10.2e6).abs() < 1e-6);
        assert_eq!(port.bytes_in, 4500);
        assert_eq!(port.interval_ps(&p), 10_200_000);
    }
}
