//! Links whose workloads are alike, simulated once (Parsimon §4.3).
//!
//! On a fabric of thousands of hosts most links carry statistically the
//! same traffic: every host's NIC the same mix of sizes at the same load,
//! every rack's uplinks alike. Simulating each of them spends the time of
//! the whole packet-level run again, once per hop. A cluster groups links
//! that play the same part (same rate, same kind of link, flows of the
//! same path length) and whose flows are not told apart by two-sample
//! tests: the sizes and the gaps between arrivals by Kolmogorov-Smirnov at
//! [`ALPHA`], the flow count as a Poisson count. Within a cluster, links
//! are simulated in order (its first link first) until their flows reach
//! `min_flows`; every other link's flows are given costs drawn from what
//! the simulated links' flows of about their size paid ([`Pool`]).
//!
//! Drawing instead of simulating keeps the distribution of a link's costs
//! (what a tail percentile needs), not each flow's own cost: the
//! estimates of single flows on a drawn link are samples, their
//! percentiles over many flows are what is kept. Clustering off, or a
//! `min_flows` above every cluster's flows, simulates every link and gives
//! the unclustered result exactly (tested).

use coflowkit_model::{Fabric, LinkId, LinkKind};

/// Significance of the two-sample tests that keep links apart: a link
/// joins a cluster unless its sizes or arrival gaps differ from the
/// cluster's first link's at this level.
pub const ALPHA: f64 = 0.01;

/// Kolmogorov-Smirnov's c(α) for [`ALPHA`]: `sqrt(-ln(α/2)/2)`.
fn ks_c() -> f64 {
    (-(ALPHA / 2.0).ln() / 2.0).sqrt()
}

/// What a link's workload looks like to the clustering.
#[derive(Debug, Clone)]
pub struct Profile {
    /// The link.
    pub link: LinkId,
    /// Parts a link plays: its rate, its kind (a host's NIC, a switch's
    /// port to a host, or between switches) and its flows' mean path
    /// length in hops (rounded), which two links must share.
    role: (u64, u8, u32),
    /// Its flows' sizes, sorted.
    sizes: Vec<u64>,
    /// The gaps between its flows' starts, sorted.
    gaps: Vec<u64>,
}

impl Profile {
    /// The profile of link `l` of `fabric`, whose flows have `sizes`,
    /// `starts` (ns) and `hops` (path lengths), in any one order.
    pub fn new(
        fabric: &Fabric,
        l: LinkId,
        sizes: &[u64],
        starts: &[u64],
        hops: &[usize],
    ) -> Profile {
        let link = &fabric.links()[l.0 as usize];
        let kind = match link.kind {
            LinkKind::Uplink(_) => 0,
            LinkKind::Downlink(_) => 1,
            _ => 2,
        };
        let mean_hops = if hops.is_empty() {
            0
        } else {
            (hops.iter().sum::<usize>() as f64 / hops.len() as f64).round() as u32
        };
        let mut s = sizes.to_vec();
        s.sort_unstable();
        let mut t = starts.to_vec();
        t.sort_unstable();
        let mut gaps: Vec<u64> = t.windows(2).map(|w| w[1] - w[0]).collect();
        gaps.sort_unstable();
        Profile {
            link: l,
            role: (link.capacity.0.round() as u64, kind, mean_hops),
            sizes: s,
            gaps,
        }
    }

    /// Flows on the link.
    pub fn flows(&self) -> usize {
        self.sizes.len()
    }

    /// Whether `self`'s workload is not told apart from `other`'s.
    pub fn alike(&self, other: &Profile) -> bool {
        if self.role != other.role {
            return false;
        }
        let (n, m) = (self.flows() as f64, other.flows() as f64);
        // Poisson counts: the difference within three standard deviations.
        if (n - m).abs() > 3.0 * (n + m).sqrt() {
            return false;
        }
        ks_alike(&self.sizes, &other.sizes) && ks_alike(&self.gaps, &other.gaps)
    }
}

/// The two-sample Kolmogorov-Smirnov statistic of sorted samples `a`, `b`.
pub fn ks_statistic(a: &[u64], b: &[u64]) -> f64 {
    let (n, m) = (a.len(), b.len());
    if n == 0 || m == 0 {
        return if n == m { 0.0 } else { 1.0 };
    }
    let (mut i, mut j, mut d) = (0usize, 0usize, 0f64);
    while i < n && j < m {
        let x = a[i].min(b[j]);
        while i < n && a[i] == x {
            i += 1;
        }
        while j < m && b[j] == x {
            j += 1;
        }
        d = d.max((i as f64 / n as f64 - j as f64 / m as f64).abs());
    }
    d
}

/// Whether sorted samples `a` and `b` pass the test at [`ALPHA`] (two
/// empty samples do; one empty one does not).
fn ks_alike(a: &[u64], b: &[u64]) -> bool {
    let (n, m) = (a.len() as f64, b.len() as f64);
    if a.is_empty() || b.is_empty() {
        return a.len() == b.len();
    }
    ks_statistic(a, b) <= ks_c() * ((n + m) / (n * m)).sqrt()
}

