//! Topology builders: the big switch, Baraat's tree, a leaf-spine,
//! Al-Fares's fat-tree and custom graphs, with their link numbering and
//! routing.
//!
//! Each builder takes a spec whose fields are the paper's parameters (with
//! the paper's values as defaults), checks it, and returns a [`Fabric`].
//! Every fabric numbers its links the same way (see [`crate::fabric`]):
//! host `h`'s uplink is `LinkId(2h)`, its downlink `LinkId(2h + 1)`, links
//! between switches follow from `2 · n_hosts` in the order each builder
//! documents, then CPU links if any. Paths of the structured shapes are
//! computed from host numbers by arithmetic; only the custom graph keeps
//! tables (one per destination switch).
//!
//! | builder | source | hosts | paths between hosts |
//! |---|---|---|---|
//! | [`Fabric::big_switch`] | the coflow papers' non-blocking fabric | given | 1 |
//! | [`Fabric::tree`] | Baraat (SIGCOMM 2014) 5.2 | pods · racks · hosts per rack | 1 (no path diversity) |
//! | [`Fabric::leaf_spine`] | two-tier Clos | leaves · hosts per leaf | 1 in a leaf, else one per spine |
//! | [`Fabric::fat_tree`] | Al-Fares, Loukissas, Vahdat (SIGCOMM 2008) 3 | k³/4 | 1 / k/2 / (k/2)² |
//! | [`Fabric::custom`] | a config | its host nodes | every shortest path (hop count) |
//!
//! Correctness properties: each builder rejects zero counts, bad rates and
//! ratios, and fabrics with more links than a `LinkId` numbers (checked in
//! the builders below); every capacity is positive and finite (checked in
//! `Fabric::from_parts`); a custom graph's nodes have unique, non-empty
//! names, its links join two different known nodes and never two hosts,
//! every host has exactly one uplink and one downlink, and every host
//! reaches every host (checked in [`Fabric::custom`]). Every path is a walk
//! from `src`'s uplink to `dst`'s downlink along connected links (tested
//! in `topology/tests.rs` for every shape).

use crate::fabric::shape::{Custom, FatTreeShape, LeafSpineShape, Shape, TreeShape};
use crate::fabric::{
    Fabric, FabricError, Link, LinkId, LinkKind, Switch, SwitchId, Tier, TopologyKind,
};
use crate::units::{BitsPerSec, HostId};
use std::collections::HashMap;

/// Checks that a count is at least 1.
fn count(topology: &'static str, field: &'static str, n: u32) -> Result<u64, FabricError> {
    if n == 0 {
        Err(FabricError::ZeroCount { topology, field })
    } else {
        Ok(u64::from(n))
    }
}

/// Checks that a rate is positive and finite.
fn rate(topology: &'static str, field: &'static str, r: BitsPerSec) -> Result<(), FabricError> {
    if r.0.is_finite() && r.0 > 0.0 {
        Ok(())
    } else {
        Err(FabricError::BadRate {
            topology,
            field,
            value: r.0,
        })
    }
}

/// Checks that a ratio is positive and finite.
fn ratio(topology: &'static str, field: &'static str, x: f64) -> Result<(), FabricError> {
    if x.is_finite() && x > 0.0 {
        Ok(())
    } else {
        Err(FabricError::BadRatio {
            topology,
            field,
            value: x,
        })
    }
}

/// Checks that `n_links` links can be numbered by a `LinkId` (leaving room
/// for one CPU link per host).
fn fits(topology: &'static str, n_hosts: u64, n_links: u64) -> Result<(), FabricError> {
    if n_links + n_hosts > u64::from(u32::MAX) {
        Err(FabricError::TooLarge { topology, n_links })
    } else {
        Ok(())
    }
}

