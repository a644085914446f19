//! Karuna's and PIAS's thresholds derived from a flow-size distribution and
//! a load: the threshold choice as an optimization of the mean FCT, solved
//! numerically.
//!
//! Source: PIAS (Bai et al., NSDI 2015, 4.2) formulates the choice of its
//! demotion thresholds as minimizing the average FCT of a queueing model
//! given the flow-size distribution and the load, and solves it numerically;
//! Karuna (SIGCOMM 2016) does the same for its split and sieve thresholds.
//! The model below is our reading of that method (their solver and exact
//! formulas are not reproduced; the result is compared with their published
//! presets in `docs/reproductions/karuna.md`):
//!
//! One bottleneck of capacity 1, flows arriving as a Poisson process of
//! rate `lambda = load / E[S]`, `K = n + 1` strict-priority levels with
//! thresholds `0 = a_0 < a_1 < .. < a_n < a_K = inf`, first come first
//! served inside a level (the conservative end of DCTCP's sharing). Let
//! `F` be the size CDF, `A(t) = E[S; S <= t]`, `B(t) = E[S^2; S <= t]`.
//!
//! * Sieve (PIAS; Karuna type 3: demotion by bytes sent): a flow of size
//!   `x` in `(a_{m-1}, a_m]` ends in level `m`. What competes with it there
//!   is every flow's work below `a_m`: the truncated load `s_m = lambda
//!   E[min(S, a_m)]` and second moment `M_m = E[min(S, a_m)^2]`; what
//!   preempts it is the work below `a_{m-1}`. Kleinrock's foreground-
//!   background result with levels (Queueing Systems vol. 2, 4.7) gives
//!   `T(x) = lambda M_m / (2 (1 - s_{m-1}) (1 - s_m)) + x / (1 - s_{m-1})`.
//! * Split (Karuna type 2: by known size): the levels are the classes of an
//!   M/G/1 preemptive priority queue, class `m` the flows of size in
//!   `(a_{m-1}, a_m]`: `s_m = lambda A(a_m)`, `M_m = B(a_m)`, the same
//!   formula (Cobham's, preemptive-resume).
//!
//! The mean FCT `sum_m integral over (a_{m-1}, a_m] of T(x) dF(x)` is
//! minimized over thresholds placed at candidate sizes (the distribution's
//! breakpoints and 100 log-spaced sizes per decade between them; at most
//! 1,024, evenly spread, for a large sample). A level's cost depends only
//! on its two boundaries, so the best placement is a shortest path through
//! the candidates (dynamic programming, `n * C^2` level costs): the exact
//! optimum over the candidates, checked against exhaustive search in the
//! tests.
//! Within a segment of the CDF the probability is spread uniformly (the
//! CDFs are piecewise linear); an atom (a vertical step) is a point mass.

/// How flows meet the thresholds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ThresholdKind {
    /// Demotion by bytes sent (PIAS; Karuna's sieve for type 3).
    Sieve,
    /// Placement by total size (Karuna's split for type 2).
    Split,
}

/// Candidate boundaries with prefix moments: `x` (bytes), `F(x)`,
/// `A(x) = E[S; S <= x]`, `B(x) = E[S^2; S <= x]`.
struct Grid {
    x: Vec<f64>,
    f: Vec<f64>,
    a: Vec<f64>,
    b: Vec<f64>,
}

