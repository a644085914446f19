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
//! below for every shape).

use crate::fabric::{
    Fabric, FabricError, Link, LinkId, LinkKind, Switch, SwitchId, Tier, TopologyKind,
};
use crate::units::{BitsPerSec, HostId};
use std::collections::HashMap;

/// The shape of a fabric and the numbers its routing needs.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Shape {
    /// Every path is `[uplink(s), downlink(d)]`.
    BigSwitch,
    /// Baraat's tree.
    Tree(TreeShape),
    /// A leaf-spine.
    LeafSpine(LeafSpineShape),
    /// A k-ary fat-tree.
    FatTree(FatTreeShape),
    /// A custom graph (boxed: its tables are large).
    Custom(Box<Custom>),
}

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

/// A tree's counts; see [`Fabric::tree`] for the numbering.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct TreeShape {
    hosts_per_rack: u32,
    racks_per_pod: u32,
    pods: u32,
    /// First ToR link (`2 · n_hosts`).
    tor_base: u32,
    /// First aggregation-to-core link.
    agg_base: u32,
}

impl TreeShape {
    pub(crate) fn tor_of(&self, h: HostId) -> SwitchId {
        SwitchId(h.0 / self.hosts_per_rack)
    }

    /// Links between switches on the way from `src` to `dst`.
    #[inline]
    pub(crate) fn inner_path(&self, src: HostId, dst: HostId, out: &mut Vec<LinkId>) {
        let (rs, rd) = (src.0 / self.hosts_per_rack, dst.0 / self.hosts_per_rack);
        if rs == rd {
            return;
        }
        out.push(LinkId(self.tor_base + 2 * rs));
        let (ps, pd) = (rs / self.racks_per_pod, rd / self.racks_per_pod);
        if ps != pd {
            out.push(LinkId(self.agg_base + 2 * ps));
            out.push(LinkId(self.agg_base + 2 * pd + 1));
        }
        out.push(LinkId(self.tor_base + 2 * rd + 1));
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

/// A leaf-spine's counts; see [`Fabric::leaf_spine`] for the numbering.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct LeafSpineShape {
    hosts_per_leaf: u32,
    spines: u32,
    base: u32,
}

impl LeafSpineShape {
    pub(crate) fn leaf_of(&self, h: HostId) -> SwitchId {
        SwitchId(h.0 / self.hosts_per_leaf)
    }

    pub(crate) fn max_n_paths(&self, n_hosts: u32) -> u32 {
        if n_hosts > self.hosts_per_leaf {
            self.spines
        } else {
            1
        }
    }

    #[inline]
    pub(crate) fn n_paths(&self, src: HostId, dst: HostId) -> u32 {
        if src.0 / self.hosts_per_leaf == dst.0 / self.hosts_per_leaf {
            1
        } else {
            self.spines
        }
    }

    #[inline]
    pub(crate) fn inner_path(&self, src: HostId, dst: HostId, choice: u32, out: &mut Vec<LinkId>) {
        let (ls, ld) = (src.0 / self.hosts_per_leaf, dst.0 / self.hosts_per_leaf);
        if ls == ld {
            return;
        }
        let spine = choice % self.spines;
        out.push(LinkId(self.base + 2 * (ls * self.spines + spine)));
        out.push(LinkId(self.base + 2 * (ld * self.spines + spine) + 1));
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

/// A fat-tree's counts; see [`Fabric::fat_tree`] for the numbering.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct FatTreeShape {
    half: u32,
    edge_base: u32,
    agg_base: u32,
}

impl FatTreeShape {
    pub(crate) fn edge_of(&self, h: HostId) -> SwitchId {
        SwitchId(h.0 / self.half)
    }

    pub(crate) fn max_n_paths(&self) -> u32 {
        self.half * self.half
    }

    #[inline]
    pub(crate) fn n_paths(&self, src: HostId, dst: HostId) -> u32 {
        let (es, ed) = (src.0 / self.half, dst.0 / self.half);
        if es == ed {
            1
        } else if es / self.half == ed / self.half {
            self.half
        } else {
            self.half * self.half
        }
    }