/// The `2 · n_hosts` NIC links, uplink then downlink per host.
fn nic_links(n_hosts: u32, rate: BitsPerSec, extra: usize) -> Vec<Link> {
    let mut links = Vec::with_capacity(2 * n_hosts as usize + extra);
    for h in 0..n_hosts {
        links.push(Link {
            kind: LinkKind::Uplink(HostId(h)),
            capacity: rate,
        });
        links.push(Link {
            kind: LinkKind::Downlink(HostId(h)),
            capacity: rate,
        });
    }
    links
}

/// Appends a pair of opposite links `a -> b`, `b -> a` of one capacity.
fn duplex(links: &mut Vec<Link>, a: u32, b: u32, capacity: BitsPerSec) {
    links.push(Link {
        kind: LinkKind::Switch {
            from: SwitchId(a),
            to: SwitchId(b),
        },
        capacity,
    });
    links.push(Link {
        kind: LinkKind::Switch {
            from: SwitchId(b),
            to: SwitchId(a),
        },
        capacity,
    });
}

/// `n` switches of one tier named "<tier> 0", "<tier> 1", ...
fn named(switches: &mut Vec<Switch>, tier: Tier, n: u64) {
    switches.extend((0..n).map(|i| Switch {
        name: format!("{} {i}", tier.name()),
        tier,
    }));
}

// ---------------------------------------------------------------- big switch

/// The big switch: `hosts` ports of `host_rate` each way.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct BigSwitchSpec {
    /// Ports (hosts).
    pub hosts: u32,
    /// Each port's capacity each way (default 1 Gbit/s).
    pub host_rate: BitsPerSec,
}

// ---------------------------------------------------------------- tree

/// Baraat's three-level tree (Baraat, SIGCOMM 2014, 5.2): "racks of 40
/// machines with 1Gbps links are connected to a Top-of-Rack (ToR) switch and
/// then to an aggregation switch", 30 pods of 30 racks (36,000 servers), "no
/// path diversity", "over-subscription of 2:1 at the ToR switch". The
/// defaults are those numbers; the pods' aggregation switches hang under one
/// core switch (the paper does not say how pods connect; one core keeps the
/// tree a tree).
///
/// Hosts are numbered rack-major: host `h` is in rack `h / hosts_per_rack`,
/// rack `r` in pod `r / racks_per_pod` (workload generators rely on this).
///
/// Capacities: a ToR's uplink (and its downlink from the aggregation
/// switch) carries `hosts_per_rack · host_rate / tor_oversub`; an
/// aggregation switch's link to the core (each way) carries
/// `racks_per_pod · tor_link / agg_oversub`. With one pod the aggregation
/// switch is the root and there is no core.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TreeSpec {
    /// Pods, each an aggregation switch over its racks (default 30).
    pub pods: u32,
    /// Racks (ToR switches) per pod (default 30).
    pub racks_per_pod: u32,
    /// Hosts per rack (default 40).
    pub hosts_per_rack: u32,
    /// Each host's NIC capacity each way (default 1 Gbit/s).
    pub host_rate: BitsPerSec,
    /// Hosts' capacity over the ToR's uplink capacity (default 2).
    pub tor_oversub: f64,
    /// ToR uplinks' capacity over the aggregation switch's uplink (default 1).
    pub agg_oversub: f64,
}

impl Default for TreeSpec {
    fn default() -> TreeSpec {
        TreeSpec {
            pods: 30,
            racks_per_pod: 30,
            hosts_per_rack: 40,
            host_rate: BitsPerSec::GBPS,
            tor_oversub: 2.0,
            agg_oversub: 1.0,
        }
    }
}

// ---------------------------------------------------------------- leaf-spine

/// A two-tier leaf-spine (folded Clos): `leaves` leaf switches with
/// `hosts_per_leaf` hosts each, every leaf joined to every one of `spines`
/// spine switches by a link of `spine_rate` each way. Flows between leaves
/// spread over the spines by ECMP (one equal-cost path per spine).
///
/// Hosts are numbered leaf-major: host `h` is under leaf `h / hosts_per_leaf`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LeafSpineSpec {
    /// Leaf switches (default 4).
    pub leaves: u32,
    /// Spine switches (default 2).
    pub spines: u32,
    /// Hosts per leaf (default 8).
    pub hosts_per_leaf: u32,
    /// Each host's NIC capacity each way (default 1 Gbit/s).
    pub host_rate: BitsPerSec,
    /// Each leaf-spine link's capacity each way; default (`None`)
    /// `hosts_per_leaf · host_rate / spines`, an oversubscription of 1.
    pub spine_rate: Option<BitsPerSec>,
}