impl Grid {
    /// From CDF points `(bytes, F)`: both non-decreasing, F from 0 to 1.
    fn new(points: &[(f64, f64)]) -> Grid {
        let mut g = Grid {
            x: vec![0.0],
            f: vec![0.0],
            a: vec![0.0],
            b: vec![0.0],
        };
        let push = |g: &mut Grid, x: f64, f: f64, lo: f64, hi: f64, p: f64| {
            // Mass p spread uniformly on [lo, hi].
            let (a, b) = (*g.a.last().unwrap(), *g.b.last().unwrap());
            g.a.push(a + p * (lo + hi) / 2.0);
            g.b.push(b + p * (lo * lo + lo * hi + hi * hi) / 3.0);
            g.x.push(x);
            g.f.push(f);
        };
        let mut prev = (points[0].0, 0.0);
        // Mass at or below the first point is an atom there.
        if points[0].1 > 0.0 {
            push(
                &mut g,
                points[0].0,
                points[0].1,
                points[0].0,
                points[0].0,
                points[0].1,
            );
            prev = points[0];
        }
        for &(x, f) in &points[1..] {
            let (x0, f0) = prev;
            if x <= x0 {
                if f > f0 {
                    push(&mut g, x0, f, x0, x0, f - f0);
                }
            } else {
                // 100 log-spaced steps per decade.
                let steps = (((x / x0.max(1.0)).log10() * 100.0).ceil() as usize).max(1);
                let (mut lo, mut flo) = (x0, f0);
                for k in 1..=steps {
                    let hi = if k == steps {
                        x
                    } else {
                        x0.max(1.0) * (x / x0.max(1.0)).powf(k as f64 / steps as f64)
                    };
                    let fhi = f0 + (f - f0) * (hi - x0) / (x - x0);
                    push(&mut g, hi, fhi, lo, hi, fhi - flo);
                    (lo, flo) = (hi, fhi);
                }
            }
            prev = (x, f);
        }
        // Keep one candidate per size (the top of an atom), and none where
        // no probability was added (a threshold there equals the one below).
        let mut keep = Grid {
            x: vec![],
            f: vec![],
            a: vec![],
            b: vec![],
        };
        for i in 0..g.x.len() {
            if i + 1 < g.x.len() && g.x[i + 1] <= g.x[i] {
                continue;
            }
            if i > 0 && keep.f.last().is_some_and(|&f| g.f[i] <= f) {
                continue;
            }
            keep.x.push(g.x[i]);
            keep.f.push(g.f[i]);
            keep.a.push(g.a[i]);
            keep.b.push(g.b[i]);
        }
        keep
    }

    fn last(&self) -> usize {
        self.x.len() - 1
    }
}

/// The load below index `i` and the second moment that meets a flow in a
/// level whose upper boundary is `i` (`top`: the last level, unbounded).
fn load_m2(g: &Grid, kind: ThresholdKind, lambda: f64, i: usize, top: bool) -> (f64, f64) {
    let n = g.last();
    if top {
        return (lambda * g.a[n], g.b[n]);
    }
    match kind {
        ThresholdKind::Sieve => (
            lambda * (g.a[i] + g.x[i] * (1.0 - g.f[i])),
            g.b[i] + g.x[i] * g.x[i] * (1.0 - g.f[i]),
        ),
        ThresholdKind::Split => (lambda * g.a[i], g.b[i]),
    }
}

/// The model's cost of one level between grid indices `lo` and `hi`: its
/// flows' summed `T(x)` (it depends on its two boundaries only).
fn level_cost(g: &Grid, kind: ThresholdKind, lambda: f64, lo: usize, hi: usize, top: bool) -> f64 {
    let s_lo = if lo == 0 {
        0.0
    } else {
        load_m2(g, kind, lambda, lo, false).0
    };
    let (s_hi, mm) = load_m2(g, kind, lambda, hi, top);
    let (d_lo, d_hi) = (1.0 - s_lo, 1.0 - s_hi);
    if d_hi <= 0.0 || d_lo <= 0.0 {
        return f64::INFINITY;
    }
    let p = g.f[hi] - g.f[lo];
    let work = g.a[hi] - g.a[lo];
    p * lambda * mm / (2.0 * d_lo * d_hi) + work / d_lo
}

/// The model's mean FCT (in units of bytes at capacity 1) with thresholds
/// at grid indices `idx` (ascending, inside `1..last`).
fn mean_fct(g: &Grid, kind: ThresholdKind, lambda: f64, idx: &[usize]) -> f64 {
    let n = g.last();
    let mut total = 0.0;
    let mut lo = 0usize;
    for m in 0..=idx.len() {
        let top = m == idx.len();
        let hi = if top { n } else { idx[m] };
        total += level_cost(g, kind, lambda, lo, hi, top);
        lo = hi;
    }
    total
}

/// At most this many candidate sizes (evenly spaced by index among all):
/// the search is quadratic in them.
const MAX_CANDIDATES: usize = 1024;

