//! pFabric's end point numbers (Alizadeh et al., SIGCOMM 2013, §4.2, §5):
//! a flow starts with one BDP of its path in flight (line rate; §5 uses 12
//! packets for an unloaded round trip of 14.6 µs at 10 Gbit/s) and times
//! out after about 3 such round trips (§5: 45 µs), which there is also one
//! round trip plus the time a full 36 KB buffer drains; the default keeps
//! both ([`auto_rto_ps`]), so that on shorter links it does not fire while
//! packets wait in a full queue. [`base_rtt_ps`] and [`bdp_segments`] give
//! the path's numbers. The switch side is `crate::pfabric`; the sources
//! and what could be checked are in its module doc.

use crate::config::Limit;
use crate::port::Port;

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
