//! A flow's completion time alone on an idle path: what the packet engine
//! gives a flow of that size on a chain of the path's hops, with nothing
//! else on it (slow start, ACK clocking, the handshake and every other
//! knob included). A decomposition subtracts it from a flow's time in a
//! link's simulation to get what that link's traffic cost the flow, and
//! adds it back once for the flow's own path.
//!
//! One run per path (its hops) measures a grid of sizes, each flow
//! starting after the one before finished (a Starts-After chain): one
//! byte, every whole number of packets up to [`EXACT`], then sizes a
//! quarter octave apart up to the largest asked for, or [`LINEAR`] if
//! that is less. Between grid points the time is interpolated in bytes:
//! within a packet it grows by the partial packet's serialization, and
//! past the slow start by one packet's serialization per packet, so the
//! interpolation is close there; past the grid it goes on at the last
//! step's slope. A lone flow is past its slow start (and its first losses,
//! where a buffer overflows) long before [`LINEAR`], so a 1 GB flow costs
//! its path what an 8 MiB one does (test `tests/alone.rs`).

use crate::hops::Hop;
use crate::linksim::{completions, part_cfg};
use crate::DecomposeError;
use coflowkit_model::{
    BitsPerSec, CoflowSpec, CustomSpec, DepKind, Dependency, Dur, Fabric, HostId, LinkSpec,
    NodeKind, NodeSpec, Time, Workload,
};
use coflowkit_packet::PacketConfig;
use serde::{Deserialize, Serialize};

/// Packet counts measured one by one.
pub const EXACT: u64 = 64;

/// Sizes past this many bytes are not measured but extrapolated.
pub const LINEAR: u64 = 8 << 20;

/// Completion times alone on one path, by size.
#[derive(Debug, Clone)]
pub struct Alone {
    /// (bytes, ns), by bytes.
    grid: Vec<(u64, u64)>,
}

/// The sizes of the grid (bytes) for flows up to `max` bytes with
/// `mss`-byte packets: one byte, then whole numbers of packets.
pub fn grid(max: u64, mss: u64) -> Vec<u64> {
    let top = max.div_ceil(mss).max(1);
    let mut packets: Vec<u64> = (1..=EXACT.min(top)).collect();
    let mut x = EXACT as f64;
    while (*packets.last().expect("not empty")) < top {
        x *= 2f64.powf(0.25);
        packets.push((x.round() as u64).min(top));
    }
    packets.dedup();
    std::iter::once(1)
        .chain(packets.into_iter().map(|n| n * mss))
        .collect()
}

/// One path's measurement alone, before it runs: its hops, the largest
/// flow asked of it, and the packet engine's knobs for a part of the
/// fabric ([`crate::linksim::part_cfg`]).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AlonePath {
    /// Its hops.
    pub path: Vec<Hop>,
    /// The largest flow (bytes) whose time alone is asked on it.
    pub max_bytes: u64,
    /// ACKs cross no port.
    pub direct_acks: bool,
    /// Packets cross the last hop with no event (it is at least as fast as
    /// the hop before, so it never holds two of a lone flow's packets).
    pub direct_last_hop: bool,
}

impl AlonePath {
    /// The grid's sizes (bytes) with the run's knobs `cfg`.
    fn sizes(&self, cfg: &PacketConfig) -> Vec<u64> {
        grid(self.max_bytes.min(LINEAR), u64::from(cfg.mss()))
    }

    /// Runs it on the packet engine: the completion time (ns) of each size
    /// of its grid, smallest first, and the per-hop packets it took.
    pub fn run(&self, cfg: &PacketConfig) -> Result<(Vec<u64>, u64), DecomposeError> {
        let cfg = &part_cfg(cfg, self.direct_acks, self.direct_last_hop);
        let sizes = self.sizes(cfg);
        let fabric = chain(&self.path)?;
        let coflows = sizes
            .iter()
            .enumerate()
            .map(|(i, &b)| {
                let mut c =
                    CoflowSpec::new(i as u64, Time(0), vec![coflowkit_model::flow(0, 1, b)]);
                if i > 0 {
                    c.parents.push(Dependency {
                        parent: coflowkit_model::CoflowId(i as u64 - 1),
                        kind: DepKind::StartsAfter,
                    });
                }
                c
            })
            .collect();
        let workload = Workload {
            n_hosts: 2,
            coflows,
        }
        .validate(&fabric)
        .map_err(|e| DecomposeError::Packet(e.to_string()))?;
        let r = coflowkit_packet::simulate(&fabric, &workload, &[], &[], cfg, &mut |_| {})
            .map_err(|e| DecomposeError::Packet(e.to_string()))?;
        Ok(completions(&r))
    }