/// `n` thresholds (bytes, strictly ascending) minimizing the model's mean
/// FCT for flow sizes with CDF `points` (`(bytes, F)`, both non-decreasing,
/// F ending at 1) at `load` (0 < load < 1); see the module doc. Fewer than
/// `n` if the distribution has fewer distinct sizes to put them at.
pub fn derive_thresholds(
    points: &[(f64, f64)],
    load: f64,
    n: usize,
    kind: ThresholdKind,
) -> Result<Vec<f64>, String> {
    if !(load > 0.0 && load < 1.0) {
        return Err(format!("load must be in (0, 1), got {load}"));
    }
    if points.is_empty() {
        return Err("the size distribution has no points".into());
    }
    if points
        .windows(2)
        .any(|w| w[1].0 < w[0].0 || w[1].1 < w[0].1)
        || points.iter().any(|p| !(p.0 >= 0.0 && p.0.is_finite()))
        || (points[points.len() - 1].1 - 1.0).abs() > 1e-9
    {
        return Err(
            "the size distribution must be (bytes, F) non-decreasing with F ending at 1".into(),
        );
    }
    let g = Grid::new(points);
    let last = g.last();
    if g.a[last] <= 0.0 {
        return Err("the size distribution has mean 0".into());
    }
    // Candidates: 1..last (a threshold at the largest size would leave the
    // last level empty).
    let n = n.min(last.saturating_sub(1));
    if n == 0 {
        return Ok(vec![]);
    }
    let lambda = load / g.a[last];
    // Candidates: grid indices 1..last, thinned to MAX_CANDIDATES.
    let all = last - 1;
    let cands: Vec<usize> = if all <= MAX_CANDIDATES {
        (1..last).collect()
    } else {
        let mut c: Vec<usize> = (0..MAX_CANDIDATES)
            .map(|k| 1 + k * (all - 1) / (MAX_CANDIDATES - 1))
            .collect();
        c.dedup();
        c
    };
    let c = cands.len();
    let n = n.min(c);
    // Each level's cost depends on its two boundaries only, so the best
    // placement is a shortest path: best[k][j] is the least cost of the
    // first k + 1 levels with threshold k at candidate j.
    let mut best = vec![vec![f64::INFINITY; c]; n];
    let mut from = vec![vec![usize::MAX; c]; n];
    for j in 0..c {
        best[0][j] = level_cost(&g, kind, lambda, 0, cands[j], false);
    }
    for k in 1..n {
        for j in k..c {
            for i in (k - 1)..j {
                let v = best[k - 1][i] + level_cost(&g, kind, lambda, cands[i], cands[j], false);
                if v < best[k][j] {
                    best[k][j] = v;
                    from[k][j] = i;
                }
            }
        }
    }
    let (mut j, mut cost) = (usize::MAX, f64::INFINITY);
    for (jj, b) in best[n - 1].iter().enumerate().skip(n - 1) {
        let v = b + level_cost(&g, kind, lambda, cands[jj], last, true);
        if v < cost {
            cost = v;
            j = jj;
        }
    }
    if j == usize::MAX {
        return Err(format!(
            "no thresholds keep every level below load 1 at load {load}"
        ));
    }
    let mut idx = vec![0usize; n];
    for k in (0..n).rev() {
        idx[k] = cands[j];
        if k > 0 {
            j = from[k][j];
        }
    }
    Ok(idx.iter().map(|&i| g.x[i]).collect())
}

/// The model's mean FCT (seconds at `capacity_bps`) of thresholds `t`
/// (bytes, ascending) for `points` at `load`: to compare derived thresholds
/// with others (each threshold is moved to the nearest candidate size at or
/// above it).
pub fn model_mean_fct(
    points: &[(f64, f64)],
    load: f64,
    t: &[f64],
    kind: ThresholdKind,
    capacity_bps: f64,
) -> f64 {
    let g = Grid::new(points);
    let last = g.last();
    let lambda = load / g.a[last];
    let mut idx: Vec<usize> = t
        .iter()
        .map(|&x| {
            (1..last)
                .find(|&i| g.x[i] >= x * (1.0 - 1e-12))
                .unwrap_or(last - 1)
        })
        .collect();
    idx.dedup();
    mean_fct(&g, kind, lambda, &idx) * 8.0 / capacity_bps
}