    #[inline]
    pub(crate) fn inner_path(&self, src: HostId, dst: HostId, choice: u32, out: &mut Vec<LinkId>) {
        let k2 = self.half;
        let (es, ed) = (src.0 / k2, dst.0 / k2);
        if es == ed {
            return;
        }
        let (ps, pd) = (es / k2, ed / k2);
        // Edge e of pod p (global e) to aggregation switch i of its pod:
        // pair index e·(k/2) + i, up link first.
        let edge_link = |e: u32, i: u32| self.edge_base + 2 * (e * k2 + i);
        if ps == pd {
            let i = choice % k2;
            out.push(LinkId(edge_link(es, i)));
            out.push(LinkId(edge_link(ed, i) + 1));
            return;
        }
        let c = choice % (k2 * k2);
        let (i, j) = (c / k2, c % k2);
        // Aggregation switch i of pod p to core i·(k/2) + j:
        // pair index (p·(k/2) + i)·(k/2) + j, up link first.
        let agg_link = |p: u32, i: u32| self.agg_base + 2 * ((p * k2 + i) * k2 + j);
        out.push(LinkId(edge_link(es, i)));
        out.push(LinkId(agg_link(ps, i)));
        out.push(LinkId(agg_link(pd, i) + 1));
        out.push(LinkId(edge_link(ed, i) + 1));
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

/// A custom fabric's routing: shortest hop count between switches, with
/// every equal-cost shortest path available to ECMP.
///
/// For every switch `t` that some host's downlink comes from, a table gives
/// each switch's distance to `t` and its number of shortest paths to `t`
/// (saturating at `u64::MAX`, reported capped at `u32::MAX`). Path `c` from
/// `u` to `t` takes the first next hop `v` (in link order) whose path count
/// exceeds `c`, after subtracting the counts of the next hops before it, so
/// choices `0..n_paths` name every shortest path once: each shortest path is
/// equally likely under [`Fabric::path_choice`] (per-hop ECMP gives the same
/// spread on symmetric graphs).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Custom {
    host_names: Vec<String>,
    up_to: Vec<u32>,
    down_from: Vec<u32>,
    /// Out-links of each switch to switches, as (to, link), in link order.
    adj_start: Vec<u32>,
    adj: Vec<(u32, LinkId)>,
    /// Per switch: its table's index if it is a destination, else NONE.
    table_of: Vec<u32>,
    dist: Vec<Vec<u32>>,
    n_shortest: Vec<Vec<u64>>,
}

impl Custom {
    pub(crate) fn host_name(&self, h: HostId) -> &str {
        &self.host_names[h.0 as usize]
    }

    pub(crate) fn uplink_switch(&self, h: HostId) -> SwitchId {
        SwitchId(self.up_to[h.0 as usize])
    }

    pub(crate) fn downlink_switch(&self, h: HostId) -> SwitchId {
        SwitchId(self.down_from[h.0 as usize])
    }

    pub(crate) fn max_n_paths(&self) -> u32 {
        let mut most = 1;
        for d in &self.n_shortest {
            for &a in &self.up_to {
                most = most.max(d[a as usize].min(u64::from(u32::MAX)) as u32);
            }
        }
        most
    }

    fn out_links(&self, u: u32) -> &[(u32, LinkId)] {
        let s = self.adj_start[u as usize] as usize;
        let e = self.adj_start[u as usize + 1] as usize;
        &self.adj[s..e]
    }

    pub(crate) fn n_paths(&self, src: HostId, dst: HostId) -> u32 {
        let (a, b) = (self.up_to[src.0 as usize], self.down_from[dst.0 as usize]);
        if a == b {
            return 1;
        }
        let t = self.table_of[b as usize] as usize;
        self.n_shortest[t][a as usize].min(u64::from(u32::MAX)) as u32
    }

