//! A case: a fabric, host CPUs and coflows, how the reference reads a
//! flow's path from the model, how a case prints (as Rust code, ready to
//! paste into a regression test), and the random cases the property tests
//! draw.
//!
//! Instances are small (2-5 hosts on the big switch; 2-6 hosts picked from
//! a multi-hop fabric of up to 18, so that flows contend; 1-5 coflows of 1-5
//! flows) and built so that simultaneous events and exact ties are common:
//! sizes are mostly multiples of 125,000 bytes (1 ms at 1 Gbit/s) and
//! arrivals and delays mostly whole milliseconds, so arrivals coincide with
//! completions. About half of them use the workload model's release
//! features: barrier groups (a flow waits for a lower group), delays,
//! zero-byte flows, compute stages on host CPUs, and Starts-After /
//! Finishes-Before parents among earlier generated coflows.

use coflowkit_model::{
    compute, flow, BitsPerSec, CoflowId, CoflowSpec, DepKind, Dependency, Dur, Fabric, FatTreeSpec,
    FlowKey, FlowKind, LeafSpineSpec, Time, TreeSpec,
};
use proptest::prelude::*;
use std::fmt;

/// A random instance: a fabric, the CPU capacity of every host (if the
/// fabric has CPUs) and coflows.
#[derive(Clone)]
pub struct Case {
    /// The fabric.
    pub net: Net,
    /// Every host's CPU capacity (bits/s), if the fabric has CPUs.
    pub cpu: Option<f64>,
    /// The coflows.
    pub coflows: Vec<CoflowSpec>,
}

/// The fabric of a case, as the model's builders take it.
#[derive(Clone, Debug)]
pub enum Net {
    /// The big switch, with per-host capacities (bits/s).
    BigSwitch { up: Vec<f64>, down: Vec<f64> },
    /// Baraat's tree (no path diversity).
    Tree(TreeSpec),
    /// A leaf-spine and its ECMP seed.
    LeafSpine(LeafSpineSpec, u64),
    /// A k-ary fat-tree and its ECMP seed.
    FatTree(FatTreeSpec, u64),
}

impl Case {
    /// The model's fabric for this case, with CPUs if it has them.
    pub fn fabric(&self) -> Result<Fabric, String> {
        let e = |e: coflowkit_model::FabricError| e.to_string();
        let mut fabric = match &self.net {
            Net::BigSwitch { up, down } => {
                let up: Vec<BitsPerSec> = up.iter().map(|&c| BitsPerSec(c)).collect();
                let down: Vec<BitsPerSec> = down.iter().map(|&c| BitsPerSec(c)).collect();
                Fabric::with_capacities(&up, &down).map_err(e)?
            }
            Net::Tree(spec) => Fabric::tree(spec).map_err(e)?,
            Net::LeafSpine(spec, seed) => {
                Fabric::leaf_spine(spec).map_err(e)?.with_ecmp_seed(*seed)
            }
            Net::FatTree(spec, seed) => Fabric::fat_tree(spec).map_err(e)?.with_ecmp_seed(*seed),
        };
        if let Some(cpu) = self.cpu {
            fabric = fabric.with_cpus(BitsPerSec(cpu)).map_err(e)?;
        }
        Ok(fabric)
    }

    /// How many hosts the fabric has.
    pub fn n_hosts(&self) -> u32 {
        self.fabric().expect("a valid fabric").n_hosts()
    }

    /// How many flows its coflows have (what a reference policy sizes its
    /// per-flow state by).
    pub fn n_flows(&self) -> usize {
        self.coflows.iter().map(|c| c.flows.len()).sum()
    }
}