    /// Its times alone from what [`AlonePath::run`] gave (`times`), with
    /// the same knobs `cfg`; times of another grid are refused.
    pub fn alone(&self, cfg: &PacketConfig, times: Vec<u64>) -> Result<Alone, DecomposeError> {
        let sizes = self.sizes(cfg);
        if sizes.len() != times.len() {
            return Err(DecomposeError::Input(format!(
                "a path's times alone: {} given for its {} sizes",
                times.len(),
                sizes.len()
            )));
        }
        Ok(Alone {
            grid: sizes.into_iter().zip(times).collect(),
        })
    }
}

impl Alone {
    /// Measures `path` alone for flows up to `max_bytes`, with every port
    /// crossed as the knobs `cfg` say.
    pub fn measure(
        path: &[Hop],
        max_bytes: u64,
        cfg: &PacketConfig,
    ) -> Result<Alone, DecomposeError> {
        let p = AlonePath {
            path: path.to_vec(),
            max_bytes,
            direct_acks: false,
            direct_last_hop: false,
        };
        let (times, _) = p.run(cfg)?;
        p.alone(cfg, times)
    }

    /// The completion time (ns) of a flow of `bytes` alone on the path.
    pub fn fct(&self, bytes: u64) -> f64 {
        let x = bytes as f64;
        let g = &self.grid;
        let j = g.partition_point(|&(n, _)| (n as f64) < x);
        if j == 0 {
            return g[0].1 as f64;
        }
        if j == g.len() {
            // Past the grid: at the last step's slope.
            let (a, b) = (g[g.len().saturating_sub(2)], g[g.len() - 1]);
            let slope = if b.0 > a.0 {
                (b.1 as f64 - a.1 as f64) / (b.0 - a.0) as f64
            } else {
                0.0
            };
            return b.1 as f64 + slope * (x - b.0 as f64);
        }
        let (a, b) = (g[j - 1], g[j]);
        let t = (x - a.0 as f64) / (b.0 - a.0) as f64;
        a.1 as f64 + t * (b.1 as f64 - a.1 as f64)
    }
}

/// Two hosts joined by a chain of switches with `path`'s hops (at least
/// two), each duplex with its rate and delay.
pub fn chain(path: &[Hop]) -> Result<Fabric, DecomposeError> {
    if path.len() < 2 {
        return Err(DecomposeError::Packet(format!(
            "a path of {} hop(s): a host reaches another through at least one switch",
            path.len()
        )));
    }
    let n_sw = path.len() - 1;
    let mut nodes = vec![
        NodeSpec {
            name: "x".into(),
            kind: NodeKind::Host,
        },
        NodeSpec {
            name: "y".into(),
            kind: NodeKind::Host,
        },
    ];
    nodes.extend((0..n_sw).map(|i| NodeSpec {
        name: format!("w{i}"),
        kind: NodeKind::Switch,
    }));
    let name = |i: usize| match i {
        0 => "x".to_string(),
        i if i == path.len() => "y".to_string(),
        i => format!("w{}", i - 1),
    };
    let links = path
        .iter()
        .enumerate()
        .map(|(i, h)| LinkSpec {
            from: name(i),
            to: name(i + 1),
            capacity: BitsPerSec(h.rate as f64),
            duplex: true,
        })
        .collect();
    let fabric = Fabric::custom(&CustomSpec { nodes, links })
        .map_err(|e| DecomposeError::Packet(e.to_string()))?;
    // Link ids: x's uplink and downlink, y's, then the switch links in
    // spec order, each direction after the other.
    let mut delays = vec![None; fabric.n_links()];
    for (id, l) in fabric.links().iter().enumerate() {
        use coflowkit_model::LinkKind::*;
        let hop = match l.kind {
            Uplink(HostId(0)) | Downlink(HostId(0)) => 0,
            Uplink(_) | Downlink(_) => path.len() - 1,
            Switch { from, to } => from.0.min(to.0) as usize + 1,
            Cpu(_) => continue,
        };
        delays[id] = Some(Dur(path[hop].delay));
    }
    fabric
        .with_link_delays(delays)
        .map_err(|e| DecomposeError::Packet(e.to_string()))
}
