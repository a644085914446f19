//! Order statistics used by reports and by percentile-valued parameters.

/// The `q`-th percentile (0..=100) of `values` by the nearest-rank method
/// (the smallest value with at least q% of the values at or below it).
/// `None` for no values.
pub fn percentile(values: &[f64], q: f64) -> Option<f64> {
    if values.is_empty() {
        return None;
    }
    let mut v = values.to_vec();
    v.sort_by(f64::total_cmp);
    Some(percentile_sorted(&v, q))
}

/// [`percentile`] of values already sorted ascending (not empty).
pub fn percentile_sorted(sorted: &[f64], q: f64) -> f64 {
    let rank = ((q / 100.0) * sorted.len() as f64).ceil().max(1.0) as usize;
    sorted[rank.min(sorted.len()) - 1]
}

/// Keys within this many bytes count as equal when schedulers order flows
/// or coflows by bytes left: the integer-nanosecond engine rounds event
/// instants up, which moves bytes sent by a fraction of a byte per event.
pub const BYTES_TIE: f64 = 2.0;

/// Keys within this many nanoseconds count as equal when coflows are ordered
/// by a time computed from bytes left (Varys's Γ).
pub const NANOS_TIE: f64 = 1_000.0;

/// Sorts `items` by `key` ascending, treating keys within `tol` of the first
/// key of a run as equal: inside such a run items keep the order of `tie`
/// (a total order), so float noise cannot override a documented tie-break.
///
/// "Within `tol`" is not transitive, so the runs are anchored: the smallest
/// key starts a run that takes every key within `tol` of it, the smallest
/// key left after it starts the next, and so on. In a chain of near-ties
/// (a ~ b and b ~ c, but c more than `tol` above a) c starts a new run and
/// goes after a and b whatever its tie-break.
///
/// With `tol > 0` "within" includes float noise: a key at most `tol` plus
/// 1e-9 of the run's first key above it is in the run, so keys exactly
/// `tol` apart in exact arithmetic tie however the float arithmetic reached
/// them (Varys's Γ of 6,001,000 against 6,000,000 ns, computed from
/// proportional-group weights as 6,001,000.000000001). With `tol == 0`
/// only equal keys tie.
pub fn sort_with_ties<T, K: Ord>(
    items: &mut [T],
    key: impl Fn(&T) -> f64,
    tie: impl Fn(&T) -> K,
    tol: f64,
) {
    items.sort_by(|a, b| key(a).total_cmp(&key(b)).then_with(|| tie(a).cmp(&tie(b))));
    let mut i = 0;
    while i < items.len() {
        let j = tie_run_end(items, i, tol, &key);
        if j - i > 1 {
            items[i..j].sort_by_key(|x| tie(x));
        }
        i = j;
    }
}

/// How far above key `k0` a near-tie run that starts at it reaches, as
/// [`sort_with_ties`] cuts runs: `tol` plus 1e-9 of the key (0 when `tol`
/// is 0: only equal keys tie).
pub fn tie_reach(k0: f64, tol: f64) -> f64 {
    if tol > 0.0 {
        tol + 1e-9 * k0.abs()
    } else {
        0.0
    }
}

/// One past the last item of the near-tie run that starts at `i` in
/// `items` (sorted by `key`): the items whose keys are within
/// [`tie_reach`] of the run's first, as [`sort_with_ties`] cuts runs.
pub fn tie_run_end<T>(items: &[T], i: usize, tol: f64, key: impl Fn(&T) -> f64) -> usize {
    let k0 = key(&items[i]);
    let reach = tie_reach(k0, tol);
    let mut j = i + 1;
    while j < items.len() && key(&items[j]) - k0 <= reach {
        j += 1;
    }
    j
}

#[cfg(test)]
mod tests {
    #[test]
    fn near_ties_go_by_the_tie_break() {
        let mut v = vec![(10.4, 2), (10.6, 1), (3.0, 9), (20.0, 0)];
        super::sort_with_ties(&mut v, |x| x.0, |x| x.1, 2.0);
        assert_eq!(v.iter().map(|x| x.1).collect::<Vec<_>>(), vec![9, 1, 2, 0]);
    }

    #[test]
    fn a_chain_of_near_ties_is_cut_at_the_smallest_key() {
        // 0.0 ~ 0.6 ~ 1.2, but 1.2 is out of reach of 0.0: runs {0.0, 0.6}, {1.2}.
        let mut v = vec![(1.2, 1), (0.6, 2), (0.0, 3)];
        super::sort_with_ties(&mut v, |x| x.0, |x| x.1, 1.0);
        assert_eq!(v.iter().map(|x| x.1).collect::<Vec<_>>(), vec![2, 3, 1]);
    }

    #[test]
    fn a_key_tol_apart_up_to_float_noise_is_in_the_run() {
        // 6,001,000 ns is NANOS_TIE above 6,000,000 ns; float noise on top
        // must not cut it from the run.
        let mut v = vec![(6_001_000.000_000_001, 1), (6_000_000.0, 2)];
        super::sort_with_ties(&mut v, |x| x.0, |x| x.1, super::NANOS_TIE);
        assert_eq!(v.iter().map(|x| x.1).collect::<Vec<_>>(), vec![1, 2]);
        let mut v = vec![(6_001_000.01, 1), (6_000_000.0, 2)];
        super::sort_with_ties(&mut v, |x| x.0, |x| x.1, super::NANOS_TIE);
        assert_eq!(v.iter().map(|x| x.1).collect::<Vec<_>>(), vec![2, 1]);
    }

    #[test]
    fn nearest_rank() {
        let v = [5.0, 1.0, 3.0, 2.0, 4.0];
        assert_eq!(super::percentile(&v, 80.0), Some(4.0));
        assert_eq!(super::percentile(&v, 50.0), Some(3.0));
        assert_eq!(super::percentile(&v, 100.0), Some(5.0));
        assert_eq!(super::percentile(&v, 0.0), Some(1.0));
        assert_eq!(super::percentile(&[], 50.0), None);
    }
}