impl Default for LeafSpineSpec {
    fn default() -> LeafSpineSpec {
        LeafSpineSpec {
            leaves: 4,
            spines: 2,
            hosts_per_leaf: 8,
            host_rate: BitsPerSec::GBPS,
            spine_rate: None,
        }
    }
}

// ---------------------------------------------------------------- fat-tree

/// The k-ary fat-tree of Al-Fares, Loukissas and Vahdat ("A Scalable,
/// Commodity Data Center Network Architecture", SIGCOMM 2008, section 3.3):
/// k pods, each with k/2 edge and k/2 aggregation switches; each edge
/// switch has k/2 hosts and a link to every aggregation switch of its pod;
/// (k/2)² core switches, where core `i·(k/2) + j` links to aggregation switch
/// `i` of every pod. k³/4 hosts; every link has `link_rate`, so the fabric
/// has full bisection bandwidth. ECMP spreads flows over the k/2 paths
/// between edge switches of one pod and the (k/2)² paths between pods.
///
/// Numbering: host `h` is under edge switch `h / (k/2)` (global index), edge
/// and aggregation switch `e` are in pod `e / (k/2)`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct FatTreeSpec {
    /// The switches' port count: even, at least 2 (default 4).
    pub k: u32,
    /// Every link's capacity each way (default 1 Gbit/s).
    pub link_rate: BitsPerSec,
}

impl Default for FatTreeSpec {
    fn default() -> FatTreeSpec {
        FatTreeSpec {
            k: 4,
            link_rate: BitsPerSec::GBPS,
        }
    }
}

// ---------------------------------------------------------------- custom

/// Whether a custom node is a host or a switch.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum NodeKind {
    /// A host: it has exactly one uplink and one downlink, to and from a switch.
    Host,
    /// A switch.
    Switch,
}

/// A node of a custom graph.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NodeSpec {
    /// Its name, unique among the nodes.
    pub name: String,
    /// Host or switch.
    pub kind: NodeKind,
}

/// A link of a custom graph.
#[derive(Debug, Clone, PartialEq)]
pub struct LinkSpec {
    /// The sending node's name.
    pub from: String,
    /// The receiving node's name.
    pub to: String,
    /// The capacity (each way when `duplex`).
    pub capacity: BitsPerSec,
    /// Whether the entry is a cable: a link each way, `from -> to` first.
    pub duplex: bool,
}

/// A custom graph: hosts are numbered in the order of their nodes.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct CustomSpec {
    /// Hosts and switches.
    pub nodes: Vec<NodeSpec>,
    /// Directed (or duplex) links between them.
    pub links: Vec<LinkSpec>,
}

const NONE: u32 = u32::MAX;

// ---------------------------------------------------------------- topology

/// Any topology's spec, as a config describes it.
#[derive(Debug, Clone, PartialEq)]
pub enum Topology {
    /// The big switch.
    BigSwitch(BigSwitchSpec),
    /// Baraat's tree.
    Tree(TreeSpec),
    /// A leaf-spine.
    LeafSpine(LeafSpineSpec),
    /// A k-ary fat-tree.
    FatTree(FatTreeSpec),
    /// A custom graph.
    Custom(CustomSpec),
}

impl Topology {
    /// Checks the spec and builds the fabric.
    pub fn build(&self) -> Result<Fabric, FabricError> {
        match self {
            Topology::BigSwitch(s) => {
                rate("bigswitch", "host_rate", s.host_rate)?;
                Fabric::big_switch(s.hosts, s.host_rate)
            }
            Topology::Tree(s) => Fabric::tree(s),
            Topology::LeafSpine(s) => Fabric::leaf_spine(s),
            Topology::FatTree(s) => Fabric::fat_tree(s),
            Topology::Custom(s) => Fabric::custom(s),
        }
    }