    pub(crate) fn inner_path(&self, src: HostId, dst: HostId, choice: u32, out: &mut Vec<LinkId>) {
        let (mut u, b) = (self.up_to[src.0 as usize], self.down_from[dst.0 as usize]);
        if u == b {
            return;
        }
        let t = self.table_of[b as usize] as usize;
        let (dist, count) = (&self.dist[t], &self.n_shortest[t]);
        let mut c = u64::from(choice) % count[u as usize].max(1);
        while u != b {
            let want = dist[u as usize] - 1;
            let mut next = None;
            for &(v, l) in self.out_links(u) {
                if dist[v as usize] != want {
                    continue;
                }
                let n = count[v as usize];
                next = Some((v, l));
                if c < n {
                    break;
                }
                c -= n;
            }
            let (v, l) = next.expect("a switch off its destination has a next hop");
            // Saturated counts can leave `c` past the last branch: stay in it.
            c %= count[v as usize].max(1);
            out.push(l);
            u = v;
        }
    }
}

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
mod tests {
    use super::*;
    use crate::fabric::{FlowKey, Node};

    fn h(x: u32) -> HostId {
        HostId(x)
    }

    fn names(f: &Fabric, p: &[LinkId]) -> Vec<String> {
        p.iter().map(|&l| f.link_name(l)).collect()
    }

    /// Every path is a walk: src's uplink, links that meet end to end,
    /// dst's downlink; and it visits no switch twice.
    fn assert_walk(f: &Fabric, s: HostId, d: HostId, p: &[LinkId]) {
        assert_eq!(p.first(), Some(&f.uplink(s)), "{s} -> {d}: {p:?}");
        assert_eq!(p.last(), Some(&f.downlink(d)), "{s} -> {d}: {p:?}");
        let mut seen = vec![];
        for w in p.windows(2) {
            let (_, a_to) = f.link_ends(w[0]).unwrap();
            let (b_from, _) = f.link_ends(w[1]).unwrap();
            assert_eq!(a_to, b_from, "{s} -> {d}: {:?}", names(f, p));
            if let Node::Switch(x) = a_to {
                assert!(!seen.contains(&x), "{s} -> {d} loops: {:?}", names(f, p));
                seen.push(x);
            }
        }
    }

    /// Every path of every pair among `hosts` is a walk, and all choices
    /// give distinct paths of one length.
    fn assert_all_walks(f: &Fabric, hosts: impl Iterator<Item = u32> + Clone) {
        for s in hosts.clone() {
            for d in hosts.clone() {
                let n = f.n_paths(h(s), h(d));
                let mut paths = vec![];
                for c in 0..n {
                    let p = f.path(h(s), h(d), c);
                    assert_walk(f, h(s), h(d), &p);
                    paths.push(p);
                }
                assert!(paths.iter().all(|p| p.len() == paths[0].len()));
                paths.sort();
                paths.dedup();
                assert_eq!(paths.len(), n as usize, "{s} -> {d}: paths repeat");
            }
        }
    }

    fn small_tree() -> Fabric {
        Fabric::tree(&TreeSpec {
            pods: 3,
            racks_per_pod: 2,
            hosts_per_rack: 4,
            ..TreeSpec::default()
        })
        .unwrap()
    }

    #[test]
    fn tree_paths_go_up_only_as_far_as_needed() {
        let f = small_tree();
        assert_eq!(f.n_hosts(), 24);
        assert!(!f.is_big_switch());
        // 6 ToRs, 3 aggs, 1 core; 48 NIC + 12 ToR + 6 core links.
        assert_eq!(f.n_switches(), 10);
        assert_eq!(f.n_links(), 66);
        // Same rack (hosts 0..4 are rack 0).
        assert_eq!(
            names(&f, &f.path(h(1), h(3), 0)),
            ["host 1 uplink", "host 3 downlink"]
        );
        // Same pod (rack 0 and rack 1 are pod 0).
        assert_eq!(
            names(&f, &f.path(h(1), h(6), 0)),
            [
                "host 1 uplink",
                "tor 0 -> agg 0",
                "agg 0 -> tor 1",
                "host 6 downlink"
            ]
        );
        // Across pods: rack 0 (pod 0) to rack 5 (pod 2).
        assert_eq!(
            names(&f, &f.path(h(2), h(21), 0)),
            [
                "host 2 uplink",
                "tor 0 -> agg 0",
                "agg 0 -> core",
                "core -> agg 2",
                "agg 2 -> tor 5",
                "host 21 downlink"
            ]
        );
        assert_eq!(f.n_paths(h(2), h(21)), 1);
        assert_eq!(f.path(h(4), h(4), 0), [f.uplink(h(4)), f.downlink(h(4))]);
        assert_all_walks(&f, 0..24);
        // ToR uplink: 4 hosts x 1 Gbit/s / 2; agg uplink: 2 ToRs / 1.
        let tor = f.path(h(1), h(6), 0)[1];
        assert_eq!(f.link(tor).capacity, BitsPerSec(2e9));
        let agg = f.path(h(2), h(21), 0)[2];
        assert_eq!(f.link(agg).capacity, BitsPerSec(4e9));
        let b = f.bisection().unwrap();
        assert_eq!((b.hosts_per_side, b.capacity), (8, BitsPerSec(4e9)));
        assert_eq!(b.oversubscription, 2.0);
    }

