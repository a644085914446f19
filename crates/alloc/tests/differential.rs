//! The fast max-min solver against the slow reference on random instances.

use coflowkit_alloc::{reference, BipartiteMaxMin, MaxMin, WeightedBipartite};
use coflowkit_model::LinkId;
use proptest::prelude::*;

#[derive(Debug, Clone)]
struct Demand {
    path: Vec<u32>,
    weight: f64,
    count: u32,
    cap: f64,
}

fn instance() -> impl Strategy<Value = (Vec<f64>, Vec<Demand>)> {
    (1usize..7).prop_flat_map(|n_links| {
        let caps =
            prop::collection::vec(prop_oneof![Just(0.0), 1.0f64..100.0, Just(10.0)], n_links);
        let demand = (
            prop::collection::btree_set(0..n_links as u32, 1..=n_links.min(3)),
            prop_oneof![Just(1.0), Just(2.0), 0.5f64..4.0],
            1u32..4,
            prop_oneof![Just(f64::INFINITY), Just(f64::INFINITY), 0.0f64..30.0],
        )
            .prop_map(|(p, weight, count, cap)| Demand {
                path: p.into_iter().collect(),
                weight,
                count,
                cap,
            });
        (caps, prop::collection::vec(demand, 0..9))
    })
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-7 * a.abs().max(b.abs()).max(1.0)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(3000))]
    #[test]
    fn maxmin_matches_reference((caps, demands) in instance(), heap in any::<bool>()) {
        let mut fast = MaxMin::new(caps.len());
        if heap {
            fast.set_scan_limit(0);
        }
        let mut flat = vec![];
        for d in &demands {
            fast.push(d.path.iter().map(|&l| LinkId(l)), d.weight, d.count, d.cap);
            for _ in 0..d.count {
                flat.push((d.path.clone(), d.weight, d.cap));
            }
        }
        let mut res_fast = caps.clone();
        let rates = fast.solve(&mut res_fast).to_vec();
        let mut res_ref = caps.clone();
        let want = reference::max_min(&flat, &mut res_ref);
        let mut i = 0;
        for (d, r) in demands.iter().zip(&rates) {
            for _ in 0..d.count {
                prop_assert!(close(*r, want[i]), "demand {:?}: fast {} reference {}", d, r, want[i]);
                i += 1;
            }
        }
        for (a, b) in res_fast.iter().zip(&res_ref) {
            prop_assert!(close(*a, *b), "residual fast {} reference {}", a, b);
        }
    }
}

/// Each flow's rate (the lower of its two ports' levels `rl`, `cl`) against
/// the reference's on the same big switch.
fn bipartite_rates_match_reference(
    row_cap: &[f64],
    col_cap: &[f64],
    flows: &[(usize, usize)],
    rl: &[f64],
    cl: &[f64],
) -> Result<(), TestCaseError> {
    let nr = row_cap.len();
    let mut caps: Vec<f64> = row_cap.iter().chain(col_cap).copied().collect();
    let flat: Vec<(Vec<u32>, f64, f64)> = flows
        .iter()
        .map(|&(r, c)| (vec![r as u32, (nr + c) as u32], 1.0, f64::INFINITY))
        .collect();
    let want = reference::max_min(&flat, &mut caps);
    for (&(r, c), w) in flows.iter().zip(&want) {
        let got = rl[r].min(cl[c]);
        prop_assert!(
            close(got, *w),
            "flow {}->{}: fast {} reference {}",
            r,
            c,
            got,
            w
        );
    }
    Ok(())
}