    /// Which kind of topology this is.
    pub fn kind(&self) -> TopologyKind {
        match self {
            Topology::BigSwitch(_) => TopologyKind::BigSwitch,
            Topology::Tree(_) => TopologyKind::Tree,
            Topology::LeafSpine(_) => TopologyKind::LeafSpine,
            Topology::FatTree(_) => TopologyKind::FatTree,
            Topology::Custom(_) => TopologyKind::Custom,
        }
    }
}

impl Fabric {
    /// Baraat's three-level tree; see [`TreeSpec`] for the shape, defaults
    /// and host numbering.
    ///
    /// Switches: ToR `r` (global rack index) is `SwitchId(r)`, named "tor r";
    /// then aggregation switch `p` ("agg p"), then, with more than one pod,
    /// "core". Links after the NIC links: for each rack `r`, "tor r -> agg
    /// p" then "agg p -> tor r"; then for each pod `p`, "agg p -> core" then
    /// "core -> agg p". The path from `s` to `d` goes up only as far as
    /// needed: `[up(s), down(d)]` in a rack; `up(s), tor->agg, agg->tor,
    /// down(d)` in a pod; else through the core.
    pub fn tree(spec: &TreeSpec) -> Result<Fabric, FabricError> {
        const T: &str = "tree";
        let pods = count(T, "pods", spec.pods)?;
        let rpp = count(T, "racks_per_pod", spec.racks_per_pod)?;
        let hpr = count(T, "hosts_per_rack", spec.hosts_per_rack)?;
        rate(T, "host_rate", spec.host_rate)?;
        ratio(T, "tor_oversub", spec.tor_oversub)?;
        ratio(T, "agg_oversub", spec.agg_oversub)?;
        let racks = pods * rpp;
        let n = racks * hpr;
        let n_core_links = if pods > 1 { 2 * pods } else { 0 };
        let n_links = 2 * n + 2 * racks + n_core_links;
        fits(T, n, n_links)?;
        let tor_cap = BitsPerSec(hpr as f64 * spec.host_rate.0 / spec.tor_oversub);
        let agg_cap = BitsPerSec(rpp as f64 * tor_cap.0 / spec.agg_oversub);
        let n_hosts = n as u32;
        let mut links = nic_links(n_hosts, spec.host_rate, n_links as usize - 2 * n as usize);
        let first_agg = racks as u32;
        for r in 0..racks as u32 {
            duplex(&mut links, r, first_agg + r / rpp as u32, tor_cap);
        }
        let core = first_agg + pods as u32;
        if pods > 1 {
            for p in 0..pods as u32 {
                duplex(&mut links, first_agg + p, core, agg_cap);
            }
        }
        let mut switches = Vec::with_capacity((racks + pods + 1) as usize);
        named(&mut switches, Tier::Tor, racks);
        named(&mut switches, Tier::Agg, pods);
        if pods > 1 {
            switches.push(Switch {
                name: "core".into(),
                tier: Tier::Core,
            });
        }
        let tor_base = 2 * n_hosts;
        let shape = TreeShape {
            hosts_per_rack: hpr as u32,
            racks_per_pod: rpp as u32,
            pods: pods as u32,
            tor_base,
            agg_base: tor_base + 2 * racks as u32,
        };
        Fabric::from_parts(n_hosts, links, switches, Shape::Tree(shape))
    }