    #[test]
    fn one_pod_tree_has_no_core() {
        let f = Fabric::tree(&TreeSpec {
            pods: 1,
            racks_per_pod: 2,
            hosts_per_rack: 4,
            ..TreeSpec::default()
        })
        .unwrap();
        assert_eq!(f.n_switches(), 3);
        assert_eq!(f.n_links(), 16 + 4);
        assert_all_walks(&f, 0..8);
    }

    #[test]
    fn baraat_tree_builds() {
        // The paper's full size: 36,000 servers; paths by arithmetic.
        let f = Fabric::tree(&TreeSpec::default()).unwrap();
        assert_eq!(f.n_hosts(), 36_000);
        assert_eq!(f.n_switches(), 900 + 30 + 1);
        assert_eq!(f.n_links(), 72_000 + 1_800 + 60);
        let p = f.path(h(0), h(35_999), 0);
        assert_walk(&f, h(0), h(35_999), &p);
        assert_eq!(
            names(&f, &p)[1..5],
            [
                "tor 0 -> agg 0",
                "agg 0 -> core",
                "core -> agg 29",
                "agg 29 -> tor 899"
            ]
        );
        assert_eq!(f.link(p[1]).capacity, BitsPerSec(20e9));
        assert_eq!(f.link(p[2]).capacity, BitsPerSec(600e9));
    }

    #[test]
    fn leaf_spine_spreads_over_spines() {
        let f = Fabric::leaf_spine(&LeafSpineSpec {
            leaves: 3,
            spines: 2,
            hosts_per_leaf: 2,
            ..LeafSpineSpec::default()
        })
        .unwrap();
        assert_eq!(f.n_paths(h(0), h(1)), 1);
        assert_eq!(f.n_paths(h(0), h(5)), 2);
        assert_eq!(
            names(&f, &f.path(h(0), h(5), 1)),
            [
                "host 0 uplink",
                "leaf 0 -> spine 1",
                "spine 1 -> leaf 2",
                "host 5 downlink"
            ]
        );
        // Default spine rate: 2 hosts x 1 Gbit/s / 2 spines.
        assert_eq!(f.link(f.path(h(0), h(5), 0)[1]).capacity, BitsPerSec::GBPS);
        assert_all_walks(&f, 0..6);
        assert_eq!(f.bisection().unwrap().oversubscription, 1.0);
    }

