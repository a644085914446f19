//! Size distributions: empirical CDFs with linear interpolation, and the
//! parametric laws the generators use (uniform, Pareto, lognormal).
//!
//! An [`EmpiricalCdf`] is a list of `(value, cumulative probability)` points,
//! as in the ns-2 CDF files of pFabric, PIAS and Karuna. Sampling draws
//! `u` uniform in [0, 1) and returns the value where the piecewise-linear
//! CDF crosses `u`: between the first point with probability >= `u` and the
//! one before it, linearly (ns-2's `EmpiricalRandomVariable` with
//! interpolation). A repeated value (`6 1 0` then `6 1 0.15`) is a point
//! mass. Its mean and quantiles are computed from the same
//! piecewise-linear CDF, so tests compare samples with exact targets.

use rand::RngExt;
use rand_pcg::Pcg64;

/// An empirical CDF over values in some unit, with `unit_bytes` bytes per unit.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct EmpiricalCdf {
    /// Its name, for messages and docs.
    pub name: &'static str,
    /// `(value in units, cumulative probability)`, both non-decreasing,
    /// the first probability 0 and the last 1.
    pub points: &'static [(f64, f64)],
    /// Bytes per unit (1460 for the packet-count CDFs).
    pub unit_bytes: f64,
}

/// The web-search flow sizes of DCTCP (Alizadeh et al., SIGCOMM 2010,
/// Figure 4), in 1460-byte packets, as in the CDF file `CDF_dctcp.tcl` of
/// PIAS (github.com/HKUST-SING/PIAS-NS2, scripts/) used by pFabric, PIAS,
/// Karuna and TAFE (V-A). Mean 1140.98 packets (1,665,830.8 bytes).
pub const WEB_SEARCH: EmpiricalCdf = EmpiricalCdf {
    name: "websearch",
    points: &[
        (6.0, 0.0),
        (6.0, 0.15),
        (13.0, 0.2),
        (19.0, 0.3),
        (33.0, 0.4),
        (53.0, 0.53),
        (133.0, 0.6),
        (667.0, 0.7),
        (1333.0, 0.8),
        (3333.0, 0.9),
        (6667.0, 0.97),
        (20000.0, 1.0),
    ],
    unit_bytes: 1460.0,
};

/// The data-mining flow sizes of VL2 (Greenberg et al., SIGCOMM 2009,
/// Figure 2), in 1460-byte packets, as in the CDF file `CDF_vl2.tcl` of PIAS
/// (github.com/HKUST-SING/PIAS-NS2, scripts/; also in MQ-ECN-NS2) used by
/// pFabric, PIAS, Karuna and TAFE (V-A). Mean 5116.6 packets
/// (7,470,236 bytes); half the flows are one packet.
pub const DATA_MINING: EmpiricalCdf = EmpiricalCdf {
    name: "datamining",
    points: &[
        (1.0, 0.0),
        (1.0, 0.5),
        (2.0, 0.6),
        (3.0, 0.7),
        (7.0, 0.8),
        (267.0, 0.9),
        (2107.0, 0.95),
        (66667.0, 0.99),
        (666667.0, 1.0),
    ],
    unit_bytes: 1460.0,
};

impl EmpiricalCdf {
    /// The value (in units) at cumulative probability `u` in [0, 1].
    pub fn quantile_units(&self, u: f64) -> f64 {
        let p = self.points;
        let k = p.iter().position(|&(_, c)| c >= u).unwrap_or(p.len() - 1);
        if k == 0 {
            return p[0].0;
        }
        let ((x0, c0), (x1, c1)) = (p[k - 1], p[k]);
        if c1 <= c0 {
            return x1;
        }
        x0 + (x1 - x0) * (u - c0) / (c1 - c0)
    }

    /// The size in bytes at cumulative probability `u`.
    pub fn quantile_bytes(&self, u: f64) -> f64 {
        self.quantile_units(u) * self.unit_bytes
    }

    /// The probability that a size in bytes is at most `x`.
    pub fn cdf_bytes(&self, x: f64) -> f64 {
        let u = x / self.unit_bytes;
        let p = self.points;
        if u < p[0].0 {
            return 0.0;
        }
        // The last point at or below u, and the segment it starts.
        let k = p.iter().rposition(|&(v, _)| v <= u).unwrap_or(0);
        match p.get(k + 1) {
            None => 1.0,
            Some(&(x1, c1)) => {
                let (x0, c0) = p[k];
                c0 + (c1 - c0) * (u - x0) / (x1 - x0)
            }
        }
    }

    /// The mean size in bytes of the piecewise-linear distribution.
    pub fn mean_bytes(&self) -> f64 {
        let units: f64 = self
            .points
            .windows(2)
            .map(|w| (w[1].1 - w[0].1) * (w[0].0 + w[1].0) / 2.0)
            .sum();
        units * self.unit_bytes
    }

