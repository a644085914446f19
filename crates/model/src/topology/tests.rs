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