    #[test]
    fn fat_tree_paths_within_and_across_pods() {
        let f = Fabric::fat_tree(&FatTreeSpec::default()).unwrap();
        // k = 4: 16 hosts, 8 edge + 8 agg + 4 core, 32 + 32 + 32 links.
        assert_eq!(f.n_hosts(), 16);
        assert_eq!(f.n_switches(), 20);
        assert_eq!(f.n_links(), 96);
        assert_eq!(f.n_paths(h(0), h(1)), 1);
        assert_eq!(f.n_paths(h(0), h(2)), 2);
        assert_eq!(f.n_paths(h(0), h(15)), 4);
        assert_eq!(
            names(&f, &f.path(h(0), h(3), 1)),
            [
                "host 0 uplink",
                "edge 0 -> agg 1",
                "agg 1 -> edge 1",
                "host 3 downlink"
            ]
        );
        // Pod 0 to pod 3 through agg 1 of each pod and core 1·2 + 0 = 2.
        assert_eq!(
            names(&f, &f.path(h(0), h(15), 2)),
            [
                "host 0 uplink",
                "edge 0 -> agg 1",
                "agg 1 -> core 2",
                "core 2 -> agg 7",
                "agg 7 -> edge 7",
                "host 15 downlink"
            ]
        );
        assert_all_walks(&f, 0..16);
        let b = f.bisection().unwrap();
        assert_eq!((b.hosts_per_side, b.oversubscription), (8, 1.0));
        let f8 = Fabric::fat_tree(&FatTreeSpec {
            k: 8,
            ..FatTreeSpec::default()
        })
        .unwrap();
        assert_eq!(f8.n_hosts(), 128);
        assert_eq!(f8.n_paths(h(0), h(127)), 16);
        assert_all_walks(&f8, (0..128).step_by(5));
        assert_eq!((f.max_n_paths(), f8.max_n_paths()), (4, 16));
    }

    #[test]
    fn ecmp_is_deterministic_and_spreads_evenly() {
        let f = Fabric::fat_tree(&FatTreeSpec::default()).unwrap();
        let (s, d) = (h(0), h(15));
        let key = |c: u64, i: u32| FlowKey {
            coflow: c,
            index: i,
        };
        assert_eq!(
            f.path_choice(s, d, key(5, 1)),
            f.clone().path_choice(s, d, key(5, 1))
        );
        // 40,000 keys over 4 paths: each gets 10,000 expected; binomial sd
        // is about 87, so +-5% (500) is more than 5 sd.
        let mut hits = [0u32; 4];
        for c in 0..10_000 {
            for i in 0..4 {
                hits[f.path_choice(s, d, key(c, i)) as usize] += 1;
            }
        }
        for n in hits {
            assert!((9_500..=10_500).contains(&n), "{hits:?}");
        }
        // Another seed moves flows: most keys land elsewhere.
        let g = f.clone().with_ecmp_seed(99);
        let moved = (0..1000)
            .filter(|&c| f.path_choice(s, d, key(c, 0)) != g.path_choice(s, d, key(c, 0)))
            .count();
        assert!((650..=850).contains(&moved), "{moved}");
    }

    fn custom(nodes: &[(&str, NodeKind)], links: &[(&str, &str, f64)]) -> CustomSpec {
        CustomSpec {
            nodes: nodes
                .iter()
                .map(|&(n, kind)| NodeSpec {
                    name: n.into(),
                    kind,
                })
                .collect(),
            links: links
                .iter()
                .map(|&(a, b, c)| LinkSpec {
                    from: a.into(),
                    to: b.into(),
                    capacity: BitsPerSec(c),
                    duplex: true,
                })
                .collect(),
        }
    }

    use NodeKind::{Host as H, Switch as S};

    /// A diamond: s0 and s3 joined through s1 and s2, plus a long way
    /// round through s4 and s5 that shortest paths never take.
    fn diamond() -> CustomSpec {
        custom(
            &[
                ("a", H),
                ("b", H),
                ("c", H),
                ("s0", S),
                ("s1", S),
                ("s2", S),
                ("s3", S),
                ("s4", S),
                ("s5", S),
            ],
            &[
                ("a", "s0", 1e9),
                ("b", "s3", 1e9),
                ("c", "s0", 1e9),
                ("s0", "s1", 1e9),
                ("s0", "s2", 1e9),
                ("s1", "s3", 1e9),
                ("s2", "s3", 1e9),
                ("s0", "s4", 1e9),
                ("s4", "s5", 1e9),
                ("s5", "s3", 1e9),
            ],
        )
    }

