//! A fabric's shape and the routing it implies: for each structured topology the few counts
//! from which a path between two hosts follows by arithmetic, and for a custom graph its next-hop
//! tables. [`crate::fabric::Fabric`] holds one and asks it for paths; the builders in
//! [`crate::topology`] compute one and document the link numbering it assumes.
//!
//! It sits between the ids (below) and the fabric (above) so that the fabric can route without
//! knowing the builders and the builders can make a shape without the fabric knowing them.

use super::ids::{LinkId, SwitchId};
use crate::units::HostId;

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

/// A tree's counts; see [`Fabric::tree`] for the numbering.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct TreeShape {
    pub(crate) hosts_per_rack: u32,
    pub(crate) racks_per_pod: u32,
    pub(crate) pods: u32,
    /// First ToR link (`2 · n_hosts`).
    pub(crate) tor_base: u32,
    /// First aggregation-to-core link.
    pub(crate) agg_base: u32,
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

/// A leaf-spine's counts; see [`Fabric::leaf_spine`] for the numbering.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct LeafSpineShape {
    pub(crate) hosts_per_leaf: u32,
    pub(crate) spines: u32,
    pub(crate) base: u32,
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

/// A fat-tree's counts; see [`Fabric::fat_tree`] for the numbering.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct FatTreeShape {
    pub(crate) half: u32,
    pub(crate) edge_base: u32,
    pub(crate) agg_base: u32,
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
    pub(crate) host_names: Vec<String>,
    pub(crate) up_to: Vec<u32>,
    pub(crate) down_from: Vec<u32>,
    /// Out-links of each switch to switches, as (to, link), in link order.
    pub(crate) adj_start: Vec<u32>,
    pub(crate) adj: Vec<(u32, LinkId)>,
    /// Per switch: its table's index if it is a destination, else NONE.
    pub(crate) table_of: Vec<u32>,
    pub(crate) dist: Vec<Vec<u32>>,
    pub(crate) n_shortest: Vec<Vec<u64>>,
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
