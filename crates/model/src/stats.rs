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

#[cfg(test)]
mod tests {
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