    #[test]
    fn custom_routes_by_shortest_paths() {
        let f = Fabric::custom(&diamond()).unwrap();
        assert_eq!(f.n_hosts(), 3);
        assert_eq!(f.host_name(h(2)), Some("c"));
        assert_eq!(f.n_paths(h(0), h(1)), 2);
        assert_eq!(f.n_paths(h(0), h(2)), 1);
        assert_eq!(
            names(&f, &f.path(h(0), h(1), 1)),
            [
                "host 0 uplink (a -> s0)",
                "s0 -> s2",
                "s2 -> s3",
                "host 1 downlink (s3 -> b)"
            ]
        );
        assert_eq!(
            names(&f, &f.path(h(1), h(2), 0)),
            [
                "host 1 uplink (b -> s3)",
                "s3 -> s1",
                "s1 -> s0",
                "host 2 downlink (s0 -> c)"
            ]
        );
        assert_all_walks(&f, 0..3);
        assert_eq!(f.max_n_paths(), 2);
        assert_eq!(f.bisection(), None);
        // The same graph as a custom fat-tree has the fat-tree's path counts.
        let ft = Fabric::fat_tree(&FatTreeSpec::default()).unwrap();
        let mut nodes: Vec<(String, NodeKind)> = (0..16).map(|x| (format!("h{x}"), H)).collect();
        nodes.extend(ft.switches().iter().map(|s| (s.name.clone(), S)));
        let name = |n: crate::fabric::Node| match n {
            crate::fabric::Node::Host(x) => format!("h{}", x.0),
            crate::fabric::Node::Switch(x) => ft.switch(x).name.clone(),
        };
        let spec = CustomSpec {
            nodes: nodes
                .iter()
                .map(|(n, k)| NodeSpec {
                    name: n.clone(),
                    kind: *k,
                })
                .collect(),
            links: (0..ft.n_links() as u32)
                .map(|l| {
                    let (a, b) = ft.link_ends(LinkId(l)).unwrap();
                    LinkSpec {
                        from: name(a),
                        to: name(b),
                        capacity: BitsPerSec::GBPS,
                        duplex: false,
                    }
                })
                .collect(),
        };
        let cf = Fabric::custom(&spec).unwrap();
        for s in 0..16 {
            for d in 0..16 {
                assert_eq!(cf.n_paths(h(s), h(d)), ft.n_paths(h(s), h(d)), "{s} {d}");
            }
        }
        assert_all_walks(&cf, 0..16);
    }

    #[test]
    fn builder_errors_name_the_element() {
        let tree = |f: fn(&mut TreeSpec)| {
            let mut s = TreeSpec::default();
            f(&mut s);
            Fabric::tree(&s).unwrap_err().to_string()
        };
        assert_eq!(tree(|s| s.pods = 0), "tree: pods must be at least 1");
        assert_eq!(
            tree(|s| s.hosts_per_rack = 0),
            "tree: hosts_per_rack must be at least 1"
        );
        assert_eq!(
            tree(|s| s.tor_oversub = 0.0),
            "tree: tor_oversub 0 is not a positive finite number"
        );
        assert_eq!(
            tree(|s| s.host_rate = BitsPerSec(f64::NAN)),
            "tree: host_rate NaN bit/s is not a positive finite number"
        );
        assert_eq!(
            tree(|s| s.agg_oversub = f64::INFINITY),
            "tree: agg_oversub inf is not a positive finite number"
        );
        assert_eq!(
            tree(|s| {
                s.pods = 1000;
                s.racks_per_pod = 1000;
                s.hosts_per_rack = 2000;
            }),
            "tree: 4002002000 links (with room for a CPU link per host) are more than the 4294967295 a fabric can number"
        );
        for k in [0, 1, 3, 7] {
            let e = Fabric::fat_tree(&FatTreeSpec {
                k,
                ..FatTreeSpec::default()
            })
            .unwrap_err();
            assert_eq!(
                e.to_string(),
                format!("fat-tree: k must be even and at least 2, got {k}")
            );
        }
        let e = Fabric::leaf_spine(&LeafSpineSpec {
            spines: 0,
            ..LeafSpineSpec::default()
        })
        .unwrap_err();
        assert_eq!(e.to_string(), "leaf-spine: spines must be at least 1");
        let e = Fabric::leaf_spine(&LeafSpineSpec {
            spine_rate: Some(BitsPerSec(-1.0)),
            ..LeafSpineSpec::default()
        })
        .unwrap_err();
        assert_eq!(
            e.to_string(),
            "leaf-spine: spine_rate -1 bit/s is not a positive finite number"
        );
        let e = Fabric::fat_tree(&FatTreeSpec {
            link_rate: BitsPerSec(f64::INFINITY),
            ..FatTreeSpec::default()
        })
        .unwrap_err();
        assert_eq!(
            e.to_string(),
            "fat-tree: link_rate inf bit/s is not a positive finite number"
        );
        // A derived capacity that overflows is named by its link.
        let e = Fabric::tree(&TreeSpec {
            host_rate: BitsPerSec(1e308),
            tor_oversub: 1e-10,
            ..TreeSpec::default()
        })
        .unwrap_err();
        assert_eq!(
            e.to_string(),
            "tor 0 -> agg 0: capacity inf bit/s is not a positive finite number"
        );
    }