/// The links flow `index` of coflow `c` crosses: its CPU for a compute
/// stage, else the path the fabric's ECMP picks for its [`FlowKey`].
pub fn path_of(fabric: &Fabric, c: &CoflowSpec, index: usize) -> Vec<u32> {
    let f = &c.flows[index];
    match f.kind {
        FlowKind::Net => {
            let key = FlowKey {
                coflow: c.id.0,
                index: index as u32,
            };
            let choice = fabric.path_choice(f.src, f.dst, key);
            fabric
                .path(f.src, f.dst, choice)
                .iter()
                .map(|l| l.0)
                .collect()
        }
        FlowKind::Compute => vec![fabric.cpu(f.src).expect("a fabric with CPUs").0],
    }
}

/// Prints the case as Rust code, ready to paste into a regression test.
impl fmt::Debug for Case {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "Case {{")?;
        match &self.net {
            Net::BigSwitch { up, down } => writeln!(
                f,
                "    net: Net::BigSwitch {{ up: vec!{up:?}, down: vec!{down:?} }},"
            )?,
            net => writeln!(f, "    net: Net::{net:?},")?,
        }
        writeln!(f, "    cpu: {:?},", self.cpu)?;
        writeln!(f, "    coflows: vec![")?;
        for c in &self.coflows {
            let flows: Vec<String> = c
                .flows
                .iter()
                .map(|x| {
                    let mut t = match x.kind {
                        FlowKind::Net => format!("flow({}, {}, {})", x.src.0, x.dst.0, x.bytes.0),
                        FlowKind::Compute => format!("compute({}, {})", x.src.0, x.bytes.0),
                    };
                    if x.group != 0 {
                        t += &format!(".in_group({})", x.group);
                    }
                    if let Some(g) = x.after {
                        t += &format!(".after({g})");
                    }
                    if x.delay != Dur::ZERO {
                        t += &format!(".delayed(Dur({}))", x.delay.0);
                    }
                    if let Some(d) = x.deadline {
                        t += &format!(".with_deadline(Dur({}))", d.0);
                    }
                    if !x.size_known {
                        t += ".size_unknown()";
                    }
                    t
                })
                .collect();
            let spec = format!(
                "CoflowSpec::new({}, Time({}), vec![{}])",
                c.id.0,
                c.arrival.0,
                flows.join(", ")
            );
            if c.parents.is_empty() {
                writeln!(f, "        {spec},")?;
            } else {
                let parents: Vec<String> = c
                    .parents
                    .iter()
                    .map(|d| format!("({}, DepKind::{:?})", d.parent.0, d.kind))
                    .collect();
                writeln!(
                    f,
                    "        with_parents({spec}, &[{}]),",
                    parents.join(", ")
                )?;
            }
        }
        writeln!(f, "    ],")?;
        write!(f, "}}")
    }
}

/// One millisecond, ns.
pub const MS: u64 = 1_000_000;

/// A flow's bytes: mostly whole milliseconds at 1 Gbit/s, some any size, some zero.
fn size() -> impl Strategy<Value = u64> {
    prop_oneof![
        6 => (1u64..=8).prop_map(|k| k * 125_000),
        2 => 1u64..2_000_000,
        1 => Just(0),
    ]
}

/// Arrivals on a few shared instants (whole ms, where 125,000-byte flows at
/// 1 Gbit/s also finish), so simultaneous events are common.
fn arrival() -> impl Strategy<Value = u64> {
    prop_oneof![
        3 => Just(0),
        1 => Just(MS),
        1 => Just(4 * MS),
        2 => (0u64..=16).prop_map(|ms| ms * MS),
        1 => 0u64..16 * MS,
    ]
}

/// Delays: mostly none, else whole ms or anything up to 5 ms.
fn delay() -> impl Strategy<Value = u64> {
    prop_oneof![
        4 => Just(0),
        2 => (1u64..=4).prop_map(|ms| ms * MS),
        1 => 1u64..5 * MS,
    ]
}

/// A port or link capacity, bits/s.
fn capacity() -> impl Strategy<Value = f64> {
    prop_oneof![
        Just(1e9),
        Just(5e8),
        Just(2e9),
        Just(2.5e8),
        (1u32..=40).prop_map(|k| k as f64 * 1e8)
    ]
}

