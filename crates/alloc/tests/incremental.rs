//! The incremental max-min solver against a from-scratch reference after every
//! change of random sequences of arrivals and departures.

use coflowkit_alloc::{reference, IncrementalMaxMin};
use coflowkit_model::LinkId;
use proptest::prelude::*;

#[derive(Debug, Clone)]
struct Case {
    caps: Vec<f64>,
    paths: Vec<(Vec<u32>, f64, u64)>,
    // (demand, new count, new class) steps, solved after each batch.
    batches: Vec<Vec<(usize, u32, u64)>>,
}

fn case(n_classes: u64) -> impl Strategy<Value = Case> {
    (2usize..10, 1usize..10).prop_flat_map(move |(n_links, n_demands)| {
        let caps =
            prop::collection::vec(prop_oneof![Just(10.0), 1.0f64..100.0, Just(5.0)], n_links);
        let path = (
            prop::collection::btree_set(0..n_links as u32, 1..=n_links.min(4)),
            prop_oneof![Just(1.0), Just(1.0), Just(2.0), 0.5f64..4.0],
            0..n_classes,
        )
            .prop_map(|(p, w, c)| (p.into_iter().collect::<Vec<u32>>(), w, c));
        let step = (0..n_demands, prop_oneof![Just(0u32), 1u32..4], 0..n_classes);
        let batch = prop::collection::vec(step, 1..4);
        (
            caps,
            prop::collection::vec(path, n_demands),
            prop::collection::vec(batch, 1..25),
        )
            .prop_map(|(caps, paths, batches)| Case {
                caps,
                paths,
                batches,
            })
    })
}

fn check(case: &Case) -> Result<(), TestCaseError> {
    let mut inc = IncrementalMaxMin::new(case.caps.clone());
    for (d, (p, w, c)) in case.paths.iter().enumerate() {
        inc.declare_in(d as u32, p.iter().map(|&l| LinkId(l)), *w, *c);
    }
    let mut counts = vec![0u32; case.paths.len()];
    let mut classes: Vec<u64> = case.paths.iter().map(|p| p.2).collect();
    let mut changed = vec![];
    for batch in &case.batches {
        let before: Vec<f64> = (0..counts.len()).map(|d| inc.rate(d as u32)).collect();
        for &(d, c, k) in batch {
            counts[d] = c;
            inc.set_count(d as u32, c);
            if k % 3 == 0 {
                classes[d] = k;
                inc.set_class(d as u32, k);
            }
        }
        changed.clear();
        inc.solve(&mut changed);
        // Reference: every flow separately, class by class on what the
        // classes before left.
        let mut cap = case.caps.clone();
        let mut order: Vec<u64> = classes.clone();
        order.sort_unstable();
        order.dedup();
        for class in order {
            let mut flows = vec![];
            let mut owner = vec![];
            for (d, (p, w, _)) in case.paths.iter().enumerate() {
                if classes[d] != class {
                    continue;
                }
                for _ in 0..counts[d] {
                    flows.push((p.clone(), *w, f64::INFINITY));
                    owner.push(d);
                }
            }
            let want = reference::max_min(&flows, &mut cap);
            for (i, &d) in owner.iter().enumerate() {
                let got = inc.rate(d as u32);
                prop_assert!(
                    (got - want[i]).abs() <= 1e-6 * want[i].abs().max(1.0),
                    "demand {} (class {}) rate {} want {}",
                    d,
                    class,
                    got,
                    want[i]
                );
            }
        }
        // `changed` lists exactly the active demands whose rate moved.
        for d in 0..counts.len() {
            let moved = counts[d] > 0
                && (inc.rate(d as u32) - before[d]).abs() > 1e-6 * before[d].abs().max(1.0);
            if moved {
                prop_assert!(
                    changed.contains(&(d as u32)),
                    "demand {} changed but not reported",
                    d
                );
            }
        }
    }
    Ok(())
}

/// Tree-shaped cases, where the incremental solver frees only some of a
/// link's demands: racks of hosts (up and down links of capacity 1, links
/// 0..4h) under oversubscribed ToR links (up and down per rack, after the
/// host links), many demands per link, each in-rack (2 links) or across
/// racks (4 links), with changes in batches.
fn tree_case(n_classes: u64) -> impl Strategy<Value = Case> {
    (2usize..4, 2usize..5, 8usize..40).prop_flat_map(move |(racks, hosts, n_demands)| {
        let n_hosts = racks * hosts;
        let tor = prop_oneof![Just(1.0), 0.5f64..2.0];
        let caps = prop::collection::vec(tor, racks).prop_map(move |tor: Vec<f64>| {
            let mut caps = vec![1.0; 2 * n_hosts];
            for t in tor {
                caps.extend([t, t]);
            }
            caps
        });
        let path = (
            0..n_hosts,
            0..n_hosts,
            prop_oneof![Just(1.0), Just(1.0), 0.5f64..3.0],
            0..n_classes,
        )
            .prop_map(move |(s, d, w, c)| {
                let d = if d == s { (s + 1) % n_hosts } else { d };
                let (rs, rd) = (s / hosts, d / hosts);
                let mut p = vec![2 * s as u32];
                if rs != rd {
                    p.push((2 * n_hosts + 2 * rs) as u32);
                    p.push((2 * n_hosts + 2 * rd + 1) as u32);
                }
                p.push(2 * d as u32 + 1);
                (p, w, c)
            });
        let step = (0..n_demands, prop_oneof![Just(0u32), 1u32..4], 0..n_classes);
        let batch = prop::collection::vec(step, 1..4);
        (
            caps,
            prop::collection::vec(path, n_demands),
            // Most demands start together, then change a few at a time.
            prop::collection::vec(batch, 1..30),
        )
            .prop_map(|(caps, paths, mut batches)| {
                let all = (0..paths.len()).map(|d| (d, 1 + (d % 3) as u32, paths[d].2));
                batches.insert(0, all.collect());
                Case {
                    caps,
                    paths,
                    batches,
                }
            })
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(400))]
    #[test]
    fn incremental_on_trees_matches_reference(c in tree_case(1)) {
        check(&c)?;
    }

    #[test]
    fn incremental_on_trees_with_priority_classes_matches_reference(c in tree_case(3)) {
        check(&c)?;
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(3000))]
    #[test]
    fn incremental_matches_reference(c in case(1)) {
        check(&c)?;
    }

    #[test]
    fn incremental_with_priority_classes_matches_reference(c in case(4)) {
        check(&c)?;
    }
}

/// A tree where a change in one rack leaves the other rack's rates alone and
/// the solver does not look there.
#[test]
fn change_in_one_rack_stays_local() {
    // Links: rack 0 hosts 0,1 up/down = 0..4, rack 1 hosts 2,3 up/down = 4..8.
    let mut inc = IncrementalMaxMin::new(vec![1.0; 8]);
    // Demand 0: host 0 -> host 1 (rack 0); demand 1: host 2 -> host 3 (rack 1).
    inc.declare(0, [LinkId(0), LinkId(3)], 1.0);
    inc.declare(1, [LinkId(4), LinkId(7)], 1.0);
    inc.set_count(0, 2);
    inc.set_count(1, 4);
    let mut ch = vec![];
    inc.solve(&mut ch);
    assert_eq!(ch, vec![0, 1]);
    assert_eq!((inc.rate(0), inc.rate(1)), (0.5, 0.25));
    ch.clear();
    inc.set_count(0, 1);
    inc.solve(&mut ch);
    assert_eq!(ch, vec![0]);
    assert_eq!((inc.rate(0), inc.rate(1)), (1.0, 0.25));
}