    /// Every shortest switch path from `a` to `b` by brute force: all
    /// simple paths by depth-first search, the shortest kept.
    fn brute_shortest(spec_links: &[(u32, u32)], a: u32, b: u32) -> Vec<Vec<(u32, u32)>> {
        fn walk(
            links: &[(u32, u32)],
            at: u32,
            b: u32,
            seen: &mut Vec<u32>,
            path: &mut Vec<(u32, u32)>,
            out: &mut Vec<Vec<(u32, u32)>>,
        ) {
            if at == b {
                out.push(path.clone());
                return;
            }
            for &(x, y) in links {
                if x == at && !seen.contains(&y) {
                    seen.push(y);
                    path.push((x, y));
                    walk(links, y, b, seen, path, out);
                    path.pop();
                    seen.pop();
                }
            }
        }
        let mut out = vec![];
        walk(spec_links, a, b, &mut vec![a], &mut vec![], &mut out);
        let best = out.iter().map(Vec::len).min().unwrap_or(0);
        out.retain(|p| p.len() == best);
        out.sort();
        out
    }

    proptest::proptest! {
        /// Differential: on random small graphs, the custom routing's paths
        /// are exactly the shortest paths a brute-force search finds, and
        /// a graph is refused as unreachable exactly when some pair is.
        #[test]
        fn custom_routing_matches_brute_force(
            n_hosts in 1u32..4,
            n_switches in 1u32..6,
            attach in proptest::collection::vec(0u32..6, 4),
            links in proptest::collection::vec((0u32..6, 0u32..6), 0..14),
        ) {
            let sw = |i: u32| format!("s{}", i % n_switches);
            let mut nodes: Vec<(String, NodeKind)> =
                (0..n_hosts).map(|h| (format!("h{h}"), H)).collect();
            nodes.extend((0..n_switches).map(|s| (format!("s{s}"), S)));
            let mut inner: Vec<(u32, u32)> = links
                .iter()
                .map(|&(a, b)| (a % n_switches, b % n_switches))
                .filter(|(a, b)| a != b)
                .collect();
            inner.sort();
            inner.dedup();
            let mut spec = CustomSpec {
                nodes: nodes
                    .iter()
                    .map(|(n, k)| NodeSpec { name: n.clone(), kind: *k })
                    .collect(),
                links: vec![],
            };
            for h in 0..n_hosts {
                spec.links.push(LinkSpec {
                    from: format!("h{h}"),
                    to: sw(attach[h as usize]),
                    capacity: BitsPerSec::GBPS,
                    duplex: true,
                });
            }
            for &(a, b) in &inner {
                spec.links.push(LinkSpec {
                    from: sw(a),
                    to: sw(b),
                    capacity: BitsPerSec::GBPS,
                    duplex: false,
                });
            }
            let at = |h: u32| attach[h as usize] % n_switches;
            let unreachable = (0..n_hosts).any(|s| {
                (0..n_hosts).any(|d| at(s) != at(d) && brute_shortest(&inner, at(s), at(d)).is_empty())
            });
            match Fabric::custom(&spec) {
                Err(FabricError::Unreachable { .. }) => proptest::prop_assert!(unreachable),
                Err(e) => proptest::prop_assert!(false, "{e}"),
                Ok(f) => {
                    proptest::prop_assert!(!unreachable);
                    for s in 0..n_hosts {
                        for d in 0..n_hosts {
                            let want = if at(s) == at(d) {
                                vec![vec![]]
                            } else {
                                brute_shortest(&inner, at(s), at(d))
                            };
                            let n = f.n_paths(h(s), h(d));
                            proptest::prop_assert_eq!(n as usize, want.len());
                            let mut got: Vec<Vec<(u32, u32)>> = (0..n)
                                .map(|c| {
                                    let p = f.path(h(s), h(d), c);
                                    assert_walk(&f, h(s), h(d), &p);
                                    p[1..p.len() - 1]
                                        .iter()
                                        .map(|&l| match f.link(l).kind {
                                            LinkKind::Switch { from, to } => (from.0, to.0),
                                            k => panic!("{k:?} inside a path"),
                                        })
                                        .collect()
                                })
                                .collect();
                            got.sort();
                            proptest::prop_assert_eq!(got, want);
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn custom_errors_name_the_element() {
        let err = |spec: CustomSpec| Fabric::custom(&spec).unwrap_err().to_string();
        let hs = [("a", H), ("b", H), ("s0", S), ("s1", S)];
        assert_eq!(
            err(custom(&hs, &[("a", "s0", 1.0), ("s0", "s9", 1.0)])),
            "link 1 (s0 -> s9): unknown node s9"
        );
        assert_eq!(
            err(custom(&hs, &[("a", "s0", 1.0), ("s1", "s1", 1.0)])),
            "link 1 (s1 -> s1): joins a node to itself"
        );
        assert_eq!(
            err(custom(&hs, &[("a", "b", 1.0)])),
            "link 0 (a -> b): joins two hosts; a host links only to its switch"
        );
        assert_eq!(
            err(custom(&hs, &[("a", "s0", 1.0), ("s0", "s1", 0.0)])),
            "link 1 (s0 -> s1): capacity 0 bit/s is not a positive finite number"
        );
        assert_eq!(
            err(custom(&hs, &[("a", "s0", -2.0)])),
            "link 0 (a -> s0): capacity -2 bit/s is not a positive finite number"
        );
        assert_eq!(
            err(custom(&hs, &[("a", "s0", 1.0), ("b", "s0", f64::INFINITY)])),
            "link 1 (b -> s0): capacity inf bit/s is not a positive finite number"
        );
        assert_eq!(err(custom(&hs, &[("a", "s0", 1.0)])), "host b: has no link");
        let mut one_way = custom(&hs, &[("a", "s0", 1.0), ("b", "s0", 1.0)]);
        one_way.links[1].duplex = false;
        assert_eq!(
            err(one_way),
            "host b: has no downlink (a link from a switch)"
        );
        let mut one_way = custom(&hs, &[("a", "s0", 1.0), ("s0", "b", 1.0)]);
        one_way.links[1].duplex = false;
        assert_eq!(err(one_way), "host b: has no uplink (a link to a switch)");
        assert_eq!(
            err(custom(
                &hs,
                &[("a", "s0", 1.0), ("b", "s0", 1.0), ("a", "s1", 1.0)]
            )),
            "host a: has more than one uplink (links 0 and 2); a host has one NIC"
        );
        assert_eq!(
            err(custom(&hs, &[("a", "s0", 1.0), ("b", "s1", 1.0)])),
            "host a cannot reach host b: no path from switch s0 to switch s1"
        );
        let mut one_way = custom(
            &hs,
            &[("a", "s0", 1.0), ("b", "s1", 1.0), ("s0", "s1", 1.0)],
        );
        one_way.links[2].duplex = false;
        assert_eq!(
            err(one_way),
            "host b cannot reach host a: no path from switch s1 to switch s0"
        );
        assert_eq!(
            err(custom(&[("a", H), ("a", S)], &[])),
            "node 1: duplicate name a"
        );
        assert_eq!(
            err(custom(&[("a", H), (" ", S)], &[])),
            "node 1: has an empty name"
        );
        assert_eq!(
            Fabric::custom(&custom(&[("s", S)], &[])).unwrap_err(),
            FabricError::NoHosts
        );
    }
}