/// A group of alike links: `members` (indices into the profiles given to
/// [`clusters`]), the first its representative; the first `simulated` of
/// them are simulated.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Cluster {
    /// Its links, first the one the others were compared with.
    pub members: Vec<usize>,
    /// How many of `members`, from the first, are simulated.
    pub simulated: usize,
}

/// Groups `profiles` greedily: each link, in the order given, joins the
/// first cluster whose first link it is alike to, else starts one; then
/// each cluster simulates its links in order until their flows reach
/// `min_flows` (every link when `min_flows` is `usize::MAX`).
pub fn clusters(profiles: &[Profile], min_flows: usize) -> Vec<Cluster> {
    let mut out: Vec<Cluster> = vec![];
    for (k, p) in profiles.iter().enumerate() {
        match out.iter_mut().find(|c| profiles[c.members[0]].alike(p)) {
            Some(c) => c.members.push(k),
            None => out.push(Cluster {
                members: vec![k],
                simulated: 0,
            }),
        }
    }
    for c in &mut out {
        let mut flows = 0usize;
        for &k in &c.members {
            c.simulated += 1;
            flows += profiles[k].flows();
            if flows >= min_flows {
                break;
            }
        }
    }
    out
}

/// Least samples a size bucket of a [`Pool`] holds.
pub const BUCKET: usize = 32;

/// What the simulated links of one cluster cost their flows, by size:
/// each sample is a flow's cost over its time alone on its own path (so a
/// draw scales to the size of the flow it is drawn for), in buckets of at
/// least [`BUCKET`] consecutive sizes.
#[derive(Debug, Clone)]
pub struct Pool {
    /// (bytes, cost / time alone), by bytes.
    samples: Vec<(u64, f64)>,
    /// Each bucket's first index into `samples`; the last bucket ends at
    /// the end.
    starts: Vec<usize>,
}

impl Pool {
    /// A pool of `(bytes, relative cost)` samples.
    pub fn new(mut samples: Vec<(u64, f64)>) -> Pool {
        samples.sort_by(|a, b| a.0.cmp(&b.0).then(a.1.total_cmp(&b.1)));
        let mut starts = vec![];
        let mut i = 0;
        while i < samples.len() {
            starts.push(i);
            let mut end = (i + BUCKET).min(samples.len());
            // Equal sizes stay in one bucket.
            while end < samples.len() && samples[end].0 == samples[end - 1].0 {
                end += 1;
            }
            i = end;
        }
        // A short last bucket joins the one before it.
        if starts.len() > 1 && samples.len() - starts[starts.len() - 1] < BUCKET {
            starts.pop();
        }
        Pool { samples, starts }
    }

    /// A relative cost for a flow of `bytes`, drawn by `key` from the
    /// bucket of the sizes nearest it (0 from an empty pool).
    pub fn draw(&self, bytes: u64, key: u64) -> f64 {
        if self.samples.is_empty() {
            return 0.0;
        }
        // The last bucket starting at or below `bytes` (the first if none).
        let b = self
            .starts
            .partition_point(|&s| self.samples[s].0 <= bytes)
            .saturating_sub(1);
        let lo = self.starts[b];
        let hi = self
            .starts
            .get(b + 1)
            .copied()
            .unwrap_or(self.samples.len());
        self.samples[lo + (mix(key) % (hi - lo) as u64) as usize].1
    }
}

/// SplitMix64's finalizer: a well-spread 64-bit value from `x`, so that
/// draws depend on the flow and link only (no generator state).
pub fn mix(mut x: u64) -> u64 {
    x = x.wrapping_add(0x9e37_79b9_7f4a_7c15);
    x = (x ^ (x >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    x ^ (x >> 31)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The KS statistic by its definition: the largest gap between the
    /// two empirical distribution functions at any sample value.
    fn ks_slow(a: &[u64], b: &[u64]) -> f64 {
        let cdf = |s: &[u64], x: u64| s.iter().filter(|&&v| v <= x).count() as f64 / s.len() as f64;
        a.iter()
            .chain(b)
            .map(|&x| (cdf(a, x) - cdf(b, x)).abs())
            .fold(0.0, f64::max)
    }

    #[test]
    fn ks_statistic_matches_its_definition() {
        let mut x = 7u64;
        for n in 1..40 {
            let mut a: Vec<u64> = (0..n)
                .map(|_| {
                    x = mix(x);
                    x % 50
                })
                .collect();
            let mut b: Vec<u64> = (0..(n * 3 / 2 + 1))
                .map(|_| {
                    x = mix(x);
                    x % 60
                })
                .collect();
            a.sort_unstable();
            b.sort_unstable();
            assert!(
                (ks_statistic(&a, &b) - ks_slow(&a, &b)).abs() < 1e-12,
                "n={n}"
            );
        }
    }

    #[test]
    fn pool_buckets_hold_at_least_bucket_samples_and_draw_near_sizes() {
        let samples: Vec<(u64, f64)> = (0..100).map(|k| (k * 10, k as f64)).collect();
        let p = Pool::new(samples);
        assert_eq!(p.starts, vec![0, 32, 64]);
        for key in 0..50 {
            let v = p.draw(5, key);
            assert!((0.0..32.0).contains(&v));
            let v = p.draw(990, key);
            assert!((64.0..100.0).contains(&v));
        }
        assert_eq!(Pool::new(vec![]).draw(5, 1), 0.0);
    }
}