/// One generated flow: (src, dst, bytes, compute, group, after, delay).
type RawFlow = (u32, u32, u64, bool, u32, Option<u32>, u64);

/// A flow as generated: with `rich`, a compute stage (if the fabric has
/// CPUs), a barrier group 0-2, a wait for a lower group, a delay.
fn raw_flow(n: u32, rich: bool) -> BoxedStrategy<RawFlow> {
    if !rich {
        return (0..n, 0..n, size())
            .prop_map(|(s, d, b)| (s, d, b, false, 0, None, 0))
            .boxed();
    }
    (
        0..n,
        0..n,
        size(),
        prop::bool::weighted(0.25),
        0u32..3,
        prop::option::weighted(0.4, 0u32..2),
        delay(),
    )
        .boxed()
}

/// A coflow as generated: (id key, arrival, flows, parents as (index of an
/// earlier generated coflow, Starts-After?)).
type RawCoflow = (u64, u64, Vec<RawFlow>, Vec<(usize, bool)>);

/// A coflow over hosts `0..n`; with `rich`, up to 5 flows and parents.
fn raw_coflow(n: u32, rich: bool) -> impl Strategy<Value = RawCoflow> {
    let max_flows = if rich { 5 } else { 4 };
    (
        0u64..4,
        arrival(),
        prop::collection::vec(raw_flow(n, rich), 1..=max_flows),
        if rich {
            prop::collection::vec((0usize..5, prop::bool::ANY), 0..=2).boxed()
        } else {
            Just(vec![]).boxed()
        },
    )
}

/// The CPU capacity of every host: with `rich`, often one.
fn cpu(rich: bool) -> BoxedStrategy<Option<f64>> {
    if rich {
        prop::option::weighted(0.6, capacity()).boxed()
    } else {
        Just(None).boxed()
    }
}

/// A big switch of 2-5 hosts.
pub fn any_case() -> impl Strategy<Value = Case> {
    (2u32..=5, prop::bool::ANY)
        .prop_flat_map(|(n, rich)| {
            let caps = prop_oneof![
                2 => Just(None),
                1 => (prop::collection::vec(capacity(), n as usize), prop::collection::vec(capacity(), n as usize)).prop_map(Some),
            ];
            (Just(n), caps, cpu(rich), prop::collection::vec(raw_coflow(n, rich), 1..=5))
        })
        .prop_map(|(n, caps, cpu, coflows)| {
            let (up, down) = caps.unwrap_or_else(|| (vec![1e9; n as usize], vec![1e9; n as usize]));
            Case {
                net: Net::BigSwitch { up, down },
                cpu,
                coflows: build_coflows(coflows, cpu.is_some()),
            }
        })
}

/// A host NIC rate: mostly 1 Gbit/s, so that sizes in 125,000 bytes finish
/// on whole milliseconds.
fn host_rate() -> impl Strategy<Value = BitsPerSec> {
    prop_oneof![3 => Just(1e9), 1 => capacity()].prop_map(BitsPerSec)
}

/// An oversubscription ratio, below 1 (a fat uplink) up to 4.
fn oversub() -> impl Strategy<Value = f64> {
    prop_oneof![
        Just(1.0),
        Just(2.0),
        Just(0.5),
        Just(4.0),
        (1u32..=12).prop_map(|k| k as f64 / 4.0),
    ]
}