fn bipartite_instance() -> impl Strategy<Value = (Vec<f64>, Vec<f64>, Vec<(usize, usize)>)> {
    (1usize..6, 1usize..6).prop_flat_map(|(nr, nc)| {
        (
            prop::collection::vec(prop_oneof![Just(0.0), 1.0f64..100.0, Just(10.0)], nr),
            prop::collection::vec(prop_oneof![Just(0.0), 1.0f64..100.0, Just(10.0)], nc),
            prop::collection::vec((0..nr, 0..nc), 0..12),
        )
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(3000))]
    #[test]
    fn bipartite_matches_reference((row_cap, col_cap, flows) in bipartite_instance(), removed in 0usize..3) {
        let (nr, nc) = (row_cap.len(), col_cap.len());
        let mut fast = BipartiteMaxMin::new(nr, nc);
        for &(r, c) in &flows {
            fast.add(r, c);
        }
        // Remove a few again, as flows finish.
        let kept = &flows[removed.min(flows.len())..];
        for &(r, c) in &flows[..removed.min(flows.len())] {
            fast.remove(r, c);
        }
        let (mut rl, mut cl) = (vec![], vec![]);
        fast.solve(&row_cap, &col_cap, &mut rl, &mut cl);
        bipartite_rates_match_reference(&row_cap, &col_cap, kept, &rl, &cl)?;
        // What each port has left: its capacity less its flows' rates.
        let mut want: Vec<f64> = row_cap.iter().chain(&col_cap).copied().collect();
        for &(r, c) in kept {
            let rate = rl[r].min(cl[c]);
            want[r] -= rate;
            want[nr + c] -= rate;
        }
        for (p, (got, want)) in fast.left().zip(want).enumerate() {
            prop_assert!(close(got, want.max(0.0)), "port {} has {} left, not {}", p, got, want);
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(3000))]
    #[test]
    fn weighted_bipartite_matches_reference(
        (row_cap, col_cap, flows) in bipartite_instance(),
        weights in prop::collection::vec(prop_oneof![Just(1.0), Just(3.0), 0.25f64..5.0], 12),
        removed in 0usize..3,
        grow in any::<bool>(),
    ) {
        let (nr, nc) = (row_cap.len(), col_cap.len());
        // Start small and grow (as a coflow's senders and receivers appear).
        let mut fast = if grow { WeightedBipartite::new(1, 1) } else { WeightedBipartite::new(nr, nc) };
        for (i, &(r, c)) in flows.iter().enumerate() {
            fast.grow(r + 1, c + 1);
            fast.add(r, c, 1, weights[i]);
        }
        fast.grow(nr, nc);
        let n_gone = removed.min(flows.len());
        for (i, &(r, c)) in flows[..n_gone].iter().enumerate() {
            fast.add(r, c, -1, -weights[i]);
        }
        let (mut rl, mut cl, mut ru, mut cu) = (vec![], vec![], vec![], vec![]);
        fast.solve(&row_cap, &col_cap, &mut rl, &mut cl, &mut ru, &mut cu);
        let mut caps: Vec<f64> = row_cap.iter().chain(&col_cap).copied().collect();
        let flat: Vec<(Vec<u32>, f64, f64)> = flows[n_gone..]
            .iter()
            .enumerate()
            .map(|(i, &(r, c))| (vec![r as u32, (nr + c) as u32], weights[n_gone + i], f64::INFINITY))
            .collect();
        let want = reference::max_min(&flat, &mut caps);
        let (mut row_sum, mut col_sum) = (vec![0.0; nr], vec![0.0; nc]);
        for (i, (&(r, c), w)) in flows[n_gone..].iter().zip(&want).enumerate() {
            let got = weights[n_gone + i] * rl[r].min(cl[c]);
            prop_assert!(close(got, *w), "flow {}->{}: fast {} reference {}", r, c, got, w);
            row_sum[r] += got;
            col_sum[c] += got;
        }
        for r in 0..nr {
            prop_assert!(close(ru[r], row_sum[r]), "row {} gives {} not {}", r, ru[r], row_sum[r]);
        }
        for c in 0..nc {
            prop_assert!(close(cu[c], col_sum[c]), "column {} gives {} not {}", c, cu[c], col_sum[c]);
        }
    }
}

/// An event: flows added (row, column), and live flows finished (by index,
/// modulo how many are live).
type Event = (Vec<(usize, usize)>, Vec<usize>);

/// A sequence of events on a small big switch: each one adds some flows
/// (row, column) and finishes some of the live ones (by index, modulo how
/// many are live), as arrivals and completions do.
fn bipartite_events() -> impl Strategy<Value = (Vec<f64>, Vec<f64>, Vec<Event>)> {
    (1usize..6, 1usize..6).prop_flat_map(|(nr, nc)| {
        let event = (
            prop::collection::vec((0..nr, 0..nc), 0..4),
            prop::collection::vec(0usize..64, 0..3),
        );
        (
            prop::collection::vec(prop_oneof![Just(0.0), 1.0f64..100.0, Just(10.0)], nr),
            prop::collection::vec(prop_oneof![Just(0.0), 1.0f64..100.0, Just(10.0)], nc),
            prop::collection::vec(event, 1..12),
        )
    })
}

/// Per event, a few capacities moved (a port of either side, by index modulo
/// their number; the new capacity: 0, a finite one, or 10), as a
/// strict-priority class sees what the classes before it left.
fn recaps() -> impl Strategy<Value = Vec<Vec<(usize, f64)>>> {
    prop::collection::vec(
        prop::collection::vec(
            (
                0usize..64,
                prop_oneof![Just(0.0), 1.0f64..100.0, Just(10.0)],
            ),
            0..3,
        ),
        12,
    )
}

