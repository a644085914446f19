//! Fabrics: hosts and switches joined by directed, capacitated links.
//!
//! A flow is limited by every link on its path. Every fabric gives host `h`
//! a network interface (NIC) of two links: its uplink `LinkId(2h)` (what it
//! sends, the ingress port of the big switch) and its downlink
//! `LinkId(2h + 1)` (what it receives, the egress port). Links between
//! switches come after the `2 · n_hosts` NIC links, and per-host CPU links,
//! if the fabric models CPUs, come last. So [`Fabric::uplink`] and
//! [`Fabric::downlink`] are O(1) on every topology, and code written for the
//! big switch keeps working on multi-hop fabrics.
//!
//! The shapes (see [`crate::topology`] for the builders, their numbering and
//! their sources): the big switch (the non-blocking fabric of the coflow
//! literature, path `[uplink(s), downlink(d)]`, also when `s == d`); Baraat's
//! three-level tree; a leaf-spine; Al-Fares's k-ary fat-tree; and a custom
//! graph from a config. Paths of the structured shapes are computed by
//! arithmetic (no tables: a 36,000-host tree builds in milliseconds), and
//! the custom graph keeps one next-hop table per destination switch.
//!
//! ECMP: where several equal-cost paths join two hosts, a flow takes the one
//! picked by [`Fabric::path_choice`], a fixed hash of the fabric's ECMP seed,
//! the flow's [`FlowKey`] (coflow id, index in the coflow) and its endpoints
//! (see [`ecmp_hash`]). The same flow on the same fabric always takes the
//! same path, on every platform and in every run.
//!
//! Correctness properties (checked where each fabric is built, in
//! [`crate::topology`] and in [`Fabric::with_capacities`] /
//! [`Fabric::with_cpus`]): every link's capacity is finite and > 0; every
//! host has exactly one uplink and one downlink, to and from a switch; every
//! host can reach every host; `is_big_switch()` is true only for the big
//! switch, whose paths are exactly `[uplink(s), downlink(d)]`.

mod ids;
pub(crate) mod shape;

use crate::units::{BitsPerSec, Dur, HostId};
pub use ids::{FlowKey, Link, LinkId, LinkKind, Node, Switch, SwitchId, Tier, TopologyKind};
use shape::Shape;
use thiserror::Error;

