//! Fabrics: hosts joined by directed, capacitated links.
//!
//! A flow is limited by every link on its path. The big switch (the
//! non-blocking fabric of the coflow literature) gives host `h` an uplink
//! (its ingress port, what it sends) and a downlink (its egress port, what it
//! receives); the path from `s` to `d` is `[uplink(s), downlink(d)]`, also when
//! `s == d`. Multi-hop topologies add internal links and longer paths; nothing
//! downstream of [`Fabric::path`] needs to know which kind of fabric it is.
//!
//! Correctness properties (checked in [`Fabric::big_switch`] and
//! [`Fabric::with_capacities`]): every link's capacity is finite and > 0;
//! every host has an uplink and a downlink.

use crate::units::{BitsPerSec, HostId};
use thiserror::Error;

/// A directed link, numbered from 0.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct LinkId(pub u32);

/// What a link is, for reports and for schedulers that decide per port.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum LinkKind {
    /// A host's sending side (ingress port of the big switch).
    Uplink(HostId),
    /// A host's receiving side (egress port of the big switch).
    Downlink(HostId),
    /// A host's CPU, a resource that compute stages share like a link
    /// (capacity in work units per second, counted as bits like a link's).
    Cpu(HostId),
}

/// A directed link and its capacity.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Link {
    /// What the link is.
    pub kind: LinkKind,
    /// Its capacity.
    pub capacity: BitsPerSec,
}

/// Errors in a fabric description.
#[derive(Debug, Error, PartialEq)]
pub enum FabricError {
    /// A fabric needs at least one host.
    #[error("a fabric needs at least one host")]
    NoHosts,
    /// A capacity is zero, negative or not finite.
    #[error("{link}: capacity {value} bit/s is not a positive finite number")]
    BadCapacity {
        /// Which link.
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
}

/// Hosts and the links between them.
#[derive(Debug, Clone, PartialEq)]
pub struct Fabric {
    n_hosts: u32,
    links: Vec<Link>,
    /// The CPU resource of each host, if the fabric has them.
    cpus: Option<LinkId>,
}

impl Fabric {
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
        for l in &links {
            if !(l.capacity.0.is_finite() && l.capacity.0 > 0.0) {
                let link = match l.kind {
                    LinkKind::Uplink(h) => format!("ingress port of host {}", h.0),
                    LinkKind::Downlink(h) => format!("egress port of host {}", h.0),
                    LinkKind::Cpu(h) => format!("CPU of host {}", h.0),
                };
                return Err(FabricError::BadCapacity {
                    link,
                    value: l.capacity.0,
                });
            }
        }
        Ok(Fabric {
            n_hosts: up.len() as u32,
            links,
            cpus: None,
        })
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

    /// The CPU resource of host `h`, if the fabric models CPUs.
    pub fn cpu(&self, h: HostId) -> Option<LinkId> {
        self.cpus.map(|first| LinkId(first.0 + h.0))
    }

    /// Whether every path is `[uplink(src), downlink(dst)]` (the big switch),
    /// which lets per-port algorithms skip path lists.
    pub fn is_big_switch(&self) -> bool {
        true
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

    /// The sending side of host `h`.
    pub fn uplink(&self, h: HostId) -> LinkId {
        LinkId(2 * h.0)
    }

    /// The receiving side of host `h`.
    pub fn downlink(&self, h: HostId) -> LinkId {
        LinkId(2 * h.0 + 1)
    }

    /// Appends the path of a flow from `src` to `dst` to `out`.
    /// Both hosts must exist (validated workloads guarantee it).
    pub fn path_into(&self, src: HostId, dst: HostId, out: &mut Vec<LinkId>) {
        out.push(self.uplink(src));
        out.push(self.downlink(dst));
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
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn big_switch_paths() {
        let f = Fabric::big_switch(3, BitsPerSec::GBPS).unwrap();
        assert_eq!(f.n_links(), 6);
        let mut p = vec![];
        f.path_into(HostId(2), HostId(0), &mut p);
        assert_eq!(p, vec![LinkId(4), LinkId(1)]);
        assert_eq!(f.total_ingress(), BitsPerSec(3e9));
    }

    #[test]
    fn bad_capacity_names_the_port() {
        let e = Fabric::with_capacities(
            &[BitsPerSec(1.0), BitsPerSec(1.0)],
            &[BitsPerSec(1.0), BitsPerSec(0.0)],
        )
        .unwrap_err();
        assert_eq!(
            e.to_string(),
            "egress port of host 1: capacity 0 bit/s is not a positive finite number"
        );
        assert_eq!(
            Fabric::big_switch(0, BitsPerSec::GBPS).unwrap_err(),
            FabricError::NoHosts
        );
    }
}