/// One event of the restart tests: `added` flows start and `finished`
/// (indices into `live`, modulo its length) end, `fast` solves from its last
/// solve, and its levels and capacity left must be a solve from scratch's,
/// on a fresh matrix with the same flows and capacities, to the bit.
#[allow(clippy::too_many_arguments)]
fn restart_step(
    fast: &mut BipartiteMaxMin,
    live: &mut Vec<(usize, usize)>,
    added: &[(usize, usize)],
    finished: &[usize],
    row_cap: &[f64],
    col_cap: &[f64],
    rl: &mut Vec<f64>,
    cl: &mut Vec<f64>,
) -> Result<(), TestCaseError> {
    for &(r, c) in added {
        fast.add(r, c);
        live.push((r, c));
    }
    for &i in finished {
        if !live.is_empty() {
            let (r, c) = live.swap_remove(i % live.len());
            fast.remove(r, c);
        }
    }
    fast.solve(row_cap, col_cap, rl, cl);
    let mut scratch = BipartiteMaxMin::new(row_cap.len(), col_cap.len());
    for &(r, c) in live.iter() {
        scratch.add(r, c);
    }
    let (mut want_rl, mut want_cl) = (vec![], vec![]);
    scratch.solve(row_cap, col_cap, &mut want_rl, &mut want_cl);
    for (a, b) in rl.iter().zip(&want_rl).chain(cl.iter().zip(&want_cl)) {
        prop_assert_eq!(
            a.to_bits(),
            b.to_bits(),
            "levels {:?} {:?} against {:?} {:?}",
            rl,
            cl,
            want_rl,
            want_cl
        );
    }
    for (a, b) in fast.left().zip(scratch.left()) {
        prop_assert_eq!(a.to_bits(), b.to_bits(), "capacity left after a restart");
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(3000))]
    /// A solve that restarts from the last one gives, after every event,
    /// the levels of a solve from scratch on a fresh matrix with the same
    /// flows and capacities, to the bit, and rates that match the reference.
    #[test]
    fn bipartite_restart_matches_scratch(
        (mut row_cap, col_cap, events) in bipartite_events(),
        recap in 0usize..16,
    ) {
        let (nr, nc) = (row_cap.len(), col_cap.len());
        let mut fast = BipartiteMaxMin::new(nr, nc);
        let mut live: Vec<(usize, usize)> = vec![];
        let (mut rl, mut cl) = (vec![], vec![]);
        for (i, (added, finished)) in events.iter().enumerate() {
            // Once in a while the capacities change too (a solve from scratch).
            if i == recap {
                row_cap[0] /= 2.0;
            }
            restart_step(&mut fast, &mut live, added, finished, &row_cap, &col_cap, &mut rl, &mut cl)?;
            bipartite_rates_match_reference(&row_cap, &col_cap, &live, &rl, &cl)?;
        }
    }

    /// The same with capacities that move at every event, a few ports at a
    /// time (up, down, to 0 and back, as a strict-priority class sees what
    /// the classes before it left): the restart walks them like ports whose
    /// flows changed, and the levels and capacity left are a solve from
    /// scratch's to the bit.
    #[test]
    fn bipartite_restart_on_new_capacities_matches_scratch(
        (mut row_cap, mut col_cap, events) in bipartite_events(),
        recaps in recaps(),
    ) {
        let (nr, nc) = (row_cap.len(), col_cap.len());
        let mut fast = BipartiteMaxMin::new(nr, nc);
        let mut live: Vec<(usize, usize)> = vec![];
        let (mut rl, mut cl) = (vec![], vec![]);
        for (i, (added, finished)) in events.iter().enumerate() {
            for &(p, c) in &recaps[i] {
                let p = p % (nr + nc);
                if p < nr {
                    row_cap[p] = c;
                } else {
                    col_cap[p - nr] = c;
                }
            }
            restart_step(&mut fast, &mut live, added, finished, &row_cap, &col_cap, &mut rl, &mut cl)?;
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(3000))]
    /// A solve that `WeightedBipartite::keeps` under new capacities gives
    /// the same result bit for bit as solving again under them; the new
    /// capacities move each port to a point between what it gives away and
    /// its capacity (or below it), or by a fraction of its capacity.
    #[test]
    fn weighted_bipartite_keeps_the_result(
        (row_cap, col_cap, flows) in bipartite_instance(),
        weights in prop::collection::vec(prop_oneof![Just(1.0), Just(3.0), 0.25f64..5.0], 12),
        moves in prop::collection::vec((0u8..4, 0.0f64..1.2), 10),
    ) {
        let (nr, nc) = (row_cap.len(), col_cap.len());
        let mut fast = WeightedBipartite::new(nr, nc);
        for (i, &(r, c)) in flows.iter().enumerate() {
            fast.add(r, c, 1, weights[i]);
        }
        let (mut rl, mut cl, mut ru, mut cu) = (vec![], vec![], vec![], vec![]);
        fast.solve(&row_cap, &col_cap, &mut rl, &mut cl, &mut ru, &mut cu);
        // Each port: kept (0), between its use and its capacity, or a bit
        // below its use (1), up or down by a fraction of its capacity (2, 3).
        let moved = |caps: &[f64], used: &[f64], at: usize| -> Vec<f64> {
            caps.iter()
                .enumerate()
                .map(|(p, &x)| {
                    let (kind, u) = moves[(at + p) % moves.len()];
                    match kind {
                        1 => x - u * (x - used[p]),
                        2 => x * (1.0 + u),
                        3 => x * (1.0 - u / 1.2),
                        _ => x,
                    }
                })
                .collect()
        };
        let (row_new, col_new) = (moved(&row_cap, &ru, 0), moved(&col_cap, &cu, nr));
        if WeightedBipartite::keeps(&row_new, &row_cap, &rl, &ru)
            && WeightedBipartite::keeps(&col_new, &col_cap, &cl, &cu)
        {
            let (mut rl2, mut cl2, mut ru2, mut cu2) = (vec![], vec![], vec![], vec![]);
            fast.solve(&row_new, &col_new, &mut rl2, &mut cl2, &mut ru2, &mut cu2);
            let bits = |v: &[f64]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
            prop_assert_eq!(bits(&rl2), bits(&rl));
            prop_assert_eq!(bits(&cl2), bits(&cl));
            prop_assert_eq!(bits(&ru2), bits(&ru));
            prop_assert_eq!(bits(&cu2), bits(&cu));
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(3000))]
    /// `WeightedBipartite` solved after every event (flows added and
    /// finished, a few capacities moved, to 0 and back) sums again only the
    /// rows and columns that moved when the ports in play stay; its result
    /// must be that of a fresh matrix given the same history of additions
    /// (so the same cell weights) and capacities, to the bit.
    #[test]
    fn weighted_bipartite_kept_sums_match_a_fresh_solve(
        (mut row_cap, mut col_cap, events) in bipartite_events(),
        weights in prop::collection::vec(prop_oneof![Just(1.0), Just(3.0), 0.25f64..5.0], 16),
        recaps in recaps(),
    ) {
        let (nr, nc) = (row_cap.len(), col_cap.len());
        let mut fast = WeightedBipartite::new(nr, nc);
        let mut live: Vec<(usize, usize, f64)> = vec![];
        let mut history: Vec<(usize, usize, i64, f64)> = vec![];
        let (mut rl, mut cl, mut ru, mut cu) = (vec![], vec![], vec![], vec![]);
        let mut k = 0;
        for (i, (added, finished)) in events.iter().enumerate() {
            for &(r, c) in added {
                let w = weights[k % weights.len()];
                k += 1;
                fast.add(r, c, 1, w);
                history.push((r, c, 1, w));
                live.push((r, c, w));
            }
            for &j in finished {
                if !live.is_empty() {
                    let (r, c, w) = live.swap_remove(j % live.len());
                    fast.add(r, c, -1, -w);
                    history.push((r, c, -1, -w));
                }
            }
            for &(p, x) in &recaps[i] {
                let p = p % (nr + nc);
                if p < nr {
                    row_cap[p] = x;
                } else {
                    col_cap[p - nr] = x;
                }
            }
            fast.solve(&row_cap, &col_cap, &mut rl, &mut cl, &mut ru, &mut cu);
            let mut scratch = WeightedBipartite::new(nr, nc);
            for &(r, c, n, w) in &history {
                scratch.add(r, c, n, w);
            }
            let (mut rl2, mut cl2, mut ru2, mut cu2) = (vec![], vec![], vec![], vec![]);
            scratch.solve(&row_cap, &col_cap, &mut rl2, &mut cl2, &mut ru2, &mut cu2);
            let bits = |v: &[f64]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
            prop_assert_eq!(bits(&rl), bits(&rl2), "row levels after event {}", i);
            prop_assert_eq!(bits(&cl), bits(&cl2), "column levels after event {}", i);
            prop_assert_eq!(bits(&ru), bits(&ru2), "row uses after event {}", i);
            prop_assert_eq!(bits(&cu), bits(&cu2), "column uses after event {}", i);
        }
    }
}