    /// Draws a size in whole bytes (at least 1).
    pub fn sample_bytes(&self, rng: &mut Pcg64) -> u64 {
        let u: f64 = rng.random();
        (self.quantile_bytes(u).round() as u64).max(1)
    }
}

/// `lo..=hi` uniformly (both in bytes).
pub fn uniform_bytes(rng: &mut Pcg64, lo: u64, hi: u64) -> u64 {
    rng.random_range(lo..=hi)
}

/// The Pareto scale (minimum) that gives mean `mean` with shape `shape > 1`.
pub fn pareto_scale_for_mean(mean: f64, shape: f64) -> f64 {
    mean * (shape - 1.0) / shape
}

/// The `p` quantile of a Pareto law.
pub fn pareto_quantile(scale: f64, shape: f64, p: f64) -> f64 {
    scale * (1.0 - p).powf(-1.0 / shape)
}

/// The log-scale location `mu` that gives a lognormal mean `mean` with
/// log-scale spread `sigma`: `mean = exp(mu + sigma^2 / 2)`.
pub fn lognormal_mu_for_mean(mean: f64, sigma: f64) -> f64 {
    mean.ln() - sigma * sigma / 2.0
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::arrivals::main_stream;

    #[test]
    fn means_match_the_papers_scripts() {
        // PIAS's scripts use meanFlowSize = 1138 * 1460 (web search) and
        // 5117 * 1460 (data mining); the piecewise-linear means are:
        assert!((WEB_SEARCH.mean_bytes() / 1460.0 - 1140.98).abs() < 1e-9);
        assert!((DATA_MINING.mean_bytes() / 1460.0 - 5116.6).abs() < 1e-9);
    }

    #[test]
    fn quantiles_interpolate_and_respect_point_masses() {
        assert_eq!(WEB_SEARCH.quantile_units(0.0), 6.0);
        assert_eq!(WEB_SEARCH.quantile_units(0.1), 6.0);
        assert_eq!(WEB_SEARCH.quantile_units(0.15), 6.0);
        assert!((WEB_SEARCH.quantile_units(0.5) - (33.0 + 20.0 * 0.1 / 0.13)).abs() < 1e-9);
        assert_eq!(WEB_SEARCH.quantile_units(1.0), 20000.0);
        assert_eq!(DATA_MINING.quantile_units(0.5), 1.0);
        assert!((DATA_MINING.quantile_units(0.85) - 137.0).abs() < 1e-9);
        for cdf in [WEB_SEARCH, DATA_MINING] {
            for u in [0.0, 0.05, 0.17, 0.5, 0.55, 0.93, 0.999] {
                let x = cdf.quantile_bytes(u);
                // Inside a point mass the CDF jumps past u.
                assert!(cdf.cdf_bytes(x) >= u - 1e-12, "{} {u}", cdf.name);
            }
        }
        let x = WEB_SEARCH.quantile_bytes(0.35);
        assert!((WEB_SEARCH.cdf_bytes(x) - 0.35).abs() < 1e-12);
        assert_eq!(DATA_MINING.cdf_bytes(1460.0), 0.5);
        assert_eq!(WEB_SEARCH.cdf_bytes(1.0), 0.0);
        assert_eq!(WEB_SEARCH.cdf_bytes(1e12), 1.0);
    }

    #[test]
    fn samples_match_the_cdf_and_its_mean() {
        for cdf in [WEB_SEARCH, DATA_MINING] {
            let mut rng = main_stream(17);
            let n = 400_000;
            let xs: Vec<f64> = (0..n).map(|_| cdf.sample_bytes(&mut rng) as f64).collect();
            let mean = xs.iter().sum::<f64>() / n as f64;
            // Data mining's tail (1% of flows above 97 MB) makes its sample
            // mean noisy: 4% there, 2% for web search.
            let tol = if cdf.name == "datamining" { 0.04 } else { 0.02 };
            assert!(
                (mean / cdf.mean_bytes() - 1.0).abs() < tol,
                "{}: mean {mean} vs {}",
                cdf.name,
                cdf.mean_bytes()
            );
            // The sample CDF within 0.005 of the target at the midpoints of
            // its segments (DKW: false alarm below 2 exp(-2 n 0.005^2) = 4e-9).
            let mut sorted = xs.clone();
            sorted.sort_by(f64::total_cmp);
            for pair in cdf.points.windows(2) {
                let x = (pair[0].0 + pair[1].0) / 2.0 * cdf.unit_bytes;
                let got = sorted.partition_point(|&s| s <= x) as f64 / n as f64;
                let want = cdf.cdf_bytes(x);
                assert!(
                    (got - want).abs() < 0.005,
                    "{} F({x}): {got} vs {want}",
                    cdf.name
                );
            }
        }
    }
}