/// Errors in a fabric description; each names the element at fault.
#[derive(Debug, Error, PartialEq)]
pub enum FabricError {
    /// A fabric needs at least one host.
    #[error("a fabric needs at least one host")]
    NoHosts,
    /// Link delays given for another number of links.
    #[error("{given} link delays for a fabric of {links} links")]
    LinkDelays {
        /// Delays given.
        given: usize,
        /// Links in the fabric.
        links: usize,
    },
    /// A capacity is zero, negative or not finite.
    #[error("{link}: capacity {value} bit/s is not a positive finite number")]
    BadCapacity {
        /// Which link (its [`Fabric::link_name`], or the config's words).
        link: String,
        /// The value given.
        value: f64,
    },
    /// A per-host capacity list has the wrong length.
    #[error("{what}: {got} capacities given for {n_hosts} hosts")]
    WrongCount {
        /// Which list.
        what: &'static str,
        /// How many were given.
        got: usize,
        /// How many hosts there are.
        n_hosts: usize,
    },
    /// A builder's count is zero.
    #[error("{topology}: {field} must be at least 1")]
    ZeroCount {
        /// The topology ("tree", ...).
        topology: &'static str,
        /// The parameter.
        field: &'static str,
    },
    /// A builder's ratio (an oversubscription) is zero, negative or not finite.
    #[error("{topology}: {field} {value} is not a positive finite number")]
    BadRatio {
        /// The topology.
        topology: &'static str,
        /// The parameter.
        field: &'static str,
        /// The value given.
        value: f64,
    },
    /// A builder's rate is zero, negative or not finite.
    #[error("{topology}: {field} {value} bit/s is not a positive finite number")]
    BadRate {
        /// The topology.
        topology: &'static str,
        /// The parameter.
        field: &'static str,
        /// The value given.
        value: f64,
    },
    /// A fat-tree's k is odd or below 2.
    #[error("fat-tree: k must be even and at least 2, got {0}")]
    BadK(u32),
    /// The fabric would have more links than a [`LinkId`] can number.
    #[error("{topology}: {n_links} links (with room for a CPU link per host) are more than the {max} a fabric can number", max = u32::MAX)]
    TooLarge {
        /// The topology.
        topology: &'static str,
        /// How many links it would have.
        n_links: u64,
    },
    /// A custom node without a name.
    #[error("node {index}: has an empty name")]
    EmptyName {
        /// The node's index in the config's node list (from 0).
        index: usize,
    },
    /// Two custom nodes share a name.
    #[error("node {index}: duplicate name {name}")]
    DuplicateNode {
        /// The second node's index in the config's node list (from 0).
        index: usize,
        /// The name.
        name: String,
    },
    /// A custom link names a node that is not in the node list.
    #[error("link {index} ({from} -> {to}): unknown node {name}")]
    UnknownNode {
        /// The link's index in the config's link list (from 0).
        index: usize,
        /// Its sending end as written.
        from: String,
        /// Its receiving end as written.
        to: String,
        /// The name that is not a node.
        name: String,
    },
    /// A custom link from a node to itself.
    #[error("link {index} ({from} -> {to}): joins a node to itself")]
    SelfLink {
        /// The link's index in the config's link list (from 0).
        index: usize,
        /// Its sending end.
        from: String,
        /// Its receiving end.
        to: String,
    },
    /// A custom link between two hosts (a host links only to a switch).
    #[error("link {index} ({from} -> {to}): joins two hosts; a host links only to its switch")]
    HostToHost {
        /// The link's index in the config's link list (from 0).
        index: usize,
        /// Its sending end.
        from: String,
        /// Its receiving end.
        to: String,
    },
    /// A custom host with no link at all.
    #[error("host {host}: has no link")]
    HostWithoutLink {
        /// The host's name.
        host: String,
    },
    /// A custom host without an uplink or a downlink.
    #[error("host {host}: has no {side} (a link {direction} a switch)")]
    HostMissingLink {
        /// The host's name.
        host: String,
        /// "uplink" or "downlink".
        side: &'static str,
        /// "to" or "from".
        direction: &'static str,
    },
    /// A custom host with more than one uplink or downlink.
    #[error(
        "host {host}: has more than one {side} (links {first} and {second}); a host has one NIC"
    )]
    HostManyLinks {
        /// The host's name.
        host: String,
        /// "uplink" or "downlink".
        side: &'static str,
        /// The first such link's index in the config.
        first: usize,
        /// The second one's.
        second: usize,
    },
    /// Two custom hosts with no path between them.
    #[error("host {src} cannot reach host {dst}: no path from switch {from} to switch {to}")]
    Unreachable {
        /// The sending host's name.
        src: String,
        /// The receiving host's name.
        dst: String,
        /// The switch the sender's uplink reaches.
        from: String,
        /// The switch the receiver's downlink comes from.
        to: String,
    },
}

/// The ECMP hash: splitmix64's finalizer chained over the seed, the flow's
/// coflow id, its index, and `(src << 32) | dst`, so that any change to one
/// of them moves the flow to an unrelated path. Fixed and documented (never
/// std's randomly keyed hasher): results are the same in every run.
///
/// ```text
/// mix(x) = { x += 0x9E3779B97F4A7C15;
///            x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9;
///            x = (x ^ (x >> 27)) * 0x94D049BB133111EB;
///            x ^ (x >> 31) }                       (wrapping u64 arithmetic)
/// h = mix(mix(mix(mix(seed) ^ coflow) ^ index) ^ ((src << 32) | dst))
/// ```
pub fn ecmp_hash(seed: u64, key: FlowKey, src: HostId, dst: HostId) -> u64 {
    let mut h = mix(seed);
    h = mix(h ^ key.coflow);
    h = mix(h ^ u64::from(key.index));
    mix(h ^ ((u64::from(src.0) << 32) | u64::from(dst.0)))
}

