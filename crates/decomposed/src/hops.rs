//! A path as the decomposition sees it: each hop's rate and one-way
//! propagation delay, and the time a packet of a given size takes over a
//! run of hops (store and forward: serialization at each hop, then
//! propagation).

use coflowkit_model::{Fabric, LinkId, LinkKind};
use coflowkit_packet::PacketConfig;
use serde::{Deserialize, Serialize};

/// One hop: its rate (bits/s, rounded to a whole number so hops compare
/// and hash) and its one-way propagation delay (ns).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct Hop {
    /// Bits per second.
    pub rate: u64,
    /// Nanoseconds.
    pub delay: u64,
}

impl Hop {
    /// Link `l` of `fabric`: its capacity, and its own delay or the knobs'
    /// delay for its kind, as the packet engine takes them.
    pub fn of(fabric: &Fabric, cfg: &PacketConfig, l: LinkId) -> Hop {
        let link = &fabric.links()[l.0 as usize];
        let delay = fabric
            .link_delay(l)
            .map(|d| d.0)
            .unwrap_or(match link.kind {
                LinkKind::Uplink(_) | LinkKind::Downlink(_) => cfg.host_link_delay.0,
                _ => cfg.fabric_link_delay.0,
            });
        Hop {
            rate: link.capacity.0.round() as u64,
            delay,
        }
    }

    /// Nanoseconds to serialize `bytes` at this hop's rate.
    pub fn serialize_ns(&self, bytes: u32) -> f64 {
        f64::from(bytes) * 8e9 / self.rate as f64
    }
}

/// Propagation of every hop plus the serialization of a `bytes` packet at
/// each hop but the first (ns): what a run of hops adds to a packet after
/// its first hop has serialized it, which one link of the first hop's rate
/// and this delay reproduces.
pub fn collapsed_delay(hops: &[Hop], bytes: u32) -> u64 {
    let prop: u64 = hops.iter().map(|h| h.delay).sum();
    let ser: f64 = hops.iter().skip(1).map(|h| h.serialize_ns(bytes)).sum();
    prop + ser.round() as u64
}