/// A small multi-hop fabric: a Baraat tree of 1-2 pods, 1-3 racks per pod
/// (at least 2 racks) and 1-3 hosts per rack with random ToR and aggregation
/// oversubscription; a leaf-spine of 2-3 leaves, 1-3 spines, 1-3 hosts per
/// leaf, with default or random spine links; or the 4-ary fat-tree. Leaf-spine
/// and fat-tree get a random ECMP seed.
fn any_net() -> impl Strategy<Value = Net> {
    prop_oneof![
        (
            1u32..=2,
            1u32..=3,
            1u32..=3,
            host_rate(),
            oversub(),
            oversub()
        )
            .prop_map(
                |(pods, racks, hosts, host_rate, tor_oversub, agg_oversub)| Net::Tree(TreeSpec {
                    pods,
                    racks_per_pod: if pods == 1 { racks.max(2) } else { racks },
                    hosts_per_rack: hosts,
                    host_rate,
                    tor_oversub,
                    agg_oversub,
                })
            ),
        (
            2u32..=3,
            1u32..=3,
            1u32..=3,
            host_rate(),
            prop::option::weighted(0.5, capacity().prop_map(BitsPerSec)),
            any::<u64>()
        )
            .prop_map(|(leaves, spines, hosts, host_rate, spine_rate, seed)| {
                Net::LeafSpine(
                    LeafSpineSpec {
                        leaves,
                        spines,
                        hosts_per_leaf: hosts,
                        host_rate,
                        spine_rate,
                    },
                    seed,
                )
            }),
        (host_rate(), any::<u64>())
            .prop_map(|(link_rate, seed)| Net::FatTree(FatTreeSpec { k: 4, link_rate }, seed)),
    ]
}

/// A multi-hop case: coflows among 2-6 hosts picked from the fabric's (so
/// that flows contend, on their NICs and inside the fabric), as [`any_case`]
/// generates them otherwise.
pub fn any_multihop_case() -> impl Strategy<Value = Case> {
    (any_net(), prop::bool::ANY, 2usize..=6)
        .prop_flat_map(|(net, rich, m)| {
            let n = Case {
                net: net.clone(),
                cpu: None,
                coflows: vec![],
            }
            .n_hosts();
            let m = m.min(n as usize);
            let hosts = prop::sample::subsequence((0..n).collect::<Vec<u32>>(), m);
            (
                Just(net),
                hosts,
                cpu(rich),
                prop::collection::vec(raw_coflow(m as u32, rich), 1..=5),
            )
        })
        .prop_map(|(net, hosts, cpu, mut coflows)| {
            for c in &mut coflows {
                for f in &mut c.2 {
                    f.0 = hosts[f.0 as usize];
                    f.1 = hosts[f.1 as usize];
                }
            }
            Case {
                net,
                cpu,
                coflows: build_coflows(coflows, cpu.is_some()),
            }
        })
}

/// Valid coflows from generated ones: ids unique but not in generation
/// order (so id tie-breaks matter); compute stages only with CPUs; a flow
/// waits only for a lower group that has flows (so groups form a DAG);
/// parents only among earlier generated coflows (so coflows form a DAG).
fn build_coflows(raw: Vec<RawCoflow>, cpus: bool) -> Vec<CoflowSpec> {
    let ids: Vec<u64> = raw
        .iter()
        .enumerate()
        .map(|(i, c)| c.0 * 10 + i as u64)
        .collect();
    raw.into_iter()
        .enumerate()
        .map(|(i, (_, at, fl, parents))| {
            let groups: Vec<u32> = fl.iter().map(|f| f.4).collect();
            let flows = fl
                .into_iter()
                .map(|(s, d, b, is_compute, group, after, delay)| {
                    let mut f = if is_compute && cpus {
                        compute(s, b)
                    } else {
                        flow(s, d, b)
                    };
                    f.group = group;
                    f.after = after.filter(|&g| g < group && groups.contains(&g));
                    f.delay = Dur(delay);
                    f
                })
                .collect();
            let mut c = CoflowSpec::new(ids[i], Time(at), flows);
            let mut seen = vec![];
            for (p, starts_after) in parents {
                if p < i && !seen.contains(&p) {
                    seen.push(p);
                    let kind = if starts_after {
                        DepKind::StartsAfter
                    } else {
                        DepKind::FinishesBefore
                    };
                    c.parents.push(Dependency {
                        parent: CoflowId(ids[p]),
                        kind,
                    });
                }
            }
            c
        })
        .collect()
}