/// splitmix64's output function (Steele, Lea and Flood 2014): the one
/// fixed mixing step behind every seeded, order-free draw in coflowkit (ECMP
/// here; lost control messages in `dcas`).
#[inline]
pub fn mix(mut x: u64) -> u64 {
    x = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
    x = (x ^ (x >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    x ^ (x >> 31)
}

/// Hosts, switches and the links between them.
#[derive(Debug, Clone, PartialEq)]
pub struct Fabric {
    n_hosts: u32,
    links: Vec<Link>,
    /// The CPU resource of each host, if the fabric has them.
    cpus: Option<LinkId>,
    switches: Vec<Switch>,
    shape: Shape,
    ecmp_seed: u64,
    /// Each link's own one-way propagation delay, where it has one (empty:
    /// none has; the packet engine then takes its knobs' delay by link kind).
    delays: Vec<Option<Dur>>,
}

impl Fabric {
    /// A fabric of the given parts; the caller has numbered the links as the
    /// module doc says and checked the shape (see [`crate::topology`]).
    /// Checks every capacity, naming the link.
    pub(crate) fn from_parts(
        n_hosts: u32,
        links: Vec<Link>,
        switches: Vec<Switch>,
        shape: Shape,
    ) -> Result<Fabric, FabricError> {
        if n_hosts == 0 {
            return Err(FabricError::NoHosts);
        }
        let f = Fabric {
            n_hosts,
            links,
            cpus: None,
            switches,
            shape,
            ecmp_seed: 0,
            delays: vec![],
        };
        debug_assert!(f.links.len() >= 2 * n_hosts as usize);
        if let Some(i) = f
            .links
            .iter()
            .position(|l| !(l.capacity.0.is_finite() && l.capacity.0 > 0.0))
        {
            return Err(FabricError::BadCapacity {
                link: f.link_name(LinkId(i as u32)),
                value: f.links[i].capacity.0,
            });
        }
        Ok(f)
    }

    /// The non-blocking big switch with `n_hosts` ports, each with ingress
    /// and egress capacity `capacity`.
    pub fn big_switch(n_hosts: u32, capacity: BitsPerSec) -> Result<Fabric, FabricError> {
        let n = n_hosts as usize;
        Fabric::with_capacities(&vec![capacity; n], &vec![capacity; n])
    }

    /// The big switch with per-host ingress (`up`) and egress (`down`) capacities.
    pub fn with_capacities(up: &[BitsPerSec], down: &[BitsPerSec]) -> Result<Fabric, FabricError> {
        if up.is_empty() {
            return Err(FabricError::NoHosts);
        }
        if down.len() != up.len() {
            return Err(FabricError::WrongCount {
                what: "egress capacities",
                got: down.len(),
                n_hosts: up.len(),
            });
        }
        if up.len() > (u32::MAX / 2) as usize {
            return Err(FabricError::TooLarge {
                topology: "bigswitch",
                n_links: 2 * up.len() as u64,
            });
        }
        let mut links = Vec::with_capacity(2 * up.len());
        for (h, (&u, &d)) in up.iter().zip(down).enumerate() {
            let h = HostId(h as u32);
            links.push(Link {
                kind: LinkKind::Uplink(h),
                capacity: u,
            });
            links.push(Link {
                kind: LinkKind::Downlink(h),
                capacity: d,
            });
        }
        let switches = vec![Switch {
            name: "big switch".into(),
            tier: Tier::BigSwitch,
        }];
        Fabric::from_parts(up.len() as u32, links, switches, Shape::BigSwitch)
    }

    /// The fabric with a CPU resource of `capacity` on every host, for
    /// compute stages (TAFE III). Work units count like bytes: a stage of
    /// `w` units alone on a CPU of capacity `c` bit/s takes `8 w / c` s.
    pub fn with_cpus(mut self, capacity: BitsPerSec) -> Result<Fabric, FabricError> {
        if !(capacity.0.is_finite() && capacity.0 > 0.0) {
            return Err(FabricError::BadCapacity {
                link: "host CPU".into(),
                value: capacity.0,
            });
        }
        if self.cpus.is_none() {
            if self.links.len() as u64 + u64::from(self.n_hosts) > u64::from(u32::MAX) {
                return Err(FabricError::TooLarge {
                    topology: self.kind().name(),
                    n_links: self.links.len() as u64 + u64::from(self.n_hosts),
                });
            }
            self.cpus = Some(LinkId(self.links.len() as u32));
            for h in 0..self.n_hosts {
                self.links.push(Link {
                    kind: LinkKind::Cpu(HostId(h)),
                    capacity,
                });
            }
        }
        Ok(self)
    }

    /// The fabric with each link's own one-way propagation delay (by link
    /// id; `None` keeps the packet engine's delay for its kind). A
    /// decomposed run's link topologies give each link the delay of the
    /// path it stands for.
    pub fn with_link_delays(mut self, delays: Vec<Option<Dur>>) -> Result<Fabric, FabricError> {
        if delays.len() != self.links.len() {
            return Err(FabricError::LinkDelays {
                given: delays.len(),
                links: self.links.len(),
            });
        }
        self.delays = delays;
        Ok(self)
    }

    /// Link `id`'s own one-way propagation delay, if it has one
    /// ([`Fabric::with_link_delays`]).
    #[inline]
    pub fn link_delay(&self, id: LinkId) -> Option<Dur> {
        self.delays.get(id.0 as usize).copied().flatten()
    }

    /// The fabric with ECMP seed `seed` (default 0): another seed puts flows
    /// on other equal-cost paths (see [`ecmp_hash`]).
    pub fn with_ecmp_seed(mut self, seed: u64) -> Fabric {
        self.ecmp_seed = seed;
        self
    }

    /// Sets the ECMP seed.
    pub fn set_ecmp_seed(&mut self, seed: u64) {
        self.ecmp_seed = seed;
    }

    /// The ECMP seed.
    pub fn ecmp_seed(&self) -> u64 {
        self.ecmp_seed
    }

    /// The CPU resource of host `h`, if the fabric models CPUs.
    pub fn cpu(&self, h: HostId) -> Option<LinkId> {
        self.cpus.map(|first| LinkId(first.0 + h.0))
    }

    /// Whether every path is `[uplink(src), downlink(dst)]` (the big switch),
    /// which lets per-port algorithms skip path lists.
    #[inline]
    pub fn is_big_switch(&self) -> bool {
        matches!(self.shape, Shape::BigSwitch)
    }

    /// Which builder made the fabric.
    pub fn kind(&self) -> TopologyKind {
        match self.shape {
            Shape::BigSwitch => TopologyKind::BigSwitch,
            Shape::Tree(_) => TopologyKind::Tree,
            Shape::LeafSpine(_) => TopologyKind::LeafSpine,
            Shape::FatTree(_) => TopologyKind::FatTree,
            Shape::Custom(_) => TopologyKind::Custom,
        }
    }

    /// Number of hosts.
    pub fn n_hosts(&self) -> u32 {
        self.n_hosts
    }

    /// All links, indexed by [`LinkId`].
    pub fn links(&self) -> &[Link] {
        &self.links
    }

    /// Number of links.
    pub fn n_links(&self) -> usize {
        self.links.len()
    }

    /// The link with this id.
    pub fn link(&self, id: LinkId) -> &Link {
        &self.links[id.0 as usize]
    }

    /// All switches, indexed by [`SwitchId`].
    pub fn switches(&self) -> &[Switch] {
        &self.switches
    }

    /// Number of switches.
    pub fn n_switches(&self) -> usize {
        self.switches.len()
    }

    /// The switch with this id.
    pub fn switch(&self, id: SwitchId) -> &Switch {
        &self.switches[id.0 as usize]
    }

    /// The name a custom config gave host `h`, if it has one.
    pub fn host_name(&self, h: HostId) -> Option<&str> {
        match &self.shape {
            Shape::Custom(c) => Some(c.host_name(h)),
            _ => None,
        }
    }

    /// The switch host `h`'s uplink goes to.
    pub fn uplink_switch(&self, h: HostId) -> SwitchId {
        match &self.shape {
            Shape::BigSwitch => SwitchId(0),
            Shape::Tree(t) => t.tor_of(h),
            Shape::LeafSpine(t) => t.leaf_of(h),
            Shape::FatTree(t) => t.edge_of(h),
            Shape::Custom(c) => c.uplink_switch(h),
        }
    }

    /// The switch host `h`'s downlink comes from.
    pub fn downlink_switch(&self, h: HostId) -> SwitchId {
        match &self.shape {
            Shape::Custom(c) => c.downlink_switch(h),
            _ => self.uplink_switch(h),
        }
    }

    /// The two ends of a network link (`None` for a CPU).
    pub fn link_ends(&self, id: LinkId) -> Option<(Node, Node)> {
        match self.link(id).kind {
            LinkKind::Uplink(h) => Some((Node::Host(h), Node::Switch(self.uplink_switch(h)))),
            LinkKind::Downlink(h) => Some((Node::Switch(self.downlink_switch(h)), Node::Host(h))),
            LinkKind::Cpu(_) => None,
            LinkKind::Switch { from, to } => Some((Node::Switch(from), Node::Switch(to))),
        }
    }

    /// A link's name for messages and reports: "host 3 uplink", "host 3
    /// downlink", "host 3 CPU", "tor 2 -> agg 0"; a custom fabric's NIC
    /// links add the config's names: "host 3 uplink (web1 -> tor0)".
    pub fn link_name(&self, id: LinkId) -> String {
        match self.link(id).kind {
            LinkKind::Uplink(h) => match self.host_name(h) {
                Some(n) => format!(
                    "host {} uplink ({n} -> {})",
                    h.0,
                    self.switch(self.uplink_switch(h)).name
                ),
                None => format!("host {} uplink", h.0),
            },
            LinkKind::Downlink(h) => match self.host_name(h) {
                Some(n) => format!(
                    "host {} downlink ({} -> {n})",
                    h.0,
                    self.switch(self.downlink_switch(h)).name
                ),
                None => format!("host {} downlink", h.0),
            },
            LinkKind::Cpu(h) => format!("host {} CPU", h.0),
            LinkKind::Switch { from, to } => {
                format!("{} -> {}", self.switch(from).name, self.switch(to).name)
            }
        }
    }

    /// The sending side of host `h`.
    #[inline]
    pub fn uplink(&self, h: HostId) -> LinkId {
        LinkId(2 * h.0)
    }

    /// The receiving side of host `h`.
    #[inline]
    pub fn downlink(&self, h: HostId) -> LinkId {
        LinkId(2 * h.0 + 1)
    }

    /// How many equal-cost paths join `src` to `dst` (1 without path
    /// diversity, and always 1 on the big switch and the tree).
    #[inline]
    pub fn n_paths(&self, src: HostId, dst: HostId) -> u32 {
        match &self.shape {
            Shape::BigSwitch | Shape::Tree(_) => 1,
            Shape::LeafSpine(t) => t.n_paths(src, dst),
            Shape::FatTree(t) => t.n_paths(src, dst),
            Shape::Custom(c) => c.n_paths(src, dst),
        }
    }

    /// The most equal-cost paths between any two hosts (for reports).
    pub fn max_n_paths(&self) -> u32 {
        match &self.shape {
            Shape::BigSwitch | Shape::Tree(_) => 1,
            Shape::LeafSpine(t) => t.max_n_paths(self.n_hosts),
            Shape::FatTree(t) => t.max_n_paths(),
            Shape::Custom(c) => c.max_n_paths(),
        }
    }

    /// The path a flow takes among the [`Fabric::n_paths`] from `src` to
    /// `dst`: `(ecmp_hash(seed, key, src, dst) · n) >> 64` (the high word of
    /// the 128-bit product, so every choice is equally likely), or 0 when
    /// there is one path (no hash is computed then).
    #[inline]
    pub fn path_choice(&self, src: HostId, dst: HostId, key: FlowKey) -> u32 {
        let n = self.n_paths(src, dst);
        if n <= 1 {
            return 0;
        }
        let h = ecmp_hash(self.ecmp_seed, key, src, dst);
        ((u128::from(h) * u128::from(n)) >> 64) as u32
    }

    /// Appends path number `choice` from `src` to `dst` to `out`: host
    /// `src`'s uplink, the links between switches, host `dst`'s downlink.
    /// `choice` is taken modulo [`Fabric::n_paths`]. Both hosts must exist
    /// (validated workloads guarantee it).
    #[inline]
    pub fn path_into(&self, src: HostId, dst: HostId, choice: u32, out: &mut Vec<LinkId>) {
        out.push(self.uplink(src));
        match &self.shape {
            Shape::BigSwitch => {}
            Shape::Tree(t) => t.inner_path(src, dst, out),
            Shape::LeafSpine(t) => t.inner_path(src, dst, choice, out),
            Shape::FatTree(t) => t.inner_path(src, dst, choice, out),
            Shape::Custom(c) => c.inner_path(src, dst, choice, out),
        }
        out.push(self.downlink(dst));
    }

    /// Path number `choice` from `src` to `dst`, as a new vector.
    pub fn path(&self, src: HostId, dst: HostId, choice: u32) -> Vec<LinkId> {
        let mut out = Vec::with_capacity(6);
        self.path_into(src, dst, choice, &mut out);
        out
    }

    /// The sum of all hosts' ingress capacities (the network's throughput,
    /// as in the load definition of D-CAS V-A).
    pub fn total_ingress(&self) -> BitsPerSec {
        BitsPerSec(
            self.links
                .iter()
                .filter(|l| matches!(l.kind, LinkKind::Uplink(_)))
                .map(|l| l.capacity.0)
                .sum(),
        )
    }

    /// The one-link path of a compute stage on host `h`'s CPU, if it has one.
    pub fn cpu_path_into(&self, h: HostId, out: &mut Vec<LinkId>) -> bool {
        match self.cpu(h) {
            Some(l) => {
                out.push(l);
                true
            }
            None => false,
        }
    }

    /// The shape (for the topology module's reports).
    pub(crate) fn shape(&self) -> &Shape {
        &self.shape
    }
}

#[cfg(test)]
mod tests;
