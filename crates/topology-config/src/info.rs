//! What a fabric is made of, for `coflowkit topology info`: hosts, switches
//! by tier, links by kind with their capacities, the bisection and its
//! oversubscription, and how many equal-cost paths ECMP chooses among.

use crate::rate::format_rate;
use coflowkit_model::{Bisection, BitsPerSec, Fabric, LinkKind, Tier};
use std::fmt;

/// Links of one kind ("host uplink", "tor -> agg") and their capacities.
#[derive(Debug, Clone, PartialEq)]
pub struct LinkGroup {
    /// The kind: "host uplink", "host downlink", "host CPU", or
    /// "tor -> agg" (the two switches' tiers) for links between switches.
    pub label: String,
    /// How many links.
    pub count: usize,
    /// The smallest capacity among them.
    pub min_capacity: BitsPerSec,
    /// The largest.
    pub max_capacity: BitsPerSec,
    /// Their sum.
    pub total_capacity: BitsPerSec,
}

/// A summary of a fabric.
#[derive(Debug, Clone, PartialEq)]
pub struct FabricInfo {
    /// The builder's name ("tree", ...).
    pub kind: &'static str,
    /// Hosts.
    pub n_hosts: u32,
    /// Switches per tier, in tier order.
    pub switches: Vec<(&'static str, usize)>,
    /// Links per kind, in the order the fabric numbers them.
    pub links: Vec<LinkGroup>,
    /// The top-tier bisection, where the fabric has one (not for custom graphs).
    pub bisection: Option<Bisection>,
    /// The most equal-cost paths between two hosts.
    pub max_paths: u32,
    /// The ECMP seed.
    pub ecmp_seed: u64,
}

impl FabricInfo {
    /// The summary of `f`.
    pub fn of(f: &Fabric) -> FabricInfo {
        let mut tiers: Vec<(Tier, usize)> = vec![];
        for s in f.switches() {
            match tiers.iter_mut().find(|(t, _)| *t == s.tier) {
                Some((_, n)) => *n += 1,
                None => tiers.push((s.tier, 1)),
            }
        }
        tiers.sort_by_key(|(t, _)| *t);
        let mut links: Vec<LinkGroup> = vec![];
        for l in f.links() {
            let label = match l.kind {
                LinkKind::Uplink(_) => "host uplink".to_string(),
                LinkKind::Downlink(_) => "host downlink".to_string(),
                LinkKind::Cpu(_) => "host CPU".to_string(),
                LinkKind::Switch { from, to } => format!(
                    "{} -> {}",
                    f.switch(from).tier.name(),
                    f.switch(to).tier.name()
                ),
            };
            let c = l.capacity;
            match links.iter_mut().find(|g| g.label == label) {
                Some(g) => {
                    g.count += 1;
                    g.min_capacity = BitsPerSec(g.min_capacity.0.min(c.0));
                    g.max_capacity = BitsPerSec(g.max_capacity.0.max(c.0));
                    g.total_capacity = BitsPerSec(g.total_capacity.0 + c.0);
                }
                None => links.push(LinkGroup {
                    label,
                    count: 1,
                    min_capacity: c,
                    max_capacity: c,
                    total_capacity: c,
                }),
            }
        }
        FabricInfo {
            kind: f.kind().name(),
            n_hosts: f.n_hosts(),
            switches: tiers.into_iter().map(|(t, n)| (t.name(), n)).collect(),
            links,
            bisection: f.bisection(),
            max_paths: f.max_n_paths(),
            ecmp_seed: f.ecmp_seed(),
        }
    }
}

impl fmt::Display for FabricInfo {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let n_switches: usize = self.switches.iter().map(|(_, n)| n).sum();
        let n_links: usize = self.links.iter().map(|g| g.count).sum();
        writeln!(f, "kind           {}", self.kind)?;
        writeln!(f, "hosts          {}", self.n_hosts)?;
        let tiers: Vec<String> = self
            .switches
            .iter()
            .map(|(t, n)| format!("{n} {t}"))
            .collect();
        writeln!(f, "switches       {n_switches} ({})", tiers.join(", "))?;
        writeln!(f, "links          {n_links}")?;
        let width = self.links.iter().map(|g| g.label.len()).max().unwrap_or(0);
        for g in &self.links {
            let cap = if g.min_capacity == g.max_capacity {
                format_rate(g.min_capacity)
            } else {
                format!(
                    "{} to {}",
                    format_rate(g.min_capacity),
                    format_rate(g.max_capacity)
                )
            };
            writeln!(
                f,
                "  {:width$}  {:>7} x {cap}",
                g.label,
                g.count,
                width = width
            )?;
        }
        match &self.bisection {
            Some(b) => writeln!(
                f,
                "bisection      {} each way between {} hosts and the other {}; oversubscription {}:1",
                format_rate(b.capacity),
                b.hosts_per_side,
                u64::from(self.n_hosts) - b.hosts_per_side,
                (b.oversubscription * 1e4).round() / 1e4
            )?,
            None => writeln!(f, "bisection      not computed for this fabric")?,
        }
        if self.max_paths > 1 {
            write!(
                f,
                "paths          up to {} equal-cost paths between two hosts (ECMP, seed {})",
                self.max_paths, self.ecmp_seed
            )
        } else {
            write!(
                f,
                "paths          one path between two hosts (no path diversity)"
            )
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use coflowkit_model::TreeSpec;

    #[test]
    fn baraat_tree_info() {
        let f = Fabric::tree(&TreeSpec::default()).unwrap();
        let i = FabricInfo::of(&f);
        assert_eq!(i.switches, vec![("tor", 900), ("agg", 30), ("core", 1)]);
        let labels: Vec<_> = i
            .links
            .iter()
            .map(|g| (g.label.as_str(), g.count))
            .collect();
        assert_eq!(
            labels,
            [
                ("host uplink", 36_000),
                ("host downlink", 36_000),
                ("tor -> agg", 900),
                ("agg -> tor", 900),
                ("agg -> core", 30),
                ("core -> agg", 30)
            ]
        );
        let text = i.to_string();
        assert!(
            text.contains("switches       931 (900 tor, 30 agg, 1 core)"),
            "{text}"
        );
        assert!(
            text.contains("bisection      9 Tbit/s each way between 18000 hosts and the other 18000; oversubscription 2:1"),
            "{text}"
        );
        assert!(
            text.ends_with("one path between two hosts (no path diversity)"),
            "{text}"
        );
    }
}
