//! The names of a fabric's parts: links, switches and their ends, the tiers switches sit in, the
//! topology kinds, and a flow's key for ECMP.
//!
//! These sit below [`crate::fabric`] and its routing shapes so that both can name a link or a
//! switch without importing each other; `crate::fabric` re-exports every item here.

use crate::units::{BitsPerSec, HostId};

/// A directed link, numbered from 0.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct LinkId(pub u32);

/// A switch, numbered from 0 in the order [`crate::Fabric::switches`] lists them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct SwitchId(pub u32);

/// An end of a link: a host or a switch.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Node {
    /// A host (a server).
    Host(HostId),
    /// A switch.
    Switch(SwitchId),
}

/// What a link is, for reports and for schedulers that decide per port.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum LinkKind {
    /// A host's sending side: its NIC to its switch (ingress port of the
    /// big switch).
    Uplink(HostId),
    /// A host's receiving side: its switch to its NIC (egress port of the
    /// big switch).
    Downlink(HostId),
    /// A host's CPU, a resource that compute stages share like a link
    /// (capacity in work units per second, counted as bits like a link's).
    Cpu(HostId),
    /// A link from one switch to another.
    Switch {
        /// The sending switch.
        from: SwitchId,
        /// The receiving switch.
        to: SwitchId,
    },
}

/// A directed link and its capacity.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Link {
    /// What the link is.
    pub kind: LinkKind,
    /// Its capacity.
    pub capacity: BitsPerSec,
}

/// The layer a switch sits in, named as the topology's paper names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Tier {
    /// The one switch of the big switch.
    BigSwitch,
    /// A top-of-rack switch (tree).
    Tor,
    /// An edge switch (fat-tree).
    Edge,
    /// A leaf switch (leaf-spine).
    Leaf,
    /// An aggregation switch (tree, fat-tree).
    Agg,
    /// A spine switch (leaf-spine).
    Spine,
    /// A core switch (tree, fat-tree).
    Core,
    /// A switch of a custom graph.
    Custom,
}

impl Tier {
    /// The tier's short name, as used in switch names ("tor", "agg", ...).
    pub fn name(self) -> &'static str {
        match self {
            Tier::BigSwitch => "big switch",
            Tier::Tor => "tor",
            Tier::Edge => "edge",
            Tier::Leaf => "leaf",
            Tier::Agg => "agg",
            Tier::Spine => "spine",
            Tier::Core => "core",
            Tier::Custom => "switch",
        }
    }
}

/// A switch: its name (unique in its fabric) and its tier.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Switch {
    /// Its name, e.g. "tor 2", "spine 0", or the name a custom config gave.
    pub name: String,
    /// Its layer.
    pub tier: Tier,
}

/// Which builder made a fabric.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum TopologyKind {
    /// The non-blocking big switch.
    BigSwitch,
    /// Baraat's three-level tree.
    Tree,
    /// Two tiers, every leaf joined to every spine.
    LeafSpine,
    /// Al-Fares's k-ary fat-tree.
    FatTree,
    /// A graph from a config.
    Custom,
}

impl TopologyKind {
    /// The kind's name as configs and spec strings spell it.
    pub fn name(self) -> &'static str {
        match self {
            TopologyKind::BigSwitch => "bigswitch",
            TopologyKind::Tree => "tree",
            TopologyKind::LeafSpine => "leaf-spine",
            TopologyKind::FatTree => "fat-tree",
            TopologyKind::Custom => "custom",
        }
    }
}

/// A flow's identity for ECMP: its coflow's id and its index in the coflow.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct FlowKey {
    /// The coflow's id (`CoflowId.0`).
    pub coflow: u64,
    /// The flow's index in its coflow's flow list.
    pub index: u32,
}