    /// A leaf-spine; see [`LeafSpineSpec`] for the shape and defaults.
    ///
    /// Switches: leaf `i` is `SwitchId(i)` ("leaf i"), then spine `j`
    /// ("spine j"). Links after the NIC links: for each leaf `i` and spine
    /// `j` (pair `i · spines + j`), "leaf i -> spine j" then "spine j ->
    /// leaf i". Path `c` between leaves goes through spine `c`.
    pub fn leaf_spine(spec: &LeafSpineSpec) -> Result<Fabric, FabricError> {
        const T: &str = "leaf-spine";
        let leaves = count(T, "leaves", spec.leaves)?;
        let spines = count(T, "spines", spec.spines)?;
        let hpl = count(T, "hosts_per_leaf", spec.hosts_per_leaf)?;
        rate(T, "host_rate", spec.host_rate)?;
        let spine_rate = match spec.spine_rate {
            Some(r) => {
                rate(T, "spine_rate", r)?;
                r
            }
            None => BitsPerSec(hpl as f64 * spec.host_rate.0 / spines as f64),
        };
        let n = leaves * hpl;
        let n_links = 2 * n + 2 * leaves * spines;
        fits(T, n, n_links)?;
        let n_hosts = n as u32;
        let mut links = nic_links(n_hosts, spec.host_rate, 2 * (leaves * spines) as usize);
        for i in 0..leaves as u32 {
            for j in 0..spines as u32 {
                duplex(&mut links, i, leaves as u32 + j, spine_rate);
            }
        }
        let mut switches = Vec::with_capacity((leaves + spines) as usize);
        named(&mut switches, Tier::Leaf, leaves);
        named(&mut switches, Tier::Spine, spines);
        let shape = LeafSpineShape {
            hosts_per_leaf: hpl as u32,
            spines: spines as u32,
            base: 2 * n_hosts,
        };
        Fabric::from_parts(n_hosts, links, switches, Shape::LeafSpine(shape))
    }

    /// A k-ary fat-tree; see [`FatTreeSpec`] for the shape and defaults.
    ///
    /// Switches: edge `e` (global, `e / (k/2)` is its pod) is `SwitchId(e)`
    /// ("edge e"), then aggregation switch `a` ("agg a", same numbering),
    /// then core `c` ("core c"). Links after the NIC links: for each edge
    /// `e` and aggregation switch `i` of its pod (pair `e · (k/2) + i`),
    /// "edge e -> agg a" then back; then for each pod `p`, its aggregation
    /// switch `i` and `j < k/2` (pair `(p · (k/2) + i) · (k/2) + j`), "agg a
    /// -> core i·(k/2)+j" then back. Path `c` within a pod goes through
    /// aggregation switch `c`; between pods through aggregation switch `c /
    /// (k/2)` and core `c`.
    pub fn fat_tree(spec: &FatTreeSpec) -> Result<Fabric, FabricError> {
        const T: &str = "fat-tree";
        if spec.k < 2 || spec.k & 1 == 1 {
            return Err(FabricError::BadK(spec.k));
        }
        rate(T, "link_rate", spec.link_rate)?;
        let k = u64::from(spec.k);
        let half = k / 2;
        let n = k * k * k / 4;
        let n_pairs = k * half * half;
        let n_links = 2 * n + 4 * n_pairs;
        fits(T, n, n_links)?;
        let n_hosts = n as u32;
        let mut links = nic_links(n_hosts, spec.link_rate, 4 * n_pairs as usize);
        let (n_edge, h) = ((k * half) as u32, half as u32);
        for e in 0..n_edge {
            let pod = e / h;
            for i in 0..h {
                duplex(&mut links, e, n_edge + pod * h + i, spec.link_rate);
            }
        }
        for p in 0..k as u32 {
            for i in 0..h {
                for j in 0..h {
                    duplex(
                        &mut links,
                        n_edge + p * h + i,
                        2 * n_edge + i * h + j,
                        spec.link_rate,
                    );
                }
            }
        }
        let mut switches = Vec::with_capacity((2 * k * half + half * half) as usize);
        named(&mut switches, Tier::Edge, k * half);
        named(&mut switches, Tier::Agg, k * half);
        named(&mut switches, Tier::Core, half * half);
        let edge_base = 2 * n_hosts;
        let shape = FatTreeShape {
            half: h,
            edge_base,
            agg_base: edge_base + 2 * n_pairs as u32,
        };
        Fabric::from_parts(n_hosts, links, switches, Shape::FatTree(shape))
    }

