//! Slow, obviously correct references for the differential tests.
//!
//! [`max_min`] is textbook progressive filling, one flow at a time with no
//! multiplicity, no heap and no incremental state: every round recomputes
//! every link's fair share from scratch, freezes the flows of the most
//! constrained link (or capped flow), and repeats. O(F^2 * L).

/// Weighted max-min rates for flows given as (path, weight, cap) over
/// `capacity` (bits/s per link); subtracts their use from `capacity`.
pub fn max_min(flows: &[(Vec<u32>, f64, f64)], capacity: &mut [f64]) -> Vec<f64> {
    let n = flows.len();
    let mut rate = vec![0.0; n];
    let mut frozen = vec![false; n];
    loop {
        let active: Vec<usize> = (0..n).filter(|&f| !frozen[f]).collect();
        if active.is_empty() {
            break;
        }
        // Level at which each link saturates, given the frozen flows.
        let mut best = f64::INFINITY;
        for (l, &cap) in capacity.iter().enumerate() {
            let w: f64 = active
                .iter()
                .filter(|&&f| flows[f].0.contains(&(l as u32)))
                .map(|&f| flows[f].1)
                .sum();
            if w > 0.0 {
                best = best.min(cap.max(0.0) / w);
            }
        }
        for &f in &active {
            best = best.min(flows[f].2 / flows[f].1);
        }
        // Freeze every flow bound at this level: on a saturating link, or capped.
        let mut to_freeze = vec![];
        for &f in &active {
            let capped = flows[f].2 / flows[f].1 <= best * (1.0 + 1e-12);
            let on_tight = flows[f].0.iter().any(|&l| {
                let w: f64 = active
                    .iter()
                    .filter(|&&g| flows[g].0.contains(&l))
                    .map(|&g| flows[g].1)
                    .sum();
                capacity[l as usize].max(0.0) / w <= best * (1.0 + 1e-12)
            });
            if capped || on_tight {
                to_freeze.push(f);
            }
        }
        for &f in &to_freeze {
            let r = (flows[f].1 * best).min(flows[f].2);
            rate[f] = r;
            frozen[f] = true;
        }
        for &f in &to_freeze {
            for &l in &flows[f].0 {
                capacity[l as usize] = (capacity[l as usize] - rate[f]).max(0.0);
            }
        }
    }
    rate
}