/// The step CDF of a sample of sizes (bytes), as points for
/// [`derive_thresholds`]: each size an atom (`(size, share below)`,
/// `(size, share at or below)`).
pub fn empirical_points(sizes: &[f64]) -> Vec<(f64, f64)> {
    let mut s: Vec<f64> = sizes.iter().copied().filter(|x| x.is_finite()).collect();
    s.sort_by(f64::total_cmp);
    let n = s.len() as f64;
    let mut out: Vec<(f64, f64)> = vec![];
    for (i, &x) in s.iter().enumerate() {
        let f = (i + 1) as f64 / n;
        match out.last_mut() {
            Some(last) if last.0 == x => last.1 = f,
            _ => {
                out.push((x, i as f64 / n));
                out.push((x, f));
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// 80% of flows of 10 kB, 20% of 10 MB (a linear CDF between 1 and 2
    /// of each).
    fn two_modes() -> Vec<(f64, f64)> {
        vec![
            (10_000.0, 0.0),
            (20_000.0, 0.8),
            (10_000_000.0, 0.8),
            (20_000_000.0, 1.0),
        ]
    }

    #[test]
    fn thresholds_are_ascending_inside_the_support_and_beat_other_placements() {
        for kind in [ThresholdKind::Sieve, ThresholdKind::Split] {
            for load in [0.3, 0.6, 0.9] {
                let p = two_modes();
                let t = derive_thresholds(&p, load, 6, kind).unwrap();
                assert_eq!(t.len(), 6);
                assert!(t.windows(2).all(|w| w[0] < w[1]), "{t:?}");
                assert!(t[0] >= 10_000.0 && t[5] < 20_000_000.0, "{t:?}");
                let best = model_mean_fct(&p, load, &t, kind, 1e9);
                for other in [
                    vec![15_000.0, 20_000.0, 1e6, 1e7, 1.2e7, 1.5e7],
                    vec![1e4 * 1.1, 1e5, 1e6, 2e6, 5e6, 1.9e7],
                ] {
                    assert!(best <= model_mean_fct(&p, load, &other, kind, 1e9));
                }
            }
        }
    }

    #[test]
    fn one_threshold_between_two_modes_separates_them() {
        // Short flows must not wait behind long ones: the one threshold
        // lands at or above the short flows and below the long ones.
        let t = derive_thresholds(&two_modes(), 0.8, 1, ThresholdKind::Split).unwrap();
        assert!(t[0] >= 20_000.0 - 1e-6 && t[0] < 10_000_000.0, "{t:?}");
        let t = derive_thresholds(&two_modes(), 0.8, 1, ThresholdKind::Sieve).unwrap();
        assert!(t[0] >= 10_000.0 && t[0] < 10_000_000.0, "{t:?}");
    }

    #[test]
    fn a_sample_of_few_sizes_gets_fewer_thresholds() {
        let p = empirical_points(&[5.0, 5.0, 7.0, 100.0]);
        let want = [
            (5.0, 0.0),
            (5.0, 0.5),
            (7.0, 0.5),
            (7.0, 0.75),
            (100.0, 0.75),
        ];
        assert_eq!(p, [&want[..], &[(100.0, 1.0)]].concat());
        let t = derive_thresholds(&p, 0.5, 6, ThresholdKind::Sieve).unwrap();
        assert_eq!(t, vec![5.0, 7.0]);
    }

    #[test]
    fn the_search_finds_the_exhaustive_optimum_on_small_cases() {
        // Slow reference: every placement of n thresholds on the candidates.
        for (seed, kind) in [
            (1u64, ThresholdKind::Sieve),
            (2, ThresholdKind::Split),
            (3, ThresholdKind::Sieve),
        ] {
            // A heavy-tailed sample of 40 sizes from a fixed LCG.
            let mut x = seed;
            let sizes: Vec<f64> = (0..40)
                .map(|_| {
                    x = x
                        .wrapping_mul(6364136223846793005)
                        .wrapping_add(1442695040888963407);
                    let u = (x >> 11) as f64 / (1u64 << 53) as f64;
                    (1000.0 / (1.0 - u).powf(0.9)).round()
                })
                .collect();
            let p = empirical_points(&sizes);
            let g = Grid::new(&p);
            let last = g.last();
            for load in [0.4, 0.8] {
                let lambda = load / g.a[last];
                for n in [1usize, 2, 3] {
                    let got = derive_thresholds(&p, load, n, kind).unwrap();
                    let got_cost = model_mean_fct(&p, load, &got, kind, 8.0);
                    let mut best = f64::INFINITY;
                    let mut idx = vec![0usize; n];
                    fn walk(
                        k: usize,
                        from: usize,
                        last: usize,
                        idx: &mut Vec<usize>,
                        f: &mut dyn FnMut(&[usize]),
                    ) {
                        if k == idx.len() {
                            f(idx);
                            return;
                        }
                        for i in from..last {
                            idx[k] = i;
                            walk(k + 1, i + 1, last, idx, f);
                        }
                    }
                    walk(0, 1, last, &mut idx, &mut |t| {
                        best = best.min(mean_fct(&g, kind, lambda, t));
                    });
                    assert!(
                        got_cost <= best * (1.0 + 1e-9),
                        "seed {seed} {kind:?} load {load} n {n}: {got_cost} > {best}"
                    );
                }
            }
        }
    }

    #[test]
    fn bad_inputs_say_what_is_wrong() {
        let p = two_modes();
        assert!(derive_thresholds(&p, 1.0, 6, ThresholdKind::Sieve)
            .unwrap_err()
            .contains("load"));
        let bad = vec![(5.0, 0.5), (4.0, 1.0)];
        assert!(derive_thresholds(&bad, 0.5, 6, ThresholdKind::Sieve)
            .unwrap_err()
            .contains("non-decreasing"));
    }
}