    /// A custom graph; see [`CustomSpec`]. Hosts are numbered in the order
    /// of their nodes, switches in the order of theirs. Links: host `h`'s
    /// uplink and downlink at `2h`, `2h + 1`, then the links between
    /// switches in the order of the spec (a duplex entry gives `from -> to`
    /// then `to -> from`). Paths: every shortest path by hop count between
    /// the switch `src`'s uplink reaches and the switch `dst`'s downlink
    /// comes from (see `Custom` for the order of choices).
    pub fn custom(spec: &CustomSpec) -> Result<Fabric, FabricError> {
        // Nodes: names unique and non-empty; hosts and switches numbered.
        let mut index: HashMap<&str, (NodeKind, u32)> = HashMap::new();
        let (mut host_names, mut switches) = (vec![], vec![]);
        for (i, node) in spec.nodes.iter().enumerate() {
            if node.name.trim().is_empty() {
                return Err(FabricError::EmptyName { index: i });
            }
            let number = match node.kind {
                NodeKind::Host => host_names.len(),
                NodeKind::Switch => switches.len(),
            } as u32;
            if index.insert(&node.name, (node.kind, number)).is_some() {
                return Err(FabricError::DuplicateNode {
                    index: i,
                    name: node.name.clone(),
                });
            }
            match node.kind {
                NodeKind::Host => host_names.push(node.name.clone()),
                NodeKind::Switch => switches.push(Switch {
                    name: node.name.clone(),
                    tier: Tier::Custom,
                }),
            }
        }
        if host_names.is_empty() {
            return Err(FabricError::NoHosts);
        }
        let n_hosts = host_names.len() as u32;
        let n_switches = switches.len();
        // Links: ends known, distinct, not host to host; NICs counted.
        let mut up: Vec<Option<(usize, u32, BitsPerSec)>> = vec![None; n_hosts as usize];
        let mut down: Vec<Option<(usize, u32, BitsPerSec)>> = vec![None; n_hosts as usize];
        let mut inner: Vec<(u32, u32, BitsPerSec, usize)> = vec![];
        for (i, l) in spec.links.iter().enumerate() {
            let end = |name: &str| {
                index
                    .get(name)
                    .copied()
                    .ok_or_else(|| FabricError::UnknownNode {
                        index: i,
                        from: l.from.clone(),
                        to: l.to.clone(),
                        name: name.to_string(),
                    })
            };
            let (a, b) = (end(&l.from)?, end(&l.to)?);
            let words = || (l.from.clone(), l.to.clone());
            if l.from == l.to {
                let (from, to) = words();
                return Err(FabricError::SelfLink { index: i, from, to });
            }
            if !(l.capacity.0.is_finite() && l.capacity.0 > 0.0) {
                return Err(FabricError::BadCapacity {
                    link: format!("link {i} ({} -> {})", l.from, l.to),
                    value: l.capacity.0,
                });
            }
            let mut directed = vec![(a, b)];
            if l.duplex {
                directed.push((b, a));
            }
            for ((ka, na), (kb, nb)) in directed {
                match (ka, kb) {
                    (NodeKind::Host, NodeKind::Host) => {
                        let (from, to) = words();
                        return Err(FabricError::HostToHost { index: i, from, to });
                    }
                    (NodeKind::Host, NodeKind::Switch) => nic(
                        &mut up[na as usize],
                        (i, nb, l.capacity),
                        "uplink",
                        &host_names[na as usize],
                    )?,
                    (NodeKind::Switch, NodeKind::Host) => nic(
                        &mut down[nb as usize],
                        (i, na, l.capacity),
                        "downlink",
                        &host_names[nb as usize],
                    )?,
                    (NodeKind::Switch, NodeKind::Switch) => inner.push((na, nb, l.capacity, i)),
                }
            }
        }
        let mut links = Vec::with_capacity(2 * n_hosts as usize + inner.len());
        let (mut up_to, mut down_from) = (vec![], vec![]);
        for h in 0..n_hosts as usize {
            let name = &host_names[h];
            let missing = |side, direction| FabricError::HostMissingLink {
                host: name.clone(),
                side,
                direction,
            };
            let (u, d) = match (up[h], down[h]) {
                (None, None) => return Err(FabricError::HostWithoutLink { host: name.clone() }),
                (None, _) => return Err(missing("uplink", "to")),
                (_, None) => return Err(missing("downlink", "from")),
                (Some(u), Some(d)) => (u, d),
            };
            links.push(Link {
                kind: LinkKind::Uplink(HostId(h as u32)),
                capacity: u.2,
            });
            links.push(Link {
                kind: LinkKind::Downlink(HostId(h as u32)),
                capacity: d.2,
            });
            up_to.push(u.1);
            down_from.push(d.1);
        }
        fits(
            "custom",
            u64::from(n_hosts),
            (2 * n_hosts as usize + inner.len()) as u64,
        )?;
        // Switch graph in compressed rows, out-links in spec order.
        let mut adj_start = vec![0u32; n_switches + 1];
        for &(a, ..) in &inner {
            adj_start[a as usize + 1] += 1;
        }
        for s in 0..n_switches {
            adj_start[s + 1] += adj_start[s];
        }
        let mut fill = adj_start.clone();
        let mut adj = vec![(0u32, LinkId(0)); inner.len()];
        for (a, b, capacity, _) in &inner {
            let id = LinkId(links.len() as u32);
            links.push(Link {
                kind: LinkKind::Switch {
                    from: SwitchId(*a),
                    to: SwitchId(*b),
                },
                capacity: *capacity,
            });
            adj[fill[*a as usize] as usize] = (*b, id);
            fill[*a as usize] += 1;
        }
        // Reverse graph for the breadth-first searches toward each destination.
        let mut radj: Vec<Vec<u32>> = vec![vec![]; n_switches];
        for &(a, b, ..) in &inner {
            radj[b as usize].push(a);
        }
        let mut table_of = vec![NONE; n_switches];
        let (mut dist, mut n_shortest) = (vec![], vec![]);
        for &b in &down_from {
            if table_of[b as usize] != NONE {
                continue;
            }
            table_of[b as usize] = dist.len() as u32;
            let (d, order) = bfs_to(b, &radj);
            // Path counts in order of distance: count(u) = sum over next hops
            // (switches one hop closer; `order` lists only reachable ones,
            // all at distance >= 1 after the first).
            let mut c = vec![0u64; n_switches];
            c[b as usize] = 1;
            for &u in order.iter().skip(1) {
                let s = adj_start[u as usize] as usize;
                let e = adj_start[u as usize + 1] as usize;
                let closer = d[u as usize] - 1;
                c[u as usize] = adj[s..e]
                    .iter()
                    .filter(|(v, _)| d[*v as usize] == closer)
                    .fold(0u64, |acc, (v, _)| acc.saturating_add(c[*v as usize]));
            }
            dist.push(d);
            n_shortest.push(c);
        }
        // Every host reaches every host: report the first pair (in host
        // order, sender first) that does not.
        if let Some(sh) = up_to
            .iter()
            .position(|&a| dist.iter().any(|d| d[a as usize] == NONE))
        {
            let a = up_to[sh] as usize;
            let dh = down_from
                .iter()
                .position(|&b| dist[table_of[b as usize] as usize][a] == NONE)
                .expect("some destination is unreachable");
            return Err(FabricError::Unreachable {
                src: host_names[sh].clone(),
                dst: host_names[dh].clone(),
                from: switches[a].name.clone(),
                to: switches[down_from[dh] as usize].name.clone(),
            });
        }
        let custom = Custom {
            host_names,
            up_to,
            down_from,
            adj_start,
            adj,
            table_of,
            dist,
            n_shortest,
        };
        Fabric::from_parts(n_hosts, links, switches, Shape::Custom(Box::new(custom)))
    }
}

/// Records a host's NIC link, or fails if it has one already.
fn nic(
    slot: &mut Option<(usize, u32, BitsPerSec)>,
    link: (usize, u32, BitsPerSec),
    side: &'static str,
    host: &str,
) -> Result<(), FabricError> {
    if let Some(first) = slot {
        return Err(FabricError::HostManyLinks {
            host: host.to_string(),
            side,
            first: first.0,
            second: link.0,
        });
    }
    *slot = Some(link);
    Ok(())
}

/// Hop distances to `t` over the reverse graph `radj` (NONE where `t` is
/// unreachable), and the switches in order of distance.
fn bfs_to(t: u32, radj: &[Vec<u32>]) -> (Vec<u32>, Vec<u32>) {
    let mut d = vec![NONE; radj.len()];
    d[t as usize] = 0;
    let mut order = vec![t];
    let mut at = 0;
    while at < order.len() {
        let v = order[at];
        at += 1;
        for &u in &radj[v as usize] {
            if d[u as usize] == NONE {
                d[u as usize] = d[v as usize] + 1;
                order.push(u);
            }
        }
    }
    (d, order)
}

// ---------------------------------------------------------------- reports

/// The capacity across a fabric's bisection, for reports.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Bisection {
    /// Hosts on the smaller side of the cut.
    pub hosts_per_side: u64,
    /// Capacity across the cut, each way.
    pub capacity: BitsPerSec,
    /// The smaller side's NIC capacity over the cut's capacity (1 = full
    /// bisection bandwidth).
    pub oversubscription: f64,
}

impl Fabric {
    /// The cut that splits the hosts in two along the top tier (the first
    /// half of the pods of a tree, or of its racks with one pod; the first
    /// half of the leaves; the first k/2 pods of a fat-tree; the first half
    /// of the hosts of a big switch) and the capacity across it. `None` for
    /// a custom graph (a minimum cut is not computed) and for one host or one
    /// unit of the top tier.
    pub fn bisection(&self) -> Option<Bisection> {
        let nic = self.links()[0].capacity.0;
        let (side, cut) = match self.shape() {
            Shape::BigSwitch => {
                let side = u64::from(self.n_hosts() / 2);
                let cap = (0..self.n_hosts() / 2)
                    .map(|h| self.link(self.uplink(HostId(h))).capacity.0)
                    .sum::<f64>();
                (side, cap)
            }
            Shape::Tree(t) => {
                let hpr = u64::from(t.hosts_per_rack);
                if t.pods > 1 {
                    let half = u64::from(t.pods / 2);
                    let agg = self.links()[t.agg_base as usize].capacity.0;
                    (half * u64::from(t.racks_per_pod) * hpr, half as f64 * agg)
                } else {
                    let half = u64::from(t.racks_per_pod / 2);
                    let tor = self.links()[t.tor_base as usize].capacity.0;
                    (half * hpr, half as f64 * tor)
                }
            }
            Shape::LeafSpine(t) => {
                let leaves = self.n_hosts() / t.hosts_per_leaf;
                let half = u64::from(leaves / 2);
                let spine = self.links()[t.base as usize].capacity.0;
                (
                    half * u64::from(t.hosts_per_leaf),
                    (half * u64::from(t.spines)) as f64 * spine,
                )
            }
            Shape::FatTree(_) => {
                let side = u64::from(self.n_hosts() / 2);
                (side, side as f64 * nic)
            }
            Shape::Custom(_) => return None,
        };
        if side == 0 {
            return None;
        }
        let nic_side = match self.shape() {
            Shape::BigSwitch => cut,
            _ => side as f64 * nic,
        };
        Some(Bisection {
            hosts_per_side: side,
            capacity: BitsPerSec(cut),
            oversubscription: nic_side / cut,
        })
    }
}

#[cfg(test)]
mod tests;
